//! claims-import over the fixtures in `fixtures/claims/` (their README lists every bad row).

use std::path::PathBuf;
use std::sync::Arc;

use noisebench_claims::ImportStage;
use noisebench_core::{Claim, Inputs, NoProgress, Stage, StageContext, StageOutput, TableRow};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn run(config: serde_json::Value) -> (Vec<Claim>, StageOutput) {
    let root = root();
    let dir = tempfile::tempdir().unwrap();
    ImportStage.check(&config, &root).expect("valid config");
    let ctx = StageContext {
        root,
        stage_dir: dir.path().into(),
        pipeline: "test".into(),
        stage_id: "claims".into(),
        progress: Arc::new(NoProgress),
    };
    let mut out = ImportStage.run(&config, Inputs::default(), &ctx).unwrap();
    let claims = Claim::from_rows(out.tables.remove("claims").unwrap()).unwrap();
    (claims, out)
}

fn reasons(out: &StageOutput) -> Vec<(String, String)> {
    out.report
        .drops
        .iter()
        .map(|d| (d.item.clone(), d.reason.clone()))
        .collect()
}

fn count(claims: &[Claim], verdict: &str) -> usize {
    claims.iter().filter(|c| c.verdict == verdict).count()
}

#[test]
fn averitec_preset_counts_and_bad_rows() {
    let (claims, out) = run(
        serde_json::json!({"sources": [{"path": "fixtures/claims/averitec.jsonl", "preset": "averitec"}]}),
    );
    assert_eq!(out.report.items_in, 24);
    assert_eq!(claims.len(), 18);
    assert_eq!((count(&claims, "true"), count(&claims, "false")), (10, 8));
    let f = "fixtures/claims/averitec.jsonl";
    assert_eq!(
        reasons(&out),
        vec![
            (format!("{f}:7"), "rating_excluded".into()),
            (format!("{f}:10"), "empty_claim".into()),
            (format!("{f}:13"), "invalid_row".into()),
            (format!("{f}:16"), "rating_excluded".into()),
            (format!("{f}:18"), "bad_date".into()),
            (format!("{f}:21"), "merged_duplicate".into()),
        ]
    );
    assert_eq!(
        out.report.items_in,
        out.report.items_out + out.report.drops.len() as u64
    );
    // The duplicate filled the speaker the first row lacked.
    let merged = claims
        .iter()
        .find(|c| c.text.starts_with("More than 90 percent"))
        .unwrap();
    assert_eq!(merged.speaker.as_deref(), Some("County health department"));
    assert_eq!(merged.claim_date.as_deref(), Some("2021-09-09"));
    assert_eq!(merged.original_rating, "supported");
    assert!(merged.source.starts_with("averitec:"));
}

#[test]
fn factcheckqa_preset_counts_and_bad_rows() {
    let (claims, out) = run(
        serde_json::json!({"sources": [{"path": "fixtures/claims/factcheckqa.csv", "preset": "factcheckqa"}]}),
    );
    assert_eq!(out.report.items_in, 20);
    assert_eq!(claims.len(), 16);
    assert_eq!((count(&claims, "true"), count(&claims, "false")), (7, 9));
    let f = "fixtures/claims/factcheckqa.csv";
    assert_eq!(
        reasons(&out),
        vec![
            (format!("{f}:5"), "rating_excluded".into()),
            (format!("{f}:9"), "unknown_rating".into()),
            (format!("{f}:14"), "bad_date".into()),
            (format!("{f}:19"), "empty_claim".into()),
        ]
    );
    // Quote marks inside a claim are kept.
    assert!(
        claims
            .iter()
            .any(|c| c.text.starts_with("\"Every ballot was counted twice\""))
    );
}

#[test]
fn politifact_raguard_and_strict_presets() {
    let (claims, out) = run(serde_json::json!({"sources": [
        {"path": "fixtures/claims/politifact.csv", "preset": "politifact", "verdicts": "raguard"}
    ]}));
    assert_eq!(
        (
            claims.len(),
            count(&claims, "true"),
            count(&claims, "false")
        ),
        (14, 7, 7)
    );
    assert_eq!(
        out.report.drop_reasons(),
        [("rating_excluded".into(), 1), ("unknown_rating".into(), 1)].into()
    );
    assert!(
        claims
            .iter()
            .all(|c| c.fact_checker.as_deref() == Some("PolitiFact"))
    );
    assert!(claims.iter().any(|c| c.original_rating == "pants-fire"));
    let (strict, out) = run(serde_json::json!({"sources": [
        {"path": "fixtures/claims/politifact.csv", "preset": "politifact", "verdicts": "strict"}
    ]}));
    assert_eq!(
        (
            strict.len(),
            count(&strict, "true"),
            count(&strict, "false")
        ),
        (11, 4, 7)
    );
    assert_eq!(
        out.report.drop_reasons(),
        [("rating_excluded".into(), 4), ("unknown_rating".into(), 1)].into()
    );
    assert!(strict.iter().all(|c| c.original_rating != "half-true"));
}

#[test]
fn config_errors_name_the_field() {
    let root = root();
    let err = ImportStage
        .check(&serde_json::json!({"sources": [{"path": "fixtures/claims/politifact.csv", "prest": "x"}]}), &root)
        .unwrap_err();
    assert!(
        err.field.contains("sources[0]") && err.message.contains("prest"),
        "{err}"
    );
    let err = ImportStage
        .check(&serde_json::json!({"sources": [{"path": "fixtures/claims/missing.csv", "preset": "politifact"}]}), &root)
        .unwrap_err();
    assert_eq!(err.field, "sources[0].path");
    let err = ImportStage
        .check(
            &serde_json::json!({"sources": [{"path": "fixtures/claims/politifact.csv", "preset": "politifact",
                "columns": {"speaker": "who"}}]}),
            &root,
        )
        .unwrap_err();
    assert!(err.message.contains("no column `who`"), "{err}");
    let err = ImportStage
        .check(
            &serde_json::json!({"sources": [{"path": "fixtures/claims/politifact.csv", "preset": "politifact",
                "verdicts": "lenient"}]}),
            &root,
        )
        .unwrap_err();
    assert_eq!(err.field, "sources[0].verdicts");
}

#[test]
fn same_claim_from_two_sources_merges_by_id() {
    let (once, _) = run(
        serde_json::json!({"sources": [{"path": "fixtures/claims/politifact.csv", "preset": "politifact"}]}),
    );
    let (twice, out) = run(serde_json::json!({"sources": [
        {"path": "fixtures/claims/politifact.csv", "preset": "politifact"},
        {"path": "fixtures/claims/politifact.csv", "preset": "politifact"}
    ]}));
    assert_eq!(once, twice);
    assert_eq!(out.report.drop_reasons().get("merged_duplicate"), Some(&14));
}
