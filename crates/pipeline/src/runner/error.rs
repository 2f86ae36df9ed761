//! Why a run failed.

use std::path::PathBuf;

use noisebench_core::{CheckResult, Shard, StageSummary, TableKind};

use crate::plan::PlanError;
use crate::table_io::TableError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Table(#[from] TableError),
    #[error(transparent)]
    Locked(#[from] crate::lock::LockError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("stage `{stage}` failed: {source}")]
    Stage {
        stage: String,
        source: noisebench_core::StageError,
    },
    #[error("stage `{stage}` did not produce its table `{table}` ({kind})")]
    MissingOutput {
        stage: String,
        table: String,
        kind: TableKind,
    },
    #[error("stage `{stage}` produced table `{table}` as {found}, declared {declared}")]
    OutputKind {
        stage: String,
        table: String,
        found: TableKind,
        declared: TableKind,
    },
    #[error(
        "stage `{stage}` stopped: {reason}; its finished LLM answers are cached, so running again resumes"
    )]
    Halted { stage: String, reason: String },
    #[error(
        "stage `{stage}` read {items_in} items but accounted for {accounted} ({items_out} out, {dropped} dropped): every item must become a row or a counted drop"
    )]
    Unaccounted {
        stage: String,
        items_in: u64,
        items_out: u64,
        dropped: u64,
        accounted: u64,
    },
    #[error(
        "stage `{stage}` failed its checks, so nothing after it ran and nothing is published:\n  {failures}\n(pass --allow-degraded, or set `allow_degraded = true` under [gates], to go on and publish anyway; the card and manifest.json then list what failed)"
    )]
    Checks {
        stage: String,
        /// The failed checks and gates, one line each.
        failures: String,
        results: Vec<CheckResult>,
        /// What the run did up to and with this stage.
        summary: Vec<StageSummary>,
        run_dir: PathBuf,
    },
    #[error("stage `{stage}` declared the file `{file}` but did not write it")]
    MissingFile { stage: String, file: String },
    #[error(
        "stage `{stage}` wrote {count} ids more than once in table `{table}` (every id must be unique): {}",
        ids.join(", ")
    )]
    DuplicateIds {
        stage: String,
        table: String,
        count: usize,
        /// The first few.
        ids: Vec<String>,
    },
    #[error(
        "stage `{stage}` does not run in shards: it needs its whole input (stages that do: {shardable})"
    )]
    NotShardable { stage: String, shardable: String },
    #[error(
        "shard {shard} of stage `{stage}` needs `{upstream}` up to date, and it is not: run it (or merge its shards) first"
    )]
    ShardUpstream {
        stage: String,
        shard: Shard,
        upstream: String,
    },
    #[error(
        "stage `{stage}` cannot be merged: {problem}; run the missing shards (`run {stage} --shard i/{count}`) first"
    )]
    PartsMissing {
        stage: String,
        count: u32,
        problem: String,
    },
    #[error(
        "stage `{stage}` needs `{input}` from stage `{upstream}`, which has not run: run it first"
    )]
    UpstreamMissing {
        stage: String,
        input: String,
        upstream: String,
    },
}
