//! Answering items: [`Llm::run_batch`] (and [`Llm::run`], [`Llm::run_batch_with_progress`], the
//! async [`Llm::call`]). Each item is prepared and, where it can be, answered locally (a large
//! batch renders, hashes and works out offline answers on every core, a window of 8,192 items at
//! a time, so only the requests still to send are held); items whose requests
//! hash alike share one request (the first sends it, the others get its outcome with a record of no
//! attempts, tokens or cost); the remaining requests run concurrently on the handle's runtime, or,
//! with `llm.mode = "batch"`, go as one Batch API job ([`crate::batch_api`]). Results come back in
//! input order, one per item.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crate::error::LlmError;
use crate::request::Prepared;
use crate::task::Task;
use crate::transport::{NoBar, Request, share};
use crate::{Answer, Llm};

/// Batches of at least this many items prepare their requests and work out offline answers on
/// every core; smaller ones stay on the calling thread (threads cost more than they save).
const PARALLEL_FROM: usize = 64;

/// Items prepared (rendered, hashed, answered locally where they can be) at a time.
const PREPARE_WINDOW: usize = 8_192;

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
        // Items are prepared a window at a time: a window's rendered prompts are let go as its
        // items are answered locally, so a large offline or cached batch never holds every
        // rendered prompt at once. Only requests that must be sent are kept (in input order).
        let mut requests: Vec<Request<T>> = Vec::new();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        let mut inputs = inputs.into_iter().peekable();
        while inputs.peek().is_some() {
            let window: Vec<T::Input> = inputs.by_ref().take(PREPARE_WINDOW).collect();
            let prepared = noisebench_core::parallel_map_owned(window, threads, |input| {
                self.inner.prepare.prepare::<T>(stage, input)
            });
            let offline = self.offline_answers(&prepared, threads);
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
                // Items whose prompts render alike make one request between them: a repeated
                // paid call would buy the same answer again.
                if let Some(&r) = by_key.get(&p.key) {
                    requests[r].sharers.push((i, p, start));
                    continue;
                }
                match self.inner.local.answer(&p, start, offline, &self.inner.log) {
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
                            results[*j] = Some(share(&self.inner.log, p, &outcome, *start));
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
        if !requests.is_empty() {
            let transport = &self.inner.transport;
            let send = Arc::clone(transport).send_requests::<T>(requests, self.quoting(), bar);
            for (i, r) in transport.block_on(send) {
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
            Ok(p) if self.inner.local.offline_answer_needed(p) => Some(T::offline(&p.input)),
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
        let p = self.inner.prepare.prepare::<T>(stage, input)?;
        if let Some(r) = self.inner.local.answer(&p, start, None, &self.inner.log) {
            return r;
        }
        if let Some(answer) = self
            .quote_tokens(&p)
            .and_then(|t| self.quote_request(&p, t))
        {
            return Ok(answer);
        }
        let transport = Arc::clone(&self.inner.transport);
        let handle = transport.runtime.get().handle().clone();
        let key = p.key.clone();
        let quoting = self.quoting();
        // A batch of one: in batch mode every request goes through the Batch API.
        let request = Request {
            sender: 0,
            prepared: p,
            sharers: Vec::new(),
        };
        let sent = handle.spawn(async move {
            transport
                .send_requests::<T>(vec![request], quoting, &NoBar)
                .await
        });
        let outcome = match sent.await {
            Ok(out) => out
                .into_iter()
                .next()
                .map(|(_, r)| r)
                .unwrap_or_else(|| Err(LlmError::Internal("empty batch result".into()))),
            Err(e) => Err(LlmError::Internal(format!("task: {e}"))),
        };
        self.quote_answered::<T>(stage, &key, &outcome);
        outcome
    }
}
