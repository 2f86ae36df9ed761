//! Croissant: the demo snapshot's `croissant.json` passes `mlcroissant validate`, and every record
//! set read back through mlcroissant's Python API has the manifest's row count (the question
//! tables by split too). Needs python3 with `mlcroissant` (`pip install mlcroissant`): skipped
//! without it, unless `NOISEBENCH_REQUIRE_READERS` is set (CI sets it), then it fails.

use std::path::PathBuf;
use std::process::Command;

use noisebench_snapshot::{CROISSANT, Manifest};
use noisebench_testkit::run_python_json;

fn mlcroissant_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import mlcroissant"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("NOISEBENCH_REQUIRE_READERS").is_none(),
            "python3 cannot import mlcroissant; `python3 -m pip install mlcroissant`"
        );
        eprintln!("SKIPPED: python3 cannot import mlcroissant");
    }
    ok
}

#[test]
fn mlcroissant_validates_and_reads_every_record_set() {
    if !mlcroissant_available() {
        return;
    }
    // The binary's shared demo build, read only.
    let snapshot = crate::shared::demo().1.clone();
    let report = noisebench_snapshot::verify(&snapshot);
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!(report.splits_checked, 6);
    let manifest = Manifest::read(&snapshot).unwrap();
    assert!(manifest.metadata.contains_key(CROISSANT));

    // The `mlcroissant validate` CLI, run through the python3 that has the package (its console
    // script may not be on PATH).
    let jsonld = snapshot.join(CROISSANT);
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys; from mlcroissant.scripts.cli import main; sys.argv[0] = 'mlcroissant'; main()",
            "validate",
            "--jsonld",
        ])
        .arg(&jsonld)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mlcroissant validate: {stderr}");
    // absl writes warnings as `W<date> …`, Python's logging as `WARNING:…`.
    let warned = stderr.lines().any(|l| {
        l.starts_with("WARNING")
            || (l.starts_with('W') && l[1..].starts_with(|c: char| c.is_ascii_digit()))
    });
    assert!(!warned, "mlcroissant validate warned: {stderr}");

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/croissant_records.py");
    let read = run_python_json(&script, [&snapshot]);
    assert_eq!(read["errors"], serde_json::json!([]), "{read:#}");
    assert_eq!(read["record_sets"]["splits"], 2);
    for (table, entry) in &manifest.tables {
        assert_eq!(
            read["record_sets"][table].as_u64(),
            Some(entry.rows),
            "mlcroissant on {table}"
        );
    }
    // Every table plus the split names.
    assert_eq!(
        read["record_sets"].as_object().unwrap().len(),
        manifest.tables.len() + 1
    );
    let split_rows: serde_json::Value = manifest
        .splits
        .iter()
        .map(|(table, splits)| {
            let rows: serde_json::Map<String, serde_json::Value> = splits
                .iter()
                .map(|(s, e)| (s.clone(), e.rows.into()))
                .collect();
            (table.clone(), serde_json::Value::Object(rows))
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    assert_eq!(read["splits"], split_rows);
    assert_eq!(
        read["splits"]["questions"],
        serde_json::json!({"test": 16, "train": 20})
    );
}
