//! `manifest.json`: what a snapshot holds and where it came from.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub const MANIFEST: &str = "manifest.json";

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
