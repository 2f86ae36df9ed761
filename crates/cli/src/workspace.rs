//! Where a run reads and writes, loading and checking a pipeline, and running it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use noisebench_core::Progress;
use noisebench_pipeline::{PipelineFile, Plan, RunOptions, RunResult, Runner};

use crate::{Layers, LlmOverrides, registry};

/// A checked pipeline with the layers its stages use.
pub struct Loaded {
    pub plan: Plan,
    pub layers: Layers,
}

/// `check`: load and check a pipeline (the file, `[llm]`, `[web]`, every stage's configuration
/// and wiring, the snapshot tables) without running anything, and describe the plan: stages in
/// the order they run, their kinds, inputs, and whether they read live sources; the LLM backend
/// and the task models.
pub fn check(ws: &Workspace, pipeline: &str) -> Result<String> {
    let loaded = ws.load(pipeline)?;
    let plan = &loaded.plan;
    let mut out = format!(
        "pipeline `{}`: {} stages, configuration valid\n",
        plan.name(),
        plan.stages.len()
    );
    for stage in &plan.stages {
        let inputs: Vec<String> = stage
            .inputs
            .iter()
            .map(|(role, t)| format!("{role} <- {}.{}", t.stage, t.table))
            .collect();
        let live = if stage.stage.reads_live_sources(&stage.config) {
            "  [live: `refresh` reruns it]"
        } else {
            ""
        };
        out.push_str(&format!(
            "  {:<18} {:<16} {}{live}\n",
            stage.id,
            stage.stage.kind(),
            if inputs.is_empty() {
                "(no inputs)".to_string()
            } else {
                inputs.join(", ")
            }
        ));
    }
    let llm = loaded.layers.llm.fingerprint();
    let models: std::collections::BTreeSet<String> = llm["tasks"]
        .as_object()
        .map(|t| {
            t.values()
                .filter_map(|v| v["model"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    out.push_str(&format!(
        "llm: backend {}, models {}, embeddings {}\nweb: {}\n",
        llm["backend"].as_str().unwrap_or("?"),
        models.into_iter().collect::<Vec<_>>().join(", "),
        llm["embedder"].as_str().unwrap_or("?"),
        serde_json::to_value(loaded.layers.web.config().mode)?
            .as_str()
            .unwrap_or("?")
    ));
    if let Some(snapshot) = &plan.file.snapshot {
        out.push_str(&format!(
            "snapshot: snapshots/{}/ <- {}\n",
            snapshot.dataset,
            snapshot.tables.join(", ")
        ));
    }
    Ok(out)
}

/// Where a run reads and writes.
#[derive(Clone)]
pub struct Workspace {
    /// Relative paths in pipeline files resolve here (the repository root).
    pub root: PathBuf,
    /// `work/`
    pub work_dir: PathBuf,
    /// `snapshots/`
    pub snapshots_dir: PathBuf,
    pub progress: Arc<dyn Progress>,
    pub llm_overrides: LlmOverrides,
    /// `refresh`: rerun the stages that read live sources even when unchanged.
    pub refresh: bool,
    /// `--allow-partial`: publish even when items failed for a transient cause (the manifest
    /// says how many); without it such a build publishes nothing.
    pub allow_partial: bool,
}

impl Workspace {
    pub fn at(root: &Path, progress: Arc<dyn Progress>) -> Self {
        Self {
            root: root.into(),
            work_dir: root.join("work"),
            snapshots_dir: root.join("snapshots"),
            progress,
            llm_overrides: LlmOverrides::default(),
            refresh: false,
            allow_partial: false,
        }
    }

    /// `demo` -> `pipelines/demo.toml`; a path is taken as is.
    pub fn pipeline_path(&self, name_or_path: &str) -> PathBuf {
        let as_path = PathBuf::from(name_or_path);
        if name_or_path.ends_with(".toml") || as_path.components().count() > 1 {
            if as_path.is_absolute() {
                as_path
            } else {
                self.root.join(as_path)
            }
        } else {
            self.root
                .join("pipelines")
                .join(format!("{name_or_path}.toml"))
        }
    }

    /// Load and check a pipeline: its file, its `[llm]` and `[web]` layers, every stage's
    /// configuration and wiring. Nothing runs.
    pub fn load(&self, pipeline: &str) -> Result<Loaded> {
        let path = self.pipeline_path(pipeline);
        let context = || format!("pipeline {}", path.display());
        let file = PipelineFile::load(&path).with_context(context)?;
        let layers = Layers::of(&file, &self.root, &self.llm_overrides).with_context(context)?;
        let plan = Plan::new(file, &self.root, &registry(&layers)).with_context(context)?;
        // The stages declared their LLM tasks while the plan checked them; a task model for a
        // task none of them uses is a typo or a leftover.
        layers
            .llm
            .check_task_models()
            .map_err(|e| anyhow::anyhow!("[llm]: {e}"))
            .with_context(context)?;
        Ok(Loaded { plan, layers })
    }

    pub fn run(&self, loaded: &Loaded, only: Option<String>, force: bool) -> Result<RunResult> {
        let mut options = RunOptions::new(&self.work_dir);
        options.only = only;
        options.force = force;
        options.refresh = self.refresh;
        options.progress = self.progress.clone();
        options.call_log = Some(Arc::new(loaded.layers.llm.clone()));
        Ok(Runner::new(&loaded.plan, options).run()?)
    }
}
