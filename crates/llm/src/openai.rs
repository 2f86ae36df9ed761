//! The `openai` backend: chat completions and embeddings against OpenAI-compatible endpoints.
//!
//! Per model: a concurrency bound (semaphore), a requests-per-minute limiter and a
//! tokens-per-minute limiter (governor), endpoints chosen by fewest requests in flight, a failing
//! endpoint rested, and retries on 408, 429, 5xx, timeouts, connection errors and broken
//! envelopes. Other 4xx fail at once.
//!
//! Each attempt goes out through `noisebench-web`'s [`HttpClient`] (timeouts, body cap, the key
//! as a named secret, proxies ignored) and waits as its [`RetryPolicy`] says (exponential backoff
//! with equal jitter, Retry-After as a floor). The loop over attempts stays here because every
//! attempt passes the RPM/TPM limiters again and may go to another endpoint, and a Retry-After
//! pauses its endpoint for every other request too, which is what keeps a 429 from turning into
//! a storm.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use noisebench_web::{
    AddressClass, FetchError, HttpClient, HttpConfig, HttpRequest, LongRetryAfter, RetryPolicy,
};
use serde::Deserialize;
use tokio::sync::Semaphore;

use crate::config::ModelConfig;
use crate::error::{LlmError, redact};
use crate::prompt::Message;

/// The run's spending against `max_cost`, shared by every model.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    pub max: Option<f64>,
    spent: Mutex<f64>,
    /// Set once a call was refused: the run is incomplete and must be resumed.
    refused: std::sync::atomic::AtomicBool,
}

impl Budget {
    pub fn new(max: Option<f64>) -> Self {
        Self {
            max,
            spent: Mutex::new(0.0),
            refused: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn spent(&self) -> f64 {
        *self.spent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a call has been refused for the budget.
    pub fn refused(&self) -> bool {
        self.refused.load(Ordering::SeqCst)
    }

    pub(crate) fn add(&self, usd: f64) {
        *self.spent.lock().unwrap_or_else(|e| e.into_inner()) += usd;
    }

    /// Refuse a new call once the spending has reached the maximum.
    pub fn check(&self) -> Result<(), LlmError> {
        match self.max {
            Some(max) if self.spent() >= max => {
                self.refused.store(true, Ordering::SeqCst);
                Err(LlmError::BudgetExhausted {
                    spent: self.spent(),
                    max,
                })
            }
            _ => Ok(()),
        }
    }
}

/// What one successful HTTP exchange gave.
#[derive(Debug, Clone)]
pub(crate) struct Reply<T> {
    pub value: T,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Of `tokens_in`, those the provider read from its prompt cache.
    pub tokens_cached: u64,
    pub endpoint: String,
}

/// Prompt, completion and prompt-cache tokens: what a server's `usage` reports for one
/// exchange, or those added up over an item's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TokenUsage {
    pub input: u64,
    pub output: u64,
    /// Of `input`, read from the provider's prompt cache
    /// (`usage.prompt_tokens_details.cached_tokens`; 0 when not reported).
    pub cached: u64,
}

impl std::ops::AddAssign for TokenUsage {
    fn add_assign(&mut self, other: TokenUsage) {
        self.input += other.input;
        self.output += other.output;
        self.cached += other.cached;
    }
}

impl<T> Reply<T> {
    /// The exchange's tokens.
    pub(crate) fn tokens(&self) -> TokenUsage {
        TokenUsage {
            input: self.tokens_in,
            output: self.tokens_out,
            cached: self.tokens_cached,
        }
    }
}

/// What calls cost in attempts and time, added up over every request an item makes (retries and
/// re-asks) whether it ends in an answer or not, because a failure's attempts and waits are
/// spent too.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Effort {
    pub attempts: u32,
    /// Inside HTTP attempts: sending, the server's work, reading the body.
    pub latency: Duration,
    /// Everything else between asking and the outcome: the concurrency permit, RPM/TPM limits,
    /// endpoint pauses and retry backoff. Kept apart from `latency` so a slow limiter does not
    /// read as a slow server.
    pub queue: Duration,
}

struct Endpoint {
    name: String,
    base: String,
    in_flight: AtomicUsize,
    failures: AtomicU32,
    state: Mutex<EndpointState>,
}

#[derive(Default)]
struct EndpointState {
    /// Rested after repeated failures: avoided while another endpoint is available.
    rested_until: Option<Instant>,
    /// Paused by a Retry-After: no request is sent to it before then.
    paused_until: Option<Instant>,
}

/// A model and everything that limits how it is called.
pub(crate) struct OpenAiModel {
    pub key: String,
    pub model_id: String,
    pub config: ModelConfig,
    endpoints: Vec<Endpoint>,
    http: HttpClient,
    api_key: Option<String>,
    semaphore: Semaphore,
    /// Items between their first request and their answer's storing, at most
    /// `max_concurrency`: held across the call, the parse and the cache write, so a process
    /// killed at any moment loses (and a resumed run asks again) at most that many answers.
    pub(crate) item_slots: Semaphore,
    rpm: Option<DefaultDirectRateLimiter>,
    tpm: Option<(DefaultDirectRateLimiter, u32)>,
    budget: Arc<Budget>,
    /// What the first endpoint's server says of itself, asked once ([`OpenAiModel::server`]).
    server: std::sync::OnceLock<crate::server::ServerInfo>,
}

impl std::fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key, never the URLs.
        f.debug_struct("OpenAiModel")
            .field("key", &self.key)
            .field("model_id", &self.model_id)
            .field(
                "endpoints",
                &self.endpoints.iter().map(|e| &e.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Largest response body accepted. Generous: an embeddings answer for a large batch of long
/// vectors runs to tens of megabytes; the cap only stops a runaway server filling memory.
const MAX_BODY_BYTES: u64 = 512 * 1024 * 1024;

/// Count tokens with cl100k_base (a real BPE; close enough for limits on other tokenizers).
pub fn estimate_tokens(messages: &[Message]) -> u64 {
    let bpe = tiktoken_rs::cl100k_base_singleton();
    messages
        .iter()
        // ~4 tokens of chat framing per message.
        .map(|m| bpe.encode_ordinary(&m.content).len() as u64 + 4)
        .sum::<u64>()
        + 3
}

pub(crate) fn estimate_text_tokens(texts: &[String]) -> u64 {
    let bpe = tiktoken_rs::cl100k_base_singleton();
    texts
        .iter()
        .map(|t| bpe.encode_ordinary(t).len() as u64)
        .sum()
}

enum Attempt<T> {
    Done(T, Option<TokenUsage>),
    /// Worth another attempt: why, and the server's Retry-After (the schedule's floor).
    Retry(String, Option<Duration>),
    Fail(LlmError),
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    /// OpenAI (and DeepSeek, vLLM with prefix caching) report the prompt tokens served from
    /// the prompt cache here.
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(Deserialize)]
struct PromptTokensDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl Usage {
    fn tokens(&self) -> TokenUsage {
        TokenUsage {
            input: self.prompt_tokens,
            output: self.completion_tokens,
            cached: self
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0)
                .min(self.prompt_tokens),
        }
    }
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<ChatChoice>,
    usage: Option<Usage>,
}
#[derive(Deserialize)]
struct ChatChoice {
    message: ChatMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

/// A chat completion's text and why the model stopped.
#[derive(Debug, Clone)]
pub(crate) struct Completion {
    pub content: String,
    /// `finish_reason: "length"`: the answer ran into `max_tokens` and was cut off.
    pub truncated: bool,
}
#[derive(Deserialize)]
struct ChatMessage {
    content: Option<String>,
}

#[derive(Deserialize)]
struct EmbeddingResponse {
    data: Vec<EmbeddingItem>,
    usage: Option<Usage>,
}
#[derive(Deserialize)]
struct EmbeddingItem {
    index: usize,
    embedding: Vec<f32>,
}

impl OpenAiModel {
    pub fn new(key: &str, config: &ModelConfig, budget: Arc<Budget>) -> Result<Self, LlmError> {
        let api_key = match &config.api_key_env {
            None => None,
            Some(var) => match std::env::var(var) {
                Ok(v) if !v.is_empty() => Some(v),
                // The variable's name is safe to show; its value is never read into a message.
                _ => {
                    return Err(LlmError::Config(format!(
                        "llm.models.{key}.api_key_env: environment variable `{var}` is not set"
                    )));
                }
            },
        };
        let http = HttpClient::new(HttpConfig {
            // The RPM/TPM limiters below pace this model; a per-host pace would only add to them.
            rate_per_second: None,
            timeout: Duration::from_secs_f64(config.timeout_secs),
            connect_timeout: Duration::from_secs_f64(config.timeout_secs.min(30.0)),
            max_body_bytes: MAX_BODY_BYTES,
            retry: RetryPolicy {
                max_retries: config.max_retries,
                first_delay: Duration::from_millis(config.retry_base_ms),
                max_delay: Duration::from_millis(config.retry_max_ms),
                long_retry_after: LongRetryAfter::WaitMax,
                retry_connect_errors: true,
            },
            // Endpoints come from the operator's `[llm]` table, never from data: a model served
            // on 127.0.0.1, the private network or a CGNAT VPN address (Tailscale) is normal.
            allow_addresses: AddressClass::ALL.to_vec(),
            max_idle_per_host: Some(config.max_concurrency),
            ..HttpConfig::default()
        })
        .map_err(|e| LlmError::Config(format!("http client: {e}")))?;
        let rpm = config.rpm.map(|n| {
            let (rate, burst) = rpm_quota(n);
            RateLimiter::direct(Quota::per_minute(rate).allow_burst(burst))
        });
        // Tokens come in lumps (one request's worth), so the bucket holds 10 s of tokens.
        let tpm = config.tpm.map(|n| {
            let burst = (n / 6).max(1);
            let q = Quota::per_minute(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN))
                .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN));
            (RateLimiter::direct(q), burst)
        });
        let endpoints = config
            .endpoints
            .iter()
            .map(|e| Endpoint {
                name: e.name.clone(),
                base: e.url.trim_end_matches('/').to_string(),
                in_flight: AtomicUsize::new(0),
                failures: AtomicU32::new(0),
                state: Mutex::new(EndpointState::default()),
            })
            .collect();
        Ok(Self {
            key: key.to_string(),
            model_id: config.name.clone().unwrap_or_else(|| key.to_string()),
            config: config.clone(),
            endpoints,
            http,
            api_key,
            semaphore: Semaphore::new(config.max_concurrency),
            item_slots: Semaphore::new(config.max_concurrency),
            rpm,
            tpm,
            budget,
            server: std::sync::OnceLock::new(),
        })
    }

    /// What the first endpoint's server says of itself (context size, chat template), asked
    /// once per handle: llama.cpp's `GET /props` (beside `/v1`), then `GET <base>/models`
    /// (vLLM's `max_model_len`). One attempt each with a short timeout; a server that says
    /// nothing (an API, an older server) gives an empty answer, never an error.
    pub(crate) fn server(&self) -> &crate::server::ServerInfo {
        self.server.get_or_init(|| {
            let Some(e) = self.endpoints.first() else {
                return crate::server::ServerInfo::default();
            };
            let client = HttpClient::new(HttpConfig {
                rate_per_second: None,
                timeout: Duration::from_secs(5),
                connect_timeout: Duration::from_secs(3),
                max_body_bytes: 4 * 1024 * 1024,
                retry: RetryPolicy {
                    max_retries: 0,
                    ..RetryPolicy::default()
                },
                allow_addresses: AddressClass::ALL.to_vec(),
                ..HttpConfig::default()
            });
            let Ok(client) = client else {
                return crate::server::ServerInfo::default();
            };
            let get = |url: String| -> Option<serde_json::Value> {
                let url = noisebench_web::Url::parse(&url).ok()?;
                let mut request = HttpRequest::get(url);
                if let Some(k) = &self.api_key {
                    request = request.bearer_auth(k);
                }
                let r = client.send_blocking(&request).ok()?;
                r.is_success()
                    .then(|| serde_json::from_slice(&r.body).ok())
                    .flatten()
            };
            let root = e.base.strip_suffix("/v1").unwrap_or(&e.base);
            let props = get(format!("{root}/props"));
            let models = get(format!("{}/models", e.base));
            crate::server::ServerInfo::read(props.as_ref(), models.as_ref(), &self.model_id)
        })
    }

    /// The model's context size: `context_tokens` when configured, else what its server says.
    pub(crate) fn context_tokens(&self) -> Option<u32> {
        self.config
            .context_tokens
            .or_else(|| self.server().context_tokens)
    }

    pub(crate) fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    /// Fewest in flight among endpoints not rested (ties: config order); if all are rested, the
    /// one whose rest ends first.
    fn pick(&self) -> &Endpoint {
        let now = Instant::now();
        let rested = |e: &Endpoint| {
            e.state
                .lock()
                .map(|s| s.rested_until.is_some_and(|t| t > now))
                .unwrap_or(false)
        };
        let available = self
            .endpoints
            .iter()
            .filter(|e| !rested(e))
            .min_by_key(|e| e.in_flight.load(Ordering::SeqCst));
        available.unwrap_or_else(|| {
            self.endpoints
                .iter()
                .min_by_key(|e| {
                    e.state
                        .lock()
                        .ok()
                        .and_then(|s| s.rested_until)
                        .unwrap_or(now)
                })
                .unwrap_or(&self.endpoints[0])
        })
    }

    fn record_failure(&self, e: &Endpoint) {
        let n = e.failures.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.config.rest_after_failures.max(1) && self.endpoints.len() > 1 {
            e.failures.store(0, Ordering::SeqCst);
            if let Ok(mut s) = e.state.lock() {
                s.rested_until =
                    Some(Instant::now() + Duration::from_secs_f64(self.config.rest_secs));
            }
            tracing::warn!(endpoint = %e.name, "endpoint keeps failing: rested");
        }
    }

    fn record_success(&self, e: &Endpoint) {
        e.failures.store(0, Ordering::SeqCst);
    }

    fn pause(&self, e: &Endpoint, d: Duration) {
        if let Ok(mut s) = e.state.lock() {
            let until = Instant::now() + d;
            if s.paused_until.is_none_or(|p| p < until) {
                s.paused_until = Some(until);
            }
        }
    }

    fn paused_for(&self, e: &Endpoint) -> Option<Duration> {
        let s = e.state.lock().ok()?;
        s.paused_until
            .and_then(|p| p.checked_duration_since(Instant::now()))
    }

    async fn wait_limits(&self, tokens: u64) {
        if let Some(rpm) = &self.rpm {
            rpm.until_ready().await;
        }
        if let Some((tpm, burst)) = &self.tpm {
            let n = (tokens.min(*burst as u64) as u32).max(1);
            let n = NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
            // n <= burst by construction, so this cannot be InsufficientCapacity.
            let _ = tpm.until_n_ready(n).await;
        }
    }

    /// Tokens used beyond the estimate are taken from the bucket afterwards (they delay later
    /// calls); tokens estimated but not used are not given back (governor cannot refund).
    fn reconcile(self: &Arc<Self>, estimated: u64, actual: u64) {
        if actual <= estimated {
            return;
        }
        if let Some((_, burst)) = &self.tpm {
            let extra = (actual - estimated).min(*burst as u64) as u32;
            if let Some(n) = NonZeroU32::new(extra) {
                let me = Arc::clone(self);
                tokio::spawn(async move {
                    if let Some((tpm, _)) = &me.tpm {
                        let _ = tpm.until_n_ready(n).await;
                    }
                });
            }
        }
    }

    /// POST `body` to `<endpoint>/<path>` with retries; `parse` turns a 200 body into a value and
    /// optional usage. Adds what it took to `effort`.
    #[allow(clippy::too_many_arguments)]
    async fn post<T>(
        self: &Arc<Self>,
        path: &str,
        body: &serde_json::Value,
        estimated_tokens: u64,
        new_call: bool,
        parse: impl Fn(&[u8]) -> Result<(T, Option<TokenUsage>), String>,
        effort: &mut Effort,
    ) -> Result<Reply<T>, LlmError> {
        let began = Instant::now();
        let in_http_before = effort.latency;
        let r = self
            .post_attempts(path, body, estimated_tokens, new_call, parse, effort)
            .await;
        let in_http = effort.latency.saturating_sub(in_http_before);
        // Whatever was not spent inside an attempt was spent waiting to make one.
        effort.queue += began.elapsed().saturating_sub(in_http);
        r
    }

    /// [`OpenAiModel::post`]'s attempts, each counted in `effort` with its time.
    #[allow(clippy::too_many_arguments)]
    async fn post_attempts<T>(
        self: &Arc<Self>,
        path: &str,
        body: &serde_json::Value,
        estimated_tokens: u64,
        new_call: bool,
        parse: impl Fn(&[u8]) -> Result<(T, Option<TokenUsage>), String>,
        effort: &mut Effort,
    ) -> Result<Reply<T>, LlmError> {
        let _permit = self
            .semaphore
            .acquire()
            .await
            .map_err(|_| LlmError::Internal("semaphore closed".into()))?;
        let max_attempts = self.config.max_retries + 1;
        let mut schedule = self.http.config().retry.schedule();
        let mut last = String::new();
        for attempt in 1..=max_attempts {
            self.wait_limits(estimated_tokens).await;
            // Chosen after the limits, so in-flight counts are current.
            let endpoint = self.pick();
            if let Some(p) = self.paused_for(endpoint) {
                tokio::time::sleep(p).await;
            }
            // Checked at the last moment before a new call goes out; retries and re-asks of a
            // call already under way finish.
            if new_call && attempt == 1 {
                self.budget.check()?;
            }
            effort.attempts += 1;
            let sent = Instant::now();
            let outcome = self.attempt(endpoint, path, body, &parse).await;
            effort.latency += sent.elapsed();
            match outcome {
                Attempt::Done(value, usage) => {
                    self.record_success(endpoint);
                    // Without `usage`, the estimate stands in for the prompt tokens.
                    let usage = usage.unwrap_or(TokenUsage {
                        input: estimated_tokens,
                        ..TokenUsage::default()
                    });
                    self.reconcile(estimated_tokens, usage.input + usage.output);
                    if let Some(price) = self.config.price {
                        self.budget
                            .add(price.cost_cached(usage.input, usage.cached, usage.output));
                    }
                    return Ok(Reply {
                        value,
                        tokens_in: usage.input,
                        tokens_out: usage.output,
                        tokens_cached: usage.cached,
                        endpoint: endpoint.name.clone(),
                    });
                }
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry(why, retry_after) => {
                    self.record_failure(endpoint);
                    last = why;
                    if attempt == max_attempts {
                        break;
                    }
                    let Some(delay) = schedule.next_delay(retry_after) else {
                        break;
                    };
                    if retry_after.is_some() {
                        self.pause(endpoint, delay);
                    }
                    tracing::debug!(endpoint = %endpoint.name, attempt, delay_ms = delay.as_millis() as u64, reason = %last, "retrying");
                    tokio::time::sleep(delay).await;
                }
            }
        }
        Err(LlmError::RetriesExhausted {
            attempts: max_attempts,
            last,
        })
    }

    async fn attempt<T>(
        &self,
        endpoint: &Endpoint,
        path: &str,
        body: &serde_json::Value,
        parse: &impl Fn(&[u8]) -> Result<(T, Option<TokenUsage>), String>,
    ) -> Attempt<T> {
        let url = match noisebench_web::Url::parse(&format!("{}/{path}", endpoint.base)) {
            Ok(u) => u,
            // The config checked every endpoint URL, so this is a bug, not a server's fault.
            Err(e) => {
                return Attempt::Fail(LlmError::Internal(format!(
                    "endpoint `{}`: not a URL with `{path}`: {e}",
                    endpoint.name
                )));
            }
        };
        let mut request = HttpRequest::post(url).json(body);
        if let Some(k) = &self.api_key {
            request = request.bearer_auth(k);
        }
        endpoint.in_flight.fetch_add(1, Ordering::SeqCst);
        let result = self.http.send_once(&request).await;
        endpoint.in_flight.fetch_sub(1, Ordering::SeqCst);
        let key = self.api_key.as_deref();
        let response = match result {
            Ok(r) => r,
            Err(e) => {
                let kind = match e {
                    FetchError::Timeout(_) => "timeout",
                    FetchError::Connect(_) | FetchError::Dns(_) => "connection error",
                    _ => "transport error",
                };
                // `HttpClient` errors never name the URL and have the key removed already;
                // `redact` is belt and braces.
                return Attempt::Retry(
                    redact(&format!("{kind} at `{}`: {e}", endpoint.name), key),
                    None,
                );
            }
        };
        let code = response.status;
        if response.is_success() {
            match parse(&response.body) {
                Ok((v, usage)) => Attempt::Done(v, usage),
                // A broken envelope (truncated body) is the server's fault: retry.
                Err(m) => Attempt::Retry(
                    redact(
                        &format!("malformed response from `{}`: {m}", endpoint.name),
                        key,
                    ),
                    None,
                ),
            }
        } else if RetryPolicy::retries_status(code) {
            Attempt::Retry(
                format!("HTTP {code} from `{}`", endpoint.name),
                response.retry_after(),
            )
        } else if crate::server::is_context_refusal(code, &response.excerpt(2000)) {
            Attempt::Fail(LlmError::ContextExceeded {
                model: self.key.clone(),
                context: self.context_tokens(),
                detail: format!(
                    "endpoint `{}` answered HTTP {code}: {}",
                    endpoint.name,
                    redact(&response.excerpt(300), key)
                ),
            })
        } else {
            Attempt::Fail(LlmError::Http {
                endpoint: endpoint.name.clone(),
                status: code,
                detail: redact(&response.excerpt(300), key),
            })
        }
    }

    /// One chat completion; the reply's text content.
    ///
    /// `_salt` once seeded the retry jitter, which now comes from `noisebench-web`'s schedule;
    /// it stays until the callers in `remote.rs` and `embed.rs` stop passing it.
    #[allow(clippy::too_many_arguments)]
    pub async fn chat(
        self: &Arc<Self>,
        messages: &[Message],
        params: &serde_json::Value,
        response_format: Option<serde_json::Value>,
        estimated_tokens: u64,
        _salt: u64,
        new_call: bool,
        effort: &mut Effort,
    ) -> Result<Reply<Completion>, LlmError> {
        let body = self.chat_request_body(messages, params, response_format);
        self.post(
            "chat/completions",
            &body,
            estimated_tokens,
            new_call,
            parse_chat_response,
            effort,
        )
        .await
    }

    /// The body of a chat completion request: also each line's `body` in a Batch API job.
    pub(crate) fn chat_request_body(
        &self,
        messages: &[Message],
        params: &serde_json::Value,
        response_format: Option<serde_json::Value>,
    ) -> serde_json::Value {
        let mut body = serde_json::json!({
            "model": self.model_id,
            "messages": messages,
        });
        if let (Some(obj), Some(p)) = (body.as_object_mut(), params.as_object()) {
            for (k, v) in p {
                obj.insert(k.clone(), v.clone());
            }
            if let Some(rf) = response_format {
                obj.insert("response_format".into(), rf);
            }
        }
        body
    }

    /// The HTTP client this model's requests go through (the Batch API's too).
    pub(crate) fn http(&self) -> &HttpClient {
        &self.http
    }

    /// `(name, base URL)` of the endpoint named `name`, or of the first endpoint: where Batch
    /// API jobs go (a job lives on one server, so it is not spread).
    pub(crate) fn endpoint_base(&self, name: Option<&str>) -> Option<(&str, &str)> {
        match name {
            Some(n) => self.endpoints.iter().find(|e| e.name == n),
            None => self.endpoints.first(),
        }
        .map(|e| (e.name.as_str(), e.base.as_str()))
    }

    /// One embeddings request; vectors in input order (`_salt`: see [`OpenAiModel::chat`]).
    pub async fn embed(
        self: &Arc<Self>,
        texts: &[String],
        _salt: u64,
        effort: &mut Effort,
    ) -> Result<Reply<Vec<Vec<f32>>>, LlmError> {
        let body = serde_json::json!({"model": self.model_id, "input": texts});
        let n = texts.len();
        self.post(
            "embeddings",
            &body,
            estimate_text_tokens(texts),
            true,
            move |bytes| {
                let mut r: EmbeddingResponse =
                    serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
                if r.data.len() != n {
                    return Err(format!("{} vectors for {n} inputs", r.data.len()));
                }
                r.data.sort_by_key(|d| d.index);
                Ok((
                    r.data.into_iter().map(|d| d.embedding).collect(),
                    r.usage.map(|u| TokenUsage {
                        output: 0,
                        ..u.tokens()
                    }),
                ))
            },
            effort,
        )
        .await
    }
}

/// A chat completion's envelope: its first choice's text, whether it was cut off, and usage.
pub(crate) fn parse_chat_response(
    bytes: &[u8],
) -> Result<(Completion, Option<TokenUsage>), String> {
    let r: ChatResponse = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let choice = r.choices.into_iter().next().ok_or("no choices[0]")?;
    let truncated = choice.finish_reason.as_deref() == Some("length");
    let content = match choice.message.content {
        Some(c) => c,
        // A cut-off answer may come with no text at all; it fails as truncated.
        None if truncated => String::new(),
        None => return Err("no choices[0].message.content".into()),
    };
    Ok((
        Completion { content, truncated },
        r.usage.map(|u| u.tokens()),
    ))
}

/// Rate and burst for a requests-per-minute limit such that no sliding minute ever sees more
/// than `rpm` requests, even when the server sees them a little bunched. GCRA admits at most
/// `burst + W/T - 1` requests in any half-open window of `W` (T = the emission interval). The
/// burst is 1% of the limit, so a request that woke late can be made up for (with a burst of one
/// its slot would be lost for good); the rate leaves the same 1% as headroom for arrival jitter:
/// at send time a minute holds at most `rpm - burst`. The steady rate is about 98% of `rpm`.
fn rpm_quota(rpm: u32) -> (NonZeroU32, NonZeroU32) {
    let burst = (rpm / 100).max(1);
    let rate = (rpm + 1).saturating_sub(2 * burst).max(1);
    (
        NonZeroU32::new(rate).unwrap_or(NonZeroU32::MIN),
        NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpm_quota_never_exceeds_the_minute() {
        for rpm in [1u32, 2, 59, 100, 600, 6000, 100_000] {
            let (rate, burst) = rpm_quota(rpm);
            let most_in_a_minute = burst.get() + rate.get() - 1;
            assert!(most_in_a_minute <= rpm, "{rpm}");
            if rpm >= 2 {
                assert!(most_in_a_minute <= rpm - burst.get(), "{rpm}: headroom");
            }
            assert!(rate.get() as f64 >= 0.98 * rpm as f64 - 1.0, "{rpm}");
        }
        assert_eq!(
            rpm_quota(6000),
            (NonZeroU32::new(5881).unwrap(), NonZeroU32::new(60).unwrap())
        );
    }

    #[test]
    fn redaction() {
        assert_eq!(
            redact("Bearer sk-abc123 failed", Some("sk-abc123")),
            "Bearer [REDACTED] failed"
        );
    }

    #[test]
    fn token_estimate_is_a_real_count() {
        let m = vec![Message {
            role: "user".into(),
            content: "hello world".into(),
        }];
        assert_eq!(estimate_tokens(&m), 2 + 4 + 3);
    }
}
