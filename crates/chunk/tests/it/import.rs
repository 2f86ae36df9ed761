//! `chunks-import`: a user's chunk table (JSON Lines, Parquet) read with its ids kept, and a
//! malformed row refused with its file and line.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use noisebench_chunk::{ChunkColumns, ChunksImportConfig, ChunksImportStage, read_chunk_table};
use noisebench_core::{
    Chunk, Inputs, NoProgress, Report, StageContext, StageError, TableRow, TypedStage,
};
use serde_json::json;

/// (id, document id, text, metadata) of the test table.
const ROWS: &[(&str, &str, &str, &str)] = &[
    (
        "kb-17#0",
        "kb-17",
        "Acme Water raised chlorine levels in March after a routine test.",
        r#"{"year": "2024", "team": "ops"}"#,
    ),
    (
        "kb-17#1",
        "kb-17",
        "The utility says the water supply is safe to drink.",
        r#"{"year": "2024", "team": "ops"}"#,
    ),
    (
        "kb-09#0",
        "kb-09",
        "The river bridge passed its inspection in 2023.",
        "",
    ),
];

fn write_jsonl(path: &Path) {
    let lines: Vec<String> = ROWS
        .iter()
        .map(|(id, doc, text, meta)| {
            let meta: serde_json::Value = if meta.is_empty() {
                serde_json::Value::Null
            } else {
                serde_json::from_str(meta).unwrap()
            };
            json!({"id": id, "document_id": doc, "text": text, "metadata": meta}).to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// The rows as Parquet: four optional strings, metadata as JSON text.
fn write_parquet(path: &Path, rows: &[[Option<&str>; 4]]) {
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let schema = parse_message_type(
        "message chunk { optional binary id (STRING); optional binary document_id (STRING); \
         optional binary text (STRING); optional binary metadata (STRING); }",
    )
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let props = WriterProperties::builder().build();
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

fn run(dir: &Path, config: serde_json::Value) -> Result<(Vec<Chunk>, Vec<Report>), StageError> {
    let stage = ChunksImportStage;
    let config: ChunksImportConfig = noisebench_core::parse_config(&config).unwrap();
    stage.validate(&config, dir).map_err(StageError::Config)?;
    let ctx = StageContext {
        root: dir.to_path_buf(),
        stage_dir: dir.join("stage"),
        pipeline: "test".into(),
        stage_id: "import".into(),
        progress: Arc::new(NoProgress),
    };
    let mut out = stage.run(&config, Inputs::new(BTreeMap::new()), &ctx)?;
    assert!(out.report.drops.is_empty());
    let chunks = Chunk::from_rows(out.tables.remove("chunks").unwrap()).unwrap();
    let reports = Report::from_rows(out.tables.remove("reports").unwrap()).unwrap();
    assert_eq!(out.report.items_out, chunks.len() as u64);
    Ok((chunks, reports))
}

#[test]
fn jsonl_and_parquet_give_the_same_chunks_with_the_users_ids() {
    let dir = tempfile::tempdir().unwrap();
    write_jsonl(&dir.path().join("chunks.jsonl"));
    let rows: Vec<[Option<&str>; 4]> = ROWS
        .iter()
        .map(|(id, doc, text, meta)| {
            [
                Some(*id),
                Some(*doc),
                Some(*text),
                (!meta.is_empty()).then_some(*meta),
            ]
        })
        .collect();
    write_parquet(&dir.path().join("chunks.parquet"), &rows);

    let (chunks, reports) = run(dir.path(), json!({"path": "chunks.jsonl"})).unwrap();
    let got: Vec<(&str, &str, i64)> = chunks
        .iter()
        .map(|c| (c.id.as_str(), c.report_id.as_str(), c.index))
        .collect();
    assert_eq!(
        got,
        [
            ("kb-17#0", "kb-17", 0),
            ("kb-17#1", "kb-17", 1),
            ("kb-09#0", "kb-09", 0)
        ]
    );
    assert_eq!(chunks[1].text, ROWS[1].2);
    assert_eq!(
        chunks[0].metadata.get("team").map(String::as_str),
        Some("ops")
    );
    assert!(chunks[2].metadata.is_empty());
    assert!(chunks.iter().all(|c| c.token_count > 5));
    let ids: Vec<(&str, usize, &str)> = reports
        .iter()
        .map(|r| (r.id.as_str(), r.blocks.len(), r.domain.as_str()))
        .collect();
    assert_eq!(ids, [("kb-17", 2, "general"), ("kb-09", 1, "general")]);

    let (from_parquet, reports_parquet) = run(
        dir.path(),
        json!({"path": "chunks.parquet", "domain": "policy"}),
    )
    .unwrap();
    assert_eq!(from_parquet, chunks);
    assert!(reports_parquet.iter().all(|r| r.domain == "policy"));
}

/// The error reading `content` as the chunk table `name`.
fn error_of(name: &str, content: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    let e = read_chunk_table(&path, &ChunkColumns::default())
        .expect_err("a malformed table must not read")
        .to_string();
    assert!(e.contains(&path.display().to_string()), "{e}");
    e
}

#[test]
fn a_malformed_row_is_an_error_naming_file_and_line() {
    let good = r#"{"id": "a", "document_id": "d", "text": "one"}"#;
    let e = error_of("c.jsonl", &format!("{good}\n\nnot json\n"));
    assert!(e.contains("line 3: not valid JSON"), "{e}");
    let e = error_of(
        "c.jsonl",
        &format!("{good}\n{{\"id\": \"b\", \"text\": \"x\"}}\n"),
    );
    assert!(e.contains("line 2: no `document_id`"), "{e}");
    let e = error_of("c.jsonl", &format!("{good}\n{good}\n"));
    assert!(
        e.contains("line 2: the id `a` is already the id of line 1"),
        "{e}"
    );
    let e = error_of(
        "c.jsonl",
        r#"{"id": "a", "document_id": "d", "text": "x", "metadata": "year 2024"}"#,
    );
    assert!(
        e.contains("line 1: `metadata` is a string that holds no JSON object"),
        "{e}"
    );
    let e = error_of("c.jsonl", "\n");
    assert!(e.contains("holds no chunk"), "{e}");
    let e = error_of("c.csv", "id,text\n");
    assert!(e.contains("a chunk table is a"), "{e}");
    let e = error_of("c.parquet", "PAR1");
    assert!(e.contains("not a Parquet file"), "{e}");

    let dir = tempfile::tempdir().unwrap();
    write_parquet(
        &dir.path().join("c.parquet"),
        &[
            [Some("a"), Some("d"), Some("one"), None],
            [Some("b"), Some("d"), None, None],
        ],
    );
    let e = run(dir.path(), json!({"path": "c.parquet"}))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "{}, line 2: no `text`",
            dir.path().join("c.parquet").display()
        )),
        "{e}"
    );
    let e = run(dir.path(), json!({"path": "c.parquet", "domain": "sports"})).unwrap_err();
    assert!(e.to_string().contains("sports"), "{e}");
}
