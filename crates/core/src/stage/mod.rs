//! The [`Stage`] trait: typed rows in, typed rows out, plus counted drops.
//!
//! Stage crates implement [`TypedStage`] (a serde `Config` plus `run`); the blanket impl turns it
//! into the object-safe [`Stage`] the runner holds. Configuration is parsed before any work, with
//! unknown fields refused and errors naming the field path.

mod context;
mod drop_reason;
mod error;
mod io;
mod progress;
mod report;
mod shard;

pub use context::StageContext;
pub use drop_reason::{DropCode, DropReason};
pub use error::{ConfigError, StageError};
pub use io::{InputSpec, Inputs, OutputSpec, SideFile, StageOutput};
pub use progress::{NoProgress, Progress, ProgressBar};
pub use report::{Drops, StageFacts, StageReport};
pub use shard::{Shard, ShardKey};

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

pub use crate::model::DropRecord;

/// A stage with a typed configuration. Implement this; the runner sees it as a [`Stage`].
pub trait TypedStage: Send + Sync {
    /// The stage's configuration, `#[serde(deny_unknown_fields)]`. Its JSON Schema (doc comments
    /// as descriptions) is the stage's entry in the generated configuration reference.
    type Config: DeserializeOwned + schemars::JsonSchema;
    /// The stage kind as written in pipeline files (`claims-import`).
    const KIND: &'static str;
    /// Bump when the stage's output for the same input changes; it is part of the fingerprint.
    const VERSION: u32;
    /// Whether every item read becomes one output row or one drop (`items_in = items_out +
    /// dropped`). The runner checks it for such stages and fails the stage if an item is
    /// unaccounted for: a silent drop is a bug, not a result.
    const ONE_TO_ONE: bool = false;

    fn inputs(&self) -> Vec<InputSpec>;
    fn outputs(&self) -> Vec<OutputSpec>;

    /// Checks beyond the types (files exist, values in range). Runs before any stage works.
    fn validate(&self, _config: &Self::Config, _root: &Path) -> Result<(), ConfigError> {
        Ok(())
    }

    /// Files (not tables) the stage writes into its stage directory for this configuration.
    fn files(&self, _config: &Self::Config) -> Vec<SideFile> {
        Vec::new()
    }

    /// The environment variables this configuration reads secrets from, as `(field, variable)`
    /// (`("backends[0].api_key_env", "GOOGLE_API_KEY")`). The caller checks them all before any
    /// stage runs and names every one that is unset at once; `validate` leaves them alone.
    fn secret_variables(&self, _config: &Self::Config) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Files outside the run directory that the stage reads; their content is fingerprinted.
    fn external_files(&self, _config: &Self::Config, _root: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// What outside the stage's configuration decides its output (the LLM backend, models and
    /// prompt versions; the web layer's mode). It is part of the fingerprint, so changing the
    /// model reruns the stages that use it. Never holds a key.
    fn environment(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// The environment that decides this configuration's output, where it depends on the
    /// configuration (a search stage's embedder matters only to a backend that embeds); by
    /// default [`TypedStage::environment`]. This is what the fingerprint holds.
    fn environment_of(&self, _config: &Self::Config) -> serde_json::Value {
        self.environment()
    }

    /// The names of the model tasks the stage may ask, declared once in its adapter
    /// (`noisebench_llm::StageTasks::names`): the registry of stages is thereby the one list of
    /// every task (the preflight, the fuzz targets and the configuration reference read it).
    /// Empty (the default): the stage asks no model.
    fn tasks(&self) -> Vec<&'static str> {
        Vec::new()
    }

    /// Whether the stage reads sources that change without any input changing (live web pages,
    /// search APIs). `refresh` reruns such stages even when their fingerprint is unchanged; what
    /// depends on them reruns only if their output changed.
    fn reads_live_sources(&self, _config: &Self::Config) -> bool {
        false
    }

    /// How the stage's items split into shards (`run STAGE --shard i/n`); empty (the default):
    /// the stage needs its whole input and runs once.
    fn shard_keys(&self) -> Vec<ShardKey> {
        Vec::new()
    }

    /// Output tables whose rows gather several items (a claim's conflicts over all its
    /// documents): a shard's rows of them are partial, and only the merge, which sees every item,
    /// makes them whole. The other outputs are per item, and the merge checks each part's rows
    /// against its own.
    fn gathered_outputs(&self) -> Vec<&'static str> {
        Vec::new()
    }

    fn run(
        &self,
        config: &Self::Config,
        inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError>;
}

/// The object-safe face of a stage, as the runner holds it.
pub trait Stage: Send + Sync {
    fn kind(&self) -> &'static str;
    fn version(&self) -> u32;
    /// See [`TypedStage::ONE_TO_ONE`].
    fn one_to_one(&self) -> bool;
    fn inputs(&self) -> Vec<InputSpec>;
    fn outputs(&self) -> Vec<OutputSpec>;
    /// Parse and validate the configuration; errors name the field path.
    fn check(&self, config: &serde_json::Value, root: &Path) -> Result<(), ConfigError>;
    /// The JSON Schema of the configuration, generated from [`TypedStage::Config`] (field doc
    /// comments become descriptions): what `noisebench schemas` writes to `schemas/config/`.
    fn config_schema(&self) -> serde_json::Value;
    fn external_files(
        &self,
        config: &serde_json::Value,
        root: &Path,
    ) -> Result<Vec<PathBuf>, ConfigError>;
    /// See [`TypedStage::files`]; empty when the configuration does not parse.
    fn files(&self, config: &serde_json::Value) -> Vec<SideFile>;
    /// See [`TypedStage::secret_variables`]; empty when the configuration does not parse.
    fn secret_variables(&self, _config: &serde_json::Value) -> Vec<(String, String)> {
        Vec::new()
    }
    /// See [`TypedStage::environment`].
    fn environment(&self) -> serde_json::Value;
    /// See [`TypedStage::environment_of`]; [`Stage::environment`] when the configuration does
    /// not parse, and for a stage whose environment never depends on it.
    fn environment_of(&self, _config: &serde_json::Value) -> serde_json::Value {
        self.environment()
    }
    /// See [`TypedStage::tasks`].
    fn tasks(&self) -> Vec<&'static str>;
    /// See [`TypedStage::reads_live_sources`]; `false` when the configuration does not parse.
    fn reads_live_sources(&self, config: &serde_json::Value) -> bool;
    /// See [`TypedStage::shard_keys`].
    fn shard_keys(&self) -> Vec<ShardKey>;
    /// See [`TypedStage::gathered_outputs`].
    fn gathered_outputs(&self) -> Vec<&'static str>;
    fn run(
        &self,
        config: &serde_json::Value,
        inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError>;
}

/// Where the runner collects the LLM calls a stage made and learns whether the run must stop
/// (the LLM layer implements it; the runner writes the calls to `llm_calls.parquet`).
pub trait CallLog: Send + Sync {
    /// Take the calls recorded since the last drain.
    fn drain_calls(&self) -> Vec<crate::model::LlmCall>;
    /// `Some(reason)` when no new calls may be made (a spending limit reached): the stage that
    /// just ran is not recorded as complete, so the next run resumes it.
    fn halted(&self) -> Option<String>;
    /// Tasks of `stage` whose categorical answers (a stance, a verdict) never changed over the
    /// stage's run, one line each: held against the stage's gate (`constant_answers`).
    fn constant_answers(&self, _stage: &str) -> Vec<String> {
        Vec::new()
    }
}

/// Parse a configuration value into `C`, naming the failing field path.
pub fn parse_config<C: DeserializeOwned>(config: &serde_json::Value) -> Result<C, ConfigError> {
    serde_path_to_error::deserialize(config).map_err(|e| {
        let path = e.path().to_string();
        ConfigError::new(
            if path == "." {
                "config".to_string()
            } else {
                path
            },
            e.inner().to_string(),
        )
    })
}

impl<T: TypedStage> Stage for T {
    fn kind(&self) -> &'static str {
        T::KIND
    }
    fn version(&self) -> u32 {
        T::VERSION
    }
    fn one_to_one(&self) -> bool {
        T::ONE_TO_ONE
    }
    fn inputs(&self) -> Vec<InputSpec> {
        TypedStage::inputs(self)
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        TypedStage::outputs(self)
    }
    fn check(&self, config: &serde_json::Value, root: &Path) -> Result<(), ConfigError> {
        let parsed: T::Config = parse_config(config)?;
        self.validate(&parsed, root)
    }
    fn config_schema(&self) -> serde_json::Value {
        schemars::schema_for!(T::Config).to_value()
    }
    fn external_files(
        &self,
        config: &serde_json::Value,
        root: &Path,
    ) -> Result<Vec<PathBuf>, ConfigError> {
        let parsed: T::Config = parse_config(config)?;
        Ok(TypedStage::external_files(self, &parsed, root))
    }
    fn files(&self, config: &serde_json::Value) -> Vec<SideFile> {
        parse_config::<T::Config>(config)
            .map(|c| TypedStage::files(self, &c))
            .unwrap_or_default()
    }
    fn secret_variables(&self, config: &serde_json::Value) -> Vec<(String, String)> {
        parse_config::<T::Config>(config)
            .map(|c| TypedStage::secret_variables(self, &c))
            .unwrap_or_default()
    }
    fn environment(&self) -> serde_json::Value {
        TypedStage::environment(self)
    }
    fn environment_of(&self, config: &serde_json::Value) -> serde_json::Value {
        match parse_config::<T::Config>(config) {
            Ok(c) => TypedStage::environment_of(self, &c),
            Err(_) => TypedStage::environment(self),
        }
    }
    fn tasks(&self) -> Vec<&'static str> {
        TypedStage::tasks(self)
    }
    fn reads_live_sources(&self, config: &serde_json::Value) -> bool {
        parse_config::<T::Config>(config).is_ok_and(|c| TypedStage::reads_live_sources(self, &c))
    }
    fn shard_keys(&self) -> Vec<ShardKey> {
        TypedStage::shard_keys(self)
    }
    fn gathered_outputs(&self) -> Vec<&'static str> {
        TypedStage::gathered_outputs(self)
    }
    fn run(
        &self,
        config: &serde_json::Value,
        inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let parsed: T::Config = parse_config(config)?;
        TypedStage::run(self, &parsed, inputs, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Record, TableKind};
    use serde::Deserialize;

    #[test]
    fn shards_parse_and_every_key_has_exactly_one_shard() {
        assert_eq!(Shard::parse("2/8"), Ok(Shard { index: 2, count: 8 }));
        assert_eq!(Shard::parse("0/1").unwrap().dir_name(), "0-of-1");
        for bad in ["8/8", "1/0", "a/2", "2", "-1/2", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        // Stable across machines and releases: a shard's part must mean the same items
        // wherever it runs.
        assert_eq!(Shard::of_key("claim_0001", 1000), 973);
        let mut per_shard = [0usize; 4];
        for i in 0..4000 {
            let key = format!("item-{i}");
            let owners: Vec<u32> = (0..4)
                .filter(|&index| Shard { index, count: 4 }.owns(&key))
                .collect();
            assert_eq!(owners.len(), 1, "{key}");
            per_shard[owners[0] as usize] += 1;
        }
        // Roughly even: each within 10% of a quarter.
        assert!(
            per_shard.iter().all(|&n| (900..=1100).contains(&n)),
            "{per_shard:?}"
        );
    }

    #[test]
    fn config_errors_name_the_field_path() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Source {
            path: String,
        }
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Config {
            sources: Vec<Source>,
        }
        let value = serde_json::json!({"sources": [{"path": "a"}, {"pth": "b"}]});
        let err = parse_config::<Config>(&value).unwrap_err();
        assert_eq!(err.field, "sources[1].pth");
        assert!(
            err.message.contains("unknown field `pth`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn every_schema_matches_its_serde_fields() {
        for kind in TableKind::ALL {
            let schema = kind.schema();
            assert_eq!(schema.table, kind.name());
            let empty = crate::Rows::empty(*kind);
            assert!(empty.is_empty());
        }
        // Column names must be exactly the serialised field names, in order.
        fn fields<T: Record + Default>() -> Vec<String> {
            let v = serde_json::to_value(T::default()).unwrap();
            v.as_object().unwrap().keys().cloned().collect()
        }
        fn cols<T: Record>() -> Vec<String> {
            T::schema().columns.into_iter().map(|c| c.name).collect()
        }
        macro_rules! check {
            ($($t:ty),*) => {$(assert_eq!(fields::<$t>(), cols::<$t>(), stringify!($t));)*};
        }
        use crate::model::*;
        check!(
            Claim,
            Query,
            SearchHit,
            Document,
            ClaimDocument,
            Passage,
            ClaimDocumentLabel,
            Conflict,
            DocumentCredibility,
            Report,
            Chunk,
            Triplet,
            Question,
            QueryPerturbation,
            DocumentPerturbation,
            DropRecord,
            StageSummary,
            LlmCall
        );
        assert_eq!(Claim::schema().columns[0].name, "id");
    }
}
