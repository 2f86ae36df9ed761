//! Preparing an item's request before any I/O: which model answers its task (or the offline
//! rule), the rendered messages, sampling parameters and response format, and the request hash
//! (sha256 over a canonical JSON of everything that determines the answer), which keys the
//! cache, merges identical requests and joins the call log.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::config::{self, LlmConfig};
use crate::error::LlmError;
use crate::openai::OpenAiModel;
use crate::preflight::TaskInfo;
use crate::prompt::{Message, Prompt, Prompts};
use crate::task::Task;

/// Who answers: the offline rules, or the models the configuration names.
pub(crate) enum Backend {
    Offline,
    Openai {
        models: BTreeMap<String, Arc<OpenAiModel>>,
    },
}

/// The prepare part of a handle: the configuration, the prompt templates, the models and the
/// tasks the stages declared ([`crate::declared`]); it turns an item into a [`Prepared`]
/// request and says what decides a stage's answers ([`crate::fingerprint`]).
pub(crate) struct Preparer {
    pub(crate) config: LlmConfig,
    pub(crate) prompts: Prompts,
    pub(crate) backend: Backend,
    /// The tasks the stages declared through `require`: what the fingerprint covers and
    /// `llm.task_models` may name.
    pub(crate) declared: Mutex<BTreeMap<&'static str, TaskInfo>>,
}

/// Everything needed to answer one item, decided before any I/O.
pub(crate) struct Prepared<T: Task> {
    pub(crate) stage: String,
    pub(crate) input: T::Input,
    pub(crate) key: String,
    pub(crate) model: Option<Arc<OpenAiModel>>,
    pub(crate) model_name: String,
    pub(crate) prompt_version: String,
    pub(crate) messages: Vec<Message>,
    pub(crate) params: serde_json::Value,
    pub(crate) response_format: Option<serde_json::Value>,
    /// The first request's `max_tokens`, and the budget of the one re-ask of a cut-off answer.
    pub(crate) max_tokens: u32,
    pub(crate) max_tokens_ceiling: u32,
    /// The example values of the task's prompt ([`crate::prompt::Prompt::examples`]).
    pub(crate) examples: Vec<String>,
}

/// A prompt's tokens as a server may count them: the cl100k estimate with a margin, since a
/// small model's tokenizer may cut the same text finer (15% and 32 tokens).
pub(crate) fn prompt_tokens_with_margin(messages: &[Message]) -> u64 {
    let n = crate::openai::estimate_tokens(messages);
    n + n * 15 / 100 + 32
}

/// Tokens of a text by the cl100k estimate the engine uses for limits and budgets: what a task
/// uses to say how long its answer is ([`Task::answer_tokens`]) and a stage to size what it
/// sends ([`crate::Llm::input_room`]).
pub fn count_tokens(text: &str) -> u64 {
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len() as u64
}

/// sha256 of bytes as 64 lowercase hex digits.
pub fn sha256_hex_bytes(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
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

impl Preparer {
    pub(crate) fn new(config: LlmConfig, prompts: Prompts, backend: Backend) -> Self {
        Preparer {
            config,
            prompts,
            backend,
            declared: Mutex::new(BTreeMap::new()),
        }
    }

    pub(crate) fn config(&self) -> &LlmConfig {
        &self.config
    }

    pub(crate) fn prompts(&self) -> &Prompts {
        &self.prompts
    }

    /// The models in use, by key; `None` with the offline backend.
    pub(crate) fn models(&self) -> Option<&BTreeMap<String, Arc<OpenAiModel>>> {
        match &self.backend {
            Backend::Offline => None,
            Backend::Openai { models } => Some(models),
        }
    }

    /// Whether models answer (the `openai` backend) rather than the offline rules.
    pub(crate) fn is_openai(&self) -> bool {
        matches!(self.backend, Backend::Openai { .. })
    }

    /// `offline` or `openai:<model id>` for a task.
    pub(crate) fn provenance(&self, task: &str) -> String {
        match self.model_for(task) {
            Some(m) => format!("openai:{}", m.model_id),
            None => "offline".into(),
        }
    }

    /// The prompt version used for a task (its offline rule's version for `offline`).
    pub(crate) fn prompt_version(&self, task: TaskInfo) -> Option<String> {
        match &self.backend {
            Backend::Offline => Some(task.offline_version.to_string()),
            Backend::Openai { .. } => self.prompt(task.name).map(|p| p.version.clone()),
        }
    }

    pub(crate) fn prompt(&self, task: &str) -> Option<Arc<Prompt>> {
        self.prompts.get(task).ok().flatten()
    }

    pub(crate) fn model_for(&self, task: &str) -> Option<Arc<OpenAiModel>> {
        let models = self.models()?;
        let name = self
            .config
            .task_models
            .get(task)
            .or(self.config.model.as_ref())?;
        models.get(name).cloned()
    }

    pub(crate) fn prepare<T: Task>(
        &self,
        stage: &str,
        input: T::Input,
    ) -> Result<Prepared<T>, LlmError> {
        let cfg = &self.config;
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
                    max_tokens: 0,
                    max_tokens_ceiling: 0,
                    examples: Vec::new(),
                })
            }
            Some(model) => {
                let (messages, prompt, schema) =
                    self.prompts.render_with(T::NAME, &input, |s| {
                        (!T::bounds(&input).is_empty())
                            .then(|| crate::task::schema_for::<T>(s, &input))
                    })?;
                let (max_tokens, max_tokens_ceiling) =
                    self.budgets::<T>(&model, &input, &messages)?;
                let mut params = serde_json::json!({
                    "temperature": cfg.temperature,
                    "max_tokens": max_tokens,
                });
                if let Some(seed) = cfg.seed {
                    params["seed"] = seed.into();
                }
                let response_format = model.config.json_schema.then(|| {
                    serde_json::json!({
                        "type": "json_schema",
                        "json_schema": {"name": T::NAME, "schema": schema, "strict": true}
                    })
                });
                let key_params = serde_json::json!({
                    "params": params,
                    "response_format": response_format,
                });
                // What the answer is keyed on: the task's reuse key when it declares one (so an
                // edit elsewhere in a prompt's context keeps the answer), else the messages.
                let keyed_on = match T::reuse_key(&input) {
                    Some(reuse) => serde_json::json!({ "reuse_key": reuse }),
                    None => serde_json::to_value(&messages)
                        .map_err(|e| LlmError::Internal(format!("messages: {e}")))?,
                };
                let key = request_key(
                    "openai",
                    &model.model_id,
                    T::NAME,
                    &prompt.version,
                    &keyed_on,
                    &key_params,
                );
                if model.config.send_task {
                    // After the key: what the request carries for the endpoint, not what the
                    // answer is keyed on.
                    let input_json = serde_json::to_value(&input)
                        .map_err(|e| LlmError::Internal(format!("input: {e}")))?;
                    params["noisebench_task"] =
                        serde_json::json!({"name": T::NAME, "input": input_json});
                }
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
                    max_tokens,
                    max_tokens_ceiling,
                    examples: prompt.examples.clone(),
                })
            }
        }
    }

    /// The first request's `max_tokens` and the ceiling of its one re-ask: the configured
    /// budgets, raised to what the task expects its answer to take for this input
    /// ([`Task::answer_tokens`]; the re-ask twice that), and cut to what the model's context
    /// leaves after the prompt when the context is known. A prompt leaving less than the
    /// answer needs (the task's expectation, else 256 tokens or `max_tokens` if smaller) fails
    /// the item as `context_exceeded`, with no request sent.
    pub(crate) fn budgets<T: Task>(
        &self,
        model: &OpenAiModel,
        input: &T::Input,
        messages: &[Message],
    ) -> Result<(u32, u32), LlmError> {
        let cfg = &self.config;
        let wanted = T::answer_tokens(input).map(|t| u32::try_from(t).unwrap_or(u32::MAX));
        let mut max_tokens = cfg.max_tokens.max(wanted.unwrap_or(0));
        let mut ceiling = cfg
            .max_tokens_ceiling
            .max(wanted.unwrap_or(0).saturating_mul(2))
            .max(max_tokens);
        if let Some(context) = model.context_tokens() {
            let prompt = prompt_tokens_with_margin(messages);
            let room = u64::from(context).saturating_sub(prompt);
            let room = u32::try_from(room).unwrap_or(u32::MAX);
            let needed = wanted.unwrap_or(cfg.max_tokens.min(256)).min(ceiling);
            if room < needed.max(1) {
                return Err(LlmError::ContextExceeded {
                    model: model.key.clone(),
                    context: Some(context),
                    detail: format!(
                        "the prompt takes about {prompt} tokens, leaving {room} for an answer of about {needed}; not sent"
                    ),
                });
            }
            max_tokens = max_tokens.min(room);
            ceiling = ceiling.min(room).max(max_tokens);
        }
        Ok((max_tokens, ceiling))
    }
}

impl<T: Task> Prepared<T> {
    /// `offline` or `openai:<model id>`: what the answer says.
    pub(crate) fn provenance(&self) -> String {
        match &self.model {
            Some(_) => format!("openai:{}", self.model_name),
            None => "offline".into(),
        }
    }

    pub(crate) fn price(&self) -> Option<config::Price> {
        self.model.as_ref().and_then(|m| m.config.price)
    }

    /// An answer of this item, with the item's provenance, hash and prompt version.
    pub(crate) fn answer(&self, value: T::Output, cache_hit: bool) -> crate::Answer<T::Output> {
        crate::Answer {
            value,
            provenance: self.provenance(),
            request_hash: self.key.clone(),
            prompt_version: self.prompt_version.clone(),
            cache_hit,
        }
    }

    /// The check that the answer does not repeat an example value of the task's prompt, then
    /// the task's sense check ([`crate::sense::not_an_example`]); neither when `enabled`
    /// (`llm.sense_checks`) is off.
    pub(crate) fn sense(
        &self,
        value: &T::Output,
        enabled: bool,
    ) -> Result<(), crate::sense::Senseless> {
        if !enabled {
            return Ok(());
        }
        // A copy of the prompt's example first: it is the more telling reason (a copied
        // example question is off topic too).
        if !self.examples.is_empty() {
            let input = serde_json::to_value(&self.input).unwrap_or_default();
            let answer = serde_json::to_value(value).unwrap_or_default();
            crate::sense::not_an_example(&self.examples, &input, &answer)?;
        }
        T::sense(&self.input, value)
    }
}
