//! Answerable without retrieval: the questions a model answered right with no context (asked
//! by the caller through the eval layer; this module only chooses the questions and counts
//! the answers). Such a question tests nothing about retrieval.

use std::collections::{BTreeMap, HashMap};

use noisebench_core::Question;
use serde::{Deserialize, Serialize};

/// `closed_book.status` when the questions were asked.
pub const RAN: &str = "ran";
/// `closed_book.status` when they were not.
pub const NOT_RUN: &str = "not_run";

/// One question's closed-book answer, as the caller judged it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedBookAsked {
    pub question_id: String,
    /// The model's answer (empty when its call failed).
    pub answer: String,
    /// Right, wrong, or `None` when a call failed.
    pub correct: Option<bool>,
}

/// The closed-book share of one stratum (a question kind) or of all questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClosedBookStratum {
    /// Questions whose closed-book answer was judged (failed calls left out).
    pub judged: usize,
    /// Of those, answered right with no context.
    pub right: usize,
    /// `right / judged`; 0 when nothing was judged.
    pub share: f64,
}

impl ClosedBookStratum {
    fn add(&mut self, right: bool) {
        self.judged += 1;
        self.right += right as usize;
        self.share = self.right as f64 / self.judged as f64;
    }
}

/// A question answered right without retrieval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClosedBookExample {
    pub question_id: String,
    pub question: String,
    pub gold: String,
    pub answer: String,
}

/// The closed-book check (a question answered right with no retrieval tests nothing about
/// retrieval).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClosedBook {
    /// `ran`, or `not_run` (the offline backend, the check turned off, no questions).
    pub status: String,
    /// What was asked of which model, or why nothing was.
    pub reason: String,
    /// Questions asked.
    #[serde(default)]
    pub asked: usize,
    /// Of those, whose question or judge call failed (not counted in the shares).
    #[serde(default)]
    pub failed: usize,
    /// Over every judged question.
    #[serde(default)]
    pub all: ClosedBookStratum,
    /// By question kind.
    #[serde(default)]
    pub kinds: BTreeMap<String, ClosedBookStratum>,
    /// Every question answered right without retrieval, by id: the flagged items.
    #[serde(default)]
    pub flagged: Vec<String>,
    /// A seeded sample of them, with the answer the model gave.
    #[serde(default)]
    pub examples: Vec<ClosedBookExample>,
}

impl ClosedBook {
    /// The check did not run, and why.
    pub fn not_run(reason: impl Into<String>) -> ClosedBook {
        ClosedBook {
            status: NOT_RUN.into(),
            reason: reason.into(),
            asked: 0,
            failed: 0,
            all: ClosedBookStratum::default(),
            kinds: BTreeMap::new(),
            flagged: Vec::new(),
            examples: Vec::new(),
        }
    }

    pub fn ran(&self) -> bool {
        self.status == RAN
    }
}

/// The questions to ask closed-book: all of them, or a seeded sample of `max` (in id order).
pub fn closed_book_questions(
    questions: &[Question],
    max: Option<usize>,
    seed: u64,
) -> Vec<&Question> {
    let all: Vec<&Question> = questions.iter().collect();
    match max {
        Some(n) => crate::sample(all, n, seed, |q| q.id.as_str()),
        None => {
            let mut all = all;
            all.sort_by(|a, b| a.id.cmp(&b.id));
            all
        }
    }
}

/// The closed-book section from the judged answers (`reason` says what asked them), per
/// question kind, with the questions answered right flagged and `samples` of them shown.
pub fn closed_book(
    questions: &[Question],
    asked: &[ClosedBookAsked],
    reason: impl Into<String>,
    samples: usize,
    seed: u64,
) -> ClosedBook {
    let by_id: HashMap<&str, &Question> = questions.iter().map(|q| (q.id.as_str(), q)).collect();
    let mut out = ClosedBook {
        status: RAN.into(),
        asked: asked.len(),
        ..ClosedBook::not_run(reason)
    };
    let mut examples = Vec::new();
    for a in asked {
        let Some(correct) = a.correct else {
            out.failed += 1;
            continue;
        };
        let question = by_id.get(a.question_id.as_str());
        let kind = question.map_or("unknown", |q| q.kind.as_str());
        out.all.add(correct);
        out.kinds.entry(kind.to_string()).or_default().add(correct);
        if correct {
            out.flagged.push(a.question_id.clone());
            examples.push(ClosedBookExample {
                question_id: a.question_id.clone(),
                question: question.map(|q| q.question.clone()).unwrap_or_default(),
                gold: question.map(|q| q.answer.clone()).unwrap_or_default(),
                answer: a.answer.clone(),
            });
        }
    }
    out.flagged.sort();
    out.examples = crate::sample(examples, samples, seed, |e| e.question_id.as_str());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, kind: &str) -> Question {
        Question {
            id: id.into(),
            kind: kind.into(),
            question: format!("question {id}?"),
            answer: format!("answer {id}"),
            ..Default::default()
        }
    }

    #[test]
    fn right_answers_are_flagged_and_counted_per_kind() {
        let questions = vec![
            q("a", "single_hop"),
            q("b", "single_hop"),
            q("c", "star_shaped"),
        ];
        let asked = vec![
            ClosedBookAsked {
                question_id: "a".into(),
                answer: "answer a".into(),
                correct: Some(true),
            },
            ClosedBookAsked {
                question_id: "b".into(),
                answer: "no idea".into(),
                correct: Some(false),
            },
            ClosedBookAsked {
                question_id: "c".into(),
                answer: String::new(),
                correct: None,
            },
        ];
        let c = closed_book(&questions, &asked, "asked", 5, 0);
        assert!(c.ran());
        assert_eq!((c.asked, c.failed), (3, 1));
        assert_eq!((c.all.judged, c.all.right), (2, 1));
        assert_eq!(c.all.share, 0.5);
        assert_eq!(c.kinds["single_hop"].share, 0.5);
        assert!(!c.kinds.contains_key("star_shaped"));
        assert_eq!(c.flagged, vec!["a".to_string()]);
        assert_eq!(c.examples[0].gold, "answer a");
    }

    #[test]
    fn at_most_max_questions_are_chosen_the_same_each_time() {
        let questions: Vec<Question> = (0..50).map(|i| q(&format!("q{i:02}"), "x")).collect();
        assert_eq!(closed_book_questions(&questions, None, 0).len(), 50);
        let a = closed_book_questions(&questions, Some(10), 3);
        assert_eq!(a.len(), 10);
        assert_eq!(a, closed_book_questions(&questions, Some(10), 3));
    }
}
