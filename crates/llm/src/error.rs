//! Why one LLM item failed. Each error has a stable reason code for drop records.
//!
//! Messages never hold an API key or a URL: endpoints are named by their config name, and text
//! from a server passes through [`crate::openai`]'s redaction before it lands here.

use noisebench_core::{DropCode, DropReason};

const fn code(code: &'static str, transient: bool, meaning: &'static str) -> DropCode {
    DropCode {
        code,
        transient,
        meaning,
    }
}

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

/// Replace every occurrence of `secret` in `text`.
pub(crate) fn redact(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if s.len() >= 4 => text.replace(s, "[REDACTED]"),
        _ => text.to_string(),
    }
}

/// The configured API keys, and what redacts them from text a server sent back before it
/// reaches an error, a log line or the call log.
#[derive(Debug, Clone, Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    pub(crate) fn new(secrets: Vec<String>) -> Self {
        Redactor { secrets }
    }

    pub(crate) fn text(&self, text: &str) -> String {
        let mut t = text.to_string();
        for s in &self.secrets {
            t = redact(&t, Some(s));
        }
        t
    }

    /// An error with the server's words in it redacted; other errors as they are.
    pub(crate) fn error(&self, e: LlmError) -> LlmError {
        match e {
            LlmError::Http {
                endpoint,
                status,
                detail,
            } => LlmError::Http {
                endpoint,
                status,
                detail: self.text(&detail),
            },
            LlmError::RetriesExhausted { attempts, last } => LlmError::RetriesExhausted {
                attempts,
                last: self.text(&last),
            },
            other => other,
        }
    }

    /// A senseless answer's detail redacted (it may quote the answer); other errors as they are.
    pub(crate) fn senseless(&self, e: LlmError) -> LlmError {
        match e {
            LlmError::Senseless(s) => LlmError::Senseless(crate::sense::Senseless {
                detail: self.text(&s.detail),
                ..s
            }),
            other => other,
        }
    }
}

impl LlmError {
    /// The drop reason every stage records for an item whose LLM call failed: `llm_<reason>`
    /// (`llm_budget_exhausted`, `llm_retries_exhausted`, `llm_unparseable_output`). One cause has
    /// one name in every stage's `drops.parquet`; the item says which call it was.
    pub fn drop_reason(&self) -> String {
        format!("llm_{}", self.reason())
    }

    /// [`Self::drop_reason`] typed, as stages record it: the code and whether it is transient
    /// (the next run asks again): a spent budget, a cache-only run's miss, retries used up, a
    /// Batch API job that gave no answer or has not ended.
    pub fn as_drop_reason(&self) -> DropReason {
        let code = self.drop_reason();
        if self.is_transient() {
            DropReason::transient(code)
        } else {
            DropReason::permanent(code)
        }
    }

    /// Whether a later run may well not meet this failure (see [`Self::as_drop_reason`]).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            LlmError::BudgetExhausted { .. }
                | LlmError::CacheMiss { .. }
                | LlmError::RetriesExhausted { .. }
                | LlmError::BatchRequest { .. }
                | LlmError::BatchTimeout { .. }
        )
    }

    /// Whether `code`, a drop reason this layer gave ([`Self::drop_reason`]) kept as text where
    /// no flag was kept beside it (an evaluation's `failure` column), is a transient one: looked
    /// up in [`Self::DROP_CODES`], never matched by its ending.
    pub fn is_transient_code(code: &str) -> bool {
        Self::DROP_CODES
            .iter()
            .any(|c| c.transient && c.code == code)
    }

    /// Every code [`Self::as_drop_reason`] gives, for the generated reference of drop reasons.
    pub const DROP_CODES: &'static [DropCode] = &[
        code(
            "llm_budget_exhausted",
            true,
            "`llm.max_cost` reached: the rest waits for the next run",
        ),
        code("llm_cache_miss", true, "cache-only run: no cached answer"),
        code(
            "llm_retries_exhausted",
            true,
            "every attempt failed (network, 429, 5xx, timeouts)",
        ),
        code(
            "llm_batch_request_failed",
            true,
            "a Batch API job gave no answer for the item",
        ),
        code(
            "llm_batch_timeout",
            true,
            "a Batch API job had not ended in time; polled again next run",
        ),
        code(
            "llm_http_error",
            false,
            "the endpoint answered an HTTP error that is not retried",
        ),
        code(
            "llm_unparseable_output",
            false,
            "no usable answer after the re-asks",
        ),
        code(
            "llm_truncated",
            false,
            "the answer ran into `max_tokens`, also after one larger re-ask",
        ),
        code(
            "llm_context_exceeded",
            false,
            "the request does not fit the model's context",
        ),
        code(
            "llm_<sense>",
            false,
            "a well-formed answer failed its task's sense check (see docs/llm.md)",
        ),
        code(
            "llm_prompt_error",
            false,
            "the task's prompt could not be rendered",
        ),
        code("llm_embedding_error", false, "an embedding failed"),
        code(
            "llm_config_error",
            false,
            "the configuration does not allow the call",
        ),
        code(
            "llm_cache_error",
            false,
            "the cache could not be read or written",
        ),
        code("llm_internal_error", false, "a bug"),
    ];

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
            // Both transient ([`Self::is_transient`]).
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

#[cfg(test)]
mod tests {
    use super::LlmError;

    #[test]
    fn the_llm_layer_says_which_failures_are_transient() {
        let transient = [
            LlmError::BudgetExhausted {
                spent: 1.0,
                max: 1.0,
            },
            LlmError::CacheMiss {
                request_hash: "h".into(),
            },
            LlmError::RetriesExhausted {
                attempts: 3,
                last: "http_503".into(),
            },
            LlmError::BatchRequest {
                batch_id: "b".into(),
                detail: "expired".into(),
            },
            LlmError::BatchTimeout {
                batch_id: "b".into(),
                waited_secs: 1.0,
            },
        ];
        let permanent = [
            LlmError::Http {
                endpoint: "a".into(),
                status: 400,
                detail: String::new(),
            },
            LlmError::Unparseable {
                tries: 2,
                detail: String::new(),
            },
            LlmError::Truncated { max_tokens: 1 },
            LlmError::Senseless(crate::Sense::OffTopic.because("")),
            LlmError::Internal(String::new()),
        ];
        for (e, flag) in transient
            .iter()
            .map(|e| (e, true))
            .chain(permanent.iter().map(|e| (e, false)))
        {
            let r = e.as_drop_reason();
            assert_eq!(r.is_transient(), flag, "{e}");
            assert_eq!(r.code(), format!("llm_{}", e.reason()));
            let listed = LlmError::DROP_CODES.iter().any(|c| {
                c.code == r.code()
                    || (c.code == "llm_<sense>" && matches!(e, LlmError::Senseless(_)))
            });
            assert!(listed, "{} is not in DROP_CODES", r.code());
            assert!(
                LlmError::DROP_CODES
                    .iter()
                    .all(|c| c.code != r.code() || c.transient == flag)
            );
            assert_eq!(LlmError::is_transient_code(r.code()), flag, "{}", r.code());
        }
    }
}
