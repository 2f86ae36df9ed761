//! The retrievers, apart from the stage: BM25 over chunk texts ([`Bm25Chunks`], tantivy's
//! scores in `noisebench-index`'s in-memory scored postings) and exact nearest neighbours over
//! embedding vectors (`VectorSearch`, `noisebench-index`'s [`VectorIndex`]). Each returns, per
//! query, its top k chunks by score with ties broken by chunk id, so a run is reproducible.
//!
//! There is no approximate index: the exact search's int8 first pass scores RARE's 37,792
//! chunks against 168,136 queries in seconds, and an HNSW path (`instant-distance`) measured
//! slower than exact search at that size (CHANGELOG.md).

use std::collections::BTreeSet;

use noisebench_core::{default_threads, parallel_map, parallel_map_with};
use noisebench_index::bm25::{IndexError, analyse, terms};
use noisebench_index::vector::{VectorError, VectorIndex};
use noisebench_index::{Impacts, Scratch};

/// One retrieved chunk: its position in the chunk list and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub chunk: usize,
    pub score: f64,
}

/// A BM25 index over chunk texts; results point into the chunk list it was built from
/// (document d is chunk d). Scored postings held in memory ([`noisebench_index::Impacts`]:
/// tantivy's analyser and scores, none of its indexing or per-query work).
pub struct Bm25Chunks {
    impacts: Impacts,
}

impl Bm25Chunks {
    /// Index `(id, text)` pairs (ids unique): each text analysed as tantivy's index would,
    /// on every core, and scored by tantivy's formula ([`Impacts::from_analysed`]; no tantivy
    /// index is built).
    pub fn build<'a>(
        chunks: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, IndexError> {
        let (ids, texts): (Vec<String>, Vec<&str>) = chunks
            .into_iter()
            .map(|(id, text)| (id.to_string(), text))
            .unzip();
        let analysed = parallel_map(&texts, default_threads(), |t| analyse(t));
        let impacts = Impacts::from_analysed(ids, &analysed);
        Ok(Self { impacts })
    }

    fn scored(&self, hits: Vec<(f32, u32)>) -> Vec<Scored> {
        hits.into_iter()
            .map(|(score, d)| Scored {
                chunk: d as usize,
                score: f64::from(score),
            })
            .collect()
    }

    /// The `k` best chunks for `text`, best first, ties by chunk id.
    pub fn search(&self, text: &str, k: usize) -> Result<Vec<Scored>, IndexError> {
        let hits = self
            .impacts
            .search(&terms(text), k, &mut Scratch::default());
        Ok(self.scored(hits))
    }

    /// [`Bm25Chunks::search`] without pruning: every posting of the query's terms scored
    /// ([`Impacts::search_exhaustive`]). The same hits, bit for bit; the reference the pruned
    /// search is tested and benchmarked against.
    pub fn search_exhaustive(&self, text: &str, k: usize) -> Vec<Scored> {
        let hits = self
            .impacts
            .search_exhaustive(&terms(text), k, &mut Scratch::default());
        self.scored(hits)
    }

    /// [`Bm25Chunks::search`] for many queries on `threads` threads; results in input order.
    /// Queries with the same analysed terms (a reordering, a changed stopword or punctuation)
    /// are searched once: a BM25 query is the set of its terms. `families` (one number per
    /// query, or empty) groups queries that are variants of one another (a question and its
    /// perturbations): a family is searched on one thread, each query starting from the whole
    /// scores of the hits found so far in its family, which are usually near its own. The hits
    /// are the same with or without families; only the time differs. `tick` is called once per
    /// distinct query done (a progress bar).
    pub fn search_all(
        &self,
        texts: &[&str],
        families: &[u32],
        k: usize,
        threads: usize,
        tick: &(dyn Fn() + Sync),
    ) -> Vec<Result<Vec<Scored>, IndexError>> {
        let keys: Vec<BTreeSet<String>> = parallel_map(texts, threads, |t| terms(t));
        // Looked up only, never iterated: a fast hash (the default one hashes each query's
        // words at a fraction of the speed, on one thread).
        let mut first: std::collections::HashMap<&BTreeSet<String>, usize, FastHash> =
            std::collections::HashMap::default();
        // Distinct queries by family, each family in input order.
        let mut family_of: std::collections::HashMap<u32, usize, FastHash> =
            std::collections::HashMap::default();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut slot: Vec<(usize, usize)> = Vec::with_capacity(keys.len());
        let mut distinct_slot: Vec<(usize, usize)> = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let d = *first.entry(key).or_insert_with(|| {
                let family = families.get(i).copied().unwrap_or(i as u32);
                let g = *family_of.entry(family).or_insert_with(|| {
                    groups.push(Vec::new());
                    groups.len() - 1
                });
                groups[g].push(i);
                distinct_slot.push((g, groups[g].len() - 1));
                distinct_slot.len() - 1
            });
            slot.push(distinct_slot[d]);
        }
        // Each thread with its own score array.
        let found: Vec<Vec<Vec<Scored>>> =
            parallel_map_with(&groups, threads, Scratch::default, |scratch, group| {
                let mut hints: Vec<u32> = Vec::new();
                group
                    .iter()
                    .map(|&i| {
                        let hits = self.impacts.search_hinted(&keys[i], k, scratch, &hints);
                        hints.extend(hits.iter().map(|(_, d)| *d));
                        tick();
                        self.scored(hits)
                    })
                    .collect()
            });
        slot.into_iter()
            .map(|(g, j)| Ok(found[g][j].clone()))
            .collect()
    }

    /// How many distinct analysed queries `texts` hold (what [`Bm25Chunks::search_all`] runs).
    pub fn distinct_queries(texts: &[&str]) -> usize {
        texts
            .iter()
            .map(|t| noisebench_index::bm25::terms(t))
            .collect::<std::collections::HashSet<_>>()
            .len()
    }
}

/// The hasher of lookup-only maps.
type FastHash = foldhash::fast::RandomState;

/// Queries per block of exact search: a block is one pass over every vector.
const EXACT_BLOCK: usize = 256;

/// Nearest neighbours by cosine over chunk vectors, exact ([`VectorIndex`]).
pub(crate) struct VectorSearch {
    index: VectorIndex,
}

impl VectorSearch {
    /// `ids[i]` names `vectors[i]`; every vector has the same length.
    pub fn build(ids: &[&str], vectors: &[Vec<f32>]) -> Result<Self, VectorError> {
        let dim = vectors.first().map_or(0, Vec::len);
        let mut index = VectorIndex::new(dim);
        for (id, v) in ids.iter().zip(vectors) {
            index.add(*id, v)?;
        }
        Ok(VectorSearch { index })
    }

    /// [`VectorSearch::search`] for every query on `threads` threads, results in query order.
    /// The queries go in blocks (each block one pass over the vectors, 32 or four queries per
    /// row read); `tick(n)` is called as n more queries are done.
    pub fn search_all(
        &self,
        queries: &[Vec<f32>],
        k: usize,
        threads: usize,
        tick: &(dyn Fn(u64) + Sync),
    ) -> Vec<Result<Vec<Scored>, VectorError>> {
        let blocks: Vec<&[Vec<f32>]> = queries.chunks(EXACT_BLOCK).collect();
        let done = parallel_map(&blocks, threads, |block| {
            let found = match self.index.search_many_rows(block, k) {
                Ok(hits) => hits.into_iter().map(|hits| Ok(scored(hits))).collect(),
                // A bad query fails the block: search each alone to find which.
                Err(_) => block.iter().map(|q| self.search(q, k)).collect::<Vec<_>>(),
            };
            tick(block.len() as u64);
            found
        });
        done.into_iter().flatten().collect()
    }

    /// The `k` chunks most similar to `query`, best first, ties by id.
    pub fn search(&self, query: &[f32], k: usize) -> Result<Vec<Scored>, VectorError> {
        Ok(scored(
            self.index
                .search_many_rows(&[query], k)?
                .pop()
                .unwrap_or_default(),
        ))
    }
}

/// Hits as chunk positions and scores (vector i is chunk i: [`VectorSearch::build`]).
fn scored(hits: Vec<(u32, f32)>) -> Vec<Scored> {
    hits.into_iter()
        .map(|(row, score)| Scored {
            chunk: row as usize,
            score: f64::from(score),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_ranks_chunks_and_breaks_ties_by_id() {
        let chunks = [
            ("c2", "Revenue grew in Europe."),
            ("c1", "Revenue grew in Europe."),
            ("c3", "The harbour was dredged."),
        ];
        let index = Bm25Chunks::build(chunks.iter().map(|(a, b)| (*a, *b))).unwrap();
        let hits = index.search("european revenue", 3).unwrap();
        assert_eq!(
            hits.iter().map(|h| h.chunk).collect::<Vec<_>>(),
            [1, 0],
            "c1 before c2 on a tie; c3 matches nothing"
        );
        let all = index.search_all(&["harbour", "revenue", "the Revenue!"], &[], 1, 2, &|| {});
        assert_eq!(all[0].as_ref().unwrap()[0].chunk, 2);
        assert_eq!(all[1].as_ref().unwrap()[0].chunk, 1);
        assert_eq!(all[2].as_ref().unwrap(), all[1].as_ref().unwrap());
        assert_eq!(
            Bm25Chunks::distinct_queries(&["harbour", "revenue", "the Revenue!"]),
            2
        );
        // Families (interleaved, a duplicate across families) change nothing, order included.
        let texts = [
            "harbour",
            "revenue",
            "the Revenue!",
            "harbour dredged",
            "europe",
        ];
        let plain = index.search_all(&texts, &[], 2, 2, &|| {});
        let grouped = index.search_all(&texts, &[7, 3, 7, 3, 7], 2, 1, &|| {});
        let hits = |r: &[Result<Vec<Scored>, IndexError>]| {
            r.iter()
                .map(|x| x.as_ref().unwrap().clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(hits(&plain), hits(&grouped));
    }

    #[test]
    fn vectors_rank_by_cosine_with_ties_by_id_in_one_search_or_many() {
        let ids = ["c2", "c1", "c3", "c0"];
        let vectors = vec![
            vec![1.0, 0.0],
            vec![2.0, 0.0],
            vec![0.0, 1.0],
            vec![1.0, 1.0],
        ];
        let search = VectorSearch::build(&ids, &vectors).unwrap();
        let hits = search.search(&[1.0, 0.0], 3).unwrap();
        // c1 and c2 tie at 1.0 (c1 first), then c0 at cos 45 degrees.
        assert_eq!(hits.iter().map(|h| h.chunk).collect::<Vec<_>>(), [1, 0, 3]);
        assert!((hits[2].score - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        let queries: Vec<Vec<f32>> = (0..600).map(|i| vec![1.0, i as f32 / 100.0]).collect();
        let ticks = std::sync::atomic::AtomicU64::new(0);
        let tick = |n: u64| {
            ticks.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        };
        let all = search.search_all(&queries, 2, 2, &tick);
        assert_eq!(ticks.into_inner(), 600, "every query ticked once");
        for (q, got) in queries.iter().zip(&all) {
            assert_eq!(got.as_ref().unwrap(), &search.search(q, 2).unwrap());
        }
        assert!(
            VectorSearch::build(&["a", "b"], &[vec![1.0, 0.0], vec![1.0]]).is_err(),
            "vectors of two lengths"
        );
    }
}
