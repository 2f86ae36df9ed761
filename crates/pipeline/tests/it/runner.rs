//! The runner: fingerprints and skips, reruns on config or input changes, config errors before any
//! work, atomic outputs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use noisebench_core::{
    Claim, ConfigError, DropReason, DropRecord, Drops, InputSpec, Inputs, OutputSpec, StageContext,
    StageError, StageOutput, TableKind, TypedStage,
};
use noisebench_pipeline::{PipelineFile, Plan, PlanError, Registry, RunOptions, Runner, table_io};
use serde::Deserialize;

/// Makes `count` claims; every fifth is dropped. Reads an optional file whose content becomes the
/// claims' source.
struct Seed(Arc<AtomicUsize>);

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct SeedConfig {
    count: u32,
    #[serde(default)]
    file: Option<PathBuf>,
}

impl TypedStage for Seed {
    type Config = SeedConfig;
    const KIND: &'static str = "seed";
    const VERSION: u32 = 1;
    fn inputs(&self) -> Vec<InputSpec> {
        vec![]
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("claims", TableKind::Claims)]
    }
    fn validate(&self, config: &SeedConfig, _root: &Path) -> Result<(), ConfigError> {
        if config.count == 0 {
            return Err(ConfigError::new("count", "must be at least 1"));
        }
        Ok(())
    }
    fn external_files(&self, config: &SeedConfig, root: &Path) -> Vec<PathBuf> {
        config.file.iter().map(|f| root.join(f)).collect()
    }
    fn run(
        &self,
        config: &SeedConfig,
        _inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let source = match &config.file {
            Some(f) => std::fs::read_to_string(ctx.resolve(f))
                .map_err(|e| StageError::Other(e.to_string()))?,
            None => "seed".into(),
        };
        let mut drops = Drops::new(&ctx.stage_id);
        let mut claims = Vec::new();
        for i in 0..config.count {
            if i % 5 == 4 {
                drops.add(format!("item {i}"), "fifth", "every fifth item is dropped");
                continue;
            }
            claims.push(Claim {
                id: format!("c{i:04}"),
                text: format!("claim {i}"),
                verdict: if i % 2 == 0 { "true" } else { "false" }.into(),
                original_rating: "true".into(),
                source: source.trim().into(),
                topics: vec![format!("t{}", i % 3)],
                ..Claim::default()
            });
        }
        let mut out = StageOutput::default().with_table("claims", claims);
        out.report.items_in = config.count as u64;
        out.report.items_out = out.tables["claims"].len() as u64;
        out.report.drops = drops.into_records();
        Ok(out)
    }
}

/// Keeps claims of one verdict.
struct Filter(Arc<AtomicUsize>);

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct FilterConfig {
    verdict: String,
}

impl TypedStage for Filter {
    type Config = FilterConfig;
    const KIND: &'static str = "filter";
    const VERSION: u32 = 1;
    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::required("claims", TableKind::Claims)]
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("kept", TableKind::Claims)]
    }
    fn run(
        &self,
        config: &FilterConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let claims: Vec<Claim> = inputs.take("claims")?;
        let n = claims.len() as u64;
        let mut drops = Drops::new(&ctx.stage_id);
        let kept: Vec<Claim> = claims
            .into_iter()
            .filter(|c| {
                let keep = c.verdict == config.verdict;
                if !keep {
                    drops.add(c.id.clone(), "other_verdict", c.verdict.clone());
                }
                keep
            })
            .collect();
        let mut out = StageOutput::default().with_table("kept", kept);
        out.report.items_in = n;
        out.report.items_out = out.tables["kept"].len() as u64;
        out.report.drops = drops.into_records();
        Ok(out)
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    seed_runs: Arc<AtomicUsize>,
    filter_runs: Arc<AtomicUsize>,
    registry: Registry,
}

impl Fixture {
    fn new() -> Self {
        let seed_runs = Arc::new(AtomicUsize::new(0));
        let filter_runs = Arc::new(AtomicUsize::new(0));
        let mut registry = Registry::new();
        registry.register(Arc::new(Seed(seed_runs.clone())));
        registry.register(Arc::new(Filter(filter_runs.clone())));
        Self {
            dir: tempfile::tempdir().unwrap(),
            seed_runs,
            filter_runs,
            registry,
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn plan(&self, toml: &str) -> Result<Plan, PlanError> {
        let file = PipelineFile::parse(toml, "test.toml")?;
        Plan::new(file, self.root(), &self.registry)
    }

    fn run(&self, toml: &str) -> noisebench_pipeline::RunResult {
        let plan = self.plan(toml).unwrap();
        Runner::new(&plan, RunOptions::new(self.root().join("work")))
            .run()
            .unwrap()
    }

    fn runs(&self) -> (usize, usize) {
        (
            self.seed_runs.load(Ordering::SeqCst),
            self.filter_runs.load(Ordering::SeqCst),
        )
    }
}

fn pipeline(count: u32, verdict: &str, file: Option<&str>) -> String {
    let file = file
        .map(|f| format!("file = \"{f}\"\n"))
        .unwrap_or_default();
    format!(
        r#"
[pipeline]
name = "t"

[stages.kept]
kind = "filter"
inputs = {{ claims = "seed" }}
config = {{ verdict = "{verdict}" }}

[stages.seed]
kind = "seed"
[stages.seed.config]
count = {count}
{file}
"#
    )
}

#[test]
fn unchanged_stages_are_skipped_and_changes_rerun_downstream() {
    let f = Fixture::new();
    let first = f.run(&pipeline(20, "true", None));
    assert_eq!(f.runs(), (1, 1));
    // Ordered by dependency although the file lists `kept` first.
    assert_eq!(
        first
            .summary
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>(),
        ["seed", "kept"]
    );
    assert_eq!(
        (
            first.summary[0].items_in,
            first.summary[0].items_out,
            first.summary[0].items_dropped
        ),
        (20, 16, 4)
    );
    assert_eq!(first.summary[0].drop_reasons.get("fifth"), Some(&4));
    assert_eq!(
        (first.summary[1].items_in, first.summary[1].items_out),
        (16, 8)
    );

    let second = f.run(&pipeline(20, "true", None));
    assert_eq!(f.runs(), (1, 1), "nothing changed: nothing runs");
    assert!(second.summary.iter().all(|s| s.status == "skipped"));
    assert_eq!(
        second.summary[0].items_dropped, 4,
        "a skipped stage still reports its counts"
    );

    f.run(&pipeline(20, "false", None));
    assert_eq!(f.runs(), (1, 2), "only the changed stage reruns");

    f.run(&pipeline(25, "false", None));
    assert_eq!(
        f.runs(),
        (2, 3),
        "a changed upstream table reruns the downstream stage"
    );

    // A seed run producing the same table leaves the downstream stage's input hash unchanged.
    let mut options = RunOptions::new(f.root().join("work"));
    options.force = true;
    options.only = Some("seed".into());
    Runner::new(&f.plan(&pipeline(25, "false", None)).unwrap(), options)
        .run()
        .unwrap();
    assert_eq!(f.runs(), (3, 3));
    f.run(&pipeline(25, "false", None));
    assert_eq!(
        f.runs(),
        (3, 3),
        "same bytes upstream: downstream stays skipped"
    );
    // `run kept --force` reruns `kept` alone: `seed`, which it needs, is up to date.
    let mut downstream = RunOptions::new(f.root().join("work"));
    downstream.force = true;
    downstream.only = Some("kept".into());
    Runner::new(&f.plan(&pipeline(25, "false", None)).unwrap(), downstream)
        .run()
        .unwrap();
    assert_eq!(
        f.runs(),
        (3, 4),
        "the named stage reruns, its upstream does not"
    );

    // The run summary table is written.
    let summary = table_io::read_table(
        &f.root().join("work/t/run_summary.parquet"),
        TableKind::RunSummary,
    )
    .unwrap();
    assert_eq!(summary.len(), 2);
}

#[test]
fn external_input_files_are_fingerprinted() {
    let f = Fixture::new();
    std::fs::write(f.root().join("input.txt"), "one").unwrap();
    f.run(&pipeline(5, "true", Some("input.txt")));
    f.run(&pipeline(5, "true", Some("input.txt")));
    assert_eq!(f.runs(), (1, 1));
    std::fs::write(f.root().join("input.txt"), "two").unwrap();
    f.run(&pipeline(5, "true", Some("input.txt")));
    assert_eq!(f.runs(), (2, 2));
}

#[test]
fn tampered_outputs_are_rebuilt() {
    let f = Fixture::new();
    f.run(&pipeline(10, "true", None));
    std::fs::write(f.root().join("work/t/seed/claims.parquet"), b"garbage").unwrap();
    f.run(&pipeline(10, "true", None));
    assert_eq!(f.seed_runs.load(Ordering::SeqCst), 2);
    let rows = table_io::read_table(
        &f.root().join("work/t/seed/claims.parquet"),
        TableKind::Claims,
    )
    .unwrap();
    assert_eq!(rows.len(), 8);
}

#[test]
fn outputs_are_deterministic_and_written_atomically() {
    let a = Fixture::new();
    let b = Fixture::new();
    let ra = a.run(&pipeline(50, "true", None));
    let rb = b.run(&pipeline(50, "true", None));
    assert_eq!(
        ra.records["seed"].tables["claims"].sha256,
        rb.records["seed"].tables["claims"].sha256
    );
    assert_eq!(
        ra.records["kept"].tables["kept"].sha256,
        rb.records["kept"].tables["kept"].sha256
    );
    // No temporary files remain beside the outputs.
    for entry in std::fs::read_dir(a.root().join("work/t/seed")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "{name}");
    }
}

fn plan_error(toml: &str) -> String {
    let f = Fixture::new();
    let err = match f.plan(toml) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected an error"),
    };
    assert_eq!(f.runs(), (0, 0), "no stage ran");
    assert!(!f.root().join("work").exists(), "nothing was written");
    err
}

#[test]
fn config_errors_stop_before_any_work_and_name_the_field() {
    let unknown_stage_field =
        plan_error(&pipeline(5, "true", None).replace("count = 5", "count = 5\ncuont = 6"));
    assert!(
        unknown_stage_field.contains("stage `seed`") && unknown_stage_field.contains("cuont"),
        "{unknown_stage_field}"
    );
    let unknown_file_field = plan_error(
        &pipeline(5, "true", None).replace("kind = \"seed\"", "kind = \"seed\"\nknd = 1"),
    );
    assert!(unknown_file_field.contains("knd"), "{unknown_file_field}");
    let validation = plan_error(&pipeline(0, "true", None));
    assert!(
        validation.contains("stage `seed`, config field `count`"),
        "{validation}"
    );
    let unknown_kind =
        plan_error(&pipeline(5, "true", None).replace("kind = \"seed\"", "kind = \"sed\""));
    assert!(
        unknown_kind.contains("unknown kind `sed`"),
        "{unknown_kind}"
    );
}

#[test]
fn wiring_errors_name_the_stage_and_input() {
    let missing =
        plan_error(&pipeline(5, "true", None).replace("inputs = { claims = \"seed\" }", ""));
    assert!(
        missing.contains("stage `kept`: missing input `claims`"),
        "{missing}"
    );
    let dangling =
        plan_error(&pipeline(5, "true", None).replace("claims = \"seed\"", "claims = \"sead\""));
    assert!(dangling.contains("`sead` names no stage"), "{dangling}");
    let unknown_role = plan_error(
        &pipeline(5, "true", None)
            .replace("claims = \"seed\"", "claims = \"seed\", other = \"seed\""),
    );
    assert!(
        unknown_role.contains("unknown input `other`"),
        "{unknown_role}"
    );
    let wrong_table = plan_error(
        &pipeline(5, "true", None).replace("claims = \"seed\"", "claims = \"seed.nope\""),
    );
    assert!(wrong_table.contains("seed.nope"), "{wrong_table}");
}

#[test]
fn cycles_are_refused_naming_their_stages() {
    let toml = r#"
[pipeline]
name = "t"
[stages.a]
kind = "filter"
inputs = { claims = "b" }
config = { verdict = "true" }
[stages.b]
kind = "filter"
inputs = { claims = "a" }
config = { verdict = "true" }
[stages.c]
kind = "seed"
config = { count = 1 }
"#;
    let err = plan_error(toml);
    assert!(err.contains("cycle") && err.contains("a -> b"), "{err}");
}

#[test]
fn run_one_stage_runs_what_it_needs() {
    let f = Fixture::new();
    let plan = f.plan(&pipeline(10, "true", None)).unwrap();
    let mut options = RunOptions::new(f.root().join("work"));
    options.only = Some("seed".into());
    let result = Runner::new(&plan, options.clone()).run().unwrap();
    assert_eq!(result.summary.len(), 1);
    assert_eq!(f.runs(), (1, 0));
    options.only = Some("kept".into());
    let result = Runner::new(&plan, options).run().unwrap();
    assert_eq!(
        result
            .summary
            .iter()
            .map(|s| s.status.as_str())
            .collect::<Vec<_>>(),
        ["skipped", "ran"]
    );
}

/// A call log standing in for the LLM layer: every seed run "makes" one call per claim; with
/// `halt` set, the budget is reported spent after the run.
struct Calls {
    made: std::sync::Mutex<Vec<noisebench_core::LlmCall>>,
    halt: std::sync::atomic::AtomicBool,
}

impl noisebench_core::CallLog for Calls {
    fn drain_calls(&self) -> Vec<noisebench_core::LlmCall> {
        std::mem::take(&mut *self.made.lock().unwrap())
    }
    fn halted(&self) -> Option<String> {
        self.halt
            .load(Ordering::SeqCst)
            .then(|| "llm.max_cost reached".to_string())
    }
}

#[test]
fn call_logs_are_written_per_stage_and_a_halted_stage_resumes() {
    let f = Fixture::new();
    let calls = Arc::new(Calls {
        made: Default::default(),
        halt: Default::default(),
    });
    let plan = f.plan(&pipeline(10, "true", None)).unwrap();
    let work = f.root().join("work");
    // The stage "makes" calls by pushing to the log while it runs: emulate with a log filled
    // before the run (the runner drains before a stage, so these are discarded) and a check that
    // nothing leaks into the stage's file.
    calls.made.lock().unwrap().push(noisebench_core::LlmCall {
        id: "stale".into(),
        ..Default::default()
    });
    let mut options = RunOptions::new(&work);
    options.call_log = Some(calls.clone());
    let result = Runner::new(&plan, options.clone()).run().unwrap();
    assert_eq!(result.ran(), 2);
    // No stage made calls: no stage files, an empty run log.
    assert!(!work.join("t/seed/llm_calls.parquet").exists());
    let log = table_io::Table::open(&work.join("t/llm_calls.parquet")).unwrap();
    assert_eq!(log.rows(), 0);

    // The budget runs out during `seed` (forced to rerun): it is not recorded as done, the run
    // stops before `kept`, and the next run does it again.
    calls.halt.store(true, Ordering::SeqCst);
    let mut forced = options.clone();
    forced.force = true;
    let err = Runner::new(&plan, forced).run().unwrap_err().to_string();
    assert!(
        err.contains("stage `seed` stopped: llm.max_cost reached") && err.contains("resumes"),
        "{err}"
    );
    assert!(!work.join("t/seed/stage.json").exists());
    assert_eq!(f.runs(), (2, 1));
    calls.halt.store(false, Ordering::SeqCst);
    let resumed = Runner::new(&plan, options).run().unwrap();
    assert_eq!(resumed.ran(), 1, "only the halted stage runs again");
    assert_eq!(f.runs(), (3, 1));
}

/// Copies its input; while `flaky_runs` is above zero, each run counts down and every third
/// item fails with a transient cause (HTTP 503) and one with a permanent one. With `lose` it
/// forgets an item without a drop (a bug the runner must catch).
struct Flaky {
    flaky_runs: Arc<AtomicUsize>,
    runs: Arc<AtomicUsize>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct FlakyConfig {
    #[serde(default)]
    lose: bool,
    /// Write the last claim twice (a bug the runner must catch).
    #[serde(default)]
    duplicate: bool,
}

impl TypedStage for Flaky {
    type Config = FlakyConfig;
    const KIND: &'static str = "flaky";
    const VERSION: u32 = 1;
    const ONE_TO_ONE: bool = true;
    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::required("claims", TableKind::Claims)]
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("copied", TableKind::Claims)]
    }
    fn run(
        &self,
        config: &FlakyConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let failing = self
            .flaky_runs
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        let claims: Vec<Claim> = inputs.take("claims")?;
        let n = claims.len() as u64;
        let mut drops = Drops::new(&ctx.stage_id);
        let mut kept = Vec::new();
        for (i, c) in claims.into_iter().enumerate() {
            if i == 0 {
                drops.add(c.id.clone(), "http_404", "gone for good");
            } else if failing && i % 3 == 0 {
                drops.add(
                    c.id.clone(),
                    DropReason::transient("http_503"),
                    "the server was down",
                );
            } else if !(config.lose && i == 1) {
                kept.push(c);
            }
        }
        if config.duplicate
            && let Some(last) = kept.last().cloned()
        {
            kept.push(last);
            drops.add("extra", "not_really", "keeps the counts balanced");
        }
        let mut out = StageOutput::default().with_table("copied", kept);
        out.report.items_in = n;
        out.report.items_out = out.tables["copied"].len() as u64;
        out.report.drops = drops.into_records();
        Ok(out)
    }
}

fn flaky_fixture(flaky_runs: usize) -> (Fixture, Arc<AtomicUsize>) {
    let mut f = Fixture::new();
    let runs = Arc::new(AtomicUsize::new(0));
    f.registry.register(Arc::new(Flaky {
        flaky_runs: Arc::new(AtomicUsize::new(flaky_runs)),
        runs: runs.clone(),
    }));
    (f, runs)
}

fn flaky_pipeline(lose: bool) -> String {
    flaky_pipeline_with(&format!("lose = {lose}"))
}

fn flaky_pipeline_with(config: &str) -> String {
    format!(
        r#"
[pipeline]
name = "t"

[stages.seed]
kind = "seed"
config = {{ count = 10 }}

[stages.copy]
kind = "flaky"
inputs = {{ claims = "seed" }}
config = {{ {config} }}

[stages.kept]
kind = "filter"
inputs = {{ claims = "copy" }}
config = {{ verdict = "true" }}
# Keeping one verdict drops about half: this filter's job, not a loss.
[stages.kept.gate]
max_drop_share = 0.9
"#
    )
}

#[test]
fn transient_failures_leave_a_stage_partial_until_a_run_retries_them() {
    let (f, flaky_runs) = flaky_fixture(1);
    let first = f.run(&flaky_pipeline(false));
    let copy = &first.summary[1];
    assert_eq!(copy.status, "partial");
    // 8 seeded claims: one permanent drop, items 3 and 6 transient.
    assert_eq!(
        (copy.items_in, copy.items_out, copy.items_dropped),
        (8, 5, 3)
    );
    assert_eq!(first.records["copy"].retry_items, 2);
    let message = first.unfinished_message().expect("items are left to retry");
    assert!(
        message.contains("2 items failed for a transient cause")
            && message.contains("`copy`: 2 (http_503=2)")
            && message.contains("running again retries"),
        "{message}"
    );
    let drops: Vec<DropRecord> =
        table_io::read_rows(&f.root().join("work/t/copy/drops.parquet")).unwrap();
    let mut drops: Vec<(&str, bool, bool)> = drops
        .iter()
        .map(|d| (d.reason.as_str(), d.dropped, d.retry))
        .collect();
    drops.sort();
    assert_eq!(
        drops,
        [
            ("http_404", true, false),
            ("http_503", true, true),
            ("http_503", true, true)
        ]
    );

    // A plain rerun: the record does not vouch for the partial stage, so it reruns; the
    // permanent drop stays a drop; nothing is left to retry.
    let second = f.run(&flaky_pipeline(false));
    assert_eq!(flaky_runs.load(Ordering::SeqCst), 2);
    let copy = &second.summary[1];
    assert_eq!(
        (copy.status.as_str(), copy.items_out, copy.items_dropped),
        ("ran", 7, 1)
    );
    assert_eq!(
        second.summary[2].status, "ran",
        "its new output reruns downstream"
    );
    assert!(second.unfinished_message().is_none());
    let third = f.run(&flaky_pipeline(false));
    assert!(third.summary.iter().all(|s| s.status == "skipped"));
}

#[test]
fn an_item_neither_output_nor_dropped_fails_a_one_to_one_stage() {
    let (f, _) = flaky_fixture(0);
    let plan = f.plan(&flaky_pipeline(true)).unwrap();
    let err = Runner::new(&plan, RunOptions::new(f.root().join("work")))
        .run()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("stage `copy` read 8 items but accounted for 7 (6 out, 1 dropped)"),
        "{err}"
    );
    assert!(!f.root().join("work/t/copy/stage.json").exists());
}

#[test]
fn a_table_with_a_repeated_id_fails_its_stage_naming_the_id() {
    let (f, _) = flaky_fixture(0);
    let plan = f.plan(&flaky_pipeline_with("duplicate = true")).unwrap();
    let err = Runner::new(&plan, RunOptions::new(f.root().join("work")))
        .run()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("stage `copy` wrote 1 ids more than once in table `copied`")
            && err.contains("c0008"),
        "{err}"
    );
    assert!(!f.root().join("work/t/copy/stage.json").exists());
}

/// Writes `notes.txt` (declared) when `write`, and reports a fact.
struct Writer;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriterConfig {
    write: bool,
    text: String,
}

impl TypedStage for Writer {
    type Config = WriterConfig;
    const KIND: &'static str = "writer";
    const VERSION: u32 = 1;
    fn inputs(&self) -> Vec<InputSpec> {
        vec![]
    }
    fn outputs(&self) -> Vec<OutputSpec> {
        vec![]
    }
    fn files(&self, _config: &WriterConfig) -> Vec<noisebench_core::SideFile> {
        vec![noisebench_core::SideFile::export("notes.txt", "notes")]
    }
    fn run(
        &self,
        config: &WriterConfig,
        _inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        std::fs::create_dir_all(&ctx.stage_dir).unwrap();
        if config.write {
            std::fs::write(ctx.stage_dir.join("notes.txt"), &config.text).unwrap();
        }
        let facts = noisebench_core::StageFacts::new(
            "What the writer did",
            vec![format!("wrote {} bytes", config.text.len())],
            &serde_json::json!({"bytes": config.text.len()}),
        );
        Ok(StageOutput::default().with_facts(facts))
    }
}

fn writer_pipeline(write: bool, text: &str) -> String {
    format!(
        r#"
[pipeline]
name = "t"

[stages.notes]
kind = "writer"
config = {{ write = {write}, text = "{text}" }}
"#
    )
}

#[test]
fn declared_files_are_hashed_checked_and_never_outlive_their_run() {
    let mut f = Fixture::new();
    f.registry.register(Arc::new(Writer));
    let first = f.run(&writer_pipeline(true, "hello"));
    let record = &first.records["notes"];
    let file = &record.files["notes.txt"];
    assert_eq!((file.bytes, file.export.as_deref()), (5, Some("notes")));
    let facts = record.facts.as_ref().unwrap();
    assert_eq!(facts.lines, ["wrote 5 bytes"]);
    assert_eq!(facts.data["bytes"], 5);
    let on_disk = noisebench_pipeline::runner::read_record(&f.root().join("work/t/notes")).unwrap();
    assert_eq!(on_disk.facts, record.facts);

    // A tampered side file is an output like any other: the stage reruns.
    let path = f.root().join("work/t/notes/notes.txt");
    std::fs::write(&path, "edited").unwrap();
    let again = f.run(&writer_pipeline(true, "hello"));
    assert_eq!(again.summary[0].status, "ran");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello");

    // A rerun that fails to write it: the old file is gone and the stage fails, naming it.
    let plan = f.plan(&writer_pipeline(false, "bye")).unwrap();
    let err = Runner::new(&plan, RunOptions::new(f.root().join("work")))
        .run()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("stage `notes` declared the file `notes.txt` but did not write it"),
        "{err}"
    );
    assert!(!path.exists(), "a stale side file outlived its run");
}

/// A filter keeping a verdict no claim has: it drops all 8 claims the seed wrote.
fn losing_pipeline(gates: &str) -> String {
    format!("{}\n{gates}\n", pipeline(10, "none", None))
}

#[test]
fn a_stage_that_loses_its_items_stops_the_run_unless_degraded_is_allowed() {
    let f = Fixture::new();
    let plan = f.plan(&losing_pipeline("")).unwrap();
    let run = |plan: &Plan, degraded: bool| {
        let mut options = RunOptions::new(f.root().join("work"));
        options.allow_degraded = degraded;
        Runner::new(plan, options).run()
    };
    let err = run(&plan, false).unwrap_err();
    let message = err.to_string();
    for expected in [
        "stage `kept` failed its checks",
        "stage `kept`, gate `max_drop_share`: FAILED (8 of 8 items) (dropped 8 of 8 items (100.0%, more than the 50% allowed); top reasons: other_verdict=8",
        "stage `kept`, gate `output_not_empty`: FAILED (8 of 8 items) (read 8 items and wrote none",
        "--allow-degraded",
    ] {
        assert!(message.contains(expected), "{expected:?} not in {message}");
    }
    // The seed passed its gates (2 of 10 dropped): only `kept` is named.
    assert!(!message.contains("stage `seed`"), "{message}");
    // Reused as it is, the stage fails again: gates judge skipped stages too.
    let again = run(&plan, false).unwrap_err().to_string();
    assert!(again.contains("gate `max_drop_share`: FAILED"), "{again}");
    assert_eq!(f.runs(), (1, 1));

    // A share this stage may drop: the empty output still fails.
    let plan = f
        .plan(&losing_pipeline("[stages.kept.gate]\nmax_drop_share = 1.0"))
        .unwrap();
    let message = run(&plan, false).unwrap_err().to_string();
    assert!(!message.contains("max_drop_share`: FAILED"), "{message}");
    assert!(message.contains("output_not_empty`: FAILED"), "{message}");

    // Degraded allowed (the option, or the pipeline's [gates]): the run finishes and says what
    // failed.
    let result = run(&plan, true).unwrap();
    let failed: Vec<String> = result
        .failed_checks()
        .iter()
        .map(|c| format!("{}/{}", c.table, c.check))
        .collect();
    assert_eq!(failed, ["kept/output_not_empty"]);
    let plan = f
        .plan(&losing_pipeline("[gates]\nallow_degraded = true"))
        .unwrap();
    assert_eq!(run(&plan, false).unwrap().failed_checks().len(), 2);
    // The table checks ran on what the stages wrote and were recorded with them.
    let record = noisebench_pipeline::runner::read_record(&f.root().join("work/t/kept")).unwrap();
    let checks: Vec<String> = record
        .checks
        .unwrap()
        .iter()
        .map(|c| format!("{}/{}", c.table, c.check))
        .collect();
    assert_eq!(checks, ["kept/unique(id)", "kept/not_null(id)"]);

    // A share outside 0..1 is a configuration error before anything runs.
    let err = f
        .plan(&losing_pipeline("[gates]\nmax_drop_share = 1.5"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("gates.max_drop_share") && err.contains("1.5"),
        "{err}"
    );
}
