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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use super::corpus::{CorpusColumns, CorpusDoc, CorpusError, corpus_url, default_name, read_corpus};
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

pub use noisebench_index::run::RunRow;

/// Every row of a run file, in file order; a malformed line is an error naming file and line
/// (`noisebench_index::run::read_run`).
pub fn read_run(path: &Path) -> Result<Vec<RunRow>, CorpusError> {
    Ok(noisebench_index::run::read_run(path)?)
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
        let by_query = noisebench_index::run::by_query(read_run(run)?);
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
/// and noted (`noisebench_index::run::rank_rows`); at most `top_k` hits.
pub(crate) fn rank_rows(
    rows: &[RunRow],
    docs: &BTreeMap<String, CorpusDoc>,
    name: &str,
    top_k: usize,
) -> Parsed {
    let (kept, run_notes) =
        noisebench_index::run::rank_rows(rows, |id| docs.contains_key(id), top_k);
    let hits = kept
        .iter()
        .filter_map(|row| docs.get(&row.doc_id))
        .map(|doc| RawHit {
            url: Some(corpus_url(name, &doc.id)),
            title: doc.title.clone(),
            snippet: Some(doc.text.chars().take(300).collect()),
            published: doc.published.clone(),
            corpus_id: Some(doc.id.clone()),
            text: Some(doc.text.clone()),
            retrieved_by: None,
        })
        .collect();
    let mut parsed = Parsed::from_hits(hits);
    parsed.notes = run_notes
        .into_iter()
        .map(|n| HitNote {
            detail: match n.code {
                "unknown_doc_id" => format!("{} in the corpus", n.detail),
                _ => n.detail,
            },
            at: n.doc_id,
            code: n.code,
            kept: n.kept,
        })
        .collect();
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
