//! The remote call path of one prepared item: the budget and limits (in [`crate::openai`]), the
//! call, a strict parse with one repair ([`crate::parse`]), and up to `max_reasks` re-asks that
//! show the model why its reply was unusable (`reask.md`, else a fixed text). Everything a server
//! sends back is redacted of the configured keys before it reaches an error or the call log.

use std::path::Path;

use crate::call_log::Record;
use crate::error::LlmError;
use crate::openai::{self, Effort};
use crate::parse;
use crate::prompt::Message;
use crate::request::Prepared;
use crate::task::Task;
use crate::{Answer, Llm};

impl Llm {
    /// Call the remote backend for one prepared item: budget, call, parse, repair, re-ask.
    pub(crate) async fn remote<T: Task>(
        self,
        p: Prepared<T>,
    ) -> Result<Answer<T::Output>, LlmError> {
        let Some(model) = p.model.clone() else {
            return Err(LlmError::Internal("remote call without a model".into()));
        };
        let salt = u64::from_str_radix(&p.key[..16], 16).unwrap_or(0);
        let mut messages = p.messages.clone();
        let (mut tokens_in, mut tokens_out) = (0u64, 0u64);
        let mut effort = Effort::default();
        let mut endpoint = String::new();
        let max_tries = self.inner.config.max_reasks + 1;
        let mut last_error = String::new();
        for tr in 1..=max_tries {
            let estimate = openai::estimate_tokens(&messages) + self.inner.config.max_tokens as u64;
            let reply = model
                .chat(
                    &messages,
                    &p.params,
                    p.response_format.clone(),
                    estimate,
                    salt.wrapping_add(tr as u64),
                    tr == 1,
                    &mut effort,
                )
                .await;
            let reply = match reply {
                Ok(r) => r,
                Err(e) => {
                    let e = self.redact_error(e);
                    self.record_failure(&p, &e, effort, endpoint);
                    return Err(e);
                }
            };
            tokens_in += reply.tokens_in;
            tokens_out += reply.tokens_out;
            endpoint = reply.endpoint.clone();
            match parse::parse_answer::<T>(&p.input, &reply.value) {
                Ok((value, how)) => {
                    if how == parse::Parsed::Repaired {
                        tracing::debug!(task = %T::NAME, "answer repaired");
                    }
                    self.store(&p, &value, tokens_in, tokens_out);
                    let cost = model.config.price.map(|pr| pr.cost(tokens_in, tokens_out));
                    self.record(
                        &p,
                        Record {
                            endpoint,
                            tokens_in,
                            tokens_out,
                            cache_hit: false,
                            cost,
                            error: None,
                            effort,
                        },
                    );
                    return Ok(Answer {
                        value,
                        provenance: Self::provenance_of(&p),
                        request_hash: p.key.clone(),
                        prompt_version: p.prompt_version.clone(),
                        cache_hit: false,
                    });
                }
                Err(why) => {
                    tracing::debug!(task = %T::NAME, try_ = tr, error = %why, "unusable answer");
                    last_error = why.clone();
                    if tr < max_tries {
                        messages.push(Message {
                            role: "assistant".into(),
                            content: reply.value.clone(),
                        });
                        messages.push(Message {
                            role: "user".into(),
                            content: self.reask_text(&why),
                        });
                    }
                }
            }
        }
        let e = LlmError::Unparseable {
            tries: max_tries,
            detail: self.redact_text(&last_error),
        };
        self.record_failure_tokens(&p, &e, effort, endpoint, tokens_in, tokens_out);
        Err(e)
    }

    fn reask_text(&self, error: &str) -> String {
        let rendered = self.inner.reask.as_ref().and_then(|env| {
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

    pub(crate) fn redact_text(&self, text: &str) -> String {
        let mut t = text.to_string();
        for s in &self.inner.secrets {
            t = openai::redact(&t, Some(s));
        }
        t
    }

    fn redact_error(&self, e: LlmError) -> LlmError {
        match e {
            LlmError::Http {
                endpoint,
                status,
                detail,
            } => LlmError::Http {
                endpoint,
                status,
                detail: self.redact_text(&detail),
            },
            LlmError::RetriesExhausted { attempts, last } => LlmError::RetriesExhausted {
                attempts,
                last: self.redact_text(&last),
            },
            other => other,
        }
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
