//! Two runs at once. Two builds of one pipeline in one folder: the second is refused at once,
//! naming the first's pid, and writes nothing; once the first is gone (SIGKILLed here, leaving
//! its lock file behind) the next run goes ahead. Two publishers of one dataset racing (threads released
//! together, many rounds): exactly one publishes, the others find its version unchanged, and no
//! version is half-written or doubled.

use crate::reliability_common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use noisebench_core::{Claim, Rows, TableKind};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{
    PublishOptions, PublishOutcome, PublishRequest, SourceTable, list_versions, publish,
};
use noisebench_testkit::{FakeServer, Reply};
use reliability_common::{answer, checkout};

fn files_under(dir: &Path) -> Vec<(String, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(m) = e.metadata() {
                out.push((p.display().to_string(), m.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_second_build_in_the_same_folder_is_refused_naming_the_first() {
    // Slow answers keep the first build inside its LLM stages while the second starts.
    let server = FakeServer::start_with(
        Reply::rule(|b| Reply::Content(answer(b))),
        Duration::from_millis(100),
    );
    let dir = checkout(&server.url(), "");
    let bin = env!("CARGO_BIN_EXE_noisebench");
    let mut first = Command::new(bin)
        .arg("--skip-preflight")
        .args(["build-snapshot", "--root"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while server.requests() == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the first build never asked anything"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = files_under(&dir.path().join("work/demo"));
    let second = Command::new(bin)
        .arg("--skip-preflight")
        .args(["build-snapshot", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first build ended before the second was refused"
    );
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success());
    assert!(
        stderr.contains("another run is using this folder")
            && stderr.contains(&format!("pid {}", first.id()))
            && stderr.contains("work/demo/.lock"),
        "{stderr}"
    );
    // The refused build wrote nothing: every file it could have touched is as it was (the first
    // build may have added files meanwhile, never the second).
    let after = files_under(&dir.path().join("work/demo"));
    for (path, modified) in &before {
        if let Some((_, now)) = after.iter().find(|(p, _)| p == path)
            && now != modified
        {
            // Only the first build's own stage outputs may have moved on.
            assert!(!path.ends_with(".lock"), "{path} rewritten");
        }
    }
    first.kill().unwrap(); // SIGKILL: its lock file stays behind
    first.wait().unwrap();
    assert!(dir.path().join("work/demo/.lock").is_file());

    // The kernel let go of the dead build's lock: the next run goes ahead (the claims track's
    // first stages, to keep this short).
    let out = Command::new(bin)
        .arg("--skip-preflight")
        .args(["run", "claims", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        noisebench_pipeline::runner::read_record(&dir.path().join("work/demo/claims")).is_some()
    );
}

fn claims(n: usize) -> Vec<Claim> {
    (0..n)
        .map(|i| Claim {
            id: format!("claim_{i:04}"),
            text: format!("claim number {i}"),
            verdict: "true".into(),
            original_rating: "true".into(),
            source: "test".into(),
            ..Claim::default()
        })
        .collect()
}

fn request(root: &Path, table: &Path) -> PublishRequest {
    PublishRequest {
        snapshots_dir: root.join("snapshots"),
        dataset: "ds".into(),
        title: "Test".into(),
        description: "Two publishers.".into(),
        license: None,
        pipeline: "test".into(),
        config_hash: "abc".into(),
        code_version: "0.0.0".into(),
        tables: vec![SourceTable {
            name: "claims".into(),
            kind: TableKind::Claims,
            path: table.to_path_buf(),
        }],
        exports: vec![],
        stages: vec![],
        provenance: Default::default(),
        checks: Vec::new(),
        quality: None,
    }
}

#[test]
fn two_publishers_of_one_dataset_never_both_publish() {
    const PUBLISHERS: usize = 3;
    const ROUNDS: usize = 12;
    for round in 0..ROUNDS {
        let dir = tempfile::tempdir().unwrap();
        // Each publisher has its own copy of the same table (as two refreshes would).
        let tables: Vec<_> = (0..PUBLISHERS)
            .map(|i| {
                let path = dir.path().join(format!("work{i}/claims.parquet"));
                table_io::write_table(&path, &Rows::Claims(claims(50 + round))).unwrap();
                path
            })
            .collect();
        let barrier = Arc::new(Barrier::new(PUBLISHERS));
        let outcomes: Vec<PublishOutcome> = std::thread::scope(|s| {
            let handles: Vec<_> = tables
                .iter()
                .map(|t| {
                    let barrier = barrier.clone();
                    let req = request(dir.path(), t);
                    s.spawn(move || {
                        barrier.wait();
                        publish(&req, &PublishOptions::default()).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let published = outcomes
            .iter()
            .filter(|o| matches!(o, PublishOutcome::Published { .. }))
            .count();
        assert_eq!(published, 1, "round {round}: {outcomes:?}");
        let dataset = dir.path().join("snapshots/ds");
        let versions: Vec<String> = list_versions(&dataset)
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert_eq!(versions, ["1.0.0"]);
        let leftovers: Vec<String> = std::fs::read_dir(&dataset)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "1.0.0")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        assert!(noisebench_snapshot::verify(&dataset.join("1.0.0")).ok());
    }
}
