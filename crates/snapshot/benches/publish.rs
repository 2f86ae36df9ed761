//! Writing a 1M-row claims table and publishing it as a snapshot (`just bench`).
//!
//! A plain timing harness: criterion's build cost is not worth it for one end-to-end number.

use std::time::Instant;

use noisebench_core::{Claim, Rows, TableKind};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{PublishOptions, PublishOutcome, PublishRequest, SourceTable, publish};

/// The allocator the `noisebench` binary uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let n: usize = std::env::var("NOISEBENCH_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("temporary folder");
    let rows: Vec<Claim> = (0..n)
        .map(|i| Claim {
            id: noisebench_core::stable_id("claim", &[&i.to_string()]),
            text: format!(
                "Claim number {i} says that the figure rose by {} percent last year.",
                i % 97
            ),
            verdict: if i.is_multiple_of(3) { "false" } else { "true" }.into(),
            original_rating: [
                "true",
                "mostly-true",
                "half-true",
                "mostly-false",
                "false",
                "pants-fire",
            ][i % 6]
                .into(),
            speaker: Some(format!("Speaker {}", i % 1000)),
            claim_date: Some(format!("20{:02}-0{}-1{}", 10 + i % 15, 1 + i % 9, i % 10)),
            url: Some(format!("https://www.politifact.com/factchecks/{i}/")),
            topics: vec!["economy".into(), format!("t{}", i % 20)],
            source: "bench".into(),
            ..Claim::default()
        })
        .collect();
    let table = dir.path().join("work/claims.parquet");
    let rows = Rows::Claims(rows);
    // Ours and polars alone (the same frame, the same Parquet settings), interleaved, three
    // rounds each, the fastest of each kept: the machine is shared, and the minimum is the
    // least disturbed run of each side.
    let mut frame = table_io::baseline::frame(&rows).expect("frame");
    let polars_file = dir.path().join("polars.parquet");
    let (mut write_s, mut read_s, mut polars_write_s, mut polars_read_s) =
        (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
    let mut written = None;
    for _ in 0..3 {
        let started = Instant::now();
        written = Some(table_io::write_table(&table, &rows).expect("write"));
        write_s = write_s.min(started.elapsed().as_secs_f64());
        let started = Instant::now();
        let back = table_io::read_table(&table, TableKind::Claims).expect("read");
        read_s = read_s.min(started.elapsed().as_secs_f64());
        assert_eq!(back, rows, "the table reads back as written");
        drop(back);
        let started = Instant::now();
        table_io::baseline::write(&mut frame, &polars_file).expect("polars write");
        polars_write_s = polars_write_s.min(started.elapsed().as_secs_f64());
        let started = Instant::now();
        assert_eq!(
            table_io::baseline::read(&polars_file).expect("polars read"),
            n
        );
        polars_read_s = polars_read_s.min(started.elapsed().as_secs_f64());
    }
    let written = written.expect("written");
    drop((frame, rows));
    let request = PublishRequest {
        snapshots_dir: dir.path().join("snapshots"),
        dataset: "bench".into(),
        title: "bench".into(),
        description: String::new(),
        license: None,
        pipeline: "bench".into(),
        config_hash: "bench".into(),
        code_version: "bench".into(),
        tables: vec![SourceTable {
            name: "claims".into(),
            kind: TableKind::Claims,
            path: table.clone(),
        }],
        exports: vec![],
        stages: vec![],
        provenance: Default::default(),
        checks: Vec::new(),
        quality: None,
    };
    let started = Instant::now();
    let outcome = publish(&request, &PublishOptions::default()).expect("publish");
    let publish_s = started.elapsed().as_secs_f64();
    let PublishOutcome::Published { dir: snapshot, .. } = outcome else {
        panic!("expected a new version")
    };
    let started = Instant::now();
    let report = noisebench_snapshot::verify(&snapshot);
    let verify_s = started.elapsed().as_secs_f64();
    assert!(report.ok(), "{:?}", report.problems);
    println!("rows:            {n}");
    println!("parquet size:    {:.1} MB", written.bytes as f64 / 1e6);
    println!(
        "write table:     {write_s:.2} s ({:.0} rows/s)",
        n as f64 / write_s
    );
    println!(
        "read table:      {read_s:.2} s ({:.0} rows/s)",
        n as f64 / read_s
    );
    println!(
        "polars alone:    write {polars_write_s:.2} s, read {polars_read_s:.2} s (the same frame; each the fastest of 3)"
    );
    println!(
        "ratio to polars: write {:.2}x, read {:.2}x, write + read {:.2}x (limit 3x)",
        write_s / polars_write_s,
        read_s / polars_read_s,
        (write_s + read_s) / (polars_write_s + polars_read_s)
    );
    println!("publish:         {publish_s:.2} s (hash, diff, copy, card, manifest)");
    println!("verify:          {verify_s:.2} s");
}
