//! Why a stage's configuration or run failed.

use std::path::PathBuf;

/// A configuration error, naming the field path (`sources[1].preset`) or the stage.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Why a stage failed as a whole (item-level problems are drops, not errors).
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("input `{role}`: {message}")]
    Input { role: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
}
