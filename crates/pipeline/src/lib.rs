//! The pipeline runner and the one place where tables meet Parquet.
//!
//! A pipeline file (TOML, in `pipelines/`) names stages, their kinds, configurations and input
//! tables. [`Plan::load`] parses it, checks every stage's configuration and wiring and orders the
//! stages as a DAG (petgraph) before any work; [`Runner`] runs them in order, skips a stage whose
//! fingerprint (kind, version, configuration, input table hashes, external files) is unchanged, and
//! writes each output table atomically to `work/<pipeline>/<stage>/<table>.parquet` (zstd).
//! [`table_io`] converts typed [`noisebench_core::Rows`] to and from polars DataFrames for every
//! table, driven by the table's schema: stage crates never see polars.
//!
//! A run holds [`lock::FolderLock`] on `work/<pipeline>/` from start to end: a second run of the
//! same pipeline in the same folder is refused, naming the holder, and never interleaves writes.
//!
//! What this crate is not: it holds no stage logic and no snapshot logic (see `noisebench-snapshot`).

pub mod atomic;
pub mod checks;
mod columns;
pub mod file;
pub mod lock;
pub mod plan;
pub mod progress;
pub mod runner;
pub mod summary;
pub mod table_io;

pub use checks::{PublishedTable, check_published, excuse_partial};
pub use file::{Gates, PipelineFile, PublishSection, SnapshotSection, StageEntry, StageGate};
pub use lock::{FolderLock, LockError};
pub use plan::{Plan, PlanError, PlannedStage, Registry, TableRef};
pub use progress::BarProgress;
pub use runner::{
    LLM_CALLS, MergeCheck, RunError, RunOptions, RunResult, Runner, SHARDS_DIR, SideFileRecord,
    StageRecord, TableFile, render_summary,
};
