//! `t(q)`: a question's coarse type, read from its wording; it picks the answer-conditioned
//! queries and the form a revision must take.

use noisebench_text::words::words;
use serde::{Deserialize, Serialize};

use crate::generate::AnswerForm;

/// A question's coarse type, `t(q)`: what form a revision must take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum QType {
    Who,
    Where,
    When,
    Year,
    Number,
    YesNo,
    Other,
}

impl QType {
    /// Whether the bare answer is worth a query of its own (the paper's set `T`).
    pub(crate) fn queries_answer_alone(self) -> bool {
        matches!(
            self,
            QType::Who | QType::Where | QType::When | QType::Year | QType::Number
        )
    }

    /// Entity questions: the answer is a name, not a clause.
    pub(super) fn is_entity(self) -> bool {
        matches!(self, QType::Who | QType::Where | QType::Other)
    }

    /// Temporal and numeric questions: the answer carries a digit, month or number word.
    pub(super) fn is_quantity(self) -> bool {
        matches!(self, QType::When | QType::Year | QType::Number)
    }
}

const YEAR_CUES: &[&str] = &["what year", "which year", "what decade", "which decade"];
const NUMBER_CUES: &[&str] = &[
    "how many",
    "how much",
    "how old",
    "how long",
    "how far",
    "how tall",
    "how high",
    "how big",
    "how large",
    "what percentage",
    "what percent",
    "what share",
    "what number",
    "what amount",
    "what proportion",
];
const WHERE_CUES: &[&str] = &[
    "what country",
    "which country",
    "what city",
    "which city",
    "what town",
    "which town",
    "what state",
    "which state",
    "what region",
    "which region",
    "what place",
    "which place",
];
/// First words of a question answered yes or no.
const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could", "will",
    "would", "should", "shall", "may", "might", "must",
];

/// `t(q)`: the question's coarse type, from its wording (a binary ask is always yes/no).
///
/// In order: a binary form: yes/no; `what year` / `which year`: year; `how many`, `how much`,
/// `what percentage`...: number; the first of `who`/`whom`/`whose`, `where`, `when` among the
/// words: that type; `what country` / `which city`...: where; a question opening with an
/// auxiliary (`is`, `did`, `can`...): yes/no; anything else: other.
pub(crate) fn question_type(q: &str, form: &AnswerForm) -> QType {
    if matches!(form, AnswerForm::Binary { .. }) {
        return QType::YesNo;
    }
    let w = words(q);
    let text = format!(" {} ", w.join(" "));
    let has = |cues: &[&str]| cues.iter().any(|c| text.contains(&format!(" {c} ")));
    if has(YEAR_CUES) {
        return QType::Year;
    }
    if has(NUMBER_CUES) {
        return QType::Number;
    }
    let wh = w.iter().find_map(|x| match x.as_str() {
        "who" | "whom" | "whose" => Some(QType::Who),
        "where" => Some(QType::Where),
        "when" => Some(QType::When),
        _ => None,
    });
    if let Some(t) = wh {
        return t;
    }
    if has(WHERE_CUES) {
        return QType::Where;
    }
    if w.first().is_some_and(|f| AUXILIARIES.contains(&f.as_str())) {
        return QType::YesNo;
    }
    QType::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_types_come_from_the_wording() {
        let open = AnswerForm::Open;
        let t = |q: &str| question_type(q, &open);
        assert_eq!(t("Who founded the Westgate Basin port?"), QType::Who);
        assert_eq!(t("Whose portrait hangs in the hall?"), QType::Who);
        assert_eq!(t("Where was the treaty signed?"), QType::Where);
        assert_eq!(t("In which country is Ostrava?"), QType::Where);
        assert_eq!(t("When did the mill close?"), QType::When);
        assert_eq!(t("In what year did the mill close?"), QType::Year);
        assert_eq!(t("Which year saw the first election?"), QType::Year);
        assert_eq!(t("How many employees does the group have?"), QType::Number);
        assert_eq!(
            t("What percentage of revenue came from leases?"),
            QType::Number
        );
        assert_eq!(t("Did the council ban plastic bags?"), QType::YesNo);
        assert_eq!(t("Is Paris the capital of France?"), QType::YesNo);
        assert_eq!(t("What is the name of the river?"), QType::Other);
        assert_eq!(t("Name the river that floods the basin."), QType::Other);
        // A binary ask is yes/no whatever it says.
        assert_eq!(
            question_type(
                "Who said the moon is cheese?",
                &AnswerForm::Binary {
                    yes: "yes".into(),
                    no: "no".into(),
                }
            ),
            QType::YesNo
        );
        // The year cue wins over a later `when`.
        assert_eq!(t("What year was it when the mill closed?"), QType::Year);
    }
}
