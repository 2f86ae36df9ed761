//! The perturbation stages' LLM tasks and their offline rules:
//!
//! - `query_grammar` (`pipelines/prompts/query_grammar.md`): rewrites that change only grammar,
//!   punctuation or word order. Offline: a trailing prepositional phrase fronted ("In 2022, what
//!   ...?"), an indirect question ("Can you tell me what ...?"), a statement form ("I would like
//!   to know what ...").
//! - `query_irrelevant` (`pipelines/prompts/query_irrelevant.md`): rewrites adding one on-topic
//!   detail that leaves the answer alone. Offline: a lead-in clause from a fixed list, the first
//!   one picked by a hash of the query.
//! - `back_translate` (`pipelines/prompts/back_translate.md`): a passage into a pivot language and
//!   back into English in one call. Offline: no translation; the "back-translation" is the
//!   passage with common phrases swapped for equivalents ("due to" -> "because of"), the pivot
//!   a tagged copy of the passage.

use std::sync::OnceLock;

use noisebench_llm::sense::{self, Fidelity, Sense, Senseless};
use noisebench_llm::{ItemBounds, Task, TaskInfo};
use serde::{Deserialize, Serialize};

/// The query stage's tasks: its fingerprint covers these.
pub const QUERY_TASKS: &[TaskInfo] = &[
    TaskInfo::of::<QueryGrammar>(),
    TaskInfo::of::<QueryIrrelevant>(),
];
/// The document stage's tasks.
pub const DOCUMENT_TASKS: &[TaskInfo] = &[TaskInfo::of::<BackTranslate>()];

/// The input of both query rewrite tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewriteInput {
    /// The question as written.
    pub query: String,
    /// How many rewrites to ask for.
    pub candidates: usize,
}

/// The answer of both query rewrite tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rewrites {
    pub rewrites: Vec<String>,
}

/// The rewrites' item bounds, the schema's and the check's: one at least, at most three times
/// the candidates asked for (a model may offer more; the stage keeps `candidates`).
fn rewrite_bounds(input: &RewriteInput) -> Vec<ItemBounds> {
    vec![ItemBounds {
        field: "rewrites",
        min: 1,
        max: input.candidates.max(1) * 3,
    }]
}

/// An answer with no usable rewrite is re-asked.
fn check_rewrites(o: &Rewrites) -> Result<(), String> {
    if o.rewrites.iter().all(|r| r.trim().is_empty()) {
        return Err("`rewrites` holds no rewrite".into());
    }
    Ok(())
}

/// What a grammar rewrite keeps of its question: about its length, and most of its words.
pub(crate) const GRAMMAR_FIDELITY: Fidelity = Fidelity {
    min_length_ratio: 0.6,
    max_length_ratio: 2.0,
    min_kept: 0.6,
};
/// What an irrelevant-information rewrite keeps: the question's words, with a detail added (up
/// to four times the question's length).
pub(crate) const IRRELEVANT_FIDELITY: Fidelity = Fidelity {
    min_length_ratio: 0.8,
    max_length_ratio: 4.0,
    min_kept: 0.6,
};
/// What a back-translation keeps of its passage: about its length, and enough of its words
/// (names, figures, terms) that the meaning is the passage's. A one-word "translation" fails.
pub(crate) const TRANSLATION_FIDELITY: Fidelity = Fidelity {
    min_length_ratio: 0.5,
    max_length_ratio: 2.0,
    min_kept: 0.35,
};

/// Whether `rewrite` keeps what `fidelity` asks of `source` ([`sense::faithful`]).
pub(crate) fn faithful_rewrite(
    fidelity: Fidelity,
    source: &str,
    rewrite: &str,
) -> Result<(), Senseless> {
    // Each text split into words once: its length and its content words.
    let (source, rewrite) = (
        noisebench_text::words(source),
        noisebench_text::words(rewrite),
    );
    sense::faithful(
        "the rewrite",
        fidelity,
        (source.len(), rewrite.len()),
        &noisebench_text::content_of(source),
        &noisebench_text::content_of(rewrite),
    )
}

/// A rewrite list none of whose rewrites keeps its question's length and words
/// (`length_changed`, `meaning_lost`; a list about something else keeps none of them) is
/// dropped; the stage keeps only the faithful rewrites of a list ([`faithful_rewrite`]).
fn sense_rewrites(fidelity: Fidelity, input: &RewriteInput, o: &Rewrites) -> Result<(), Senseless> {
    let mut first = None;
    for r in o.rewrites.iter().filter(|r| !r.trim().is_empty()) {
        match faithful_rewrite(fidelity, &input.query, r) {
            Ok(()) => return Ok(()),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
    }
    match first {
        Some(e) => Err(Senseless {
            detail: format!("no rewrite is faithful; the first: {}", e.detail),
            ..e
        }),
        None => Ok(()),
    }
}

/// Two questions about different things: the rewrite tasks' preflight inputs.
fn rewrite_examples() -> Vec<RewriteInput> {
    [
        "Which company did Harbour Freight Group acquire in 2023?",
        "How many people does the Eastline rail project employ?",
    ]
    .iter()
    .map(|q| RewriteInput {
        query: (*q).into(),
        candidates: 3,
    })
    .collect()
}

/// `query_grammar`: grammar, punctuation and word-order rewrites.
pub struct QueryGrammar;

impl Task for QueryGrammar {
    const NAME: &'static str = "query_grammar";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = RewriteInput;
    type Output = Rewrites;

    fn bounds(input: &RewriteInput) -> Vec<ItemBounds> {
        rewrite_bounds(input)
    }

    fn check(_: &RewriteInput, o: &Rewrites) -> Result<(), String> {
        check_rewrites(o)
    }

    fn sense(input: &RewriteInput, o: &Rewrites) -> Result<(), Senseless> {
        sense_rewrites(GRAMMAR_FIDELITY, input, o)
    }

    fn examples() -> Vec<RewriteInput> {
        rewrite_examples()
    }

    fn offline(input: &RewriteInput) -> Rewrites {
        let q = input.query.trim();
        let body = q.trim_end_matches(['?', '.', '!']).trim_end();
        let lower = lower_question_word(body);
        let mut rewrites = Vec::new();
        if let Some(fronted) = fronted(body) {
            rewrites.push(fronted);
        }
        rewrites.push(format!("Can you tell me {lower}?"));
        rewrites.push(format!("I would like to know {lower}."));
        rewrites.truncate(input.candidates.max(1));
        Rewrites { rewrites }
    }
}

/// Words that may open a trailing phrase the grammar rule fronts.
const PREPOSITIONS: &[&str] = &[
    "in", "during", "for", "at", "by", "on", "from", "under", "within", "after", "before",
];

/// The question with a short trailing prepositional phrase (at most four words, in its second
/// half) moved to the front: "What did X pay in 2022" gives "In 2022, what did X pay?".
fn fronted(body: &str) -> Option<String> {
    let words: Vec<&str> = body.split(' ').collect();
    let at = (words.len() / 2..words.len() - 1)
        .rev()
        .find(|&i| PREPOSITIONS.contains(&words[i]) && i > 0)?;
    if words.len() - at > 4 {
        return None;
    }
    let phrase = words[at..].join(" ");
    let rest = words[..at].join(" ");
    Some(format!(
        "{}, {}?",
        noisebench_text::upper_first(&phrase),
        lower_question_word(rest.trim_end_matches(','))
    ))
}

/// The text with its first word lowercased when that word is a question or auxiliary word
/// (a name keeps its capital).
fn lower_question_word(text: &str) -> String {
    const OPENERS: &[&str] = &[
        "What", "Which", "Who", "Whom", "Whose", "How", "When", "Where", "Why", "Did", "Does",
        "Do", "Is", "Are", "Was", "Were", "Has", "Have", "Had", "Can", "Could", "Will", "Would",
        "Should", "In", "On", "At", "By", "For", "From", "During", "Under", "The", "A", "An",
    ];
    let first = text.split(' ').next().unwrap_or("");
    if OPENERS.contains(&first) {
        let mut c = text.chars();
        c.next()
            .map(|f| f.to_lowercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    } else {
        text.to_string()
    }
}

/// `query_irrelevant`: rewrites adding an on-topic detail that does not change the answer.
pub struct QueryIrrelevant;

/// The offline rule's lead-in clauses: circumstances of asking, never facts of the answer.
const LEAD_INS: &[&str] = &[
    "As part of a review of this year's annual filings,",
    "For a briefing I am preparing for our board,",
    "While comparing several reports from the same sector,",
    "Setting aside the market commentary in the press,",
    "For a course assignment on reading corporate disclosures,",
    "Having read the management discussion twice already,",
    "Before a meeting with our auditors next week,",
];

impl Task for QueryIrrelevant {
    const NAME: &'static str = "query_irrelevant";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = RewriteInput;
    type Output = Rewrites;

    fn bounds(input: &RewriteInput) -> Vec<ItemBounds> {
        rewrite_bounds(input)
    }

    fn check(_: &RewriteInput, o: &Rewrites) -> Result<(), String> {
        check_rewrites(o)
    }

    fn sense(input: &RewriteInput, o: &Rewrites) -> Result<(), Senseless> {
        sense_rewrites(IRRELEVANT_FIDELITY, input, o)
    }

    fn examples() -> Vec<RewriteInput> {
        rewrite_examples()
    }

    fn offline(input: &RewriteInput) -> Rewrites {
        let q = input.query.trim();
        let start = (fnv(q) % LEAD_INS.len() as u64) as usize;
        let n = input.candidates.clamp(1, LEAD_INS.len());
        let rewrites = (0..n)
            .map(|i| {
                let lead = LEAD_INS[(start + i) % LEAD_INS.len()];
                format!("{lead} {}", lower_question_word(q))
            })
            .collect();
        Rewrites { rewrites }
    }
}

/// FNV-1a: a hash that is the same on every machine and run (std's is not).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `back_translate`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackTranslateInput {
    /// The passage (a chunk's text).
    pub text: String,
    /// The pivot language, in English ("French").
    pub pivot_language: String,
}

/// `back_translate`'s answer: the pivot translation and the English back-translation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackTranslation {
    pub pivot: String,
    pub text: String,
}

/// `back_translate`: English -> pivot -> English.
pub struct BackTranslate;

/// The offline rule's phrase swaps, as a back-translation might reword them.
const SWAPS: &[(&str, &str)] = &[
    ("due to", "because of"),
    ("approximately", "about"),
    ("primarily", "mainly"),
    ("in addition", "additionally"),
    ("compared to", "compared with"),
    ("as a result of", "following"),
    ("however", "nevertheless"),
    ("increased", "rose"),
    ("decreased", "fell"),
    ("purchase", "acquisition"),
    ("in order to", "to"),
    ("we believe", "we think"),
    ("significant", "considerable"),
    ("additional", "further"),
];

/// The checks of [`crate::document::translation_rejection`] that depend on the texts alone (once per chunk).
pub(crate) fn language_rejection(original: &str, translated: &str) -> Option<&'static str> {
    if !translated.chars().any(char::is_alphanumeric) {
        return Some("empty_translation");
    }
    // Reliably not English, and not merely the language the original itself reads as (a table
    // of names and figures can read as anything).
    if let Some(info) = whatlang::detect(translated)
        && info.lang() != whatlang::Lang::Eng
        && info.is_reliable()
        && whatlang::detect_lang(original) != Some(info.lang())
    {
        return Some("wrong_language");
    }
    // Whatever the language check could tell (a short text is too short to detect), a
    // back-translation keeps the passage's length and most of its words.
    if let Err(e) = faithful_rewrite(TRANSLATION_FIDELITY, original, translated) {
        return Some(e.sense.code());
    }
    None
}

impl Task for BackTranslate {
    const NAME: &'static str = "back_translate";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = BackTranslateInput;
    type Output = BackTranslation;

    /// The back-translation must come back in the passage's language (English, or whatever
    /// the passage itself reads as): `wrong_language`, the stage's own rule
    /// (`document::translation_rejection`) applied to the model's answer so that it
    /// counts against the model; and keep the passage's length and words
    /// (`TRANSLATION_FIDELITY`: `length_changed`, `meaning_lost`), whatever its length (a
    /// text too short for the language check is still judged). An empty text stays the
    /// stage's counted drop.
    fn sense(input: &BackTranslateInput, o: &BackTranslation) -> Result<(), Senseless> {
        if !o.text.chars().any(char::is_alphanumeric) {
            return Ok(());
        }
        if language_rejection(&input.text, &o.text) == Some("wrong_language") {
            return Err(Sense::WrongLanguage.because(format!(
                "the back-translation reads as {}, not as the passage's language",
                whatlang::detect_lang(&o.text).map_or("unknown", |l| l.eng_name())
            )));
        }
        faithful_rewrite(TRANSLATION_FIDELITY, &input.text, &o.text)
    }

    /// The pivot and the back-translation: each about as long as the passage, and room for
    /// longer wording (twice the passage's tokens and a third more, and 64 for the JSON).
    fn answer_tokens(input: &BackTranslateInput) -> Option<u64> {
        let n = noisebench_llm::count_tokens(&input.text);
        Some(n * 2 + n * 2 / 3 + 64)
    }

    /// Two short passages about different things.
    fn examples() -> Vec<BackTranslateInput> {
        [
            "Harbour Freight Group acquired Calder Port Services in 2023 for $96 million. The deal added 14 warehouses in Ontario.",
            "The Eastline rail project employs 420 people. The Ministry of Transport funds it until 2026.",
        ]
        .iter()
        .map(|t| BackTranslateInput {
            text: (*t).into(),
            pivot_language: "French".into(),
        })
        .collect()
    }

    fn offline(input: &BackTranslateInput) -> BackTranslation {
        static RE: OnceLock<regex::Regex> = OnceLock::new();
        let re = RE.get_or_init(|| {
            let alternatives: Vec<String> = SWAPS.iter().map(|(a, _)| regex::escape(a)).collect();
            // The alternatives are escaped literals: the pattern always compiles.
            regex::RegexBuilder::new(&format!(r"\b(?:{})\b", alternatives.join("|")))
                .case_insensitive(true)
                .build()
                .expect("escaped literals form a valid pattern")
        });
        let text = re
            .replace_all(&input.text, |c: &regex::Captures<'_>| {
                let found = &c[0];
                let to = SWAPS
                    .iter()
                    .find(|(a, _)| a.eq_ignore_ascii_case(found))
                    .map_or(found, |(_, b)| *b);
                if found.starts_with(|c: char| c.is_uppercase()) {
                    noisebench_text::upper_first(to)
                } else {
                    to.to_string()
                }
            })
            .into_owned();
        BackTranslation {
            pivot: format!("[{}] {}", input.pivot_language, input.text),
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use noisebench_llm::prompt::Prompts;
    use noisebench_llm::task::offline_self_check;

    fn prompts() -> Prompts {
        Prompts::in_dir(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts"),
        )
    }

    fn ask(query: &str, candidates: usize) -> RewriteInput {
        RewriteInput {
            query: query.into(),
            candidates,
        }
    }

    #[test]
    fn grammar_offline_rule_fronts_asks_indirectly_and_states() {
        let json = offline_self_check::<QueryGrammar>(
            &prompts(),
            ask("What dividend did Northwind Logistics pay in 2022?", 3),
        )
        .unwrap();
        assert_eq!(
            json,
            r#"{"rewrites":["In 2022, what dividend did Northwind Logistics pay?","Can you tell me what dividend did Northwind Logistics pay in 2022?","I would like to know what dividend did Northwind Logistics pay in 2022."]}"#
        );
        // No trailing phrase to front: two rewrites; asked for one: one.
        let two = QueryGrammar::offline(&ask("Who owns Eastgate Terminal?", 3));
        assert_eq!(two.rewrites.len(), 2);
        assert_eq!(
            QueryGrammar::offline(&ask("Who owns it?", 1))
                .rewrites
                .len(),
            1
        );
    }

    #[test]
    fn irrelevant_offline_rule_adds_a_lead_in_picked_by_hash() {
        let json = offline_self_check::<QueryIrrelevant>(
            &prompts(),
            ask("Which company acquired Baltic Freight Lines?", 3),
        )
        .unwrap();
        let out: Rewrites = serde_json::from_str(&json).unwrap();
        assert_eq!(out.rewrites.len(), 3);
        for r in &out.rewrites {
            assert!(
                r.ends_with(", which company acquired Baltic Freight Lines?"),
                "{r}"
            );
        }
        let other = QueryIrrelevant::offline(&ask("Who owns Eastgate Terminal?", 1));
        assert!(other.rewrites[0].ends_with(", who owns Eastgate Terminal?"));
    }

    #[test]
    fn back_translate_offline_rule_rewords_and_keeps_facts() {
        let json = offline_self_check::<BackTranslate>(
            &prompts(),
            BackTranslateInput {
                text: "Revenue increased 8% to $394 million, primarily due to higher volumes. However, costs were stable.".into(),
                pivot_language: "French".into(),
            },
        )
        .unwrap();
        let out: BackTranslation = serde_json::from_str(&json).unwrap();
        assert_eq!(
            out.text,
            "Revenue rose 8% to $394 million, mainly because of higher volumes. Nevertheless, costs were stable."
        );
        assert!(out.pivot.starts_with("[French] "));
    }

    #[test]
    fn rewrite_checks_refuse_empty_and_runaway_answers() {
        use noisebench_llm::task::check_answer;
        let input = ask("Who?", 3);
        let answer = |r: &[&str]| Rewrites {
            rewrites: r.iter().map(|s| s.to_string()).collect(),
        };
        assert!(check_answer::<QueryGrammar>(&input, &answer(&["", " "])).is_err());
        assert!(check_answer::<QueryGrammar>(&input, &answer(&["a"; 10])).is_err());
        assert!(check_answer::<QueryGrammar>(&input, &answer(&[])).is_err());
        assert!(check_answer::<QueryIrrelevant>(&input, &answer(&["", "Who, then?"])).is_ok());
    }

    /// Every task's schema and check agree on item counts, and the preflight examples' offline
    /// answers pass every check.
    #[test]
    fn schemas_and_checks_agree() {
        use noisebench_llm::task::schema_self_check;
        let prompts = prompts();
        for input in QueryGrammar::examples() {
            schema_self_check::<QueryGrammar>(&prompts, &input, &QueryGrammar::offline(&input))
                .unwrap();
            schema_self_check::<QueryIrrelevant>(
                &prompts,
                &input,
                &QueryIrrelevant::offline(&input),
            )
            .unwrap();
            offline_self_check::<QueryGrammar>(&prompts, input.clone()).unwrap();
            offline_self_check::<QueryIrrelevant>(&prompts, input).unwrap();
        }
        for input in BackTranslate::examples() {
            offline_self_check::<BackTranslate>(&prompts, input).unwrap();
        }
    }
}
