//! Preparing an item's request before any I/O: which model answers its task (or the offline
//! rule), the rendered messages, sampling parameters and response format, and the request hash
//! (sha256 over a canonical JSON of everything that determines the answer), which keys the
//! cache, merges identical requests and joins the call log.

use std::sync::Arc;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::Llm;
use crate::config;
use crate::error::LlmError;
use crate::openai::OpenAiModel;
use crate::prompt::Message;
use crate::task::Task;

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

impl Llm {
    pub(crate) fn prepare<T: Task>(
        &self,
        stage: &str,
        input: T::Input,
    ) -> Result<Prepared<T>, LlmError> {
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

    pub(crate) fn provenance_of<T: Task>(p: &Prepared<T>) -> String {
        match &p.model {
            Some(_) => format!("openai:{}", p.model_name),
            None => "offline".into(),
        }
    }

    pub(crate) fn price_of<T: Task>(&self, p: &Prepared<T>) -> Option<config::Price> {
        p.model.as_ref().and_then(|m| m.config.price)
    }
}
