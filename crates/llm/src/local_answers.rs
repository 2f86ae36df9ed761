//! What is decided without a request, in item order: a cache hit (or, with the cache off, an answer
//! this handle already received: [`crate::memo`]), a cache-only miss, the offline rule (whose
//! answers a large batch may have worked out ahead on every core). And [`Llm::store`], which keeps
//! each successful, checked answer for the next item or run that asks (the cache in `read-write`
//! mode, else the memo); failures are never kept.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::call_log::{Record, answered_locally};
use crate::config::CacheMode;
use crate::error::LlmError;
use crate::request::Prepared;
use crate::task::Task;
use crate::{Answer, Llm};

impl Llm {
    /// Decide an item without network: cache hit, cache-only miss, or the offline rule
    /// (`offline`: the rule's answer when the caller already worked it out, see
    /// [`Llm::offline_answer_needed`]).
    pub(crate) fn answer_locally<T: Task>(
        &self,
        p: &Prepared<T>,
        start: Instant,
        offline: Option<T::Output>,
    ) -> Option<Result<Answer<T::Output>, LlmError>> {
        if let Some(a) = self.lookup(p, start) {
            return Some(a);
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
            let value = offline.unwrap_or_else(|| T::offline(&p.input));
            if use_cache {
                self.store(p, &value, 0, 0);
            }
            self.record(
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

    /// Whether [`Llm::answer_locally`] surely answers this item with the offline rule: no
    /// model and no cache to look in first. Such answers may be worked out ahead, on any thread.
    pub(crate) fn offline_answer_needed<T: Task>(&self, p: &Prepared<T>) -> bool {
        p.model.is_none() && !self.uses_cache(p)
    }

    fn uses_cache<T: Task>(&self, p: &Prepared<T>) -> bool {
        self.inner.cache.is_some() && (p.model.is_some() || self.inner.config.cache.offline)
    }

    /// A cache hit (or, without a cache, an answer this handle already received), logged;
    /// `None` on a miss. A model's cached answer passes the task's sense check again (the
    /// checks may be newer than the answer, or were off when it was stored): one that fails is
    /// the item's failure, with the check's reason.
    fn lookup<T: Task>(
        &self,
        p: &Prepared<T>,
        start: Instant,
    ) -> Option<Result<Answer<T::Output>, LlmError>> {
        if p.model.is_some() && self.inner.cache.is_none() {
            return self.recall(p, start).map(Ok);
        }
        if !self.uses_cache(p) {
            return None;
        }
        let cache = self.inner.cache.as_ref()?;
        let bytes = cache.get(&p.key)?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        let value: T::Output = serde_json::from_value(entry.answer).ok()?;
        if p.model.is_some() {
            if let Err(senseless) = self.sense_of::<T>(p, &value) {
                let e = LlmError::Senseless(senseless);
                self.record(
                    p,
                    Record {
                        endpoint: String::new(),
                        tokens_in: entry.tokens_in,
                        tokens_out: entry.tokens_out,
                        tokens_cached: 0,
                        cache_hit: true,
                        cost: self.price_of(p).map(|_| 0.0),
                        error: Some(self.describe(&e)),
                        effort: answered_locally(start),
                    },
                );
                return Some(Err(e));
            }
            self.note_category::<T>(p, &value);
        }
        self.record(
            p,
            Record {
                endpoint: String::new(),
                tokens_in: entry.tokens_in,
                tokens_out: entry.tokens_out,
                tokens_cached: 0,
                cache_hit: true,
                cost: self.price_of(p).map(|_| 0.0),
                error: None,
                effort: answered_locally(start),
            },
        );
        Some(Ok(Answer {
            value,
            provenance: Self::provenance_of(p),
            request_hash: p.key.clone(),
            prompt_version: p.prompt_version.clone(),
            cache_hit: true,
        }))
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
        let Some(cache) = &self.inner.cache else {
            self.remember(p, value);
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
