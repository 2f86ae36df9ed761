//! The release loaders on the hand-made fixtures of `fixtures/releases/`: exact counts and
//! fields on the good files; on the bad ones, every bad row counted by reason and the run going
//! on with what is usable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_eval::load::{LoadError, load_confact, load_raguard, load_rare};
use noisebench_eval::{DocLabel, EvalData};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/releases")
}

fn counts(data: &EvalData) -> BTreeMap<String, usize> {
    data.bad_row_counts()
}

fn map(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn ids<T>(items: &[T], id: impl Fn(&T) -> &str) -> Vec<String> {
    items.iter().map(|x| id(x).to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// RAGuard
// ---------------------------------------------------------------------------------------------

#[test]
fn raguard_good_release() {
    let dir = fixtures().join("raguard");
    let data = load_raguard(&dir.join("claims.csv"), &dir.join("documents.csv")).unwrap();
    assert_eq!(data.name, "raguard");
    assert!(data.bad_rows.is_empty(), "{:?}", data.bad_rows);
    assert_eq!(ids(&data.claims, |c| &c.id), ["1", "2", "3", "4"]);
    assert_eq!(data.documents.len(), 10);

    let c1 = &data.claims[0];
    // The claim keeps its quote marks, as in the release.
    assert_eq!(
        c1.text,
        "\"The city council voted to ban gas stoves in all new homes.\""
    );
    assert!(!c1.verdict);
    assert_eq!(c1.original_verdict.as_deref(), Some("false"));
    assert_eq!(c1.documents, ["101", "102", "103"]);
    assert_eq!(c1.question, None);
    // "half-true" is a True verdict in the release.
    assert!(data.claims[1].verdict);
    assert_eq!(
        data.claims[2].text,
        "Says the new bridge cost $84,263 more per mile than planned."
    );

    let docs = data.documents_by_id();
    let d101 = docs["101"];
    assert_eq!(d101.claim_id.as_deref(), Some("1"));
    assert_eq!(d101.label, Some(DocLabel::Misleading));
    assert_eq!(d101.domain.as_deref(), Some("reddit.com"));
    // A multi-line body survives the CSV quoting.
    assert_eq!(
        d101.text,
        "Just saw a post saying the council banned gas stoves in new homes. Is this real?\n\nEdit: looks like it was only a proposal."
    );
    assert_eq!(docs["102"].label, Some(DocLabel::Supporting));
    assert_eq!(docs["103"].label, Some(DocLabel::Irrelevant));
    assert_eq!(docs["103"].domain.as_deref(), Some("old.reddit.com"));
    // A link post: no body, kept with its title as its text.
    assert_eq!(docs["105"].title, "Marathon route announced");
    assert_eq!(docs["105"].text, "Marathon route announced");
    assert_eq!(
        docs["107"].text,
        "Officials say the bridge came in under budget, so the \"overrun\" story is fake."
    );
    // No link: no URL, no domain.
    assert_eq!(docs["110"].url, None);
    assert_eq!(docs["110"].domain, None);
    let labels: BTreeMap<DocLabel, usize> =
        data.documents.iter().fold(BTreeMap::new(), |mut m, d| {
            *m.entry(d.label.unwrap()).or_default() += 1;
            m
        });
    assert_eq!(
        labels,
        BTreeMap::from([
            (DocLabel::Supporting, 3),
            (DocLabel::Misleading, 2),
            (DocLabel::Irrelevant, 5)
        ])
    );
}

#[test]
fn raguard_with_crlf_and_a_byte_order_mark_reads_the_same() {
    let dir = fixtures().join("raguard");
    let tmp = tempfile::tempdir().unwrap();
    for name in ["claims.csv", "documents.csv"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let windows = format!("\u{feff}{}", text.replace('\n', "\r\n"));
        std::fs::write(tmp.path().join(name), windows).unwrap();
    }
    let plain = load_raguard(&dir.join("claims.csv"), &dir.join("documents.csv")).unwrap();
    let windows = load_raguard(
        &tmp.path().join("claims.csv"),
        &tmp.path().join("documents.csv"),
    )
    .unwrap();
    assert!(windows.bad_rows.is_empty(), "{:?}", windows.bad_rows);
    assert_eq!(windows.claims, plain.claims);
    // Line breaks inside a quoted field stay as written (CRLF here); everything else is equal.
    let d101 = windows.documents_by_id()["101"].text.clone();
    assert!(d101.contains("real?\r\n\r\nEdit"), "{d101:?}");
    for (a, b) in windows.documents.iter().zip(&plain.documents) {
        if a.id != "101" {
            assert_eq!(a, b);
        }
    }
}

#[test]
fn raguard_without_the_verdict_column() {
    let dir = fixtures().join("raguard");
    let data = load_raguard(
        &dir.join("bad/claims_no_verdict.csv"),
        &dir.join("documents.csv"),
    )
    .unwrap();
    assert!(data.claims.is_empty());
    // Every claim row is a bad row, then every document belongs to no loaded claim.
    assert_eq!(
        counts(&data),
        map(&[("missing_column", 4), ("unknown_claim", 10)])
    );
    let first = &data.bad_rows[0];
    assert_eq!(first.file, "claims_no_verdict.csv");
    assert_eq!(first.row, "line 2");
    assert!(first.detail.contains("`Verdict`"), "{}", first.detail);
    assert!(
        first
            .detail
            .contains("Claim ID, Claim, Document IDs, Document Labels, Original Verdict"),
        "{}",
        first.detail
    );
}

#[test]
fn raguard_bad_rows() {
    let dir = fixtures().join("raguard/bad");
    let data = load_raguard(&dir.join("claims.csv"), &dir.join("documents.csv")).unwrap();
    assert_eq!(
        counts(&data),
        map(&[
            ("bad_list", 2),
            ("bad_verdict", 1),
            ("duplicate_id", 2),
            ("empty_document", 1),
            ("missing_document", 1),
            ("unknown_claim", 2),
            ("unknown_label", 1),
        ])
    );
    let reasons: Vec<(&str, &str, &str)> = data
        .bad_rows
        .iter()
        .map(|b| (b.file.as_str(), b.row.as_str(), b.reason.as_str()))
        .collect();
    assert_eq!(
        reasons,
        [
            ("claims.csv", "line 3", "bad_list"),
            ("claims.csv", "line 4", "bad_verdict"),
            ("claims.csv", "line 5", "bad_list"),
            ("claims.csv", "line 7", "duplicate_id"),
            ("documents.csv", "line 3", "empty_document"),
            ("documents.csv", "line 4", "unknown_label"),
            ("documents.csv", "line 5", "unknown_claim"),
            ("documents.csv", "line 8", "duplicate_id"),
            ("documents.csv", "line 10", "unknown_claim"),
            ("claims.csv", "line 8", "missing_document"),
        ]
    );
    assert_eq!(ids(&data.claims, |c| &c.id), ["1", "5", "6"]);
    // 102 (empty) and 103 (unknown label) were dropped and counted where they are.
    assert_eq!(data.claims[0].documents, ["101"]);
    // An empty `Document IDs` list: the claim's documents come from documents.csv.
    assert_eq!(data.claims[1].documents, ["111", "112"]);
    // 999 is not in documents.csv.
    assert_eq!(data.claims[2].documents, ["120"]);
    let docs = data.documents_by_id();
    assert_eq!(
        ids(&data.documents, |d| &d.id),
        ["101", "111", "112", "120"]
    );
    // The first 101 is kept, not its repost.
    assert_eq!(docs["101"].title, "Council meeting notes");
    // `irrelevant`, the paper's word, reads as the release's `unrelated`.
    assert_eq!(docs["111"].label, Some(DocLabel::Irrelevant));
    assert_eq!(docs["111"].text, "Daylight saving time is here to stay");
    // An empty label cell and no claim list to fall back on: unlabelled, kept.
    assert_eq!(docs["112"].label, None);
    assert!(data.bad_rows[0].detail.contains("Document IDs"));
}

#[test]
fn raguard_unreadable_file_is_an_error_naming_it() {
    let dir = fixtures().join("raguard");
    let err = load_raguard(&dir.join("nope.csv"), &dir.join("documents.csv")).unwrap_err();
    assert!(matches!(err, LoadError::Io { .. }));
    assert!(err.to_string().contains("nope.csv"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// CONF-FACT
// ---------------------------------------------------------------------------------------------

#[test]
fn confact_good_release() {
    let data = load_confact(&fixtures().join("confact/confact.json")).unwrap();
    assert_eq!(data.name, "confact");
    assert!(data.bad_rows.is_empty(), "{:?}", data.bad_rows);
    assert_eq!(ids(&data.claims, |c| &c.id), ["1", "2", "3"]);
    let verdicts: Vec<bool> = data.claims.iter().map(|c| c.verdict).collect();
    // Claim 2's label is "Supported " (the release's trailing-space bug): accepted.
    assert_eq!(verdicts, [false, true, true]);
    let c1 = &data.claims[0];
    assert_eq!(
        c1.question.as_deref(),
        Some("Was the national minimum wage raised to $15 an hour in 2023?")
    );
    assert_eq!(c1.claim_date.as_deref(), Some("14-3-2023"));
    assert_eq!(c1.documents, ["1_1", "1_2"]);
    assert_eq!(data.claims[1].documents, ["2_1", "2_2", "2_3"]);
    assert_eq!(data.documents.len(), 6);

    let docs = data.documents_by_id();
    let d = docs["1_1"];
    assert_eq!(d.claim_id.as_deref(), Some("1"));
    assert_eq!(d.title, "");
    assert_eq!(
        d.text,
        "The federal minimum wage has remained $7.25 per hour since July 2009."
    );
    assert_eq!(d.domain.as_deref(), Some("dol.example.gov"));
    assert_eq!(d.label, None);
    assert_eq!(d.credibility.level.as_deref(), Some("high"));
    assert_eq!(d.credibility.score, Some(0.92));
    assert!(
        d.credibility
            .background
            .as_deref()
            .unwrap()
            .starts_with("A government")
    );
    // `media_background` is read when `source_background` is absent.
    assert_eq!(
        docs["1_2"].credibility.background.as_deref(),
        Some("A personal blog with no editorial oversight.")
    );
    assert_eq!(docs["2_1"].credibility, Default::default());
    assert_eq!(docs["2_3"].domain.as_deref(), Some("archive.example.com"));
}

#[test]
fn confact_bad_rows() {
    let data = load_confact(&fixtures().join("confact/confact_bad.json")).unwrap();
    assert_eq!(
        counts(&data),
        map(&[
            ("bad_record", 2),
            ("duplicate_id", 1),
            ("empty_document", 1),
            ("missing_field", 1),
            ("unknown_label", 1),
        ])
    );
    let rows: Vec<(&str, &str)> = data
        .bad_rows
        .iter()
        .map(|b| (b.row.as_str(), b.reason.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("record 1 evidence 2", "empty_document"),
            ("record 2", "unknown_label"),
            ("record 3", "missing_field"),
            ("record 4", "bad_record"),
            ("record 5", "duplicate_id"),
            ("record 6 evidence 1", "bad_record"),
        ]
    );
    assert_eq!(ids(&data.claims, |c| &c.id), ["11", "14"]);
    // "Refuted " with its trailing space, and "TRUE".
    assert!(!data.claims[0].verdict);
    assert!(data.claims[1].verdict);
    // An evidence without an id is named after its claim and position.
    assert_eq!(data.claims[0].documents, ["11_1", "11_3"]);
    assert_eq!(data.claims[1].documents, ["14_1"]);
    assert_eq!(data.documents_by_id()["14_1"].domain, None);
    assert!(data.bad_rows[1].detail.contains("Not Enough Evidence"));
}

#[test]
fn confact_not_a_list_is_an_error() {
    let path = fixtures().join("confact/confact_not_a_list.json");
    let err = load_confact(&path).unwrap_err();
    assert!(
        matches!(
            err,
            LoadError::NotAList {
                found: "an object",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("confact_not_a_list.json"), "{err}");
    let tmp = tempfile::tempdir().unwrap();
    let broken = tmp.path().join("broken.json");
    std::fs::write(&broken, "[{\"id\": 1,").unwrap();
    assert!(matches!(load_confact(&broken), Err(LoadError::Json { .. })));
}

// ---------------------------------------------------------------------------------------------
// RARE
// ---------------------------------------------------------------------------------------------

fn rare_records() -> Vec<PathBuf> {
    let dir = fixtures().join("rare");
    vec![
        dir.join("rag_single_hop_dataset.json"),
        dir.join("rag_multi_hop_dataset.json"),
    ]
}

#[test]
fn rare_with_its_corpus() {
    let chunks = fixtures().join("rare/chunks.jsonl");
    let data = load_rare(&rare_records(), Some(&chunks)).unwrap();
    assert_eq!(data.name, "rare");
    assert!(data.bad_rows.is_empty(), "{:?}", data.bad_rows);
    assert_eq!(data.questions.len(), 5);
    assert_eq!(data.chunks.len(), 7);
    let kinds: Vec<&str> = data.questions.iter().map(|q| q.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "single_hop",
            "single_hop",
            "single_hop",
            "chained_multi_hop",
            "inverted_star_shaped"
        ]
    );
    let domains: Vec<&str> = data.questions.iter().map(|q| q.domain.as_str()).collect();
    assert_eq!(
        domains,
        ["finance", "finance", "unknown", "finance", "finance"]
    );

    let q = &data.questions[0];
    // No id in RARE's records: a stable one from question and answer.
    assert_eq!(
        q.id,
        noisebench_core::id::stable_id("q", &[&q.question, "Baltic Freight Lines"])
    );
    assert_eq!(q.answer, "Baltic Freight Lines");
    assert_eq!(q.answer_chunk_ids, ["finance_1000045_2023-03-01_chunk_3"]);
    assert_eq!(q.split, None);
    assert!(q.retrieved.is_empty());
    let qkinds: Vec<&str> = q
        .query_perturbations
        .iter()
        .map(|v| v.kind.as_str())
        .collect();
    assert_eq!(
        qkinds,
        [
            "character_level",
            "word_level",
            "irrelevant_info",
            "grammar_perturbation"
        ]
    );
    assert_eq!(
        q.query_perturbations[1].text,
        "Which firm did Northwind Logistics buy, according to its 2023 10-K filing?"
    );
    let dkinds: Vec<(&str, &str)> = q
        .document_perturbations
        .iter()
        .map(|v| (v.kind.as_str(), v.chunk_id.as_str()))
        .collect();
    assert_eq!(
        dkinds,
        [
            ("back_translation", "finance_1000045_2023-03-01_chunk_3"),
            ("regex_delete", "finance_1000045_2023-03-01_chunk_3")
        ]
    );
    assert!(data.questions[1].query_perturbations.is_empty());
    assert_eq!(data.questions[3].document_perturbations.len(), 2);
    let chunks = data.chunks_by_id();
    assert!(
        chunks["finance_1000077_2023-02-15_chunk_0"]
            .text
            .starts_with("Calder Port Authority reported revenue")
    );
    // Ids are distinct and stable across loads.
    let again = load_rare(&rare_records(), Some(&fixtures().join("rare/chunks.jsonl"))).unwrap();
    assert_eq!(again, data);
}

#[test]
fn rare_without_a_corpus_rebuilds_the_answer_chunks() {
    let data = load_rare(&rare_records(), None).unwrap();
    assert_eq!(data.questions.len(), 5);
    // Six distinct answer chunks, one bad row saying so.
    assert_eq!(data.chunks.len(), 6);
    assert_eq!(counts(&data), map(&[("chunks_from_source_sentences", 1)]));
    assert_eq!(data.bad_rows[0].row, "all");
    assert!(
        data.bad_rows[0].detail.contains("6 answer chunks"),
        "{}",
        data.bad_rows[0].detail
    );
    let chunks = data.chunks_by_id();
    // Chunk 3 is named by a single-hop record and by a chain: its sentences once each, first
    // seen first.
    assert_eq!(
        chunks["finance_1000045_2023-03-01_chunk_3"].text,
        "In 2022, Northwind Logistics acquired Baltic Freight Lines for $84,263 thousand in cash. Baltic Freight Lines operates from Riga Harbour."
    );
    assert_eq!(
        chunks["economics_estland_2022_chunk_12"].text,
        "The Ministry of Finance put the National Pension Office in charge of the pension reform."
    );
}

#[test]
fn rare_bad_records() {
    let dir = fixtures().join("rare");
    let data = load_rare(
        &[dir.join("rag_bad_dataset.json")],
        Some(&dir.join("chunks.jsonl")),
    )
    .unwrap();
    assert_eq!(
        counts(&data),
        map(&[
            ("bad_perturbation", 3),
            ("bad_record", 1),
            ("duplicate_id", 1),
            ("missing_chunk", 1),
            ("missing_field", 1),
            ("no_answer_chunks", 1),
        ])
    );
    let rows: Vec<(&str, &str)> = data
        .bad_rows
        .iter()
        .filter(|b| b.file == "rag_bad_dataset.json")
        .map(|b| (b.row.as_str(), b.reason.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("record 1", "missing_field"),
            ("record 2", "no_answer_chunks"),
            ("record 3", "bad_perturbation"),
            ("record 3", "bad_perturbation"),
            ("record 3", "bad_perturbation"),
            ("record 4", "bad_record"),
            ("record 5", "duplicate_id"),
        ]
    );
    assert!(data.bad_rows[0].detail.contains("`answer`"));
    // The record with bad perturbations is kept with its good ones.
    assert_eq!(data.questions.len(), 1);
    let q = &data.questions[0];
    assert_eq!(q.answer, "Westgate Basin");
    assert_eq!(q.query_perturbations.len(), 1);
    assert_eq!(q.query_perturbations[0].kind, "character_level");
    assert_eq!(q.document_perturbations.len(), 1);
    assert_eq!(q.document_perturbations[0].kind, "regex_delete");
    let missing = data
        .bad_rows
        .iter()
        .find(|b| b.reason == "missing_chunk")
        .unwrap();
    assert_eq!(missing.file, "chunks.jsonl");
    assert!(
        missing
            .detail
            .contains("finance_1000077_2023-02-15_chunk_99")
    );
}

#[test]
fn rare_corpus_as_a_json_list_with_other_field_names() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("corpus.json");
    std::fs::write(
        &corpus,
        r#"[{"id": "c1", "page_content": "First."}, {"chunk_id": "c2", "content": "Second.", "report_id": "r9"},
            {"id": "c1", "text": "again"}, {"id": "c3"}, 7]"#,
    )
    .unwrap();
    let records = tmp.path().join("records.json");
    std::fs::write(
        &records,
        r#"[{"id": "q1", "question": "Q?", "answer": "A", "answer_chunk_ids": ["c1", "c2"], "split": "test"}]"#,
    )
    .unwrap();
    let data = load_rare(&[records], Some(&corpus)).unwrap();
    assert_eq!(ids(&data.chunks, |c| &c.id), ["c1", "c2"]);
    assert_eq!(data.chunks[0].text, "First.");
    assert_eq!(data.chunks[1].report_id.as_deref(), Some("r9"));
    assert_eq!(
        counts(&data),
        map(&[("bad_record", 1), ("duplicate_id", 1), ("missing_field", 1)])
    );
    assert_eq!(data.questions[0].id, "q1");
    assert_eq!(data.questions[0].split.as_deref(), Some("test"));
    assert_eq!(data.questions[0].domain, "unknown");

    // JSON Lines with a broken line.
    let jsonl = tmp.path().join("corpus.jsonl");
    std::fs::write(
        &jsonl,
        "{\"id\": \"c1\", \"text\": \"x\"}\n{broken\n\n{\"id\": \"c2\", \"text\": \"y\"}\n",
    )
    .unwrap();
    let data = load_rare(&[tmp.path().join("records.json")], Some(&jsonl)).unwrap();
    assert_eq!(data.chunks.len(), 2);
    let bad: Vec<(&str, &str)> = data
        .bad_rows
        .iter()
        .map(|b| (b.row.as_str(), b.reason.as_str()))
        .collect();
    assert_eq!(bad, [("line 2", "bad_json")]);
}
