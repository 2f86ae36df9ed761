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
    assert!(q.retrievals.is_empty());
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

// ---------------------------------------------------------------------------------------------
// Releases as published: CONF-FACT's pickles, RARE's layouts, RAGuard's card columns, and the
// file-level errors (fixtures made by the scripts beside them; expectations read from those).
// ---------------------------------------------------------------------------------------------

use noisebench_eval::load::{
    RareInputs, credibility_beside, load_confact_with, load_raguard_files, load_rare_inputs,
};

fn confact_dataset() -> PathBuf {
    fixtures().join("confact/dataset")
}

#[test]
fn confact_pickles_with_the_credibility_tables_beside_them() {
    let humc = confact_dataset().join("HumC.pkl.gz");
    let tables = credibility_beside(&humc);
    let names: Vec<String> = tables
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["all_media_data.pkl", "mbfc_media_data.pkl"]);
    let data = load_confact_with(&humc, &tables).unwrap();
    assert!(data.bad_rows.is_empty(), "{:?}", data.bad_rows);
    assert_eq!(ids(&data.claims, |c| &c.id), ["1", "2", "3"]);
    let verdicts: Vec<bool> = data.claims.iter().map(|c| c.verdict).collect();
    // Claim 2's label is "Refuted " with the release's trailing space.
    assert_eq!(verdicts, [true, false, false]);
    let c1 = &data.claims[0];
    assert_eq!(
        c1.question.as_deref(),
        Some("Did Lakeport ban single-use plastic bags in 2021?")
    );
    assert_eq!(c1.claim_date.as_deref(), Some("2021-05-02"));
    assert_eq!(c1.documents, ["1_1", "1_2"]);
    assert_eq!(data.documents.len(), 5);
    let docs = data.documents_by_id();
    // www. is dropped, as the authors' extract_domain does, so the table's key matches.
    let d = docs["1_1"];
    assert_eq!(d.domain.as_deref(), Some("lakeportnews.example.com"));
    assert_eq!(d.credibility.level.as_deref(), Some("high"));
    assert_eq!(
        d.credibility.background.as_deref(),
        Some(
            "Lakeport News is a daily paper founded in 1921. It corrects errors promptly and cites public records."
        )
    );
    assert_eq!(docs["1_2"].credibility.level.as_deref(), Some("low"));
    // In the combined table only: a model's description, marked so.
    let generated = docs["2_1"].credibility.background.as_deref().unwrap();
    assert!(
        generated.starts_with("The city's open-data portal, run by its statistics office.")
            && generated.contains("written by a model"),
        "{generated}"
    );
    // A domain in neither table: no credibility.
    assert!(!docs["2_2"].credibility.is_known());
    assert_eq!(data.documents_with_credibility(), 4);
    assert!(
        data.notes
            .iter()
            .any(|n| n.contains("4 of 5 documents matched by domain")
                && n.contains("1 model-written")
                && n.contains("1 have none")),
        "{:?}",
        data.notes
    );
    // Without the tables: the same claims and documents, and no credibility.
    let bare = load_confact(&humc).unwrap();
    assert_eq!(bare.claims, data.claims);
    assert_eq!(bare.documents_with_credibility(), 0);
    assert!(
        bare.notes
            .iter()
            .any(|n| n.contains("credibility: no table")),
        "{:?}",
        bare.notes
    );
}

#[test]
fn confact_pickles_of_every_protocol_read_the_same() {
    let reference = load_confact(&confact_dataset().join("HumC.pkl.gz")).unwrap();
    for p in 2..=5 {
        let data = load_confact(&fixtures().join(format!("confact/protocols/p{p}.pkl.gz")))
            .unwrap_or_else(|e| panic!("protocol {p}: {e}"));
        assert!(
            data.bad_rows.is_empty(),
            "protocol {p}: {:?}",
            data.bad_rows
        );
        assert_eq!(data.claims, reference.claims[..2], "protocol {p}");
        assert_eq!(data.documents, reference.documents[..4], "protocol {p}");
    }
}

#[test]
fn confact_modc_stances_label_the_evidence() {
    let data = load_confact(&confact_dataset().join("ModC.pkl.gz")).unwrap();
    assert!(data.bad_rows.is_empty(), "{:?}", data.bad_rows);
    let docs = data.documents_by_id();
    // Claim 7 is Supported: Support agrees, Reject opposes, "Not enough evidence" neither.
    assert_eq!(docs["7_1"].label, Some(DocLabel::Supporting));
    assert_eq!(docs["7_2"].label, Some(DocLabel::Misleading));
    assert_eq!(docs["7_3"].label, Some(DocLabel::Irrelevant));
    // Claim 8 is Refuted: a Reject stance agrees with it.
    assert_eq!(docs["8_1"].label, Some(DocLabel::Supporting));
}

#[test]
fn confact_pickle_with_a_class_instance_reads_it_as_absent_and_says_so() {
    let data = load_confact(&fixtures().join("confact/protocols/date_object.pkl.gz")).unwrap();
    assert_eq!(counts(&data), map(&[("unreadable_values", 1)]));
    assert_eq!(ids(&data.claims, |c| &c.id), ["3"]);
    // The datetime.date claim_date could not be rebuilt.
    assert_eq!(data.claims[0].claim_date, None);
}

#[test]
fn confact_with_no_usable_record_is_an_error_naming_the_file() {
    let protocols = fixtures().join("confact/protocols");
    let err = load_confact(&protocols.join("empty_list.pkl.gz")).unwrap_err();
    assert!(matches!(err, LoadError::NoRecords { .. }), "{err}");
    assert!(err.to_string().contains("empty_list.pkl.gz"), "{err}");
    let err = load_confact(&protocols.join("evidence_renamed.pkl.gz")).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("evidence_renamed.pkl.gz")
            && msg.contains("no instance has `evidence_url`")
            && msg.contains("evidence"),
        "{msg}"
    );
    // A credibility table given as the instances: said so.
    let msg = load_confact(&confact_dataset().join("mbfc_media_data.pkl"))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("a credibility table") && msg.contains("--credibility"),
        "{msg}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.json");
    std::fs::write(&empty, "[]").unwrap();
    assert!(matches!(
        load_confact(&empty),
        Err(LoadError::NoRecords { .. })
    ));
}

#[test]
fn an_empty_file_or_a_binary_one_is_an_error_saying_what_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("claims.csv");
    std::fs::write(&empty, "\n  \n").unwrap();
    let err = load_raguard_files(&empty, None).unwrap_err();
    assert!(matches!(err, LoadError::Empty { .. }), "{err}");
    assert_eq!(err.to_string(), format!("{} is empty", empty.display()));
    // The pickle given as RAGuard's claims: gzip, said so; the error has no repeated cause.
    let gz = confact_dataset().join("HumC.pkl.gz");
    let err = load_raguard_files(&gz, None).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("HumC.pkl.gz") && msg.contains("gzip"), "{msg}");
    assert!(std::error::Error::source(&err).is_none());
    let pickle = confact_dataset().join("all_media_data.pkl");
    let msg = load_raguard_files(&pickle, None).unwrap_err().to_string();
    assert!(msg.contains("a Python pickle"), "{msg}");
    let parquet = tmp.path().join("claims.parquet");
    let mut bytes = b"PAR1".to_vec();
    bytes.extend([0xff, 0x00, 0x15, 0x04]);
    std::fs::write(&parquet, bytes).unwrap();
    let msg = load_raguard_files(&parquet, None).unwrap_err().to_string();
    assert!(msg.contains("Parquet"), "{msg}");
    let zip = tmp.path().join("release.json");
    std::fs::write(&zip, b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe").unwrap();
    let msg = load_confact(&zip).unwrap_err().to_string();
    assert!(msg.contains("zip archive"), "{msg}");
    // A missing file: named once, its cause once.
    let err = load_raguard_files(&tmp.path().join("nope.csv"), None).unwrap_err();
    assert!(std::error::Error::source(&err).is_none());
    assert_eq!(err.to_string().matches("nope.csv").count(), 1, "{err}");
}

#[test]
fn raguard_card_columns_and_claims_alone() {
    use noisebench_eval::load::raguard::{CLAIM_COLUMNS, DOCUMENT_COLUMNS};
    // The fixture's headers are the card's, in the card's order.
    let dir = fixtures().join("raguard");
    for (file, columns) in [
        ("claims.csv", &CLAIM_COLUMNS),
        ("documents.csv", &DOCUMENT_COLUMNS),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
        assert_eq!(header, columns.to_vec(), "{file}");
    }
    // claims.csv alone: every claim, no document, no bad row for the listed ids.
    let data = load_raguard_files(&dir.join("claims.csv"), None).unwrap();
    assert!(data.bad_rows.is_empty(), "{:?}", data.bad_rows);
    assert_eq!(data.claims.len(), 4);
    assert!(data.documents.is_empty());
    assert!(data.claims.iter().all(|c| c.documents.is_empty()));
    assert!(
        data.notes.iter().any(|n| n.contains("no documents.csv")),
        "{:?}",
        data.notes
    );
    // Reddit placeholders are no body: the title is the text.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(dir.join("claims.csv"), tmp.path().join("claims.csv")).unwrap();
    std::fs::write(
        tmp.path().join("documents.csv"),
        "Document ID,Title,Full Text,Claim ID,Document Label,Link,Score\n\
         101,Gas stove ban?,[Link Post],1,misleading,https://www.reddit.com/r/x/1,5\n",
    )
    .unwrap();
    let data = load_raguard(
        &tmp.path().join("claims.csv"),
        &tmp.path().join("documents.csv"),
    )
    .unwrap();
    assert_eq!(data.documents[0].text, "Gas stove ban?");
    assert!(
        data.notes
            .iter()
            .any(|n| n.contains("not in the dataset card") && n.contains("Score")),
        "{:?}",
        data.notes
    );
}

#[test]
fn raguard_crlf_rows_are_named_by_their_lines() {
    // The bad fixture's rows, with LF and with CRLF line ends, name the same lines.
    let dir = fixtures().join("raguard/bad");
    let lf = load_raguard(&dir.join("claims.csv"), &dir.join("documents.csv")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for name in ["claims.csv", "documents.csv"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        std::fs::write(tmp.path().join(name), text.replace('\n', "\r\n")).unwrap();
    }
    let crlf = load_raguard(
        &tmp.path().join("claims.csv"),
        &tmp.path().join("documents.csv"),
    )
    .unwrap();
    let rows = |d: &EvalData| -> Vec<(String, String)> {
        d.bad_rows
            .iter()
            .map(|b| (b.row.clone(), b.reason.clone()))
            .collect()
    };
    assert!(!lf.bad_rows.is_empty());
    assert_eq!(rows(&crlf), rows(&lf));
}

#[test]
fn rare_published_folder_with_retrieval_results() {
    let dir = fixtures().join("rare/published");
    let inputs = RareInputs::discover(std::slice::from_ref(&dir), None, None).unwrap();
    let names = |ps: &[PathBuf]| -> Vec<String> {
        ps.iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        names(&inputs.records),
        [
            "finance_single_hop_perturbed.json",
            "policy_multi_hop_perturbed.json"
        ]
    );
    assert_eq!(inputs.chunks, Some(dir.join("chunks.json")));
    assert_eq!(
        names(&inputs.retrieval_results),
        ["finance_single_hop_perturbed_retrieval_results.json"]
    );
    let data = load_rare_inputs(&inputs).unwrap();
    assert_eq!(data.questions.len(), 4);
    assert_eq!(data.chunks.len(), 6);
    let domains: Vec<&str> = data.questions.iter().map(|q| q.domain.as_str()).collect();
    // Record 1 says finance in its metadata; the others take it from their file's name.
    assert_eq!(domains, ["finance", "finance", "finance", "policy"]);
    assert_eq!(data.questions[3].kind, "chained_multi_hop");
    // The results are keyed by Python's hash of the question: joined on the question text.
    let q = &data.questions[0];
    assert_eq!(q.retrievals.len(), 9);
    let e5 = q
        .retrievals
        .iter()
        .find(|r| r.retriever == "e5-large" && r.query == "original")
        .unwrap();
    assert_eq!(
        e5.chunk_ids,
        [
            "finance_1000045_2023-03-01_chunk_3",
            "finance_1000045_2023-03-01_chunk_6",
            "finance_1000045_2023-03-01_chunk_4"
        ]
    );
    assert!(
        q.retrievals
            .iter()
            .any(|r| r.retriever == "stella-en-1.5B-v5" && r.query == "word_level")
    );
    // Question 3 has no entry (RARE's evaluator would skip it): kept, counted, BM25 serves it.
    assert!(data.questions[2].retrievals.is_empty());
    assert!(data.questions[3].retrievals.is_empty());
    assert_eq!(counts(&data), map(&[("no_retrieval_result", 1)]));
    assert_eq!(
        data.bad_rows[0].file,
        "finance_single_hop_perturbed_retrieval_results.json"
    );
    assert_eq!(data.bad_rows[0].row, "record 3");
    assert!(
        data.notes
            .iter()
            .any(|n| n.contains("2 of 3 questions joined") && n.contains("3 retrievers")),
        "{:?}",
        data.notes
    );
    assert!(
        data.notes
            .iter()
            .any(|n| n.contains("none for policy_multi_hop_perturbed.json")),
        "{:?}",
        data.notes
    );
}

#[test]
fn rare_generator_checkpoints_are_objects_one_after_another() {
    let dir = fixtures().join("rare/checkpoint");
    let inputs = RareInputs::discover(std::slice::from_ref(&dir), None, None).unwrap();
    assert_eq!(inputs.records.len(), 2);
    let data = load_rare_inputs(&inputs).unwrap();
    // The files in name order: one whole multi-hop record (the cut one is one bad row), then
    // two single-hop records.
    let kinds: Vec<(&str, &str)> = data
        .questions
        .iter()
        .map(|q| (q.kind.as_str(), q.domain.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("chained_multi_hop", "policy"),
            ("single_hop", "finance"),
            ("single_hop", "finance")
        ]
    );
    let bad: Vec<(&str, &str)> = data
        .bad_rows
        .iter()
        .filter(|b| b.reason != "chunks_from_source_sentences")
        .map(|b| (b.file.as_str(), b.reason.as_str()))
        .collect();
    assert_eq!(bad, [("updated_rag_multi_hop_dataset.json", "bad_json")]);
    let cut = data
        .bad_rows
        .iter()
        .find(|b| b.reason == "bad_json")
        .unwrap();
    assert_eq!(cut.row, "line 37");
    assert!(cut.detail.contains("from line 28"), "{}", cut.detail);
    // A checkpoint beside its final file is left out, and said so.
    let tmp = tempfile::tempdir().unwrap();
    let single = dir.join("updated_rag_single_hop_dataset.json");
    std::fs::copy(
        &single,
        tmp.path().join("updated_rag_single_hop_dataset.json"),
    )
    .unwrap();
    std::fs::copy(
        fixtures().join("rare/rag_single_hop_dataset.json"),
        tmp.path().join("rag_single_hop_dataset.json"),
    )
    .unwrap();
    let inputs = RareInputs::discover(&[tmp.path().to_path_buf()], None, None).unwrap();
    assert_eq!(
        inputs.records,
        [tmp.path().join("rag_single_hop_dataset.json")]
    );
    assert_eq!(inputs.left_out.len(), 1);
    assert!(
        inputs.left_out[0].1.contains("checkpoint"),
        "{:?}",
        inputs.left_out
    );
}

#[test]
fn rare_checkpoint_and_corpus_lines_are_right_after_crlf() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixtures().join("rare/checkpoint/updated_rag_multi_hop_dataset.json");
    let text = std::fs::read_to_string(&src).unwrap();
    let records = tmp.path().join("updated_rag_multi_hop_dataset.json");
    std::fs::write(&records, text.replace('\n', "\r\n")).unwrap();
    let corpus = tmp.path().join("corpus.jsonl");
    std::fs::write(
        &corpus,
        "{\"id\": \"policy_westgate_chunk_0\", \"text\": \"x\"}\r\n{broken\r\n{\"id\": \"policy_westgate_chunk_1\", \"text\": \"y\"}\r\n",
    )
    .unwrap();
    let data = load_rare(&[records], Some(&corpus)).unwrap();
    let rows: Vec<(&str, &str)> = data
        .bad_rows
        .iter()
        .map(|b| (b.row.as_str(), b.reason.as_str()))
        .collect();
    assert_eq!(rows, [("line 37", "bad_json"), ("line 2", "bad_json")]);
    assert!(data.bad_rows[0].detail.contains("from line 28"));
}

#[test]
fn a_cut_or_corrupt_pickle_is_an_error_never_a_panic() {
    use std::io::Read;
    let gz = std::fs::read(confact_dataset().join("HumC.pkl.gz")).unwrap();
    let mut pickle = Vec::new();
    flate2::read::GzDecoder::new(gz.as_slice())
        .read_to_end(&mut pickle)
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("cut.pkl");
    // Prefixes (every 7th length) of the pickle and of the gzip stream: an error naming the
    // file, or (a prefix that happens to end a value) a load; never a panic.
    for (bytes, what) in [(&pickle, "pickle"), (&gz, "gzip")] {
        for n in (1..bytes.len()).step_by(7) {
            std::fs::write(&path, &bytes[..n]).unwrap();
            if let Err(e) = load_confact(&path) {
                assert!(e.to_string().contains("cut.pkl"), "{what} {n}: {e}");
            }
        }
    }
    // Flipped bytes in the middle: whatever it reads as, it must not panic.
    let mut flipped = pickle.clone();
    for i in (2..flipped.len()).step_by(13) {
        flipped[i] ^= 0x5a;
    }
    std::fs::write(&path, &flipped).unwrap();
    let _ = load_confact(&path);
}
