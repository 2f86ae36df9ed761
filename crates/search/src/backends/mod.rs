//! Search backends. Each module holds one backend's configuration and response parser; the
//! [`Backend`] trait is what the `search` stage calls.
//!
//! Parsers are tolerant: a result without a title or snippet is kept with the field empty (and
//! counted in [`Parsed::missing`]), a result without a URL is counted and skipped, and a body that
//! is not the JSON shape the API documents is a [`SearchFailure`] with code `malformed_response`.

pub mod api;
pub mod brave;
mod config;
pub mod corpus;
mod corpus_doc;
pub mod dense;
pub mod fixture;
pub mod google;
#[cfg(test)]
mod real_inputs;
pub mod reddit_api;
pub mod reddit_dump;
pub mod retriever;
pub mod run;
pub mod searxng;

use std::collections::BTreeMap;

pub use config::BackendConfig;
pub(crate) use config::backend_labels;

/// One query as a backend receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// The query's id (`queries.id`): what a user's run file names (the `run` backend).
    pub query_id: String,
    pub text: String,
    /// Restrict results to this site (`reddit.com`).
    pub site: Option<String>,
    pub top_k: usize,
    /// Inclusive `YYYY-MM-DD` bounds.
    pub date_from: Option<String>,
    pub date_to: Option<String>,
}

/// One result as a backend returned it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawHit {
    pub url: Option<String>,
    pub title: Option<String>,
    pub snippet: Option<String>,
    pub published: Option<String>,
    /// A document of a local corpus: its id there (the `corpus` backend).
    pub corpus_id: Option<String>,
    /// A document of a local corpus: its whole text, so it is never fetched.
    pub text: Option<String>,
    /// Which retrievers found it and its rank in each (`bm25:2 dense:1`): the `corpus`
    /// backend's `dense` and `hybrid` retrieval.
    pub retrieved_by: Option<String>,
}

/// A parsed answer: hits in rank order, and how many results lacked each field.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    pub hits: Vec<RawHit>,
    /// Field name -> results of this answer that lacked it (`url`, `title`, `snippet`).
    pub missing: BTreeMap<String, u64>,
    /// Results the backend read and left out, or kept altered, each with its reason (a run
    /// file's unknown doc id, a tie broken): the stage records them as drops or failures.
    pub notes: Vec<HitNote>,
}

/// A result a backend left out (`kept: false`, a drop) or kept altered (`kept: true`, a failure
/// that did not cost it), `at` naming it within the answer (a doc id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitNote {
    pub at: String,
    pub code: &'static str,
    pub detail: String,
    pub kept: bool,
}

impl Parsed {
    /// Build from hits, counting missing fields.
    pub(crate) fn from_hits(hits: Vec<RawHit>) -> Parsed {
        let mut missing = BTreeMap::new();
        for h in &hits {
            for (name, absent) in [
                ("url", h.url.is_none()),
                ("title", h.title.is_none()),
                ("snippet", h.snippet.is_none()),
            ] {
                if absent {
                    *missing.entry(name.to_string()).or_insert(0) += 1;
                }
            }
        }
        Parsed {
            hits,
            missing,
            notes: Vec::new(),
        }
    }
}

/// Why a query gave no answer: a drop reason code, whether it is transient (a fetch's or an
/// HTTP status's, as the web layer says) and a detail free of secrets. It is the web layer's
/// [`ApiFailure`](noisebench_web::api::ApiFailure), which the credentialed APIs' client returns,
/// under the name the backends use.
pub type SearchFailure = noisebench_web::api::ApiFailure;

/// A search backend, ready to answer queries (synchronous; backends block on their own I/O).
pub trait Backend: Send + Sync {
    /// The name written to `search_hits.backend`.
    fn name(&self) -> &'static str;
    fn search(&self, request: &SearchRequest) -> Result<Parsed, SearchFailure>;
}

/// A non-empty trimmed string from a JSON value.
pub(crate) fn text_of(v: Option<&serde_json::Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Parse a body as a JSON object, or fail as `malformed_response`.
pub(crate) fn json_object(
    body: &str,
    backend: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, SearchFailure> {
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err(SearchFailure::malformed(format!(
            "{backend}: the answer is JSON but not an object"
        ))),
        Err(e) => Err(SearchFailure::malformed(format!(
            "{backend}: the answer is not JSON ({e})"
        ))),
    }
}

/// `q` with ` site:<site>` appended, for engines that take the operator in the query.
pub(crate) fn with_site(text: &str, site: Option<&str>) -> String {
    match site {
        Some(s) => format!("{text} site:{s}"),
        None => text.to_string(),
    }
}
