//! `noisebench eval` end to end: every task on the demo snapshot offline, with each generator;
//! the three releases' formats from their fixtures (bad rows counted, the run goes on); results
//! that read back; a rerun answered from the cache; `--compare`.

use std::path::{Path, PathBuf};

use noisebench_cli::{
    EvalRequest, LlmOverrides, METRICS_FILE, PREDICTIONS_FILE, RESULTS_FILE, SUMMARY_FILE,
    compare_evals, run_eval,
};
use noisebench_core::{Metric, Prediction};
use noisebench_pipeline::table_io;
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};
use noisebench_testkit::{copy_dir, repo_root};

/// A checkout with the demo snapshot built, shared by this binary's tests (read only).
fn demo() -> &'static (PathBuf, PathBuf) {
    crate::shared::demo()
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

/// A root for evaluating releases: the repository's pipelines (the default evaluation file,
/// offline), nothing built.
fn release_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    copy_dir(
        &repo_root().join("pipelines"),
        &dir.path().join("pipelines"),
    );
    dir
}

fn predictions(dir: &Path) -> Vec<Prediction> {
    table_io::read_rows(&dir.join(PREDICTIONS_FILE)).unwrap()
}

#[test]
fn each_release_as_published_is_one_command_and_says_what_it_used() {
    let root = release_root();
    let releases = repo_root().join("fixtures/releases");
    let out = root.path().join("evals");
    let eval = |inputs: Vec<PathBuf>| {
        run_eval(
            root.path(),
            &request(inputs, &out),
            &LlmOverrides::default(),
        )
    };

    // CONF-FACT: the instance pickle; the credibility tables beside it are joined by domain,
    // so the credibility methods run.
    let run = eval(vec![releases.join("confact/dataset/HumC.pkl.gz")]).unwrap();
    assert_eq!(run.evaluation.benchmark, "confact-HumC");
    let tasks = tasks_of(&run.dir);
    for t in ["confact_direct", "confact_cw_soft", "confact_sba_exp"] {
        assert_eq!(tasks.get(t), Some(&3), "{t}: {tasks:?}");
    }
    assert!(
        run.loaded
            .contains("loaded confact-HumC: 3 claims, 5 documents, 0 questions, 0 chunks"),
        "{}",
        run.loaded
    );
    assert!(
        run.loaded.contains("4 of 5 documents matched by domain"),
        "{}",
        run.loaded
    );
    // The folder holds both splits: one at a time.
    let err = eval(vec![releases.join("confact/dataset")]).err().unwrap();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("HumC.pkl.gz") && msg.contains("ModC.pkl.gz"),
        "{msg}"
    );

    // RARE: the folder as RARE's evaluator reads it; its retrieval results are used.
    let run = eval(vec![releases.join("rare/published")]).unwrap();
    let retrievers: std::collections::BTreeSet<String> = predictions(&run.dir)
        .iter()
        .filter(|p| {
            p.task == "rare_met"
                && p.groups.get("document").map(String::as_str) == Some("retrieval")
        })
        .filter_map(|p| p.groups.get("retriever").cloned())
        .collect();
    assert_eq!(
        retrievers.into_iter().collect::<Vec<_>>(),
        [
            "bm25",
            "e5-large",
            "jina-embeddings-v3",
            "stella-en-1.5B-v5"
        ]
    );
    assert!(
        run.loaded
            .contains("finance_single_hop_perturbed_retrieval_results.json")
            && run.loaded.contains("retrieval cells use them"),
        "{}",
        run.loaded
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.dir.join(SUMMARY_FILE)).unwrap())
            .unwrap();
    assert_eq!(summary["loaded"]["questions"], 4);
    assert_eq!(summary["bad_row_details_left_out"], 0);
    assert_eq!(summary["bad_row_details"].as_array().unwrap().len(), 1);

    // RAGuard's claims.csv alone: zero-context runs, the rest is said not to.
    let run = eval(vec![releases.join("raguard/claims.csv")]).unwrap();
    assert_eq!(
        tasks_of(&run.dir).keys().collect::<Vec<_>>(),
        ["raguard_zero_context"]
    );
    assert!(run.tasks_ran() > 0);
    assert!(
        run.evaluation
            .skipped
            .contains_key("raguard_rag_and_oracle")
    );
}

#[test]
fn an_eval_where_nothing_ran_exits_non_zero_and_says_why() {
    let root = release_root();
    let releases = repo_root().join("fixtures/releases");
    let noisebench = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
            .arg("--root")
            .arg(root.path())
            .arg("eval")
            .args(args)
            .output()
            .unwrap()
    };
    let rare = releases.join("rare/published");
    let out = noisebench(&[rare.to_str().unwrap(), "--families", "raguard,confact"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("loaded rare-published: 0 claims, 0 documents, 4 questions, 6 chunks"),
        "{stdout}"
    );
    assert!(
        stdout.contains("set aside or flagged: 1 rows (no_retrieval_result 1)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("no task ran") && stderr.contains("raguard: no claims"),
        "{stderr}"
    );

    // An empty file: an error naming it, once.
    let empty = root.path().join("claims.csv");
    std::fs::write(&empty, "").unwrap();
    let out = noisebench(&[empty.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.matches("claims.csv").count(), 1, "{stderr}");
    assert!(stderr.contains("is empty"), "{stderr}");

    // A missing file: its cause printed once, not twice.
    let out = noisebench(&[
        "--format",
        "raguard",
        root.path().join("gone.csv").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");

    // --format confact on a file with no CONF-FACT record: an error, not an empty run.
    let json = root.path().join("claims.json");
    std::fs::write(
        &json,
        r#"[{"id": 1, "claim": "x", "label": "Supported", "evidence": []}]"#,
    )
    .unwrap();
    let out = noisebench(&["--format", "confact", json.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no instance has `evidence_url`"),
        "{stderr}"
    );
}

#[test]
fn each_export_of_a_snapshot_reads_back_with_the_release_loaders() {
    use noisebench_cli::{Exported, export_snapshot, load_snapshot};
    let (_, snapshot) = demo();
    let out = tempfile::tempdir().unwrap();
    let ours = load_snapshot(snapshot, None).unwrap();

    // RAGuard: every exported claim and document reads back, none set aside.
    let dir = out.path().join("raguard");
    let Exported::Claims(written) = export_snapshot(snapshot, "raguard", &dir).unwrap() else {
        panic!("raguard is a claims export")
    };
    let data =
        noisebench_eval::load::load_raguard(&dir.join("claims.csv"), &dir.join("documents.csv"))
            .unwrap();
    assert!(data.bad_rows.is_empty(), "{:?}", data.bad_rows);
    assert!(written.claims > 0);
    assert_eq!(data.claims.len(), written.claims);
    assert_eq!(data.documents.len(), written.documents);
    let texts = |d: &noisebench_eval::EvalData| {
        let mut t: Vec<(String, bool)> = d
            .claims
            .iter()
            .map(|c| (c.text.clone(), c.verdict))
            .collect();
        t.sort();
        t
    };
    assert_eq!(texts(&data), texts(&ours));

    // CONF-FACT: the same claims, every evidence, the snapshot's credibility levels.
    let dir = out.path().join("confact");
    let Exported::Claims(written) = export_snapshot(snapshot, "confact", &dir).unwrap() else {
        panic!("confact is a claims export")
    };
    let data =
        noisebench_eval::load::load_confact(&dir.join(noisebench_label::CONFACT_FILE)).unwrap();
    assert_eq!(data.claims.len(), written.claims);
    // A document with no text (the demo's Reddit link posts and removed bodies) is not an
    // evidence: its label rows are drops with reason `empty_document`, saying why, and every
    // evidence written reads back.
    assert!(data.bad_rows.is_empty(), "{:?}", data.bad_rows);
    assert_eq!(data.documents.len(), written.documents);
    let empty: Vec<&noisebench_label::SkippedPair> = written
        .skipped
        .iter()
        .filter(|s| s.reason == "empty_document")
        .collect();
    assert!(!empty.is_empty(), "{:?}", written.skipped);
    assert!(
        empty.iter().all(|s| s.detail.contains("Reddit")),
        "{empty:?}"
    );
    assert_eq!(texts(&data), texts(&ours));
    let levels = |d: &noisebench_eval::EvalData| {
        let mut l: Vec<String> = d
            .documents
            .iter()
            .filter_map(|x| x.credibility.level.clone())
            .collect();
        l.sort();
        l
    };
    assert!(!levels(&data).is_empty());
    assert_eq!(levels(&data).len(), data.documents_with_credibility());

    // RARE: every record reads back with its id, answer chunks and perturbations.
    let dir = out.path().join("rare");
    let Exported::Rare(written) = export_snapshot(snapshot, "rare", &dir).unwrap() else {
        panic!("rare is a RARE export")
    };
    let inputs =
        noisebench_eval::load::RareInputs::discover(std::slice::from_ref(&dir), None, None)
            .unwrap();
    let data = noisebench_eval::load::load_rare_inputs(&inputs).unwrap();
    assert_eq!(data.questions.len(), written.single_hop + written.multi_hop);
    let by_id: std::collections::BTreeMap<&str, &noisebench_eval::EvalQuestion> =
        ours.questions.iter().map(|q| (q.id.as_str(), q)).collect();
    for q in &data.questions {
        let o = by_id[q.id.as_str()];
        assert_eq!(q.answer, o.answer, "{}", q.id);
        assert_eq!(q.kind, o.kind, "{}", q.id);
        let mut a = q.answer_chunk_ids.clone();
        let mut b = o.answer_chunk_ids.clone();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{}", q.id);
        let kinds = |q: &noisebench_eval::EvalQuestion| {
            q.query_perturbations
                .iter()
                .map(|v| v.kind.clone())
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(kinds(q), kinds(o), "{}", q.id);
    }
}
