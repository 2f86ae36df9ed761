//! RAGuard and CONFACT exports: exact columns and list formatting, contiguous ids, the id maps,
//! and the RAGuard files read back by pandas the way the release's loaders do.

use crate::common;

use common::*;
use noisebench_core::{ClaimDocumentLabel, DocumentCredibility, Query, Stage, stable_id};
use noisebench_label::{export_confact, export_raguard};
use noisebench_releases::ExportStage;
use noisebench_testkit::{pandas_available, run_python_json};

fn label(c: &str, d: &str, l: Option<&str>, stance: &str, source: &str) -> ClaimDocumentLabel {
    ClaimDocumentLabel {
        id: stable_id("label", &[c, d]),
        claim_id: c.into(),
        document_id: d.into(),
        label: l.map(str::to_string),
        model_label: l.map(str::to_string),
        stance_url: Some(stance.into()),
        stance_majority: Some(stance.into()),
        stance: Some(stance.into()),
        label_source: source.into(),
        provenance: "test".into(),
        ..ClaimDocumentLabel::default()
    }
}

struct Data {
    claims: Vec<noisebench_core::Claim>,
    docs: Vec<noisebench_core::Document>,
    credibility: Vec<DocumentCredibility>,
    labels: Vec<ClaimDocumentLabel>,
}

fn data() -> Data {
    let mut c1 = claim("c1", "Says \"we cut taxes\", and it's true.", "true");
    c1.original_rating = "half-true".into();
    let mut c2 = claim("c2", "Crime rose 50%.", "false");
    c2.original_rating = "barely-true".into();
    let mut c3 = claim("c3", "Half of it.", "half-true");
    c3.original_rating = "half-true".into();
    let c4 = claim("c4", "No documents found for this one.", "false");
    let docs = vec![
        doc(
            "d1",
            "https://www.reddit.com/r/p/1",
            "Taxes, \"cut\"",
            "Body one,\nwith a newline.",
        ),
        doc("d2", "https://www.reddit.com/r/p/2", "", "Body two"),
        doc("d3", "https://example.org/3", "Crime", "Body three"),
    ];
    let labels = vec![
        label("c1", "d1", Some("supporting"), "support", "model"),
        label(
            "c1",
            "d2",
            Some("irrelevant"),
            "not enough evidence",
            "model",
        ),
        label("c2", "d3", Some("misleading"), "reject", "human"),
        label("c2", "d1", Some("supporting"), "support", "model"),
        label("c2", "d2", None, "support", "model"),
        label("c3", "d3", Some("misleading"), "reject", "model"),
        label("c9", "d3", Some("misleading"), "reject", "model"),
    ];
    // d1 rated from the domain table, which also overrides its source type; d2, d3 unrated.
    let credibility = vec![DocumentCredibility {
        id: stable_id("cred", &["d1"]),
        document_id: "d1".into(),
        domain: "reddit.com".into(),
        credibility: Some("low".into()),
        credibility_source: Some("table".into()),
        source_type: "social media".into(),
        source_type_source: "table".into(),
    }];
    Data {
        claims: vec![c1, c2, c3, c4],
        docs,
        credibility,
        labels,
    }
}

#[test]
fn raguard_files_are_exact() {
    let d = data();
    let dir = tempfile::tempdir().unwrap();
    let s = export_raguard(&d.claims, &d.docs, &d.labels, dir.path()).unwrap();
    assert_eq!((s.claims, s.documents), (3, 4));
    assert_eq!(s.claims_without_binary_verdict, 1);
    // Every label row left out is named with its reason (the export stage turns them into drops).
    let mut reasons: Vec<&str> = s.skipped.iter().map(|k| k.reason).collect();
    reasons.sort();
    assert_eq!(
        reasons,
        ["claim_verdict_not_binary", "no_label", "unknown_claim"]
    );
    assert_eq!(s.documents + s.pairs_skipped(), d.labels.len());
    let claims = std::fs::read_to_string(dir.path().join("claims.csv")).unwrap();
    assert_eq!(
        claims,
        "Claim ID,Claim,Verdict,Document IDs,Document Labels,Original Verdict\n\
         0,\"Says \"\"we cut taxes\"\", and it's true.\",True,\"[0, 1]\",\"['supporting', 'unrelated']\",half-true\n\
         1,Crime rose 50%.,False,\"[2, 3]\",\"['misleading', 'supporting']\",mostly-false\n\
         2,No documents found for this one.,False,[],[],pants-on-fire\n"
    );
    let documents = std::fs::read_to_string(dir.path().join("documents.csv")).unwrap();
    assert_eq!(
        documents,
        "Document ID,Title,Full Text,Claim ID,Document Label,Link\n\
         0,\"Taxes, \"\"cut\"\"\",\"Body one,\nwith a newline.\",0,supporting,https://www.reddit.com/r/p/1\n\
         1,,Body two,0,unrelated,https://www.reddit.com/r/p/2\n\
         2,Crime,Body three,1,misleading,https://example.org/3\n\
         3,\"Taxes, \"\"cut\"\"\",\"Body one,\nwith a newline.\",1,supporting,https://www.reddit.com/r/p/1\n"
    );
    let map = std::fs::read_to_string(dir.path().join("document_id_map.csv")).unwrap();
    let second = map.lines().nth(3).unwrap();
    assert_eq!(
        second,
        format!("2,1,c2,d3,{}", stable_id("label", &["c2", "d3"]))
    );
    let cmap = std::fs::read_to_string(dir.path().join("claim_id_map.csv")).unwrap();
    assert_eq!(cmap, "Claim ID,claim_id\n0,c1\n1,c2\n2,c4\n");
}

/// The release's loader conventions, as a script (shared with the cli's demo test).
fn loader() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/raguard_loader.py")
}

#[test]
fn pandas_reads_the_raguard_export_like_the_release_loaders() {
    if !pandas_available() {
        return;
    }
    let d = data();
    let dir = tempfile::tempdir().unwrap();
    export_raguard(&d.claims, &d.docs, &d.labels, dir.path()).unwrap();
    let v = run_python_json(&loader(), [dir.path()]);
    assert_eq!(v["claims"], 3);
    assert_eq!(v["documents"], 4);
    assert_eq!(v["merged"], 4);
    assert_eq!(
        v["columns_claims"],
        serde_json::json!([
            "Claim ID",
            "Claim",
            "Verdict",
            "Document IDs",
            "Document Labels",
            "Original Verdict"
        ])
    );
    assert_eq!(
        v["columns_documents"],
        serde_json::json!([
            "Document ID",
            "Title",
            "Full Text",
            "Claim ID",
            "Document Label",
            "Link"
        ])
    );
    assert_eq!(
        v["labels"],
        serde_json::json!({"misleading": 1, "supporting": 2, "unrelated": 1})
    );
    // pandas reads the release's True/False column as booleans, as it does ours.
    assert_eq!(v["verdicts"], serde_json::json!({"false": 2, "true": 2}));
    assert_eq!(v["first_claim"], "Says \"we cut taxes\", and it's true.");
    assert_eq!(v["first_text"], "Body one,\nwith a newline.");
    assert_eq!(v["consistent"], true);
}

#[test]
fn confact_json_shape() {
    let d = data();
    let dir = tempfile::tempdir().unwrap();
    let queries = vec![Query {
        id: "q1".into(),
        claim_id: "c2".into(),
        kind: "question".into(),
        text: "Did crime rise 50%?".into(),
        provenance: "offline".into(),
        llm_request: None,
    }];
    let path = dir.path().join("confact.json");
    let s = export_confact(
        &d.claims,
        &d.docs,
        &d.credibility,
        &d.labels,
        &queries,
        &path,
    )
    .unwrap();
    assert_eq!(s.claims, 3);
    // The non-binary claim's rows were left out silently before: now each is counted.
    assert_eq!(s.documents + s.pairs_skipped(), d.labels.len());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let first = &v[0];
    assert_eq!(first["id"], 1);
    assert_eq!(first["label"], "Supported");
    assert_eq!(first["evidence_url"][0]["evidence_id"], "1_1");
    assert_eq!(first["evidence_url"][0]["majority_vote"], "Support");
    assert_eq!(
        first["evidence_url"][1]["majority_vote"],
        "Not enough evidence"
    );
    assert_eq!(first["human_conflict"], serde_json::Value::Null);
    // Credibility and source type from `document_credibility`; none for an unrated document.
    assert_eq!(first["evidence_url"][0]["credibility"], "low");
    assert_eq!(first["evidence_url"][0]["source_type"], "social media");
    assert_eq!(
        first["evidence_url"][1]["credibility"],
        serde_json::Value::Null
    );
    assert_eq!(first["evidence_url"][1]["source_type"], "");
    let second = &v[1];
    assert_eq!(second["label"], "Refuted");
    assert_eq!(second["question"], "Did crime rise 50%?");
    // c2: d3 reject (human), d1 support, d2 support (no exam label, still evidence).
    assert_eq!(second["evidence_url"].as_array().unwrap().len(), 3);
    assert_eq!(second["model_conflict"], true);
    assert_eq!(second["human_conflict"], false);
    assert_eq!(v[2]["evidence_url"], serde_json::json!([]));
}

#[test]
fn export_stages_write_into_their_directory() {
    let d = data();
    let dir = tempfile::tempdir().unwrap();
    let make_inputs = || {
        let mut m = std::collections::BTreeMap::new();
        m.insert(
            "claims".to_string(),
            noisebench_core::Rows::Claims(d.claims.clone()),
        );
        m.insert(
            "documents".to_string(),
            noisebench_core::Rows::Documents(d.docs.clone()),
        );
        m.insert(
            "labels".to_string(),
            noisebench_core::Rows::Labels(d.labels.clone()),
        );
        m.insert(
            "document_credibility".to_string(),
            noisebench_core::Rows::DocumentCredibility(d.credibility.clone()),
        );
        noisebench_core::Inputs::new(m)
    };
    let stage = |name: &str| ExportStage::new(noisebench_releases::format(name).unwrap());
    let out = stage("raguard")
        .run(&serde_json::json!({}), make_inputs(), &ctx(dir.path()))
        .unwrap();
    assert!(out.tables.is_empty());
    assert_eq!(out.report.items_out, 4);
    assert!(dir.path().join("claims.csv").is_file() && dir.path().join("documents.csv").is_file());
    let out = stage("confact")
        .run(&serde_json::json!({}), make_inputs(), &ctx(dir.path()))
        .unwrap();
    assert_eq!(
        out.report.items_out, 5,
        "c1: 2, c2: 3, c4: none; c3 not binary"
    );
    assert!(dir.path().join("confact.json").is_file());
}
