//! The data model every noisebench stage shares: the rows of each table (claims, queries, search hits,
//! documents, labels, reports, chunks, triplets, questions, perturbations), their column schemas,
//! stable content-derived ids, the [`Stage`] trait that turns typed input rows into typed output
//! rows plus counted drops, and the vocabulary of model answers ([`vocab`]: verdicts, stances, the
//! one reader of a reply, the shared `exam_verdict` contract).
//!
//! What this crate is not: it knows nothing of Parquet, polars, HTTP or LLM clients. Table files
//! are read and written by `noisebench-pipeline` alone, through [`Rows`], so stage crates stay
//! light and pure.

pub mod checks;
pub mod distinct;
pub mod id;
pub mod model;
pub mod parallel;
pub mod rows;
pub mod sample;
pub mod schema;
pub mod stage;
pub mod vocab;

pub use checks::{Check, CheckKind, CheckResult, CheckStatus};
pub use distinct::DistinctTexts;
pub use id::{sha256_hex, stable_id};
pub use model::*;
pub use parallel::{default_threads, parallel_map, parallel_map_owned, parallel_map_with};
pub use rows::{Record, Rows, TableKind, TableRow};
pub use sample::{
    DEFAULT_PER_STRATUM, Stratum, sample_key, sample_labels, sample_questions, stratified_sample,
};
pub use schema::{Column, DType, TableSchema};
pub use stage::{
    CallLog, ConfigError, DropCode, DropReason, DropRecord, Drops, InputSpec, Inputs, NoProgress,
    OutputSpec, Progress, ProgressBar, Shard, ShardKey, SideFile, Stage, StageContext, StageError,
    StageFacts, StageOutput, StageReport, TypedStage, parse_config,
};
