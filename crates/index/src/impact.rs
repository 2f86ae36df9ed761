//! BM25 for many short queries over one text field: every term's postings read once out of a
//! built [`Bm25`] index, each with its BM25 score precomputed by tantivy's own formula
//! (`Bm25Weight` with the index's statistics and each document's one-byte length norm), held in
//! memory as `(document, score)` lists, with each long list's highest score, postings and document
//! bits per block of 64 documents, and its highest score in each part of 4 documents in one-byte
//! units. A query first adds up its lists' part maxima over the whole index (one array of 16 bounds
//! per block), then goes block by block, passing over the blocks none of whose parts can reach its
//! k-th best without asking any list for them, then those whose highest scores cannot, and the
//! documents that cannot ([`Impacts::search`], block-max MaxScore), and keeps its top k, ties by
//! id, with none of a tantivy query's per-query machinery (query objects, scorers, stored-field
//! reads for ids).
//!
//! Scores are tantivy's per-term scores added from the term with the highest maximum down;
//! tantivy adds the same numbers in the order its scorers line up, so a total can differ from
//! [`Bm25::search`]'s in the last bit (a test bounds it) and a near-tie can rank the other way.
//! Built for a benchmark's chunks (tens of thousands of documents, a few hundred thousand
//! queries); an index too large for its postings to fit in memory stays with [`Bm25::search`].

use std::collections::{BTreeSet, HashMap};

use tantivy::fieldnorm::FieldNormReader;
use tantivy::postings::Postings;
use tantivy::query::Bm25Weight;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocSet, TERMINATED, TantivyDocument, Term};

use crate::bm25::{Analysed, Bm25, IndexError};
use crate::vector::{KBest, TopK, id_ranks};

/// Documents per block: a block is the documents numbered `b * BLOCK .. (b + 1) * BLOCK`, and a
/// search bounds the score of each block's documents by its lists' highest scores there.
const BLOCK: usize = 64;

/// Lists shorter than this keep no block summary: a search reads their few postings instead.
const SUMMARISED: usize = 32;

/// Documents per part of a block: a list keeps its highest score in each part of each block it
/// summarises, rounded up to a whole number of the index's [`Impacts`] unit (one byte), and a
/// search passes over the parts, and the blocks, whose lists' sums cannot reach its k-th best.
const PART: usize = 4;

/// Parts of a block.
const PARTS: usize = BLOCK / PART;

/// One list's highest score in each part of a block, in whole units (rounded up).
type PartMaxima = [u8; PARTS];

/// `score` in whole units of `unit`, rounded up (at most 255: the unit is at least the highest
/// score of the index over 254).
#[inline]
fn in_units(score: f32, unit: f64) -> u8 {
    (f64::from(score) / unit).ceil().min(255.0) as u8
}

/// One term's documents (ascending) and their BM25 scores for it, and the highest of them; for
/// a list of at least [`SUMMARISED`] postings, each block it has postings in, where they start
/// and their highest score.
#[derive(Debug, Clone, Default)]
struct Scored {
    docs: Vec<u32>,
    scores: Vec<f32>,
    max: f32,
    /// The blocks with postings, ascending (empty for a short list).
    blocks: Vec<u32>,
    /// Where each of `blocks` starts in `docs`, and then `docs.len()`.
    starts: Vec<u32>,
    /// The highest score in each of `blocks`.
    block_max: Vec<f32>,
    /// The highest score in each part of each of `blocks`, in the index's units (rounded up).
    parts: Vec<PartMaxima>,
    /// Which documents of each of `blocks` the list holds (bit `d % BLOCK`): the k-th bit set
    /// is the block's k-th posting.
    masks: Vec<u64>,
    /// Whether `blocks` is every block (a list in most of them keeps the empty ones too, so
    /// block b is at place b).
    dense: bool,
}

impl Scored {
    /// The list of `docs` (ascending, below `documents`) scored `scores`, with its maximum and
    /// block summary (part maxima in whole `unit`s).
    fn new(docs: Vec<u32>, scores: Vec<f32>, documents: usize, unit: f64) -> Scored {
        let max = scores.iter().fold(0f32, |m, s| m.max(*s));
        let mut list = Scored {
            docs,
            scores,
            max,
            ..Scored::default()
        };
        if list.docs.len() >= SUMMARISED {
            for (i, (&d, &s)) in list.docs.iter().zip(&list.scores).enumerate() {
                let b = d / BLOCK as u32;
                let slot = d as usize % BLOCK;
                let bit = 1u64 << slot;
                let q = in_units(s, unit);
                if list.blocks.last() != Some(&b) {
                    list.blocks.push(b);
                    list.starts.push(i as u32);
                    list.block_max.push(s);
                    list.masks.push(bit);
                    let mut parts = [0u8; PARTS];
                    parts[slot / PART] = q;
                    list.parts.push(parts);
                } else if let (Some(m), Some(mask), Some(parts)) = (
                    list.block_max.last_mut(),
                    list.masks.last_mut(),
                    list.parts.last_mut(),
                ) {
                    *m = m.max(s);
                    *mask |= bit;
                    parts[slot / PART] = parts[slot / PART].max(q);
                }
            }
            list.starts.push(list.docs.len() as u32);
            let all = documents.div_ceil(BLOCK);
            if list.blocks.len() * 4 >= all * 3 {
                list.densify(all);
            }
        }
        list
    }

    /// Keep every one of the `all` blocks, the empty ones with no postings and a highest score
    /// of 0.
    fn densify(&mut self, all: usize) {
        let mut starts = Vec::with_capacity(all + 1);
        let mut block_max = vec![0f32; all];
        let mut masks = vec![0u64; all];
        let mut parts = vec![[0u8; PARTS]; all];
        let mut next = 0;
        for b in 0..all {
            if self.blocks.get(next) == Some(&(b as u32)) {
                block_max[b] = self.block_max[next];
                masks[b] = self.masks[next];
                parts[b] = self.parts[next];
                starts.push(self.starts[next]);
                next += 1;
            } else {
                starts.push(self.starts[next]);
            }
        }
        starts.push(self.docs.len() as u32);
        self.blocks = (0..all as u32).collect();
        self.starts = starts;
        self.block_max = block_max;
        self.masks = masks;
        self.parts = parts;
        self.dense = true;
    }

    /// Add this list's highest score in each part of each block, in whole `unit`s (rounded
    /// up), to `bound` ([`PARTS`] per block, saturating): the part maxima of a summarised list
    /// (a dense one's a straight run of adds over every block), each posting's of a short one
    /// (a part with several postings gets their highest).
    fn add_part_maxima(&self, bound: &mut [u16], unit: f64) {
        if self.blocks.is_empty() {
            let mut last = (usize::MAX, 0u8);
            for (&d, &s) in self.docs.iter().zip(&self.scores) {
                let part = d as usize / PART;
                let q = in_units(s, unit);
                if part == last.0 {
                    if q > last.1 {
                        bound[part] = bound[part].saturating_add(u16::from(q - last.1));
                        last.1 = q;
                    }
                } else {
                    bound[part] = bound[part].saturating_add(u16::from(q));
                    last = (part, q);
                }
            }
        } else if self.dense {
            for (x, q) in bound.chunks_exact_mut(PARTS).zip(&self.parts) {
                add_parts(x, q);
            }
        } else {
            for (&b, q) in self.blocks.iter().zip(&self.parts) {
                add_parts(&mut bound[b as usize * PARTS..][..PARTS], q);
            }
        }
    }

    /// This list's postings in block `b`: where they start in `docs`, which of the block's
    /// documents they are (bit `d % BLOCK`) and their highest score, moving the cursor `at` (a
    /// place in `blocks`, or in `docs` for a short list) forward; blocks are asked in
    /// ascending order.
    #[inline]
    fn block(&self, b: u32, at: &mut usize) -> (usize, u64, f32) {
        if self.blocks.is_empty() {
            let first = b * BLOCK as u32;
            let end = first + BLOCK as u32;
            let mut i = *at;
            while i < self.docs.len() && self.docs[i] < first {
                i += 1;
            }
            let start = i;
            let (mut mask, mut max) = (0u64, 0f32);
            while i < self.docs.len() && self.docs[i] < end {
                mask |= 1 << (self.docs[i] - first);
                max = max.max(self.scores[i]);
                i += 1;
            }
            *at = i;
            (start, mask, max)
        } else if self.dense {
            let i = b as usize;
            (self.starts[i] as usize, self.masks[i], self.block_max[i])
        } else {
            let i = gallop(&self.blocks, *at, b);
            *at = i;
            if self.blocks.get(i) == Some(&b) {
                (self.starts[i] as usize, self.masks[i], self.block_max[i])
            } else {
                (0, 0, 0.0)
            }
        }
    }

    /// The score of `doc`, searching from `*from` (galloping, then binary search) and leaving
    /// `*from` at the first document not below `doc` (the first block not below its block, in
    /// a summarised list): ascending lookups cost O(log gap) each.
    #[inline]
    fn score_from(&self, doc: u32, from: &mut usize) -> Option<f32> {
        if self.blocks.is_empty() {
            let at = gallop(&self.docs, *from, doc);
            *from = at;
            return (self.docs.get(at) == Some(&doc)).then(|| self.scores[at]);
        }
        // A summarised list: the block, then the document's bit in it.
        let b = doc / BLOCK as u32;
        let at = if self.dense {
            b as usize
        } else {
            gallop(&self.blocks, *from, b)
        };
        *from = at;
        if self.blocks.get(at) != Some(&b) {
            return None;
        }
        let mask = self.masks[at];
        let slot = doc as usize % BLOCK;
        (mask & (1u64 << slot) != 0).then(|| {
            let below = (mask & ((1u64 << slot) - 1)).count_ones();
            self.scores[(self.starts[at] + below) as usize]
        })
    }
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
    /// What one unit of a list's part maxima stands for: the highest score of the index over
    /// 254, so every score is at most 255 units.
    unit: f64,
}

/// Scratch space of one searching thread: each block's bound (the pruned search), the score
/// array and the documents it touched (the exhaustive search).
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    acc: Vec<f32>,
    touched: Vec<u32>,
    /// The query's bound of each part of each block, in units ([`PARTS`] per block).
    part_bound: Vec<u16>,
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
        let mut terms: HashMap<String, (Vec<u32>, Vec<f32>)> = HashMap::new();
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
                let (docs, scores) = terms.entry(word.to_string()).or_default();
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if alive.is_none_or(|a| a.is_alive(doc)) {
                        docs.push(base + doc);
                        scores.push(weight.score(norms.fieldnorm_id(doc), postings.term_freq()));
                    }
                    doc = postings.advance();
                }
            }
        }
        let unit = unit_of(terms.values().flat_map(|(_, scores)| scores));
        let terms = terms
            .into_iter()
            .map(|(term, (docs, scores))| (term, Scored::new(docs, scores, ids.len(), unit)))
            .collect();
        let (rank, order) = id_ranks(&ids);
        Ok(Impacts {
            ids,
            rank,
            order,
            terms,
            unit,
        })
    }
}

impl Impacts {
    /// The scored postings of documents `ids` with texts analysed by [`crate::bm25::analyse`]
    /// (one per id, ids unique), without building a tantivy index: tantivy's BM25 weight
    /// (`Bm25Weight` over each term's document frequency, the number of documents and the
    /// average length) and its one-byte length norms, as [`Bm25::impacts`] reads them from a
    /// [`Bm25::in_ram`] index of the same texts in one text field (a test compares the two
    /// bit for bit). Analysing is the costly part and is the caller's to spread over cores.
    pub fn from_analysed(ids: Vec<String>, docs: &[Analysed]) -> Impacts {
        let mut postings: foldhash::HashMap<&str, Vec<(u32, u32)>> = foldhash::HashMap::default();
        let mut total_tokens = 0u64;
        for (d, a) in docs.iter().enumerate() {
            total_tokens += u64::from(a.tokens);
            for (term, tf) in &a.terms {
                postings
                    .entry(term.as_str())
                    .or_default()
                    .push((d as u32, *tf));
            }
        }
        let n = docs.len() as u64;
        let average = total_tokens as f32 / n.max(1) as f32;
        let norm: Vec<u8> = docs
            .iter()
            .map(|a| FieldNormReader::fieldnorm_to_id(a.tokens))
            .collect();
        let scored: Vec<(&str, Vec<u32>, Vec<f32>)> = postings
            .into_iter()
            .map(|(term, list)| {
                let weight =
                    Bm25Weight::for_one_term_without_explain(list.len() as u64, n, average);
                let docs: Vec<u32> = list.iter().map(|(d, _)| *d).collect();
                let scores: Vec<f32> = list
                    .iter()
                    .map(|&(d, tf)| weight.score(norm[d as usize], tf))
                    .collect();
                (term, docs, scores)
            })
            .collect();
        let unit = unit_of(scored.iter().flat_map(|(_, _, scores)| scores));
        let terms = scored
            .into_iter()
            .map(|(term, docs, scores)| {
                (
                    term.to_string(),
                    Scored::new(docs, scores, n as usize, unit),
                )
            })
            .collect();
        let (rank, order) = id_ranks(&ids);
        Impacts {
            ids,
            rank,
            order,
            terms,
            unit,
        }
    }

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
    ///
    /// A document's score is its terms' scores added from the term with the highest maximum
    /// down ([`Impacts::search_exhaustive`] adds them in the same order, every list whole).
    /// The search goes block by block (64 documents each), pruned block-max MaxScore-style: a block
    /// none of whose parts of 4 documents can reach the k-th best score so far (the lists' highest
    /// scores there, in units rounded up, added), or whose lists' highest scores there add up to
    /// less, is passed over; in the others, the terms are added in that order while a document
    /// matching none of them so far could still reach it, and the documents seen are finished from
    /// the remaining terms' postings in the block while their partial scores and the remaining
    /// terms' maxima there can reach it (scores are positive).
    pub fn search(
        &self,
        terms: &BTreeSet<String>,
        k: usize,
        scratch: &mut Scratch,
    ) -> Vec<(f32, u32)> {
        self.search_hinted(terms, k, scratch, &[])
    }

    /// [`Impacts::search`], starting from the whole scores of `hints` too (documents likely to
    /// score high, such as the hits of a similar query). Any documents give a valid start, so
    /// the hits are the same whatever the hints; good hints only make the search faster.
    pub fn search_hinted(
        &self,
        terms: &BTreeSet<String>,
        k: usize,
        scratch: &mut Scratch,
        hints: &[u32],
    ) -> Vec<(f32, u32)> {
        self.search_above(terms, k, scratch, hints, f64::NEG_INFINITY)
    }

    /// The place (1-based) of the best of `docs` among [`Impacts::search`]'s `k` hits for
    /// `terms`, if one of them is there. Faster than searching: the best document's score is
    /// worked out first, and only documents that could reach it are followed.
    pub fn place_of(
        &self,
        terms: &BTreeSet<String>,
        docs: &[u32],
        k: usize,
        scratch: &mut Scratch,
    ) -> Option<usize> {
        let lists = self.lists(terms);
        // Each document's whole score, added in list order as the search adds it (so exactly
        // its score there); a document matching no term is no hit.
        let best = docs
            .iter()
            .filter_map(|&d| {
                let mut score = 0f32;
                let mut matched = false;
                for p in &lists {
                    if let Some(x) = p.score_from(d, &mut 0) {
                        score += x;
                        matched = true;
                    }
                }
                matched.then_some((score, d))
            })
            .max_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then(self.rank[b.1 as usize].cmp(&self.rank[a.1 as usize]))
            })?;
        // Every document ranked before the best one scores at least as much, so a search that
        // follows only documents that could reach its score still holds them all.
        self.search_above(terms, k, scratch, &[], f64::from(best.0))
            .iter()
            .position(|&(_, d)| d == best.1)
            .map(|p| p + 1)
    }

    /// [`Impacts::search_hinted`], following only documents that could score at least `floor`:
    /// a prefix of its hits that holds every hit scoring `floor` or more.
    ///
    /// First each part's bound over the whole index: the lists' part maxima in units, added
    /// ([`Scored::add_part_maxima`]; a dense list's is one run of vector adds). Then block by block
    /// ([`BLOCK`] documents each) in document order: a block none of whose parts' bounds reach
    /// theta (the k-th best whole score so far, or the seed), in units rounded down, holds no hit
    /// and is passed over on that array alone; so is one whose lists' highest scores there add up
    /// to less than theta. In a block that may hold one, the lists are added in the search's order
    /// into the block's own scores while the lists not yet added could lift a document matching
    /// none so far to theta; the documents seen are the candidates, each dropped once its partial
    /// score and what the remaining lists can add there fall short, and the rest are added up whole
    /// and offered to the top k.
    fn search_above(
        &self,
        terms: &BTreeSet<String>,
        k: usize,
        scratch: &mut Scratch,
        hints: &[u32],
        floor: f64,
    ) -> Vec<(f32, u32)> {
        let lists = self.lists(terms);
        if k == 0 || lists.is_empty() {
            return Vec::new();
        }
        let n = lists.len();
        // Adding n positive f32s rounds each partial by at most 2^-24 of it: a relative margin
        // of n such steps (twice over) covers every sum here.
        let steps = (n + 1) as f64;
        let margin = |theta: f64| 2.0 * steps * f64::from(f32::EPSILON) * theta.abs().max(1.0);
        let mut theta = self.seed_theta(&lists, k, hints).max(floor);
        let blocks = self.ids.len().div_ceil(BLOCK);
        // Each part's bound: its lists' highest scores there, in whole units, added. A block
        // is read only where some part's bound reaches theta; most blocks are passed over on
        // this array alone, without asking any list for the block.
        let unit = self.unit;
        let bound = &mut scratch.part_bound;
        bound.clear();
        bound.resize(blocks * PARTS, 0);
        for p in &lists {
            p.add_part_maxima(bound, unit);
        }
        let mut at = vec![0usize; n];
        let mut held = vec![(0usize, 0u64); n];
        let mut rest = vec![0f64; n + 1];
        let mut acc = [0f32; BLOCK];
        let mut top = TopK::new(k);
        let mut least = theta - margin(theta);
        let mut floor_units = units_below(least, unit);
        for (b, parts) in bound.chunks_exact(PARTS).enumerate() {
            // The documents in parts whose lists can add up to theta; a block with none holds
            // no hit.
            let alive = parts_reaching(parts.try_into().expect("PARTS long"), floor_units);
            if alive == 0 {
                continue;
            }
            // What lists i.. can add here, summed from the last list in a register (max_i +
            // rest[i + 1], bit for bit): no store and reload on the chain of adds.
            let mut sum = 0f64;
            for i in (0..n).rev() {
                let (start, mask, max) = lists[i].block(b as u32, &mut at[i]);
                held[i] = (start, mask);
                sum += f64::from(max);
                rest[i] = sum;
            }
            // The block's highest scores (exact, not rounded to units) may still fall short.
            if sum < least {
                continue;
            }
            // Lists 0..open are added to every document of the block they hold: a document
            // none of them holds cannot reach theta.
            let open = rest.iter().position(|r| *r < least).unwrap_or(n);
            let mut seen = 0u64;
            for (p, &(start, mask)) in lists.iter().zip(&held).take(open) {
                let mut left = mask;
                for &s in &p.scores[start..start + mask.count_ones() as usize] {
                    let slot = left.trailing_zeros() as usize;
                    let bit = left & left.wrapping_neg();
                    left &= left - 1;
                    // A first score is stored (0 + s is s), a later one added.
                    acc[slot] = if seen & bit == 0 { s } else { acc[slot] + s };
                    seen |= bit;
                }
            }
            // Drop the documents seen that the other lists cannot lift to theta; the rest are
            // added up whole, dropping again before each list.
            let mut candidates = seen & alive;
            for (i, (p, &(start, mask))) in lists.iter().zip(&held).enumerate().skip(open) {
                candidates &= reaching(&acc, least - rest[i]);
                if candidates == 0 {
                    break;
                }
                let mut hits = candidates & mask;
                while hits != 0 {
                    let slot = hits.trailing_zeros() as usize;
                    hits &= hits - 1;
                    // The posting's place in the block: the list's documents before it there.
                    let below = (mask & ((1u64 << slot) - 1)).count_ones() as usize;
                    acc[slot] += p.scores[start + below];
                }
            }
            let first = (b * BLOCK) as u32;
            while candidates != 0 {
                let slot = candidates.trailing_zeros() as usize;
                candidates &= candidates - 1;
                let d = first + slot as u32;
                top.offer(acc[slot], self.rank[d as usize]);
            }
            if let Some(kth) = top.kth() {
                let kth = f64::from(kth);
                if kth > theta {
                    theta = kth;
                    least = theta - margin(theta);
                    floor_units = units_below(least, unit);
                }
            }
        }
        // Back from places in id order to document numbers.
        top.best
            .into_iter()
            .map(|(s, r)| (s, self.order[r as usize]))
            .collect()
    }

    /// A lower bound of the k-th best score to start from: the k-th best whole score among
    /// the hints and the best-scoring documents of the first two lists (each scored over every
    /// list, adding in list order as the search does, so these are exactly their scores). A
    /// query's rarest terms usually name its best documents, so the search can stop reading new
    /// documents early. Minus infinity when fewer than k documents are seeded.
    fn seed_theta(&self, lists: &[&Scored], k: usize, hints: &[u32]) -> f64 {
        if lists.len() < 2 {
            return f64::NEG_INFINITY;
        }
        let mut seeds: Vec<u32> = hints.to_vec();
        for p in lists.iter().take(2) {
            let mut best = TopK::new(4 * k);
            for (&d, &s) in p.docs.iter().zip(&p.scores) {
                best.offer(s, d);
            }
            seeds.extend(best.best.iter().map(|(_, d)| *d));
        }
        seeds.sort_unstable();
        seeds.dedup();
        if seeds.len() < k {
            return f64::NEG_INFINITY;
        }
        let mut froms = vec![0usize; lists.len()];
        let whole: Vec<f32> = seeds
            .iter()
            .map(|&d| {
                let mut s = 0f32;
                for (p, from) in lists.iter().zip(froms.iter_mut()) {
                    if let Some(x) = p.score_from(d, from) {
                        s += x;
                    }
                }
                s
            })
            .collect();
        f64::from(kth_largest(whole.into_iter(), k))
    }

    /// The posting lists of `terms` held, highest maximum first (ties in term order): the order
    /// a document's scores are added in.
    fn lists(&self, terms: &BTreeSet<String>) -> Vec<&Scored> {
        let mut lists: Vec<&Scored> = terms.iter().filter_map(|t| self.terms.get(t)).collect();
        lists.sort_by(|a, b| b.max.total_cmp(&a.max));
        lists
    }

    /// [`Impacts::search`] without pruning: every list of the query added whole into one score
    /// per document, in the same order as the pruned search adds them, and every document
    /// matched offered to the top k. The reference the pruned search is tested and benchmarked
    /// against (the same hits, scores equal bit for bit).
    pub fn search_exhaustive(
        &self,
        terms: &BTreeSet<String>,
        k: usize,
        scratch: &mut Scratch,
    ) -> Vec<(f32, u32)> {
        if scratch.acc.len() != self.ids.len() {
            scratch.acc = vec![0.0; self.ids.len()];
        }
        scratch.touched.clear();
        for p in self.lists(terms) {
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
        top.best
            .into_iter()
            .map(|(s, r)| (s, self.order[r as usize]))
            .collect()
    }
}

/// The unit of an index whose scores are `scores`: the highest over 254 (so a score rounded up
/// to whole units is at most 255 of them), and never zero.
fn unit_of<'a>(scores: impl Iterator<Item = &'a f32>) -> f64 {
    let max = scores.fold(0f32, |m, s| m.max(*s));
    f64::from(max).max(f64::MIN_POSITIVE) / 254.0
}

/// A whole number of units whose worth is not above `least` (a part whose lists' maxima add up
/// to fewer units holds no document reaching `least`): rounded down, less a relative 10^-9 for
/// the division's rounding, and at most `u16::MAX` (a sum that saturates is never passed over).
#[inline]
fn units_below(least: f64, unit: f64) -> u16 {
    if least > 0.0 {
        (least / unit * (1.0 - 1e-9))
            .floor()
            .min(f64::from(u16::MAX)) as u16
    } else {
        0
    }
}

/// `q` added to one block's part bounds `x` ([`PARTS`] of them), saturating: a fixed-length
/// loop the compiler makes two SSE2 widening, saturating adds of eight lanes.
#[inline(always)]
fn add_parts(x: &mut [u16], q: &PartMaxima) {
    let x: &mut [u16; PARTS] = x.try_into().expect("a block's parts");
    for j in 0..PARTS {
        x[j] = x[j].saturating_add(u16::from(q[j]));
    }
}

/// The documents of a block (bit `slot`) in the parts whose summed maxima `parts` reach
/// `floor` units.
#[inline]
fn parts_reaching(parts: &[u16; PARTS], floor: u16) -> u64 {
    // Most blocks have no part that reaches: one test of all 16 first.
    if parts.iter().all(|&x| x < floor) {
        return 0;
    }
    let mut alive = 0u64;
    for (j, &x) in parts.iter().enumerate() {
        alive |= (u64::from(x >= floor) * ((1u64 << PART) - 1)) << (j * PART);
    }
    alive
}

/// Which of a block's scores `acc` may reach `floor` (bit `slot` set when `acc[slot]` is at
/// least `floor` rounded down to an f32, so never a score that reaches it left out): one
/// compare per slot, without a branch.
#[inline]
fn reaching(acc: &[f32; BLOCK], floor: f64) -> u64 {
    let mut low = floor as f32;
    if f64::from(low) > floor {
        low = low.next_down();
    }
    reaching_from(acc, low)
}

/// [`reaching`]'s mask for an f32 floor: four slots a compare and a move of their sign bits
/// (SSE2, which every x86-64 has), where the portable fold shifts each slot's bit alone.
#[cfg(target_arch = "x86_64")]
#[inline]
fn reaching_from(acc: &[f32; BLOCK], low: f32) -> u64 {
    use std::arch::x86_64::{_mm_cmpge_ps, _mm_loadu_ps, _mm_movemask_ps, _mm_set1_ps};
    let mut mask = 0u64;
    // SAFETY: SSE2 is part of x86-64; each load reads 4 of acc's 64 floats (q * 4 + 3 < 64).
    unsafe {
        let low = _mm_set1_ps(low);
        for q in 0..BLOCK / 4 {
            let four = _mm_loadu_ps(acc.as_ptr().add(q * 4));
            let bits = _mm_movemask_ps(_mm_cmpge_ps(four, low)) as u64;
            mask |= bits << (q * 4);
        }
    }
    mask
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn reaching_from(acc: &[f32; BLOCK], low: f32) -> u64 {
    reaching_portable(acc, low)
}

/// The portable [`reaching_from`] (the reference its SSE2 form is tested against).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn reaching_portable(acc: &[f32; BLOCK], low: f32) -> u64 {
    acc.iter()
        .enumerate()
        .fold(0u64, |m, (slot, a)| m | (u64::from(*a >= low) << slot))
}

/// The first place at or after `from` in `sorted` whose value is not below `value`
/// (galloping, then binary search): ascending lookups cost O(log gap) each.
#[inline]
fn gallop(sorted: &[u32], from: usize, value: u32) -> usize {
    let mut lo = from;
    let mut step = 1;
    let mut hi = lo;
    while hi < sorted.len() && sorted[hi] < value {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    let hi = hi.min(sorted.len());
    lo + sorted[lo..hi].partition_point(|d| *d < value)
}

/// The k-th largest of `values` (at least k of them; k at least 1).
fn kth_largest(values: impl Iterator<Item = f32>, k: usize) -> f32 {
    let mut best = KBest::new(k);
    values.for_each(|v| best.offer(v));
    best.kth().unwrap_or(f32::NEG_INFINITY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm25::{Doc, Query, Spec, terms};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

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
                // One place beyond k, so a near-tie across the cut counts as a tie.
                let ranked = index.search(&Query::new(&qtext, k + 1)).unwrap();
                let want = &ranked[..ranked.len().min(k)];
                let got = impacts.search(&terms(&qtext), k, &mut scratch);
                prop_assert_eq!(
                    &impacts.search_exhaustive(&terms(&qtext), k, &mut scratch),
                    &got
                );
                prop_assert_eq!(got.len(), want.len(), "{}", qtext);
                for (i, (g, w)) in got.iter().zip(want).enumerate() {
                    prop_assert!((g.0 - w.score).abs() <= 1e-5 * w.score.abs().max(1.0));
                    let near = |j: usize| ranked.get(j).is_some_and(|o| (o.score - w.score).abs() < 1e-4);
                    let tied = (i > 0 && near(i - 1)) || near(i + 1);
                    if !tied {
                        prop_assert_eq!(impacts.id(g.1), w.id.as_str());
                    }
                }
            }
            // The exhaustive search leaves its score array clean for the next query.
            prop_assert!(scratch.acc.iter().all(|a| *a == 0.0));
        }
    }

    proptest! {
        /// The SSE2 mask is the portable fold's, slot for slot, ties with the floor included.
        #[test]
        fn reaching_is_the_portable_mask(
            scores in proptest::collection::vec(0u8..8, BLOCK),
            floor in 0u8..9,
        ) {
            let acc: [f32; BLOCK] = std::array::from_fn(|i| f32::from(scores[i]) * 0.5);
            let low = f32::from(floor) * 0.5;
            prop_assert_eq!(reaching_from(&acc, low), reaching_portable(&acc, low));
            prop_assert_eq!(reaching(&acc, f64::from(low)), reaching_portable(&acc, low));
        }

        #[test]
        fn kth_largest_is_the_kth_of_the_sorted_values(
            values in proptest::collection::vec(0.0f32..50.0, 1..80),
            k in 1usize..40,
        ) {
            prop_assume!(k <= values.len());
            let mut sorted = values.clone();
            sorted.sort_by(|a, b| b.total_cmp(a));
            let got = kth_largest(values.iter().copied(), k);
            prop_assert_eq!(got, sorted[k - 1]);
        }

        /// Pruning changes nothing: the same hits, bit for bit, as adding every list whole, on
        /// documents with a skewed vocabulary (a few words in most of them, most in few), some
        /// of them twice under another id (whole-score ties, broken by id), and k up to more
        /// than the documents matched; neither do hints, good or bad. The exhaustive hits
        /// themselves are every matched document while k allows, best first, ties by id. Up to
        /// 420 documents: seven blocks, lists long enough to keep block summaries and lists too
        /// short to.
        #[test]
        fn pruned_search_is_exhaustive_search(
            docs in proptest::collection::vec(
                proptest::collection::vec((0u32..1000).prop_map(|x| x * x / 25_000), 1..30),
                1..400,
            ),
            copies in proptest::collection::vec(0usize..400, 0..20),
            queries in proptest::collection::vec(proptest::collection::vec(0u32..40, 1..9), 1..12),
            k in prop_oneof![0usize..6, 6usize..60],
            hints in proptest::collection::vec(0u32..150, 0..8),
        ) {
            let word = |w: u32| format!("w{w}x");
            let text = |d: &Vec<u32>| d.iter().map(|w| word(*w)).collect::<Vec<_>>().join(" ");
            // Ids out of insertion order; the copies' ids sort before and after their originals'.
            let mut all: Vec<(String, String)> = docs
                .iter()
                .enumerate()
                .map(|(i, d)| (format!("d{:03}", (i * 37) % 401), text(d)))
                .collect();
            for (j, c) in copies.iter().enumerate() {
                let (id, t) = all[c % docs.len()].clone();
                let prefix = if j % 2 == 0 { "c" } else { "e" };
                all.push((format!("{prefix}{j:02}{id}"), t));
            }
            let index = Bm25::in_ram(
                &Spec::one_text("text"),
                all.iter().map(|(id, t)| Doc {
                    id: id.clone(),
                    text: vec![t.clone()],
                    stored: Vec::new(),
                    time: None,
                }),
            )
            .unwrap();
            let impacts = index.impacts(0).unwrap();
            let mut scratch = Scratch::default();
            for q in &queries {
                let qtext = q.iter().map(|w| word(*w)).collect::<Vec<_>>().join(" ");
                let t = terms(&qtext);
                let want = impacts.search_exhaustive(&t, k, &mut scratch);
                let matched: BTreeSet<u32> =
                    impacts.lists(&t).iter().flat_map(|p| p.docs.iter().copied()).collect();
                prop_assert_eq!(want.len(), k.min(matched.len()));
                for w in want.windows(2) {
                    prop_assert!(
                        w[0].0 > w[1].0 || (w[0].0 == w[1].0 && impacts.id(w[0].1) < impacts.id(w[1].1)),
                        "best first, ties by id"
                    );
                }
                prop_assert_eq!(impacts.search(&t, k, &mut scratch), want.clone());
                // Any documents as hints (matching or not): the same hits.
                let hints: Vec<u32> = hints.iter().map(|h| h % impacts.len() as u32).collect();
                prop_assert_eq!(impacts.search_hinted(&t, k, &mut scratch, &hints), want.clone());
                // The hits themselves as hints (a family's earlier query): the same hits.
                let own: Vec<u32> = want.iter().map(|(_, d)| *d).collect();
                prop_assert_eq!(impacts.search_hinted(&t, k, &mut scratch, &own), want.clone());
                // The place of the best of a few documents (the hints) is where the search
                // puts the first of them.
                let place = want
                    .iter()
                    .position(|(_, d)| hints.contains(d))
                    .map(|p| p + 1);
                prop_assert_eq!(impacts.place_of(&t, &hints, k, &mut scratch), place);
            }
            prop_assert!(scratch.acc.iter().all(|a| *a == 0.0));
        }
    }

    proptest! {
        // Each case builds a tantivy index.
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Postings scored without tantivy are tantivy's, bit for bit: every term, every
        /// document, every score, on texts with stopwords, case, accents, punctuation, tokens
        /// past the length limit and empty documents.
        #[test]
        fn analysed_impacts_are_tantivys(
            docs in proptest::collection::vec(proptest::collection::vec(0usize..20, 0..50), 1..40),
        ) {
            const PIECES: [&str; 20] = [
                "revenue", "Revenue,", "growth", "the", "of", "Bank's", "housing", "planning",
                "plans", "rates", "café", "Über", "2023", "$4.5", "tariffs.", "A", "and", "-",
                "supercalifragilisticexpialidociousandthensomemorewords", "exporters",
            ];
            let texts: Vec<String> = docs
                .iter()
                .map(|d| d.iter().map(|p| PIECES[*p]).collect::<Vec<_>>().join(" "))
                .collect();
            let ids: Vec<String> =
                (0..texts.len()).map(|i| format!("d{:03}", (i * 37) % 101)).collect();
            let tantivy = Bm25::in_ram(
                &Spec::one_text("text"),
                ids.iter().zip(&texts).map(|(id, t)| Doc {
                    id: id.clone(),
                    text: vec![t.clone()],
                    stored: Vec::new(),
                    time: None,
                }),
            )
            .unwrap()
            .impacts(0)
            .unwrap();
            let analysed: Vec<Analysed> = texts.iter().map(|t| crate::bm25::analyse(t)).collect();
            let ours = Impacts::from_analysed(ids.clone(), &analysed);
            fn by_id(i: &Impacts) -> BTreeMap<&str, Vec<(String, u32)>> {
                i.terms
                    .iter()
                    .map(|(t, p)| {
                        let mut list: Vec<(String, u32)> = p
                            .docs
                            .iter()
                            .zip(&p.scores)
                            .map(|(d, s)| (i.id(*d).to_string(), s.to_bits()))
                            .collect();
                        list.sort();
                        (t.as_str(), list)
                    })
                    .collect()
            }
            prop_assert_eq!(by_id(&ours), by_id(&tantivy));
            for (t, p) in &ours.terms {
                prop_assert_eq!(p.max.to_bits(), tantivy.terms[t].max.to_bits());
            }
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
