//! Retrieval metrics over binary relevance, pure: Recall@k, reciprocal rank (MRR@k when
//! averaged) and NDCG@k for one ranked list, and their means per group.
//!
//! A query's relevant set is its question's answer chunks. Recall@k is the share of them in the
//! top k; the reciprocal rank is 1 / the rank of the first one in the top k (0 if none); NDCG@k
//! is DCG (sum of 1 / log2(rank + 1) over relevant ranks) over the DCG of a perfect ranking of
//! min(|relevant|, k) relevant chunks.

use std::collections::{BTreeMap, BTreeSet};

use noisebench_index::ranking;

/// The metrics of one ranked list.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueryScores {
    pub recall: f64,
    pub rr: f64,
    pub ndcg: f64,
}

/// Scores of `ranked` (best first; only the first `k` count) against `relevant`, by the
/// definitions of [`noisebench_index::ranking`]. An empty relevant set scores 0 everywhere (the
/// stage drops such questions before asking).
pub fn score(ranked: &[&str], relevant: &BTreeSet<&str>, k: usize) -> QueryScores {
    let flags: Vec<bool> = ranked
        .iter()
        .take(k)
        .map(|id| relevant.contains(id))
        .collect();
    QueryScores {
        recall: ranking::recall_at_k(&flags, k, relevant.len()),
        rr: ranking::reciprocal_rank_at_k(&flags, k),
        ndcg: ranking::binary_ndcg_at_k(&flags, k, relevant.len()),
    }
}

/// Running sums of [`QueryScores`] per group.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Means {
    sums: BTreeMap<String, (QueryScores, usize)>,
}

impl Means {
    pub fn add(&mut self, group: &str, s: QueryScores) {
        let e = self.sums.entry(group.to_string()).or_default();
        e.0.recall += s.recall;
        e.0.rr += s.rr;
        e.0.ndcg += s.ndcg;
        e.1 += 1;
    }

    /// Each group's mean scores and query count, by group name.
    pub fn means(&self) -> BTreeMap<&str, (QueryScores, usize)> {
        self.sums
            .iter()
            .map(|(g, (s, n))| {
                let d = (*n).max(1) as f64;
                let mean = QueryScores {
                    recall: s.recall / d,
                    rr: s.rr / d,
                    ndcg: s.ndcg / d,
                };
                (g.as_str(), (mean, *n))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set<'a>(ids: &[&'a str]) -> BTreeSet<&'a str> {
        ids.iter().copied().collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn hand_computed_values() {
        // One relevant chunk at rank 2 of 3.
        let s = score(&["c9", "c1", "c7"], &set(&["c1"]), 3);
        assert!(close(s.recall, 1.0));
        assert!(close(s.rr, 0.5));
        assert!(close(s.ndcg, 1.0 / 3f64.log2())); // 0.6309...
        // Two relevant, ranks 1 and 3: DCG = 1 + 1/2, IDCG = 1 + 1/log2(3).
        let s = score(&["c1", "c9", "c2"], &set(&["c1", "c2"]), 3);
        assert!(close(s.recall, 1.0));
        assert!(close(s.rr, 1.0));
        assert!(close(s.ndcg, 1.5 / (1.0 + 1.0 / 3f64.log2())));
        // Three relevant, k = 2, one found at rank 2.
        let s = score(&["c9", "c3", "c1"], &set(&["c1", "c2", "c3"]), 2);
        assert!(close(s.recall, 1.0 / 3.0));
        assert!(close(s.rr, 0.5));
        assert!(close(
            s.ndcg,
            (1.0 / 3f64.log2()) / (1.0 + 1.0 / 3f64.log2())
        ));
        // Nothing relevant retrieved, or nothing to find.
        assert_eq!(score(&["c9"], &set(&["c1"]), 3), QueryScores::default());
        assert_eq!(score(&["c1"], &set(&[]), 3), QueryScores::default());
        // A short list scores like a padded one.
        assert_eq!(
            score(&["c1"], &set(&["c1"]), 3),
            QueryScores {
                recall: 1.0,
                rr: 1.0,
                ndcg: 1.0
            }
        );
    }

    #[test]
    fn means_per_group() {
        let mut m = Means::default();
        m.add(
            "all",
            QueryScores {
                recall: 1.0,
                rr: 1.0,
                ndcg: 1.0,
            },
        );
        m.add("all", QueryScores::default());
        let means = m.means();
        let (s, n) = means["all"];
        assert_eq!(n, 2);
        assert!(close(s.recall, 0.5) && close(s.rr, 0.5) && close(s.ndcg, 0.5));
    }
}
