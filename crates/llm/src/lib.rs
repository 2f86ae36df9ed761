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
//! (`search/src/query_tasks.rs`, `label/src/tasks.rs`). `stage_tasks.rs` is `StageTasks`, the one
//! adapter through which a stage (or the evaluation) declares its task list once: it requires and
//! fingerprints those tasks, and the stage reports their names to the registry
//! (`TypedStage::tasks`), the one list the fuzz targets and the configuration reference read.
//!
//! `lib.rs` is the handle, a thin front (cheap to clone; clones share every part) over four parts
//! an item goes through in order, each a type that owns its state behind its own locks;
//! `setup.rs` builds them from `[llm]` (`config.rs`), `batch.rs` walks an item through them.
//!
//! 1. **Prepare** (`Preparer`, `request.rs`): the configuration, the prompt templates, the models
//!    in use and the declared tasks. It turns an item into a request before any I/O: its model or
//!    offline rule, its messages (from `prompt.rs`: templates in `pipelines/prompts/`, TOML front
//!    matter and a minijinja body, each read when its task is first declared or asked), the
//!    schema sent (a task's `bounds` written into it), parameters and budgets (cut by the model's
//!    context, `server.rs`), and the request hash that keys the cache and joins the call log (over
//!    the task's `reuse_key` instead of the messages when the task declares one; with a model's
//!    `send_task`, also the task's name and input in a `noisebench_task` body field, outside the
//!    hash). `declared.rs` records the tasks each stage declares when its configuration is checked
//!    (with `openai`, a task without a template is a configuration error; a `task_models` key no
//!    stage declared is refused), and `fingerprint.rs` says what decides a stage's answers: the
//!    backend, each of its tasks' model, prompt version and template sha256 (offline: rule
//!    version), sampling parameters, context, embedder; another task's model reruns nothing else.
//! 2. **Answer locally** (`LocalAnswers`, `local_answers.rs`): in item order, what needs no
//!    request (a cache hit, a cache-only miss, the offline rule; a batch of 64 items or more
//!    prepares its requests and works out the offline rule's answers on every core first,
//!    `batch.rs`); items whose requests hash alike share one request. It keeps every successful
//!    answer: in `cache.rs` (the crash-safe response cache, when its mode writes) or, with the
//!    cache off, in `memo.rs` (in memory, so a run still sends a distinct request once).
//! 3. **Transport** (`Transport`, `transport.rs`): the remaining requests, live or as Batch API
//!    jobs, through one dispatch loop on the handle's own two-worker tokio runtime
//!    (`runtime.rs`). `remote.rs` is one request's path (budget, call, a strict parse with one
//!    repair from `parse.rs`, re-asks, the sense checks of `sense.rs`, keys redacted from whatever
//!    comes back, `error.rs`) over `openai.rs` (OpenAI-compatible chat client: endpoints, RPM/TPM
//!    limits with governor, concurrency, resting failing endpoints, the budget; each attempt sent
//!    by `noisebench-web`'s `HttpClient` and its delays from the web layer's `RetryPolicy`, the
//!    loop over attempts kept here because each one passes the limiters again and may go to
//!    another endpoint). An answer cut off at `max_tokens` is sent once more with
//!    `max_tokens_ceiling`, never again identically, then fails `truncated`; `max_concurrency`
//!    item slots are held from an item's first request until its answer is stored, so a kill
//!    costs at most that many repeated requests. `batch_api.rs` is batch mode (`mode =
//!    "batch"`): the uncached requests of one stage call as one OpenAI Batch API job (upload to
//!    `/v1/files`, submit to `/v1/batches`, poll, read the output and error files back), each
//!    answer line then the first reply of the same remote path at the batch price; the job's id
//!    is recorded under the cache folder so a killed run polls the same job instead of sending it
//!    again.
//! 4. **Call log** (`CallLog`, `call_log.rs`): an `LlmCall` for every call, hits and failures
//!    included, the totals (`LlmStats`) and the categorical answers of the constant-answer flag;
//!    through it `Llm` implements core's `CallLog` trait, by which the runner collects the calls
//!    and learns that the budget halted a stage.
//!
//! Beside the parts: `quote.rs` is quote mode: a handle that counts each request it would send
//! (`tokenizer.rs`: the model's tokenizer, tiktoken by name, a `tokenizer.json`, or a stated
//! approximation; `prefix.rs`: which tokens a provider's prompt cache would serve) and answers it
//! with the task's offline rule as a stand-in, never cached, but for a sample sent for real;
//! `noisebench quote` (`crates/cli/src/quote.rs`) prices what it counted. `embed.rs` makes vectors
//! (OpenAI-compatible, local all-MiniLM-L6-v2 with candle behind the `local-embeddings` feature,
//! hashed n-grams); `rerank.rs` is a client for OpenAI-compatible `/v1/rerank` endpoints (vLLM,
//! TEI) through the web crate's `HttpClient` (not cached or logged yet). `server.rs` reads what a
//! model's server says of itself (llama.cpp `/props`, vLLM `/v1/models`: context size, chat
//! template) and tells a context-length refusal (`context_exceeded`). `preflight.rs` asks each
//! declared task's examples of its model on a handle of its own and reports JSON failures, copied
//! examples and constant answers (`Llm::preflight`; the cli runs it before runs and in `check
//! --llm`). docs/llm-weak-models.md.
//!
//! Architecture invariant: an item goes prepare → answer locally → transport → call log, and
//! each part's state is its own (no lock is shared between parts); one dispatch loop serves live
//! and batch requests; one result per item, in input order; only successful, checked answers are
//! cached; a key reaches no log line, error, call log or cache file; no crate but this one calls
//! `require` or `fingerprint_of`, and no crate but a stage crate writes a task list (the
//! architecture test).

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
mod preflight; // one small question per task before a build spends on a model
mod remote; // the remote call: budget, call, parse, repair, re-ask
mod request; // preparing an item: model, messages, parameters, request hash
mod runtime; // the handle's own tokio runtime
mod server; // what a model's server says of itself: context size, chat template
mod setup; // building the handle from `[llm]`
mod transport; // live or batch requests through one dispatch loop

use std::sync::{Arc, OnceLock};

use noisebench_core::LlmCall;

pub use batch_api::BatchLine;
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
pub use transport::BatchStats;

use call_log::CallLog;
use local_answers::LocalAnswers;
use request::Preparer;
use transport::Transport;

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

/// The parts of a handle, in the order an item goes through them; each owns its state.
struct Inner {
    /// What relative paths of the configuration are relative to (the preflight's own handle
    /// and quote mode's tokenizer files need it).
    root: std::path::PathBuf,
    /// Prepare: the configuration, prompts, models and declared tasks.
    prepare: Preparer,
    /// Answer locally: the offline rules, the response cache, the memo.
    local: Arc<LocalAnswers>,
    /// Transport: the live and batch requests, on the handle's own runtime.
    transport: Arc<Transport>,
    /// The call log: records, totals, categorical answers.
    log: Arc<CallLog>,
    embedder: embed::Embedder,
    /// Set in quote mode ([`Llm::start_quote`]): requests are counted, not sent.
    quote: OnceLock<quote::QuoteState>,
}

/// The handle stages use. Cheap to clone; all clones share limits, cache, log and counters.
#[derive(Clone)]
pub struct Llm {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Llm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Llm")
            .field("backend", &self.config().backend)
            .field("prompts", self.inner.prepare.prompts())
            .finish()
    }
}

impl Llm {
    pub fn config(&self) -> &LlmConfig {
        self.inner.prepare.config()
    }

    /// `offline` or `openai:<model id>` for a task: what rows made from its answers should say.
    pub fn provenance(&self, task: &str) -> String {
        self.inner.prepare.provenance(task)
    }

    /// The prompt version used for a task (its offline rule's version for `offline`); `None`
    /// when the task has no readable template.
    pub fn prompt_version(&self, task: TaskInfo) -> Option<String> {
        self.inner.prepare.prompt_version(task)
    }

    /// Declare tasks a stage uses, before any work (a stage's configuration check calls it):
    /// with the `openai` backend each needs a well-formed template, so a missing or malformed
    /// one is a configuration error naming the file, not a drop per item; the offline backend
    /// reads a template when there is one. The engine then counts the tasks as the pipeline's
    /// ([`Llm::fingerprint`], [`Llm::check_task_models`]).
    pub fn require(&self, tasks: &[TaskInfo]) -> Result<(), LlmError> {
        self.inner.prepare.require(tasks)
    }

    /// The tasks the stages declared so far ([`Llm::require`]), in name order: what the
    /// preflight asks ([`Llm::preflight`]).
    pub fn declared_tasks(&self) -> Vec<TaskInfo> {
        self.inner.prepare.declared_tasks()
    }

    /// After every stage of a pipeline declared its tasks: `llm.task_models` may name only
    /// those (a key for a task no stage uses is a typo or a stale setting).
    pub fn check_task_models(&self) -> Result<(), LlmError> {
        self.inner.prepare.check_task_models()
    }

    /// What decides the answers of `tasks`, for the fingerprint of a stage that declares them:
    /// the backend, each task's model, prompt version and (openai) template hash (offline: its
    /// rule's version), the sampling parameters and the embedder. Only these tasks: a new task or
    /// another task's model does not rerun the stage.
    /// Not the cache mode, endpoints, limits or keys: they change how answers are obtained, not
    /// what they are.
    pub fn fingerprint_of(&self, tasks: &[TaskInfo]) -> serde_json::Value {
        self.inner
            .prepare
            .fingerprint_of(tasks, &self.embedder_name())
    }

    /// [`Llm::fingerprint_of`] every task declared so far ([`Llm::require`]): once a pipeline is
    /// checked, the LLM layer of the whole pipeline (what `check` prints and the manifest keeps).
    pub fn fingerprint(&self) -> serde_json::Value {
        self.fingerprint_of(&self.declared_tasks())
    }

    /// How many tokens of input (a window's chunks, a passage) a stage may add to `bare` (the
    /// task's input with nothing to read: a window without chunks) so that one request of `T`
    /// fits the model's context with `llm.max_tokens` left for the answer: the context, less
    /// the answer's budget and `bare`'s rendered prompt, counted with the margin the engine
    /// counts prompts with ([`crate::Llm`] refuses what does not fit as `context_exceeded`).
    /// `None`: the offline rules, or a context not known (neither configured as
    /// `context_tokens` nor said by the server).
    pub fn input_room<T: Task>(&self, bare: &T::Input) -> Option<u64> {
        self.inner.prepare.input_room::<T>(bare)
    }

    /// The input file of the job the items that miss the cache would make, without sending it:
    /// one [`BatchLine`] per distinct request, in input order. For vLLM's `run_batch` or a
    /// provider's console. Items the cache answers are left out; the offline backend has no
    /// requests to write.
    pub fn batch_jsonl<T: Task>(
        &self,
        stage: &str,
        inputs: Vec<T::Input>,
    ) -> Result<String, LlmError> {
        let mut seen = std::collections::HashSet::new();
        let mut out = String::new();
        for input in inputs {
            let p = self.inner.prepare.prepare::<T>(stage, input)?;
            let Some(model) = &p.model else {
                return Err(LlmError::Config(
                    "batch JSONL needs backend = \"openai\": the offline rules send no requests"
                        .into(),
                ));
            };
            if self.inner.local.cached(&p.key) || !seen.insert(p.key.clone()) {
                continue;
            }
            let line = BatchLine::of(model, &p);
            out.push_str(
                &serde_json::to_string(&line)
                    .map_err(|e| LlmError::Internal(format!("batch line: {e}")))?,
            );
            out.push('\n');
        }
        Ok(out)
    }

    /// Take the call log recorded so far (sorted by stage, task, request hash, id).
    pub fn drain_call_log(&self) -> Vec<LlmCall> {
        self.inner.log.drain()
    }

    pub fn stats(&self) -> LlmStats {
        self.inner.log.stats()
    }

    /// Tasks whose categorical answers ([`Task::category`]) from a model all fell in one
    /// category this run, over at least `CONSTANT_AFTER` answers (cache hits included), one
    /// line each: `stance_text (openai:smollm2): "support" for all 24 answers`. A model that
    /// gives every pair the same stance is not reading the pairs; the run summary shows these.
    pub fn constant_answers(&self) -> Vec<String> {
        self.inner.log.constant_where(|_| true)
    }

    /// Estimated USD spent on calls that reached a server.
    pub fn spent_usd(&self) -> f64 {
        self.inner.transport.budget().spent()
    }

    /// What batch mode did so far.
    pub fn batch_stats(&self) -> BatchStats {
        self.inner.transport.batch_stats()
    }
}

impl noisebench_core::CallLog for Llm {
    fn drain_calls(&self) -> Vec<LlmCall> {
        self.drain_call_log()
    }

    fn constant_answers(&self, stage: &str) -> Vec<String> {
        self.inner.log.constant_answers_of(stage)
    }

    fn halted(&self) -> Option<String> {
        let budget = self.inner.transport.budget();
        budget.refused().then(|| {
            format!(
                "llm.max_cost reached (estimated {:.4} of {:.4} USD); calls past it were refused",
                budget.spent(),
                budget.max.unwrap_or(0.0)
            )
        })
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
