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
    /// A rewrite (a back-translation, a rephrased question) is much shorter or longer than its
    /// source: a one-word "translation", a passage summarised away.
    LengthChanged,
    /// A rewrite keeps too few of its source's words to keep its meaning.
    MeaningLost,
}

impl Sense {
    /// Every sense reason, for totals that need to tell them from other failures.
    pub const ALL: [Sense; 7] = [
        Sense::OffTopic,
        Sense::CopiedExample,
        Sense::EntityNotInSentence,
        Sense::AnchorMissing,
        Sense::WrongLanguage,
        Sense::LengthChanged,
        Sense::MeaningLost,
    ];

    /// The reason code (`off_topic`).
    pub fn code(self) -> &'static str {
        match self {
            Sense::OffTopic => "off_topic",
            Sense::CopiedExample => "copied_example",
            Sense::EntityNotInSentence => "entity_not_in_sentence",
            Sense::AnchorMissing => "anchor_missing",
            Sense::WrongLanguage => "wrong_language",
            Sense::LengthChanged => "length_changed",
            Sense::MeaningLost => "meaning_lost",
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

/// Words too general to show that an answer is about its input: a question about "the
/// country you are in" shares `country` with any claim about a country, and `state` with any
/// claim about a state. [`on_topic`] does not count them as shared.
pub(crate) const GENERIC_WORDS: &[&str] = &[
    "state",
    "states",
    "country",
    "countries",
    "nation",
    "nations",
    "national",
    "united",
    "america",
    "american",
    "americans",
    "world",
    "people",
    "person",
    "persons",
    "year",
    "years",
    "time",
    "times",
    "today",
    "day",
    "days",
    "thing",
    "things",
    "way",
    "ways",
    "number",
    "numbers",
    "name",
    "names",
    "place",
    "places",
    "government",
    "public",
    "new",
    "many",
    "much",
    "first",
    "last",
    "percent",
    "million",
    "billion",
    "example",
    "question",
    "answer",
    "true",
    "false",
    "fact",
    "facts",
    "information",
    "said",
    "says",
    "say",
];

/// Whether `word` is one of [`GENERIC_WORDS`].
pub(crate) fn is_generic(word: &str) -> bool {
    GENERIC_WORDS.contains(&word)
}

/// `off_topic` unless `answer` shares a word with `subject` (both sets of content words), not
/// counting `GENERIC_WORDS`. A subject with nothing but generic words (nothing to compare
/// with) passes; an empty answer fails.
pub fn on_topic(
    what: &str,
    answer: &BTreeSet<String>,
    subject: &BTreeSet<String>,
) -> Result<(), Senseless> {
    let specific = |s: &BTreeSet<String>| -> BTreeSet<String> {
        s.iter().filter(|w| !is_generic(w)).cloned().collect()
    };
    let subject = specific(subject);
    if subject.is_empty() || shares_word(&specific(answer), &subject) {
        return Ok(());
    }
    Err(Sense::OffTopic.because(format!(
        "{what} shares no content word with its input ({})",
        preview(answer)
    )))
}

/// What a rewrite must keep of its source: its length within a ratio (in words) and a share of
/// its content words (inflections counted as the same word, as in [`shares_word`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fidelity {
    pub min_length_ratio: f64,
    pub max_length_ratio: f64,
    /// The least share of the source's content words the rewrite keeps.
    pub min_kept: f64,
}

/// `length_changed` when the rewrite's length (`rewrite_len` words against the source's
/// `source_len`) is outside the ratio, `meaning_lost` when it keeps less than `min_kept` of the
/// source's content words: a rewrite must keep most of what it rewrites. A source of fewer than
/// three words is not judged by length.
pub fn faithful(
    what: &str,
    fidelity: Fidelity,
    (source_len, rewrite_len): (usize, usize),
    source: &BTreeSet<String>,
    rewrite: &BTreeSet<String>,
) -> Result<(), Senseless> {
    if source_len >= 3 {
        let ratio = rewrite_len as f64 / source_len as f64;
        if ratio < fidelity.min_length_ratio || ratio > fidelity.max_length_ratio {
            return Err(Sense::LengthChanged.because(format!(
                "{what} has {rewrite_len} words for a source of {source_len} (ratio {ratio:.2}, kept within {}-{})",
                fidelity.min_length_ratio, fidelity.max_length_ratio
            )));
        }
    }
    let kept = kept_share(source, rewrite);
    if kept < fidelity.min_kept {
        return Err(Sense::MeaningLost.because(format!(
            "{what} keeps {:.0}% of its source's content words (at least {:.0}% wanted; {})",
            kept * 100.0,
            fidelity.min_kept * 100.0,
            preview(rewrite)
        )));
    }
    Ok(())
}

/// The share of `source`'s words that `rewrite` keeps, inflections counted as the same word
/// (1 for an empty source).
pub(crate) fn kept_share(source: &BTreeSet<String>, rewrite: &BTreeSet<String>) -> f64 {
    if source.is_empty() {
        return 1.0;
    }
    let kept = source
        .iter()
        .filter(|w| rewrite.contains(*w) || rewrite.iter().any(|r| same_stem(w, r)))
        .count();
    kept as f64 / source.len() as f64
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

/// `copied_example` when a string of the answer repeats one of the prompt's example values
/// (its front matter `examples`: `Northwind Logistics`, the example question) while the input
/// does not hold that example. A string repeats an example when at least 60% of the example's
/// words are in it and they make at least 60% of it (so a sentence that merely names the
/// example entity among other words is not one, the entity field beside it is); the input
/// holds the example when 60% of its words are in the input's strings. Words: lowercase runs of
/// letters and digits, stopwords left out. Applied to every model answer of every task whose
/// prompt lists examples, so a new example in a prompt is checked without code.
pub fn not_an_example(
    examples: &[String],
    input: &serde_json::Value,
    answer: &serde_json::Value,
) -> Result<(), Senseless> {
    let mut input_words = BTreeSet::new();
    for s in strings_of(input) {
        input_words.extend(example_words(s));
    }
    let mut leaves: Vec<(&str, BTreeSet<String>)> = strings_of(answer)
        .into_iter()
        .map(|s| (s, example_words(s)))
        .collect();
    leaves.retain(|(_, w)| !w.is_empty());
    for example in examples {
        let e = example_words(example);
        if e.is_empty() {
            continue;
        }
        let share = |a: &BTreeSet<String>, b: &BTreeSet<String>| {
            a.intersection(b).count() as f64 / a.len() as f64
        };
        if share(&e, &input_words) >= 0.6 {
            continue;
        }
        if let Some((s, _)) = leaves
            .iter()
            .find(|(_, w)| share(&e, w) >= 0.6 && share(w, &e) >= 0.6)
        {
            return Err(Sense::CopiedExample.because(format!(
                "the answer repeats the prompt's example {example:?} (\"{}\"), which its input does not hold",
                s.chars().take(120).collect::<String>()
            )));
        }
    }
    Ok(())
}

/// Every string in a JSON value (object values and array items, recursively).
fn strings_of(v: &serde_json::Value) -> Vec<&str> {
    let mut out = Vec::new();
    fn walk<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match v {
            serde_json::Value::String(s) => out.push(s),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

/// The words an example comparison looks at: lowercase runs of letters and digits, but a short
/// list of function words.
fn example_words(s: &str) -> BTreeSet<String> {
    const STOP: &[&str] = &[
        "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "and", "or", "is", "are",
        "was", "were", "be", "did", "do", "does", "have", "has", "had", "it", "its", "that",
        "this", "with", "as", "from",
    ];
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
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
        assert!(Sense::is_code("llm_length_changed") && Sense::is_code("meaning_lost"));
    }

    #[test]
    fn a_rewrite_keeps_length_and_words() {
        let f = Fidelity {
            min_length_ratio: 0.5,
            max_length_ratio: 2.0,
            min_kept: 0.4,
        };
        let source = set("port authority bought new cranes 2023 traffic grew third");
        let e = faithful("t", f, (16, 1), &source, &set("pivot")).unwrap_err();
        assert_eq!(e.sense, Sense::LengthChanged);
        let e = faithful(
            "t",
            f,
            (16, 15),
            &source,
            &set("weather lovely today spring"),
        )
        .unwrap_err();
        assert_eq!(e.sense, Sense::MeaningLost);
        let good = set("2023 port authority purchased new cranes traffic rose third");
        assert!(faithful("t", f, (16, 14), &source, &good).is_ok());
        assert!(
            (kept_share(&set("acquired holdings"), &set("acquire holding")) - 1.0).abs() < 1e-9
        );
    }

    #[test]
    fn generic_words_are_not_a_topic() {
        // A drug-overdose claim and a question about "the country you are in" (what a small
        // model wrote): `state`/`country` alone do not make it on topic.
        let claim = set("drug overdose deaths state rose country");
        let q = set("name country united states america nigeria ghana");
        assert_eq!(
            on_topic("q", &q, &claim).unwrap_err().sense,
            Sense::OffTopic
        );
        assert!(on_topic("q", &set("overdose deaths state"), &claim).is_ok());
        // A subject of generic words only: nothing to compare with.
        assert!(on_topic("q", &set("lemon"), &set("state country")).is_ok());
    }

    #[test]
    fn prompt_examples_are_caught_in_any_field() {
        let examples = vec![
            "Northwind Logistics".to_string(),
            "the retirement-age reform".to_string(),
        ];
        let input = serde_json::json!({"chunks": [{"chunk_id": "c1", "text": "Acme Corp sold 40 trucks to Baltic Freight in 2023."}]});
        let copied = serde_json::json!({"triplets": [{"entity_1": "Northwind Logistics", "relation": "operates", "entity_2": "the retirement-age reform", "chunk_id": "1", "source_sentence": "Northwind Logistics operates the retirement-age reform."}]});
        let e = not_an_example(&examples, &input, &copied).unwrap_err();
        assert_eq!(e.sense, Sense::CopiedExample);
        assert!(e.detail.contains("Northwind Logistics"), "{e}");
        let fine = serde_json::json!({"triplets": [{"entity_1": "Acme Corp", "relation": "sold", "entity_2": "Baltic Freight", "chunk_id": "c1", "source_sentence": "Acme Corp sold 40 trucks to Baltic Freight in 2023."}]});
        assert!(not_an_example(&examples, &input, &fine).is_ok());
        // A report about Northwind Logistics may name it.
        let about = serde_json::json!({"chunks": [{"chunk_id": "c1", "text": "Northwind Logistics operates 14 depots."}]});
        assert!(
            not_an_example(&examples, &about, &copied).is_err(),
            "the reform is still copied"
        );
        let only_northwind = serde_json::json!({"triplets": [{"entity_1": "Northwind Logistics", "relation": "operates", "entity_2": "14 depots", "chunk_id": "c1", "source_sentence": "Northwind Logistics operates 14 depots."}]});
        assert!(not_an_example(&examples, &about, &only_northwind).is_ok());
        // A sentence naming an example among other words is not a copy by itself.
        let q = vec![
            "Did Nigeria have a population of 45 million at the time of independence?".to_string(),
        ];
        let claim = serde_json::json!({"claim": "Hot lemon water cures the common cold"});
        let copy = serde_json::json!({"question": "Did Nigeria have a population of 45 million at the time of independence?"});
        assert!(not_an_example(&q, &claim, &copy).is_err());
        let own = serde_json::json!({"claim": "Nigeria had a population of 45 million at the time of independence"});
        assert!(not_an_example(&q, &own, &copy).is_ok());
        assert!(
            not_an_example(
                &q,
                &claim,
                &serde_json::json!({"question": "Does hot lemon water cure the common cold?"})
            )
            .is_ok()
        );
    }
}
