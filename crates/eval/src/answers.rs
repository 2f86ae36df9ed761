//! Reading a model's answer: the strict binary parser of the fact-checking tasks (RAGuard 4.1:
//! an out-of-scope answer is wrong), answer normalisation, the lexical match of RARE's first
//! judging stage (6.1), refusal detection, and the two-stage answer judge (lexical match, then
//! one batched `answer_judge` call for what the lexical stage cannot decide).
//!
//! Everything here but [`judge_answers`]'s second stage is a pure function of its text, so a
//! score never depends on a model unless a model was needed.

use std::collections::BTreeSet;

use noisebench_llm::{Llm, Task, TaskInfo};
use noisebench_text::is_stopword;
use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Binary answers
// ---------------------------------------------------------------------------------------------

/// Quote-like characters stripped around an answer (ASCII and typographic quotes, backticks,
/// Markdown emphasis).
fn is_wrapper(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | '`' | '*' | '\u{2018}' | '\u{2019}' | '\u{201c}' | '\u{201d}'
    )
}

fn is_trailing_punct(c: char) -> bool {
    matches!(c, '.' | ',' | '!' | '?' | ';' | ':' | '\u{3002}')
}

/// The core of a binary answer, lowercased: whitespace, surrounding quotes/backticks, trailing
/// punctuation and one leading `answer:` / `final answer:` prefix removed. What
/// [`parse_binary`] compares with the two allowed words.
pub(crate) fn binary_core(answer: &str) -> String {
    fn strip(s: &str) -> &str {
        let mut s = s.trim();
        loop {
            let next = s
                .trim_start_matches(|c: char| is_wrapper(c) || c.is_whitespace())
                .trim_end_matches(|c: char| {
                    is_wrapper(c) || is_trailing_punct(c) || c.is_whitespace()
                });
            if next.len() == s.len() {
                return s;
            }
            s = next;
        }
    }
    let s = strip(answer).to_lowercase();
    // CONF-FACT's prompts end with "Final Answer: yes"; models often echo the prefix.
    let rest = ["final answer:", "answer:"]
        .iter()
        .find_map(|p| s.strip_prefix(p))
        .unwrap_or(&s);
    strip(rest).to_string()
}

/// A strict binary answer: `Some(true)` when the cleaned answer ([`binary_core`]) is `yes`,
/// `Some(false)` when it is `no` (both compared case-insensitively), `None` for anything else
/// ("It is true", "true or false", "") - an out-of-scope answer, which the tasks score wrong.
pub(crate) fn parse_binary(answer: &str, yes: &str, no: &str) -> Option<bool> {
    let core = binary_core(answer);
    if core.is_empty() {
        return None;
    }
    if core == yes.trim().to_lowercase() {
        Some(true)
    } else if core == no.trim().to_lowercase() {
        Some(false)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// Normalisation and lexical match
// ---------------------------------------------------------------------------------------------

/// Whether `c` is punctuation or a symbol (Unicode general categories P* and S*): what
/// [`normalize`] removes. `char` has only an ASCII test for this, hence the regex class.
fn punct_or_symbol() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    // Invariant: a constant, valid pattern.
    RE.get_or_init(|| Regex::new(r"[\p{P}\p{S}]").expect("a valid constant regex"))
}

/// Lowercase; a comma between two digits removed, so thousands separators go (`1,000,000` ->
/// `1000000`, and `$84,263` -> `84263`, the `$` being a symbol); a decimal point between two digits kept
/// (`3.5`); dashes and slashes become spaces (`co-founder` -> `co founder`); every other
/// Unicode punctuation or symbol character removed (`U.S.` -> `us`); the articles `a`, `an`,
/// `the` removed; whitespace collapsed to single spaces.
pub fn normalize(s: &str) -> String {
    let lower = s.to_lowercase();
    let chars: Vec<char> = lower.chars().collect();
    let digit_at = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(char::is_ascii_digit)
    };
    let mut out = String::with_capacity(lower.len());
    let mut buf = [0u8; 4];
    for (i, &c) in chars.iter().enumerate() {
        let between_digits = digit_at(i.checked_sub(1)) && digit_at(Some(i + 1));
        if c == ',' && between_digits {
            // A thousands separator (`1,000`) joins; a comma not between digits is punctuation.
            continue;
        }
        if c == '.' && between_digits {
            out.push('.');
            continue;
        }
        if c.is_whitespace() || matches!(c, '-' | '/' | '\u{2013}' | '\u{2014}' | '\u{2212}') {
            out.push(' ');
            continue;
        }
        if punct_or_symbol().is_match(c.encode_utf8(&mut buf)) {
            continue;
        }
        out.push(c);
    }
    out.split_whitespace()
        .filter(|w| !matches!(*w, "a" | "an" | "the"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How a prediction matched its gold answer lexically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LexicalMatch {
    /// Equal after [`normalize`].
    Exact,
    /// One contains the other on word boundaries (see [`lexical_match`]).
    Inclusive,
}

impl LexicalMatch {
    pub fn as_str(self) -> &'static str {
        match self {
            LexicalMatch::Exact => "exact",
            LexicalMatch::Inclusive => "inclusive",
        }
    }
}

/// RARE's first judging stage (6.1) over [`normalize`]d strings: `Exact` when equal;
/// `Inclusive` when the gold answer appears in the prediction as a run of whole words (a
/// prediction may add context), or when the prediction appears in the gold answer as a run of
/// whole words, has at least 2 words and covers at least half of the gold's words (a partial
/// answer that names most of it; a lone "the" or "inc" never matches, unlike RARE's plain
/// substring test). An empty normalised prediction or gold never matches.
pub(crate) fn lexical_match(prediction: &str, gold: &str) -> Option<LexicalMatch> {
    let (p, g) = (normalize(prediction), normalize(gold));
    if p.is_empty() || g.is_empty() {
        return None;
    }
    if p == g {
        return Some(LexicalMatch::Exact);
    }
    let contains = |hay: &str, needle: &str| format!(" {hay} ").contains(&format!(" {needle} "));
    if contains(&p, &g) {
        return Some(LexicalMatch::Inclusive);
    }
    let (pw, gw) = (p.split(' ').count(), g.split(' ').count());
    if pw >= 2 && 2 * pw >= gw && contains(&g, &p) {
        return Some(LexicalMatch::Inclusive);
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Refusals and other answer problems
// ---------------------------------------------------------------------------------------------

/// Which answers count as refusals: case-insensitive regexes searched anywhere in the answer
/// (typographic apostrophes read as `'`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefusalConfig {
    /// Regular expressions (Rust `regex` syntax); any match makes the answer a refusal.
    pub patterns: Vec<String>,
}

impl Default for RefusalConfig {
    /// Phrasings of "I cannot tell" seen in model answers, RARE's own "no such info" among them.
    fn default() -> Self {
        let patterns = [
            r"\bi don't know\b",
            r"\bi do not know\b",
            r"\bi'm not sure\b",
            r"\bcan ?not (be )?(answer|determine|tell|say)",
            r"\bcan't (be )?(answer|determine|tell|say)",
            r"\bunable to (answer|determine|tell|find)",
            r"\bnot enough (information|context|evidence|data)\b",
            r"\binsufficient (information|context|evidence|data)\b",
            r"\b(passages?|context|documents?|texts?|sources?) (do(es)? not|don't|doesn't) (say|mention|contain|provide|state|specify|include)",
            r"\bno (answer|information|info|data|mention)\b",
            r"\bno such info",
            r"\bunknown\b",
            r"\bnot (mentioned|stated|specified|provided|given|available)\b",
            r"\bnot possible to (answer|determine|tell)",
        ];
        RefusalConfig {
            patterns: patterns.iter().map(|p| p.to_string()).collect(),
        }
    }
}

/// A compiled [`RefusalConfig`].
#[derive(Debug, Clone)]
pub struct RefusalDetector {
    patterns: Vec<Regex>,
}

impl RefusalDetector {
    pub fn new(cfg: &RefusalConfig) -> Result<Self, regex::Error> {
        let patterns = cfg
            .patterns
            .iter()
            .map(|p| RegexBuilder::new(p).case_insensitive(true).build())
            .collect::<Result<_, _>>()?;
        Ok(RefusalDetector { patterns })
    }

    /// Whether any pattern matches the answer.
    pub(crate) fn is_refusal(&self, answer: &str) -> bool {
        let text = answer.replace(['\u{2019}', '\u{2018}'], "'");
        self.patterns.iter().any(|re| re.is_match(&text))
    }
}

/// More words than this make an answer "rambling" (a short-answer task's counted problem).
pub(crate) const DEFAULT_MAX_ANSWER_WORDS: usize = 60;

/// What is wrong with an answer, if anything, in this order: `empty_answer` (only whitespace),
/// `refusal` (the detector matches), `rambling` (more than `max_words` whitespace-separated
/// words). The reasons are [`crate::TaskOutcome`]'s problem counters.
pub(crate) fn answer_problem(
    answer: &str,
    detector: &RefusalDetector,
    max_words: usize,
) -> Option<&'static str> {
    if answer.trim().is_empty() {
        Some("empty_answer")
    } else if detector.is_refusal(answer) {
        Some("refusal")
    } else if answer.split_whitespace().count() > max_words {
        Some("rambling")
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// The `answer_judge` task
// ---------------------------------------------------------------------------------------------

/// `answer_judge`'s input: the prompt's variables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct JudgeInput {
    pub question: String,
    pub gold_answer: String,
    pub prediction: String,
}

/// `answer_judge`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JudgeOutput {
    pub correct: bool,
}

/// `answer_judge` (RARE 6.1 second stage, Appendix F): does the prediction carry the gold
/// answer's information? Prompt: `pipelines/prompts/answer_judge.md`.
///
/// Offline rule (deterministic):
///
/// | case | rule |
/// |---|---|
/// | the gold answer has numbers | correct when every gold number is among the prediction's numbers, compared as values (`1 million` = `1,000,000` = `1000000`, `2.5bn` = `2.5 billion`; `one`..`twelve` read as numbers), and every other content word of the gold but a currency or percent word (`dollars`, `usd`, `percent`, ...) is in the prediction |
/// | otherwise | correct when every content word of the normalised gold is in the normalised prediction, or when the prediction's content words are all in the gold and number at least 80% of the gold's |
/// | neither has content words | correct when the normalised strings are equal and not empty |
///
/// Content words: the words of [`normalize`] that are not stopwords (of any length, so `UK`
/// and `5G` count).
pub(crate) struct AnswerJudge;

impl Task for AnswerJudge {
    const NAME: &'static str = "answer_judge";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = JudgeInput;
    type Output = JudgeOutput;
    /// Not probed by the preflight; the fuzz seed and the wiring tests' input.
    fn example() -> Option<JudgeInput> {
        serde_json::from_str(
            r#"{"question":"Who is the CEO of Apple?","gold_answer":"Tim Cook","prediction":"Tim Cook is."}"#,
        )
        .ok()
    }

    fn offline(input: &JudgeInput) -> JudgeOutput {
        JudgeOutput {
            correct: offline_judge(&input.gold_answer, &input.prediction),
        }
    }
}

/// The tasks [`judge_answers`] may call.
pub const JUDGE_TASKS: &[TaskInfo] = &[TaskInfo::of::<AnswerJudge>()];

/// Scale words that multiply the number before them.
fn multiplier(word: &str) -> Option<f64> {
    Some(match word {
        "thousand" | "k" => 1e3,
        "million" | "millions" | "mn" | "m" | "mio" => 1e6,
        "billion" | "billions" | "bn" | "b" => 1e9,
        "trillion" | "trillions" | "tn" => 1e12,
        _ => return None,
    })
}

fn small_number(word: &str) -> Option<f64> {
    // One to twenty are their positions; past twenty, "thirty" is read as a word, not 21.
    noisebench_text::CARDINALS[..=20]
        .iter()
        .position(|w| *w == word)
        .map(|i| i as f64)
}

/// A number written as one word: `42`, `3.5`, `2.5bn`, `10k`, `seven`.
fn number_word(word: &str) -> Option<f64> {
    if let Ok(v) = word.parse::<f64>() {
        return v.is_finite().then_some(v);
    }
    if let Some(v) = small_number(word) {
        return Some(v);
    }
    let split = word.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = word.split_at(split);
    let v: f64 = num.parse().ok()?;
    Some(v * multiplier(unit)?)
}

/// The numbers of a normalised text (a scale word after a number multiplies it) and its other
/// words, in order.
fn numbers_and_words(normalized: &str) -> (Vec<f64>, Vec<String>) {
    let words: Vec<&str> = normalized.split_whitespace().collect();
    let (mut numbers, mut rest) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < words.len() {
        if let Some(mut v) = number_word(words[i]) {
            if let Some(m) = words.get(i + 1).and_then(|w| multiplier(w)) {
                v *= m;
                i += 1;
            }
            numbers.push(v);
        } else {
            rest.push(words[i].to_string());
        }
        i += 1;
    }
    (numbers, rest)
}

/// Currency and percent words, which a number may carry or not.
fn is_unit(word: &str) -> bool {
    matches!(
        word,
        "dollar" | "dollars" | "usd" | "euro" | "euros" | "eur" | "percent" | "pct"
    )
}

fn same_number(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn content(words: &[String]) -> BTreeSet<&str> {
    words
        .iter()
        .map(String::as_str)
        .filter(|w| !is_stopword(w))
        .collect()
}

/// [`AnswerJudge`]'s offline rule.
fn offline_judge(gold: &str, prediction: &str) -> bool {
    let (g, p) = (normalize(gold), normalize(prediction));
    let (g_numbers, g_words) = numbers_and_words(&g);
    let (p_numbers, p_words) = numbers_and_words(&p);
    let (gc, pc) = (content(&g_words), content(&p_words));
    if !g_numbers.is_empty() {
        let numbers_found = g_numbers
            .iter()
            .all(|a| p_numbers.iter().any(|b| same_number(*a, *b)));
        // `$5` and `5 dollars` state the same amount; the symbol is gone after normalising.
        let words_found = gc.iter().filter(|w| !is_unit(w)).all(|w| pc.contains(w));
        return numbers_found && words_found;
    }
    if gc.is_empty() {
        return !g.is_empty() && g == p;
    }
    if gc.is_subset(&pc) {
        return true;
    }
    !pc.is_empty() && pc.is_subset(&gc) && pc.len() as f64 >= 0.8 * gc.len() as f64
}

// ---------------------------------------------------------------------------------------------
// The two-stage judge
// ---------------------------------------------------------------------------------------------

/// One open answer to judge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeItem {
    pub question: String,
    pub gold: String,
    pub prediction: String,
}

/// The verdict on one [`JudgeItem`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// `None` only when the judge call failed.
    pub correct: Option<bool>,
    /// `refusal`, `empty`, `exact`, `inclusive`, `llm:<provenance>` (`llm:offline`,
    /// `llm:openai:<model>`) or `failed`.
    pub judged_by: String,
    pub refusal: bool,
    /// `llm_<reason>` when the judge call failed.
    pub failure: Option<String>,
}

impl Judgement {
    fn decided(correct: bool, by: &str) -> Judgement {
        Judgement {
            correct: Some(correct),
            judged_by: by.into(),
            refusal: false,
            failure: None,
        }
    }
}

/// Judges open answers in two stages (RARE 6.1). Per item, the first that applies: a normalised
/// exact match is right (`exact`, even when it reads like a refusal); a refusal (the detector
/// matches) is wrong, judged by `refusal`; an empty prediction is wrong (`empty`);
/// a `lexical_match` is right (`exact` / `inclusive`). The items left go to `answer_judge` in
/// ONE batch, so the model sees only what the lexical stage could not decide; a failed call
/// leaves the item unscored (`correct: None`, `failed`, `llm_<reason>`). Results are in the
/// items' order.
pub fn judge_answers(
    llm: &Llm,
    stage: &str,
    items: &[JudgeItem],
    refusal: &RefusalDetector,
) -> Vec<Judgement> {
    let mut out: Vec<Option<Judgement>> = Vec::with_capacity(items.len());
    let mut pending: Vec<usize> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let exact = lexical_match(&item.prediction, &item.gold) == Some(LexicalMatch::Exact);
        let decided = if exact {
            // An exact match wins over the refusal patterns: a gold answer may itself read like
            // one ("Unknown Pleasures").
            Some(Judgement::decided(true, LexicalMatch::Exact.as_str()))
        } else if refusal.is_refusal(&item.prediction) {
            Some(Judgement {
                refusal: true,
                ..Judgement::decided(false, "refusal")
            })
        } else if item.prediction.trim().is_empty() {
            Some(Judgement::decided(false, "empty"))
        } else {
            lexical_match(&item.prediction, &item.gold)
                .map(|m| Judgement::decided(true, m.as_str()))
        };
        if decided.is_none() {
            pending.push(i);
        }
        out.push(decided);
    }
    if !pending.is_empty() {
        let inputs = pending
            .iter()
            .map(|&i| JudgeInput {
                question: items[i].question.clone(),
                gold_answer: items[i].gold.clone(),
                prediction: items[i].prediction.clone(),
            })
            .collect();
        let answers = llm.run_batch::<AnswerJudge>(stage, inputs);
        for (&i, answer) in pending.iter().zip(answers) {
            out[i] = Some(match answer {
                Ok(a) => Judgement::decided(a.value.correct, &format!("llm:{}", a.provenance)),
                Err(e) => Judgement {
                    correct: None,
                    judged_by: "failed".into(),
                    refusal: false,
                    failure: Some(format!("llm_{}", e.reason())),
                },
            });
        }
    }
    out.into_iter()
        .map(|j| {
            // `run_batch` answers every input; a missing one would be an engine bug, reported
            // as a failure rather than a panic.
            j.unwrap_or_else(|| Judgement {
                correct: None,
                judged_by: "failed".into(),
                refusal: false,
                failure: Some("llm_internal_error".into()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use noisebench_llm::prompt::Prompts;
    use proptest::prelude::*;

    fn prompts() -> Prompts {
        Prompts::in_dir(&noisebench_testkit::repo_root().join("pipelines/prompts"))
    }

    #[test]
    fn binary_answers_are_strict() {
        for (a, want) in [
            ("True.", Some(true)),
            ("  false ", Some(false)),
            ("\"TRUE\"", Some(true)),
            ("`false`", Some(false)),
            ("**True**", Some(true)),
            ("Answer: true", Some(true)),
            ("Final Answer: False.", Some(false)),
            ("final answer: \"true\"!", Some(true)),
            ("It is true", None),
            ("true or false", None),
            ("", None),
            ("   ", None),
            ("Answer:", None),
            ("truee", None),
            ("True, because the passages say so.", None),
        ] {
            assert_eq!(parse_binary(a, "true", "false"), want, "{a:?}");
        }
        assert_eq!(parse_binary("Final Answer: yes", "Yes", "No"), Some(true));
        assert_eq!(parse_binary("NO", "yes", "no"), Some(false));
        assert_eq!(parse_binary("yes", "true", "false"), None);
    }

    proptest! {
        #[test]
        fn a_binary_parse_is_some_only_for_one_of_the_two_words(
            pre in prop::sample::select(vec!["", " ", "\"", "`", "Answer: ", "final answer:", "It is "]),
            word in prop::sample::select(vec!["true", "False", "TRUE", "yes", "maybe", "", "true false"]),
            post in prop::sample::select(vec!["", ".", "!", "\"", " ", " indeed", "?\n"]),
        ) {
            let answer = format!("{pre}{word}{post}");
            let parsed = parse_binary(&answer, "true", "false");
            let core = binary_core(&answer);
            prop_assert_eq!(parsed.is_some(), core == "true" || core == "false");
            if let Some(b) = parsed {
                prop_assert_eq!(b, core == "true");
            }
        }
    }

    #[test]
    fn normalisation() {
        assert_eq!(normalize("The  U.S. Army!"), "us army");
        assert_eq!(normalize("1,000,000"), "1000000");
        assert_eq!(normalize("$84,263 million"), "84263 million");
        assert_eq!(normalize("3.5%"), "3.5");
        assert_eq!(normalize("An apple, a pear"), "apple pear");
        assert_eq!(normalize("Société Générale «SA»"), "société générale sa");
        assert_eq!(normalize("co-founder/CEO"), "co founder ceo");
        assert_eq!(normalize("Theatre a-b"), "theatre b");
        assert_eq!(normalize("  ...  "), "");
        assert_eq!(normalize("1,5 and x,y"), "15 and xy");
    }

    #[test]
    fn lexical_matches() {
        use LexicalMatch::*;
        assert_eq!(
            lexical_match("The Boeing Company.", "boeing company"),
            Some(Exact)
        );
        assert_eq!(lexical_match("$1,000,000", "1000000"), Some(Exact));
        assert_eq!(
            lexical_match("It was Boeing Company in 2020", "Boeing Company"),
            Some(Inclusive)
        );
        // Word boundaries: "boeing" is not in "boeingco".
        assert_eq!(lexical_match("Boeingco", "Boeing"), None);
        // The prediction inside the gold: at least 2 words and half of the gold's words.
        assert_eq!(
            lexical_match("Westgate Basin", "the Westgate Basin terminal"),
            Some(Inclusive)
        );
        assert_eq!(lexical_match("Westgate", "Westgate Basin"), None);
        assert_eq!(lexical_match("the", "the Westgate Basin"), None);
        assert_eq!(lexical_match("Inc", "Apple Inc"), None);
        assert_eq!(
            lexical_match("Apple Inc", "Apple Inc of Cupertino California"),
            None
        );
        assert_eq!(lexical_match("", "x"), None);
        assert_eq!(lexical_match("the", "a"), None);
    }

    #[test]
    fn refusals_and_problems() {
        let d = RefusalDetector::new(&RefusalConfig::default()).unwrap();
        for r in [
            "I don't know.",
            "I don’t know",
            "The passages do not mention it.",
            "The context doesn't say.",
            "Cannot be determined from the context",
            "There is not enough information to answer.",
            "Insufficient context.",
            "No such info",
            "Unknown",
            "The amount is not specified.",
            crate::generate::OFFLINE_REFUSAL,
        ] {
            assert!(d.is_refusal(r), "{r:?}");
        }
        for a in [
            "Boeing",
            "No",
            "no",
            "false",
            "The known unknowns",
            "Northwind Logistics",
        ] {
            assert!(!d.is_refusal(a), "{a:?}");
        }
        assert!(
            RefusalDetector::new(&RefusalConfig {
                patterns: vec!["(".into()]
            })
            .is_err()
        );
        let long = "word ".repeat(DEFAULT_MAX_ANSWER_WORDS + 1);
        assert_eq!(answer_problem(" \n", &d, 60), Some("empty_answer"));
        assert_eq!(answer_problem("I do not know", &d, 60), Some("refusal"));
        assert_eq!(
            answer_problem(&long, &d, DEFAULT_MAX_ANSWER_WORDS),
            Some("rambling")
        );
        assert_eq!(answer_problem("Boeing", &d, 60), None);
        let words60 = "word ".repeat(60);
        assert_eq!(answer_problem(&words60, &d, 60), None);
    }

    #[test]
    fn the_offline_judge_compares_numbers_and_content_words() {
        for (gold, pred, want) in [
            ("1 million", "1,000,000", true),
            ("1,000,000", "one million", true),
            ("$84,263 million", "84263 million dollars", true),
            ("84,263 thousand dollars", "$84,263 thousand", true),
            ("12 percent", "12%", true),
            ("2.5 billion", "$2.5bn", true),
            ("10k", "10,000", true),
            ("1 million", "2 million", false),
            ("$5 million in revenue", "5,000,000", false),
            ("2019", "In fiscal 2019 and 2020", true),
            ("Westgate Basin", "the basin called Westgate", true),
            ("Westgate Basin terminal", "Westgate", false),
            // 4 of 5 gold content words (80%), nothing extra.
            (
                "Calder Port Authority Riga Harbour",
                "Calder Port Authority Riga",
                true,
            ),
            (
                "Calder Port Authority Riga Harbour",
                "Calder Port Authority",
                false,
            ),
            ("Boeing", "Airbus", false),
            ("it", "it", true),
            ("it", "this", false),
        ] {
            assert_eq!(offline_judge(gold, pred), want, "{gold:?} vs {pred:?}");
        }
    }

    #[test]
    fn the_judge_task_renders_and_answers_offline() {
        let input = JudgeInput {
            question: "How much did Calder Port Authority borrow in 2023?".into(),
            gold_answer: "$1,000,000".into(),
            prediction: "It borrowed 1 million dollars.".into(),
        };
        let json =
            noisebench_llm::task::offline_self_check::<AnswerJudge>(&prompts(), input).unwrap();
        assert_eq!(json, r#"{"correct":true}"#);
    }

    #[test]
    fn the_two_stage_judge_offline() {
        let d = RefusalDetector::new(&RefusalConfig::default()).unwrap();
        let item = |gold: &str, pred: &str| JudgeItem {
            question: "q?".into(),
            gold: gold.into(),
            prediction: pred.into(),
        };
        let items = [
            item("Boeing", "I don't know"),
            item("Boeing", "  "),
            item("Boeing", "boeing."),
            item("Boeing", "It is Boeing."),
            item("1 million", "1,000,000 dollars"),
            item("Boeing", "Airbus"),
        ];
        let got = judge_answers(&Llm::offline(), "judge", &items, &d);
        let by: Vec<&str> = got.iter().map(|j| j.judged_by.as_str()).collect();
        assert_eq!(
            by,
            [
                "refusal",
                "empty",
                "exact",
                "inclusive",
                "llm:offline",
                "llm:offline"
            ]
        );
        let correct: Vec<Option<bool>> = got.iter().map(|j| j.correct).collect();
        assert_eq!(
            correct,
            [
                Some(false),
                Some(false),
                Some(true),
                Some(true),
                Some(true),
                Some(false)
            ]
        );
        assert!(got[0].refusal && !got[1].refusal);
        assert!(got.iter().all(|j| j.failure.is_none()));
    }
}
