//! The user's own retriever (`[stages.retrieval.user]`), scored beside BM25 and dense as the
//! retriever `user:<name>`: its rankings come from a run file (TREC or Parquet, read by
//! `noisebench_index::run`) or from an HTTP endpoint (`noisebench_web::retriever`: the `generic`
//! JSON shape or Elasticsearch/OpenSearch `_search`).
//!
//! Query ids are the question id (a question's own query) and the query perturbation's id (a
//! perturbed query); doc ids are chunk ids. Per query its top k: a run's rows ordered by rank,
//! then score (higher first), then doc id; an endpoint's hits in the order it answered. Every row
//! or hit not kept is a counted record with its reason, never silent: a query the run lacks
//! (`not_in_run`), a doc id that is no chunk (`unknown_doc_id`), a doc listed twice
//! (`duplicate_doc`), a tie (`tied_rank`, kept), a malformed run line (`malformed_run_line`,
//! naming file and line), a hit the answer gave without an id (`missing_id`) or with a score that
//! is not a number (`bad_score`), a call that failed after its retries (`user_failed`, the
//! detail naming the web layer's reason: `http_500`, `timeout`, ...), and the queries not sent
//! after the endpoint kept failing (`user_abandoned`). A failing endpoint costs only its own rows,
//! and, like a failing reranker, never blocks publishing.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use noisebench_core::{ConfigError, Drops, StageError};
use noisebench_web::retriever::{HttpRetriever, HttpRetrieverConfig};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::search::Scored;
use crate::{PerQuery, QueryItem};

/// The user's retriever: a run file or an HTTP endpoint (exactly one).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserRetrieverConfig {
    /// Its name (letters, digits, `.`, `_`, `-`): the retriever is `user:<name>` in `retrievals`
    /// and `retrieval_metrics`.
    pub name: String,
    /// A run, relative to the root: a TREC run file (`qid Q0 docid rank score tag` a line) or a
    /// `.parquet` file with columns `query_id`, `doc_id`, `rank` and `score`. Query ids are
    /// question ids (a question's own query) and `query_perturbations.id` (its perturbed
    /// queries); doc ids are chunk ids.
    #[serde(default)]
    pub run: Option<PathBuf>,
    /// An HTTP endpoint instead of a run: each query's text is posted (`generic`:
    /// `{"query_id","query","k"}` in, `{"hits":[{"id",...}]}` out; `elasticsearch`: a `_search`
    /// `match` query of `size` k); hits' ids are chunk ids.
    #[serde(default)]
    pub http: Option<HttpRetrieverConfig>,
    /// HTTP: after this many failed calls in a row, the rest of the queries are not sent (one
    /// `user_abandoned` record): an endpoint that is down costs its retries once per query.
    #[serde(default = "default_max_failures")]
    pub max_consecutive_failures: usize,
}

fn default_max_failures() -> usize {
    5
}

impl UserRetrieverConfig {
    /// The retriever's name in the tables: `user:<name>`.
    pub fn retriever(&self) -> String {
        format!("user:{}", self.name)
    }

    /// Checks beyond the types; `root` resolves a relative run path.
    pub(crate) fn validate(&self, root: &std::path::Path) -> Result<(), ConfigError> {
        let good = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if self.name.is_empty() || !self.name.chars().all(good) {
            return Err(ConfigError::new(
                "user.name",
                format!(
                    "`{}`: one or more letters, digits, `.`, `_` or `-`",
                    self.name
                ),
            ));
        }
        match (&self.run, &self.http) {
            (Some(run), None) => {
                let path = root.join(run);
                if !path.is_file() {
                    return Err(ConfigError::new(
                        "user.run",
                        format!("no file {}", path.display()),
                    ));
                }
            }
            (None, Some(http)) => {
                noisebench_web::Url::parse(&http.endpoint).map_err(|e| {
                    ConfigError::new("user.http.endpoint", format!("`{}`: {e}", http.endpoint))
                })?;
                if self.max_consecutive_failures == 0 {
                    return Err(ConfigError::new(
                        "user.max_consecutive_failures",
                        "must be at least 1",
                    ));
                }
            }
            _ => {
                return Err(ConfigError::new(
                    "user",
                    "give exactly one of `run` and `http`",
                ));
            }
        }
        Ok(())
    }
}

/// What the user's retriever did beyond its rows, for the stage facts.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub(crate) struct UserSummary {
    pub retriever: String,
    /// Queries it gave no ranking for (not in the run, a failed call, not sent).
    pub queries_without_results: usize,
    /// Rows or hits left out (unknown or repeated doc ids, malformed lines, bad hits).
    pub rows_left_out: usize,
    /// Run query ids that name no query of this run.
    pub run_queries_unused: usize,
}

/// The user's retriever's rankings, per query in `items` order (`None`: no ranking), each at most
/// `k` deep; `chunk_ids` are the sorted chunk ids (a [`Scored`] points into them).
pub(crate) fn user_results(
    u: &UserRetrieverConfig,
    root: &std::path::Path,
    items: &[QueryItem],
    chunk_ids: &[&str],
    k: usize,
    drops: &mut Drops,
) -> Result<(PerQuery, UserSummary), StageError> {
    let position: HashMap<&str, usize> = chunk_ids
        .iter()
        .enumerate()
        .map(|(i, id)| (*id, i))
        .collect();
    let mut summary = UserSummary {
        retriever: u.retriever(),
        ..UserSummary::default()
    };
    let results = match (&u.run, &u.http) {
        (Some(run), _) => from_run(u, &root.join(run), items, &position, k, drops, &mut summary)?,
        (None, Some(http)) => from_http(u, http, items, &position, k, drops, &mut summary)?,
        (None, None) => {
            return Err(StageError::Config(ConfigError::new(
                "user",
                "give exactly one of `run` and `http`",
            )));
        }
    };
    summary.queries_without_results = results.iter().filter(|r| r.is_none()).count();
    Ok((results, summary))
}

fn from_run(
    u: &UserRetrieverConfig,
    path: &std::path::Path,
    items: &[QueryItem],
    position: &HashMap<&str, usize>,
    k: usize,
    drops: &mut Drops,
    summary: &mut UserSummary,
) -> Result<PerQuery, StageError> {
    let retriever = u.retriever();
    let (rows, bad) = noisebench_index::run::read_run_lenient(path)
        .map_err(|e| StageError::Other(format!("user.run: {e}")))?;
    for e in &bad {
        let line = match e {
            noisebench_index::run::RunError::Row { line, .. } => *line,
            _ => 0,
        };
        drops.add_failure(
            format!("{retriever}/line {line}"),
            "malformed_run_line",
            e.to_string(),
        );
    }
    summary.rows_left_out += bad.len();
    let mut by_query = noisebench_index::run::by_query(rows);
    let asked: BTreeSet<&str> = items.iter().map(|q| q.query_id.as_str()).collect();
    summary.run_queries_unused = by_query
        .keys()
        .filter(|q| !asked.contains(q.as_str()))
        .count();
    let mut out = Vec::with_capacity(items.len());
    for q in items {
        let item = format!("{}/{retriever}", q.query_id);
        let Some(rows) = by_query.remove(&q.query_id) else {
            drops.add_failure(
                item,
                "not_in_run",
                format!("{} has no row for query `{}`", path.display(), q.query_id),
            );
            out.push(None);
            continue;
        };
        let (kept, notes) =
            noisebench_index::run::rank_rows(&rows, |d| position.contains_key(d), k);
        for n in notes {
            if !n.kept {
                summary.rows_left_out += 1;
            }
            let detail = match n.code {
                "unknown_doc_id" => format!("{}: {} among the chunks", path.display(), n.detail),
                _ => format!("{}: {}", path.display(), n.detail),
            };
            drops.add_failure(item.clone(), n.code, detail);
        }
        out.push(Some(
            kept.iter()
                .filter_map(|r| {
                    position.get(r.doc_id.as_str()).map(|&chunk| Scored {
                        chunk,
                        score: r.score,
                    })
                })
                .collect(),
        ));
    }
    Ok(out)
}

fn from_http(
    u: &UserRetrieverConfig,
    http: &HttpRetrieverConfig,
    items: &[QueryItem],
    position: &HashMap<&str, usize>,
    k: usize,
    drops: &mut Drops,
    summary: &mut UserSummary,
) -> Result<PerQuery, StageError> {
    let retriever = u.retriever();
    let user_agent = noisebench_web::WebConfig::default().user_agent;
    let client = HttpRetriever::new(http, &user_agent)
        .map_err(|e| StageError::Config(ConfigError::new("user.http", e)))?;
    let mut in_a_row = 0;
    let mut skipped = 0;
    let mut out = Vec::with_capacity(items.len());
    for q in items {
        let item = format!("{}/{retriever}", q.query_id);
        if in_a_row >= u.max_consecutive_failures {
            skipped += 1;
            out.push(None);
            continue;
        }
        let answer = match client.retrieve(&q.query_id, &q.text, k) {
            Ok(a) => {
                in_a_row = 0;
                a
            }
            Err(e) => {
                in_a_row += 1;
                // Not transient, as the reranker's: an endpoint that is down never blocks
                // publishing; the query keeps the other retrievers' rows.
                drops.add_failure(item, "user_failed", e.to_string());
                out.push(None);
                continue;
            }
        };
        for n in &answer.notes {
            summary.rows_left_out += 1;
            drops.add_failure(item.clone(), n.code, format!("{}: {}", n.at, n.detail));
        }
        let mut seen = BTreeSet::new();
        let mut hits = Vec::new();
        for h in answer.hits {
            if hits.len() == k {
                break;
            }
            let Some(&chunk) = position.get(h.id.as_str()) else {
                summary.rows_left_out += 1;
                drops.add_failure(
                    item.clone(),
                    "unknown_doc_id",
                    format!("`{}` is not among the chunks", h.id),
                );
                continue;
            };
            if !seen.insert(chunk) {
                summary.rows_left_out += 1;
                drops.add_failure(
                    item.clone(),
                    "duplicate_doc",
                    format!("`{}` answered again", h.id),
                );
                continue;
            }
            hits.push(Scored {
                chunk,
                score: h.score.unwrap_or(0.0),
            });
        }
        out.push(Some(hits));
    }
    if skipped > 0 {
        drops.add_failure(
            retriever,
            "user_abandoned",
            format!(
                "{} failed calls in a row; {skipped} queries not sent",
                u.max_consecutive_failures
            ),
        );
    }
    Ok(out)
}
