//! End to end: the demo pipeline builds a verifiable snapshot offline; a rebuild skips every stage
//! and publishes nothing; a build from scratch gives byte-identical tables; every table written
//! matches its schema, and the committed schema files match the code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::{Claim, NoProgress, TableKind};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{Manifest, PublishOptions, PublishOutcome};
use noisebench_testkit::{checkout, pandas_available, repo_root, run_python_json};

fn assert_work_conforms(work: &Path) -> usize {
    let mut checked = 0;
    for stage in std::fs::read_dir(work).unwrap() {
        let stage = stage.unwrap().path();
        let Some(record) = noisebench_pipeline::runner::read_record(&stage) else {
            continue;
        };
        for (name, file) in &record.tables {
            let kind = TableKind::from_name(&file.kind).unwrap();
            let table = table_io::Table::open(&stage.join(&file.file)).unwrap();
            table
                .check(&kind.schema())
                .unwrap_or_else(|p| panic!("{}/{name}: {p:?}", stage.display()));
            assert_eq!(table.rows() as u64, file.rows);
            checked += 1;
        }
    }
    let summary = table_io::Table::open(&work.join("run_summary.parquet")).unwrap();
    summary.check(&TableKind::RunSummary.schema()).unwrap();
    checked + 1
}

#[test]
fn demo_builds_verifies_skips_and_reproduces() {
    let dir = checkout();
    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let Some(PublishOutcome::Published {
        version,
        dir: snapshot,
        ..
    }) = built.outcome
    else {
        panic!("nothing published")
    };
    assert_eq!(version, "1.0.0");
    for file in [
        "data/claims.parquet",
        "manifest.json",
        "README.md",
        "CHANGES.md",
    ] {
        assert!(snapshot.join(file).is_file(), "{file}");
    }
    let report = noisebench_snapshot::verify(&snapshot);
    assert!(report.ok(), "{:?}", report.problems);
    let manifest = Manifest::read(&snapshot).unwrap();
    assert_eq!(manifest.pipeline, "demo");
    let tables: Vec<(&str, u64)> = manifest
        .tables
        .iter()
        .map(|(n, t)| (n.as_str(), t.rows))
        .collect();
    assert_eq!(
        tables,
        [
            ("aliases", 5),
            ("chunks", 67),
            ("claim_documents", 518),
            ("claims", 53),
            ("conflicts", 50),
            ("document_credibility", 182),
            ("document_perturbations", 148),
            ("documents", 182),
            ("entities", 56),
            ("graph_edges", 43),
            ("labels", 518),
            ("passages", 168),
            ("patterns", 45),
            ("queries", 212),
            ("query_perturbations", 138),
            ("question_judgements", 37),
            ("question_splits", 36),
            ("questions", 36),
            ("rejected_questions", 1),
            ("reports", 9),
            ("retrieval_metrics", 60),
            ("retrievals", 1044),
            ("search_hits", 1981),
            ("triplets", 43),
        ]
    );
    assert!(assert_work_conforms(&dir.path().join("work/demo")) >= 10);
    // Every stage's items in, out and dropped, exactly.
    let counts: Vec<(&str, &str, i64, i64, i64)> = built
        .run
        .summary
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.kind.as_str(),
                s.items_in,
                s.items_out,
                s.items_dropped,
            )
        })
        .collect();
    assert_eq!(
        counts,
        [
            ("scraped", "claims-scrape", 12, 5, 7),
            ("reports", "reports", 9, 9, 0),
            ("claims", "claims-import", 65, 53, 12),
            ("queries", "queries", 53, 212, 0),
            ("search", "search", 212, 1981, 226),
            ("documents", "documents", 1981, 182, 24),
            ("labels", "labels", 518, 518, 0),
            ("export-raguard", "export-raguard", 518, 518, 0),
            ("export-confact", "export-confact", 518, 498, 20),
            ("chunks", "chunks", 9, 67, 0),
            ("triplets", "triplets", 67, 43, 0),
            ("graph", "graph", 43, 43, 0),
            ("patterns", "patterns", 43, 45, 0),
            ("questions", "questions", 45, 37, 8),
            ("qa-judge", "qa-judge", 37, 36, 1),
            ("splits", "splits", 36, 36, 0),
            ("query-perturbations", "query-perturbations", 144, 138, 6),
            ("retrieval", "retrieval", 174, 1044, 0),
            (
                "document-perturbations",
                "document-perturbations",
                148,
                148,
                0
            ),
            ("export-rare", "export-rare", 36, 36, 0),
        ]
    );
    // The graph's patterns: all four kinds, groups spanning two reports, every merge reviewable.
    let patterns: Vec<noisebench_core::Pattern> =
        table_io::read_rows(&snapshot.join("data/patterns.parquet")).unwrap();
    let mut kinds: Vec<(&str, usize, usize)> = Vec::new();
    for kind in [
        "single_hop",
        "chained_multi_hop",
        "star_shaped",
        "inverted_star_shaped",
    ] {
        let of: Vec<_> = patterns.iter().filter(|p| p.pattern == kind).collect();
        kinds.push((
            kind,
            of.len(),
            of.iter().filter(|p| p.spans_reports).count(),
        ));
    }
    assert_eq!(
        kinds,
        [
            ("single_hop", 8, 0),
            ("chained_multi_hop", 3, 3),
            ("star_shaped", 32, 2),
            ("inverted_star_shaped", 2, 2),
        ]
    );
    // Questions of all four kinds, each with its split; what the judge rejected is kept apart.
    let questions: Vec<noisebench_core::Question> =
        table_io::read_rows(&snapshot.join("data/questions.parquet")).unwrap();
    let splits: Vec<noisebench_core::QuestionSplit> =
        table_io::read_rows(&snapshot.join("data/question_splits.parquet")).unwrap();
    let mut per_kind: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for s in &splits {
        *per_kind
            .entry((s.kind.as_str(), s.split.as_str()))
            .or_default() += 1;
    }
    assert_eq!(
        per_kind.into_iter().collect::<Vec<_>>(),
        [
            (("chained_multi_hop", "train"), 1),
            (("inverted_star_shaped", "train"), 1),
            (("single_hop", "test"), 4),
            (("single_hop", "train"), 4),
            (("star_shaped", "test"), 12),
            (("star_shaped", "train"), 14),
        ]
    );
    assert!(
        questions
            .iter()
            .all(|q| splits.iter().any(|s| s.question_id == q.id))
    );
    let rejected: Vec<noisebench_core::RejectedQuestion> =
        table_io::read_rows(&snapshot.join("data/rejected_questions.parquet")).unwrap();
    assert_eq!(rejected[0].reason, "clarity 3");
    assert!(questions.iter().all(|q| q.id != rejected[0].id));
    // Scraped claims sit next to imported ones.
    let claims: Vec<Claim> = table_io::read_rows(&snapshot.join("data/claims.parquet")).unwrap();
    let scraped = claims
        .iter()
        .filter(|c| c.source.starts_with("scrape:"))
        .count();
    assert_eq!((scraped, claims.len() - scraped), (5, 48));
    // The LLM call log: one file for the run, one per stage that called.
    let calls = table_io::Table::open(&dir.path().join("work/demo/llm_calls.parquet")).unwrap();
    calls.check(&TableKind::LlmCalls.schema()).unwrap();
    assert_eq!(calls.rows(), 2434);
    assert_eq!(built.llm.calls, 2434);
    assert_eq!(built.llm.tasks["exam_verdict"], 621);
    for stage in ["queries", "labels"] {
        assert!(
            dir.path()
                .join("work/demo")
                .join(stage)
                .join("llm_calls.parquet")
                .is_file()
        );
    }
    assert!(
        !dir.path()
            .join("work/demo/search/llm_calls.parquet")
            .exists()
    );
    // The card and manifest say how the labels were made.
    assert_eq!(manifest.provenance["llm"]["backend"], "offline");
    assert_eq!(manifest.provenance["facts:labels"]["data"]["pairs"], 518);
    assert_eq!(manifest.provenance["llm"]["run"]["calls"], 2434);
    assert_eq!(manifest.provenance["fetch_window"]["claims"]["rows"], 5);
    assert_eq!(
        manifest.provenance["fetch_window"]["documents"]["first"],
        "2025-01-15T00:00:00Z"
    );
    let card = std::fs::read_to_string(snapshot.join("README.md")).unwrap();
    assert!(
        card.contains("### How the labels were made (stage `labels`)"),
        "{card}"
    );
    assert!(
        card.contains("share of labels set by human reviewers: 0.0%"),
        "{card}"
    );
    // The release holds the exports the papers' loaders read, hashed in the manifest (verified
    // above), byte for byte what the export stages wrote.
    assert_eq!(
        manifest.exports.keys().collect::<Vec<_>>(),
        [
            "exports/confact/confact.json",
            "exports/raguard/claim_id_map.csv",
            "exports/raguard/claims.csv",
            "exports/raguard/document_id_map.csv",
            "exports/raguard/documents.csv",
            "exports/rare/rag_multi_hop_dataset.json",
            "exports/rare/rag_single_hop_dataset.json",
        ]
    );
    assert_eq!(
        std::fs::read(snapshot.join("exports/raguard/claims.csv")).unwrap(),
        std::fs::read(dir.path().join("work/demo/export-raguard/claims.csv")).unwrap()
    );
    assert!(
        card.contains("| `exports/confact/confact.json` | confact |"),
        "{card}"
    );
    // The exports stages wrote RAGuard's and CONF-FACT's files.
    for file in [
        "export-raguard/claims.csv",
        "export-raguard/documents.csv",
        "export-confact/confact.json",
    ] {
        assert!(dir.path().join("work/demo").join(file).is_file(), "{file}");
    }

    // Again: every stage skipped, nothing published, and it says so.
    let again = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    assert_eq!(again.run.ran(), 0);
    assert!(
        matches!(again.outcome, Some(PublishOutcome::Unchanged { ref version, .. }) if version == "1.0.0")
    );

    // From scratch: the same bytes.
    let before: Vec<(String, String)> = manifest
        .tables
        .iter()
        .map(|(n, t)| (n.clone(), t.sha256.clone()))
        .collect();
    std::fs::remove_dir_all(dir.path().join("work")).unwrap();
    let rebuilt = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    assert_eq!(rebuilt.run.ran(), rebuilt.run.summary.len());
    assert!(matches!(
        rebuilt.outcome,
        Some(PublishOutcome::Unchanged { .. })
    ));
    for (name, sha) in before {
        let record = rebuilt
            .run
            .records
            .values()
            .flat_map(|r| r.tables.values())
            .find(|t| t.sha256 == sha);
        assert!(
            record.is_some(),
            "table {name} was not reproduced byte for byte"
        );
    }
}

#[test]
fn the_binary_verifies_inspects_and_reports_config_errors() {
    let dir = checkout();
    let bin = env!("CARGO_BIN_EXE_noisebench");
    let run = |args: &[&str]| {
        std::process::Command::new(bin)
            .args(args)
            .arg("--root")
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let out = run(&["build-snapshot"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("published version 1.0.0"));
    let out = run(&["build-snapshot"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing new published"));
    let snapshot = dir.path().join("snapshots/demo");
    let out = run(&["verify", snapshot.to_str().unwrap()]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains(": ok"));
    let out = run(&["inspect", "stage", "claims"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("bad_date") && text.contains("fixtures/claims/averitec.jsonl:18"),
        "{text}"
    );

    // inspect shows the schema, row counts and first rows of every table of a stage.
    let out = run(&["inspect", "stage", "labels", "--rows", "3"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for expected in [
        "stage `labels` (kind labels, version 2)",
        "items in 518, out 518, dropped 0",
        "table `labels`: 518 rows",
        "table `conflicts`: 50 rows",
        "table `document_credibility`: 182 rows",
        "source_type_source     Str",
        "shape: (3, 7)",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }
    // inspect a document: the row, its links to claims, its labels; an unknown id is an error.
    let doc = noisebench_core::stable_id("doc", &["https://www.who.int/news-room/5g-myth"]);
    let out = run(&["inspect", "document", &doc, "--chars", "60"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for expected in [
        "== stage `documents`, table `documents`: 1 row(s)",
        "== stage `documents`, table `claim_documents`",
        "== stage `labels`, table `labels`",
        "== stage `labels`, table `document_credibility`: 1 row(s)",
        "\"source_type\": \"government\"",
        "... (",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }
    let out = run(&["inspect", "claim", "claim_0000000000000000"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no claims `claim_0000000000000000`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // run STAGE: the stage and what it needs, all up to date.
    let out = run(&["run", "chunks"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("reports") && text.contains("chunks") && !text.contains("labels"),
        "{text}"
    );
    assert_eq!(text.matches("skipped").count(), 2, "{text}");

    // A new fact-check in a source file: a new minor version, and diff names the new claim.
    let csv = dir.path().join("fixtures/claims/politifact.csv");
    let url = "https://www.politifact.com/factchecks/2024/may/02/ann-lee/new-bridge-toll/";
    let mut rows = std::fs::read_to_string(&csv).unwrap();
    rows.push_str(&format!(
        "Says the new bridge toll doubled overnight.,false,Ann Lee,\"May 2, 2024\",a post,{url}\n"
    ));
    std::fs::write(&csv, rows).unwrap();
    let out = run(&["build-snapshot"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("published version 1.1.0"), "{text}");
    let out = run(&[
        "diff",
        snapshot.join("1.0.0").to_str().unwrap(),
        snapshot.join("1.1.0").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("# Changes from 1.0.0 to 1.1.0"), "{text}");
    assert!(text.contains("| claims | 53 | 54 | 1 | 0 | 0 |"), "{text}");
    assert!(
        text.contains(&noisebench_claims::claim_id(Some(url), "")),
        "{text}"
    );

    // Exports from the published snapshot.
    let out = run(&["export", "raguard", snapshot.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exported = dir.path().join("exports/demo/1.1.0/raguard");
    let claims_csv = std::fs::read_to_string(exported.join("claims.csv")).unwrap();
    assert!(
        claims_csv
            .starts_with("Claim ID,Claim,Verdict,Document IDs,Document Labels,Original Verdict")
    );
    // The same bytes as the pipeline's export stage.
    assert_eq!(
        claims_csv,
        std::fs::read_to_string(dir.path().join("work/demo/export-raguard/claims.csv")).unwrap()
    );
    let out = run(&[
        "export",
        "confact",
        snapshot.to_str().unwrap(),
        "--out",
        dir.path().join("cf").to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let confact: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cf/confact.json")).unwrap())
            .unwrap();
    assert_eq!(confact.as_array().unwrap().len(), 54);

    // A typo in the pipeline file stops the run before any work and names the field.
    let broken = dir.path().join("pipelines/broken.toml");
    let demo = std::fs::read_to_string(dir.path().join("pipelines/demo.toml")).unwrap();
    std::fs::write(
        &broken,
        demo.replacen("preset = \"averitec\"", "prest = \"averitec\"", 1)
            .replace("name = \"demo\"", "name = \"broken\""),
    )
    .unwrap();
    let out = run(&["build-snapshot", "pipelines/broken.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("prest") && err.contains("sources[0]"),
        "{err}"
    );
    assert!(!dir.path().join("work/broken").exists());
    // So does a typo in the [llm] or [web] table.
    for (from, to, field) in [
        (
            "backend = \"offline\"",
            "backend = \"offline\"\ntemprature = 0.5",
            "llm.temprature",
        ),
        (
            "mode = \"replay\"",
            "mode = \"replay\"\nrate = 3",
            "[web]: configuration: rate",
        ),
    ] {
        std::fs::write(
            &broken,
            demo.replacen(from, to, 1)
                .replace("name = \"demo\"", "name = \"broken\""),
        )
        .unwrap();
        let out = run(&["build-snapshot", "pipelines/broken.toml"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(field), "{err}");
        assert!(!dir.path().join("work/broken").exists());
    }
}

#[test]
fn committed_schema_files_match_the_code() {
    let dir = tempfile::tempdir().unwrap();
    noisebench_cli::write_schemas(dir.path()).unwrap();
    for kind in TableKind::ALL {
        let name = format!("{}.json", kind.name());
        let generated = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        let committed = std::fs::read_to_string(repo_root().join("schemas").join(&name))
            .unwrap_or_else(|_| panic!("schemas/{name} is missing: run `noisebench schemas`"));
        assert_eq!(
            committed, generated,
            "schemas/{name} is stale: run `noisebench schemas`"
        );
    }
}

/// The configuration reference (`schemas/config/*.json`, `docs/configuration.md`) is generated
/// from the configuration types; the committed files must be what the code generates now.
#[test]
fn committed_configuration_reference_matches_the_code() {
    let fix = "run `noisebench schemas` (`just schemas`)";
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("configuration.md");
    noisebench_cli::write_config_reference(&dir.path().join("config"), &doc).unwrap();
    let list = |d: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap_or_else(|_| panic!("{} is missing: {fix}", d.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let generated = list(&dir.path().join("config"));
    assert!(
        generated.contains(&"labels.json".to_string())
            && generated.contains(&"llm.json".to_string())
    );
    assert_eq!(
        list(&repo_root().join("schemas/config")),
        generated,
        "schemas/config/ does not hold one schema per stage kind plus llm.json and web.json: {fix}"
    );
    for name in &generated {
        let committed =
            std::fs::read_to_string(repo_root().join("schemas/config").join(name)).unwrap();
        let now = std::fs::read_to_string(dir.path().join("config").join(name)).unwrap();
        assert_eq!(committed, now, "schemas/config/{name} is stale: {fix}");
    }
    let committed = std::fs::read_to_string(repo_root().join("docs/configuration.md"))
        .unwrap_or_else(|_| panic!("docs/configuration.md is missing: {fix}"));
    assert_eq!(
        committed,
        std::fs::read_to_string(&doc).unwrap(),
        "docs/configuration.md is stale: {fix}"
    );
}

/// Every field a user can write has a description (its doc comment) in the reference.
#[test]
fn every_configuration_field_is_documented() {
    fn undocumented(path: &str, schema: &serde_json::Value, out: &mut Vec<String>) {
        match schema {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                    for (name, prop) in props {
                        // A tag (`type = "google"`) is described by its variant.
                        let documented = prop.get("description").is_some_and(|d| d != "")
                            || prop.get("const").is_some();
                        if !documented {
                            out.push(format!("{path}.{name}"));
                        }
                    }
                }
                for (key, value) in map {
                    undocumented(&format!("{path}/{key}"), value, out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    undocumented(&format!("{path}/{i}"), item, out);
                }
            }
            _ => {}
        }
    }
    let mut missing = Vec::new();
    for (name, schema) in noisebench_cli::config_schemas().unwrap() {
        undocumented(&name, &schema, &mut missing);
    }
    assert!(
        missing.is_empty(),
        "fields without a doc comment: {missing:#?}"
    );
}

/// The LLM layer's settings are part of the fingerprint of the stages that use it; a replayed
/// page is an input of the stage that fetches it.
#[test]
fn llm_settings_and_replayed_pages_rerun_only_their_stages() {
    let dir = checkout();
    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let ran = |built: &noisebench_cli::Built| -> Vec<String> {
        built
            .run
            .summary
            .iter()
            .filter(|s| s.status == "ran")
            .map(|s| s.id.clone())
            .collect()
    };

    // Another temperature: the LLM stages rerun; their outputs (offline rules ignore it) are the
    // same, so everything downstream is skipped.
    let path = dir.path().join("pipelines/demo.toml");
    let demo = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        demo.replace(
            "backend = \"offline\"",
            "backend = \"offline\"\ntemperature = 0.5",
        ),
    )
    .unwrap();
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    assert_eq!(
        ran(&built),
        [
            "queries",
            "labels",
            "triplets",
            "questions",
            "qa-judge",
            "query-perturbations",
            "document-perturbations"
        ]
    );
    assert!(matches!(
        built.outcome,
        Some(PublishOutcome::Unchanged { .. })
    ));

    // A replayed page edited: the stages that fetch through the run's web layer rerun (documents,
    // and claims-scrape, which replays from the same folders: its output is the same, so the
    // claims after it are skipped), then what depends on documents' changed output.
    let page = dir.path().join("fixtures/web/who/5g-myth.html");
    let html = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, html.replacen("<p>", "<p>Updated guidance. ", 1)).unwrap();
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let ran = ran(&built);
    assert!(
        ran.starts_with(&["scraped".to_string(), "documents".to_string()]),
        "{ran:?}"
    );
    assert!(
        ["claims", "queries", "search", "chunks"]
            .iter()
            .all(|s| !ran.contains(&s.to_string())),
        "{ran:?}"
    );
}

/// The demo's RAGuard export, read back by pandas with the release's loader conventions, when
/// python3 with pandas is available (CI installs it).
#[test]
fn pandas_reads_the_demo_raguard_export() {
    if !pandas_available() {
        return;
    }
    // The binary's shared demo build, read only.
    let (dir, _) = crate::shared::demo();
    let v = run_python_json(
        &repo_root().join("crates/label/tests/raguard_loader.py"),
        [dir.join("work/demo/export-raguard")],
    );
    assert_eq!(
        (v["claims"].as_u64(), v["documents"].as_u64()),
        (Some(53), Some(518))
    );
    assert_eq!(v["merged"], 518);
    assert_eq!(v["consistent"], true);
    assert_eq!(
        v["labels"],
        serde_json::json!({"misleading": 73, "supporting": 84, "unrelated": 361})
    );
}

/// Killing a build at any moment loses nothing that was finished: the next build resumes and the
/// snapshot is the same, byte for byte, as that of a build never interrupted.
#[test]
fn a_build_killed_midway_resumes_to_the_same_snapshot() {
    let bin = env!("CARGO_BIN_EXE_noisebench");
    let tables = |root: &Path| -> Vec<(String, String)> {
        let manifest = Manifest::read(&root.join("snapshots/demo/1.0.0")).unwrap();
        manifest
            .tables
            .into_iter()
            .map(|(name, t)| (name, t.sha256))
            .collect()
    };
    let build = |root: &Path| {
        let out = std::process::Command::new(bin)
            .args(["build-snapshot", "--root"])
            .arg(root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let whole = checkout();
    build(whole.path());

    let killed = checkout();
    for delay_ms in [300, 900, 1800] {
        let mut child = std::process::Command::new(bin)
            .args(["build-snapshot", "--root"])
            .arg(killed.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL: no destructor, no cleanup
        child.wait().unwrap();
    }
    build(killed.path());
    // Only complete versions exist (a killed publish leaves at most a hidden staging folder,
    // which the next publish removes).
    // (The version's report sits beside it, not in it.)
    let versions: Vec<String> = std::fs::read_dir(killed.path().join("snapshots/demo"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".report.html"))
        .collect();
    assert_eq!(versions, ["1.0.0"]);
    assert_eq!(tables(killed.path()), tables(whole.path()));
    let report = noisebench_snapshot::verify(&killed.path().join("snapshots/demo/1.0.0"));
    assert!(report.ok(), "{:?}", report.problems);
}

/// Every pipeline shipped in pipelines/ checks (with the key variables it names set to dummies;
/// nothing is fetched or asked), a missing key is named, and the offline RARE finance pipeline
/// builds.
#[test]
fn every_shipped_pipeline_checks_and_rare_finance_builds() {
    let dir = checkout();
    let bin = env!("CARGO_BIN_EXE_noisebench");
    let keys = [
        "OPENAI_API_KEY",
        "REDDIT_CLIENT_ID",
        "REDDIT_CLIENT_SECRET",
        "GOOGLE_API_KEY",
        "GOOGLE_CSE_ID",
    ];
    let check = |pipeline: &str, with_keys: bool| {
        let mut cmd = std::process::Command::new(bin);
        cmd.args(["check", pipeline, "--root"]).arg(dir.path());
        for k in keys {
            if with_keys {
                cmd.env(k, "dummy-value-for-check");
            } else {
                cmd.env_remove(k);
            }
        }
        cmd.output().unwrap()
    };
    let mut names: Vec<String> = std::fs::read_dir(repo_root().join("pipelines"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".toml").map(String::from)
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "confact",
            "demo",
            "own-corpus",
            "raguard",
            "rare-finance",
            "rare-finance-live"
        ]
    );
    for name in &names {
        let out = check(name, true);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains(&format!("pipeline `{name}`")) && text.contains("configuration valid"),
            "{text}"
        );
        assert!(
            !text.contains("dummy-value-for-check"),
            "a key reached the output: {text}"
        );
    }
    let raguard = String::from_utf8_lossy(&check("raguard", true).stdout).into_owned();
    assert!(raguard.contains("search             search           queries <- queries.queries  [live: `refresh` reruns it]"), "{raguard}");
    assert!(
        raguard.contains("llm: backend openai, models openai:gpt-4o-mini"),
        "{raguard}"
    );
    // Every missing key at once, and the plan still.
    let out = check("raguard", false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    for (variable, field) in [
        ("OPENAI_API_KEY", "llm.models.gpt.api_key_env"),
        (
            "REDDIT_CLIENT_ID",
            "stage `search`, config field `backends[0].client_id_env`",
        ),
        (
            "REDDIT_CLIENT_SECRET",
            "stage `search`, config field `backends[0].client_secret_env`",
        ),
    ] {
        assert!(err.contains(&format!("  {variable} ({field})")), "{err}");
    }
    assert!(err.contains("3 environment variables"), "{err}");
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(
        plan.contains("pipeline `raguard`") && plan.contains("snapshot: snapshots/"),
        "{plan}"
    );
    // The web mode the run will use: a pipeline that reads no live source uses no web.
    let rare = String::from_utf8_lossy(&check("rare-finance", true).stdout).into_owned();
    assert!(
        rare.contains("\nweb: not used (no stage reads a live source)\n"),
        "{rare}"
    );
    assert!(raguard.contains("\nweb: live\n"), "{raguard}");
    assert!(
        !dir.path().join("work/raguard").exists(),
        "check runs nothing"
    );

    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let built = build_snapshot(&ws, "rare-finance", false, &PublishOptions::default()).unwrap();
    let counts: Vec<(&str, i64, i64)> = built
        .run
        .summary
        .iter()
        .map(|s| (s.id.as_str(), s.items_in, s.items_out))
        .collect();
    assert_eq!(
        counts,
        [
            ("reports", 5, 5),
            ("chunks", 5, 60),
            ("triplets", 60, 29),
            ("graph", 29, 29),
            ("patterns", 29, 33),
            ("questions", 33, 29),
            ("qa-judge", 29, 28),
            ("splits", 28, 28),
            ("query-perturbations", 112, 106),
            ("retrieval", 134, 804),
            ("document-perturbations", 126, 126),
            ("export-rare", 28, 28),
        ]
    );
}

#[test]
fn every_reader_opens_every_published_table() {
    if !crate::shared::python_modules(&["pandas", "pyarrow", "polars", "duckdb", "datasets"]) {
        return;
    }
    // The binary's shared demo build, read only.
    let snapshot = &crate::shared::demo().1;
    let manifest = Manifest::read(snapshot).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/readers.py");
    let read = run_python_json(&script, [&snapshot]);
    assert_eq!(read["errors"], serde_json::json!([]), "{read:#}");
    assert_eq!(manifest.tables.len(), 24);
    for (table, entry) in &manifest.tables {
        for reader in ["pandas", "pyarrow", "polars", "duckdb", "datasets"] {
            assert_eq!(
                read["tables"][table][reader].as_u64(),
                Some(entry.rows),
                "{reader} on {table}"
            );
        }
        assert_eq!(
            read["splits"][table],
            crate::shared::datasets_splits(&manifest, table),
            "datasets splits of {table}"
        );
    }
    assert_eq!(
        read["splits"]["questions"],
        serde_json::json!({"test": 16, "train": 20})
    );
}
