//! Tables about a run rather than the dataset: drops, the run summary, the LLM call log.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::schema::Record;
use crate::schema::{Column, DType::*, TableSchema};

/// One item a stage did not turn into output, or one failure on the way to an item it kept
/// (a failed call among several votes, a review-sheet row that could not be applied), and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DropRecord {
    pub id: String,
    pub stage: String,
    pub item: String,
    pub reason: String,
    pub detail: String,
    /// The item produced no output row (counted in `items_dropped`); false for a failure that
    /// did not cost the item.
    pub dropped: bool,
    /// The failure is transient (network, 429, 5xx, timeout, budget): the next run retries it.
    pub retry: bool,
}

impl Record for DropRecord {
    fn schema() -> TableSchema {
        TableSchema {
            table: "drops".into(),
            version: 2,
            description: "Items a stage dropped or merged, and failures that did not cost their item, with a reason code and detail.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from stage, item and reason."),
                Column::new("stage", Str, "The stage id in the pipeline."),
                Column::new(
                    "item",
                    Str,
                    "What was dropped: a file and row number, a URL, an id.",
                ),
                Column::new(
                    "reason",
                    Str,
                    "Reason code, e.g. `empty_claim`, `unknown_rating`, `bad_date`.",
                ),
                Column::new(
                    "detail",
                    Str,
                    "Human-readable detail naming the field or value.",
                ),
                Column::new(
                    "dropped",
                    Bool,
                    "True: the item produced no output row (counted in items_dropped). False: a failure on the way to an item that was kept (one failed vote, a review-sheet row not applied).",
                ),
                Column::new(
                    "retry",
                    Bool,
                    "True: a transient failure (network, 429, 5xx, timeout, budget); the stage is partial and the next run retries it.",
                ),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// One stage's line in a run summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StageSummary {
    pub id: String,
    pub kind: String,
    pub status: String,
    pub fingerprint: String,
    pub items_in: i64,
    pub items_out: i64,
    pub items_dropped: i64,
    pub drop_reasons: BTreeMap<String, i64>,
    pub seconds: f64,
}

impl Record for StageSummary {
    fn schema() -> TableSchema {
        TableSchema {
            table: "run_summary".into(),
            version: 1,
            description: "Per stage of a run: status, items in, out and dropped by reason.".into(),
            columns: vec![
                Column::new("id", Str, "The stage id in the pipeline."),
                Column::new("kind", Str, "The stage kind (e.g. claims-import)."),
                Column::new(
                    "status",
                    Str,
                    "`ran`; `partial` (ran, but items failed for a transient cause: the next run retries them); or `skipped` (fingerprint unchanged).",
                ),
                Column::new(
                    "fingerprint",
                    Str,
                    "sha256 over stage kind, version, configuration and inputs.",
                ),
                Column::new("items_in", Int, "Items read."),
                Column::new("items_out", Int, "Rows written to the stage's main table."),
                Column::new("items_dropped", Int, "Items dropped or merged."),
                Column::new("drop_reasons", Json, "Dropped items per reason code."),
                Column::new("seconds", Float, "Wall time of the stage (0 when skipped)."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// One LLM call (or cache hit), as the call log records it. Never holds a key or a credentialed URL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LlmCall {
    pub id: String,
    pub stage: String,
    pub task: String,
    pub prompt_version: String,
    pub backend: String,
    pub model: String,
    pub endpoint: String,
    pub request_hash: String,
    pub tokens_in: i64,
    pub tokens_out: i64,
    /// Of `tokens_in`, read from the provider's prompt cache (billed at the cached-input price).
    /// Absent from call logs written before it existed: 0.
    #[serde(default)]
    pub tokens_cached: i64,
    pub latency_ms: i64,
    pub queue_ms: i64,
    pub attempts: i64,
    pub cache_hit: bool,
    pub cost_usd: Option<f64>,
    pub error: Option<String>,
}

impl Record for LlmCall {
    fn schema() -> TableSchema {
        TableSchema {
            table: "llm_calls".into(),
            version: 3,
            description: "Every LLM call of a run, one record per item: task, prompt version, model, tokens, latency, queue time, cache hit, error.".into(),
            columns: vec![
                Column::new("id", Str, "Stable id from request hash and call sequence."),
                Column::new("stage", Str, "The stage that made the call."),
                Column::new("task", Str, "The task (keywords, exam_verdict, triplets...)."),
                Column::new("prompt_version", Str, "Version of the task's prompt template."),
                Column::new("backend", Str, "`openai` or `offline`."),
                Column::new("model", Str, "Model name."),
                Column::new("endpoint", Str, "Endpoint name from config (never a URL with credentials)."),
                Column::new("request_hash", Str, "The cache key: sha256 of backend, model, task, prompt version, messages, parameters."),
                Column::new("tokens_in", Int, "Prompt tokens (from usage, else estimated)."),
                Column::new("tokens_out", Int, "Completion tokens."),
                Column::new("tokens_cached", Int, "Of tokens_in, those the provider served from its prompt cache (usage.prompt_tokens_details.cached_tokens; 0 when not reported), priced at the model's cached_input_per_million."),
                Column::new("latency_ms", Int, "Time inside the item's own HTTP attempts, summed over retries and re-asks (a cache hit or offline answer: the time to answer locally; 0 when another item's request served it)."),
                Column::new("queue_ms", Int, "Time spent waiting around those attempts: concurrency permit, RPM/TPM limits, endpoint pauses, retry backoff (when another item's request served it: the wait for that request; 0 when answered locally)."),
                Column::new("attempts", Int, "HTTP attempts made (0 on a cache hit or when another item's request served it)."),
                Column::new("cache_hit", Bool, "No request of its own: served from the cache (tokens: the cached answer's; cost 0), or by an identical request (same request_hash) another item sent in this run, whose row alone counts its tokens and cost (both 0 here)."),
                Column::nullable("cost_usd", Float, "Estimated cost from the price table."),
                Column::nullable("error", Str, "Why the call failed, if it did (an item that shared a failed request gets its error, with 0 attempts, tokens and cost)."),
            ],
        }
    }
    fn id(&self) -> &str {
        &self.id
    }
}
