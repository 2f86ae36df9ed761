//! The `run` backend: the user's own retriever chooses each query's candidate documents, given as
//! the run it wrote over the user's corpus.
//!
//! A run is a TREC run file (`qid Q0 docid rank score tag` a line, whitespace-separated) or a
//! Parquet file with columns `query_id`, `doc_id`, `rank` and `score`; its query ids are the ids
//! of the `queries` table (run the retriever over that table's `text`), its doc ids the ids of a
//! corpus read as the `corpus` backend reads it. A query's rows are ordered by rank; rows sharing
//! a rank by score (higher first), then doc id, each tie recorded (`tied_rank`, kept). A doc id
//! the corpus does not hold (`unknown_doc_id`) and a doc listed twice for a query
//! (`duplicate_doc`) are dropped with their reason; a query the run does not name is dropped as
//! `not_in_run`. A malformed line is an error naming the file and line. Hits carry their
//! document's id and text, as the `corpus` backend's do.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use super::corpus::{
    CorpusColumns, CorpusDoc, CorpusError, Fields, corpus_url, default_name, parquet_rows,
    read_corpus,
};
use super::{Backend, HitNote, Parsed, RawHit, SearchFailure, SearchRequest};

/// The `run` backend's configuration.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The run, relative to the root: a TREC run file (`qid Q0 docid rank score tag` a line), or
    /// a `.parquet` file with columns `query_id`, `doc_id`, `rank` and `score`. Query ids are
    /// `queries.id`.
    pub path: PathBuf,
    /// The corpus the run's doc ids name, read as the `corpus` backend reads it (a file or a
    /// folder; relative to the root).
    pub corpus: PathBuf,
    /// The corpus's name: the host of its documents' addresses (`corpus://<name>/<id>`).
    #[serde(default = "default_name")]
    pub name: String,
    /// Which column of a table corpus holds what.
    #[serde(default)]
    pub columns: CorpusColumns,
}

/// One row of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub query_id: String,
    pub doc_id: String,
    pub rank: i64,
    pub score: f64,
    /// The row's line in the file (a Parquet row, from 1).
    pub line: u64,
}

fn row_err(path: &Path, line: u64, message: String) -> CorpusError {
    CorpusError::Row {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// Every row of a run file, in file order.
pub fn read_run(path: &Path) -> Result<Vec<RunRow>, CorpusError> {
    let parquet = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
    if parquet {
        return parquet_rows(path)?
            .into_iter()
            .map(|(line, fields)| parquet_row(path, line, &fields))
            .collect();
    }
    let text = std::fs::read_to_string(path).map_err(|source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let parts: Vec<&str> = line.split_whitespace().collect();
        if parts.is_empty() {
            continue;
        }
        let [qid, _q0, doc, rank, score, _tag] = parts[..] else {
            return Err(row_err(
                path,
                line_no,
                format!(
                    "{} fields where a TREC run line has 6 (qid Q0 docid rank score tag)",
                    parts.len()
                ),
            ));
        };
        rows.push(RunRow {
            query_id: qid.to_string(),
            doc_id: doc.to_string(),
            rank: parse_rank(path, line_no, rank)?,
            score: parse_score(path, line_no, score)?,
            line: line_no,
        });
    }
    Ok(rows)
}

fn parse_rank(path: &Path, line: u64, v: &str) -> Result<i64, CorpusError> {
    v.trim()
        .parse::<i64>()
        .map_err(|_| row_err(path, line, format!("rank `{v}` is not an integer")))
}

fn parse_score(path: &Path, line: u64, v: &str) -> Result<f64, CorpusError> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite())
        .ok_or_else(|| row_err(path, line, format!("score `{v}` is not a number")))
}

fn parquet_row(path: &Path, line: u64, fields: &Fields) -> Result<RunRow, CorpusError> {
    let get = |name: &str| {
        fields
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| row_err(path, line, format!("no `{name}`")))
    };
    Ok(RunRow {
        query_id: get("query_id")?.to_string(),
        doc_id: get("doc_id")?.to_string(),
        rank: parse_rank(path, line, get("rank")?)?,
        score: parse_score(path, line, get("score")?)?,
        line,
    })
}

/// The run as a search backend.
pub(crate) struct Run {
    by_query: BTreeMap<String, Vec<RunRow>>,
    docs: BTreeMap<String, CorpusDoc>,
    name: String,
}

impl Run {
    /// Read the run at `run` and the corpus at `corpus`.
    pub fn load(run: &Path, corpus: &Path, config: &RunConfig) -> Result<Run, CorpusError> {
        let mut by_query: BTreeMap<String, Vec<RunRow>> = BTreeMap::new();
        for row in read_run(run)? {
            by_query.entry(row.query_id.clone()).or_default().push(row);
        }
        for rows in by_query.values_mut() {
            rows.sort_by(|a, b| {
                a.rank
                    .cmp(&b.rank)
                    .then(b.score.total_cmp(&a.score))
                    .then(a.doc_id.cmp(&b.doc_id))
            });
        }
        let docs = read_corpus(corpus, &config.columns)?
            .into_iter()
            .map(|d| (d.id.clone(), d))
            .collect();
        Ok(Run {
            by_query,
            docs,
            name: config.name.clone(),
        })
    }
}

/// A query's rows, in order, as hits and notes: unknown and repeated docs left out, ties kept
/// and noted; at most `top_k` hits.
pub(crate) fn rank_rows(
    rows: &[RunRow],
    docs: &BTreeMap<String, CorpusDoc>,
    name: &str,
    top_k: usize,
) -> Parsed {
    let mut hits = Vec::new();
    let mut notes = Vec::new();
    let mut seen = BTreeSet::new();
    let mut last: Option<&RunRow> = None;
    for row in rows {
        if hits.len() == top_k {
            break;
        }
        let note = |code, detail: String, kept| HitNote {
            at: row.doc_id.clone(),
            code,
            detail,
            kept,
        };
        let Some(doc) = docs.get(&row.doc_id) else {
            notes.push(note(
                "unknown_doc_id",
                format!(
                    "line {}: no document `{}` in the corpus",
                    row.line, row.doc_id
                ),
                false,
            ));
            continue;
        };
        if !seen.insert(row.doc_id.as_str()) {
            notes.push(note(
                "duplicate_doc",
                format!("line {}: `{}` listed again", row.line, row.doc_id),
                false,
            ));
            continue;
        }
        if let Some(prev) = last
            && prev.rank == row.rank
        {
            notes.push(note(
                "tied_rank",
                format!(
                    "line {}: rank {} also given to `{}`; ordered by score, then doc id",
                    row.line, row.rank, prev.doc_id
                ),
                true,
            ));
        }
        last = Some(row);
        hits.push(RawHit {
            url: Some(corpus_url(name, &doc.id)),
            title: doc.title.clone(),
            snippet: Some(doc.text.chars().take(300).collect()),
            published: doc.published.clone(),
            corpus_id: Some(doc.id.clone()),
            text: Some(doc.text.clone()),
        });
    }
    let mut parsed = Parsed::from_hits(hits);
    parsed.notes = notes;
    parsed
}

impl Backend for Run {
    fn name(&self) -> &'static str {
        "run"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        let rows = self.by_query.get(&req.query_id).ok_or_else(|| {
            SearchFailure::new(
                "not_in_run",
                format!("the run has no row for query `{}`", req.query_id),
            )
        })?;
        Ok(rank_rows(rows, &self.docs, &self.name, req.top_k))
    }
}
