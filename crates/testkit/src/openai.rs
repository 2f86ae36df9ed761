//! A fake OpenAI-compatible server on 127.0.0.1.
//!
//! It answers chat completions from a script (then from a default reply, which may be a rule
//! over the request body), and embeddings with vectors derived from the text. It records arrival
//! times, the most requests in flight at once, request bodies and Authorization headers.

use std::collections::VecDeque;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
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
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/embeddings", post(embeddings))
            .with_state(Arc::clone(&state));
        let served = Served::start_on(addr, app);
        FakeServer {
            addr: served.addr(),
            state,
            _served: served,
        }
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
    serde_json::json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens}
    })
    .to_string()
}

async fn chat(State(st): State<Arc<ServerState>>, headers: HeaderMap, body: Bytes) -> Response {
    let request = record(&st, &headers, &body);
    let _g = InFlight::enter(&st.rec);
    let latency = *st.latency.lock().unwrap();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let mut reply = {
        let mut s = st.script.lock().unwrap();
        s.pop_front()
            .unwrap_or_else(|| st.default.lock().unwrap().clone())
    };
    while let Reply::Rule(Rule(f)) = reply {
        reply = f(&request);
    }
    match reply {
        Reply::Content(c) => json_response(StatusCode::OK, chat_body(&c, 11, 7)),
        Reply::ContentWithUsage(c, prompt, completion) => {
            json_response(StatusCode::OK, chat_body(&c, prompt, completion))
        }
        Reply::Slow(d, c) => {
            tokio::time::sleep(d).await;
            json_response(StatusCode::OK, chat_body(&c, 11, 7))
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
