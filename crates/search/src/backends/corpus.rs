//! The `corpus` backend: the user's own documents, searched with BM25 (`noisebench-index`,
//! tantivy) instead of the web, or, with `retrieval = "dense"` or `"hybrid"`, by the LLM layer's
//! embeddings ([`super::dense`]).
//!
//! A corpus is a table of documents (JSON Lines, CSV or Parquet, one document a row: an id, a
//! text, optionally a title and a publication date) or a folder of files (`.html`/`.htm` read
//! through the readability extractor the documents stage uses for web pages, `.md`/`.markdown`
//! and `.txt` as text; a file's id is its path under the folder). Every row must be whole: a
//! row that is not an object, lacks its id or text, or repeats an id is an error naming the file
//! and the line (a Parquet file: the row), so nothing of the corpus is silently left out.
//!
//! The index is built once per corpus content: it lives in
//! `<index_dir>/<first 16 hex of the corpus fingerprint>-<format>/` with a `corpus.sha256`
//! marker written last, and is reused while the fingerprint (sha256 over the column mapping and
//! every file's path and bytes) is unchanged. Hits carry the document's id and whole text
//! ([`RawHit::corpus_id`], [`RawHit::text`]), so the documents stage makes documents of them
//! without fetching anything; their URL is the document's address, `corpus://<name>/<id>`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_index::{Bm25, Doc, IndexError, Location, Query, Spec, TextField};
use noisebench_llm::Llm;
use schemars::JsonSchema;
use serde::Deserialize;
use sha2::{Digest, Sha256};

pub use super::corpus_doc::{CorpusDoc, CorpusError};
use super::dense::{CorpusVectors, ranks_note, rrf};
use super::reddit_dump::{day_bound, file_sha256};
use super::{Backend, Parsed, RawHit, SearchFailure, SearchRequest};
use crate::extract::{extract_html, normalise_date, tidy_text};

const MARKER: &str = "corpus.sha256";
/// Bumped when the schema, the readers or the tokenizer change, so old indexes are rebuilt.
const INDEX_FORMAT: &str = "v1";
/// Characters of a document's text kept as its hit's snippet.
const SNIPPET_CHARS: usize = 300;

/// The `corpus` backend's configuration.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorpusConfig {
    /// The corpus, relative to the root: a `.jsonl`/`.ndjson`, `.csv` or `.parquet` file of
    /// documents, or a folder of `.html`/`.htm`, `.md`/`.markdown` and `.txt` files (read
    /// recursively; other files are skipped; a file's id is its path under the folder).
    pub path: PathBuf,
    /// The corpus's name: the host of its documents' addresses (`corpus://<name>/<id>`) and their
    /// `domain` (so the documents stage's `source_types` can rate it). Lower-case letters,
    /// digits, `-` and `.`.
    #[serde(default = "default_name")]
    pub name: String,
    /// Which column (JSON field) of a table corpus holds what.
    #[serde(default)]
    pub columns: CorpusColumns,
    /// Where indexes are kept; default `<stage dir>/corpus-index`.
    pub index_dir: Option<PathBuf>,
    /// Weight of a title match relative to a text match.
    #[serde(default = "default_title_boost")]
    pub title_boost: f32,
    /// How documents are ranked: `bm25` (the default), `dense` (nearest neighbours of the
    /// query's embedding among the documents', through the LLM layer's embedder,
    /// `llm.embeddings`) or `hybrid` (both lists fused by reciprocal rank fusion:
    /// score(d) = sum over the lists holding d of 1 / (60 + its rank there), ties by doc id).
    #[serde(default)]
    pub retrieval: CorpusRetrieval,
    /// Documents per embedding request when the documents' vectors are made (`dense`,
    /// `hybrid`); they are made once per corpus content and embedder.
    #[serde(default = "default_embed_batch")]
    pub embed_batch: usize,
}

/// How the `corpus` backend ranks documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CorpusRetrieval {
    /// BM25 over title (boosted) and text.
    #[default]
    Bm25,
    /// Cosine nearest neighbours of the query's embedding among the documents' (exact).
    Dense,
    /// BM25 and dense, each its top k, fused by reciprocal rank fusion (k = 60).
    Hybrid,
}

impl CorpusRetrieval {
    /// Whether documents' vectors are needed.
    pub fn needs_embedder(self) -> bool {
        self != CorpusRetrieval::Bm25
    }

    pub fn name(self) -> &'static str {
        match self {
            CorpusRetrieval::Bm25 => "bm25",
            CorpusRetrieval::Dense => "dense",
            CorpusRetrieval::Hybrid => "hybrid",
        }
    }
}

/// The columns of a table corpus.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorpusColumns {
    /// The document's id (a string or an integer), unique in the corpus.
    #[serde(default = "default_id")]
    pub id: String,
    /// The document's text (required, not empty).
    #[serde(default = "default_text")]
    pub text: String,
    /// The document's title, if the column exists (optional).
    #[serde(default = "default_title")]
    pub title: String,
    /// The document's publication date (`YYYY-MM-DD` or RFC 3339), if the column exists
    /// (optional; the search stage's date window applies to it).
    #[serde(default = "default_published")]
    pub published: String,
}

impl Default for CorpusColumns {
    fn default() -> Self {
        Self {
            id: default_id(),
            text: default_text(),
            title: default_title(),
            published: default_published(),
        }
    }
}

pub(crate) fn default_name() -> String {
    "corpus".into()
}
fn default_embed_batch() -> usize {
    64
}
fn default_title_boost() -> f32 {
    2.0
}
fn default_id() -> String {
    "id".into()
}
fn default_text() -> String {
    "text".into()
}
fn default_title() -> String {
    "title".into()
}
fn default_published() -> String {
    "published".into()
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CorpusError + '_ {
    move |source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn file_err(path: &Path, message: impl Into<String>) -> CorpusError {
    CorpusError::File {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// How a corpus is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusFormat {
    Jsonl,
    Csv,
    Parquet,
    Folder,
}

impl CorpusFormat {
    /// The format of `path`: a folder, or a file by its extension.
    pub fn of(path: &Path) -> Result<CorpusFormat, CorpusError> {
        if path.is_dir() {
            return Ok(CorpusFormat::Folder);
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("jsonl" | "ndjson") => Ok(CorpusFormat::Jsonl),
            Some("csv") => Ok(CorpusFormat::Csv),
            Some("parquet") => Ok(CorpusFormat::Parquet),
            _ => Err(file_err(
                path,
                "a corpus is a folder or a .jsonl, .ndjson, .csv or .parquet file",
            )),
        }
    }
}

/// The kind of a file in a folder corpus, by extension; `None`: not a document (skipped).
fn file_kind(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => Some("html"),
        "md" | "markdown" => Some("markdown"),
        "txt" => Some("text"),
        _ => None,
    }
}

/// The files a corpus reads, sorted: the file itself, or the documents of a folder (hidden
/// files and folders skipped).
pub fn corpus_files(path: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    if !path.is_dir() {
        if !path.is_file() {
            return Err(file_err(path, "the corpus does not exist"));
        }
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io_err(&dir))? {
            let entry = entry.map_err(io_err(&dir))?;
            let p = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if p.is_dir() {
                pending.push(p);
            } else if file_kind(&p).is_some() {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// A file's id in a folder corpus: its path under the folder, `/`-separated.
fn relative_id(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// sha256 over the index format, the column mapping and every file's id and bytes: what
/// decides the index.
pub fn fingerprint(path: &Path, columns: &CorpusColumns) -> Result<String, CorpusError> {
    let mut hasher = Sha256::new();
    hasher.update(INDEX_FORMAT.as_bytes());
    hasher.update(
        serde_json::to_string(columns)
            .unwrap_or_default()
            .as_bytes(),
    );
    for file in corpus_files(path)? {
        let sha = file_sha256(&file).map_err(|e| file_err(&file, e.to_string()))?;
        hasher.update(format!("\n{}\t{sha}", relative_id(path, &file)).as_bytes());
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Read every document of the corpus at `path`, in file and row order.
pub fn read_corpus(path: &Path, columns: &CorpusColumns) -> Result<Vec<CorpusDoc>, CorpusError> {
    let rows = match CorpusFormat::of(path)? {
        CorpusFormat::Folder => return read_folder(path),
        CorpusFormat::Jsonl => jsonl_rows(path)?,
        CorpusFormat::Csv => csv_rows(path)?,
        CorpusFormat::Parquet => parquet_rows(path)?,
    };
    let mut docs = Vec::with_capacity(rows.len());
    let mut first_line: BTreeMap<String, u64> = BTreeMap::new();
    for (line, fields) in rows {
        let row_err = |message: String| CorpusError::Row {
            path: path.to_path_buf(),
            line,
            message,
        };
        let doc = to_doc(&fields, columns).map_err(row_err)?;
        if let Some(first) = first_line.insert(doc.id.clone(), line) {
            return Err(row_err(format!(
                "the id `{}` is already the id of line {first}",
                doc.id
            )));
        }
        docs.push(doc);
    }
    Ok(docs)
}

/// A row's fields as text (a JSON string as is, a number as written; null or absent: missing).
pub(crate) type Fields = noisebench_index::run::Fields;

fn to_doc(fields: &Fields, columns: &CorpusColumns) -> Result<CorpusDoc, String> {
    let get = |name: &str| fields.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    let id = get(&columns.id)
        .ok_or_else(|| format!("no `{}` (the document's id)", columns.id))?
        .to_string();
    check_id(&id)?;
    let text = fields
        .get(&columns.text)
        .map(|t| tidy_text(t))
        .filter(|t| !t.is_empty())
        .ok_or_else(|| format!("no `{}` (the document's text) or it is empty", columns.text))?;
    Ok(CorpusDoc {
        id,
        title: get(&columns.title).map(str::to_string),
        text,
        published: get(&columns.published).and_then(normalise_date),
    })
}

fn read_text(path: &Path) -> Result<String, CorpusError> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let text = String::from_utf8(bytes).map_err(|e| file_err(path, format!("not UTF-8: {e}")))?;
    Ok(text
        .strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text))
}

/// JSON Lines: one object a line (blank lines skipped), each with its 1-based line number.
fn jsonl_rows(path: &Path) -> Result<Vec<(u64, Fields)>, CorpusError> {
    let text = read_text(path)?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_no = i as u64 + 1;
        let row_err = |message: String| CorpusError::Row {
            path: path.to_path_buf(),
            line: line_no,
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| row_err(format!("not valid JSON: {e}")))?;
        let object = value
            .as_object()
            .ok_or_else(|| row_err("not a JSON object".into()))?;
        let fields = object
            .iter()
            .filter_map(|(k, v)| {
                let text = match v {
                    serde_json::Value::Null => return None,
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Some((k.clone(), text))
            })
            .collect();
        rows.push((line_no, fields));
    }
    Ok(rows)
}

/// Parquet, row by row, as `noisebench-index` reads a run's (each row numbered from 1 as its
/// "line"; nulls missing).
pub(crate) fn parquet_rows(path: &Path) -> Result<Vec<(u64, Fields)>, CorpusError> {
    Ok(noisebench_index::run::parquet_rows(path)?)
}

/// CSV with a header row; every record must have the header's number of fields.
fn csv_rows(path: &Path) -> Result<Vec<(u64, Fields)>, CorpusError> {
    let text = read_text(path)?;
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| file_err(path, format!("no header row: {e}")))?
        .clone();
    let mut rows = Vec::new();
    for record in reader.records() {
        match record {
            Ok(r) => {
                let line = r.position().map_or(0, |p| record_line(text.as_bytes(), p));
                let fields = headers
                    .iter()
                    .zip(r.iter())
                    .map(|(h, v)| (h.to_string(), v.to_string()))
                    .collect();
                rows.push((line, fields));
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| record_line(text.as_bytes(), p));
                let message = match e.kind() {
                    csv::ErrorKind::UnequalLengths {
                        expected_len, len, ..
                    } => format!("{len} fields where the header has {expected_len}"),
                    _ => e.to_string(),
                };
                return Err(CorpusError::Row {
                    path: path.to_path_buf(),
                    line,
                    message,
                });
            }
        }
    }
    Ok(rows)
}

/// The 1-based line a CSV record starts on. The csv reader positions a record where the previous
/// one ended, before the line breaks it skips, and counts a line only at its `\n`; so step over
/// those bytes, counting each `\n` (as `claims-import` does).
fn record_line(bytes: &[u8], position: &csv::Position) -> u64 {
    let start = usize::try_from(position.byte()).unwrap_or(usize::MAX);
    let skipped = bytes
        .get(start..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| matches!(b, b'\r' | b'\n'))
        .filter(|b| **b == b'\n')
        .count();
    position.line() + skipped as u64
}

/// A folder: each document file is one document, its id its path under the folder.
fn read_folder(root: &Path) -> Result<Vec<CorpusDoc>, CorpusError> {
    let mut docs = Vec::new();
    for file in corpus_files(root)? {
        let id = relative_id(root, &file);
        let raw = read_text(&file)?;
        let doc = match file_kind(&file) {
            Some("html") => {
                let e = extract_html(&raw, &corpus_url("file", &id))
                    .map_err(|e| file_err(&file, e.to_string()))?;
                CorpusDoc {
                    id,
                    title: e.title,
                    text: e.text,
                    published: e.published,
                }
            }
            Some("markdown") => {
                let title = raw
                    .lines()
                    .find_map(|l| l.strip_prefix("# "))
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty());
                CorpusDoc {
                    id,
                    title,
                    text: tidy_text(&raw),
                    published: None,
                }
            }
            _ => CorpusDoc {
                id,
                title: None,
                text: tidy_text(&raw),
                published: None,
            },
        };
        if doc.text.is_empty() {
            return Err(file_err(&file, "the document has no text"));
        }
        docs.push(doc);
    }
    if docs.is_empty() {
        return Err(file_err(
            root,
            "the folder holds no .html, .md or .txt file",
        ));
    }
    Ok(docs)
}

/// A corpus document's address: `corpus://<name>/<id>`, the id percent-encoded as one path
/// segment: every byte but ASCII letters, digits, `-`, `_`, `~` and `.`, so distinct ids give
/// distinct addresses and a URL parser keeps them as they are (the readers refuse an empty id and
/// one of dots alone, which a URL resolves away). Hand-written: `url`'s path-segment encoding
/// leaves `%` alone, so `a b` and `a%20b` would share an address.
pub fn corpus_url(name: &str, id: &str) -> String {
    let mut encoded = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'~' | b'.') {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("corpus://{name}/{encoded}")
}

/// Whether `id` can be a document's id: not empty, not dots alone.
fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.bytes().all(|b| b == b'.') {
        return Err(format!("the id `{id}` is no address (empty or dots alone)"));
    }
    Ok(())
}

/// Whether `name` can be a corpus's name (the host of its addresses).
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && !name.starts_with(['-', '.'])
        && url::Url::parse(&format!("corpus://{name}/")).is_ok();
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a corpus name (lower-case letters, digits, `-` and `.`)"
        ))
    }
}

/// The index's collection: titles (boosted) and texts searched and stored; the date stored and
/// kept as a timestamp for date windows.
fn spec() -> Spec {
    Spec {
        text: vec![
            TextField {
                name: "title",
                stored: true,
            },
            TextField {
                name: "text",
                stored: true,
            },
        ],
        stored: vec!["published"],
        time: Some("published_at"),
    }
}

fn index_err(path: &Path) -> impl FnOnce(IndexError) -> CorpusError + '_ {
    move |e| CorpusError::Index {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A searchable index over one corpus.
pub struct CorpusIndex {
    index: Bm25,
    /// The corpus's fingerprint ([`fingerprint`]).
    pub fingerprint: String,
    /// Where the index lives.
    pub dir: PathBuf,
    /// Whether this call built the index (false: reused).
    pub built: bool,
    /// Documents in the index.
    pub documents: u64,
}

/// One ranked document.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusHit {
    pub id: String,
    pub score: f32,
    pub title: Option<String>,
    pub text: String,
    pub published: Option<String>,
}

impl CorpusIndex {
    /// Open the index of the corpus at `path` under `index_root`, building it if there is none
    /// for the corpus's current fingerprint.
    pub fn open_or_build(
        path: &Path,
        columns: &CorpusColumns,
        index_root: &Path,
    ) -> Result<CorpusIndex, CorpusError> {
        let fp = fingerprint(path, columns)?;
        let dir = index_root.join(format!("{}-{INDEX_FORMAT}", &fp[..16]));
        let reuse = std::fs::read_to_string(dir.join(MARKER))
            .map(|m| m.trim() == fp)
            .unwrap_or(false);
        let built = !reuse;
        if built {
            let docs = read_corpus(path, columns)?;
            Self::build(docs, &dir, &fp)?;
        }
        let index = Bm25::open(&dir, &spec()).map_err(index_err(&dir))?;
        let documents = index.len();
        tracing::info!(corpus = %path.display(), index = %dir.display(), built, documents, "corpus index ready");
        Ok(CorpusIndex {
            index,
            fingerprint: fp,
            dir,
            built,
            documents,
        })
    }

    /// Index `docs` into `dir` through a temporary folder renamed into place, the marker
    /// written last, so an interrupted build is never mistaken for a finished one. One indexing
    /// thread keeps document order (and so every ranking tie) the same on every run.
    fn build(docs: Vec<CorpusDoc>, dir: &Path, fp: &str) -> Result<(), CorpusError> {
        let tmp = dir.with_extension("building");
        for d in [&tmp, &dir.to_path_buf()] {
            if d.exists() {
                std::fs::remove_dir_all(d).map_err(io_err(d))?;
            }
        }
        let mut builder = Bm25::create(&spec(), Location::Dir(&tmp)).map_err(index_err(&tmp))?;
        let count = docs.len();
        for d in docs {
            let time = d.published.as_deref().and_then(|p| day_bound(p, false));
            builder
                .add(Doc {
                    id: d.id,
                    text: vec![d.title.unwrap_or_default(), d.text],
                    stored: vec![d.published.unwrap_or_default()],
                    time,
                })
                .map_err(index_err(&tmp))?;
        }
        drop(builder.finish().map_err(index_err(&tmp))?);
        std::fs::write(tmp.join(MARKER), fp).map_err(io_err(&tmp))?;
        std::fs::rename(&tmp, dir).map_err(io_err(dir))?;
        tracing::info!(documents = count, "corpus indexed");
        Ok(())
    }

    /// BM25 over title (boosted) and text; `from`/`to` are inclusive publication bounds (a
    /// document without a date is outside any window). Ranked by score, ties by id.
    pub fn search(
        &self,
        text: &str,
        top_k: usize,
        title_boost: f32,
        from: Option<i64>,
        to: Option<i64>,
    ) -> Result<Vec<CorpusHit>, CorpusError> {
        let boosts = [title_boost, 1.0];
        let query = Query {
            text,
            top_k,
            boosts: &boosts,
            from,
            to,
        };
        let hits = self.index.search(&query).map_err(index_err(&self.dir))?;
        let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Ok(hits
            .into_iter()
            .map(|h| CorpusHit {
                title: non_empty(h.field("title")),
                text: h.field("text").to_string(),
                published: non_empty(h.field("published")),
                score: h.score,
                id: h.id,
            })
            .collect())
    }
}

/// The corpus as a search backend.
pub(crate) struct Corpus {
    index: CorpusIndex,
    name: String,
    title_boost: f32,
    retrieval: CorpusRetrieval,
    dense: Option<Dense>,
}

/// What `dense` and `hybrid` need: the documents' vectors, the embedder for queries, and the
/// documents by id (a dense hit's title, text and date).
pub(crate) struct Dense {
    pub vectors: CorpusVectors,
    pub llm: Llm,
    pub docs: BTreeMap<String, CorpusDoc>,
}

impl Dense {
    /// Read the corpus and open or make its vectors beside `index`.
    pub fn open_or_build(
        path: &Path,
        config: &CorpusConfig,
        index: &CorpusIndex,
        llm: &Llm,
    ) -> Result<Dense, CorpusError> {
        let docs = read_corpus(path, &config.columns)?;
        let vectors = CorpusVectors::open_or_build(
            &docs,
            &index.dir,
            &index.fingerprint,
            llm,
            config.embed_batch,
        )?;
        Ok(Dense {
            vectors,
            llm: llm.clone(),
            docs: docs.into_iter().map(|d| (d.id.clone(), d)).collect(),
        })
    }

    /// The `top_k` documents nearest the query inside the inclusive date window (a window
    /// leaves out undated documents, as BM25's does), best first, ties by id.
    fn search(
        &self,
        text: &str,
        top_k: usize,
        from: Option<i64>,
        to: Option<i64>,
    ) -> Result<Vec<CorpusHit>, SearchFailure> {
        let query = CorpusVectors::embed_query(&self.llm, text).map_err(|e| {
            let reason = e.as_drop_reason();
            SearchFailure {
                code: reason.code().to_string(),
                transient: reason.is_transient(),
                detail: format!("embedding the query: {e}"),
            }
        })?;
        let windowed = from.is_some() || to.is_some();
        // With a window every document is ranked, then those outside it left out.
        let k = if windowed { self.vectors.len() } else { top_k };
        let found = self
            .vectors
            .search(&query, k)
            .map_err(|e| SearchFailure::new("embedding_invalid", e))?;
        let in_window = |d: &CorpusDoc| {
            if !windowed {
                return true;
            }
            let Some(t) = d.published.as_deref().and_then(|p| day_bound(p, false)) else {
                return false;
            };
            from.is_none_or(|f| t >= f) && to.is_none_or(|u| t <= u)
        };
        Ok(found
            .into_iter()
            .filter_map(|(id, score)| {
                let d = self.docs.get(&id)?;
                in_window(d).then(|| CorpusHit {
                    id,
                    score,
                    title: d.title.clone(),
                    text: d.text.clone(),
                    published: d.published.clone(),
                })
            })
            .take(top_k)
            .collect())
    }
}

impl Corpus {
    pub fn new(index: CorpusIndex, config: &CorpusConfig) -> Self {
        Self {
            index,
            name: config.name.clone(),
            title_boost: config.title_boost,
            retrieval: CorpusRetrieval::Bm25,
            dense: None,
        }
    }

    /// Rank with `retrieval` (`dense` or `hybrid`) over `dense`'s vectors.
    pub fn with_dense(self, retrieval: CorpusRetrieval, dense: Dense) -> Self {
        Self {
            retrieval,
            dense: Some(dense),
            ..self
        }
    }

    fn raw_hit(&self, h: CorpusHit, found_by: Option<String>) -> RawHit {
        RawHit {
            url: Some(corpus_url(&self.name, &h.id)),
            snippet: Some(h.text.chars().take(SNIPPET_CHARS).collect()),
            title: h.title,
            published: h.published,
            corpus_id: Some(h.id),
            text: Some(h.text),
            retrieved_by: found_by,
        }
    }
}

impl Backend for Corpus {
    fn name(&self) -> &'static str {
        "corpus"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        if let Some(site) = &req.site
            && site != &self.name
        {
            // Every document of the corpus is on its own "site": nothing of another can match.
            return Ok(Parsed::default());
        }
        let from = req.date_from.as_deref().and_then(|d| day_bound(d, false));
        let to = req.date_to.as_deref().and_then(|d| day_bound(d, true));
        let bm25 = || {
            self.index
                .search(&req.text, req.top_k, self.title_boost, from, to)
                .map_err(|e| SearchFailure::new("index_error", e.to_string()))
        };
        let dense = || match &self.dense {
            Some(d) => d.search(&req.text, req.top_k, from, to),
            // Invariant: `with_dense` is the only way to a non-bm25 retrieval.
            None => Err(SearchFailure::new(
                "no_embedder",
                "the corpus backend has no document vectors",
            )),
        };
        let hits = match self.retrieval {
            CorpusRetrieval::Bm25 => bm25()?.into_iter().map(|h| self.raw_hit(h, None)).collect(),
            CorpusRetrieval::Dense => dense()?
                .into_iter()
                .enumerate()
                .map(|(i, h)| self.raw_hit(h, Some(format!("dense:{}", i + 1))))
                .collect(),
            CorpusRetrieval::Hybrid => {
                let (b, d) = (bm25()?, dense()?);
                let ids = |hits: &[CorpusHit]| -> Vec<String> {
                    hits.iter().map(|h| h.id.clone()).collect()
                };
                let fused = rrf(&[("bm25", ids(&b)), ("dense", ids(&d))], req.top_k);
                let mut by_id: BTreeMap<String, CorpusHit> =
                    d.into_iter().chain(b).map(|h| (h.id.clone(), h)).collect();
                fused
                    .into_iter()
                    .filter_map(|f| {
                        let h = by_id.remove(&f.id)?;
                        Some(self.raw_hit(h, Some(ranks_note(&f.ranks))))
                    })
                    .collect()
            }
        };
        Ok(Parsed::from_hits(hits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Distinct ids, distinct addresses; each parses as a URL unchanged, on the corpus's
        /// host, one path segment.
        #[test]
        fn addresses_are_distinct_urls(a in "\\PC{1,12}", b in "[a%. /]{1,6}") {
            proptest::prop_assume!(check_id(&a).is_ok() && check_id(&b).is_ok());
            let (ua, ub) = (corpus_url("docs", &a), corpus_url("docs", &b));
            proptest::prop_assert_eq!(ua == ub, a == b);
            for u in [&ua, &ub] {
                let parsed = url::Url::parse(u).unwrap();
                proptest::prop_assert_eq!(parsed.as_str(), u.as_str());
                proptest::prop_assert_eq!(parsed.host_str(), Some("docs"));
                proptest::prop_assert_eq!(parsed.path_segments().map(|s| s.count()), Some(1));
            }
        }
    }

    #[test]
    fn addresses_encode_the_id_as_one_segment() {
        assert_eq!(corpus_url("docs", "a/b c.md"), "corpus://docs/a%2Fb%20c.md");
        assert_eq!(corpus_url("docs", "42"), "corpus://docs/42");
    }

    #[test]
    fn names_must_be_hosts() {
        assert!(check_name("my-docs.v2").is_ok());
        for bad in ["", "My Docs", "-x", "a/b", "a_b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_row_needs_an_id_and_a_text() {
        let cols = CorpusColumns::default();
        let f = |pairs: &[(&str, &str)]| -> Fields {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let ok = to_doc(
            &f(&[
                ("id", "7"),
                ("text", " a  b "),
                ("published", "2024-03-01T10:00:00Z"),
            ]),
            &cols,
        )
        .unwrap();
        assert_eq!((ok.id.as_str(), ok.text.as_str()), ("7", "a b"));
        assert_eq!(ok.published.as_deref(), Some("2024-03-01"));
        assert!(
            to_doc(&f(&[("text", "x")]), &cols)
                .unwrap_err()
                .contains("`id`")
        );
        assert!(
            to_doc(&f(&[("id", "1"), ("text", "  ")]), &cols)
                .unwrap_err()
                .contains("`text`")
        );
        assert!(
            to_doc(&f(&[("id", ".."), ("text", "x")]), &cols)
                .unwrap_err()
                .contains("dots alone")
        );
    }
}
