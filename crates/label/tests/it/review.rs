//! The review round trip: export the sheet, fill it in as two reviewers and an adjudicator
//! would, import it; human labels take precedence, are marked human, feed the human-conflict
//! flag, and agreement equals hand-computed kappa and alpha.

use crate::common;

use common::*;
use noisebench_core::{ClaimDocumentLabel, Conflict, TypedStage, parse_config};
use noisebench_label::write_sheet;
use noisebench_label::{LabelConfig, LabelStage, read_sheet};

/// Model answers per document token: p1 supporting/support, p2 misleading/reject,
/// p3 irrelevant/not enough evidence, p4 misleading/reject, p5 supporting/support.
fn rule(r: &Req) -> String {
    let p = &r.prompt;
    let positive =
        p.contains("DOC_P1") || p.contains("DOC_P5") || p.contains("/p1") || p.contains("/p5");
    let negative =
        p.contains("DOC_P2") || p.contains("DOC_P4") || p.contains("/p2") || p.contains("/p4");
    match r.task {
        "exam" if positive => r#"{"verdict": "true"}"#.into(),
        "exam" if negative => r#"{"verdict": "false"}"#.into(),
        "exam" | "zero_context" => r#"{"verdict": "undecided"}"#.into(),
        "credibility" => r#"{"credibility": "low", "source_type": "other"}"#.into(),
        _ if positive => r#"{"reasoning": "x", "stance": "support"}"#.into(),
        _ if negative => r#"{"reasoning": "x", "stance": "reject"}"#.into(),
        _ => r#"{"reasoning": "x", "stance": "not enough evidence"}"#.into(),
    }
}

fn close(a: Option<f64>, b: f64) {
    let a = a.expect("defined");
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

#[test]
fn review_round_trip_and_agreement() {
    let server = FakeLlm::start(rule);
    let claims = vec![claim("c1", "The deficit doubled in 2020.", "true")];
    let docs: Vec<_> = (1..=5)
        .map(|i| {
            doc(
                &format!("p{i}"),
                &format!("https://example.com/p{i}"),
                &format!("Page {i}"),
                &format!("DOC_P{i} text of page {i}."),
            )
        })
        .collect();
    let links: Vec<_> = (1..=5).map(|i| link("c1", &format!("p{i}"), i)).collect();
    let stage = LabelStage::new(server.llm(0));
    let dir = tempfile::tempdir().unwrap();
    let config: LabelConfig = parse_config(&serde_json::json!({})).unwrap();
    let mut out = stage
        .run(&config, inputs(&claims, &docs, &links), &ctx(dir.path()))
        .unwrap();
    let first: Vec<ClaimDocumentLabel> = table(&mut out, "labels");
    let model: Vec<_> = first
        .iter()
        .map(|l| {
            (
                l.document_id.as_str(),
                l.label.as_deref().unwrap(),
                l.stance.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        model,
        vec![
            ("p1", "supporting", "support"),
            ("p2", "misleading", "reject"),
            ("p3", "irrelevant", "not enough evidence"),
            ("p4", "misleading", "reject"),
            ("p5", "supporting", "support"),
        ]
    );

    // The exported sheet: one row per pair, model answers filled, reviewer columns blank.
    let mut sheet = read_sheet(&dir.path().join("review_sheet.csv")).unwrap();
    assert_eq!(sheet.len(), 5);
    assert_eq!(sheet[1].model_label, "misleading");
    assert_eq!(sheet[1].model_stance, "reject");
    assert_eq!(sheet[1].claim, "The deficit doubled in 2020.");
    assert_eq!(sheet[1].link, "https://example.com/p2");
    assert!(sheet[1].excerpt.starts_with("DOC_P2"));
    assert!(
        sheet
            .iter()
            .all(|r| r.reviewer_1_label.is_empty() && r.adjudicated_label.is_empty())
    );

    // Reviewers at work.
    let fill = |r: &mut noisebench_label::ReviewRow, cols: [&str; 6]| {
        r.reviewer_1_label = cols[0].into();
        r.reviewer_1_stance = cols[1].into();
        r.reviewer_2_label = cols[2].into();
        r.reviewer_2_stance = cols[3].into();
        r.adjudicated_label = cols[4].into();
        r.adjudicated_stance = cols[5].into();
    };
    fill(
        &mut sheet[0],
        ["supporting", "support", "Supporting", "Support", "", ""],
    );
    fill(
        &mut sheet[1],
        [
            "misleading",
            "reject",
            "supporting",
            "support",
            "supporting",
            "support",
        ],
    );
    fill(
        &mut sheet[2],
        [
            "irrelevant",
            "not enough evidence",
            "misleading",
            "reject",
            "",
            "",
        ],
    );
    // A trailing space and capitals (CONF-FACT's "Supported " bug) must not leak.
    fill(&mut sheet[3], ["Misleading ", "Reject", "", "", "", ""]);
    fill(&mut sheet[4], ["maybe", "", "", "", "", ""]);
    let mut unknown = sheet[0].clone();
    unknown.pair_id = "label_nope".into();
    sheet.push(unknown);
    let filled = dir.path().join("filled.csv");
    write_sheet(&filled, &sheet).unwrap();

    let config: LabelConfig =
        parse_config(&serde_json::json!({"review": {"import": filled.to_str().unwrap()}})).unwrap();
    stage.validate(&config, &repo_root()).unwrap();
    let dir2 = tempfile::tempdir().unwrap();
    let mut out = stage
        .run(&config, inputs(&claims, &docs, &links), &ctx(dir2.path()))
        .unwrap();
    let labels: Vec<ClaimDocumentLabel> = table(&mut out, "labels");
    let got: Vec<_> = labels
        .iter()
        .map(|l| {
            (
                l.document_id.as_str(),
                l.label.as_deref().unwrap(),
                l.stance.as_deref().unwrap(),
                l.label_source.as_str(),
                l.model_label.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("p1", "supporting", "support", "human", "supporting"),
            ("p2", "supporting", "support", "human", "misleading"),
            // Reviewers disagree, no adjudication: the model's answer stays.
            (
                "p3",
                "irrelevant",
                "not enough evidence",
                "model",
                "irrelevant"
            ),
            ("p4", "misleading", "reject", "human", "misleading"),
            // An invalid label: the row is skipped and recorded.
            ("p5", "supporting", "support", "model", "supporting"),
        ]
    );
    assert!(
        labels[0].provenance.starts_with("human:"),
        "{}",
        labels[0].provenance
    );
    assert_eq!(
        labels[1].stance_majority.as_deref(),
        Some("reject"),
        "model votes kept"
    );

    let reasons: Vec<(&str, &str)> = out
        .report
        .drops
        .iter()
        .map(|d| (d.item.as_str(), d.reason.as_str()))
        .collect();
    assert!(
        reasons.contains(&("review:label_nope", "review_unknown_pair")),
        "{reasons:?}"
    );
    let p5 = &labels[4].id;
    assert!(
        reasons.contains(&(&format!("review:{p5}") as &str, "review_invalid_label")),
        "{reasons:?}"
    );

    // Human conflict: reviewed stances hold a support (p1, p2) and a reject (p4).
    let conflicts: Vec<Conflict> = table(&mut out, "conflicts");
    assert_eq!(conflicts[0].human_conflict, Some(true));
    assert!(conflicts[0].model_conflict);

    // Agreement, by hand (see agreement.rs for the formulas):
    // reviewers, labels: (s,s) (m,s) (i,m). p_o = 1/3; marginals r1 s1 m1 i1, r2 s2 m1;
    //   p_e = (1*2 + 1*1)/9 = 1/3 -> kappa 0. Coincidences o_ss 2, o_ms = o_sm 1, o_im = o_mi 1;
    //   n_s 3, n_m 2, n_i 1, n 6; D_o 4; D_e = 2*(3*2 + 3*1 + 2*1)/5 = 22/5 -> alpha = 1/11.
    // model vs human, labels (p1, p2, p4): (s,s) (m,s) (m,m). p_o 2/3; model s1 m2, human s2 m1;
    //   p_e = (1*2 + 2*1)/9 = 4/9 -> kappa = (2/9)/(5/9) = 0.4. o_ss 2, o_mm 2, o_ms = o_sm 1;
    //   n_s = n_m = 3, n 6; D_o 2; D_e = 2*9/5 = 18/5 -> alpha = 1 - 10/18 = 4/9.
    // Stances have the same structure.
    // The card facts travel with the output (the runner records them in `stage.json`).
    let facts = out
        .facts
        .clone()
        .expect("the labels stage reports facts")
        .data;
    let review = &facts["review"];
    assert_eq!(review["reviewed"], 4);
    assert_eq!(review["applied"], 3);
    assert_eq!(review["unresolved"], 1);
    for key in ["reviewers_label", "reviewers_stance"] {
        assert_eq!(review[key]["items"], 3, "{key}");
        close(review[key]["cohen_kappa"].as_f64(), 0.0);
        close(review[key]["krippendorff_alpha"].as_f64(), 1.0 / 11.0);
    }
    for key in ["model_vs_human_label", "model_vs_human_stance"] {
        assert_eq!(review[key]["items"], 3, "{key}");
        close(review[key]["observed"].as_f64(), 2.0 / 3.0);
        close(review[key]["cohen_kappa"].as_f64(), 0.4);
        close(review[key]["krippendorff_alpha"].as_f64(), 4.0 / 9.0);
    }
    assert!((facts["human_share"].as_f64().unwrap() - 0.6).abs() < 1e-9);
    assert_eq!(facts["label_sources"]["human"], 3);
    assert_eq!(facts["human_conflicts"], 1);
}
