//! `export`: a published snapshot in a paper's release format, and finding a snapshot folder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use noisebench_core::{Claim, ClaimDocumentLabel, Document, DocumentCredibility, Query, TableKind};
use noisebench_pipeline::table_io;

/// A snapshot folder: a version folder as is, or a dataset folder's latest version.
pub fn resolve_snapshot(path: &Path) -> Result<PathBuf> {
    if path.join(noisebench_snapshot::MANIFEST).is_file() {
        return Ok(path.to_path_buf());
    }
    match noisebench_snapshot::latest_version(path) {
        Some(v) => Ok(path.join(v.to_string())),
        None => bail!(
            "{}: neither a snapshot version (no manifest.json) nor a dataset folder with versions",
            path.display()
        ),
    }
}

/// The formats `noisebench export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// RAGuard's `claims.csv` and `documents.csv` (plus id maps back to ours).
    Raguard,
    /// CONF-FACT-style `confact.json`.
    Confact,
}

/// Export a published snapshot (a version folder) into `out`. Reads its `claims`, `documents`
/// and `labels` tables (and for CONF-FACT `document_credibility`, and `queries` for its
/// questions), by name or else by kind.
pub fn export_snapshot(
    snapshot: &Path,
    format: ExportFormat,
    out: &Path,
) -> Result<noisebench_label::ExportSummary> {
    let manifest = noisebench_snapshot::Manifest::read(snapshot).map_err(anyhow::Error::msg)?;
    let path_of = |kind: TableKind| {
        manifest
            .tables
            .get(kind.name())
            .or_else(|| manifest.tables.values().find(|e| e.kind == kind.name()))
            .map(|e| snapshot.join(&e.file))
    };
    fn read<T: noisebench_core::TableRow>(path: Option<PathBuf>) -> Result<Option<Vec<T>>> {
        path.map(|p| table_io::read_rows::<T>(&p))
            .transpose()
            .map_err(Into::into)
    }
    let missing = |kind: TableKind| {
        anyhow::anyhow!(
            "{}: the snapshot has no `{}` table (its tables: {})",
            snapshot.display(),
            kind.name(),
            manifest
                .tables
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let claims: Vec<Claim> =
        read(path_of(TableKind::Claims))?.ok_or_else(|| missing(TableKind::Claims))?;
    let documents: Vec<Document> =
        read(path_of(TableKind::Documents))?.ok_or_else(|| missing(TableKind::Documents))?;
    let labels: Vec<ClaimDocumentLabel> =
        read(path_of(TableKind::Labels))?.ok_or_else(|| missing(TableKind::Labels))?;
    let summary = match format {
        ExportFormat::Raguard => {
            noisebench_label::export_raguard(&claims, &documents, &labels, out)?
        }
        ExportFormat::Confact => {
            let credibility: Vec<DocumentCredibility> =
                read(path_of(TableKind::DocumentCredibility))?
                    .ok_or_else(|| missing(TableKind::DocumentCredibility))?;
            let queries: Vec<Query> = read(path_of(TableKind::Queries))?.unwrap_or_default();
            std::fs::create_dir_all(out).with_context(|| out.display().to_string())?;
            noisebench_label::export_confact(
                &claims,
                &documents,
                &credibility,
                &labels,
                &queries,
                &out.join(noisebench_label::CONFACT_FILE),
            )?
        }
    };
    Ok(summary)
}
