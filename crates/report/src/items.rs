//! Sampled items end to end: which items the report shows (core's [`stratified_sample`], the
//! same choice the labels stage's review sheet makes) and everything about each, gathered from
//! the version's typed rows. Pure: `read` reads the tables and calls [`sample_items`].

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use noisebench_core::{
    Chunk, Claim, ClaimDocument, ClaimDocumentLabel, Document, DocumentCredibility,
    DocumentPerturbation, DropRecord, Pattern, Query, QueryPerturbation, Question,
    QuestionJudgement, QuestionSplit, Retrieval, Triplet, sample_labels, sample_questions,
    stratified_sample,
};

/// A claim's documents shown at most (the sampled pair's first); the rest are counted.
pub(crate) const MAX_DOCUMENTS: usize = 10;
/// A question's answer chunks, perturbed queries and perturbed chunks shown at most.
pub(crate) const MAX_CHUNKS: usize = 6;
pub(crate) const MAX_PERTURBATIONS: usize = 12;
pub(crate) const MAX_EVIDENCE: usize = 8;

/// The version's rows the sampled items are gathered from. Tables a version does not publish
/// are empty slices; `drops` is `None` when the run's drops are not at hand.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ItemRows<'a> {
    pub claims: &'a [Claim],
    pub queries: &'a [Query],
    pub documents: &'a [Document],
    pub claim_documents: &'a [ClaimDocument],
    pub labels: &'a [ClaimDocumentLabel],
    pub credibility: &'a [DocumentCredibility],
    pub chunks: &'a [Chunk],
    pub triplets: &'a [Triplet],
    pub patterns: &'a [Pattern],
    pub questions: &'a [Question],
    pub judgements: &'a [QuestionJudgement],
    pub splits: &'a [QuestionSplit],
    pub query_perturbations: &'a [QueryPerturbation],
    pub document_perturbations: &'a [DocumentPerturbation],
    pub retrievals: &'a [Retrieval],
    pub drops: Option<&'a [DropRecord]>,
}

/// The sampled items of a version, by stratum.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    /// Items per stratum asked for.
    pub per_stratum: usize,
    /// The pipeline file `noisebench inspect` is pointed at (`--pipeline`).
    pub pipeline_file: String,
    /// Claim-document pairs by claim verdict and label.
    pub(crate) claims: Vec<SampleStratum<ClaimItem>>,
    /// Kept questions by kind and split.
    pub(crate) questions: Vec<SampleStratum<QuestionItem>>,
    /// Dropped items (and failures that kept their item) by stage and reason.
    pub drops: Vec<SampleStratum<DropRecord>>,
    /// Why no drops are shown, when the run's drops were not at hand.
    pub drops_missing: Option<String>,
}

/// One stratum: its key parts (`["false", "misleading"]`), how many items it holds, the chosen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampleStratum<T> {
    pub key: Vec<String>,
    pub total: u64,
    pub items: Vec<T>,
}

impl<T> SampleStratum<T> {
    /// The key as the page writes it: `false / misleading`.
    pub fn name(&self) -> String {
        self.key.join(" / ")
    }
}

/// A sampled claim-document pair, shown as its claim with its queries and documents.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ClaimItem {
    /// The sampled label row's id.
    pub pair_id: String,
    pub claim: Claim,
    pub queries: Vec<Query>,
    /// The sampled pair's document first, then the claim's others by best search rank.
    pub documents: Vec<DocumentItem>,
    /// The claim's documents not shown (past [`MAX_DOCUMENTS`]).
    pub more_documents: usize,
}

/// One document of a claim, with its label for that claim.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DocumentItem {
    pub document: Document,
    /// The document is the sampled pair's.
    pub sampled: bool,
    pub credibility: Option<DocumentCredibility>,
    pub link: Option<ClaimDocument>,
    pub label: Option<ClaimDocumentLabel>,
}

/// A sampled question and everything made from it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct QuestionItem {
    pub question: Question,
    pub split: Option<String>,
    pub judgement: Option<QuestionJudgement>,
    /// Its answer chunks with the source sentences marked.
    pub chunks: Vec<MarkedChunk>,
    pub pattern: Option<Pattern>,
    /// The pattern's (else the question's) triplets.
    pub triplets: Vec<Triplet>,
    pub query_perturbations: Vec<QueryPerturbation>,
    pub evidence: Vec<Evidence>,
    /// Per query (the original first, then each perturbed one) and retriever.
    pub retrieval: Vec<RetrievalRun>,
}

/// A chunk with byte ranges of `text` to highlight.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MarkedChunk {
    pub chunk: Chunk,
    /// Sorted, disjoint byte ranges of `chunk.text` (on char boundaries).
    pub marks: Vec<Range<usize>>,
    /// The question's source sentences found in no shown chunk (listed under the chunks).
    pub unfound: Vec<String>,
}

/// A perturbed chunk against its original.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Evidence {
    pub perturbation: DocumentPerturbation,
    /// The original chunk's text, when the chunk is published and not among the question's
    /// answer chunks shown above it (and no diff shows it).
    pub original: Option<String>,
    /// The original is one of the answer chunks shown.
    pub original_shown: bool,
    /// A word diff of the original against the perturbed text, when they share most words;
    /// `None` for a rewrite (a translation) that shares few, shown as the two texts instead.
    pub diff: Option<Vec<DiffPiece>>,
}

/// A run of words of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DiffPiece {
    Same(String),
    Deleted(String),
    Inserted(String),
}

/// One retriever's results for one query of a question.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RetrievalRun {
    /// `original`, or the perturbed query's kind.
    pub query: String,
    pub query_id: String,
    pub retriever: String,
    /// Ranks of the answer chunks among the results (none when every one was missed).
    pub hit_ranks: Vec<i64>,
    /// Results returned.
    pub results: usize,
}

impl RetrievalRun {
    pub fn hit(&self) -> bool {
        !self.hit_ranks.is_empty()
    }
}

/// The sampled items of `rows`, `per_stratum` per stratum.
pub(crate) fn sample_items(rows: &ItemRows, per_stratum: usize, pipeline_file: &str) -> Samples {
    Samples {
        per_stratum,
        pipeline_file: pipeline_file.to_string(),
        claims: claim_items(rows, per_stratum),
        questions: question_items(rows, per_stratum),
        drops: match rows.drops {
            Some(drops) => drop_items(drops, per_stratum),
            None => Vec::new(),
        },
        drops_missing: rows.drops.is_none().then(|| {
            "the run folder that built this version is not at hand (or has moved on), so its \
             drops are not shown"
                .to_string()
        }),
    }
}

fn claim_items(rows: &ItemRows, per_stratum: usize) -> Vec<SampleStratum<ClaimItem>> {
    let claims: BTreeMap<&str, &Claim> = rows.claims.iter().map(|c| (c.id.as_str(), c)).collect();
    let sample = sample_labels(rows.claims, rows.labels, per_stratum);
    if sample.is_empty() {
        return Vec::new();
    }
    // Only the sampled claims' rows are gathered.
    let wanted: BTreeSet<&str> = sample
        .iter()
        .flat_map(|s| s.items.iter().map(|l| l.claim_id.as_str()))
        .collect();
    let documents: BTreeMap<&str, &Document> =
        rows.documents.iter().map(|d| (d.id.as_str(), d)).collect();
    let credibility: BTreeMap<&str, &DocumentCredibility> = rows
        .credibility
        .iter()
        .map(|c| (c.document_id.as_str(), c))
        .collect();
    let mut queries: BTreeMap<&str, Vec<&Query>> = BTreeMap::new();
    for q in rows.queries {
        if wanted.contains(q.claim_id.as_str()) {
            queries.entry(q.claim_id.as_str()).or_default().push(q);
        }
    }
    let mut links: BTreeMap<&str, Vec<&ClaimDocument>> = BTreeMap::new();
    for l in rows.claim_documents {
        if wanted.contains(l.claim_id.as_str()) {
            links.entry(l.claim_id.as_str()).or_default().push(l);
        }
    }
    let mut labels: BTreeMap<(&str, &str), &ClaimDocumentLabel> = BTreeMap::new();
    for l in rows.labels {
        if wanted.contains(l.claim_id.as_str()) {
            labels.insert((l.claim_id.as_str(), l.document_id.as_str()), l);
        }
    }
    sample
        .into_iter()
        .map(|s| SampleStratum {
            key: s.key.to_vec(),
            total: s.total as u64,
            items: s
                .items
                .into_iter()
                .map(|pair| {
                    let claim_id = pair.claim_id.as_str();
                    // Every document of the claim: its links, and any labelled one without.
                    let mut ids: Vec<(i64, &str)> = links
                        .get(claim_id)
                        .into_iter()
                        .flatten()
                        .map(|l| (l.best_rank, l.document_id.as_str()))
                        .collect();
                    for ((c, d), _) in labels.range((claim_id, "")..) {
                        if *c != claim_id {
                            break;
                        }
                        if !ids.iter().any(|(_, id)| id == d) {
                            ids.push((i64::MAX, d));
                        }
                    }
                    ids.sort();
                    ids.retain(|(_, d)| *d != pair.document_id);
                    ids.insert(0, (0, pair.document_id.as_str()));
                    let more_documents = ids.len().saturating_sub(MAX_DOCUMENTS);
                    ids.truncate(MAX_DOCUMENTS);
                    let link_of = |d: &str| {
                        links
                            .get(claim_id)
                            .and_then(|ls| ls.iter().find(|l| l.document_id == d))
                            .map(|l| (*l).clone())
                    };
                    let docs = ids
                        .iter()
                        .map(|(_, d)| DocumentItem {
                            document: documents.get(d).map(|d| (*d).clone()).unwrap_or_else(|| {
                                Document {
                                    id: d.to_string(),
                                    ..Default::default()
                                }
                            }),
                            sampled: *d == pair.document_id,
                            credibility: credibility.get(d).map(|c| (*c).clone()),
                            link: link_of(d),
                            label: labels.get(&(claim_id, *d)).map(|l| (*l).clone()),
                        })
                        .collect();
                    let mut qs: Vec<Query> = queries
                        .get(claim_id)
                        .into_iter()
                        .flatten()
                        .map(|q| (*q).clone())
                        .collect();
                    qs.sort_by(|a, b| (&a.kind, &a.text).cmp(&(&b.kind, &b.text)));
                    ClaimItem {
                        pair_id: pair.id.clone(),
                        claim: claims
                            .get(claim_id)
                            .map(|c| (*c).clone())
                            .unwrap_or_else(|| Claim {
                                id: claim_id.to_string(),
                                ..Default::default()
                            }),
                        queries: qs,
                        documents: docs,
                        more_documents,
                    }
                })
                .collect(),
        })
        .collect()
}

fn question_items(rows: &ItemRows, per_stratum: usize) -> Vec<SampleStratum<QuestionItem>> {
    let splits: BTreeMap<&str, &str> = rows
        .splits
        .iter()
        .map(|s| (s.question_id.as_str(), s.split.as_str()))
        .collect();
    let sample = sample_questions(rows.questions, rows.splits, per_stratum);
    if sample.is_empty() {
        return Vec::new();
    }
    let wanted: BTreeSet<&str> = sample
        .iter()
        .flat_map(|s| s.items.iter().map(|q| q.id.as_str()))
        .collect();
    let chunks: BTreeMap<&str, &Chunk> = rows.chunks.iter().map(|c| (c.id.as_str(), c)).collect();
    let triplets: BTreeMap<&str, &Triplet> =
        rows.triplets.iter().map(|t| (t.id.as_str(), t)).collect();
    let patterns: BTreeMap<&str, &Pattern> =
        rows.patterns.iter().map(|p| (p.id.as_str(), p)).collect();
    let judgements: BTreeMap<&str, &QuestionJudgement> = rows
        .judgements
        .iter()
        .filter(|j| wanted.contains(j.question_id.as_str()))
        .map(|j| (j.question_id.as_str(), j))
        .collect();
    let mut query_perturbations: BTreeMap<&str, Vec<&QueryPerturbation>> = BTreeMap::new();
    for p in rows.query_perturbations {
        if wanted.contains(p.question_id.as_str()) {
            query_perturbations
                .entry(p.question_id.as_str())
                .or_default()
                .push(p);
        }
    }
    let mut document_perturbations: BTreeMap<&str, Vec<&DocumentPerturbation>> = BTreeMap::new();
    for p in rows.document_perturbations {
        if wanted.contains(p.question_id.as_str()) {
            document_perturbations
                .entry(p.question_id.as_str())
                .or_default()
                .push(p);
        }
    }
    // question -> (query id, retriever) -> results
    let mut retrievals: BTreeMap<&str, BTreeMap<(&str, &str), Vec<&Retrieval>>> = BTreeMap::new();
    for r in rows.retrievals {
        if wanted.contains(r.question_id.as_str()) {
            retrievals
                .entry(r.question_id.as_str())
                .or_default()
                .entry((r.query_id.as_str(), r.retriever.as_str()))
                .or_default()
                .push(r);
        }
    }
    sample
        .into_iter()
        .map(|s| SampleStratum {
            key: s.key.to_vec(),
            total: s.total as u64,
            items: s
                .items
                .into_iter()
                .map(|q| {
                    let pattern = patterns.get(q.pattern_id.as_str()).map(|p| (*p).clone());
                    let triplet_ids = match &pattern {
                        Some(p) if !p.triplet_ids.is_empty() => &p.triplet_ids,
                        _ => &q.triplet_ids,
                    };
                    let mut qps: Vec<QueryPerturbation> = query_perturbations
                        .get(q.id.as_str())
                        .into_iter()
                        .flatten()
                        .map(|p| (*p).clone())
                        .collect();
                    qps.sort_by(|a, b| (&a.kind, &a.id).cmp(&(&b.kind, &b.id)));
                    qps.truncate(MAX_PERTURBATIONS);
                    let mut shown: Vec<&DocumentPerturbation> = document_perturbations
                        .get(q.id.as_str())
                        .into_iter()
                        .flatten()
                        .copied()
                        .collect();
                    shown.sort_by(|a, b| (&a.kind, &a.chunk_id).cmp(&(&b.kind, &b.chunk_id)));
                    shown.truncate(MAX_EVIDENCE);
                    let marked = mark_chunks(q, &chunks);
                    let evidence: Vec<Evidence> = shown
                        .into_iter()
                        .map(|p| {
                            let original = chunks.get(p.chunk_id.as_str()).map(|c| c.text.as_str());
                            let diff = original.and_then(|o| word_diff(o, &p.text));
                            let original_shown = marked.iter().any(|c| c.chunk.id == p.chunk_id);
                            Evidence {
                                perturbation: p.clone(),
                                original: original
                                    .filter(|_| diff.is_none() && !original_shown)
                                    .map(str::to_string),
                                original_shown,
                                diff,
                            }
                        })
                        .collect();
                    QuestionItem {
                        split: splits.get(q.id.as_str()).map(|s| s.to_string()),
                        judgement: judgements.get(q.id.as_str()).map(|j| (*j).clone()),
                        chunks: marked,
                        triplets: triplet_ids
                            .iter()
                            .filter_map(|t| triplets.get(t.as_str()).map(|t| (*t).clone()))
                            .collect(),
                        pattern,
                        retrieval: retrieval_runs(q, &qps, retrievals.get(q.id.as_str())),
                        query_perturbations: qps,
                        evidence,
                        question: q.clone(),
                    }
                })
                .collect(),
        })
        .collect()
}

/// The question's answer chunks with its source sentences marked in them.
fn mark_chunks(q: &Question, chunks: &BTreeMap<&str, &Chunk>) -> Vec<MarkedChunk> {
    let mut found = vec![false; q.source_sentences.len()];
    let sentences: Vec<String> = q.source_sentences.iter().map(|s| fold(s).text).collect();
    let mut out: Vec<MarkedChunk> = q
        .answer_chunk_ids
        .iter()
        .take(MAX_CHUNKS)
        .map(|id| {
            let chunk = chunks
                .get(id.as_str())
                .map(|c| (*c).clone())
                .unwrap_or(Chunk {
                    id: id.clone(),
                    ..Default::default()
                });
            let mut marks: Vec<Range<usize>> = Vec::new();
            let hay = fold(&chunk.text);
            for (i, sentence) in sentences.iter().enumerate() {
                if let Some(r) = find_folded(&chunk.text, &hay, sentence) {
                    found[i] = true;
                    marks.push(r);
                }
            }
            MarkedChunk {
                chunk,
                marks: merge(marks),
                unfound: Vec::new(),
            }
        })
        .collect();
    let unfound: Vec<String> = q
        .source_sentences
        .iter()
        .zip(&found)
        .filter(|(_, f)| !**f)
        .map(|(s, _)| s.clone())
        .collect();
    if let Some(last) = out.last_mut() {
        last.unfound = unfound;
    }
    out
}

/// Sorted ranges with overlapping ones joined.
fn merge(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<usize>> = Vec::new();
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// A text folded for loose matching: lower case, every whitespace run one space, none at the
/// ends; `origin` maps each byte of `text` to the byte of the original it came from.
struct Folded {
    text: String,
    origin: Vec<usize>,
}

fn fold(s: &str) -> Folded {
    let mut out = Folded {
        text: String::with_capacity(s.len()),
        origin: Vec::with_capacity(s.len()),
    };
    let mut space = false;
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.text.is_empty() {
            out.text.push(' ');
            out.origin.push(i);
        }
        space = false;
        for l in c.to_lowercase() {
            out.text.push(l);
            out.origin.extend(std::iter::repeat_n(i, l.len_utf8()));
        }
    }
    out
}

/// Where `needle` occurs in `text`, comparing case-insensitively and with any run of whitespace
/// equal to any other (a sentence as the triplet stage normalised it, in the chunk's own text).
/// Byte range in `text`; `None` when it does not occur or is blank. (The gathering folds each
/// chunk once and calls `find_folded`; this is the one-shot form the tests use.)
#[cfg(test)]
fn find_loose(text: &str, needle: &str) -> Option<Range<usize>> {
    find_folded(text, &fold(text), &fold(needle).text)
}

fn find_folded(text: &str, hay: &Folded, needle: &str) -> Option<Range<usize>> {
    if needle.is_empty() {
        return None;
    }
    let at = hay.text.find(needle)?;
    let last = hay.origin[at + needle.len() - 1];
    let end = last + text[last..].chars().next().map_or(0, char::len_utf8);
    Some(hay.origin[at]..end)
}

/// A word diff of `original` against `perturbed`, or `None` when they share under half of the
/// original's words (a translation: the two texts are shown instead) or are too long to align.
pub(crate) fn word_diff(original: &str, perturbed: &str) -> Option<Vec<DiffPiece>> {
    let a: Vec<&str> = original.split_whitespace().collect();
    let b: Vec<&str> = perturbed.split_whitespace().collect();
    // The common head and tail need no table; what lies between is aligned word by word.
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    if a_mid.len().saturating_mul(b_mid.len()) > MAX_DIFF_CELLS {
        return None;
    }
    let mut pieces: Vec<DiffPiece> = Vec::new();
    if head > 0 {
        pieces.push(DiffPiece::Same(a[..head].join(" ")));
    }
    let middle = align(a_mid, b_mid);
    let common = head
        + tail
        + middle
            .iter()
            .map(|p| match p {
                DiffPiece::Same(w) => w.split(' ').count(),
                _ => 0,
            })
            .sum::<usize>();
    if a.is_empty() || common * 2 < a.len() {
        return None;
    }
    for piece in middle {
        match (pieces.last_mut(), &piece) {
            (Some(DiffPiece::Same(prev)), DiffPiece::Same(w)) => {
                prev.push(' ');
                prev.push_str(w);
            }
            _ => pieces.push(piece),
        }
    }
    if tail > 0 {
        let words = a[a.len() - tail..].join(" ");
        match pieces.last_mut() {
            Some(DiffPiece::Same(prev)) => {
                prev.push(' ');
                prev.push_str(&words);
            }
            _ => pieces.push(DiffPiece::Same(words)),
        }
    }
    Some(pieces)
}

/// Cells of the longest-common-subsequence table a diff may fill (past it, both texts are shown).
const MAX_DIFF_CELLS: usize = 250_000;

/// The word diff of `a` against `b` by their longest common subsequence.
fn align(a: &[&str], b: &[&str]) -> Vec<DiffPiece> {
    // Longest common subsequence table, from the ends.
    let w = b.len() + 1;
    let mut lcs = vec![0u32; (a.len() + 1) * w];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i * w + j] = if a[i] == b[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let mut pieces: Vec<DiffPiece> = Vec::new();
    let mut push = |piece: DiffPiece| match (pieces.last_mut(), &piece) {
        (Some(DiffPiece::Same(prev)), DiffPiece::Same(w))
        | (Some(DiffPiece::Deleted(prev)), DiffPiece::Deleted(w))
        | (Some(DiffPiece::Inserted(prev)), DiffPiece::Inserted(w)) => {
            prev.push(' ');
            prev.push_str(w);
        }
        _ => pieces.push(piece),
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            push(DiffPiece::Same(a[i].to_string()));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            push(DiffPiece::Deleted(a[i].to_string()));
            i += 1;
        } else {
            push(DiffPiece::Inserted(b[j].to_string()));
            j += 1;
        }
    }
    pieces
}

/// The question's retrieval results per query (the original first, then the perturbed ones
/// shown, in their order) and retriever.
fn retrieval_runs(
    q: &Question,
    perturbed: &[QueryPerturbation],
    results: Option<&BTreeMap<(&str, &str), Vec<&Retrieval>>>,
) -> Vec<RetrievalRun> {
    let Some(results) = results else {
        return Vec::new();
    };
    let mut names: Vec<(String, String)> = vec![(q.id.clone(), "original".into())];
    names.extend(perturbed.iter().map(|p| (p.id.clone(), p.kind.clone())));
    let mut out = Vec::new();
    for (query_id, name) in names {
        for ((qid, retriever), rows) in results.range((query_id.as_str(), "")..) {
            if *qid != query_id {
                break;
            }
            let mut hit_ranks: Vec<i64> = rows
                .iter()
                .filter(|r| r.ground_truth)
                .map(|r| r.rank)
                .collect();
            hit_ranks.sort();
            out.push(RetrievalRun {
                query: name.clone(),
                query_id: query_id.clone(),
                retriever: retriever.to_string(),
                hit_ranks,
                results: rows.len(),
            });
        }
    }
    out
}

/// The stratum of a drop record: its stage and reason.
fn drop_items(drops: &[DropRecord], per_stratum: usize) -> Vec<SampleStratum<DropRecord>> {
    stratified_sample(
        drops,
        per_stratum,
        |d| [d.stage.clone(), d.reason.clone()],
        |d| d.id.as_str(),
    )
    .into_iter()
    .map(|s| SampleStratum {
        key: s.key.to_vec(),
        total: s.total as u64,
        items: s.items.into_iter().cloned().collect(),
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_item_gathers_its_pair_queries_and_documents() {
        let samples = example::samples();
        let keys: Vec<String> = samples.claims.iter().map(|s| s.name()).collect();
        assert_eq!(keys, ["false / misleading", "false / supporting"]);
        let misleading = &samples.claims[0];
        assert_eq!((misleading.total, misleading.items.len()), (2, 2));
        for item in &misleading.items {
            // The sampled pair's document first, then the claim's others by best rank.
            let first = &item.documents[0];
            assert!(first.sampled);
            assert_eq!(first.label.as_ref().unwrap().id, item.pair_id);
            let rest: Vec<&str> = item.documents[1..]
                .iter()
                .map(|d| d.document.id.as_str())
                .collect();
            let mut by_rank = rest.clone();
            by_rank.sort_by_key(|d| std::cmp::Reverse(d.to_string()));
            assert_eq!(rest, by_rank, "doc_3 has rank 1, doc_1 rank 3");
            assert_eq!(item.documents.len(), 3);
            assert_eq!(item.queries.len(), 1);
            assert_eq!(item.claim.verdict, "false");
        }
    }

    #[test]
    fn a_question_item_gathers_chunks_pattern_perturbations_and_retrieval() {
        let samples = example::samples();
        assert_eq!(samples.questions.len(), 1);
        assert_eq!(samples.questions[0].key, ["single_hop", "test"]);
        let q = &samples.questions[0].items[0];
        let c = &q.chunks[0];
        assert_eq!(
            &c.chunk.text[c.marks[0].clone()],
            "Net sales grew 5% in 2023 to $10 million."
        );
        assert!(c.unfound.is_empty());
        assert_eq!(q.triplets.len(), 1);
        assert_eq!(q.pattern.as_ref().unwrap().pattern, "single_hop");
        assert_eq!(q.query_perturbations.len(), 1);
        // A deletion is a diff; a translation is shown whole.
        let kinds: Vec<(&str, bool)> = q
            .evidence
            .iter()
            .map(|e| (e.perturbation.kind.as_str(), e.diff.is_some()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("back_translation", false),
                ("identity", true),
                ("regex_delete", true)
            ]
        );
        let runs: Vec<(&str, &str, Vec<i64>, bool)> = q
            .retrieval
            .iter()
            .map(|r| {
                (
                    r.query.as_str(),
                    r.retriever.as_str(),
                    r.hit_ranks.clone(),
                    r.hit(),
                )
            })
            .collect();
        assert_eq!(
            runs,
            [
                ("original", "bm25", vec![2], true),
                ("word_level", "bm25", vec![], false)
            ]
        );
        assert_eq!(samples.drops[0].key, ["claims", "bad_date"]);
        let none = sample_items(
            &ItemRows {
                drops: None,
                ..example::owned().rows()
            },
            5,
            "p.toml",
        );
        assert!(none.drops.is_empty() && none.drops_missing.is_some());
    }

    #[test]
    fn sentences_are_found_loosely_and_marked_in_the_original_bytes() {
        let text = "Revenue  rose.\nThe Company's NET sales\n grew 5%   in 2023. Other.";
        let r = find_loose(text, "the company's net sales grew 5% in 2023.").unwrap();
        assert_eq!(&text[r], "The Company's NET sales\n grew 5%   in 2023.");
        assert_eq!(find_loose(text, "absent sentence"), None);
        assert_eq!(find_loose(text, "   "), None);
        let accented = "Le chiffre d’affaires a crû. Fin";
        let r = find_loose(accented, "a CRÛ.").unwrap();
        assert_eq!(&accented[r], "a crû.");
    }

    #[test]
    fn diffs_show_what_was_deleted_and_rewrites_show_both_texts() {
        let d = word_diff(
            "Net sales grew 5% in 2023 to $10 million.",
            "Net sales grew in 2023 to million.",
        )
        .unwrap();
        assert_eq!(
            d,
            vec![
                DiffPiece::Same("Net sales grew".into()),
                DiffPiece::Deleted("5%".into()),
                DiffPiece::Same("in 2023 to".into()),
                DiffPiece::Deleted("$10".into()),
                DiffPiece::Same("million.".into()),
            ]
        );
        let d = word_diff("a b c", "a x c").unwrap();
        assert_eq!(
            d,
            vec![
                DiffPiece::Same("a".into()),
                DiffPiece::Deleted("b".into()),
                DiffPiece::Inserted("x".into()),
                DiffPiece::Same("c".into()),
            ]
        );
        assert_eq!(
            word_diff(
                "Net sales grew 5% in 2023.",
                "Les ventes nettes ont augmenté de 5 % en 2023."
            ),
            None
        );
    }
}

/// Rows of a small version with every kind of item, for the crate's tests.
#[cfg(test)]
pub(crate) mod example {
    use super::*;

    pub struct Owned {
        pub claims: Vec<Claim>,
        pub queries: Vec<Query>,
        pub documents: Vec<Document>,
        pub links: Vec<ClaimDocument>,
        pub labels: Vec<ClaimDocumentLabel>,
        pub chunks: Vec<Chunk>,
        pub triplets: Vec<Triplet>,
        pub patterns: Vec<Pattern>,
        pub questions: Vec<Question>,
        pub splits: Vec<QuestionSplit>,
        pub query_perturbations: Vec<QueryPerturbation>,
        pub document_perturbations: Vec<DocumentPerturbation>,
        pub retrievals: Vec<Retrieval>,
        pub drops: Vec<DropRecord>,
    }

    pub fn owned() -> Owned {
        let s = |v: &str| v.to_string();
        let claims = vec![Claim {
            id: s("cl_1"),
            text: s("The <deficit> doubled & more."),
            verdict: s("false"),
            original_rating: s("pants-fire"),
            source: s("demo"),
            ..Default::default()
        }];
        let documents: Vec<Document> = (1..=3)
            .map(|i| Document {
                id: format!("doc_{i}"),
                url: format!("https://example.org/{i}"),
                domain: s("example.org"),
                title: Some(format!("Page {i}")),
                text: format!("Text of page {i}."),
                ..Default::default()
            })
            .collect();
        let links: Vec<ClaimDocument> = (1..=3)
            .map(|i| ClaimDocument {
                id: format!("link_{i}"),
                claim_id: s("cl_1"),
                document_id: format!("doc_{i}"),
                best_rank: 4 - i as i64,
                query_kinds: vec![s("keywords")],
                ..Default::default()
            })
            .collect();
        let labels: Vec<ClaimDocumentLabel> = (1..=3)
            .map(|i| ClaimDocumentLabel {
                id: format!("pair_{i}"),
                claim_id: s("cl_1"),
                document_id: format!("doc_{i}"),
                label: Some(s(if i == 1 { "supporting" } else { "misleading" })),
                exam_votes: vec![s("full=false"), s("no_title=false")],
                stance_url: Some(s("reject")),
                ..Default::default()
            })
            .collect();
        let chunk_text = "Acme Corp reported revenue.  Net sales grew 5% in 2023 to $10 million. \
                          Other things happened.";
        let chunks = vec![Chunk {
            id: s("chunk_1"),
            report_id: s("report_1"),
            text: s(chunk_text),
            token_count: 20,
            ..Default::default()
        }];
        let triplets = vec![Triplet {
            id: s("tr_1"),
            report_id: s("report_1"),
            chunk_id: s("chunk_1"),
            entity_1: s("Acme Corp"),
            relation: s("net sales growth"),
            entity_2: s("5%"),
            source_sentence: s("Net sales grew 5% in 2023 to $10 million."),
            ..Default::default()
        }];
        let patterns = vec![Pattern {
            id: s("pat_1"),
            pattern: s("single_hop"),
            triplet_ids: vec![s("tr_1")],
            chunk_ids: vec![s("chunk_1")],
            ..Default::default()
        }];
        let questions = vec![Question {
            id: s("q_1"),
            pattern_id: s("pat_1"),
            kind: s("single_hop"),
            question: s("How much did Acme's net sales grow in 2023?"),
            answer: s("5%"),
            answer_chunk_ids: vec![s("chunk_1")],
            source_sentences: vec![s("net sales grew 5% in 2023 to $10 million.")],
            triplet_ids: vec![s("tr_1")],
            ..Default::default()
        }];
        let splits = vec![QuestionSplit {
            id: s("split_1"),
            question_id: s("q_1"),
            kind: s("single_hop"),
            split: s("test"),
        }];
        let query_perturbations = vec![QueryPerturbation {
            id: s("qp_1"),
            question_id: s("q_1"),
            kind: s("word_level"),
            perturbed_query: s("How much did Acme's net sale grow in 2023?"),
            similarity: 0.9,
            ..Default::default()
        }];
        let document_perturbations = vec![
            DocumentPerturbation {
                id: s("dp_1"),
                question_id: s("q_1"),
                chunk_id: s("chunk_1"),
                kind: s("regex_delete"),
                text: s(
                    "Acme Corp reported revenue. Net sales grew in 2023. Other things happened.",
                ),
                similarity: Some(0.8),
                ..Default::default()
            },
            DocumentPerturbation {
                id: s("dp_3"),
                question_id: s("q_1"),
                chunk_id: s("chunk_1"),
                kind: s("identity"),
                text: s(chunk_text),
                similarity: Some(1.0),
                ..Default::default()
            },
            DocumentPerturbation {
                id: s("dp_2"),
                question_id: s("q_1"),
                chunk_id: s("chunk_1"),
                kind: s("back_translation"),
                text: s("La société Acme a déclaré des revenus. Les ventes ont augmenté."),
                similarity: Some(0.4),
                ..Default::default()
            },
        ];
        let retrievals = vec![
            Retrieval {
                id: s("r1"),
                question_id: s("q_1"),
                query_id: s("q_1"),
                retriever: s("bm25"),
                chunk_id: s("chunk_1"),
                rank: 2,
                ground_truth: true,
                ..Default::default()
            },
            Retrieval {
                id: s("r2"),
                question_id: s("q_1"),
                query_id: s("q_1"),
                retriever: s("bm25"),
                chunk_id: s("chunk_9"),
                rank: 1,
                ..Default::default()
            },
            Retrieval {
                id: s("r3"),
                question_id: s("q_1"),
                query_id: s("qp_1"),
                retriever: s("bm25"),
                chunk_id: s("chunk_9"),
                rank: 1,
                ..Default::default()
            },
        ];
        let drops = vec![DropRecord {
            id: s("drop_1"),
            stage: s("claims"),
            item: s("row 7 of claims.csv"),
            reason: s("bad_date"),
            detail: s("`2023-13-01` is not a date <sic>"),
            dropped: true,
            ..Default::default()
        }];
        Owned {
            claims,
            queries: vec![Query {
                id: s("query_1"),
                claim_id: s("cl_1"),
                kind: s("keywords"),
                text: s("deficit doubled"),
                ..Default::default()
            }],
            documents,
            links,
            labels,
            chunks,
            triplets,
            patterns,
            questions,
            splits,
            query_perturbations,
            document_perturbations,
            retrievals,
            drops,
        }
    }

    impl Owned {
        pub fn rows(&self) -> ItemRows<'_> {
            ItemRows {
                claims: &self.claims,
                queries: &self.queries,
                documents: &self.documents,
                claim_documents: &self.links,
                labels: &self.labels,
                chunks: &self.chunks,
                triplets: &self.triplets,
                patterns: &self.patterns,
                questions: &self.questions,
                splits: &self.splits,
                query_perturbations: &self.query_perturbations,
                document_perturbations: &self.document_perturbations,
                retrievals: &self.retrievals,
                drops: Some(&self.drops),
                ..Default::default()
            }
        }
    }

    pub fn samples() -> Samples {
        sample_items(&owned().rows(), 5, "pipelines/demo.toml")
    }
}
