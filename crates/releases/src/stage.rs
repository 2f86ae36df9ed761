//! The one export stage: `export-<name>` for every [`ReleaseFormat`] in
//! [`formats`](crate::formats), writing the format's files into its stage directory (published
//! in snapshots under `exports/<name>/`). Every item the format reads (a label row, a question)
//! is written or a drop with the format's reason.

use std::path::{Path, PathBuf};

use noisebench_core::{
    ConfigError, Drops, InputSpec, Inputs, OutputSpec, Rows, ShardKey, SideFile, Stage,
    StageContext, StageError, StageOutput, StageReport, TableKind, parse_config,
};
use serde::Deserialize;

use crate::format::{BoxError, ReleaseFormat, TableSource};

/// Configuration of an export stage: nothing to set yet (an empty table).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportConfig {}

/// `export-<name>`: the release format `format` written from the stage's inputs.
pub struct ExportStage {
    format: &'static dyn ReleaseFormat,
}

impl ExportStage {
    pub fn new(format: &'static dyn ReleaseFormat) -> Self {
        Self { format }
    }

    /// The format this stage writes.
    pub fn format(&self) -> &'static dyn ReleaseFormat {
        self.format
    }
}

/// An export stage for every format, in [`formats`](crate::formats)' order.
pub fn export_stages() -> Vec<ExportStage> {
    crate::formats()
        .iter()
        .map(|f| ExportStage::new(*f))
        .collect()
}

/// A stage's inputs as a table source: each kind read from the role the format gave it, and
/// handed over, not copied (a format reads each of its tables once; a second read of a kind
/// finds none), so no table is held twice while the format writes.
struct StageInputs {
    tables: std::sync::Mutex<std::collections::BTreeMap<TableKind, Rows>>,
}

impl TableSource for StageInputs {
    fn rows(&self, kind: TableKind) -> Result<Option<Rows>, BoxError> {
        let mut tables = self
            .tables
            .lock()
            .map_err(|_| BoxError::from("export inputs: lock poisoned"))?;
        Ok(tables.remove(&kind))
    }
}

impl Stage for ExportStage {
    fn kind(&self) -> &'static str {
        self.format.stage_kind()
    }
    fn version(&self) -> u32 {
        self.format.version()
    }
    fn one_to_one(&self) -> bool {
        true
    }
    fn inputs(&self) -> Vec<InputSpec> {
        self.format.inputs()
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        Vec::new()
    }
    fn check(&self, config: &serde_json::Value, _root: &Path) -> Result<(), ConfigError> {
        parse_config::<ExportConfig>(config).map(|_| ())
    }
    fn config_schema(&self) -> serde_json::Value {
        schemars::schema_for!(ExportConfig).to_value()
    }
    fn external_files(
        &self,
        config: &serde_json::Value,
        _root: &Path,
    ) -> Result<Vec<PathBuf>, ConfigError> {
        parse_config::<ExportConfig>(config).map(|_| Vec::new())
    }
    fn files(&self, config: &serde_json::Value) -> Vec<SideFile> {
        if parse_config::<ExportConfig>(config).is_err() {
            return Vec::new();
        }
        self.format
            .files()
            .into_iter()
            .map(|f| SideFile::export(f, self.format.name()))
            .collect()
    }
    fn environment(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn tasks(&self) -> Vec<&'static str> {
        Vec::new()
    }
    fn reads_live_sources(&self, _config: &serde_json::Value) -> bool {
        false
    }
    fn shard_keys(&self) -> Vec<ShardKey> {
        Vec::new()
    }
    fn gathered_outputs(&self) -> Vec<&'static str> {
        Vec::new()
    }
    fn run(
        &self,
        config: &serde_json::Value,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        parse_config::<ExportConfig>(config)?;
        let mut tables = std::collections::BTreeMap::new();
        for spec in self.format.inputs() {
            match inputs.take_rows(spec.role) {
                Some(rows) => {
                    tables.insert(spec.kind, rows);
                }
                None if spec.required => {
                    return Err(StageError::Input {
                        role: spec.role.into(),
                        message: "not given".into(),
                    });
                }
                None => {}
            }
        }
        let exported = self
            .format
            .export(
                &StageInputs {
                    tables: std::sync::Mutex::new(tables),
                },
                &ctx.stage_dir,
            )
            .map_err(|e| StageError::Other(e.to_string()))?;
        let mut drops = Drops::new(&ctx.stage_id);
        let skipped = exported.skipped();
        let items_out = exported.written() as u64;
        let items_in = items_out + skipped.len() as u64;
        for (id, reason, detail) in skipped {
            drops.add(id, reason, detail);
        }
        Ok(StageOutput::new(StageReport {
            items_in,
            items_out,
            drops: drops.into_records(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_inputs_hand_each_table_over_once() {
        let splits = vec![noisebench_core::QuestionSplit {
            question_id: "q1".into(),
            split: "test".into(),
            ..Default::default()
        }];
        let source = StageInputs {
            tables: std::sync::Mutex::new(
                [(
                    TableKind::QuestionSplits,
                    noisebench_core::TableRow::into_rows(splits.clone()),
                )]
                .into(),
            ),
        };
        let source: &dyn TableSource = &source;
        assert_eq!(
            source.read::<noisebench_core::QuestionSplit>().unwrap(),
            Some(splits)
        );
        assert!(
            source.rows(TableKind::QuestionSplits).unwrap().is_none(),
            "handed over, not copied"
        );
        assert!(source.rows(TableKind::Questions).unwrap().is_none());
    }
}
