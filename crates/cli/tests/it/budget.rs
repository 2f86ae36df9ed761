//! `--max-cost` through the whole command line: an OpenAI-compatible fake server on 127.0.0.1
//! answers every call; once the estimated cost reaches the limit, the run stops with the stage
//! unrecorded and its calls logged, and the next run resumes from the cache.

use std::sync::Arc;
use std::time::Duration;

use noisebench_cli::{LlmOverrides, Workspace, build_snapshot};
use noisebench_core::{LlmCall, NoProgress};
use noisebench_pipeline::table_io;
use noisebench_snapshot::PublishOptions;
use noisebench_testkit::{FakeServer, Reply, repo_root};

/// A chat-completions endpoint that answers every request with two keywords and a usage of
/// 1,000 prompt and 100 completion tokens. Stops when dropped.
fn fake_openai() -> FakeServer {
    FakeServer::start_with(
        Reply::ContentWithUsage(r#"{"keywords": ["water", "lemon"]}"#.into(), 1000, 100),
        Duration::ZERO,
    )
}

#[test]
fn max_cost_stops_the_run_and_the_next_run_resumes_from_the_cache() {
    let server = fake_openai();
    let dir = tempfile::tempdir().unwrap();
    let root = repo_root();
    // 1,000 in at 1 USD/M and 100 out at 10 USD/M: 0.002 USD a call.
    let pipeline = format!(
        r#"
[pipeline]
name = "budget"

[llm]
backend = "openai"
model = "fake"
prompts_dir = "{prompts}"
cache = {{ dir = "{cache}" }}
embeddings = {{ backend = "hashed" }}
# The fake's one answer is not about most claims; the budget is what is tested here.
sense_checks = false
[llm.models.fake]
name = "fake-model"
endpoints = [{{ name = "local", url = "{url}" }}]
max_concurrency = 1
max_retries = 0
price = {{ input_per_million = 1.0, output_per_million = 10.0 }}

[stages.claims]
kind = "claims-import"
[[stages.claims.config.sources]]
path = "{claims}"
preset = "politifact"

[stages.queries]
kind = "queries"
inputs = {{ claims = "claims" }}
config = {{ kinds = ["keywords"] }}
"#,
        prompts = root.join("pipelines/prompts").display(),
        cache = dir.path().join("cache").display(),
        url = server.url(),
        claims = root.join("fixtures/claims/politifact.csv").display(),
    );
    let path = dir.path().join("budget.toml");
    std::fs::write(&path, pipeline).unwrap();
    let mut ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let path = path.to_str().unwrap();

    // 0.005 USD: the third call crosses it; every later item is refused, never sent.
    ws.llm_overrides = LlmOverrides {
        max_cost: Some(0.005),
        cache_only: false,
        ..LlmOverrides::default()
    };
    let err = build_snapshot(&ws, path, false, &PublishOptions::default())
        .err()
        .expect("the budget stops the run");
    let message = format!("{err:#}");
    assert!(
        message.contains("stage `queries` stopped: llm.max_cost reached"),
        "{message}"
    );
    assert_eq!(server.requests(), 3);
    let run_dir = dir.path().join("work/budget");
    assert!(!run_dir.join("queries/stage.json").exists());
    let calls: Vec<LlmCall> = table_io::read_rows(&run_dir.join("llm_calls.parquet")).unwrap();
    let refused = calls
        .iter()
        .filter(|c| {
            c.error
                .as_deref()
                .is_some_and(|e| e.starts_with("budget_exhausted"))
        })
        .count();
    let claims = calls.len();
    assert_eq!((claims - refused, refused > 0), (3, true));
    let cost: f64 = calls.iter().filter_map(|c| c.cost_usd).sum();
    assert!((cost - 0.006).abs() < 1e-9, "{cost}");

    // No limit: the claims stage is skipped, queries resumes with three cache hits.
    ws.llm_overrides = LlmOverrides::default();
    let built = build_snapshot(&ws, path, false, &PublishOptions::default()).unwrap();
    assert_eq!(built.run.ran(), 1);
    assert_eq!(built.llm.cache_hits, 3);
    assert_eq!(built.llm.calls as usize, claims);
    assert_eq!(
        server.requests(),
        claims,
        "each claim was sent exactly once over both runs"
    );

    // Cache only: every answer is there now, so a forced rerun sends nothing.
    ws.llm_overrides = LlmOverrides {
        max_cost: None,
        cache_only: true,
        ..LlmOverrides::default()
    };
    let again = build_snapshot(&ws, path, true, &PublishOptions::default()).unwrap();
    assert_eq!(again.llm.cache_hits as usize, claims);
    assert_eq!(server.requests(), claims);
}
