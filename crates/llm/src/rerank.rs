//! A client for an OpenAI-compatible `/v1/rerank` endpoint, as vLLM and Hugging Face TEI serve
//! it: `{model, query, documents, top_n}` in, `{results: [{index, relevance_score}]}` out.
//!
//! Sent through `noisebench-web`'s `HttpClient` (retries on 408/429/5xx and refused connections
//! with backoff and Retry-After, timeouts, body cap), the key read once from the environment
//! variable the configuration names and sent only as `Authorization: Bearer`, never in an error.
//! Not cached and not budgeted: a rerank call is priced by no provider we use, and its answer is
//! cheap to ask again. A failure is one `Err` for the query, never a panic.

use std::time::Duration;

use noisebench_web::{AddressClass, HttpClient, HttpConfig, HttpRequest, RetryPolicy, Url};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::LlmError;

/// Where and how to rerank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RerankConfig {
    /// The model sent in each request (and named in results, `rerank:<model>`).
    pub model: String,
    /// The server's base URL up to and including `/v1` (`http://127.0.0.1:8000/v1`); requests
    /// go to `<base_url>/rerank`. A URL holding credentials is refused.
    pub base_url: String,
    /// The environment variable holding the API key, if the server wants one.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Seconds one attempt may take.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: f64,
    /// Retries after a first failed attempt (408, 429, 5xx, timeouts, refused connections).
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
}

fn default_timeout_secs() -> f64 {
    60.0
}
fn default_max_retries() -> u32 {
    3
}

/// One reranked document: its index in the request's `documents` and its score.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct RerankHit {
    pub index: usize,
    pub relevance_score: f64,
}

#[derive(Deserialize)]
struct RerankResponse {
    results: Vec<RerankHit>,
}

/// A rerank endpoint, ready to call.
pub struct Reranker {
    http: HttpClient,
    url: Url,
    model: String,
    key: Option<String>,
}

impl std::fmt::Debug for Reranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reranker")
            .field("model", &self.model)
            .field("key", &self.key.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

impl Reranker {
    /// Check the configuration and read the key. Errors name the field.
    pub fn new(cfg: &RerankConfig) -> Result<Self, LlmError> {
        let url = Url::parse(&format!("{}/rerank", cfg.base_url.trim_end_matches('/')))
            .map_err(|e| LlmError::Config(format!("rerank.base_url: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(LlmError::Config("rerank.base_url: not http(s)".into()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(LlmError::Config(
                "rerank.base_url: credentials belong in api_key_env, not the URL".into(),
            ));
        }
        if cfg.model.trim().is_empty() {
            return Err(LlmError::Config("rerank.model: empty".into()));
        }
        if !(cfg.timeout_secs > 0.0 && cfg.timeout_secs.is_finite()) {
            return Err(LlmError::Config("rerank.timeout_secs: must be > 0".into()));
        }
        let key = match &cfg.api_key_env {
            Some(var) => Some(std::env::var(var).map_err(|_| {
                LlmError::Config(format!("rerank.api_key_env: `{var}` is not set"))
            })?),
            None => None,
        };
        let http = HttpClient::new(HttpConfig {
            // The operator named this endpoint: a local server is the usual case.
            rate_per_second: None,
            timeout: Duration::from_secs_f64(cfg.timeout_secs),
            allow_addresses: vec![
                AddressClass::Loopback,
                AddressClass::Private,
                AddressClass::LinkLocal,
                AddressClass::Cgnat,
            ],
            retry: RetryPolicy {
                max_retries: cfg.max_retries,
                first_delay: Duration::from_millis(200),
                retry_connect_errors: true,
                ..RetryPolicy::default()
            },
            ..HttpConfig::default()
        })
        .map_err(|e| LlmError::Config(format!("rerank: {e}")))?;
        Ok(Self {
            http,
            url,
            model: cfg.model.clone(),
            key,
        })
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// The `top_n` best of `documents` for `query`, best first (ties by index), each index
    /// checked against `documents`. Blocking.
    pub fn rerank(
        &self,
        query: &str,
        documents: &[String],
        top_n: usize,
    ) -> Result<Vec<RerankHit>, LlmError> {
        let body = serde_json::json!({
            "model": self.model,
            "query": query,
            "documents": documents,
            "top_n": top_n,
        });
        let mut request = HttpRequest::post(self.url.clone()).json(&body);
        if let Some(k) = &self.key {
            request = request.bearer_auth(k);
        }
        let endpoint = format!("rerank:{}", self.model);
        let response =
            self.http
                .send_blocking(&request)
                .map_err(|e| LlmError::RetriesExhausted {
                    attempts: self.http.config().retry.max_retries + 1,
                    last: format!("{} at `{endpoint}`: {e}", e.code()),
                })?;
        if !response.is_success() {
            let detail = crate::error::redact(&response.excerpt(300), self.key.as_deref());
            return Err(if RetryPolicy::retries_status(response.status) {
                LlmError::RetriesExhausted {
                    attempts: self.http.config().retry.max_retries + 1,
                    last: format!("HTTP {} from `{endpoint}`: {detail}", response.status),
                }
            } else {
                LlmError::Http {
                    endpoint,
                    status: response.status,
                    detail,
                }
            });
        }
        parse(&response.body, documents.len(), top_n)
    }
}

/// The hits of a rerank response body, checked: every index within `n` documents, each once,
/// finite scores; sorted best first (ties by index) and cut to `top_n`.
pub fn parse(body: &[u8], n: usize, top_n: usize) -> Result<Vec<RerankHit>, LlmError> {
    let bad = |detail: String| LlmError::Unparseable { tries: 1, detail };
    let r: RerankResponse =
        serde_json::from_slice(body).map_err(|e| bad(format!("rerank response: {e}")))?;
    let mut seen = vec![false; n];
    for h in &r.results {
        if h.index >= n {
            return Err(bad(format!("index {} for {n} documents", h.index)));
        }
        if std::mem::replace(&mut seen[h.index], true) {
            return Err(bad(format!("index {} twice", h.index)));
        }
        if !h.relevance_score.is_finite() {
            return Err(bad(format!("score of index {} is not finite", h.index)));
        }
    }
    let mut hits = r.results;
    hits.sort_by(|a, b| {
        b.relevance_score
            .total_cmp(&a.relevance_score)
            .then(a.index.cmp(&b.index))
    });
    hits.truncate(top_n);
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_checked_and_sorted() {
        let body = br#"{"id":"x","results":[{"index":1,"relevance_score":0.2},{"index":0,"relevance_score":0.9},{"index":2,"relevance_score":0.2}]}"#;
        let hits = parse(body, 3, 2).unwrap();
        assert_eq!(
            hits.iter().map(|h| h.index).collect::<Vec<_>>(),
            [0, 1],
            "best first, ties by index, cut to top_n"
        );
        assert!(parse(br#"{"results":[{"index":3,"relevance_score":1}]}"#, 3, 3).is_err());
        assert!(
            parse(
                br#"{"results":[{"index":0,"relevance_score":1},{"index":0,"relevance_score":2}]}"#,
                3,
                3
            )
            .is_err()
        );
        assert!(parse(b"not json", 3, 3).is_err());
    }

    #[test]
    fn configuration_is_checked() {
        let cfg = |url: &str| RerankConfig {
            model: "bge-reranker".into(),
            base_url: url.into(),
            api_key_env: None,
            timeout_secs: 5.0,
            max_retries: 0,
        };
        assert!(Reranker::new(&cfg("http://127.0.0.1:9/v1")).is_ok());
        assert!(Reranker::new(&cfg("http://user:pw@127.0.0.1:9/v1")).is_err());
        assert!(Reranker::new(&cfg("ftp://127.0.0.1/v1")).is_err());
        let mut missing = cfg("http://127.0.0.1:9/v1");
        missing.api_key_env = Some("NOISEBENCH_TEST_RERANK_KEY_UNSET".into());
        assert!(Reranker::new(&missing).is_err());
    }

    #[test]
    fn a_refused_connection_is_an_error_not_a_panic() {
        let r = Reranker::new(&RerankConfig {
            model: "m".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key_env: None,
            timeout_secs: 2.0,
            max_retries: 0,
        })
        .unwrap();
        let e = r.rerank("q", &["a".into()], 1).unwrap_err();
        assert_eq!(e.reason(), "retries_exhausted");
    }
}
