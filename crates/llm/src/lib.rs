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
//! strict JSON parsing with a bounded repair and re-asks ([`parse`]), a call log of
//! [`noisebench_core::LlmCall`] records, and sentence embeddings ([`embed`]).
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

pub mod cache;
pub mod config;
pub mod embed;
pub mod error;
pub mod openai;
pub mod parse;
pub mod prompt;
pub mod task;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use noisebench_core::LlmCall;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use config::{BackendKind, CacheMode, EmbeddingBackend, LlmConfig, ModelConfig};
pub use embed::Embeddings;
pub use error::LlmError;
pub use task::{Task, TaskInfo};

use cache::Cache;
use openai::{Effort, OpenAiModel};
use prompt::{Message, Prompt, Prompts};

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

/// Counters over the life of an [`Llm`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LlmStats {
    /// Task calls and embedding requests, hits included.
    pub calls: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub failures: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Estimated from the price table (0 without prices).
    pub cost_usd: f64,
    pub failures_by_reason: BTreeMap<String, u64>,
}

/// What the cache stores for a task call (only successful, checked answers).
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    task: String,
    backend: String,
    model: String,
    prompt_version: String,
    answer: serde_json::Value,
    tokens_in: u64,
    tokens_out: u64,
}

enum Backend {
    Offline,
    Openai {
        models: BTreeMap<String, Arc<OpenAiModel>>,
    },
}

struct Inner {
    config: LlmConfig,
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
    budget: Arc<openai::Budget>,
    secrets: Vec<String>,
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

/// sha256 of bytes as 64 lowercase hex digits.
pub fn sha256_hex_bytes(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// One distinct request of a batch: the item that sends it and the items that share its outcome
/// (with the item's start, from which their wait is measured).
struct Request<T: Task> {
    sender: usize,
    prepared: Prepared<T>,
    sharers: Vec<(usize, Prepared<T>, Instant)>,
}

/// Everything needed to answer one item, decided before any I/O.
struct Prepared<T: Task> {
    stage: String,
    input: T::Input,
    key: String,
    model: Option<Arc<OpenAiModel>>,
    model_name: String,
    prompt_version: String,
    messages: Vec<Message>,
    params: serde_json::Value,
    response_format: Option<serde_json::Value>,
}

impl Llm {
    /// Build from configuration. `root` resolves relative paths (prompts, cache, model dir).
    /// Fails on a missing API key variable, a malformed prompt file, an unusable cache dir.
    pub fn new(config: LlmConfig, root: &Path) -> Result<Llm, LlmError> {
        config
            .validate()
            .map_err(|e| LlmError::Config(e.to_string()))?;
        let resolve = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                root.join(p)
            }
        };
        let prompts_dir = resolve(&config.prompts_dir);
        let (prompts, reask) = match config.backend {
            // Templates are read when a stage declares its tasks (`require`), so a pipeline
            // needs the prompts of its own stages' tasks only.
            BackendKind::Openai => (
                Prompts::in_dir(&prompts_dir),
                load_reask(&prompts_dir.join("reask.md"))?,
            ),
            // The offline rules need no prompt; the declared tasks' files are still read when
            // present, so a malformed one shows before a switch to `openai`.
            BackendKind::Offline if prompts_dir.is_dir() => (Prompts::in_dir(&prompts_dir), None),
            BackendKind::Offline => (Prompts::empty(), None),
        };
        let budget = Arc::new(openai::Budget::new(config.max_cost));
        let mut models = BTreeMap::new();
        let mut secrets = Vec::new();
        let needs_models = config.backend == BackendKind::Openai
            || config.embeddings.backend == EmbeddingBackend::Openai;
        if needs_models {
            for (name, m) in &config.models {
                let used = config.model.as_deref() == Some(name)
                    || config.task_models.values().any(|v| v == name)
                    || config.embeddings.model.as_deref() == Some(name);
                if !used {
                    continue;
                }
                let model = Arc::new(OpenAiModel::new(name, m, Arc::clone(&budget))?);
                if let Some(k) = model.api_key() {
                    secrets.push(k.to_string());
                }
                if config.max_cost.is_some() && m.price.is_none() {
                    return Err(LlmError::Config(format!(
                        "llm.models.{name}.price: required when llm.max_cost is set"
                    )));
                }
                models.insert(name.clone(), model);
            }
        }
        let cache = match config.cache.mode {
            CacheMode::Off => None,
            _ => Some(Cache::open(&resolve(&config.cache.dir))?),
        };
        let embedder = embed::Embedder::new(&config.embeddings, &models, root)?;
        let backend = match config.backend {
            BackendKind::Offline => Backend::Offline,
            BackendKind::Openai => Backend::Openai { models },
        };
        Ok(Llm {
            inner: Arc::new(Inner {
                config,
                prompts,
                declared: Mutex::new(BTreeMap::new()),
                reask,
                cache,
                backend,
                embedder,
                runtime: OnceLock::new(),
                log: Mutex::new(Vec::new()),
                memo: Mutex::new(HashMap::new()),
                seq: Mutex::new(BTreeMap::new()),
                stats: Mutex::new(LlmStats::default()),
                budget,
                secrets,
            }),
        })
    }

    /// Parse the pipeline's `[llm]` table and build.
    pub fn from_value(value: &serde_json::Value, root: &Path) -> Result<Llm, LlmError> {
        let config = LlmConfig::from_value(value).map_err(|e| LlmError::Config(e.to_string()))?;
        Llm::new(config, root)
    }

    /// The offline backend with no cache and hashed embeddings: for tests of stage crates.
    pub fn offline() -> Llm {
        let mut config = LlmConfig::default();
        config.cache.mode = CacheMode::Off;
        config.embeddings.backend = EmbeddingBackend::Hashed;
        config.prompts_dir = "/nonexistent-noisebench-prompts".into();
        match Llm::new(config, Path::new("/")) {
            Ok(llm) => llm,
            // Invariant: the offline backend without cache, prompts or model files touches
            // nothing that can fail.
            Err(e) => unreachable!("offline Llm cannot fail to build: {e}"),
        }
    }

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

    /// Declare tasks a stage uses, before any work (a stage's configuration check calls it):
    /// with the `openai` backend each needs a well-formed template, so a missing or malformed
    /// one is a configuration error naming the file, not a drop per item; the offline backend
    /// reads a template when there is one. The engine then counts the tasks as the pipeline's
    /// ([`Llm::fingerprint`], [`Llm::check_task_models`]).
    pub fn require(&self, tasks: &[TaskInfo]) -> Result<(), LlmError> {
        let mut missing = Vec::new();
        for t in tasks {
            if !task::valid_name(t.name) {
                return Err(LlmError::Internal(format!(
                    "task name `{}` is not lowercase snake case",
                    t.name
                )));
            }
            let prompt = self.inner.prompts.get(t.name)?;
            if prompt.is_none() && matches!(self.inner.backend, Backend::Openai { .. }) {
                missing.push(t.name);
            }
            let mut declared = self
                .inner
                .declared
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            match declared.get(t.name) {
                // Two definitions under one name would share cache keys with different rules.
                Some(d) if d != t => {
                    return Err(LlmError::Internal(format!(
                        "task `{}` is declared with offline rules `{}` and `{}`",
                        t.name, d.offline_version, t.offline_version
                    )));
                }
                _ => {
                    declared.insert(t.name, *t);
                }
            }
        }
        if !missing.is_empty() {
            let dir = self
                .inner
                .prompts
                .dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default();
            return Err(LlmError::Config(format!(
                "llm.prompts_dir: {dir} has no template for {}",
                missing.join(", ")
            )));
        }
        Ok(())
    }

    /// After every stage of a pipeline declared its tasks: `llm.task_models` may name only
    /// those (a key for a task no stage uses is a typo or a stale setting).
    pub fn check_task_models(&self) -> Result<(), LlmError> {
        let declared = self
            .inner
            .declared
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for task in self.inner.config.task_models.keys() {
            if !declared.contains_key(task.as_str()) {
                let known: Vec<&str> = declared.keys().copied().collect();
                return Err(LlmError::Config(format!(
                    "llm.task_models.{task}: no stage of this pipeline uses task `{task}` (its tasks: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
        Ok(())
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

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.inner.runtime.get_or_init(|| {
            match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("noisebench-llm")
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                // Invariant: building a runtime fails only when the OS refuses threads, after
                // which nothing in this process could run anyway.
                Err(e) => panic!("cannot start the LLM runtime: {e}"),
            }
        })
    }

    /// Run a future on the internal runtime, also when called from inside another runtime.
    fn block_on<F>(&self, f: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        let rt = self.runtime();
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| match s.spawn(|| rt.block_on(f)).join() {
                Ok(v) => v,
                Err(p) => std::panic::resume_unwind(p),
            })
        } else {
            rt.block_on(f)
        }
    }

    fn prepare<T: Task>(&self, stage: &str, input: T::Input) -> Result<Prepared<T>, LlmError> {
        let cfg = &self.inner.config;
        match self.model_for(T::NAME) {
            None => {
                let input_json = serde_json::to_value(&input)
                    .map_err(|e| LlmError::Internal(format!("input: {e}")))?;
                let key = request_key(
                    "offline",
                    "rules",
                    T::NAME,
                    T::OFFLINE_VERSION,
                    &input_json,
                    &serde_json::Value::Null,
                );
                Ok(Prepared {
                    stage: stage.to_string(),
                    input,
                    key,
                    model: None,
                    model_name: "rules".into(),
                    prompt_version: T::OFFLINE_VERSION.into(),
                    messages: Vec::new(),
                    params: serde_json::Value::Null,
                    response_format: None,
                })
            }
            Some(model) => {
                let (messages, prompt) = self.inner.prompts.render(T::NAME, &input)?;
                let mut params = serde_json::json!({
                    "temperature": cfg.temperature,
                    "max_tokens": cfg.max_tokens,
                });
                if let Some(seed) = cfg.seed {
                    params["seed"] = seed.into();
                }
                let response_format = model.config.json_schema.then(|| {
                    serde_json::json!({
                        "type": "json_schema",
                        "json_schema": {"name": T::NAME, "schema": prompt.schema, "strict": true}
                    })
                });
                let key_params = serde_json::json!({
                    "params": params,
                    "response_format": response_format,
                });
                let key = request_key(
                    "openai",
                    &model.model_id,
                    T::NAME,
                    &prompt.version,
                    &messages,
                    &key_params,
                );
                Ok(Prepared {
                    stage: stage.to_string(),
                    input,
                    key,
                    model_name: model.model_id.clone(),
                    model: Some(model),
                    prompt_version: prompt.version.clone(),
                    messages,
                    params,
                    response_format,
                })
            }
        }
    }

    fn provenance_of<T: Task>(p: &Prepared<T>) -> String {
        match &p.model {
            Some(_) => format!("openai:{}", p.model_name),
            None => "offline".into(),
        }
    }

    fn uses_cache<T: Task>(&self, p: &Prepared<T>) -> bool {
        self.inner.cache.is_some() && (p.model.is_some() || self.inner.config.cache.offline)
    }

    /// A cache hit (or, without a cache, an answer this handle already received), logged;
    /// `None` on a miss.
    fn lookup<T: Task>(&self, p: &Prepared<T>, start: Instant) -> Option<Answer<T::Output>> {
        if p.model.is_some() && self.inner.cache.is_none() {
            return self.recall(p, start);
        }
        if !self.uses_cache(p) {
            return None;
        }
        let cache = self.inner.cache.as_ref()?;
        let bytes = cache.get(&p.key)?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        let value: T::Output = serde_json::from_value(entry.answer).ok()?;
        self.record(
            p,
            Record {
                endpoint: String::new(),
                tokens_in: entry.tokens_in,
                tokens_out: entry.tokens_out,
                cache_hit: true,
                cost: self.price_of(p).map(|_| 0.0),
                error: None,
                effort: answered_locally(start),
            },
        );
        Some(Answer {
            value,
            provenance: Self::provenance_of(p),
            request_hash: p.key.clone(),
            prompt_version: p.prompt_version.clone(),
            cache_hit: true,
        })
    }

    fn recall<T: Task>(&self, p: &Prepared<T>, start: Instant) -> Option<Answer<T::Output>> {
        let answer = self
            .inner
            .memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&p.key)?
            .clone();
        let value: T::Output = serde_json::from_value(answer).ok()?;
        self.record(p, self.served_record(p, None, start));
        Some(Answer {
            value,
            provenance: Self::provenance_of(p),
            request_hash: p.key.clone(),
            prompt_version: p.prompt_version.clone(),
            cache_hit: true,
        })
    }

    /// The call record of an item that another item's identical request answered: the request
    /// is counted on the sender's record alone, so this one has no attempts, tokens or cost.
    fn served_record<T: Task>(
        &self,
        p: &Prepared<T>,
        error: Option<&LlmError>,
        start: Instant,
    ) -> Record {
        Record {
            endpoint: String::new(),
            tokens_in: 0,
            tokens_out: 0,
            cache_hit: error.is_none(),
            cost: self.price_of(p).map(|_| 0.0),
            error: error.map(|e| self.describe(e)),
            effort: Effort {
                attempts: 0,
                latency: Duration::ZERO,
                queue: start.elapsed(),
            },
        }
    }

    /// Give an item the outcome of the identical request another item of its batch sent.
    fn share<T: Task>(
        &self,
        p: &Prepared<T>,
        outcome: &Result<Answer<T::Output>, LlmError>,
        start: Instant,
    ) -> Result<Answer<T::Output>, LlmError> {
        self.record(p, self.served_record(p, outcome.as_ref().err(), start));
        match outcome {
            Ok(a) => Ok(Answer {
                cache_hit: true,
                ..a.clone()
            }),
            Err(e) => Err(e.clone()),
        }
    }

    fn price_of<T: Task>(&self, p: &Prepared<T>) -> Option<config::Price> {
        p.model.as_ref().and_then(|m| m.config.price)
    }

    /// Decide an item without network: cache hit, cache-only miss, or the offline rule.
    fn answer_locally<T: Task>(
        &self,
        p: &Prepared<T>,
        start: Instant,
    ) -> Option<Result<Answer<T::Output>, LlmError>> {
        if let Some(a) = self.lookup(p, start) {
            return Some(Ok(a));
        }
        let use_cache = self.uses_cache(p);
        if use_cache {
            self.bump(|s| s.cache_misses += 1);
        }
        if use_cache && self.inner.config.cache.mode == CacheMode::CacheOnly {
            let e = LlmError::CacheMiss {
                request_hash: p.key.clone(),
            };
            self.record_failure(p, &e, answered_locally(start), String::new());
            return Some(Err(e));
        }
        if p.model.is_none() {
            let value = T::offline(&p.input);
            if use_cache {
                self.store(p, &value, 0, 0);
            }
            self.record(
                p,
                Record {
                    endpoint: String::new(),
                    tokens_in: 0,
                    tokens_out: 0,
                    cache_hit: false,
                    cost: None,
                    error: None,
                    effort: answered_locally(start),
                },
            );
            return Some(Ok(Answer {
                value,
                provenance: "offline".into(),
                request_hash: p.key.clone(),
                prompt_version: p.prompt_version.clone(),
                cache_hit: false,
            }));
        }
        None
    }

    fn store<T: Task>(&self, p: &Prepared<T>, value: &T::Output, tokens_in: u64, tokens_out: u64) {
        let Some(cache) = &self.inner.cache else {
            if p.model.is_some()
                && let Ok(answer) = serde_json::to_value(value)
            {
                self.inner
                    .memo
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(p.key.clone(), answer);
            }
            return;
        };
        if self.inner.config.cache.mode != CacheMode::ReadWrite {
            return;
        }
        let entry = Entry {
            task: T::NAME.into(),
            backend: if p.model.is_some() {
                "openai"
            } else {
                "offline"
            }
            .into(),
            model: p.model_name.clone(),
            prompt_version: p.prompt_version.clone(),
            answer: serde_json::to_value(value).unwrap_or_default(),
            tokens_in,
            tokens_out,
        };
        match serde_json::to_vec(&entry) {
            Ok(bytes) => {
                if let Err(e) = cache.put(&p.key, &bytes) {
                    tracing::warn!(error = %e, "cache write failed; the answer is still used");
                }
            }
            Err(e) => tracing::warn!(error = %e, "cache entry not serialisable"),
        }
    }

    /// Call the remote backend for one prepared item: budget, call, parse, repair, re-ask.
    async fn remote<T: Task>(self, p: Prepared<T>) -> Result<Answer<T::Output>, LlmError> {
        let Some(model) = p.model.clone() else {
            return Err(LlmError::Internal("remote call without a model".into()));
        };
        let salt = u64::from_str_radix(&p.key[..16], 16).unwrap_or(0);
        let mut messages = p.messages.clone();
        let (mut tokens_in, mut tokens_out) = (0u64, 0u64);
        let mut effort = Effort::default();
        let mut endpoint = String::new();
        let max_tries = self.inner.config.max_reasks + 1;
        let mut last_error = String::new();
        for tr in 1..=max_tries {
            let estimate = openai::estimate_tokens(&messages) + self.inner.config.max_tokens as u64;
            let reply = model
                .chat(
                    &messages,
                    &p.params,
                    p.response_format.clone(),
                    estimate,
                    salt.wrapping_add(tr as u64),
                    tr == 1,
                    &mut effort,
                )
                .await;
            let reply = match reply {
                Ok(r) => r,
                Err(e) => {
                    let e = self.redact_error(e);
                    self.record_failure(&p, &e, effort, endpoint);
                    return Err(e);
                }
            };
            tokens_in += reply.tokens_in;
            tokens_out += reply.tokens_out;
            endpoint = reply.endpoint.clone();
            match parse::parse_answer::<T>(&p.input, &reply.value) {
                Ok((value, how)) => {
                    if how == parse::Parsed::Repaired {
                        tracing::debug!(task = %T::NAME, "answer repaired");
                    }
                    self.store(&p, &value, tokens_in, tokens_out);
                    let cost = model.config.price.map(|pr| pr.cost(tokens_in, tokens_out));
                    self.record(
                        &p,
                        Record {
                            endpoint,
                            tokens_in,
                            tokens_out,
                            cache_hit: false,
                            cost,
                            error: None,
                            effort,
                        },
                    );
                    return Ok(Answer {
                        value,
                        provenance: Self::provenance_of(&p),
                        request_hash: p.key.clone(),
                        prompt_version: p.prompt_version.clone(),
                        cache_hit: false,
                    });
                }
                Err(why) => {
                    tracing::debug!(task = %T::NAME, try_ = tr, error = %why, "unusable answer");
                    last_error = why.clone();
                    if tr < max_tries {
                        messages.push(Message {
                            role: "assistant".into(),
                            content: reply.value.clone(),
                        });
                        messages.push(Message {
                            role: "user".into(),
                            content: self.reask_text(&why),
                        });
                    }
                }
            }
        }
        let e = LlmError::Unparseable {
            tries: max_tries,
            detail: self.redact_text(&last_error),
        };
        self.record_failure_tokens(&p, &e, effort, endpoint, tokens_in, tokens_out);
        Err(e)
    }

    fn reask_text(&self, error: &str) -> String {
        let rendered = self.inner.reask.as_ref().and_then(|env| {
            env.get_template("reask")
                .ok()?
                .render(minijinja::context! { error => error })
                .ok()
        });
        rendered.unwrap_or_else(|| {
            // Fallback when `reask.md` is absent from the prompts directory.
            format!("Your reply could not be used: {error}. Reply again with only the JSON object.")
        })
    }

    fn redact_text(&self, text: &str) -> String {
        let mut t = text.to_string();
        for s in &self.inner.secrets {
            t = openai::redact(&t, Some(s));
        }
        t
    }

    fn redact_error(&self, e: LlmError) -> LlmError {
        match e {
            LlmError::Http {
                endpoint,
                status,
                detail,
            } => LlmError::Http {
                endpoint,
                status,
                detail: self.redact_text(&detail),
            },
            LlmError::RetriesExhausted { attempts, last } => LlmError::RetriesExhausted {
                attempts,
                last: self.redact_text(&last),
            },
            other => other,
        }
    }

    fn bump(&self, f: impl FnOnce(&mut LlmStats)) {
        f(&mut self.inner.stats.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// A call record's `error`: the reason code first, so totals can group by it.
    fn describe(&self, e: &LlmError) -> String {
        format!("{}: {}", e.reason(), self.redact_text(&e.to_string()))
    }

    fn record_failure<T: Task>(
        &self,
        p: &Prepared<T>,
        e: &LlmError,
        effort: Effort,
        endpoint: String,
    ) {
        self.record_failure_tokens(p, e, effort, endpoint, 0, 0);
    }

    fn record_failure_tokens<T: Task>(
        &self,
        p: &Prepared<T>,
        e: &LlmError,
        effort: Effort,
        endpoint: String,
        tokens_in: u64,
        tokens_out: u64,
    ) {
        let cost = self.price_of(p).map(|pr| pr.cost(tokens_in, tokens_out));
        self.record(
            p,
            Record {
                endpoint,
                tokens_in,
                tokens_out,
                cache_hit: false,
                cost,
                error: Some(self.describe(e)),
                effort,
            },
        );
    }

    fn record<T: Task>(&self, p: &Prepared<T>, r: Record) {
        let backend = if p.model.is_some() {
            "openai"
        } else {
            "offline"
        };
        self.log_call(LogLine {
            stage: &p.stage,
            task: T::NAME,
            prompt_version: &p.prompt_version,
            backend,
            model: &p.model_name,
            request_hash: &p.key,
            record: r,
        });
    }

    fn log_call(&self, l: LogLine<'_>) {
        let n = {
            let mut seq = self.inner.seq.lock().unwrap_or_else(|e| e.into_inner());
            let c = seq
                .entry(format!("{}/{}", l.stage, l.request_hash))
                .or_insert(0);
            *c += 1;
            *c
        };
        let r = l.record;
        {
            let mut s = self.inner.stats.lock().unwrap_or_else(|e| e.into_inner());
            s.calls += 1;
            if r.cache_hit {
                s.cache_hits += 1;
            }
            s.tokens_in += if r.cache_hit { 0 } else { r.tokens_in };
            s.tokens_out += if r.cache_hit { 0 } else { r.tokens_out };
            s.cost_usd += r.cost.unwrap_or(0.0);
            if let Some(e) = &r.error {
                s.failures += 1;
                let reason = e.split(':').next().unwrap_or("error").to_string();
                *s.failures_by_reason.entry(reason).or_insert(0) += 1;
            }
        }
        let call = LlmCall {
            id: noisebench_core::stable_id("llm_call", &[l.stage, l.request_hash, &n.to_string()]),
            stage: l.stage.to_string(),
            task: l.task.to_string(),
            prompt_version: l.prompt_version.to_string(),
            backend: l.backend.to_string(),
            model: l.model.to_string(),
            endpoint: r.endpoint,
            request_hash: l.request_hash.to_string(),
            tokens_in: r.tokens_in as i64,
            tokens_out: r.tokens_out as i64,
            latency_ms: r.effort.latency.as_millis() as i64,
            queue_ms: r.effort.queue.as_millis() as i64,
            attempts: r.effort.attempts as i64,
            cache_hit: r.cache_hit,
            cost_usd: r.cost,
            error: r.error,
        };
        self.inner
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(call);
    }

    /// Answer one item (sync).
    pub fn run<T: Task>(
        &self,
        stage: &str,
        input: T::Input,
    ) -> Result<Answer<T::Output>, LlmError> {
        self.run_batch::<T>(stage, vec![input])
            .into_iter()
            .next()
            .unwrap_or_else(|| Err(LlmError::Internal("empty batch result".into())))
    }

    /// Answer many items concurrently (sync); results in input order, one per item. Cache hits
    /// and offline answers are decided on the calling thread; the rest run on the internal
    /// runtime under the model's limits.
    ///
    /// Items with the same request hash make one request: the first of them sends it and is
    /// logged as the call; each other gets its answer (or its error) and a record with no
    /// attempts, tokens or cost, `cache_hit` true when the answer was good.
    pub fn run_batch<T: Task>(
        &self,
        stage: &str,
        inputs: Vec<T::Input>,
    ) -> Vec<Result<Answer<T::Output>, LlmError>> {
        struct NoBar;
        impl noisebench_core::ProgressBar for NoBar {
            fn inc(&self, _n: u64) {}
            fn finish(&self) {}
        }
        self.run_batch_with_progress::<T>(stage, inputs, &NoBar)
    }

    /// [`Llm::run_batch`], advancing `bar` by one as each item is answered (e.g. a bar from
    /// `ctx.progress.bar(...)`).
    pub fn run_batch_with_progress<T: Task>(
        &self,
        stage: &str,
        inputs: Vec<T::Input>,
        bar: &dyn noisebench_core::ProgressBar,
    ) -> Vec<Result<Answer<T::Output>, LlmError>> {
        let mut results: Vec<Option<Result<Answer<T::Output>, LlmError>>> =
            Vec::with_capacity(inputs.len());
        // Items whose prompts render alike make one request between them: a repeated paid
        // call would buy the same answer again.
        let mut requests: Vec<Request<T>> = Vec::new();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        for input in inputs {
            let start = Instant::now();
            let i = results.len();
            results.push(None);
            let p = match self.prepare::<T>(stage, input) {
                Ok(p) => p,
                Err(e) => {
                    bar.inc(1);
                    results[i] = Some(Err(e));
                    continue;
                }
            };
            if let Some(&r) = by_key.get(&p.key) {
                requests[r].sharers.push((i, p, start));
                continue;
            }
            match self.answer_locally(&p, start) {
                Some(r) => {
                    bar.inc(1);
                    results[i] = Some(r);
                }
                None => {
                    by_key.insert(p.key.clone(), requests.len());
                    requests.push(Request {
                        sender: i,
                        prepared: p,
                        sharers: Vec::new(),
                    });
                }
            }
        }
        if !requests.is_empty() {
            let me = self.clone();
            let done = self.block_on(async move {
                use futures::StreamExt;
                let mut pending: futures::stream::FuturesUnordered<_> = requests
                    .into_iter()
                    .map(|r| {
                        let h = tokio::spawn(me.clone().remote::<T>(r.prepared));
                        async move { (r.sender, r.sharers, h.await) }
                    })
                    .collect();
                let mut out = Vec::with_capacity(pending.len());
                while let Some((i, sharers, r)) = pending.next().await {
                    let r = r.unwrap_or_else(|e| Err(LlmError::Internal(format!("task: {e}"))));
                    bar.inc(1);
                    for (j, p, start) in sharers {
                        out.push((j, me.share(&p, &r, start)));
                        bar.inc(1);
                    }
                    out.push((i, r));
                }
                out
            });
            for (i, r) in done {
                results[i] = Some(r);
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(LlmError::Internal("item not answered".into()))))
            .collect()
    }

    /// Answer one item from async code (any tokio runtime).
    pub async fn call<T: Task>(
        &self,
        stage: &str,
        input: T::Input,
    ) -> Result<Answer<T::Output>, LlmError> {
        let start = Instant::now();
        let p = self.prepare::<T>(stage, input)?;
        if let Some(r) = self.answer_locally(&p, start) {
            return r;
        }
        let handle = self.runtime().handle().clone();
        handle
            .spawn(self.clone().remote::<T>(p))
            .await
            .unwrap_or_else(|e| Err(LlmError::Internal(format!("task: {e}"))))
    }

    /// Embed texts (sync). One vector per text, in order, from the configured embedder.
    pub fn embed(&self, stage: &str, texts: &[String]) -> Result<Embeddings, LlmError> {
        embed::embed(self, stage, texts)
    }

    /// Which embedder makes vectors: `hashed-ngrams:<dim>`, `local:all-MiniLM-L6-v2`,
    /// `openai:<model>`.
    pub fn embedder_name(&self) -> String {
        self.inner.embedder.name()
    }

    /// Take the call log recorded so far (sorted by stage, task, request hash, id).
    pub fn drain_call_log(&self) -> Vec<LlmCall> {
        let mut calls =
            std::mem::take(&mut *self.inner.log.lock().unwrap_or_else(|e| e.into_inner()));
        calls.sort_by(|a, b| {
            (&a.stage, &a.task, &a.request_hash, &a.id).cmp(&(
                &b.stage,
                &b.task,
                &b.request_hash,
                &b.id,
            ))
        });
        calls
    }

    pub fn stats(&self) -> LlmStats {
        self.inner
            .stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Estimated USD spent on calls that reached a server.
    pub fn spent_usd(&self) -> f64 {
        self.inner.budget.spent()
    }

    /// What decides the answers of `tasks`, for the fingerprint of a stage that declares them:
    /// the backend, each task's model, prompt version and (openai) template hash (offline: its
    /// rule's version), the sampling parameters and the embedder. Only these tasks: a new task or
    /// another task's model does not rerun the stage.
    /// Not the cache mode, endpoints, limits or keys: they change how answers are obtained, not
    /// what they are.
    pub fn fingerprint_of(&self, tasks: &[TaskInfo]) -> serde_json::Value {
        let c = &self.inner.config;
        let tasks: BTreeMap<&str, serde_json::Value> = tasks
            .iter()
            .map(|t| {
                let mut v = serde_json::json!({
                    "model": self.provenance(t.name),
                    "prompt_version": self.prompt_version(*t),
                });
                // The template's bytes, where a template is used: an edited prompt reruns the
                // stages that use it even when its version was not bumped.
                if let (Backend::Openai { .. }, Some(p)) =
                    (&self.inner.backend, self.prompt(t.name))
                {
                    v["prompt_sha256"] = serde_json::json!(p.sha256);
                }
                (t.name, v)
            })
            .collect();
        serde_json::json!({
            "backend": c.backend.as_str(),
            "tasks": tasks,
            "temperature": c.temperature,
            "max_tokens": c.max_tokens,
            "seed": c.seed,
            "max_reasks": c.max_reasks,
            "embedder": self.embedder_name(),
        })
    }

    /// [`Llm::fingerprint_of`] every task declared so far ([`Llm::require`]): once a pipeline is
    /// checked, the LLM layer of the whole pipeline (what `check` prints and the manifest keeps).
    pub fn fingerprint(&self) -> serde_json::Value {
        let declared: Vec<TaskInfo> = self
            .inner
            .declared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .copied()
            .collect();
        self.fingerprint_of(&declared)
    }
}

impl noisebench_core::CallLog for Llm {
    fn drain_calls(&self) -> Vec<LlmCall> {
        self.drain_call_log()
    }

    fn halted(&self) -> Option<String> {
        let budget = &self.inner.budget;
        budget.refused().then(|| {
            format!(
                "llm.max_cost reached (estimated {:.4} of {:.4} USD); calls past it were refused",
                budget.spent(),
                budget.max.unwrap_or(0.0)
            )
        })
    }
}

struct Record {
    endpoint: String,
    tokens_in: u64,
    tokens_out: u64,
    cache_hit: bool,
    cost: Option<f64>,
    error: Option<String>,
    effort: Effort,
}

/// How long an item answered without a request took: all of it is the answer's own time.
pub(crate) fn answered_locally(start: Instant) -> Effort {
    Effort {
        attempts: 0,
        latency: start.elapsed(),
        queue: Duration::ZERO,
    }
}

struct LogLine<'a> {
    stage: &'a str,
    task: &'a str,
    prompt_version: &'a str,
    backend: &'a str,
    model: &'a str,
    request_hash: &'a str,
    record: Record,
}

/// sha256 over a canonical JSON of everything that determines an answer.
fn request_key<M: Serialize>(
    backend: &str,
    model: &str,
    task: &str,
    prompt_version: &str,
    messages: &M,
    params: &serde_json::Value,
) -> String {
    // A tuple serialises as the JSON array [backend, model, task, version, messages, params].
    let bytes = serde_json::to_vec(&(backend, model, task, prompt_version, messages, params))
        .unwrap_or_default();
    sha256_hex_bytes(&bytes)
}

fn load_reask(path: &Path) -> Result<Option<minijinja::Environment<'static>>, LlmError> {
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| LlmError::Prompt(format!("{}: {e}", path.display())))?;
    let body = text
        .strip_prefix("+++\n")
        .and_then(|r| r.split_once("\n+++\n"))
        .map(|(_, b)| b.trim().to_string())
        .ok_or_else(|| LlmError::Prompt(format!("{}: needs `+++` front matter", path.display())))?;
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.add_template_owned("reask".to_string(), body)
        .map_err(|e| LlmError::Prompt(format!("{}: {e}", path.display())))?;
    Ok(Some(env))
}

// Internal access for the embeddings module.
impl Llm {
    pub(crate) fn inner_cache(&self) -> Option<&Cache> {
        self.inner.cache.as_ref()
    }
    pub(crate) fn embedder(&self) -> &embed::Embedder {
        &self.inner.embedder
    }
    pub(crate) fn block_on_pub<F>(&self, f: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        self.block_on(f)
    }
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn log_embedding(
        &self,
        stage: &str,
        backend: &str,
        model: &str,
        request_hash: &str,
        endpoint: String,
        tokens_in: u64,
        effort: Effort,
        cache_hit: bool,
        cost: Option<f64>,
        error: Option<&LlmError>,
    ) {
        self.log_call(LogLine {
            stage,
            task: "embedding",
            prompt_version: "",
            backend,
            model,
            request_hash,
            record: Record {
                endpoint,
                tokens_in,
                tokens_out: 0,
                cache_hit,
                cost,
                error: error.map(|e| self.describe(e)),
                effort,
            },
        });
    }
    pub(crate) fn cache_mode(&self) -> CacheMode {
        self.inner.config.cache.mode
    }
    pub(crate) fn bump_stats(&self, f: impl FnOnce(&mut LlmStats)) {
        self.bump(f)
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

    struct Keywords;
    impl Task for Keywords {
        const NAME: &'static str = "keywords";
        const OFFLINE_VERSION: &'static str = "offline-1";
        type Input = serde_json::Value;
        type Output = serde_json::Value;
        fn offline(_: &serde_json::Value) -> serde_json::Value {
            serde_json::json!({"keywords": ["k"]})
        }
    }
    struct ExamVerdict;
    impl Task for ExamVerdict {
        const NAME: &'static str = "exam_verdict";
        const OFFLINE_VERSION: &'static str = "offline-2";
        type Input = serde_json::Value;
        type Output = serde_json::Value;
        fn offline(_: &serde_json::Value) -> serde_json::Value {
            serde_json::json!({"verdict": "undecided"})
        }
    }
    const KEYWORDS: TaskInfo = TaskInfo::of::<Keywords>();
    const EXAM: TaskInfo = TaskInfo::of::<ExamVerdict>();

    #[test]
    fn the_fingerprint_follows_models_prompts_and_parameters_but_not_limits() {
        let prompts = tempfile::tempdir().unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        for entry in std::fs::read_dir(&repo).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), prompts.path().join(entry.file_name())).unwrap();
        }
        let cache = tempfile::tempdir().unwrap();
        let config = |model: &str, rpm: u32, exam_model: Option<&str>| {
            let mut c = serde_json::json!({"backend": "openai", "model": "m", "prompts_dir": prompts.path(),
                "cache": {"dir": cache.path()}, "embeddings": {"backend": "hashed"},
                "models": {"m": {"name": model, "rpm": rpm,
                    "endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]},
                    "x": {"name": "gpt-x", "endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]}}});
            if let Some(m) = exam_model {
                c["task_models"] = serde_json::json!({"exam_verdict": m});
            }
            c
        };
        let fp = |v: serde_json::Value, tasks: &[TaskInfo]| {
            Llm::from_value(&v, Path::new("/"))
                .unwrap()
                .fingerprint_of(tasks)
        };
        let base = fp(config("gpt-a", 60, None), &[KEYWORDS, EXAM]);
        assert_eq!(base["tasks"]["keywords"]["model"], "openai:gpt-a");
        assert_eq!(base["tasks"]["keywords"]["prompt_version"], "1");
        assert_eq!(
            base["tasks"]["keywords"]["prompt_sha256"]
                .as_str()
                .map(str::len),
            Some(64)
        );
        // Only the declared tasks.
        assert_eq!(base["tasks"].as_object().unwrap().len(), 2);
        // Limits and endpoints decide how answers come, not what they are.
        assert_eq!(fp(config("gpt-a", 600, None), &[KEYWORDS, EXAM]), base);
        // Another model changes every task.
        assert_ne!(
            fp(config("gpt-b", 60, None), &[KEYWORDS, EXAM])["tasks"]["exam_verdict"],
            base["tasks"]["exam_verdict"]
        );
        // Another model for one task changes the fingerprint of the stages using it only.
        let only_keywords = fp(config("gpt-a", 60, None), &[KEYWORDS]);
        assert_eq!(
            fp(config("gpt-a", 60, Some("x")), &[KEYWORDS]),
            only_keywords
        );
        assert_ne!(fp(config("gpt-a", 60, Some("x")), &[KEYWORDS, EXAM]), base);
        // An edited template without a version bump changes its task only.
        let path = prompts.path().join("keywords.md");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace("Do not judge the claim.", "Never judge the claim."),
        )
        .unwrap();
        let edited = fp(config("gpt-a", 60, None), &[KEYWORDS, EXAM]);
        assert_ne!(edited["tasks"]["keywords"], base["tasks"]["keywords"]);
        assert_eq!(
            edited["tasks"]["exam_verdict"],
            base["tasks"]["exam_verdict"]
        );
        // The offline rules use no template; each task has its own rule version.
        let offline = Llm::offline().fingerprint_of(&[KEYWORDS, EXAM]);
        assert_eq!(offline["backend"], "offline");
        assert!(offline["tasks"]["keywords"].get("prompt_sha256").is_none());
        assert_eq!(
            offline["tasks"]["exam_verdict"]["prompt_version"],
            "offline-2"
        );
    }

    #[test]
    fn openai_needs_the_prompts_of_the_declared_tasks_only() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = serde_json::json!({"backend": "openai", "model": "m", "prompts_dir": dir.path(),
            "models": {"m": {"endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]}}});
        let llm = Llm::from_value(&cfg, Path::new("/")).unwrap();
        llm.require(&[]).unwrap();
        let e = llm.require(&[KEYWORDS]).unwrap_err();
        assert!(e.to_string().contains("no template for keywords"), "{e}");
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts/exam_verdict.md"),
            dir.path().join("exam_verdict.md"),
        )
        .unwrap();
        llm.require(&[EXAM]).unwrap();
    }

    #[test]
    fn declared_tasks_are_the_pipelines_and_task_models_name_only_them() {
        let cfg = serde_json::json!({"backend": "offline", "task_models": {"keywords": "m"},
            "models": {"m": {"endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]}},
            "cache": {"mode": "off"}, "embeddings": {"backend": "hashed"}});
        let llm = Llm::from_value(&cfg, Path::new("/nonexistent")).unwrap();
        assert_eq!(llm.fingerprint()["tasks"], serde_json::json!({}));
        let e = llm.check_task_models().unwrap_err();
        assert!(
            e.to_string().contains("llm.task_models.keywords: no stage"),
            "{e}"
        );
        llm.require(&[KEYWORDS, EXAM]).unwrap();
        llm.check_task_models().unwrap();
        assert_eq!(
            llm.fingerprint()["tasks"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["exam_verdict", "keywords"]
        );
        // One name, two rules: refused (they would share cache keys).
        struct Impostor;
        impl Task for Impostor {
            const NAME: &'static str = "keywords";
            const OFFLINE_VERSION: &'static str = "other";
            type Input = serde_json::Value;
            type Output = serde_json::Value;
            fn offline(_: &serde_json::Value) -> serde_json::Value {
                serde_json::Value::Null
            }
        }
        assert!(llm.require(&[TaskInfo::of::<Impostor>()]).is_err());
    }
}
