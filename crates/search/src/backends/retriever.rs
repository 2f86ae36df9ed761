//! The `retriever` backend: the user's own retriever as an HTTP service chooses each query's
//! candidate documents.
//!
//! Each query is one `POST` to `http.endpoint` with a JSON body, in one of two shapes
//! (`http.shape`):
//!
//! - `generic`: sends `{"query_id": "<queries.id>", "query": "<text>", "k": <top_k>}` and reads
//!   `{"hits": [{"id": "<doc id>", "score": <number>, "text": "…", "title": "…", "url": "…"}]}`
//!   (`score`, `text`, `title` and `url` optional);
//! - `elasticsearch` (also OpenSearch): sends the `_search` body
//!   `{"size": <top_k>, "query": {"match": {"<query_field>": "<text>"}}}` and reads
//!   `hits.hits[]` (`_id`, `_score`, `_source.<text_field>`, `_source.<title_field>`).
//!
//! Hits keep the answer's order (the retriever's ranking). A hit's text is the answer's; when the
//! answer has none, the text of the same id in `corpus` (read as the `corpus` backend reads it)
//! if one is configured (an id it lacks is dropped as `unknown_doc_id`); with no corpus, the
//! answer's `url`, fetched by the documents stage like a web hit; with none of these the hit is
//! dropped as `no_text`. A hit without an id (`missing_id`), with a score that is not a number
//! (`bad_score`) or repeating an id (`duplicate_doc`) is dropped with its reason. A body that is
//! not the shape is `malformed_response`. The shapes and the call are `noisebench-web`'s
//! ([`noisebench_web::retriever`], shared with the `retrieval` stage's `user` retriever):
//! requests go through its `ApiClient` (pacing, timeouts, retries of 408/429/5xx and timeouts,
//! size cap); the optional API key is read from `http.api_key_env`, sent as a header and kept
//! out of every error and log line. The `http` table is `noisebench-web`'s
//! `HttpRetrieverConfig`, the `retrieval` stage's `user.http` too. The search stage's site and
//! date window are not sent: a retriever over the user's corpus has neither.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub use noisebench_web::retriever::{
    Answer, AnswerNote, Retrieved, Shape, parse_elasticsearch, parse_generic,
};
use noisebench_web::retriever::{HttpRetriever, HttpRetrieverConfig};
use schemars::JsonSchema;
use serde::Deserialize;

use super::corpus::{CorpusColumns, CorpusDoc, CorpusError, corpus_url, default_name, read_corpus};
use super::{Backend, HitNote, Parsed, RawHit, SearchFailure, SearchRequest};

/// The `retriever` backend's configuration.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieverConfig {
    /// Where each query is posted and how: the endpoint, the request and answer shape, the API
    /// key and the requests' limits (as the `retrieval` stage's `user.http`).
    pub http: HttpRetrieverConfig,
    /// The corpus's name: the host of its documents' addresses (`corpus://<name>/<id>`).
    #[serde(default = "default_name")]
    pub name: String,
    /// The corpus the retriever's doc ids name (a file or a folder, relative to the root, read
    /// as the `corpus` backend reads it): the text of hits the answer gives none for.
    pub corpus: Option<std::path::PathBuf>,
    /// Which column of a table corpus holds what.
    #[serde(default)]
    pub columns: CorpusColumns,
}

fn note(at: String, code: &'static str, detail: String) -> HitNote {
    HitNote {
        at,
        code,
        detail,
        kept: false,
    }
}

/// An answer's hits as search hits: text from the answer, else from `docs` by id, else the
/// answer's `url` to fetch; at most `top_k`, each id once.
pub fn to_parsed(
    answer: Answer,
    docs: Option<&BTreeMap<String, CorpusDoc>>,
    name: &str,
    top_k: usize,
) -> Parsed {
    let mut hits = Vec::new();
    let mut notes: Vec<HitNote> = answer
        .notes
        .into_iter()
        .map(|n| note(n.at, n.code, n.detail))
        .collect();
    let mut seen = BTreeSet::new();
    for h in answer.hits {
        if hits.len() == top_k {
            break;
        }
        if !seen.insert(h.id.clone()) {
            let detail = format!("`{}` answered again", h.id);
            notes.push(note(h.id, "duplicate_doc", detail));
            continue;
        }
        let address = || Some(corpus_url(name, &h.id));
        let hit = match (h.text, docs.map(|d| d.get(&h.id))) {
            (Some(text), _) => RawHit {
                url: h.url.clone().or_else(address),
                title: h.title.clone(),
                snippet: Some(text.chars().take(300).collect()),
                published: None,
                corpus_id: Some(h.id.clone()),
                text: Some(text),
                retrieved_by: None,
            },
            (None, Some(Some(doc))) => RawHit {
                url: address(),
                title: h.title.clone().or_else(|| doc.title.clone()),
                snippet: Some(doc.text.chars().take(300).collect()),
                published: doc.published.clone(),
                corpus_id: Some(doc.id.clone()),
                text: Some(doc.text.clone()),
                retrieved_by: None,
            },
            (None, Some(None)) => {
                let detail = format!("no document `{}` in the corpus", h.id);
                notes.push(note(h.id, "unknown_doc_id", detail));
                continue;
            }
            (None, None) => match h.url.clone() {
                Some(url) => RawHit {
                    url: Some(url),
                    title: h.title.clone(),
                    corpus_id: Some(h.id.clone()),
                    ..RawHit::default()
                },
                None => {
                    let detail = format!(
                        "`{}` came without text or url, and no `corpus` is configured",
                        h.id
                    );
                    notes.push(note(h.id, "no_text", detail));
                    continue;
                }
            },
        };
        hits.push(hit);
    }
    let mut parsed = Parsed::from_hits(hits);
    parsed.notes = notes;
    parsed
}

/// The retriever as a search backend.
pub(crate) struct Retriever {
    http: HttpRetriever,
    name: String,
    docs: Option<BTreeMap<String, CorpusDoc>>,
}

/// Why the backend could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RetrieverError {
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Corpus(#[from] CorpusError),
}

impl Retriever {
    /// Read the key (if named) and the corpus at `corpus` (if configured).
    pub fn new(
        config: &RetrieverConfig,
        corpus: Option<&Path>,
        user_agent: &str,
    ) -> Result<Self, RetrieverError> {
        let http = HttpRetriever::new(&config.http, user_agent).map_err(RetrieverError::Config)?;
        let docs = match corpus {
            Some(path) => Some(
                read_corpus(path, &config.columns)?
                    .into_iter()
                    .map(|d| (d.id.clone(), d))
                    .collect(),
            ),
            None => None,
        };
        Ok(Self {
            http,
            name: config.name.clone(),
            docs,
        })
    }
}

impl Backend for Retriever {
    fn name(&self) -> &'static str {
        "retriever"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        let answer = self.http.retrieve(&req.query_id, &req.text, req.top_k)?;
        Ok(to_parsed(answer, self.docs.as_ref(), &self.name, req.top_k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_comes_from_the_answer_the_corpus_or_a_url() {
        let hit = |id: &str, text: Option<&str>, url: Option<&str>| Retrieved {
            id: id.into(),
            text: text.map(Into::into),
            url: url.map(Into::into),
            ..Retrieved::default()
        };
        let answer = Answer {
            hits: vec![
                hit("a", Some("from the answer"), None),
                hit("b", None, None),
                hit("a", Some("again"), None),
                hit("z", None, Some("https://x.example/z")),
            ],
            notes: Vec::new(),
        };
        let docs: BTreeMap<String, CorpusDoc> = [(
            "b".to_string(),
            CorpusDoc {
                id: "b".into(),
                title: Some("B".into()),
                text: "from the corpus".into(),
                published: None,
            },
        )]
        .into();
        let with = to_parsed(answer.clone(), Some(&docs), "mine", 10);
        let texts: Vec<_> = with.hits.iter().map(|h| h.text.as_deref()).collect();
        assert_eq!(texts, [Some("from the answer"), Some("from the corpus")]);
        assert_eq!(with.hits[1].url.as_deref(), Some("corpus://mine/b"));
        let codes: Vec<&str> = with.notes.iter().map(|n| n.code).collect();
        assert_eq!(codes, ["duplicate_doc", "unknown_doc_id"]);

        let without = to_parsed(answer.clone(), None, "mine", 10);
        let urls: Vec<_> = without.hits.iter().map(|h| h.url.as_deref()).collect();
        assert_eq!(urls, [Some("corpus://mine/a"), Some("https://x.example/z")]);
        assert_eq!(without.hits[1].text, None);
        let codes: Vec<&str> = without.notes.iter().map(|n| n.code).collect();
        assert_eq!(codes, ["no_text", "duplicate_doc"]);

        assert_eq!(to_parsed(answer, Some(&docs), "mine", 1).hits.len(), 1);
    }
}
