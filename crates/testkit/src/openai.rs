//! A fake OpenAI-compatible server on 127.0.0.1.
//!
//! It answers chat completions from a script (then from a default reply, which may be a rule
//! over the request body), and embeddings with vectors derived from the text. It records arrival
//! times, the most requests in flight at once, request bodies and Authorization headers. It also
//! serves the OpenAI Batch API (files, batches, polling, output and error files; [`BatchApi`]),
//! answering each batch line as it would answer that chat completion.

use std::collections::VecDeque;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use crate::served::Served;

/// The default reply of [`FakeServer::start`]: a valid `keywords` answer.
pub const KEYWORDS_OK: &str = r#"{"keywords": ["alpha", "beta"]}"#;

/// How the server answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with this assistant content and usage (prompt 11, completion 7).
    Content(String),
    /// 200 with this assistant content and usage (prompt tokens, completion tokens), for tests
    /// of cost.
    ContentWithUsage(String, u64, u64),
    /// 200 with this content and usage (prompt, completion, cached prompt tokens reported as
    /// `prompt_tokens_details.cached_tokens`).
    ContentWithCachedUsage(String, u64, u64, u64),
    /// This status, optional Retry-After, body.
    Status(u16, Option<String>, String),
    /// Sleep, then answer with this content.
    Slow(Duration, String),
    /// 200 with this raw body (e.g. a truncated envelope).
    Raw(String),
    /// 401 whose body echoes the Authorization header (a careless server).
    EchoAuth,
    /// Whatever the rule returns for the request body (JSON; `null` if it was not JSON), so
    /// concurrent requests get the same answers in any order. See [`Reply::rule`].
    Rule(Rule),
}

impl Reply {
    /// A reply decided by `f` over each request's body.
    pub fn rule(f: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Reply {
        Reply::Rule(Rule(Arc::new(f)))
    }
}

/// The function behind [`Reply::Rule`].
#[derive(Clone)]
pub struct Rule(Arc<dyn Fn(&Value) -> Reply + Send + Sync>);

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Rule(..)")
    }
}

#[derive(Default)]
pub struct Record {
    pub arrivals: Mutex<Vec<Instant>>,
    pub bodies: Mutex<Vec<Value>>,
    pub auths: Mutex<Vec<String>>,
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
}

pub struct ServerState {
    pub script: Mutex<VecDeque<Reply>>,
    pub default: Mutex<Reply>,
    pub latency: Mutex<Duration>,
    pub rec: Record,
    /// The Batch API's files and batches ([`FakeServer::batch`]).
    pub batch: Mutex<BatchApi>,
    /// What `GET /props` answers (llama.cpp's server properties); `None`: 404.
    pub props: Mutex<Option<Value>>,
    /// What `GET /v1/models` answers (vLLM's lists `max_model_len`); `None`: 404.
    pub models: Mutex<Option<Value>>,
    /// When set ([`FakeServer::count_usage_like_openai`]), content replies report the usage
    /// OpenAI would (tokens counted on the request, prompt-cache hits) instead of 11 and 7.
    pub usage: Mutex<Option<crate::usage::UsageCounter>>,
}

/// The fake server; stops when dropped.
pub struct FakeServer {
    pub addr: SocketAddr,
    pub state: Arc<ServerState>,
    _served: Served,
}

impl FakeServer {
    /// Answers every chat completion with [`KEYWORDS_OK`].
    pub fn start() -> FakeServer {
        Self::start_with(Reply::Content(KEYWORDS_OK.into()), Duration::ZERO)
    }

    /// Answers every chat completion with what `rule` returns for its body.
    pub fn answering(rule: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> FakeServer {
        Self::start_with(Reply::rule(rule), Duration::ZERO)
    }

    /// Answers with `default` after `latency`, unless a scripted reply is pending.
    pub fn start_with(default: Reply, latency: Duration) -> FakeServer {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), default, latency)
    }

    /// Listen on `addr` (port 0: any free port), e.g. a port a client was already refused on.
    pub fn start_on(addr: SocketAddr, default: Reply, latency: Duration) -> FakeServer {
        let state = Arc::new(ServerState {
            script: Mutex::new(VecDeque::new()),
            default: Mutex::new(default),
            latency: Mutex::new(latency),
            rec: Record::default(),
            batch: Mutex::new(BatchApi::default()),
            props: Mutex::new(None),
            models: Mutex::new(None),
            usage: Mutex::new(None),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/embeddings", post(embeddings))
            .route("/v1/files", post(upload_file))
            .route("/v1/files/{id}/content", get(file_content))
            .route("/v1/batches", post(create_batch))
            .route("/v1/batches/{id}", get(retrieve_batch))
            .route("/props", get(props))
            .route("/v1/models", get(models))
            .with_state(Arc::clone(&state));
        let served = Served::start_on(addr, app);
        FakeServer {
            addr: served.addr(),
            state,
            _served: served,
        }
    }

    /// Answer `GET /props` with `props` (llama.cpp's server properties, e.g.
    /// `{"default_generation_settings": {"n_ctx": 8192}}`); `None`: 404, as before.
    pub fn set_props(&self, props: Option<Value>) {
        *self.state.props.lock().unwrap() = props;
    }

    /// Answer `GET /v1/models` with `models` (vLLM: `{"data": [{"id": .., "max_model_len": ..}]}`).
    pub fn set_models(&self, models: Option<Value>) {
        *self.state.models.lock().unwrap() = models;
    }

    /// From now on, content replies report usage as OpenAI would ([`crate::usage`]): prompt
    /// tokens counted on the request's messages, completion tokens on the content, and
    /// `prompt_tokens_details.cached_tokens` from a prompt cache of 1,024-token prefixes.
    pub fn count_usage_like_openai(&self) {
        *self.state.usage.lock().unwrap() = Some(Default::default());
    }

    /// The base URL a client is configured with: `http://127.0.0.1:<port>/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Answer the next request not yet answered with `r` (replies are used in order).
    pub fn push(&self, r: Reply) {
        self.state.script.lock().unwrap().push_back(r);
    }

    pub fn set_default(&self, r: Reply) {
        *self.state.default.lock().unwrap() = r;
    }

    /// Requests received so far (chat and embeddings).
    pub fn requests(&self) -> usize {
        self.state.rec.arrivals.lock().unwrap().len()
    }

    pub fn max_in_flight(&self) -> usize {
        self.state.rec.max_in_flight.load(Ordering::SeqCst)
    }

    pub fn bodies(&self) -> Vec<Value> {
        self.state.rec.bodies.lock().unwrap().clone()
    }

    pub fn auths(&self) -> Vec<String> {
        self.state.rec.auths.lock().unwrap().clone()
    }

    pub fn arrivals(&self) -> Vec<Instant> {
        self.state.rec.arrivals.lock().unwrap().clone()
    }

    /// The most arrivals in any window of `w` (sliding, anchored at each arrival).
    pub fn max_in_window(&self, w: Duration) -> usize {
        let a = self.arrivals();
        let mut best = 0;
        for (i, t) in a.iter().enumerate() {
            let n = a[i..]
                .iter()
                .take_while(|u| u.duration_since(*t) < w)
                .count();
            best = best.max(n);
        }
        best
    }

    /// Arrivals per minute since the first (the issue's "per-minute counts").
    pub fn per_minute(&self) -> Vec<usize> {
        let a = self.arrivals();
        let Some(first) = a.first().copied() else {
            return vec![];
        };
        let mut out = vec![];
        for t in a {
            let m = (t.duration_since(first).as_secs() / 60) as usize;
            if out.len() <= m {
                out.resize(m + 1, 0);
            }
            out[m] += 1;
        }
        out
    }
}

/// The content of the first message with `role` in a chat request body, or "".
pub fn first_message<'a>(body: &'a Value, role: &str) -> &'a str {
    body["messages"]
        .as_array()
        .and_then(|msgs| msgs.iter().find(|m| m["role"] == role))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
}

struct InFlight<'a>(&'a Record);
impl<'a> InFlight<'a> {
    fn enter(r: &'a Record) -> Self {
        let n = r.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        r.max_in_flight.fetch_max(n, Ordering::SeqCst);
        InFlight(r)
    }
}
impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Record the request; returns its body as JSON (`null` if it was not JSON).
fn record(st: &ServerState, headers: &HeaderMap, body: &Bytes) -> Value {
    st.rec.arrivals.lock().unwrap().push(Instant::now());
    let v = serde_json::from_slice(body).unwrap_or(Value::Null);
    st.rec.bodies.lock().unwrap().push(v.clone());
    st.rec.auths.lock().unwrap().push(auth_of(headers));
    v
}

fn auth_of(headers: &HeaderMap) -> String {
    headers
        .get("authorization")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_string()
}

fn chat_body(content: &str, prompt_tokens: u64, completion_tokens: u64) -> String {
    chat_body_cached(content, prompt_tokens, completion_tokens, 0)
}

fn chat_body_cached(content: &str, prompt: u64, completion: u64, cached: u64) -> String {
    serde_json::json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": cached}}
    })
    .to_string()
}

/// A content reply's body: usage as OpenAI would count it when the server counts
/// ([`FakeServer::count_usage_like_openai`]), else the fixed 11 and 7.
fn content_body(st: &ServerState, request: &Value, content: &str) -> String {
    match st.usage.lock().unwrap().as_mut() {
        Some(counter) => {
            let u = counter.count(request, content);
            chat_body_cached(content, u.prompt, u.completion, u.cached)
        }
        None => chat_body(content, 11, 7),
    }
}

async fn chat(State(st): State<Arc<ServerState>>, headers: HeaderMap, body: Bytes) -> Response {
    let request = record(&st, &headers, &body);
    let _g = InFlight::enter(&st.rec);
    let latency = *st.latency.lock().unwrap();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    match next_reply(&st, &request) {
        Reply::Content(c) => json_response(StatusCode::OK, content_body(&st, &request, &c)),
        Reply::ContentWithUsage(c, prompt, completion) => {
            json_response(StatusCode::OK, chat_body(&c, prompt, completion))
        }
        Reply::ContentWithCachedUsage(c, prompt, completion, cached) => json_response(
            StatusCode::OK,
            chat_body_cached(&c, prompt, completion, cached),
        ),
        Reply::Slow(d, c) => {
            tokio::time::sleep(d).await;
            json_response(StatusCode::OK, content_body(&st, &request, &c))
        }
        Reply::Raw(b) => json_response(StatusCode::OK, b),
        Reply::Status(code, retry_after, b) => {
            let mut r = json_response(StatusCode::from_u16(code).unwrap(), b);
            if let Some(ra) = retry_after {
                r.headers_mut().insert("retry-after", ra.parse().unwrap());
            }
            r
        }
        Reply::EchoAuth => json_response(
            StatusCode::UNAUTHORIZED,
            format!("{{\"error\": \"bad credentials: {}\"}}", auth_of(&headers)),
        ),
        Reply::Rule(_) => unreachable!("rules are resolved above"),
    }
}

async fn props(State(st): State<Arc<ServerState>>) -> Response {
    match st.props.lock().unwrap().clone() {
        Some(v) => json_response(StatusCode::OK, v.to_string()),
        None => json_response(StatusCode::NOT_FOUND, "{}".into()),
    }
}

async fn models(State(st): State<Arc<ServerState>>) -> Response {
    match st.models.lock().unwrap().clone() {
        Some(v) => json_response(StatusCode::OK, v.to_string()),
        None => json_response(StatusCode::NOT_FOUND, "{}".into()),
    }
}

/// The scripted reply if one is pending, else the default, rules resolved over `request`.
fn next_reply(st: &ServerState, request: &Value) -> Reply {
    let mut reply = {
        let mut s = st.script.lock().unwrap();
        s.pop_front()
            .unwrap_or_else(|| st.default.lock().unwrap().clone())
    };
    while let Reply::Rule(Rule(f)) = reply {
        reply = f(request);
    }
    reply
}

/// A deterministic 8-dimensional vector from a text.
pub fn fake_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 8];
    for (i, b) in text.bytes().enumerate() {
        v[i % 8] += b as f32;
    }
    v
}

async fn embeddings(
    State(st): State<Arc<ServerState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let v = record(&st, &headers, &body);
    let _g = InFlight::enter(&st.rec);
    let inputs: Vec<String> = v["input"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    // Answer in reverse order: clients must sort by `index`.
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| serde_json::json!({"object": "embedding", "index": i, "embedding": fake_vector(t)}))
        .collect();
    json_response(
        StatusCode::OK,
        serde_json::json!({"data": data, "usage": {"prompt_tokens": inputs.len() * 3, "total_tokens": inputs.len() * 3}}).to_string(),
    )
}

fn json_response(code: StatusCode, body: String) -> Response {
    (code, [("content-type", "application/json")], body).into_response()
}

/// An `[llm]` table using `openai` against `url`, with a cache in `cache_dir` and the repo's
/// prompts.
pub fn openai_config(url: &str, cache_dir: &std::path::Path) -> Value {
    serde_json::json!({
        "backend": "openai",
        "model": "fake",
        "prompts_dir": concat!(env!("CARGO_MANIFEST_DIR"), "/../../pipelines/prompts"),
        "max_tokens": 64,
        "cache": {"dir": cache_dir.to_str().unwrap()},
        "embeddings": {"backend": "hashed"},
        "models": {"fake": {
            "name": "fake-model",
            "endpoints": [{"name": "local", "url": url}],
            "max_concurrency": 4,
            "timeout_secs": 5.0,
            "max_retries": 3,
            "retry_base_ms": 20,
            "retry_max_ms": 2000
        }}
    })
}

/// [`openai_config`] for tests of how a stage treats each answer: JSON-schema answers, and no
/// retries or re-asks, so every scripted reply is the one the stage sees.
pub fn strict_openai_config(url: &str, cache_dir: &std::path::Path) -> Value {
    let mut config = openai_config(url, cache_dir);
    config["max_reasks"] = serde_json::json!(0);
    config["models"]["fake"]["json_schema"] = serde_json::json!(true);
    config["models"]["fake"]["max_retries"] = serde_json::json!(0);
    config
}

// --- The Batch API: `/v1/files`, `/v1/files/{id}/content`, `/v1/batches`, `/v1/batches/{id}`.

/// Which lines of a batch input fail (an `error` line in the error file), by the line's `body`.
#[derive(Clone)]
pub struct LineFilter(pub Arc<dyn Fn(&Value) -> bool + Send + Sync>);

impl fmt::Debug for LineFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LineFilter(..)")
    }
}

/// One uploaded file.
#[derive(Debug, Clone)]
pub struct StoredFile {
    pub purpose: String,
    pub filename: String,
    pub bytes: Vec<u8>,
}

/// One batch and how far it has got.
#[derive(Debug, Clone)]
pub struct FakeBatch {
    /// The batch object as last answered (`id`, `status`, `output_file_id`, ...).
    pub object: Value,
    /// `GET /v1/batches/{id}` requests answered for it.
    pub polls: u32,
}

/// The fake Batch API's state: what was uploaded, created and polled, and how batches end.
///
/// A batch is `validating` when created; each `GET /v1/batches/{id}` moves it on: `in_progress`
/// from the first poll, and at poll [`BatchApi::polls_to_complete`] it is answered, each input
/// line with the reply a chat completion with that body would get now (script, default, rule),
/// and is `completed` (or ends as [`BatchApi::end_next`] says).
#[derive(Debug)]
pub struct BatchApi {
    pub files: std::collections::BTreeMap<String, StoredFile>,
    pub batches: std::collections::BTreeMap<String, FakeBatch>,
    /// Requests to each route.
    pub uploads: usize,
    pub created: usize,
    pub polls: usize,
    pub downloads: usize,
    /// Every input line of every batch answered, as parsed JSON, in order.
    pub lines: Vec<Value>,
    /// Authorization headers of every Batch API request.
    pub auths: Vec<String>,
    /// The poll at which a batch is answered (default 3: `validating`, `in_progress`,
    /// `completed`).
    pub polls_to_complete: u32,
    /// Keep every batch `in_progress` (a provider that takes its time).
    pub hold: bool,
    /// The next batch to be answered ends with this status instead (`failed`, `expired`,
    /// `cancelled`); `failed` answers no line, the others answer none either (a provider that
    /// ran out of its window before starting).
    pub end_next: Option<String>,
    /// Lines whose body matches fail with `error: {code: "server_error"}`.
    pub fail_lines: Option<LineFilter>,
    next_id: u64,
}

impl Default for BatchApi {
    fn default() -> Self {
        Self {
            files: Default::default(),
            batches: Default::default(),
            uploads: 0,
            created: 0,
            polls: 0,
            downloads: 0,
            lines: Vec::new(),
            auths: Vec::new(),
            polls_to_complete: 3,
            hold: false,
            end_next: None,
            fail_lines: None,
            next_id: 0,
        }
    }
}

impl BatchApi {
    fn id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}-{:04}", self.next_id)
    }
}

impl FakeServer {
    /// The Batch API's state, to read counts or change how batches end.
    pub fn batch(&self) -> std::sync::MutexGuard<'_, BatchApi> {
        self.state.batch.lock().unwrap()
    }

    /// Fail the batch lines whose request body `f` matches.
    pub fn fail_batch_lines(&self, f: impl Fn(&Value) -> bool + Send + Sync + 'static) {
        self.batch().fail_lines = Some(LineFilter(Arc::new(f)));
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn error_json(code: StatusCode, message: &str) -> Response {
    json_response(
        code,
        serde_json::json!({"error": {"message": message, "type": "invalid_request_error"}})
            .to_string(),
    )
}

/// The parts of a `multipart/form-data` body by field name: (filename, bytes). Hand-written: a
/// fake server needs only the two fields the Files API takes, not a multipart crate.
fn multipart_fields(
    content_type: &str,
    body: &[u8],
) -> std::collections::BTreeMap<String, (String, Vec<u8>)> {
    let mut out = std::collections::BTreeMap::new();
    let Some(boundary) = content_type
        .split(';')
        .find_map(|p| p.trim().strip_prefix("boundary="))
    else {
        return out;
    };
    let delimiter = format!("--{}", boundary.trim_matches('"'));
    let text = body;
    let d = delimiter.as_bytes();
    let mut starts = Vec::new();
    let mut i = 0;
    while i + d.len() <= text.len() {
        if &text[i..i + d.len()] == d {
            starts.push(i);
            i += d.len();
        } else {
            i += 1;
        }
    }
    for w in starts.windows(2) {
        let part = &text[w[0] + d.len()..w[1]];
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let Some(split) = part.windows(4).position(|x| x == b"\r\n\r\n") else {
            continue;
        };
        let headers = String::from_utf8_lossy(&part[..split]).to_string();
        let content = &part[split + 4..];
        let content = content.strip_suffix(b"\r\n").unwrap_or(content);
        let attr = |name: &str| {
            headers.split(';').find_map(|p| {
                p.trim()
                    .strip_prefix(&format!("{name}=\""))
                    .and_then(|v| v.split('"').next())
                    .map(String::from)
            })
        };
        if let Some(name) = attr("name") {
            out.insert(
                name,
                (attr("filename").unwrap_or_default(), content.to_vec()),
            );
        }
    }
    out
}

async fn upload_file(
    State(st): State<Arc<ServerState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut b = st.batch.lock().unwrap();
    b.uploads += 1;
    b.auths.push(auth_of(&headers));
    let ct = headers
        .get("content-type")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let fields = multipart_fields(ct, &body);
    let (Some((_, purpose)), Some((filename, bytes))) = (fields.get("purpose"), fields.get("file"))
    else {
        return error_json(
            StatusCode::BAD_REQUEST,
            "multipart fields `purpose` and `file` are required",
        );
    };
    let purpose = String::from_utf8_lossy(purpose).to_string();
    let id = b.id("file");
    let object = serde_json::json!({
        "id": id, "object": "file", "bytes": bytes.len(), "created_at": unix_now(),
        "filename": filename, "purpose": purpose,
    });
    b.files.insert(
        id,
        StoredFile {
            purpose,
            filename: filename.clone(),
            bytes: bytes.clone(),
        },
    );
    json_response(StatusCode::OK, object.to_string())
}

async fn file_content(
    State(st): State<Arc<ServerState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let mut b = st.batch.lock().unwrap();
    b.downloads += 1;
    b.auths.push(auth_of(&headers));
    match b.files.get(&id) {
        Some(f) => (
            StatusCode::OK,
            [("content-type", "application/octet-stream")],
            f.bytes.clone(),
        )
            .into_response(),
        None => error_json(StatusCode::NOT_FOUND, &format!("no file {id}")),
    }
}

async fn create_batch(
    State(st): State<Arc<ServerState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut b = st.batch.lock().unwrap();
    b.created += 1;
    b.auths.push(auth_of(&headers));
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(input) = v["input_file_id"].as_str() else {
        return error_json(StatusCode::BAD_REQUEST, "input_file_id is required");
    };
    match b.files.get(input) {
        Some(f) if f.purpose == "batch" => {}
        Some(_) => {
            return error_json(StatusCode::BAD_REQUEST, "the file's purpose is not `batch`");
        }
        None => return error_json(StatusCode::BAD_REQUEST, "no such input file"),
    }
    if v["endpoint"] != "/v1/chat/completions" || v["completion_window"] != "24h" {
        return error_json(
            StatusCode::BAD_REQUEST,
            "endpoint must be /v1/chat/completions and completion_window 24h",
        );
    }
    let id = b.id("batch");
    let object = serde_json::json!({
        "id": id, "object": "batch", "endpoint": v["endpoint"], "errors": null,
        "input_file_id": input, "completion_window": "24h", "status": "validating",
        "output_file_id": null, "error_file_id": null, "created_at": unix_now(),
        "request_counts": {"total": 0, "completed": 0, "failed": 0},
        "metadata": v.get("metadata").cloned().unwrap_or(Value::Null),
    });
    b.batches.insert(
        id,
        FakeBatch {
            object: object.clone(),
            polls: 0,
        },
    );
    json_response(StatusCode::OK, object.to_string())
}

async fn retrieve_batch(
    State(st): State<Arc<ServerState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let mut b = st.batch.lock().unwrap();
    b.polls += 1;
    b.auths.push(auth_of(&headers));
    let polls_to_complete = b.polls_to_complete;
    let hold = b.hold;
    let Some(batch) = b.batches.get_mut(&id) else {
        return error_json(StatusCode::NOT_FOUND, &format!("no batch {id}"));
    };
    batch.polls += 1;
    let status = batch.object["status"].as_str().unwrap_or("").to_string();
    if status == "validating" || status == "in_progress" {
        if hold || batch.polls < polls_to_complete {
            batch.object["status"] = "in_progress".into();
        } else {
            let input = batch.object["input_file_id"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let object = answer_batch(&st, &mut b, &id, &input);
            if let Some(batch) = b.batches.get_mut(&id) {
                batch.object = object;
            }
        }
    }
    let object = b.batches[&id].object.clone();
    json_response(StatusCode::OK, object.to_string())
}

/// Answer every line of a batch's input file, store the output and error files, and return the
/// batch object in its final state.
fn answer_batch(st: &ServerState, b: &mut BatchApi, id: &str, input_file: &str) -> Value {
    let mut object = b.batches[id].object.clone();
    let now = unix_now();
    if let Some(end) = b.end_next.take() {
        object["status"] = end.clone().into();
        object[format!("{end}_at")] = now.into();
        if end == "failed" {
            object["errors"] = serde_json::json!({"object": "list", "data": [
                {"code": "invalid_request", "message": "the fake server was told to fail this batch", "line": null, "param": null}
            ]});
        }
        return object;
    }
    let input = b
        .files
        .get(input_file)
        .map(|f| f.bytes.clone())
        .unwrap_or_default();
    let (mut output, mut errors) = (String::new(), String::new());
    let (mut total, mut completed, mut failed) = (0u64, 0u64, 0u64);
    for (n, line) in String::from_utf8_lossy(&input).lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        total += 1;
        let v: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        b.lines.push(v.clone());
        let custom_id = v["custom_id"].clone();
        let request_id = format!("req_{id}_{n}");
        let well_formed = custom_id.is_string()
            && v["method"] == "POST"
            && v["url"] == "/v1/chat/completions"
            && v["body"].is_object();
        let fail = b.fail_lines.as_ref().is_some_and(|f| (f.0)(&v["body"]));
        let out = if !well_formed {
            Err(serde_json::json!({"code": "invalid_request",
                "message": "a line needs custom_id, method POST, url /v1/chat/completions and a body"}))
        } else if fail {
            Err(serde_json::json!({"code": "server_error",
                "message": "the fake server was told to fail this line"}))
        } else {
            let (status, body) = match next_reply(st, &v["body"]) {
                Reply::Content(c) | Reply::Slow(_, c) => (200, content_body(st, &v["body"], &c)),
                Reply::ContentWithUsage(c, p, q) => (200, chat_body(&c, p, q)),
                Reply::ContentWithCachedUsage(c, p, q, k) => (200, chat_body_cached(&c, p, q, k)),
                Reply::Raw(b) => (200, b),
                Reply::Status(code, _, b) => (code, b),
                Reply::EchoAuth => (401, "{\"error\": \"bad credentials\"}".into()),
                Reply::Rule(_) => unreachable!("rules are resolved by next_reply"),
            };
            let body: Value = serde_json::from_str(&body).unwrap_or(Value::String(body));
            Ok((status, body))
        };
        let record = match out {
            Ok((status, body)) => {
                serde_json::json!({"id": format!("batch_req_{n}"), "custom_id": custom_id,
                "response": {"status_code": status, "request_id": request_id, "body": body}, "error": null})
            }
            Err(error) => {
                serde_json::json!({"id": format!("batch_req_{n}"), "custom_id": custom_id,
                "response": null, "error": error})
            }
        };
        let ok = record["response"]["status_code"] == 200;
        let file = if ok { &mut output } else { &mut errors };
        file.push_str(&record.to_string());
        file.push('\n');
        if ok {
            completed += 1;
        } else {
            failed += 1;
        }
    }
    let store = |b: &mut BatchApi, text: String, name: &str| {
        let fid = b.id("file");
        b.files.insert(
            fid.clone(),
            StoredFile {
                purpose: "batch_output".into(),
                filename: format!("{id}_{name}.jsonl"),
                bytes: text.into_bytes(),
            },
        );
        fid
    };
    if !output.is_empty() {
        object["output_file_id"] = store(b, output, "output").into();
    }
    if !errors.is_empty() {
        object["error_file_id"] = store(b, errors, "error").into();
    }
    object["status"] = "completed".into();
    object["completed_at"] = now.into();
    object["request_counts"] =
        serde_json::json!({"total": total, "completed": completed, "failed": failed});
    object
}
