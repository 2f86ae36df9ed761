//! A JSON API's client over [`HttpClient`]: the settings a pipeline file gives an API (pacing,
//! retries, timeout, size cap: [`ApiLimits`]), the secrets every request names, and one
//! [`ApiFailure`] per failed call (a reason code, transient or not, and a detail free of
//! secrets). The search stage's credentialed backends (Google, Brave, Reddit OAuth) and the
//! user's HTTP retriever ([`crate::retriever`]) talk through it; it never archives.

use std::time::Duration;

use crate::{AddressClass, FetchError, HttpClient, HttpConfig, HttpRequest, LongRetryAfter};
use crate::{RetryPolicy, Secret};

/// Pacing and retry settings of one API (each API client has its own).
// Serialize only so the configuration reference shows the defaults (Reddit's differ).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApiLimits {
    /// Minimum time between two requests of this backend to one host (0: unpaced).
    #[serde(default = "default_interval")]
    pub min_interval_ms: u64,
    /// Retries after the first attempt on 408, 429, 5xx and timeouts.
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// First backoff delay; doubles each retry, equal jitter, at most a minute (which also caps
    /// a Retry-After).
    #[serde(default = "default_backoff")]
    pub backoff_ms: u64,
    /// Whole-request timeout, seconds.
    #[serde(default = "default_timeout")]
    pub timeout_seconds: f64,
    /// Answers larger than this are refused, checked while streaming.
    #[serde(default = "default_max_body")]
    pub max_body_bytes: usize,
}

fn default_interval() -> u64 {
    1000
}
fn default_retries() -> u32 {
    3
}
fn default_backoff() -> u64 {
    500
}
fn default_timeout() -> f64 {
    30.0
}
fn default_max_body() -> usize {
    5 * 1024 * 1024
}

impl Default for ApiLimits {
    fn default() -> Self {
        Self {
            min_interval_ms: default_interval(),
            max_retries: default_retries(),
            backoff_ms: default_backoff(),
            timeout_seconds: default_timeout(),
            max_body_bytes: default_max_body(),
        }
    }
}

/// Why a call gave no answer: a reason code (a fetch's, `http_<status>`,
/// `malformed_response`, ...), whether it is transient (as the web layer says) and a detail free
/// of secrets. The search stage's backends fail with it too (`noisebench_search`'s
/// `SearchFailure` is this type).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct ApiFailure {
    pub code: String,
    pub transient: bool,
    pub detail: String,
}

impl ApiFailure {
    /// A permanent failure: the API's answer or setup, not the network.
    pub fn new(code: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            transient: false,
            detail: detail.into(),
        }
    }

    /// A failed fetch, transient as the web layer says.
    pub fn fetch(e: &FetchError, detail: impl Into<String>) -> Self {
        let reason = e.drop_reason();
        Self {
            code: reason.code().to_string(),
            transient: reason.is_transient(),
            detail: detail.into(),
        }
    }

    /// An HTTP error status (`http_<status>`): transient for 408, 429 and 5xx.
    pub fn http(status: u16, detail: impl Into<String>) -> Self {
        Self {
            code: format!("http_{status}"),
            transient: crate::error::http_status_is_transient(status),
            detail: detail.into(),
        }
    }

    /// An answer that is not the shape the API documents.
    pub fn malformed(detail: impl Into<String>) -> Self {
        Self::new("malformed_response", detail)
    }

    /// The same failure under a prefix (`token_http_503`), transient as it was.
    pub fn prefixed(self, prefix: &str) -> Self {
        Self {
            code: format!("{prefix}_{}", self.code),
            ..self
        }
    }

    /// The drop reason a stage records.
    pub fn reason(&self) -> noisebench_core::DropReason {
        if self.transient {
            noisebench_core::DropReason::transient(self.code.clone())
        } else {
            noisebench_core::DropReason::permanent(self.code.clone())
        }
    }
}

/// Longest wait between two attempts, and the longest Retry-After honoured as asked.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// One API's client: its limits, and the secrets removed from every error it reports.
pub struct ApiClient {
    api: &'static str,
    http: HttpClient,
    secrets: Vec<String>,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("api", &self.api)
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

impl ApiClient {
    /// `api` names it in errors; `secrets` are named on every request this client sends, on top
    /// of the request's own.
    pub fn new(
        api: &'static str,
        user_agent: &str,
        limits: ApiLimits,
        secrets: Vec<String>,
    ) -> Result<Self, String> {
        let timeout = Duration::from_secs_f64(limits.timeout_seconds.max(0.1));
        let http = HttpClient::new(HttpConfig {
            user_agent: user_agent.to_string(),
            rate_per_second: (limits.min_interval_ms > 0)
                .then(|| 1000.0 / limits.min_interval_ms as f64),
            timeout,
            connect_timeout: timeout,
            max_body_bytes: limits.max_body_bytes as u64,
            retry: RetryPolicy {
                max_retries: limits.max_retries,
                first_delay: Duration::from_millis(limits.backoff_ms),
                max_delay: MAX_WAIT,
                long_retry_after: LongRetryAfter::WaitMax,
                retry_connect_errors: false,
            },
            // Endpoints come from the pipeline file, never from data (a self-hosted or fake API
            // on 127.0.0.1 is normal), so no address class is refused.
            allow_addresses: AddressClass::ALL.to_vec(),
            ..HttpConfig::default()
        })
        .map_err(|e| format!("{api}: http client: {e}"))?;
        Ok(Self {
            api,
            http,
            secrets: secrets.into_iter().filter(|s| !s.is_empty()).collect(),
        })
    }

    /// Send (blocking), retrying 408/429/5xx and timeouts; the body of a 2xx answer.
    pub fn send(&self, request: HttpRequest) -> Result<String, ApiFailure> {
        let api = self.api;
        let request = self
            .secrets
            .iter()
            .fold(request, |r, s| r.secret(Secret::Value(s.clone())));
        // Error texts from `HttpClient` hold no URL and no named secret.
        let response = self
            .http
            .send_blocking(&request)
            .map_err(|e| ApiFailure::fetch(&e, format!("{api}: {e}")))?;
        if !response.is_success() {
            let status = response.status;
            return Err(ApiFailure::http(
                status,
                format!("{api} answered HTTP {status}: {}", response.excerpt(200)),
            ));
        }
        Ok(String::from_utf8_lossy(&response.body).into_owned())
    }
}

/// Read a required secret from the environment; the error names the variable, never a value.
pub fn env_secret(var: &str) -> Result<String, String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_string()),
        _ => Err(format!("environment variable {var} is not set")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefixed_failure_keeps_its_transience_and_detail() {
        let down = ApiFailure::http(503, "reddit answered HTTP 503").prefixed("token");
        assert_eq!(down.code, "token_http_503");
        assert!(down.transient);
        assert_eq!(down.detail, "reddit answered HTTP 503");
        assert_eq!(
            down.reason(),
            noisebench_core::DropReason::transient("token_http_503")
        );
        let refused = ApiFailure::http(401, "no").prefixed("token");
        assert_eq!(refused.code, "token_http_401");
        assert!(!refused.transient);
    }
}
