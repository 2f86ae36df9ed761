//! The remote call path of one prepared item: the budget and limits (in [`crate::openai`]), the
//! call, a strict parse with one repair ([`crate::parse`]), up to `max_reasks` re-asks that show
//! the model why its reply was unusable (`reask.md`, else a fixed text), and the task's sense
//! check ([`crate::sense`]). An answer cut off at `max_tokens` (`finish_reason: "length"`) is
//! never parsed nor re-asked as it was: it is asked once more with `max_tokens_ceiling`, then
//! fails as `truncated`. Everything a server sends back is redacted of the configured keys
//! before it reaches an error or the call log.
//!
//! In batch mode ([`crate::batch_api`]) the first reply comes from the item's line of a Batch
//! API job and takes this same path; what follows it (a re-ask, the wider budget) goes live, at
//! the full price, and the call log row keeps the batch's `batch:<endpoint>` marker.

use std::path::Path;
use std::sync::Arc;

use crate::Answer;
use crate::call_log::Record;
use crate::error::LlmError;
use crate::openai::{self, Effort, TokenUsage};
use crate::parse;
use crate::prompt::Message;
use crate::request::Prepared;
use crate::task::Task;
use crate::transport::Transport;

impl Transport {
    /// Call the remote backend for one prepared item: budget, call, parse, repair, re-ask; the
    /// first reply taken from a Batch API job when `first` is given.
    pub(crate) async fn remote_with<T: Task>(
        self: Arc<Self>,
        p: Prepared<T>,
        mut first: Option<crate::transport::BatchReply>,
    ) -> Result<Answer<T::Output>, LlmError> {
        let Some(model) = p.model.clone() else {
            return Err(LlmError::Internal("remote call without a model".into()));
        };
        // Held until the answer is stored (or the item fails): see `OpenAiModel::item_slots`.
        let _slot = model
            .item_slots
            .acquire()
            .await
            .map_err(|_| LlmError::Internal("item slots closed".into()))?;
        let salt = u64::from_str_radix(&p.key[..16], 16).unwrap_or(0);
        let mut messages = p.messages.clone();
        let mut params = p.params.clone();
        let mut max_tokens = p.max_tokens;
        let mut spent = TokenUsage::default();
        let mut effort = Effort::default();
        let mut endpoint = String::new();
        // The tokens of the batch's reply, costed at the batch price; the rest at the full one.
        let from_batch = first.is_some();
        let mut batch_tokens = TokenUsage::default();
        if let Some(b) = &first {
            endpoint = b.endpoint.clone();
        }
        let batch_factor = 1.0 - self.config.batch_discount;
        let cost_of = |all: TokenUsage, batch: TokenUsage| {
            model.config.price.map(|pr| {
                pr.cost_cached(
                    all.input - batch.input,
                    all.cached - batch.cached,
                    all.output - batch.output,
                ) + pr.cost_cached(batch.input, batch.cached, batch.output) * batch_factor
            })
        };
        let max_tries = self.config.max_reasks + 1;
        // Requests sent, answers that failed to parse or check, and whether the one re-ask for
        // a cut-off answer and the one for a senseless answer were used.
        let (mut sent, mut tries) = (0u64, 0u32);
        let (mut widened, mut sense_reasked) = (false, false);
        let failure = loop {
            let estimate = openai::estimate_tokens(&messages) + max_tokens as u64;
            let reply = match first.take() {
                Some(b) => batch_reply(b, &mut effort, &mut batch_tokens),
                None => {
                    model
                        .chat(
                            &messages,
                            &params,
                            p.response_format.clone(),
                            estimate,
                            salt.wrapping_add(sent + 1),
                            sent == 0,
                            &mut effort,
                        )
                        .await
                }
            };
            sent += 1;
            let reply = match reply {
                Ok(r) => r,
                Err(e) => {
                    let e = self.redactor.error(e);
                    let cost = cost_of(spent, batch_tokens);
                    self.log
                        .record_failure_priced(&p, &e, effort, endpoint, spent, cost);
                    return Err(e);
                }
            };
            spent += reply.tokens();
            if !from_batch {
                endpoint = reply.endpoint.clone();
            }
            let completion = reply.value;
            if completion.truncated {
                // Cut off at the budget: the same request again would be cut again. Once, the
                // same messages with the ceiling's budget; then the item fails as truncated.
                if !widened && p.max_tokens_ceiling > max_tokens {
                    widened = true;
                    tracing::debug!(task = %T::NAME, max_tokens, ceiling = p.max_tokens_ceiling, "answer cut off: asking again with a larger budget");
                    max_tokens = p.max_tokens_ceiling;
                    params["max_tokens"] = max_tokens.into();
                    continue;
                }
                break LlmError::Truncated { max_tokens };
            }
            let why = match parse::parse_answer::<T>(&p.input, &completion.content) {
                Ok((value, how)) => {
                    if how == parse::Parsed::Repaired {
                        tracing::debug!(task = %T::NAME, "answer repaired");
                    }
                    match p.sense(&value, self.config.sense_checks) {
                        Ok(()) => {
                            let cost = cost_of(spent, batch_tokens);
                            let record = Record {
                                endpoint,
                                tokens_in: spent.input,
                                tokens_out: spent.output,
                                tokens_cached: spent.cached,
                                cache_hit: false,
                                cost,
                                error: None,
                                effort,
                            };
                            return Ok(self.accept(&p, value, record));
                        }
                        Err(senseless) => {
                            tracing::debug!(task = %T::NAME, reason = %senseless, "answer fails a sense check");
                            if !T::REASK_SENSELESS || sense_reasked || tries + 1 >= max_tries {
                                break LlmError::Senseless(senseless);
                            }
                            sense_reasked = true;
                            senseless.to_string()
                        }
                    }
                }
                Err(why) => why,
            };
            tracing::debug!(task = %T::NAME, try_ = tries + 1, error = %why, "unusable answer");
            tries += 1;
            if tries >= max_tries {
                break LlmError::Unparseable {
                    tries: max_tries,
                    detail: self.redactor.text(&why),
                };
            }
            messages.extend([
                Message {
                    role: "assistant".into(),
                    content: completion.content.clone(),
                },
                Message {
                    role: "user".into(),
                    content: self.reask_text(&why),
                },
            ]);
        };
        let e = self.redactor.senseless(failure);
        let cost = cost_of(spent, batch_tokens);
        self.log
            .record_failure_priced(&p, &e, effort, endpoint, spent, cost);
        Err(e)
    }

    /// A usable answer: noted, stored in the cache, its call recorded.
    fn accept<T: Task>(
        &self,
        p: &Prepared<T>,
        value: T::Output,
        record: Record,
    ) -> Answer<T::Output> {
        self.log.note_category::<T>(p, &value);
        self.local
            .store(p, &value, record.tokens_in, record.tokens_out);
        self.log.record(p, record);
        p.answer(value, false)
    }

    fn reask_text(&self, error: &str) -> String {
        let rendered = self.reask.as_ref().and_then(|env| {
            env.get_template("reask")
                .ok()?
                .render(minijinja::context! { error => error })
                .ok()
        });
        rendered.unwrap_or_else(|| {
            // Fallback when `reask.md` is absent from the prompts directory.
            format!("Your reply could not be used: {error}. Reply again with only the JSON object.")
        })
    }
}

pub(crate) fn load_reask(path: &Path) -> Result<Option<minijinja::Environment<'static>>, LlmError> {
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| LlmError::Prompt(format!("{}: {e}", path.display())))?;
    let body = text
        .strip_prefix("+++\n")
        .and_then(|r| r.split_once("\n+++\n"))
        .map(|(_, b)| b.trim().to_string())
        .ok_or_else(|| LlmError::Prompt(format!("{}: needs `+++` front matter", path.display())))?;
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.add_template_owned("reask".to_string(), body)
        .map_err(|e| LlmError::Prompt(format!("{}: {e}", path.display())))?;
    Ok(Some(env))
}

/// The reply a Batch API job gave for the item: its wait and its tokens (costed at the batch
/// price) counted.
fn batch_reply(
    b: crate::transport::BatchReply,
    effort: &mut Effort,
    batch_tokens: &mut TokenUsage,
) -> Result<crate::openai::Reply<crate::openai::Completion>, LlmError> {
    effort.attempts += 1;
    effort.latency += b.waited;
    if let Ok(r) = &b.reply {
        *batch_tokens = r.tokens();
    }
    b.reply
}
