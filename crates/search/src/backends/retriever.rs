//! The `retriever` backend: the user's own retriever as an HTTP service chooses each query's
//! candidate documents.
//!
//! Each query is one `POST` to `endpoint` with a JSON body, in one of two shapes (`shape`):
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
//! not the shape is `malformed_response`. Requests go through `noisebench-web`'s `HttpClient`
//! (pacing, timeouts, retries of 408/429/5xx and timeouts, size cap); the optional API key is
//! read from `api_key_env`, sent as a header and kept out of every error and log line. The
//! search stage's site and date window are not sent: a retriever over the user's corpus has
//! neither.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use noisebench_web::HttpRequest;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{ApiClient, ApiLimits, env_secret};
use super::corpus::{CorpusColumns, CorpusDoc, CorpusError, corpus_url, default_name, read_corpus};
use super::{Backend, HitNote, Parsed, RawHit, SearchFailure, SearchRequest, json_object};

/// The request and answer shape a retriever speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// `{"query_id", "query", "k"}` in, `{"hits": [{"id", "score", "text", "title", "url"}]}` out.
    #[default]
    Generic,
    /// Elasticsearch or OpenSearch `_search`: a `match` query in, `hits.hits[]` out.
    Elasticsearch,
}

/// The `retriever` backend's configuration.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieverConfig {
    /// Where each query is posted (Elasticsearch: `http://localhost:9200/<index>/_search`).
    pub endpoint: String,
    /// The request and answer shape: `generic` (the default) or `elasticsearch` (also
    /// OpenSearch).
    #[serde(default)]
    pub shape: Shape,
    /// Elasticsearch: the field the `match` query searches.
    #[serde(default = "default_text_field")]
    pub query_field: String,
    /// Elasticsearch: the `_source` field holding a hit's text.
    #[serde(default = "default_text_field")]
    pub text_field: String,
    /// Elasticsearch: the `_source` field holding a hit's title (optional in each hit).
    #[serde(default = "default_title_field")]
    pub title_field: String,
    /// Environment variable holding an API key, sent with each request; none when absent.
    pub api_key_env: Option<String>,
    /// The header the API key goes in.
    #[serde(default = "default_key_header")]
    pub api_key_header: String,
    /// Written before the key in the header: default `ApiKey ` for `elasticsearch`, `Bearer `
    /// for `generic`; `""` sends the key alone.
    pub api_key_prefix: Option<String>,
    /// The corpus's name: the host of its documents' addresses (`corpus://<name>/<id>`).
    #[serde(default = "default_name")]
    pub name: String,
    /// The corpus the retriever's doc ids name (a file or a folder, relative to the root, read
    /// as the `corpus` backend reads it): the text of hits the answer gives none for.
    pub corpus: Option<std::path::PathBuf>,
    /// Which column of a table corpus holds what.
    #[serde(default)]
    pub columns: CorpusColumns,
    /// Pacing, retries, timeout and size cap of this backend's requests.
    #[serde(default)]
    pub limits: ApiLimits,
}

fn default_text_field() -> String {
    "text".into()
}
fn default_title_field() -> String {
    "title".into()
}
fn default_key_header() -> String {
    "authorization".into()
}

/// One hit as the retriever answered it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Retrieved {
    pub id: String,
    pub score: Option<f64>,
    pub text: Option<String>,
    pub title: Option<String>,
    pub url: Option<String>,
}

/// An answer: its hits in order, and the hits left out while reading it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    pub hits: Vec<Retrieved>,
    pub notes: Vec<HitNote>,
}

/// The fields one answer's hits are read from.
#[derive(Debug, Clone, Copy)]
struct Fields<'a> {
    id: &'a str,
    score: &'a str,
    text: &'a str,
    title: &'a str,
    url: &'a str,
    /// Elasticsearch keeps the document's fields under `_source`.
    source: Option<&'a str>,
}

const GENERIC: Fields<'static> = Fields {
    id: "id",
    score: "score",
    text: "text",
    title: "title",
    url: "url",
    source: None,
};

fn note(at: String, code: &'static str, detail: String) -> HitNote {
    HitNote {
        at,
        code,
        detail,
        kept: false,
    }
}

/// A trimmed, non-empty string, or an integer written as one (ids may be numbers).
fn string_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn read_hits(list: &[Value], f: Fields<'_>) -> Answer {
    let mut answer = Answer::default();
    for (i, hit) in list.iter().enumerate() {
        let at = format!("#{}", i + 1);
        let Some(id) = string_of(hit.get(f.id)) else {
            answer.notes.push(note(
                at,
                "missing_id",
                format!("hit {} has no `{}`", i + 1, f.id),
            ));
            continue;
        };
        let score = match hit.get(f.score) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => n.as_f64(),
            Some(other) => {
                answer.notes.push(note(
                    id.clone(),
                    "bad_score",
                    format!("hit {}: `{}` is {other}, not a number", i + 1, f.score),
                ));
                continue;
            }
        };
        let fields = match f.source {
            Some(s) => hit.get(s),
            None => Some(hit),
        };
        let field = |name: &str| super::text_of(fields.and_then(|o| o.get(name)));
        answer.hits.push(Retrieved {
            id,
            score,
            text: field(f.text),
            title: field(f.title),
            url: field(f.url),
        });
    }
    answer
}

/// Read a `generic` answer: `{"hits": [...]}`; no `hits` list is malformed.
pub fn parse_generic(body: &str) -> Result<Answer, SearchFailure> {
    let obj = json_object(body, "retriever")?;
    match obj.get("hits") {
        Some(Value::Array(list)) => Ok(read_hits(list, GENERIC)),
        _ => Err(SearchFailure::malformed("retriever: no `hits` list")),
    }
}

/// Read an Elasticsearch/OpenSearch `_search` answer: `hits.hits[]` with `_id`, `_score` and
/// `_source.<text_field>`/`_source.<title_field>`; no `hits.hits` list is malformed.
pub fn parse_elasticsearch(
    body: &str,
    text_field: &str,
    title_field: &str,
) -> Result<Answer, SearchFailure> {
    let obj = json_object(body, "elasticsearch")?;
    match obj.get("hits").and_then(|h| h.get("hits")) {
        Some(Value::Array(list)) => Ok(read_hits(
            list,
            Fields {
                id: "_id",
                score: "_score",
                text: text_field,
                title: title_field,
                url: "url",
                source: Some("_source"),
            },
        )),
        _ => Err(SearchFailure::malformed(
            "elasticsearch: no `hits.hits` list",
        )),
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
    let mut notes = answer.notes;
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
            },
            (None, Some(Some(doc))) => RawHit {
                url: address(),
                title: h.title.clone().or_else(|| doc.title.clone()),
                snippet: Some(doc.text.chars().take(300).collect()),
                published: doc.published.clone(),
                corpus_id: Some(doc.id.clone()),
                text: Some(doc.text.clone()),
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
    endpoint: url::Url,
    config: RetrieverConfig,
    /// The header and its value, when a key is configured.
    key: Option<(String, String)>,
    docs: Option<BTreeMap<String, CorpusDoc>>,
    client: ApiClient,
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
        let endpoint = url::Url::parse(&config.endpoint)
            .map_err(|e| RetrieverError::Config(format!("endpoint `{}`: {e}", config.endpoint)))?;
        let key = match &config.api_key_env {
            Some(var) => Some(env_secret(var).map_err(RetrieverError::Config)?),
            None => None,
        };
        let client = ApiClient::new(
            "retriever",
            user_agent,
            config.limits.clone(),
            key.iter().cloned().collect(),
        )
        .map_err(RetrieverError::Config)?;
        let prefix = config
            .api_key_prefix
            .clone()
            .unwrap_or_else(|| match config.shape {
                Shape::Generic => "Bearer ".into(),
                Shape::Elasticsearch => "ApiKey ".into(),
            });
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
            endpoint,
            key: key.map(|k| (config.api_key_header.clone(), format!("{prefix}{k}"))),
            config: config.clone(),
            docs,
            client,
        })
    }

    /// The request body of one query.
    pub(crate) fn body(&self, req: &SearchRequest) -> Value {
        match self.config.shape {
            Shape::Generic => json!({"query_id": req.query_id, "query": req.text, "k": req.top_k}),
            Shape::Elasticsearch => json!({
                "size": req.top_k,
                "query": {"match": {self.config.query_field.as_str(): req.text}},
            }),
        }
    }
}

impl Backend for Retriever {
    fn name(&self) -> &'static str {
        "retriever"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        let mut request = HttpRequest::post(self.endpoint.clone())
            .header("accept", "application/json")
            .json(&self.body(req));
        if let Some((header, value)) = &self.key {
            // The whole value is a secret too, so a prefixed key never shows either.
            request = request.secret_header(header, value.clone());
        }
        let body = self.client.send(request)?;
        let answer = match self.config.shape {
            Shape::Generic => parse_generic(&body)?,
            Shape::Elasticsearch => {
                parse_elasticsearch(&body, &self.config.text_field, &self.config.title_field)?
            }
        };
        Ok(to_parsed(
            answer,
            self.docs.as_ref(),
            &self.config.name,
            req.top_k,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes_and_counts_bad_hits() {
        let a = parse_generic(
            r#"{"hits":[{"id":"a","score":2.5,"text":"A text"},{"score":1},{"id":7,"score":"high"},{"id":"b"}]}"#,
        )
        .unwrap();
        assert_eq!(a.hits.len(), 2);
        assert_eq!(a.hits[0].score, Some(2.5));
        let codes: Vec<&str> = a.notes.iter().map(|n| n.code).collect();
        assert_eq!(codes, ["missing_id", "bad_score"]);
        assert_eq!(a.notes[1].at, "7");

        let e = parse_elasticsearch(
            r#"{"took":1,"hits":{"total":{"value":1},"hits":[{"_id":"d1","_score":3.0,"_source":{"body":"B","name":"N"}}]}}"#,
            "body",
            "name",
        )
        .unwrap();
        assert_eq!(
            e.hits,
            [Retrieved {
                id: "d1".into(),
                score: Some(3.0),
                text: Some("B".into()),
                title: Some("N".into()),
                url: None,
            }]
        );
        for bad in [r#"{"hits":[]}"#, "[1]", "<html>", r#"{"hits":{"total":0}}"#] {
            assert_eq!(
                parse_elasticsearch(bad, "text", "title").unwrap_err().code,
                "malformed_response",
                "{bad}"
            );
        }
        assert_eq!(
            parse_generic(r#"{"results":[]}"#).unwrap_err().code,
            "malformed_response"
        );
    }

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
