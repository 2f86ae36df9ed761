//! noisebench's LLM engine: every labelling, extraction, generation and rewriting step of a
//! pipeline goes through [`Llm`].
//!
//! It knows no task. A [`Task`] (its input, typed answer, checks, offline rule and that rule's
//! version) lives in the crate of the stage that uses it; a stage declares the tasks it uses
//! ([`TaskInfo`]), asks the engine to confirm their prompts when its configuration is checked
//! ([`Llm::require`]) and fingerprints only them ([`Llm::fingerprint_of`]). It hands over typed
//! inputs and gets back typed answers, one `Result` per item, so a failed item is a counted drop
//! and never a failed stage. Behind that: prompt templates loaded from `pipelines/prompts/`
//! ([`prompt`]), two backends (the offline backend, which answers with each task's deterministic
//! rule, and any OpenAI-compatible endpoint, [`openai`]), a crash-safe response [`cache`] keyed by
//! sha256 of everything that determines an answer, rate, token, concurrency and cost limits,
//! strict JSON parsing with a bounded repair and re-asks ([`parse`]), one re-ask with a larger
//! budget for an answer cut off at `max_tokens`, sense checks that an answer is about its input
//! and a flag for categorical answers that never change ([`sense`]), a call log of
//! [`noisebench_core::LlmCall`] records, and sentence embeddings ([`embed`]). With
//! `mode = "batch"` a stage call's uncached requests go as one OpenAI Batch API job at the batch
//! price, resumed by the next run if this one is killed (`batch_api`, [`Llm::batch_jsonl`]).
//!
//! What this crate is not: it writes no tables (the runner writes the call log it drains from
//! [`Llm::drain_call_log`]), knows nothing of pipelines, and never reads a key from anywhere but
//! the environment variable its configuration names.
//!
//! ```no_run
//! use noisebench_llm::{Llm, LlmConfig, Task, TaskInfo};
//! /// `shout`: the text in capitals (a stage crate's task; `pipelines/prompts/shout.md`).
//! struct Shout;
//! impl Task for Shout {
//!     const NAME: &'static str = "shout";
//!     const OFFLINE_VERSION: &'static str = "offline-1";
//!     type Input = String;
//!     type Output = String;
//!     fn offline(input: &String) -> String { input.to_uppercase() }
//! }
//! let llm = Llm::new(LlmConfig::default(), std::path::Path::new(".")).unwrap();
//! llm.require(&[TaskInfo::of::<Shout>()]).unwrap();
//! for result in llm.run_batch::<Shout>("stage", vec!["quiet".to_string()]) {
//!     match result {
//!         Ok(answer) => println!("{} ({})", answer.value, answer.provenance),
//!         Err(e) => println!("dropped: {} ({e})", e.reason()),
//!     }
//! }
//! ```
//!
//! # Modules
//!
//! The LLM engine; every labelling, extraction, generation and rewriting call goes through its
//! `Llm` handle. It knows no task: `task.rs` is the `Task` trait (a name, a typed input, an output
//! parsed strictly from JSON, checks, an offline rule and that rule's version, an example input)
//! and `TaskInfo`, what a stage declares of a task it uses, with the task's functions over JSON
//! (`example`, `offline`, `parse`, `self_check`) for code that knows no task's types (the fuzz
//! target, the fake endpoints); each task lives in the crate of its stage
//! (`search/src/query_tasks.rs`, `label/src/tasks.rs`). `lib.rs` is the handle (cheap to clone;
//! clones share limits, cache, log and counters) and its small public surface; the other modules
//! follow an item's path. `setup.rs` builds the handle from `[llm]` (`config.rs`): prompts, the
//! models in use and their keys, budget, cache, embedder. `declared.rs` records the tasks each
//! stage declares when its configuration is checked (with `openai`, a task without a template is a
//! configuration error; a `task_models` key no stage declared is refused), and `fingerprint.rs`
//! says what decides a stage's answers: the backend, each of its tasks' model, prompt version and
//! template sha256 (offline: rule version), sampling parameters, embedder; another task's model
//! reruns nothing else. `stage_tasks.rs` is `StageTasks`, the one adapter through which a stage (or
//! the evaluation) declares its task list once: it requires and fingerprints those tasks, and the
//! stage reports their names to the registry (`TypedStage::tasks`), the one list the fuzz targets
//! and the configuration reference read. Architecture invariant: no crate but this one calls
//! `require` or `fingerprint_of`, and no crate but a stage crate writes a task list (the
//! architecture test). `batch.rs` answers items, one result per item in input order, synchronously
//! (also from inside another runtime) or async, and lets items whose requests hash alike share one
//! request. `request.rs` prepares an item before any I/O: its model or offline rule, its messages
//! (from `prompt.rs`: templates in `pipelines/prompts/`, TOML front matter and a minijinja body,
//! each read when its task is first declared or asked), parameters, and the request hash that keys
//! the cache and joins the call log (over the task's `reuse_key` instead of the messages when the
//! task declares one: the question tasks, so an edit outside the facts a question rests on keeps
//! it; with a model's `send_task`, also the task's name and input in a `noisebench_task` body
//! field, outside the hash, for endpoints that answer by task). `local_answers.rs` decides, in item
//! order, what needs no request (a cache hit, a cache-only miss, the offline rule; a batch of 64
//! items or more prepares its requests and works out the offline rule's answers on every core
//! first, `batch.rs`) and keeps every successful answer: in `cache.rs` (the response cache, when
//! its mode writes) or, with the cache off, in `memo.rs` (in memory, so a run still sends a
//! distinct request once). `remote.rs` is the remote call path (budget, call, a strict parse with
//! one repair from `parse.rs`, re-asks, keys redacted from whatever comes back), run on the
//! handle's own two-worker tokio runtime (`runtime.rs`) over `openai.rs` (OpenAI-compatible chat
//! client: endpoints, RPM/TPM limits with governor, concurrency, resting failing endpoints, the
//! budget; each attempt sent by `noisebench-web`'s `HttpClient` and its delays from the web layer's
//! `RetryPolicy`, the loop over attempts kept here because each one passes the limiters again and
//! may go to another endpoint). `call_log.rs` records an `LlmCall` for every call, hits and
//! failures included, and keeps the totals; through it `Llm` implements core's `CallLog` trait, by
//! which the runner collects the calls and learns that the budget halted a stage. `quote.rs` is
//! quote mode: a handle that counts each request it would send (`tokenizer.rs`: the model's
//! tokenizer, tiktoken by name, a `tokenizer.json`, or a stated approximation; `prefix.rs`: which
//! tokens a provider's prompt cache would serve) and answers it with the task's offline rule as a
//! stand-in, never cached, but for a sample sent for real; `noisebench quote`
//! (`crates/cli/src/quote.rs`) runs a pipeline so and prices what it counted. `embed.rs` makes
//! vectors (OpenAI-compatible, local all-MiniLM-L6-v2 with candle behind the `local-embeddings`
//! feature, hashed n-grams); `rerank.rs` is a client for OpenAI-compatible `/v1/rerank` endpoints
//! (vLLM, TEI) through the web crate's `HttpClient` (not cached or logged yet); `error.rs` holds
//! the errors and their reason codes. `server.rs` reads what a model's server says of itself
//! (llama.cpp `/props`, vLLM `/v1/models`: context size, chat template) and tells a context-length
//! refusal (`context_exceeded`); the context (or `context_tokens`) cuts each request's budget,
//! sizes stages' inputs (`Llm::input_room`) and is in the fingerprint. `preflight.rs` asks each
//! declared task's examples (`Task::examples`, through `TaskInfo`) of its model on a handle of its
//! own and reports JSON failures, copied examples and constant answers (`Llm::preflight`; the cli
//! runs it before runs and in `check --llm`). A task's `bounds` are written into the schema sent
//! and checked on every answer (`task::check_answer`); a prompt's front matter `examples` are
//! checked on every answer (`sense::not_an_example`). docs/llm-weak-models.md. It writes no tables
//! and knows nothing of pipelines. `sense.rs`: the answer-level checks a task may declare
//! (`Task::sense`, `Task::category`): a well-formed answer that is not about its input is a counted
//! drop with its reason, fresh or cached; a categorical task answered the same all run long is
//! flagged in the run summary. An answer cut off at `max_tokens` is sent once more with
//! `max_tokens_ceiling`, never again identically, then fails `truncated`. `max_concurrency` item
//! slots are held from an item's first request until its answer is stored, so a kill costs at most
//! that many repeated requests. `batch_api.rs`: batch mode (`mode = "batch"`): the uncached
//! requests of one stage call as one OpenAI Batch API job (upload to `/v1/files`, submit to
//! `/v1/batches`, poll, read the output and error files back), each answer line then taking a live
//! reply's path (parse, repair, sense checks, cache, call log) at the batch price; the job's id is
//! recorded under the cache folder so a killed run polls the same job instead of sending it again.
//! Invariant: one result per item, in input order; only successful, checked answers are cached; a
//! key reaches no log line, error, call log or cache file.

pub mod cache;
pub mod config;
pub mod embed;
pub mod error;
pub mod openai;
pub mod parse;
pub mod prefix;
pub mod prompt;
pub mod quote;
pub mod rerank;
pub mod sense;
pub mod stage_tasks;
pub mod task;
pub mod tokenizer;

// The engine behind the handle.
mod batch; // `run_batch` and friends: one request per distinct request hash
mod batch_api; // `llm.mode = "batch"`: a stage call's requests as one OpenAI Batch API job
mod call_log; // the `LlmCall` records and `LlmStats`
mod declared; // the tasks the stages declare: `require`, `check_task_models`
mod fingerprint; // what decides a stage's answers: `fingerprint_of`, `fingerprint`
mod local_answers; // cache hits, cache-only misses, offline rules; keeping answers
mod memo; // the in-memory memo when the cache is off
mod preflight;
mod remote; // the remote call: budget, call, parse, repair, re-ask
mod request; // preparing an item: model, messages, parameters, request hash
mod runtime; // the handle's own tokio runtime
mod server; // what a model's server says of itself: context size, chat template
mod setup; // building the handle from `[llm]` // one small question per task before a build spends on a model

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use noisebench_core::LlmCall;

pub use batch_api::{BatchLine, BatchStats};
pub use call_log::LlmStats;
pub use config::{BackendKind, CacheMode, EmbeddingBackend, LlmConfig, LlmMode, ModelConfig};
pub use embed::Embeddings;
pub use error::LlmError;
pub use preflight::{PreflightReport, TaskInfo, TaskProbe};
pub use quote::{QuoteCall, QuoteSettings};
pub use request::{count_tokens, sha256_hex_bytes};
pub use rerank::{RerankConfig, RerankHit, Reranker};
pub use sense::{Sense, Senseless};
pub use stage_tasks::StageTasks;
pub use task::{ItemBounds, Task};

use cache::Cache;
use openai::OpenAiModel;
use prompt::{Prompt, Prompts};

/// One item's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer<O> {
    pub value: O,
    /// `offline`, or `openai:<model id>`.
    pub provenance: String,
    /// The cache key, which also joins the call log (`llm_calls.request_hash`).
    pub request_hash: String,
    pub prompt_version: String,
    /// Answered without a request of its own: from the cache, or by an identical request
    /// (same `request_hash`) that another item sent in this run.
    pub cache_hit: bool,
}

enum Backend {
    Offline,
    Openai {
        models: BTreeMap<String, Arc<OpenAiModel>>,
    },
}

/// The key of the answers counted for constant-answer checks: (task, model, stage).
type CategoryKey = (String, String, String);

struct Inner {
    config: LlmConfig,
    /// What relative paths of `config` are relative to (the preflight's own handle needs it).
    root: std::path::PathBuf,
    prompts: Prompts,
    /// The tasks the stages declared through [`Llm::require`]: what [`Llm::fingerprint`] covers
    /// and `llm.task_models` may name.
    declared: Mutex<BTreeMap<&'static str, TaskInfo>>,
    reask: Option<minijinja::Environment<'static>>,
    cache: Option<Cache>,
    backend: Backend,
    embedder: embed::Embedder,
    runtime: OnceLock<tokio::runtime::Runtime>,
    log: Mutex<Vec<LlmCall>>,
    /// Remote answers by request hash when there is no cache to hold them, so that a run with
    /// the cache off still sends each request once. Only successes: a failure is retried by the
    /// next item or run that asks, as it would be with the cache on.
    memo: Mutex<HashMap<String, serde_json::Value>>,
    seq: Mutex<BTreeMap<String, u64>>,
    stats: Mutex<LlmStats>,
    /// What batch mode did: [`Llm::batch_stats`].
    batch_stats: Mutex<BatchStats>,
    /// Categorical answers of models per (task, model, stage) and category: what
    /// [`Llm::constant_answers`] and [`Llm::constant_answers_of`] read.
    categories: Mutex<BTreeMap<CategoryKey, BTreeMap<String, u64>>>,
    budget: Arc<openai::Budget>,
    secrets: Vec<String>,
    /// Set in quote mode ([`Llm::start_quote`]): requests are counted, not sent.
    quote: OnceLock<quote::QuoteState>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Dropping a runtime inside another runtime's context panics; shutting down in the
        // background never does.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// The handle stages use. Cheap to clone; all clones share limits, cache, log and counters.
#[derive(Clone)]
pub struct Llm {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Llm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Llm")
            .field("backend", &self.inner.config.backend)
            .field("prompts", &self.inner.prompts)
            .finish()
    }
}

impl Llm {
    pub fn config(&self) -> &LlmConfig {
        &self.inner.config
    }

    /// `offline` or `openai:<model id>` for a task: what rows made from its answers should say.
    pub fn provenance(&self, task: &str) -> String {
        match self.model_for(task) {
            Some(m) => format!("openai:{}", m.model_id),
            None => "offline".into(),
        }
    }

    /// The prompt version used for a task (its offline rule's version for `offline`); `None`
    /// when the task has no readable template.
    pub fn prompt_version(&self, task: TaskInfo) -> Option<String> {
        match &self.inner.backend {
            Backend::Offline => Some(task.offline_version.to_string()),
            Backend::Openai { .. } => self.prompt(task.name).map(|p| p.version.clone()),
        }
    }

    fn prompt(&self, task: &str) -> Option<Arc<Prompt>> {
        self.inner.prompts.get(task).ok().flatten()
    }

    fn model_for(&self, task: &str) -> Option<Arc<OpenAiModel>> {
        let Backend::Openai { models } = &self.inner.backend else {
            return None;
        };
        let name = self
            .inner
            .config
            .task_models
            .get(task)
            .or(self.inner.config.model.as_ref())?;
        models.get(name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handle_can_live_in_a_stage() {
        fn send_sync<T: Send + Sync + Clone + 'static>() {}
        send_sync::<Llm>();
    }
}
