//! Running a plan: fingerprints, skips, atomic outputs, the run summary.

mod error;
mod fingerprint;
mod options;
mod record;
mod shards;
mod stage;

pub use error::RunError;
pub use options::{RunOptions, RunResult, render_summary};
pub use record::{
    LLM_CALLS, SHARDS_DIR, STAGE_RECORD, SideFileRecord, StageRecord, TableFile, read_record,
};
pub use shards::MergeCheck;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use noisebench_core::{CheckResult, LlmCall, Rows, Shard, TableKind};

use crate::atomic::sweep_orphan_temps;
use crate::checks::{excuse_partial, gates, render_failed};
use crate::plan::{Plan, PlannedStage};
use crate::table_io;

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
    pub(crate) fn shard_dir(&self, stage: &str, shard: Shard) -> PathBuf {
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
                    if !self.options.forces(&stage.id)
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
            // What the stage freed goes back before the next one reads its tables.
            noisebench_core::memory::release();
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
}
