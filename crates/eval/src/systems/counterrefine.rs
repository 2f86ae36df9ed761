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

use std::collections::BTreeSet;
use std::sync::LazyLock;

use noisebench_llm::{Llm, LlmError, Task, TaskInfo};
use noisebench_text::stopwords::is_stopword;
use noisebench_text::words::{content_words, normalize, words};
use regex::Regex;
use serde::{Deserialize, Serialize};

use super::SystemsConfigError;
use crate::generate::{
    AnswerForm, AnswerInput, Ask, Generated, Generator, Passage, PassageView, offline_answer,
};

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
    fn is_entity(self) -> bool {
        matches!(self, QType::Who | QType::Where | QType::Other)
    }

    /// Temporal and numeric questions: the answer carries a digit, month or number word.
    fn is_quantity(self) -> bool {
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
/// [`question_type`] of the question; `form` gives a yes/no ask's two words.
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

/// The form fields every CounterRefine prompt shows.
fn form_fields(form: &AnswerForm) -> (String, Option<String>, Option<String>) {
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

fn answer_input(
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

/// A passage of `R1` as the refine prompt shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RefinePassage {
    pub text: String,
    pub source: Option<String>,
    pub background: Option<String>,
    /// Retrieved by the answer-conditioned queries (not in `R0`).
    pub new: bool,
}

/// `counterrefine_refine`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RefineInput {
    pub question: String,
    pub form: String,
    pub yes: Option<String>,
    pub no: Option<String>,
    /// `a0`.
    pub draft: String,
    /// `R1`.
    pub passages: Vec<RefinePassage>,
}

/// The gate's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Decision {
    #[serde(rename = "KEEP", alias = "keep", alias = "Keep")]
    Keep,
    #[serde(rename = "REVISE", alias = "revise", alias = "Revise")]
    Revise,
}

/// `counterrefine_refine`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RefineOutput {
    pub decision: Decision,
    pub answer: String,
    /// One short snippet of the passages that supports the answer.
    pub evidence: Option<String>,
}

/// `counterrefine_refine`: keep the draft or revise it from the wider evidence (3.4).
pub(crate) struct CounterRefineRefine;
impl Task for CounterRefineRefine {
    const NAME: &'static str = "counterrefine_refine";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = RefineInput;
    type Output = RefineOutput;
    /// Not probed by the preflight; the fuzz seed and the wiring tests' input.
    fn example() -> Option<RefineInput> {
        serde_json::from_str(
            r#"{"question":"Is lemon water a cure for cancer?","form":"yes_no","yes":"true","no":"false","draft":"false","passages":[{"text":"No study shows lemon water cures cancer.","source":"who.int","background":null,"new":true}]}"#,
        )
        .ok()
    }
    fn offline(input: &RefineInput) -> RefineOutput {
        offline_refine(input)
    }
}

fn offline_refine(input: &RefineInput) -> RefineOutput {
    let keep = || RefineOutput {
        decision: Decision::Keep,
        answer: input.draft.clone(),
        evidence: None,
    };
    let new: Vec<&RefinePassage> = input.passages.iter().filter(|p| p.new).collect();
    if new.is_empty() {
        return keep();
    }
    let question = content_words(&input.question);
    // The new passages' sentence sharing the most content words with the question (first wins).
    let mut best: Option<(usize, String)> = None;
    for p in &new {
        for sentence in noisebench_text::sentences::sentences(&p.text) {
            let shared = content_words(&sentence).intersection(&question).count();
            if best.as_ref().is_none_or(|(n, _)| shared > *n) {
                best = Some((shared, sentence));
            }
        }
    }
    if input.form == "binary" {
        let view = |p: &RefinePassage| PassageView {
            text: p.text.clone(),
            source: p.source.clone(),
            background: p.background.clone(),
        };
        let vote = offline_answer(&answer_input(
            &input.question,
            &input.form,
            &input.yes,
            &input.no,
            input.passages.iter().map(view).collect(),
        ))
        .answer;
        if normalize(&vote) == normalize(&input.draft) {
            return keep();
        }
        return RefineOutput {
            decision: Decision::Revise,
            answer: vote,
            evidence: best.map(|(_, s)| s),
        };
    }
    let draft_shared = content_words(&input.draft).intersection(&question).count();
    match best {
        Some((n, sentence)) if n >= 2 && n > draft_shared => RefineOutput {
            decision: Decision::Revise,
            answer: shortest_entity_span(&sentence, &input.question)
                .unwrap_or_else(|| sentence.clone()),
            evidence: Some(sentence),
        },
        _ => keep(),
    }
}

/// The shortest run of capitalised or numeric tokens of `sentence` whose words are neither in
/// the question nor stopwords (the first of equals), punctuation trimmed. The sentence's first
/// word counts only when the next one is capitalised too (`Ostrava Sawmill`, not `Since 2001`).
fn shortest_entity_span(sentence: &str, question: &str) -> Option<String> {
    let asked: BTreeSet<String> = words(question).into_iter().collect();
    let mut runs: Vec<Vec<&str>> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    let capitalised = |t: &str| t.chars().next().is_some_and(char::is_uppercase);
    for (i, token) in tokens.iter().enumerate() {
        let t = token.trim_matches(|c: char| !c.is_alphanumeric());
        let lower = t.to_lowercase();
        // Every sentence opens with a capital: its first word counts only inside a longer name.
        let opening_word = i == 0 && !tokens.get(1).is_some_and(|n| capitalised(n));
        let entity_like = t
            .chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
            && !opening_word
            && !asked.contains(&lower)
            && !is_stopword(&lower);
        if entity_like {
            run.push(t);
        }
        // A token with trailing punctuation ends the run (`Paris, France`: two runs).
        let ends = !entity_like || token.ends_with(|c: char| !c.is_alphanumeric());
        if ends && !run.is_empty() {
            runs.push(std::mem::take(&mut run));
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs.into_iter()
        .min_by_key(|r| r.len())
        .map(|r| r.join(" "))
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

fn view(ask: &Ask, p: &Passage) -> PassageView {
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

fn draft_input(ask: &Ask, passages: &[Passage]) -> DraftInput {
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
fn default_answer(ask: &Ask, kind: QType) -> String {
    match (&ask.form, kind) {
        (AnswerForm::Binary { no, .. }, _) => no.clone(),
        (AnswerForm::Open, QType::YesNo) => "no".into(),
        _ => "unknown".into(),
    }
}

/// The answer-conditioned queries, `Q(q, a0)`, in order and without repeats.
pub(crate) fn refine_queries(question: &str, draft: &str, kind: QType) -> Vec<String> {
    let quoted = format!("\"{}\"", draft.trim());
    let mut queries = vec![question.to_string(), format!("{question} {quoted}")];
    if kind.queries_answer_alone() {
        queries.push(quoted);
    }
    let mut seen = BTreeSet::new();
    queries.retain(|q| seen.insert(q.clone()));
    queries
}

impl CounterRefine {
    /// `R1`: `R0`, then what the ask's retriever returns for each query, deduplicated by id.
    fn widen(&self, ask: &Ask, s: &Progress) -> Vec<Passage> {
        let mut r1 = s.r0.clone();
        let Some(retriever) = &ask.retriever else {
            return r1;
        };
        let mut seen: BTreeSet<String> = r1.iter().map(|p| p.id.clone()).collect();
        for q in refine_queries(&ask.question, &s.draft, s.kind) {
            for p in retriever.retrieve(&q, self.config.k_refine) {
                if seen.insert(p.id.clone()) {
                    r1.push(p);
                }
            }
        }
        r1
    }
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
        let r0s: Vec<Vec<Passage>> = asks
            .iter()
            .map(|a| a.passages.iter().take(k_base).cloned().collect())
            .collect();
        let inputs = asks
            .iter()
            .zip(&r0s)
            .map(|(a, r0)| draft_input(a, r0))
            .collect();
        let mut states: Vec<Result<Progress, LlmError>> = llm
            .run_batch::<CounterRefineDraft>(stage, inputs)
            .into_iter()
            .zip(asks.iter().zip(r0s))
            .map(|(r, (ask, r0))| {
                r.map(|a| Progress {
                    r0,
                    kind: question_type(&ask.question, &ask.form),
                    draft: a.value.answer.trim().to_string(),
                    r1: Vec::new(),
                    steps: vec!["draft".into()],
                    calls: 1,
                })
            })
            .collect();

        // Closed-book fallback for drafts that did not answer from passages they had.
        let fallback: Vec<usize> = (0..asks.len())
            .filter(|&i| {
                states[i]
                    .as_ref()
                    .is_ok_and(|s| is_non_answer(&s.draft) && !s.r0.is_empty())
            })
            .collect();
        let inputs = fallback
            .iter()
            .map(|&i| draft_input(&asks[i], &[]))
            .collect();
        let results = llm.run_batch::<CounterRefineDraft>(stage, inputs);
        for (i, r) in fallback.into_iter().zip(results) {
            match r {
                Ok(a) => {
                    if let Ok(s) = &mut states[i] {
                        s.draft = a.value.answer.trim().to_string();
                        s.steps.push("draft:closed_book".into());
                        s.calls += 1;
                    }
                }
                Err(e) => states[i] = Err(e),
            }
        }
        for (ask, state) in asks.iter().zip(states.iter_mut()) {
            if let Ok(s) = state {
                if is_non_answer(&s.draft) {
                    s.draft = default_answer(ask, s.kind);
                    s.steps.push("draft:default".into());
                }
                s.r1 = self.widen(ask, s);
                s.steps
                    .push(format!("retrieve:{}", s.r1.len() - s.r0.len()));
            }
        }

        let alive: Vec<usize> = (0..asks.len()).filter(|&i| states[i].is_ok()).collect();
        let inputs = alive
            .iter()
            .filter_map(|&i| states[i].as_ref().ok().map(|s| (i, s)))
            .map(|(i, s)| {
                let ask = &asks[i];
                let (form, yes, no) = form_fields(&ask.form);
                let in_r0: BTreeSet<&str> = s.r0.iter().map(|p| p.id.as_str()).collect();
                RefineInput {
                    question: ask.question.clone(),
                    form,
                    yes,
                    no,
                    draft: s.draft.clone(),
                    passages: s
                        .r1
                        .iter()
                        .map(|p| {
                            let v = view(ask, p);
                            RefinePassage {
                                text: v.text,
                                source: v.source,
                                background: v.background,
                                new: !in_r0.contains(p.id.as_str()),
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        let mut refined = alive
            .iter()
            .copied()
            .zip(llm.run_batch::<CounterRefineRefine>(stage, inputs))
            .collect::<std::collections::BTreeMap<_, _>>();
        states
            .into_iter()
            .enumerate()
            .map(|(i, state)| {
                let mut s = state?;
                // Invariant: every ask alive after the drafts was in the refine batch.
                let a = refined
                    .remove(&i)
                    .unwrap_or_else(|| Err(LlmError::Internal("no refine call".into())))?;
                let answer = match a.value.decision {
                    Decision::Keep => {
                        s.steps.push("refine:keep".into());
                        s.draft.clone()
                    }
                    Decision::Revise => {
                        s.steps.push("refine:revise".into());
                        match validate_revision(
                            s.kind,
                            &asks[i].form,
                            &s.draft,
                            &a.value.answer,
                            a.value.evidence.as_deref(),
                            &self.config,
                        ) {
                            Ok(canonical) => {
                                s.steps.push("revision_accepted".into());
                                canonical
                            }
                            Err(why) => {
                                s.steps.push(format!("revision_rejected:{}", why.as_str()));
                                s.draft.clone()
                            }
                        }
                    }
                };
                Ok(Generated {
                    raw: serde_json::to_string(&a.value).unwrap_or_default(),
                    answer,
                    prompt_hash: a.request_hash,
                    calls: s.calls + 1,
                    steps: s.steps,
                })
            })
            .collect()
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
            question_type("Who said the moon is cheese?", &yes_no()),
            QType::YesNo
        );
        // The year cue wins over a later `when`.
        assert_eq!(t("What year was it when the mill closed?"), QType::Year);
    }

    #[test]
    fn the_answer_conditioned_queries() {
        assert_eq!(
            refine_queries("Who leases the basin?", "Ostrava Group", QType::Who),
            [
                "Who leases the basin?",
                "Who leases the basin? \"Ostrava Group\"",
                "\"Ostrava Group\""
            ]
        );
        assert_eq!(
            refine_queries("What is the basin's name?", "Westgate", QType::Other),
            [
                "What is the basin's name?",
                "What is the basin's name? \"Westgate\""
            ]
        );
    }

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

    #[test]
    fn the_offline_refiner_revises_only_from_new_evidence() {
        let input = |passages: Vec<RefinePassage>| RefineInput {
            question: "Which company leases Westgate Basin?".into(),
            form: "open".into(),
            yes: None,
            no: None,
            draft: "I don't know: the passages do not say.".into(),
            passages,
        };
        let p = |text: &str, new: bool| RefinePassage {
            text: text.into(),
            source: None,
            background: None,
            new,
        };
        let fact = "Rain fell. Since 2001, Ostrava Sawmill Group leases Westgate Basin.";
        let out = offline_refine(&input(vec![p(fact, false)]));
        assert_eq!(out.decision, Decision::Keep);
        let out = offline_refine(&input(vec![p("Nothing here.", false), p(fact, true)]));
        assert_eq!(out.decision, Decision::Revise);
        assert_eq!(out.answer, "2001");
        assert_eq!(
            out.evidence.as_deref(),
            Some("Since 2001, Ostrava Sawmill Group leases Westgate Basin.")
        );
        assert_eq!(
            shortest_entity_span(
                "Ostrava Sawmill Group leases Westgate Basin.",
                "Which company leases Westgate Basin?"
            )
            .as_deref(),
            Some("Ostrava Sawmill Group")
        );
    }

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
