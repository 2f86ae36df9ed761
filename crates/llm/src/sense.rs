//! Sense checks: cheap, deterministic tests that a well-formed answer is about its input. A
//! model too weak for a task still fills the schema (small local models return the prompt's own
//! example, a question about something else, an entity the sentence never names); the shape
//! checks of [`crate::Task::check`] pass those. A task's [`crate::Task::sense`] says what is
//! wrong with such an answer as one of the reasons here; the engine counts it as a drop with
//! that reason (`llm_off_topic`, ...) instead of keeping it, or re-asks once first when the
//! task asks for it ([`crate::Task::REASK_SENSELESS`]). Turned off with `llm.sense_checks =
//! false`, e.g. to measure how many answers they catch.
//!
//! What this module is not: a judge of truth or quality. It rejects only answers that share
//! nothing with what was asked, copy the prompt's example, or name what the input does not
//! hold; the helpers take word sets so that each stage crate decides what a word is
//! (`noisebench_text::content_words`).
//!
//! A second, run-wide check needs no single answer to be wrong: a task whose categorical
//! answers (a stance, a verdict) are all the same over a run is flagged in the run summary
//! ([`crate::Llm::constant_answers`]), because a model that says "support" for every pair is
//! not reading the pairs.

use std::collections::BTreeSet;

/// Why an answer with the right shape is not about its input. Each has a stable reason code;
/// a drop records it as `llm_<code>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sense {
    /// Shares no content word with its input (a question or keyword list about something else).
    OffTopic,
    /// Repeats the example the prompt gives (for an input the example is not about).
    CopiedExample,
    /// An extracted entity does not occur in the sentence it is said to come from.
    EntityNotInSentence,
    /// A generated question leaves out the anchor (the entity or phrase it must be built on).
    AnchorMissing,
    /// A translation back into the source language came back in another language.
    WrongLanguage,
}

impl Sense {
    /// Every sense reason, for totals that need to tell them from other failures.
    pub const ALL: [Sense; 5] = [
        Sense::OffTopic,
        Sense::CopiedExample,
        Sense::EntityNotInSentence,
        Sense::AnchorMissing,
        Sense::WrongLanguage,
    ];

    /// The reason code (`off_topic`).
    pub fn code(self) -> &'static str {
        match self {
            Sense::OffTopic => "off_topic",
            Sense::CopiedExample => "copied_example",
            Sense::EntityNotInSentence => "entity_not_in_sentence",
            Sense::AnchorMissing => "anchor_missing",
            Sense::WrongLanguage => "wrong_language",
        }
    }

    /// Whether `code` (a call-log reason or a drop reason with its `llm_` prefix) is a sense
    /// reason.
    pub fn is_code(code: &str) -> bool {
        let code = code.strip_prefix("llm_").unwrap_or(code);
        Sense::ALL.iter().any(|s| s.code() == code)
    }

    /// A failed check with what it found.
    pub fn because(self, detail: impl Into<String>) -> Senseless {
        Senseless {
            sense: self,
            detail: detail.into(),
        }
    }
}

/// A failed sense check: which, and what it found (quoted in the drop's detail and, when the
/// task re-asks, to the model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Senseless {
    pub sense: Sense,
    pub detail: String,
}

impl std::fmt::Display for Senseless {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.sense.code(), self.detail)
    }
}

/// `off_topic` unless `answer` shares a word with `subject` (both sets of content words). An
/// empty subject (nothing to compare with) passes; an empty answer fails.
pub fn on_topic(
    what: &str,
    answer: &BTreeSet<String>,
    subject: &BTreeSet<String>,
) -> Result<(), Senseless> {
    if subject.is_empty() || shares_word(answer, subject) {
        return Ok(());
    }
    Err(Sense::OffTopic.because(format!(
        "{what} shares no content word with its input ({})",
        preview(answer)
    )))
}

/// Whether two word sets share a word, counting inflections of one stem as the same word
/// (`holding`/`holdings`, `acquire`/`acquired`: a common prefix of five characters, or all of a
/// shorter word of four or more), since answers rephrase.
pub fn shares_word(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    a.iter().any(|x| b.iter().any(|y| same_stem(x, y)))
}

fn same_stem(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let shorter = a.chars().count().min(b.chars().count());
    common >= 5 || (common == shorter && common >= 4)
}

/// `copied_example` when the answer's words are mostly the example answer's (at least 60% of
/// them, and the example's words make at least 60% of the answer) while the input is not the
/// example's input: the model returned the prompt's illustration, not an answer. Word sets are
/// content words.
pub fn not_the_example(
    answer: &BTreeSet<String>,
    example_answer: &BTreeSet<String>,
    input: &BTreeSet<String>,
    example_input: &BTreeSet<String>,
) -> Result<(), Senseless> {
    let overlap = |a: &BTreeSet<String>, b: &BTreeSet<String>| -> f64 {
        if a.is_empty() {
            return 0.0;
        }
        a.intersection(b).count() as f64 / a.len() as f64
    };
    let copies = overlap(answer, example_answer) >= 0.6 && overlap(example_answer, answer) >= 0.6;
    let input_is_example = overlap(example_input, input) >= 0.6;
    if copies && !input_is_example {
        return Err(Sense::CopiedExample.because(format!(
            "the answer repeats the prompt's example ({})",
            preview(answer)
        )));
    }
    Ok(())
}

fn preview(words: &BTreeSet<String>) -> String {
    let mut s: Vec<&str> = words.iter().map(String::as_str).take(8).collect();
    if words.len() > 8 {
        s.push("...");
    }
    if s.is_empty() {
        "no content words".into()
    } else {
        s.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> BTreeSet<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn topic_and_example() {
        assert!(on_topic("q", &set("lemon water"), &set("hot lemon water cures")).is_ok());
        let e = on_topic(
            "q",
            &set("important learned school"),
            &set("hot lemon water"),
        )
        .unwrap_err();
        assert_eq!(e.sense, Sense::OffTopic);
        assert!(on_topic("q", &set(""), &set("x")).is_err());
        assert!(on_topic("q", &set("x"), &set("")).is_ok());
        let ex_q = set("nigeria population million time independence");
        let ex_c = set("nigeria population million time independence");
        let e = not_the_example(&ex_q, &ex_q, &set("lemon water cures cancer"), &ex_c).unwrap_err();
        assert_eq!(e.sense, Sense::CopiedExample);
        // The same question for the example's own claim is right.
        assert!(not_the_example(&ex_q, &ex_q, &ex_c, &ex_c).is_ok());
        assert!(
            not_the_example(&set("lemon water cure"), &ex_q, &set("lemon water"), &ex_c).is_ok()
        );
        assert!(Sense::is_code("llm_off_topic") && Sense::is_code("wrong_language"));
        assert!(shares_word(&set("holding group"), &set("dupa holdings")));
        assert!(shares_word(&set("acquire"), &set("acquired")));
        assert!(!shares_word(&set("cat"), &set("car")));
        assert!(!Sense::is_code("llm_truncated"));
    }
}
