//! The in-memory memo: with the cache off, remote answers by request hash for the life of the
//! handle, so a run still sends each distinct request once. Only successes are kept, so a failed
//! request is sent again by the next item or run that asks, as it would be with the cache on.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::call_log::lock;
use crate::request::Prepared;
use crate::task::Task;

/// Remote answers by request hash, behind their own lock.
#[derive(Default)]
pub(crate) struct Memo {
    answers: Mutex<HashMap<String, serde_json::Value>>,
}

impl Memo {
    /// The answer this handle already received for the same request; `None` when there is
    /// none.
    pub(crate) fn recall<T: Task>(&self, p: &Prepared<T>) -> Option<T::Output> {
        let answer = lock(&self.answers).get(&p.key)?.clone();
        serde_json::from_value(answer).ok()
    }

    /// Keep a remote answer for the rest of this handle's life when there is no cache to hold
    /// it. Offline answers are not kept: their rule answers again at no cost.
    pub(crate) fn remember<T: Task>(&self, p: &Prepared<T>, value: &T::Output) {
        if p.model.is_some()
            && let Ok(answer) = serde_json::to_value(value)
        {
            lock(&self.answers).insert(p.key.clone(), answer);
        }
    }
}
