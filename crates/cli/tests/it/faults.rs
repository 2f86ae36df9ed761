//! The demo against an LLM endpoint that fails 20% of calls (429 with Retry-After, 500, 503,
//! truncated bodies) with retries off: the build publishes nothing and exits non-zero naming what
//! failed; every one-to-one stage accounts for every item; a plain rerun at 0% faults sends only
//! requests that never succeeded (every finished answer is a cache hit) and publishes the same
//! tables as a build that never met a fault.

use crate::reliability_common;

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::{DropRecord, NoProgress, StageSummary};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{Manifest, PublishOptions, PublishOutcome};
use noisebench_testkit::{FakeServer, Reply};
use serde_json::{Value, json};

/// What identifies a request: its task and messages (the cache key's varying part).
fn request_key(body: &Value) -> String {
    json!([
        body["response_format"]["json_schema"]["name"],
        body["messages"]
    ])
    .to_string()
}

fn hash_of(key: &str) -> u64 {
    let mut h = DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

/// A valid answer for each task the demo uses, varied by the request so labels differ; any
/// other task (one added later) gets its offline rule's answer to the request's input.
fn answer(body: &Value, task: &str, h: u64) -> String {
    let verdict = ["true", "false", "undecided"][(h % 3) as usize];
    let stance = ["support", "reject", "not enough evidence"][(h % 3) as usize];
    match task {
        "keywords" => json!({"keywords": ["water", "policy"]}),
        "claim_to_question" => json!({"question": "Is the claim true?"}),
        "exam_verdict" => json!({"verdict": verdict}),
        "stance_url" | "stance_text" => json!({"stance": stance}),
        "stance_reasoned" => json!({"reasoning": "The page says so.", "stance": stance}),
        "credibility" => json!({"credibility": "medium", "source_type": "other"}),
        // The report track is not what these tests are about: no triplets, an empty graph.
        "triplets" => json!({"triplets": []}),
        _ => reliability_common::offline_answer(body),
    }
    .to_string()
}

/// The fake endpoint: while `faulty`, one request in five (by a hash of its content, so it is
/// the same request whenever it comes) fails with one of four transient faults. Records every
/// request's key and whether it was answered.
struct Endpoint {
    server: FakeServer,
    faulty: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<(String, bool)>>>,
}

/// The labels stage's tasks: faults there change no other stage's input.
const LABEL_TASKS: &[&str] = &["stance_url", "stance_text", "stance_reasoned"];

impl Endpoint {
    /// Faults in every task, or (`only`) in these tasks.
    fn start(faulty: bool, only: Option<&'static [&'static str]>) -> Self {
        let faulty = Arc::new(AtomicBool::new(faulty));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (f, l) = (faulty.clone(), log.clone());
        let server = FakeServer::answering(move |body| {
            let key = request_key(body);
            let h = hash_of(&key);
            let task = reliability_common::task_of(body);
            let fails = f.load(Ordering::SeqCst)
                && h.is_multiple_of(5)
                && only.is_none_or(|tasks| tasks.contains(&task));
            l.lock().unwrap().push((key, !fails));
            if !fails {
                return Reply::Content(answer(body, task, h >> 8));
            }
            match (h >> 3) % 4 {
                0 => Reply::Status(429, Some("0".into()), r#"{"error": "slow down"}"#.into()),
                1 => Reply::Status(500, None, r#"{"error": "internal"}"#.into()),
                2 => Reply::Status(503, None, "upstream unavailable".into()),
                _ => Reply::Raw(r#"{"id": "x", "choices": [{"message": {"content": "#.into()),
            }
        });
        Endpoint {
            server,
            faulty,
            log,
        }
    }

    /// (key, answered) for every request since the last call.
    fn take_log(&self) -> Vec<(String, bool)> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

/// A checkout with the demo pipeline pointed at `url` (retries off, schema-constrained output).
fn checkout(url: &str) -> tempfile::TempDir {
    let dir = noisebench_testkit::checkout();
    // The fake's fixed keywords and question are not about the claims; faults are tested here.
    let llm = format!(
        "cache = {{ dir = \"{}\" }}\nsense_checks = false",
        dir.path().join("work/cache").display()
    );
    let mut faulty = reliability_common::demo_at_endpoint(
        dir.path(),
        url,
        &llm,
        "max_concurrency = 4\nmax_retries = 0",
    );
    // The fake extracts no triplets, so `triplets` writes nothing from its chunks, and its gate
    // would stop the build there: the report track is not what these tests are about.
    faulty.push_str("\n[gates]\nallow_degraded = true\n");
    std::fs::write(dir.path().join("pipelines/demo.toml"), faulty).unwrap();
    dir
}

const ONE_TO_ONE: [&str; 6] = [
    "claims-scrape",
    "claims-import",
    "reports",
    "labels",
    "export-raguard",
    "export-confact",
];

#[test]
fn transient_failures_block_publishing_until_a_rerun_repairs_them() {
    let endpoint = Endpoint::start(true, None);
    let dir = checkout(&endpoint.server.url());

    // The binary: non-zero, nothing published, and it says what failed and what to do. The
    // preflight would stop it before any stage (its own test is in `task_models`); this test is
    // about the stages' transient failures.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .args(["build-snapshot", "--skip-preflight", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    for expected in [
        "not published: ",
        "items failed for a transient cause and are not done",
        "llm_retries_exhausted=",
        "running again retries exactly those",
        "--allow-partial",
    ] {
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
    }
    assert!(stdout.contains(" partial "), "{stdout}");
    assert!(!dir.path().join("snapshots/demo").exists());
    let first = endpoint.take_log();
    let failed: BTreeSet<&String> = first.iter().filter(|(_, ok)| !ok).map(|(k, _)| k).collect();
    let answered: BTreeSet<&String> = first.iter().filter(|(_, ok)| *ok).map(|(k, _)| k).collect();
    assert!(
        failed.len() * 10 > first.len() && failed.len() * 3 < first.len(),
        "about a fifth of {} requests fail, not {}",
        first.len(),
        failed.len()
    );

    // Every item of a one-to-one stage is a row or a counted drop, also in a faulty run, and
    // every failed LLM item is a drop marked for retry.
    let summary: Vec<StageSummary> =
        table_io::read_rows(&dir.path().join("work/demo/run_summary.parquet")).unwrap();
    for s in summary
        .iter()
        .filter(|s| ONE_TO_ONE.contains(&s.kind.as_str()))
    {
        assert_eq!(s.items_in, s.items_out + s.items_dropped, "{s:?}");
    }
    let labels = summary.iter().find(|s| s.id == "labels").unwrap();
    assert_eq!(labels.status, "partial");
    let drops: Vec<DropRecord> =
        table_io::read_rows(&dir.path().join("work/demo/labels/drops.parquet")).unwrap();
    assert!(drops.iter().any(|d| d.retry && d.dropped));
    assert!(
        drops
            .iter()
            .filter(|d| d.reason.ends_with("retries_exhausted"))
            .all(|d| d.retry)
    );

    // A plain rerun with the endpoint healthy: nothing that was answered is asked again.
    endpoint.faulty.store(false, Ordering::SeqCst);
    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let rerun = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    assert_eq!(rerun.withheld, None);
    let Some(PublishOutcome::Published { dir: snapshot, .. }) = rerun.outcome else {
        panic!("the rerun publishes")
    };
    let second = endpoint.take_log();
    let resent: Vec<&String> = second
        .iter()
        .map(|(k, _)| k)
        .filter(|k| answered.contains(k))
        .collect();
    assert!(
        resent.is_empty(),
        "{} answered requests sent again",
        resent.len()
    );
    // No request twice. (A failed request may not come back: with its upstream repaired, an
    // item's prompt can change, e.g. a document's passages once more queries found it.)
    let distinct: BTreeSet<&String> = second.iter().map(|(k, _)| k).collect();
    assert_eq!(distinct.len(), second.len(), "a request was sent twice");
    assert!(rerun.run.unfinished().is_empty());

    // Nothing left: the next plain build sends nothing and publishes nothing new.
    let third = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    assert_eq!(third.run.ran(), 0);
    assert!(matches!(
        third.outcome,
        Some(PublishOutcome::Unchanged { .. })
    ));
    assert!(endpoint.take_log().is_empty());

    // The repaired version equals one from a build that never met a fault.
    let clean_endpoint = Endpoint::start(false, None);
    let clean_dir = checkout(&clean_endpoint.server.url());
    let clean_ws = Workspace::at(clean_dir.path(), Arc::new(NoProgress));
    let clean = build_snapshot(&clean_ws, "demo", false, &PublishOptions::default()).unwrap();
    let Some(PublishOutcome::Published {
        dir: clean_snapshot,
        ..
    }) = clean.outcome
    else {
        panic!("the clean build publishes")
    };
    let hashes = |dir: &Path| {
        let m = Manifest::read(dir).unwrap();
        let tables: BTreeMap<String, String> = m
            .tables
            .into_iter()
            .map(|(name, t)| (name, t.sha256))
            .collect();
        let exports: BTreeMap<String, String> =
            m.exports.into_iter().map(|(f, e)| (f, e.sha256)).collect();
        (tables, exports)
    };
    assert_eq!(hashes(&snapshot), hashes(&clean_snapshot));
}

#[test]
fn allow_partial_publishes_and_the_manifest_says_what_is_missing() {
    let endpoint = Endpoint::start(true, Some(LABEL_TASKS));
    let dir = checkout(&endpoint.server.url());
    let mut ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    ws.allow_partial = true;
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let Some(PublishOutcome::Published { dir: snapshot, .. }) = built.outcome else {
        panic!("--allow-partial publishes")
    };
    let manifest = Manifest::read(&snapshot).unwrap();
    let unfinished = &manifest.provenance["unfinished"];
    let items = unfinished["labels"]["items"].as_u64().unwrap();
    assert!(items > 0, "{unfinished}");
    assert_eq!(
        items, built.run.records["labels"].retry_items,
        "{unfinished}"
    );
    let card = std::fs::read_to_string(snapshot.join("README.md")).unwrap();
    assert!(
        card.contains("## Published with unfinished items"),
        "{card}"
    );
}

#[test]
fn a_rerun_costs_exactly_the_failed_calls() {
    // Faults in the labels stage's tasks only, so no other stage's output (and no prompt) moves.
    let endpoint = Endpoint::start(true, Some(LABEL_TASKS));
    let dir = checkout(&endpoint.server.url());
    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let first = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    assert!(first.outcome.is_none() && first.withheld.is_some());
    let sent = endpoint.take_log();
    let failed: BTreeSet<String> = sent
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(k, _)| k.clone())
        .collect();
    assert!(!failed.is_empty());
    let retry_items = first.run.records["labels"].retry_items;
    assert!(retry_items > 0);

    endpoint.faulty.store(false, Ordering::SeqCst);
    let rerun = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    assert!(matches!(
        rerun.outcome,
        Some(PublishOutcome::Published { .. })
    ));
    let resent: Vec<String> = endpoint.take_log().into_iter().map(|(k, _)| k).collect();
    let resent_set: BTreeSet<String> = resent.iter().cloned().collect();
    assert_eq!(resent.len(), resent_set.len(), "a request was sent twice");
    assert_eq!(
        resent_set, failed,
        "the rerun sends exactly the failed requests"
    );
    // Only the labels stage and what reads it reran.
    let ran: Vec<&str> = rerun
        .run
        .summary
        .iter()
        .filter(|s| s.status != "skipped")
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(ran, ["labels", "export-raguard", "export-confact"]);
}
