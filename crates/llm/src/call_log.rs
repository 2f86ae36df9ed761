//! The call log and counters: an [`LlmCall`] record for every task call and embedding request,
//! hits and failures included, with its tokens, cost, attempts, latency and queue time and, for a
//! failure, its reason code first; [`LlmStats`] totals over the handle's life.
//! [`CallLog`] is the part of the handle that owns them (each behind its own lock); the handle
//! hands the records to the runner through core's `CallLog` trait, which also tells it that the
//! budget halted a stage.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use noisebench_core::LlmCall;
use serde::Serialize;

use crate::error::{LlmError, Redactor};
use crate::openai::{Effort, TokenUsage};
use crate::request::Prepared;
use crate::task::Task;

/// Answers a task must have had before one category for all of them is flagged.
pub const CONSTANT_AFTER: u64 = 5;

/// Counters over the life of an [`crate::Llm`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LlmStats {
    /// Task calls and embedding requests, hits included.
    pub calls: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub failures: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Of `tokens_in`, read from the provider's prompt cache.
    pub tokens_cached: u64,
    /// Estimated from the price table (0 without prices).
    pub cost_usd: f64,
    pub failures_by_reason: BTreeMap<String, u64>,
}

/// The key of the answers counted for constant-answer checks: (task, model, stage).
type CategoryKey = (String, String, String);

/// The call log part of a handle: the records, their sequence numbers, the totals and the
/// categorical answers counted for the constant-answer check, each behind its own lock.
pub(crate) struct CallLog {
    calls: Mutex<Vec<LlmCall>>,
    /// Calls so far per `stage/request hash`: the sequence number in each record's id.
    seq: Mutex<BTreeMap<String, u64>>,
    stats: Mutex<LlmStats>,
    /// Categorical answers of models per (task, model, stage) and category.
    categories: Mutex<BTreeMap<CategoryKey, BTreeMap<String, u64>>>,
    /// The keys a record's error is redacted of.
    redactor: Redactor,
    /// `llm.sense_checks`: without them, no stage is held to the constant-answer check.
    sense_checks: bool,
}

impl CallLog {
    pub(crate) fn new(redactor: Redactor, sense_checks: bool) -> Self {
        CallLog {
            calls: Mutex::new(Vec::new()),
            seq: Mutex::new(BTreeMap::new()),
            stats: Mutex::new(LlmStats::default()),
            categories: Mutex::new(BTreeMap::new()),
            redactor,
            sense_checks,
        }
    }

    /// Take the records so far (sorted by stage, task, request hash, id).
    pub(crate) fn drain(&self) -> Vec<LlmCall> {
        let mut calls = std::mem::take(&mut *lock(&self.calls));
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

    pub(crate) fn stats(&self) -> LlmStats {
        lock(&self.stats).clone()
    }

    /// [`crate::Llm::constant_answers`] of the answers asked by `stage` only: what the runner
    /// holds against the stage's gate (`constant_answers`). Like the other sense checks, none
    /// with `llm.sense_checks = false` (the run summary still shows all of them).
    pub(crate) fn constant_answers_of(&self, stage: &str) -> Vec<String> {
        if !self.sense_checks {
            return Vec::new();
        }
        self.constant_where(|s| s == stage)
    }

    pub(crate) fn constant_where(&self, stage: impl Fn(&str) -> bool) -> Vec<String> {
        let categories = lock(&self.categories);
        let mut by_task: BTreeMap<(&str, &str), BTreeMap<&str, u64>> = BTreeMap::new();
        for ((task, model, s), counts) in categories.iter() {
            if stage(s) {
                let entry = by_task.entry((task.as_str(), model.as_str())).or_default();
                for (c, n) in counts {
                    *entry.entry(c.as_str()).or_default() += n;
                }
            }
        }
        by_task
            .into_iter()
            .filter_map(|((task, model), counts)| {
                let total: u64 = counts.values().sum();
                match counts.iter().next() {
                    Some((only, _)) if counts.len() == 1 && total >= CONSTANT_AFTER => Some(
                        format!("{task} (openai:{model}): \"{only}\" for all {total} answers"),
                    ),
                    _ => None,
                }
            })
            .collect()
    }

    /// Count a model's categorical answer for [`crate::Llm::constant_answers`].
    pub(crate) fn note_category<T: Task>(&self, p: &Prepared<T>, value: &T::Output) {
        if p.model.is_none() {
            return;
        }
        if let Some(c) = T::category(value) {
            *lock(&self.categories)
                .entry((T::NAME.to_string(), p.model_name.clone(), p.stage.clone()))
                .or_default()
                .entry(c)
                .or_insert(0) += 1;
        }
    }

    pub(crate) fn bump(&self, f: impl FnOnce(&mut LlmStats)) {
        f(&mut lock(&self.stats));
    }

    /// A call record's `error`: the reason code first, so totals can group by it.
    pub(crate) fn describe(&self, e: &LlmError) -> String {
        format!("{}: {}", e.reason(), self.redactor.text(&e.to_string()))
    }

    /// The call record of an item that another item's identical request answered: the request
    /// is counted on the sender's record alone, so this one has no attempts, tokens or cost.
    pub(crate) fn served<T: Task>(
        &self,
        p: &Prepared<T>,
        error: Option<&LlmError>,
        start: Instant,
    ) -> Record {
        Record {
            endpoint: String::new(),
            tokens_in: 0,
            tokens_out: 0,
            tokens_cached: 0,
            cache_hit: error.is_none(),
            cost: p.price().map(|_| 0.0),
            error: error.map(|e| self.describe(e)),
            effort: Effort {
                attempts: 0,
                latency: Duration::ZERO,
                queue: start.elapsed(),
            },
        }
    }

    pub(crate) fn record_failure<T: Task>(
        &self,
        p: &Prepared<T>,
        e: &LlmError,
        effort: Effort,
        endpoint: String,
    ) {
        let cost = p.price().map(|_| 0.0);
        self.record_failure_priced(p, e, effort, endpoint, TokenUsage::default(), cost);
    }

    /// A failed item's record with the tokens it spent and their cost (a batch answer's is
    /// discounted).
    pub(crate) fn record_failure_priced<T: Task>(
        &self,
        p: &Prepared<T>,
        e: &LlmError,
        effort: Effort,
        endpoint: String,
        tokens: TokenUsage,
        cost: Option<f64>,
    ) {
        self.record(
            p,
            Record {
                endpoint,
                tokens_in: tokens.input,
                tokens_out: tokens.output,
                tokens_cached: tokens.cached,
                cache_hit: false,
                cost,
                error: Some(self.describe(e)),
                effort,
            },
        );
    }

    pub(crate) fn record<T: Task>(&self, p: &Prepared<T>, r: Record) {
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
            let mut seq = lock(&self.seq);
            let c = seq
                .entry(format!("{}/{}", l.stage, l.request_hash))
                .or_insert(0);
            *c += 1;
            *c
        };
        let r = l.record;
        {
            let mut s = lock(&self.stats);
            s.calls += 1;
            if r.cache_hit {
                s.cache_hits += 1;
            }
            s.tokens_in += if r.cache_hit { 0 } else { r.tokens_in };
            s.tokens_out += if r.cache_hit { 0 } else { r.tokens_out };
            s.tokens_cached += if r.cache_hit { 0 } else { r.tokens_cached };
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
            tokens_cached: r.tokens_cached as i64,
            latency_ms: r.effort.latency.as_millis() as i64,
            queue_ms: r.effort.queue.as_millis() as i64,
            attempts: r.effort.attempts as i64,
            cache_hit: r.cache_hit,
            cost_usd: r.cost,
            error: r.error,
        };
        lock(&self.calls).push(call);
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
                tokens_cached: 0,
                cache_hit,
                cost,
                error: error.map(|e| self.describe(e)),
                effort,
            },
        });
    }
}

/// A lock that a panicked holder left is still usable: each part's state is whole between
/// statements.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) struct Record {
    pub(crate) endpoint: String,
    pub(crate) tokens_in: u64,
    pub(crate) tokens_out: u64,
    /// Of `tokens_in`, read from the provider's prompt cache.
    pub(crate) tokens_cached: u64,
    pub(crate) cache_hit: bool,
    pub(crate) cost: Option<f64>,
    pub(crate) error: Option<String>,
    pub(crate) effort: Effort,
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
