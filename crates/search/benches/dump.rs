//! Reddit dump benchmark: indexing throughput (posts/s) and BM25 query latency (median, p95).
//! `cargo bench -p noisebench-search --bench dump` (or `just bench`). A synthetic dump of
//! N posts (default 100,000; `NB_BENCH_POSTS`) is built from the fixture dump's posts with new ids.

use std::io::Write;
use std::time::Instant;

use noisebench_search::backends::reddit_dump::{DumpIndex, read_posts};

fn main() {
    let n: usize = std::env::var("NB_BENCH_POSTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut base = Vec::new();
    read_posts(&root.join("fixtures/reddit/posts.ndjson.zst"), |p| {
        base.push(p)
    })
    .expect("fixture dump");
    let dir = tempfile::tempdir().expect("temp dir");
    let dump = dir.path().join("bench.ndjson.zst");
    {
        let file = std::fs::File::create(&dump).expect("create dump");
        let mut enc = zstd::stream::write::Encoder::new(file, 3)
            .expect("zstd")
            .auto_finish();
        for i in 0..n {
            let p = &base[i % base.len()];
            let line = serde_json::json!({
                "id": format!("b{i:x}"), "title": format!("{} #{}", p.title, i % 977),
                "selftext": p.selftext, "subreddit": p.subreddit, "author": p.author,
                "created_utc": p.created_utc.unwrap_or(0) + i as i64, "score": p.score,
                "permalink": format!("/r/bench/comments/b{i:x}/post/"), "is_self": true
            });
            writeln!(enc, "{line}").expect("write");
        }
    }
    let idx = dir.path().join("index");
    let t = Instant::now();
    let index = DumpIndex::open_or_build(&dump, &idx).expect("index");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "indexing: {n} posts in {secs:.2} s = {:.0} posts/s (sha256 and zstd decoding included)",
        n as f64 / secs
    );
    let t = Instant::now();
    let reopened = DumpIndex::open_or_build(&dump, &idx).expect("reopen");
    assert!(!reopened.built);
    println!(
        "reuse (sha256 check + open): {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let queries = [
        "5G masts spread viral post coronavirus",
        "hot water lemon coronavirus throat",
        "wind turbines kill birds cats",
        "non-citizens vote federal elections bill",
        "sanctuary cities crime higher",
        "oil production country world",
        "inflation 41-year high October",
        "vaccine approved clinical trials",
    ];
    let mut lat = Vec::new();
    for round in 0..50 {
        for q in &queries {
            let t = Instant::now();
            let hits = index.search(q, 10, 2.0, None, None).expect("search");
            lat.push(t.elapsed().as_secs_f64() * 1e3);
            if round == 0 {
                assert!(!hits.is_empty(), "{q}");
            }
        }
    }
    lat.sort_by(f64::total_cmp);
    println!(
        "query latency (top 10, {} queries): median {:.2} ms, p95 {:.2} ms",
        lat.len(),
        lat[lat.len() / 2],
        lat[lat.len() * 95 / 100]
    );
}
