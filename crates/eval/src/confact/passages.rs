//! CONF-FACT's evidence side (section 4.1, Appendix C): documents split into passages of at most
//! `passage_words` words, each passage carrying its source's background; BM25 over one claim's
//! passages; and the credibility-aware rankings of section 4.3 (source filtering, eq. 2's
//! credibility weighting).

use std::collections::BTreeMap;

use noisebench_index::{Bm25, Doc, Query, Spec};
use noisebench_text::sentences::sentences;

use crate::data::EvalDocument;
use crate::generate::{Passage, Retriever};

/// The background shown when a document's source has no background, level or score (GT-MB marks
/// such sources as missing rather than guessing).
pub(crate) const MISSING_BACKGROUND: &str =
    "No background information about this source is available.";

/// `doc`'s text in passages of at most `max_words` words (whitespace-separated), in order.
///
/// Sentences ([`noisebench_text::sentences::sentences`]) are packed greedily and never cut,
/// except a sentence longer than the limit on its own: it is cut every `max_words` words and its
/// pieces are passages of their own. Words are kept in order, whitespace collapsed to single
/// spaces; the title is not part of any passage (CONF-FACT evidence has none). Passage ids are
/// `<document id>#<n>`, n from 1; `source` is the document's domain and `background` its
/// source's background (`background_of`). A `max_words` of 0 counts as 1.
pub fn split_passages(doc: &EvalDocument, max_words: usize) -> Vec<Passage> {
    let max = max_words.max(1);
    let mut texts: Vec<String> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    fn flush(current: &mut Vec<String>, texts: &mut Vec<String>) {
        if !current.is_empty() {
            texts.push(current.join(" "));
            current.clear();
        }
    }
    for sentence in sentences(&doc.text) {
        let words: Vec<&str> = sentence.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        let in_current: usize = current.iter().map(|s| s.split_whitespace().count()).sum();
        if words.len() > max {
            flush(&mut current, &mut texts);
            for piece in words.chunks(max) {
                texts.push(piece.join(" "));
            }
            continue;
        }
        if in_current + words.len() > max {
            flush(&mut current, &mut texts);
        }
        current.push(words.join(" "));
    }
    flush(&mut current, &mut texts);
    let background = background_of(doc);
    texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| Passage {
            id: format!("{}#{}", doc.id, i + 1),
            text,
            source: doc.domain.clone(),
            background: Some(background.clone()),
        })
        .collect()
}

/// What the model is told of a document's source: its own background text; else one built from
/// its level and score ("Source: example.com. Rated credibility: low. Credibility score: 0.12.");
/// else [`MISSING_BACKGROUND`].
pub(crate) fn background_of(doc: &EvalDocument) -> String {
    let c = &doc.credibility;
    if let Some(b) = c
        .background
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty())
    {
        return b.to_string();
    }
    let level = c.level.as_deref().map(str::trim).filter(|l| !l.is_empty());
    if level.is_none() && c.score.is_none() {
        return MISSING_BACKGROUND.into();
    }
    let mut parts = Vec::new();
    if let Some(d) = doc.domain.as_deref().filter(|d| !d.trim().is_empty()) {
        parts.push(format!("Source: {}.", d.trim()));
    }
    if let Some(l) = level {
        parts.push(format!("Rated credibility: {}.", l.to_ascii_lowercase()));
    }
    if let Some(s) = c.score {
        parts.push(format!("Credibility score: {s:.2}."));
    }
    parts.join(" ")
}

/// Whether source filtering (SF) drops `doc`: its level is `low`, or, with no level, its score
/// is below `gamma`. A document with neither is kept: a missing background is not evidence of
/// low credibility.
pub(crate) fn filtered_out(doc: &EvalDocument, gamma: f64) -> bool {
    match doc.credibility.level.as_deref().map(str::trim) {
        Some(l) if !l.is_empty() => l.eq_ignore_ascii_case("low"),
        _ => doc.credibility.score.is_some_and(|s| s < gamma),
    }
}

/// `s_cred` of a document (eq. 2): its score; else the score of its level in `level_scores`
/// (level lowercased); else `missing`.
pub fn credibility_score(
    doc: &EvalDocument,
    level_scores: &BTreeMap<String, f64>,
    missing: f64,
) -> f64 {
    if let Some(s) = doc.credibility.score {
        return s;
    }
    doc.credibility
        .level
        .as_deref()
        .and_then(|l| level_scores.get(&l.trim().to_ascii_lowercase()))
        .copied()
        .unwrap_or(missing)
}

/// Min-max normalisation of raw relevance scores to [0, 1]. All equal (or none): all 0, so
/// relevance decides nothing and credibility alone orders the passages.
pub fn min_max(raw: &[f64]) -> Vec<f64> {
    let lo = raw.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = raw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if raw.is_empty() || hi <= lo {
        return vec![0.0; raw.len()];
    }
    raw.iter().map(|r| (r - lo) / (hi - lo)).collect()
}

/// A passage's two scores for credibility weighting.
#[derive(Debug, Clone, PartialEq)]
pub struct Weighted {
    pub id: String,
    /// Relevance normalised to [0, 1] ([`min_max`]).
    pub relevance: f64,
    /// `s_cred` in [0, 1].
    pub credibility: f64,
}

/// Eq. 2: `s = s_rel + beta * s_cred`; with `hard = Some(gamma)` (CW_hard) `s_cred` is first
/// mapped to 1 when at least gamma, else 0.
pub(crate) fn weighted_score(
    relevance: f64,
    credibility: f64,
    beta: f64,
    hard: Option<f64>,
) -> f64 {
    let cred = match hard {
        Some(gamma) if credibility >= gamma => 1.0,
        Some(_) => 0.0,
        None => credibility,
    };
    relevance + beta * cred
}

/// The ids of `passages` by `weighted_score`, best first, ties by id.
pub fn weighted_order(passages: &[Weighted], beta: f64, hard: Option<f64>) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = passages
        .iter()
        .map(|p| {
            (
                weighted_score(p.relevance, p.credibility, beta, hard),
                p.id.as_str(),
            )
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().map(|(_, id)| id.to_string()).collect()
}

/// The passages of one claim in a BM25 index: ranks them for a query, and serves as the claim's
/// [`Retriever`] (CounterRefine's extra retrievals search the same passages).
pub struct ClaimIndex {
    passages: Vec<Passage>,
    /// `None` when the claim has no passages or the index could not be built (then every
    /// passage scores 0 and the ranking is by id).
    bm25: Option<Bm25>,
    /// Why the index could not be built, if so.
    pub error: Option<String>,
}

impl std::fmt::Debug for ClaimIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaimIndex")
            .field("passages", &self.passages.len())
            .field("error", &self.error)
            .finish()
    }
}

impl ClaimIndex {
    /// An in-RAM BM25 index of `passages`.
    pub fn new(passages: Vec<Passage>) -> ClaimIndex {
        if passages.is_empty() {
            return ClaimIndex {
                passages,
                bm25: None,
                error: None,
            };
        }
        let docs = passages.iter().map(|p| Doc {
            id: p.id.clone(),
            text: vec![p.text.clone()],
            stored: Vec::new(),
            time: None,
        });
        match Bm25::in_ram(&Spec::one_text("text"), docs) {
            Ok(bm25) => ClaimIndex {
                passages,
                bm25: Some(bm25),
                error: None,
            },
            Err(e) => {
                tracing::warn!(error = %e, "confact: BM25 index of a claim's passages failed");
                ClaimIndex {
                    passages,
                    bm25: None,
                    error: Some(e.to_string()),
                }
            }
        }
    }

    pub fn passages(&self) -> &[Passage] {
        &self.passages
    }

    /// Every passage with its BM25 score for `query`, best first, ties by id. Passages sharing
    /// no term with the query score 0 and still rank (last): like the paper's BM25 top-5, a claim
    /// always gets up to K passages of its own evidence.
    pub fn ranked(&self, query: &str) -> Vec<(&Passage, f64)> {
        let mut scores: BTreeMap<&str, f64> = BTreeMap::new();
        if let Some(bm25) = &self.bm25 {
            match bm25.search(&Query::new(query, self.passages.len())) {
                Ok(hits) => {
                    for h in hits {
                        if let Some(p) = self.passages.iter().find(|p| p.id == h.id) {
                            scores.insert(p.id.as_str(), f64::from(h.score));
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "confact: BM25 search failed"),
            }
        }
        let mut out: Vec<(&Passage, f64)> = self
            .passages
            .iter()
            .map(|p| (p, scores.get(p.id.as_str()).copied().unwrap_or(0.0)))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
        out
    }
}

impl Retriever for ClaimIndex {
    fn retrieve(&self, query: &str, k: usize) -> Vec<Passage> {
        self.ranked(query)
            .into_iter()
            .take(k)
            .map(|(p, _)| p.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Credibility;

    fn doc(id: &str, text: &str) -> EvalDocument {
        EvalDocument {
            id: id.into(),
            claim_id: Some("c".into()),
            title: String::new(),
            text: text.into(),
            label: None,
            url: None,
            domain: Some("example.com".into()),
            credibility: Credibility::default(),
        }
    }

    #[test]
    fn sentences_are_packed_and_long_ones_cut() {
        let d = doc(
            "d",
            "One two three. Four five. Six seven eight nine ten eleven twelve. End.",
        );
        let texts: Vec<String> = split_passages(&d, 5).into_iter().map(|p| p.text).collect();
        assert_eq!(
            texts,
            vec![
                "One two three. Four five.",
                "Six seven eight nine ten",
                "eleven twelve.",
                "End."
            ]
        );
        let ids: Vec<String> = split_passages(&d, 5).into_iter().map(|p| p.id).collect();
        assert_eq!(ids, vec!["d#1", "d#2", "d#3", "d#4"]);
        assert!(split_passages(&doc("e", "  \n "), 5).is_empty());
    }

    #[test]
    fn backgrounds_fall_back_to_level_and_score_then_to_missing() {
        let mut d = doc("d", "x");
        assert_eq!(background_of(&d), MISSING_BACKGROUND);
        d.credibility.level = Some("Low".into());
        assert_eq!(
            background_of(&d),
            "Source: example.com. Rated credibility: low."
        );
        d.credibility.score = Some(0.123);
        assert_eq!(
            background_of(&d),
            "Source: example.com. Rated credibility: low. Credibility score: 0.12."
        );
        d.credibility.background = Some("A tabloid.".into());
        assert_eq!(background_of(&d), "A tabloid.");
    }

    #[test]
    fn credibility_scores_and_filtering() {
        let levels: BTreeMap<String, f64> = [("high", 0.9), ("medium", 0.5), ("low", 0.1)]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        let mut d = doc("d", "x");
        assert_eq!(credibility_score(&d, &levels, 0.5), 0.5);
        assert!(!filtered_out(&d, 0.3));
        d.credibility.level = Some("HIGH".into());
        assert_eq!(credibility_score(&d, &levels, 0.5), 0.9);
        d.credibility.score = Some(0.2);
        assert_eq!(credibility_score(&d, &levels, 0.5), 0.2);
        // The level decides filtering when there is one.
        assert!(!filtered_out(&d, 0.3));
        d.credibility.level = None;
        assert!(filtered_out(&d, 0.3));
        d.credibility.level = Some("low".into());
        d.credibility.score = Some(0.9);
        assert!(filtered_out(&d, 0.3));
    }

    #[test]
    fn min_max_spans_zero_to_one_and_flat_scores_give_zero() {
        assert_eq!(min_max(&[2.0, 4.0, 3.0]), vec![0.0, 1.0, 0.5]);
        assert_eq!(min_max(&[1.5, 1.5]), vec![0.0, 0.0]);
        assert!(min_max(&[]).is_empty());
    }
}
