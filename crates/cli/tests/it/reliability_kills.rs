//! Kills: the demo (both tracks, every LLM task against a fake OpenAI endpoint with latency) is
//! SIGKILLed at seeded random moments (after a random number of the requests still to come), resumed each time, and the version it finally publishes
//! is compared file by file (sha256) with an uninterrupted build's. The endpoint counts requests:
//! after each kill, the requests sent again (asked before the kill, not answered into the cache)
//! are at most the configured concurrency: the items between their request and the cache write
//! of their answer when the process died.
//!
//! CI runs 1 kill; `NOISEBENCH_KILLS=20 cargo test -p noisebench-cli --test it reliability_kills::
//! -- --nocapture` (`just reliability`) runs the campaign; `NOISEBENCH_KILL_SEED` picks the
//! moments.

use crate::reliability_common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use noisebench_testkit::{FakeServer, Reply};
use reliability_common::{
    CONCURRENCY, Seeded, answer, checkout, count_from_env, only_version, request_key, version_files,
};

/// Per request, so a build takes long enough to be killed in the middle of its calls.
const LATENCY: Duration = Duration::from_millis(5);

fn build(root: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .arg("--skip-preflight")
        .args(["build-snapshot", "--root"])
        .arg(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn keys_since(server: &FakeServer, from: usize) -> Vec<String> {
    server.bodies()[from..]
        .iter()
        .filter(|b| !b["messages"].is_null())
        .map(request_key)
        .collect()
}

#[test]
fn seeded_kills_resume_to_the_uninterrupted_snapshot_resending_at_most_the_requests_in_flight() {
    let kills = count_from_env("NOISEBENCH_KILLS", 1);
    let seed = count_from_env("NOISEBENCH_KILL_SEED", 19) as u64;
    let server = FakeServer::start_with(Reply::rule(|b| Reply::Content(answer(b))), LATENCY);

    // The uninterrupted build: its files, requests and duration.
    let whole = checkout(&server.url(), "");
    let started = Instant::now();
    build(whole.path());
    let duration = started.elapsed();
    let reference = keys_since(&server, 0);
    let distinct: BTreeSet<&String> = reference.iter().collect();
    assert_eq!(distinct.len(), reference.len(), "a request was sent twice");
    let tasks: BTreeSet<String> = server
        .bodies()
        .iter()
        .map(|b| reliability_common::task_of(b).to_string())
        .collect();
    for task in ["triplets", "qa_single", "query_grammar", "stance_url"] {
        assert!(tasks.contains(task), "{task} not asked: {tasks:?}");
    }
    let expected = version_files(&only_version(whole.path()));

    // The same build, killed `kills` times at seeded moments.
    let killed = checkout(&server.url(), "");
    let mut rng = Seeded(seed);
    let mut sent: BTreeSet<String> = BTreeSet::new();
    let mut lost: Vec<usize> = Vec::new();
    let mut last_sent: BTreeMap<String, usize> = BTreeMap::new();
    let mut moments: Vec<usize> = Vec::new();
    let mut total = 0usize;
    // Each kill lands after a seeded random number of the requests still to come (so every
    // kill, not only the first, hits the build in the middle of its LLM calls).
    let mut attempt = |kill_after: Option<usize>, sent: &mut BTreeSet<String>| {
        let from = server.requests();
        match kill_after {
            Some(after) => {
                let mut child = Command::new(env!("CARGO_BIN_EXE_noisebench"))
                    .arg("--skip-preflight")
                    .args(["build-snapshot", "--root"])
                    .arg(killed.path())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                let started = Instant::now();
                while server.requests() < from + after
                    && child.try_wait().unwrap().is_none()
                    && started.elapsed() < Duration::from_secs(300)
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                child.kill().unwrap(); // SIGKILL: no destructor, no cleanup
                child.wait().unwrap();
                // Requests the dead process had in flight may still be arriving.
                std::thread::sleep(LATENCY * 2);
            }
            None => build(killed.path()),
        }
        let keys: BTreeSet<String> = keys_since(&server, from).into_iter().collect();
        // A request sent again was lost by the last attempt that sent it: charge that kill.
        let n = lost.len();
        for k in &keys {
            if let Some(&earlier) = last_sent.get(k) {
                lost[earlier] += 1;
            }
            last_sent.insert(k.clone(), n);
        }
        lost.push(0);
        total += keys.len();
        sent.extend(keys);
    };
    for _ in 0..kills {
        let remaining = reference.len().saturating_sub(sent.len()).max(1);
        let after = 1 + rng.below(remaining as u64) as usize;
        moments.push(after);
        attempt(Some(after), &mut sent);
    }
    attempt(None, &mut sent);
    // Per kill (the last attempt was not killed).
    lost.pop();
    let repeated = lost;
    let got = version_files(&only_version(killed.path()));
    let per_kill_max = repeated.iter().copied().max().unwrap_or(0);
    eprintln!(
        "kills: {kills} (seed {seed}, uninterrupted build {:.1} s, {} requests); requests over the killed builds: {total}; killed after {moments:?} more requests; repeated per kill: {repeated:?} (max {per_kill_max}, concurrency {CONCURRENCY})",
        duration.as_secs_f64(),
        reference.len(),
    );
    for (n, again) in repeated.iter().enumerate() {
        assert!(
            *again <= CONCURRENCY,
            "after kill {}: {again} requests sent again, more than the {CONCURRENCY} in flight",
            n + 1
        );
    }
    assert_eq!(
        sent.len(),
        distinct.len(),
        "the killed builds asked other things than the uninterrupted one"
    );
    let differing: BTreeMap<&String, (&String, Option<&String>)> = expected
        .iter()
        .filter(|(f, h)| got.get(*f) != Some(h))
        .map(|(f, h)| (f, (h, got.get(f))))
        .collect();
    if !differing.is_empty() {
        let keep = std::env::temp_dir().join("noisebench-kill-diff");
        let _ = std::fs::remove_dir_all(&keep);
        for (name, root) in [("whole", whole.path()), ("killed", killed.path())] {
            for f in differing.keys() {
                let to = keep.join(name).join(f);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(only_version(root).join(f), to).unwrap();
            }
        }
        panic!("files differ (copies in {}): {differing:?}", keep.display());
    }
    assert_eq!(got.len(), expected.len());
    let report = noisebench_snapshot::verify(&only_version(killed.path()));
    assert!(report.ok(), "{:?}", report.problems);
}
