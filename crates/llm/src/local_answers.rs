//! The answer-locally part of a handle ([`LocalAnswers`]): what is decided without a request, in
//! item order: a cache hit (or, with the cache off, an answer this handle already received:
//! [`crate::memo`]), a cache-only miss, the offline rule (whose answers a large batch may have
//! worked out ahead on every core). And [`LocalAnswers::store`], which keeps each successful,
//! checked answer for the next item or run that asks (the cache in `read-write` mode, else the
//! memo); failures are never kept. Each decision is recorded in the call log it is given.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::Answer;
use crate::cache::Cache;
use crate::call_log::{CallLog, Record, answered_locally};
use crate::config::{CacheMode, LlmConfig};
use crate::error::LlmError;
use crate::memo::Memo;
use crate::request::Prepared;
use crate::task::Task;

/// The response cache (when on), the memo (when off) and the settings that decide what they
/// answer.
pub(crate) struct LocalAnswers {
    cache: Option<Cache>,
    memo: Memo,
    mode: CacheMode,
    /// `llm.cache.offline`: the offline rules' answers are cached too.
    offline: bool,
    /// `llm.sense_checks`: a cached answer passes its checks again.
    sense_checks: bool,
}

impl LocalAnswers {
    pub(crate) fn new(cache: Option<Cache>, config: &LlmConfig) -> Self {
        LocalAnswers {
            cache,
            memo: Memo::default(),
            mode: config.cache.mode,
            offline: config.cache.offline,
            sense_checks: config.sense_checks,
        }
    }

    /// The response cache, when on.
    pub(crate) fn cache(&self) -> Option<&Cache> {
        self.cache.as_ref()
    }

    pub(crate) fn mode(&self) -> CacheMode {
        self.mode
    }

    /// Whether the cache holds an answer for this request hash.
    pub(crate) fn cached(&self, key: &str) -> bool {
        self.cache.as_ref().is_some_and(|c| c.get(key).is_some())
    }

    /// Decide an item without network: cache hit, cache-only miss, or the offline rule
    /// (`offline`: the rule's answer when the caller already worked it out, see
    /// [`LocalAnswers::offline_answer_needed`]).
    pub(crate) fn answer<T: Task>(
        &self,
        p: &Prepared<T>,
        start: Instant,
        offline: Option<T::Output>,
        log: &CallLog,
    ) -> Option<Result<Answer<T::Output>, LlmError>> {
        if let Some(a) = self.lookup(p, start, log) {
            return Some(a);
        }
        let use_cache = self.uses_cache(p);
        if use_cache {
            log.bump(|s| s.cache_misses += 1);
        }
        if use_cache && self.mode == CacheMode::CacheOnly {
            let e = LlmError::CacheMiss {
                request_hash: p.key.clone(),
            };
            log.record_failure(p, &e, answered_locally(start), String::new());
            return Some(Err(e));
        }
        if p.model.is_none() {
            let value = offline.unwrap_or_else(|| T::offline(&p.input));
            if use_cache {
                self.store(p, &value, 0, 0);
            }
            log.record(
                p,
                Record {
                    endpoint: String::new(),
                    tokens_in: 0,
                    tokens_out: 0,
                    tokens_cached: 0,
                    cache_hit: false,
                    cost: None,
                    error: None,
                    effort: answered_locally(start),
                },
            );
            return Some(Ok(p.answer(value, false)));
        }
        None
    }

    /// Whether [`LocalAnswers::answer`] surely answers this item with the offline rule: no
    /// model and no cache to look in first. Such answers may be worked out ahead, on any thread.
    pub(crate) fn offline_answer_needed<T: Task>(&self, p: &Prepared<T>) -> bool {
        p.model.is_none() && !self.uses_cache(p)
    }

    fn uses_cache<T: Task>(&self, p: &Prepared<T>) -> bool {
        self.cache.is_some() && (p.model.is_some() || self.offline)
    }

    /// A cache hit (or, without a cache, an answer this handle already received), logged;
    /// `None` on a miss. A model's cached answer passes the task's sense check again (the
    /// checks may be newer than the answer, or were off when it was stored): one that fails is
    /// the item's failure, with the check's reason.
    fn lookup<T: Task>(
        &self,
        p: &Prepared<T>,
        start: Instant,
        log: &CallLog,
    ) -> Option<Result<Answer<T::Output>, LlmError>> {
        if p.model.is_some() && self.cache.is_none() {
            // Logged like an item an identical request answered (no attempts, tokens or cost).
            let value = self.memo.recall(p)?;
            log.record(p, log.served(p, None, start));
            return Some(Ok(p.answer(value, true)));
        }
        if !self.uses_cache(p) {
            return None;
        }
        let cache = self.cache.as_ref()?;
        let bytes = cache.get(&p.key)?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        let value: T::Output = serde_json::from_value(entry.answer).ok()?;
        if p.model.is_some() {
            if let Err(senseless) = p.sense(&value, self.sense_checks) {
                let e = LlmError::Senseless(senseless);
                log.record(
                    p,
                    Record {
                        endpoint: String::new(),
                        tokens_in: entry.tokens_in,
                        tokens_out: entry.tokens_out,
                        tokens_cached: 0,
                        cache_hit: true,
                        cost: p.price().map(|_| 0.0),
                        error: Some(log.describe(&e)),
                        effort: answered_locally(start),
                    },
                );
                return Some(Err(e));
            }
            log.note_category::<T>(p, &value);
        }
        log.record(
            p,
            Record {
                endpoint: String::new(),
                tokens_in: entry.tokens_in,
                tokens_out: entry.tokens_out,
                tokens_cached: 0,
                cache_hit: true,
                cost: p.price().map(|_| 0.0),
                error: None,
                effort: answered_locally(start),
            },
        );
        Some(Ok(p.answer(value, true)))
    }

    /// Keep a successful, checked answer so that no later item or run pays for it again: in the
    /// cache when its mode writes (`read-write`), in the memo when there is no cache.
    pub(crate) fn store<T: Task>(
        &self,
        p: &Prepared<T>,
        value: &T::Output,
        tokens_in: u64,
        tokens_out: u64,
    ) {
        let Some(cache) = &self.cache else {
            self.memo.remember(p, value);
            return;
        };
        if self.mode != CacheMode::ReadWrite {
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
