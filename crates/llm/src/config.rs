//! The `[llm]` table of a pipeline file: backend, models, endpoints, limits, cache, budget,
//! embeddings. Every field has a default except what a backend cannot guess (endpoints of an
//! `openai` model). Unknown fields are refused; errors name the field path.

use std::collections::BTreeMap;
use std::path::PathBuf;

use noisebench_core::ConfigError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which backend answers tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BackendKind {
    /// Deterministic rules, no network: each task's own offline rule, versioned.
    #[default]
    Offline,
    /// Any OpenAI-compatible chat completions endpoint.
    Openai,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Offline => "offline",
            BackendKind::Openai => "openai",
        }
    }
}

/// How the response cache is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// Read hits, store new successful answers.
    #[default]
    ReadWrite,
    /// Serve only from the cache; a miss fails the item with `cache_miss` (reproducibility checks).
    CacheOnly,
    /// Neither read nor write.
    Off,
}

/// How a model's requests are sent (`llm.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LlmMode {
    /// One chat completion request per item, answered at once.
    #[default]
    Live,
    /// The requests of one stage call (the items that missed the cache) go to the model's
    /// first endpoint as one OpenAI Batch API job (`/v1/files`, `/v1/batches`), polled until it
    /// ends: the providers' batch price, answers within their 24 h window; a killed run polls
    /// the same job again. Re-asks go live. docs/llm.md, "Batch mode".
    Batch,
}

/// The `[llm]` table.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    /// `offline` (default) or `openai`.
    pub backend: BackendKind,
    /// The model (a key of `models`) used for every task unless `task_models` says otherwise.
    /// Required for `openai`.
    pub model: Option<String>,
    /// Per-task model override: task name -> key of `models`. Only tasks a stage of the
    /// pipeline declares (checked once the stages are: `Llm::check_task_models`).
    pub task_models: BTreeMap<String, String>,
    /// Models by name.
    pub models: BTreeMap<String, ModelConfig>,
    /// Directory of prompt templates, relative to the root the caller gives.
    pub prompts_dir: PathBuf,
    /// Sampling temperature sent with every request (part of the cache key).
    pub temperature: f64,
    /// `max_tokens` sent with every request (part of the cache key).
    pub max_tokens: u32,
    /// The budget of the one re-ask of an answer cut off at `max_tokens` (`finish_reason:
    /// length`); an answer cut off again fails the item with `truncated`. Equal to
    /// `max_tokens`: no re-ask, a cut answer fails at once.
    pub max_tokens_ceiling: u32,
    /// Check that models' well-formed answers are about their inputs (each task's sense
    /// checks: `off_topic`, `copied_example`...), cached answers included; a failure is a
    /// counted drop. Off: answers are kept as the model gave them (to measure what the checks
    /// catch).
    pub sense_checks: bool,
    /// Optional `seed` sent with every request (part of the cache key).
    pub seed: Option<u64>,
    /// Re-asks after unparseable output (each quotes the parse error). 0 disables.
    pub max_reasks: u32,
    /// Stop issuing new calls once the estimated cost in USD reaches this; in-flight calls finish,
    /// the rest fail with `budget_exhausted`.
    pub max_cost: Option<f64>,
    /// `live` (default) or `batch`: send a stage call's uncached requests as one Batch API job.
    pub mode: LlmMode,
    /// The providers' discount on batch calls, as a fraction of the listed price: a batch
    /// answer is costed (call log, `max_cost`) at `price * (1 - batch_discount)`. 0.5 is
    /// OpenAI's.
    pub batch_discount: f64,
    /// Seconds between polls of a batch's status.
    pub batch_poll_seconds: f64,
    /// Seconds a run waits for a batch before its items fail as `batch_timeout` (transient);
    /// the batch id stays recorded, so the next run polls the same batch instead of sending it
    /// again.
    pub batch_timeout_seconds: f64,
    /// Requests per batch job at most (OpenAI: 50,000); a stage call with more sends several.
    pub batch_max_requests: usize,
    /// The response cache (`[llm.cache]`).
    pub cache: CacheConfig,
    /// How vectors are made (`[llm.embeddings]`).
    pub embeddings: EmbeddingsConfig,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            backend: BackendKind::Offline,
            model: None,
            task_models: BTreeMap::new(),
            models: BTreeMap::new(),
            prompts_dir: PathBuf::from("pipelines/prompts"),
            temperature: 0.0,
            max_tokens: 1024,
            max_tokens_ceiling: 4096,
            sense_checks: true,
            seed: None,
            max_reasks: 2,
            max_cost: None,
            mode: LlmMode::Live,
            batch_discount: 0.5,
            batch_poll_seconds: 30.0,
            // The providers' 24 h window and an hour for the output to be written.
            batch_timeout_seconds: 25.0 * 3600.0,
            batch_max_requests: 50_000,
            cache: CacheConfig::default(),
            embeddings: EmbeddingsConfig::default(),
        }
    }
}

/// `[llm.cache]`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// How the cache is used.
    pub mode: CacheMode,
    /// Cache directory, relative to the root.
    pub dir: PathBuf,
    /// Also cache the offline backend's answers (off by default: recomputing is cheaper than a
    /// file write, and the rules are versioned).
    pub offline: bool,
    /// Shared entries on object storage (`s3://bucket/prefix`), under `dir`, which stays the
    /// working copy: a local miss reads them, new entries are written there too, so shards on
    /// other machines reuse each other's answers. Credentials and endpoint come from the
    /// `AWS_*` environment variables only. Needs a program that registered object storage
    /// support (`noisebench_store::install_llm_cache_remote`).
    pub remote: Option<String>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            mode: CacheMode::ReadWrite,
            dir: PathBuf::from("work/cache/llm"),
            offline: false,
            remote: None,
        }
    }
}

/// One model served by one or more OpenAI-compatible endpoints (`[llm.models.<name>]`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    /// The model id sent to the server (default: the table's key).
    pub name: Option<String>,
    /// Endpoints serving this model; requests go to the one with the fewest in flight.
    pub endpoints: Vec<EndpointConfig>,
    /// Name of the environment variable that holds the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Requests per minute (governor: a burst of 1% of the limit, and the same 1% kept as
    /// headroom, so no sliding minute ever sees more than this).
    pub rpm: Option<u32>,
    /// Tokens per minute, prompt plus `max_tokens` estimated before the call, reconciled after.
    pub tpm: Option<u32>,
    /// Requests in flight at most.
    pub max_concurrency: usize,
    /// Per-attempt timeout in seconds.
    pub timeout_secs: f64,
    /// Retries after the first attempt (429, 5xx, timeouts, connection errors).
    pub max_retries: u32,
    /// First backoff delay in milliseconds; doubles each retry, equal jitter (half to all of it).
    pub retry_base_ms: u64,
    /// Backoff ceiling in milliseconds (also caps a Retry-After).
    pub retry_max_ms: u64,
    /// The server accepts `response_format: {type: json_schema}`.
    pub json_schema: bool,
    /// Send each chat request's task and structured input in a `noisebench_task` body field
    /// (`{"name": ..., "input": {...}}`), beside the prompt: for fake or proxy endpoints that
    /// answer by task (the end-to-end tests' endpoints answer every task from it). Not part of
    /// the cache key. OpenAI's API refuses unknown fields; llama.cpp and vLLM ignore it.
    pub send_task: bool,
    /// Consecutive failures after which an endpoint is rested.
    pub rest_after_failures: u32,
    /// How long a failing endpoint rests, in seconds.
    pub rest_secs: f64,
    /// Prices for cost estimates.
    pub price: Option<Price>,
    /// The model's context size in tokens (prompt and answer together), as the server runs it.
    /// Unset: read from the server where it says (llama.cpp's `/props` `n_ctx`, vLLM's
    /// `/v1/models` `max_model_len`); unknown, nothing is cut. Known: a request's answer budget
    /// is what is left after its prompt (an item whose prompt leaves too little fails as
    /// `context_exceeded` without a request), stages size what they send to fit (triplets'
    /// windows), and a server's context-length refusal fails as `context_exceeded`. Part of the
    /// fingerprint: a larger context reruns the stages whose items it refused.
    pub context_tokens: Option<u32>,
    /// A `tokenizer.json` (Hugging Face format) for counting this model's tokens in quotes
    /// (`noisebench quote`). Unset: tiktoken's encoding for an OpenAI model name, else
    /// cl100k_base as a stated approximation.
    pub tokenizer: Option<PathBuf>,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            name: None,
            endpoints: Vec::new(),
            api_key_env: None,
            rpm: None,
            tpm: None,
            max_concurrency: 8,
            timeout_secs: 120.0,
            max_retries: 5,
            retry_base_ms: 500,
            retry_max_ms: 60_000,
            json_schema: false,
            send_task: false,
            rest_after_failures: 5,
            rest_secs: 30.0,
            price: None,
            context_tokens: None,
            tokenizer: None,
        }
    }
}

/// One endpoint: a name for logs and the call log, and its base URL (`.../v1`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointConfig {
    /// The endpoint's name in logs and the call log.
    pub name: String,
    /// Base URL (`https://api.openai.com/v1`): http(s), with no credentials or key in it.
    pub url: String,
}

/// USD per million tokens.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// USD per million prompt tokens.
    pub input_per_million: f64,
    /// USD per million completion tokens.
    pub output_per_million: f64,
    /// USD per million prompt tokens the provider served from its prompt cache (OpenAI's
    /// `usage.prompt_tokens_details.cached_tokens`); unset: the full input price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_million: Option<f64>,
}

impl Price {
    /// The cost of `tokens_in` prompt and `tokens_out` completion tokens, none of them cached.
    pub fn cost(&self, tokens_in: u64, tokens_out: u64) -> f64 {
        self.cost_cached(tokens_in, 0, tokens_out)
    }

    /// The cost of `tokens_in` prompt tokens of which `cached` (at most all of them) were read
    /// from the provider's prompt cache, and `tokens_out` completion tokens.
    pub fn cost_cached(&self, tokens_in: u64, cached: u64, tokens_out: u64) -> f64 {
        let cached = cached.min(tokens_in);
        let cached_rate = self
            .cached_input_per_million
            .unwrap_or(self.input_per_million);
        ((tokens_in - cached) as f64 * self.input_per_million
            + cached as f64 * cached_rate
            + tokens_out as f64 * self.output_per_million)
            / 1_000_000.0
    }
}

/// Which embedder makes vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EmbeddingBackend {
    /// The local model when its files are present, else hashed n-grams.
    #[default]
    Auto,
    /// Hashed character n-grams: deterministic, no model.
    Hashed,
    /// all-MiniLM-L6-v2 in-process (feature `local-embeddings`).
    Local,
    /// An OpenAI-compatible `/v1/embeddings` endpoint (`model` names a key of `llm.models`).
    Openai,
}

/// `[llm.embeddings]`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EmbeddingsConfig {
    /// Which embedder makes vectors.
    pub backend: EmbeddingBackend,
    /// Directory holding model.safetensors, tokenizer.json, config.json (relative to the root).
    pub model_dir: PathBuf,
    /// For `openai`: a key of `llm.models`.
    pub model: Option<String>,
    /// Dimension of hashed vectors.
    pub dim: usize,
    /// Texts per embeddings request / local batch.
    pub batch_size: usize,
}

impl Default for EmbeddingsConfig {
    fn default() -> Self {
        Self {
            backend: EmbeddingBackend::Auto,
            model_dir: PathBuf::from("models/all-MiniLM-L6-v2"),
            model: None,
            dim: 384,
            batch_size: 32,
        }
    }
}

impl LlmConfig {
    /// Parse the pipeline file's `[llm]` table (as JSON), naming the failing field path
    /// (`llm.models.gpt.rpm`), then check values.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, ConfigError> {
        let config: LlmConfig = noisebench_core::stage::parse_config(value).map_err(|e| {
            ConfigError::new(
                if e.field == "config" {
                    "llm".to_string()
                } else {
                    format!("llm.{}", e.field)
                },
                e.message,
            )
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Checks beyond the types.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.backend == BackendKind::Openai {
            let model = self.model.as_deref().ok_or_else(|| {
                ConfigError::new("llm.model", "required when backend = \"openai\"")
            })?;
            if !self.models.contains_key(model) {
                return Err(ConfigError::new(
                    "llm.model",
                    format!("`{model}` is not a key of llm.models"),
                ));
            }
        }
        for (task, model) in &self.task_models {
            // Which tasks exist is known once the stages declared theirs
            // (`Llm::check_task_models`); here only the name's form.
            if !crate::task::valid_name(task) {
                return Err(ConfigError::new(
                    format!("llm.task_models.{task}"),
                    "not a task name (lowercase snake case)",
                ));
            }
            if !self.models.contains_key(model) {
                return Err(ConfigError::new(
                    format!("llm.task_models.{task}"),
                    format!("`{model}` is not a key of llm.models"),
                ));
            }
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(ConfigError::new("llm.temperature", "must be in 0..=2"));
        }
        if self.max_tokens == 0 {
            return Err(ConfigError::new("llm.max_tokens", "must be >= 1"));
        }
        if self.max_tokens_ceiling < self.max_tokens {
            return Err(ConfigError::new(
                "llm.max_tokens_ceiling",
                format!("must be >= llm.max_tokens ({})", self.max_tokens),
            ));
        }
        if let Some(c) = self.max_cost
            && (c.is_nan() || c < 0.0)
        {
            return Err(ConfigError::new("llm.max_cost", "must be >= 0"));
        }
        if !(0.0..=1.0).contains(&self.batch_discount) {
            return Err(ConfigError::new("llm.batch_discount", "must be in 0..=1"));
        }
        if self.batch_poll_seconds.is_nan() || self.batch_poll_seconds <= 0.0 {
            return Err(ConfigError::new("llm.batch_poll_seconds", "must be > 0"));
        }
        if self.batch_timeout_seconds.is_nan() || self.batch_timeout_seconds <= 0.0 {
            return Err(ConfigError::new("llm.batch_timeout_seconds", "must be > 0"));
        }
        if self.batch_max_requests == 0 {
            return Err(ConfigError::new("llm.batch_max_requests", "must be >= 1"));
        }
        for (name, m) in &self.models {
            let f = |field: &str| format!("llm.models.{name}.{field}");
            if m.endpoints.is_empty() {
                return Err(ConfigError::new(f("endpoints"), "at least one endpoint"));
            }
            for (i, e) in m.endpoints.iter().enumerate() {
                url_ok(&e.url).map_err(|m| {
                    ConfigError::new(format!("llm.models.{name}.endpoints[{i}].url"), m)
                })?;
            }
            if m.max_concurrency == 0 {
                return Err(ConfigError::new(f("max_concurrency"), "must be >= 1"));
            }
            if m.rpm == Some(0) {
                return Err(ConfigError::new(f("rpm"), "must be >= 1"));
            }
            if m.context_tokens.is_some_and(|c| c < 256) {
                return Err(ConfigError::new(f("context_tokens"), "must be >= 256"));
            }
            if m.tpm == Some(0) {
                return Err(ConfigError::new(f("tpm"), "must be >= 1"));
            }
            if m.timeout_secs.is_nan() || m.timeout_secs <= 0.0 {
                return Err(ConfigError::new(f("timeout_secs"), "must be > 0"));
            }
            if let Some(env) = &m.api_key_env
                && (env.is_empty() || env.starts_with("sk-") || env.contains(char::is_whitespace))
            {
                // A key pasted here instead of a variable name must not go further (nor into
                // this message).
                return Err(ConfigError::new(
                    f("api_key_env"),
                    "must name an environment variable, not hold a key",
                ));
            }
        }
        if self.embeddings.backend == EmbeddingBackend::Openai {
            let model = self.embeddings.model.as_deref().ok_or_else(|| {
                ConfigError::new(
                    "llm.embeddings.model",
                    "required when embeddings.backend = \"openai\"",
                )
            })?;
            if !self.models.contains_key(model) {
                return Err(ConfigError::new(
                    "llm.embeddings.model",
                    format!("`{model}` is not a key of llm.models"),
                ));
            }
        }
        if self.embeddings.dim == 0 {
            return Err(ConfigError::new("llm.embeddings.dim", "must be >= 1"));
        }
        if self.embeddings.batch_size == 0 {
            return Err(ConfigError::new(
                "llm.embeddings.batch_size",
                "must be >= 1",
            ));
        }
        Ok(())
    }
}

/// Endpoint URLs must be http(s) and carry no credentials (they are never logged, but a URL with a
/// password or key in it would still travel through error chains).
fn url_ok(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("scheme must be http or https".into());
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("must not carry credentials; use api_key_env".into());
    }
    if parsed
        .query_pairs()
        .any(|(k, _)| k.to_ascii_lowercase().contains("key"))
    {
        return Err("must not carry a key in the query; use api_key_env".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_field_path() {
        let v = serde_json::json!({"backend": "openai", "model": "m",
            "models": {"m": {"endpoints": [{"name": "a", "url": "http://x/v1"}], "rmp": 5}}});
        let e = LlmConfig::from_value(&v).unwrap_err();
        assert_eq!(e.field, "llm.models.m.rmp");
        let v = serde_json::json!({"backend": "openai"});
        assert_eq!(LlmConfig::from_value(&v).unwrap_err().field, "llm.model");
        let v = serde_json::json!({"backend": "openai", "model": "m",
            "models": {"m": {"endpoints": [{"name": "a", "url": "http://u:p@x/v1"}]}}});
        assert_eq!(
            LlmConfig::from_value(&v).unwrap_err().field,
            "llm.models.m.endpoints[0].url"
        );
        for (field, value) in [
            ("batch_discount", serde_json::json!(1.5)),
            ("batch_poll_seconds", serde_json::json!(0.0)),
            ("batch_timeout_seconds", serde_json::json!(-1.0)),
            ("batch_max_requests", serde_json::json!(0)),
            ("mode", serde_json::json!("bulk")),
        ] {
            let v = serde_json::json!({ field: value });
            assert_eq!(
                LlmConfig::from_value(&v).unwrap_err().field,
                format!("llm.{field}")
            );
        }
        let v = serde_json::json!({"mode": "batch", "batch_poll_seconds": 0.5});
        assert_eq!(LlmConfig::from_value(&v).unwrap().mode, LlmMode::Batch);
        let v = serde_json::json!({"task_models": {"nope": "m"}});
        assert_eq!(
            LlmConfig::from_value(&v).unwrap_err().field,
            "llm.task_models.nope"
        );
    }

    #[test]
    fn the_documented_tables_parse() {
        let doc = r#"
[llm]
backend = "openai"
model = "mini"
max_cost = 5.0

[llm.models.mini]
name = "gpt-4o-mini"
api_key_env = "OPENAI_API_KEY"
rpm = 500
tpm = 200000
max_concurrency = 16
json_schema = true
price = { input_per_million = 0.15, output_per_million = 0.60 }
endpoints = [{ name = "openai", url = "https://api.openai.com/v1" }]

[llm.models.local]
name = "Qwen/Qwen2.5-7B-Instruct"
max_concurrency = 32
endpoints = [{ name = "gpu0", url = "http://10.0.0.5:8000/v1" },
             { name = "gpu1", url = "http://10.0.0.6:8000/v1" }]
"#;
        let v: serde_json::Value = toml::from_str(doc).unwrap();
        let c = LlmConfig::from_value(&v["llm"]).unwrap();
        assert_eq!(c.models["local"].endpoints.len(), 2);
        assert_eq!(c.models["mini"].rpm, Some(500));
        let demo = r#"
[llm]
backend = "offline"
[llm.cache]
dir = "work/cache/llm"
[llm.embeddings]
backend = "auto"
"#;
        let v: serde_json::Value = toml::from_str(demo).unwrap();
        let c = LlmConfig::from_value(&v["llm"]).unwrap();
        assert_eq!(c.embeddings.backend, EmbeddingBackend::Auto);
    }

    #[test]
    fn empty_table_is_the_offline_default() {
        let c = LlmConfig::from_value(&serde_json::json!({})).unwrap();
        assert_eq!(c.backend, BackendKind::Offline);
        assert_eq!(c.mode, LlmMode::Live);
        assert_eq!(c.cache.mode, CacheMode::ReadWrite);
    }
}
