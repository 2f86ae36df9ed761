//! The closed-book check of a benchmark's questions: each question asked with no passage (the
//! plain generator's `eval_answer`, as RARE's no-context probe) and its answer judged against
//! the gold answer by the two-stage judge ([`crate::answers::judge_answers`]). A question a
//! model answers right without retrieval tests nothing about retrieval; the quality card
//! (`noisebench-quality`) reports the share and flags those questions.
//!
//! The calls go through the [`Llm`] handle like every other (cache, limits, budget, call log);
//! [`TASKS`] is what the caller declares with [`Llm::require`] before asking.

use noisebench_llm::{Llm, TaskInfo};

use crate::answers::{AnswerJudge, JudgeItem, RefusalConfig, RefusalDetector, judge_answers};
use crate::generate::{AnswerForm, Ask, EvalAnswer, Generator, Plain};
use crate::run::EvalError;

/// The tasks the closed-book check asks: the question without context, then the judge of
/// answers no lexical match decided.
pub const TASKS: [TaskInfo; 2] = [TaskInfo::of::<EvalAnswer>(), TaskInfo::of::<AnswerJudge>()];

/// One question to ask closed-book.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedBookItem {
    pub id: String,
    pub question: String,
    /// The gold answer the reply is judged against.
    pub answer: String,
}

/// What became of one question asked closed-book.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedBookAnswer {
    pub id: String,
    /// The model's answer; empty when the call failed.
    pub answer: String,
    /// Whether it is right; `None` when the question or the judge call failed.
    pub correct: Option<bool>,
    /// `refusal`, `exact`, `inclusive`, `llm:<provenance>`, or `failed`.
    pub judged_by: String,
    /// `llm_<reason>` when a call failed.
    pub failure: Option<String>,
}

/// Whether the closed-book check would only hear offline rules: the offline backend answers
/// `eval_answer` from passages, and with none it always refuses, which says nothing about what
/// a model knows.
pub fn offline(llm: &Llm) -> bool {
    llm.provenance(TASKS[0].name) == "offline"
}

/// Ask each item with no context and judge the answers (refusals by the default
/// [`RefusalConfig`]); one result per item, in order. `stage` names the calls in the call log.
pub fn ask_closed_book(
    llm: &Llm,
    stage: &str,
    items: &[ClosedBookItem],
) -> Result<Vec<ClosedBookAnswer>, EvalError> {
    let refusal = RefusalDetector::new(&RefusalConfig::default())
        .map_err(|e| EvalError::Refusal(e.to_string()))?;
    let asks: Vec<Ask> = items
        .iter()
        .map(|q| Ask::new(q.id.clone(), q.question.clone(), AnswerForm::Open))
        .collect();
    let generated = Plain.generate(llm, stage, &asks);
    let mut judge_items = Vec::new();
    for (q, g) in items.iter().zip(&generated) {
        if let Ok(g) = g {
            judge_items.push(JudgeItem {
                question: q.question.clone(),
                gold: q.answer.clone(),
                prediction: g.answer.clone(),
            });
        }
    }
    let mut judgements = judge_answers(llm, stage, &judge_items, &refusal).into_iter();
    Ok(items
        .iter()
        .zip(generated)
        .map(|(q, g)| match g {
            Ok(g) => {
                let j = judgements.next();
                ClosedBookAnswer {
                    id: q.id.clone(),
                    answer: g.answer,
                    correct: j.as_ref().and_then(|j| j.correct),
                    judged_by: j
                        .as_ref()
                        .map_or_else(|| "failed".into(), |j| j.judged_by.clone()),
                    failure: j.and_then(|j| j.failure),
                }
            }
            Err(e) => ClosedBookAnswer {
                id: q.id.clone(),
                answer: String::new(),
                correct: None,
                judged_by: "failed".into(),
                failure: Some(format!("llm_{}", e.reason())),
            },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_the_check_is_recognised_and_every_answer_is_a_refusal() {
        let llm = Llm::offline();
        assert!(offline(&llm));
        let items = vec![ClosedBookItem {
            id: "q1".into(),
            question: "Which company leases Westgate Basin?".into(),
            answer: "Ostrava Sawmill Group".into(),
        }];
        let answers = ask_closed_book(&llm, "quality", &items).unwrap();
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0].correct, Some(false));
        assert_eq!(answers[0].judged_by, "refusal");
    }
}
