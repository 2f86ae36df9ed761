//! The [`Stage`] trait: typed rows in, typed rows out, plus counted drops.
//!
//! Stage crates implement [`TypedStage`] (a serde `Config` plus `run`); the blanket impl turns it
//! into the object-safe [`Stage`] the runner holds. Configuration is parsed before any work, with
//! unknown fields refused and errors naming the field path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;

pub use crate::model::DropRecord;
use crate::rows::{Rows, TableKind, TableRow};

/// An input a stage expects: a role name (the key in the pipeline file's `inputs`) and its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSpec {
    pub role: &'static str,
    pub kind: TableKind,
    pub required: bool,
}

impl InputSpec {
    /// An input the stage cannot run without.
    pub const fn required(role: &'static str, kind: TableKind) -> Self {
        Self {
            role,
            kind,
            required: true,
        }
    }

    /// An input the stage uses when the pipeline gives it.
    pub const fn optional(role: &'static str, kind: TableKind) -> Self {
        Self {
            role,
            kind,
            required: false,
        }
    }
}

/// A table a stage writes. The first output is the stage's main table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    pub name: &'static str,
    pub kind: TableKind,
}

impl OutputSpec {
    pub const fn new(name: &'static str, kind: TableKind) -> Self {
        Self { name, kind }
    }
}

/// A configuration error, naming the field path (`sources[1].preset`) or the stage.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Why a stage failed as a whole (item-level problems are drops, not errors).
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("input `{role}`: {message}")]
    Input { role: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
}

/// The tables given to a stage, by role.
#[derive(Debug, Default)]
pub struct Inputs {
    tables: BTreeMap<String, Rows>,
}

impl Inputs {
    pub fn new(tables: BTreeMap<String, Rows>) -> Self {
        Self { tables }
    }

    /// Take the rows of `role`, typed. Errors if the role is missing or holds another table.
    pub fn take<T: TableRow>(&mut self, role: &str) -> Result<Vec<T>, StageError> {
        let rows = self.tables.remove(role).ok_or_else(|| StageError::Input {
            role: role.into(),
            message: "not given".into(),
        })?;
        T::from_rows(rows).map_err(|other| StageError::Input {
            role: role.into(),
            message: format!("expected table {}, got {}", T::KIND, other.kind()),
        })
    }

    /// Like [`Inputs::take`] for an optional input: `None` when not given.
    pub fn take_optional<T: TableRow>(&mut self, role: &str) -> Result<Option<Vec<T>>, StageError> {
        if self.tables.contains_key(role) {
            self.take(role).map(Some)
        } else {
            Ok(None)
        }
    }

    pub fn total_rows(&self) -> usize {
        self.tables.values().map(Rows::len).sum()
    }
}

/// A progress bar handed out by [`Progress`].
pub trait ProgressBar: Send + Sync {
    fn inc(&self, n: u64);
    fn finish(&self);
}

/// Where stages report progress on long loops (the CLI draws bars; tests draw nothing).
pub trait Progress: Send + Sync {
    fn bar(&self, label: &str, total: Option<u64>) -> Box<dyn ProgressBar>;
}

/// A [`Progress`] that draws nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn bar(&self, _label: &str, _total: Option<u64>) -> Box<dyn ProgressBar> {
        struct Nothing;
        impl ProgressBar for Nothing {
            fn inc(&self, _n: u64) {}
            fn finish(&self) {}
        }
        Box::new(Nothing)
    }
}

/// What a stage may know about the run it is part of.
#[derive(Clone)]
pub struct StageContext {
    /// The directory relative paths in configuration resolve against (the repository root).
    pub root: PathBuf,
    /// `work/<pipeline>/<stage>/`: the stage may keep private state here (indexes, caches).
    pub stage_dir: PathBuf,
    pub pipeline: String,
    /// The stage's id in the pipeline (drop records carry it).
    pub stage_id: String,
    pub progress: Arc<dyn Progress>,
}

impl StageContext {
    /// Resolve a configured path against the root.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        }
    }
}

/// Items in, out and dropped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageReport {
    pub items_in: u64,
    pub items_out: u64,
    pub drops: Vec<DropRecord>,
}

impl StageReport {
    /// Records whose failure is transient ([`is_transient_reason`]): what the next run retries.
    pub fn transient_drops(&self) -> usize {
        self.drops.iter().filter(|d| d.retry).count()
    }

    /// Items dropped: records with `dropped` set (failures of kept items are not counted).
    pub fn items_dropped(&self) -> u64 {
        self.drops.iter().filter(|d| d.dropped).count() as u64
    }

    /// Drop records per reason code, ordered (failures of kept items included: see
    /// [`StageReport::failure_reasons`]).
    pub fn drop_reasons(&self) -> BTreeMap<String, i64> {
        let mut counts = BTreeMap::new();
        for d in &self.drops {
            *counts.entry(d.reason.clone()).or_insert(0) += 1;
        }
        counts
    }

    /// Failures that did not cost their item (`dropped` false) per reason code: a summary shows
    /// them apart from the items dropped.
    pub fn failure_reasons(&self) -> BTreeMap<String, i64> {
        let mut counts = BTreeMap::new();
        for d in self.drops.iter().filter(|d| !d.dropped) {
            *counts.entry(d.reason.clone()).or_insert(0) += 1;
        }
        counts
    }
}

/// Failure codes a later run may well not meet: the network, a rate limit, a server error, a
/// timeout, a spent budget, a cache-only run's miss. A stage may prefix them with its layer
/// (`llm_retries_exhausted`, `llm_budget_exhausted`, `search_http_503`).
const TRANSIENT_CODES: &[&str] = &[
    "retries_exhausted",
    "budget_exhausted",
    "cache_miss",
    "not_archived",
    "timeout",
    "connect_failed",
    "dns_failed",
    "request_failed",
    "robots_unavailable",
    "http_408",
    "http_429",
];

/// Whether a drop reason names a transient failure: the item is not done, and the next run
/// retries it (a stage with such drops is recorded as partial and reruns; `build-snapshot` does
/// not publish while any are left unless told to). Every other reason is a permanent, counted
/// drop: bad input, a 4xx other than 408/429, output still unusable after re-asks.
pub fn is_transient_reason(reason: &str) -> bool {
    let ends_with_code = |code: &str| {
        reason == code
            || reason
                .strip_suffix(code)
                .is_some_and(|prefix| prefix.ends_with('_'))
    };
    if TRANSIENT_CODES.iter().any(|c| ends_with_code(c)) {
        return true;
    }
    // `http_5xx`, possibly prefixed.
    let last = reason.rsplit('_').next().unwrap_or("");
    let before = reason[..reason.len() - last.len()].trim_end_matches('_');
    (before == "http" || before.ends_with("_http"))
        && last.len() == 3
        && last.starts_with('5')
        && last.chars().all(|c| c.is_ascii_digit())
}

/// Collects drops for a stage so that every dropped item carries stage, item, reason and detail.
#[derive(Debug, Default)]
pub struct Drops {
    stage: String,
    records: Vec<DropRecord>,
}

impl Drops {
    pub fn new(stage: &str) -> Self {
        Self {
            stage: stage.into(),
            records: Vec::new(),
        }
    }

    /// The item produced no output row.
    pub fn add(&mut self, item: impl Into<String>, reason: &str, detail: impl Into<String>) {
        self.push(item.into(), reason, detail.into(), true);
    }

    /// A failure on the way to an item the stage still outputs (one failed vote among several,
    /// a review-sheet row that could not be applied): recorded, not counted as a dropped item.
    pub fn add_failure(
        &mut self,
        item: impl Into<String>,
        reason: &str,
        detail: impl Into<String>,
    ) {
        self.push(item.into(), reason, detail.into(), false);
    }

    fn push(&mut self, item: String, reason: &str, detail: String, dropped: bool) {
        let id = crate::stable_id("drop", &[&self.stage, &item, reason]);
        self.records.push(DropRecord {
            id,
            stage: self.stage.clone(),
            item,
            reason: reason.into(),
            detail,
            dropped,
            retry: is_transient_reason(reason),
        });
    }

    /// Items dropped (not failures of kept items).
    pub fn dropped(&self) -> usize {
        self.records.iter().filter(|r| r.dropped).count()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn into_records(self) -> Vec<DropRecord> {
        self.records
    }
}

/// What a stage reports about its run beyond counts (a labelling run's label distribution, a
/// retrieval's recall): kept in its `stage.json`, put in the snapshot manifest's provenance as
/// `facts:<stage>` and rendered in the dataset card under `title`, one bullet per line. The stage
/// phrases its own facts; the card renders every stage's the same way.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StageFacts {
    /// The card's heading for these facts.
    pub title: String,
    /// The facts as sentences, for the card.
    pub lines: Vec<String>,
    /// The facts as data, for the manifest and for programs.
    pub data: serde_json::Value,
}

impl StageFacts {
    pub fn new(title: impl Into<String>, lines: Vec<String>, data: &impl serde::Serialize) -> Self {
        Self {
            title: title.into(),
            lines,
            data: serde_json::to_value(data).unwrap_or(serde_json::Value::Null),
        }
    }
}

/// A file (not a table) a stage writes into its stage directory: an export, a review sheet, a
/// graph in GraphML. Declared by the stage for a configuration, so the runner removes it before a
/// rerun, checks it was written, and hashes it into the stage record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideFile {
    /// The file name inside the stage directory.
    pub name: String,
    /// Publish it inside snapshots as `exports/<format>/<name>` (the papers' release formats).
    pub export: Option<&'static str>,
}

impl SideFile {
    /// A file kept beside the stage's tables.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            export: None,
        }
    }

    /// A file published in snapshots under `exports/<format>/`.
    pub fn export(name: impl Into<String>, format: &'static str) -> Self {
        Self {
            name: name.into(),
            export: Some(format),
        }
    }
}

/// A stage's result: output tables by name, its report and, optionally, its facts.
#[derive(Debug, Default)]
pub struct StageOutput {
    pub tables: BTreeMap<String, Rows>,
    pub report: StageReport,
    pub facts: Option<StageFacts>,
}

impl StageOutput {
    /// An output with this report and, so far, no tables.
    pub fn new(report: StageReport) -> Self {
        Self {
            report,
            ..Self::default()
        }
    }

    /// Add the stage's facts (see [`StageFacts`]).
    pub fn with_facts(mut self, facts: StageFacts) -> Self {
        self.facts = Some(facts);
        self
    }

    pub fn with_table<T: TableRow>(mut self, name: &str, rows: Vec<T>) -> Self {
        self.tables.insert(name.into(), T::into_rows(rows));
        self
    }
}

/// How a per-item stage splits into shards: the input tables whose rows are dealt out, each by
/// the column holding the item key. A row goes to shard `i` of `n` when the key's hash is `i`
/// modulo `n` ([`Shard::owns`]), so all rows of one item (a report's chunks, a document's
/// claim links) land in the same shard. Inputs not listed are given whole to every shard.
#[derive(Debug, Clone, Copy)]
pub struct ShardKey {
    /// The input role.
    pub role: &'static str,
    /// The column of that input whose value is the item key (a string column).
    pub column: &'static str,
    /// Maps the column's value to the item key when they differ (two URLs of one page).
    pub map: Option<fn(&str) -> String>,
}

impl ShardKey {
    pub const fn new(role: &'static str, column: &'static str) -> Self {
        Self {
            role,
            column,
            map: None,
        }
    }

    /// The item key is `map` of the column's value: rows whose values map alike are one item.
    pub const fn mapped(role: &'static str, column: &'static str, map: fn(&str) -> String) -> Self {
        Self {
            role,
            column,
            map: Some(map),
        }
    }

    /// The item key of a row whose `column` holds `value`.
    pub fn key(&self, value: &str) -> String {
        match self.map {
            Some(map) => map(value),
            None => value.to_string(),
        }
    }
}

/// Shard `index` of `count` (`--shard 2/8`: index 2, count 8; indices from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parse `i/n` with `0 <= i < n`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}`: a shard is written i/n, e.g. 0/4"))?;
        let index: u32 = i
            .trim()
            .parse()
            .map_err(|_| format!("`{text}`: `{i}` is not a shard index"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("`{text}`: `{n}` is not a shard count"))?;
        if count == 0 || index >= count {
            return Err(format!(
                "`{text}`: the index must be below the count (0/{count} to {}/{count})",
                count.saturating_sub(1)
            ));
        }
        Ok(Shard { index, count })
    }

    /// The shard an item key belongs to: the first 8 bytes of its sha256, modulo the count
    /// (stable across machines, platforms and releases).
    pub fn of_key(key: &str, count: u32) -> u32 {
        let digest = <sha2::Sha256 as sha2::Digest>::digest(key.as_bytes());
        let mut head = [0u8; 8];
        head.copy_from_slice(&digest[..8]);
        (u64::from_be_bytes(head) % u64::from(count.max(1))) as u32
    }

    pub fn owns(&self, key: &str) -> bool {
        Self::of_key(key, self.count) == self.index
    }

    /// The shard's folder name under its stage's `shards/`: `2-of-8`.
    pub fn dir_name(&self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

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
    /// See [`TypedStage::environment`].
    fn environment(&self) -> serde_json::Value;
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
    fn environment(&self) -> serde_json::Value {
        TypedStage::environment(self)
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
    fn transient_reasons_are_recognised_with_or_without_a_layer_prefix() {
        for reason in [
            "retries_exhausted",
            "llm_retries_exhausted",
            "credibility_budget_exhausted",
            "timeout",
            "http_429",
            "http_503",
            "search_http_500",
            "connect_failed",
            "cache_miss",
        ] {
            assert!(is_transient_reason(reason), "{reason}");
        }
        for reason in [
            "http_404",
            "http_403",
            "llm_http_error",
            "unparseable_output",
            "llm_unparseable_output",
            "bad_url",
            "robots_disallowed",
            "http_5000",
            "nottimeout",
            "http_50x",
            "",
        ] {
            assert!(!is_transient_reason(reason), "{reason}");
        }
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
