//! A stage's fingerprint and whether its recorded outputs are intact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_core::{Shard, sha256_hex};

use crate::plan::{PlannedStage, TableRef};
use crate::table_io;

use super::{RunError, Runner, StageRecord, TableFile, read_record};

impl<'a> Runner<'a> {
    /// sha256 over kind, version, configuration, input table hashes and external file hashes.
    pub(super) fn fingerprint(
        &self,
        stage: &PlannedStage,
        records: &BTreeMap<String, StageRecord>,
    ) -> Result<String, RunError> {
        self.fingerprint_of(stage, None, records)
    }

    /// The fingerprint of a stage, or of one shard of it (the shard is part of the material).
    pub(super) fn fingerprint_of(
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
        let environment = stage.stage.environment_of(&stage.config);
        if !environment.is_null() {
            material["environment"] = environment;
        }
        if let Some(shard) = shard {
            material["shard"] = serde_json::json!(shard.to_string());
        }
        Ok(sha256_hex(material.to_string().as_bytes()))
    }

    /// The file of an input table, from this run's records or, for `run STAGE`, from disk.
    pub(super) fn input_file(
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

    pub(super) fn outputs_intact(&self, stage: &str, record: &StageRecord) -> bool {
        self.outputs_intact_in(&self.stage_dir(stage), record)
    }

    pub(super) fn outputs_intact_in(&self, dir: &Path, record: &StageRecord) -> bool {
        let intact = |file: &str, sha256: &str| {
            let path = dir.join(file);
            matches!(table_io::hash_file(&path), Ok((hash, _)) if hash == sha256)
        };
        record.tables.values().all(|t| intact(&t.file, &t.sha256))
            && record.files.iter().all(|(name, f)| intact(name, &f.sha256))
    }
}
