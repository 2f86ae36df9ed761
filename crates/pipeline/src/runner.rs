//! Running a plan: fingerprints, skips, atomic outputs, the run summary.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use noisebench_core::{
    CallLog, CheckResult, DropRecord, Inputs, LlmCall, NoProgress, Progress, Rows, Shard,
    StageContext, StageFacts, StageSummary, TableKind, is_transient_reason, sha256_hex,
};
use serde::{Deserialize, Serialize};

use crate::atomic::{sweep_orphan_temps, write_atomic};
use crate::checks::{Scope, excuse_partial, gates, render_failed, run_checks};
use crate::plan::{Plan, PlanError, PlannedStage, TableRef};
use crate::table_io::{self, TableError};

/// File name of the LLM calls a stage made (in its stage directory), and of the run's whole call
/// log (in the run directory).
pub const LLM_CALLS: &str = "llm_calls.parquet";

/// The folder of a stage's shard parts, in its stage directory: `shards/<i>-of-<n>/`.
pub const SHARDS_DIR: &str = "shards";

/// File name of a stage's record, written last: its presence with a matching fingerprint means the
/// stage's outputs are complete.
pub const STAGE_RECORD: &str = "stage.json";

/// One output table file of a stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFile {
    pub kind: String,
    pub file: String,
    pub sha256: String,
    pub rows: u64,
    pub bytes: u64,
}

/// What a finished stage leaves in `work/<pipeline>/<stage>/stage.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    pub id: String,
    pub kind: String,
    pub version: u32,
    pub fingerprint: String,
    pub tables: BTreeMap<String, TableFile>,
    pub items_in: u64,
    pub items_out: u64,
    pub items_dropped: u64,
    pub drop_reasons: BTreeMap<String, i64>,
    /// Items that failed for a transient cause (network, 429, 5xx, timeout, budget): not done.
    /// A record with any is never reused, so the next run reruns the stage and, with finished
    /// LLM answers cached, pays only for these items again.
    #[serde(default)]
    pub retry_items: u64,
    /// Files the stage declared and wrote (not tables), by name in the stage directory.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, SideFileRecord>,
    /// What the stage reported about its run (see core's `StageFacts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<StageFacts>,
    /// The checks of the tables it wrote, run when it wrote them (a record from before checks
    /// existed has none: they are run when the record is reused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<CheckResult>>,
    /// Tasks whose categorical answers never changed over the stage's run
    /// (`CallLog::constant_answers`): the gate `constant_answers` fails on them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constant_answers: Vec<String>,
    /// Failures that did not cost their item, per reason (`StageReport::failure_reasons`): the
    /// run summary shows them apart from the drops.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failures: BTreeMap<String, i64>,
}

/// A side file of a stage: its hash and size, and whether snapshots publish it as an export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideFileRecord {
    pub sha256: String,
    pub bytes: u64,
    /// `exports/<format>/` in a snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export: Option<String>,
}

impl StageRecord {
    /// `partial` when items are left to retry, else `ran` (for a record this run made).
    fn status(&self) -> &'static str {
        if self.retry_items > 0 {
            "partial"
        } else {
            "ran"
        }
    }

    /// The run summary's row for this record, under `id`.
    fn summary(&self, id: String, status: &str, seconds: f64) -> StageSummary {
        StageSummary {
            id,
            kind: self.kind.clone(),
            status: status.into(),
            fingerprint: self.fingerprint.clone(),
            items_in: self.items_in as i64,
            items_out: self.items_out as i64,
            items_dropped: self.items_dropped as i64,
            drop_reasons: self.drop_reasons.clone(),
            seconds,
        }
    }

    /// The transient drop reasons and their counts (those behind `retry_items`).
    pub fn retry_reasons(&self) -> BTreeMap<String, i64> {
        self.drop_reasons
            .iter()
            .filter(|(reason, _)| is_transient_reason(reason))
            .map(|(r, n)| (r.clone(), *n))
            .collect()
    }
}

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

#[derive(Clone)]
pub struct RunOptions {
    /// The run directory root: outputs go to `<work_dir>/<pipeline>/`.
    pub work_dir: PathBuf,
    /// Run only this stage and what it needs.
    pub only: Option<String>,
    /// Rerun stages even when their fingerprint is unchanged.
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
    crate::summary::render(summary, &crate::summary::kept_failures(run_dir, summary))
}

pub struct Runner<'a> {
    plan: &'a Plan,
    options: RunOptions,
}

impl<'a> Runner<'a> {
    pub fn new(plan: &'a Plan, options: RunOptions) -> Self {
        Self { plan, options }
    }

    pub fn run_dir(&self) -> PathBuf {
        self.options.work_dir.join(self.plan.name())
    }

    pub fn stage_dir(&self, stage: &str) -> PathBuf {
        self.run_dir().join(stage)
    }

    /// Where shard `shard` of `stage` writes its part.
    pub fn shard_dir(&self, stage: &str, shard: Shard) -> PathBuf {
        self.stage_dir(stage)
            .join(SHARDS_DIR)
            .join(shard.dir_name())
    }

    pub fn run(&self) -> Result<RunResult, RunError> {
        if let Some(shard) = self.options.shard {
            return self.run_shard(shard);
        }
        let stages: Vec<&PlannedStage> = match &self.options.only {
            Some(id) => self.plan.upstream_of(id)?,
            None => self.plan.stages.iter().collect(),
        };
        // One run per work folder: a second is refused before it writes anything.
        let run_dir = self.run_dir();
        let _lock = crate::lock::FolderLock::acquire(&run_dir)?;
        // Half-written files of killed runs: never read, but they should not pile up.
        let swept = sweep_orphan_temps(&run_dir)
            + self
                .plan
                .stages
                .iter()
                .map(|s| sweep_orphan_temps(&self.stage_dir(&s.id)))
                .sum::<usize>();
        if swept > 0 {
            tracing::info!(files = swept, dir = %run_dir.display(), "removed temporary files of killed runs");
        }
        let result = self.run_stages(&stages);
        // The run's call log gathers every stage's, also when a stage failed or was halted, so
        // what was paid for is never lost from view.
        if self.options.call_log.is_some()
            && let Err(e) = self.write_run_call_log(&stages)
        {
            // A failed stage's own error (e.g. the output it could not write on a full disk)
            // says more than the call log's, which then usually fails the same way.
            if result.is_ok() {
                return Err(e);
            }
            tracing::warn!("the run's call log was not written: {e}");
        }
        result
    }

    /// The `only` stage with its upstream, checked to be one that runs in shards.
    fn shardable_target(&self) -> Result<(Vec<&'a PlannedStage>, &'a PlannedStage), RunError> {
        let plan: &'a Plan = self.plan;
        let id = self
            .options
            .only
            .clone()
            .ok_or_else(|| RunError::NotShardable {
                stage: "(none)".into(),
                shardable: shardable_stages(plan),
            })?;
        let stages = plan.upstream_of(&id)?;
        let target = *stages
            .iter()
            .find(|s| s.id == id)
            .expect("upstream_of includes the stage itself");
        if target.stage.shard_keys().is_empty() {
            return Err(RunError::NotShardable {
                stage: id,
                shardable: shardable_stages(plan),
            });
        }
        Ok((stages, target))
    }

    /// Records of every stage `target` depends on, each required up to date (fingerprint equal,
    /// outputs intact, nothing left to retry): a shard or a merge never runs upstream work.
    fn upstream_records(
        &self,
        stages: &[&PlannedStage],
        target: &PlannedStage,
        shard: Shard,
    ) -> Result<BTreeMap<String, StageRecord>, RunError> {
        let mut records = BTreeMap::new();
        for &s in stages.iter().filter(|s| s.id != target.id) {
            let fingerprint = self.fingerprint(s, &records)?;
            match read_record(&self.stage_dir(&s.id)) {
                Some(r)
                    if r.fingerprint == fingerprint
                        && r.retry_items == 0
                        && self.outputs_intact(&s.id, &r) =>
                {
                    records.insert(s.id.clone(), r);
                }
                _ => {
                    return Err(RunError::ShardUpstream {
                        stage: target.id.clone(),
                        shard,
                        upstream: s.id.clone(),
                    });
                }
            }
        }
        Ok(records)
    }

    /// `run STAGE --shard i/n`: the stage over its share of the items, into its shard folder
    /// (locked on its own, so the shards of a stage run side by side on one machine too).
    fn run_shard(&self, shard: Shard) -> Result<RunResult, RunError> {
        let (stages, target) = self.shardable_target()?;
        let dir = self.shard_dir(&target.id, shard);
        let _lock = crate::lock::FolderLock::acquire(&dir)?;
        sweep_orphan_temps(&dir);
        let records = self.upstream_records(&stages, target, shard)?;
        let started = Instant::now();
        let fingerprint = self.fingerprint_of(target, Some(shard), &records)?;
        let previous = read_record(&dir);
        let reusable = matches!(&previous, Some(r) if !self.options.force
            && r.fingerprint == fingerprint
            && r.retry_items == 0
            && self.outputs_intact_in(&dir, r));
        let (record, status) = if reusable {
            (previous.expect("checked above"), "skipped")
        } else {
            if let Some(log) = &self.options.call_log {
                log.drain_calls();
            }
            let record = self.run_stage(target, &dir, Some(shard), fingerprint, &records)?;
            let status = record.status();
            (record, status)
        };
        let summary = vec![record.summary(
            format!("{} [{shard}]", record.id),
            status,
            started.elapsed().as_secs_f64(),
        )];
        let mut all = BTreeMap::new();
        all.insert(target.id.clone(), record);
        Ok(RunResult {
            run_dir: dir,
            summary,
            records: all,
            checks: Vec::new(),
        })
    }

    /// The records of the `count` parts of the `only` stage, each checked complete and made from
    /// today's inputs and configuration.
    pub fn shard_parts(&self, count: u32) -> Result<Vec<(Shard, StageRecord)>, RunError> {
        let (stages, target) = self.shardable_target()?;
        let first = Shard { index: 0, count };
        let records = self.upstream_records(&stages, target, first)?;
        let mut parts = Vec::new();
        let mut problems = Vec::new();
        for index in 0..count {
            let shard = Shard { index, count };
            let dir = self.shard_dir(&target.id, shard);
            let fingerprint = self.fingerprint_of(target, Some(shard), &records)?;
            match read_record(&dir) {
                None => problems.push(format!("shard {shard} has not run")),
                Some(r) if r.fingerprint != fingerprint => problems.push(format!(
                    "shard {shard} ran on other inputs or another configuration"
                )),
                Some(r) if r.retry_items > 0 => problems.push(format!(
                    "shard {shard} left {} items to retry",
                    r.retry_items
                )),
                Some(r) if !self.outputs_intact_in(&dir, &r) => {
                    problems.push(format!("shard {shard}'s outputs were changed or removed"))
                }
                Some(r) => parts.push((shard, r)),
            }
        }
        if !problems.is_empty() {
            return Err(RunError::PartsMissing {
                stage: target.id.clone(),
                count,
                problem: problems.join("; "),
            });
        }
        Ok(parts)
    }

    /// After the `only` stage ran over its whole input from its parts' answers: check every row a
    /// part wrote against the merged table (a row kept under the same id must be the same row),
    /// and make the stage's call log the parts' calls (what was paid for; the merge itself only
    /// read answers back).
    pub fn check_parts(
        &self,
        parts: &[(Shard, StageRecord)],
        merged: &StageRecord,
    ) -> Result<MergeCheck, RunError> {
        let stage = merged.id.clone();
        let mut check = MergeCheck {
            parts: parts.len() as u32,
            ..MergeCheck::default()
        };
        let stage_kind = self
            .plan
            .stage(&stage)
            .map(|s| s.stage.gathered_outputs())
            .unwrap_or_default();
        for (name, file) in &merged.tables {
            if name == "drops" || stage_kind.contains(&name.as_str()) {
                continue;
            }
            let kind = TableKind::from_name(&file.kind).unwrap_or(TableKind::Drops);
            let rows = table_io::read_table(&self.stage_dir(&stage).join(&file.file), kind)?;
            let by_id: BTreeMap<String, serde_json::Value> = rows
                .json_rows()
                .map(|v| (v["id"].as_str().unwrap_or_default().to_string(), v))
                .collect();
            for (shard, part) in parts {
                let Some(pf) = part.tables.get(name) else {
                    continue;
                };
                let dir = self.shard_dir(&stage, *shard);
                let part_rows = table_io::read_table(&dir.join(&pf.file), kind)?;
                for v in part_rows.json_rows() {
                    check.part_rows += 1;
                    let id = v["id"].as_str().unwrap_or_default();
                    match by_id.get(id) {
                        Some(m) if *m == v => check.same += 1,
                        Some(_) => check.differing.push(format!("{name} {id} (shard {shard})")),
                        None => check.not_kept += 1,
                    }
                }
            }
        }
        check.items_in = parts.iter().map(|(_, r)| r.items_in).sum();
        let mut calls: Vec<LlmCall> = Vec::new();
        for (shard, _) in parts {
            let path = self.shard_dir(&stage, *shard).join(LLM_CALLS);
            if path.is_file()
                && let Rows::LlmCalls(rows) = table_io::read_table(&path, TableKind::LlmCalls)?
            {
                calls.extend(rows);
            }
        }
        check.calls = calls.len() as u64;
        self.write_stage_call_log(&self.stage_dir(&stage), calls)?;
        if self.options.call_log.is_some() {
            let stages = self.plan.upstream_of(&stage)?;
            self.write_run_call_log(&stages)?;
        }
        Ok(check)
    }

    /// `work/<pipeline>/llm_calls.parquet`: the calls of every stage of this run (ran or skipped:
    /// a skipped stage's log is the one from its last run), in plan order.
    fn write_run_call_log(&self, stages: &[&PlannedStage]) -> Result<(), RunError> {
        let mut calls: Vec<LlmCall> = Vec::new();
        for stage in stages {
            let path = self.stage_dir(&stage.id).join(LLM_CALLS);
            if path.is_file()
                && let Rows::LlmCalls(rows) = table_io::read_table(&path, TableKind::LlmCalls)?
            {
                calls.extend(rows);
            }
        }
        let run_dir = self.run_dir();
        std::fs::create_dir_all(&run_dir).map_err(|source| RunError::Io {
            path: run_dir.clone(),
            source,
        })?;
        table_io::write_table(&run_dir.join(LLM_CALLS), &Rows::LlmCalls(calls))?;
        Ok(())
    }

    fn run_stages(&self, stages: &[&PlannedStage]) -> Result<RunResult, RunError> {
        let mut records: BTreeMap<String, StageRecord> = BTreeMap::new();
        let mut summary = Vec::new();
        let mut checks = Vec::new();
        let allow_degraded = self.options.allow_degraded
            || self
                .plan
                .file
                .gates
                .as_ref()
                .is_some_and(|g| g.allow_degraded);
        for &stage in stages {
            let started = Instant::now();
            let fingerprint = self.fingerprint(stage, &records)?;
            let previous = read_record(&self.stage_dir(&stage.id));
            let refreshed = self.options.refresh && stage.stage.reads_live_sources(&stage.config);
            let reusable = match &previous {
                Some(r)
                    if !self.options.force
                        && !refreshed
                        && r.fingerprint == fingerprint
                        && r.retry_items == 0 =>
                {
                    self.outputs_intact(&stage.id, r)
                }
                _ => false,
            };
            let (record, status) = if reusable {
                tracing::info!(stage = %stage.id, "unchanged; skipped");
                (previous.expect("checked above"), "skipped")
            } else {
                let dir = self.stage_dir(&stage.id);
                let record = self.run_stage(stage, &dir, None, fingerprint, &records)?;
                let status = record.status();
                (record, status)
            };
            let seconds = if status != "skipped" {
                started.elapsed().as_secs_f64()
            } else {
                0.0
            };
            summary.push(record.summary(record.id.clone(), status, seconds));
            let mut results = gates(
                &self.plan.file,
                summary.last().expect("pushed above"),
                record.retry_items,
                &stage.stage.environment(),
                &record.constant_answers,
            );
            results.extend(match &record.checks {
                Some(c) => c.clone(),
                None => {
                    let mut checks = self.stage_checks(stage, &record, &BTreeMap::new(), &records);
                    excuse_partial(&mut checks, record.retry_items);
                    checks
                }
            });
            records.insert(stage.id.clone(), record);
            if !allow_degraded && results.iter().any(CheckResult::failed) {
                // What ran is summarised all the same.
                table_io::write_table(
                    &self.run_dir().join("run_summary.parquet"),
                    &Rows::RunSummary(summary.clone()),
                )?;
                return Err(RunError::Checks {
                    stage: stage.id.clone(),
                    failures: render_failed(&results),
                    results,
                    summary,
                    run_dir: self.run_dir(),
                });
            }
            checks.extend(results);
        }
        let run_dir = self.run_dir();
        table_io::write_table(
            &run_dir.join("run_summary.parquet"),
            &Rows::RunSummary(summary.clone()),
        )?;
        Ok(RunResult {
            run_dir,
            summary,
            records,
            checks,
        })
    }

    /// sha256 over kind, version, configuration, input table hashes and external file hashes.
    fn fingerprint(
        &self,
        stage: &PlannedStage,
        records: &BTreeMap<String, StageRecord>,
    ) -> Result<String, RunError> {
        self.fingerprint_of(stage, None, records)
    }

    /// The fingerprint of a stage, or of one shard of it (the shard is part of the material).
    fn fingerprint_of(
        &self,
        stage: &PlannedStage,
        shard: Option<Shard>,
        records: &BTreeMap<String, StageRecord>,
    ) -> Result<String, RunError> {
        let mut inputs = BTreeMap::new();
        for (role, table) in &stage.inputs {
            inputs.insert(
                role.clone(),
                self.input_file(stage, role, table, records)?.1.sha256,
            );
        }
        let mut files = BTreeMap::new();
        for path in &stage.external_files {
            let (hash, _) = table_io::hash_file(path).map_err(|source| RunError::Io {
                path: path.clone(),
                source,
            })?;
            let key = path
                .strip_prefix(&self.plan.root)
                .unwrap_or(path)
                .display()
                .to_string();
            files.insert(key, hash);
        }
        let mut material = serde_json::json!({
            "kind": stage.stage.kind(),
            "version": stage.stage.version(),
            "config": stage.config,
            "inputs": inputs,
            "files": files,
        });
        // Only stages that declare an environment add the key, so fingerprints of the others do
        // not change with this field's introduction.
        let environment = stage.stage.environment();
        if !environment.is_null() {
            material["environment"] = environment;
        }
        if let Some(shard) = shard {
            material["shard"] = serde_json::json!(shard.to_string());
        }
        Ok(sha256_hex(material.to_string().as_bytes()))
    }

    /// The file of an input table, from this run's records or, for `run STAGE`, from disk.
    fn input_file(
        &self,
        stage: &PlannedStage,
        role: &str,
        table: &TableRef,
        records: &BTreeMap<String, StageRecord>,
    ) -> Result<(PathBuf, TableFile), RunError> {
        let record = match records.get(&table.stage) {
            Some(r) => Some(r.clone()),
            None => read_record(&self.stage_dir(&table.stage)),
        };
        let missing = || RunError::UpstreamMissing {
            stage: stage.id.clone(),
            input: role.into(),
            upstream: table.stage.clone(),
        };
        let file = record
            .and_then(|r| r.tables.get(&table.table).cloned())
            .ok_or_else(missing)?;
        Ok((self.stage_dir(&table.stage).join(&file.file), file))
    }

    fn outputs_intact(&self, stage: &str, record: &StageRecord) -> bool {
        self.outputs_intact_in(&self.stage_dir(stage), record)
    }

    fn outputs_intact_in(&self, dir: &Path, record: &StageRecord) -> bool {
        let intact = |file: &str, sha256: &str| {
            let path = dir.join(file);
            matches!(table_io::hash_file(&path), Ok((hash, _)) if hash == sha256)
        };
        record.tables.values().all(|t| intact(&t.file, &t.sha256))
            && record.files.iter().all(|(name, f)| intact(name, &f.sha256))
    }

    fn run_stage(
        &self,
        stage: &PlannedStage,
        dir: &Path,
        shard: Option<Shard>,
        fingerprint: String,
        records: &BTreeMap<String, StageRecord>,
    ) -> Result<StageRecord, RunError> {
        let dir = dir.to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|source| RunError::Io {
            path: dir.clone(),
            source,
        })?;
        let stale = read_record(&dir)
            .map(|r| r.files.into_keys().collect::<Vec<_>>())
            .unwrap_or_default();
        // A stale record must not vouch for outputs this run is about to replace.
        let record_path = dir.join(STAGE_RECORD);
        if record_path.exists() {
            std::fs::remove_file(&record_path).map_err(|source| RunError::Io {
                path: record_path.clone(),
                source,
            })?;
        }
        // Side files of the last run, or that this run will write, must not outlive it.
        let declared = stage.stage.files(&stage.config);
        for name in declared.iter().map(|f| f.name.clone()).chain(stale) {
            let path = dir.join(&name);
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(RunError::Io { path, source: e });
                }
                _ => {}
            }
        }
        let mut tables = BTreeMap::new();
        for (role, table) in &stage.inputs {
            let (path, _) = self.input_file(stage, role, table, records)?;
            tables.insert(role.clone(), table_io::read_table(&path, table.kind)?);
        }
        if let Some(shard) = shard {
            shard_inputs(stage, shard, &mut tables)?;
        }
        let ctx = StageContext {
            root: self.plan.root.clone(),
            stage_dir: dir.clone(),
            pipeline: self.plan.name().to_string(),
            stage_id: stage.id.clone(),
            progress: self.options.progress.clone(),
        };
        tracing::info!(stage = %stage.id, kind = stage.stage.kind(), "running");
        if let Some(log) = &self.options.call_log {
            // Calls made outside any stage (none today) must not be charged to this one.
            log.drain_calls();
        }
        let result = stage.stage.run(&stage.config, Inputs::new(tables), &ctx);
        let mut constant_answers = Vec::new();
        if let Some(log) = &self.options.call_log {
            self.write_stage_call_log(&dir, log.drain_calls())?;
            constant_answers = log.constant_answers(&stage.id);
            if let Some(reason) = log.halted() {
                return Err(RunError::Halted {
                    stage: stage.id.clone(),
                    reason,
                });
            }
        }
        let mut output = result.map_err(|source| RunError::Stage {
            stage: stage.id.clone(),
            source,
        })?;
        let mut written = BTreeMap::new();
        let mut held: BTreeMap<String, Rows> = BTreeMap::new();
        for spec in stage.stage.outputs() {
            let rows = output
                .tables
                .remove(spec.name)
                .ok_or_else(|| RunError::MissingOutput {
                    stage: stage.id.clone(),
                    table: spec.name.into(),
                    kind: spec.kind,
                })?;
            if rows.kind() != spec.kind {
                return Err(RunError::OutputKind {
                    stage: stage.id.clone(),
                    table: spec.name.into(),
                    found: rows.kind(),
                    declared: spec.kind,
                });
            }
            unique_ids(&stage.id, spec.name, &rows)?;
            let file = format!("{}.parquet", spec.name);
            let w = table_io::write_table(&dir.join(&file), &rows)?;
            written.insert(
                spec.name.to_string(),
                TableFile {
                    kind: spec.kind.name().into(),
                    file,
                    sha256: w.sha256,
                    rows: w.rows,
                    bytes: w.bytes,
                },
            );
            held.insert(spec.name.to_string(), rows);
        }
        let mut files = BTreeMap::new();
        for file in &declared {
            let path = dir.join(&file.name);
            if !path.is_file() {
                return Err(RunError::MissingFile {
                    stage: stage.id.clone(),
                    file: file.name.clone(),
                });
            }
            let (sha256, bytes) =
                table_io::hash_file(&path).map_err(|source| RunError::Io { path, source })?;
            files.insert(
                file.name.clone(),
                SideFileRecord {
                    sha256,
                    bytes,
                    export: file.export.map(String::from),
                },
            );
        }
        let report = output.report;
        let dropped = report.items_dropped();
        if stage.stage.one_to_one() && report.items_in != report.items_out + dropped {
            return Err(RunError::Unaccounted {
                stage: stage.id.clone(),
                items_in: report.items_in,
                items_out: report.items_out,
                dropped,
                accounted: report.items_out + dropped,
            });
        }
        let mut drops: Vec<DropRecord> = report.drops.clone();
        drops.sort();
        let drops = Rows::Drops(drops);
        unique_ids(&stage.id, "drops", &drops)?;
        let w = table_io::write_table(&dir.join("drops.parquet"), &drops)?;
        written.insert(
            "drops".into(),
            TableFile {
                kind: "drops".into(),
                file: "drops.parquet".into(),
                sha256: w.sha256,
                rows: w.rows,
                bytes: w.bytes,
            },
        );
        let mut record = StageRecord {
            id: stage.id.clone(),
            kind: stage.stage.kind().into(),
            version: stage.stage.version(),
            fingerprint,
            tables: written,
            items_in: report.items_in,
            items_out: report.items_out,
            items_dropped: dropped,
            drop_reasons: report.drop_reasons(),
            failures: report.failure_reasons(),
            retry_items: report.transient_drops() as u64,
            files,
            facts: output.facts,
            checks: None,
            constant_answers,
        };
        // A shard's part holds some of the rows: its checks are the merge's.
        if shard.is_none() {
            let mut checks = self.stage_checks(stage, &record, &held, records);
            excuse_partial(&mut checks, record.retry_items);
            record.checks = Some(checks);
        }
        drop(held);
        let json = serde_json::to_vec_pretty(&record).expect("a stage record always serialises");
        write_atomic(&record_path, &json).map_err(|source| RunError::Io {
            path: record_path,
            source,
        })?;
        Ok(record)
    }

    /// The checks of every table `record` lists (but its drops): each over the stage's tables
    /// (`held` in memory, the rest from its folder) and the nearest upstream table of each other
    /// kind, following the inputs back from the stage.
    fn stage_checks(
        &self,
        stage: &PlannedStage,
        record: &StageRecord,
        held: &BTreeMap<String, Rows>,
        records: &BTreeMap<String, StageRecord>,
    ) -> Vec<CheckResult> {
        let dir = self.stage_dir(&stage.id);
        let tables: Vec<(&String, TableKind, &TableFile)> = record
            .tables
            .iter()
            .filter(|(name, _)| name.as_str() != "drops")
            .filter_map(|(name, f)| TableKind::from_name(&f.kind).map(|k| (name, k, f)))
            .collect();
        let mut results = Vec::new();
        for &(name, kind, _) in &tables {
            let mut scope = Scope::default();
            let ordered = tables
                .iter()
                .filter(|(n, _, _)| *n == name)
                .chain(tables.iter().filter(|(n, _, _)| *n != name));
            for &(n, k, f) in ordered {
                match held.get(n) {
                    Some(rows) => scope.hold(rows),
                    None => scope.file(k, dir.join(&f.file)),
                }
            }
            self.scope_upstream(stage, records, &mut scope);
            results.extend(run_checks(name, kind, &self.plan.checks, &scope));
        }
        results
    }

    /// Put in `scope` the nearest table of each kind upstream of `stage`: its inputs first, then
    /// their stages' inputs, breadth first.
    fn scope_upstream(
        &self,
        stage: &PlannedStage,
        records: &BTreeMap<String, StageRecord>,
        scope: &mut Scope<'_>,
    ) {
        let mut queue: VecDeque<&PlannedStage> = VecDeque::from([stage]);
        let mut seen: BTreeSet<String> = BTreeSet::new();
        while let Some(s) = queue.pop_front() {
            for table in s.inputs.values() {
                let record = match records.get(&table.stage) {
                    Some(r) => Some(r.clone()),
                    None => read_record(&self.stage_dir(&table.stage)),
                };
                if let Some(file) = record.and_then(|r| r.tables.get(&table.table).cloned()) {
                    scope.file(table.kind, self.stage_dir(&table.stage).join(&file.file));
                }
                if seen.insert(table.stage.clone())
                    && let Some(up) = self.plan.stage(&table.stage)
                {
                    queue.push_back(up);
                }
            }
        }
    }

    /// The calls a stage made, beside its outputs; a stage that made none leaves no file.
    fn write_stage_call_log(&self, dir: &Path, calls: Vec<LlmCall>) -> Result<(), RunError> {
        let path = dir.join(LLM_CALLS);
        if calls.is_empty() {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(RunError::Io { path, source: e })
                }
                _ => Ok(()),
            };
        }
        table_io::write_table(&path, &Rows::LlmCalls(calls))?;
        Ok(())
    }
}

/// What [`Runner::check_parts`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeCheck {
    pub parts: u32,
    /// Items the parts read, together (the whole input, once).
    pub items_in: u64,
    /// Rows the parts wrote.
    pub part_rows: u64,
    /// Of those, rows the merged table has unchanged.
    pub same: u64,
    /// Rows the merged table does not have: removed by a step that sees every item (near
    /// duplicates across parts, same-content documents).
    pub not_kept: u64,
    /// Rows the merged table has under the same id but with other values: the stage did not
    /// give an item the same output in both runs (the merge fails on any).
    pub differing: Vec<String>,
    /// LLM calls the parts made (the merged stage's call log).
    pub calls: u64,
}

/// Shard stage `stage`'s inputs: the roles its [`noisebench_core::ShardKey`]s name keep the rows
/// whose key belongs to `shard`, in their order.
fn shard_inputs(
    stage: &PlannedStage,
    shard: Shard,
    tables: &mut BTreeMap<String, Rows>,
) -> Result<(), RunError> {
    for key in stage.stage.shard_keys() {
        let Some(rows) = tables.get(key.role) else {
            continue;
        };
        let values = rows
            .string_column(key.column)
            .ok_or_else(|| RunError::Stage {
                stage: stage.id.clone(),
                source: noisebench_core::StageError::Input {
                    role: key.role.into(),
                    message: format!("no string column `{}` to shard by", key.column),
                },
            })?;
        let keep: Vec<usize> = values
            .iter()
            .enumerate()
            .filter(|(_, v)| shard.owns(&key.key(v)))
            .map(|(i, _)| i)
            .collect();
        let kept = rows.select(&keep);
        tables.insert(key.role.to_string(), kept);
    }
    Ok(())
}

/// The ids of the plan's stages that run in shards, for messages.
fn shardable_stages(plan: &Plan) -> String {
    let ids: Vec<&str> = plan
        .stages
        .iter()
        .filter(|s| !s.stage.shard_keys().is_empty())
        .map(|s| s.id.as_str())
        .collect();
    if ids.is_empty() {
        "none".into()
    } else {
        ids.join(", ")
    }
}

/// Every table a stage writes has unique ids: later stages, diffs and reviewers join on them.
fn unique_ids(stage: &str, table: &str, rows: &Rows) -> Result<(), RunError> {
    let dups = rows.duplicate_ids();
    if dups.is_empty() {
        return Ok(());
    }
    Err(RunError::DuplicateIds {
        stage: stage.into(),
        table: table.into(),
        count: dups.len(),
        ids: dups.into_iter().take(5).collect(),
    })
}

/// The record of a finished stage, if there is a readable one.
pub fn read_record(stage_dir: &Path) -> Option<StageRecord> {
    let bytes = std::fs::read(stage_dir.join(STAGE_RECORD)).ok()?;
    serde_json::from_slice(&bytes).ok()
}
