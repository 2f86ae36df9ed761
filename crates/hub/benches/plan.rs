//! What a push does before it talks to the Hub, on a version folder of many files: reading the
//! folder (`VersionUpload::read`: the manifest, every file's path) and the content digest.
//!
//! `cargo bench -p noisebench-hub` prints microseconds per pass. Plain `main` with `std::time`
//! keeps the build short (no criterion), as the other crates' benches do.

use std::time::{Duration, Instant};

use noisebench_hub::VersionUpload;
use noisebench_hub::plan::content_digest;

fn measure(label: &str, mut pass: impl FnMut() -> usize) {
    let mut sink = pass();
    let start = Instant::now();
    let mut passes = 0;
    while passes < 3 || start.elapsed() < Duration::from_secs(2) {
        sink = sink.wrapping_add(pass());
        passes += 1;
    }
    let secs = start.elapsed().as_secs_f64() / passes as f64;
    println!(
        "{label:<36} {:>9.1} us/pass  ({passes} passes, check {sink})",
        secs * 1e6
    );
}

fn main() {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let dir = tmp.path().join("1.0.0");
    let files = 2_000;
    let mut metadata = serde_json::Map::new();
    for i in 0..files {
        let rel = format!("data/t{}/part-{i:05}.parquet", i % 20);
        let path = dir.join(&rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, i.to_string()).expect("write");
        metadata.insert(
            rel,
            serde_json::json!({ "sha256": format!("{i:064x}"), "bytes": 1 }),
        );
    }
    let manifest = serde_json::json!({
        "dataset": "bench", "version": "1.0.0", "parent": null, "created_at": "t",
        "pipeline": "p", "config_hash": "c", "code_version": "0", "tables": {},
        "metadata": metadata,
    });
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).expect("manifest");
    let up = VersionUpload::read(&dir, None).expect("a version");
    measure(&format!("read a version of {files} files"), || {
        VersionUpload::read(&dir, None)
            .expect("a version")
            .files
            .len()
    });
    measure(&format!("content digest of {files} hashes"), || {
        content_digest(&up.manifest).len()
    });
}
