//! `export`: a published snapshot in a paper's release format, and finding a snapshot folder.
//! Which tables become which release is `noisebench_releases::snapshot_export`'s; this module
//! hands it the snapshot's tables.

use std::path::{Path, PathBuf};

use anyhow::Result;
use noisebench_core::TableRow;
use noisebench_releases::snapshot_export::{BoxError, TableSource};
pub use noisebench_releases::snapshot_export::{ExportFormat, Exported};
use noisebench_snapshot::PublishedVersion;

/// A snapshot folder: a version folder as is, or a dataset folder's latest version.
pub fn resolve_snapshot(path: &Path) -> Result<PathBuf> {
    Ok(PublishedVersion::open(path)?.dir().to_path_buf())
}

/// A published version as the source of an export's tables.
struct Published(PublishedVersion);

impl TableSource for Published {
    fn read<T: TableRow>(&self) -> Result<Option<Vec<T>>, BoxError> {
        Ok(self.0.read::<T>()?)
    }

    fn require<T: TableRow>(&self) -> Result<Vec<T>, BoxError> {
        Ok(self.0.require::<T>()?)
    }
}

/// Export a published snapshot (a version folder) into `out`, each table found by kind
/// ([`PublishedVersion`]); see `noisebench_releases::snapshot_export::export` for which.
pub fn export_snapshot(snapshot: &Path, format: ExportFormat, out: &Path) -> Result<Exported> {
    let version = Published(PublishedVersion::open(snapshot)?);
    noisebench_releases::snapshot_export::export(&version, format, out)
        .map_err(|e| anyhow::anyhow!("{e}"))
}
