//! The metric functions against values computed by hand (the arithmetic is in the comments),
//! and the seeded bootstrap: stable for a seed, around the point estimate, degenerate on
//! constant values, and picking the documented percentile indices.

use noisebench_eval::metrics::{
    Bootstrap, accuracy, bootstrap_ci, dcg_at_k, macro_f1, mean, mean_ci, ndcg_at_k,
    paired_difference_ci, percentile_interval, precision_at_k, recall_at_k, resamples,
};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {{
        let (a, b): (f64, f64) = ($a, $b);
        assert!(close(a, b), "{} = {a}, expected {b}", stringify!($a));
    }};
}

#[test]
fn accuracy_and_mean() {
    // 3 correct of 4: 3 / 4 = 0.75.
    assert_close!(accuracy(&[true, false, true, true]), 0.75);
    assert_close!(accuracy(&[false, false]), 0.0);
    assert_close!(accuracy(&[]), 0.0);
    // (0.5 + 1 + 0 + 0.25) / 4 = 1.75 / 4 = 0.4375.
    assert_close!(mean(&[0.5, 1.0, 0.0, 0.25]), 0.4375);
    assert_close!(mean(&[]), 0.0);
}

#[test]
fn macro_f1_with_an_out_of_scope_prediction() {
    // item:  0      1      2     3      4
    // gold:  T      T      T     F      F
    // pred:  T      F      none  F      T
    // class T: tp = {0} = 1, fp = {4} = 1, fn = {1, 2} = 2 -> F1 = 2*1 / (2*1 + 1 + 2) = 2/5 = 0.4
    // class F: tp = {3} = 1, fp = {1} = 1, fn = {4} = 1     -> F1 = 2*1 / (2*1 + 1 + 1) = 2/4 = 0.5
    // The out-of-scope item 2 is a miss for T and a prediction of neither class.
    // macro-F1 = (0.4 + 0.5) / 2 = 0.45
    let gold = [true, true, true, false, false];
    let pred = [Some(true), Some(false), None, Some(false), Some(true)];
    assert_close!(macro_f1(&gold, &pred), 0.45);
    // Every prediction out of scope: both classes have tp = 0 -> 0.
    assert_close!(macro_f1(&gold, &[None; 5]), 0.0);
    // Perfect on both classes: (1 + 1) / 2 = 1.
    let perfect: Vec<Option<bool>> = gold.iter().map(|g| Some(*g)).collect();
    assert_close!(macro_f1(&gold, &perfect), 1.0);
}

/// A class absent from both gold and predictions (a one-class group, or a bootstrap resample
/// that drew only one class) is not averaged in, as scikit-learn's `f1_score(average="macro")`
/// does: perfect predictions score 1, not 0.5.
#[test]
fn macro_f1_ignores_a_class_that_is_neither_gold_nor_predicted() {
    // Only class T exists: tp = 2, fp = 0, fn = 0 -> F1(T) = 1; class F has no items at all.
    assert_close!(macro_f1(&[true, true], &[Some(true), Some(true)]), 1.0);
    // Gold all T, one predicted F: F1(T) = 2*1/(2*1+0+1) = 2/3, F1(F) = 0/(0+1+0) = 0 -> 1/3.
    assert_close!(
        macro_f1(&[true, true], &[Some(true), Some(false)]),
        1.0 / 3.0
    );
}

#[test]
fn precision_and_recall_at_k() {
    // Ranks 1..5: relevant, not, relevant, not, relevant; the query has 4 relevant items (one
    // was not retrieved).
    let rel = [true, false, true, false, true];
    let total = 4;
    // k:          1      2      3      4      5
    // hits:       1      1      2      2      3
    // precision:  1/1    1/2    2/3    2/4    3/5
    // recall:     1/4    1/4    2/4    2/4    3/4
    let precision = [1.0, 0.5, 2.0 / 3.0, 0.5, 0.6];
    let recall = [0.25, 0.25, 0.5, 0.5, 0.75];
    for k in 1..=5 {
        assert_close!(precision_at_k(&rel, k), precision[k - 1]);
        assert_close!(recall_at_k(&rel, k, total), recall[k - 1]);
    }
    // A list shorter than k: the missing ranks are misses, 3 / 6 = 0.5; recall stays 3/4.
    assert_close!(precision_at_k(&rel, 6), 0.5);
    assert_close!(recall_at_k(&rel, 6, total), 0.75);
    assert_close!(precision_at_k(&rel, 0), 0.0);
    // No relevant item for the query: recall 0, not NaN.
    assert_close!(recall_at_k(&[false, false], 2, 0), 0.0);
}

#[test]
fn dcg_on_the_textbook_example() {
    // Gains 3, 2, 3, 0, 1, 2 at ranks 1..6:
    // 3/log2(2) + 2/log2(3) + 3/log2(4) + 0/log2(5) + 1/log2(6) + 2/log2(7)
    // = 3 + 1.26186 + 1.5 + 0 + 0.38685 + 0.71241 = 6.86113
    assert_close!(
        dcg_at_k(&[3.0, 2.0, 3.0, 0.0, 1.0, 2.0], 6),
        6.861126688593502
    );
    // k cuts the list: 3 + 1.26186 = 4.26186.
    assert_close!(dcg_at_k(&[3.0, 2.0, 3.0], 2), 3.0 + 2.0 / 3f64.log2());
}

#[test]
fn ndcg_with_binary_relevance() {
    // Retrieved gains 1, 0, 1, 0, 1; the query has 4 relevant items (gains 1, 1, 1, 1).
    let gains = [1.0, 0.0, 1.0, 0.0, 1.0];
    let all = [1.0, 1.0, 1.0, 1.0];
    // DCG@5  = 1/log2(2) + 1/log2(4) + 1/log2(6) = 1 + 0.5 + 0.386853 = 1.886853
    // IDCG@5 = 1/log2(2) + 1/log2(3) + 1/log2(4) + 1/log2(5)   (only 4 relevant items)
    //        = 1 + 0.630930 + 0.5 + 0.430677 = 2.561606
    // NDCG@5 = 1.886853 / 2.561606 = 0.736590
    assert_close!(ndcg_at_k(&gains, &all, 5), 0.7365896932159578);
    // NDCG@3 = (1 + 0.5) / (1 + 0.630930 + 0.5) = 1.5 / 2.130930 = 0.703918
    assert_close!(ndcg_at_k(&gains, &all, 3), 0.7039180890341347);
    // NDCG@1 = 1 / 1.
    assert_close!(ndcg_at_k(&gains, &all, 1), 1.0);
    // Nothing relevant for the query: 0.
    assert_close!(ndcg_at_k(&[0.0, 0.0], &[], 2), 0.0);
}

#[test]
fn ndcg_with_an_ideal_set_bigger_than_the_retrieved_list() {
    // Two retrieved, both relevant; five relevant items in all. The ideal ranking has five
    // relevant items, so retrieving two perfectly is not a perfect score.
    // DCG@5  = 1 + 1/log2(3) = 1.630930
    // IDCG@5 = 1 + 1/log2(3) + 1/log2(4) + 1/log2(5) + 1/log2(6)
    //        = 1 + 0.630930 + 0.5 + 0.430677 + 0.386853 = 2.948459
    // NDCG@5 = 1.630930 / 2.948459 = 0.553146
    assert_close!(ndcg_at_k(&[1.0, 1.0], &[1.0; 5], 5), 0.5531464700081437);
    // At k = 2 the ideal is cut to two items too: 1.
    assert_close!(ndcg_at_k(&[1.0, 1.0], &[1.0; 5], 2), 1.0);
}

#[test]
fn ndcg_with_graded_relevance() {
    // Gains: supporting 2, misleading 1, irrelevant 0 (RAGuard's graded variant).
    // Retrieved: misleading, supporting, irrelevant -> gains 1, 2, 0.
    // The query's items: one supporting, two misleading, one irrelevant -> 2, 1, 1, 0
    // (the 0 is not relevant; the ideal ranking is 2, 1, 1).
    // DCG@3  = 1/log2(2) + 2/log2(3) + 0 = 1 + 1.261860 = 2.261860
    // IDCG@3 = 2/log2(2) + 1/log2(3) + 1/log2(4) = 2 + 0.630930 + 0.5 = 3.130930
    // NDCG@3 = 2.261860 / 3.130930 = 0.722424
    assert_close!(
        ndcg_at_k(&[1.0, 2.0, 0.0], &[2.0, 1.0, 1.0, 0.0], 3),
        0.7224242270408039
    );
    // NDCG@2 = (1 + 1.261860) / (2 + 0.630930) = 2.261860 / 2.630930 = 0.859719
    assert_close!(
        ndcg_at_k(&[1.0, 2.0, 0.0], &[2.0, 1.0, 1.0, 0.0], 2),
        0.8597186998521972
    );
    // The ideal order is taken whatever order `all_gains` comes in.
    assert_close!(
        ndcg_at_k(&[1.0, 2.0, 0.0], &[0.0, 1.0, 2.0, 1.0], 3),
        0.7224242270408039
    );
}

/// 10 items, 6 correct: the point estimate is 0.6.
const TEN: [f64; 10] = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0];

#[test]
fn the_bootstrap_is_stable_for_a_seed() {
    let b = Bootstrap {
        samples: 1000,
        seed: 7,
    };
    // The resample indices are a pure function of (n, samples, seed).
    assert_eq!(resamples(10, b), resamples(10, b));
    assert_ne!(resamples(10, b), resamples(10, Bootstrap { seed: 8, ..b }));
    let r = resamples(10, b);
    assert_eq!(r.len(), 1000);
    // The first two draws of ChaCha8 seeded with 7, obtained once.
    assert_eq!(r[0], [1, 1, 1, 1, 2, 7, 0, 7, 0, 6]);
    assert_eq!(r[1], [8, 3, 2, 0, 2, 8, 3, 3, 4, 9]);
    assert!(
        r.iter()
            .all(|idx| idx.len() == 10 && idx.iter().all(|&i| i < 10))
    );

    // Obtained once from this seed and pinned: a change of generator, of the order of draws
    // or of the percentile rule moves them. Each resampled mean is k/10 for k correct of 10
    // draws (k ~ Binomial(10, 0.6), sd 0.155), so the interval is two multiples of 0.1 about
    // two standard deviations either side of 0.6.
    let ci = mean_ci(&TEN, b).unwrap();
    assert_eq!(ci, PINNED_TEN_SEED_7);
    assert_eq!(mean_ci(&TEN, b), Some(ci));
    for v in [ci.0, ci.1] {
        assert!(
            close((v * 10.0).round() / 10.0, v),
            "{v} is a multiple of 0.1"
        );
    }
}

/// `mean_ci(&TEN, Bootstrap { samples: 1000, seed: 7 })`, obtained once.
const PINNED_TEN_SEED_7: (f64, f64) = (0.3, 0.9);

#[test]
fn the_bootstrap_interval_contains_the_point_estimate() {
    // 50 items, 35 correct: 0.7; the interval is about 0.7 +- 2 * sqrt(0.7 * 0.3 / 50) = 0.7 +- 0.13.
    let values: Vec<f64> = (0..50)
        .map(|i| if i % 10 < 7 { 1.0 } else { 0.0 })
        .collect();
    assert_close!(mean(&values), 0.7);
    // Seed 0, obtained once: 28/50 and 41/50, about 0.7 - 0.14 and 0.7 + 0.12.
    assert_eq!(
        mean_ci(
            &values,
            Bootstrap {
                samples: 1000,
                seed: 0
            }
        ),
        Some((0.56, 0.82))
    );
    for seed in 0..5 {
        let (lo, hi) = mean_ci(
            &values,
            Bootstrap {
                samples: 1000,
                seed,
            },
        )
        .unwrap();
        assert!(lo < 0.7 && 0.7 < hi, "seed {seed}: ({lo}, {hi})");
        assert!(
            lo > 0.5 && hi < 0.9,
            "seed {seed}: ({lo}, {hi}) is too wide"
        );
    }
}

#[test]
fn the_bootstrap_is_degenerate_on_constant_values() {
    let b = Bootstrap::default();
    // Every resample of equal values has the same mean.
    assert_eq!(mean_ci(&[1.0; 20], b), Some((1.0, 1.0)));
    assert_eq!(mean_ci(&[0.25; 7], b), Some((0.25, 0.25)));
    assert_eq!(mean_ci(&[0.0], b), Some((0.0, 0.0)));
    // The same for a paired difference of identical runs: b - a = 0 everywhere.
    assert_eq!(paired_difference_ci(&TEN, &TEN, b), Some((0.0, 0.0)));
    // No items, no samples, mismatched pairs: no interval.
    assert_eq!(mean_ci(&[], b), None);
    assert_eq!(
        mean_ci(
            &TEN,
            Bootstrap {
                samples: 0,
                seed: 0
            }
        ),
        None
    );
    assert_eq!(paired_difference_ci(&TEN, &TEN[..9], b), None);
    assert_eq!(bootstrap_ci(0, b, |_| 1.0), None);
}

#[test]
fn a_paired_difference_is_shifted_by_a_constant_gain() {
    // b = a + 0.5 on every item: every resampled mean difference is exactly 0.5.
    let a = TEN;
    let b_values: Vec<f64> = a.iter().map(|v| v + 0.5).collect();
    assert_eq!(
        paired_difference_ci(&a, &b_values, Bootstrap::default()),
        Some((0.5, 0.5))
    );
}

#[test]
fn percentile_interval_picks_the_documented_indices() {
    // 40 values 1..=40, given in reverse so the function must sort them.
    // lo index = floor(0.025 * 40) = floor(1.0) = 1       -> sorted[1]  = 2
    // hi index = ceil(0.975 * 40) - 1 = ceil(39.0) - 1 = 38 -> sorted[38] = 39
    let mut values: Vec<f64> = (1..=40).rev().map(f64::from).collect();
    assert_eq!(percentile_interval(&mut values), Some((2.0, 39.0)));
    assert_eq!(values[0], 1.0, "sorted in place");
    // 1000 values 0..999: floor(25) = 25 and ceil(975) - 1 = 974.
    let mut values: Vec<f64> = (0..1000).map(f64::from).collect();
    assert_eq!(percentile_interval(&mut values), Some((25.0, 974.0)));
    // 10 values: floor(0.25) = 0 and ceil(9.75) - 1 = 9: the extremes.
    let mut values: Vec<f64> = (0..10).map(f64::from).collect();
    assert_eq!(percentile_interval(&mut values), Some((0.0, 9.0)));
    // One value: both ends are it.
    assert_eq!(percentile_interval(&mut [4.5]), Some((4.5, 4.5)));
    assert_eq!(percentile_interval(&mut []), None);
}

#[test]
fn bootstrap_ci_uses_the_indices_resamples_lists() {
    // The interval from `bootstrap_ci` is the percentile interval of the statistic over
    // exactly the resamples `resamples` returns for the same settings.
    let b = Bootstrap {
        samples: 200,
        seed: 3,
    };
    let stat = |idx: &[usize]| idx.iter().map(|&i| TEN[i] * i as f64).sum::<f64>();
    let mut by_hand: Vec<f64> = resamples(10, b).iter().map(|idx| stat(idx)).collect();
    assert_eq!(bootstrap_ci(10, b, stat), percentile_interval(&mut by_hand));
}

#[test]
fn the_large_sample_bootstrap_of_a_share() {
    // Above BINOMIAL_FROM items of 0/1, resampled counts come from Binomial(n, p).
    let n = noisebench_eval::metrics::BINOMIAL_FROM + 1000;
    assert_eq!(
        mean_ci(&vec![1.0; n], Bootstrap::default()),
        Some((1.0, 1.0))
    );
    // 30% correct of 6,000: sd = sqrt(0.3 * 0.7 / 6000) = 0.0059, so about 0.3 +- 0.012.
    let values: Vec<f64> = (0..n).map(|i| if i % 10 < 3 { 1.0 } else { 0.0 }).collect();
    let b = Bootstrap::default();
    let (lo, hi) = mean_ci(&values, b).unwrap();
    assert!(lo < 0.3 && 0.3 < hi, "({lo}, {hi})");
    assert!(hi - lo > 0.015 && hi - lo < 0.035, "({lo}, {hi})");
    assert_eq!(mean_ci(&values, b), Some((lo, hi)), "stable for a seed");
}
