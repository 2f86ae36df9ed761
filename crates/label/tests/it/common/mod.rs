//! Test helpers: a fake OpenAI-compatible server on 127.0.0.1 (`noisebench_testkit`'s) whose
//! replies are decided by a rule over the request (which task, which claim and document), so
//! concurrent requests get the same answers in any order; an `Llm` pointed at it; rows and a
//! stage context.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use noisebench_core::{
    Claim, ClaimDocument, Document, Inputs, NoProgress, Rows, StageContext, TableRow, stable_id,
};
use noisebench_llm::{Llm, LlmConfig};
use noisebench_testkit::{FakeServer, Reply, first_message};

/// Which task a request is for, from its prompt's wording (pipelines/prompts/*.md).
pub fn task_of(first_user: &str, system: &str) -> &'static str {
    if first_user.contains("fact-checking exam") || system.contains("fact-checking exam") {
        if first_user.contains("Document") {
            "exam"
        } else {
            "zero_context"
        }
    } else if first_user.contains("web address of a piece of evidence") {
        "stance_url"
    } else if first_user.contains("First write your reasoning") {
        "stance_reasoned"
    } else if first_user.contains("Say where the text stands") {
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

/// The fake server, answering every request with the rule's reply.
pub struct FakeLlm {
    server: FakeServer,
    /// `(task, reply)` of every request answered so far.
    log: Arc<Mutex<Vec<(String, String)>>>,
}

impl FakeLlm {
    pub fn start(rule: impl Fn(&Req) -> String + Send + Sync + 'static) -> FakeLlm {
        let log = Arc::new(Mutex::new(Vec::new()));
        let answered = Arc::clone(&log);
        let server = FakeServer::answering(move |body| {
            let user = first_message(body, "user");
            let req = Req {
                task: task_of(user, first_message(body, "system")),
                prompt: user.to_string(),
                turns: body["messages"]
                    .as_array()
                    .map_or(0, |m| m.len().saturating_sub(2)),
            };
            let reply = rule(&req);
            answered
                .lock()
                .unwrap()
                .push((req.task.to_string(), reply.clone()));
            Reply::Content(reply)
        });
        FakeLlm { server, log }
    }

    /// `(task, reply)` of every request answered so far.
    pub fn log(&self) -> Vec<(String, String)> {
        self.log.lock().unwrap().clone()
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
                "endpoints": [{"name": "local", "url": self.server.url()}]
            }}
        });
        let config = LlmConfig::from_value(&config).unwrap();
        Llm::new(config, &repo_root()).unwrap()
    }
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
