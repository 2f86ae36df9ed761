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

/// Write `files` (name, contents) into a fresh folder; return it with the files' absolute paths.
fn files(contents: &[(&str, &str)]) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let paths = contents
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path.to_str().unwrap().to_string()
        })
        .collect();
    (dir, paths)
}

fn drops(out: &StageOutput) -> Vec<(String, String, String)> {
    out.report
        .drops
        .iter()
        .map(|d| (d.item.clone(), d.reason.clone(), d.detail.clone()))
        .collect()
}

#[test]
fn optional_columns_may_be_missing_in_every_preset() {
    // AVeriTeC-derived files often have no `speaker` (CONF-FACT's AVeriTeC columns have none).
    let (_dir, paths) = files(&[
        (
            "averitec.csv",
            "claim,label,claim_date,fact_checking_article\n\
             The bridge opened in 1990.,Supported,3-4-2020,https://checks.example/a\n\
             The moon is cheese.,Refuted,,https://checks.example/b\n",
        ),
        (
            "averitec.jsonl",
            "{\"claim\": \"The bridge opened in 1991.\", \"label\": \"Supported\", \"fact_checking_article\": \"https://checks.example/c\"}\n",
        ),
        (
            "factcheckqa.csv",
            "claim_text,remapped_verdict_class\nRain is wet.,true\n",
        ),
        (
            "politifact.csv",
            "statement,rating\nSays taxes fell.,false\n",
        ),
    ]);
    let (claims, out) = run(serde_json::json!({"sources": [
        {"path": paths[0], "preset": "averitec"},
        {"path": paths[1], "preset": "averitec"},
        {"path": paths[2], "preset": "factcheckqa"},
        {"path": paths[3], "preset": "politifact"},
    ]}));
    assert!(out.report.drops.is_empty(), "{:?}", drops(&out));
    let texts: Vec<&str> = claims.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "The bridge opened in 1990.",
            "The moon is cheese.",
            "The bridge opened in 1991.",
            "Rain is wet.",
            "Says taxes fell."
        ]
    );
    assert!(claims.iter().all(|c| c.speaker.is_none()));
    assert_eq!(claims[0].claim_date.as_deref(), Some("2020-04-03"));
    assert_eq!(claims[0].url.as_deref(), Some("https://checks.example/a"));
    // The politifact preset names PolitiFact, as the scraper does, when the file does not.
    assert_eq!(claims[4].fact_checker.as_deref(), Some("PolitiFact"));
    assert_eq!(claims[4].country.as_deref(), Some("US"));
}

#[test]
fn missing_required_columns_name_the_file_and_the_column() {
    let (_dir, paths) = files(&[
        (
            "no-label.csv",
            "claim,speaker\nThe moon is cheese.,A blogger\n",
        ),
        (
            "no-label.jsonl",
            "{\"claim\": \"The moon is cheese.\"}\n{\"claim\": \"Rain is wet.\"}\n",
        ),
        (
            "some-without-claim.jsonl",
            "{\"claim\": \"Rain is wet.\", \"label\": \"Supported\"}\n\
             {\"text\": \"The moon is cheese.\", \"label\": \"Refuted\"}\n\
             {\"claim\": \"Snow is cold.\"}\n",
        ),
    ]);
    let err = ImportStage
        .check(
            &serde_json::json!({"sources": [{"path": paths[0], "preset": "averitec"}]}),
            &root(),
        )
        .unwrap_err();
    assert_eq!(err.field, "sources[0].columns.rating");
    assert!(
        err.message.contains(&paths[0]) && err.message.contains("no column `label`"),
        "{err}"
    );

    // JSONL has no header: a required field no record has fails the stage, naming both.
    let config = serde_json::json!({"sources": [{"path": paths[1], "preset": "averitec"}]});
    ImportStage.check(&config, &root()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ctx = StageContext {
        root: root(),
        stage_dir: dir.path().into(),
        pipeline: "test".into(),
        stage_id: "claims".into(),
        progress: Arc::new(NoProgress),
    };
    let err = ImportStage
        .run(&config, Inputs::default(), &ctx)
        .expect_err("no record has a label");
    let message = err.to_string();
    assert!(
        message.contains(&paths[1]) && message.contains("`label`"),
        "{message}"
    );

    // Records that lack it among records that have it are drops that say so.
    let (claims, out) =
        run(serde_json::json!({"sources": [{"path": paths[2], "preset": "averitec"}]}));
    assert_eq!(claims.len(), 1);
    let f = &paths[2];
    assert_eq!(
        drops(&out),
        vec![
            (
                format!("{f}:2"),
                "empty_claim".into(),
                "no column `claim` in this record".into()
            ),
            (
                format!("{f}:3"),
                "missing_rating".into(),
                "no column `label` in this record".into()
            ),
        ]
    );
}

#[test]
fn crlf_and_lf_files_number_dropped_lines_alike() {
    // Line 1 header; 2 a good row; 3-4 a quoted field over two lines; 5 an unknown rating;
    // 6 blank; 7 an unknown rating; 8 a row with too few fields.
    let csv = "statement,rating,speaker,statement_date,venue,url\n\
               Claim one.,true,A,\"March 3, 2020\",a rally,https://x.example/1\n\
               \"Claim two\nover two lines.\",false,B,,,https://x.example/2\n\
               Claim three.,sort-of-true,C,,,https://x.example/3\n\
               \n\
               Claim four.,maybe,D,,,https://x.example/4\n\
               Claim five.,true\n";
    // Line 1 good; 2 blank; 3 an unknown label; 4 not JSON.
    let jsonl = "{\"claim\": \"a\", \"label\": \"Supported\"}\n\
                 \n\
                 {\"claim\": \"b\", \"label\": \"Maybe\"}\n\
                 {not json\n";
    let crlf = |s: &str| s.replace('\n', "\r\n");
    let (_dir, paths) = files(&[
        ("lf.csv", csv),
        ("crlf.csv", &crlf(csv)),
        ("lf.jsonl", jsonl),
        ("crlf.jsonl", &crlf(jsonl)),
    ]);
    let lines = |path: &str, preset: &str| -> Vec<(u64, String)> {
        let (claims, out) = run(serde_json::json!({"sources": [{"path": path, "preset": preset}]}));
        assert_eq!(claims.len(), if preset == "politifact" { 2 } else { 1 });
        out.report
            .drops
            .iter()
            .map(|d| {
                let line = d.item.strip_prefix(&format!("{path}:")).unwrap();
                (line.parse().unwrap(), d.reason.clone())
            })
            .collect()
    };
    let want_csv = vec![
        (5, "unknown_rating".to_string()),
        (7, "unknown_rating".to_string()),
        (8, "invalid_row".to_string()),
    ];
    assert_eq!(lines(&paths[0], "politifact"), want_csv);
    assert_eq!(lines(&paths[1], "politifact"), want_csv);
    let want_jsonl = vec![
        (3, "unknown_rating".to_string()),
        (4, "invalid_row".to_string()),
    ];
    assert_eq!(lines(&paths[2], "averitec"), want_jsonl);
    assert_eq!(lines(&paths[3], "averitec"), want_jsonl);
}

/// `verdict_map` keys: the file's own rating word takes effect ("Not Enough Evidence", which the
/// averitec preset excludes), and a misspelled one is refused at check, naming the key and the
/// words it could be.
#[test]
fn verdict_map_by_the_files_word_and_misspelled_keys_refused() {
    let source = |map: serde_json::Value| {
        serde_json::json!({"sources": [{
            "path": "fixtures/claims/averitec.jsonl", "preset": "averitec", "verdict_map": map,
        }]})
    };
    let (plain, _) = run(source(serde_json::json!({})));
    let (mapped, _) = run(source(serde_json::json!({"Not Enough Evidence": "false"})));
    assert_eq!(mapped.len(), plain.len() + 1);
    assert_eq!(count(&mapped, "false"), count(&plain, "false") + 1);
    let err = ImportStage
        .check(&source(serde_json::json!({"Refutd": "false"})), &root())
        .unwrap_err();
    assert_eq!(err.field, "sources[0].verdict_map.Refutd");
    assert!(
        err.message.contains("`Refutd`") && err.message.contains("refuted"),
        "{err}"
    );
}

/// A key noisebench knows no rating word for (MultiFC-style "truth!") is the file's own word: it
/// is taken when some row of the file rates with it, and refused at `check` when none does (a
/// typo or a leftover would match nothing), naming the file's ratings.
#[test]
fn verdict_map_own_words_must_be_ratings_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("multifc.jsonl");
    std::fs::write(
        &file,
        "{\"claim\": \"The moon is made of rock.\", \"label\": \"truth!\"}\n\
         {\"claim\": \"The moon is made of cheese.\", \"label\": \"fiction!\"}\n\
         {\"claim\": \"The moon is a lamp.\", \"label\": \"fiction!\"}\n",
    )
    .unwrap();
    let source = |map: serde_json::Value| {
        serde_json::json!({"sources": [{
            "path": file, "preset": "averitec", "verdict_map": map,
        }]})
    };
    let (claims, out) = run(source(
        serde_json::json!({"truth!": "true", "Fiction!": "false"}),
    ));
    assert_eq!((count(&claims, "true"), count(&claims, "false")), (1, 2));
    assert!(out.report.drops.is_empty(), "{:?}", out.report.drops);
    let err = ImportStage
        .check(
            &source(serde_json::json!({"truth!": "true", "Satire": "exclude"})),
            &root(),
        )
        .unwrap_err();
    assert_eq!(err.field, "sources[0].verdict_map.Satire");
    assert!(
        err.message.contains("multifc.jsonl")
            && err.message.contains("truth!")
            && err.message.contains("fiction!"),
        "{err}"
    );
}
