//! Ranking metrics over one ranked list, pure: precision, recall, reciprocal rank, DCG and NDCG
//! at k. The one implementation the `retrieval` stage (Recall@k, MRR@k, NDCG@k of its
//! retrievers, binary relevance) and the evaluation (RAGuard's precision, recall and NDCG at k,
//! binary or graded) both use.
//!
//! A ranking is given as one flag or gain per rank, best first (`relevant[i]`: whether rank
//! `i + 1` is relevant); only the first `k` count, and a list shorter than `k` counts the missing
//! ranks as misses.
//!
//! - precision@k: relevant items among the first `k`, divided by `k`;
//! - recall@k: relevant items among the first `k`, divided by all relevant items of the query
//!   (retrieved or not); 0 when the query has none;
//! - reciprocal rank@k: 1 / the rank of the first relevant item among the first `k`, 0 if none
//!   (MRR@k is its mean over queries);
//! - DCG@k: `sum gain_i / log2(i + 1)` over ranks `i` from 1 to `k`;
//! - NDCG@k: DCG@k over the DCG@k of the ideal ranking of every relevant item of the query
//!   (their gains sorted high to low); 0 when nothing is relevant.

/// Relevant items among the first `k`, divided by `k`; 0 when `k` is 0.
pub fn precision_at_k(relevant: &[bool], k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    hits_at_k(relevant, k) as f64 / k as f64
}

/// Relevant items among the first `k`, divided by all `total_relevant` items of the query; 0
/// when the query has none.
pub fn recall_at_k(relevant: &[bool], k: usize, total_relevant: usize) -> f64 {
    if total_relevant == 0 {
        return 0.0;
    }
    hits_at_k(relevant, k) as f64 / total_relevant as f64
}

/// 1 / the rank of the first relevant item among the first `k`; 0 if there is none.
pub fn reciprocal_rank_at_k(relevant: &[bool], k: usize) -> f64 {
    relevant
        .iter()
        .take(k)
        .position(|r| *r)
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// Discounted cumulative gain of the first `k` gains: `sum gain_i / log2(i + 1)`, i from 1.
pub fn dcg_at_k(gains: &[f64], k: usize) -> f64 {
    gains
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| g / ((i + 2) as f64).log2())
        .sum()
}

/// NDCG@k: the ranking's DCG over the DCG of the ideal ranking of `all_gains` (the gains of
/// every relevant item of the query, in any order); 0 when nothing is relevant.
pub fn ndcg_at_k(gains: &[f64], all_gains: &[f64], k: usize) -> f64 {
    let mut ideal: Vec<f64> = all_gains.iter().copied().filter(|g| *g > 0.0).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg = dcg_at_k(&ideal, k);
    if idcg == 0.0 {
        0.0
    } else {
        dcg_at_k(gains, k) / idcg
    }
}

/// Binary NDCG@k: each relevant rank gains 1, and the query has `total_relevant` relevant items.
pub fn binary_ndcg_at_k(relevant: &[bool], k: usize, total_relevant: usize) -> f64 {
    let gains: Vec<f64> = relevant
        .iter()
        .take(k)
        .map(|r| if *r { 1.0 } else { 0.0 })
        .collect();
    ndcg_at_k(&gains, &vec![1.0; total_relevant], k)
}

fn hits_at_k(relevant: &[bool], k: usize) -> usize {
    relevant.iter().take(k).filter(|r| **r).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn hand_computed_values() {
        // Relevant at ranks 1 and 3 of 4; the query has 3 relevant items.
        let rel = [true, false, true, false];
        assert!(close(precision_at_k(&rel, 2), 0.5));
        assert!(close(precision_at_k(&rel, 4), 0.5));
        assert!(close(recall_at_k(&rel, 3, 3), 2.0 / 3.0));
        assert!(close(reciprocal_rank_at_k(&[false, true], 2), 0.5));
        assert!(close(reciprocal_rank_at_k(&[false, true], 1), 0.0));
        // DCG = 1 + 1/2, IDCG over 3 relevant at k = 3 = 1 + 1/log2(3) + 1/2.
        let idcg = 1.0 + 1.0 / 3f64.log2() + 0.5;
        assert!(close(binary_ndcg_at_k(&rel, 3, 3), 1.5 / idcg));
        // Nothing to find, or k = 0.
        assert_eq!(recall_at_k(&rel, 3, 0), 0.0);
        assert_eq!(precision_at_k(&rel, 0), 0.0);
        assert_eq!(binary_ndcg_at_k(&rel, 3, 0), 0.0);
        assert_eq!(binary_ndcg_at_k(&rel, 0, 3), 0.0);
    }

    /// A ranking of up to 12 ranks, each relevant or not, the query's relevant items (at least
    /// those retrieved), and k.
    fn ranking() -> impl Strategy<Value = (Vec<bool>, usize, usize)> {
        (
            prop::collection::vec(any::<bool>(), 0..12),
            0usize..6,
            0usize..15,
        )
            .prop_map(|(rel, unretrieved, k)| {
                let total = rel.iter().filter(|r| **r).count() + unretrieved;
                (rel, total, k)
            })
    }

    proptest! {
        /// Each metric against its definition, computed the long way: the ranks are numbered
        /// from 1, the ideal ranking puts every relevant item first.
        #[test]
        fn metrics_match_their_definitions((rel, total, k) in ranking()) {
            let top: Vec<(usize, bool)> = (1..).zip(rel.iter().copied()).take(k).collect();
            let hits = top.iter().filter(|(_, r)| *r).count() as f64;
            let precision = if k == 0 { 0.0 } else { hits / k as f64 };
            let recall = if total == 0 { 0.0 } else { hits / total as f64 };
            let rr = top.iter().find(|(_, r)| *r).map_or(0.0, |(rank, _)| 1.0 / *rank as f64);
            let discount = |rank: usize| 1.0 / ((rank + 1) as f64).log2();
            let dcg: f64 = top.iter().filter(|(_, r)| *r).map(|(rank, _)| discount(*rank)).sum();
            let idcg: f64 = (1..=total.min(k)).map(discount).sum();
            let ndcg = if idcg == 0.0 { 0.0 } else { dcg / idcg };
            prop_assert!(close(precision_at_k(&rel, k), precision));
            prop_assert!(close(recall_at_k(&rel, k, total), recall));
            prop_assert!(close(reciprocal_rank_at_k(&rel, k), rr));
            prop_assert!(close(binary_ndcg_at_k(&rel, k, total), ndcg));
            let gains: Vec<f64> = rel.iter().map(|r| f64::from(u8::from(*r))).collect();
            prop_assert!(close(ndcg_at_k(&gains, &vec![1.0; total], k), ndcg));
            prop_assert!((0.0..=1.0).contains(&ndcg) && (0.0..=1.0).contains(&recall));
        }

        /// Graded NDCG: the ideal ranking is the gains sorted high to low, so the ranking that
        /// is that order scores 1, and any ranking at most 1.
        #[test]
        fn graded_ndcg_is_one_for_the_ideal_order(
            mut gains in prop::collection::vec(0u8..4, 1..10),
            k in 1usize..12,
        ) {
            let all: Vec<f64> = gains.iter().map(|g| f64::from(*g)).collect();
            let ndcg = ndcg_at_k(&all, &all, k);
            prop_assert!(ndcg <= 1.0 + 1e-12);
            gains.sort_by(|a, b| b.cmp(a));
            let ideal: Vec<f64> = gains.iter().map(|g| f64::from(*g)).collect();
            let expected = if ideal.iter().take(k).all(|g| *g == 0.0) { 0.0 } else { 1.0 };
            prop_assert!(close(ndcg_at_k(&ideal, &all, k), expected));
        }
    }
}
