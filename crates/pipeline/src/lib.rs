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
//!
//! # Modules
//!
//! The only crate that links polars. `table_io.rs` converts any `Rows` to and from a DataFrame
//! generically, driven by the schema: `columns.rs` is a serde serializer that writes each row's
//! fields straight into typed column builders and a serde deserializer that hands a row type its
//! fields from the columns' cells (no JSON value per row; Json columns hold JSON text), and
//! `table_io.rs` reads/writes zstd Parquet (declaring `large_string`/`large_list` in the footer's
//! Arrow schema, not polars' `string_view`, so pandas and older readers open every table); its
//! public face is typed rows (`read_rows`, `write_table`; a table is written a row group at a time,
//! about 32 MB of cells each, so long texts are not held twice while writing), single columns for
//! summaries and checks (`read_ids`, `value_counts`, `string_columns`, `read_str_column`: one
//! reader, a row group at a time) and an opaque `Table` for checks and previews, so no polars
//! type leaves the crate; `file.rs` parses pipeline files (keeping the `[llm]` and `[web]`
//! tables for their layers to parse); `plan.rs` checks kinds, configurations and wiring and orders
//! the DAG (petgraph); `runner/` fingerprints, skips, runs and writes outputs (`mod.rs` the run,
//! `stage.rs` one stage, `fingerprint.rs`, `shards.rs` shard runs and merge checks, `record.rs` the
//! `stage.json` record, `options.rs` options and results, `error.rs`), each stage's
//! `llm_calls.parquet` and the run's (every stage's log from its last run), and the run summary; a
//! stage after which the `CallLog` reports a halt is not recorded, so the next run redoes it; a
//! stage with transient drops is recorded with `retry_items` (status `partial`) and never reused,
//! so the next run reruns it (`RunResult::unfinished_message` says what is left); a stage declaring
//! `ONE_TO_ONE` fails when `items_in != items_out + dropped`; `atomic.rs` does crash-safe writes
//! and sweeps the temporary files of writers that no longer run. `checks.rs` runs the table checks
//! (a `Scope` of tables in memory or read once from Parquet, a column alone where a check reads
//! only columns: after a stage, its tables and the nearest upstream table of each other kind;
//! before publishing, `check_published`, one scope over the tables to publish, each read once)
//! and judges each stage's gates (`max_drop_share`, `output_not_empty`, and
//! `constant_answers` from the `CallLog`'s answers of the stage, kept in its record; `[gates]`,
//! `[stages.<id>.gate]`); the runner stops at a stage that fails one (`RunError::Checks`) unless
//! `RunOptions::allow_degraded`. `summary.rs` renders the run summary, the drops' reasons apart
//! from failures of kept items (`StageRecord::failures`). `lock.rs`: the run lock (`flock` on
//! `work/<pipeline>/.lock`, held through publishing, released by the kernel when a run dies) and
//! the publish lock on `snapshots/.locks/<dataset>/`; `atomic.rs` carries the full-disk test hook.
//! Shards: a stage that works per item declares `shard_keys()` (core's `ShardKey`: an input role
//! and the column holding the item key; `Shard::owns` hashes it) and, if some of its outputs gather
//! several items, `gathered_outputs()`. `RunOptions::shard` makes `Runner::run` run only the `only`
//! stage over its share of the rows into `<stage>/shards/<i>-of-<n>/` (its own lock; upstream must
//! be up to date, never run); `Runner::shard_parts` checks a merge's parts and
//! `Runner::check_parts` compares them with the merged tables and makes the parts' calls the
//! stage's call log. The merge itself is an ordinary run of the stage with answers read back (the
//! CLI loads the layers cache-only and archive-only), so steps across items and the stage's facts
//! are those of one process. `progress.rs`: progress bars (indicatif; hidden when stderr is not a
//! terminal) that log each phase's label, count and seconds at `NOISEBENCH_LOG=info`. Invariant:
//! the only crate that links polars, and no polars type leaves it; a stage's `stage.json` is
//! written last and vouches only for whole outputs.

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
