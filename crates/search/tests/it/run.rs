//! The `run` backend: the user's retriever's run (TREC or Parquet) over the user's corpus
//! chooses each query's documents; ties, missing queries and unknown doc ids are counted with
//! their reasons, and a malformed line is an error naming file and line.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use noisebench_core::{Document, Query, Rows, SearchHit};
use noisebench_search::backends::run::read_run;
use noisebench_search::{DocumentsStage, SearchStage};
use noisebench_web::Web;
use serde_json::json;

/// The corpus the run names: four documents as JSON Lines.
fn write_corpus(dir: &Path) {
    let docs = [
        (
            "memo-1",
            "Chlorine levels in the city water supply were raised in March.",
        ),
        (
            "memo-2",
            "The river bridge passed its inspection; no cracks were found.",
        ),
        (
            "memo-3",
            "The library budget grew by four percent this year.",
        ),
        (
            "memo-4",
            "A post claims the water is unsafe; the utility says it is safe.",
        ),
    ];
    let lines: Vec<String> = docs
        .iter()
        .map(|(id, text)| json!({"id": id, "text": text}).to_string())
        .collect();
    std::fs::write(dir.join("docs.jsonl"), lines.join("\n") + "\n").unwrap();
}

/// q1's rows: memo-1 and memo-2 tie at rank 2 (memo-1 scores higher), memo-9 is no corpus
/// document, memo-4 is listed twice; q2 has no row; `other` names no query of the table.
const RUN: &str = "\
q1 Q0 memo-4 1 12.5 mine
q1 Q0 memo-2 2 11.0 mine

q1 Q0 memo-1 2 11.5 mine
q1 Q0 memo-9 3 10.0 mine
q1 Q0 memo-4 4 9.0 mine
q1 Q0 memo-3 5 8.0 mine
other Q0 memo-3 1 1.0 mine
";

/// The same rows as Parquet (query_id, doc_id, rank, score), blank line left out.
fn write_parquet_run(path: &Path) {
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let rows: Vec<Vec<&str>> = RUN
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    let schema = parse_message_type(
        "message run { required binary query_id (STRING); required binary doc_id (STRING); \
         required int64 rank; required double score; }",
    )
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), props).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut column = 0;
    while let Some(mut col) = group.next_column().unwrap() {
        match column {
            0 | 1 => {
                let at = if column == 0 { 0 } else { 2 };
                let values: Vec<ByteArray> = rows.iter().map(|r| ByteArray::from(r[at])).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&values, None, None)
                    .unwrap();
            }
            2 => {
                let values: Vec<i64> = rows.iter().map(|r| r[3].parse().unwrap()).collect();
                col.typed::<Int64Type>()
                    .write_batch(&values, None, None)
                    .unwrap();
            }
            _ => {
                let values: Vec<f64> = rows.iter().map(|r| r[4].parse().unwrap()).collect();
                col.typed::<DoubleType>()
                    .write_batch(&values, None, None)
                    .unwrap();
            }
        }
        col.close().unwrap();
        column += 1;
    }
    group.close().unwrap();
    writer.close().unwrap();
}

fn query(id: &str, text: &str) -> Query {
    Query {
        id: id.into(),
        claim_id: format!("cl_{id}"),
        kind: "keywords".into(),
        text: text.into(),
        ..Query::default()
    }
}

fn replay_web() -> Arc<Web> {
    Arc::new(
        Web::from_value(
            &json!({"mode": "replay", "replay_fixtures": "fixtures/web"}),
            &root(),
        )
        .unwrap(),
    )
}

/// The search stage over `run`: (query, rank, corpus id) of the hits, and every drop.
fn search(dir: &Path, run: &str) -> (Vec<SearchHit>, Vec<(String, String)>, usize) {
    let queries = vec![query("q1", "water safe"), query("q2", "bridge")];
    let out = run_search(dir, run, queries);
    let failures = out.report.drops.iter().filter(|d| !d.dropped).count();
    let drops = drops(&out);
    let mut out = out;
    (table(&mut out, "search_hits"), drops, failures)
}

fn run_search(dir: &Path, run: &str, queries: Vec<Query>) -> noisebench_core::StageOutput {
    let config = json!({
        "top_k": 10,
        "backends": [{"type": "run", "path": dir.join(run), "corpus": dir.join("docs.jsonl"), "name": "memos"}]
    });
    common::run(
        &SearchStage::new(replay_web()),
        config,
        inputs(vec![("queries", Rows::Queries(queries))]),
        &ctx(&dir.join("search"), "search"),
    )
}

#[test]
fn a_run_chooses_the_documents_with_every_loss_counted() {
    let dir = tempfile::tempdir().unwrap();
    write_corpus(dir.path());
    std::fs::write(dir.path().join("mine.run"), RUN).unwrap();
    write_parquet_run(&dir.path().join("mine.parquet"));

    let (hits, drops, failures) = search(dir.path(), "mine.run");
    let got: Vec<(&str, i64, Option<&str>)> = hits
        .iter()
        .map(|h| (h.query_id.as_str(), h.rank, h.corpus_id.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("q1", 1, Some("memo-4")),
            ("q1", 2, Some("memo-1")),
            ("q1", 3, Some("memo-2")),
            ("q1", 4, Some("memo-3")),
        ]
    );
    assert!(hits.iter().all(|h| h.backend == "run" && h.text.is_some()));
    assert_eq!(hits[0].url, "corpus://memos/memo-4");
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        drops,
        [
            s("q1:run:memo-2", "tied_rank"),
            s("q1:run:memo-4", "duplicate_doc"),
            s("q1:run:memo-9", "unknown_doc_id"),
            s("q2:run", "not_in_run"),
        ]
    );
    // The tie is kept (a failure that cost nothing); the rest are dropped items.
    assert_eq!(failures, 1);

    // The Parquet run gives the same hits and the same losses.
    let (from_parquet, parquet_drops, _) = search(dir.path(), "mine.parquet");
    assert_eq!(from_parquet, hits);
    assert_eq!(parquet_drops, drops);

    // The hits become documents without a fetch, with their corpus ids.
    let mut out = common::run(
        &DocumentsStage::new(replay_web()),
        json!({}),
        inputs(vec![("search_hits", Rows::SearchHits(hits))]),
        &ctx(&dir.path().join("documents"), "documents"),
    );
    assert!(out.report.drops.is_empty());
    let documents: Vec<Document> = table(&mut out, "documents");
    let ids: Vec<Option<&str>> = documents.iter().map(|d| d.corpus_id.as_deref()).collect();
    assert_eq!(
        ids,
        [
            Some("memo-4"),
            Some("memo-1"),
            Some("memo-2"),
            Some("memo-3")
        ]
    );
}

#[test]
fn a_malformed_run_line_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "q1 Q0 memo-1 1 2.0 mine\nq1 Q0 memo-2 2 1.0\n",
            "line 2: 5 fields where a TREC run line has 6 (qid Q0 docid rank score tag)",
        ),
        (
            "q1 Q0 memo-1 first 2.0 mine\n",
            "line 1: rank `first` is not an integer",
        ),
        (
            "\nq1 Q0 memo-1 1 NaN mine\n",
            "line 2: score `NaN` is not a number",
        ),
    ];
    for (content, expected) in cases {
        let path = dir.path().join("bad.run");
        std::fs::write(&path, content).unwrap();
        let e = read_run(&path).unwrap_err().to_string();
        assert_eq!(e, format!("{}, {expected}", path.display()));
    }
    // A good run reads whole, in file order, blank lines skipped.
    let path = dir.path().join("good.run");
    std::fs::write(&path, RUN).unwrap();
    let rows = read_run(&path).unwrap();
    assert_eq!(rows.len(), 7);
    assert_eq!((rows[2].doc_id.as_str(), rows[2].line), ("memo-1", 4));
}
