//! Named tasks: each has an input (the prompt template's variables), a typed answer, checks
//! beyond the JSON shape, and an offline rule.
//!
//! A stage calls a task through [`crate::Llm::run`] / [`crate::Llm::run_batch`] with the task's
//! marker type, e.g. `llm.run_batch::<ExamVerdict>("labels", inputs)`.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use crate::offline;

/// Every task's name, as written in prompt file names, config and the call log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaskName {
    Keywords,
    ClaimToQuestion,
    ExamVerdict,
    StanceUrl,
    StanceText,
    StanceReasoned,
    Credibility,
    Triplets,
    QaSingle,
    QaMulti,
    QaJudge,
    QueryGrammar,
    QueryIrrelevant,
    BackTranslate,
    AnswerJudge,
}

impl TaskName {
    pub const ALL: &'static [TaskName] = &[
        TaskName::Keywords,
        TaskName::ClaimToQuestion,
        TaskName::ExamVerdict,
        TaskName::StanceUrl,
        TaskName::StanceText,
        TaskName::StanceReasoned,
        TaskName::Credibility,
        TaskName::Triplets,
        TaskName::QaSingle,
        TaskName::QaMulti,
        TaskName::QaJudge,
        TaskName::QueryGrammar,
        TaskName::QueryIrrelevant,
        TaskName::BackTranslate,
        TaskName::AnswerJudge,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskName::Keywords => "keywords",
            TaskName::ClaimToQuestion => "claim_to_question",
            TaskName::ExamVerdict => "exam_verdict",
            TaskName::StanceUrl => "stance_url",
            TaskName::StanceText => "stance_text",
            TaskName::StanceReasoned => "stance_reasoned",
            TaskName::Credibility => "credibility",
            TaskName::Triplets => "triplets",
            TaskName::QaSingle => "qa_single",
            TaskName::QaMulti => "qa_multi",
            TaskName::QaJudge => "qa_judge",
            TaskName::QueryGrammar => "query_grammar",
            TaskName::QueryIrrelevant => "query_irrelevant",
            TaskName::BackTranslate => "back_translate",
            TaskName::AnswerJudge => "answer_judge",
        }
    }

    pub fn parse(name: &str) -> Option<TaskName> {
        TaskName::ALL.iter().copied().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for TaskName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task: its name, input, typed answer, checks and offline rule.
pub trait Task: Send + Sync + 'static {
    const NAME: TaskName;
    /// The prompt template's variables.
    type Input: Serialize + Clone + Send + Sync + 'static;
    /// The answer, parsed strictly from the model's JSON.
    type Output: Serialize + DeserializeOwned + Clone + Send + Sync + 'static;

    /// Checks beyond the JSON shape (empty strings, score ranges). An error is a parse error:
    /// it triggers a re-ask, then fails the item.
    fn check(_input: &Self::Input, _output: &Self::Output) -> Result<(), String> {
        Ok(())
    }

    /// The offline backend's deterministic answer.
    fn offline(input: &Self::Input) -> Self::Output;
}

/// Parse a label case-insensitively, ignoring surrounding space, punctuation, `-`/`_`/space
/// differences (a reasoned answer "Final answer: Support." parses; "Supported " does not leak).
fn norm_label(s: &str) -> String {
    s.trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
        .replace(['_', '-'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

macro_rules! label_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $text:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }
        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
            pub fn parse(s: &str) -> Option<Self> {
                let n = norm_label(s);
                $(if n == norm_label($text) $(|| n == norm_label($alias))* { return Some($name::$variant); })+
                None
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                $name::parse(&s).ok_or_else(|| serde::de::Error::custom(format!(
                    "`{s}` is not one of: {}", [$($text),+].join(", "))))
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

label_enum!(
    /// RAGuard's exam answer: the claim judged from one document alone.
    Verdict { True = "true" | "yes", False = "false" | "no", Undecided = "undecided" | "unknown" | "irrelevant" }
);
label_enum!(
    /// CONF-FACT's stance vote.
    Stance { Support = "support" | "supports" | "supported", Reject = "reject" | "rejects" | "refute" | "refutes" | "refuted", NotEnoughEvidence = "not enough evidence" | "nei" | "neutral" | "inconclusive" }
);
label_enum!(
    /// Source credibility level.
    CredibilityLevel { High = "high", Medium = "medium", Low = "low" }
);
label_enum!(
    /// Source type (CONF-FACT Appendix G).
    SourceType { MainstreamNews = "mainstream news", Government = "government", NonProfit = "non-profit" | "nonprofit", Academic = "academic", SocialMedia = "social media", Other = "other" }
);
label_enum!(
    /// The multi-hop pattern a `qa_multi` question is built on.
    Pattern { Chain = "chain" | "chained", Star = "star", InvertedStar = "inverted star" | "inverted_star" }
);

fn non_empty(what: &str, s: &str) -> Result<(), String> {
    if s.trim().is_empty() {
        Err(format!("`{what}` is empty"))
    } else {
        Ok(())
    }
}

fn score_ok(what: &str, s: u8) -> Result<(), String> {
    if (1..=5).contains(&s) {
        Ok(())
    } else {
        Err(format!("`{what}` must be 1..=5, got {s}"))
    }
}

// ---------------------------------------------------------------------------------------------
// Claims track.

/// `keywords`: search keywords for a claim (RAGuard 3.2).
pub struct Keywords;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeywordsInput {
    pub claim: String,
    /// At most this many keywords or keyphrases.
    pub max_keywords: usize,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeywordsOutput {
    pub keywords: Vec<String>,
}
impl Task for Keywords {
    const NAME: TaskName = TaskName::Keywords;
    type Input = KeywordsInput;
    type Output = KeywordsOutput;
    fn check(input: &KeywordsInput, o: &KeywordsOutput) -> Result<(), String> {
        if o.keywords.iter().all(|k| k.trim().is_empty()) {
            return Err("`keywords` holds no keyword".into());
        }
        if o.keywords.len() > input.max_keywords.max(1) * 2 {
            return Err(format!(
                "`keywords` has {} items, asked for at most {}",
                o.keywords.len(),
                input.max_keywords
            ));
        }
        Ok(())
    }
    fn offline(input: &KeywordsInput) -> KeywordsOutput {
        offline::keywords(input)
    }
}

/// `claim_to_question`: a yes/no question asking whether the claim holds (CONF-FACT 3.2).
pub struct ClaimToQuestion;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClaimToQuestionInput {
    pub claim: String,
    pub claim_date: Option<String>,
    pub speaker: Option<String>,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimToQuestionOutput {
    pub question: String,
}
impl Task for ClaimToQuestion {
    const NAME: TaskName = TaskName::ClaimToQuestion;
    type Input = ClaimToQuestionInput;
    type Output = ClaimToQuestionOutput;
    fn check(_: &ClaimToQuestionInput, o: &ClaimToQuestionOutput) -> Result<(), String> {
        non_empty("question", &o.question)
    }
    fn offline(input: &ClaimToQuestionInput) -> ClaimToQuestionOutput {
        offline::claim_to_question(input)
    }
}

/// `exam_verdict`: is the claim true or false judged from this document alone (RAGuard 3.3)?
/// With `document = None` it is the zero-context verdict.
pub struct ExamVerdict;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExamVerdictInput {
    pub claim: String,
    pub claim_date: Option<String>,
    pub document_title: Option<String>,
    pub document: Option<String>,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExamVerdictOutput {
    pub verdict: Verdict,
}
impl Task for ExamVerdict {
    const NAME: TaskName = TaskName::ExamVerdict;
    type Input = ExamVerdictInput;
    type Output = ExamVerdictOutput;
    fn offline(input: &ExamVerdictInput) -> ExamVerdictOutput {
        offline::exam_verdict(input)
    }
}

/// `stance_url`: stance of a document judged from its URL only (CONF-FACT Appendix A, B).
pub struct StanceUrl;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StanceUrlInput {
    pub claim: String,
    pub claim_date: Option<String>,
    pub url: String,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StanceOutput {
    pub stance: Stance,
}
impl Task for StanceUrl {
    const NAME: TaskName = TaskName::StanceUrl;
    type Input = StanceUrlInput;
    type Output = StanceOutput;
    fn offline(input: &StanceUrlInput) -> StanceOutput {
        offline::stance_url(input)
    }
}

/// Input of `stance_text` and `stance_reasoned`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StanceTextInput {
    pub claim: String,
    pub claim_date: Option<String>,
    pub text: String,
}

/// `stance_text`: stance judged from the page text (CONF-FACT Appendix A, C).
pub struct StanceText;
impl Task for StanceText {
    const NAME: TaskName = TaskName::StanceText;
    type Input = StanceTextInput;
    type Output = StanceOutput;
    fn offline(input: &StanceTextInput) -> StanceOutput {
        StanceOutput {
            stance: offline::stance_text(input).0,
        }
    }
}

/// `stance_reasoned`: reasoning first, then the stance (CONF-FACT Appendix A, D).
pub struct StanceReasoned;
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StanceReasonedOutput {
    pub reasoning: String,
    pub stance: Stance,
}
impl Task for StanceReasoned {
    const NAME: TaskName = TaskName::StanceReasoned;
    type Input = StanceTextInput;
    type Output = StanceReasonedOutput;
    fn offline(input: &StanceTextInput) -> StanceReasonedOutput {
        let (stance, reasoning) = offline::stance_text(input);
        StanceReasonedOutput { reasoning, stance }
    }
}

/// `credibility`: a source's credibility and type when the user's domain table has no entry
/// (CONF-FACT 4.3, Appendix G).
pub struct Credibility;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CredibilityInput {
    pub domain: String,
    pub description: Option<String>,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CredibilityOutput {
    pub credibility: CredibilityLevel,
    pub source_type: SourceType,
}
impl Task for Credibility {
    const NAME: TaskName = TaskName::Credibility;
    type Input = CredibilityInput;
    type Output = CredibilityOutput;
    fn offline(input: &CredibilityInput) -> CredibilityOutput {
        offline::credibility(input)
    }
}

// ---------------------------------------------------------------------------------------------
// Report track.

/// One chunk given to `triplets`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChunkText {
    pub chunk_id: String,
    pub text: String,
}

/// `triplets`: (entity_1, relation, entity_2) facts from a window of consecutive chunks, each with
/// its chunk id and the exact source sentence (RARE 3.2, Appendix F).
pub struct Triplets;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TripletsInput {
    pub domain: String,
    pub chunks: Vec<ChunkText>,
    /// Aim for about this many triplets per window.
    pub target: usize,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedTriplet {
    pub entity_1: String,
    pub relation: String,
    pub entity_2: String,
    pub answer_chunk_id: String,
    pub source_sentence: String,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TripletsOutput {
    pub triplets: Vec<ExtractedTriplet>,
}
impl Task for Triplets {
    const NAME: TaskName = TaskName::Triplets;
    type Input = TripletsInput;
    type Output = TripletsOutput;
    // Grounding (is the sentence in the chunk?) is the kg stage's per-triplet drop, not a reason
    // to reject the whole answer.
    fn offline(input: &TripletsInput) -> TripletsOutput {
        offline::triplets(input)
    }
}

/// A triplet as given to question generation and judging.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TripletText {
    pub entity_1: String,
    pub relation: String,
    pub entity_2: String,
    pub chunk_id: String,
    pub source_sentence: String,
}

/// A question and its answer. Both empty means the model declined (too vague, answerable from
/// one chunk): the stage drops the item with its own reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QaOutput {
    pub question: String,
    pub answer: String,
}

fn qa_check(o: &QaOutput) -> Result<(), String> {
    match (o.question.trim().is_empty(), o.answer.trim().is_empty()) {
        (true, false) => Err("`question` is empty but `answer` is not".into()),
        (false, true) => Err("`answer` is empty but `question` is not".into()),
        _ => Ok(()),
    }
}

/// `qa_single`: a single-hop question answered by one triplet (RARE 3.4, Appendix F).
pub struct QaSingle;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QaSingleInput {
    pub triplet: TripletText,
    pub chunk: String,
    pub metadata: std::collections::BTreeMap<String, String>,
}
impl Task for QaSingle {
    const NAME: TaskName = TaskName::QaSingle;
    type Input = QaSingleInput;
    type Output = QaOutput;
    fn check(_: &QaSingleInput, o: &QaOutput) -> Result<(), String> {
        qa_check(o)
    }
    fn offline(input: &QaSingleInput) -> QaOutput {
        offline::qa_single(input)
    }
}

/// `qa_multi`: a multi-hop question over two linked triplets from different chunks, naming the
/// pivot only indirectly (RARE 3.3-3.4, Appendix F).
pub struct QaMulti;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QaMultiInput {
    pub pattern: Pattern,
    /// The triplets in pattern order (chain: t1.entity_2 == t2.entity_1; star: same entity_1;
    /// inverted star: same entity_2).
    pub triplets: Vec<TripletText>,
    /// The chunks the triplets come from, in the same order.
    pub chunks: Vec<String>,
}
impl Task for QaMulti {
    const NAME: TaskName = TaskName::QaMulti;
    type Input = QaMultiInput;
    type Output = QaOutput;
    fn check(_: &QaMultiInput, o: &QaOutput) -> Result<(), String> {
        qa_check(o)
    }
    fn offline(input: &QaMultiInput) -> QaOutput {
        offline::qa_multi(input)
    }
}

/// `qa_judge`: scores 1-5 for a question-answer pair (RARE 3.4, Appendix F); `reasonableness`
/// only for multi-hop pairs.
pub struct QaJudge;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QaJudgeInput {
    pub question: String,
    pub answer: String,
    pub chunks: Vec<String>,
    pub source_sentences: Vec<String>,
    pub multi_hop: bool,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QaJudgeOutput {
    pub clarity: u8,
    pub correctness: u8,
    #[serde(default)]
    pub reasonableness: Option<u8>,
}
impl Task for QaJudge {
    const NAME: TaskName = TaskName::QaJudge;
    type Input = QaJudgeInput;
    type Output = QaJudgeOutput;
    fn check(input: &QaJudgeInput, o: &QaJudgeOutput) -> Result<(), String> {
        score_ok("clarity", o.clarity)?;
        score_ok("correctness", o.correctness)?;
        match (input.multi_hop, o.reasonableness) {
            (true, None) => Err("`reasonableness` is required for a multi-hop pair".into()),
            (true, Some(r)) => score_ok("reasonableness", r),
            (false, _) => Ok(()),
        }
    }
    fn offline(input: &QaJudgeInput) -> QaJudgeOutput {
        offline::qa_judge(input)
    }
}

/// Input of the query rewrites.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RewriteInput {
    pub query: String,
    /// Candidates wanted (RARE C.1: 3).
    pub candidates: usize,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewriteOutput {
    pub rewrites: Vec<String>,
}
fn rewrites_check(input: &RewriteInput, o: &RewriteOutput) -> Result<(), String> {
    if o.rewrites.is_empty() || o.rewrites.iter().any(|r| r.trim().is_empty()) {
        return Err("`rewrites` must hold non-empty strings".into());
    }
    if o.rewrites.len() > input.candidates.max(1) * 2 {
        return Err(format!(
            "`rewrites` has {} items, asked for {}",
            o.rewrites.len(),
            input.candidates
        ));
    }
    Ok(())
}

/// `query_grammar`: rewrite grammar, punctuation and word order only (RARE 5.1, C.1).
pub struct QueryGrammar;
impl Task for QueryGrammar {
    const NAME: TaskName = TaskName::QueryGrammar;
    type Input = RewriteInput;
    type Output = RewriteOutput;
    fn check(i: &RewriteInput, o: &RewriteOutput) -> Result<(), String> {
        rewrites_check(i, o)
    }
    fn offline(input: &RewriteInput) -> RewriteOutput {
        offline::query_grammar(input)
    }
}

/// `query_irrelevant`: insert one on-topic but answer-irrelevant detail (RARE 5.1, C.1).
pub struct QueryIrrelevant;
impl Task for QueryIrrelevant {
    const NAME: TaskName = TaskName::QueryIrrelevant;
    type Input = RewriteInput;
    type Output = RewriteOutput;
    fn check(i: &RewriteInput, o: &RewriteOutput) -> Result<(), String> {
        rewrites_check(i, o)
    }
    fn offline(input: &RewriteInput) -> RewriteOutput {
        offline::query_irrelevant(input)
    }
}

/// `back_translate`: English -> pivot language -> English (RARE 5.2, C.2).
pub struct BackTranslate;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackTranslateInput {
    pub text: String,
    /// The pivot language (RARE: French).
    pub pivot_language: String,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackTranslateOutput {
    /// The text in the pivot language (empty from the offline rule, which paraphrases directly).
    #[serde(default)]
    pub pivot: String,
    pub text: String,
}
impl Task for BackTranslate {
    const NAME: TaskName = TaskName::BackTranslate;
    type Input = BackTranslateInput;
    type Output = BackTranslateOutput;
    fn check(_: &BackTranslateInput, o: &BackTranslateOutput) -> Result<(), String> {
        non_empty("text", &o.text)
    }
    fn offline(input: &BackTranslateInput) -> BackTranslateOutput {
        offline::back_translate(input)
    }
}

/// `answer_judge`: does a predicted answer mean the same as the gold answer (RARE Appendix F)?
pub struct AnswerJudge;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnswerJudgeInput {
    pub question: String,
    pub gold_answer: String,
    pub prediction: String,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerJudgeOutput {
    pub correct: bool,
}
impl Task for AnswerJudge {
    const NAME: TaskName = TaskName::AnswerJudge;
    type Input = AnswerJudgeInput;
    type Output = AnswerJudgeOutput;
    fn offline(input: &AnswerJudgeInput) -> AnswerJudgeOutput {
        offline::answer_judge(input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_parse_leniently_but_exactly() {
        assert_eq!(Stance::parse("Support"), Some(Stance::Support));
        assert_eq!(Stance::parse(" Final answer: Reject. "), None);
        assert_eq!(Stance::parse("- Reject."), Some(Stance::Reject));
        assert_eq!(
            Stance::parse("Not enough evidence"),
            Some(Stance::NotEnoughEvidence)
        );
        assert_eq!(
            Stance::parse("not_enough_evidence"),
            Some(Stance::NotEnoughEvidence)
        );
        assert_eq!(Verdict::parse("TRUE"), Some(Verdict::True));
        assert_eq!(Verdict::parse("maybe"), None);
        let v: ExamVerdictOutput = serde_json::from_str(r#"{"verdict":"False "}"#).unwrap();
        assert_eq!(v.verdict, Verdict::False);
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"verdict":"false"}"#);
        assert!(serde_json::from_str::<ExamVerdictOutput>(r#"{"verdict":"perhaps"}"#).is_err());
    }

    #[test]
    fn every_task_name_round_trips() {
        for t in TaskName::ALL {
            assert_eq!(TaskName::parse(t.as_str()), Some(*t));
        }
        assert_eq!(TaskName::ALL.len(), 15);
    }
}
