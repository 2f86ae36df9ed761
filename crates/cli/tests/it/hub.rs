//! The Hub from the command line, against the fake Hub on 127.0.0.1 (`FakeHub`): `hub push` of
//! the demo (again: skipped), `verify` and `eval` of `hf://acme/demo@v1.0.0` (the same scores as
//! on the folder), `[publish.hub]` pushing what `build-snapshot` publishes, a push killed while
//! the Hub holds its commit (no commit; the rerun pushes every file once); with a canary set as
//! `HF_TOKEN` that no output, log line (at debug level) or file may hold; and Hugging Face
//! `datasets` loading every config of a pushed version by its tag, as on the folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use noisebench_testkit::FakeHub;

use crate::shared::demo_copy;

const CANARY: &str = "hf_canary_5d1e8f0a2b7c4396";

fn noisebench(root: &Path, hub: &FakeHub, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .arg("--root")
        .arg(root)
        .arg("--skip-preflight")
        .args(args)
        .env("HF_TOKEN", CANARY)
        .env("HF_ENDPOINT", hub.url())
        .env("NOISEBENCH_LOG", "debug")
        .env_remove("NOISEBENCH_REMOTE_WORK")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        !stdout.contains(CANARY) && !stderr.contains(CANARY),
        "the token was printed"
    );
    stdout.into_owned()
}

/// The score rows of `eval`'s table (`| task | metric | ...`), without the header.
fn score_rows(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| task "))
        .map(str::to_string)
        .collect()
}

fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return hits;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            hits.extend(files_holding(&p, needle));
        } else if let Ok(bytes) = std::fs::read(&p)
            && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        {
            hits.push(p.display().to_string());
        }
    }
    hits
}

#[test]
fn the_demo_pushed_to_the_hub_reads_back_with_the_same_scores() {
    let hub = FakeHub::start("acme", CANARY);
    let (root, snapshot) = demo_copy();
    let snap = snapshot.to_str().unwrap();

    let started = std::time::Instant::now();
    let first = ok(&noisebench(
        &root,
        &hub,
        &["hub", "push", snap, "--repo", "acme/demo"],
    ));
    assert!(first.contains("pushed v1.0.0 to acme/demo"), "{first}");
    // the figures of docs/publish.md (`-- --nocapture`)
    eprintln!(
        "{} ({:.2} s)",
        first.trim(),
        started.elapsed().as_secs_f64()
    );
    let started = std::time::Instant::now();
    let again = ok(&noisebench(
        &root,
        &hub,
        &["hub", "push", snap, "--repo", "acme/demo"],
    ));
    assert!(
        again.contains("already has v1.0.0 with the same content"),
        "{again}"
    );
    eprintln!(
        "{} ({:.2} s)",
        again.trim(),
        started.elapsed().as_secs_f64()
    );
    let repo = hub.repo("acme/demo").unwrap();
    assert_eq!(repo.commits.len(), 2, "the initial commit and one push");
    let tree = &repo.resolve("v1.0.0").unwrap().files;
    for f in [
        "README.md",
        "manifest.json",
        "croissant.json",
        "CHANGES.md",
        "report.html",
    ] {
        assert!(tree.contains_key(f), "{f}: {:?}", tree.keys());
    }
    assert!(tree.keys().any(|k| k.starts_with("data/")));
    assert!(tree.keys().any(|k| k.starts_with("exports/")));

    let verified = ok(&noisebench(
        &root,
        &hub,
        &["verify", "hf://acme/demo@v1.0.0"],
    ));
    assert!(verified.contains(": ok ("), "{verified}");
    assert!(
        root.join("work/hub/acme/demo/1.0.0/manifest.json")
            .is_file()
    );

    let on_folder = ok(&noisebench(
        &root,
        &hub,
        &["eval", snap, "--out", "evals-folder"],
    ));
    let on_hub = ok(&noisebench(
        &root,
        &hub,
        &["eval", "hf://acme/demo@v1.0.0", "--out", "evals-hub"],
    ));
    let (a, b) = (score_rows(&on_folder), score_rows(&on_hub));
    assert!(!a.is_empty(), "{on_folder}");
    assert_eq!(a, b);

    assert_eq!(files_holding(&root, CANARY), Vec::<String>::new());
    for r in hub.requests() {
        assert!(!r.path.contains(CANARY), "{r:?}");
    }
}

#[test]
fn datasets_loads_every_config_of_a_pushed_version_by_its_tag_as_on_the_folder() {
    if !crate::shared::python_modules(&["datasets"]) {
        return;
    }
    let hub = FakeHub::start("acme", CANARY);
    let (root, snapshot) = demo_copy();
    let pushed = ok(&noisebench(
        &root,
        &hub,
        &[
            "hub",
            "push",
            snapshot.to_str().unwrap(),
            "--repo",
            "acme/demo",
        ],
    ));
    assert!(pushed.contains("pushed v1.0.0"), "{pushed}");
    // a later commit on main must not be what `revision="v1.0.0"` reads
    hub.commit_on_main(
        "acme/demo",
        "README.md",
        b"---\nconfigs: []\n---\nmoved on\n",
    );

    let manifest = noisebench_snapshot::Manifest::read(&snapshot).unwrap();
    let configs: Vec<&str> = manifest.tables.keys().map(String::as_str).collect();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hub_datasets.py");
    let home = tempfile::tempdir().unwrap();
    let load = |revision: &str, configs: &[&str]| {
        let out = Command::new("python3")
            .arg(&script)
            .args(["acme/demo", revision])
            .args(configs)
            .env("HF_ENDPOINT", hub.url())
            .env("HF_HOME", home.path())
            .env("HF_TOKEN", CANARY)
            .env("HF_HUB_DISABLE_TELEMETRY", "1")
            .env_remove("HF_HUB_OFFLINE")
            .env_remove("HF_DATASETS_OFFLINE")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains(CANARY), "the token was printed: {stderr}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };

    let read = load("v1.0.0", &configs);
    assert_eq!(read["error"], serde_json::Value::Null, "{read:#}");
    for table in manifest.tables.keys() {
        assert_eq!(
            read["splits"][table],
            crate::shared::datasets_splits(&manifest, table),
            "{table} at v1.0.0"
        );
    }
    // a version that was never pushed is an error, not another version's rows
    let missing = load("v9.9.9", &["questions"]);
    let error = missing["error"].as_str().unwrap_or_default();
    assert!(error.contains("v9.9.9"), "{missing:#}");
    assert_eq!(files_holding(&root, CANARY), Vec::<String>::new());
}

#[test]
fn publish_hub_in_the_pipeline_pushes_what_build_snapshot_publishes() {
    let hub = FakeHub::start("acme", CANARY);
    let (root, _) = demo_copy();
    let pipeline = root.join("pipelines/demo.toml");
    let mut text = std::fs::read_to_string(&pipeline).unwrap();
    text.push_str("\n[publish.hub]\nrepo = \"acme/demo-auto\"\nprivate = true\n");
    std::fs::write(&pipeline, text).unwrap();

    // `check` says where versions go and that the token is there (never what it is)
    let checked = ok(&noisebench(&root, &hub, &["check", "demo"]));
    assert!(
        checked.contains("hub: pushes each published version to acme/demo-auto, private")
            && checked.contains("token from HF_TOKEN (set)"),
        "{checked}"
    );

    // nothing new to publish, but the latest version is not on the Hub yet: pushed
    let first = ok(&noisebench(&root, &hub, &["build-snapshot", "demo"]));
    assert!(first.contains("pushed v1.0.0 to acme/demo-auto"), "{first}");
    assert!(hub.repo("acme/demo-auto").unwrap().private);
    // and once there, a run that publishes nothing pushes nothing
    let second = ok(&noisebench(&root, &hub, &["build-snapshot", "demo"]));
    assert!(second.contains("already has v1.0.0"), "{second}");
    assert_eq!(hub.repo("acme/demo-auto").unwrap().commits.len(), 2);

    // a wrong token: the run fails naming the variable, not the token
    let out = Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .arg("--root")
        .arg(&root)
        .args(["--skip-preflight", "build-snapshot", "demo"])
        .env("HF_TOKEN", "hf_wrong_canary_9e8d7c6b")
        .env("HF_ENDPOINT", hub.url())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("HF_TOKEN") && stderr.contains("401"),
        "{stderr}"
    );
    assert!(!stderr.contains("hf_wrong_canary"), "{stderr}");
    assert_eq!(files_holding(&root, CANARY), Vec::<String>::new());

    // a mistake in [publish.hub] stops `check`, naming the field
    let mut text = std::fs::read_to_string(&pipeline).unwrap();
    text = text.replace("private = true", "privat = true");
    std::fs::write(&pipeline, text).unwrap();
    let out = noisebench(&root, &hub, &["check", "demo"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("privat"),
        "{stderr}"
    );
}

#[test]
fn a_push_killed_at_its_commit_leaves_no_commit_and_the_rerun_pushes_every_file_once() {
    let hub = FakeHub::start("acme", CANARY);
    let (root, snapshot) = demo_copy();
    let snap = snapshot.to_str().unwrap();
    hub.hold(noisebench_testkit::HubStep::Commit);
    let mut child = Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .arg("--root")
        .arg(&root)
        .args(["hub", "push", snap, "--repo", "acme/demo"])
        .env("HF_TOKEN", CANARY)
        .env("HF_ENDPOINT", hub.url())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // every file is read and sent; the commit is in the Hub's hands when the push is killed
    let start = std::time::Instant::now();
    while hub.held() == 0 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "the push never reached its commit"
        );
        assert!(child.try_wait().unwrap().is_none(), "the push ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    hub.release();
    let repo = hub.repo("acme/demo").unwrap();
    assert_eq!(
        repo.commits.len(),
        1,
        "only the repository's initial commit"
    );
    assert!(repo.tags.is_empty());

    let rerun = ok(&noisebench(
        &root,
        &hub,
        &["hub", "push", snap, "--repo", "acme/demo"],
    ));
    assert!(rerun.contains("pushed v1.0.0"), "{rerun}");
    let repo = hub.repo("acme/demo").unwrap();
    assert_eq!(repo.commits.len(), 2, "one commit of the version");
    let tree = &repo.resolve("v1.0.0").unwrap().files;
    let mut local = Vec::new();
    collect(&snapshot, &snapshot, &mut local);
    for (rel, bytes) in local {
        assert_eq!(tree.get(&rel), Some(&bytes), "{rel}");
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(root, &p, out);
        } else if !e.file_name().to_string_lossy().starts_with('.') {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read(&p).unwrap()));
        }
    }
}
