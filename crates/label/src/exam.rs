//! RAGuard's exam (section 3.3): the model judges the claim from one document alone; agreeing
//! with the gold verdict makes the document *supporting*, contradicting it *misleading*, no
//! decision *irrelevant*. Several prompt variants may vote; the same question with no document
//! (the zero-context probe) tells whether the document flipped the model's own answer. The
//! labels stage asks it through `ask`, the one place its calls are made.

use std::collections::BTreeMap;

use noisebench_core::vocab::{Verdict, exam::Input as ExamVerdictInput};
use noisebench_core::{Claim, Document, StageContext};
use noisebench_llm::Llm;
use serde::{Deserialize, Serialize};

use crate::failures::CallFailures;
use crate::pairs::Pair;
use crate::tasks::ExamVerdict;

/// How one exam prompt is put together from a claim and a document.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ExamVariant {
    /// Claim, claim date, document title and text.
    Full,
    /// As `full` without the document title.
    NoTitle,
    /// As `full` without the claim date.
    Undated,
    /// As `full` with only the first `head_words` words of the text.
    Head,
}

impl ExamVariant {
    pub fn as_str(self) -> &'static str {
        match self {
            ExamVariant::Full => "full",
            ExamVariant::NoTitle => "no-title",
            ExamVariant::Undated => "undated",
            ExamVariant::Head => "head",
        }
    }
}

/// `[stages.<id>.config.exam]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ExamConfig {
    /// Run the exam at all.
    pub enabled: bool,
    /// Prompt variants that vote; the plurality wins, a tie at the top is `undecided`.
    pub variants: Vec<ExamVariant>,
    /// Also ask with no document, and record `zero_context_verdict` and `flipped`.
    pub zero_context: bool,
    /// Document text sent to the model is cut to this many characters (at a char boundary).
    pub max_document_chars: usize,
    /// Words kept by the `head` variant.
    pub head_words: usize,
}

impl Default for ExamConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            variants: vec![ExamVariant::Full],
            zero_context: true,
            max_document_chars: 12_000,
            head_words: 200,
        }
    }
}

/// The label words a preset writes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum LabelPreset {
    /// supporting, misleading, irrelevant (RAGuard paper, first version).
    #[default]
    Default,
    /// supporting, misleading, unrelated (the RAGuard release).
    Raguard,
}

impl LabelPreset {
    pub fn irrelevant(self) -> &'static str {
        match self {
            LabelPreset::Default => "irrelevant",
            LabelPreset::Raguard => "unrelated",
        }
    }

    /// A label as this preset writes it, from any accepted spelling (trimmed, any case);
    /// `None` for anything else.
    /// The accepted spellings are the release's ([`noisebench_releases::raguard::label_word`]).
    pub fn normalise(self, label: &str) -> Option<&'static str> {
        noisebench_releases::raguard::label_word(label).map(|word| match word {
            "unrelated" => self.irrelevant(),
            word => word,
        })
    }
}

pub(crate) const SUPPORTING: &str = "supporting";
pub(crate) const MISLEADING: &str = "misleading";

/// The exam rule: matching the gold verdict is supporting, the opposite misleading, undecided
/// irrelevant (or the preset's word for it).
pub(crate) fn label_for(exam: Verdict, gold: Verdict, preset: LabelPreset) -> &'static str {
    match exam {
        Verdict::Undecided => preset.irrelevant(),
        v if v == gold => SUPPORTING,
        _ => MISLEADING,
    }
}

/// The plurality of the votes; a tie at the top (or no vote) is `undecided`.
pub(crate) fn majority_verdict(votes: &[Verdict]) -> Verdict {
    let count = |v: Verdict| votes.iter().filter(|x| **x == v).count();
    let counts = [
        (Verdict::True, count(Verdict::True)),
        (Verdict::False, count(Verdict::False)),
        (Verdict::Undecided, count(Verdict::Undecided)),
    ];
    let top = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let winners: Vec<Verdict> = counts
        .iter()
        .filter(|(_, n)| *n == top && top > 0)
        .map(|(v, _)| *v)
        .collect();
    match winners.as_slice() {
        [one] => *one,
        _ => Verdict::Undecided,
    }
}

/// Whether the document flipped the model's own answer: both verdicts decided and different.
/// An undecided probe or an undecided exam is no flip.
pub fn flipped(zero_context: Verdict, exam: Verdict) -> bool {
    zero_context != Verdict::Undecided && exam != Verdict::Undecided && zero_context != exam
}

/// `text` cut to at most `max` characters, at a char boundary.
pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => text[..i].to_string(),
        None => text.to_string(),
    }
}

/// The exam prompt's input for one variant. `text` is the document text to show (already the
/// title alone for a title-only document).
pub(crate) fn exam_input(
    variant: ExamVariant,
    claim: &Claim,
    document: &Document,
    text: &str,
    config: &ExamConfig,
) -> ExamVerdictInput {
    let text = truncate_chars(text, config.max_document_chars);
    let (title, date, text) = match variant {
        ExamVariant::Full => (document.title.clone(), claim.claim_date.clone(), text),
        ExamVariant::NoTitle => (None, claim.claim_date.clone(), text),
        ExamVariant::Undated => (document.title.clone(), None, text),
        ExamVariant::Head => (
            document.title.clone(),
            claim.claim_date.clone(),
            text.split_whitespace()
                .take(config.head_words)
                .collect::<Vec<_>>()
                .join(" "),
        ),
    };
    ExamVerdictInput {
        claim: claim.text.clone(),
        claim_date: date,
        document_title: title,
        document: Some(text),
    }
}

/// The zero-context probe's input: the claim and no document.
pub(crate) fn zero_context_input(claim: &Claim) -> ExamVerdictInput {
    ExamVerdictInput {
        claim: claim.text.clone(),
        claim_date: claim.claim_date.clone(),
        document_title: None,
        document: None,
    }
}

/// What the exam answered: each pair's votes (by its index among the pairs) and each claim's
/// zero-context verdict.
pub(crate) struct ExamAnswers {
    pub votes: Vec<Vec<(ExamVariant, Verdict)>>,
    pub zero_context: BTreeMap<String, Verdict>,
}

/// Ask the exam, when enabled: one call per pair (but those it skips) and variant, then one
/// zero-context probe per claim. Failed calls go to `failures`.
pub(crate) fn ask(
    llm: &Llm,
    config: &ExamConfig,
    pairs: &[Pair],
    ctx: &StageContext,
    failures: &mut CallFailures,
) -> ExamAnswers {
    let mut answers = ExamAnswers {
        votes: vec![Vec::new(); pairs.len()],
        zero_context: BTreeMap::new(),
    };
    if !config.enabled {
        return answers;
    }
    answers.votes = vote(llm, config, pairs, ctx, failures);
    if config.zero_context {
        answers.zero_context = probe(llm, pairs, &ctx.stage_id, failures);
    }
    answers
}

/// Each pair's votes, one per variant that answered.
fn vote(
    llm: &Llm,
    config: &ExamConfig,
    pairs: &[Pair],
    ctx: &StageContext,
    failures: &mut CallFailures,
) -> Vec<Vec<(ExamVariant, Verdict)>> {
    let mut votes = vec![Vec::new(); pairs.len()];
    let mut keys = Vec::new();
    let mut calls = Vec::new();
    for (i, p) in pairs.iter().enumerate().filter(|(_, p)| !p.skip_exam) {
        for v in &config.variants {
            keys.push((i, *v));
            calls.push(exam_input(*v, p.claim, p.doc, &p.exam_text, config));
        }
    }
    let bar = ctx.progress.bar("exam", Some(calls.len() as u64));
    let answers = llm.run_batch_with_progress::<ExamVerdict>(&ctx.stage_id, calls, bar.as_ref());
    bar.finish();
    for ((i, v), a) in keys.into_iter().zip(answers) {
        let call = format!("exam:{}", v.as_str());
        match a.map(|a| Verdict::in_reply(&a.value)) {
            Ok(Some(verdict)) => votes[i].push((v, verdict)),
            Ok(None) => failures.pair_reason(
                &pairs[i].id,
                &call,
                "llm_unparseable_output".into(),
                "no verdict in a checked reply".into(),
            ),
            Err(e) => failures.pair(&pairs[i].id, &call, &e),
        }
    }
    votes
}

/// The zero-context verdict of each claim of `pairs` whose probe answered.
fn probe(
    llm: &Llm,
    pairs: &[Pair],
    stage: &str,
    failures: &mut CallFailures,
) -> BTreeMap<String, Verdict> {
    let claims: Vec<&Claim> = pairs
        .iter()
        .map(|p| (p.claim.id.as_str(), p.claim))
        .collect::<BTreeMap<&str, &Claim>>()
        .into_values()
        .collect();
    let calls = claims.iter().map(|c| zero_context_input(c)).collect();
    let answers = llm.run_batch::<ExamVerdict>(stage, calls);
    let mut zero = BTreeMap::new();
    for (c, a) in claims.into_iter().zip(answers) {
        match a {
            Ok(a) => {
                if let Some(v) = Verdict::in_reply(&a.value) {
                    zero.insert(c.id.clone(), v);
                }
            }
            Err(e) => failures.claim(&c.id, &e),
        }
    }
    zero
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;

    #[test]
    fn label_rules() {
        let p = LabelPreset::Default;
        assert_eq!(label_for(True, True, p), "supporting");
        assert_eq!(label_for(False, False, p), "supporting");
        assert_eq!(label_for(False, True, p), "misleading");
        assert_eq!(label_for(True, False, p), "misleading");
        assert_eq!(label_for(Undecided, True, p), "irrelevant");
        assert_eq!(
            label_for(Undecided, False, LabelPreset::Raguard),
            "unrelated"
        );
    }

    #[test]
    fn majority_and_ties() {
        assert_eq!(majority_verdict(&[True]), True);
        assert_eq!(majority_verdict(&[True, False, True]), True);
        assert_eq!(majority_verdict(&[True, False]), Undecided);
        assert_eq!(majority_verdict(&[True, False, Undecided]), Undecided);
        assert_eq!(majority_verdict(&[False, False, Undecided, True]), False);
        assert_eq!(majority_verdict(&[]), Undecided);
    }

    #[test]
    fn flips() {
        assert!(flipped(True, False));
        assert!(!flipped(True, True));
        assert!(!flipped(Undecided, False));
        assert!(!flipped(True, Undecided));
    }

    #[test]
    fn labels_normalise_without_trailing_space() {
        let p = LabelPreset::Raguard;
        assert_eq!(p.normalise("Supporting "), Some("supporting"));
        assert_eq!(p.normalise("irrelevant"), Some("unrelated"));
        assert_eq!(
            LabelPreset::Default.normalise(" UNRELATED"),
            Some("irrelevant")
        );
        assert_eq!(p.normalise("maybe"), None);
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("hi", 5), "hi");
    }
}
