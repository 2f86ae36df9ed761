//! The `corpus` backend: the user's documents read from each format, a malformed row refused
//! with its file and line, the index rebuilt only when the corpus changes, and hits that become
//! documents with their corpus ids without any fetch.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::*;
use noisebench_core::{Document, Passage, Query, Rows, SearchHit, StageError, TypedStage};
use noisebench_search::backends::corpus::{
    CorpusColumns, CorpusIndex, corpus_url, fingerprint, read_corpus,
};
use noisebench_search::{DocumentsStage, SearchConfig, SearchStage};
use noisebench_web::Web;
use serde_json::json;

/// (id, title, text, published) of the test corpus.
pub(crate) const DOCS: &[(&str, &str, &str, &str)] = &[
    (
        "memo-1",
        "Water treatment memo",
        "Chlorine levels in the city water supply were raised in March after a routine test.",
        "2024-03-02",
    ),
    (
        "memo-2",
        "Bridge inspection",
        "The river bridge passed its inspection; no cracks were found in the main span.",
        "2023-07-15",
    ),
    (
        "memo-3",
        "Budget note",
        "The library budget grew by four percent, funding longer opening hours on weekends.",
        "2024-01-20",
    ),
    (
        "memo-4",
        "Water rumours",
        "A post claims the water supply is unsafe to drink; the utility says the tests show it is safe.",
        "2024-04-11",
    ),
];

pub(crate) fn write_jsonl(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("docs.jsonl");
    let lines: Vec<String> = DOCS
        .iter()
        .map(|(id, title, text, date)| {
            json!({"id": id, "title": title, "text": text, "published": date, "extra": 1})
                .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn write_csv(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("docs.csv");
    let mut w = csv::Writer::from_path(&path).unwrap();
    w.write_record(["doc_id", "headline", "body", "date"])
        .unwrap();
    for (id, title, text, date) in DOCS {
        w.write_record([id, title, text, date]).unwrap();
    }
    w.flush().unwrap();
    path
}

/// `rows` as a Parquet file (zstd, every column an optional string).
fn write_parquet(path: &Path, rows: &[[Option<&str>; 4]]) {
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let schema = parse_message_type(
        "message doc { optional binary id (STRING); optional binary title (STRING); \
         optional binary text (STRING); optional binary published (STRING); }",
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).unwrap();
    let mut group = writer.next_row_group().unwrap();
    let mut column = 0;
    while let Some(mut col) = group.next_column().unwrap() {
        let values: Vec<Option<&str>> = rows.iter().map(|r| r[column]).collect();
        let present: Vec<ByteArray> = values
            .iter()
            .flatten()
            .map(|v| ByteArray::from(*v))
            .collect();
        let levels: Vec<i16> = values.iter().map(|v| i16::from(v.is_some())).collect();
        col.typed::<ByteArrayType>()
            .write_batch(&present, Some(&levels), None)
            .unwrap();
        col.close().unwrap();
        column += 1;
    }
    group.close().unwrap();
    writer.close().unwrap();
}

fn write_folder(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("docs");
    std::fs::create_dir_all(root.join("notes")).unwrap();
    let (_, t1, x1, _) = DOCS[0];
    std::fs::write(
        root.join("memo-1.html"),
        format!(
            "<html><head><title>{t1}</title></head><body><nav>Home | About</nav><article><h1>{t1}</h1>\
             <p>{x1}</p><p>The change follows the state's guidance and was announced to residents \
             by letter, with a phone line for questions about taste and smell.</p></article>\
             <footer>Copyright</footer></body></html>"
        ),
    )
    .unwrap();
    let (_, t2, x2, _) = DOCS[1];
    std::fs::write(root.join("memo-2.md"), format!("# {t2}\n\n{x2}\n")).unwrap();
    let (_, _, x3, _) = DOCS[2];
    std::fs::write(root.join("notes/memo-3.txt"), format!("{x3}\n")).unwrap();
    // Not a document: skipped.
    std::fs::write(root.join("logo.png"), [0u8, 1, 2]).unwrap();
    std::fs::write(root.join(".hidden.txt"), "hidden").unwrap();
    root
}

#[test]
fn each_format_reads_the_same_documents() {
    let dir = tempfile::tempdir().unwrap();
    let from_jsonl = read_corpus(&write_jsonl(dir.path()), &CorpusColumns::default()).unwrap();
    let columns = CorpusColumns {
        id: "doc_id".into(),
        text: "body".into(),
        title: "headline".into(),
        published: "date".into(),
    };
    let from_csv = read_corpus(&write_csv(dir.path()), &columns).unwrap();
    assert_eq!(from_jsonl, from_csv);
    let parquet = dir.path().join("docs.parquet");
    let rows: Vec<[Option<&str>; 4]> = DOCS
        .iter()
        .map(|(id, title, text, date)| [Some(*id), Some(*title), Some(*text), Some(*date)])
        .collect();
    write_parquet(&parquet, &rows);
    let from_parquet = read_corpus(&parquet, &CorpusColumns::default()).unwrap();
    assert_eq!(from_jsonl, from_parquet);
    let ids: Vec<&str> = from_jsonl.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["memo-1", "memo-2", "memo-3", "memo-4"]);
    for (doc, (_, title, text, date)) in from_jsonl.iter().zip(DOCS) {
        assert_eq!(
            (
                doc.title.as_deref(),
                doc.text.as_str(),
                doc.published.as_deref()
            ),
            (Some(*title), *text, Some(*date))
        );
    }

    let folder = read_corpus(&write_folder(dir.path()), &CorpusColumns::default()).unwrap();
    let got: Vec<(&str, Option<&str>)> = folder
        .iter()
        .map(|d| (d.id.as_str(), d.title.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("memo-1.html", Some(DOCS[0].1)),
            ("memo-2.md", Some(DOCS[1].1)),
            ("notes/memo-3.txt", None)
        ]
    );
    // HTML through the readability extractor: the article's text, not the page's chrome.
    assert!(folder[0].text.contains(DOCS[0].2), "{}", folder[0].text);
    assert!(!folder[0].text.contains("Copyright"), "{}", folder[0].text);
    assert!(folder[1].text.contains(DOCS[1].2));
    assert_eq!(folder[2].text, DOCS[2].2);
}

/// The error reading `content` as the corpus file `name`.
fn error_of(name: &str, content: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    let e = read_corpus(&path, &CorpusColumns::default())
        .expect_err("a malformed corpus must not read")
        .to_string();
    assert!(e.contains(&path.display().to_string()), "{e}");
    e
}

#[test]
fn a_malformed_row_is_an_error_naming_file_and_line() {
    let good = r#"{"id": "a", "text": "one"}"#;
    let e = error_of(
        "c.jsonl",
        &format!("{good}\n\n{{\"id\": \"b\", \"text\": \n"),
    );
    assert!(e.contains("line 3: not valid JSON"), "{e}");
    let e = error_of("c.jsonl", &format!("{good}\n[1, 2]\n"));
    assert!(e.contains("line 2: not a JSON object"), "{e}");
    let e = error_of("c.jsonl", &format!("{good}\n{{\"id\": \"b\"}}\n"));
    assert!(e.contains("line 2: no `text`"), "{e}");
    let e = error_of("c.jsonl", &format!("{good}\n{{\"text\": \"two\"}}\n"));
    assert!(e.contains("line 2: no `id`"), "{e}");
    let e = error_of("c.jsonl", &format!("{good}\n{good}\n"));
    assert!(
        e.contains("line 2: the id `a` is already the id of line 1"),
        "{e}"
    );
    // Integer ids are ids too.
    let e = error_of(
        "c.jsonl",
        "{\"id\": 7, \"text\": \"x\"}\n{\"id\": \"7\", \"text\": \"y\"}\n",
    );
    assert!(e.contains("line 2: the id `7`"), "{e}");
    let e = error_of("c.csv", "id,text\na,one\r\n\r\nb,two,three\n");
    assert!(e.contains("line 4: 3 fields where the header has 2"), "{e}");
    let e = error_of("c.csv", "id,text\na,one\nb,\n");
    assert!(e.contains("line 3: no `text`"), "{e}");
    let e = error_of("c.parquet", "id,text\n");
    assert!(e.contains("not a Parquet file"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.parquet");
    write_parquet(
        &path,
        &[
            [Some("a"), None, Some("one"), None],
            [Some("b"), Some("Title"), None, Some("2024-01-01")],
        ],
    );
    let e = read_corpus(&path, &CorpusColumns::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "{}, line 2: no `text` (the document's text) or it is empty",
            path.display()
        )
    );
    let e = error_of("c.xml", "<docs/>");
    assert!(e.contains("a corpus is a folder or a"), "{e}");
}

#[test]
fn the_index_is_rebuilt_only_when_the_corpus_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_jsonl(dir.path());
    let index_root = dir.path().join("index");
    let cols = CorpusColumns::default();
    let ids = |i: &CorpusIndex, q: &str| -> Vec<String> {
        i.search(q, 10, 2.0, None, None)
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect()
    };
    let first = CorpusIndex::open_or_build(&path, &cols, &index_root).unwrap();
    assert!(first.built);
    assert_eq!(first.documents, 4);
    assert_eq!(ids(&first, "water supply safe"), ["memo-4", "memo-1"]);
    let fp = first.fingerprint.clone();
    drop(first);

    // Same bytes written again: same fingerprint, reused.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let again = CorpusIndex::open_or_build(&path, &cols, &index_root).unwrap();
    assert!(!again.built);
    assert_eq!(again.fingerprint, fp);
    assert_eq!(ids(&again, "water supply safe"), ["memo-4", "memo-1"]);
    drop(again);

    // A document added: a new fingerprint, rebuilt, and the new document found.
    let mut grown = bytes.clone();
    grown.extend_from_slice(
        json!({"id": "memo-5", "text": "Boil-water advice was lifted; the water supply is safe."})
            .to_string()
            .as_bytes(),
    );
    std::fs::write(&path, &grown).unwrap();
    let grown_index = CorpusIndex::open_or_build(&path, &cols, &index_root).unwrap();
    assert!(grown_index.built);
    assert_ne!(grown_index.fingerprint, fp);
    assert_eq!(grown_index.documents, 5);
    assert!(ids(&grown_index, "boil water advice").starts_with(&["memo-5".to_string()]));
    drop(grown_index);

    // Another column mapping reads the same bytes otherwise: another index.
    let other = CorpusColumns {
        title: "none".into(),
        ..CorpusColumns::default()
    };
    assert_ne!(
        fingerprint(&path, &other).unwrap(),
        fingerprint(&path, &cols).unwrap()
    );
    let unmapped = CorpusIndex::open_or_build(&path, &other, &index_root).unwrap();
    assert!(unmapped.built);

    // A folder's fingerprint follows its files' names and bytes.
    let folder = write_folder(dir.path());
    let before = fingerprint(&folder, &cols).unwrap();
    assert_eq!(fingerprint(&folder, &cols).unwrap(), before);
    std::fs::write(folder.join("logo.png"), [9u8]).unwrap();
    assert_eq!(
        fingerprint(&folder, &cols).unwrap(),
        before,
        "not a document"
    );
    std::fs::rename(folder.join("memo-2.md"), folder.join("memo-2b.md")).unwrap();
    assert_ne!(fingerprint(&folder, &cols).unwrap(), before);
}

pub(crate) fn query(id: &str, claim_id: &str, text: &str) -> Query {
    Query {
        id: id.into(),
        claim_id: claim_id.into(),
        kind: "keywords".into(),
        text: text.into(),
        ..Query::default()
    }
}

pub(crate) fn replay_web() -> Arc<Web> {
    Arc::new(
        Web::from_value(
            &json!({"mode": "replay", "replay_fixtures": "fixtures/web"}),
            &root(),
        )
        .unwrap(),
    )
}

#[test]
fn corpus_hits_become_documents_with_their_ids_and_no_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_jsonl(dir.path());
    let queries = vec![
        query("q1", "cl_water", "water supply unsafe to drink"),
        query("q2", "cl_bridge", "bridge cracks inspection"),
        query("q3", "cl_none", "volcano eruption"),
    ];
    let web = replay_web();
    let config = json!({
        "top_k": 2,
        "date_from": "2024-01-01",
        "backends": [{"type": "corpus", "path": path, "name": "city-memos"}]
    });
    let sctx = ctx(&dir.path().join("search"), "search");
    let mut out = run(
        &SearchStage::new(web.clone()),
        config.clone(),
        inputs(vec![("queries", Rows::Queries(queries.clone()))]),
        &sctx,
    );
    let hits: Vec<SearchHit> = table(&mut out, "search_hits");
    let got: Vec<(&str, i64, Option<&str>, &str)> = hits
        .iter()
        .map(|h| {
            (
                h.query_id.as_str(),
                h.rank,
                h.corpus_id.as_deref(),
                h.url.as_str(),
            )
        })
        .collect();
    // The bridge memo is from 2023, outside the window: q2 finds nothing; so does q3.
    assert_eq!(
        got,
        [
            ("q1", 1, Some("memo-4"), "corpus://city-memos/memo-4"),
            ("q1", 2, Some("memo-1"), "corpus://city-memos/memo-1"),
        ]
    );
    assert!(hits.iter().all(|h| h.backend == "corpus"));
    assert_eq!(hits[0].text.as_deref(), Some(DOCS[3].2));
    assert_eq!(hits[0].title.as_deref(), Some(DOCS[3].1));
    assert_eq!(hits[0].published.as_deref(), Some("2024-04-11"));
    assert_eq!(
        drops(&out),
        [
            ("q2:corpus".to_string(), "no_results".to_string()),
            ("q3:corpus".to_string(), "no_results".to_string())
        ]
    );
    // The index was kept under the stage's folder, and a second run reuses it.
    let index_dir = sctx.stage_dir.join("corpus-index");
    assert_eq!(std::fs::read_dir(&index_dir).unwrap().count(), 1);

    // documents: made from the hits' text; a fetch would fail (no recording of these
    // addresses), so no drop means nothing was fetched.
    let dctx = ctx(&dir.path().join("documents"), "documents");
    let mut out = run(
        &DocumentsStage::new(web),
        json!({"source_types": {"city-memos": "government"}, "passage_words": 8}),
        inputs(vec![
            ("search_hits", Rows::SearchHits(hits)),
            ("queries", Rows::Queries(queries)),
        ]),
        &dctx,
    );
    assert_eq!(drops(&out), Vec::<(String, String)>::new());
    let documents: Vec<Document> = table(&mut out, "documents");
    let got: Vec<(Option<&str>, &str, &str, &str)> = documents
        .iter()
        .map(|d| {
            (
                d.corpus_id.as_deref(),
                d.canonical_url.as_str(),
                d.domain.as_str(),
                d.source_type.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                Some("memo-4"),
                "corpus://city-memos/memo-4",
                "city-memos",
                "government"
            ),
            (
                Some("memo-1"),
                "corpus://city-memos/memo-1",
                "city-memos",
                "government"
            ),
        ]
    );
    assert_eq!(documents[0].text, DOCS[3].2);
    assert_eq!(documents[0].fetched_at, None);
    assert_eq!(documents[0].language.as_deref(), Some("eng"));
    let passages: Vec<Passage> = table(&mut out, "passages");
    assert!(passages.len() > documents.len(), "texts cut at 8 words");
    assert!(
        passages
            .iter()
            .all(|p| p.document_id == documents[0].id || p.document_id == documents[1].id)
    );
}

#[test]
fn a_malformed_corpus_fails_the_search_stage_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("docs.jsonl");
    std::fs::write(
        &path,
        "{\"id\": \"a\", \"text\": \"one\"}\n{\"id\": \"b\"}\n",
    )
    .unwrap();
    let stage = SearchStage::new(replay_web());
    let config: SearchConfig = noisebench_core::parse_config(&json!({
        "backends": [{"type": "corpus", "path": path}]
    }))
    .unwrap();
    // The file exists and has a corpus's extension: the configuration is valid.
    stage.validate(&config, &root()).unwrap();
    let e = stage
        .run(
            &config,
            inputs(vec![(
                "queries",
                Rows::Queries(vec![query("q1", "c1", "one")]),
            )]),
            &ctx(&dir.path().join("search"), "search"),
        )
        .expect_err("a malformed corpus fails the stage");
    assert!(matches!(e, StageError::Other(_)), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains(&format!(
            "backends[0]: {}, line 2: no `text`",
            path.display()
        )),
        "{e}"
    );
    // A name that is no host, or a corpus that does not exist, is a configuration error.
    for (backend, field) in [
        (
            json!({"type": "corpus", "path": path, "name": "My Docs"}),
            "name",
        ),
        (
            json!({"type": "corpus", "path": dir.path().join("nope.jsonl")}),
            "path",
        ),
    ] {
        let config: SearchConfig =
            noisebench_core::parse_config(&json!({ "backends": [backend] })).unwrap();
        let e = stage.validate(&config, &root()).unwrap_err();
        assert_eq!(e.field, format!("backends[0].{field}"), "{e:?}");
    }
    assert_eq!(corpus_url("x", "a b"), "corpus://x/a%20b");
}
