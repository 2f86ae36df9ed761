//! A user's own retriever behind HTTP: its request and answer shapes, and the call.
//!
//! Each query is one `POST` to `endpoint` with a JSON body, in one of two shapes ([`Shape`]):
//!
//! - `generic`: sends `{"query_id": "<id>", "query": "<text>", "k": <k>}` and reads
//!   `{"hits": [{"id": "<doc id>", "score": <number>, "text": "…", "title": "…", "url": "…"}]}`
//!   (`score`, `text`, `title` and `url` optional);
//! - `elasticsearch` (also OpenSearch): sends the `_search` body
//!   `{"size": <k>, "query": {"match": {"<query_field>": "<text>"}}}` and reads `hits.hits[]`
//!   (`_id`, `_score`, `_source.<text_field>`, `_source.<title_field>`).
//!
//! Hits keep the answer's order (the retriever's ranking). A hit without an id (`missing_id`) or
//! with a score that is not a number (`bad_score`) is left out with its reason ([`AnswerNote`]);
//! a body that is not the shape is `malformed_response`. Requests go through [`ApiClient`]
//! (pacing, timeouts, retries of 408/429/5xx and timeouts, size cap); the optional API key is
//! read from `api_key_env`, sent as a header and kept out of every error and log line. Users:
//! the search stage's `retriever` backend (claims track) and the `retrieval` stage's `user`
//! retriever (report track); what a hit's id names (a corpus document, a chunk) is theirs.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::HttpRequest;
use crate::api::{ApiClient, ApiFailure, ApiLimits, env_secret};

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

/// Where a retriever listens and how to talk to it.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpRetrieverConfig {
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
    /// Pacing, retries, timeout and size cap of the requests.
    #[serde(default)]
    pub limits: ApiLimits,
}

/// `text`, the default `match` and text field.
pub fn default_text_field() -> String {
    "text".into()
}
/// `title`, the default title field.
pub fn default_title_field() -> String {
    "title".into()
}
/// `authorization`, the default key header.
pub fn default_key_header() -> String {
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

/// A hit left out while reading an answer: `at` names it (its id, or `#<position>` without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerNote {
    pub at: String,
    /// `missing_id` or `bad_score`.
    pub code: &'static str,
    pub detail: String,
}

/// An answer: its hits in order, and the hits left out while reading it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    pub hits: Vec<Retrieved>,
    pub notes: Vec<AnswerNote>,
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

/// A trimmed, non-empty string, or an integer written as one (ids may be numbers).
fn string_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A non-empty trimmed string.
fn text_of(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn read_hits(list: &[Value], f: Fields<'_>) -> Answer {
    let mut answer = Answer::default();
    for (i, hit) in list.iter().enumerate() {
        let Some(id) = string_of(hit.get(f.id)) else {
            answer.notes.push(AnswerNote {
                at: format!("#{}", i + 1),
                code: "missing_id",
                detail: format!("hit {} has no `{}`", i + 1, f.id),
            });
            continue;
        };
        let score = match hit.get(f.score) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => n.as_f64(),
            Some(other) => {
                answer.notes.push(AnswerNote {
                    at: id.clone(),
                    code: "bad_score",
                    detail: format!("hit {}: `{}` is {other}, not a number", i + 1, f.score),
                });
                continue;
            }
        };
        let fields = match f.source {
            Some(s) => hit.get(s),
            None => Some(hit),
        };
        let field = |name: &str| text_of(fields.and_then(|o| o.get(name)));
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

/// Parse a body as a JSON object, or fail as `malformed_response`.
fn json_object(body: &str, api: &str) -> Result<serde_json::Map<String, Value>, ApiFailure> {
    match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiFailure::malformed(format!(
            "{api}: the answer is JSON but not an object"
        ))),
        Err(e) => Err(ApiFailure::malformed(format!(
            "{api}: the answer is not JSON ({e})"
        ))),
    }
}

/// Read a `generic` answer: `{"hits": [...]}`; no `hits` list is malformed.
pub fn parse_generic(body: &str) -> Result<Answer, ApiFailure> {
    let obj = json_object(body, "retriever")?;
    match obj.get("hits") {
        Some(Value::Array(list)) => Ok(read_hits(list, GENERIC)),
        _ => Err(ApiFailure::malformed("retriever: no `hits` list")),
    }
}

/// Read an Elasticsearch/OpenSearch `_search` answer: `hits.hits[]` with `_id`, `_score` and
/// `_source.<text_field>`/`_source.<title_field>`; no `hits.hits` list is malformed.
pub fn parse_elasticsearch(
    body: &str,
    text_field: &str,
    title_field: &str,
) -> Result<Answer, ApiFailure> {
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
        _ => Err(ApiFailure::malformed("elasticsearch: no `hits.hits` list")),
    }
}

/// The retriever, ready to answer queries (blocking).
pub struct HttpRetriever {
    endpoint: url::Url,
    config: HttpRetrieverConfig,
    /// The header and its value, when a key is configured.
    key: Option<(String, String)>,
    client: ApiClient,
}

impl std::fmt::Debug for HttpRetriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpRetriever")
            .field("shape", &self.config.shape)
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl HttpRetriever {
    /// Check the endpoint and read the key (if named); the error names no secret.
    pub fn new(config: &HttpRetrieverConfig, user_agent: &str) -> Result<Self, String> {
        let endpoint = url::Url::parse(&config.endpoint)
            .map_err(|e| format!("endpoint `{}`: {e}", config.endpoint))?;
        let key = match &config.api_key_env {
            Some(var) => Some(env_secret(var)?),
            None => None,
        };
        let client = ApiClient::new(
            "retriever",
            user_agent,
            config.limits.clone(),
            key.iter().cloned().collect(),
        )?;
        let prefix = config
            .api_key_prefix
            .clone()
            .unwrap_or_else(|| match config.shape {
                Shape::Generic => "Bearer ".into(),
                Shape::Elasticsearch => "ApiKey ".into(),
            });
        Ok(Self {
            endpoint,
            key: key.map(|k| (config.api_key_header.clone(), format!("{prefix}{k}"))),
            config: config.clone(),
            client,
        })
    }

    /// The request body of one query.
    pub fn body(&self, query_id: &str, text: &str, k: usize) -> Value {
        match self.config.shape {
            Shape::Generic => json!({"query_id": query_id, "query": text, "k": k}),
            Shape::Elasticsearch => json!({
                "size": k,
                "query": {"match": {self.config.query_field.as_str(): text}},
            }),
        }
    }

    /// Post one query and read the answer (its hits in the retriever's order).
    pub fn retrieve(&self, query_id: &str, text: &str, k: usize) -> Result<Answer, ApiFailure> {
        let mut request = HttpRequest::post(self.endpoint.clone())
            .header("accept", "application/json")
            .json(&self.body(query_id, text, k));
        if let Some((header, value)) = &self.key {
            // The whole value is a secret too, so a prefixed key never shows either.
            request = request.secret_header(header, value.clone());
        }
        let body = self.client.send(request)?;
        match self.config.shape {
            Shape::Generic => parse_generic(&body),
            Shape::Elasticsearch => {
                parse_elasticsearch(&body, &self.config.text_field, &self.config.title_field)
            }
        }
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
    fn request_bodies_of_both_shapes() {
        let config = |shape| HttpRetrieverConfig {
            endpoint: "http://127.0.0.1:9/idx/_search".into(),
            shape,
            query_field: "body".into(),
            text_field: default_text_field(),
            title_field: default_title_field(),
            api_key_env: None,
            api_key_header: default_key_header(),
            api_key_prefix: None,
            limits: ApiLimits::default(),
        };
        let es = HttpRetriever::new(&config(Shape::Elasticsearch), "t").unwrap();
        assert_eq!(
            es.body("q1", "water", 3),
            json!({"size": 3, "query": {"match": {"body": "water"}}})
        );
        let g = HttpRetriever::new(&config(Shape::Generic), "t").unwrap();
        assert_eq!(
            g.body("q1", "water", 3),
            json!({"query_id": "q1", "query": "water", "k": 3})
        );
        let mut bad = config(Shape::Generic);
        bad.endpoint = "not a url".into();
        assert!(
            HttpRetriever::new(&bad, "t")
                .unwrap_err()
                .contains("endpoint")
        );
    }
}
