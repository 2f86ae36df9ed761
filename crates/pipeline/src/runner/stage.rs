//! Running one stage: reading its inputs, running it, checking and writing its outputs.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use noisebench_core::{
    CheckResult, DropRecord, Inputs, LlmCall, Rows, Shard, SideFile, StageContext, StageOutput,
    TableKind,
};

use crate::atomic::write_atomic;
use crate::checks::{Scope, excuse_partial, run_checks};
use crate::plan::PlannedStage;
use crate::table_io;

use super::shards::shard_inputs;
use super::{
    LLM_CALLS, RunError, Runner, STAGE_RECORD, SideFileRecord, StageRecord, TableFile, read_record,
};

impl<'a> Runner<'a> {
    pub(super) fn run_stage(
        &self,
        stage: &PlannedStage,
        dir: &Path,
        shard: Option<Shard>,
        fingerprint: String,
        records: &BTreeMap<String, StageRecord>,
    ) -> Result<StageRecord, RunError> {
        let dir = dir.to_path_buf();
        let (record_path, declared) = clear_stage_dir(stage, &dir)?;
        let mut tables = BTreeMap::new();
        for (role, table) in &stage.inputs {
            let (path, _) = self.input_file(stage, role, table, records)?;
            tables.insert(role.clone(), table_io::read_table(&path, table.kind)?);
        }
        if let Some(shard) = shard {
            shard_inputs(stage, shard, &mut tables)?;
        }
        let mut output = self.call_stage(stage, &dir, tables)?;
        // Read right after the stage's calls: the tasks whose answers never changed.
        let constant_answers = self
            .options
            .call_log
            .as_ref()
            .map(|log| log.constant_answers(&stage.id))
            .unwrap_or_default();
        let (mut written, held) = write_outputs(stage, &dir, &mut output)?;
        let files = side_files(stage, &dir, &declared)?;
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
            retry_reasons: super::record::retry_reasons(&report.drops),
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

    /// Run the stage on its input tables in `dir`, its LLM calls written beside its outputs; a
    /// halt the call log reports fails it.
    fn call_stage(
        &self,
        stage: &PlannedStage,
        dir: &Path,
        tables: BTreeMap<String, Rows>,
    ) -> Result<StageOutput, RunError> {
        let ctx = StageContext {
            root: self.plan.root.clone(),
            stage_dir: dir.to_path_buf(),
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
        if let Some(log) = &self.options.call_log {
            self.write_stage_call_log(dir, log.drain_calls())?;
            if let Some(reason) = log.halted() {
                return Err(RunError::Halted {
                    stage: stage.id.clone(),
                    reason,
                });
            }
        }
        result.map_err(|source| RunError::Stage {
            stage: stage.id.clone(),
            source,
        })
    }

    /// The checks of every table `record` lists (but its drops): each over the stage's tables
    /// (`held` in memory, the rest from its folder) and the nearest upstream table of each other
    /// kind, following the inputs back from the stage.
    pub(super) fn stage_checks(
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
    pub(super) fn scope_upstream(
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
    pub(super) fn write_stage_call_log(
        &self,
        dir: &Path,
        calls: Vec<LlmCall>,
    ) -> Result<(), RunError> {
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

/// The stage folder made ready for a run: created, its stale record removed (it must not vouch
/// for outputs this run is about to replace) and the side files of the last run or of this one
/// removed (they must not outlive it). Returns the record's path and the declared side files.
fn clear_stage_dir(stage: &PlannedStage, dir: &Path) -> Result<(PathBuf, Vec<SideFile>), RunError> {
    std::fs::create_dir_all(dir).map_err(|source| RunError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let stale = read_record(dir)
        .map(|r| r.files.into_keys().collect::<Vec<_>>())
        .unwrap_or_default();
    let record_path = dir.join(STAGE_RECORD);
    if record_path.exists() {
        std::fs::remove_file(&record_path).map_err(|source| RunError::Io {
            path: record_path.clone(),
            source,
        })?;
    }
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
    Ok((record_path, declared))
}

/// The files written by table name, and the rows kept for the stage's checks.
type Written = (BTreeMap<String, TableFile>, BTreeMap<String, Rows>);

/// Every declared output table, checked (present, of its kind, unique ids) and written: the
/// files by table name, and the rows kept for the stage's checks.
fn write_outputs(
    stage: &PlannedStage,
    dir: &Path,
    output: &mut StageOutput,
) -> Result<Written, RunError> {
    let mut checked = Vec::new();
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
        checked.push((spec, rows));
    }
    // A stage's tables are written at the same time (the graph's edges, entities and aliases);
    // the first failure in declared order is the one reported.
    let files = noisebench_core::parallel_map(
        &checked,
        noisebench_core::default_threads(),
        |(spec, rows)| {
            let file = format!("{}.parquet", spec.name);
            table_io::write_table(&dir.join(&file), rows).map(|w| TableFile {
                kind: spec.kind.name().into(),
                file,
                sha256: w.sha256,
                rows: w.rows,
                bytes: w.bytes,
            })
        },
    );
    let mut written = BTreeMap::new();
    let mut held: BTreeMap<String, Rows> = BTreeMap::new();
    for ((spec, rows), file) in checked.into_iter().zip(files) {
        written.insert(spec.name.to_string(), file?);
        held.insert(spec.name.to_string(), rows);
    }
    Ok((written, held))
}

/// The declared side files, each required written, hashed for the record.
fn side_files(
    stage: &PlannedStage,
    dir: &Path,
    declared: &[SideFile],
) -> Result<BTreeMap<String, SideFileRecord>, RunError> {
    let mut files = BTreeMap::new();
    for file in declared {
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
    Ok(files)
}

/// Every table a stage writes has unique ids: later stages, diffs and reviewers join on them.
pub(super) fn unique_ids(stage: &str, table: &str, rows: &Rows) -> Result<(), RunError> {
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
