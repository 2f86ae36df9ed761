//! `export`: a published snapshot in a paper's release format, and finding a snapshot folder.
//! Which tables become which release is each `noisebench_releases::ReleaseFormat`'s; this
//! module hands it the snapshot's tables.

use std::path::{Path, PathBuf};

use anyhow::Result;
use noisebench_core::{Rows, TableKind};
pub use noisebench_releases::Exported;
use noisebench_releases::{BoxError, TableSource};
use noisebench_snapshot::PublishedVersion;

/// A snapshot folder: a version folder as is, or a dataset folder's latest version.
pub fn resolve_snapshot(path: &Path) -> Result<PathBuf> {
    Ok(PublishedVersion::open(path)?.dir().to_path_buf())
}

/// A published version as the source of an export's tables.
struct Published(PublishedVersion);

impl TableSource for Published {
    fn rows(&self, kind: TableKind) -> Result<Option<Rows>, BoxError> {
        Ok(self.0.rows(kind)?)
    }
}

/// Export a published snapshot (a version folder) into `out` in the release format called
/// `format` (one of `noisebench_releases::formats()`), each table found by kind
/// ([`PublishedVersion`]).
pub fn export_snapshot(snapshot: &Path, format: &str, out: &Path) -> Result<Exported> {
    let version = Published(PublishedVersion::open(snapshot)?);
    noisebench_releases::export(&version, format, out).map_err(|e| anyhow::anyhow!("{e}"))
}
