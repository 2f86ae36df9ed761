//! The LLM tasks of the question stages (RARE 3.4, Appendix F): `qa_single`, `qa_multi` and
//! `qa_judge`. Prompts: `pipelines/prompts/<task>.md`.
//!
//! Offline rules (deterministic, no network):
//!
//! | task | rule |
//! |---|---|
//! | `qa_single` | `"<entity_1> <relation> what, according to <context>?"` answered by entity_2, where the context names the report (company and filing year, country, grantee, else its title). Declined (empty strings) when the answer is in the question. |
//! | `qa_multi` | Answer C (the last fact's far end), the pivot B described through A: chain `"<A> <r1> something that <r2> what?"`; star `"The entity that <r1> <A> also <r2> what?"`; inverted star `"What <r2> the same thing that <A> <r1>?"`, with the same context. Declined when B is not distinctive, the facts share one chunk, or the answer or B appears in the question. |
//! | `qa_judge` | Clarity: 5 minus 1 for each of: no final "?", under 4 words, over 18 words, over 24 words, a doubled word, template brackets, and more than one placeholder ("something", "the entity that", "the same thing"). Correctness: 5 when the answer is in a source sentence or passage, else by the share of its words found there (4 >= 0.75, 3 >= 0.5, 2 > 0, else 1); 1 when the answer is in the question. Reasonableness (multi-hop): 5 with at least two distinct source sentences, else 2. |

use std::collections::{BTreeMap, BTreeSet};

use noisebench_llm::{Task, TaskInfo};
use noisebench_text::{contains_phrase, is_stopword, normalize, upper_first, words};
use serde::{Deserialize, Serialize};

/// A chunk's text, shared by every prompt input that quotes it (a chunk is in many patterns'
/// prompts) and written as a plain string: inputs hold a pointer, not a copy, until rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedText(std::sync::Arc<str>);

impl std::ops::Deref for SharedText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        SharedText(text.into())
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        SharedText(text.into())
    }
}

impl Serialize for SharedText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SharedText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(SharedText::from)
    }
}

/// The tasks the `questions` stage may call.
pub const GENERATION_TASKS: &[TaskInfo] = &[TaskInfo::of::<QaSingle>(), TaskInfo::of::<QaMulti>()];
/// The task the `qa-judge` stage calls.
pub const JUDGE_TASKS: &[TaskInfo] = &[TaskInfo::of::<QaJudge>()];

/// A triplet as the prompts show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TripletText {
    pub entity_1: String,
    pub relation: String,
    pub entity_2: String,
    pub chunk_id: String,
    pub source_sentence: String,
}

/// A question and its answer. Both empty: the model declined (too vague, or answerable from
/// one chunk), which the stage records as its own drop reason.
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

/// A fact as a question depends on it: the triplet, its sentence, and the ordinal of its
/// chunk among the pattern's distinct chunks (not the chunk's id, which changes with any edit).
fn fact_key(t: &TripletText, chunk_ordinal: usize) -> serde_json::Value {
    serde_json::json!([
        t.entity_1,
        t.relation,
        t.entity_2,
        t.source_sentence,
        chunk_ordinal
    ])
}

/// `anchor_missing` when a generated question (not a declined one) shares no content word with
/// its facts' entities and relations once the answer's words and the pivot's are set aside: a
/// question that could be about anything. Facts with no such words leave nothing to check.
fn anchor_sense(
    o: &QaOutput,
    triplets: &[TripletText],
    pivots: &[String],
) -> Result<(), noisebench_llm::Senseless> {
    use noisebench_text::content_words;
    if o.question.trim().is_empty() {
        return Ok(());
    }
    let mut hidden = content_words(&o.answer);
    for p in pivots {
        hidden.extend(content_words(p));
    }
    let anchor: BTreeSet<String> = triplets
        .iter()
        .flat_map(|t| content_words(&format!("{} {} {}", t.entity_1, t.relation, t.entity_2)))
        .filter(|w| !hidden.contains(w))
        .collect();
    let question = content_words(&o.question);
    if anchor.is_empty() || noisebench_llm::sense::shares_word(&question, &anchor) {
        return Ok(());
    }
    let mut named: Vec<&str> = anchor.iter().map(String::as_str).take(6).collect();
    named.sort_unstable();
    Err(noisebench_llm::Sense::AnchorMissing.because(format!(
        "the question names none of its facts' words ({})",
        named.join(" ")
    )))
}

fn declined() -> QaOutput {
    QaOutput {
        question: String::new(),
        answer: String::new(),
    }
}

/// `qa_single`: a single-hop question answered by one entity of one triplet.
pub struct QaSingle;

/// The input of `qa_single`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QaSingleInput {
    pub triplet: TripletText,
    /// The chunk the triplet comes from.
    pub chunk: SharedText,
    /// What makes the question specific: company, filing year, country, grantee, title.
    pub metadata: BTreeMap<String, String>,
}

impl Task for QaSingle {
    const NAME: &'static str = "qa_single";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = QaSingleInput;
    type Output = QaOutput;

    fn check(_: &QaSingleInput, o: &QaOutput) -> Result<(), String> {
        qa_check(o)
    }

    /// The question mentions its fact: a content word of the triplet other than the answer's.
    fn sense(input: &QaSingleInput, o: &QaOutput) -> Result<(), noisebench_llm::Senseless> {
        anchor_sense(o, std::slice::from_ref(&input.triplet), &[])
    }

    /// The fact, its sentence and the report's details: an edit elsewhere in the chunk keeps
    /// the question.
    fn reuse_key(input: &QaSingleInput) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "fact": fact_key(&input.triplet, 0),
            "metadata": input.metadata,
        }))
    }

    fn examples() -> Vec<QaSingleInput> {
        [
            (
                "Harbour Freight Group",
                "acquired",
                "Calder Port Services",
                "Harbour Freight Group acquired Calder Port Services in 2023.",
            ),
            (
                "The Ministry of Transport",
                "funds",
                "the Eastline rail project",
                "The Ministry of Transport funds the Eastline rail project.",
            ),
        ]
        .iter()
        .map(|(e1, r, e2, s)| QaSingleInput {
            triplet: TripletText {
                entity_1: (*e1).into(),
                relation: (*r).into(),
                entity_2: (*e2).into(),
                chunk_id: "chunk_0".into(),
                source_sentence: (*s).into(),
            },
            chunk: (*s).into(),
            metadata: BTreeMap::from([("title".to_string(), "Annual report 2023".to_string())]),
        })
        .collect()
    }

    fn offline(input: &QaSingleInput) -> QaOutput {
        let t = &input.triplet;
        let question = upper_first(&format!(
            "{} {} what, according to {}?",
            t.entity_1.trim(),
            t.relation.trim(),
            context(&input.metadata, &[t.entity_1.trim(), t.entity_2.trim()])
        ));
        let answer = t.entity_2.trim();
        if answer.is_empty() || contains_phrase(&question, answer) {
            return declined();
        }
        QaOutput {
            question,
            answer: answer.to_string(),
        }
    }
}

/// The multi-hop pattern a `qa_multi` question is built on, as the prompt names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MultiHopPattern {
    #[serde(rename = "chain")]
    Chain,
    #[serde(rename = "star")]
    Star,
    #[serde(rename = "inverted star")]
    InvertedStar,
}

impl MultiHopPattern {
    /// The pattern of a `patterns` row's kind; `None` for single-hop or an unknown kind.
    pub fn of_kind(kind: &str) -> Option<MultiHopPattern> {
        match kind {
            "chained_multi_hop" => Some(MultiHopPattern::Chain),
            "star_shaped" => Some(MultiHopPattern::Star),
            "inverted_star_shaped" => Some(MultiHopPattern::InvertedStar),
            _ => None,
        }
    }
}

/// `qa_multi`: one question over linked triplets from different chunks, naming the pivot only
/// indirectly.
pub struct QaMulti;

/// The input of `qa_multi`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QaMultiInput {
    pub pattern: MultiHopPattern,
    /// The triplets in pattern order (chain: each tail is the next head; star: one head;
    /// inverted star: one tail).
    pub triplets: Vec<TripletText>,
    /// The texts of the triplets' chunks, distinct, in order of first use.
    pub chunks: Vec<SharedText>,
    /// The pivot's canonical names from the graph (a filer's "we" is its company name).
    pub pivots: Vec<String>,
    /// What makes the question specific: company, filing year, country, grantee, title.
    pub metadata: BTreeMap<String, String>,
}

impl Task for QaMulti {
    const NAME: &'static str = "qa_multi";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = QaMultiInput;
    type Output = QaOutput;

    fn check(_: &QaMultiInput, o: &QaOutput) -> Result<(), String> {
        qa_check(o)
    }

    /// The question mentions its pattern's anchor: a content word of the facts other than the
    /// answer's and the pivot's (which the question names only indirectly).
    fn sense(input: &QaMultiInput, o: &QaOutput) -> Result<(), noisebench_llm::Senseless> {
        anchor_sense(o, &input.triplets, &input.pivots)
    }

    /// The pattern, its facts with their sentences and which of them share a chunk, the pivot's
    /// names and the report's details: an edit elsewhere in the chunks keeps the question.
    fn reuse_key(input: &QaMultiInput) -> Option<serde_json::Value> {
        let mut chunk_ids: Vec<&str> = Vec::new();
        let facts: Vec<serde_json::Value> = input
            .triplets
            .iter()
            .map(|t| {
                let ordinal = match chunk_ids.iter().position(|c| *c == t.chunk_id) {
                    Some(i) => i,
                    None => {
                        chunk_ids.push(&t.chunk_id);
                        chunk_ids.len() - 1
                    }
                };
                fact_key(t, ordinal)
            })
            .collect();
        Some(serde_json::json!({
            "pattern": input.pattern,
            "facts": facts,
            "pivots": input.pivots,
            "metadata": input.metadata,
        }))
    }

    fn examples() -> Vec<QaMultiInput> {
        let fact = |e1: &str, r: &str, e2: &str, chunk: &str, s: &str| TripletText {
            entity_1: e1.into(),
            relation: r.into(),
            entity_2: e2.into(),
            chunk_id: chunk.into(),
            source_sentence: s.into(),
        };
        let chain = |a: TripletText, b: TripletText, pivot: &str| QaMultiInput {
            pattern: MultiHopPattern::Chain,
            chunks: vec![
                a.source_sentence.clone().into(),
                b.source_sentence.clone().into(),
            ],
            triplets: vec![a, b],
            pivots: vec![pivot.into()],
            metadata: BTreeMap::from([("title".to_string(), "Annual report 2023".to_string())]),
        };
        vec![
            chain(
                fact(
                    "Harbour Freight Group",
                    "acquired",
                    "Calder Port Services",
                    "c1",
                    "Harbour Freight Group acquired Calder Port Services in 2023.",
                ),
                fact(
                    "Calder Port Services",
                    "operates",
                    "Eastgate Terminal",
                    "c2",
                    "Calder Port Services operates Eastgate Terminal.",
                ),
                "Calder Port Services",
            ),
            chain(
                fact(
                    "The Ministry of Transport",
                    "funds",
                    "the Eastline rail project",
                    "c1",
                    "The Ministry of Transport funds the Eastline rail project.",
                ),
                fact(
                    "the Eastline rail project",
                    "employs",
                    "420 people",
                    "c2",
                    "The Eastline rail project employs 420 people.",
                ),
                "the Eastline rail project",
            ),
        ]
    }

    fn offline(input: &QaMultiInput) -> QaOutput {
        let ts = &input.triplets;
        if ts.len() < 2 {
            return declined();
        }
        let distinct: BTreeSet<&str> = ts.iter().map(|t| t.chunk_id.as_str()).collect();
        if distinct.len() < 2 {
            return declined();
        }
        let r = |i: usize| ts[i].relation.trim();
        let last = ts.len() - 1;
        let (answer, positional) = match input.pattern {
            MultiHopPattern::Chain => (ts[last].entity_2.trim(), ts[0].entity_2.trim()),
            MultiHopPattern::Star => (ts[last].entity_2.trim(), ts[0].entity_1.trim()),
            MultiHopPattern::InvertedStar => (ts[last].entity_1.trim(), ts[0].entity_2.trim()),
        };
        let pivot = input
            .pivots
            .first()
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
            .unwrap_or(positional);
        let ctx = context(&input.metadata, &[answer, pivot]);
        let question = match input.pattern {
            MultiHopPattern::Chain => {
                let mut q = format!("{} {}", ts[0].entity_1.trim(), r(0));
                for i in 1..ts.len() {
                    q.push_str(&format!(" something that {}", r(i)));
                }
                q.push_str(&format!(" what, according to {ctx}?"));
                q
            }
            MultiHopPattern::Star => {
                let known: Vec<String> = (0..last)
                    .map(|i| format!("{} {}", r(i), ts[i].entity_2.trim()))
                    .collect();
                format!(
                    "The entity that {} also {} what, according to {ctx}?",
                    known.join(" and "),
                    r(last)
                )
            }
            MultiHopPattern::InvertedStar => {
                let known: Vec<String> = (0..last)
                    .map(|i| format!("{} {}", ts[i].entity_1.trim(), r(i)))
                    .collect();
                format!(
                    "What {} the same thing that {}, according to {ctx}?",
                    r(last),
                    known.join(" and ")
                )
            }
        };
        let pivot_words = words(pivot).iter().filter(|w| !is_stopword(w)).count();
        if pivot_words < 2
            || answer.is_empty()
            || contains_phrase(&question, answer)
            || contains_phrase(&question, pivot)
            || contains_phrase(&question, positional)
        {
            return declined();
        }
        QaOutput {
            question: upper_first(&question),
            answer: answer.to_string(),
        }
    }
}

/// How a question names its report: "Calder Port Authority's 2023 10-K", "the 2024 report on
/// Estonia", "the report of the City of Riverton", its title, "the 2023 10-K", else "the
/// report": the first of those that names none of `avoid` (a pivot or the answer: a filer's
/// own name cannot place a question that must not name the filer).
pub fn context(metadata: &BTreeMap<String, String>, avoid: &[&str]) -> String {
    let get = |k: &str| metadata.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
    let year = get("fiscal_year")
        .or_else(|| get("year"))
        .map(str::to_string)
        .or_else(|| {
            get("period_of_report")
                .or_else(|| get("filing_date"))
                .and_then(|d| d.get(..4))
                .filter(|y| y.chars().all(|c| c.is_ascii_digit()))
                .map(str::to_string)
        });
    let year = year.map(|y| format!("{y} ")).unwrap_or_default();
    let form = get("filing_type");
    let mut candidates = Vec::new();
    if let Some(company) = get("company") {
        candidates.push(format!(
            "{company}'s {year}{}",
            form.unwrap_or("annual report")
        ));
    }
    if let Some(country) = get("country") {
        candidates.push(format!("the {year}report on {country}"));
    }
    if let Some(grantee) = get("grantee") {
        candidates.push(format!("the {year}report of {grantee}"));
    }
    if let Some(title) = get("title") {
        candidates.push(format!("the report \"{title}\""));
    }
    if let Some(form) = form {
        candidates.push(format!("the {year}{form}"));
    }
    candidates
        .into_iter()
        .find(|c| !avoid.iter().any(|a| contains_phrase(c, a)))
        .unwrap_or_else(|| "the report".to_string())
}

/// `qa_judge`: scores 1-5 for a question-answer pair; `reasonableness` for multi-hop pairs only.
pub(crate) struct QaJudge;

/// The input of `qa_judge`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct QaJudgeInput {
    pub question: String,
    pub answer: String,
    /// The answer chunks' texts.
    pub chunks: Vec<String>,
    pub source_sentences: Vec<String>,
    pub multi_hop: bool,
}

/// The judge's scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QaJudgeOutput {
    pub clarity: i64,
    pub correctness: i64,
    #[serde(default)]
    pub reasonableness: Option<i64>,
}

fn score_ok(what: &str, s: i64) -> Result<(), String> {
    if (1..=5).contains(&s) {
        Ok(())
    } else {
        Err(format!("`{what}` is {s}, outside 1-5"))
    }
}

impl Task for QaJudge {
    const NAME: &'static str = "qa_judge";
    const OFFLINE_VERSION: &'static str = "offline-1";
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

    /// The pair and the sentences it rests on: an edit elsewhere in the answer chunks keeps the
    /// scores.
    fn reuse_key(input: &QaJudgeInput) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "question": input.question,
            "answer": input.answer,
            "source_sentences": input.source_sentences,
            "multi_hop": input.multi_hop,
        }))
    }

    /// A clear, correct pair and a garbled one whose answer its sentence does not hold.
    fn examples() -> Vec<QaJudgeInput> {
        let sentence = "Harbour Freight Group acquired Calder Port Services in 2023.";
        [
            (
                "Which company did Harbour Freight Group acquire in 2023?",
                "Calder Port Services",
            ),
            (
                "acquired what the the company [ENTITY] something",
                "Eastline rail project",
            ),
        ]
        .iter()
        .map(|(q, a)| QaJudgeInput {
            question: (*q).into(),
            answer: (*a).into(),
            chunks: vec![sentence.into()],
            source_sentences: vec![sentence.into()],
            multi_hop: false,
        })
        .collect()
    }

    fn offline(input: &QaJudgeInput) -> QaJudgeOutput {
        let q = input.question.trim();
        let qw: Vec<&str> = q.split_whitespace().collect();
        let lower = q.to_lowercase();
        let mut clarity: i64 = 5;
        if !q.ends_with('?') {
            clarity -= 1;
        }
        // Concise (RARE's rubric): one point off past 18 words, another past 24.
        for limit in [18, 24] {
            if qw.len() > limit {
                clarity -= 1;
            }
        }
        if qw.len() < 4 {
            clarity -= 1;
        }
        if qw
            .windows(2)
            .any(|w| w[0].eq_ignore_ascii_case(w[1]) && w[0].chars().all(char::is_alphabetic))
        {
            clarity -= 1;
        }
        if q.contains("{{") || q.contains('[') || q.contains('<') {
            clarity -= 1;
        }
        let placeholders = ["something", "the entity that", "the same thing"]
            .iter()
            .map(|p| lower.matches(p).count())
            .sum::<usize>();
        if placeholders > 1 {
            clarity -= 1;
        }
        let sources: Vec<&str> = input
            .source_sentences
            .iter()
            .chain(input.chunks.iter())
            .map(String::as_str)
            .collect();
        let correctness = if input.answer.trim().is_empty() || contains_phrase(q, &input.answer) {
            1
        } else if sources.iter().any(|s| contains_phrase(s, &input.answer)) {
            5
        } else {
            let aw = words(&input.answer);
            let sw: BTreeSet<String> = sources.iter().flat_map(|s| words(s)).collect();
            let share = if aw.is_empty() {
                0.0
            } else {
                aw.iter().filter(|w| sw.contains(*w)).count() as f64 / aw.len() as f64
            };
            match share {
                s if s >= 0.75 => 4,
                s if s >= 0.5 => 3,
                s if s > 0.0 => 2,
                _ => 1,
            }
        };
        let reasonableness = input.multi_hop.then(|| {
            let distinct: BTreeSet<String> = input
                .source_sentences
                .iter()
                .map(|s| normalize(s))
                .collect();
            if distinct.len() >= 2 { 5 } else { 2 }
        });
        QaJudgeOutput {
            clarity: clarity.clamp(1, 5),
            correctness,
            reasonableness,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_text_is_written_and_read_as_a_plain_string() {
        let single = QaSingleInput {
            triplet: t("A", "owns", "B", "c1"),
            chunk: "A owns B.".into(),
            metadata: BTreeMap::new(),
        };
        let json = serde_json::to_value(&single).unwrap();
        assert_eq!(json["chunk"], serde_json::json!("A owns B."));
        let back: QaSingleInput = serde_json::from_value(json).unwrap();
        assert_eq!(back, single);
        // Clones share the text.
        let copy = single.chunk.clone();
        assert!(std::ptr::eq(copy.as_ptr(), single.chunk.as_ptr()));
    }
    use noisebench_llm::prompt::Prompts;

    fn t(e1: &str, r: &str, e2: &str, chunk: &str) -> TripletText {
        TripletText {
            entity_1: e1.into(),
            relation: r.into(),
            entity_2: e2.into(),
            chunk_id: chunk.into(),
            source_sentence: format!("{e1} {r} {e2}."),
        }
    }

    fn prompts() -> Prompts {
        Prompts::in_dir(&noisebench_testkit::repo_root().join("pipelines/prompts"))
    }

    fn meta() -> BTreeMap<String, String> {
        [
            ("company", "Calder Port Authority"),
            ("filing_type", "10-K"),
            ("filing_date", "2024-03-01"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    #[test]
    fn single_hop_asks_for_the_tail_with_the_report_named() {
        let input = QaSingleInput {
            triplet: t(
                "Northwind Logistics",
                "acquired",
                "Baltic Freight Lines",
                "c1",
            ),
            chunk: "Northwind Logistics acquired Baltic Freight Lines.".into(),
            metadata: meta(),
        };
        let json = noisebench_llm::task::offline_self_check::<QaSingle>(&prompts(), input).unwrap();
        assert_eq!(
            json,
            r#"{"question":"Northwind Logistics acquired what, according to Calder Port Authority's 2024 10-K?","answer":"Baltic Freight Lines"}"#
        );
    }

    #[test]
    fn multi_hop_names_the_pivot_only_through_the_other_fact() {
        let chain = QaMultiInput {
            pattern: MultiHopPattern::Chain,
            triplets: vec![
                t(
                    "Northwind Logistics",
                    "acquired",
                    "Baltic Freight Lines",
                    "c1",
                ),
                t("Baltic Freight Lines", "serves", "Riga Harbour", "c2"),
            ],
            chunks: vec!["a".into(), "b".into()],
            pivots: vec!["Baltic Freight Lines".into()],
            metadata: BTreeMap::new(),
        };
        let json =
            noisebench_llm::task::offline_self_check::<QaMulti>(&prompts(), chain.clone()).unwrap();
        assert_eq!(
            json,
            r#"{"question":"Northwind Logistics acquired something that serves what, according to the report?","answer":"Riga Harbour"}"#
        );
        let mut one_chunk = chain.clone();
        one_chunk.triplets[1].chunk_id = "c1".into();
        assert_eq!(QaMulti::offline(&one_chunk), declined());
        let mut generic = chain;
        generic.triplets[0].entity_2 = "the plant".into();
        generic.triplets[1].entity_1 = "the plant".into();
        generic.pivots = vec!["the plant".into()];
        assert_eq!(QaMulti::offline(&generic), declined());
        let inverted = QaMultiInput {
            pattern: MultiHopPattern::InvertedStar,
            triplets: vec![
                t("Northwind Logistics", "leases", "Pier Seven Terminal", "c1"),
                t("Harbor Rail Co", "operates", "Pier Seven Terminal", "c2"),
            ],
            chunks: vec!["a".into(), "b".into()],
            pivots: vec![],
            metadata: meta(),
        };
        assert_eq!(
            QaMulti::offline(&inverted).question,
            "What operates the same thing that Northwind Logistics leases, according to Calder Port Authority's 2024 10-K?"
        );
        noisebench_llm::task::offline_self_check::<QaMulti>(&prompts(), inverted).unwrap();
    }

    #[test]
    fn the_judge_scores_and_checks_ranges() {
        let input = QaJudgeInput {
            question: "Northwind Logistics acquired what?".into(),
            answer: "Baltic Freight Lines".into(),
            chunks: vec!["Northwind Logistics acquired Baltic Freight Lines.".into()],
            source_sentences: vec![],
            multi_hop: false,
        };
        let json =
            noisebench_llm::task::offline_self_check::<QaJudge>(&prompts(), input.clone()).unwrap();
        assert_eq!(
            json,
            r#"{"clarity":5,"correctness":5,"reasonableness":null}"#
        );
        let bad = |c, r| QaJudgeOutput {
            clarity: c,
            correctness: 4,
            reasonableness: r,
        };
        assert!(QaJudge::check(&input, &bad(0, None)).is_err());
        assert!(QaJudge::check(&input, &bad(6, None)).is_err());
        let multi = QaJudgeInput {
            multi_hop: true,
            ..input
        };
        assert!(QaJudge::check(&multi, &bad(4, None)).is_err());
        assert!(QaJudge::check(&multi, &bad(4, Some(9))).is_err());
        assert!(QaJudge::check(&multi, &bad(4, Some(4))).is_ok());
    }

    /// The preflight examples render and pass every check, and the rules answer them
    /// differently (a model giving one answer to both is not reading them).
    #[test]
    fn the_preflight_examples_are_answered_differently() {
        use noisebench_llm::prompt::Prompts;
        use noisebench_llm::task::offline_self_check;
        let prompts = Prompts::in_dir(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts"),
        );
        fn all<T: Task>(prompts: &Prompts) -> Vec<String> {
            let examples = T::examples();
            assert_eq!(examples.len(), 2, "{}", T::NAME);
            examples
                .into_iter()
                .map(|i| offline_self_check::<T>(prompts, i).unwrap())
                .collect()
        }
        for answers in [
            all::<QaSingle>(&prompts),
            all::<QaMulti>(&prompts),
            all::<QaJudge>(&prompts),
        ] {
            assert_ne!(answers[0], answers[1]);
            assert!(!answers[0].contains(r#""question":"""#), "{answers:?}");
        }
    }

    #[test]
    fn context_falls_back_to_clear_defaults() {
        let m = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        assert_eq!(context(&m(&[]), &[]), "the report");
        assert_eq!(
            context(&m(&[("country", "Estonia"), ("year", "2024")]), &[]),
            "the 2024 report on Estonia"
        );
        assert_eq!(
            context(&m(&[("grantee", "City of Riverton")]), &[]),
            "the report of City of Riverton"
        );
        assert_eq!(
            context(&m(&[("company", "Acme"), ("filing_date", "n/a")]), &[]),
            "Acme's annual report"
        );
        // A filer that is the pivot is not named; the filing still is.
        let filer = m(&[
            ("company", "SANDISK CORP"),
            ("filing_type", "10-K"),
            ("filing_date", "1996-03-01"),
        ]);
        assert_eq!(context(&filer, &["SanDisk Corp"]), "the 1996 10-K");
        assert_eq!(context(&filer, &["x"]), "SANDISK CORP's 1996 10-K");
    }
}
