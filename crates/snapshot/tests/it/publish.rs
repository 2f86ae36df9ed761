//! Publishing: semver bumps from the diff, no-change detection, immutability, crash safety, verify.

use std::path::{Path, PathBuf};

use noisebench_core::{Claim, Rows, TableKind};
use noisebench_pipeline::table_io;
use noisebench_snapshot::*;

fn claim(i: usize, text: &str) -> Claim {
    Claim {
        id: format!("claim_{i:04}"),
        text: text.into(),
        verdict: if i.is_multiple_of(3) { "false" } else { "true" }.into(),
        original_rating: "true".into(),
        source: "test".into(),
        ..Claim::default()
    }
}

fn claims(n: usize) -> Vec<Claim> {
    (0..n)
        .map(|i| claim(i, &format!("claim number {i}")))
        .collect()
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn snapshots(&self) -> PathBuf {
        self.dir.path().join("snapshots")
    }

    fn request(&self, rows: Vec<Claim>) -> PublishRequest {
        let path = self.dir.path().join("work/claims.parquet");
        table_io::write_table(&path, &Rows::Claims(rows)).unwrap();
        PublishRequest {
            snapshots_dir: self.snapshots(),
            dataset: "ds".into(),
            title: "Test".into(),
            description: "A test dataset.".into(),
            license: None,
            pipeline: "test".into(),
            config_hash: "abc".into(),
            code_version: "0.0.0".into(),
            tables: vec![SourceTable {
                name: "claims".into(),
                kind: TableKind::Claims,
                path,
            }],
            exports: vec![],
            stages: vec![],
            provenance: Default::default(),
            checks: Vec::new(),
            quality: None,
        }
    }

    fn publish(&self, rows: Vec<Claim>) -> PublishOutcome {
        publish(&self.request(rows), &PublishOptions::default()).unwrap()
    }

    fn versions(&self) -> Vec<String> {
        list_versions(&self.snapshots().join("ds"))
            .iter()
            .map(|v| v.to_string())
            .collect()
    }
}

fn version(outcome: &PublishOutcome) -> &str {
    match outcome {
        PublishOutcome::Published { version, .. } => version,
        PublishOutcome::Unchanged { version, .. } => panic!("unchanged at {version}"),
    }
}

#[test]
fn versions_bump_from_the_diff() {
    let env = Env::new();
    assert_eq!(version(&env.publish(claims(10))), "1.0.0");
    // Same rows, same bytes: nothing new.
    assert!(
        matches!(env.publish(claims(10)), PublishOutcome::Unchanged { ref version, .. } if version == "1.0.0")
    );
    // Only additions: minor.
    let out = env.publish(claims(12));
    assert_eq!(version(&out), "1.1.0");
    let PublishOutcome::Published { changes, .. } = out else {
        unreachable!()
    };
    assert_eq!(
        changes.tables["claims"].added,
        vec!["claim_0010", "claim_0011"]
    );
    // A changed row: major.
    let mut changed = claims(12);
    changed[3].text = "edited".into();
    let out = env.publish(changed.clone());
    assert_eq!(version(&out), "2.0.0");
    let PublishOutcome::Published { changes, .. } = out else {
        unreachable!()
    };
    assert_eq!(changes.tables["claims"].changed, vec!["claim_0003"]);
    // A removed row: major.
    changed.pop();
    assert_eq!(version(&env.publish(changed.clone())), "3.0.0");
    // The same rows in another order: other bytes, same rows: patch.
    changed.reverse();
    let out = env.publish(changed);
    assert_eq!(version(&out), "3.0.1");
    let PublishOutcome::Published { changes, dir, .. } = out else {
        unreachable!()
    };
    assert!(changes.tables["claims"].reserialised && !changes.tables["claims"].rows_differ());
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(manifest.parent.as_deref(), Some("3.0.0"));
    assert_eq!(
        env.versions(),
        ["1.0.0", "1.1.0", "2.0.0", "3.0.0", "3.0.1"]
    );
    // Rows fetched again, unchanged but for their fetch time and raw-response hash: no new
    // version; with an addition, a minor one that lists them as refetched.
    let mut refetched = claims(12);
    refetched[3].text = "edited".into();
    refetched.pop();
    refetched.reverse();
    for c in &mut refetched {
        c.fetched_at = Some("2026-01-01T00:00:00Z".into());
        c.archive_ref = Some("ab".repeat(32));
    }
    let PublishOutcome::Unchanged { version: v, .. } = env.publish(refetched.clone()) else {
        panic!("a refetch with no change in content publishes nothing")
    };
    assert_eq!(v, "3.0.1");
    refetched.push(claim(40, "a new claim"));
    let out = env.publish(refetched);
    assert_eq!(version(&out), "3.1.0");
    let PublishOutcome::Published { changes, .. } = out else {
        unreachable!()
    };
    let t = &changes.tables["claims"];
    assert_eq!(
        (t.added.len(), t.changed.len(), t.refetched.len()),
        (1, 0, 11)
    );
    assert!(
        changes
            .render_markdown()
            .contains("(11 refetched, unchanged)")
    );
    // diff between two published versions.
    let d = diff(
        &env.snapshots().join("ds/1.0.0"),
        &env.snapshots().join("ds/2.0.0"),
    )
    .unwrap();
    assert_eq!(
        (
            d.tables["claims"].added.len(),
            d.tables["claims"].changed.len()
        ),
        (2, 1)
    );
    assert!(d.render_markdown().contains("claim_0003"));
}

#[test]
fn published_files_are_read_only() {
    let env = Env::new();
    let PublishOutcome::Published { dir, .. } = env.publish(claims(3)) else {
        panic!()
    };
    for file in [
        "data/claims.parquet",
        "manifest.json",
        "README.md",
        "CHANGES.md",
    ] {
        let meta = std::fs::metadata(dir.join(file)).unwrap();
        assert!(meta.permissions().readonly(), "{file}");
    }
}

#[test]
fn version_exists_error_names_the_version() {
    let env = Env::new();
    env.publish(claims(3));
    // A folder without a manifest is not a version, but it still blocks the name.
    std::fs::create_dir_all(env.snapshots().join("ds/1.1.0")).unwrap();
    std::fs::write(env.snapshots().join("ds/1.1.0/partial"), b"x").unwrap();
    let err = publish(&env.request(claims(4)), &PublishOptions::default()).unwrap_err();
    assert!(
        matches!(err, PublishError::VersionExists { ref version, .. } if version == "1.1.0"),
        "{err}"
    );
}

#[test]
fn an_interrupted_publish_leaves_no_version() {
    let env = Env::new();
    env.publish(claims(5));
    for fail_after in [1, 2, 3, 4, 5] {
        let err = publish(
            &env.request(claims(6)),
            &PublishOptions {
                fail_after_files: Some(fail_after),
                ..Default::default()
            },
        );
        assert!(
            matches!(err, Err(PublishError::Injected(_))),
            "{fail_after}: {err:?}"
        );
        assert_eq!(
            env.versions(),
            ["1.0.0"],
            "after a fault at file {fail_after}"
        );
        assert!(!env.snapshots().join("ds/1.1.0").exists());
    }
    // The next publish succeeds and cleans what the crash left.
    assert_eq!(version(&env.publish(claims(6))), "1.1.0");
    let leftovers: Vec<String> = std::fs::read_dir(env.snapshots().join("ds"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(verify(&env.snapshots().join("ds/1.1.0")).ok());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

#[test]
fn verify_finds_tampering() {
    let env = Env::new();
    let PublishOutcome::Published { dir, .. } = env.publish(claims(8)) else {
        panic!()
    };
    let report = verify(&dir);
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!((report.tables_checked, report.rows_checked), (1, 8));

    let copy = env.dir.path().join("copy/1.0.0");
    copy_dir(&dir, &copy);
    // Replace the data with another valid table: hash, size and row count no longer match.
    table_io::write_table(&copy.join("data/claims.parquet"), &Rows::Claims(claims(7))).unwrap();
    std::fs::write(copy.join("data/extra.parquet"), b"x").unwrap();
    let report = verify(&copy);
    let text = report.problems.join("\n");
    assert!(text.contains("sha256"), "{text}");
    assert!(text.contains("7 rows, manifest says 8"), "{text}");
    assert!(
        text.contains("data/extra.parquet is not in the manifest"),
        "{text}"
    );
}

#[test]
fn the_card_declares_one_config_per_table_with_features() {
    let env = Env::new();
    let PublishOutcome::Published { dir, .. } = env.publish(claims(9)) else {
        panic!()
    };
    let card = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(card.starts_with("---\n"));
    assert!(card.contains("configs:\n- config_name: claims\n  data_files:\n  - split: train\n    path: data/claims.parquet"));
    assert!(card.contains("  - name: topics\n    sequence: string"));
    assert!(card.contains("num_examples: 9"));
    assert!(
        card.contains("`claims.verdict`: true: 6, false: 3"),
        "{card}"
    );
    for section in [
        "## Sources",
        "## Construction",
        "## Labels",
        "## Limitations",
    ] {
        assert!(card.contains(section), "{section}");
    }
    let changes = std::fs::read_to_string(dir.join("CHANGES.md")).unwrap();
    assert!(changes.contains("First version"));
}

#[test]
fn exports_are_published_hashed_and_verified() {
    let env = Env::new();
    let raguard = env.dir.path().join("work/export-raguard");
    std::fs::create_dir_all(&raguard).unwrap();
    std::fs::write(raguard.join("claims.csv"), "Claim ID,Claim\n0,x\n").unwrap();
    std::fs::write(raguard.join("documents.csv"), "Document ID\n0\n").unwrap();
    let mut request = env.request(claims(3));
    request.exports = vec![SourceExport {
        format: "raguard".into(),
        stage: "export-raguard".into(),
        folder: "raguard".into(),
        files: vec![raguard.join("claims.csv"), raguard.join("documents.csv")],
    }];
    publish(&request, &PublishOptions::default()).unwrap();
    let dir = env.snapshots().join("ds/1.0.0");
    let manifest = Manifest::read(&dir).unwrap();
    assert_eq!(
        manifest.exports.keys().collect::<Vec<_>>(),
        [
            "exports/raguard/claims.csv",
            "exports/raguard/documents.csv"
        ]
    );
    let entry = &manifest.exports["exports/raguard/claims.csv"];
    assert_eq!((entry.format.as_str(), entry.bytes), ("raguard", 19));
    assert_eq!(
        std::fs::read_to_string(dir.join("exports/raguard/claims.csv")).unwrap(),
        "Claim ID,Claim\n0,x\n"
    );
    let report = verify(&dir);
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!(report.exports_checked, 2);

    // A changed or stray export file is found.
    let copy = env.dir.path().join("copy/1.0.0");
    copy_dir(&dir, &copy);
    std::fs::write(copy.join("exports/raguard/claims.csv"), "tampered").unwrap();
    std::fs::write(copy.join("exports/raguard/extra.csv"), "x").unwrap();
    let report = verify(&copy);
    let problems = report.problems.join("\n");
    assert!(
        problems.contains("export exports/raguard/claims.csv: sha256")
            && problems.contains("exports/raguard/extra.csv is not in the manifest"),
        "{problems}"
    );
}

/// Rows of `kind` from defaults with the given fields set (one row per item of `rows`).
fn rows_of(kind: TableKind, rows: &[serde_json::Value]) -> Rows {
    let base = Rows::one_default(kind).json_rows().next().unwrap();
    let values = rows.iter().map(|fields| {
        let mut row = base.clone();
        for (k, v) in fields.as_object().unwrap() {
            row[k] = v.clone();
        }
        row
    });
    Rows::from_json_rows(kind, values).unwrap()
}

#[test]
fn question_tables_are_published_per_split_with_croissant_and_verified() {
    use serde_json::json;
    let env = Env::new();
    let work = env.dir.path().join("work");
    let questions = work.join("questions.parquet");
    let splits = work.join("question_splits.parquet");
    let ids = ["q1", "q2", "q3", "q4", "q5"];
    let question_rows: Vec<serde_json::Value> = ids.iter().map(|id| json!({"id": id})).collect();
    table_io::write_table(&questions, &rows_of(TableKind::Questions, &question_rows)).unwrap();
    let split_rows: Vec<serde_json::Value> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            json!({"id": format!("split_{id}"), "question_id": id, "split": if i < 2 { "test" } else { "train" }})
        })
        .collect();
    table_io::write_table(&splits, &rows_of(TableKind::QuestionSplits, &split_rows)).unwrap();
    let mut request = env.request(claims(3));
    request.tables.push(SourceTable {
        name: "questions".into(),
        kind: TableKind::Questions,
        path: questions,
    });
    request.tables.push(SourceTable {
        name: "question_splits".into(),
        kind: TableKind::QuestionSplits,
        path: splits,
    });
    let PublishOutcome::Published { dir, .. } =
        publish(&request, &PublishOptions::default()).unwrap()
    else {
        panic!()
    };
    let manifest = Manifest::read(&dir).unwrap();
    let split_files: Vec<(&str, &str, u64)> = manifest.splits["questions"]
        .iter()
        .map(|(s, e)| (s.as_str(), e.file.as_str(), e.rows))
        .collect();
    assert_eq!(
        split_files,
        [
            ("test", "data/questions/test.parquet", 2),
            ("train", "data/questions/train.parquet", 3)
        ]
    );
    assert_eq!(manifest.splits.len(), 1, "only question tables are split");
    assert!(manifest.metadata.contains_key(CROISSANT));

    let card = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(
        card.contains(
            "- config_name: questions\n  data_files:\n  - split: test\n    path: data/questions/test.parquet\n  - split: train\n    path: data/questions/train.parquet\n"
        ),
        "{card}"
    );
    assert!(card.contains("  - name: test\n"), "{card}");
    assert!(card.contains("not train/test data"), "{card}");
    assert!(
        card.contains("- config_name: claims\n  data_files:\n  - split: train\n    path: data/claims.parquet\n"),
        "{card}"
    );

    let croissant: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(CROISSANT)).unwrap()).unwrap();
    assert_eq!(
        croissant["conformsTo"],
        "http://mlcommons.org/croissant/1.1"
    );
    assert_eq!(croissant["version"], "1.0.0");
    assert_eq!(croissant["isLiveDataset"], false);
    let record_sets: Vec<&str> = croissant["recordSet"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["@id"].as_str().unwrap())
        .collect();
    assert_eq!(
        record_sets,
        ["splits", "claims", "question_splits", "questions"]
    );

    let report = verify(&dir);
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!(report.splits_checked, 2);

    // A changed split file, a stray one and a changed croissant.json are found.
    let copy = env.dir.path().join("copy/1.0.0");
    copy_dir(&dir, &copy);
    table_io::write_table(
        &copy.join("data/questions/test.parquet"),
        &rows_of(TableKind::Questions, &[json!({"id": "q1"})]),
    )
    .unwrap();
    std::fs::write(copy.join("data/questions/extra.parquet"), b"x").unwrap();
    std::fs::write(copy.join(CROISSANT), b"{}").unwrap();
    let problems = verify(&copy).problems.join("\n");
    for expected in [
        "split `test` of `questions` (data/questions/test.parquet): sha256",
        "1 rows, manifest says 2",
        "splits of `questions` hold 4 rows, the table 5",
        "data/questions/extra.parquet is not in the manifest",
        "croissant.json: sha256",
    ] {
        assert!(problems.contains(expected), "{expected}: {problems}");
    }
}

/// A request for `claims(3)` with the CONF-FACT export folder holding `files` (name, text).
fn request_with_exports(env: &Env, files: &[(&str, &str)]) -> PublishRequest {
    let folder = env.dir.path().join("work/export-confact");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    let mut request = env.request(claims(3));
    request.exports = vec![SourceExport {
        format: "confact".into(),
        stage: "export-confact".into(),
        folder: "confact".into(),
        files: files
            .iter()
            .map(|(name, text)| {
                std::fs::write(folder.join(name), text).unwrap();
                folder.join(name)
            })
            .collect(),
    }];
    request
}

#[test]
fn a_change_of_exports_alone_publishes_a_new_version() {
    let env = Env::new();
    let publish_files = |files: &[(&str, &str)]| {
        publish(
            &request_with_exports(&env, files),
            &PublishOptions::default(),
        )
        .unwrap()
    };
    let a = "exports/confact/confact.json";
    let b = "exports/confact/extra.json";
    assert_eq!(
        version(&publish_files(&[("confact.json", "[1,2,3]")])),
        "1.0.0"
    );
    // Same tables, same export bytes: nothing new.
    assert!(matches!(
        publish_files(&[("confact.json", "[1,2,3]")]),
        PublishOutcome::Unchanged { ref version, .. } if version == "1.0.0"
    ));
    // Same tables, the export's bytes changed: a patch version naming it.
    let out = publish_files(&[("confact.json", "[1,2]")]);
    assert_eq!(version(&out), "1.0.1");
    let PublishOutcome::Published { changes, dir, .. } = out else {
        unreachable!()
    };
    let change = &changes.exports[a];
    assert_eq!(change.status, "changed");
    assert_eq!(
        (change.bytes_before, change.bytes_after),
        (Some(7), Some(5))
    );
    // sha256 of the literal bytes "[1,2,3]" and "[1,2]" (`printf '[1,2]' | sha256sum`).
    assert_eq!(
        change.sha256_before.as_deref(),
        Some("a615eeaee21de5179de080de8c3052c8da901138406ba71c38c032845f7d54f4")
    );
    assert_eq!(
        change.sha256_after.as_deref(),
        Some("49a64717d5d4cb19952e6eac2946415cf6879adacf9908e7d872332d32c6e684")
    );
    assert_eq!(
        Manifest::read(&dir).unwrap().exports[a].sha256,
        "49a64717d5d4cb19952e6eac2946415cf6879adacf9908e7d872332d32c6e684"
    );
    assert_eq!(
        changes.exports_summary().as_deref(),
        Some("exports changed: confact/confact.json")
    );
    assert!(changes.tables["claims"].added.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.join(a)).unwrap(),
        "[1,2]",
        "the new version holds the new export"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("changes.json")).unwrap()).unwrap();
    assert_eq!(json["exports"][a]["status"], "changed");
    let card = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(
        card.contains("`exports/confact/confact.json` changed (7 -> 5 bytes)"),
        "{card}"
    );
    let md = std::fs::read_to_string(dir.join("CHANGES.md")).unwrap();
    assert!(
        md.contains("| `exports/confact/confact.json` | changed | 7 | 5 |"),
        "{md}"
    );

    // An export added: as a table added, minor.
    let out = publish_files(&[("confact.json", "[1,2]"), ("extra.json", "{}")]);
    assert_eq!(version(&out), "1.1.0");
    let PublishOutcome::Published { changes, .. } = out else {
        unreachable!()
    };
    assert_eq!(changes.exports.keys().collect::<Vec<_>>(), [b]);
    assert_eq!(changes.exports[b].status, "added");
    assert_eq!(
        changes.exports_summary().as_deref(),
        Some("exports added: confact/extra.json")
    );
    assert_eq!(changes.exports[b].sha256_before, None);

    // An export removed: as a table removed, major.
    let out = publish_files(&[("confact.json", "[1,2]")]);
    assert_eq!(version(&out), "2.0.0");
    let PublishOutcome::Published { changes, .. } = out else {
        unreachable!()
    };
    assert_eq!(changes.exports.keys().collect::<Vec<_>>(), [b]);
    assert_eq!(changes.exports[b].status, "removed");
    // `snapshot diff` between two published versions names it too.
    let between = diff(
        &env.snapshots().join("ds/1.1.0"),
        &env.snapshots().join("ds/2.0.0"),
    )
    .unwrap();
    assert_eq!(between.exports, changes.exports);
    assert_eq!(changes.exports[b].bytes_before, Some(2));
    assert_eq!(changes.exports[b].sha256_after, None);
    assert_eq!(env.versions(), ["1.0.0", "1.0.1", "1.1.0", "2.0.0"]);
}

/// Two export files of one name bound for one folder (two stages' `data.json`) would land on one
/// path, the second replacing the first: publishing refuses, naming both, and writes nothing.
#[test]
fn two_export_files_bound_for_one_path_are_refused() {
    let env = Env::new();
    let mut request = request_with_exports(&env, &[("data.json", "[1]")]);
    let other = env.dir.path().join("work/export-rare");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("data.json"), "[2]").unwrap();
    request.exports.push(SourceExport {
        format: "rare".into(),
        stage: "export-rare".into(),
        folder: "confact".into(),
        files: vec![other.join("data.json")],
    });
    let err = publish(&request, &PublishOptions::default()).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("exports/confact/data.json: two export files"),
        "{message}"
    );
    assert!(
        message.contains("export-confact/data.json") && message.contains("export-rare/data.json"),
        "{message}"
    );
    let dataset = request.snapshots_dir.join(&request.dataset);
    let published: Vec<_> = std::fs::read_dir(&dataset)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    assert!(published.is_empty(), "{published:?}");
}
