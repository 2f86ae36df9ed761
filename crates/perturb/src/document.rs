//! The `document-perturbations` stage (RARE 5.2, Appendix B, C.2): each question's evidence
//! chunks (its `answer_chunk_ids`), altered two ways.
//!
//! - `regex_delete` (same wording, answer gone): the question's evidence sentences (its
//!   `source_sentences` and its triplets' `source_sentence`) are deleted from the chunk, matched
//!   case-insensitively with any spacing; where the answer is still in what is left, every other
//!   sentence carrying it is deleted too ([`delete_answer`]). A chunk left with nothing is a
//!   drop (`answer_survives_deletion`).
//! - `back_translation` (other wording, same answer): the chunk through the LLM task
//!   `back_translate` into French and back in one call. An empty result (`empty_translation`),
//!   one not in English by whatlang (`wrong_language`), one much shorter or longer than the
//!   chunk (`length_changed`) or keeping too few of its words (`meaning_lost`), one that lost
//!   the answer the chunk held (`answer_lost_in_translation`) or whose embedding similarity to
//!   the chunk is below `min_similarity` (`low_similarity`) is a drop.
//!
//! Every row records its embedding similarity to the original chunk. A question whose answer
//! chunk is missing or empty drops that chunk (`no_chunk_text`).

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::{
    Chunk, ConfigError, DocumentPerturbation, DropReason, Drops, InputSpec, Inputs, OutputSpec,
    Question, ShardKey, StageContext, StageError, StageFacts, StageOutput, StageReport, TableKind,
    Triplet, TypedStage, default_threads, parallel_map, parallel_map_with, stable_id,
};
use noisebench_llm::{Llm, StageTasks};
use noisebench_text::{Phrase, sentences};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::similarity::{Distribution, round_similarity};
use crate::tasks::{
    BackTranslate, BackTranslateInput, BackTranslation, DOCUMENT_TASKS, language_rejection,
};

/// The two kinds, in RARE's order.
pub const KINDS: [&str; 2] = ["regex_delete", "back_translation"];

/// Configuration of the `document-perturbations` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentPerturbationsConfig {
    /// The kinds to make: any of `regex_delete`, `back_translation` (RARE: both).
    #[serde(default = "default_kinds")]
    pub kinds: Vec<String>,
    /// The language back-translation goes through, named in English (RARE: French).
    #[serde(default = "default_pivot")]
    pub pivot_language: String,
    /// A back-translation whose embedding similarity to its chunk is below this is dropped
    /// (`low_similarity`): what the length and word checks let through but the meaning did
    /// not survive. 0 keeps every one.
    #[serde(default = "default_min_similarity")]
    pub min_similarity: f64,
}

fn default_min_similarity() -> f64 {
    0.3
}

fn default_kinds() -> Vec<String> {
    KINDS.iter().map(|k| k.to_string()).collect()
}
fn default_pivot() -> String {
    "French".into()
}

impl Default for DocumentPerturbationsConfig {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({}))
            .unwrap_or_else(|_| unreachable!("all fields have defaults"))
    }
}

/// The `document-perturbations` stage. Build with the run's [`Llm`].
#[derive(Debug, Clone)]
pub struct DocumentPerturbationsStage {
    llm: Llm,
    tasks: StageTasks,
}

impl DocumentPerturbationsStage {
    pub fn new(llm: Llm) -> Self {
        Self {
            tasks: StageTasks::new(llm.clone(), DOCUMENT_TASKS),
            llm,
        }
    }
}

/// Why an answer deletion gives no row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletionRejection {
    /// No evidence sentence is in the chunk and the answer is not either: nothing to delete.
    NothingToDelete,
    /// Deleting every sentence that carries the answer would leave nothing (or the answer
    /// still reads across what is left).
    AnswerSurvives,
}

impl DeletionRejection {
    pub fn reason(self) -> &'static str {
        match self {
            DeletionRejection::NothingToDelete => "nothing_to_delete",
            DeletionRejection::AnswerSurvives => "answer_survives_deletion",
        }
    }
}

/// A chunk with the answer deleted.
#[derive(Debug, Clone, PartialEq)]
pub struct Deletion {
    pub text: String,
    /// Evidence sentences found and deleted.
    pub evidence_deleted: usize,
    /// Further sentences deleted because they still carried the answer.
    pub answer_sentences_deleted: usize,
}

/// Deletes sentences from texts: every case-insensitive occurrence of a sentence's words with
/// any run of whitespace between them (the regex `w1\s+w2…`, case-insensitive).
///
/// An ASCII sentence in a text without `ſ` (U+017F) or `K` (U+212A), the only characters whose
/// case folding is an ASCII letter, is matched byte by byte ([`find_literal`]); any other is
/// matched by that regex, compiled once per distinct sentence (questions resting on one chunk
/// share evidence sentences) and kept in a cache emptied when it holds [`Patterns::MAX`].
#[derive(Default)]
pub struct Patterns {
    compiled: std::collections::HashMap<String, Option<regex::Regex>>,
}

impl Patterns {
    const MAX: usize = 4096;

    fn get(&mut self, sentence: &str) -> Option<&regex::Regex> {
        if !self.compiled.contains_key(sentence) {
            if self.compiled.len() >= Self::MAX {
                self.compiled.clear();
            }
            let words: Vec<String> = sentence.split_whitespace().map(regex::escape).collect();
            let re = (!words.is_empty())
                .then(|| {
                    regex::RegexBuilder::new(&words.join(r"\s+"))
                        .case_insensitive(true)
                        .build()
                        .ok()
                })
                .flatten();
            self.compiled.insert(sentence.to_string(), re);
        }
        self.compiled.get(sentence).and_then(Option::as_ref)
    }

    /// Delete every case-insensitive occurrence of `sentence` (any run of whitespace matching
    /// any other) from `text`; returns how many were deleted.
    fn delete_all(&mut self, text: &mut String, sentence: &str) -> usize {
        if sentence.is_ascii() && !text.contains(['\u{17f}', '\u{212a}']) {
            let words: Vec<&[u8]> = sentence.split_whitespace().map(str::as_bytes).collect();
            if words.is_empty() {
                return 0;
            }
            let mut out = String::new();
            let (mut n, mut kept) = (0, 0);
            let mut from = 0;
            while let Some((start, end)) = find_literal(text, &words, from) {
                out.push_str(&text[kept..start]);
                kept = end;
                from = end;
                n += 1;
            }
            if n > 0 {
                out.push_str(&text[kept..]);
                *text = out;
            }
            return n;
        }
        self.delete_all_regex(text, sentence)
    }

    /// [`Patterns::delete_all`] by the regex, whatever the text.
    fn delete_all_regex(&mut self, text: &mut String, sentence: &str) -> usize {
        let Some(re) = self.get(sentence) else {
            return 0;
        };
        let n = re.find_iter(text).count();
        if n > 0 {
            *text = re.replace_all(text, "").into_owned();
        }
        n
    }
}

/// The first match at or after byte `from` of `words` (ASCII, none empty) in `text`: each word
/// equal to the text's bytes but for ASCII case, consecutive words separated by one or more
/// whitespace characters (Unicode's, as `\s` is). The leftmost match, as the regex finds it:
/// with literal words and whitespace between, a start position matches in at most one way.
fn find_literal(text: &str, words: &[&[u8]], from: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let first = words[0][0];
    let (lo, up) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
    let mut at = from;
    while at < bytes.len() {
        let start = at + bytes[at..].iter().position(|b| *b == lo || *b == up)?;
        if let Some(end) = match_at(text, words, start) {
            return Some((start, end));
        }
        at = start + 1;
    }
    None
}

/// The end of `words` matched at byte `start` of `text` (an ASCII byte, so a char boundary).
fn match_at(text: &str, words: &[&[u8]], start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = start;
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            // One or more whitespace characters.
            let rest = &text[at..];
            let gap = rest
                .char_indices()
                .find(|(_, c)| !c.is_whitespace())
                .map_or(rest.len(), |(j, _)| j);
            if gap == 0 {
                return None;
            }
            at += gap;
        }
        let end = at + w.len();
        if end > bytes.len() || !bytes[at..end].eq_ignore_ascii_case(w) {
            return None;
        }
        at = end;
    }
    Some(at)
}

/// Spaces left doubled by a deletion closed up, line by line; lines left empty removed.
fn tidy(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("\n")
}

/// RARE's answer deletion: `evidence` sentences deleted from `chunk`, then, while `answer` is
/// still in the text, every remaining sentence (by `noisebench_text::sentences`) that carries it.
pub fn delete_answer(
    chunk: &str,
    evidence: &[&str],
    answer: &str,
) -> Result<Deletion, DeletionRejection> {
    delete_answer_with(&mut Patterns::default(), chunk, evidence, answer)
}

/// [`delete_answer`] with the patterns compiled so far.
pub(crate) fn delete_answer_with(
    patterns: &mut Patterns,
    chunk: &str,
    evidence: &[&str],
    answer: &str,
) -> Result<Deletion, DeletionRejection> {
    let mut text = chunk.to_string();
    let mut evidence_deleted = 0;
    for s in evidence {
        evidence_deleted += patterns.delete_all(&mut text, s.trim());
    }
    let mut answer_sentences_deleted = 0;
    let answer = Phrase::new(answer);
    let has_answer = |t: &str| answer.is_in(t);
    if has_answer(&text) {
        for s in sentences(&text) {
            if answer.is_in(&s) {
                answer_sentences_deleted += patterns.delete_all(&mut text, &s);
            }
        }
    }
    let text = tidy(&text);
    if evidence_deleted + answer_sentences_deleted == 0 {
        return Err(DeletionRejection::NothingToDelete);
    }
    if !text.chars().any(char::is_alphanumeric) || has_answer(&text) {
        return Err(DeletionRejection::AnswerSurvives);
    }
    Ok(Deletion {
        text,
        evidence_deleted,
        answer_sentences_deleted,
    })
}

/// Why a back-translation gives no row, checked in this order (the stage checks the two parts
/// apart: the language once per chunk, the answer per question; the unit tests check both).
#[cfg(test)]
fn translation_rejection(original: &str, translated: &str, answer: &str) -> Option<&'static str> {
    language_rejection(original, translated)
        .or_else(|| answer_rejection(original, translated, answer))
}

/// The check of [`translation_rejection`] that depends on the question's answer.
fn answer_rejection(original: &str, translated: &str, answer: &str) -> Option<&'static str> {
    let answer = Phrase::new(answer);
    if answer.is_in(original) && !answer.is_in(translated) {
        return Some("answer_lost_in_translation");
    }
    None
}

/// The evidence sentences of a question: its own and its triplets', trimmed, distinct.
fn evidence_of<'a>(q: &'a Question, triplets: &BTreeMap<&str, &'a Triplet>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    let from_triplets = q
        .triplet_ids
        .iter()
        .filter_map(|id| triplets.get(id.as_str()))
        .map(|t| t.source_sentence.as_str());
    for s in q
        .source_sentences
        .iter()
        .map(String::as_str)
        .chain(from_triplets)
    {
        let s = s.trim();
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// A row waiting for its similarity.
struct Made<'a> {
    question: &'a Question,
    chunk: &'a Chunk,
    kind: &'static str,
    text: String,
    provenance: String,
}

/// What a run found, beyond its rows: the stage's facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct DocumentPerturbationsSummary {
    pub questions: usize,
    /// (question, answer chunk) pairs considered.
    pub pairs: usize,
    /// Rows per kind.
    pub kept: BTreeMap<String, usize>,
    /// Similarity to the original chunk, per kind.
    pub similarity: BTreeMap<String, Distribution>,
    /// Answer deletions that had to delete sentences beyond the evidence.
    pub extra_deletions: usize,
    /// Back-translation calls (one per distinct chunk).
    pub translations: usize,
    /// Dropped items per reason.
    pub drops: BTreeMap<String, usize>,
    pub embedder: String,
}

impl DocumentPerturbationsSummary {
    fn facts(&self) -> StageFacts {
        let per_kind: Vec<String> = self
            .kept
            .iter()
            .map(|(k, n)| {
                let s = &self.similarity[k];
                format!(
                    "{k} {n} (similarity median {:.3}, min {:.3})",
                    s.median, s.min
                )
            })
            .collect();
        let mut lines = vec![format!(
            "{} questions, {} (question, evidence chunk) pairs; kept: {}; {} answer deletions removed sentences beyond the evidence; similarity by {}.",
            self.questions,
            self.pairs,
            if per_kind.is_empty() {
                "none".to_string()
            } else {
                per_kind.join(", ")
            },
            self.extra_deletions,
            self.embedder
        )];
        if !self.drops.is_empty() {
            let reasons: Vec<String> = self.drops.iter().map(|(r, n)| format!("{r} {n}")).collect();
            lines.push(format!("Dropped: {}.", reasons.join(", ")));
        }
        StageFacts::new("Document perturbations", lines, self)
    }
}

fn drop_item(
    drops: &mut Drops,
    summary: &mut DocumentPerturbationsSummary,
    item: String,
    reason: impl Into<DropReason>,
    detail: impl Into<String>,
) {
    let reason = reason.into();
    *summary.drops.entry(reason.code().to_string()).or_default() += 1;
    drops.add(item, reason, detail);
}

impl TypedStage for DocumentPerturbationsStage {
    type Config = DocumentPerturbationsConfig;
    const KIND: &'static str = "document-perturbations";
    const VERSION: u32 = 1;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![
            InputSpec::required("questions", TableKind::Questions),
            InputSpec::required("triplets", TableKind::Triplets),
            InputSpec::required("chunks", TableKind::Chunks),
        ]
    }

    /// One question is one item: the perturbations of its evidence chunks.
    fn shard_keys(&self) -> Vec<ShardKey> {
        vec![ShardKey::new("questions", "id")]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new(
            "document_perturbations",
            TableKind::DocumentPerturbations,
        )]
    }

    fn validate(
        &self,
        c: &DocumentPerturbationsConfig,
        _root: &std::path::Path,
    ) -> Result<(), ConfigError> {
        if c.kinds.is_empty() {
            return Err(ConfigError::new("kinds", "name at least one kind"));
        }
        if let Some(k) = c.kinds.iter().find(|k| !KINDS.contains(&k.as_str())) {
            return Err(ConfigError::new(
                "kinds",
                format!("unknown kind `{k}`; known: {}", KINDS.join(", ")),
            ));
        }
        if !(-1.0..=1.0).contains(&c.min_similarity) {
            return Err(ConfigError::new(
                "min_similarity",
                "must be within -1 and 1",
            ));
        }
        if c.pivot_language.trim().is_empty() {
            return Err(ConfigError::new("pivot_language", "must name a language"));
        }
        self.tasks.require()
    }

    fn environment(&self) -> serde_json::Value {
        self.tasks.fingerprint()
    }

    fn tasks(&self) -> Vec<&'static str> {
        self.tasks.names()
    }

    fn run(
        &self,
        c: &DocumentPerturbationsConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.validate(c, &ctx.root)?;
        let mut questions: Vec<Question> = inputs.take("questions")?;
        noisebench_core::sort_by_id(&mut questions);
        let triplets: Vec<Triplet> = inputs.take("triplets")?;
        let chunks: Vec<Chunk> = inputs.take("chunks")?;
        let triplet_by_id: BTreeMap<&str, &Triplet> =
            triplets.iter().map(|t| (t.id.as_str(), t)).collect();
        let chunk_by_id: BTreeMap<&str, &Chunk> =
            chunks.iter().map(|c| (c.id.as_str(), c)).collect();
        let stage = ctx.stage_id.as_str();
        let mut drops = Drops::new(stage);
        let mut summary = DocumentPerturbationsSummary {
            questions: questions.len(),
            embedder: self.llm.embedder_name(),
            ..DocumentPerturbationsSummary::default()
        };
        let wants = |k: &str| c.kinds.iter().any(|x| x == k);
        let pairs = evidence_pairs(&questions, &chunk_by_id, &mut drops, &mut summary);
        summary.pairs = pairs.len();
        let mut made: Vec<Made<'_>> = Vec::new();
        if wants("regex_delete") {
            made.extend(regex_deletions(
                &pairs,
                &triplet_by_id,
                &mut drops,
                &mut summary,
            ));
        }
        if wants("back_translation") {
            made.extend(self.back_translations(c, ctx, &pairs, &mut drops, &mut summary));
        }
        let mut rows = if made.is_empty() {
            Vec::new()
        } else {
            self.scored_rows(c, stage, made, &mut drops, &mut summary)
        };
        noisebench_core::sort_by_id(&mut rows);
        let mut by_kind: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in &rows {
            by_kind
                .entry(r.kind.clone())
                .or_default()
                .push(r.similarity.unwrap_or(0.0));
        }
        for (k, sims) in by_kind {
            summary.kept.insert(k.clone(), sims.len());
            summary.similarity.insert(k, Distribution::of(&sims));
        }
        // An item is one (question, chunk, kind): each becomes a row or a counted drop, so the funnel adds up
        // (a question's item count depends on its kinds and chunks, not one per question).
        let report = StageReport {
            items_in: (rows.len() + drops.dropped()) as u64,
            items_out: rows.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput::new(report)
            .with_table("document_perturbations", rows)
            .with_facts(summary.facts()))
    }
}

/// The (question, chunk) pairs with text to perturb: each question's distinct answer chunks;
/// a question without one, or a chunk missing or without text, is a drop.
fn evidence_pairs<'a>(
    questions: &'a [Question],
    chunk_by_id: &BTreeMap<&str, &'a Chunk>,
    drops: &mut Drops,
    summary: &mut DocumentPerturbationsSummary,
) -> Vec<(&'a Question, &'a Chunk)> {
    let mut pairs: Vec<(&Question, &Chunk)> = Vec::new();
    for q in questions {
        if q.answer_chunk_ids.is_empty() {
            drop_item(
                drops,
                summary,
                q.id.clone(),
                "no_chunk_text",
                "the question names no answer chunk",
            );
            continue;
        }
        let mut seen = BTreeSet::new();
        for id in &q.answer_chunk_ids {
            if !seen.insert(id.as_str()) {
                continue;
            }
            match chunk_by_id.get(id.as_str()) {
                Some(ch) if ch.text.chars().any(char::is_alphanumeric) => pairs.push((q, ch)),
                Some(_) => drop_item(
                    drops,
                    summary,
                    format!("{}/{id}", q.id),
                    "no_chunk_text",
                    "the answer chunk has no text",
                ),
                None => drop_item(
                    drops,
                    summary,
                    format!("{}/{id}", q.id),
                    "no_chunk_text",
                    "the answer chunk is not in `chunks`",
                ),
            }
        }
    }
    pairs
}

/// `regex_delete`: each pair's chunk with the evidence and answer sentences deleted.
fn regex_deletions<'a>(
    pairs: &[(&'a Question, &'a Chunk)],
    triplet_by_id: &BTreeMap<&str, &Triplet>,
    drops: &mut Drops,
    summary: &mut DocumentPerturbationsSummary,
) -> Vec<Made<'a>> {
    // Each thread with its own compiled patterns.
    let deleted = parallel_map_with(
        pairs,
        default_threads(),
        Patterns::default,
        |patterns, &(q, ch)| {
            let evidence = evidence_of(q, triplet_by_id);
            let d = delete_answer_with(patterns, &ch.text, &evidence, &q.answer);
            (d, evidence.len())
        },
    );
    let mut made = Vec::new();
    for (&(q, ch), (deletion, evidence)) in pairs.iter().zip(deleted) {
        match deletion {
            Ok(d) => {
                summary.extra_deletions += usize::from(d.answer_sentences_deleted > 0);
                made.push(Made {
                    question: q,
                    chunk: ch,
                    kind: "regex_delete",
                    provenance: format!(
                        "rule:regex_delete ({} evidence and {} further answer sentences deleted)",
                        d.evidence_deleted, d.answer_sentences_deleted
                    ),
                    text: d.text,
                });
            }
            Err(why) => drop_item(
                drops,
                summary,
                format!("{}/{}/regex_delete", q.id, ch.id),
                why.reason(),
                format!(
                    "answer {:?}; {evidence} evidence sentences",
                    clip(&q.answer),
                ),
            ),
        }
    }
    made
}

impl DocumentPerturbationsStage {
    /// `back_translation`: each distinct chunk translated to the pivot language and back (one
    /// call per chunk, however many questions rest on it), kept per pair when its language
    /// and the answer survive.
    fn back_translations<'a>(
        &self,
        c: &DocumentPerturbationsConfig,
        ctx: &StageContext,
        pairs: &[(&'a Question, &'a Chunk)],
        drops: &mut Drops,
        summary: &mut DocumentPerturbationsSummary,
    ) -> Vec<Made<'a>> {
        let stage = ctx.stage_id.as_str();
        let distinct: Vec<&Chunk> = pairs
            .iter()
            .map(|(_, ch)| (ch.id.as_str(), *ch))
            .collect::<BTreeMap<_, _>>()
            .into_values()
            .collect();
        summary.translations = distinct.len();
        let inputs: Vec<BackTranslateInput> = distinct
            .iter()
            .map(|ch| BackTranslateInput {
                text: ch.text.clone(),
                pivot_language: c.pivot_language.clone(),
            })
            .collect();
        let bar = ctx
            .progress
            .bar("back_translate", Some(inputs.len() as u64));
        let answers =
            self.llm
                .run_batch_with_progress::<BackTranslate>(stage, inputs, bar.as_ref());
        bar.finish();
        let by_chunk: BTreeMap<&str, _> = distinct
            .iter()
            .map(|ch| ch.id.as_str())
            .zip(&answers)
            .collect();
        // The language of each translation checked once per chunk, not once per question.
        let checked: Vec<(&Chunk, &Result<_, _>)> =
            distinct.iter().copied().zip(&answers).collect();
        let verdicts = parallel_map(&checked, default_threads(), |(ch, a)| {
            a.as_ref()
                .ok()
                .and_then(|a| language_rejection(&ch.text, a.value.text.trim()))
        });
        let language: BTreeMap<&str, Option<&'static str>> = distinct
            .iter()
            .map(|ch| ch.id.as_str())
            .zip(verdicts)
            .collect();
        let mut made = Vec::new();
        for &(q, ch) in pairs {
            let item = format!("{}/{}/back_translation", q.id, ch.id);
            match by_chunk[ch.id.as_str()] {
                Err(e) => drop_item(drops, summary, item, e.as_drop_reason(), e.to_string()),
                Ok(a) => {
                    let BackTranslation { text, .. } = &a.value;
                    let text = text.trim();
                    let rejected = language[ch.id.as_str()]
                        .or_else(|| answer_rejection(&ch.text, text, &q.answer));
                    match rejected {
                        Some(reason) => drop_item(drops, summary, item, reason, clip(text)),
                        None => made.push(Made {
                            question: q,
                            chunk: ch,
                            kind: "back_translation",
                            text: text.to_string(),
                            provenance: format!(
                                "{} (prompt {}) via {}",
                                a.provenance, a.prompt_version, c.pivot_language
                            ),
                        }),
                    }
                }
            }
        }
        made
    }

    /// The rows of the perturbations made, each with its similarity to its chunk; a
    /// back-translation below `min_similarity` is a drop, and so is every perturbation when
    /// the embedding fails.
    fn scored_rows(
        &self,
        c: &DocumentPerturbationsConfig,
        stage: &str,
        made: Vec<Made<'_>>,
        drops: &mut Drops,
        summary: &mut DocumentPerturbationsSummary,
    ) -> Vec<DocumentPerturbation> {
        // Each distinct text embedded once: a chunk that many questions rest on, and its
        // one back-translation, would otherwise be embedded once per question. The texts
        // are borrowed, and each row then takes its text from `made`: at RARE's size they
        // are hundreds of MB. The chunks' vectors are kept; the perturbed texts' are made
        // a slice at a time and dropped once their similarities are taken, so the vectors
        // held stay near the chunks' whatever the number of rows.
        let embedded = {
            let mut distinct = noisebench_core::DistinctTexts::default();
            let firsts: Vec<usize> = made
                .iter()
                .map(|m| distinct.place(m.chunk.text.as_str()))
                .collect();
            let kept = firsts.iter().max().map_or(0, |m| m + 1);
            let seconds: Vec<usize> = made
                .iter()
                .map(|m| distinct.place(m.text.as_str()))
                .collect();
            let texts = distinct.into_texts();
            similarities(&self.llm, stage, &texts, kept, &firsts, &seconds)
        };
        let (sims, embedder) = match embedded {
            Ok(e) => e,
            Err(e) => {
                for m in &made {
                    drop_item(
                        drops,
                        summary,
                        format!("{}/{}/{}", m.question.id, m.chunk.id, m.kind),
                        e.as_drop_reason(),
                        e.to_string(),
                    );
                }
                return Vec::new();
            }
        };
        let mut rows = Vec::new();
        for (m, sim) in made.into_iter().zip(sims) {
            if m.kind == "back_translation" && f64::from(sim) < c.min_similarity {
                drop_item(
                    drops,
                    summary,
                    format!("{}/{}/{}", m.question.id, m.chunk.id, m.kind),
                    "low_similarity",
                    format!(
                        "similarity {:.3} to the chunk, below min_similarity {} ({embedder}): {}",
                        sim,
                        c.min_similarity,
                        clip(&m.text)
                    ),
                );
                continue;
            }
            rows.push(DocumentPerturbation {
                id: stable_id("dpert", &[&m.question.id, &m.chunk.id, m.kind]),
                question_id: m.question.id.clone(),
                chunk_id: m.chunk.id.clone(),
                kind: m.kind.to_string(),
                text: m.text,
                similarity: Some(round_similarity(sim)),
                provenance: format!("{}; similarity by {embedder}", m.provenance),
            });
        }
        rows
    }
}

/// Texts embedded per call for the perturbed texts: their vectors live only for one slice.
const EMBED_SLICE: usize = 8192;

/// The similarity of each pair `(firsts[i], seconds[i])` of `texts` (distinct; every first
/// below `kept`), and the embedder's name. The first `kept` texts' vectors are kept for the
/// whole run; the rest are embedded [`EMBED_SLICE`] at a time, each slice's pairs scored and
/// its vectors dropped.
fn similarities(
    llm: &Llm,
    stage: &str,
    texts: &[&str],
    kept: usize,
    firsts: &[usize],
    seconds: &[usize],
) -> Result<(Vec<f32>, String), noisebench_llm::LlmError> {
    let dot = |a: &[f32], b: &[f32]| -> f32 { a.iter().zip(b).map(|(x, y)| x * y).sum() };
    let head = llm.embed(stage, &texts[..kept])?;
    let mut sims = vec![0f32; firsts.len()];
    // Pairs by their second text, so each slice's pairs are one run.
    let mut order: Vec<usize> = (0..firsts.len()).collect();
    order.sort_by_key(|&i| seconds[i]);
    let mut next = 0;
    while next < order.len() && seconds[order[next]] < kept {
        let i = order[next];
        sims[i] = dot(&head.vectors[firsts[i]], &head.vectors[seconds[i]]);
        next += 1;
    }
    let mut start = kept;
    while start < texts.len() {
        let end = (start + EMBED_SLICE).min(texts.len());
        let slice = llm.embed(stage, &texts[start..end])?;
        while next < order.len() && seconds[order[next]] < end {
            let i = order[next];
            sims[i] = dot(&head.vectors[firsts[i]], &slice.vectors[seconds[i] - start]);
            next += 1;
        }
        start = end;
    }
    Ok((sims, head.provenance))
}

fn clip(s: &str) -> String {
    s.chars().take(160).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The byte matcher deletes what the regex deletes, whitespace of any kind, case and
        /// the characters near ASCII letters (dotted and dotless i, non-breaking spaces,
        /// vertical tabs) included.
        #[test]
        fn literal_deletion_is_the_regex_deletion(
            text in "[abAB .\t\n\u{b}\u{a0}\u{2003}İı,é]{0,60}",
            sentence in "[abAB .\t\u{b},]{0,12}",
        ) {
            let mut patterns = Patterns::default();
            let (mut fast, mut slow) = (text.clone(), text.clone());
            let n = patterns.delete_all(&mut fast, &sentence);
            let m = patterns.delete_all_regex(&mut slow, &sentence);
            prop_assert_eq!((n, fast), (m, slow));
        }
    }

    #[test]
    fn near_ascii_letters_fall_back_to_the_regex() {
        let mut text = "The \u{212a}iln and the \u{17f}ite.".to_string();
        assert_eq!(
            Patterns::default().delete_all(&mut text, "kiln and the site"),
            1
        );
        assert_eq!(text, "The .");
    }

    #[test]
    fn evidence_then_every_sentence_carrying_the_answer_is_deleted() {
        let chunk = "Northwind Logistics acquired Baltic Freight Lines in 2021. Revenue grew 8%.\nThe deal made Baltic Freight Lines its largest unit. Costs were flat.";
        let d = delete_answer(
            chunk,
            &["northwind logistics acquired  Baltic Freight Lines in 2021."],
            "Baltic Freight Lines",
        )
        .unwrap();
        assert_eq!(d.text, "Revenue grew 8%.\nCosts were flat.");
        assert_eq!((d.evidence_deleted, d.answer_sentences_deleted), (1, 1));
        assert!(!noisebench_text::contains_phrase(
            &d.text,
            "Baltic Freight Lines"
        ));
    }

    #[test]
    fn nothing_left_or_nothing_found_is_a_rejection() {
        assert_eq!(
            delete_answer(
                "Acme owns Zeta. Zeta is Acme's.",
                &["Acme owns Zeta."],
                "Zeta"
            ),
            Err(DeletionRejection::AnswerSurvives)
        );
        assert_eq!(
            delete_answer("Costs were flat.", &["Acme owns Zeta."], "Zeta"),
            Err(DeletionRejection::NothingToDelete)
        );
    }

    #[test]
    fn translations_must_be_english_non_empty_and_keep_the_answer() {
        let original = "Northwind Logistics acquired Baltic Freight Lines in 2021 for its network.";
        assert_eq!(
            translation_rejection(original, " . ", "Baltic Freight Lines"),
            Some("empty_translation")
        );
        assert_eq!(
            translation_rejection(
                original,
                "Northwind Logistics a acquis Baltic Freight Lines en 2021 pour étendre son réseau de transport de marchandises.",
                "Baltic Freight Lines"
            ),
            Some("wrong_language")
        );
        assert_eq!(
            translation_rejection(
                original,
                "Northwind Logistics bought a Baltic carrier in 2021 for its network.",
                "Baltic Freight Lines"
            ),
            Some("answer_lost_in_translation")
        );
        assert_eq!(
            translation_rejection(
                original,
                "In 2021 Northwind Logistics bought Baltic Freight Lines to extend its network.",
                "Baltic Freight Lines"
            ),
            None
        );
    }
}
