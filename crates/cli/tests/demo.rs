//! End to end: the demo pipeline builds a verifiable snapshot offline; a rebuild skips every stage
//! and publishes nothing; a build from scratch gives byte-identical tables; every table written
//! matches its schema, and the committed schema files match the code.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::{NoProgress, TableKind};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{Manifest, PublishOptions, PublishOutcome};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A fresh checkout-like folder with the pipelines and fixtures.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for folder in ["pipelines", "fixtures"] {
        copy_dir(&repo().join(folder), &dir.path().join(folder));
    }
    dir
}

fn assert_work_conforms(work: &Path) -> usize {
    let mut checked = 0;
    for stage in std::fs::read_dir(work).unwrap() {
        let stage = stage.unwrap().path();
        let Some(record) = noisebench_pipeline::runner::read_record(&stage) else {
            continue;
        };
        for (name, file) in &record.tables {
            let kind = TableKind::from_name(&file.kind).unwrap();
            let df = table_io::read_frame(&stage.join(&file.file)).unwrap();
            table_io::check_frame(&df, &kind.schema())
                .unwrap_or_else(|p| panic!("{}/{name}: {p:?}", stage.display()));
            assert_eq!(df.height() as u64, file.rows);
            checked += 1;
        }
    }
    let summary = table_io::read_frame(&work.join("run_summary.parquet")).unwrap();
    table_io::check_frame(&summary, &TableKind::RunSummary.schema()).unwrap();
    checked + 1
}

#[test]
fn demo_builds_verifies_skips_and_reproduces() {
    let dir = checkout();
    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let Some(PublishOutcome::Published {
        version,
        dir: snapshot,
        ..
    }) = built.outcome
    else {
        panic!("nothing published")
    };
    assert_eq!(version, "1.0.0");
    for file in [
        "data/claims.parquet",
        "manifest.json",
        "README.md",
        "CHANGES.md",
    ] {
        assert!(snapshot.join(file).is_file(), "{file}");
    }
    let report = noisebench_snapshot::verify(&snapshot);
    assert!(report.ok(), "{:?}", report.problems);
    let manifest = Manifest::read(&snapshot).unwrap();
    assert_eq!(manifest.pipeline, "demo");
    assert!(manifest.tables["claims"].rows >= 48);
    assert!(assert_work_conforms(&dir.path().join("work/demo")) >= 3);
    let claims_stage = built.run.summary.iter().find(|s| s.id == "claims").unwrap();
    assert_eq!(
        (
            claims_stage.items_in,
            claims_stage.items_out,
            claims_stage.items_dropped
        ),
        (60, 48, 12)
    );

    // Again: every stage skipped, nothing published, and it says so.
    let again = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    assert_eq!(again.run.ran(), 0);
    assert!(
        matches!(again.outcome, Some(PublishOutcome::Unchanged { ref version, .. }) if version == "1.0.0")
    );

    // From scratch: the same bytes.
    let before: Vec<(String, String)> = manifest
        .tables
        .iter()
        .map(|(n, t)| (n.clone(), t.sha256.clone()))
        .collect();
    std::fs::remove_dir_all(dir.path().join("work")).unwrap();
    let rebuilt = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    assert_eq!(rebuilt.run.ran(), rebuilt.run.summary.len());
    assert!(matches!(
        rebuilt.outcome,
        Some(PublishOutcome::Unchanged { .. })
    ));
    for (name, sha) in before {
        let record = rebuilt
            .run
            .records
            .values()
            .flat_map(|r| r.tables.values())
            .find(|t| t.sha256 == sha);
        assert!(
            record.is_some(),
            "table {name} was not reproduced byte for byte"
        );
    }
}

#[test]
fn the_binary_verifies_inspects_and_reports_config_errors() {
    let dir = checkout();
    let bin = env!("CARGO_BIN_EXE_noisebench");
    let run = |args: &[&str]| {
        std::process::Command::new(bin)
            .args(args)
            .arg("--root")
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let out = run(&["build-snapshot"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("published version 1.0.0"));
    let out = run(&["build-snapshot"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing new published"));
    let snapshot = dir.path().join("snapshots/demo");
    let out = run(&["verify", snapshot.to_str().unwrap()]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains(": ok"));
    let out = run(&["inspect", "stage", "claims"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("bad_date") && text.contains("fixtures/claims/averitec.jsonl:18"),
        "{text}"
    );

    // A typo in the pipeline file stops the run before any work and names the field.
    let broken = dir.path().join("pipelines/broken.toml");
    let demo = std::fs::read_to_string(dir.path().join("pipelines/demo.toml")).unwrap();
    std::fs::write(
        &broken,
        demo.replacen("preset = \"averitec\"", "prest = \"averitec\"", 1)
            .replace("name = \"demo\"", "name = \"broken\""),
    )
    .unwrap();
    let out = run(&["build-snapshot", "pipelines/broken.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("prest") && err.contains("sources[0]"),
        "{err}"
    );
    assert!(!dir.path().join("work/broken").exists());
}

#[test]
fn committed_schema_files_match_the_code() {
    let dir = tempfile::tempdir().unwrap();
    noisebench_cli::write_schemas(dir.path()).unwrap();
    for kind in TableKind::ALL {
        let name = format!("{}.json", kind.name());
        let generated = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        let committed = std::fs::read_to_string(repo().join("schemas").join(&name))
            .unwrap_or_else(|_| panic!("schemas/{name} is missing: run `noisebench schemas`"));
        assert_eq!(
            committed, generated,
            "schemas/{name} is stale: run `noisebench schemas`"
        );
    }
}
