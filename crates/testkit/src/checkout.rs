//! A fresh copy of the repository's pipelines and fixtures, so an end-to-end test can build, edit
//! and break them without touching the checkout.

use std::path::{Path, PathBuf};

/// The repository root (the workspace folder).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the testkit crate sits two folders below the repository root")
}

/// Copy the folder `from` into `to`, recursively. Panics on any error (tests only).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target)
                .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
        }
    }
}

/// A temporary folder holding copies of the repository's `pipelines/` and `fixtures/`, as a fresh
/// checkout has them; removed when dropped.
pub fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for folder in ["pipelines", "fixtures"] {
        copy_dir(&repo_root().join(folder), &dir.path().join(folder));
    }
    dir
}
