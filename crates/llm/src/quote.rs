//! Quote mode: what a build would ask its models, counted before it asks.
//!
//! A handle in quote mode ([`Llm::start_quote`]) answers the stages as the build would, except
//! that a request that would go to a model is not sent: its prompt, rendered exactly as it
//! would be, is counted with the model's tokenizer ([`crate::tokenizer`]), replayed through a
//! prompt-cache model ([`crate::prefix`]), recorded as a [`QuoteCall`], and answered by the
//! task's offline rule, a stand-in that lets the stages downstream run (their counts are then
//! projections). Cache hits stay free and are logged as usual. With a sample of `n`, the first
//! `n` distinct requests of each task are sent for real instead (live, through the ordinary
//! path, their answers cached so the build reuses them), and their usage tells the quote what
//! answers cost. Stand-in answers are never cached nor remembered.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::prefix::PrefixCache;
use crate::request::Prepared;
use crate::task::Task;
use crate::tokenizer::ModelTokenizer;
use crate::{Answer, Llm};

/// How a quote runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuoteSettings {
    /// Distinct requests per task sent to the model for real (0: none; answers' lengths are
    /// then taken at their `max_tokens` ceiling).
    pub sample: usize,
}

/// One request a build would send, as quote mode counted it.
#[derive(Debug, Clone, PartialEq)]
pub struct QuoteCall {
    pub stage: String,
    /// The task, or `embedding`.
    pub task: String,
    /// The model's key in `llm.models`.
    pub model: String,
    /// Prompt tokens as the provider counts them (chat framing included).
    pub input_tokens: u64,
    /// Of those, tokens in a prefix an earlier request of the run already sent (at least
    /// 1,024 tokens, in steps of 128): what a provider's prompt cache serves.
    pub prefix_cached: u64,
    /// The first request's `max_tokens`: the ceiling of its answer (0 for embeddings).
    pub max_tokens: u64,
    /// Sent for real as part of the sample (its usage is in the call log under its hash);
    /// otherwise answered by a stand-in.
    pub sampled: bool,
    pub request_hash: String,
    /// The stand-in answer gives the stage something (an item, a list with entries, a score):
    /// not a declined question or an empty list ([`productive`]).
    pub stand_in_produced: bool,
    /// Sampled requests: whether the model's answer gave something (a failed or declined
    /// answer did not); `None` for stand-ins and while the answer is out.
    pub model_produced: Option<bool>,
}

/// Whether an answer gives its stage something: any non-empty string, number or boolean
/// anywhere in it. A declined question (empty strings) or an empty list does not.
pub fn productive(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(_) | serde_json::Value::Number(_) => true,
        serde_json::Value::String(s) => !s.trim().is_empty(),
        serde_json::Value::Array(a) => a.iter().any(productive),
        serde_json::Value::Object(o) => o.values().any(productive),
    }
}

/// The running book of a quote.
#[derive(Default)]
struct Book {
    sampled: BTreeMap<String, usize>,
    prefixes: BTreeMap<String, PrefixCache>,
    calls: Vec<QuoteCall>,
}

/// A handle's quote mode.
pub(crate) struct QuoteState {
    settings: QuoteSettings,
    tokenizers: BTreeMap<String, ModelTokenizer>,
    book: Mutex<Book>,
}

impl Llm {
    /// Put this handle (and every clone of it) in quote mode: from now on no request reaches a
    /// model but the sample's. Fails when a model's configured tokenizer cannot be read, or
    /// when the handle already quotes.
    pub fn start_quote(&self, settings: QuoteSettings) -> Result<(), crate::LlmError> {
        let mut tokenizers = BTreeMap::new();
        if let Some(models) = self.inner.prepare.models() {
            for (key, m) in models {
                let file = m.config.tokenizer.as_ref().map(|p| self.inner.root.join(p));
                tokenizers.insert(
                    key.clone(),
                    ModelTokenizer::for_model(&m.model_id, file.as_deref())?,
                );
            }
        }
        self.inner
            .quote
            .set(QuoteState {
                settings,
                tokenizers,
                book: Mutex::new(Book::default()),
            })
            .map_err(|_| crate::LlmError::Internal("the handle already quotes".into()))
    }

    /// Whether the handle is in quote mode.
    pub fn quoting(&self) -> bool {
        self.inner.quote.get().is_some()
    }

    /// The requests counted so far, in the order they were decided (and forget them).
    pub fn take_quote_calls(&self) -> Vec<QuoteCall> {
        match self.inner.quote.get() {
            Some(q) => std::mem::take(&mut q.book.lock().unwrap_or_else(|e| e.into_inner()).calls),
            None => Vec::new(),
        }
    }

    /// What counts each model's tokens, by model key: `tiktoken o200k_base`, a tokenizer.json,
    /// or the approximation.
    pub fn quote_tokenizers(&self) -> BTreeMap<String, String> {
        self.inner
            .quote
            .get()
            .map(|q| {
                q.tokenizers
                    .iter()
                    .map(|(k, t)| (k.clone(), t.describe()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A request's prompt as its model's token stream and prompt tokens (pure: a batch counts
    /// its requests on every core before deciding them in order). `None` outside quote mode.
    pub(crate) fn quote_tokens<T: Task>(&self, p: &Prepared<T>) -> Option<(Vec<u32>, u64)> {
        let q = self.inner.quote.get()?;
        let model = p.model.as_ref()?;
        let tokenizer = q
            .tokenizers
            .get(&model.key)
            .cloned()
            .unwrap_or(ModelTokenizer::Approximation);
        Some(tokenizer.chat_stream(&p.messages))
    }

    /// Decide a request in quote mode, given its [`Llm::quote_tokens`]: `None` when it goes to
    /// the model for real as part of the sample (counted), else the stand-in answer (counted).
    /// Not in quote mode: `None`.
    pub(crate) fn quote_request<T: Task>(
        &self,
        p: &Prepared<T>,
        (stream, input_tokens): (Vec<u32>, u64),
    ) -> Option<Answer<T::Output>> {
        let q = self.inner.quote.get()?;
        let model = p.model.as_ref()?;
        let stand_in = T::offline(&p.input);
        let stand_in_produced =
            productive(&serde_json::to_value(&stand_in).unwrap_or(serde_json::Value::Null));
        let sampled = {
            let mut book = q.book.lock().unwrap_or_else(|e| e.into_inner());
            let n = book.sampled.entry(T::NAME.to_string()).or_default();
            let sampled = *n < q.settings.sample;
            *n += sampled as usize;
            let prefix_cached = book
                .prefixes
                .entry(model.key.clone())
                .or_default()
                .observe(&stream);
            book.calls.push(QuoteCall {
                stage: p.stage.clone(),
                task: T::NAME.to_string(),
                model: model.key.clone(),
                input_tokens,
                prefix_cached: prefix_cached.min(input_tokens),
                max_tokens: u64::from(p.max_tokens),
                sampled,
                request_hash: p.key.clone(),
                stand_in_produced,
                model_produced: None,
            });
            sampled
        };
        (!sampled).then(|| Answer {
            value: stand_in,
            provenance: p.provenance(),
            request_hash: p.key.clone(),
            prompt_version: p.prompt_version.clone(),
            cache_hit: false,
        })
    }

    /// Note what the model's answer to a sampled request gave: an answer that gives the stage
    /// nothing, or a failure, is what the quote's fan-out correction measures.
    pub(crate) fn quote_answered<T: Task>(
        &self,
        stage: &str,
        request_hash: &str,
        outcome: &Result<Answer<T::Output>, crate::LlmError>,
    ) {
        let Some(q) = self.inner.quote.get() else {
            return;
        };
        let produced = match outcome {
            Ok(a) => productive(&serde_json::to_value(&a.value).unwrap_or_default()),
            Err(_) => false,
        };
        let mut book = q.book.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = book.calls.iter_mut().rev().find(|c| {
            c.sampled
                && c.model_produced.is_none()
                && c.stage == stage
                && c.request_hash == request_hash
        }) {
            c.model_produced = Some(produced);
        }
    }

    /// Embedding texts a quote counts instead of sending: one [`QuoteCall`] per request the
    /// build would make. `true` when the handle quotes (the caller fills stand-in vectors).
    pub(crate) fn quote_embeddings(
        &self,
        stage: &str,
        model_key: &str,
        groups: &[Vec<&str>],
    ) -> bool {
        let Some(q) = self.inner.quote.get() else {
            return false;
        };
        let tokenizer = q
            .tokenizers
            .get(model_key)
            .cloned()
            .unwrap_or(ModelTokenizer::Approximation);
        let mut book = q.book.lock().unwrap_or_else(|e| e.into_inner());
        for g in groups {
            let input_tokens = g.iter().map(|t| tokenizer.encode(t).len() as u64).sum();
            book.calls.push(QuoteCall {
                stage: stage.to_string(),
                task: "embedding".into(),
                model: model_key.to_string(),
                input_tokens,
                prefix_cached: 0,
                max_tokens: 0,
                sampled: false,
                request_hash: String::new(),
                stand_in_produced: true,
                model_produced: None,
            });
        }
        true
    }
}
