//! The checks before publishing over a real snapshot's files: wall time and peak memory.

use std::path::{Path, PathBuf};
use std::time::Instant;

use noisebench_core::{CheckStatus, TableKind};
use noisebench_pipeline::{PublishedTable, check_published};

/// The published tables of the snapshot data folder `dir`: every `*.parquet` in it, named by its
/// stem, of the kind the stem names, else of the kind the version's `manifest.json` (beside
/// `dir`) gives the table of that name (`retrieval_metrics` is a `metrics` table).
fn published(dir: &Path) -> Vec<PublishedTable> {
    let manifest: serde_json::Value = std::fs::read(dir.join("../manifest.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let kind = TableKind::from_name(&name)
                .or_else(|| {
                    manifest["tables"][&name]["kind"]
                        .as_str()
                        .and_then(TableKind::from_name)
                })
                .unwrap_or_else(|| panic!("{name}: no table kind"));
            PublishedTable { name, kind, path }
        })
        .collect()
}

/// Peak resident memory of this process so far, in MB (`VmHWM` of /proc/self/status).
fn peak_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// `check_published` with core's and qa's checks (the CLI's registry) over a snapshot's data
/// folder, named by `NOISEBENCH_CHECKS_DATA` (e.g. a RARE-scale build's
/// `snapshots/<dataset>/<version>/data`); prints the wall time and the process's peak memory.
/// Run alone, in release:
/// `NOISEBENCH_CHECKS_DATA=... cargo test --release -p noisebench-pipeline --test it
/// published_checks:: -- --ignored --nocapture`.
#[test]
#[ignore = "needs NOISEBENCH_CHECKS_DATA: a snapshot's data folder of Parquet tables"]
fn checks_before_publishing_a_real_snapshot() {
    let dir = std::env::var("NOISEBENCH_CHECKS_DATA")
        .expect("NOISEBENCH_CHECKS_DATA names a snapshot's data folder");
    let tables = published(Path::new(&dir));
    assert!(!tables.is_empty(), "{dir}: no Parquet tables");
    let before = peak_mb();
    let start = Instant::now();
    let results = check_published(&tables, &noisebench_qa::table_checks());
    let seconds = start.elapsed().as_secs_f64();
    for r in &results {
        println!("{}", r.render());
    }
    println!(
        "checks before publishing: {} tables, {} results ({} failed, {} skipped) in {seconds:.2} s; peak {:.0} MB (before: {before:.0} MB)",
        tables.len(),
        results.len(),
        results.iter().filter(|r| r.failed()).count(),
        results
            .iter()
            .filter(|r| r.status == CheckStatus::Skipped)
            .count(),
        peak_mb()
    );
    assert!(results.iter().any(|r| r.status == CheckStatus::Passed));
}
