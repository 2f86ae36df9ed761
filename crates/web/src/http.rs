//! [`HttpClient`]: requests that are not page fetches (search APIs, LLM endpoints), and the
//! transport [`crate::Web`] fetches pages over.
//!
//! A request has a method, headers and a body, and names its secrets (an API key's value, the
//! query parameter that carries one, a bearer token, basic-auth credentials). Secrets reach the
//! server and nothing else: no error text, log line or response excerpt this module makes holds
//! one, an error never holds the request URL at all, and nothing is archived. Every attempt goes
//! through the same address guard, per-host pacing, timeouts and body cap as a page fetch;
//! retries follow a [`RetryPolicy`].

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use url::{Host, Url};

use crate::error::{FetchError, WebError};
use crate::guard::{AddressClass, BlockedAddress, GuardedResolver, check_ip};
use crate::retry::{RetryPolicy, parse_retry_after};

/// What replaces a secret in any text this crate produces.
pub const REDACTED: &str = "[REDACTED]";

/// The user agent when a caller names none.
pub(crate) const DEFAULT_USER_AGENT: &str = concat!(
    "noisebench/",
    env!("CARGO_PKG_VERSION"),
    " (+https://github.com/noisebench/noisebench)"
);

/// How an [`HttpClient`] connects, paces and retries.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpConfig {
    pub user_agent: String,
    /// Requests per second to one host (host, or host:port when the URL names a port); `None`:
    /// unpaced (a caller with limits of its own, like the LLM layer's RPM limiter).
    pub rate_per_second: Option<f64>,
    /// Per-host overrides of `rate_per_second`.
    pub host_rates: BTreeMap<String, f64>,
    /// Whole-attempt timeout: connecting, sending, the server's work and reading the body.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Bodies larger than this fail as `too_large`, checked while streaming.
    pub max_body_bytes: u64,
    pub retry: RetryPolicy,
    /// Internal address classes that may be connected to. Empty (the default) refuses them all,
    /// as for page fetches; a client for endpoints the operator configured (a local LLM server,
    /// a search API on the private network) names the classes it needs.
    pub allow_addresses: Vec<AddressClass>,
    /// Idle connections kept per host (`None`: reqwest's default).
    pub max_idle_per_host: Option<usize>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            user_agent: DEFAULT_USER_AGENT.into(),
            rate_per_second: Some(1.0),
            host_rates: BTreeMap::new(),
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            max_body_bytes: 10 * 1024 * 1024,
            retry: RetryPolicy::default(),
            allow_addresses: Vec::new(),
            max_idle_per_host: None,
        }
    }
}

impl HttpConfig {
    fn validate(&self) -> Result<(), noisebench_core::ConfigError> {
        use noisebench_core::ConfigError;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if self.rate_per_second.is_some_and(|r| !positive(r)) {
            return Err(ConfigError::new("rate_per_second", "must be > 0"));
        }
        if let Some((host, _)) = self.host_rates.iter().find(|(_, r)| !positive(**r)) {
            return Err(ConfigError::new(
                format!("hosts.{host}.rate_per_second"),
                "must be > 0",
            ));
        }
        if self.timeout.is_zero() || self.connect_timeout.is_zero() {
            return Err(ConfigError::new("timeout", "timeouts must be > 0"));
        }
        Ok(())
    }
}

/// A secret a request carries, kept out of every text but the request itself.
#[derive(Clone, PartialEq, Eq)]
pub enum Secret {
    /// A value (an API key, a token, a client secret), wherever it appears.
    Value(String),
    /// The value of this query parameter of the request URL (Google's `key`).
    QueryParam(String),
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Secret::Value(_) => f.write_str("Value([REDACTED])"),
            Secret::QueryParam(name) => write!(f, "QueryParam({name:?})"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

/// One request: built with the methods below, sent by [`HttpClient::send`].
#[derive(Clone)]
pub struct HttpRequest {
    method: Method,
    url: Url,
    headers: Vec<(String, String)>,
    body: Option<(String, Vec<u8>)>,
    basic_auth: Option<(String, String)>,
    secrets: Vec<Secret>,
}

impl std::fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never header values or the body: either may hold a secret the caller did not name.
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.redacted_url())
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("body_bytes", &self.body.as_ref().map(|(_, b)| b.len()))
            .finish_non_exhaustive()
    }
}

impl HttpRequest {
    pub fn new(method: Method, url: Url) -> Self {
        Self {
            method,
            url,
            headers: Vec::new(),
            body: None,
            basic_auth: None,
            secrets: Vec::new(),
        }
    }

    pub fn get(url: Url) -> Self {
        Self::new(Method::Get, url)
    }

    pub fn post(url: Url) -> Self {
        Self::new(Method::Post, url)
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    /// A header whose value is a secret (Brave's `X-Subscription-Token`).
    pub fn secret_header(self, name: &str, value: impl Into<String>) -> Self {
        let value = value.into();
        self.secret(Secret::Value(value.clone()))
            .header(name, value)
    }

    /// `Authorization: Bearer <token>`, the token a secret.
    pub fn bearer_auth(self, token: &str) -> Self {
        self.secret(Secret::Value(token.to_string()))
            .header("authorization", format!("Bearer {token}"))
    }

    /// HTTP basic authentication, both parts secrets.
    pub fn basic_auth(mut self, user: &str, password: &str) -> Self {
        self.basic_auth = Some((user.to_string(), password.to_string()));
        self.secret(Secret::Value(user.to_string()))
            .secret(Secret::Value(password.to_string()))
    }

    pub fn secret(mut self, secret: Secret) -> Self {
        self.secrets.push(secret);
        self
    }

    /// A JSON body (`content-type: application/json`).
    pub fn json(self, value: &serde_json::Value) -> Self {
        // Serialising a `Value` cannot fail: its map keys are strings.
        let bytes = serde_json::to_vec(value).unwrap_or_default();
        self.bytes("application/json", bytes)
    }

    /// A form body (`application/x-www-form-urlencoded`).
    pub fn form(self, pairs: &[(&str, &str)]) -> Self {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        self.bytes("application/x-www-form-urlencoded", body.into_bytes())
    }

    /// A body of any type.
    pub fn bytes(mut self, content_type: &str, bytes: Vec<u8>) -> Self {
        self.body = Some((content_type.to_string(), bytes));
        self
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The URL with every secret query parameter's value replaced: for logs.
    pub fn redacted_url(&self) -> String {
        self.redactor().redact_url(&self.url)
    }

    fn redactor(&self) -> Redactor {
        let mut values = Vec::new();
        let mut params = Vec::new();
        for s in &self.secrets {
            match s {
                Secret::Value(v) => values.push(v.clone()),
                Secret::QueryParam(name) => {
                    params.push(name.clone());
                    values.extend(
                        self.url
                            .query_pairs()
                            .filter(|(k, _)| k == name.as_str())
                            .map(|(_, v)| v.into_owned()),
                    );
                }
            }
        }
        Redactor::new(values, params)
    }
}

/// Removes a request's secrets from text: each value as written, percent-encoded and
/// form-encoded (the forms a server echoing a URL or a form uses).
#[derive(Debug, Default)]
struct Redactor {
    /// Longest first, so a secret containing another is replaced whole.
    values: Vec<String>,
    params: Vec<String>,
}

impl Redactor {
    fn new(values: Vec<String>, params: Vec<String>) -> Self {
        let mut all = Vec::new();
        for v in values.into_iter().filter(|v| !v.is_empty()) {
            let percent = url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
            let spaces_as_pct = percent.replace('+', "%20");
            all.extend([v, percent, spaces_as_pct]);
        }
        all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        all.dedup();
        Self {
            values: all,
            params,
        }
    }

    fn redact(&self, text: &str) -> String {
        let mut t = text.to_string();
        for v in &self.values {
            if t.contains(v.as_str()) {
                t = t.replace(v.as_str(), REDACTED);
            }
        }
        t
    }

    fn redact_url(&self, url: &Url) -> String {
        let mut shown = url.clone();
        if !self.params.is_empty() && url.query().is_some() {
            let pairs: Vec<(String, String)> = url
                .query_pairs()
                .map(|(k, v)| {
                    let v = if self.params.iter().any(|p| p == &k) {
                        REDACTED.to_string()
                    } else {
                        v.into_owned()
                    };
                    (k.into_owned(), v)
                })
                .collect();
            shown.query_pairs_mut().clear().extend_pairs(pairs);
        }
        self.redact(shown.as_str())
    }
}

/// An answer, whatever its status (the caller decides what a 404 means). Its body is as the
/// server sent it; [`HttpResponse::excerpt`] is the text safe to put in an error or a log.
#[derive(Clone)]
pub struct HttpResponse {
    pub status: u16,
    /// Every header with a text value, lower-case names; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
    /// When the response headers arrived, RFC 3339 UTC.
    pub fetched_at: String,
    /// Attempts made, this one included.
    pub attempts: u32,
    redactor: Arc<Redactor>,
}

impl std::fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpResponse")
            .field("status", &self.status)
            .field("body_bytes", &self.body.len())
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

impl HttpResponse {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The server's Retry-After, if it sent a readable one.
    pub fn retry_after(&self) -> Option<Duration> {
        self.headers
            .get("retry-after")
            .and_then(|v| parse_retry_after(v))
    }

    /// The body as text (lossy UTF-8), the request's secrets removed, then cut to `max_chars`
    /// (removed first, so a cut never leaves part of a secret).
    pub fn excerpt(&self, max_chars: usize) -> String {
        let text = self.redactor.redact(&String::from_utf8_lossy(&self.body));
        text.chars().take(max_chars).collect()
    }
}

/// Per-host pacing: one governor limiter per host key, burst 1, so requests to a host are
/// spaced, never bunched.
#[derive(Debug)]
struct Pacer {
    rate: Option<f64>,
    host_rates: BTreeMap<String, f64>,
    limiters: Mutex<HashMap<String, Option<Arc<DefaultDirectRateLimiter>>>>,
}

impl Pacer {
    async fn wait(&self, url: &Url) {
        let key = host_key(url);
        let limiter = {
            let mut map = self
                .limiters
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            map.entry(key.clone())
                .or_insert_with(|| {
                    let rate = self.host_rates.get(&key).copied().or(self.rate)?;
                    let quota = Quota::with_period(Duration::from_secs_f64(1.0 / rate))
                        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
                        .allow_burst(NonZeroU32::MIN);
                    Some(Arc::new(RateLimiter::direct(quota)))
                })
                .clone()
        };
        if let Some(limiter) = limiter {
            limiter.until_ready().await;
        }
    }
}

/// The rate-limit key: host, plus `:port` when the URL names one.
pub fn host_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    }
}

/// A client for requests that are not page fetches. Build once per caller (a search backend,
/// an LLM model); cheap to share by reference across tasks.
///
/// The async methods run on the caller's tokio runtime; [`HttpClient::send_blocking`] drives a
/// small runtime of its own, made on first use (also from inside another runtime: it then
/// blocks on a scoped thread).
pub struct HttpClient {
    config: HttpConfig,
    client: reqwest::Client,
    pacer: Pacer,
    runtime: OnceLock<Result<tokio::runtime::Runtime, String>>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Drop for HttpClient {
    fn drop(&mut self) {
        // Dropping a runtime inside an async context panics; shutting down in the background does not.
        if let Some(Ok(rt)) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl HttpClient {
    pub fn new(config: HttpConfig) -> Result<Self, WebError> {
        config.validate()?;
        let mut builder = reqwest::Client::builder()
            .user_agent(config.user_agent.clone())
            // Redirects would carry headers (and their secrets) to a host nobody named; a page
            // fetch follows them itself, hop by hop, checking each.
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would connect to addresses the guard never saw.
            .no_proxy()
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .dns_resolver(Arc::new(GuardedResolver {
                allow: config.allow_addresses.clone(),
            }));
        if let Some(n) = config.max_idle_per_host {
            builder = builder.pool_max_idle_per_host(n);
        }
        let client = builder
            .build()
            .map_err(|e| WebError::Client(e.without_url().to_string()))?;
        Ok(Self {
            pacer: Pacer {
                rate: config.rate_per_second,
                host_rates: config.host_rates.clone(),
                limiters: Mutex::new(HashMap::new()),
            },
            config,
            client,
            runtime: OnceLock::new(),
        })
    }

    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// Send, retrying as the [`RetryPolicy`] says (and a 403 that carries a Retry-After, a rate
    /// limit by another name). A response is returned whatever its status:
    /// after the last retry, the last response received. Errors are failures to get any response.
    pub async fn send(&self, request: &HttpRequest) -> Result<HttpResponse, FetchError> {
        let redactor = Arc::new(request.redactor());
        check_literal(request, &self.config.allow_addresses, &redactor)?;
        let mut schedule = self.config.retry.schedule();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let outcome = self.attempt(request, &redactor, attempts).await;
            let retry_after = match &outcome {
                Ok(r) if RetryPolicy::retries_status(r.status) => r.retry_after(),
                // A 403 that says when to come back is a rate limit, not a refusal: the SEC
                // answers clients over its fair-access rate this way.
                Ok(r) if r.status == 403 && r.retry_after().is_some() => r.retry_after(),
                Err(FetchError::Timeout(_)) => None,
                Err(FetchError::Connect(_)) if self.config.retry.retry_connect_errors => None,
                _ => return outcome,
            };
            let Some(delay) = schedule.next_delay(retry_after) else {
                return outcome;
            };
            tracing::debug!(
                url = %redactor.redact_url(&request.url),
                outcome = %match &outcome {
                    Ok(r) => format!("HTTP {}", r.status),
                    Err(e) => e.code(),
                },
                ?delay,
                "retrying"
            );
            tokio::time::sleep(delay).await;
        }
    }

    /// One attempt, no retries: for a caller that retries itself because each attempt may go
    /// elsewhere (the LLM layer's endpoint spreading), using [`RetryPolicy::schedule`] for the
    /// delays. Paced, guarded, capped and redacted like [`HttpClient::send`].
    pub async fn send_once(&self, request: &HttpRequest) -> Result<HttpResponse, FetchError> {
        let redactor = Arc::new(request.redactor());
        check_literal(request, &self.config.allow_addresses, &redactor)?;
        self.attempt(request, &redactor, 1).await
    }

    /// [`HttpClient::send`], blocking.
    pub fn send_blocking(&self, request: &HttpRequest) -> Result<HttpResponse, FetchError> {
        let rt = self
            .runtime
            .get_or_init(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("runtime: {e}"))
            })
            .as_ref()
            .map_err(|e| FetchError::Request(e.clone()))?;
        let fut = self.send(request);
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| match s.spawn(|| rt.block_on(fut)).join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            })
        } else {
            rt.block_on(fut)
        }
    }

    async fn attempt(
        &self,
        request: &HttpRequest,
        redactor: &Arc<Redactor>,
        attempts: u32,
    ) -> Result<HttpResponse, FetchError> {
        self.pacer.wait(&request.url).await;
        let method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
        };
        let mut builder = self.client.request(method, request.url.clone());
        for (name, value) in &request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        if let Some((user, password)) = &request.basic_auth {
            builder = builder.basic_auth(user, Some(password));
        }
        if let Some((content_type, bytes)) = &request.body {
            builder = builder
                .header(reqwest::header::CONTENT_TYPE, content_type.as_str())
                .body(bytes.clone());
        }
        let mut response = builder
            .send()
            .await
            .map_err(|e| transport_error(e, redactor))?;
        let fetched_at = now_rfc3339();
        let status = response.status().as_u16();
        let mut headers: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in response.headers() {
            if let Ok(v) = value.to_str() {
                headers
                    .entry(name.as_str().to_string())
                    .and_modify(|old| {
                        old.push_str(", ");
                        old.push_str(v);
                    })
                    .or_insert_with(|| v.to_string());
            }
        }
        let limit = self.config.max_body_bytes;
        if response.content_length().is_some_and(|len| len > limit) {
            return Err(FetchError::TooLarge { limit });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| transport_error(e, redactor))?
        {
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(FetchError::TooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(HttpResponse {
            status,
            headers,
            body,
            fetched_at,
            attempts,
            redactor: Arc::clone(redactor),
        })
    }
}

/// IP-literal hosts never reach the resolver: check them here.
fn check_literal(
    request: &HttpRequest,
    allow: &[AddressClass],
    redactor: &Redactor,
) -> Result<(), FetchError> {
    let url = &request.url;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(FetchError::BadUrl(redactor.redact_url(url)));
    }
    let literal = match url.host() {
        Some(Host::Ipv4(ip)) => Some(ip.into()),
        Some(Host::Ipv6(ip)) => Some(ip.into()),
        _ => None,
    };
    if let Some(ip) = literal {
        check_ip(url.host_str().unwrap_or(""), ip, allow)
            .map_err(|b| FetchError::BlockedAddress(b.to_string()))?;
    }
    Ok(())
}

/// A reqwest failure as a [`FetchError`] whose detail is the error and its causes, without the
/// URL (it may carry a key) and with the request's secrets removed.
fn transport_error(err: reqwest::Error, redactor: &Redactor) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    while let Some(e) = source {
        if let Some(blocked) = e.downcast_ref::<BlockedAddress>() {
            return FetchError::BlockedAddress(redactor.redact(&blocked.to_string()));
        }
        source = e.source();
    }
    let (timeout, connect, builder) = (err.is_timeout(), err.is_connect(), err.is_builder());
    let err = err.without_url();
    let mut detail = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(e) = source {
        detail.push_str(": ");
        detail.push_str(&e.to_string());
        source = e.source();
    }
    let detail = redactor.redact(&detail);
    if timeout {
        FetchError::Timeout(detail)
    } else if connect {
        FetchError::Connect(detail)
    } else if builder {
        FetchError::BadUrl(detail)
    } else {
        FetchError::Request(detail)
    }
}

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_leave_urls_and_texts() {
        let url = Url::parse("https://api.example/v1?key=s3cr%2Bt%20k&q=lemon+water").unwrap();
        let req = HttpRequest::get(url)
            .secret(Secret::QueryParam("key".into()))
            .bearer_auth("tok-123456");
        let shown = req.redacted_url();
        assert!(shown.contains("key=%5BREDACTED%5D"), "{shown}");
        assert!(shown.contains("q=lemon+water"), "{shown}");
        let r = req.redactor();
        for echoed in [
            "bad key s3cr+t k",
            "bad key s3cr%2Bt+k",
            "bad key s3cr%2Bt%20k",
            "Authorization: Bearer tok-123456",
        ] {
            let out = r.redact(echoed);
            assert!(out.contains(REDACTED), "{out}");
            assert!(!out.contains("s3cr") && !out.contains("tok-1"), "{out}");
        }
        let debug = format!("{req:?}");
        assert!(
            !debug.contains("s3cr") && !debug.contains("tok-1"),
            "{debug}"
        );
    }

    #[test]
    fn excerpts_remove_secrets_before_cutting() {
        let req = HttpRequest::get(Url::parse("http://h/").unwrap())
            .secret(Secret::Value("abcdefgh".into()));
        let resp = HttpResponse {
            status: 401,
            headers: BTreeMap::new(),
            body: b"key abcdefgh refused".to_vec(),
            fetched_at: String::new(),
            attempts: 1,
            redactor: Arc::new(req.redactor()),
        };
        // Cut inside the key: still no part of it.
        assert_eq!(resp.excerpt(8), "key [RED");
        assert_eq!(resp.excerpt(100), "key [REDACTED] refused");
    }
}
