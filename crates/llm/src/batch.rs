//! Answering items: [`Llm::run_batch`] (and [`Llm::run`], [`Llm::run_batch_with_progress`], the
//! async [`Llm::call`]). Each item is prepared and, where it can be, answered locally (a large
//! batch renders, hashes and works out offline answers on every core first); items whose requests
//! hash alike share one request (the first sends it, the others get its outcome with a record of no
//! attempts, tokens or cost); the remaining requests run concurrently on the handle's runtime, or,
//! with `llm.mode = "batch"`, go as one Batch API job ([`crate::batch_api`]). Results come back in
//! input order, one per item.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::batch_api::BatchReply;
use crate::call_log::Record;
use crate::error::LlmError;
use crate::openai::Effort;
use crate::request::Prepared;
use crate::task::Task;
use crate::{Answer, Llm};

/// Batches of at least this many items prepare their requests and work out offline answers on
/// every core; smaller ones stay on the calling thread (threads cost more than they save).
const PARALLEL_FROM: usize = 64;

impl Llm {
    /// Answer one item (sync).
    pub fn run<T: Task>(
        &self,
        stage: &str,
        input: T::Input,
    ) -> Result<Answer<T::Output>, LlmError> {
        self.run_batch::<T>(stage, vec![input])
            .into_iter()
            .next()
            .unwrap_or_else(|| Err(LlmError::Internal("empty batch result".into())))
    }

    /// Answer many items concurrently (sync); results in input order, one per item. Cache hits
    /// and offline answers are decided locally, in input order (a batch of `PARALLEL_FROM`
    /// items or more prepares its requests and offline answers on every core first); the rest
    /// run on the internal runtime under the model's limits.
    ///
    /// Items with the same request hash make one request: the first of them sends it and is
    /// logged as the call; each other gets its answer (or its error) and a record with no
    /// attempts, tokens or cost, `cache_hit` true when the answer was good.
    pub fn run_batch<T: Task>(
        &self,
        stage: &str,
        inputs: Vec<T::Input>,
    ) -> Vec<Result<Answer<T::Output>, LlmError>> {
        self.run_batch_with_progress::<T>(stage, inputs, &NoBar)
    }

    /// [`Llm::run_batch`], advancing `bar` by one as each item is answered (e.g. a bar from
    /// `ctx.progress.bar(...)`).
    pub fn run_batch_with_progress<T: Task>(
        &self,
        stage: &str,
        inputs: Vec<T::Input>,
        bar: &dyn noisebench_core::ProgressBar,
    ) -> Vec<Result<Answer<T::Output>, LlmError>> {
        let mut results: Vec<Option<Result<Answer<T::Output>, LlmError>>> =
            Vec::with_capacity(inputs.len());
        // Rendering and hashing requests, and the offline rule, are pure per item: a large batch
        // spreads them over the cores. What follows (sharing, cache, call log) stays in order.
        let start = Instant::now();
        let threads = if inputs.len() >= PARALLEL_FROM {
            noisebench_core::default_threads()
        } else {
            1
        };
        let prepared = noisebench_core::parallel_map_owned(inputs, threads, |input| {
            self.prepare::<T>(stage, input)
        });
        let offline = self.offline_answers(&prepared, threads);
        // Items whose prompts render alike make one request between them: a repeated paid
        // call would buy the same answer again.
        let mut requests: Vec<Request<T>> = Vec::new();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        for (p, offline) in prepared.into_iter().zip(offline) {
            let i = results.len();
            results.push(None);
            let p = match p {
                Ok(p) => p,
                Err(e) => {
                    bar.inc(1);
                    results[i] = Some(Err(e));
                    continue;
                }
            };
            if let Some(&r) = by_key.get(&p.key) {
                requests[r].sharers.push((i, p, start));
                continue;
            }
            match self.answer_locally(&p, start, offline) {
                Some(r) => {
                    bar.inc(1);
                    results[i] = Some(r);
                }
                None => {
                    by_key.insert(p.key.clone(), requests.len());
                    requests.push(Request {
                        sender: i,
                        prepared: p,
                        sharers: Vec::new(),
                    });
                }
            }
        }
        if !requests.is_empty() && self.quoting() {
            // Quote mode: each request is counted; all but the sample's are answered by a
            // stand-in and never sent. Prompts are tokenized on every core, then decided in
            // order (the prompt-cache model needs the order).
            let tokens = noisebench_core::parallel_map(&requests, threads, |r| {
                self.quote_tokens(&r.prepared)
            });
            let mut sent = Vec::new();
            for (r, tokens) in requests.into_iter().zip(tokens) {
                let stand_in = tokens.and_then(|t| self.quote_request(&r.prepared, t));
                match stand_in {
                    Some(answer) => {
                        let outcome = Ok(answer);
                        for (j, p, start) in &r.sharers {
                            results[*j] = Some(self.share(p, &outcome, *start));
                        }
                        bar.inc(1 + r.sharers.len() as u64);
                        results[r.sender] = Some(outcome);
                    }
                    None => sent.push(r),
                }
            }
            requests = sent;
        }
        // The sample's requests: what the model's answers gave is noted once they are in.
        let sampled: Vec<(usize, String)> = if self.quoting() {
            requests
                .iter()
                .map(|r| (r.sender, r.prepared.key.clone()))
                .collect()
        } else {
            Vec::new()
        };
        if !requests.is_empty() && self.batch_mode() && !self.quoting() {
            let me = self.clone();
            for (i, r) in self.block_on(me.remote_batch::<T>(requests, bar)) {
                results[i] = Some(r);
            }
        } else if !requests.is_empty() {
            let live = requests.into_iter().map(|r| (r, None)).collect();
            for (i, r) in self.block_on(self.clone().dispatch::<T>(live, bar)) {
                results[i] = Some(r);
            }
        }
        for (i, key) in sampled {
            if let Some(outcome) = &results[i] {
                self.quote_answered::<T>(stage, &key, outcome);
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(LlmError::Internal("item not answered".into()))))
            .collect()
    }

    /// The offline rule's answer for each item that will surely need it (no model, and no
    /// cache to look in: such an item is answered by the rule even when an earlier item made
    /// the same request), worked out on `threads` threads; `None` for the rest.
    fn offline_answers<T: Task>(
        &self,
        prepared: &[Result<Prepared<T>, LlmError>],
        threads: usize,
    ) -> Vec<Option<T::Output>> {
        noisebench_core::parallel_map(prepared, threads, |p| match p {
            Ok(p) if self.offline_answer_needed(p) => Some(T::offline(&p.input)),
            _ => None,
        })
    }

    /// Answer one item from async code (any tokio runtime).
    pub async fn call<T: Task>(
        &self,
        stage: &str,
        input: T::Input,
    ) -> Result<Answer<T::Output>, LlmError> {
        let start = Instant::now();
        let p = self.prepare::<T>(stage, input)?;
        if let Some(r) = self.answer_locally(&p, start, None) {
            return r;
        }
        if let Some(answer) = self
            .quote_tokens(&p)
            .and_then(|t| self.quote_request(&p, t))
        {
            return Ok(answer);
        }
        let handle = self.runtime().handle().clone();
        if self.batch_mode() && !self.quoting() {
            // A batch of one: batch mode sends every request through the Batch API.
            let me = self.clone();
            let request = Request {
                sender: 0,
                prepared: p,
                sharers: Vec::new(),
            };
            return handle
                .spawn(async move { me.remote_batch::<T>(vec![request], &NoBar).await })
                .await
                .map_err(|e| LlmError::Internal(format!("task: {e}")))?
                .into_iter()
                .next()
                .map(|(_, r)| r)
                .unwrap_or_else(|| Err(LlmError::Internal("empty batch result".into())));
        }
        let key = p.key.clone();
        let outcome = handle
            .spawn(self.clone().remote::<T>(p))
            .await
            .unwrap_or_else(|e| Err(LlmError::Internal(format!("task: {e}"))));
        self.quote_answered::<T>(stage, &key, &outcome);
        outcome
    }

    /// The one dispatch loop of live and batch mode: each distinct request takes the remote
    /// path on the handle's runtime (its first reply from a Batch API job when one is given,
    /// [`crate::batch_api`]), and the items sharing it get its outcome as soon as it is in.
    /// Results by item index, `bar` advanced by one per item.
    pub(crate) async fn dispatch<T: Task>(
        self,
        requests: Vec<(Request<T>, Option<BatchReply>)>,
        bar: &dyn noisebench_core::ProgressBar,
    ) -> Vec<(usize, Result<Answer<T::Output>, LlmError>)> {
        use futures::StreamExt;
        let mut pending: futures::stream::FuturesUnordered<_> = requests
            .into_iter()
            .map(|(r, first)| {
                let h = tokio::spawn(self.clone().remote_with::<T>(r.prepared, first));
                async move { (r.sender, r.sharers, h.await) }
            })
            .collect();
        let mut out = Vec::with_capacity(pending.len());
        while let Some((i, sharers, r)) = pending.next().await {
            let r = r.unwrap_or_else(|e| Err(LlmError::Internal(format!("task: {e}"))));
            bar.inc(1);
            for (j, p, start) in sharers {
                out.push((j, self.share(&p, &r, start)));
                bar.inc(1);
            }
            out.push((i, r));
        }
        out
    }

    /// Give an item the outcome of the identical request another item of its batch sent.
    pub(crate) fn share<T: Task>(
        &self,
        p: &Prepared<T>,
        outcome: &Result<Answer<T::Output>, LlmError>,
        start: Instant,
    ) -> Result<Answer<T::Output>, LlmError> {
        self.record(p, self.served_record(p, outcome.as_ref().err(), start));
        match outcome {
            Ok(a) => Ok(Answer {
                cache_hit: true,
                ..a.clone()
            }),
            Err(e) => Err(e.clone()),
        }
    }

    /// The call record of an item that another item's identical request answered: the request
    /// is counted on the sender's record alone, so this one has no attempts, tokens or cost.
    pub(crate) fn served_record<T: Task>(
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
            cost: self.price_of(p).map(|_| 0.0),
            error: error.map(|e| self.describe(e)),
            effort: Effort {
                attempts: 0,
                latency: Duration::ZERO,
                queue: start.elapsed(),
            },
        }
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
