//! The `openai` backend against a fake server: limits, retries, repair, re-asks, cache, budget.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::keywords;
use common::{Keywords, KeywordsOutput};
use noisebench_llm::cache::Cache;
use noisebench_llm::{Llm, LlmError};
use noisebench_testkit::{FakeServer, KEYWORDS_OK, Reply, openai_config, refused_addr};

fn llm(cfg: serde_json::Value) -> Llm {
    Llm::from_value(&cfg, Path::new("/")).unwrap()
}

fn with(mut cfg: serde_json::Value, path: &[&str], v: serde_json::Value) -> serde_json::Value {
    let mut at = &mut cfg;
    for p in &path[..path.len() - 1] {
        at = &mut at[*p];
    }
    at[path[path.len() - 1]] = v;
    cfg
}

fn model(cfg: serde_json::Value, field: &str, v: serde_json::Value) -> serde_json::Value {
    with(cfg, &["models", "fake", field], v)
}

#[test]
fn answers_then_serves_the_same_call_from_cache_without_a_request() {
    let srv = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(openai_config(&srv.url(), dir.path()));
    let a = llm
        .run::<Keywords>("queries", keywords("The moon is cheese."))
        .unwrap();
    assert_eq!(a.value.keywords, vec!["alpha", "beta"]);
    assert_eq!(a.provenance, "openai:fake-model");
    assert!(!a.cache_hit);
    assert_eq!(srv.requests(), 1);
    let b = llm
        .run::<Keywords>("queries", keywords("The moon is cheese."))
        .unwrap();
    assert!(b.cache_hit);
    assert_eq!(b.value, a.value);
    assert_eq!(b.request_hash, a.request_hash);
    assert_eq!(srv.requests(), 1, "a cache hit sends no request");
    // A new handle on the same directory (a resumed run) hits too.
    let again = self::llm(openai_config(&srv.url(), dir.path()));
    assert!(
        again
            .run::<Keywords>("queries", keywords("The moon is cheese."))
            .unwrap()
            .cache_hit
    );
    assert_eq!(srv.requests(), 1);

    let log = llm.drain_call_log();
    assert_eq!(log.len(), 2);
    let miss = log.iter().find(|c| !c.cache_hit).unwrap();
    assert_eq!(
        (
            miss.stage.as_str(),
            miss.task.as_str(),
            miss.prompt_version.as_str()
        ),
        ("queries", "keywords", "2")
    );
    assert_eq!(
        (
            miss.backend.as_str(),
            miss.model.as_str(),
            miss.endpoint.as_str()
        ),
        ("openai", "fake-model", "local")
    );
    assert_eq!(
        (miss.tokens_in, miss.tokens_out, miss.attempts),
        (11, 7, 1),
        "usage reconciled"
    );
    assert_eq!(miss.request_hash, a.request_hash);
    assert!(log.iter().any(|c| c.cache_hit && c.attempts == 0));
    assert_ne!(log[0].id, log[1].id);
    let s = llm.stats();
    assert_eq!(
        (s.calls, s.cache_hits, s.cache_misses, s.failures),
        (2, 1, 1, 0)
    );
    assert!(llm.drain_call_log().is_empty(), "drained");
}

#[test]
fn concurrency_bound_holds() {
    let srv = FakeServer::start_with(
        Reply::Content(KEYWORDS_OK.into()),
        Duration::from_millis(80),
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = model(
        openai_config(&srv.url(), dir.path()),
        "max_concurrency",
        3.into(),
    );
    let llm = llm(cfg);
    let inputs: Vec<_> = (0..15).map(|i| keywords(&format!("claim {i}"))).collect();
    struct Count(std::sync::atomic::AtomicU64);
    impl noisebench_core::ProgressBar for Count {
        fn inc(&self, n: u64) {
            self.0.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
        }
        fn finish(&self) {}
    }
    let bar = Count(Default::default());
    let r = llm.run_batch_with_progress::<Keywords>("s", inputs, &bar);
    assert!(r.iter().all(Result::is_ok));
    assert_eq!(
        bar.0.load(std::sync::atomic::Ordering::SeqCst),
        15,
        "one tick per item"
    );
    assert_eq!(srv.requests(), 15);
    assert_eq!(srv.max_in_flight(), 3, "bound reached, never exceeded");
}

#[test]
fn requests_per_minute_hold() {
    let srv = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    // 600 per minute: a burst of 6, then 589 per minute (one every ~102 ms), so that no sliding
    // minute can hold more than 594 when sent (6 + 589 - 1), 600 with jitter.
    let cfg = model(openai_config(&srv.url(), dir.path()), "rpm", 600.into());
    let cfg = with(cfg, &["models", "fake", "max_concurrency"], 16.into());
    let llm = llm(cfg);
    let start = Instant::now();
    let inputs: Vec<_> = (0..31).map(|i| keywords(&format!("claim {i}"))).collect();
    assert!(
        llm.run_batch::<Keywords>("s", inputs)
            .iter()
            .all(Result::is_ok)
    );
    let took = start.elapsed();
    // 6 at once, 25 more at 589/min.
    assert!(
        took >= Duration::from_millis(2450),
        "31 requests took {took:?}"
    );
    // The same bound on shorter windows: burst + window x rate (+1 for arrival jitter).
    assert!(
        srv.max_in_window(Duration::from_secs(1)) <= 6 + 10 + 1,
        "{}",
        srv.max_in_window(Duration::from_secs(1))
    );
    assert!(
        srv.max_in_window(Duration::from_secs(2)) <= 6 + 20 + 1,
        "{}",
        srv.max_in_window(Duration::from_secs(2))
    );
    assert_eq!(srv.per_minute(), vec![31]);
}

#[test]
fn tokens_per_minute_hold() {
    let srv = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    // 60,000 tokens per minute = 1,000 per second, bucket of 10,000; each call is estimated at
    // its prompt (~150 tokens) plus max_tokens 1,000.
    let cfg = model(openai_config(&srv.url(), dir.path()), "tpm", 60_000.into());
    let cfg = with(cfg, &["max_tokens"], 1000.into());
    let cfg = with(cfg, &["models", "fake", "max_concurrency"], 16.into());
    let llm = llm(cfg);
    let start = Instant::now();
    let inputs: Vec<_> = (0..12).map(|i| keywords(&format!("claim {i}"))).collect();
    assert!(
        llm.run_batch::<Keywords>("s", inputs)
            .iter()
            .all(Result::is_ok)
    );
    let took = start.elapsed();
    // 12 x ~1,150 = ~13,800 tokens: ~10,000 at once, the rest at 1,000/s.
    assert!(took >= Duration::from_millis(2500), "took {took:?}");
    assert!(srv.max_in_window(Duration::from_millis(500)) <= 9);
}

#[test]
fn a_429_is_retried_after_its_retry_after() {
    let srv = FakeServer::start();
    srv.push(Reply::Status(
        429,
        Some("1".into()),
        "{\"error\": \"slow down\"}".into(),
    ));
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(openai_config(&srv.url(), dir.path()));
    let start = Instant::now();
    let a = llm.run::<Keywords>("s", keywords("x")).unwrap();
    assert_eq!(a.value.keywords, vec!["alpha", "beta"]);
    let gap = srv.arrivals()[1].duration_since(srv.arrivals()[0]);
    // retry_base_ms is 20: only Retry-After explains a one-second wait.
    assert!(gap >= Duration::from_millis(990), "gap {gap:?}");
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(llm.drain_call_log()[0].attempts, 2);
}

#[test]
fn server_errors_back_off_exponentially_then_give_up() {
    let srv = FakeServer::start_with(Reply::Status(500, None, "oops".into()), Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let cfg = model(
        openai_config(&srv.url(), dir.path()),
        "retry_base_ms",
        100.into(),
    );
    let llm = llm(cfg);
    let e = llm.run::<Keywords>("s", keywords("x")).unwrap_err();
    assert!(
        matches!(e, LlmError::RetriesExhausted { attempts: 4, .. }),
        "{e:?}"
    );
    assert_eq!(e.reason(), "retries_exhausted");
    let a = srv.arrivals();
    assert_eq!(a.len(), 4, "max_retries 3 = 4 attempts");
    // Equal jitter: delay n is in [base*2^(n-1)/2, base*2^(n-1)].
    let gaps: Vec<Duration> = a.windows(2).map(|w| w[1].duration_since(w[0])).collect();
    for (n, g) in gaps.iter().enumerate() {
        let full = 100u64 << n;
        assert!(*g >= Duration::from_millis(full / 2), "gap {n}: {g:?}");
        assert!(*g < Duration::from_millis(full + 150), "gap {n}: {g:?}");
    }
    // Failures are never cached: the same call goes to the server again.
    srv.set_default(Reply::Content(KEYWORDS_OK.into()));
    let ok = llm.run::<Keywords>("s", keywords("x")).unwrap();
    assert!(!ok.cache_hit);
    assert_eq!(srv.requests(), 5);
    let log = llm.drain_call_log();
    assert_eq!(log.len(), 2);
    let failed: Vec<_> = log.iter().filter_map(|c| c.error.as_deref()).collect();
    assert_eq!(failed.len(), 1);
    assert!(failed[0].starts_with("retries_exhausted"), "{}", failed[0]);
    assert!(log.iter().any(|c| c.error.is_some() && c.attempts == 4));
    assert!(log.iter().any(|c| c.error.is_none() && c.attempts == 1));
}

#[test]
fn a_refused_connection_is_retried_until_the_server_comes_up() {
    let addr = refused_addr();
    let url = format!("http://{addr}/v1");
    let dir = tempfile::tempdir().unwrap();
    // Backoff before the second attempt is 1 to 2 s; the server comes up 0.5 s after the call
    // starts, so the first attempt is refused and the second one is answered.
    let cfg = model(
        openai_config(&url, dir.path()),
        "retry_base_ms",
        2000.into(),
    );
    let cfg = model(cfg, "retry_max_ms", 60_000.into());
    let llm = llm(cfg);
    // Load the tokenizer now, so the first attempt goes out at once.
    noisebench_llm::openai::estimate_tokens(&[]);
    let late = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        FakeServer::start_on(addr, Reply::Content(KEYWORDS_OK.into()), Duration::ZERO)
    });
    let a = llm.run::<Keywords>("s", keywords("x")).unwrap();
    let srv = late.join().unwrap();
    assert_eq!(a.value.keywords, vec!["alpha", "beta"]);
    assert!(!a.cache_hit);
    assert_eq!(
        srv.requests(),
        1,
        "the refused attempt never reached a server"
    );
    let log = llm.drain_call_log();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (
            log[0].attempts,
            log[0].endpoint.as_str(),
            log[0].error.as_deref()
        ),
        (2, "local", None),
        "one refused attempt, one answered"
    );
    assert!(
        log[0].queue_ms >= 1000 && log[0].latency_ms < 1000,
        "the backoff is waiting, not the requests' own time: {} ms queued, {} ms latency",
        log[0].queue_ms,
        log[0].latency_ms
    );
}

#[test]
fn a_refusing_endpoint_is_rested_and_the_live_one_answers() {
    let live = FakeServer::start();
    let dead = format!("http://{}/v1", refused_addr());
    let dir = tempfile::tempdir().unwrap();
    let cfg = model(
        openai_config(&live.url(), dir.path()),
        "endpoints",
        serde_json::json!([{"name": "dead", "url": dead}, {"name": "live", "url": live.url()}]),
    );
    let cfg = model(cfg, "rest_after_failures", 1.into());
    let llm = llm(cfg);
    // Both idle: the first in config order (`dead`) is tried first, refuses, and is rested.
    let a = llm.run::<Keywords>("s", keywords("first")).unwrap();
    assert_eq!(a.value.keywords, vec!["alpha", "beta"]);
    // Still idle, but rested: this call goes straight to `live`.
    llm.run::<Keywords>("s", keywords("second")).unwrap();
    assert_eq!(live.requests(), 2);
    let log = llm.drain_call_log();
    let mut seen: Vec<(i64, &str, Option<&str>)> = log
        .iter()
        .map(|c| (c.attempts, c.endpoint.as_str(), c.error.as_deref()))
        .collect();
    seen.sort();
    assert_eq!(seen, vec![(1, "live", None), (2, "live", None)]);
    let first = log
        .iter()
        .find(|c| c.request_hash == a.request_hash)
        .unwrap();
    assert_eq!(first.attempts, 2, "refused by `dead`, answered by `live`");
}

#[test]
fn a_port_that_never_opens_fails_after_every_retry_and_is_not_cached() {
    let addr = refused_addr();
    let url = format!("http://{addr}/v1");
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(openai_config(&url, dir.path()));
    for _ in 0..2 {
        let e = llm.run::<Keywords>("s", keywords("x")).unwrap_err();
        assert_eq!(e.reason(), "retries_exhausted");
        let LlmError::RetriesExhausted { attempts, last } = &e else {
            panic!("{e:?}");
        };
        assert_eq!(*attempts, 4, "max_retries 3 = 4 attempts");
        assert!(last.starts_with("connection error at `local`: "), "{last}");
        assert!(!last.contains("127.0.0.1"), "no URL in errors: {last}");
    }
    // The failure was not cached: the second call made its four attempts too.
    let log = llm.drain_call_log();
    assert_eq!(log.len(), 2);
    for c in &log {
        assert_eq!((c.attempts, c.cache_hit), (4, false));
        let err = c.error.as_deref().unwrap();
        assert!(
            err.starts_with(
                "retries_exhausted: gave up after 4 attempts: connection error at `local`: "
            ),
            "{err}"
        );
    }
    assert_eq!(llm.stats().failures_by_reason["retries_exhausted"], 2);
    assert_eq!(
        Cache::open(dir.path()).unwrap().keys(),
        Vec::<String>::new()
    );
    // Once the port opens, the same call is sent and answered.
    let srv = FakeServer::start_on(addr, Reply::Content(KEYWORDS_OK.into()), Duration::ZERO);
    let a = llm.run::<Keywords>("s", keywords("x")).unwrap();
    assert!(!a.cache_hit);
    assert_eq!(srv.requests(), 1);
    assert_eq!(llm.drain_call_log()[0].attempts, 1);
}

#[test]
fn other_client_errors_are_not_retried() {
    let srv = FakeServer::start_with(
        Reply::Status(400, None, "{\"error\": \"bad request\"}".into()),
        Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(openai_config(&srv.url(), dir.path()));
    let e = llm.run::<Keywords>("s", keywords("x")).unwrap_err();
    assert!(matches!(e, LlmError::Http { status: 400, .. }), "{e:?}");
    assert_eq!(srv.requests(), 1);
    srv.set_default(Reply::Status(404, None, String::new()));
    assert!(matches!(
        llm.run::<Keywords>("s", keywords("y")).unwrap_err(),
        LlmError::Http { status: 404, .. }
    ));
    assert_eq!(srv.requests(), 2);
}

#[test]
fn a_slow_answer_times_out_and_is_retried() {
    let srv = FakeServer::start();
    srv.push(Reply::Slow(Duration::from_secs(3), KEYWORDS_OK.into()));
    let dir = tempfile::tempdir().unwrap();
    let cfg = model(
        openai_config(&srv.url(), dir.path()),
        "timeout_secs",
        0.5.into(),
    );
    let llm = llm(cfg);
    let start = Instant::now();
    let a = llm.run::<Keywords>("s", keywords("x")).unwrap();
    assert_eq!(a.value.keywords.len(), 2);
    assert!(start.elapsed() < Duration::from_millis(2500));
    assert_eq!(llm.drain_call_log()[0].attempts, 2);
}

#[test]
fn a_truncated_envelope_is_retried() {
    let srv = FakeServer::start();
    srv.push(Reply::Raw(
        r#"{"choices": [{"message": {"content": "{\"keyw"#.into(),
    ));
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(openai_config(&srv.url(), dir.path()));
    assert!(llm.run::<Keywords>("s", keywords("x")).is_ok());
    assert_eq!(srv.requests(), 2);
}

#[test]
fn malformed_output_is_repaired_without_a_new_request() {
    let srv = FakeServer::start_with(
        Reply::Content("Here you go:\n```json\n{\"keywords\": [\"a\", \"b\",],}\n```".into()),
        Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(openai_config(&srv.url(), dir.path()));
    let a = llm.run::<Keywords>("s", keywords("x")).unwrap();
    assert_eq!(
        a.value,
        KeywordsOutput {
            keywords: vec!["a".into(), "b".into()]
        }
    );
    assert_eq!(srv.requests(), 1);
}

#[test]
fn unparseable_output_is_reasked_quoting_the_error() {
    let srv = FakeServer::start();
    srv.push(Reply::Content("{\"keyword\": [\"a\"]}".into()));
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(openai_config(&srv.url(), dir.path()));
    let a = llm.run::<Keywords>("s", keywords("x")).unwrap();
    assert_eq!(a.value.keywords, vec!["alpha", "beta"]);
    assert_eq!(srv.requests(), 2);
    let second = &srv.bodies()[1];
    let msgs = second["messages"].as_array().unwrap();
    assert_eq!(msgs[msgs.len() - 2]["role"], "assistant");
    assert_eq!(msgs[msgs.len() - 2]["content"], "{\"keyword\": [\"a\"]}");
    let reask = msgs[msgs.len() - 1]["content"].as_str().unwrap();
    assert!(reask.contains("missing field `keywords`"), "{reask}");
    let log = llm.drain_call_log();
    assert_eq!(
        (log[0].attempts, log[0].tokens_in),
        (2, 22),
        "both tries counted"
    );
}

#[test]
fn output_that_stays_unusable_fails_with_its_reason_and_is_not_cached() {
    let srv = FakeServer::start_with(
        Reply::Content("I think the keywords are a and b".into()),
        Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(openai_config(&srv.url(), dir.path()));
    let e = llm.run::<Keywords>("s", keywords("x")).unwrap_err();
    assert!(
        matches!(&e, LlmError::Unparseable { tries: 3, detail } if detail.contains("no JSON object")),
        "{e:?}"
    );
    assert_eq!(e.reason(), "unparseable_output");
    assert_eq!(srv.requests(), 3, "max_reasks 2");
    assert!(llm.run::<Keywords>("s", keywords("x")).is_err());
    assert_eq!(srv.requests(), 6, "the failure was not cached");
    let log = llm.drain_call_log();
    assert!(log.iter().all(|c| {
        c.error
            .as_deref()
            .unwrap()
            .starts_with("unparseable_output")
    }));
    assert_eq!(llm.stats().failures_by_reason["unparseable_output"], 2);
}

/// A JSON answer cut off mid-way, inside a well-formed chat-completions envelope.
const TRUNCATED: &str = r#"{"keywords": ["a", "b""#;
/// What the parser says about it (no balanced object, so the repair finds nothing either).
const TRUNCATED_ERROR: &str =
    "no JSON object in the reply (EOF while parsing a list at line 1 column 22)";

#[test]
fn truncated_json_content_is_reasked_quoting_the_parse_error() {
    let srv = FakeServer::start();
    srv.push(Reply::Content(TRUNCATED.into()));
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(openai_config(&srv.url(), dir.path()));
    let a = llm.run::<Keywords>("s", keywords("x")).unwrap();
    assert_eq!(
        a.value.keywords,
        vec!["alpha", "beta"],
        "the re-ask's answer"
    );
    assert_eq!(srv.requests(), 2);
    let bodies = srv.bodies();
    let first = bodies[0]["messages"].as_array().unwrap();
    let second = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(second.len(), first.len() + 2);
    assert_eq!(&second[..first.len()], &first[..]);
    assert_eq!(
        second[first.len()],
        serde_json::json!({"role": "assistant", "content": TRUNCATED})
    );
    assert_eq!(
        second[first.len() + 1],
        serde_json::json!({"role": "user", "content": format!(
            "Your reply could not be used: {TRUNCATED_ERROR}. Reply again with only the JSON \
             object, exactly in the shape asked for, with no other text."
        )})
    );
    let log = llm.drain_call_log();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].attempts, log[0].tokens_in, log[0].tokens_out),
        (2, 22, 14)
    );
    assert_eq!(log[0].error, None);
    // The re-ask's answer is what was cached.
    let b = llm.run::<Keywords>("s", keywords("x")).unwrap();
    assert!(b.cache_hit);
    assert_eq!(b.value, a.value);
    assert_eq!(srv.requests(), 2);
}

#[test]
fn truncated_json_content_that_stays_truncated_fails_after_every_reask() {
    for max_reasks in [0u32, 2] {
        let srv = FakeServer::start_with(Reply::Content(TRUNCATED.into()), Duration::ZERO);
        let dir = tempfile::tempdir().unwrap();
        let cfg = with(
            openai_config(&srv.url(), dir.path()),
            &["max_reasks"],
            max_reasks.into(),
        );
        let llm = llm(cfg);
        let tries = 1 + max_reasks;
        let e = llm.run::<Keywords>("s", keywords("x")).unwrap_err();
        assert_eq!(
            e,
            LlmError::Unparseable {
                tries,
                detail: TRUNCATED_ERROR.into()
            }
        );
        assert_eq!(e.reason(), "unparseable_output");
        assert_eq!(srv.requests(), tries as usize, "max_reasks {max_reasks}");
        // Each re-ask carries every earlier bad reply and the error it got.
        let bodies = srv.bodies();
        let base = bodies[0]["messages"].as_array().unwrap().len();
        for (i, b) in bodies.iter().enumerate() {
            assert_eq!(b["messages"].as_array().unwrap().len(), base + 2 * i);
        }
        let log = llm.drain_call_log();
        assert_eq!(log.len(), 1);
        assert_eq!(
            (log[0].attempts, log[0].tokens_in, log[0].tokens_out),
            (tries as i64, 11 * tries as i64, 7 * tries as i64)
        );
        assert_eq!(
            log[0].error.as_deref(),
            Some(
                format!(
                    "unparseable_output: unusable answer after {tries} tries: {TRUNCATED_ERROR}"
                )
                .as_str()
            )
        );
        // Nothing cached: the same call is sent again, in full.
        assert_eq!(
            Cache::open(dir.path()).unwrap().keys(),
            Vec::<String>::new()
        );
        assert!(llm.run::<Keywords>("s", keywords("x")).is_err());
        assert_eq!(srv.requests(), 2 * tries as usize);
    }
}

#[test]
fn cache_only_mode_fails_on_a_miss_and_serves_hits() {
    let srv = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    let rw = llm(openai_config(&srv.url(), dir.path()));
    rw.run::<Keywords>("s", keywords("seen")).unwrap();
    let ro = llm(with(
        openai_config(&srv.url(), dir.path()),
        &["cache", "mode"],
        "cache-only".into(),
    ));
    assert!(ro.run::<Keywords>("s", keywords("seen")).unwrap().cache_hit);
    let e = ro.run::<Keywords>("s", keywords("unseen")).unwrap_err();
    assert_eq!(e.reason(), "cache_miss");
    assert_eq!(srv.requests(), 1);
}

#[test]
fn max_cost_stops_new_calls_and_the_run_resumes_from_the_cache() {
    let srv = FakeServer::start_with(
        Reply::Content(KEYWORDS_OK.into()),
        Duration::from_millis(30),
    );
    let dir = tempfile::tempdir().unwrap();
    // 11 + 7 tokens at $1,000 per million each = $0.018 per call; the budget allows two calls.
    let cfg = openai_config(&srv.url(), dir.path());
    let cfg = model(
        cfg,
        "price",
        serde_json::json!({"input_per_million": 1000.0, "output_per_million": 1000.0}),
    );
    let cfg = model(cfg, "max_concurrency", 1.into());
    let cfg = with(cfg, &["max_cost"], 0.03.into());
    let llm = llm(cfg.clone());
    let inputs: Vec<_> = (0..6).map(|i| keywords(&format!("claim {i}"))).collect();
    let r = llm.run_batch::<Keywords>("s", inputs.clone());
    let ok = r.iter().filter(|x| x.is_ok()).count();
    assert_eq!(ok, 2);
    assert!(
        r.iter()
            .filter_map(|x| x.as_ref().err())
            .all(|e| e.reason() == "budget_exhausted")
    );
    assert_eq!(srv.requests(), 2);
    assert!((llm.spent_usd() - 0.036).abs() < 1e-9);
    assert!((llm.stats().cost_usd - 0.036).abs() < 1e-9);
    // A new run with a fresh budget resumes: what finished comes from the cache.
    let again = self::llm(cfg);
    let r2 = again.run_batch::<Keywords>("s", inputs);
    assert_eq!(
        r2.iter()
            .filter(|x| matches!(x, Ok(a) if a.cache_hit))
            .count(),
        2
    );
    assert_eq!(r2.iter().filter(|x| x.is_ok()).count(), 4);
}

#[test]
fn requests_spread_over_endpoints_and_a_failing_one_is_rested() {
    let a = FakeServer::start_with(
        Reply::Content(KEYWORDS_OK.into()),
        Duration::from_millis(60),
    );
    let b = FakeServer::start_with(
        Reply::Content(KEYWORDS_OK.into()),
        Duration::from_millis(60),
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = openai_config(&a.url(), dir.path());
    let cfg = model(
        cfg,
        "endpoints",
        serde_json::json!([{"name": "a", "url": a.url()}, {"name": "b", "url": b.url()}]),
    );
    let llm = llm(cfg.clone());
    let inputs: Vec<_> = (0..12).map(|i| keywords(&format!("spread {i}"))).collect();
    assert!(
        llm.run_batch::<Keywords>("s", inputs)
            .iter()
            .all(Result::is_ok)
    );
    assert_eq!(a.requests() + b.requests(), 12);
    assert!(
        a.requests() >= 4 && b.requests() >= 4,
        "{} / {}",
        a.requests(),
        b.requests()
    );

    // Endpoint `a` now fails every time: after 2 failures it rests, `b` serves the rest.
    a.set_default(Reply::Status(503, None, String::new()));
    let cfg = model(cfg, "rest_after_failures", 2.into());
    let cfg = model(cfg, "max_concurrency", 1.into());
    let llm = self::llm(cfg);
    let before = (a.requests(), b.requests());
    let inputs: Vec<_> = (0..10).map(|i| keywords(&format!("rest {i}"))).collect();
    assert!(
        llm.run_batch::<Keywords>("s", inputs)
            .iter()
            .all(Result::is_ok)
    );
    assert_eq!(a.requests() - before.0, 2, "rested after two failures");
    assert_eq!(b.requests() - before.1, 10);
}

#[test]
fn json_schema_is_sent_only_when_the_server_supports_it() {
    let srv = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    llm(openai_config(&srv.url(), dir.path()))
        .run::<Keywords>("s", keywords("x"))
        .unwrap();
    let cfg = model(
        openai_config(&srv.url(), dir.path()),
        "json_schema",
        true.into(),
    );
    llm(cfg).run::<Keywords>("s", keywords("x")).unwrap();
    let bodies = srv.bodies();
    assert_eq!(
        srv.requests(),
        2,
        "a different request format is a different cache key"
    );
    assert!(bodies[0].get("response_format").is_none());
    let rf = &bodies[1]["response_format"];
    assert_eq!(rf["type"], "json_schema");
    assert_eq!(rf["json_schema"]["name"], "keywords");
    assert_eq!(rf["json_schema"]["schema"]["required"][0], "keywords");
    assert_eq!(bodies[0]["model"], "fake-model");
    assert_eq!(bodies[0]["temperature"], 0.0);
    assert_eq!(bodies[0]["max_tokens"], 64);
}

#[test]
fn embeddings_go_through_limits_and_cache() {
    let srv = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    let cfg = with(
        openai_config(&srv.url(), dir.path()),
        &["embeddings"],
        serde_json::json!({"backend": "openai", "model": "fake", "batch_size": 2}),
    );
    let llm = llm(cfg);
    assert_eq!(llm.embedder_name(), "openai:fake-model");
    let texts: Vec<String> = ["one", "two", "three", "one"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let e = llm.embed("graph", &texts).unwrap();
    assert_eq!(e.provenance, "openai:fake-model");
    assert_eq!(e.vectors.len(), 4);
    assert_eq!(e.vectors[0], e.vectors[3]);
    let mut want = noisebench_testkit::fake_vector("three");
    let n = want.iter().map(|x| x * x).sum::<f32>().sqrt();
    want.iter_mut().for_each(|x| *x /= n);
    assert_eq!(e.vectors[2], want, "ordered by index, normalised");
    assert_eq!(srv.requests(), 2, "three distinct texts in batches of two");
    let again = llm.embed("graph", &texts).unwrap();
    assert_eq!(again, e);
    assert_eq!(srv.requests(), 2, "served from the cache");
}

/// Answers a keywords request with the claim's last word, and refuses claims ending in "bad"
/// with a 400 (a failure that is not retried).
fn echo_last_word(body: &serde_json::Value) -> Reply {
    let user = noisebench_testkit::first_message(body, "user");
    let claim = user
        .lines()
        .find_map(|l| l.strip_prefix("Claim: "))
        .unwrap_or("");
    let last = claim.trim_end_matches('.').rsplit(' ').next().unwrap_or("");
    if last == "bad" {
        return Reply::Status(400, None, "{\"error\": \"refused\"}".into());
    }
    Reply::Content(serde_json::json!({ "keywords": [last] }).to_string())
}

#[test]
fn identical_requests_in_a_batch_are_sent_once_and_counted_once() {
    let srv = FakeServer::answering(echo_last_word);
    // Slow enough that, unmerged, the copies of a request would all be in flight at once.
    *srv.state.latency.lock().unwrap() = Duration::from_millis(50);
    let dir = tempfile::tempdir().unwrap();
    let cfg = model(
        openai_config(&srv.url(), dir.path()),
        "price",
        serde_json::json!({"input_per_million": 1_000_000.0, "output_per_million": 2_000_000.0}),
    );
    let llm = llm(cfg);
    let words = ["one", "two", "one", "three", "two", "one", "bad", "bad"];
    let inputs: Vec<_> = words
        .iter()
        .map(|w| keywords(&format!("claim {w}")))
        .collect();
    let results = llm.run_batch::<Keywords>("s", inputs);
    assert_eq!(srv.requests(), 4, "one request per distinct input");
    for (w, r) in words.iter().zip(&results) {
        if *w == "bad" {
            assert_eq!(r.as_ref().unwrap_err().reason(), "http_error", "{w}");
        } else {
            assert_eq!(r.as_ref().unwrap().value.keywords, vec![w.to_string()]);
        }
    }
    let ok: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(ok[0].request_hash, ok[2].request_hash);
    assert_eq!(ok[0].request_hash, ok[5].request_hash);
    // The first item of each request sent it; the others were served from it.
    assert_eq!(
        ok.iter().map(|a| a.cache_hit).collect::<Vec<_>>(),
        vec![false, false, true, false, true, true]
    );

    let log = llm.drain_call_log();
    assert_eq!(log.len(), words.len(), "one record per item");
    let sent: Vec<_> = log.iter().filter(|c| c.attempts > 0).collect();
    assert_eq!(sent.len(), 4);
    let shared: Vec<_> = log.iter().filter(|c| c.attempts == 0).collect();
    assert!(shared.iter().all(|c| c.tokens_in == 0
        && c.tokens_out == 0
        && c.cost_usd == Some(0.0)
        && c.latency_ms == 0));
    assert_eq!(shared.iter().filter(|c| c.cache_hit).count(), 3);
    assert_eq!(
        shared.iter().filter(|c| c.error.is_some()).count(),
        1,
        "the item that shared the refused request fails with it"
    );
    let tokens: (i64, i64) = log
        .iter()
        .fold((0, 0), |(i, o), c| (i + c.tokens_in, o + c.tokens_out));
    assert_eq!(tokens, (3 * 11, 3 * 7), "three answered requests");
    let cost: f64 = log.iter().filter_map(|c| c.cost_usd).sum();
    assert!((cost - 3.0 * 25.0).abs() < 1e-9, "{cost}");
    assert!((llm.spent_usd() - cost).abs() < 1e-9);
    let s = llm.stats();
    assert_eq!((s.calls, s.tokens_in, s.tokens_out), (8, 33, 21));
    assert!((s.cost_usd - cost).abs() < 1e-9);

    // A failure is neither cached nor remembered: the next batch asks again.
    let again = llm.run_batch::<Keywords>("s", vec![keywords("claim bad"), keywords("claim one")]);
    assert!(again[0].is_err() && again[1].as_ref().unwrap().cache_hit);
    assert_eq!(srv.requests(), 5);
}

#[test]
fn with_the_cache_off_a_run_still_sends_each_request_once() {
    let srv = FakeServer::answering(echo_last_word);
    let dir = tempfile::tempdir().unwrap();
    let cfg = with(
        openai_config(&srv.url(), dir.path()),
        &["cache"],
        serde_json::json!({"mode": "off"}),
    );
    let llm = llm(cfg);
    let batch = |words: &[&str]| {
        llm.run_batch::<Keywords>(
            "s",
            words
                .iter()
                .map(|w| keywords(&format!("claim {w}")))
                .collect(),
        )
    };
    assert!(batch(&["one", "two", "bad"])[..2].iter().all(Result::is_ok));
    assert_eq!(srv.requests(), 3);
    let r = batch(&["two", "three", "one", "bad"]);
    assert_eq!(
        srv.requests(),
        5,
        "only the new request and the failed one are sent again"
    );
    assert_eq!(r[0].as_ref().unwrap().value.keywords, vec!["two"]);
    assert!(r[0].as_ref().unwrap().cache_hit && r[2].as_ref().unwrap().cache_hit);
    assert!(!r[1].as_ref().unwrap().cache_hit);
    assert_eq!(r[3].as_ref().unwrap_err().reason(), "http_error");
    // The async form remembers too.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let a = rt
        .block_on(llm.call::<Keywords>("s", keywords("claim three")))
        .unwrap();
    assert!(a.cache_hit);
    assert_eq!(srv.requests(), 5);
    assert!(
        dir.path().read_dir().unwrap().next().is_none(),
        "nothing written to disk"
    );
    let log = llm.drain_call_log();
    let tokens: i64 = log.iter().map(|c| c.tokens_in).sum();
    assert_eq!(tokens, 3 * 11, "each answered request counted once");
}

#[test]
fn latency_is_the_request_s_own_and_waiting_is_queue_time() {
    let srv = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    // 120 per minute: a burst of one, then one request every ~0.5 s.
    let cfg = model(openai_config(&srv.url(), dir.path()), "rpm", 120.into());
    let cfg = with(
        cfg,
        &["embeddings"],
        serde_json::json!({"backend": "openai", "model": "fake", "batch_size": 1}),
    );
    let llm = llm(cfg);
    let inputs: Vec<_> = (0..4).map(|i| keywords(&format!("claim {i}"))).collect();
    assert!(
        llm.run_batch::<Keywords>("s", inputs)
            .iter()
            .all(Result::is_ok)
    );
    let texts: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
    llm.embed("s", &texts).unwrap();
    let log = llm.drain_call_log();
    assert_eq!(log.len(), 6);
    for task in ["keywords", "embedding"] {
        let calls: Vec<_> = log.iter().filter(|c| c.task == task).collect();
        assert!(
            calls.iter().all(|c| c.latency_ms < 400),
            "{task}: the server answers at once: {:?}",
            calls.iter().map(|c| c.latency_ms).collect::<Vec<_>>()
        );
        let most = calls.iter().map(|c| c.queue_ms).max().unwrap();
        assert!(
            most >= 400,
            "{task}: the limiter's wait is queue time: {most}"
        );
    }
    let queued: i64 = log
        .iter()
        .filter(|c| c.task == "keywords")
        .map(|c| c.queue_ms)
        .sum();
    // The four chat requests waited about 0 + 0.5 + 1.0 + 1.5 s.
    assert!(queued >= 2500, "{queued}");

    // A Retry-After is waiting too; both attempts' own time is latency.
    let srv = FakeServer::start();
    srv.push(Reply::Status(429, Some("1".into()), "{}".into()));
    let dir = tempfile::tempdir().unwrap();
    let llm = self::llm(openai_config(&srv.url(), dir.path()));
    llm.run::<Keywords>("s", keywords("x")).unwrap();
    let log = llm.drain_call_log();
    assert_eq!(log[0].attempts, 2);
    assert!(log[0].latency_ms < 400, "{}", log[0].latency_ms);
    assert!(log[0].queue_ms >= 900, "{}", log[0].queue_ms);
}

/// One call answered with 1,000 prompt tokens of which 800 came from the provider's prompt
/// cache, and 100 out, at `price`: its call record and the handle.
fn cached_call(price: serde_json::Value) -> (noisebench_core::LlmCall, Llm) {
    let srv = FakeServer::start_with(
        Reply::ContentWithCachedUsage(KEYWORDS_OK.into(), 1000, 100, 800),
        Duration::ZERO,
    );
    let dir = tempfile::tempdir().unwrap();
    let llm = llm(model(openai_config(&srv.url(), dir.path()), "price", price));
    llm.run::<Keywords>("s", keywords("cached claim")).unwrap();
    let mut log = llm.drain_call_log();
    assert_eq!(log.len(), 1);
    (log.remove(0), llm)
}

#[test]
fn cached_prompt_tokens_are_recorded_and_priced_at_the_cached_rate() {
    let (call, llm) = cached_call(serde_json::json!({"input_per_million": 2.0,
        "cached_input_per_million": 0.5, "output_per_million": 8.0}));
    assert_eq!(
        (call.tokens_in, call.tokens_cached, call.tokens_out),
        (1000, 800, 100)
    );
    // 200 at 2.0 + 800 at 0.5 + 100 at 8.0, per million.
    let want = (200.0 * 2.0 + 800.0 * 0.5 + 100.0 * 8.0) / 1e6;
    assert!((call.cost_usd.unwrap() - want).abs() < 1e-12);
    assert_eq!(llm.stats().tokens_cached, 800);
    assert!((llm.spent_usd() - want).abs() < 1e-12);
}

#[test]
fn without_a_cached_price_cached_tokens_cost_the_full_input_price() {
    let (call, _) =
        cached_call(serde_json::json!({"input_per_million": 2.0, "output_per_million": 8.0}));
    assert_eq!(call.tokens_cached, 800);
    let want = (1000.0 * 2.0 + 100.0 * 8.0) / 1e6;
    assert!((call.cost_usd.unwrap() - want).abs() < 1e-12);
}
