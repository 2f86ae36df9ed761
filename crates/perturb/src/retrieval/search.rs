//! The retrievers, apart from the stage: BM25 over chunk texts ([`Bm25Chunks`], tantivy's
//! scores in `noisebench-index`'s in-memory scored postings) and nearest neighbours over
//! embedding vectors
//! ([`VectorSearch`]: exact up to a size, HNSW beyond it). Each returns, per query, its top k
//! chunks by score with ties broken by chunk id, so a run is reproducible.
//!
//! The approximate index is `instant-distance`: a small HNSW crate (MIT/Apache, four light
//! dependencies, a seedable builder) that we only use for candidates; every candidate is rescored
//! with the exact dot product, so scores are exact and only recall is approximate. It is built
//! on one thread, so the same vectors and seed give the same graph and the same results. `hnsw_rs`
//! brings mmap, logging and SIMD dependencies we do not need at tens of thousands of chunks.

use instant_distance::{Builder, HnswMap, Point, Search};
use std::collections::BTreeSet;

use noisebench_core::{default_threads, parallel_map, parallel_map_with};
use noisebench_index::bm25::{IndexError, analyse, terms};
use noisebench_index::vector::{VectorError, VectorIndex, dot};
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
        let mut first: std::collections::HashMap<&BTreeSet<String>, usize> =
            std::collections::HashMap::new();
        // Distinct queries by family, each family in input order.
        let mut family_of: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
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

/// Queries per block of exact search: a block is one pass over every vector.
const EXACT_BLOCK: usize = 256;

/// A unit vector as an HNSW point; distance is 1 - cosine.
#[derive(Clone)]
struct Unit(Vec<f32>);

impl Point for Unit {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

/// `v` at unit length, computed as `noisebench-index`'s exact search does (an f64 norm), so
/// exact and rescored HNSW scores agree to the bit.
fn unit(v: &[f32]) -> Vec<f32> {
    let n = v
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if n > 0.0 {
        v.iter().map(|x| (f64::from(*x) / n) as f32).collect()
    } else {
        v.to_vec()
    }
}

/// Nearest neighbours by cosine over chunk vectors: exact, or HNSW candidates rescored exactly.
pub struct VectorSearch {
    inner: Inner,
}

enum Inner {
    Exact {
        index: VectorIndex,
    },
    Approximate {
        map: HnswMap<Unit, usize>,
        vectors: Vec<Vec<f32>>,
        ids: Vec<String>,
        ef_search: usize,
    },
}

/// How to build the approximate index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnnParams {
    pub ef_construction: usize,
    pub ef_search: usize,
    pub seed: u64,
}

impl VectorSearch {
    /// Exact search when there are at most `exact_max` vectors, HNSW otherwise. `ids[i]` names
    /// `vectors[i]`; every vector has the same length.
    pub fn build(
        ids: &[&str],
        vectors: &[Vec<f32>],
        exact_max: usize,
        ann: AnnParams,
    ) -> Result<Self, VectorError> {
        let dim = vectors.first().map_or(0, Vec::len);
        if vectors.len() <= exact_max {
            let mut index = VectorIndex::new(dim);
            for (id, v) in ids.iter().zip(vectors) {
                index.add(*id, v)?;
            }
            return Ok(VectorSearch {
                inner: Inner::Exact { index },
            });
        }
        let mut units = Vec::with_capacity(vectors.len());
        for (id, v) in ids.iter().zip(vectors) {
            if v.len() != dim {
                return Err(VectorError::Dimension {
                    id: id.to_string(),
                    got: v.len(),
                    want: dim,
                });
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(VectorError::NotFinite { id: id.to_string() });
            }
            units.push(unit(v));
        }
        let build = || {
            Builder::default()
                .ef_construction(ann.ef_construction)
                .ef_search(ann.ef_search)
                .seed(ann.seed)
                .build(
                    units.iter().cloned().map(Unit).collect(),
                    (0..units.len()).collect(),
                )
        };
        // instant-distance inserts in parallel with rayon, so the graph would depend on thread
        // timing; one thread makes it a function of the vectors and the seed.
        let map = match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
            Ok(pool) => pool.install(build),
            Err(_) => build(),
        };
        Ok(VectorSearch {
            inner: Inner::Approximate {
                map,
                vectors: units,
                ids: ids.iter().map(|s| s.to_string()).collect(),
                ef_search: ann.ef_search,
            },
        })
    }

    pub fn is_exact(&self) -> bool {
        matches!(self.inner, Inner::Exact { .. })
    }

    /// [`VectorSearch::search`] for every query on `threads` threads, results in query order.
    /// Exact search takes the queries in blocks (each block one pass over the vectors, four
    /// queries per row read); `tick(n)` is called as n more queries are done.
    pub fn search_all(
        &self,
        queries: &[Vec<f32>],
        k: usize,
        threads: usize,
        position: &(dyn Fn(&str) -> Option<usize> + Sync),
        tick: &(dyn Fn(u64) + Sync),
    ) -> Vec<Result<Vec<Scored>, VectorError>> {
        match &self.inner {
            Inner::Exact { index } => {
                let blocks: Vec<&[Vec<f32>]> = queries.chunks(EXACT_BLOCK).collect();
                let done = parallel_map(&blocks, threads, |block| {
                    let found = match index.search_many(block, k) {
                        Ok(hits) => hits
                            .into_iter()
                            .map(|hits| {
                                Ok(hits
                                    .into_iter()
                                    .filter_map(|h| {
                                        position(&h.id).map(|chunk| Scored {
                                            chunk,
                                            score: f64::from(h.score),
                                        })
                                    })
                                    .collect())
                            })
                            .collect(),
                        // A bad query fails the block: search each alone to find which.
                        Err(_) => block
                            .iter()
                            .map(|q| self.search(q, k, position))
                            .collect::<Vec<_>>(),
                    };
                    tick(block.len() as u64);
                    found
                });
                done.into_iter().flatten().collect()
            }
            Inner::Approximate { .. } => parallel_map(queries, threads, |q| {
                let r = self.search(q, k, position);
                tick(1);
                r
            }),
        }
    }

    /// The `k` chunks most similar to `query`, best first, ties by id; `position` maps an id
    /// to its chunk's position.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        position: &dyn Fn(&str) -> Option<usize>,
    ) -> Result<Vec<Scored>, VectorError> {
        match &self.inner {
            Inner::Exact { index } => Ok(index
                .search(query, k)?
                .into_iter()
                .filter_map(|h| {
                    position(&h.id).map(|chunk| Scored {
                        chunk,
                        score: f64::from(h.score),
                    })
                })
                .collect()),
            Inner::Approximate {
                map,
                vectors,
                ids,
                ef_search,
            } => {
                let q = unit(query);
                if q.len() != vectors.first().map_or(0, Vec::len) {
                    return Err(VectorError::Dimension {
                        id: "query".into(),
                        got: q.len(),
                        want: vectors.first().map_or(0, Vec::len),
                    });
                }
                thread_local! {
                    // The search's scratch space (visited set, candidate heaps), reused by
                    // every query on this thread.
                    static SEARCH: std::cell::RefCell<Search> = std::cell::RefCell::new(Search::default());
                }
                let mut found: Vec<(f32, usize)> = SEARCH.with_borrow_mut(|search| {
                    map.search(&Unit(q.clone()), search)
                        .take((*ef_search).max(k))
                        .map(|item| {
                            let i = *item.value;
                            (dot(&q, &vectors[i]).clamp(-1.0, 1.0), i)
                        })
                        .collect()
                });
                found.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| ids[a.1].cmp(&ids[b.1])));
                Ok(found
                    .into_iter()
                    .take(k)
                    .filter_map(|(score, i)| {
                        position(&ids[i]).map(|chunk| Scored {
                            chunk,
                            score: f64::from(score),
                        })
                    })
                    .collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

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
    fn hnsw_finds_the_exact_top_k_with_high_recall() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let dim = 24;
        let n = 800;
        let vectors: Vec<Vec<f32>> = (0..n)
            .map(|_| (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect())
            .collect();
        let ids: Vec<String> = (0..n).map(|i| format!("c{i:05}")).collect();
        let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let params = AnnParams {
            ef_construction: 100,
            ef_search: 100,
            seed: 1,
        };
        let exact = VectorSearch::build(&id_refs, &vectors, n, params).unwrap();
        let approx = VectorSearch::build(&id_refs, &vectors, n - 1, params).unwrap();
        let again = VectorSearch::build(&id_refs, &vectors, n - 1, params).unwrap();
        assert!(exact.is_exact() && !approx.is_exact());
        let position = |id: &str| id[1..].parse::<usize>().ok();
        let k = 10;
        let (mut found, mut wanted, mut same_lists) = (0, 0, 0);
        let queries = 100;
        for _ in 0..queries {
            let q: Vec<f32> = (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect();
            let want: Vec<usize> = exact
                .search(&q, k, &position)
                .unwrap()
                .iter()
                .map(|s| s.chunk)
                .collect();
            let got: Vec<usize> = approx
                .search(&q, k, &position)
                .unwrap()
                .iter()
                .map(|s| s.chunk)
                .collect();
            let twice: Vec<usize> = again
                .search(&q, k, &position)
                .unwrap()
                .iter()
                .map(|s| s.chunk)
                .collect();
            assert_eq!(got, twice, "the same graph every build");
            wanted += want.len();
            found += got.iter().filter(|c| want.contains(c)).count();
            same_lists += usize::from(got == want);
        }
        let recall = found as f64 / wanted as f64;
        assert!(recall >= 0.95, "recall@{k} {recall}");
        assert!(
            same_lists >= queries * 8 / 10,
            "{same_lists} identical lists"
        );
        // On a tiny case the approximate top k is the exact one.
        let small = VectorSearch::build(&id_refs[..50], &vectors[..50], 0, params).unwrap();
        let small_exact = VectorSearch::build(&id_refs[..50], &vectors[..50], 50, params).unwrap();
        let q = &vectors[3];
        let chunks = |v: &VectorSearch| -> Vec<usize> {
            v.search(q, 5, &position)
                .unwrap()
                .iter()
                .map(|s| s.chunk)
                .collect()
        };
        assert_eq!(chunks(&small), chunks(&small_exact));
    }

    /// What an HNSW build and its queries cost beyond `exact_max` (release build:
    /// `cargo test -p noisebench-perturb --release --lib -- --ignored hnsw_at_scale --nocapture`).
    #[test]
    #[ignore]
    fn hnsw_at_scale() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let (n, dim) = (60_000, 384);
        let vectors: Vec<Vec<f32>> = (0..n)
            .map(|_| (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect())
            .collect();
        let ids: Vec<String> = (0..n).map(|i| format!("c{i:06}")).collect();
        let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let params = AnnParams {
            ef_construction: 100,
            ef_search: 100,
            seed: 1,
        };
        let t = std::time::Instant::now();
        let approx = VectorSearch::build(&id_refs, &vectors, 0, params).unwrap();
        println!(
            "hnsw build of {n} x {dim}: {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let position = |id: &str| id[1..].parse::<usize>().ok();
        let t = std::time::Instant::now();
        for q in vectors.iter().take(2000) {
            let _ = approx.search(q, 3, &position).unwrap();
        }
        println!("2000 queries: {:.2} s", t.elapsed().as_secs_f64());
    }
}
