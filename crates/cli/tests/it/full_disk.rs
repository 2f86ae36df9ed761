//! A full disk. A small offline pipeline (claims imported, reports read and chunked: the writes
//! of the demo's first stages, in seconds) is built once (version 1.0.0), an input changes (a
//! report is removed), and the next build meets a disk with almost no space left: as root, a small tmpfs
//! filled with a ballast file; otherwise every atomic write under the checkout fails with ENOSPC
//! (the pipeline's `NOISEBENCH_TEST_FULL_DISK_UNDER` hook). The build fails naming the path it
//! could not write; the stages finished before keep outputs that match their records; 1.0.0 is
//! intact and nothing else is published; once space is freed the rerun publishes a version
//! byte-identical to one built on a roomy disk.

use crate::reliability_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use noisebench_pipeline::atomic::FULL_DISK_HOOK;
use noisebench_pipeline::runner::read_record;
use noisebench_pipeline::table_io;
use reliability_common::version_files;

/// The pipeline under test: imported claims, reports and their chunks, published as `disk`.
const PIPELINE: &str = r#"
[pipeline]
name = "disk"

[llm]
backend = "offline"

[stages.claims]
kind = "claims-import"
[[stages.claims.config.sources]]
path = "fixtures/claims/averitec.jsonl"
preset = "averitec"

[stages.reports]
kind = "reports"
[stages.reports.config]
sources = [
  { path = "fixtures/reports/edgar/*.json", format = "edgar", domain = "finance" },
  { path = "fixtures/reports/kg/*_2024.md", domain = "economics" },
]

[stages.chunks]
kind = "chunks"
inputs = { reports = "reports" }

[snapshot]
dataset = "disk"
tables = ["claims", "reports", "chunks"]
"#;

/// A fresh copy of the fixtures with the pipeline beside them, under `root`.
fn prepare(root: &Path) {
    noisebench_testkit::copy_dir(
        &noisebench_testkit::repo_root().join("fixtures"),
        &root.join("fixtures"),
    );
    std::fs::create_dir_all(root.join("pipelines")).unwrap();
    std::fs::write(root.join("pipelines/disk.toml"), PIPELINE).unwrap();
}

fn build(root: &Path, full_disk_under: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_noisebench"));
    cmd.args(["build-snapshot", "disk", "--root"]).arg(root);
    match full_disk_under {
        Some(dir) => cmd.env(FULL_DISK_HOOK, dir),
        None => cmd.env_remove(FULL_DISK_HOOK),
    };
    cmd.output().unwrap()
}

fn built(root: &Path) {
    let out = build(root, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn versions(root: &Path) -> Vec<String> {
    noisebench_snapshot::list_versions(&root.join("snapshots/disk"))
        .iter()
        .map(|v| v.to_string())
        .collect()
}

/// The input change both builds see: one of the report track's reports removed.
fn change_input(root: &Path) {
    std::fs::remove_file(root.join("fixtures/reports/kg/calder_port_review_2024.md")).unwrap();
}

/// A tmpfs mounted at a fresh folder, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(size_mb: u64) -> Option<Tmpfs> {
        // `NOISEBENCH_FULL_DISK_INJECT=1`: the injected error even as root.
        if std::env::var_os("NOISEBENCH_FULL_DISK_INJECT").is_some() {
            return None;
        }
        let uid = Command::new("id").arg("-u").output().ok()?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return None;
        }
        let dir = std::env::temp_dir().join(format!("noisebench-full-disk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mb}m"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        Some(Tmpfs(dir))
    }

    /// Bytes free on it.
    fn free(&self) -> u64 {
        let out = Command::new("df")
            .args(["--output=avail", "-B1"])
            .arg(&self.0)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Fill `dir`'s file system until `leave` bytes are free; returns the ballast file.
fn fill(fs: &Tmpfs, dir: &Path, leave: u64) -> PathBuf {
    let ballast = dir.join("ballast");
    let size = fs.free().saturating_sub(leave);
    let chunk = vec![0xA5u8; 1 << 20];
    let mut file = std::fs::File::create(&ballast).unwrap();
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        use std::io::Write;
        if file.write_all(&chunk[..n]).is_err() {
            break;
        }
        left -= n as u64;
    }
    file.sync_all().unwrap();
    ballast
}

/// Every stage with a record has outputs whose hashes match it.
fn finished_stages_intact(root: &Path) -> usize {
    let mut checked = 0;
    for entry in std::fs::read_dir(root.join("work/disk")).unwrap() {
        let stage = entry.unwrap().path();
        let Some(record) = read_record(&stage) else {
            continue;
        };
        for t in record.tables.values() {
            let (hash, _) = table_io::hash_file(&stage.join(&t.file)).unwrap();
            assert_eq!(hash, t.sha256, "{}/{}", stage.display(), t.file);
        }
        for (name, f) in &record.files {
            let (hash, _) = table_io::hash_file(&stage.join(name)).unwrap();
            assert_eq!(hash, f.sha256, "{}/{name}", stage.display());
        }
        checked += 1;
    }
    checked
}

#[test]
fn a_full_disk_fails_the_stage_naming_the_path_publishes_nothing_and_a_rerun_recovers() {
    // The reference: the same two builds on a roomy disk.
    let roomy = tempfile::tempdir().unwrap();
    prepare(roomy.path());
    built(roomy.path());
    change_input(roomy.path());
    built(roomy.path());
    let roomy_versions = versions(roomy.path());
    assert_eq!(roomy_versions.len(), 2, "{roomy_versions:?}");
    let second = roomy_versions[1].clone();
    let expected = version_files(&roomy.path().join("snapshots/disk").join(&second));

    let tmpfs = Tmpfs::mount(64);
    let holder = tempfile::tempdir().unwrap();
    let root = match &tmpfs {
        Some(fs) => fs.0.join("checkout"),
        None => holder.path().join("checkout"),
    };
    prepare(&root);
    built(&root);
    let first = root.join("snapshots/disk/1.0.0");
    let first_files = version_files(&first);
    change_input(&root);

    let (out, ballast) = match &tmpfs {
        Some(fs) => {
            let ballast = fill(fs, &fs.0, 48 * 1024);
            (build(&root, None), Some(ballast))
        }
        None => (build(&root, Some(&root)), None),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!(
        "full disk ({}): {}",
        if tmpfs.is_some() {
            "tmpfs"
        } else {
            "injected ENOSPC"
        },
        stderr.trim()
    );
    assert!(!out.status.success(), "the build went through: {stderr}");
    assert!(
        stderr.contains("No space left on device") || stderr.contains("os error 28"),
        "{stderr}"
    );
    let error = stderr
        .lines()
        .find(|l| l.starts_with("error"))
        .unwrap_or_default();
    assert!(
        error.contains(&root.join("work/disk").display().to_string())
            && !error.contains("llm_calls.parquet"),
        "the stage's path is named: {stderr}"
    );
    // Nothing published; the previous version intact; finished stages consistent.
    assert_eq!(versions(&root), ["1.0.0"]);
    assert_eq!(version_files(&first), first_files);
    assert!(noisebench_snapshot::verify(&first).ok());
    assert!(finished_stages_intact(&root) > 0);

    // Space freed: the rerun publishes what the roomy disk did.
    if let Some(b) = ballast {
        std::fs::remove_file(b).unwrap();
    }
    built(&root);
    assert_eq!(versions(&root), roomy_versions);
    assert_eq!(
        version_files(&root.join("snapshots/disk").join(&second)),
        expected,
        "the recovered version differs from the roomy disk's"
    );
    drop(tmpfs);
}
