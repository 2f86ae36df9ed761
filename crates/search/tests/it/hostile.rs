//! Hostile input, by construction, for the search readers: a zstd bomb as a Reddit dump (one
//! line of 1 GiB: skipped at the line cap, counted, memory bounded), a dump of a million lines
//! (ten million with `NOISEBENCH_DUMP_LINES=10000000`, `just reliability`) streamed with memory
//! that does not grow with it, invalid UTF-8 in dump lines (the post read, the bytes replaced),
//! and pages nested 100,000 deep or full of invalid UTF-8 through the page extractor.

use std::io::Write;
use std::path::Path;

use noisebench_search::backends::reddit_dump::{MAX_LINE_BYTES, read_posts};
use noisebench_search::extract_html;

/// The process's peak resident memory so far (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// A zstd frame of `blocks` RLE blocks of 128 KiB of `byte`: 4 bytes a block.
fn zstd_bomb(blocks: usize, byte: u8) -> Vec<u8> {
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3];
    for i in 0..blocks {
        let header = ((i + 1 == blocks) as u32) | (1 << 1) | ((128 * 1024) << 3);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(byte);
    }
    out
}

fn post(i: u64) -> String {
    format!(
        r#"{{"id":"p{i:x}","title":"Post number {i} about water policy","selftext":"Body of post {i}.","subreddit":"news","created_utc":{}}}"#,
        1_700_000_000 + i
    )
}

fn write_dump(path: &Path, lines: u64) {
    let file = std::fs::File::create(path).unwrap();
    let mut enc = zstd::stream::write::Encoder::new(file, 1).unwrap();
    for i in 0..lines {
        enc.write_all(post(i).as_bytes()).unwrap();
        enc.write_all(b"\n").unwrap();
    }
    enc.finish().unwrap();
}

/// One test, so no other test of this binary moves the memory high-water mark meanwhile.
#[test]
fn bombs_and_long_dumps_stream_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();

    // A bomb: 1 GiB of one line between two good posts.
    let bomb = dir.path().join("bomb.ndjson.zst");
    let mut bytes = Vec::new();
    let mut enc = zstd::stream::write::Encoder::new(&mut bytes, 1).unwrap();
    enc.write_all(format!("{}\n", post(1)).as_bytes()).unwrap();
    enc.finish().unwrap();
    bytes.extend(zstd_bomb(8192, b'x'));
    let mut enc = zstd::stream::write::Encoder::new(&mut bytes, 1).unwrap();
    enc.write_all(format!("\n{}\n", post(2)).as_bytes())
        .unwrap();
    enc.finish().unwrap();
    std::fs::write(&bomb, &bytes).unwrap();
    let before = peak_rss();
    let mut posts = 0;
    let stats = read_posts(&bomb, |_| posts += 1).unwrap();
    let grown = peak_rss().saturating_sub(before);
    assert_eq!(
        (
            stats.lines,
            stats.posts,
            stats.bad_lines,
            stats.oversized_lines
        ),
        (3, 2, 1, 1)
    );
    assert_eq!(posts, 2);
    assert!(
        grown < 8 * MAX_LINE_BYTES as u64 + (64 << 20),
        "reading a 1 GiB line grew memory by {grown} bytes"
    );

    // A long dump: memory does not grow with the number of lines.
    let lines: u64 = std::env::var("NOISEBENCH_DUMP_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let long = dir.path().join("long.ndjson.zst");
    write_dump(&long, lines);
    let before = peak_rss();
    let mut count = 0u64;
    let started = std::time::Instant::now();
    let stats = read_posts(&long, |_| count += 1).unwrap();
    let grown = peak_rss().saturating_sub(before);
    eprintln!(
        "dump of {lines} lines ({} bytes compressed) read in {:.1} s, peak memory grew {} KiB",
        std::fs::metadata(&long).unwrap().len(),
        started.elapsed().as_secs_f64(),
        grown / 1024
    );
    assert_eq!(
        (stats.lines, stats.posts, stats.bad_lines),
        (lines, lines, 0)
    );
    assert_eq!(count, lines);
    assert!(
        grown < 32 << 20,
        "memory grew by {grown} bytes over {lines} lines"
    );
}

#[test]
fn invalid_utf8_in_a_dump_line_costs_at_most_that_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.ndjson");
    let content = [
        post(1).as_bytes(),
        b"\n",
        br#"{"id":"abc","title":"caf"#,
        b"\xe9 \xff\xfe\xc3\x28",
        br#"","selftext":"x"}"#,
        b"\n\xff\xff\xff\n",
        post(2).as_bytes(),
        b"\n",
    ]
    .concat();
    std::fs::write(&path, content).unwrap();
    let mut titles = Vec::new();
    let stats = read_posts(&path, |p| titles.push(p.title)).unwrap();
    assert_eq!((stats.lines, stats.posts, stats.bad_lines), (4, 3, 1));
    assert!(titles[1].starts_with("caf\u{fffd}"), "{titles:?}");
}

#[test]
fn pages_nested_100000_deep_or_not_utf8_extract_without_overflowing() {
    let deep = format!(
        "<html><head><title>Deep</title></head><body>{}<p>Water policy changed in 2024, the city said in a statement to residents.</p>{}</body></html>",
        "<div>".repeat(100_000),
        "</div>".repeat(100_000)
    );
    let result = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || extract_html(&deep, "https://a.example/deep").is_ok())
        .unwrap()
        .join();
    assert!(result.is_ok(), "the extractor panicked");
    let bad = String::from_utf8_lossy(b"<html><body><p>caf\xe9 \xff\xfe policy</p></body></html>")
        .into_owned();
    let _ = extract_html(&bad, "https://a.example/bad\u{7}");
}
