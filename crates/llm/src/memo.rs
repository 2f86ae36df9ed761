//! The in-memory memo: with the cache off, remote answers by request hash for the life of the
//! handle, so a run still sends each distinct request once. Only successes are kept, so a failed
//! request is sent again by the next item or run that asks, as it would be with the cache on.

use std::time::Instant;

use crate::request::Prepared;
use crate::task::Task;
use crate::{Answer, Llm};

impl Llm {
    /// The answer this handle already received for the same request, logged like an item an
    /// identical request answered (no attempts, tokens or cost); `None` when there is none.
    pub(crate) fn recall<T: Task>(
        &self,
        p: &Prepared<T>,
        start: Instant,
    ) -> Option<Answer<T::Output>> {
        let answer = self
            .inner
            .memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&p.key)?
            .clone();
        let value: T::Output = serde_json::from_value(answer).ok()?;
        self.record(p, self.served_record(p, None, start));
        Some(Answer {
            value,
            provenance: Self::provenance_of(p),
            request_hash: p.key.clone(),
            prompt_version: p.prompt_version.clone(),
            cache_hit: true,
        })
    }

    /// Keep a remote answer for the rest of this handle's life when there is no cache to hold
    /// it. Offline answers are not kept: their rule answers again at no cost.
    pub(crate) fn remember<T: Task>(&self, p: &Prepared<T>, value: &T::Output) {
        if p.model.is_some()
            && let Ok(answer) = serde_json::to_value(value)
        {
            self.inner
                .memo
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(p.key.clone(), answer);
        }
    }
}
