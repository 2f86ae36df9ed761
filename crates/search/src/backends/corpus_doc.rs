//! What the corpus backends and the dense vectors share: a corpus's document and why a corpus
//! could not be read, indexed or embedded (its own module, so `corpus.rs` and `dense.rs` both
//! use it without importing each other).

use std::path::PathBuf;

/// One document of a corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusDoc {
    pub id: String,
    pub title: Option<String>,
    pub text: String,
    /// `YYYY-MM-DD` when the date parses, else as found.
    pub published: Option<String>,
}

/// Why the corpus could not be read or indexed.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A row (a line of JSON Lines or CSV, a Parquet row counted from 1) that is not a whole
    /// document.
    #[error("{path}, line {line}: {message}")]
    Row {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("index {path}: {message}")]
    Index { path: PathBuf, message: String },
    /// The documents' vectors could not be made.
    #[error("{message}")]
    Embed { message: String },
}

impl From<noisebench_index::run::RunError> for CorpusError {
    fn from(e: noisebench_index::run::RunError) -> Self {
        use noisebench_index::run::RunError;
        match e {
            RunError::Io { path, source } => CorpusError::Io { path, source },
            RunError::Row {
                path,
                line,
                message,
            } => CorpusError::Row {
                path,
                line,
                message,
            },
            RunError::File { path, message } => CorpusError::File { path, message },
        }
    }
}
