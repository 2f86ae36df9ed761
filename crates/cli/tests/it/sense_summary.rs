//! The run summary tells the truth: per model (and task) how many of its answers were unusable
//! (cut off, unparseable, dropped by a sense check), the tasks whose answers never changed
//! (offline rules are not models), and a build against a model that answers junk stops at the
//! stage that lost its items, publishing nothing unless `--allow-degraded`.

use std::path::Path;
use std::sync::Arc;

use noisebench_cli::{LlmTotals, Workspace, build_snapshot};
use noisebench_core::{CheckKind, CheckStatus, LlmCall, NoProgress};
use noisebench_snapshot::{PublishOptions, PublishOutcome};
use noisebench_testkit::{FakeServer, Reply, repo_root};

fn call(backend: &str, model: &str, task: &str, error: Option<&str>) -> LlmCall {
    LlmCall {
        backend: backend.into(),
        model: model.into(),
        task: task.into(),
        error: error.map(String::from),
        ..LlmCall::default()
    }
}

#[test]
fn the_share_of_sense_drops_per_model_is_in_the_summary() {
    let calls = vec![
        call(
            "openai",
            "small",
            "claim_to_question",
            Some("copied_example: answer not about its input: copied_example: ..."),
        ),
        call(
            "openai",
            "small",
            "claim_to_question",
            Some("off_topic: answer not about its input: off_topic: ..."),
        ),
        call("openai", "small", "keywords", None),
        call(
            "openai",
            "small",
            "stance_reasoned",
            Some("truncated: answer cut off at max_tokens 768"),
        ),
        call("openai", "small", "embedding", None),
        call("openai", "big", "keywords", None),
        call("offline", "rules", "keywords", None),
    ];
    let mut t = LlmTotals::of(&calls);
    let small = &t.sense["openai:small"];
    assert_eq!(
        (small.answers, small.dropped),
        (4, 3),
        "embeddings are not answers; a cut-off answer is an unusable one"
    );
    assert_eq!(small.reasons["copied_example"], 1);
    assert_eq!(small.reasons["off_topic"], 1);
    assert_eq!(small.reasons["truncated"], 1);
    assert_eq!(
        (
            small.tasks["claim_to_question"].dropped,
            small.tasks["keywords"].dropped
        ),
        (2, 0)
    );
    assert_eq!(t.sense["openai:big"].dropped, 0);
    assert!(!t.sense.contains_key("offline:rules"));
    t.constant_answers = vec!["stance_text (openai:small): \"support\" for all 6 answers".into()];
    let text = t.render();
    assert!(
        text.contains("sense checks, openai:small: 3 of 4 answers dropped (75.0%): copied_example=1 off_topic=1 truncated=1\n  claim_to_question: 2 of 2 answers dropped (100.0%): copied_example=1 off_topic=1\n  keywords: 0 of 1 answers dropped (0.0%)\n  stance_reasoned: 1 of 1 answers dropped (100.0%): truncated=1"),
        "{text}"
    );
    assert!(
        text.contains("sense checks, openai:big: 0 of 1 answers dropped (0.0%)\n"),
        "{text}"
    );
    assert!(text.ends_with("the same answer all run long: stance_text (openai:small): \"support\" for all 6 answers"), "{text}");
    // An offline run's summary is the one line it always was.
    let offline = LlmTotals::of(&[call("offline", "rules", "keywords", None)]);
    assert!(!offline.render().contains('\n'));
    assert!(
        serde_json::to_value(&offline)
            .unwrap()
            .get("sense")
            .is_none()
    );
}

/// A report-track pipeline (the two knowledge-graph fixture reports, through questions) whose
/// every LLM answer is `reply`, publishing its tables as `junk`.
fn junk_pipeline(dir: &Path, url: &str) -> String {
    let root = repo_root();
    let text = format!(
        r#"
[pipeline]
name = "junk"

[llm]
backend = "openai"
model = "fake"
prompts_dir = "{prompts}"
cache = {{ dir = "{cache}" }}
embeddings = {{ backend = "hashed" }}
[llm.models.fake]
name = "junk-model"
endpoints = [{{ name = "local", url = "{url}" }}]
max_retries = 0

[stages.reports]
kind = "reports"
[stages.reports.config]
sources = [{{ path = "{reports}/*_2024.md", domain = "economics" }}]

[stages.chunks]
kind = "chunks"
inputs = {{ reports = "reports" }}

[stages.triplets]
kind = "triplets"
inputs = {{ chunks = "chunks" }}

[stages.graph]
kind = "graph"
inputs = {{ triplets = "triplets", reports = "reports" }}

[stages.patterns]
kind = "patterns"
inputs = {{ graph_edges = "graph" }}

[stages.questions]
kind = "questions"
inputs = {{ patterns = "patterns", triplets = "triplets", chunks = "chunks", reports = "reports" }}

[snapshot]
dataset = "junk"
tables = ["reports", "chunks", "triplets", "questions"]
"#,
        prompts = root.join("pipelines/prompts").display(),
        cache = dir.join("cache").display(),
        reports = root.join("fixtures/reports/kg").display(),
    );
    let path = dir.join("junk.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn junk_answers_stop_the_build_at_triplets_unless_degraded_is_allowed() {
    // Not JSON at all, to every task.
    let server = FakeServer::start_with(
        Reply::Content("Sure! Here are the facts you asked for.".into()),
        std::time::Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let pipeline = junk_pipeline(dir.path(), &server.url());
    let mut ws = Workspace::at(dir.path(), Arc::new(NoProgress));

    let err = build_snapshot(&ws, &pipeline, false, &PublishOptions::default())
        .err()
        .expect("a stage that lost every item stops the build");
    let message = format!("{err:#}");
    for expected in [
        "stage `triplets` failed its checks",
        "stage `triplets`, gate `output_not_empty`: FAILED",
        "llm_unparseable_output=",
        "read 2 items and wrote none; dropped ",
        "openai:junk-model",
        "json_schema",
        "max_tokens",
        "--allow-degraded",
    ] {
        assert!(message.contains(expected), "{expected:?} not in {message}");
    }
    let stopped = err
        .downcast_ref::<noisebench_cli::Stopped>()
        .expect("the stop carries what the run did");
    assert!(
        stopped.report.contains("sense checks, openai:junk-model:")
            && stopped.report.contains("unparseable_output="),
        "{}",
        stopped.report
    );
    assert!(
        stopped
            .report
            .contains("the report track produced nothing: no questions from 2 source items: it ran dry at `triplets`"),
        "{}",
        stopped.report
    );
    assert!(
        !dir.path().join("snapshots/junk").exists(),
        "nothing is published"
    );
    // The later stages did not run.
    assert!(!dir.path().join("work/junk/graph/stage.json").exists());

    // The binary says the same and exits non-zero.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .arg("--skip-preflight")
        .arg("--root")
        .arg(dir.path())
        .args(["build-snapshot", &pipeline])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("stage `triplets`, gate `output_not_empty`: FAILED"),
        "{text}"
    );
    assert!(text.contains("it ran dry at `triplets`"), "{text}");

    // Degraded allowed: the build goes on and publishes, and the card and the manifest say
    // which gate failed.
    ws.allow_degraded = true;
    let built = build_snapshot(&ws, &pipeline, false, &PublishOptions::default()).unwrap();
    let Some(PublishOutcome::Published { dir: version, .. }) = built.outcome else {
        panic!("nothing published")
    };
    let failed: Vec<String> = built
        .checks
        .iter()
        .filter(|c| c.failed())
        .map(|c| format!("{}/{}", c.table, c.check))
        .collect();
    assert!(
        failed.contains(&"triplets/output_not_empty".to_string()),
        "{failed:?}"
    );
    let card = std::fs::read_to_string(version.join("README.md")).unwrap();
    assert!(card.contains("## Checks"), "{card}");
    assert!(
        card.contains("Published with `--allow-degraded`")
            && card.contains("- stage `triplets`, gate `output_not_empty`: FAILED"),
        "{card}"
    );
    let manifest = noisebench_snapshot::Manifest::read(&version).unwrap();
    let gate = manifest
        .checks
        .iter()
        .find(|c| c.table == "triplets" && c.check == "output_not_empty")
        .expect("the manifest lists the gate");
    assert_eq!(
        (gate.kind, gate.status),
        (CheckKind::Gate, CheckStatus::Failed)
    );
    // Every stage's gates and every published table's checks are listed, passed ones too.
    assert!(manifest.checks.iter().any(|c| c.table == "reports"
        && c.check == "max_drop_share"
        && c.status == CheckStatus::Passed));
    assert!(
        manifest
            .checks
            .iter()
            .any(|c| c.table == "chunks" && c.check == "references(report_id -> reports)")
    );
    assert_eq!(
        built
            .report_track
            .as_deref()
            .map(|l| l.starts_with("the report track produced nothing")),
        Some(true)
    );
}
