//! `noisebench eval` end to end: every task on the demo snapshot offline, with each generator;
//! the three releases' formats from their fixtures (bad rows counted, the run goes on); results
//! that read back; a rerun answered from the cache; `--compare`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use noisebench_cli::{
    EvalRequest, LlmOverrides, METRICS_FILE, PREDICTIONS_FILE, RESULTS_FILE, SUMMARY_FILE,
    Workspace, build_snapshot, compare_evals, run_eval,
};
use noisebench_core::{Metric, NoProgress, Prediction};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{PublishOptions, PublishOutcome};
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};
use noisebench_testkit::{copy_dir, repo_root};

/// A checkout with the demo snapshot built, shared by this file's tests (read only).
fn demo() -> &'static (PathBuf, PathBuf) {
    static DEMO: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DEMO.get_or_init(|| {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap()
            .keep();
        for folder in ["pipelines", "fixtures"] {
            copy_dir(&repo_root().join(folder), &dir.join(folder));
        }
        let ws = Workspace::at(&dir, Arc::new(NoProgress));
        let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
        let Some(PublishOutcome::Published { dir: snapshot, .. }) = built.outcome else {
            panic!("the demo published nothing")
        };
        (dir, snapshot)
    })
}

fn request(inputs: Vec<PathBuf>, out: &Path) -> EvalRequest {
    EvalRequest {
        inputs,
        out: out.to_path_buf(),
        ..Default::default()
    }
}

fn tasks_of(dir: &Path) -> std::collections::BTreeMap<String, usize> {
    let rows: Vec<Prediction> = table_io::read_rows(&dir.join(PREDICTIONS_FILE)).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for p in rows {
        *out.entry(p.task).or_insert(0) += 1;
    }
    out
}

#[test]
fn every_task_runs_on_the_demo_snapshot_offline() {
    let (root, snapshot) = demo();
    let out = tempfile::tempdir().unwrap();
    let run = run_eval(
        root,
        &request(vec![snapshot.clone()], out.path()),
        &LlmOverrides::default(),
    )
    .unwrap();
    assert_eq!(run.unfinished, 0);
    assert!(
        run.evaluation.skipped.is_empty(),
        "{:?}",
        run.evaluation.skipped
    );
    // evals/<benchmark>/<model>/
    assert!(run.dir.ends_with("offline"), "{}", run.dir.display());
    for file in [PREDICTIONS_FILE, METRICS_FILE, SUMMARY_FILE, RESULTS_FILE] {
        assert!(run.dir.join(file).is_file(), "{file}");
    }
    let tasks = tasks_of(&run.dir);
    let mut expected: Vec<String> = [
        "raguard_zero_context",
        "raguard_rag_top1",
        "raguard_rag_top5",
        "raguard_oracle_all",
        "raguard_oracle_misleading",
        "rare_probe",
        "rare_met",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    expected.extend(
        noisebench_eval::confact::METHODS
            .iter()
            .map(|m| format!("confact_{m}")),
    );
    for task in &expected {
        assert!(tasks.get(task).is_some_and(|n| *n > 0), "{task}: {tasks:?}");
    }
    // Every accuracy and robustness metric has an interval that holds its value.
    let metrics: Vec<Metric> = table_io::read_rows(&run.dir.join(METRICS_FILE)).unwrap();
    for m in metrics
        .iter()
        .filter(|m| m.metric == "accuracy" || m.metric == "robustness")
    {
        let (lo, hi) = (m.ci_low.unwrap(), m.ci_high.unwrap());
        assert!(lo <= m.value + 1e-9 && m.value <= hi + 1e-9, "{m:?}");
    }
    for metric in [
        "precision",
        "recall",
        "ndcg",
        "ndcg_graded",
        "misleading_retrieval_recall",
    ] {
        let ks: Vec<i64> = metrics
            .iter()
            .filter(|m| m.task == "raguard_retrieval" && m.metric == metric)
            .filter_map(|m| m.k)
            .collect();
        assert_eq!(ks, (1..=10).collect::<Vec<_>>(), "{metric}");
    }
    for score in [
        "rare_overall",
        "rare_query",
        "rare_document",
        "rare_retrieval",
    ] {
        assert!(
            metrics.iter().any(|m| m.task == score && m.group == "all"),
            "{score}"
        );
    }
    let results = std::fs::read_to_string(run.dir.join(RESULTS_FILE)).unwrap();
    assert!(
        results.contains("| raguard_zero_context | accuracy | all |"),
        "{results}"
    );
}

#[test]
fn the_reference_systems_run_every_family_and_compare_with_the_plain_generator() {
    let (root, snapshot) = demo();
    let out = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for system in ["plain", "astute", "counterrefine"] {
        let mut req = request(vec![snapshot.clone()], out.path());
        req.system = Some(system.into());
        req.limit = Some(4);
        let run = run_eval(root, &req, &LlmOverrides::default()).unwrap();
        let tasks = tasks_of(&run.dir);
        assert!(tasks.contains_key("raguard_zero_context"), "{system}");
        assert!(tasks.contains_key("confact_direct"), "{system}");
        assert!(tasks.contains_key("rare_met"), "{system}");
        dirs.push(run.dir);
    }
    assert!(dirs[1].ends_with("offline+astute"));
    let table = compare_evals(&dirs[0], &dirs[1], 200, 0).unwrap();
    assert!(
        table.contains("| raguard_zero_context | accuracy | all |"),
        "{table}"
    );
    assert!(table.contains("B - A"), "{table}");
}

#[test]
fn the_releases_load_from_their_fixtures_and_bad_rows_are_counted() {
    let (root, _) = demo();
    let releases = repo_root().join("fixtures/releases");
    let out = tempfile::tempdir().unwrap();
    let cases: [(Vec<PathBuf>, &str, &str); 3] = [
        (
            vec![releases.join("raguard")],
            "raguard",
            "raguard_oracle_all",
        ),
        (
            vec![releases.join("confact/confact.json")],
            "confact",
            "confact_direct",
        ),
        (vec![releases.join("rare")], "rare", "rare_met"),
    ];
    for (inputs, name, task) in cases {
        let run = run_eval(root, &request(inputs, out.path()), &LlmOverrides::default())
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert_eq!(run.evaluation.benchmark, name);
        assert!(tasks_of(&run.dir).contains_key(task), "{name}");
    }
    // A release with flaws: the run goes on and says what it left out.
    let bad = releases.join("raguard/bad");
    let mut req = request(vec![bad], out.path());
    req.format = Some(noisebench_eval::SourceFormat::Raguard);
    let run = run_eval(root, &req, &LlmOverrides::default()).unwrap();
    assert!(!run.evaluation.bad_rows.is_empty());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.dir.join(SUMMARY_FILE)).unwrap())
            .unwrap();
    assert!(
        summary["bad_rows"]
            .as_object()
            .is_some_and(|m| !m.is_empty())
    );
    assert!(summary["bad_row_details"][0]["detail"].is_string());
}

#[test]
fn a_rerun_costs_no_request_and_answers_go_through_the_llm_layer() {
    let (root, snapshot) = demo();
    let server = FakeServer::answering(|body| {
        let user = first_message(body, "user");
        let content = if user.contains("Gold answer:") {
            r#"{"correct": false}"#.to_string()
        } else {
            serde_json::json!({"reasoning": null, "answer": "true"}).to_string()
        };
        Reply::Content(content)
    });
    let dir = tempfile::tempdir().unwrap();
    let llm = strict_openai_config(&server.url(), &dir.path().join("cache"));
    let config = dir.path().join("eval.toml");
    let file = serde_json::json!({
        "llm": llm,
        "eval": {"families": ["raguard"], "bootstrap_samples": 100},
    });
    let toml_text = toml::to_string(&file).unwrap();
    std::fs::write(&config, toml_text).unwrap();
    let mut req = request(vec![snapshot.clone()], &dir.path().join("evals"));
    req.config = Some(config);
    let first = run_eval(root, &req, &LlmOverrides::default()).unwrap();
    let sent = server.requests();
    assert!(sent > 0);
    assert!(
        first.dir.ends_with("openai-fake-model"),
        "{}",
        first.dir.display()
    );
    let second = run_eval(root, &req, &LlmOverrides::default()).unwrap();
    assert_eq!(server.requests(), sent, "the rerun sent requests");
    let a: Vec<Prediction> = table_io::read_rows(&first.dir.join(PREDICTIONS_FILE)).unwrap();
    let b: Vec<Prediction> = table_io::read_rows(&second.dir.join(PREDICTIONS_FILE)).unwrap();
    assert_eq!(a, b);
    // Every answer was "true": zero-context accuracy is the share of true claims on the test
    // side, and nothing is out of scope.
    let zero: Vec<&Prediction> = a
        .iter()
        .filter(|p| p.task == "raguard_zero_context")
        .collect();
    assert!(
        zero.iter()
            .all(|p| p.parsed_answer.as_deref() == Some("true"))
    );
    assert!(zero.iter().all(|p| p.correct == Some(p.gold == "true")));
}

#[test]
fn max_cost_stops_an_evaluation_and_the_same_command_resumes_it() {
    let (root, snapshot) = demo();
    // Every call costs 1,000 in at 1 USD/M and 100 out at 10 USD/M: 0.002 USD.
    let server = FakeServer::answering(|body| {
        let user = first_message(body, "user");
        let content = if user.contains("Gold answer:") {
            r#"{"correct": false}"#.to_string()
        } else {
            serde_json::json!({"reasoning": null, "answer": "false"}).to_string()
        };
        Reply::ContentWithUsage(content, 1000, 100)
    });
    let dir = tempfile::tempdir().unwrap();
    let mut llm = strict_openai_config(&server.url(), &dir.path().join("cache"));
    llm["models"]["fake"]["max_concurrency"] = serde_json::json!(1);
    llm["models"]["fake"]["price"] =
        serde_json::json!({"input_per_million": 1.0, "output_per_million": 10.0});
    let config = dir.path().join("eval.toml");
    let file = serde_json::json!({
        "llm": llm,
        "eval": {"families": ["raguard"], "limit": 3, "bootstrap_samples": 50},
    });
    std::fs::write(&config, toml::to_string(&file).unwrap()).unwrap();
    let mut req = request(vec![snapshot.clone()], &dir.path().join("evals"));
    req.config = Some(config);

    // 0.005 USD: the third call crosses it; every later item is refused, never sent.
    let stopped = run_eval(
        root,
        &req,
        &LlmOverrides {
            max_cost: Some(0.005),
            cache_only: false,
            ..LlmOverrides::default()
        },
    )
    .unwrap();
    assert_eq!(server.requests(), 3);
    assert!(stopped.unfinished > 0);
    let first: Vec<Prediction> = table_io::read_rows(&stopped.dir.join(PREDICTIONS_FILE)).unwrap();
    assert!(
        first
            .iter()
            .any(|p| p.failure.as_deref().is_some_and(|f| f.contains("budget")))
    );

    // No limit: the three answers come from the cache, everything else is sent once.
    let done = run_eval(root, &req, &LlmOverrides::default()).unwrap();
    assert_eq!(done.unfinished, 0);
    let second: Vec<Prediction> = table_io::read_rows(&done.dir.join(PREDICTIONS_FILE)).unwrap();
    assert!(second.iter().all(|p| p.failure.is_none()));
    let distinct: std::collections::BTreeSet<&str> =
        second.iter().map(|p| p.prompt_hash.as_str()).collect();
    assert_eq!(
        server.requests(),
        distinct.len(),
        "a request was sent twice"
    );
    // The call log keeps both runs.
    let calls: Vec<noisebench_core::LlmCall> =
        table_io::read_rows(&done.dir.join(noisebench_cli::CALLS_FILE)).unwrap();
    assert!(calls.len() > distinct.len());
}
