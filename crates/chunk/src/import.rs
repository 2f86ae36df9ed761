//! The `chunks-import` stage: the report track started from chunks the user already has, instead
//! of `reports` and `chunks`.
//!
//! A chunk table is a JSON Lines or Parquet file, one chunk a row: its id, the id of the document
//! it is part of, its text, and optionally a section title and metadata (a JSON object, or a
//! string holding one). Ids are kept as they are, so the triplets, questions and exports that
//! cite chunks cite the user's own ids. Each document becomes one `reports` row (its id the
//! user's document id, its blocks the chunks' texts as paragraphs, its metadata the first
//! chunk's), which is what the later stages read of a report. A row that is not a whole chunk
//! (not an object, no id, document id or text, metadata that is no object, a repeated id) is an
//! error naming the file and the line (a Parquet file: the row, from 1): nothing is silently left
//! out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_core::{
    Block, Chunk, ConfigError, InputSpec, Inputs, OutputSpec, Report, StageContext, StageError,
    StageOutput, StageReport, TableKind, TypedStage,
};
use noisebench_text::TokenCounter;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Configuration of the `chunks-import` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChunksImportConfig {
    /// The chunk table, relative to the root: `.jsonl`/`.ndjson` or `.parquet`, one chunk a row,
    /// a document's chunks in reading order.
    pub path: PathBuf,
    /// Which column (JSON field) holds what.
    #[serde(default)]
    pub columns: ChunkColumns,
    /// The documents' domain (`finance`, `economics`, `policy` or `general`), as `reports`
    /// would give it.
    #[serde(default = "default_domain")]
    pub domain: String,
}

/// The columns of a chunk table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChunkColumns {
    /// The chunk's id (a string or an integer), unique in the table; kept as the chunk's id.
    #[serde(default = "default_id")]
    pub id: String,
    /// The id of the document the chunk is part of; kept as its report's id.
    #[serde(default = "default_document_id")]
    pub document_id: String,
    /// The chunk's text (required, not empty).
    #[serde(default = "default_text")]
    pub text: String,
    /// The chunk's section title, if the column exists (optional).
    #[serde(default = "default_section")]
    pub section: String,
    /// The chunk's metadata, if the column exists (optional): a JSON object (or a string holding
    /// one) whose values become strings.
    #[serde(default = "default_metadata")]
    pub metadata: String,
}

impl Default for ChunkColumns {
    fn default() -> Self {
        Self {
            id: default_id(),
            document_id: default_document_id(),
            text: default_text(),
            section: default_section(),
            metadata: default_metadata(),
        }
    }
}

fn default_domain() -> String {
    "general".into()
}
fn default_id() -> String {
    "id".into()
}
fn default_document_id() -> String {
    "document_id".into()
}
fn default_text() -> String {
    "text".into()
}
fn default_section() -> String {
    "section".into()
}
fn default_metadata() -> String {
    "metadata".into()
}

/// The domains a report may have (as the `reports` stage's presets).
const DOMAINS: &[&str] = &["finance", "economics", "policy", "general"];

/// Why a chunk table could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    /// A row (a JSON Lines line, a Parquet row counted from 1) that is not a whole chunk.
    #[error("{path}, line {line}: {message}")]
    Row {
        path: PathBuf,
        line: u64,
        message: String,
    },
}

fn file_err(path: &Path, message: impl Into<String>) -> ImportError {
    ImportError::File {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// One chunk as the user gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedChunk {
    pub id: String,
    pub document_id: String,
    pub text: String,
    pub section: Option<String>,
    pub metadata: BTreeMap<String, String>,
}

type Object = serde_json::Map<String, Value>;

/// Every row of a JSON Lines or Parquet file as a JSON object, with its line (row) number.
fn read_rows(path: &Path) -> Result<Vec<(u64, Object)>, ImportError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("jsonl" | "ndjson") => {
            let text = std::fs::read_to_string(path).map_err(|e| file_err(path, e.to_string()))?;
            let mut rows = Vec::new();
            for (i, line) in text
                .strip_prefix('\u{feff}')
                .unwrap_or(&text)
                .lines()
                .enumerate()
            {
                if line.trim().is_empty() {
                    continue;
                }
                let line_no = i as u64 + 1;
                let row_err = |message: String| ImportError::Row {
                    path: path.to_path_buf(),
                    line: line_no,
                    message,
                };
                match serde_json::from_str::<Value>(line) {
                    Ok(Value::Object(o)) => rows.push((line_no, o)),
                    Ok(_) => return Err(row_err("not a JSON object".into())),
                    Err(e) => return Err(row_err(format!("not valid JSON: {e}"))),
                }
            }
            Ok(rows)
        }
        Some("parquet") => {
            use parquet::file::reader::SerializedFileReader;
            let file = std::fs::File::open(path).map_err(|e| file_err(path, e.to_string()))?;
            let reader = SerializedFileReader::new(file)
                .map_err(|e| file_err(path, format!("not a Parquet file: {e}")))?;
            let mut rows = Vec::new();
            for (i, row) in reader.into_iter().enumerate() {
                let line = i as u64 + 1;
                let row = row.map_err(|e| ImportError::Row {
                    path: path.to_path_buf(),
                    line,
                    message: format!("unreadable row: {e}"),
                })?;
                match row.to_json_value() {
                    Value::Object(o) => rows.push((line, o)),
                    _ => {
                        return Err(ImportError::Row {
                            path: path.to_path_buf(),
                            line,
                            message: "not a record".into(),
                        });
                    }
                }
            }
            Ok(rows)
        }
        _ => Err(file_err(
            path,
            "a chunk table is a .jsonl, .ndjson or .parquet file",
        )),
    }
}

/// A value as text: a string as is, a number as written; null or absent: `None`.
fn text_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Null => None,
        Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        other => Some(other.to_string()),
    }
}

fn to_chunk(row: &Object, columns: &ChunkColumns) -> Result<ImportedChunk, String> {
    let need = |name: &str, what: &str| {
        text_of(row.get(name)).ok_or_else(|| format!("no `{name}` ({what})"))
    };
    let id = need(&columns.id, "the chunk's id")?;
    let document_id = need(&columns.document_id, "the id of its document")?;
    let text = need(&columns.text, "the chunk's text, not empty")?;
    let metadata = match row.get(&columns.metadata) {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(o)) => metadata_of(o),
        Some(Value::String(s)) if s.trim().is_empty() => BTreeMap::new(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(o)) => metadata_of(&o),
            _ => {
                return Err(format!(
                    "`{}` is a string that holds no JSON object",
                    columns.metadata
                ));
            }
        },
        Some(_) => return Err(format!("`{}` is not a JSON object", columns.metadata)),
    };
    Ok(ImportedChunk {
        id,
        document_id,
        text,
        section: text_of(row.get(&columns.section)),
        metadata,
    })
}

fn metadata_of(o: &Object) -> BTreeMap<String, String> {
    o.iter()
        .filter_map(|(k, v)| text_of(Some(v)).map(|t| (k.clone(), t)))
        .collect()
}

/// Every chunk of the table at `path`, in file order.
pub fn read_chunk_table(
    path: &Path,
    columns: &ChunkColumns,
) -> Result<Vec<ImportedChunk>, ImportError> {
    let mut chunks = Vec::new();
    let mut first_line: BTreeMap<String, u64> = BTreeMap::new();
    for (line, row) in read_rows(path)? {
        let row_err = |message: String| ImportError::Row {
            path: path.to_path_buf(),
            line,
            message,
        };
        let chunk = to_chunk(&row, columns).map_err(row_err)?;
        if let Some(first) = first_line.insert(chunk.id.clone(), line) {
            return Err(row_err(format!(
                "the id `{}` is already the id of line {first}",
                chunk.id
            )));
        }
        chunks.push(chunk);
    }
    if chunks.is_empty() {
        return Err(file_err(path, "the table holds no chunk"));
    }
    Ok(chunks)
}

/// The `chunks` and `reports` rows of imported chunks: each chunk keeps its id and is numbered
/// within its document in file order; each document is one report of the chunks' texts.
pub fn import_chunks(
    imported: Vec<ImportedChunk>,
    domain: &str,
    source_path: &str,
) -> (Vec<Chunk>, Vec<Report>) {
    let counter = TokenCounter::new();
    let mut reports: Vec<Report> = Vec::new();
    let mut report_of: BTreeMap<String, usize> = BTreeMap::new();
    let mut chunks = Vec::with_capacity(imported.len());
    for c in imported {
        let r = *report_of.entry(c.document_id.clone()).or_insert_with(|| {
            reports.push(Report {
                id: c.document_id.clone(),
                domain: domain.to_string(),
                format: "chunks".into(),
                source_path: source_path.to_string(),
                title: None,
                metadata: c.metadata.clone(),
                blocks: Vec::new(),
            });
            reports.len() - 1
        });
        let report = &mut reports[r];
        let index = report.blocks.len() as i64;
        report.blocks.push(Block::Paragraph {
            text: c.text.clone(),
            page: None,
        });
        chunks.push(Chunk {
            id: c.id,
            report_id: c.document_id,
            index,
            token_count: counter.count(&c.text) as i64,
            contains_table: false,
            oversize_table: false,
            section: c.section,
            page: None,
            metadata: c.metadata,
            text: c.text,
        });
    }
    (chunks, reports)
}

/// The `chunks-import` stage.
#[derive(Debug, Default, Clone, Copy)]
pub struct ChunksImportStage;

fn resolve(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

impl TypedStage for ChunksImportStage {
    type Config = ChunksImportConfig;
    const KIND: &'static str = "chunks-import";
    const VERSION: u32 = 1;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        Vec::new()
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec::new("chunks", TableKind::Chunks),
            OutputSpec::new("reports", TableKind::Reports),
        ]
    }

    fn validate(&self, c: &ChunksImportConfig, root: &Path) -> Result<(), ConfigError> {
        if !DOMAINS.contains(&c.domain.as_str()) {
            return Err(ConfigError::new(
                "domain",
                format!("`{}` is not one of {}", c.domain, DOMAINS.join(", ")),
            ));
        }
        let path = resolve(root, &c.path);
        if !path.is_file() {
            return Err(ConfigError::new(
                "path",
                format!("{} does not exist", c.path.display()),
            ));
        }
        Ok(())
    }

    fn external_files(&self, c: &ChunksImportConfig, root: &Path) -> Vec<PathBuf> {
        vec![resolve(root, &c.path)]
    }

    fn run(
        &self,
        c: &ChunksImportConfig,
        _inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.validate(c, &ctx.root)?;
        let path = ctx.resolve(&c.path);
        let imported =
            read_chunk_table(&path, &c.columns).map_err(|e| StageError::Other(e.to_string()))?;
        let (chunks, reports) = import_chunks(imported, &c.domain, &c.path.to_string_lossy());
        tracing::info!(
            chunks = chunks.len(),
            documents = reports.len(),
            "chunks imported"
        );
        let report = StageReport {
            items_in: chunks.len() as u64,
            items_out: chunks.len() as u64,
            drops: Vec::new(),
        };
        Ok(StageOutput::new(report)
            .with_table("chunks", chunks)
            .with_table("reports", reports))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(v: Value) -> Object {
        match v {
            Value::Object(o) => o,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_row_needs_id_document_and_text() {
        let cols = ChunkColumns::default();
        let ok = to_chunk(
            &row(
                serde_json::json!({"id": 3, "document_id": "d", "text": " x ",
                "metadata": "{\"year\": 2024, \"n\": null}"}),
            ),
            &cols,
        )
        .unwrap();
        assert_eq!((ok.id.as_str(), ok.text.as_str()), ("3", "x"));
        assert_eq!(ok.metadata.get("year").map(String::as_str), Some("2024"));
        assert_eq!(ok.metadata.len(), 1);
        let e = to_chunk(&row(serde_json::json!({"id": "a", "text": "x"})), &cols).unwrap_err();
        assert!(e.contains("`document_id`"), "{e}");
        let e = to_chunk(
            &row(serde_json::json!({"id": "a", "document_id": "d", "text": "x", "metadata": [1]})),
            &cols,
        )
        .unwrap_err();
        assert!(e.contains("not a JSON object"), "{e}");
    }

    #[test]
    fn chunks_are_numbered_within_their_document() {
        let c = |id: &str, doc: &str| ImportedChunk {
            id: id.into(),
            document_id: doc.into(),
            text: format!("text of {id}"),
            section: None,
            metadata: BTreeMap::new(),
        };
        let (chunks, reports) = import_chunks(
            vec![c("a1", "A"), c("b1", "B"), c("a2", "A")],
            "general",
            "x.jsonl",
        );
        let got: Vec<(&str, &str, i64)> = chunks
            .iter()
            .map(|c| (c.id.as_str(), c.report_id.as_str(), c.index))
            .collect();
        assert_eq!(got, [("a1", "A", 0), ("b1", "B", 0), ("a2", "A", 1)]);
        assert_eq!(reports.len(), 2);
        assert_eq!(reports[0].blocks.len(), 2);
        let counter = TokenCounter::new();
        assert!(
            chunks
                .iter()
                .all(|c| c.token_count == counter.count(&c.text) as i64 && c.token_count > 0)
        );
    }
}
