//! Finding the model's final answer in a reply, wherever it is.
//!
//! CONF-FACT's own parser only matched a label at the very start of the reply, so every reasoned
//! answer ("The page reports ... Final answer: Reject.") parsed as nothing. Here a reply is
//! searched for its *last* answer marker ("final answer", "conclusion", "answer", ...) and the
//! label right after it; then for a reply that is only a label; then for a label opening the last
//! line. JSON replies are searched field by field, the answer fields before the reasoning.
//!
//! The three vote tasks and the exam are wrapped here as lenient [`Task`]s whose output is any
//! JSON value that holds a findable answer: the LLM layer still parses JSON strictly and re-asks
//! when no answer can be found, but a stance hidden at the end of a `stance` or `reasoning`
//! string is not lost.

use noisebench_llm::task::{
    ExamVerdict, ExamVerdictInput, Stance, StanceReasoned, StanceText, StanceTextInput, StanceUrl,
    StanceUrlInput, Task, TaskName, Verdict,
};
use serde_json::Value;

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
pub const VERDICT_ALIASES: &[(&str, Verdict)] = &[
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
pub fn answer_in_reply<T: Copy>(reply: &Value, aliases: &[(&str, T)]) -> Option<T> {
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

fn need_stance(reply: &Value) -> Result<(), String> {
    stance_in_reply(reply).map(|_| ()).ok_or_else(|| {
        "no stance found: end with `Final answer: ` and one of support, reject, not enough evidence"
            .into()
    })
}

/// `stance_url`, answered leniently (see the module doc).
pub struct UrlVote;
impl Task for UrlVote {
    const NAME: TaskName = TaskName::StanceUrl;
    type Input = StanceUrlInput;
    type Output = Value;
    fn check(_: &StanceUrlInput, reply: &Value) -> Result<(), String> {
        need_stance(reply)
    }
    fn offline(input: &StanceUrlInput) -> Value {
        serde_json::to_value(StanceUrl::offline(input)).unwrap_or_default()
    }
}

/// `stance_text`, answered leniently.
pub struct TextVote;
impl Task for TextVote {
    const NAME: TaskName = TaskName::StanceText;
    type Input = StanceTextInput;
    type Output = Value;
    fn check(_: &StanceTextInput, reply: &Value) -> Result<(), String> {
        need_stance(reply)
    }
    fn offline(input: &StanceTextInput) -> Value {
        serde_json::to_value(StanceText::offline(input)).unwrap_or_default()
    }
}

/// `stance_reasoned`, answered leniently: the stance may sit at the end of the reasoning.
pub struct ReasonedVote;
impl Task for ReasonedVote {
    const NAME: TaskName = TaskName::StanceReasoned;
    type Input = StanceTextInput;
    type Output = Value;
    fn check(_: &StanceTextInput, reply: &Value) -> Result<(), String> {
        need_stance(reply)
    }
    fn offline(input: &StanceTextInput) -> Value {
        serde_json::to_value(StanceReasoned::offline(input)).unwrap_or_default()
    }
}

/// `exam_verdict`, answered leniently.
pub struct ExamVote;
impl Task for ExamVote {
    const NAME: TaskName = TaskName::ExamVerdict;
    type Input = ExamVerdictInput;
    type Output = Value;
    fn check(_: &ExamVerdictInput, reply: &Value) -> Result<(), String> {
        verdict_in_reply(reply)
            .map(|_| ())
            .ok_or_else(|| "no verdict found: answer with one of true, false, undecided".into())
    }
    fn offline(input: &ExamVerdictInput) -> Value {
        serde_json::to_value(ExamVerdict::offline(input)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
