//! The Slurm plan, run for real: the demo pipeline built unsharded in one checkout, and in a second
//! checkout written by `noisebench plan --emit slurm --shards 3`, submitted with its `submit.sh` to
//! a single-node Slurm cluster on this machine (`scripts/slurm/setup.sh`: Debian's `slurmctld`,
//! `slurmd` and `munge`, started on localhost) and waited for (`scripts/slurm/wait.sh`). Every job
//! must end COMPLETED, every shard step must have run as an array of 3 tasks, and every file under
//! the published version's `data/` and `exports/` must be byte-identical to the unsharded build's.
//!
//! Opt-in (`#[ignore]`): enable with `just test-slurm`, which runs setup.sh and then this test.
//! It needs root (setup.sh installs the packages with apt and starts the daemons; jobs run as
//! root) and Debian's slurm packages, which setup.sh installs when missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use noisebench_testkit::{checkout, repo_root};

const SHARDS: u32 = 3;

fn run(what: &str, command: &mut Command) -> Output {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn noisebench(bin: &Path, root: &Path) -> Command {
    let mut command = Command::new(bin);
    command
        .current_dir(root)
        .env("NOISEBENCH_BIN", bin)
        .arg("--root")
        .arg(root);
    command
}

/// The only published version of the demo dataset under `root`.
fn only_version(root: &Path) -> PathBuf {
    let dataset = root.join("snapshots/demo");
    let versions: Vec<String> = std::fs::read_dir(&dataset)
        .unwrap_or_else(|e| panic!("{}: {e}", dataset.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".report.html") && !name.starts_with('.'))
        .collect();
    assert_eq!(versions, ["1.0.0"], "{}", dataset.display());
    dataset.join("1.0.0")
}

/// Every file under `dir`, by path inside it, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                out.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// `(step name, job id)` from submit.sh's output, one `NAME ID` line per step.
fn submitted(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (name, id) = (words.next()?, words.next_back()?);
            id.chars()
                .all(|c| c.is_ascii_digit())
                .then(|| (name.to_string(), id.to_string()))
        })
        .collect()
}

#[test]
#[ignore = "needs root and a local Slurm cluster: `just test-slurm` (runs scripts/slurm/setup.sh, which installs Debian's slurmctld, slurmd and munge)"]
fn the_slurm_plan_publishes_the_unsharded_snapshot() {
    let scripts = repo_root().join("scripts/slurm");
    // The jobs run a copy of the binary: a rebuild of target/ while they queue would otherwise
    // swap the program under the later jobs. `plan` writes NOISEBENCH_BIN into the scripts.
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = bin_dir.path().join("noisebench");
    std::fs::copy(env!("CARGO_BIN_EXE_noisebench"), &bin).unwrap();

    // The reference: the demo built in one process, unsharded.
    let local = checkout();
    let started = Instant::now();
    run(
        "build-snapshot (unsharded)",
        noisebench(&bin, local.path()).args(["build-snapshot", "pipelines/demo.toml"]),
    );
    let local_time = started.elapsed();

    let started = Instant::now();
    run(
        "scripts/slurm/setup.sh",
        &mut Command::new(scripts.join("setup.sh")),
    );
    let setup_time = started.elapsed();

    // The same pipeline as Slurm jobs in a second checkout.
    let sharded = checkout();
    let plan_dir = sharded.path().join("slurm-plan");
    run(
        "plan --emit slurm",
        noisebench(&bin, sharded.path())
            .args(["plan", "pipelines/demo.toml", "--emit", "slurm", "--shards"])
            .arg(SHARDS.to_string())
            .arg("--out")
            .arg(&plan_dir),
    );
    let started = Instant::now();
    let submit = run(
        "submit.sh",
        Command::new(plan_dir.join("submit.sh")).current_dir(sharded.path()),
    );
    let jobs = submitted(&String::from_utf8_lossy(&submit.stdout));
    let arrays = jobs
        .iter()
        .filter(|(n, _)| n.starts_with("shards-"))
        .count();
    assert!(
        arrays >= 1 && jobs.last().is_some_and(|(n, _)| n == "publish"),
        "submit.sh should submit shard arrays and end with the publish job: {jobs:?}"
    );
    let mut wait = Command::new(scripts.join("wait.sh"));
    wait.args(["--timeout", "1800"])
        .args(jobs.iter().map(|(_, id)| id));
    let waited = wait.output().expect("wait.sh starts");
    let report = String::from_utf8_lossy(&waited.stdout).into_owned();
    let slurm_time = started.elapsed();
    assert!(
        waited.status.success(),
        "a job did not complete:\n{report}\n{}",
        String::from_utf8_lossy(&waited.stderr)
    );
    println!("{report}");
    // One line per job, one per task of an array: every shard step ran as SHARDS tasks.
    let task_lines = report
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|id| id.contains('_'))
                && l.contains(" COMPLETED ")
        })
        .count();
    assert_eq!(task_lines, arrays * SHARDS as usize, "{report}");
    // Each sharded stage wrote its parts where `run --shard i/n` puts them.
    for (name, _) in jobs.iter().filter(|(n, _)| n.starts_with("shards-")) {
        let stage = &name["shards-".len()..];
        for i in 0..SHARDS {
            let part = sharded
                .path()
                .join(format!("work/demo/{stage}/shards/{i}-of-{SHARDS}"));
            assert!(part.is_dir(), "{} missing", part.display());
        }
    }
    println!(
        "{} jobs, {arrays} of them arrays of {SHARDS} tasks",
        jobs.len()
    );

    // The published tables and exports, byte for byte.
    let (a, b) = (only_version(local.path()), only_version(sharded.path()));
    let mut compared = 0;
    for folder in ["data", "exports"] {
        let (want, got) = (files(&a.join(folder)), files(&b.join(folder)));
        assert_eq!(
            want.keys().collect::<Vec<_>>(),
            got.keys().collect::<Vec<_>>(),
            "{folder}/ holds other files"
        );
        for (name, bytes) in &want {
            assert!(
                got[name] == *bytes,
                "{folder}/{name} differs between the unsharded build and the Slurm run"
            );
            compared += 1;
        }
    }
    assert!(
        a.join("data/claims.parquet").is_file() && compared >= 20,
        "only {compared} files compared"
    );
    println!(
        "{compared} files identical; unsharded build {:.1} s, setup.sh {:.1} s, Slurm plan submitted to published {:.1} s",
        local_time.as_secs_f64(),
        setup_time.as_secs_f64(),
        slurm_time.as_secs_f64()
    );
    assert!(slurm_time < Duration::from_secs(1800));
}
