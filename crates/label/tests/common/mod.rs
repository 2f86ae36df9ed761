//! Test helpers: a fake OpenAI-compatible server on 127.0.0.1 whose replies are decided by a
//! rule over the request (which task, which claim and document), so concurrent requests get the
//! same answers in any order; an `Llm` pointed at it; rows and a stage context.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use noisebench_core::{
    Claim, ClaimDocument, Document, Inputs, NoProgress, Rows, StageContext, TableRow, stable_id,
};
use noisebench_llm::{Llm, LlmConfig};

/// Which task a request is for, from its prompt's wording (pipelines/prompts/*.md).
pub fn task_of(first_user: &str, system: &str) -> &'static str {
    if system.contains("fact-checking exam") {
        if first_user.contains("Document") {
            "exam"
        } else {
            "zero_context"
        }
    } else if first_user.contains("web address of a piece of evidence") {
        "stance_url"
    } else if first_user.contains("First write your reasoning") {
        "stance_reasoned"
    } else if first_user.contains("Read the page text") {
        "stance_text"
    } else if first_user.contains("credibility") {
        "credibility"
    } else {
        "unknown"
    }
}

/// A request as the rule sees it.
pub struct Req {
    pub task: &'static str,
    /// The first user message (the rendered prompt).
    pub prompt: String,
    /// Messages after the first exchange (re-asks).
    pub turns: usize,
}

type Rule = dyn Fn(&Req) -> String + Send + Sync;

pub struct ServerState {
    rule: Box<Rule>,
    pub log: Mutex<Vec<(String, String)>>,
}

pub struct FakeLlm {
    pub addr: SocketAddr,
    pub state: Arc<ServerState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeLlm {
    pub fn start(rule: impl Fn(&Req) -> String + Send + Sync + 'static) -> FakeLlm {
        let state = Arc::new(ServerState {
            rule: Box::new(rule),
            log: Mutex::new(Vec::new()),
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
                    .with_state(st);
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
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
        FakeLlm {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// `(task, reply)` of every request answered so far.
    pub fn log(&self) -> Vec<(String, String)> {
        self.state.log.lock().unwrap().clone()
    }

    pub fn count(&self, task: &str) -> usize {
        self.log().iter().filter(|(t, _)| t == task).count()
    }

    /// An `Llm` using the `openai` backend against this server, the repo's prompts, no cache.
    pub fn llm(&self, max_reasks: u32) -> Llm {
        let config = serde_json::json!({
            "backend": "openai",
            "model": "fake",
            "max_reasks": max_reasks,
            "cache": {"mode": "off"},
            "embeddings": {"backend": "hashed"},
            "models": {"fake": {
                "name": "fake-gpt",
                "max_retries": 0,
                "timeout_secs": 10.0,
                "endpoints": [{"name": "local", "url": format!("http://{}/v1", self.addr)}]
            }}
        });
        let config = LlmConfig::from_value(&config).unwrap();
        Llm::new(config, &repo_root()).unwrap()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn chat(State(st): State<Arc<ServerState>>, body: Bytes) -> Response {
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let msgs = v["messages"].as_array().cloned().unwrap_or_default();
    let content = |role: &str| {
        msgs.iter()
            .find(|m| m["role"] == role)
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let (system, user) = (content("system"), content("user"));
    let req = Req {
        task: task_of(&user, &system),
        prompt: user,
        turns: msgs.len().saturating_sub(2),
    };
    let reply = (st.rule)(&req);
    st.log
        .lock()
        .unwrap()
        .push((req.task.to_string(), reply.clone()));
    let body = serde_json::json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    });
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn claim(id: &str, text: &str, verdict: &str) -> Claim {
    Claim {
        id: id.into(),
        text: text.into(),
        verdict: verdict.into(),
        original_rating: if verdict == "true" {
            "true"
        } else {
            "pants-fire"
        }
        .into(),
        claim_date: Some("2020-01-01".into()),
        source: "test".into(),
        ..Claim::default()
    }
}

pub fn doc(id: &str, url: &str, title: &str, text: &str) -> Document {
    let domain = url
        .split("://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or("")
        .trim_start_matches("www.")
        .to_string();
    Document {
        id: id.into(),
        url: url.into(),
        canonical_url: url.into(),
        domain,
        source_type: String::new(),
        title: (!title.is_empty()).then(|| title.to_string()),
        text: text.into(),
        content_hash: stable_id("h", &[text]),
        ..Document::default()
    }
}

pub fn link(claim_id: &str, document_id: &str, rank: i64) -> ClaimDocument {
    ClaimDocument {
        id: stable_id("cd", &[claim_id, document_id]),
        claim_id: claim_id.into(),
        document_id: document_id.into(),
        hit_ids: vec![format!("hit-{claim_id}-{document_id}")],
        best_rank: rank,
        query_kinds: vec!["keywords".into()],
    }
}

pub fn inputs(claims: &[Claim], docs: &[Document], links: &[ClaimDocument]) -> Inputs {
    let mut m = BTreeMap::new();
    m.insert("claims".to_string(), Claim::into_rows(claims.to_vec()));
    m.insert("documents".to_string(), Document::into_rows(docs.to_vec()));
    m.insert(
        "claim_documents".to_string(),
        ClaimDocument::into_rows(links.to_vec()),
    );
    Inputs::new(m)
}

pub fn ctx(dir: &Path) -> StageContext {
    StageContext {
        root: repo_root(),
        stage_dir: dir.to_path_buf(),
        pipeline: "test".into(),
        stage_id: "labels".into(),
        progress: Arc::new(NoProgress),
    }
}

/// The rows of one output table.
pub fn table<T: TableRow>(out: &mut noisebench_core::StageOutput, name: &str) -> Vec<T> {
    let rows: Rows = out.tables.remove(name).unwrap();
    T::from_rows(rows).unwrap()
}
