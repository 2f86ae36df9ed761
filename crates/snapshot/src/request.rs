//! What a caller asks [`crate::publish()`] to publish: the tables, exports, run summary,
//! provenance and checks. A leaf module, so the card and the Croissant file, which render a
//! request, and `publish`, which calls them, do not import each other.

use std::collections::BTreeMap;
use std::path::PathBuf;

use noisebench_core::{CheckResult, StageSummary, TableKind};

/// A table to publish: its name in the snapshot, kind, and the Parquet file the run wrote.
#[derive(Debug, Clone)]
pub struct SourceTable {
    pub name: String,
    pub kind: TableKind,
    pub path: PathBuf,
}

/// The files one export stage wrote, published as `exports/<folder>/<file name>`.
#[derive(Debug, Clone)]
pub struct SourceExport {
    /// The export format (`raguard`, `confact`).
    pub format: String,
    /// The stage that wrote them.
    pub stage: String,
    /// The folder under `exports/`: the format, or `<format>-<stage>` when two stages write one
    /// format.
    pub folder: String,
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct PublishRequest {
    /// `snapshots/` (the dataset folder is created under it).
    pub snapshots_dir: PathBuf,
    pub dataset: String,
    pub title: String,
    pub description: String,
    pub license: Option<String>,
    pub pipeline: String,
    pub config_hash: String,
    pub code_version: String,
    pub tables: Vec<SourceTable>,
    /// Export files to publish under `exports/<folder>/`.
    pub exports: Vec<SourceExport>,
    /// The run's summary, for the card's construction section.
    pub stages: Vec<StageSummary>,
    pub provenance: BTreeMap<String, serde_json::Value>,
    /// Every gate and table check the build ran, for the manifest and the card.
    pub checks: Vec<CheckResult>,
    /// The quality card measured on the tables (`quality.json`, the card's "Quality" section,
    /// Croissant's `rai:dataAnnotationAnalysis` and `rai:dataReleaseMaintenancePlan`... fields);
    /// `None` publishes without one.
    pub quality: Option<noisebench_quality::QualityReport>,
}
