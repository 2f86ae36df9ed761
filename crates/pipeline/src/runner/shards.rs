//! Running one shard of a stage and checking shard parts against a merge.

use std::collections::BTreeMap;
use std::time::Instant;

use noisebench_core::{LlmCall, Rows, Shard, TableKind};

use crate::atomic::sweep_orphan_temps;
use crate::plan::{Plan, PlannedStage};
use crate::table_io;

use super::{LLM_CALLS, RunError, RunResult, Runner, StageRecord, read_record};

impl<'a> Runner<'a> {
    /// The `only` stage with its upstream, checked to be one that runs in shards.
    pub(super) fn shardable_target(
        &self,
    ) -> Result<(Vec<&'a PlannedStage>, &'a PlannedStage), RunError> {
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
    pub(super) fn upstream_records(
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
    pub(super) fn run_shard(&self, shard: Shard) -> Result<RunResult, RunError> {
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
pub(super) fn shard_inputs(
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
pub(super) fn shardable_stages(plan: &Plan) -> String {
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
