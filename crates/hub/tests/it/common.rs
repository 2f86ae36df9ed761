//! A published version written by hand (the push reads files and the manifest, not tables), and
//! a fake Hub with a canary token.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_hub::HubConfig;
use noisebench_snapshot::{ExportEntry, Manifest, MetadataEntry, TableEntry};
use noisebench_testkit::FakeHub;
use sha2::{Digest, Sha256};

/// The token the fake Hub accepts: a canary that must appear in nothing the push writes or says.
pub const TOKEN: &str = "hf_canary_7f3a9c2e51d84b06";
pub const USER: &str = "acme";
pub const REPO: &str = "acme/noisy-demo";

pub fn hub() -> FakeHub {
    FakeHub::start(USER, TOKEN)
}

/// A configuration pointing at `hub` with its token in a variable of this test's own (tests of
/// one binary run in parallel, so each names its own variable).
pub fn config(hub: &FakeHub, var: &str, token: &str) -> HubConfig {
    // SAFETY: each test sets a variable no other test reads.
    unsafe { std::env::set_var(var, token) };
    HubConfig {
        repo: REPO.into(),
        token_env: var.into(),
        endpoint: Some(hub.url().to_string()),
        ..HubConfig::default()
    }
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Write `snapshots/demo/<version>/` under `root` with one table holding `rows`, an export, the
/// card, the change files and croissant.json, and a report beside it; return the version folder.
pub fn version(root: &Path, version: &str, rows: &str) -> PathBuf {
    let dir = root.join("snapshots/demo").join(version);
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::create_dir_all(dir.join("exports/raguard")).unwrap();
    let table = format!("PAR1 rows: {rows}").into_bytes();
    let export = format!("claim_id,claim\n{rows}\n").into_bytes();
    let croissant = format!("{{\"version\": \"{version}\"}}").into_bytes();
    std::fs::write(dir.join("data/claims.parquet"), &table).unwrap();
    std::fs::write(dir.join("exports/raguard/claims.csv"), &export).unwrap();
    std::fs::write(dir.join("croissant.json"), &croissant).unwrap();
    std::fs::write(
        dir.join("README.md"),
        format!("---\nconfigs: []\n---\n# demo {version}\n"),
    )
    .unwrap();
    std::fs::write(dir.join("CHANGES.md"), "# Changes\n").unwrap();
    std::fs::write(dir.join("changes.json"), "{}").unwrap();
    let mut tables = BTreeMap::new();
    tables.insert(
        "claims".to_string(),
        TableEntry {
            file: "data/claims.parquet".into(),
            kind: "claims".into(),
            sha256: sha(&table),
            rows: 1,
            bytes: table.len() as u64,
            schema_version: 1,
            schema_fingerprint: "f".into(),
        },
    );
    let mut exports = BTreeMap::new();
    exports.insert(
        "exports/raguard/claims.csv".to_string(),
        ExportEntry {
            format: "raguard".into(),
            stage: "raguard".into(),
            sha256: sha(&export),
            bytes: export.len() as u64,
        },
    );
    let mut metadata = BTreeMap::new();
    metadata.insert(
        "croissant.json".to_string(),
        MetadataEntry {
            sha256: sha(&croissant),
            bytes: croissant.len() as u64,
        },
    );
    let manifest = Manifest {
        dataset: "demo".into(),
        version: version.into(),
        parent: None,
        created_at: "2026-01-01T00:00:00Z".into(),
        pipeline: "demo".into(),
        config_hash: "c".into(),
        code_version: "0".into(),
        tables,
        exports,
        provenance: BTreeMap::new(),
        splits: BTreeMap::new(),
        metadata,
        checks: Vec::new(),
        stages: Vec::new(),
    };
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    std::fs::write(
        root.join(format!("snapshots/demo/{version}.report.html")),
        format!("<html>{version}</html>"),
    )
    .unwrap();
    dir
}

pub fn report(root: &Path, version: &str) -> PathBuf {
    root.join(format!("snapshots/demo/{version}.report.html"))
}

/// Every byte the fake Hub holds for `repo` (all commits' files), as text.
pub fn hub_bytes(hub: &FakeHub, repo: &str) -> String {
    let mut all = String::new();
    if let Some(r) = hub.repo(repo) {
        for c in r.commits {
            all.push_str(&c.summary);
            for (p, b) in c.files {
                all.push_str(&p);
                all.push_str(&String::from_utf8_lossy(&b));
            }
        }
    }
    all
}
