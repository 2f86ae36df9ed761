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

use noisebench_llm::sense::{self, Sense, Senseless};
use noisebench_llm::{Task, TaskInfo};
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

/// An answer with no usable rewrite, or a runaway list, is re-asked.
fn check_rewrites(input: &RewriteInput, o: &Rewrites) -> Result<(), String> {
    if o.rewrites.iter().all(|r| r.trim().is_empty()) {
        return Err("`rewrites` holds no rewrite".into());
    }
    if o.rewrites.len() > input.candidates.max(1) * 3 {
        return Err(format!(
            "`rewrites` has {} items, asked for {}",
            o.rewrites.len(),
            input.candidates
        ));
    }
    Ok(())
}

/// A rewrite list none of whose rewrites shares a content word with the question is about
/// something else: `off_topic`.
fn sense_rewrites(input: &RewriteInput, o: &Rewrites) -> Result<(), Senseless> {
    let query = noisebench_text::content_words(&input.query);
    if o.rewrites
        .iter()
        .any(|r| sense::on_topic("a rewrite", &noisebench_text::content_words(r), &query).is_ok())
    {
        return Ok(());
    }
    sense::on_topic(
        "every rewrite",
        &noisebench_text::content_words(&o.rewrites.join(" ")),
        &query,
    )
}

/// `query_grammar`: grammar, punctuation and word-order rewrites.
pub struct QueryGrammar;

impl Task for QueryGrammar {
    const NAME: &'static str = "query_grammar";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = RewriteInput;
    type Output = Rewrites;

    fn check(input: &RewriteInput, o: &Rewrites) -> Result<(), String> {
        check_rewrites(input, o)
    }

    fn sense(input: &RewriteInput, o: &Rewrites) -> Result<(), Senseless> {
        sense_rewrites(input, o)
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

    fn check(input: &RewriteInput, o: &Rewrites) -> Result<(), String> {
        check_rewrites(input, o)
    }

    fn sense(input: &RewriteInput, o: &Rewrites) -> Result<(), Senseless> {
        sense_rewrites(input, o)
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

impl Task for BackTranslate {
    const NAME: &'static str = "back_translate";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = BackTranslateInput;
    type Output = BackTranslation;

    /// The back-translation must come back in the passage's language (English, or whatever
    /// the passage itself reads as): `wrong_language`, the stage's own rule
    /// ([`crate::document::translation_rejection`]) applied to the model's answer so that it
    /// counts against the model. An empty text stays the stage's counted drop.
    fn sense(input: &BackTranslateInput, o: &BackTranslation) -> Result<(), Senseless> {
        match crate::document::translation_rejection(&input.text, &o.text, "") {
            Some("wrong_language") => Err(Sense::WrongLanguage.because(format!(
                "the back-translation reads as {}, not as the passage's language",
                whatlang::detect_lang(&o.text).map_or("unknown", |l| l.eng_name())
            ))),
            _ => Ok(()),
        }
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
        let input = ask("Who?", 3);
        let answer = |r: &[&str]| Rewrites {
            rewrites: r.iter().map(|s| s.to_string()).collect(),
        };
        assert!(QueryGrammar::check(&input, &answer(&["", " "])).is_err());
        assert!(QueryGrammar::check(&input, &answer(&["a"; 10])).is_err());
        assert!(QueryIrrelevant::check(&input, &answer(&["", "Who, then?"])).is_ok());
    }
}
