//! Faults with the default retries: the demo (both tracks) against an endpoint on 127.0.0.1 that
//! fails 20% of calls with a mix of 429 with Retry-After, 500, timeouts (no reply within the
//! per-attempt timeout), connection resets (closed without a reply), malformed JSON, truncated
//! bodies and valid JSON of the wrong shape; and, for a few label items, answers of the wrong
//! shape every time (a permanent failure). The build completes and publishes; every permanent
//! failure is a counted drop with its reason; no failure is cached; a forced rerun with the
//! endpoint healthy sends exactly the calls that never got an answer.
//!
//! The server is a plain TCP one (not axum) so it can cut a connection or a body short.
//! `NOISEBENCH_FAULT_RUNS=N` (`just reliability`) repeats the faulty build over N seeds.

use crate::reliability_common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::{DropRecord, NoProgress, StageSummary};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{PublishOptions, PublishOutcome};
use reliability_common::{answer, checkout, count_from_env, hash_of, request_key, task_of};
use serde_json::{Value, json};

/// The per-attempt timeout the model is given; a `Timeout` fault answers after longer.
const TIMEOUT_SECS: f64 = 1.0;

/// Requests in flight: backoff waits (half a second and up, a second after a 429) overlap.
const CONCURRENCY: usize = 32;

/// The label tasks whose items may fail for good (wrong shape every time): the labels stage
/// feeds only the exports, so the other stages' prompts do not depend on these failures.
const LABEL_TASKS: &[&str] = &["stance_url", "stance_text", "stance_reasoned"];

/// Stages where every item read is a row out or a counted drop.
const ONE_TO_ONE: [&str; 6] = [
    "claims-scrape",
    "claims-import",
    "reports",
    "labels",
    "export-raguard",
    "export-confact",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    TooMany,
    Internal,
    Timeout,
    Reset,
    Malformed,
    Truncated,
    WrongShape,
}

const FAULTS: [Fault; 7] = [
    Fault::TooMany,
    Fault::Internal,
    Fault::Timeout,
    Fault::Reset,
    Fault::Malformed,
    Fault::Truncated,
    Fault::WrongShape,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Answered,
    Failed(Fault),
    /// The answer's content has the wrong shape, on every attempt at this item.
    Permanent,
}

#[derive(Debug, Clone)]
struct Sent {
    key: String,
    task: String,
    /// A re-ask (the conversation holds an earlier, unusable answer).
    reask: bool,
    outcome: Outcome,
}

struct State {
    faulty: AtomicBool,
    seed: u64,
    attempts: Mutex<BTreeMap<String, u64>>,
    log: Mutex<Vec<Sent>>,
}

struct FaultServer {
    addr: SocketAddr,
    state: Arc<State>,
}

impl FaultServer {
    fn start(seed: u64) -> FaultServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            faulty: AtomicBool::new(true),
            seed,
            attempts: Mutex::new(BTreeMap::new()),
            log: Mutex::new(Vec::new()),
        });
        let st = state.clone();
        // Serves until the test binary exits (each connection on its own thread).
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let st = st.clone();
                std::thread::spawn(move || serve(stream, &st));
            }
        });
        FaultServer { addr, state }
    }

    fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn take_log(&self) -> Vec<Sent> {
        std::mem::take(&mut *self.state.log.lock().unwrap())
    }
}

/// One connection: requests in turn until the client closes it or a fault cuts it.
fn serve(stream: TcpStream, st: &State) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header == "\r\n" {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if !line.starts_with("POST ") {
            // The LLM layer asks a server its context size (llama.cpp's `/props`, vLLM's
            // `/v1/models`); this endpoint says nothing of it, and such a probe is not a call.
            if stream
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                .is_err()
            {
                return;
            }
            continue;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (outcome, content) = decide(st, &request);
        let ok = |body: String| (200, body);
        let (status, reply, extra) = match outcome {
            Outcome::Answered => {
                let (s, b) = ok(envelope(&content));
                (s, b, "")
            }
            Outcome::Permanent => (200, envelope(r#"{"unexpected": true}"#), ""),
            Outcome::Failed(Fault::TooMany) => (
                429,
                r#"{"error": "slow down"}"#.into(),
                "Retry-After: 1\r\n",
            ),
            Outcome::Failed(Fault::Internal) => (500, r#"{"error": "internal"}"#.into(), ""),
            Outcome::Failed(Fault::Timeout) => {
                std::thread::sleep(Duration::from_secs_f64(TIMEOUT_SECS + 0.5));
                return;
            }
            Outcome::Failed(Fault::Reset) => {
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return;
            }
            Outcome::Failed(Fault::Malformed) => (
                200,
                r#"{"id": "x", "choices": [{"message": {"content": "#.into(),
                "",
            ),
            Outcome::Failed(Fault::Truncated) => {
                let full = envelope(&content);
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    full.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&full.as_bytes()[..full.len() / 2]);
                let _ = stream.flush();
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return;
            }
            Outcome::Failed(Fault::WrongShape) => (
                200,
                r#"{"object": "list", "data": [{"embedding": [0.1]}]}"#.into(),
                "",
            ),
        };
        let reason = match status {
            200 => "OK",
            429 => "Too Many Requests",
            _ => "Internal Server Error",
        };
        let head = format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}\r\n",
            reply.len()
        );
        if stream.write_all(head.as_bytes()).is_err() || stream.write_all(reply.as_bytes()).is_err()
        {
            return;
        }
    }
}

fn envelope(content: &str) -> String {
    json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
    .to_string()
}

/// What this attempt gets: a function of the request, how many times it came before, and the
/// seed, so the fault pattern is the same in every run with that seed.
fn decide(st: &State, request: &Value) -> (Outcome, String) {
    let key = request_key(request);
    let task = task_of(request).to_string();
    let reask = request["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "assistant"));
    let attempt = {
        let mut attempts = st.attempts.lock().unwrap();
        let n = attempts.entry(key.clone()).or_default();
        *n += 1;
        *n
    };
    let faulty = st.faulty.load(Ordering::SeqCst);
    // An item (its first user message) of a label task that fails for good: 1 in 25.
    let item = noisebench_testkit::first_message(request, "user");
    let permanent = faulty
        && LABEL_TASKS.contains(&task.as_str())
        && hash_of(&format!("{}{item}", st.seed)).is_multiple_of(25);
    let h = hash_of(&format!("{}/{attempt}/{key}", st.seed));
    let outcome = if permanent {
        Outcome::Permanent
    } else if faulty && h.is_multiple_of(5) {
        Outcome::Failed(FAULTS[((h >> 8) % FAULTS.len() as u64) as usize])
    } else {
        Outcome::Answered
    };
    st.log.lock().unwrap().push(Sent {
        key,
        task,
        reask,
        outcome,
    });
    (outcome, answer(request))
}

fn faulty_build_completes(seed: u64) -> String {
    let server = FaultServer::start(seed);
    let dir = checkout(
        &server.url(),
        &format!("timeout_secs = {TIMEOUT_SECS}\nmax_concurrency = {CONCURRENCY}"),
    );
    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let started = Instant::now();
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(
        built.withheld, None,
        "the default retries absorb the faults"
    );
    assert!(matches!(
        built.outcome,
        Some(PublishOutcome::Published { .. })
    ));
    let first = server.take_log();

    // The fault mix: every kind happened, about a fifth of the calls failed.
    let mut mix: BTreeMap<String, usize> = BTreeMap::new();
    for s in &first {
        let name = match s.outcome {
            Outcome::Answered => continue,
            Outcome::Failed(f) => format!("{f:?}"),
            Outcome::Permanent => "permanent_wrong_shape".into(),
        };
        *mix.entry(name).or_default() += 1;
    }
    let transient: usize = first
        .iter()
        .filter(|s| matches!(s.outcome, Outcome::Failed(_)))
        .count();
    for f in FAULTS {
        assert!(mix.contains_key(&format!("{f:?}")), "no {f:?} in {mix:?}");
    }
    assert!(
        transient * 7 > first.len() && transient * 3 < first.len(),
        "{transient} of {} calls failed",
        first.len()
    );

    // Every item of a one-to-one stage is a row or a counted drop; every permanently failed
    // label item is a drop with its reason.
    let run_dir = dir.path().join("work/demo");
    let summary: Vec<StageSummary> =
        table_io::read_rows(&run_dir.join("run_summary.parquet")).unwrap();
    for s in summary
        .iter()
        .filter(|s| ONE_TO_ONE.contains(&s.kind.as_str()))
    {
        assert_eq!(s.items_in, s.items_out + s.items_dropped, "{s:?}");
    }
    let labels = &built.run.records["labels"];
    assert_eq!(labels.items_in, labels.items_out + labels.items_dropped);
    let drops: Vec<DropRecord> =
        table_io::read_rows(&run_dir.join("labels/drops.parquet")).unwrap();
    let unparseable: Vec<&DropRecord> = drops
        .iter()
        .filter(|d| d.reason.contains("llm_unparseable_output"))
        .collect();
    let permanent_items: BTreeSet<&String> = first
        .iter()
        .filter(|s| s.outcome == Outcome::Permanent && !s.reask)
        .map(|s| &s.key)
        .collect();
    assert!(!permanent_items.is_empty(), "no item failed for good");
    assert!(
        !unparseable.is_empty() && unparseable.iter().all(|d| !d.retry && !d.detail.is_empty()),
        "{drops:?}"
    );
    let llm = noisebench_cli::LlmTotals::of_run(&run_dir).unwrap();
    assert!(llm.failures > 0, "the call log counts the failed items");
    // Items whose requests hash alike share one request (two claims with the same text linked
    // to one document ask the same thing): a request that fails for good fails each of its
    // items, so the drops can outnumber the failed requests, never the failed items.
    let calls: Vec<noisebench_core::LlmCall> =
        table_io::read_rows(&run_dir.join("labels/llm_calls.parquet")).unwrap();
    let failed: Vec<&noisebench_core::LlmCall> = calls
        .iter()
        .filter(|c| {
            c.error
                .as_deref()
                .is_some_and(|e| e.contains("unparseable"))
        })
        .collect();
    let failed_requests: BTreeSet<&str> = failed.iter().map(|c| c.request_hash.as_str()).collect();
    let shared = failed.iter().filter(|c| c.attempts == 0).count();
    eprintln!(
        "labels: {} failed items over {} failed requests ({shared} items shared another's request), {} drops, {} permanent request keys",
        failed.len(),
        failed_requests.len(),
        unparseable.len(),
        permanent_items.len()
    );
    assert_eq!(failed_requests.len(), permanent_items.len());
    assert_eq!(unparseable.len(), failed.len());

    // No failure is cached: with the endpoint healthy, a forced rerun sends exactly the calls
    // that never got an answer (the first asks of the failed items), and nothing answered.
    server.state.faulty.store(false, Ordering::SeqCst);
    let rerun = build_snapshot(&ws, "demo", true, &PublishOptions::default()).unwrap();
    assert!(rerun.outcome.is_some());
    let second = server.take_log();
    let answered: BTreeSet<&String> = first
        .iter()
        .filter(|s| s.outcome == Outcome::Answered)
        .map(|s| &s.key)
        .collect();
    let never_answered: BTreeSet<&String> = first
        .iter()
        .filter(|s| !s.reask && !answered.contains(&s.key))
        .map(|s| &s.key)
        .collect();
    let resent: BTreeSet<&String> = second.iter().map(|s| &s.key).collect();
    assert_eq!(resent.len(), second.len(), "a request was sent twice");
    let by_task = |keys: Vec<&&String>| {
        let mut tasks: BTreeMap<String, usize> = BTreeMap::new();
        for k in keys {
            let task = serde_json::from_str::<Value>(k).unwrap()[0].to_string();
            *tasks.entry(task).or_default() += 1;
        }
        tasks
    };
    let extra = by_task(resent.difference(&never_answered).collect());
    let missing = by_task(never_answered.difference(&resent).collect());
    assert!(
        extra.is_empty() && missing.is_empty(),
        "the rerun sends exactly the calls that failed: sent again although answered {extra:?}, not sent again although failed (cached?) {missing:?}"
    );
    assert!(second.iter().all(|s| s.outcome == Outcome::Answered));
    let tasks: BTreeSet<&str> = first.iter().map(|s| s.task.as_str()).collect();
    format!(
        "seed {seed}: {:.0} s, {} calls over tasks {tasks:?}, {transient} transient faults {mix:?}, {} items failed for good ({} drops `llm_unparseable_output` in labels); rerun at 0%: {} calls, all of them calls that had failed",
        seconds,
        first.len(),
        permanent_items.len(),
        unparseable.len(),
        second.len()
    )
}

#[test]
fn a_fifth_of_calls_failing_in_every_way_costs_only_counted_drops_and_reruns_of_the_failed() {
    let runs = count_from_env("NOISEBENCH_FAULT_RUNS", 1);
    for seed in 0..runs as u64 {
        let figures = faulty_build_completes(19 + seed);
        eprintln!("faults: {figures}");
    }
}
