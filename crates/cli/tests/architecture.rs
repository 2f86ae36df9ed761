//! The architecture's dependency rules, read from `cargo metadata` so they hold without anyone
//! remembering them: stage crates never depend on each other; only `noisebench-pipeline` links
//! polars; `core` depends on no other crate of ours; test support is never a normal dependency;
//! `releases` (the release formats, used by the export stages and `eval`) depends only on `core`
//! and `text` of ours.

use std::collections::BTreeMap;

use serde_json::Value;

/// Our crates that are not stages. Every other `noisebench-*` crate is a stage crate, so a new
/// stage crate is held to the rules without being listed; a new shared crate must be added here.
const LAYERS: &[&str] = &[
    "noisebench-core",
    "noisebench-pipeline",
    "noisebench-snapshot",
    "noisebench-llm",
    "noisebench-web",
    "noisebench-text",
    "noisebench-index",
    "noisebench-report",
    "noisebench-cli",
    // object storage for snapshots, stage folders, the web archive and the LLM cache
    "noisebench-store",
    "noisebench-testkit",
    // fuzz targets over every stage crate's parsers; nothing depends on it
    "noisebench-fuzz-targets",
    // the seed papers' release formats (records, reader, writer); export stages and eval use it
    "noisebench-releases",
];

/// Shared crates a stage crate may use.
const BELOW_STAGES: &[&str] = &[
    "noisebench-core",
    "noisebench-llm",
    "noisebench-web",
    "noisebench-text",
    "noisebench-index",
    "noisebench-releases",
];

/// The only crates of ours `noisebench-releases` may depend on: it sits below the stages.
const BELOW_RELEASES: &[&str] = &["noisebench-core", "noisebench-text"];

struct Dep {
    name: String,
    /// `normal`, `dev` or `build`.
    kind: String,
}

fn workspace() -> BTreeMap<String, Vec<Dep>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| Dep {
                    name: d["name"].as_str().unwrap().to_string(),
                    kind: d["kind"].as_str().unwrap_or("normal").to_string(),
                })
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

/// Rule violations of a workspace, one sentence each.
fn violations(crates: &BTreeMap<String, Vec<Dep>>) -> Vec<String> {
    let ours = |n: &str| n.starts_with("noisebench-");
    let stage = |n: &str| ours(n) && !LAYERS.contains(&n);
    let mut found = Vec::new();
    for (name, deps) in crates {
        for dep in deps {
            let d = dep.name.as_str();
            if stage(name) && stage(d) && d != name {
                found.push(format!(
                    "stage crate {name} depends on stage crate {d} ({}); share through core, text or index",
                    dep.kind
                ));
            }
            if stage(name)
                && ours(d)
                && !stage(d)
                && !BELOW_STAGES.contains(&d)
                && dep.kind == "normal"
                && d != "noisebench-testkit"
            {
                found.push(format!(
                    "stage crate {name} depends on {d}, which sits above the stages"
                ));
            }
            if (d == "polars" || d.starts_with("polars-")) && name != "noisebench-pipeline" {
                found.push(format!(
                    "{name} depends on {d} ({}); only noisebench-pipeline links polars",
                    dep.kind
                ));
            }
            if name == "noisebench-releases"
                && ours(d)
                && !BELOW_RELEASES.contains(&d)
                && d != "noisebench-testkit"
            {
                found.push(format!(
                    "noisebench-releases depends on {d} ({}); release formats use only core and text",
                    dep.kind
                ));
            }
            if name == "noisebench-core" && ours(d) {
                found.push(format!(
                    "noisebench-core depends on {d}; core depends on none of ours"
                ));
            }
            if d == "noisebench-testkit" && dep.kind != "dev" {
                found.push(format!(
                    "{name} has noisebench-testkit as a {} dependency; it is test support only",
                    dep.kind
                ));
            }
        }
    }
    found
}

#[test]
fn the_workspace_keeps_its_dependency_rules() {
    let crates = workspace();
    assert!(
        crates.contains_key("noisebench-pipeline"),
        "{:?}",
        crates.keys()
    );
    let found = violations(&crates);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_rules_catch_what_they_are_for() {
    let dep = |name: &str, kind: &str| Dep {
        name: name.into(),
        kind: kind.into(),
    };
    let mut crates = BTreeMap::new();
    crates.insert(
        "noisebench-kg".to_string(),
        vec![
            dep("noisebench-label", "normal"),
            dep("noisebench-text", "normal"),
        ],
    );
    crates.insert(
        "noisebench-snapshot".to_string(),
        vec![dep("polars", "normal")],
    );
    crates.insert(
        "noisebench-qa".to_string(),
        vec![dep("noisebench-pipeline", "normal")],
    );
    crates.insert(
        "noisebench-core".to_string(),
        vec![dep("noisebench-llm", "normal")],
    );
    crates.insert(
        "noisebench-eval".to_string(),
        vec![dep("noisebench-testkit", "normal")],
    );
    crates.insert(
        "noisebench-releases".to_string(),
        vec![
            dep("noisebench-label", "normal"),
            dep("noisebench-text", "normal"),
        ],
    );
    crates.insert(
        "noisebench-label".to_string(),
        vec![dep("noisebench-releases", "normal")],
    );
    let found = violations(&crates).join("\n");
    for expected in [
        "noisebench-releases depends on noisebench-label",
        "stage crate noisebench-kg depends on stage crate noisebench-label",
        "noisebench-snapshot depends on polars",
        "stage crate noisebench-qa depends on noisebench-pipeline",
        "noisebench-core depends on noisebench-llm",
        "noisebench-eval has noisebench-testkit as a normal dependency",
    ] {
        assert!(found.contains(expected), "{expected:?} not in\n{found}");
    }
    assert!(!found.contains("noisebench-text"), "{found}");
    // A stage crate may use the release formats.
    assert!(!found.contains("depends on noisebench-releases"), "{found}");
}
