//! Shards: the demo pipeline, both tracks, against a fake OpenAI-compatible endpoint, built once
//! whole and once with every per-item stage run as 3 shards (`run STAGE --shard i/3`, through
//! the binary) and merged (`merge STAGE --shards 3`). Every stage's tables, and the published
//! snapshot, are byte-identical; the merges ask the endpoint nothing (every answer comes from
//! the parts' work), the publishing build only the quality card's closed-book questions, and
//! the parts together ask about what the whole build asked.

use crate::reliability_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use noisebench_cli::Workspace;
use noisebench_core::NoProgress;
use noisebench_testkit::{FakeServer, Reply};
use reliability_common::{answer, checkout, only_version, version_files};

fn noisebench(root: &Path, args: &[&str]) -> String {
    reliability_common::noisebench(root, args, &[])
}

/// Every stage's record, by stage: its tables' sha256 by table name.
fn stage_tables(root: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("work/demo")).unwrap() {
        let dir = entry.unwrap().path();
        let Some(record) = noisebench_pipeline::runner::read_record(&dir) else {
            continue;
        };
        out.insert(
            record.id.clone(),
            record
                .tables
                .iter()
                .map(|(name, t)| (name.clone(), t.sha256.clone()))
                .collect(),
        );
    }
    out
}

#[test]
fn sharded_and_merged_stages_publish_what_one_process_publishes() {
    // One endpoint for both builds: its address is part of the pipeline file, whose hash the
    // snapshot records. Each checkout has its own cache.
    let server = FakeServer::answering(|b| Reply::Content(answer(b)));
    let whole = checkout(&server.url(), "");
    noisebench(whole.path(), &["build-snapshot"]);
    let whole_requests = server.requests();

    let sharded = checkout(&server.url(), "");
    let ws = Workspace::at(sharded.path(), Arc::new(NoProgress));
    let loaded = ws.load("demo").unwrap();
    let mut shardable = Vec::new();
    let mut shard_requests = 0;
    for stage in &loaded.plan.stages {
        if stage.stage.shard_keys().is_empty() {
            let before = server.requests();
            noisebench(sharded.path(), &["run", &stage.id]);
            shard_requests += server.requests() - before;
            continue;
        }
        shardable.push(stage.id.clone());
        // Upstream of a shard must be done: a shard never runs it.
        let before = server.requests();
        for i in 0..3 {
            let out = noisebench(
                sharded.path(),
                &["run", &stage.id, "--shard", &format!("{i}/3")],
            );
            assert!(out.contains(&format!("{} [{i}/3]", stage.id)), "{out}");
        }
        shard_requests += server.requests() - before;
        let before = server.requests();
        let out = noisebench(sharded.path(), &["merge", &stage.id, "--shards", "3"]);
        assert_eq!(
            server.requests(),
            before,
            "merging `{}` asked the endpoint: {out}",
            stage.id
        );
        assert!(out.contains("merged 3 parts"), "{out}");
    }
    shardable.sort();
    assert_eq!(
        shardable,
        [
            "chunks",
            "document-perturbations",
            "documents",
            "labels",
            "qa-judge",
            "queries",
            "query-perturbations",
            "questions",
            "search",
            "triplets",
        ]
    );
    // Everything is done: the build only publishes, asking nothing but the quality card's
    // closed-book check (this checkout's cache has not seen it).
    let before = server.requests();
    let out = noisebench(sharded.path(), &["build-snapshot"]);
    let card: Vec<String> = server.bodies()[before..]
        .iter()
        .map(|b| reliability_common::task_of(b).to_string())
        .collect();
    assert!(!card.is_empty(), "{out}");
    assert!(
        card.iter()
            .all(|t| t == "eval_answer" || t == "answer_judge"),
        "the publishing build asked {card:?}: {out}"
    );
    shard_requests += card.len();

    let a = stage_tables(whole.path());
    let b = stage_tables(sharded.path());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (stage, tables) in &a {
        assert_eq!(tables, &b[stage], "stage `{stage}`'s tables differ");
    }
    let (va, vb) = (only_version(whole.path()), only_version(sharded.path()));
    assert_eq!(version_files(&va), version_files(&vb));
    // The parts share the work: an item is asked in one shard only. A few requests repeat
    // across shards where two items share one (one rating per web site, one embedding per text).
    eprintln!("whole build: {whole_requests} requests; shards: {shard_requests}");
    assert!(
        shard_requests >= whole_requests,
        "{shard_requests} < {whole_requests}"
    );
    assert!(
        shard_requests * 100 <= whole_requests * 110,
        "{shard_requests} > 110% of {whole_requests}"
    );
}

#[test]
fn a_shard_refuses_whole_input_stages_and_missing_upstream_and_merge_names_missing_parts() {
    let root = noisebench_testkit::checkout();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_noisebench"))
            .arg("--skip-preflight")
            .arg("--root")
            .arg(root.path())
            .args(args)
            .output()
            .unwrap()
    };
    let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();

    let out = run(&["run", "graph", "--shard", "0/2"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("stage `graph` does not run in shards"),
        "{}",
        text(&out)
    );
    let out = run(&["run", "queries", "--shard", "2/2"]);
    assert!(
        text(&out).contains("the index must be below the count"),
        "{}",
        text(&out)
    );

    let out = run(&["run", "queries", "--shard", "0/2"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("needs `scraped` up to date"),
        "{}",
        text(&out)
    );

    assert!(run(&["run", "claims"]).status.success());
    assert!(run(&["run", "queries", "--shard", "1/2"]).status.success());
    let out = run(&["merge", "queries", "--shards", "2"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("shard 0/2 has not run"),
        "{}",
        text(&out)
    );
    assert!(run(&["run", "queries", "--shard", "0/2"]).status.success());
    let out = run(&["merge", "queries", "--shards", "2"]);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn plan_writes_slurm_arrays_with_dependencies_and_indexed_jobs() {
    let root = noisebench_testkit::checkout();
    let out = root.path().join("plan-slurm");
    let printed = noisebench(
        root.path(),
        &[
            "plan",
            "demo",
            "--emit",
            "slurm",
            "--shards",
            "3",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let submit = std::fs::read_to_string(out.join("submit.sh")).unwrap();
    assert!(printed.contains("submit.sh"), "{printed}");
    // Every step is submitted after the one before it completed.
    let submitted: Vec<&str> = submit
        .lines()
        .filter(|l| l.contains("sbatch --parsable"))
        .collect();
    let files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sbatch"))
        .collect();
    assert_eq!(submitted.len(), files.len());
    assert!(submit.contains("--dependency=afterok:$prev"), "{submit}");
    let labels = std::fs::read_to_string(
        out.join(
            files
                .iter()
                .find(|f| f.ends_with("-shards-labels.sbatch"))
                .unwrap(),
        ),
    )
    .unwrap();
    assert!(labels.contains("#SBATCH --array=0-2"), "{labels}");
    assert!(
        labels.contains("--shard \"${SLURM_ARRAY_TASK_ID}/3\""),
        "{labels}"
    );
    let graph = std::fs::read_to_string(
        out.join(
            files
                .iter()
                .find(|f| f.ends_with("-run-graph.sbatch"))
                .unwrap(),
        ),
    )
    .unwrap();
    assert!(!graph.contains("--array"), "{graph}");
    let last = files.iter().max().unwrap();
    assert!(last.ends_with("-publish.sbatch"), "{last}");
    // 10 stages run once, 10 as 3 shards and a merge, then the publish.
    assert_eq!(files.len(), 10 + 2 * 10 + 1);

    let k8s = root.path().join("plan-k8s");
    noisebench(
        root.path(),
        &[
            "plan",
            "demo",
            "--emit",
            "k8s",
            "--shards",
            "3",
            "--out",
            k8s.to_str().unwrap(),
        ],
    );
    let apply = std::fs::read_to_string(k8s.join("apply.sh")).unwrap();
    assert_eq!(
        apply.matches("kubectl \"$@\" apply -f").count(),
        files.len()
    );
    let job = std::fs::read_to_string(
        k8s.join(
            std::fs::read_dir(&k8s)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .find(|n| n.ends_with("-shards-labels.yaml"))
                .unwrap(),
        ),
    )
    .unwrap();
    assert!(job.contains("completionMode: \"Indexed\""), "{job}");
    assert!(job.contains("completions: 3"), "{job}");
    assert!(job.contains("${JOB_COMPLETION_INDEX}/3"), "{job}");
}
