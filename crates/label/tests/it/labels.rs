//! The labels stage against a fake OpenAI-compatible server: each label rule, the exam majority,
//! the stance majority and tie rules, the empty-page rule, reasoned replies whose answer is not
//! at the start, conflicts, and credibility from the table and from the fallback.

use crate::common;

use common::*;
use noisebench_core::{
    ClaimDocumentLabel, Conflict, Document, DocumentCredibility, TypedStage, parse_config,
};
use noisebench_label::{LabelConfig, LabelStage};

const SUPPORT: &str = r#"{"stance": "support"}"#;
const REJECT: &str = r#"{"stance": "reject"}"#;
const NEE: &str = r#"{"stance": "not enough evidence"}"#;

/// Replies keyed on tokens planted in the documents (see `fixture`).
fn rule(r: &Req) -> String {
    let p = &r.prompt;
    let pick = |pairs: &[(&str, &str)], default: &str| {
        pairs
            .iter()
            .find(|(token, _)| p.contains(token))
            .map_or(default, |(_, reply)| reply)
            .to_string()
    };
    match r.task {
        "exam" => pick(
            &[
                ("EXAM_TRUE", r#"{"verdict": "true"}"#),
                ("EXAM_FALSE", r#"{"verdict": "false"}"#),
            ],
            r#"{"verdict": "undecided"}"#,
        ),
        "zero_context" => r#"{"verdict": "true"}"#.into(),
        "stance_url" => pick(&[("/supports/", SUPPORT), ("/rejects/", REJECT)], NEE),
        "stance_text" => pick(&[("TEXT_SUPPORT", SUPPORT), ("TEXT_REJECT", REJECT)], NEE),
        "stance_reasoned" => pick(
            &[
                // The answer at the end of the `stance` string, not at its start.
                (
                    "REASON_REJECT",
                    r#"{"reasoning": "The page gives the same year but other numbers.", "stance": "Weighing the figures against the claim, they do not match. Final answer: Reject"}"#,
                ),
                // Prose before the JSON, no `stance` field: the answer ends the reasoning.
                (
                    "REASON_NEE",
                    "Let me think about it first.\n{\"reasoning\": \"The page is about another topic entirely.\\n\\n**Final answer:** Not enough evidence\"}",
                ),
            ],
            SUPPORT,
        ),
        "credibility" => r#"{"credibility": "medium", "source_type": "other"}"#.into(),
        other => panic!("unexpected task {other}: {p}"),
    }
}

fn fixture() -> (
    Vec<noisebench_core::Claim>,
    Vec<Document>,
    Vec<noisebench_core::ClaimDocument>,
) {
    let claims = vec![
        claim("c1", "Unemployment fell to 3.5 percent in 2019.", "true"),
        claim("c2", "The moon landing was staged.", "false"),
    ];
    let docs = vec![
        doc(
            "d1",
            "https://www.reuters.com/supports/jobs",
            "Jobs report",
            "EXAM_TRUE TEXT_SUPPORT REASON_REJECT The rate was 3.5 percent.",
        ),
        doc(
            "d2",
            "https://unknown-blog.net/supports/b",
            "A blog",
            "EXAM_FALSE TEXT_REJECT REASON_NEE Something else.",
        ),
        // A link post: no body, a title only.
        doc(
            "d3",
            "https://old.reddit.com/rejects/c",
            "A link post",
            "   ",
        ),
    ];
    let links = vec![
        link("c1", "d1", 1),
        link("c1", "d2", 2),
        link("c1", "d3", 3),
        link("c2", "d1", 1),
        link("c2", "d2", 2),
    ];
    (claims, docs, links)
}

fn run(
    llm: noisebench_llm::Llm,
    config: serde_json::Value,
    dir: &std::path::Path,
) -> noisebench_core::StageOutput {
    let (claims, docs, links) = fixture();
    let config: LabelConfig = parse_config(&config).unwrap();
    let stage = LabelStage::new(llm);
    stage.validate(&config, &repo_root()).unwrap();
    stage
        .run(&config, inputs(&claims, &docs, &links), &ctx(dir))
        .unwrap()
}

fn row<'a>(labels: &'a [ClaimDocumentLabel], c: &str, d: &str) -> &'a ClaimDocumentLabel {
    labels
        .iter()
        .find(|l| l.claim_id == c && l.document_id == d)
        .unwrap_or_else(|| panic!("no row for {c}/{d}"))
}

#[test]
fn exam_stance_conflicts_and_credibility() {
    let server = FakeLlm::start(rule);
    let dir = tempfile::tempdir().unwrap();
    let mut out = run(
        server.llm(1),
        serde_json::json!({"credibility": {"table": "fixtures/credibility/domains.csv"}}),
        dir.path(),
    );
    let labels: Vec<ClaimDocumentLabel> = table(&mut out, "labels");
    assert_eq!(labels.len(), 5);
    let get = |c, d| row(&labels, c, d);

    // Exam rules: gold true + exam true = supporting; gold true + exam false = misleading;
    // gold false + exam true = misleading; gold false + exam false = supporting; undecided =
    // irrelevant (the link post, judged on its title alone).
    assert_eq!(get("c1", "d1").label.as_deref(), Some("supporting"));
    assert_eq!(get("c1", "d2").label.as_deref(), Some("misleading"));
    assert_eq!(get("c2", "d1").label.as_deref(), Some("misleading"));
    assert_eq!(get("c2", "d2").label.as_deref(), Some("supporting"));
    assert_eq!(get("c1", "d3").label.as_deref(), Some("irrelevant"));
    assert_eq!(get("c1", "d3").exam_verdict.as_deref(), Some("undecided"));
    assert_eq!(get("c1", "d1").exam_votes, vec!["full=true".to_string()]);

    // Zero-context probe says true for every claim: a false exam verdict is a flip.
    assert_eq!(
        get("c1", "d1").zero_context_verdict.as_deref(),
        Some("true")
    );
    assert_eq!(get("c1", "d1").flipped, Some(false));
    assert_eq!(get("c1", "d2").flipped, Some(true));
    assert_eq!(get("c1", "d3").flipped, Some(false));

    // Stance: support, support, reject (reasoned answer at the end of the string) -> support.
    let d1 = get("c1", "d1");
    assert_eq!(
        (
            d1.stance_url.as_deref(),
            d1.stance_text.as_deref(),
            d1.stance_reasoned.as_deref()
        ),
        (Some("support"), Some("support"), Some("reject"))
    );
    assert_eq!(d1.stance_majority.as_deref(), Some("support"));
    // support, reject, not enough evidence (found after prose, inside the reasoning): a tie.
    let d2 = get("c1", "d2");
    assert_eq!(d2.stance_reasoned.as_deref(), Some("not enough evidence"));
    assert_eq!(d2.stance_majority.as_deref(), Some("not enough evidence"));
    // Empty page: only the URL vote, and it decides.
    let d3 = get("c1", "d3");
    assert_eq!(d3.stance_url.as_deref(), Some("reject"));
    assert_eq!(
        (d3.stance_text.as_deref(), d3.stance_reasoned.as_deref()),
        (None, None)
    );
    assert_eq!(d3.stance_majority.as_deref(), Some("reject"));
    assert_eq!(d3.stance.as_deref(), Some("reject"));
    assert_eq!(d1.label_source, "model");
    assert!(
        d1.provenance.contains("exam_verdict=openai:fake-gpt@2"),
        "{}",
        d1.provenance
    );

    // Requests: 5 exam + 2 probes; URL votes for all 5 pairs; text votes only for the 4 pairs
    // with text; one credibility call for the one unknown domain.
    assert_eq!(server.count("exam"), 5);
    assert_eq!(server.count("zero_context"), 2);
    assert_eq!(server.count("stance_url"), 5);
    assert_eq!(server.count("stance_text"), 4);
    assert_eq!(server.count("stance_reasoned"), 4);
    assert_eq!(server.count("credibility"), 1);

    // Conflicts: c1 has a support (d1) and a reject (d3); c2 does not.
    let conflicts: Vec<Conflict> = table(&mut out, "conflicts");
    let c1 = conflicts.iter().find(|c| c.claim_id == "c1").unwrap();
    assert!(c1.model_conflict && c1.exam_conflict);
    assert_eq!(c1.support_documents, vec!["d1".to_string()]);
    assert_eq!(c1.reject_documents, vec!["d3".to_string()]);
    assert_eq!(
        (
            c1.supporting,
            c1.misleading,
            c1.irrelevant,
            c1.not_enough_evidence
        ),
        (1, 1, 1, 1)
    );
    assert_eq!(c1.human_conflict, None);
    let c2 = conflicts.iter().find(|c| c.claim_id == "c2").unwrap();
    assert!(!c2.model_conflict && c2.exam_conflict);

    // Credibility: table for reuters.com and reddit.com (subdomain), generated for the blog; one
    // row per document, the documents themselves not output again.
    assert!(out.tables.keys().all(|t| t != "documents"));
    let rated: Vec<DocumentCredibility> = table(&mut out, "document_credibility");
    assert_eq!(rated.len(), 3);
    let by = |id: &str| rated.iter().find(|d| d.document_id == id).unwrap().clone();
    assert_eq!(
        (
            by("d1").credibility.as_deref(),
            by("d1").credibility_source.as_deref(),
            by("d1").source_type.as_str()
        ),
        (Some("high"), Some("table"), "mainstream news")
    );
    assert_eq!(
        (
            by("d2").credibility.as_deref(),
            by("d2").credibility_source.as_deref(),
            by("d2").source_type.as_str()
        ),
        (Some("medium"), Some("generated"), "other")
    );
    assert_eq!(by("d3").credibility_source.as_deref(), Some("table"));
    assert_eq!(
        (by("d3").source_type.as_str(), by("d3").domain.as_str()),
        ("social media", "old.reddit.com")
    );
    assert_eq!(by("d2").source_type_source, "generated");
    assert_eq!(
        by("d1").id,
        noisebench_core::stable_id("cred", &["d1"]),
        "stable from the document id"
    );
    assert!(out.report.drops.is_empty(), "{:?}", out.report.drops);
    assert_eq!((out.report.items_in, out.report.items_out), (5, 5));

    // Side files: the review sheet (one row per pair) and the card facts.
    let sheet = noisebench_label::read_sheet(&dir.path().join("review_sheet.csv")).unwrap();
    assert_eq!(sheet.len(), 5);
    // The card facts travel with the output (the runner records them in `stage.json`).
    let facts = out
        .facts
        .clone()
        .expect("the labels stage reports facts")
        .data;
    assert_eq!(facts["labels"]["supporting"], 2);
    assert_eq!(facts["model_conflicts"], 1);
    assert_eq!(facts["models"]["exam_verdict"], "openai:fake-gpt");
    assert_eq!(facts["prompt_versions"]["stance_reasoned"], "3");
    assert_eq!(facts["credibility_sources"]["generated"], 1);
}

#[test]
fn raguard_preset_and_exam_variant_majority() {
    // Votes by variant: with the title and date -> true; without the title -> false; without
    // the date -> true.
    let server = FakeLlm::start(|r: &Req| match r.task {
        "exam" if !r.prompt.contains("its title: \"") => r#"{"verdict": "false"}"#.into(),
        "exam" => r#"{"verdict": "true"}"#.into(),
        "zero_context" => r#"{"verdict": "undecided"}"#.into(),
        _ => rule(r),
    });
    let dir = tempfile::tempdir().unwrap();
    let mut out = run(
        server.llm(0),
        serde_json::json!({
            "preset": "raguard",
            "exam": {"variants": ["full", "no-title", "undated"]},
            "stance": {"enabled": false},
            "credibility": {"fallback": "none"},
            "empty_documents": "irrelevant"
        }),
        dir.path(),
    );
    let labels: Vec<ClaimDocumentLabel> = table(&mut out, "labels");
    let d1 = row(&labels, "c1", "d1");
    assert_eq!(
        d1.exam_votes,
        vec!["full=true", "no-title=false", "undated=true"]
    );
    assert_eq!(d1.exam_verdict.as_deref(), Some("true"));
    assert_eq!(d1.label.as_deref(), Some("supporting"));
    // Undecided probe: no flip. The empty page is labelled without asking, in RAGuard's word.
    assert_eq!(d1.flipped, Some(false));
    let d3 = row(&labels, "c1", "d3");
    assert_eq!(d3.label.as_deref(), Some("unrelated"));
    assert!(d3.exam_votes.is_empty());
    assert_eq!(d3.stance_majority, None);
    assert_eq!(
        server.count("exam"),
        4 * 3,
        "3 variants for the 4 pairs with text"
    );
    assert_eq!(server.count("stance_url"), 0);
    assert_eq!(server.count("credibility"), 0);
    let rated: Vec<DocumentCredibility> = table(&mut out, "document_credibility");
    assert_eq!(rated.len(), 3);
    assert!(rated.iter().all(|d| d.credibility.is_none()));

    // Two variants that disagree: a tie is undecided, hence unrelated.
    let dir = tempfile::tempdir().unwrap();
    let mut out = run(
        server.llm(0),
        serde_json::json!({
            "preset": "raguard",
            "exam": {"variants": ["full", "no-title"], "zero_context": false},
            "stance": {"enabled": false},
            "credibility": {"fallback": "none"}
        }),
        dir.path(),
    );
    let labels: Vec<ClaimDocumentLabel> = table(&mut out, "labels");
    let d1 = row(&labels, "c1", "d1");
    assert_eq!(d1.exam_verdict.as_deref(), Some("undecided"));
    assert_eq!(d1.label.as_deref(), Some("unrelated"));
    assert_eq!(
        (d1.zero_context_verdict.as_deref(), d1.flipped),
        (None, None)
    );
}

#[test]
fn a_reply_with_no_answer_is_a_recorded_failed_vote() {
    let server = FakeLlm::start(|r: &Req| match r.task {
        "stance_reasoned" => r#"{"reasoning": "It is hard to say anything here."}"#.into(),
        _ => rule(r),
    });
    let dir = tempfile::tempdir().unwrap();
    let mut out = run(
        server.llm(1),
        serde_json::json!({"credibility": {"fallback": "none"}, "exam": {"zero_context": false}}),
        dir.path(),
    );
    let labels: Vec<ClaimDocumentLabel> = table(&mut out, "labels");
    assert_eq!(labels.len(), 5, "a failed vote does not drop the pair");
    let d1 = row(&labels, "c1", "d1");
    assert_eq!(d1.stance_reasoned, None);
    assert_eq!(
        d1.stance_majority.as_deref(),
        Some("support"),
        "two votes alike"
    );
    let d2 = row(&labels, "c1", "d2");
    assert_eq!(
        d2.stance_majority.as_deref(),
        Some("not enough evidence"),
        "two votes differ"
    );
    // One re-ask each, then a drop per failed vote.
    assert_eq!(server.count("stance_reasoned"), 8);
    let failed: Vec<_> = out
        .report
        .drops
        .iter()
        .filter(|d| d.reason == "llm_unparseable_output")
        .collect();
    assert_eq!(failed.len(), 4);
    assert!(failed.iter().all(|d| d.item.ends_with("/stance_reasoned")));
    assert!(
        failed[0].detail.contains("no stance found"),
        "{}",
        failed[0].detail
    );
}

#[test]
fn config_errors_name_the_field() {
    let stage = LabelStage::new(noisebench_llm::Llm::offline());
    let bad = |v: serde_json::Value| -> String {
        match parse_config::<LabelConfig>(&v) {
            Err(e) => e.field,
            Ok(c) => stage.validate(&c, &repo_root()).unwrap_err().field,
        }
    };
    assert_eq!(
        bad(serde_json::json!({"exam": {"variant": ["full"]}})),
        "exam.variant"
    );
    assert_eq!(
        bad(serde_json::json!({"exam": {"variants": []}})),
        "exam.variants"
    );
    assert_eq!(
        bad(serde_json::json!({"exam": {"variants": ["full", "full"]}})),
        "exam.variants"
    );
    assert_eq!(
        bad(serde_json::json!({"credibility": {"table": "fixtures/credibility/nope.csv"}})),
        "credibility.table"
    );
    assert_eq!(
        bad(serde_json::json!({"exam": {"enabled": false}, "stance": {"enabled": false}})),
        "exam.enabled"
    );
}

#[test]
fn offline_backend_is_deterministic_and_marked() {
    let run_once = || {
        let dir = tempfile::tempdir().unwrap();
        let mut out = run(
            noisebench_llm::Llm::offline(),
            serde_json::json!({"credibility": {"table": "fixtures/credibility/domains.csv"}}),
            dir.path(),
        );
        let labels: Vec<ClaimDocumentLabel> = table(&mut out, "labels");
        let docs: Vec<DocumentCredibility> = table(&mut out, "document_credibility");
        let conflicts: Vec<Conflict> = table(&mut out, "conflicts");
        let sheet = std::fs::read(dir.path().join("review_sheet.csv")).unwrap();
        (labels, docs, conflicts, sheet)
    };
    let a = run_once();
    let b = run_once();
    assert_eq!(a, b, "same input, same rows and files");
    let (labels, docs, conflicts, _) = a;
    assert_eq!(labels.len(), 5);
    assert_eq!(conflicts.len(), 2);
    assert!(
        labels
            .iter()
            .all(|l| l.label_source == "offline" && l.label.is_some())
    );
    assert!(
        labels[0]
            .provenance
            .contains("exam_verdict=offline@offline-1"),
        "{}",
        labels[0].provenance
    );
    // The offline credibility rule stands in for the model, still marked generated.
    let blog = docs.iter().find(|d| d.document_id == "d2").unwrap();
    assert_eq!(blog.credibility_source.as_deref(), Some("generated"));
}
