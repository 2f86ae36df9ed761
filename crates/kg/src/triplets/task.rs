//! The LLM task `triplets` (RARE 3.2): `(entity_1, relation, entity_2)` facts from a window of
//! consecutive chunks, each with the chunk it rests on and the sentence it comes from. Its
//! prompt is `pipelines/prompts/triplets.md`.
//!
//! Offline rule (deterministic, no network): in every sentence of every chunk (Markdown table
//! rows and headings left out), the first verb phrase of [`VERBS`] with a head just before it
//! and a tail after it. The head is a capitalised name (`Calder Port Authority`, leading
//! stopwords such as "The" dropped), a sentence-initial definite phrase ("The fiscal deficit"
//! gives `fiscal deficit`) or a filer's "we". The tail is a capitalised name or a number phrase
//! (`$96.4 million`, `14%`, `140 people`), after at most three plain words that complete the
//! relation ("recognized an impairment charge of"). The sentence is copied as the splitter of
//! `noisebench-text` gives it, so the rule's triplets always ground. A gleaning pass (the same
//! task with `found` filled) returns the rule's triplets not in `found`: none, the rule having
//! given them all the first time.

use noisebench_llm::sense::{Sense, Senseless};
use noisebench_llm::{ItemBounds, Task, TaskInfo};
use noisebench_text::{contains_phrase, is_stopword, normalize, sentences};
use serde::{Deserialize, Serialize};

/// The tasks the `triplets` stage may call: its fingerprint covers these.
pub const TASKS: &[TaskInfo] = &[TaskInfo::of::<Triplets>()];

/// `triplets`: grounded facts from a window of chunks.
pub struct Triplets;

/// One chunk of the window, as the prompt shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowChunk {
    pub chunk_id: String,
    pub text: String,
}

/// The task's input: the window and how many triplets to ask for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TripletsInput {
    /// The report's domain (finance, economics, policy, general).
    pub domain: String,
    /// About this many triplets are wanted from the window.
    pub target: usize,
    pub chunks: Vec<WindowChunk>,
    /// Gleaning: what the first pass returned, so the model adds only what it missed. Empty on
    /// a first pass.
    #[serde(default)]
    pub found: Vec<ExtractedTriplet>,
}

/// One triplet as the model returns it. Every field defaults to empty, so a triplet missing a
/// field is one counted drop (`empty_field`) rather than an unparseable answer losing the
/// whole window.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ExtractedTriplet {
    #[serde(default)]
    pub entity_1: String,
    #[serde(default)]
    pub relation: String,
    #[serde(default)]
    pub entity_2: String,
    /// RARE's field name, `answer_chunk_id`, is read too.
    #[serde(default, alias = "answer_chunk_id")]
    pub chunk_id: String,
    #[serde(default)]
    pub source_sentence: String,
}

/// The task's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TripletsOutput {
    pub triplets: Vec<ExtractedTriplet>,
}

/// An answer with more triplets than this many times the target (plus slack for small
/// targets) is a runaway answer: re-asked, not kept.
pub(crate) const MAX_TARGET_MULTIPLE: usize = 4;
const SLACK: usize = 20;

impl Task for Triplets {
    const NAME: &'static str = "triplets";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = TripletsInput;
    type Output = TripletsOutput;

    /// Only what makes the whole answer unusable: more triplets than
    /// `MAX_TARGET_MULTIPLE` times the target (plus slack) is a runaway answer; none is a
    /// valid answer. A bad triplet is the stage's counted drop.
    fn bounds(input: &TripletsInput) -> Vec<ItemBounds> {
        vec![ItemBounds {
            field: "triplets",
            min: 0,
            max: input.target * MAX_TARGET_MULTIPLE + SLACK,
        }]
    }

    /// A window of one chunk in two versions, naming different facts: a model reading it
    /// answers differently.
    fn examples() -> Vec<TripletsInput> {
        [
            "Harbour Freight Group acquired Calder Port Services in 2023. Harbour Freight Group operates 14 warehouses in Ontario.",
            "The Ministry of Transport funds the Eastline rail project. The Eastline rail project employs 420 people.",
        ]
        .iter()
        .enumerate()
        .map(|(i, text)| TripletsInput {
            domain: "finance".into(),
            target: 2,
            chunks: vec![WindowChunk {
                chunk_id: format!("chunk_{i}"),
                text: (*text).into(),
            }],
            found: Vec::new(),
        })
        .collect()
    }

    /// An answer of [`SENSE_MIN_TRIPLETS`] or more triplets of which none has both entities in
    /// its own source sentence is not an extraction from the window (a small model's invented
    /// or echoed facts): the window is dropped as `llm_entity_not_in_sentence`, counted against
    /// the model. One triplet with its entities in its sentence keeps the answer, and every
    /// triplet is still judged on its own by the stage's grounding (`entity_not_in_sentence`,
    /// `ungrounded`...), as are answers of fewer triplets.
    fn sense(_: &TripletsInput, o: &TripletsOutput) -> Result<(), Senseless> {
        if o.triplets.len() < SENSE_MIN_TRIPLETS || o.triplets.iter().any(entities_in_sentence) {
            return Ok(());
        }
        let t = &o.triplets[0];
        Err(Sense::EntityNotInSentence.because(format!(
            "no triplet of {} has both entities in its source sentence (first: `{}` / `{}` in \"{}\")",
            o.triplets.len(),
            t.entity_1,
            t.entity_2,
            t.source_sentence.chars().take(120).collect::<String>()
        )))
    }

    fn offline(input: &TripletsInput) -> TripletsOutput {
        let found: std::collections::BTreeSet<[String; 3]> = input.found.iter().map(key).collect();
        let mut seen = std::collections::BTreeSet::new();
        let mut triplets = Vec::new();
        for chunk in &input.chunks {
            for t in rule_triplets(&chunk.chunk_id, &chunk.text) {
                if !found.contains(&key(&t)) && seen.insert(key(&t)) {
                    triplets.push(t);
                }
            }
        }
        triplets.truncate(input.target.max(1));
        TripletsOutput { triplets }
    }
}

/// The fewest triplets an answer must have before "none of them has its entities in its
/// sentence" condemns the whole answer.
pub const SENSE_MIN_TRIPLETS: usize = 3;

/// Both entities occur in the triplet's own source sentence, as whole words after
/// normalisation.
fn entities_in_sentence(t: &ExtractedTriplet) -> bool {
    contains_phrase(&t.source_sentence, &t.entity_1)
        && contains_phrase(&t.source_sentence, &t.entity_2)
}

fn key(t: &ExtractedTriplet) -> [String; 3] {
    [
        normalize(&t.entity_1),
        normalize(&t.relation),
        normalize(&t.entity_2),
    ]
}

/// The verb phrases the offline rule reads, lowercase, longest first where one starts another.
pub const VERBS: &[&str] = &[
    "is headquartered in",
    "is a subsidiary of",
    "partnered with",
    "partners with",
    "merged with",
    "invested in",
    "invests in",
    "borrowed from",
    "lent to",
    "acquired",
    "acquires",
    "owns",
    "owned",
    "operates",
    "operated",
    "leases",
    "leased",
    "supplies",
    "supplied",
    "serves",
    "served",
    "employs",
    "employed",
    "funds",
    "funded",
    "finances",
    "financed",
    "manages",
    "managed",
    "administers",
    "selected",
    "hired",
    "insures",
    "handled",
    "handles",
    "reported",
    "recorded",
    "posted",
    "received",
    "allocated",
    "awarded",
    "approved",
    "signed",
    "sells",
    "sold",
    "purchased",
    "manufactures",
    "provides",
    "provided",
    "regulates",
    "oversees",
    "exports",
    "imports",
    "competes with",
    "slowed to",
    "rose to",
    "fell to",
    "grew to",
    "eased to",
    "narrowed to",
    "increased to",
    "decreased to",
    "raised",
    "lowered",
    "peaked at",
    "reached",
    "absorbs",
    "lost",
    "damaged",
    "held",
    "had",
    "recognized",
    "incurred",
    "repurchased",
    "paid",
    "issued",
    "loaned",
    "contributed",
    "completed",
    "declared",
    "generated",
    "spent",
    "entered into",
    "represented",
    "totaled",
    "total",
    "totals",
    "provide",
    "proposes to spend",
];

/// Words that may follow a number in a number phrase.
const UNITS: &[&str] = &[
    "million",
    "billion",
    "trillion",
    "thousand",
    "percent",
    "per cent",
    "percentage points",
    "basis points",
    "tonnes",
    "people",
    "employees",
    "homes",
    "units",
    "businesses",
];

/// Lowercase words that may join the words of a name ("Bank of Valdoria", "Harbour and Rail").
const CONNECTORS: &[&str] = &["of", "and", "&", "for", "de"];

/// A token with its surrounding punctuation stripped, and whether punctuation followed it
/// (which ends a name).
fn core_of(token: &str) -> (&str, bool) {
    let trimmed = token.trim_start_matches(['(', '"', '\'', '“', '‘']);
    let core = trimmed.trim_end_matches([',', '.', ';', ':', ')', '"', '\'', '”', '’', '!', '?']);
    (core, core.len() != trimmed.len())
}

fn is_name_word(core: &str) -> bool {
    core.chars().next().is_some_and(char::is_uppercase)
        && core
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '&' | '\'' | '’' | '.'))
}

fn is_number(core: &str) -> bool {
    let digits = core.trim_start_matches('$').trim_end_matches('%');
    digits.chars().next().is_some_and(|c| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
}

/// The offline rule's triplets of one chunk, in text order, at most one per sentence.
pub fn rule_triplets(chunk_id: &str, text: &str) -> Vec<ExtractedTriplet> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        // Table rows and headings hold no sentence of the form the rule reads.
        if line.starts_with('|') || line.starts_with('#') {
            continue;
        }
        for sentence in sentences(line) {
            if let Some((e1, rel, e2)) = sentence_triplet(&sentence) {
                out.push(ExtractedTriplet {
                    entity_1: e1,
                    relation: rel,
                    entity_2: e2,
                    chunk_id: chunk_id.to_string(),
                    source_sentence: sentence.clone(),
                });
            }
        }
    }
    out
}

/// [`VERBS`] split into words and grouped by their first word, each group in `VERBS`' order:
/// the rule looks up the word at each position instead of trying every phrase there (the
/// rule's cost at RARE's scale, 20M words).
fn verb_index() -> &'static std::collections::HashMap<&'static str, Vec<Vec<&'static str>>> {
    static INDEX: std::sync::OnceLock<
        std::collections::HashMap<&'static str, Vec<Vec<&'static str>>>,
    > = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index: std::collections::HashMap<&str, Vec<Vec<&str>>> = Default::default();
        for verb in VERBS {
            let words: Vec<&str> = verb.split(' ').collect();
            index.entry(words[0]).or_default().push(words);
        }
        index
    })
}

/// `<head> <verb phrase> [complement] <Capitalised name or number phrase>` in one sentence.
fn sentence_triplet(sentence: &str) -> Option<(String, String, String)> {
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    let lower: Vec<String> = tokens.iter().map(|t| core_of(t).0.to_lowercase()).collect();
    let index = verb_index();
    for at in 1..tokens.len() {
        // Only the verb phrases starting with this word can match here, in VERBS' order.
        let Some(candidates) = index.get(lower[at].as_str()) else {
            continue;
        };
        for vw in candidates {
            let end = at + vw.len();
            if end >= tokens.len() || lower[at..end].iter().zip(vw.iter()).any(|(a, b)| a != b) {
                continue;
            }
            // Punctuation inside the verb phrase ("owns, and") breaks it.
            if tokens[at..end].iter().any(|t| core_of(t).1) {
                continue;
            }
            // A head with no letter or digit ("-") normalises to nothing and could not ground.
            let Some(head) =
                head_before(&tokens, at).filter(|h| h.chars().any(char::is_alphanumeric))
            else {
                continue;
            };
            // A few plain words may complete the relation ("recognized an impairment charge
            // of $846 million"); the tail follows them.
            let mut relation: Vec<&str> = vw.to_vec();
            for k in end..(end + MAX_COMPLEMENT + 1).min(tokens.len()) {
                if let Some(tail) =
                    tail_after(&tokens, k).filter(|t| t.chars().any(char::is_alphanumeric))
                {
                    while relation
                        .last()
                        .is_some_and(|w| matches!(*w, "the" | "a" | "an"))
                    {
                        relation.pop();
                    }
                    return Some((head, relation.join(" "), tail));
                }
                let (core, punct) = core_of(tokens[k]);
                let plain = core.chars().all(|c| c.is_ascii_lowercase());
                let allowed = COMPLEMENT_WORDS.contains(&core) || !is_stopword(core);
                if punct || !plain || !allowed || core.is_empty() {
                    break;
                }
                relation.push(core);
            }
        }
    }
    None
}

/// At most this many words between the verb phrase and the tail.
const MAX_COMPLEMENT: usize = 3;
/// Stopwords a relation's complement may hold ("of", "to" ...); other stopwords ("our", "its")
/// end the search.
const COMPLEMENT_WORDS: &[&str] = &[
    "of", "to", "in", "for", "by", "on", "with", "from", "at", "the", "a", "an",
];

/// The head ending just before `at`: a capitalised name (leading stopwords dropped), a
/// sentence-initial definite phrase ("The fiscal deficit" gives `fiscal deficit`), or a filer's
/// "we" (which the graph resolves to the filer).
fn head_before(tokens: &[&str], at: usize) -> Option<String> {
    if let Some(name) = name_before(tokens, at) {
        return Some(name);
    }
    let (before, punct) = core_of(tokens[at - 1]);
    if !punct && before.eq_ignore_ascii_case("we") {
        return Some(before.to_string());
    }
    // "The fiscal deficit" gives `fiscal deficit`; "Repair estimates" is kept whole: an opening
    // "The" or capitalised word, then lowercase words, three words at most.
    let first = core_of(tokens[0]);
    let (phrase, lowercase) = if first == ("The", false) {
        (&tokens[1..at], &tokens[1..at])
    } else if !first.1 && is_name_word(first.0) && !is_stopword(&first.0.to_lowercase()) {
        (&tokens[..at], &tokens[1..at])
    } else {
        return None;
    };
    let plain = |t: &&str| {
        let (core, punct) = core_of(t);
        !punct
            && !core.is_empty()
            && core.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            && !is_stopword(core)
    };
    ((1..=3).contains(&phrase.len()) && lowercase.iter().all(plain)).then(|| {
        let words: Vec<&str> = phrase.iter().map(|t| core_of(t).0).collect();
        words.join(" ")
    })
}

/// The capitalised name ending just before `at`, leading stopwords dropped.
fn name_before(tokens: &[&str], at: usize) -> Option<String> {
    let mut start = at;
    while start > 0 {
        let (core, punct) = core_of(tokens[start - 1]);
        // Punctuation after a word ends the name before it, not the name itself.
        if punct && start < at {
            break;
        }
        if is_name_word(core) || (start < at && CONNECTORS.contains(&core)) {
            start -= 1;
            if punct {
                break;
            }
        } else {
            break;
        }
    }
    let mut words: Vec<&str> = tokens[start..at].iter().map(|t| core_of(t).0).collect();
    while words
        .first()
        .is_some_and(|w| is_stopword(&w.to_lowercase()) || CONNECTORS.contains(w))
    {
        words.remove(0);
    }
    // A name ends in a name word, and its last word has no punctuation after it.
    if words.is_empty() || core_of(tokens[at - 1]).1 {
        return None;
    }
    Some(words.join(" "))
}

/// The capitalised name or number phrase starting at `from` (an article skipped).
fn tail_after(tokens: &[&str], from: usize) -> Option<String> {
    let mut i = from;
    if tokens
        .get(i)
        .is_some_and(|t| matches!(core_of(t).0.to_lowercase().as_str(), "the" | "a" | "an"))
    {
        i += 1;
    }
    let (first, punct) = core_of(tokens.get(i)?);
    if is_number(first) {
        let mut words = vec![first];
        if !punct {
            for unit in UNITS {
                let uw: Vec<&str> = unit.split(' ').collect();
                let next: Vec<&str> = tokens
                    .iter()
                    .skip(i + 1)
                    .take(uw.len())
                    .map(|t| core_of(t).0)
                    .collect();
                if next.len() == uw.len()
                    && next.iter().zip(&uw).all(|(a, b)| a.eq_ignore_ascii_case(b))
                {
                    words.extend(next);
                    break;
                }
            }
        }
        return Some(words.join(" "));
    }
    if !is_name_word(first) || is_stopword(&first.to_lowercase()) {
        return None;
    }
    // A possessive ("the Company's financial condition") names something else than the name.
    let possessive = |w: &str| w.ends_with("'s") || w.ends_with("’s");
    let mut words = vec![first];
    let mut j = i + 1;
    let mut ended = punct;
    while !ended && j < tokens.len() {
        let (core, p) = core_of(tokens[j]);
        if is_name_word(core) {
            words.push(core);
            ended = p;
            j += 1;
        } else if CONNECTORS.contains(&core)
            && !p
            && tokens
                .get(j + 1)
                .is_some_and(|n| is_name_word(core_of(n).0))
        {
            words.push(core);
            j += 1;
        } else {
            break;
        }
    }
    if words.iter().any(|w| possessive(w)) {
        return None;
    }
    Some(words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(sentence: &str) -> Option<(String, String, String)> {
        sentence_triplet(sentence)
    }
    fn t(a: &str, b: &str, c: &str) -> Option<(String, String, String)> {
        Some((a.into(), b.into(), c.into()))
    }

    #[test]
    fn the_rule_reads_names_verbs_and_numbers() {
        assert_eq!(
            rule("Calder Port Authority operates Eastgate Terminal."),
            t("Calder Port Authority", "operates", "Eastgate Terminal")
        );
        assert_eq!(
            rule("In 2024, the Bank of Valdoria raised its rate."),
            None,
            "a tail must be a name or a number"
        );
        assert_eq!(
            rule("The Bank of Valdoria funds the Harbour and Rail Fund for ten years."),
            t("Bank of Valdoria", "funds", "Harbour and Rail Fund")
        );
        assert_eq!(
            rule("Eastgate Terminal handled 4.2 million tonnes in 2024."),
            t("Eastgate Terminal", "handled", "4.2 million")
        );
        assert_eq!(
            rule("Riverton received $96.4 million, of which 75% was spent."),
            t("Riverton", "received", "$96.4 million")
        );
        assert_eq!(
            rule("Growth in Valdoria slowed to 1.4% in 2023 after a rebound."),
            t("Valdoria", "slowed to", "1.4%")
        );
        // A sentence-initial phrase, a filer's "we", words completing the relation.
        assert_eq!(
            rule("Net sales increased to $394 billion."),
            t("Net sales", "increased to", "$394 billion")
        );
        assert_eq!(
            rule("The fiscal deficit narrowed to 2.6% of GDP."),
            t("fiscal deficit", "narrowed to", "2.6%")
        );
        assert_eq!(
            rule("In 2021, we recognized a gain of $784 million from the sale."),
            t("we", "recognized a gain of", "$784 million")
        );
        // Possessive tails and stopwords in the complement give nothing.
        assert_eq!(
            rule("The following discussion provides an analysis of the Company's results."),
            None
        );
        assert_eq!(
            rule("In 2010, we completed the redemption of our 1% Notes."),
            None
        );
        // Punctuation between the head, the verb and the tail.
        assert_eq!(
            rule("Since 1986, Rohm, Inc. acquired, in part, XeTel."),
            None
        );
        assert_eq!(
            rule("Northwind Logistics acquired Baltic Freight Lines, a carrier."),
            t("Northwind Logistics", "acquired", "Baltic Freight Lines")
        );
    }

    proptest::proptest! {
        /// Whatever the text, every triplet of the rule grounds in its chunk.
        #[test]
        fn the_rules_triplets_always_ground(words in proptest::collection::vec(
            proptest::sample::select(vec![
                "Calder", "Port", "Authority", "The", "we", "of", "and", "operates", "acquired",
                "slowed", "to", "a", "gain", "$4.2", "million", "14%", "(Riga", "Harbour),",
                "U.S.", "Inc.", "Company's", "fiscal", "deficit", "|", "-", "\"Baltic", "Lines\"",
                "2023.", "Growth", "in", "\n", "recognized", "“Northwind”", "people",
            ]),
            0..60,
        )) {
            let text = words.join(" ");
            let chunk = noisebench_core::Chunk {
                id: "c1".into(),
                text: text.clone(),
                ..Default::default()
            };
            let window = super::super::grounding::GroundingWindow::new(&[&chunk]);
            for t in rule_triplets("c1", &text) {
                proptest::prop_assert!(window.ground(&t).is_ok(), "{t:?} in {text:?}");
            }
        }
    }

    #[test]
    fn the_rule_skips_tables_and_copies_sentences_verbatim() {
        let text = "# Harbour\n| Calder Port Authority operates Eastgate Terminal |\nIt rained. Calder Port Authority operates Eastgate Terminal. Harbour Trust funds Calder Maritime Museum.";
        let got = rule_triplets("c1", text);
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0].source_sentence,
            "Calder Port Authority operates Eastgate Terminal."
        );
        assert_eq!(got[1].entity_1, "Harbour Trust");
        assert!(got.iter().all(|t| text.contains(&t.source_sentence)));
    }

    #[test]
    fn gleaning_offline_returns_what_the_first_pass_missed() {
        let chunk = WindowChunk {
            chunk_id: "c1".into(),
            text: "Calder Port Authority operates Eastgate Terminal. Harbour Trust funds Calder Maritime Museum.".into(),
        };
        let first = Triplets::offline(&TripletsInput {
            domain: "policy".into(),
            target: 10,
            chunks: vec![chunk.clone()],
            found: Vec::new(),
        });
        assert_eq!(first.triplets.len(), 2);
        let again = Triplets::offline(&TripletsInput {
            domain: "policy".into(),
            target: 10,
            chunks: vec![chunk.clone()],
            found: first.triplets[..1].to_vec(),
        });
        assert_eq!(again.triplets, first.triplets[1..].to_vec());
        let capped = Triplets::offline(&TripletsInput {
            domain: "policy".into(),
            target: 1,
            chunks: vec![chunk],
            found: Vec::new(),
        });
        assert_eq!(capped.triplets.len(), 1);
    }

    #[test]
    fn missing_fields_parse_as_empty_and_runaway_answers_fail_the_check() {
        let o: TripletsOutput =
            serde_json::from_str(r#"{"triplets": [{"entity_1": "A", "answer_chunk_id": "c1"}]}"#)
                .unwrap();
        assert_eq!(o.triplets[0].chunk_id, "c1");
        assert_eq!(o.triplets[0].relation, "");
        let input = TripletsInput {
            domain: "finance".into(),
            target: 2,
            chunks: Vec::new(),
            found: Vec::new(),
        };
        let check = noisebench_llm::task::check_answer::<Triplets>;
        assert!(check(&input, &o).is_ok());
        let runaway = TripletsOutput {
            triplets: vec![ExtractedTriplet::default(); 29],
        };
        assert!(check(&input, &runaway).is_err());
    }

    /// The schema the model is held to and the check agree, for the shipped prompt.
    #[test]
    fn the_schema_and_the_check_agree() {
        use noisebench_llm::prompt::Prompts;
        let prompts = Prompts::in_dir(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts"),
        );
        for input in Triplets::examples() {
            let answer = Triplets::offline(&input);
            assert!(!answer.triplets.is_empty());
            noisebench_llm::task::schema_self_check::<Triplets>(&prompts, &input, &answer).unwrap();
            // The examples' offline answers pass the prompt's example check too.
            let examples = prompts.get("triplets").unwrap().unwrap().examples.clone();
            assert_eq!(examples.len(), 2);
            noisebench_llm::sense::not_an_example(
                &examples,
                &serde_json::to_value(&input).unwrap(),
                &serde_json::to_value(&answer).unwrap(),
            )
            .unwrap();
        }
    }

    /// The offline answer through the engine: deterministic, passes its check, and the prompt
    /// renders the same input with nothing left unfilled (first pass and gleaning).
    #[test]
    fn offline_answers_are_deterministic_and_the_prompt_renders() {
        use noisebench_llm::prompt::Prompts;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let prompts = Prompts::in_dir(&dir);
        let mut input = TripletsInput {
            domain: "economics".into(),
            target: 5,
            chunks: vec![
                WindowChunk {
                    chunk_id: "chunk_1".into(),
                    text: "Northwind Logistics acquired Baltic Freight Lines.".into(),
                },
                WindowChunk {
                    chunk_id: "chunk_2".into(),
                    text: "| a | b |\nBaltic Freight Lines serves Riga Harbour.".into(),
                },
            ],
            found: Vec::new(),
        };
        let json =
            noisebench_llm::task::offline_self_check::<Triplets>(&prompts, input.clone()).unwrap();
        assert_eq!(
            json,
            r#"{"triplets":[{"entity_1":"Northwind Logistics","relation":"acquired","entity_2":"Baltic Freight Lines","chunk_id":"chunk_1","source_sentence":"Northwind Logistics acquired Baltic Freight Lines."},{"entity_1":"Baltic Freight Lines","relation":"serves","entity_2":"Riga Harbour","chunk_id":"chunk_2","source_sentence":"Baltic Freight Lines serves Riga Harbour."}]}"#
        );
        input.found = serde_json::from_str::<TripletsOutput>(&json)
            .unwrap()
            .triplets;
        let json = noisebench_llm::task::offline_self_check::<Triplets>(&prompts, input).unwrap();
        assert_eq!(json, r#"{"triplets":[]}"#);
    }
}
