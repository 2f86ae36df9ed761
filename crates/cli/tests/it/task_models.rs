//! A stage's fingerprint covers the LLM tasks it declares and no others: giving one task its own
//! model reruns only the stages that use that task. Driven through the command line's library
//! with an OpenAI-compatible fake on 127.0.0.1 that answers every task with one JSON object
//! holding every task's fields (each task reads its own and ignores the rest).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use noisebench_cli::{Built, Workspace, build_snapshot};
use noisebench_core::NoProgress;
use noisebench_snapshot::PublishOptions;
use noisebench_testkit::{FakeServer, Reply, repo_root};

/// claims -> queries (keywords, counter drafts: `keywords`, `exam_verdict`) -> search (the
/// Reddit dump) -> documents (posts from the dump) -> labels (`exam_verdict`, the stance votes),
/// with `task_models` appended to the `[llm]` table.
fn pipeline(dir: &Path, url: &str, task_models: &str) -> String {
    let root = repo_root();
    let fixtures = |p: &str| root.join(p).display().to_string();
    format!(
        r#"
[pipeline]
name = "tasks"

[llm]
backend = "openai"
model = "a"
prompts_dir = "{prompts}"
cache = {{ dir = "{cache}" }}
embeddings = {{ backend = "hashed" }}
# The fake's one answer is not about most claims; which model answers is tested here.
sense_checks = false
task_models = {{ {task_models} }}
[llm.models.a]
name = "model-a"
endpoints = [{{ name = "local", url = "{url}" }}]
max_retries = 0
[llm.models.b]
name = "model-b"
endpoints = [{{ name = "local", url = "{url}" }}]
max_retries = 0

[web]
mode = "replay"
replay_fixtures = "{web}"

[stages.claims]
kind = "claims-import"
[[stages.claims.config.sources]]
path = "{claims}"
preset = "politifact"

[stages.queries]
kind = "queries"
inputs = {{ claims = "claims" }}
config = {{ kinds = ["keywords"], counter = true }}

[stages.search]
kind = "search"
inputs = {{ queries = "queries" }}
[stages.search.config]
top_k = 3
backends = [{{ type = "reddit-dump", path = "{dump}" }}]

[stages.documents]
kind = "documents"
inputs = {{ search_hits = "search", queries = "queries" }}
config = {{ reddit_dumps = ["{dump}"] }}

[stages.labels]
kind = "labels"
inputs = {{ claims = "claims", documents = "documents", claim_documents = "documents.claim_documents" }}
"#,
        prompts = fixtures("pipelines/prompts"),
        cache = dir.join("cache").display(),
        web = fixtures("fixtures/web"),
        claims = fixtures("fixtures/claims/politifact.csv"),
        dump = fixtures("fixtures/reddit/posts.ndjson.zst"),
    )
}

fn ran(built: &Built) -> Vec<String> {
    built
        .run
        .summary
        .iter()
        .filter(|s| s.status == "ran")
        .map(|s| s.id.clone())
        .collect()
}

#[test]
fn a_tasks_model_reruns_only_the_stages_that_use_it() {
    let server = FakeServer::start_with(
        Reply::Content(
            r#"{"keywords": ["plastic bags", "ban"], "verdict": "true", "stance": "support",
                "reasoning": "The page agrees. Final answer: Support"}"#
                .into(),
        ),
        Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.toml");
    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let build = |task_models: &str| {
        std::fs::write(&path, pipeline(dir.path(), &server.url(), task_models)).unwrap();
        build_snapshot(
            &ws,
            path.to_str().unwrap(),
            false,
            &PublishOptions::default(),
        )
        .unwrap()
    };
    let first = build("");
    assert_eq!(
        ran(&first),
        ["claims", "queries", "search", "documents", "labels"]
    );
    assert!(first.llm.calls > 0);

    // A stance vote's model: only `labels` asks it.
    assert_eq!(ran(&build(r#"stance_url = "b""#)), ["labels"]);
    // The keywords' model: only `queries` asks it. The same keywords come back, so the queries
    // table changes only in its provenance, and what reads it reruns only if its own output
    // changes; `labels`, whose tasks did not change, reads none of it.
    let keywords = build(r#"stance_url = "b", keywords = "b""#);
    let keywords = ran(&keywords);
    assert_eq!(
        keywords.first().map(String::as_str),
        Some("queries"),
        "{keywords:?}"
    );
    assert!(!keywords.contains(&"labels".to_string()), "{keywords:?}");
    // The exam's model: both stages ask `exam_verdict`.
    let exam = ran(&build(
        r#"stance_url = "b", keywords = "b", exam_verdict = "b""#,
    ));
    assert!(
        exam.contains(&"queries".to_string()) && exam.contains(&"labels".to_string()),
        "{exam:?}"
    );
    // Unchanged settings: nothing reruns.
    assert!(
        ran(&build(
            r#"stance_url = "b", keywords = "b", exam_verdict = "b""#
        ))
        .is_empty()
    );

    // A task model for a task no stage of the pipeline uses is refused before any work.
    std::fs::write(
        &path,
        pipeline(dir.path(), &server.url(), r#"triplets = "b""#),
    )
    .unwrap();
    let err = build_snapshot(
        &ws,
        path.to_str().unwrap(),
        false,
        &PublishOptions::default(),
    )
    .err()
    .expect("an unused task model is a configuration error");
    let message = format!("{err:#}");
    assert!(
        message
            .contains("llm.task_models.triplets: no stage of this pipeline uses task `triplets`"),
        "{message}"
    );
}

/// One JSON object answering every task of the pipeline as a model reading its input would:
/// keywords from the claim, a verdict and a stance from the document (a library that "never
/// opened": false, reject), a credibility from the domain.
fn reading_model(body: &serde_json::Value) -> Reply {
    let user = noisebench_testkit::first_message(body, "user");
    // The preflight's refuting examples say so (the prompts themselves name "false").
    let refutes = user.contains("never opened") || user.contains("never-opened");
    let claim_words: Vec<&str> = user
        .split("Claim: ")
        .nth(1)
        .unwrap_or(user)
        .split_whitespace()
        .take(3)
        .collect();
    let (stance, verdict) = if refutes {
        ("Reject", "false")
    } else {
        ("Support", "true")
    };
    let (credibility, source_type) = if user.contains(".gov") {
        ("high", "government")
    } else {
        ("low", "social media")
    };
    Reply::Content(
        serde_json::json!({
            "keywords": [claim_words.join(" ")],
            "verdict": verdict,
            "stance": stance.to_lowercase(),
            "reasoning": format!("The page says so. Final answer: {stance}"),
            "credibility": credibility,
            "source_type": source_type,
        })
        .to_string(),
    )
}

/// The preflight at the start of a build: a model giving one answer whatever it is asked
/// stops the build before any stage runs, naming the tasks and what to try; a model reading
/// its inputs passes, and the build runs.
#[test]
fn the_preflight_stops_a_build_with_a_model_that_does_not_read() {
    let constant = FakeServer::start_with(
        Reply::Content(
            r#"{"keywords": ["plastic bags", "ban"], "verdict": "true", "stance": "support",
                "reasoning": "The page agrees. Final answer: Support", "credibility": "high",
                "source_type": "other"}"#
                .into(),
        ),
        Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.toml");
    let mut ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    ws.preflight = true;
    std::fs::write(&path, pipeline(dir.path(), &constant.url(), "")).unwrap();
    let err = build_snapshot(
        &ws,
        path.to_str().unwrap(),
        false,
        &PublishOptions::default(),
    )
    .err()
    .expect("a model answering everything alike fails the preflight");
    let message = format!("{err:#}");
    assert!(message.contains("the LLM preflight failed"), "{message}");
    assert!(
        message.contains("FAILED  exam_verdict (openai:model-a)")
            && message.contains("the same answer for 2 inputs"),
        "{message}"
    );
    assert!(message.contains("what to try"), "{message}");
    assert!(
        !dir.path().join("work/tasks/claims").exists(),
        "no stage ran"
    );
    let asked = constant.requests();
    assert!(asked > 0);

    let reading = FakeServer::answering(reading_model);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.toml");
    let mut ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    ws.preflight = true;
    std::fs::write(&path, pipeline(dir.path(), &reading.url(), "")).unwrap();
    let built = build_snapshot(
        &ws,
        path.to_str().unwrap(),
        false,
        &PublishOptions::default(),
    )
    .unwrap();
    assert_eq!(
        ran(&built),
        ["claims", "queries", "search", "documents", "labels"]
    );
}

/// A stage whose requests the server refused as longer than its context is not rerun by a
/// plain build; once the server runs a larger context (and says so in `/props`), the
/// fingerprint changes and the next build reruns it without `--force`.
#[test]
fn a_larger_context_reruns_the_refused_stage_without_force() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let small = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&small);
    let server = FakeServer::answering(move |body| {
        let user = noisebench_testkit::first_message(body, "user");
        if flag.load(Ordering::SeqCst) && user.len() > 800 {
            return Reply::Status(
                400,
                None,
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#.into(),
            );
        }
        reading_model(body)
    });
    server.set_props(Some(
        serde_json::json!({"default_generation_settings": {"n_ctx": 2048}}),
    ));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.toml");
    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    std::fs::write(&path, pipeline(dir.path(), &server.url(), "")).unwrap();
    let build = || {
        build_snapshot(
            &ws,
            path.to_str().unwrap(),
            false,
            &PublishOptions::default(),
        )
        .unwrap()
    };
    let refused = |built: &Built| -> usize {
        built
            .run
            .summary
            .iter()
            .map(|s| {
                s.drop_reasons
                    .get("llm_context_exceeded")
                    .copied()
                    .unwrap_or(0) as usize
            })
            .sum()
    };
    let first = build();
    assert!(refused(&first) > 0, "{:?}", first.run.summary);
    // The same server: nothing changed, nothing reruns, the refusals stay.
    assert!(ran(&build()).is_empty());
    // The server restarted with a larger context.
    small.store(false, Ordering::SeqCst);
    server.set_props(Some(
        serde_json::json!({"default_generation_settings": {"n_ctx": 32768}}),
    ));
    let larger = build();
    assert!(!ran(&larger).is_empty(), "rerun without --force");
    assert_eq!(refused(&larger), 0, "{:?}", larger.run.summary);
}

/// A model that gives every claim the same verdict (as SmolLM2 answered "true" to every exam)
/// fails the gate `constant_answers` of the stage that asked it, with the sense checks on: the
/// build stops there, naming the task, the model and the answer; `--allow-degraded` goes on
/// and records the failed gate.
#[test]
fn constant_verdicts_fail_their_stages_gate() {
    // Reading the pipeline's own claims and pages, the fake never meets "never opened": its
    // verdict is "true" and its stance "support" for every one of them.
    let server = FakeServer::answering(reading_model);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.toml");
    let text = pipeline(dir.path(), &server.url(), "")
        .replace("sense_checks = false", "sense_checks = true");
    std::fs::write(&path, text).unwrap();
    let mut ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let err = build_snapshot(
        &ws,
        path.to_str().unwrap(),
        false,
        &PublishOptions::default(),
    )
    .err()
    .expect("the same verdict for every claim stops the build");
    let message = format!("{err:#}");
    assert!(
        message.contains("stage `queries` failed its checks")
            && message.contains("gate `constant_answers`: FAILED")
            && message.contains("exam_verdict (openai:model-a): \"true\" for all"),
        "{message}"
    );
    assert!(
        !dir.path().join("work/tasks/search").exists(),
        "nothing after `queries` ran"
    );

    ws.allow_degraded = true;
    let built = build_snapshot(
        &ws,
        path.to_str().unwrap(),
        false,
        &PublishOptions::default(),
    )
    .unwrap();
    let failed: Vec<(&str, &str)> = built
        .checks
        .iter()
        .filter(|c| c.failed())
        .map(|c| (c.table.as_str(), c.check.as_str()))
        .collect();
    // `queries` is reused from the stopped run and still fails; the stance votes of `labels`
    // ("support" for every pair) fail it there too.
    assert!(
        failed.contains(&("queries", "constant_answers")),
        "{failed:?}"
    );
    assert!(
        failed.contains(&("labels", "constant_answers")),
        "{failed:?}"
    );
}
