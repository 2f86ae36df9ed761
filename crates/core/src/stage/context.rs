//! What a stage may know about its run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Progress;

/// What a stage may know about the run it is part of.
#[derive(Clone)]
pub struct StageContext {
    /// The directory relative paths in configuration resolve against (the repository root).
    pub root: PathBuf,
    /// `work/<pipeline>/<stage>/`: the stage may keep private state here (indexes, caches).
    pub stage_dir: PathBuf,
    pub pipeline: String,
    /// The stage's id in the pipeline (drop records carry it).
    pub stage_id: String,
    pub progress: Arc<dyn Progress>,
}

impl StageContext {
    /// Resolve a configured path against the root.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        }
    }
}
