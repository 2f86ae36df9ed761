//! `manifest.json`: what a snapshot holds and where it came from.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub const MANIFEST: &str = "manifest.json";

/// The Croissant 1.1 metadata file of every version, hashed in [`Manifest::metadata`].
pub const CROISSANT: &str = "croissant.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub dataset: String,
    pub version: String,
    pub parent: Option<String>,
    pub created_at: String,
    pub pipeline: String,
    pub config_hash: String,
    pub code_version: String,
    pub tables: BTreeMap<String, TableEntry>,
    /// Files in the shapes of published datasets' loaders (RAGuard CSVs, CONF-FACT JSON), by
    /// path inside the snapshot (`exports/raguard/claims.csv`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exports: BTreeMap<String, ExportEntry>,
    /// Run facts later stages add (LLM models, calls, tokens, cache hits; source fetch window).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub provenance: BTreeMap<String, serde_json::Value>,
    /// Per-split copies of the tables whose rows follow a question's split (table -> split ->
    /// file), so Hugging Face `datasets` can offer `test` and `train` splits: its `data_files`
    /// select files, not rows.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub splits: BTreeMap<String, BTreeMap<String, SplitEntry>>,
    /// Metadata files written beside the data whose bytes are part of the version
    /// (`croissant.json`), by file name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, MetadataEntry>,
    /// Every gate and table check the build ran and its result (failed ones only when the
    /// version was published with `--allow-degraded`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<noisebench_core::CheckResult>,
    /// The run's stages in the order they ran: items in, out, dropped and why (the card's
    /// construction table, as data).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageCounts>,
}

/// One stage's counts in [`Manifest::stages`] (how long it took and whether it ran this time
/// or was reused are the run's, not the version's, and are left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCounts {
    pub id: String,
    pub kind: String,
    pub items_in: i64,
    pub items_out: i64,
    pub items_dropped: i64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub drop_reasons: BTreeMap<String, i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitEntry {
    /// Path inside the snapshot, `data/<table>/<split>.parquet`.
    pub file: String,
    pub sha256: String,
    pub rows: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetadataEntry {
    pub sha256: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableEntry {
    /// Path inside the snapshot, `data/<table>.parquet`.
    pub file: String,
    /// The table kind (its schema's name).
    pub kind: String,
    pub sha256: String,
    pub rows: u64,
    pub bytes: u64,
    pub schema_version: u32,
    pub schema_fingerprint: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportEntry {
    /// The export format (`raguard`, `confact`).
    pub format: String,
    /// The pipeline stage that wrote it.
    pub stage: String,
    pub sha256: String,
    pub bytes: u64,
}

impl Manifest {
    pub fn read(dir: &Path) -> Result<Manifest, String> {
        let path = dir.join(MANIFEST);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
    }
}
