//! What several modules of this binary build the same way, built once per run of the binary.
//!
//! Nothing here depends on another test's side effects: each builder starts from the repository's
//! `pipelines/` and `fixtures/`, and the result is only read. A test that writes into a checkout
//! takes a copy ([`demo_copy`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::NoProgress;
use noisebench_snapshot::{PublishOptions, PublishOutcome};
use noisebench_testkit::{copy_dir, repo_root};

/// A checkout (the repository's `pipelines/` and `fixtures/`) with the demo built offline,
/// kept under cargo's temporary folder for this target (which `cargo clean` empties): the
/// checkout and the version folder the build published. Read only; the first caller builds it,
/// the others wait for it.
pub fn demo() -> &'static (PathBuf, PathBuf) {
    static DEMO: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DEMO.get_or_init(|| {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap()
            .keep();
        for folder in ["pipelines", "fixtures"] {
            copy_dir(&repo_root().join(folder), &dir.join(folder));
        }
        let ws = Workspace::at(&dir, Arc::new(NoProgress));
        let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
        let Some(PublishOutcome::Published { dir: snapshot, .. }) = built.outcome else {
            panic!("the demo published nothing")
        };
        (dir, snapshot)
    })
}

/// A writable copy of [`demo`]'s checkout in a kept folder under cargo's temporary folder for
/// this target: the copy's root and its published version folder.
pub fn demo_copy() -> (PathBuf, PathBuf) {
    let (root, snapshot) = demo();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
        .keep();
    copy_dir(root, &dir);
    let within: &Path = snapshot.strip_prefix(root).unwrap();
    let copied = dir.join(within);
    (dir, copied)
}

/// Whether python3 can import every one of `modules`. When it cannot, the test is skipped with a
/// `SKIPPED:` line, unless `NOISEBENCH_REQUIRE_READERS` is set (CI sets it): then it fails.
pub fn python_modules(modules: &[&str]) -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", &format!("import {}", modules.join(", "))])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("NOISEBENCH_REQUIRE_READERS").is_none(),
            "python3 cannot import {modules:?}; `pip install {}`",
            modules.join(" ")
        );
        eprintln!("SKIPPED: python3 cannot import {modules:?}");
    }
    ok
}

/// The splits Hugging Face `datasets` gives a config of a published version, with their rows:
/// the question tables their real splits, every other table one `train`.
pub fn datasets_splits(manifest: &noisebench_snapshot::Manifest, table: &str) -> serde_json::Value {
    let splits = match manifest.splits.get(table) {
        Some(splits) => splits
            .iter()
            .map(|(s, e)| (s.clone(), serde_json::json!(e.rows)))
            .collect(),
        None => serde_json::Map::from_iter([(
            "train".to_string(),
            manifest.tables.get(table).map_or(0, |e| e.rows).into(),
        )]),
    };
    serde_json::Value::Object(splits)
}
