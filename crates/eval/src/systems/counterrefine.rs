//! CounterRefine (section 3): a draft answer, evidence retrieved for that answer, and a
//! KEEP/REVISE gate whose revisions must pass a deterministic validator.
//!
//! Per ask:
//!
//! 1. Draft. `R0` = the ask's first [`CounterRefineConfig::k_base`] passages (the task
//!    retrieved them already). `counterrefine_draft` answers from `R0` only, briefly. An empty or
//!    refusing draft ("I don't know") falls back to the same task with no passages (skipped
//!    when `R0` is empty: it would be the same request), then to a default: the "no" word of a
//!    yes/no ask, `unknown` otherwise.
//! 2. Answer-conditioned retrieval. With `a0` the draft and `t(q)` = `question_type`, the
//!    queries are `q` and `q "a0"`, plus `"a0"` when `t(q)` is who, where, when, year or
//!    number. Each goes to the ask's [`crate::Retriever`] for
//!    [`CounterRefineConfig::k_refine`] passages; `R1` = `R0` then everything retrieved,
//!    deduplicated by passage id in that order. An ask without a retriever gets nothing beyond
//!    `R0`: the gate then judges the draft against the evidence it was drafted from.
//! 3. `counterrefine_refine`: the question, `a0` and `R1` (passages not in `R0` marked as found
//!    by the check) give `KEEP` or `REVISE` with an answer and one evidence snippet. KEEP
//!    returns `a0`; REVISE returns `validate_revision`'s canonical answer when it accepts,
//!    `a0` otherwise.
//!
//! [`Generated::steps`] reads `draft`, then `draft:closed_book` / `draft:default` when the
//! fallbacks ran, `retrieve:<passages beyond R0>`, `refine:keep` or `refine:revise` followed by
//! `revision_accepted` or `revision_rejected:<reason>`. Each model step is one `run_batch`
//! over the asks still alive; a failed call fails its ask only.
//!
//! Validation (`validate_revision`, in order; the first failing rule names the rejection):
//!
//! | reason | rejected when |
//! |---|---|
//! | `empty` | nothing but spaces and punctuation |
//! | `non_responsive` | a refusal or non-answer (`I don't know`, `unknown`, `not enough information`...) |
//! | `same_as_draft` | equal to the draft once case, punctuation and spacing are ignored |
//! | `not_yes_no` | yes/no question: not exactly one of the ask's two words |
//! | `descriptor` | who/where/other: starts with a descriptor (`the person who`, `a company that`, `it is`) |
//! | `clause_like` | who/where/other: a lowercase finite-verb or relative cue (`is`, `was`, `has`, `which`...) |
//! | `too_long` | who/where/other: more than [`CounterRefineConfig::max_answer_words`] words |
//! | `no_marker` | when/year/number: no digit, month or number word |
//! | `no_evidence` | no evidence snippet (missing, empty or `NONE`) |
//! | `weak_overlap` | not yes/no: less than [`CounterRefineConfig::min_overlap`] of the answer's words (stopwords aside) found in the snippet |
//!
//! Accepted revisions are canonicalised by type: yes/no to the ask's word; year to the first
//! 4-digit year; number to compact spans (`1 , 000` -> `1,000`; units are kept, since a gold
//! answer may carry them and the scorer normalises); where and when lose a leading preposition
//! (`in Paris` -> `Paris`); where, who and other lose parenthetical descriptors (`Annick Bricaud
//! (oceanographer)` -> `Annick Bricaud`). All lose surrounding quotes and a trailing period.
//!
//! Offline rules (deterministic, no network):
//!
//! | task | rule |
//! |---|---|
//! | `counterrefine_draft` | `offline_answer` (style `direct`) over the passages given: the yes/no vote of a binary ask, the best-matching sentence (or the refusal) of an open one. |
//! | `counterrefine_refine` | No passage beyond `R0`: KEEP. Binary: the same vote over all of `R1`; if it differs from the draft, REVISE to it with the best-matching sentence of the new passages as evidence. Open: the new passages' sentence sharing the most content words with the question (at least two, and more than the draft shares) gives REVISE with that sentence as evidence and, as answer, its shortest run of capitalised or numeric words not in the question (the opening word only when the next is capitalised too; the sentence itself when it has no run); else KEEP. |

mod draft; // step 1: the draft and its fallbacks
mod qtype; // t(q), the question's type
mod refine; // step 3: the KEEP/REVISE gate
mod retrieve; // step 2: answer-conditioned retrieval
mod validate; // the revision validator

use noisebench_llm::{Llm, LlmError, TaskInfo};
use serde::{Deserialize, Serialize};

use self::draft::{CounterRefineDraft, default_answer, draft_input, is_non_answer};
use self::qtype::{QType, question_type};
use self::refine::{CounterRefineRefine, gate, refine_input};
use self::retrieve::widen;
pub use self::validate::Rejection;
use super::SystemsConfigError;
use super::steps;
use crate::generate::{Ask, Generated, Generator, Passage};

/// The tasks CounterRefine calls.
pub const TASKS: &[TaskInfo] = &[
    TaskInfo::of::<CounterRefineDraft>(),
    TaskInfo::of::<CounterRefineRefine>(),
];

/// CounterRefine's settings (the paper's values are the defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CounterRefineConfig {
    /// `k_b`: the ask's first passages the draft reads (at least 1; default 5).
    pub k_base: usize,
    /// `k_r`: passages retrieved per answer-conditioned query (at least 1; default 5).
    pub k_refine: usize,
    /// A revision's answer words (stopwords aside) must be found in its evidence snippet at
    /// least at this share (0 to 1; default 0.5).
    pub min_overlap: f64,
    /// A revision for an entity question (who, where, other) over this many words is a clause,
    /// not an entity (at least 1; default 8).
    pub max_answer_words: usize,
}

impl Default for CounterRefineConfig {
    fn default() -> Self {
        CounterRefineConfig {
            k_base: 5,
            k_refine: 5,
            min_overlap: 0.5,
            max_answer_words: 8,
        }
    }
}

impl CounterRefineConfig {
    pub fn validate(&self) -> Result<(), SystemsConfigError> {
        let bad = |field: &str, message: String| {
            Err(SystemsConfigError {
                field: format!("counterrefine.{field}"),
                message,
            })
        };
        if self.k_base == 0 {
            return bad("k_base", "must be at least 1".into());
        }
        if self.k_refine == 0 {
            return bad("k_refine", "must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.min_overlap) {
            return bad(
                "min_overlap",
                format!("must be between 0 and 1, not {}", self.min_overlap),
            );
        }
        if self.max_answer_words == 0 {
            return bad("max_answer_words", "must be at least 1".into());
        }
        Ok(())
    }
}

/// CounterRefine as a [`Generator`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CounterRefine {
    pub config: CounterRefineConfig,
}

/// One ask on its way through the steps.
struct Progress {
    r0: Vec<Passage>,
    kind: QType,
    draft: String,
    r1: Vec<Passage>,
    steps: Vec<String>,
    calls: usize,
}

impl Generator for CounterRefine {
    fn name(&self) -> &'static str {
        "counterrefine"
    }

    fn tasks(&self) -> Vec<TaskInfo> {
        TASKS.to_vec()
    }

    fn generate(&self, llm: &Llm, stage: &str, asks: &[Ask]) -> Vec<Result<Generated, LlmError>> {
        let k_base = self.config.k_base.max(1);
        let r0 =
            |ask: &Ask| -> Vec<Passage> { ask.passages.iter().take(k_base).cloned().collect() };
        let mut states = steps::start::<CounterRefineDraft, _>(
            llm,
            stage,
            asks,
            |ask| draft_input(ask, &r0(ask)),
            |ask, a| Progress {
                r0: r0(ask),
                kind: question_type(&ask.question, &ask.form),
                draft: a.value.answer.trim().to_string(),
                r1: Vec::new(),
                steps: vec!["draft".into()],
                calls: 1,
            },
        );
        // Closed-book fallback for drafts that did not answer from passages they had.
        steps::step::<CounterRefineDraft, _>(
            llm,
            stage,
            asks,
            &mut states,
            |s| is_non_answer(&s.draft) && !s.r0.is_empty(),
            |ask, _| draft_input(ask, &[]),
            |s, a| {
                s.draft = a.value.answer.trim().to_string();
                s.steps.push("draft:closed_book".into());
                s.calls += 1;
            },
        );
        for (ask, state) in asks.iter().zip(states.iter_mut()) {
            if let Ok(s) = state {
                if is_non_answer(&s.draft) {
                    s.draft = default_answer(ask, s.kind);
                    s.steps.push("draft:default".into());
                }
                s.r1 = widen(ask, &s.r0, &s.draft, s.kind, self.config.k_refine);
                s.steps
                    .push(format!("retrieve:{}", s.r1.len() - s.r0.len()));
            }
        }
        steps::finish::<CounterRefineRefine, _>(
            llm,
            stage,
            asks,
            states,
            "refine",
            |ask, s| refine_input(ask, &s.r0, &s.r1, &s.draft),
            |ask, mut s, a| {
                let answer = gate(
                    &a.value,
                    s.kind,
                    &ask.form,
                    &s.draft,
                    &self.config,
                    &mut s.steps,
                );
                steps::generated(&a, answer, s.calls, s.steps)
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::draft::DraftInput;
    use super::refine::{RefineInput, RefinePassage};
    use super::*;
    use crate::generate::PassageView;

    #[test]
    fn offline_answers_are_deterministic_and_prompts_render() {
        use noisebench_llm::prompt::Prompts;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let prompts = Prompts::in_dir(&dir);
        let view = |t: &str| PassageView {
            text: t.into(),
            source: Some("example.org".into()),
            background: Some("A regional paper.".into()),
        };
        let draft = noisebench_llm::task::offline_self_check::<CounterRefineDraft>(
            &prompts,
            DraftInput {
                question: "Which company leases Westgate Basin?".into(),
                form: "open".into(),
                yes: None,
                no: None,
                passages: vec![view("Ostrava Sawmill Group leases Westgate Basin.")],
            },
        )
        .unwrap();
        assert_eq!(
            draft,
            r#"{"answer":"Ostrava Sawmill Group leases Westgate Basin."}"#
        );
        let binary = noisebench_llm::task::offline_self_check::<CounterRefineDraft>(
            &prompts,
            DraftInput {
                question: "Did the council ban plastic bags?".into(),
                form: "binary".into(),
                yes: Some("yes".into()),
                no: Some("no".into()),
                passages: Vec::new(),
            },
        )
        .unwrap();
        assert!(binary == r#"{"answer":"yes"}"# || binary == r#"{"answer":"no"}"#);
        let refine = noisebench_llm::task::offline_self_check::<CounterRefineRefine>(
            &prompts,
            RefineInput {
                question: "Which company leases Westgate Basin?".into(),
                form: "open".into(),
                yes: None,
                no: None,
                draft: "Ostrava Sawmill Group".into(),
                passages: vec![RefinePassage {
                    text: "Ostrava Sawmill Group leases Westgate Basin.".into(),
                    source: None,
                    background: None,
                    new: true,
                }],
            },
        )
        .unwrap();
        assert!(refine.contains(r#""decision":"#), "{refine}");
    }
}
