//! The deterministic checks on generated questions (RARE 3.4, Appendix F, and beyond it): pure
//! functions, each failure one [`Rejection`] with its drop reason.
//!
//! The negative-distractor check needs "which chunks of the whole corpus hold this phrase" for
//! every entity a question names; `ChunkIndex` answers that from one Aho-Corasick pass over
//! the normalised text of every chunk, so a question costs a few posting-list intersections
//! rather than a scan of the corpus.

use std::collections::{BTreeMap, BTreeSet};

use aho_corasick::{AhoCorasick, MatchKind};
use noisebench_core::Question;
use noisebench_llm::embed::{cosine_with_norms, norm};
use noisebench_text::{contains_phrase, is_stopword, normalize, sentences, words};

/// Why a generated question is not kept: the drop reasons of the `questions` stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rejection {
    /// The pivot entity is generic (too few meaningful words, or a configured generic phrase):
    /// skipped before any call.
    GenericPivot,
    /// The model returned empty strings (too vague, or answerable from one chunk).
    Declined,
    /// The question is empty or over the word limit.
    QuestionLength,
    /// The answer is a whole sentence copied from the evidence, or over the word limit.
    AnswerIsSentence,
    /// The answer appears in the question.
    AnswerInQuestion,
    /// A pivot entity appears in the question.
    PivotInQuestion,
    /// The answer is in none of the pattern's chunks or triplets.
    AnswerNotGrounded,
    /// One chunk of the corpus holds the answer and every entity the question names.
    SingleChunkAnswerable,
    /// Another question with the same answer says the same thing.
    NearDuplicate,
    /// Another question (with another answer) has the same text: a reader could not tell which
    /// answer is meant (the `unique_question_text` check).
    RepeatedQuestion,
}

impl Rejection {
    /// The drop reason recorded for it.
    pub fn reason(self) -> &'static str {
        match self {
            Rejection::GenericPivot => "generic_pivot",
            Rejection::Declined => "declined",
            Rejection::QuestionLength => "question_length",
            Rejection::AnswerIsSentence => "answer_is_sentence",
            Rejection::AnswerInQuestion => "answer_in_question",
            Rejection::PivotInQuestion => "pivot_in_question",
            Rejection::AnswerNotGrounded => "answer_not_grounded",
            Rejection::SingleChunkAnswerable => "single_chunk_answerable",
            Rejection::NearDuplicate => "near_duplicate",
            Rejection::RepeatedQuestion => "repeated_question",
        }
    }
}

/// Limits of the text checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// A pivot with fewer meaningful (non-stopword) words than this is generic (RARE: 2).
    pub min_pivot_words: usize,
    /// Normalised phrases that are generic whatever their length ("the company", "revenue").
    pub generic_phrases: BTreeSet<String>,
    /// A question over this many words is dropped.
    pub max_question_words: usize,
    /// An answer over this many words is a sentence, not an answer.
    pub max_answer_words: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            min_pivot_words: 2,
            generic_phrases: default_generic_phrases()
                .iter()
                .map(|p| normalize(p))
                .collect(),
            max_question_words: 500,
            max_answer_words: 30,
        }
    }
}

/// Phrases too generic to pivot a question on, whatever their word count.
pub(crate) fn default_generic_phrases() -> Vec<String> {
    [
        "the company",
        "the group",
        "the government",
        "the country",
        "the report",
        "the program",
        "the year",
        "the period",
        "the quarter",
        "revenue",
        "revenues",
        "net income",
        "net sales",
        "measures",
        "operations",
        "the business",
        "fiscal year",
        "this year",
        "last year",
        "total revenue",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Whether a pivot entity is too generic to refer to indirectly (RARE's pivot-rarity check).
pub(crate) fn is_generic_pivot(pivot: &str, limits: &Limits) -> bool {
    let norm = normalize(pivot);
    if limits.generic_phrases.contains(&norm) {
        return true;
    }
    let meaningful = words(pivot).iter().filter(|w| !is_stopword(w)).count();
    meaningful < limits.min_pivot_words
}

/// The evidence a question was generated from, as the text checks read it.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The texts of the pattern's chunks.
    pub chunks: &'a [&'a str],
    /// The pattern's triplets' source sentences.
    pub source_sentences: &'a [String],
    /// Every head and tail of the pattern's triplets.
    pub entities: &'a [String],
    /// The pivot entities, canonical and as the triplets spell them.
    pub pivots: &'a [String],
}

/// The checks that need only the question and its own evidence, in the order they are applied:
/// declined, length, answer a sentence, answer in question, pivot in question, not grounded.
pub(crate) fn check_text(
    question: &str,
    answer: &str,
    evidence: &Evidence<'_>,
    limits: &Limits,
) -> Result<(), Rejection> {
    let (q, a) = (question.trim(), answer.trim());
    if q.is_empty() && a.is_empty() {
        return Err(Rejection::Declined);
    }
    let q_words = q.split_whitespace().count();
    if q_words == 0 || q_words > limits.max_question_words {
        return Err(Rejection::QuestionLength);
    }
    if a.is_empty() || is_copied_sentence(a, evidence, limits) {
        return Err(Rejection::AnswerIsSentence);
    }
    if contains_phrase(q, a) {
        return Err(Rejection::AnswerInQuestion);
    }
    if evidence.pivots.iter().any(|p| contains_phrase(q, p)) {
        return Err(Rejection::PivotInQuestion);
    }
    let grounded = evidence
        .chunks
        .iter()
        .copied()
        .chain(evidence.source_sentences.iter().map(String::as_str))
        .chain(evidence.entities.iter().map(String::as_str))
        .any(|text| contains_phrase(text, a));
    if !grounded {
        return Err(Rejection::AnswerNotGrounded);
    }
    Ok(())
}

/// An answer is a copied sentence when it is over the word limit, or when it is one of the
/// evidence's sentences (five words or more) word for word.
fn is_copied_sentence(answer: &str, evidence: &Evidence<'_>, limits: &Limits) -> bool {
    let aw = words(answer);
    if aw.len() > limits.max_answer_words {
        return true;
    }
    if aw.len() < 5 {
        return false;
    }
    let a = aw.join(" ");
    evidence
        .source_sentences
        .iter()
        .cloned()
        .chain(evidence.chunks.iter().flat_map(|c| sentences(c)))
        .any(|s| normalize(&s) == a)
}

/// The entities a multi-hop question names directly: the pattern's entities that are neither a
/// pivot nor the answer and appear in the question; all of those if none appears (the question
/// then names them in other words, and the check stays conservative).
pub(crate) fn named_entities(q: &Question) -> Vec<String> {
    let answer = normalize(&q.answer);
    let pivots: BTreeSet<String> = q.pivot_entities.iter().map(|p| normalize(p)).collect();
    let candidates: BTreeSet<String> = q
        .entity_1
        .iter()
        .chain(&q.entity_2)
        .map(|e| normalize(e))
        .filter(|e| !e.is_empty() && *e != answer && !pivots.contains(e))
        .collect();
    // An entity spelled like a pivot in a triplet (the graph aligned it) is a pivot too.
    let pivot_surfaces = pivot_surface_forms(q);
    let candidates: Vec<String> = candidates
        .into_iter()
        .filter(|e| !pivot_surfaces.contains(e))
        .collect();
    let named: Vec<String> = candidates
        .iter()
        .filter(|e| contains_phrase(&q.question, e))
        .cloned()
        .collect();
    if named.is_empty() { candidates } else { named }
}

/// The pivot as the triplets spell it, by pattern position: a chain's inner entities, a star's
/// heads, an inverted star's tails (normalised).
pub(crate) fn pivot_surface_forms(q: &Question) -> BTreeSet<String> {
    let n = q
        .triplet_ids
        .len()
        .min(q.entity_1.len())
        .min(q.entity_2.len());
    let mut out = BTreeSet::new();
    match q.kind.as_str() {
        "chained_multi_hop" => {
            for i in 0..n.saturating_sub(1) {
                out.insert(normalize(&q.entity_2[i]));
                out.insert(normalize(&q.entity_1[i + 1]));
            }
        }
        "star_shaped" => out.extend(q.entity_1.iter().map(|e| normalize(e))),
        "inverted_star_shaped" => out.extend(q.entity_2.iter().map(|e| normalize(e))),
        _ => {}
    }
    out.remove("");
    out
}

/// Which chunks hold which phrases, for a fixed set of phrases, over every chunk of a corpus.
///
/// Built with one overlapping Aho-Corasick pass over each chunk's normalised text (words joined
/// by single spaces, padded with a space each side, so a phrase matches whole words only).
/// Phrases not given at build time are still answered, by checking the candidate chunks the
/// indexed phrases leave (or, with none, every chunk).
pub(crate) struct ChunkIndex {
    ids: Vec<String>,
    texts: Vec<String>,
    phrases: BTreeMap<String, usize>,
    postings: Vec<Vec<u32>>,
}

impl ChunkIndex {
    /// Index `chunks` (id, text) for `phrases` (any spelling: they are normalised).
    pub fn build<'a>(
        chunks: impl IntoIterator<Item = (&'a str, &'a str)>,
        phrases: impl IntoIterator<Item = &'a str>,
    ) -> ChunkIndex {
        let threads = noisebench_core::default_threads();
        let (ids, raw): (Vec<String>, Vec<&str>) = chunks
            .into_iter()
            .map(|(id, text)| (id.to_string(), text))
            .unzip();
        let texts =
            noisebench_core::parallel_map(&raw, threads, |text| format!(" {} ", normalize(text)));
        let mut phrase_ids: BTreeMap<String, usize> = BTreeMap::new();
        for p in phrases {
            let n = normalize(p);
            if !n.is_empty() {
                let next = phrase_ids.len();
                phrase_ids.entry(n).or_insert(next);
            }
        }
        let mut patterns = vec![String::new(); phrase_ids.len()];
        for (p, &i) in &phrase_ids {
            patterns[i] = format!(" {p} ");
        }
        let mut postings: Vec<Vec<u32>> = vec![Vec::new(); patterns.len()];
        if !patterns.is_empty() {
            // The automaton over normalised ASCII-or-not phrases cannot fail to build for
            // phrases this size; if it ever did, the lazy path below still answers correctly.
            if let Ok(ac) = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
            {
                // Each chunk's matches on any core; postings filled in chunk order.
                let found = noisebench_core::parallel_map(&texts, threads, |text| {
                    let mut found: Vec<usize> = ac
                        .find_overlapping_iter(text.as_str())
                        .map(|m| m.pattern().as_usize())
                        .collect();
                    found.sort_unstable();
                    found.dedup();
                    found
                });
                for (c, found) in found.into_iter().enumerate() {
                    for pattern in found {
                        postings[pattern].push(c as u32);
                    }
                }
            } else {
                for (p, &i) in &phrase_ids {
                    let needle = format!(" {p} ");
                    postings[i] = (0..texts.len() as u32)
                        .filter(|&c| texts[c as usize].contains(&needle))
                        .collect();
                }
            }
        }
        ChunkIndex {
            ids,
            texts,
            phrases: phrase_ids,
            postings,
        }
    }

    /// Whether chunk `id` holds `phrase` as whole words (false for an unknown chunk).
    #[cfg(test)]
    fn chunk_contains(&self, id: &str, phrase: &str) -> bool {
        let n = normalize(phrase);
        !n.is_empty()
            && self
                .ids
                .iter()
                .position(|i| i == id)
                .is_some_and(|c| self.texts[c].contains(&format!(" {n} ")))
    }

    /// Sorted ids of the chunks holding every phrase of `named` and also `answer`: the chunks
    /// that alone answer a question naming `named`. Empty when `answer` is empty.
    pub(crate) fn chunks_holding_all(&self, named: &[&str], answer: &str) -> Vec<String> {
        let answer = normalize(answer);
        if answer.is_empty() {
            return Vec::new();
        }
        let mut wanted: Vec<String> = named
            .iter()
            .map(|p| normalize(p))
            .filter(|p| !p.is_empty())
            .collect();
        wanted.push(answer);
        wanted.sort();
        wanted.dedup();
        let (indexed, lazy): (Vec<&String>, Vec<&String>) =
            wanted.iter().partition(|p| self.phrases.contains_key(*p));
        let mut lists: Vec<&Vec<u32>> = indexed
            .iter()
            .map(|p| &self.postings[self.phrases[*p]])
            .collect();
        lists.sort_by_key(|l| l.len());
        let mut candidates: Vec<u32> = match lists.first() {
            Some(first) => first.to_vec(),
            None => (0..self.ids.len() as u32).collect(),
        };
        for list in lists.iter().skip(1) {
            candidates.retain(|c| list.binary_search(c).is_ok());
            if candidates.is_empty() {
                break;
            }
        }
        let needles: Vec<String> = lazy.iter().map(|p| format!(" {p} ")).collect();
        let mut out: Vec<String> = candidates
            .into_iter()
            .filter(|&c| {
                needles
                    .iter()
                    .all(|n| self.texts[c as usize].contains(n.as_str()))
            })
            .map(|c| self.ids[c as usize].clone())
            .collect();
        out.sort();
        out
    }
}

/// Near duplicates among questions, in the given order: a question is a near duplicate when an
/// earlier kept question with the same normalised answer has the same normalised text, or an
/// embedding cosine of at least `threshold`.
/// Returns, per question, the index of the earlier question it duplicates.
pub(crate) fn near_duplicates(
    questions: &[(&str, &str)],
    vectors: &[Vec<f32>],
    threshold: f32,
) -> Vec<Option<usize>> {
    let threads = noisebench_core::default_threads();
    // Normalised once: a frequent answer's group is scanned once per question that has it.
    let normalised: Vec<(String, String)> =
        noisebench_core::parallel_map(questions, threads, |(q, a)| (normalize(q), normalize(a)));
    // Each vector's norm once, too.
    let norms: Vec<f32> = noisebench_core::parallel_map(vectors, threads, |v| norm(v));
    // A question is compared only with the questions of its answer: each answer's questions,
    // in order, on any core.
    let mut by_answer: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (_, a)) in normalised.iter().enumerate() {
        by_answer.entry(a.as_str()).or_default().push(i);
    }
    let groups: Vec<Vec<usize>> = by_answer.into_values().collect();
    let found = noisebench_core::parallel_map(&groups, threads, |group| {
        let mut kept: Vec<usize> = Vec::new();
        let mut dups = Vec::new();
        for &i in group {
            let text = &normalised[i].0;
            let dup = kept.iter().copied().find(|&j| {
                &normalised[j].0 == text
                    || match (vectors.get(i), vectors.get(j)) {
                        (Some(x), Some(y)) => {
                            cosine_with_norms(x, y, norms[i], norms[j]) >= threshold
                        }
                        _ => false,
                    }
            });
            match dup {
                Some(j) => dups.push((i, j)),
                None => kept.push(i),
            }
        }
        dups
    });
    let mut out = vec![None; questions.len()];
    for (i, j) in found.into_iter().flatten() {
        out[i] = Some(j);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ev<'a>(
        chunks: &'a [&'a str],
        sentences: &'a [String],
        entities: &'a [String],
        pivots: &'a [String],
    ) -> Evidence<'a> {
        Evidence {
            chunks,
            source_sentences: sentences,
            entities,
            pivots,
        }
    }

    #[test]
    fn pivots_are_generic_by_list_or_by_word_count() {
        let l = Limits::default();
        assert!(is_generic_pivot("The Company", &l));
        assert!(is_generic_pivot("Revenue", &l));
        assert!(is_generic_pivot("the plant", &l));
        assert!(!is_generic_pivot("Baltic Freight Lines", &l));
        assert!(!is_generic_pivot("Riverton Housing Authority", &l));
    }

    #[test]
    fn each_text_check_names_its_reason() {
        let l = Limits::default();
        let chunks = ["Northwind acquired Baltic Freight Lines in 2023. It serves Riga Harbour."];
        let sents = vec!["Northwind acquired Baltic Freight Lines in 2023.".to_string()];
        let ents = vec!["Northwind".to_string(), "Baltic Freight Lines".to_string()];
        let pivots = vec!["Baltic Freight Lines".to_string()];
        let e = ev(&chunks, &sents, &ents, &pivots);
        let check = |q: &str, a: &str| check_text(q, a, &e, &l);
        assert_eq!(check("", ""), Err(Rejection::Declined));
        assert_eq!(
            check(&"word ".repeat(501), "Northwind"),
            Err(Rejection::QuestionLength)
        );
        assert_eq!(
            check(
                "What happened?",
                "Northwind acquired Baltic Freight Lines in 2023."
            ),
            Err(Rejection::AnswerIsSentence)
        );
        assert_eq!(
            check("Did Northwind buy a harbour operator?", "Northwind"),
            Err(Rejection::AnswerInQuestion)
        );
        assert_eq!(
            check("Who bought Baltic Freight Lines?", "Northwind"),
            Err(Rejection::PivotInQuestion)
        );
        assert_eq!(
            check("Who bought the harbour operator?", "Southwind"),
            Err(Rejection::AnswerNotGrounded)
        );
        assert_eq!(
            check("Who bought the harbour operator?", "Northwind"),
            Ok(())
        );
    }

    #[test]
    fn the_index_finds_chunks_holding_every_named_entity_and_the_answer() {
        let chunks = [
            ("c1", "Northwind acquired Baltic Freight Lines."),
            ("c2", "Baltic Freight Lines serves Riga Harbour."),
            ("c3", "Northwind and Riga Harbour signed a lease."),
            ("c4", "Riga Harbourside is another place."),
        ];
        let idx = ChunkIndex::build(
            chunks.iter().copied(),
            ["Northwind", "Baltic Freight Lines", "Riga Harbour"],
        );
        assert_eq!(
            idx.chunks_holding_all(&["Northwind"], "Riga Harbour"),
            ["c3"]
        );
        assert_eq!(
            idx.chunks_holding_all(&[], "riga harbour"),
            ["c2", "c3"],
            "whole words only: Harbourside is not Harbour"
        );
        // A phrase the index was not built for is still answered.
        assert_eq!(idx.chunks_holding_all(&["Northwind"], "a lease"), ["c3"]);
        assert!(idx.chunk_contains("c1", "baltic freight lines"));
        assert!(!idx.chunk_contains("c9", "Northwind"));
    }

    #[test]
    fn named_entities_leave_out_pivots_and_the_answer() {
        let q = Question {
            kind: "chained_multi_hop".into(),
            question: "Which harbour does the freight line Northwind bought serve?".into(),
            answer: "Riga Harbour".into(),
            triplet_ids: vec!["t1".into(), "t2".into()],
            entity_1: vec!["Northwind".into(), "Baltic Freight Lines Ltd".into()],
            entity_2: vec!["Baltic Freight Lines".into(), "Riga Harbour".into()],
            pivot_entities: vec!["Baltic Freight Lines".into()],
            ..Question::default()
        };
        assert_eq!(named_entities(&q), ["northwind"]);
    }

    #[test]
    fn near_duplicates_need_the_same_answer() {
        let qs = [
            ("Who bought Baltic Freight?", "Northwind"),
            ("who bought baltic freight", "Northwind"),
            ("Who bought Baltic Freight?", "Southwind"),
            ("Which firm acquired Baltic Freight?", "Northwind"),
        ];
        let v = |x: f32| vec![x, (1.0 - x * x).sqrt()];
        let vectors = vec![v(1.0), v(0.0), v(1.0), v(0.99)];
        assert_eq!(
            near_duplicates(&qs, &vectors, 0.95),
            [None, Some(0), None, Some(0)]
        );
        assert_eq!(
            near_duplicates(&qs, &vectors, 0.999),
            [None, Some(0), None, None]
        );
    }

    proptest! {
        /// Each answer's questions compared on their own (on any core) find what one pass in
        /// order over all questions finds.
        #[test]
        fn near_duplicates_agree_with_one_pass_in_order(
            rows in proptest::collection::vec((0u8..6, 0u8..4, 0.0f32..1.0), 0..400),
        ) {
            let qs: Vec<(String, String)> = rows
                .iter()
                .map(|(q, a, _)| (format!("question {q}"), format!("answer {a}")))
                .collect();
            let pairs: Vec<(&str, &str)> =
                qs.iter().map(|(q, a)| (q.as_str(), a.as_str())).collect();
            let vectors: Vec<Vec<f32>> =
                rows.iter().map(|(_, _, x)| vec![*x, (1.0 - x * x).sqrt()]).collect();
            let mut want = vec![None; pairs.len()];
            let mut kept: Vec<usize> = Vec::new();
            for i in 0..pairs.len() {
                let x = &vectors[i];
                let close = |j: usize| {
                    let y = &vectors[j];
                    cosine_with_norms(x, y, norm(x), norm(y)) >= 0.98
                };
                let same = |j: usize| {
                    pairs[j].1 == pairs[i].1 && (pairs[j].0 == pairs[i].0 || close(j))
                };
                match kept.iter().copied().find(|&j| same(j)) {
                    Some(j) => want[i] = Some(j),
                    None => kept.push(i),
                }
            }
            prop_assert_eq!(near_duplicates(&pairs, &vectors, 0.98), want);
        }

        /// The index agrees with scanning every chunk with `contains_phrase`.
        #[test]
        fn index_agrees_with_a_scan(
            texts in proptest::collection::vec("[abc ]{0,40}", 1..12),
            named in proptest::collection::vec("[abc]{1,3}( [abc]{1,3})?", 0..3),
            answer in "[abc]{1,3}",
        ) {
            let chunks: Vec<(String, String)> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("c{i:02}"), t.clone()))
                .collect();
            let phrases: Vec<&str> = named.iter().map(String::as_str).take(1).collect();
            let idx = ChunkIndex::build(
                chunks.iter().map(|(a, b)| (a.as_str(), b.as_str())),
                phrases,
            );
            let named_refs: Vec<&str> = named.iter().map(String::as_str).collect();
            let expected: Vec<String> = chunks
                .iter()
                .filter(|(_, t)| {
                    contains_phrase(t, &answer) && named.iter().all(|n| contains_phrase(t, n))
                })
                .map(|(id, _)| id.clone())
                .collect();
            prop_assert_eq!(idx.chunks_holding_all(&named_refs, &answer), expected);
        }
    }
}
