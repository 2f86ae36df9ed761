//! The validator (section 3.5): whether a revision may replace the draft, by the rules of the
//! module's table in order, and the accepted revision's canonical form for its question type.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use noisebench_text::stopwords::is_stopword;
use noisebench_text::words::{normalize, words};
use regex::Regex;

use super::CounterRefineConfig;
use super::draft::is_non_answer;
use super::qtype::QType;
use crate::generate::AnswerForm;

/// Why a revision was not accepted; its [`Rejection::as_str`] goes into the steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, thiserror::Error)]
pub enum Rejection {
    #[error("the revision is empty")]
    Empty,
    #[error("the revision does not answer")]
    NonResponsive,
    #[error("the revision is the draft")]
    SameAsDraft,
    #[error("the revision is not one of the two allowed words")]
    NotYesNo,
    #[error("the revision opens with a descriptor, not a name")]
    Descriptor,
    #[error("the revision reads as a clause")]
    ClauseLike,
    #[error("the revision is too long for an entity")]
    TooLong,
    #[error("the revision has no digit, month or number word")]
    NoMarker,
    #[error("the revision cites no evidence")]
    NoEvidence,
    #[error("the revision's words are not in its evidence")]
    WeakOverlap,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::Empty => "empty",
            Rejection::NonResponsive => "non_responsive",
            Rejection::SameAsDraft => "same_as_draft",
            Rejection::NotYesNo => "not_yes_no",
            Rejection::Descriptor => "descriptor",
            Rejection::ClauseLike => "clause_like",
            Rejection::TooLong => "too_long",
            Rejection::NoMarker => "no_marker",
            Rejection::NoEvidence => "no_evidence",
            Rejection::WeakOverlap => "weak_overlap",
        }
    }
}

/// Openings that describe rather than name.
const DESCRIPTOR_OPENINGS: &[&str] = &[
    "it is",
    "it was",
    "it s",
    "this is",
    "that is",
    "he is",
    "he was",
    "she is",
    "she was",
    "they are",
    "they were",
    "the answer is",
    "answer is",
    "one of",
    "someone",
    "somebody",
    "something",
];
/// Relative words that make `the <noun> who` / `a <noun> that` a descriptor.
const RELATIVES: &[&str] = &["who", "whom", "whose", "that", "which", "where", "when"];
/// Lowercase words that make a phrase a clause: finite auxiliaries and relative pronouns.
/// Capitalised ones are left alone (`Will Smith`, `May Day`).
const CLAUSE_CUES: &[&str] = &[
    "is", "are", "was", "were", "am", "be", "been", "being", "has", "have", "had", "does", "did",
    "do", "will", "would", "can", "could", "should", "shall", "may", "might", "must", "who",
    "whom", "whose", "which", "that", "because", "although",
];
const LEADING_PREPOSITIONS: &[&str] = &[
    "in", "at", "on", "from", "near", "to", "inside", "within", "during", "around",
];

/// The ask's two words (`yes`/`no` for an open yes/no question).
fn yes_no_words(form: &AnswerForm) -> (String, String) {
    match form {
        AnswerForm::Binary { yes, no } => (yes.clone(), no.clone()),
        AnswerForm::Open => ("yes".into(), "no".into()),
    }
}

/// The share of `answer`'s words (stopwords aside, unless it has only stopwords) found among
/// `evidence`'s words. Not [`noisebench_text::words::share_found`]: that ignores words under
/// three characters, which would leave `42` or `Li Na` with nothing to find.
fn answer_overlap(answer: &str, evidence: &str) -> f64 {
    let all = words(answer);
    let kept: Vec<&String> = all.iter().filter(|w| !is_stopword(w)).collect();
    let wanted: BTreeSet<&String> = if kept.is_empty() {
        all.iter().collect()
    } else {
        kept.into_iter().collect()
    };
    if wanted.is_empty() {
        return 0.0;
    }
    let have: BTreeSet<String> = words(evidence).into_iter().collect();
    wanted.iter().filter(|w| have.contains(**w)).count() as f64 / wanted.len() as f64
}

/// CounterRefine's validator (section 3.5): the canonical form of `revised` if the revision may
/// replace `draft`, else the first rule it breaks (see the module's table). `kind` is
/// [`question_type`](super::qtype::question_type) of the question; `form` gives a yes/no ask's
/// two words.
pub(crate) fn validate_revision(
    kind: QType,
    form: &AnswerForm,
    draft: &str,
    revised: &str,
    evidence: Option<&str>,
    config: &CounterRefineConfig,
) -> Result<String, Rejection> {
    let n = normalize(revised);
    if n.is_empty() {
        return Err(Rejection::Empty);
    }
    if is_non_answer(revised) {
        return Err(Rejection::NonResponsive);
    }
    if n == normalize(draft) {
        return Err(Rejection::SameAsDraft);
    }
    let w = words(revised);
    if kind == QType::YesNo {
        let (yes, no) = yes_no_words(form);
        if n != normalize(&yes) && n != normalize(&no) {
            return Err(Rejection::NotYesNo);
        }
    }
    if kind.is_entity() {
        let descriptor = DESCRIPTOR_OPENINGS
            .iter()
            .any(|d| n == *d || n.starts_with(&format!("{d} ")))
            || (w.len() >= 3
                && matches!(w[0].as_str(), "the" | "a" | "an")
                && RELATIVES.contains(&w[2].as_str()));
        if descriptor {
            return Err(Rejection::Descriptor);
        }
        let clause = revised
            .split(|c: char| !c.is_alphanumeric())
            .any(|t| CLAUSE_CUES.contains(&t));
        if clause {
            return Err(Rejection::ClauseLike);
        }
        if revised.split_whitespace().count() > config.max_answer_words {
            return Err(Rejection::TooLong);
        }
    }
    if kind.is_quantity() {
        let marked = revised.chars().any(|c| c.is_ascii_digit())
            || w.iter()
                .any(|x| noisebench_text::is_month(x) || noisebench_text::is_number_word(x));
        if !marked {
            return Err(Rejection::NoMarker);
        }
    }
    let evidence = evidence.map(str::trim).unwrap_or("");
    if evidence.is_empty() || normalize(evidence) == "none" {
        return Err(Rejection::NoEvidence);
    }
    // A yes/no word is a verdict on the evidence, not a span of it.
    if kind != QType::YesNo && answer_overlap(revised, evidence) < config.min_overlap {
        return Err(Rejection::WeakOverlap);
    }
    Ok(canonicalize(kind, form, revised))
}

static PARENTHETICAL: LazyLock<Regex> = LazyLock::new(|| {
    // Invariant: a constant pattern.
    Regex::new(r"\s*\([^()]*\)").unwrap_or_else(|e| unreachable!("{e}"))
});
static YEAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b\d{4}\b").unwrap_or_else(|e| unreachable!("{e}")));
static NUMBER_GAP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d)\s*([,.])\s*(\d)").unwrap_or_else(|e| unreachable!("{e}")));

/// An accepted revision's canonical form for its question type (the module's rules).
fn canonicalize(kind: QType, form: &AnswerForm, revised: &str) -> String {
    let mut s = revised
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '`')
        .trim_end_matches(['.', ',', ';', ':'])
        .trim()
        .to_string();
    match kind {
        QType::YesNo => {
            let (yes, no) = yes_no_words(form);
            s = if normalize(&s) == normalize(&yes) {
                yes
            } else {
                no
            };
        }
        QType::Year => {
            if let Some(m) = YEAR.find(&s) {
                s = m.as_str().to_string();
            }
        }
        QType::Number => {
            // Twice: a match consumes the digit after the gap, so `1 , 0 , 0` needs a second pass.
            for _ in 0..2 {
                s = NUMBER_GAP.replace_all(&s, "$1$2$3").into_owned();
            }
        }
        QType::When => s = strip_preposition(&s),
        QType::Where => {
            s = PARENTHETICAL
                .replace_all(&strip_preposition(&s), "")
                .into_owned()
        }
        QType::Who | QType::Other => s = PARENTHETICAL.replace_all(&s, "").into_owned(),
    }
    s.trim().to_string()
}

fn strip_preposition(s: &str) -> String {
    match s.split_once(' ') {
        Some((first, rest))
            if LEADING_PREPOSITIONS.contains(&first.to_lowercase().as_str())
                && !rest.trim().is_empty() =>
        {
            rest.trim().to_string()
        }
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yes_no() -> AnswerForm {
        AnswerForm::Binary {
            yes: "yes".into(),
            no: "no".into(),
        }
    }

    fn check(
        kind: QType,
        form: &AnswerForm,
        revised: &str,
        evidence: Option<&str>,
    ) -> Result<String, Rejection> {
        validate_revision(
            kind,
            form,
            "Marie Curie",
            revised,
            evidence,
            &CounterRefineConfig::default(),
        )
    }

    #[test]
    fn each_validation_rule_rejects() {
        let open = AnswerForm::Open;
        let ev = Some("The prize went to Annick Bricaud in 1999 for 1,000 samples.");
        assert_eq!(check(QType::Who, &open, " ; ", ev), Err(Rejection::Empty));
        assert_eq!(
            check(QType::Who, &open, "I don't know", ev),
            Err(Rejection::NonResponsive)
        );
        assert_eq!(
            check(QType::Who, &open, "marie curie.", ev),
            Err(Rejection::SameAsDraft)
        );
        assert_eq!(
            check(QType::YesNo, &yes_no(), "probably yes", ev),
            Err(Rejection::NotYesNo)
        );
        let true_false = AnswerForm::Binary {
            yes: "true".into(),
            no: "false".into(),
        };
        assert_eq!(
            check(QType::YesNo, &true_false, "yes", ev),
            Err(Rejection::NotYesNo)
        );
        assert_eq!(
            check(QType::Who, &open, "the person who won the prize", ev),
            Err(Rejection::Descriptor)
        );
        assert_eq!(
            check(QType::Other, &open, "a company that sells fish", ev),
            Err(Rejection::Descriptor)
        );
        assert_eq!(
            check(QType::Who, &open, "It is Annick Bricaud", ev),
            Err(Rejection::Descriptor)
        );
        assert_eq!(
            check(QType::Who, &open, "Annick Bricaud was awarded", ev),
            Err(Rejection::ClauseLike)
        );
        assert_eq!(
            check(
                QType::Where,
                &open,
                "Annick Bricaud Prize Hall Of The Old Naval Academy Building",
                ev
            ),
            Err(Rejection::TooLong)
        );
        assert_eq!(
            check(QType::Year, &open, "the late nineties", ev),
            Err(Rejection::NoMarker)
        );
        assert_eq!(
            check(QType::Number, &open, "many", ev),
            Err(Rejection::NoMarker)
        );
        assert_eq!(
            check(QType::Who, &open, "Annick Bricaud", None),
            Err(Rejection::NoEvidence)
        );
        assert_eq!(
            check(QType::Who, &open, "Annick Bricaud", Some("NONE")),
            Err(Rejection::NoEvidence)
        );
        assert_eq!(
            check(QType::Who, &open, "Jean Dupont", ev),
            Err(Rejection::WeakOverlap)
        );
    }

    #[test]
    fn accepted_revisions_are_canonical() {
        let open = AnswerForm::Open;
        let ev = Some(
            "Annick Bricaud (oceanographer) won in Paris in 1999; the survey counted 1 , 000 \
             samples on 5 May 1999.",
        );
        assert_eq!(
            check(QType::Who, &open, "Annick Bricaud (oceanographer)", ev).as_deref(),
            Ok("Annick Bricaud")
        );
        assert_eq!(
            check(QType::Where, &open, "in Paris", ev).as_deref(),
            Ok("Paris")
        );
        assert_eq!(
            check(QType::Year, &open, "in 1999.", ev).as_deref(),
            Ok("1999")
        );
        assert_eq!(
            check(QType::Number, &open, "1 , 000 samples", ev).as_deref(),
            Ok("1,000 samples")
        );
        assert_eq!(
            check(QType::When, &open, "on 5 May 1999", ev).as_deref(),
            Ok("5 May 1999")
        );
        // Yes/no needs no overlap and takes the ask's own word.
        let true_false = AnswerForm::Binary {
            yes: "True".into(),
            no: "False".into(),
        };
        assert_eq!(
            check(
                QType::YesNo,
                &true_false,
                "true.",
                Some("Records confirm it.")
            )
            .as_deref(),
            Ok("True")
        );
        // A capitalised auxiliary is part of a name, not a clause.
        assert_eq!(
            check(QType::Who, &open, "Will Smith", Some("Will Smith starred.")).as_deref(),
            Ok("Will Smith")
        );
    }
}
