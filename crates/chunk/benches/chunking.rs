//! Chunking throughput over the bundled edgar filings (their `item_7` text), on one core.
//!
//! `cargo bench -p noisebench-chunk` prints MB/s for: chunking with a fresh chunker per pass
//! (cold token cache, the stage's case for one run), ingest plus chunking, and tiktoken's own
//! `encode_ordinary` over the same text for reference. Plain `main` with `std::time` keeps the
//! build short (no criterion).

use std::path::Path;
use std::time::{Duration, Instant};

use noisebench_chunk::{
    ChunkConfig, Chunker, Domain, ReportsConfig, Source, TokenCounter, block_text, ingest,
};

fn measure(label: &str, bytes: usize, mut pass: impl FnMut() -> usize) {
    // One warm-up pass, then as many passes as fit in two seconds (at least three).
    let mut sink = pass();
    let start = Instant::now();
    let mut passes = 0;
    while passes < 3 || start.elapsed() < Duration::from_secs(2) {
        sink = sink.wrapping_add(pass());
        passes += 1;
    }
    let secs = start.elapsed().as_secs_f64() / passes as f64;
    println!(
        "{label:<40} {:>7.2} MB/s  ({passes} passes, {:.1} ms/pass, check {sink})",
        bytes as f64 / secs / 1e6,
        secs * 1e3
    );
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let config = ReportsConfig {
        sources: vec![Source {
            path: "fixtures/reports/edgar/*.json".into(),
            edgar: None,
            format: None,
            domain: Domain::Finance,
            items: vec!["item_7".into()],
            metadata: Default::default(),
        }],
    };
    let (reports, _, files) = ingest(&config, &root, "bench");
    let text: String = reports
        .iter()
        .flat_map(|r| r.blocks.iter().map(block_text))
        .collect::<Vec<_>>()
        .join("\n\n");
    let bytes = text.len();
    println!(
        "{files} filings, {} reports, {bytes} bytes of item_7 text",
        reports.len()
    );
    let chunk_config = ChunkConfig::for_domain(Domain::Finance);

    measure("chunk (finance preset, cold cache)", bytes, || {
        let chunker = Chunker::new();
        reports
            .iter()
            .map(|r| chunker.chunk(r, &chunk_config).len())
            .sum()
    });
    let general = ChunkConfig::default();
    measure("chunk (600 tokens, cold cache)", bytes, || {
        let chunker = Chunker::new();
        reports
            .iter()
            .map(|r| chunker.chunk(r, &general).len())
            .sum()
    });
    measure("ingest + chunk (finance preset)", bytes, || {
        let (reports, _, _) = ingest(&config, &root, "bench");
        let chunker = Chunker::new();
        reports
            .iter()
            .map(|r| chunker.chunk(r, &chunk_config).len())
            .sum()
    });
    measure("count tokens (ours, cold cache)", bytes, || {
        TokenCounter::new().count(&text)
    });
    let counter = TokenCounter::new();
    measure("tiktoken encode_ordinary (reference)", bytes, || {
        counter.reference_count(&text)
    });
}
