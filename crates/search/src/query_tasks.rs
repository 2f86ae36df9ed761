//! The LLM tasks of the `queries` stage: `keywords` (RAGuard 3.2), `claim_to_question`
//! (CONF-FACT 3.2) and, for counter-evidence drafts, `exam_verdict` (CounterRefine 3.3), whose
//! contract is shared with the labels stage in [`noisebench_core::vocab::exam`]. Each task is
//! its input, its answer parsed strictly from JSON, its checks, its offline rule and that rule's
//! version; its prompt is `pipelines/prompts/<name>.md`.
//!
//! Offline rules (deterministic, no network):
//!
//! | task | rule |
//! |---|---|
//! | `keywords` | RAKE: candidate phrases are runs of words between stopwords and punctuation (at most 4 words); a word scores degree/frequency; a phrase scores the sum of its words; the top `max_keywords` phrases by score (ties: earlier first), deduplicated case-insensitively. |
//! | `claim_to_question` | Strip a leading "Says"/`"<speaker> says (that)"`. If an auxiliary verb (is, was, has, can, will...) follows a subject of 1-8 words, move it to the front ("X is Y" -> "Is X Y?"); else `"Is it true that <claim>?"`. |
//! | `exam_verdict` | See [`noisebench_core::vocab::exam::offline_reply`]: no document, undecided (the drafts never have one). |

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::vocab::exam;
use noisebench_llm::sense::{self, Senseless};
use noisebench_llm::{ItemBounds, Task, TaskInfo};
use noisebench_text::{content_words, is_stopword};
use serde::{Deserialize, Serialize};

/// The tasks the `queries` stage may call: its fingerprint covers these, and its configuration
/// check asks the LLM layer for the prompts of those its configuration uses.
pub const TASKS: &[TaskInfo] = &[
    TaskInfo::of::<Keywords>(),
    TaskInfo::of::<ClaimToQuestion>(),
    TaskInfo::of::<ExamVerdict>(),
];

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
    const NAME: &'static str = "keywords";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = KeywordsInput;
    type Output = KeywordsOutput;
    /// One keyword at least; at most twice the number asked for (a model may split a phrase).
    fn bounds(input: &KeywordsInput) -> Vec<ItemBounds> {
        vec![ItemBounds {
            field: "keywords",
            min: 1,
            max: input.max_keywords.max(1) * 2,
        }]
    }
    fn check(_: &KeywordsInput, o: &KeywordsOutput) -> Result<(), String> {
        if o.keywords.iter().all(|k| k.trim().is_empty()) {
            return Err("`keywords` holds no keyword".into());
        }
        Ok(())
    }
    fn examples() -> Vec<KeywordsInput> {
        EXAMPLE_CLAIMS
            .iter()
            .map(|c| KeywordsInput {
                claim: (*c).into(),
                max_keywords: 4,
            })
            .collect()
    }
    /// The keywords, together, must share a content word with the claim (a list such as
    /// `["type", "array", "items"]` echoes the schema, not the claim).
    fn sense(input: &KeywordsInput, o: &KeywordsOutput) -> Result<(), Senseless> {
        sense::on_topic(
            "the keyword list",
            &content_words(&o.keywords.join(" ")),
            &content_words(&input.claim),
        )
    }
    fn offline(input: &KeywordsInput) -> KeywordsOutput {
        rake(input)
    }
}

/// Two claims about different things: the preflight inputs of the claim tasks.
const EXAMPLE_CLAIMS: [&str; 2] = [
    "The Riverside library opened a second branch in 2021.",
    "Hot lemon water cures the common cold.",
];

/// The example of `pipelines/prompts/claim_to_question.md` (its front matter lists the question
/// as an example value, which the engine checks every answer against).
pub const QUESTION_EXAMPLE: (&str, &str) = (
    "Nigeria had a population of 45 million at the time of independence",
    "Did Nigeria have a population of 45 million at the time of independence?",
);

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
    const NAME: &'static str = "claim_to_question";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = ClaimToQuestionInput;
    type Output = ClaimToQuestionOutput;
    fn check(_: &ClaimToQuestionInput, o: &ClaimToQuestionOutput) -> Result<(), String> {
        if o.question.trim().is_empty() {
            return Err("`question` is empty".into());
        }
        Ok(())
    }
    /// Sharing a content word with the claim (the prompt's example question is the engine's
    /// check, from the prompt's front matter).
    fn sense(input: &ClaimToQuestionInput, o: &ClaimToQuestionOutput) -> Result<(), Senseless> {
        let (question, claim) = (content_words(&o.question), content_words(&input.claim));
        sense::on_topic("the question", &question, &claim)
    }
    fn offline(input: &ClaimToQuestionInput) -> ClaimToQuestionOutput {
        yes_no_question(input)
    }
    fn examples() -> Vec<ClaimToQuestionInput> {
        EXAMPLE_CLAIMS
            .iter()
            .map(|c| ClaimToQuestionInput {
                claim: (*c).into(),
                claim_date: Some("2022-03-01".into()),
                speaker: None,
            })
            .collect()
    }
}

/// `exam_verdict`, asked with no document for a counter-evidence draft. The labels stage asks
/// the same task: everything that decides or reads an answer is in
/// [`noisebench_core::vocab::exam`], so a cached answer reads the same in both stages; this is
/// only its wiring into the LLM engine (which a stage crate of its own must provide).
pub struct ExamVerdict;
impl Task for ExamVerdict {
    const NAME: &'static str = exam::TASK;
    const OFFLINE_VERSION: &'static str = exam::OFFLINE_VERSION;
    type Input = exam::Input;
    /// The reply as the model gave it; read it with `Verdict::in_reply`.
    type Output = serde_json::Value;
    fn check(_: &exam::Input, reply: &serde_json::Value) -> Result<(), String> {
        exam::check(reply)
    }
    fn category(reply: &serde_json::Value) -> Option<String> {
        noisebench_core::vocab::Verdict::in_reply(reply).map(|v| v.as_str().to_string())
    }
    fn offline(input: &exam::Input) -> serde_json::Value {
        exam::offline_reply(input, noisebench_text::cues::cue_counts)
    }
    fn examples() -> Vec<exam::Input> {
        exam::examples()
    }
}

// ---------------------------------------------------------------------------------------------
// Offline rules.

fn lower_first(s: &str) -> String {
    let first = s.split_whitespace().next().unwrap_or("");
    // Keep proper nouns and acronyms; lowercase common sentence openers.
    const OPENERS: &[&str] = &[
        "The", "A", "An", "This", "That", "These", "Those", "What", "Which", "Who", "How", "When",
        "Where", "Why", "Is", "Are", "Was", "Were", "Did", "Does", "Do", "In", "For", "Our", "Its",
        "Their", "There",
    ];
    if OPENERS.contains(&first) {
        let mut c = s.chars();
        match c.next() {
            Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
            None => String::new(),
        }
    } else {
        s.to_string()
    }
}

fn strip_end_punct(s: &str) -> &str {
    s.trim()
        .trim_end_matches(['.', '?', '!', ';', ':', ',', '"', '\''])
        .trim()
}

fn rake(input: &KeywordsInput) -> KeywordsOutput {
    // Candidate phrases: runs of non-stopwords, broken at punctuation.
    let mut phrases: Vec<Vec<(String, String)>> = Vec::new(); // (lower, original)
    let mut current: Vec<(String, String)> = Vec::new();
    for raw in input.claim.split_whitespace() {
        let trimmed =
            raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '$' && c != '%' && c != '\'');
        let trimmed = trimmed.trim_matches('\'');
        let breaks_after = raw
            .chars()
            .last()
            .is_some_and(|c| matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | '"' | ')' | '”'));
        let breaks_before = raw
            .chars()
            .next()
            .is_some_and(|c| matches!(c, '"' | '(' | '“'));
        if breaks_before && !current.is_empty() {
            phrases.push(std::mem::take(&mut current));
        }
        let lower = trimmed.to_lowercase();
        let lower_core = lower.trim_end_matches("'s").trim_end_matches("’s");
        if trimmed.is_empty() || is_stopword(lower_core) {
            if !current.is_empty() {
                phrases.push(std::mem::take(&mut current));
            }
        } else {
            current.push((lower_core.to_string(), trimmed.to_string()));
        }
        if breaks_after && !current.is_empty() {
            phrases.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        phrases.push(current);
    }
    // Overlong runs are split into pieces of at most 4 words.
    let phrases: Vec<Vec<(String, String)>> = phrases
        .into_iter()
        .flat_map(|p| p.chunks(4).map(<[_]>::to_vec).collect::<Vec<_>>())
        .collect();
    let mut freq: BTreeMap<&str, f64> = BTreeMap::new();
    let mut degree: BTreeMap<&str, f64> = BTreeMap::new();
    for p in &phrases {
        for (w, _) in p {
            *freq.entry(w).or_default() += 1.0;
            *degree.entry(w).or_default() += p.len() as f64;
        }
    }
    let mut scored: Vec<(f64, usize, String, String)> = Vec::new();
    let mut seen = BTreeSet::new();
    for (pos, p) in phrases.iter().enumerate() {
        let key = p
            .iter()
            .map(|(w, _)| w.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if !seen.insert(key.clone()) {
            continue;
        }
        let score: f64 = p
            .iter()
            .map(|(w, _)| degree[w.as_str()] / freq[w.as_str()])
            .sum();
        let text = p
            .iter()
            .map(|(_, o)| o.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        scored.push((score, pos, key, text));
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    KeywordsOutput {
        keywords: scored
            .into_iter()
            .take(input.max_keywords.max(1))
            .map(|s| s.3)
            .collect(),
    }
}

const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would", "should",
    "does", "do", "did", "may", "might", "must",
];

fn yes_no_question(input: &ClaimToQuestionInput) -> ClaimToQuestionOutput {
    let mut claim = strip_end_punct(input.claim.trim().trim_matches(['"', '“', '”'])).to_string();
    for prefix in ["Says that ", "Says "] {
        if let Some(rest) = claim.strip_prefix(prefix) {
            claim = rest.to_string();
            break;
        }
    }
    if let Some(speaker) = &input.speaker {
        for verb in [" says that ", " said that ", " says ", " said "] {
            let p = format!("{speaker}{verb}");
            if let Some(rest) = claim.strip_prefix(&p) {
                claim = rest.to_string();
                break;
            }
        }
    }
    let claim = strip_end_punct(claim.trim_matches(['"', '“', '”'])).to_string();
    let tokens: Vec<&str> = claim.split_whitespace().collect();
    let aux_at = tokens
        .iter()
        .enumerate()
        .take(9)
        .skip(1)
        .find(|(_, t)| AUXILIARIES.contains(&t.to_lowercase().as_str()))
        .map(|(i, _)| i);
    let question = match aux_at {
        Some(i) => {
            let subject = lower_first(&tokens[..i].join(" "));
            let rest = tokens[i + 1..].join(" ");
            let lower = tokens[i].to_lowercase();
            let next = tokens
                .get(i + 1)
                .map(|t| t.to_lowercase())
                .unwrap_or_default();
            let perfect = next == "been" || next.ends_with("ed") || next.ends_with("en");
            // "X had Y" asks "Did X have Y?"; "X has been" keeps the auxiliary.
            let (aux, rest) = match (lower.as_str(), perfect) {
                ("has", false) => ("Does".to_string(), format!("have {rest}")),
                ("have", false) => ("Do".to_string(), format!("have {rest}")),
                ("had", false) => ("Did".to_string(), format!("have {rest}")),
                _ => (noisebench_text::upper_first(&lower), rest),
            };
            let rest = rest.trim().to_string();
            if rest.is_empty() {
                format!("{aux} {subject}?")
            } else {
                format!("{aux} {subject} {rest}?")
            }
        }
        None => format!("Is it true that {}?", lower_first(&claim)),
    };
    ClaimToQuestionOutput { question }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rake_keywords() {
        let out = rake(&KeywordsInput {
            claim: "Says Joe Biden raised taxes on middle-class families by 20 percent in 2021."
                .into(),
            max_keywords: 3,
        });
        assert_eq!(
            out.keywords,
            vec![
                "Joe Biden raised taxes",
                "middle-class families",
                "20 percent"
            ]
        );
    }

    #[test]
    fn yes_no_questions() {
        let q = |c: &str| {
            yes_no_question(&ClaimToQuestionInput {
                claim: c.into(),
                claim_date: None,
                speaker: Some("Jane Doe".into()),
            })
            .question
        };
        assert_eq!(
            q("Nigeria had a population of 45 million at the time of independence."),
            "Did Nigeria have a population of 45 million at the time of independence?"
        );
        assert_eq!(
            q("Jane Doe says the unemployment rate is at a record low."),
            "Is the unemployment rate at a record low?"
        );
        assert_eq!(
            q("Says vaccines cause autism."),
            "Is it true that vaccines cause autism?"
        );
    }

    /// The offline answers through the engine: same input, same bytes, the tasks' own checks
    /// pass, and every prompt renders with the same inputs.
    #[test]
    fn offline_answers_are_deterministic_and_prompts_render() {
        use noisebench_llm::prompt::Prompts;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let prompts = Prompts::in_dir(&dir);
        fn answer<T: Task>(prompts: &Prompts, input: T::Input) -> String {
            noisebench_llm::task::offline_self_check::<T>(prompts, input).unwrap()
        }
        const CLAIM: &str = "Says the city of Springfield banned plastic bags in 2019.";
        let kw = answer::<Keywords>(
            &prompts,
            KeywordsInput {
                claim: CLAIM.into(),
                max_keywords: 4,
            },
        );
        assert_eq!(
            kw,
            r#"{"keywords":["Springfield banned plastic bags","city","2019"]}"#
        );
        let q = answer::<ClaimToQuestion>(
            &prompts,
            ClaimToQuestionInput {
                claim: CLAIM.into(),
                claim_date: Some("2019-05-01".into()),
                speaker: None,
            },
        );
        assert_eq!(
            q,
            r#"{"question":"Is it true that the city of Springfield banned plastic bags in 2019?"}"#
        );
        // The preflight examples: answered, and differently; the keyword list's schema says
        // the bounds its check holds.
        for examples in [
            Keywords::examples()
                .into_iter()
                .map(|i| answer::<Keywords>(&prompts, i))
                .collect::<Vec<_>>(),
            ClaimToQuestion::examples()
                .into_iter()
                .map(|i| answer::<ClaimToQuestion>(&prompts, i))
                .collect(),
        ] {
            assert_ne!(examples[0], examples[1]);
        }
        for i in Keywords::examples() {
            let a = Keywords::offline(&i);
            noisebench_llm::task::schema_self_check::<Keywords>(&prompts, &i, &a).unwrap();
        }
        let draft = answer::<ExamVerdict>(&prompts, exam::Input::zero_context(CLAIM, None));
        assert_eq!(draft, r#"{"verdict":"undecided"}"#);
    }
}
