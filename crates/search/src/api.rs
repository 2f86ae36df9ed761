//! A small HTTP client for search APIs that need credentials (Google, Brave, Reddit OAuth).
//!
//! Why not `noisebench-web`: its client sends GET requests without custom headers or bodies
//! (Brave's `X-Subscription-Token`, Reddit's OAuth token POST and bearer header are impossible),
//! and it archives every URL it fetches, which for Google would write the API key (a query
//! parameter) into `work/archive/index.jsonl`. This client never archives, keeps secrets out of
//! every error detail, paces requests per backend, retries 429/5xx with exponential backoff that
//! honours Retry-After, and caps body size. Endpoints are configured by the user, so there is no
//! address guard here; page URLs from search results always go through `noisebench-web`.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::backends::SearchFailure;

/// Pacing and retry settings shared by the API backends (each backend has its own client).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiLimits {
    /// Minimum time between two requests of this backend.
    #[serde(default = "default_interval")]
    pub min_interval_ms: u64,
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    #[serde(default = "default_backoff")]
    pub backoff_ms: u64,
    #[serde(default = "default_timeout")]
    pub timeout_seconds: f64,
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

/// A request to send.
pub enum ApiRequest<'a> {
    Get {
        url: &'a url::Url,
        headers: Vec<(&'static str, String)>,
    },
    PostForm {
        url: &'a url::Url,
        basic_auth: Option<(String, String)>,
        form: Vec<(&'static str, String)>,
    },
}

pub struct ApiClient {
    backend: &'static str,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
    limits: ApiLimits,
    secrets: Vec<String>,
    last: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("backend", &self.backend)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl ApiClient {
    /// `secrets` are removed from every error detail.
    pub fn new(
        backend: &'static str,
        user_agent: &str,
        limits: ApiLimits,
        secrets: Vec<String>,
    ) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .user_agent(user_agent)
            .timeout(Duration::from_secs_f64(limits.timeout_seconds.max(0.1)))
            .no_proxy()
            .build()
            .map_err(|e| format!("http client: {e}"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("runtime: {e}"))?;
        Ok(Self {
            backend,
            client,
            runtime,
            limits,
            secrets: secrets.into_iter().filter(|s| !s.is_empty()).collect(),
            last: Mutex::new(None),
        })
    }

    fn redact(&self, text: &str) -> String {
        let mut t = text.to_string();
        for s in &self.secrets {
            t = t.replace(s.as_str(), "***");
        }
        t
    }

    fn pace(&self) {
        let wait = {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let gap = Duration::from_millis(self.limits.min_interval_ms);
            let wait = match *last {
                Some(t) if now < t + gap => t + gap - now,
                _ => Duration::ZERO,
            };
            *last = Some(now + wait);
            wait
        };
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    }

    /// Send, retrying 429/5xx and timeouts; the body of a 2xx answer.
    pub fn send(&self, request: &ApiRequest<'_>) -> Result<String, SearchFailure> {
        let mut attempt = 0u32;
        loop {
            self.pace();
            match self.once(request) {
                Ok(body) => return Ok(body),
                Err((failure, retry_after)) => {
                    let retryable = failure.code == "http_429"
                        || failure.code.starts_with("http_5")
                        || failure.code == "timeout";
                    if !retryable || attempt >= self.limits.max_retries {
                        return Err(failure);
                    }
                    let backoff = Duration::from_millis(
                        self.limits.backoff_ms.saturating_mul(1 << attempt.min(10)),
                    );
                    let wait = retry_after.unwrap_or(backoff).min(Duration::from_secs(60));
                    tracing::debug!(backend = self.backend, code = %failure.code, ?wait, "retrying");
                    std::thread::sleep(wait);
                    attempt += 1;
                }
            }
        }
    }

    fn once(&self, request: &ApiRequest<'_>) -> Result<String, (SearchFailure, Option<Duration>)> {
        let builder = match request {
            ApiRequest::Get { url, headers } => {
                let mut b = self.client.get((*url).clone());
                for (k, v) in headers {
                    b = b.header(*k, v);
                }
                b
            }
            ApiRequest::PostForm {
                url,
                basic_auth,
                form,
            } => {
                let mut b = self.client.post((*url).clone()).form(form);
                if let Some((user, pass)) = basic_auth {
                    b = b.basic_auth(user, Some(pass));
                }
                b
            }
        };
        let backend = self.backend;
        let max = self.limits.max_body_bytes;
        let fut = async move {
            let resp = builder.send().await.map_err(|e| {
                let code = if e.is_timeout() {
                    "timeout"
                } else if e.is_connect() {
                    "connect_failed"
                } else {
                    "request_failed"
                };
                // reqwest errors name the URL, which may carry a key: keep only the kind.
                (SearchFailure::new(code, format!("{backend}: {code}")), None)
            })?;
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            if resp.content_length().is_some_and(|n| n as usize > max) {
                return Err((
                    SearchFailure::new(
                        "too_large",
                        format!("{backend}: body larger than {max} bytes"),
                    ),
                    None,
                ));
            }
            let mut body = Vec::new();
            let mut resp = resp;
            loop {
                match resp.chunk().await {
                    Ok(Some(c)) => {
                        body.extend_from_slice(&c);
                        if body.len() > max {
                            return Err((
                                SearchFailure::new(
                                    "too_large",
                                    format!("{backend}: body larger than {max} bytes"),
                                ),
                                None,
                            ));
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        let code = if e.is_timeout() {
                            "timeout"
                        } else {
                            "request_failed"
                        };
                        return Err((SearchFailure::new(code, format!("{backend}: {code}")), None));
                    }
                }
            }
            let text = String::from_utf8_lossy(&body).into_owned();
            if !(200..300).contains(&status) {
                let excerpt: String = text.chars().take(200).collect();
                return Err((
                    SearchFailure::new(
                        format!("http_{status}"),
                        format!("{backend} answered HTTP {status}: {excerpt}"),
                    ),
                    retry_after,
                ));
            }
            Ok(text)
        };
        let result = if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| match s.spawn(|| self.runtime.block_on(fut)).join() {
                Ok(v) => v,
                Err(p) => std::panic::resume_unwind(p),
            })
        } else {
            self.runtime.block_on(fut)
        };
        result.map_err(|(f, ra)| (SearchFailure::new(f.code, self.redact(&f.detail)), ra))
    }
}

/// Read a required secret from the environment; the error names the variable, never a value.
pub fn env_secret(var: &str) -> Result<String, String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_string()),
        _ => Err(format!("environment variable {var} is not set")),
    }
}
