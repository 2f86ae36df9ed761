//! BM25 for many short queries over one text field: every term's postings read once out of a
//! built [`Bm25`] index, each with its BM25 score precomputed by tantivy's own formula
//! (`Bm25Weight` with the index's statistics and each document's one-byte length norm), held in
//! memory as `(document, score)` lists. A query adds up the lists of its terms in one array and
//! keeps its top k, ties by id, with none of a tantivy query's per-query machinery (query objects,
//! block-max WAND, stored-field reads for ids).
//!
//! Scores are tantivy's per-term scores added in term order; tantivy adds the same numbers in
//! the order its scorers line up, so a total can differ from [`Bm25::search`]'s in the last bit
//! (a test bounds it) and a near-tie can rank the other way. Built for a benchmark's chunks
//! (tens of thousands of documents, a few hundred thousand queries); an index too large for its
//! postings to fit in memory stays with [`Bm25::search`].

use std::collections::{BTreeSet, HashMap};

use tantivy::postings::Postings;
use tantivy::query::Bm25Weight;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocSet, TERMINATED, TantivyDocument, Term};

use crate::bm25::{Bm25, IndexError};
use crate::vector::TopK;

/// One term's documents and their BM25 scores for it.
#[derive(Debug, Clone, Default)]
struct Scored {
    docs: Vec<u32>,
    scores: Vec<f32>,
}

/// The postings of one text field of a [`Bm25`] index, scored.
#[derive(Debug, Clone)]
pub struct Impacts {
    ids: Vec<String>,
    /// Each document's place in id order (ties are broken by it).
    rank: Vec<u32>,
    /// The document at each place in id order.
    order: Vec<u32>,
    terms: HashMap<String, Scored>,
}

/// Scratch space of one searching thread: the score array and the documents it touched.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    acc: Vec<f32>,
    touched: Vec<u32>,
}

impl Bm25 {
    /// The scored postings of text field `field` (its place in the spec's text fields).
    pub fn impacts(&self, field: usize) -> Result<Impacts, IndexError> {
        let err = |e: tantivy::TantivyError| IndexError::Tantivy {
            location: "(impacts)".into(),
            message: e.to_string(),
        };
        let (searcher, fields) = self.parts();
        let searcher = &searcher;
        let Some(&text) = fields.text.get(field) else {
            return Err(IndexError::Tantivy {
                location: "(impacts)".into(),
                message: format!("no text field {field}"),
            });
        };
        let mut ids = Vec::new();
        let mut terms: HashMap<String, Scored> = HashMap::new();
        for (segment_ord, segment) in searcher.segment_readers().iter().enumerate() {
            let base = ids.len() as u32;
            // Document d of this segment is number base + d (deleted ones keep their number
            // and are never in a posting list).
            for doc in 0..segment.max_doc() {
                let address = tantivy::DocAddress::new(segment_ord as u32, doc);
                let d: TantivyDocument = searcher.doc(address).map_err(err)?;
                let id = d
                    .get_first(fields.id)
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                ids.push(id);
            }
            let inverted = segment.inverted_index(text).map_err(err)?;
            let norms = segment.get_fieldnorms_reader(text).map_err(err)?;
            let alive = segment.alive_bitset();
            let mut stream = inverted.terms().stream().map_err(|e| IndexError::Tantivy {
                location: "(impacts)".into(),
                message: e.to_string(),
            })?;
            while stream.advance() {
                let Ok(word) = std::str::from_utf8(stream.key()) else {
                    continue;
                };
                let term = Term::from_field_text(text, word);
                let weight =
                    Bm25Weight::for_terms(searcher, std::slice::from_ref(&term)).map_err(err)?;
                let mut postings = inverted
                    .read_postings_from_terminfo(stream.value(), IndexRecordOption::WithFreqs)
                    .map_err(|e| IndexError::Tantivy {
                        location: "(impacts)".into(),
                        message: e.to_string(),
                    })?;
                let entry = terms.entry(word.to_string()).or_default();
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if alive.is_none_or(|a| a.is_alive(doc)) {
                        entry.docs.push(base + doc);
                        entry
                            .scores
                            .push(weight.score(norms.fieldnorm_id(doc), postings.term_freq()));
                    }
                    doc = postings.advance();
                }
            }
        }
        let mut order: Vec<u32> = (0..ids.len() as u32).collect();
        order.sort_by(|a, b| ids[*a as usize].cmp(&ids[*b as usize]));
        let mut rank = vec![0u32; ids.len()];
        for (r, i) in order.iter().enumerate() {
            rank[*i as usize] = r as u32;
        }
        Ok(Impacts {
            ids,
            rank,
            order,
            terms,
        })
    }
}

impl Impacts {
    /// Documents held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The id of document `doc` (as [`Impacts::search`] numbers them).
    pub fn id(&self, doc: u32) -> &str {
        &self.ids[doc as usize]
    }

    /// The `k` best documents for the analysed `terms` (as [`crate::terms`] gives them), best
    /// first, ties by id, as `(score, document)`. Documents matching no term are never hits.
    pub fn search(
        &self,
        terms: &BTreeSet<String>,
        k: usize,
        scratch: &mut Scratch,
    ) -> Vec<(f32, u32)> {
        if scratch.acc.len() != self.ids.len() {
            scratch.acc = vec![0.0; self.ids.len()];
        }
        scratch.touched.clear();
        for t in terms {
            let Some(p) = self.terms.get(t) else { continue };
            for (&d, &s) in p.docs.iter().zip(&p.scores) {
                let a = &mut scratch.acc[d as usize];
                if *a == 0.0 {
                    scratch.touched.push(d);
                }
                *a += s;
            }
        }
        let mut top = TopK::new(k);
        for &d in &scratch.touched {
            let s = std::mem::take(&mut scratch.acc[d as usize]);
            top.offer(s, self.rank[d as usize]);
        }
        // Back from places in id order to document numbers.
        top.best
            .into_iter()
            .map(|(s, r)| (s, self.order[r as usize]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm25::{Doc, Query, Spec, terms};
    use proptest::prelude::*;

    const WORDS: [&str; 12] = [
        "revenue",
        "growth",
        "bank",
        "housing",
        "plan",
        "rates",
        "tariff",
        "export",
        "survey",
        "inflation",
        "the",
        "of",
    ];

    fn text(picks: &[u8]) -> String {
        picks
            .iter()
            .map(|p| WORDS[*p as usize % WORDS.len()])
            .collect::<Vec<_>>()
            .join(" ")
    }

    proptest! {
        /// The same hits as tantivy's own search, scores equal to rounding, ids equal wherever
        /// the scores around a place are not near-tied.
        #[test]
        fn hits_match_tantivy(
            docs in proptest::collection::vec(proptest::collection::vec(0u8..12, 0..40), 1..60),
            queries in proptest::collection::vec(proptest::collection::vec(0u8..14, 0..6), 1..8),
            k in 0usize..8,
        ) {
            let n = docs.len();
            // Ids out of insertion order, so ties are broken by id, not by number.
            let index = Bm25::in_ram(
                &Spec::one_text("text"),
                docs.iter().enumerate().map(|(i, d)| Doc {
                    id: format!("d{:03}", (i * 37) % 101),
                    text: vec![text(d)],
                    stored: Vec::new(),
                    time: None,
                }),
            )
            .unwrap();
            let impacts = index.impacts(0).unwrap();
            prop_assert_eq!(impacts.len(), n);
            let mut scratch = Scratch::default();
            for q in &queries {
                let mut words: Vec<String> = q.iter().map(|p| {
                    WORDS.get(*p as usize).map_or("unknownword".to_string(), |w| w.to_string())
                }).collect();
                words.push("?".into());
                let qtext = words.join(" ");
                let want = index.search(&Query::new(&qtext, k)).unwrap();
                let got = impacts.search(&terms(&qtext), k, &mut scratch);
                prop_assert_eq!(got.len(), want.len(), "{}", qtext);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    prop_assert!((g.0 - w.score).abs() <= 1e-5 * w.score.abs().max(1.0));
                    let near = |j: usize| want.get(j).is_some_and(|o| (o.score - w.score).abs() < 1e-4);
                    let tied = (i > 0 && near(i - 1)) || near(i + 1);
                    if !tied {
                        prop_assert_eq!(impacts.id(g.1), w.id.as_str());
                    }
                }
            }
            // The scratch space is left clean for the next query.
            prop_assert!(scratch.acc.iter().all(|a| *a == 0.0));
        }
    }

    #[test]
    fn no_terms_no_hits() {
        let index = Bm25::in_ram(
            &Spec::one_text("text"),
            [Doc {
                id: "a".into(),
                text: vec!["housing plan".into()],
                stored: Vec::new(),
                time: None,
            }],
        )
        .unwrap();
        let impacts = index.impacts(0).unwrap();
        let mut scratch = Scratch::default();
        assert!(impacts.search(&terms("the of"), 3, &mut scratch).is_empty());
        assert!(impacts.search(&terms("zebra"), 3, &mut scratch).is_empty());
        assert_eq!(impacts.search(&terms("plans"), 3, &mut scratch).len(), 1);
        assert!(index.impacts(1).is_err());
    }
}
