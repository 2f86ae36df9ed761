//! Why one LLM item failed. Each error has a stable reason code for drop records.
//!
//! Messages never hold an API key or a URL: endpoints are named by their config name, and text
//! from a server passes through [`crate::openai`]'s redaction before it lands here.

/// A failed item (or a failed construction).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    #[error("budget exhausted: estimated cost {spent:.4} USD reached max_cost {max:.4} USD")]
    BudgetExhausted { spent: f64, max: f64 },
    #[error("cache miss in cache-only mode (request {request_hash})")]
    CacheMiss { request_hash: String },
    #[error("endpoint `{endpoint}` answered HTTP {status}: {detail}")]
    Http {
        endpoint: String,
        status: u16,
        detail: String,
    },
    #[error("gave up after {attempts} attempts: {last}")]
    RetriesExhausted { attempts: u32, last: String },
    #[error("unusable answer after {tries} tries: {detail}")]
    Unparseable { tries: u32, detail: String },
    /// The answer ran into `max_tokens` (`finish_reason: length`) also after one re-ask with
    /// the larger budget `llm.max_tokens_ceiling` allows, or with no larger budget allowed.
    #[error("answer cut off at max_tokens {max_tokens} (finish_reason: length)")]
    Truncated { max_tokens: u32 },
    /// The prompt and the answer's budget do not fit the model's context: the server refused
    /// the request as too long (HTTP 400 "exceeds the available context size", "maximum
    /// context length"...), or, with the context size known, the prompt left too little room
    /// for the answer and nothing was sent. The model's `context_tokens` is part of the
    /// fingerprint, so once it (or the server's context it is read from) grows the stage runs
    /// again.
    #[error(
        "{detail}: the request does not fit model `{model}`'s context of {}; start the server with a larger context (llama.cpp --ctx-size, vLLM --max-model-len) and set llm.models.{model}.context_tokens to it, or send less (smaller windows or chunks)",
        context.map_or_else(|| "unknown size".to_string(), |c| format!("{c} tokens"))
    )]
    ContextExceeded {
        model: String,
        context: Option<u32>,
        detail: String,
    },
    /// A well-formed answer that fails its task's sense check ([`crate::sense`]).
    #[error("answer not about its input: {0}")]
    Senseless(crate::sense::Senseless),
    /// A Batch API job gave no answer for this item: its line came back with an error, or the
    /// job ended (`failed`, `expired`, `cancelled`) before answering it. Transient: the next
    /// run sends it again.
    #[error("batch {batch_id}: {detail}")]
    BatchRequest { batch_id: String, detail: String },
    /// A Batch API job had not ended within `llm.batch_timeout_seconds`. Transient: its id stays
    /// recorded and the next run polls it again.
    #[error("batch {batch_id} not done after {waited_secs:.0} s (llm.batch_timeout_seconds)")]
    BatchTimeout { batch_id: String, waited_secs: f64 },
    #[error("prompt: {0}")]
    Prompt(String),
    #[error("embedding: {0}")]
    Embedding(String),
    #[error("configuration: {0}")]
    Config(String),
    #[error("cache: {0}")]
    Cache(String),
    #[error("internal: {0}")]
    Internal(String),
}

impl LlmError {
    /// The drop reason every stage records for an item whose LLM call failed: `llm_<reason>`
    /// (`llm_budget_exhausted`, `llm_retries_exhausted`, `llm_unparseable_output`). One cause has
    /// one name in every stage's `drops.parquet`; the item says which call it was.
    pub fn drop_reason(&self) -> String {
        format!("llm_{}", self.reason())
    }

    /// A stable reason code for the call log (`budget_exhausted`); drops use [`Self::drop_reason`].
    pub fn reason(&self) -> &'static str {
        match self {
            LlmError::BudgetExhausted { .. } => "budget_exhausted",
            LlmError::CacheMiss { .. } => "cache_miss",
            LlmError::Http { .. } => "http_error",
            LlmError::RetriesExhausted { .. } => "retries_exhausted",
            LlmError::Unparseable { .. } => "unparseable_output",
            LlmError::Truncated { .. } => "truncated",
            LlmError::ContextExceeded { .. } => "context_exceeded",
            LlmError::Senseless(s) => s.sense.code(),
            // Both end in a transient code (`noisebench_core::is_transient_reason`).
            LlmError::BatchRequest { .. } => "batch_request_failed",
            LlmError::BatchTimeout { .. } => "batch_timeout",
            LlmError::Prompt(_) => "prompt_error",
            LlmError::Embedding(_) => "embedding_error",
            LlmError::Config(_) => "config_error",
            LlmError::Cache(_) => "cache_error",
            LlmError::Internal(_) => "internal_error",
        }
    }
}
