//! What a run is asked to do and what it gives back: options, result, the summary table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_core::{CallLog, CheckResult, NoProgress, Progress, Shard, StageSummary};

use super::StageRecord;

#[derive(Clone)]
pub struct RunOptions {
    /// The run directory root: outputs go to `<work_dir>/<pipeline>/`.
    pub work_dir: PathBuf,
    /// Run only this stage and what it needs.
    pub only: Option<String>,
    /// Rerun stages even when their fingerprint is unchanged: with `only`, that stage alone
    /// (what it needs reruns only when out of date); without, every stage.
    pub force: bool,
    /// Rerun the stages that read live sources (web pages, search APIs) even when their
    /// fingerprint is unchanged; the rest rerun only if their inputs changed.
    pub refresh: bool,
    pub progress: Arc<dyn Progress>,
    /// Where stages' LLM calls are collected (the pipeline's LLM layer), if any.
    pub call_log: Option<Arc<dyn CallLog>>,
    /// Run only this shard of the `only` stage, into its `shards/<i>-of-<n>/` folder: the items
    /// whose key hashes to it (see [`noisebench_core::ShardKey`]). Upstream stages must be up to
    /// date; they are not run.
    pub shard: Option<Shard>,
    /// Go on when a stage fails a gate or a table check (the results say what failed); without
    /// it (and without `allow_degraded` under the pipeline's `[gates]`) the run stops there.
    pub allow_degraded: bool,
}

impl RunOptions {
    /// Whether `force` reruns stage `id`: the `only` stage when there is one, else every stage.
    pub fn forces(&self, id: &str) -> bool {
        self.force && self.only.as_deref().is_none_or(|only| only == id)
    }

    pub fn new(work_dir: impl Into<PathBuf>) -> Self {
        Self {
            work_dir: work_dir.into(),
            only: None,
            force: false,
            refresh: false,
            progress: Arc::new(NoProgress),
            call_log: None,
            shard: None,
            allow_degraded: false,
        }
    }
}

/// The outcome of a run.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub run_dir: PathBuf,
    pub summary: Vec<StageSummary>,
    pub records: BTreeMap<String, StageRecord>,
    /// Every stage's gates and table checks, in plan order (failed ones only with
    /// `allow_degraded`: otherwise the run stopped at the first).
    pub checks: Vec<CheckResult>,
}

impl RunResult {
    /// Stages that ran this time (fully or partially).
    pub fn ran(&self) -> usize {
        self.summary
            .iter()
            .filter(|s| s.status != "skipped")
            .count()
    }

    /// Stages left with items that failed for a transient cause, in plan order: the next run
    /// retries them.
    pub fn unfinished(&self) -> Vec<&StageRecord> {
        self.summary
            .iter()
            .filter_map(|s| self.records.get(&s.id))
            .filter(|r| r.retry_items > 0)
            .collect()
    }

    /// How many items the run left to retry, by stage and reason, in one paragraph; `None` when
    /// every item was done or permanently dropped.
    pub fn unfinished_message(&self) -> Option<String> {
        let unfinished = self.unfinished();
        if unfinished.is_empty() {
            return None;
        }
        let total: u64 = unfinished.iter().map(|r| r.retry_items).sum();
        let stages = unfinished
            .iter()
            .map(|r| {
                let reasons = r
                    .retry_reasons()
                    .iter()
                    .map(|(reason, n)| format!("{reason}={n}"))
                    .collect::<Vec<_>>()
                    .join(" ");
                format!("`{}`: {} ({reasons})", r.id, r.retry_items)
            })
            .collect::<Vec<_>>()
            .join("; ");
        Some(format!(
            "{total} items failed for a transient cause and are not done ({stages}); running again retries exactly those (finished LLM answers come from the cache)"
        ))
    }

    /// The gates and checks that failed.
    pub fn failed_checks(&self) -> Vec<&CheckResult> {
        self.checks.iter().filter(|c| c.failed()).collect()
    }

    /// The summary as an aligned text table.
    pub fn render_summary(&self) -> String {
        let failures = self
            .records
            .iter()
            .filter(|(_, r)| !r.failures.is_empty())
            .map(|(id, r)| (id.clone(), r.failures.clone()))
            .collect();
        crate::summary::render(&self.summary, &failures)
    }
}

/// A run summary as an aligned text table (failures of kept items told apart when `run_dir`
/// holds the stages' records: [`crate::summary::render`]).
pub fn render_summary(summary: &[StageSummary], run_dir: &Path) -> String {
    crate::summary::render(summary, &kept_failures(run_dir, summary))
}

/// The failures of kept items each stage of `summary` recorded in its `stage.json` under
/// `run_dir` (a stage without a record: none).
fn kept_failures(run_dir: &Path, summary: &[StageSummary]) -> crate::summary::KeptFailures {
    summary
        .iter()
        .filter_map(|s| {
            let record = super::read_record(&run_dir.join(&s.id))?;
            (!record.failures.is_empty()).then(|| (s.id.clone(), record.failures))
        })
        .collect()
}
