//! Step 1, the draft: `counterrefine_draft` answers from `R0` only; a refusal falls back to the
//! same task closed-book, then to a default. Also the pieces every CounterRefine prompt shares
//! (the form's fields, a passage as shown).

use noisebench_llm::Task;
use noisebench_text::words::normalize;
use serde::{Deserialize, Serialize};

use super::qtype::QType;
use crate::generate::{AnswerForm, AnswerInput, Ask, Passage, PassageView, offline_answer};

/// Normalised answers that say nothing.
const NON_ANSWERS: &[&str] = &[
    "unknown",
    "unclear",
    "none",
    "n a",
    "no answer",
    "not known",
    "not available",
    "not specified",
    "not stated",
    "not mentioned",
    "nothing",
];
/// Normalised openings of a refusal.
const REFUSAL_OPENINGS: &[&str] = &[
    "i don t know",
    "i do not know",
    "i dont know",
    "i m not sure",
    "i am not sure",
    "not sure",
    "i cannot",
    "i can t",
    "i am unable",
    "i m unable",
    "unable to",
    "cannot be determined",
    "can t be determined",
    "cannot determine",
    "not enough information",
    "insufficient information",
    "there is no information",
    "no information",
    "the passages do not",
    "the passages don t",
    "the evidence does not",
    "the context does not",
    "it is unknown",
    "it is not known",
    "it is unclear",
];

/// Whether `answer` is empty or a refusal-like non-answer.
pub(crate) fn is_non_answer(answer: &str) -> bool {
    let n = normalize(answer);
    n.is_empty()
        || NON_ANSWERS.contains(&n.as_str())
        || REFUSAL_OPENINGS
            .iter()
            .any(|r| n == *r || n.starts_with(&format!("{r} ")))
}

/// The form fields every CounterRefine prompt shows.
pub(super) fn form_fields(form: &AnswerForm) -> (String, Option<String>, Option<String>) {
    match form {
        AnswerForm::Binary { yes, no } => ("binary".into(), Some(yes.clone()), Some(no.clone())),
        AnswerForm::Open => ("open".into(), None, None),
    }
}

/// `counterrefine_draft`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DraftInput {
    pub question: String,
    /// `binary` or `open`.
    pub form: String,
    pub yes: Option<String>,
    pub no: Option<String>,
    /// `R0`; empty for the closed-book fallback.
    pub passages: Vec<PassageView>,
}

/// `counterrefine_draft`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DraftOutput {
    pub answer: String,
}

/// `counterrefine_draft`: a short answer from the passages only (CounterRefine 3.2).
pub(crate) struct CounterRefineDraft;
impl Task for CounterRefineDraft {
    const NAME: &'static str = "counterrefine_draft";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = DraftInput;
    type Output = DraftOutput;
    /// Not probed by the preflight; the fuzz seed and the wiring tests' input.
    fn example() -> Option<DraftInput> {
        serde_json::from_str(
            r#"{"question":"Is lemon water a cure for cancer?","form":"yes_no","yes":"true","no":"false","passages":[{"text":"No study shows lemon water cures cancer.","source":"who.int","background":null}]}"#,
        )
        .ok()
    }
    fn offline(input: &DraftInput) -> DraftOutput {
        DraftOutput {
            answer: offline_answer(&answer_input(
                &input.question,
                &input.form,
                &input.yes,
                &input.no,
                input.passages.clone(),
            ))
            .answer,
        }
    }
}

pub(super) fn answer_input(
    question: &str,
    form: &str,
    yes: &Option<String>,
    no: &Option<String>,
    passages: Vec<PassageView>,
) -> AnswerInput {
    AnswerInput {
        question: question.into(),
        form: form.into(),
        yes: yes.clone(),
        no: no.clone(),
        style: "direct".into(),
        passages,
        examples: Vec::new(),
    }
}

pub(super) fn view(ask: &Ask, p: &Passage) -> PassageView {
    PassageView {
        text: p.text.clone(),
        source: p.source.clone(),
        background: if ask.show_background {
            p.background.clone()
        } else {
            None
        },
    }
}

pub(super) fn draft_input(ask: &Ask, passages: &[Passage]) -> DraftInput {
    let (form, yes, no) = form_fields(&ask.form);
    DraftInput {
        question: ask.question.clone(),
        form,
        yes,
        no,
        passages: passages.iter().map(|p| view(ask, p)).collect(),
    }
}

/// The minimal default when neither draft answers.
pub(super) fn default_answer(ask: &Ask, kind: QType) -> String {
    match (&ask.form, kind) {
        (AnswerForm::Binary { no, .. }, _) => no.clone(),
        (AnswerForm::Open, QType::YesNo) => "no".into(),
        _ => "unknown".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_non_answers() {
        for s in [
            "",
            "  .",
            "I don't know",
            "I don't know: the passages do not say.",
            "Unknown.",
            "Not enough information to answer.",
            "The passages do not mention it",
            "N/A",
        ] {
            assert!(is_non_answer(s), "{s:?}");
        }
        for s in ["no", "Knowles", "None of the Above (band)", "Paris"] {
            assert!(!is_non_answer(s), "{s:?}");
        }
    }
}
