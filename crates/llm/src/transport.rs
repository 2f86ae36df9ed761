//! The transport part of a handle ([`Transport`]): the requests that no local answer settles go
//! to their models, live ([`crate::remote`]) or, with `llm.mode = "batch"`, as Batch API jobs
//! ([`crate::batch_api`]), through one dispatch loop ([`Transport::dispatch`]) that runs each
//! distinct request's remote path on the handle's own runtime ([`crate::runtime`]) and gives the
//! items sharing a request its outcome. It owns the runtime, the budget the models spend against,
//! the re-ask template, the keys to redact and the batch counters; it keeps each good answer in
//! the local part ([`crate::local_answers`]) and records each call in the call log
//! ([`crate::call_log`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::Answer;
use crate::call_log::{CallLog, lock};
use crate::config::{LlmConfig, LlmMode};
use crate::error::{LlmError, Redactor};
use crate::local_answers::LocalAnswers;
use crate::openai::{Budget, Completion, Reply};
use crate::request::Prepared;
use crate::runtime::Runtime;
use crate::task::Task;

/// What the transport part holds: its runtime, settings, budget and batch counters, and the
/// parts it hands answers and records to.
pub(crate) struct Transport {
    pub(crate) runtime: Runtime,
    /// What it reads of `[llm]`: `max_reasks`, `sense_checks` and batch mode's settings.
    pub(crate) config: LlmConfig,
    /// `llm.mode = "batch"` with models to send to.
    pub(crate) batch_mode: bool,
    /// The re-ask template (`reask.md`), when the prompts directory has one.
    pub(crate) reask: Option<minijinja::Environment<'static>>,
    pub(crate) redactor: Redactor,
    /// The run's spending against `llm.max_cost`, shared with every model.
    pub(crate) budget: Arc<Budget>,
    /// What batch mode did.
    pub(crate) batch_stats: Mutex<BatchStats>,
    /// Where good answers are kept.
    pub(crate) local: Arc<LocalAnswers>,
    /// Where every call is recorded.
    pub(crate) log: Arc<CallLog>,
}

impl Transport {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        config: &LlmConfig,
        has_models: bool,
        reask: Option<minijinja::Environment<'static>>,
        redactor: Redactor,
        budget: Arc<Budget>,
        local: Arc<LocalAnswers>,
        log: Arc<CallLog>,
    ) -> Self {
        Transport {
            runtime: Runtime::default(),
            batch_mode: config.mode == LlmMode::Batch && has_models,
            config: config.clone(),
            reask,
            redactor,
            budget,
            batch_stats: Mutex::new(BatchStats::default()),
            local,
            log,
        }
    }

    pub(crate) fn budget(&self) -> &Budget {
        &self.budget
    }

    /// What batch mode did so far.
    pub(crate) fn batch_stats(&self) -> BatchStats {
        lock(&self.batch_stats).clone()
    }

    pub(crate) fn bump_batch(&self, f: impl FnOnce(&mut BatchStats)) {
        f(&mut lock(&self.batch_stats));
    }

    /// Run a future on the handle's runtime, also when called from inside another runtime.
    pub(crate) fn block_on<F>(&self, f: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        self.runtime.block_on(f)
    }

    /// Send the distinct requests of a stage call: as Batch API jobs in batch mode (unless
    /// `live`: quote mode sends its sample live), else live. Results by item index, the sharers
    /// of a request included.
    pub(crate) async fn send_requests<T: Task>(
        self: Arc<Self>,
        requests: Vec<Request<T>>,
        live: bool,
        bar: &dyn noisebench_core::ProgressBar,
    ) -> Vec<(usize, Result<Answer<T::Output>, LlmError>)> {
        if self.batch_mode && !live {
            self.remote_batch::<T>(requests, bar).await
        } else {
            let live = requests.into_iter().map(|r| (r, None)).collect();
            self.dispatch::<T>(live, bar).await
        }
    }

    /// The one dispatch loop of live and batch mode: each distinct request takes the remote
    /// path on the handle's runtime (its first reply from a Batch API job when one is given),
    /// and the items sharing it get its outcome as soon as it is in. Results by item index,
    /// `bar` advanced by one per item.
    pub(crate) async fn dispatch<T: Task>(
        self: Arc<Self>,
        requests: Vec<(Request<T>, Option<BatchReply>)>,
        bar: &dyn noisebench_core::ProgressBar,
    ) -> Vec<(usize, Result<Answer<T::Output>, LlmError>)> {
        use futures::StreamExt;
        let mut pending: futures::stream::FuturesUnordered<_> = requests
            .into_iter()
            .map(|(r, first)| {
                let h = tokio::spawn(Arc::clone(&self).remote_with::<T>(r.prepared, first));
                async move { (r.sender, r.sharers, h.await) }
            })
            .collect();
        let mut out = Vec::with_capacity(pending.len());
        while let Some((i, sharers, r)) = pending.next().await {
            let r = r.unwrap_or_else(|e| Err(LlmError::Internal(format!("task: {e}"))));
            bar.inc(1);
            for (j, p, start) in sharers {
                out.push((j, share(&self.log, &p, &r, start)));
                bar.inc(1);
            }
            out.push((i, r));
        }
        out
    }
}

/// Give an item the outcome of the identical request another item of its batch sent, and
/// record it (no attempts, tokens or cost of its own).
pub(crate) fn share<T: Task>(
    log: &CallLog,
    p: &Prepared<T>,
    outcome: &Result<Answer<T::Output>, LlmError>,
    start: Instant,
) -> Result<Answer<T::Output>, LlmError> {
    log.record(p, log.served(p, outcome.as_ref().err(), start));
    match outcome {
        Ok(a) => Ok(Answer {
            cache_hit: true,
            ..a.clone()
        }),
        Err(e) => Err(e.clone()),
    }
}

/// A progress bar that draws nothing.
pub(crate) struct NoBar;

impl noisebench_core::ProgressBar for NoBar {
    fn inc(&self, _n: u64) {}
    fn finish(&self) {}
}

/// One distinct request of a batch: the item that sends it and the items that share its outcome
/// (with the item's start, from which their wait is measured).
pub(crate) struct Request<T: Task> {
    pub(crate) sender: usize,
    pub(crate) prepared: Prepared<T>,
    pub(crate) sharers: Vec<(usize, Prepared<T>, Instant)>,
}

/// What batch mode did over the life of an [`crate::Llm`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BatchStats {
    /// Jobs uploaded and created.
    pub jobs_submitted: u64,
    /// Jobs found recorded by an earlier run and polled instead of submitted.
    pub jobs_resumed: u64,
    /// Jobs this run stopped waiting for (`llm.batch_timeout_seconds`); still recorded.
    pub jobs_timed_out: u64,
    /// Jobs that ended `failed`, `expired` or `cancelled`.
    pub jobs_ended_unfinished: u64,
    /// Requests sent in new jobs.
    pub lines_sent: u64,
    /// Lines answered with HTTP 200.
    pub lines_answered: u64,
    /// Lines that came back with an error, or not at all from a job that ended.
    pub lines_failed: u64,
}

/// The first reply of an item in batch mode, handed to [`Transport::remote_with`] by [`crate::batch_api`].
pub(crate) struct BatchReply {
    pub(crate) reply: Result<Reply<Completion>, LlmError>,
    /// `batch:<endpoint name>`: the call log's marker of a batch answer.
    pub(crate) endpoint: String,
    /// From submitting (or resuming) the job to reading its results.
    pub(crate) waited: Duration,
}
