//! A fake OpenAI-compatible server on 127.0.0.1 for tests and the bench.
//!
//! It answers chat completions from a script (then from a default reply), and embeddings with
//! vectors derived from the text. It records arrival times, the most requests in flight at
//! once, request bodies and Authorization headers.
#![allow(dead_code)]

use std::collections::VecDeque;
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

/// How the server answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with this assistant content and usage (prompt 11, completion 7).
    Content(String),
    /// This status, optional Retry-After, body.
    Status(u16, Option<String>, String),
    /// Sleep, then answer with this content.
    Slow(Duration, String),
    /// 200 with this raw body (e.g. a truncated envelope).
    Raw(String),
    /// 401 whose body echoes the Authorization header (a careless server).
    EchoAuth,
}

#[derive(Default)]
pub struct Record {
    pub arrivals: Mutex<Vec<Instant>>,
    pub bodies: Mutex<Vec<serde_json::Value>>,
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

pub struct FakeServer {
    pub addr: SocketAddr,
    pub state: Arc<ServerState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

pub const KEYWORDS_OK: &str = r#"{"keywords": ["alpha", "beta"]}"#;

impl FakeServer {
    pub fn start() -> FakeServer {
        Self::start_with(Reply::Content(KEYWORDS_OK.into()), Duration::ZERO)
    }

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
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let st = Arc::clone(&state);
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = Router::new()
                    .route("/v1/chat/completions", post(chat))
                    .route("/v1/embeddings", post(embeddings))
                    .with_state(st);
                let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await
                    .unwrap();
            });
        });
        let addr = addr_rx.recv().unwrap();
        FakeServer {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn push(&self, r: Reply) {
        self.state.script.lock().unwrap().push_back(r);
    }

    pub fn set_default(&self, r: Reply) {
        *self.state.default.lock().unwrap() = r;
    }

    pub fn requests(&self) -> usize {
        self.state.rec.arrivals.lock().unwrap().len()
    }

    pub fn max_in_flight(&self) -> usize {
        self.state.rec.max_in_flight.load(Ordering::SeqCst)
    }

    pub fn bodies(&self) -> Vec<serde_json::Value> {
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

impl Drop for FakeServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
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

fn record(st: &ServerState, headers: &HeaderMap, body: &Bytes) {
    st.rec.arrivals.lock().unwrap().push(Instant::now());
    let v = serde_json::from_slice(body).unwrap_or(serde_json::Value::Null);
    st.rec.bodies.lock().unwrap().push(v);
    let auth = headers
        .get("authorization")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_string();
    st.rec.auths.lock().unwrap().push(auth);
}

fn chat_body(content: &str) -> String {
    serde_json::json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    })
    .to_string()
}

async fn chat(State(st): State<Arc<ServerState>>, headers: HeaderMap, body: Bytes) -> Response {
    record(&st, &headers, &body);
    let _g = InFlight::enter(&st.rec);
    let latency = *st.latency.lock().unwrap();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let reply = {
        let mut s = st.script.lock().unwrap();
        s.pop_front()
            .unwrap_or_else(|| st.default.lock().unwrap().clone())
    };
    match reply {
        Reply::Content(c) => json_response(StatusCode::OK, chat_body(&c)),
        Reply::Slow(d, c) => {
            tokio::time::sleep(d).await;
            json_response(StatusCode::OK, chat_body(&c))
        }
        Reply::Raw(b) => json_response(StatusCode::OK, b),
        Reply::Status(code, retry_after, b) => {
            let mut r = json_response(StatusCode::from_u16(code).unwrap(), b);
            if let Some(ra) = retry_after {
                r.headers_mut().insert("retry-after", ra.parse().unwrap());
            }
            r
        }
        Reply::EchoAuth => {
            let auth = headers
                .get("authorization")
                .and_then(|h| h.to_str().ok())
                .unwrap_or("")
                .to_string();
            json_response(
                StatusCode::UNAUTHORIZED,
                format!("{{\"error\": \"bad credentials: {auth}\"}}"),
            )
        }
    }
}

/// A local address nothing listens on: the port of a listener bound and closed at once, so a
/// connection to it is refused (until someone binds it again).
pub fn refused_addr() -> SocketAddr {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = probe.local_addr().unwrap();
    drop(probe);
    addr
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
    record(&st, &headers, &body);
    let _g = InFlight::enter(&st.rec);
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let inputs: Vec<String> = v["input"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    // Answer in reverse order: clients must sort by `index`.
    let data: Vec<serde_json::Value> = inputs
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

/// An `[llm]` table using `openai` against `url`, with a cache in `cache_dir`.
pub fn openai_config(url: &str, cache_dir: &std::path::Path) -> serde_json::Value {
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

pub fn keywords(claim: &str) -> noisebench_llm::task::KeywordsInput {
    noisebench_llm::task::KeywordsInput {
        claim: claim.into(),
        max_keywords: 5,
    }
}
