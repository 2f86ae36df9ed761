//! The vocabulary of the claims track's model answers, shared by every stage that asks a model
//! for a verdict or a stance, and the one way such an answer is read.
//!
//! - [`Verdict`]: RAGuard's exam answer (the claim judged true, false or undecided from one
//!   document, or from none). The gold verdict of a claim is [`crate::Verdict`] (true or false).
//! - [`Stance`]: CONF-FACT's stance vote.
//! - [`final_answer`] / `answer_in_reply`: finding the final answer anywhere in a reply.
//!   CONF-FACT's own parser only matched a label at the very start of a reply, so every reasoned
//!   answer ("The page reports ... Final answer: Reject.") parsed as nothing. Here a reply is
//!   searched for its *last* answer marker ("final answer", "conclusion", "answer", ...) and the
//!   label right after it; then for a reply that is only a label; then for a label opening the
//!   last line. JSON replies are searched field by field, the answer fields before the reasoning.
//! - [`exam`]: the `exam_verdict` task's contract (its variables, how its reply is checked and
//!   read, its offline rule), which `queries` (counter-evidence drafts) and `labels` (the exam and
//!   the zero-context probe) both ask: one definition, so a cached answer reads the same in both.
//!
//! Pure functions over strings and JSON values; the LLM engine and the stage crates do the asking.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A label's comparable form: case, surrounding space and punctuation and `-`/`_`/space
/// differences removed ("- Reject." is "reject"; "Final answer: Support." stays unparseable as a
/// label, the answer finders below handle such replies). Public for [`label_enum!`] only.
#[doc(hidden)]
pub fn norm(s: &str) -> String {
    s.trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
        .replace(['_', '-'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A closed set of labels, written as their text in tables and JSON, read back leniently
/// (case, surrounding punctuation, `-`/`_`) but never guessed. The using crate needs `serde`.
#[macro_export]
macro_rules! label_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $text:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ::serde::Serialize)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }
        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
            pub fn parse(s: &str) -> Option<Self> {
                let n = $crate::vocab::norm(s);
                $(if n == $crate::vocab::norm($text) $(|| n == $crate::vocab::norm($alias))* { return Some($name::$variant); })+
                None
            }
        }
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as ::serde::Deserialize>::deserialize(d)?;
                $name::parse(&s).ok_or_else(|| <D::Error as ::serde::de::Error>::custom(format!(
                    "`{s}` is not one of: {}", [$($text),+].join(", "))))
            }
        }
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

label_enum!(
    /// RAGuard's exam answer: the claim judged from one document alone (or from none).
    Verdict { True = "true" | "yes", False = "false" | "no", Undecided = "undecided" | "unknown" | "irrelevant" }
);
label_enum!(
    /// CONF-FACT's stance vote.
    Stance { Support = "support" | "supports" | "supported", Reject = "reject" | "rejects" | "refute" | "refutes" | "refuted", NotEnoughEvidence = "not enough evidence" | "nei" | "neutral" | "inconclusive" }
);

impl Verdict {
    /// The offline rules' decision from what a text says about a claim: off topic (under half of
    /// the claim's content words) is undecided; more refuting than supporting cues is false.
    pub fn from_cues(relevance: f64, refute: usize, support: usize) -> Verdict {
        if relevance < 0.5 {
            Verdict::Undecided
        } else if refute > support {
            Verdict::False
        } else {
            Verdict::True
        }
    }

    /// The verdict found anywhere in a reply (see `answer_in_reply`).
    pub fn in_reply(reply: &Value) -> Option<Verdict> {
        answer_in_reply(reply, VERDICT_ALIASES)
    }
}

impl Stance {
    /// The stance found anywhere in a reply (see `answer_in_reply`).
    pub fn in_reply(reply: &Value) -> Option<Stance> {
        answer_in_reply(reply, STANCE_ALIASES)
    }
}

/// Spellings of each stance, as they appear in replies.
pub const STANCE_ALIASES: &[(&str, Stance)] = &[
    ("not enough evidence", Stance::NotEnoughEvidence),
    ("not enough information", Stance::NotEnoughEvidence),
    ("not enough info", Stance::NotEnoughEvidence),
    ("insufficient evidence", Stance::NotEnoughEvidence),
    ("inconclusive", Stance::NotEnoughEvidence),
    ("neutral", Stance::NotEnoughEvidence),
    ("nei", Stance::NotEnoughEvidence),
    ("supporting", Stance::Support),
    ("supported", Stance::Support),
    ("supports", Stance::Support),
    ("support", Stance::Support),
    ("rejected", Stance::Reject),
    ("rejects", Stance::Reject),
    ("reject", Stance::Reject),
    ("refuted", Stance::Reject),
    ("refutes", Stance::Reject),
    ("refute", Stance::Reject),
];

/// Spellings of each exam verdict.
pub(crate) const VERDICT_ALIASES: &[(&str, Verdict)] = &[
    ("undecided", Verdict::Undecided),
    ("unknown", Verdict::Undecided),
    ("cannot be determined", Verdict::Undecided),
    ("irrelevant", Verdict::Undecided),
    ("true", Verdict::True),
    ("false", Verdict::False),
];

/// Words that introduce an answer, most specific first. The last occurrence of each is tried.
const MARKERS: &[&str] = &[
    "final answer",
    "final verdict",
    "final stance",
    "final label",
    "conclusion",
    "answer",
    "verdict",
    "stance",
];

/// Fields of a JSON reply that hold the answer itself, tried before any other string field.
const ANSWER_FIELDS: &[&str] = &[
    "stance",
    "verdict",
    "answer",
    "final_answer",
    "label",
    "conclusion",
];

/// The label `text` starts with (after bullets, quotes, markdown and an optional "is"), if any.
fn label_at_start<T: Copy>(text: &str, aliases: &[(&str, T)]) -> Option<T> {
    let strip = |s: &str| {
        s.trim_start_matches(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ':' | '*' | '-' | '_' | '>' | '#' | '"' | '\'' | '`' | '=' | '[' | '('
                )
        })
        .to_string()
    };
    let mut rest = strip(text);
    for lead in ["is ", "the claim is ", "that the claim is "] {
        if let Some(r) = rest.strip_prefix(lead) {
            rest = strip(r);
        }
    }
    // Longest spelling first so "not enough evidence" is never read as something shorter.
    let mut sorted: Vec<&(&str, T)> = aliases.iter().collect();
    sorted.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    for (spelling, value) in sorted {
        if let Some(after) = rest.strip_prefix(spelling)
            && !after.starts_with(|c: char| c.is_alphanumeric())
        {
            return Some(*value);
        }
    }
    None
}

/// The final answer in free text: after the last answer marker; else the whole text as a label;
/// else a label opening the last non-empty line.
pub fn final_answer<T: Copy>(text: &str, aliases: &[(&str, T)]) -> Option<T> {
    // ASCII lowering keeps byte offsets, so positions found in `lower` index `lower` safely.
    let lower = text.to_ascii_lowercase();
    for marker in MARKERS {
        let mut end = lower.len();
        while let Some(pos) = lower[..end].rfind(marker) {
            let after = &lower[pos + marker.len()..];
            let at_word_start = pos == 0
                || !lower[..pos]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric());
            if at_word_start && let Some(v) = label_at_start(after, aliases) {
                return Some(v);
            }
            end = pos;
        }
    }
    let trimmed = lower.trim().trim_end_matches(['.', '!']);
    if let Some(v) = label_at_start(trimmed, aliases)
        && aliases.iter().any(|(s, _)| {
            trimmed
                .trim_start_matches(|c: char| !c.is_alphanumeric())
                .eq(*s)
        })
    {
        return Some(v);
    }
    let last_line = lower.lines().rev().find(|l| !l.trim().is_empty())?;
    label_at_start(last_line, aliases)
}

/// The answer in a JSON reply: an answer field's exact label, then the final answer in each
/// answer field, then in every other string field (the reasoning), in order.
pub(crate) fn answer_in_reply<T: Copy>(reply: &Value, aliases: &[(&str, T)]) -> Option<T> {
    match reply {
        Value::String(s) => final_answer(s, aliases),
        Value::Object(map) => {
            for field in ANSWER_FIELDS {
                if let Some(Value::String(s)) = map.get(*field)
                    && let Some(v) = final_answer(s, aliases)
                {
                    return Some(v);
                }
            }
            map.iter()
                .filter(|(k, _)| !ANSWER_FIELDS.contains(&k.as_str()))
                .find_map(|(_, v)| match v {
                    Value::String(s) => final_answer(s, aliases),
                    _ => None,
                })
        }
        _ => None,
    }
}

/// A stance found anywhere in a reply.
pub fn stance_in_reply(reply: &Value) -> Option<Stance> {
    answer_in_reply(reply, STANCE_ALIASES)
}

/// An exam verdict found anywhere in a reply.
pub fn verdict_in_reply(reply: &Value) -> Option<Verdict> {
    answer_in_reply(reply, VERDICT_ALIASES)
}

/// The `exam_verdict` task: is the claim true or false judged from this document alone (RAGuard
/// 3.3)? With `document = None` it is the zero-context verdict (the labels stage's probe, and
/// the draft of the queries stage's counter-evidence queries, CounterRefine 3.3).
///
/// Its reply is kept as the model's JSON and read with [`Verdict::in_reply`]: the check accepts a
/// reply only when a verdict can be found in it (else the engine re-asks), and every reader of a
/// cached answer finds the same verdict in it. The stage crates wire this into the LLM engine's
/// `Task` trait; nothing that decides an answer lives anywhere else.
pub mod exam {
    use super::*;

    /// The task's name (prompt file `pipelines/prompts/exam_verdict.md`, cache keys, call log).
    pub const TASK: &str = "exam_verdict";
    /// Version of [`offline_reply`]'s rule; part of every offline request key.
    pub const OFFLINE_VERSION: &str = "offline-1";

    /// The prompt's variables.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Input {
        pub claim: String,
        pub claim_date: Option<String>,
        pub document_title: Option<String>,
        pub document: Option<String>,
    }

    impl Input {
        /// The zero-context form: the claim and its date, no document.
        pub fn zero_context(claim: &str, claim_date: Option<&str>) -> Input {
            Input {
                claim: claim.to_string(),
                claim_date: claim_date.map(String::from),
                document_title: None,
                document: None,
            }
        }
    }

    /// The task's preflight inputs: one claim with a document that confirms it and one with a
    /// document that refutes it, so a model reading them gives two verdicts.
    pub fn examples() -> Vec<Input> {
        let claim = "The Riverside library opened a second branch in 2021.";
        let doc = |title: &str, text: &str| Input {
            claim: claim.into(),
            claim_date: Some("2022-03-01".into()),
            document_title: Some(title.into()),
            document: Some(text.into()),
        };
        vec![
            doc(
                "Riverside library opens second branch",
                "The Riverside public library opened its second branch on Elm Street in May 2021, the city confirmed. The claim is accurate.",
            ),
            doc(
                "Fact check: Riverside library has one branch",
                "Riverside's library has never opened a second branch; the plan for one was cancelled in 2019. The claim is false.",
            ),
        ]
    }

    /// The shape the prompt asks for (and the offline rule answers with).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Output {
        pub verdict: Verdict,
    }

    /// Checks a reply beyond its being JSON: a verdict must be findable in it.
    pub fn check(reply: &Value) -> Result<(), String> {
        Verdict::in_reply(reply)
            .map(|_| ())
            .ok_or_else(|| "no verdict found: answer with one of true, false, undecided".into())
    }

    /// The offline rule. No document (or an empty one): undecided. Else the cues of the title and
    /// text read against the claim decide ([`Verdict::from_cues`]); `cues` is
    /// `noisebench_text::cues::cue_counts` (passed in because core depends on no crate of ours).
    pub fn offline_reply(input: &Input, cues: fn(&str, &str) -> (f64, usize, usize)) -> Value {
        let text = match (&input.document_title, &input.document) {
            (_, None) => String::new(),
            (Some(t), Some(d)) => format!("{t}\n{d}"),
            (None, Some(d)) => d.clone(),
        };
        let verdict = if text.trim().is_empty() {
            Verdict::Undecided
        } else {
            let (relevance, refute, support) = cues(&input.claim, &text);
            Verdict::from_cues(relevance, refute, support)
        };
        reply(verdict)
    }

    /// The reply JSON of a verdict: `{"verdict": "<verdict>"}`.
    pub fn reply(verdict: Verdict) -> Value {
        serde_json::json!({ "verdict": verdict.as_str() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_parse_leniently_but_exactly() {
        assert_eq!(Stance::parse("Support"), Some(Stance::Support));
        assert_eq!(Stance::parse(" Final answer: Reject. "), None);
        assert_eq!(Stance::parse("- Reject."), Some(Stance::Reject));
        assert_eq!(
            Stance::parse("not_enough_evidence"),
            Some(Stance::NotEnoughEvidence)
        );
        assert_eq!(Verdict::parse("TRUE"), Some(Verdict::True));
        assert_eq!(Verdict::parse("maybe"), None);
        let v: exam::Output = serde_json::from_str(r#"{"verdict":"False "}"#).unwrap();
        assert_eq!(v.verdict, Verdict::False);
        assert_eq!(
            serde_json::to_value(&v).unwrap(),
            exam::reply(Verdict::False)
        );
        assert!(serde_json::from_str::<exam::Output>(r#"{"verdict":"perhaps"}"#).is_err());
    }

    #[test]
    fn the_exam_reads_its_offline_and_verbose_replies_alike() {
        let no_doc = exam::Input::zero_context("c", None);
        let fixed = |_: &str, _: &str| (1.0, 2, 1);
        assert_eq!(
            exam::offline_reply(&no_doc, fixed),
            json!({"verdict": "undecided"})
        );
        let doc = exam::Input {
            document: Some("d".into()),
            ..no_doc
        };
        assert_eq!(
            exam::offline_reply(&doc, fixed),
            json!({"verdict": "false"})
        );
        assert!(
            exam::check(&json!({"verdict": "The claim is wrong. Final answer: false"})).is_ok()
        );
        assert!(exam::check(&json!({"verdict": "perhaps"})).is_err());
    }

    fn stance(text: &str) -> Option<Stance> {
        final_answer(text, STANCE_ALIASES)
    }

    #[test]
    fn finds_the_final_answer_anywhere() {
        assert_eq!(stance("Support"), Some(Stance::Support));
        assert_eq!(stance("  reject. "), Some(Stance::Reject));
        assert_eq!(stance("Supported "), Some(Stance::Support));
        assert_eq!(
            stance(
                "The article quotes the budget office, which says the figure is wrong.\n\nFinal answer: Reject."
            ),
            Some(Stance::Reject)
        );
        assert_eq!(
            stance("Step 1: the page supports part of it.\n**Final Answer:** Not enough evidence"),
            Some(Stance::NotEnoughEvidence)
        );
        // The last marker wins over an earlier, superseded one.
        assert_eq!(
            stance(
                "My first answer: Support. On reflection the dates do not match. Final answer: Reject"
            ),
            Some(Stance::Reject)
        );
        // Answer in the middle of the reply, reasoning after it.
        assert_eq!(
            stance("Final answer - Support. The page gives the same numbers as the claim."),
            Some(Stance::Support)
        );
        assert_eq!(
            stance("Reasoning about the claim...\n\n- Reject"),
            Some(Stance::Reject)
        );
        assert_eq!(
            stance("In conclusion, the claim is refuted by the record."),
            None,
            "a marker not followed by a label is not an answer"
        );
        assert_eq!(
            stance("The page does not support the claim, it rejects it."),
            None
        );
        assert_eq!(stance("Final answer: supportive"), None);
        assert_eq!(stance(""), None);
    }

    #[test]
    fn finds_answers_in_json_replies() {
        assert_eq!(
            stance_in_reply(&json!({"stance": "support"})),
            Some(Stance::Support)
        );
        assert_eq!(
            stance_in_reply(
                &json!({"reasoning": "The text says X. Final answer: Reject.", "stance": "see reasoning"})
            ),
            Some(Stance::Reject)
        );
        assert_eq!(
            stance_in_reply(
                &json!({"reasoning": "Weighing both... Final answer: Not enough evidence"})
            ),
            Some(Stance::NotEnoughEvidence)
        );
        assert_eq!(
            stance_in_reply(&json!("Long thoughts. Final answer: Support")),
            Some(Stance::Support)
        );
        assert_eq!(stance_in_reply(&json!({"reasoning": "no idea"})), None);
        assert_eq!(stance_in_reply(&json!(3)), None);
        assert_eq!(
            verdict_in_reply(&json!({"verdict": "False "})),
            Some(Verdict::False)
        );
        assert_eq!(
            verdict_in_reply(&json!({"answer": "Given the document, the verdict: true"})),
            Some(Verdict::True)
        );
        assert_eq!(
            verdict_in_reply(&json!({"verdict": "Undecided."})),
            Some(Verdict::Undecided)
        );
    }
}
