//! The pipeline file format (TOML).
//!
//! ```toml
//! [pipeline]
//! name = "demo"
//!
//! [stages.claims]                  # stage id
//! kind = "claims-import"           # stage kind
//! inputs = {}                      # role = "<stage id>" or "<stage id>.<table>"
//! [stages.claims.config]           # the stage's own configuration
//!
//! [snapshot]
//! dataset = "demo"
//! tables = ["claims"]              # "<stage id>" (its main table) or "<stage id>.<table>"
//! ```
//!
//! Unknown fields anywhere stop the run before any work, naming the field.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineFile {
    pub pipeline: PipelineMeta,
    #[serde(default)]
    pub stages: BTreeMap<String, StageEntry>,
    pub snapshot: Option<SnapshotSection>,
    /// The LLM layer's configuration, parsed by `noisebench-llm`.
    pub llm: Option<toml::Table>,
    /// The web layer's configuration, parsed by `noisebench-web`.
    pub web: Option<toml::Table>,
    /// The quality card's configuration (`[quality]`), parsed by `noisebench-quality`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<toml::Table>,
    /// What a stage may lose before the run stops (see [`Gates`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gates: Option<Gates>,
    /// Where `build-snapshot` and `refresh` push the version they publish (see
    /// [`PublishSection`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publish: Option<PublishSection>,
}

/// `[publish]`: copies of each published version kept elsewhere than `snapshots/`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishSection {
    /// `[publish.hub]`: a Hugging Face Hub dataset repository, parsed by `noisebench-hub`
    /// (`HubConfig`; docs/publish.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub: Option<toml::Table>,
}

/// The gates on what a stage lost, for every stage of the pipeline (`[gates]`): a stage that
/// drops more than its share of its items, writes nothing from a non-empty input, or whose
/// model gave every item the same categorical answer (a stance, a verdict) stops the run
/// before publishing (docs/checks.md). A stage's own `[stages.<id>.gate]` overrides
/// `max_drop_share`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gates {
    /// The largest share of a stage's items it may drop for good (0 to 1; unset: 0.5). A stage
    /// that drops more, or writes nothing from a non-empty input, stops the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drop_share: Option<f64>,
    /// Publish even when a gate or a table check failed (as `--allow-degraded`); the card and
    /// the manifest list what failed.
    #[serde(default)]
    pub allow_degraded: bool,
}

/// One stage's gate (`[stages.<id>.gate]`), overriding `[gates]` for that stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageGate {
    /// The largest share of this stage's items it may drop for good (0 to 1; unset: the
    /// `[gates]` setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drop_share: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineMeta {
    /// Names the run directory `work/<name>/`.
    pub name: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageEntry {
    pub kind: String,
    #[serde(default)]
    pub inputs: BTreeMap<String, String>,
    #[serde(default)]
    pub config: toml::Table,
    /// This stage's gate, overriding `[gates]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<StageGate>,
}

/// What `build-snapshot` publishes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotSection {
    /// Snapshots go to `snapshots/<dataset>/<version>/`.
    pub dataset: String,
    /// Tables to publish: `"<stage id>"` (its main table) or `"<stage id>.<table>"`.
    pub tables: Vec<String>,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub license: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
}

impl PipelineFile {
    pub fn load(path: &Path) -> Result<Self, FileError> {
        let text = std::fs::read_to_string(path).map_err(|source| FileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, origin: &str) -> Result<Self, FileError> {
        toml::from_str(text).map_err(|e: toml::de::Error| FileError::Parse {
            path: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })
    }

    /// sha256 over the canonical JSON of the whole file: the manifest's configuration hash.
    pub fn config_hash(&self) -> String {
        let json = serde_json::to_vec(self).expect("a parsed pipeline file always serialises");
        noisebench_core::sha256_hex(&json)
    }
}
