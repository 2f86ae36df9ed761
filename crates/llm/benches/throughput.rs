//! Throughput against a rate limit, and the overhead of a cache hit.
//!
//! A fake OpenAI-compatible server on 127.0.0.1 answers every chat completion after 50 ms. The
//! model is limited to 6,000 requests per minute; the bench sends `NOISEBENCH_BENCH_N` distinct
//! requests in one batch (default 6,500: a little over a minute at the limit, so that a whole
//! sliding minute is observed) and reports the achieved rate (target: >= 95% of the limit) and
//! the busiest minute (must not exceed the limit), then repeats up to 2,000 of them as cache hits
//! one by one (target: < 50 µs each). It exits with status 1 when a target is missed or the
//! limit is exceeded.
//!
//! `cargo bench -p noisebench-llm`

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::Keywords;
use common::keywords;
use noisebench_llm::Llm;
use noisebench_testkit::{FakeServer, KEYWORDS_OK, Reply, openai_config};

fn main() {
    // `cargo bench` passes `--bench`; no other arguments are understood.
    let n: usize = std::env::var("NOISEBENCH_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6500);
    let limit_rpm = 6000.0;
    let srv = FakeServer::start_with(
        Reply::Content(KEYWORDS_OK.into()),
        Duration::from_millis(50),
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = openai_config(&srv.url(), dir.path());
    cfg["models"]["fake"]["rpm"] = (limit_rpm as u64).into();
    cfg["models"]["fake"]["max_concurrency"] = 64.into();
    let llm = Llm::from_value(&cfg, Path::new("/")).expect("config");

    // Warm up: tokenizer tables, connection pool, runtime threads.
    llm.run::<Keywords>("bench", keywords("warm-up"))
        .expect("warm-up call");
    std::thread::sleep(Duration::from_millis(100));

    let inputs: Vec<_> = (0..n)
        .map(|i| keywords(&format!("benchmark claim number {i}")))
        .collect();
    let before = srv.requests();
    let start = Instant::now();
    let results = llm.run_batch::<Keywords>("bench", inputs.clone());
    let took = start.elapsed();
    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(ok, n, "every call succeeds");
    assert_eq!(srv.requests() - before, n);
    let rpm = n as f64 / took.as_secs_f64() * 60.0;
    let max_minute_window = srv.max_in_window(Duration::from_secs(60));
    let max_second_window = srv.max_in_window(Duration::from_secs(1));
    println!("throughput: {n} calls in {took:.2?} with 50 ms latency -> {rpm:.0} requests/min");
    println!(
        "            {:.1}% of the {limit_rpm:.0} RPM limit (target >= 95%); busiest 1 s window {max_second_window} requests, busiest 60 s window {max_minute_window}; server max in flight {}",
        rpm / limit_rpm * 100.0,
        srv.max_in_flight()
    );

    // Cache hits, one call at a time (render, hash, read, decompress, parse, log).
    let hits = n.min(2000);
    let start = Instant::now();
    for input in inputs.iter().take(hits) {
        let a = llm.run::<Keywords>("bench", input.clone()).expect("hit");
        assert!(a.cache_hit);
    }
    let per_hit = start.elapsed() / hits as u32;
    assert_eq!(srv.requests() - before, n, "hits send no request");
    println!("cache hit:  {per_hit:.1?} per call over {hits} sequential hits (target < 50 µs)");

    let start = Instant::now();
    let r = llm.run_batch::<Keywords>("bench", inputs.clone());
    assert!(r.iter().all(|x| matches!(x, Ok(a) if a.cache_hit)));
    println!(
        "cache hit:  {:.1?} per item in one batch of {n}",
        start.elapsed() / n as u32
    );
    let rate_ok = rpm >= 0.95 * limit_rpm;
    let limit_ok = max_minute_window as f64 <= limit_rpm;
    let hit_ok = per_hit < Duration::from_micros(50);
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    println!(
        "result:     throughput {}, busiest minute within the limit {}, cache hit {}",
        verdict(rate_ok),
        verdict(limit_ok),
        verdict(hit_ok)
    );
    // A missed target fails the bench run (and CI), not only its printout.
    if !(rate_ok && limit_ok && hit_ok) {
        std::process::exit(1);
    }
}
