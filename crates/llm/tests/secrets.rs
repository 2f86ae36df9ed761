//! With a key set, the key reaches the server and nothing else: not a log line, not the call
//! log, not an error message, not a cache file. (Its own test binary: it installs a global
//! tracing subscriber at TRACE level.)

#[path = "it/common/mod.rs"]
mod common;

use std::path::Path;

use common::Keywords;
use common::keywords;
use noisebench_llm::Llm;
use noisebench_testkit::{FakeServer, KEYWORDS_OK, Reply, capture_logs, openai_config};

#[test]
fn the_key_appears_in_no_log_line_or_file() {
    const VAR: &str = "NOISEBENCH_TEST_SECRET_KEY";
    const KEY: &str = "sk-test-9f8e7d6c5b4a39281706";
    let logs = capture_logs();
    // SAFETY: this test binary has one test and sets the variable before any thread reads it.
    unsafe { std::env::set_var(VAR, KEY) };

    let srv = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = openai_config(&srv.url(), &dir.path().join("cache"));
    cfg["models"]["fake"]["api_key_env"] = VAR.into();
    cfg["models"]["fake"]["max_retries"] = 1.into();
    let llm = Llm::from_value(&cfg, Path::new("/")).unwrap();
    assert!(!format!("{llm:?}").contains(KEY));

    // A success, a careless 401 that echoes the Authorization header, retried 500s, garbage.
    llm.run::<Keywords>("s", keywords("ok")).unwrap();
    srv.push(Reply::EchoAuth);
    let e401 = llm.run::<Keywords>("s", keywords("echo")).unwrap_err();
    srv.push(Reply::Status(500, None, format!("internal: Bearer {KEY}")));
    srv.push(Reply::Status(500, None, format!("internal: Bearer {KEY}")));
    let e500 = llm
        .run::<Keywords>("s", keywords("five hundred"))
        .unwrap_err();
    srv.set_default(Reply::Content(format!("not json {KEY}")));
    let eparse = llm.run::<Keywords>("s", keywords("garbage")).unwrap_err();
    srv.set_default(Reply::Content(KEYWORDS_OK.into()));

    // The key did go to the server, as a bearer token.
    assert!(srv.auths().iter().all(|a| a == &format!("Bearer {KEY}")));
    assert!(srv.requests() >= 6);

    let errors = format!("{e401} {e401:?} {e500} {e500:?} {eparse} {eparse:?}");
    assert!(
        errors.contains("[REDACTED]"),
        "the echoed key was redacted: {errors}"
    );
    assert!(!errors.contains(KEY), "{errors}");

    let calls = llm.drain_call_log();
    assert_eq!(calls.len(), 4);
    let log_json = serde_json::to_string(&calls).unwrap();
    assert!(!log_json.contains(KEY));
    let out = dir.path().join("llm_calls.json");
    std::fs::write(&out, &log_json).unwrap();

    // Every file under the run directory, cache entries decompressed.
    let mut files = 0;
    let mut stack = vec![dir.path().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            files += 1;
            let raw = std::fs::read(&p).unwrap();
            let text = zstd::stream::decode_all(&raw[..]).unwrap_or(raw);
            assert!(
                !String::from_utf8_lossy(&text).contains(KEY),
                "{} holds the key",
                p.display()
            );
        }
    }
    assert!(files >= 2, "the cache entry and the call log were checked");

    let logs = logs.text();
    assert!(
        logs.contains("retrying"),
        "TRACE logs were captured: {logs}"
    );
    assert!(!logs.contains(KEY), "a log line holds the key");
}
