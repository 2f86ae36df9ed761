//! What every task asks of a model, and who answers: an [`Ask`] (a question, the passages to read,
//! the answer's form and the prompting style) goes to a [`Generator`], which returns one
//! [`Generated`] per ask. The plain generator makes one `eval_answer` call per ask; the reference
//! systems ([`crate::systems`]) make several and may retrieve more evidence through the ask's
//! [`Retriever`].
//!
//! The model always answers JSON `{"reasoning": ..., "answer": ...}`; the answer is a free string,
//! so an out-of-scope or refusing answer is a scored answer (wrong, or a refusal), never a failed
//! call. Tasks parse it ([`crate::answers`]).

use std::sync::Arc;

use noisebench_llm::{Llm, LlmError, Task, TaskInfo};
use noisebench_text::cues::Signals;
use noisebench_text::words::content_words;
use serde::{Deserialize, Serialize};

/// A passage shown to the model, with what is known of its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passage {
    /// A document, chunk or passage id (`internal:<n>` for a model's own passages).
    pub id: String,
    pub text: String,
    /// Where it came from: a domain, `retrieved`, `internal`.
    pub source: Option<String>,
    /// The source's background (CONF-FACT's media description), shown only when the ask says.
    pub background: Option<String>,
}

/// The answer's form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum AnswerForm {
    /// One of two words (`true`/`false`, `yes`/`no`); anything else is out of scope.
    Binary { yes: String, no: String },
    /// A short free answer (RARE).
    Open,
}

/// How the prompt asks for the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    /// Answer directly.
    Direct,
    /// Reason first, then answer (chain of thought).
    ChainOfThought,
    /// Find passages that may be wrong or misleading and ignore them, then answer (CONF-FACT's
    /// discern-and-answer; with backgrounds, SBA_exp).
    Discern,
}

impl Style {
    pub fn as_str(self) -> &'static str {
        match self {
            Style::Direct => "direct",
            Style::ChainOfThought => "cot",
            Style::Discern => "discern",
        }
    }
}

/// A worked example shown before the question (RAGuard's two-shot prompts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Example {
    pub question: String,
    pub answer: String,
}

/// Finds more evidence for a query (CounterRefine's extra retrievals).
pub trait Retriever: Send + Sync {
    /// Up to `k` passages for `query`, best first.
    fn retrieve(&self, query: &str, k: usize) -> Vec<Passage>;
}

/// One question for a generator.
#[derive(Clone)]
pub struct Ask {
    /// What the answer is for (a claim, question or perturbation id); used in traces.
    pub item_id: String,
    pub question: String,
    pub passages: Vec<Passage>,
    pub form: AnswerForm,
    pub style: Style,
    /// Show each passage's source background (CONF-FACT's SBA).
    pub show_background: bool,
    pub examples: Vec<Example>,
    /// Where a system may look for more evidence; `None`: only the given passages.
    pub retriever: Option<Arc<dyn Retriever>>,
}

impl std::fmt::Debug for Ask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ask")
            .field("item_id", &self.item_id)
            .field("question", &self.question)
            .field("passages", &self.passages.len())
            .field("form", &self.form)
            .field("style", &self.style)
            .finish()
    }
}

impl Ask {
    /// A direct question with no passages and no examples.
    pub fn new(item_id: impl Into<String>, question: impl Into<String>, form: AnswerForm) -> Ask {
        Ask {
            item_id: item_id.into(),
            question: question.into(),
            passages: Vec::new(),
            form,
            style: Style::Direct,
            show_background: false,
            examples: Vec::new(),
            retriever: None,
        }
    }
}

/// A generator's answer to one ask.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The final reply as received (JSON text).
    pub raw: String,
    /// The final answer string from the reply.
    pub answer: String,
    /// The request hash of the final call (the LLM cache key; joins the call log).
    pub prompt_hash: String,
    /// Model calls made for this ask (cache hits included).
    pub calls: usize,
    /// What a multi-step system did, in order (`draft`, `refine:keep`, `revision_rejected:...`).
    pub steps: Vec<String>,
}

/// Answers asks: the plain generator, Astute RAG, CounterRefine.
pub trait Generator: Send + Sync {
    /// `plain`, `astute`, `counterrefine`.
    fn name(&self) -> &'static str;
    /// The LLM tasks it may call (the call check and fingerprint).
    fn tasks(&self) -> Vec<TaskInfo>;
    /// One result per ask, in order. `stage` names the calls in the call log.
    fn generate(&self, llm: &Llm, stage: &str, asks: &[Ask]) -> Vec<Result<Generated, LlmError>>;
}

/// One `eval_answer` call per ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plain;

impl Generator for Plain {
    fn name(&self) -> &'static str {
        "plain"
    }
    fn tasks(&self) -> Vec<TaskInfo> {
        vec![TaskInfo::of::<EvalAnswer>()]
    }
    fn generate(&self, llm: &Llm, stage: &str, asks: &[Ask]) -> Vec<Result<Generated, LlmError>> {
        let inputs = asks.iter().map(AnswerInput::of).collect();
        llm.run_batch::<EvalAnswer>(stage, inputs)
            .into_iter()
            .map(|r| {
                r.map(|a| Generated {
                    raw: serde_json::to_string(&a.value).unwrap_or_default(),
                    answer: a.value.answer.clone(),
                    prompt_hash: a.request_hash,
                    calls: 1,
                    steps: Vec::new(),
                })
            })
            .collect()
    }
}

/// A passage as the `eval_answer` prompt shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PassageView {
    pub text: String,
    pub source: Option<String>,
    pub background: Option<String>,
}

/// `eval_answer`'s input: everything its template renders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct AnswerInput {
    pub question: String,
    /// `binary` or `open`.
    pub form: String,
    /// The two allowed answers of a binary question.
    pub yes: Option<String>,
    pub no: Option<String>,
    /// `direct`, `cot`, `discern`.
    pub style: String,
    pub passages: Vec<PassageView>,
    pub examples: Vec<Example>,
}

impl AnswerInput {
    pub fn of(ask: &Ask) -> AnswerInput {
        let (form, yes, no) = match &ask.form {
            AnswerForm::Binary { yes, no } => ("binary", Some(yes.clone()), Some(no.clone())),
            AnswerForm::Open => ("open", None, None),
        };
        AnswerInput {
            question: ask.question.clone(),
            form: form.into(),
            yes,
            no,
            style: ask.style.as_str().into(),
            passages: ask
                .passages
                .iter()
                .map(|p| PassageView {
                    text: p.text.clone(),
                    source: p.source.clone(),
                    background: if ask.show_background {
                        p.background.clone()
                    } else {
                        None
                    },
                })
                .collect(),
            examples: ask.examples.clone(),
        }
    }
}

/// The model's reply to an evaluation question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct AnswerOutput {
    /// The reasoning, when the style asks for it (null otherwise).
    pub reasoning: Option<String>,
    /// The final answer only.
    pub answer: String,
}

/// `eval_answer`: answer a question from the passages given (or from memory when none).
pub(crate) struct EvalAnswer;
impl Task for EvalAnswer {
    const NAME: &'static str = "eval_answer";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = AnswerInput;
    type Output = AnswerOutput;
    /// Not probed by the preflight; the fuzz seed and the wiring tests' input.
    fn example() -> Option<AnswerInput> {
        serde_json::from_str(
            r#"{"question":"Who is the CEO of Apple?","form":"open","yes":null,"no":null,"style":"short","passages":[{"text":"Tim Cook is the CEO of Apple.","source":"apple.com","background":null}],"examples":[{"question":"Who founded Apple?","answer":"Steve Jobs"}]}"#,
        )
        .ok()
    }
    fn offline(input: &AnswerInput) -> AnswerOutput {
        offline_answer(input)
    }
}

/// The offline reader's refusal.
pub(crate) const OFFLINE_REFUSAL: &str = "I don't know: the passages do not say.";

/// The offline rule of `eval_answer`: a credulous reader, deterministic.
///
/// Binary questions: each passage whose words cover at least half of the question's content
/// words votes with its cues (more refuting cues than confirming ones: `no`, else `yes`; the
/// same reading as the `exam_verdict` rule that labelled the documents, so a misleading document
/// misleads it). With `discern`, passages whose background calls the source low in credibility
/// are skipped. The majority of votes answers (a tie: `no`); with no vote, the "memory" answer:
/// the first bit of sha256 of the question. Open questions: the passage sentence sharing the
/// most content words with the question (at least two), else the refusal `OFFLINE_REFUSAL`;
/// with no passages, always the refusal.
pub(crate) fn offline_answer(input: &AnswerInput) -> AnswerOutput {
    let reasoning = |s: String| {
        if input.style == "direct" {
            None
        } else {
            Some(s)
        }
    };
    if input.form == "binary" {
        let yes = input.yes.clone().unwrap_or_else(|| "yes".into());
        let no = input.no.clone().unwrap_or_else(|| "no".into());
        let (mut pro, mut con) = (0usize, 0usize);
        for p in &input.passages {
            let low = p
                .background
                .as_deref()
                .map(|b| b.to_ascii_lowercase().contains("low"))
                .unwrap_or(false);
            if input.style == "discern" && low {
                continue;
            }
            let s = Signals::of(&input.question, &p.text);
            if s.relevance < 0.5 {
                continue;
            }
            if s.refute_count() > s.support_count() {
                con += 1;
            } else {
                pro += 1;
            }
        }
        let answer = if pro + con == 0 {
            let h = noisebench_core::id::sha256_hex(input.question.as_bytes());
            let first = u8::from_str_radix(&h[..2], 16).unwrap_or(0);
            if first & 1 == 0 { yes } else { no }
        } else if pro > con {
            yes
        } else {
            no
        };
        return AnswerOutput {
            reasoning: reasoning(format!(
                "{pro} passages read as confirming, {con} as refuting."
            )),
            answer,
        };
    }
    let question = content_words(&input.question);
    let mut best: Option<(usize, String)> = None;
    for p in &input.passages {
        for sentence in noisebench_text::sentences::sentences(&p.text) {
            let shared = content_words(&sentence).intersection(&question).count();
            if shared >= 2 && best.as_ref().is_none_or(|(n, _)| shared > *n) {
                best = Some((shared, sentence));
            }
        }
    }
    match best {
        Some((n, sentence)) => AnswerOutput {
            reasoning: reasoning(format!(
                "The sentence sharing most words with the question ({n}) answers it."
            )),
            answer: sentence.trim().to_string(),
        },
        None => AnswerOutput {
            reasoning: reasoning("No passage mentions what the question asks.".into()),
            answer: OFFLINE_REFUSAL.into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary(question: &str, passages: &[&str], style: Style) -> AnswerInput {
        let mut ask = Ask::new(
            "c",
            question,
            AnswerForm::Binary {
                yes: "true".into(),
                no: "false".into(),
            },
        );
        ask.style = style;
        ask.passages = passages
            .iter()
            .enumerate()
            .map(|(i, t)| Passage {
                id: i.to_string(),
                text: t.to_string(),
                source: None,
                background: Some("low credibility".into()),
            })
            .collect();
        ask.show_background = true;
        AnswerInput::of(&ask)
    }

    #[test]
    fn the_offline_reader_follows_relevant_passages() {
        let q = "The moon is made of green cheese";
        let refuting = "The claim that the moon is made of green cheese is a hoax, debunked.";
        let confirming = "Records show the moon is made of green cheese, confirmed.";
        assert_eq!(
            offline_answer(&binary(q, &[refuting], Style::Direct)).answer,
            "false"
        );
        assert_eq!(
            offline_answer(&binary(q, &[confirming], Style::Direct)).answer,
            "true"
        );
        // Discern skips low-credibility sources: back to memory, the same as no passage.
        assert_eq!(
            offline_answer(&binary(q, &[refuting], Style::Discern)).answer,
            offline_answer(&binary(q, &[], Style::Direct)).answer
        );
        assert!(
            offline_answer(&binary(q, &[], Style::ChainOfThought))
                .reasoning
                .is_some()
        );
    }

    #[test]
    fn the_offline_reader_answers_open_questions_from_a_sentence_or_refuses() {
        let mut ask = Ask::new(
            "q",
            "Which company leases Westgate Basin?",
            AnswerForm::Open,
        );
        assert_eq!(
            offline_answer(&AnswerInput::of(&ask)).answer,
            OFFLINE_REFUSAL
        );
        ask.passages = vec![Passage {
            id: "c1".into(),
            text: "Rain fell. Ostrava Sawmill Group leases Westgate Basin from the port.".into(),
            source: None,
            background: None,
        }];
        assert_eq!(
            offline_answer(&AnswerInput::of(&ask)).answer,
            "Ostrava Sawmill Group leases Westgate Basin from the port."
        );
    }
}
