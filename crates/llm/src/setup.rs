//! Building an [`Llm`] from the `[llm]` table: the prompts directory (read per task as stages
//! declare them) and the re-ask template, the models the configuration names (their API keys
//! kept as secrets to redact), the shared budget, the response cache, the embedder; and from
//! them the handle's parts (prepare, answer locally, transport, call log).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::cache::Cache;
use crate::call_log::CallLog;
use crate::config::{BackendKind, CacheMode, EmbeddingBackend, LlmConfig};
use crate::error::{LlmError, Redactor};
use crate::local_answers::LocalAnswers;
use crate::openai::{self, OpenAiModel};
use crate::prompt::Prompts;
use crate::remote::load_reask;
use crate::request::{Backend, Preparer};
use crate::transport::Transport;
use crate::{Inner, Llm, embed};

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
            _ => {
                let cache = Cache::open(&resolve(&config.cache.dir))?;
                match &config.cache.remote {
                    Some(url) => Some(cache.with_remote(crate::cache::open_remote(url)?)),
                    None => Some(cache),
                }
            }
        };
        let embedder = embed::Embedder::new(&config.embeddings, &models, root)?;
        let backend = match config.backend {
            BackendKind::Offline => Backend::Offline,
            BackendKind::Openai => Backend::Openai { models },
        };
        // The parts, in the order an item goes through them.
        let redactor = Redactor::new(secrets);
        let log = Arc::new(CallLog::new(redactor.clone(), config.sense_checks));
        let local = Arc::new(LocalAnswers::new(cache, &config));
        let transport = Arc::new(Transport::new(
            &config,
            matches!(backend, Backend::Openai { .. }),
            reask,
            redactor,
            budget,
            Arc::clone(&local),
            Arc::clone(&log),
        ));
        Ok(Llm {
            inner: Arc::new(Inner {
                root: root.to_path_buf(),
                prepare: Preparer::new(config, prompts, backend),
                local,
                transport,
                log,
                embedder,
                quote: OnceLock::new(),
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
}
