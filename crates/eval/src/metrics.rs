//! The metrics of the seed papers, as plain functions over per-item values, and seeded bootstrap
//! intervals over any of them.
//!
//! - accuracy (RAGuard 4.1, CONF-FACT 4.1, RARE's robustness scores are accuracies of the judge
//!   `f`): the share of items scored correct; an unscored or out-of-scope item is wrong;
//! - macro-F1 over the verdicts present in the sample (CONF-FACT 4.1, as scikit-learn averages):
//!   an out-of-scope prediction is a miss for its gold class and a prediction of neither class;
//! - precision, recall and NDCG at k (RAGuard 5, Figure 6), with binary or graded relevance; NDCG's
//!   ideal ranking is every relevant item of the query, retrieved or not (defined once, in
//!   `noisebench_index::ranking`, which the `retrieval` stage scores with too);
//! - the percentile bootstrap: `samples` resamples of the items with replacement, drawn with a
//!   ChaCha8 generator from `seed`; the interval is the resampled statistic's 2.5th and 97.5th
//!   percentiles (`sorted[floor(0.025 B)]`, `sorted[ceil(0.975 B) - 1]`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Share of `true` among `correct`; 0 for no items.
pub fn accuracy(correct: &[bool]) -> f64 {
    if correct.is_empty() {
        return 0.0;
    }
    correct.iter().filter(|c| **c).count() as f64 / correct.len() as f64
}

/// Mean of `values`; 0 for none.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// F1 of one class: `2 tp / (2 tp + fp + fn)`, 0 when the class is neither predicted nor gold.
fn class_f1(gold: &[bool], pred: &[Option<bool>], class: bool) -> f64 {
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    for (g, p) in gold.iter().zip(pred) {
        match (*g == class, *p == Some(class)) {
            (true, true) => tp += 1,
            (false, true) => fp += 1,
            (true, false) => fn_ += 1,
            (false, false) => {}
        }
    }
    let denom = 2 * tp + fp + fn_;
    if denom == 0 {
        0.0
    } else {
        2.0 * tp as f64 / denom as f64
    }
}

/// Macro-F1 over the classes `true` and `false` that occur among the gold answers or the
/// predictions (as scikit-learn averages: a class neither gold nor predicted is not a class of
/// the sample, so a perfect one-class sample scores 1); `None` predictions (out of scope) belong
/// to neither class. 0 for no items.
pub fn macro_f1(gold: &[bool], pred: &[Option<bool>]) -> f64 {
    let present: Vec<bool> = [true, false]
        .into_iter()
        .filter(|c| gold.contains(c) || pred.contains(&Some(*c)))
        .collect();
    if present.is_empty() {
        return 0.0;
    }
    present
        .iter()
        .map(|c| class_f1(gold, pred, *c))
        .sum::<f64>()
        / present.len() as f64
}

// Precision, recall and NDCG at k: the one implementation, shared with the `retrieval` stage.
pub use noisebench_index::ranking::{dcg_at_k, ndcg_at_k, precision_at_k, recall_at_k};

/// Bootstrap settings: resamples and the seed of their generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bootstrap {
    pub samples: usize,
    pub seed: u64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            samples: 1000,
            seed: 0,
        }
    }
}

/// The resample indices: `samples` vectors of `n` indices drawn uniformly with replacement.
pub fn resamples(n: usize, b: Bootstrap) -> Vec<Vec<usize>> {
    let mut rng = ChaCha8Rng::seed_from_u64(b.seed);
    (0..b.samples)
        .map(|_| (0..n).map(|_| rng.random_range(0..n.max(1))).collect())
        .collect()
}

/// The 2.5th and 97.5th percentiles of `values` (sorted in place).
pub fn percentile_interval(values: &mut [f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    let lo = ((0.025 * n as f64).floor() as usize).min(n - 1);
    let hi = ((0.975 * n as f64).ceil() as usize).clamp(1, n) - 1;
    Some((values[lo], values[hi]))
}

/// A 95% percentile-bootstrap interval of `stat` over `n` items: `stat` gets the indices of one
/// resample (the same indices, in the same order, as [`resamples`] lists; drawn one resample at
/// a time, so memory does not grow with `samples`). `None` for no items or no samples.
pub fn bootstrap_ci(n: usize, b: Bootstrap, stat: impl Fn(&[usize]) -> f64) -> Option<(f64, f64)> {
    if n == 0 || b.samples == 0 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(b.seed);
    let mut idx = vec![0usize; n];
    let mut values = Vec::with_capacity(b.samples);
    for _ in 0..b.samples {
        for i in idx.iter_mut() {
            *i = rng.random_range(0..n);
        }
        values.push(stat(&idx));
    }
    percentile_interval(&mut values)
}

/// Above this many items, the bootstrap of a mean of 0/1 values draws each resample's count of
/// ones from Binomial(n, share of ones), which is that count's exact distribution, in O(1)
/// instead of O(n): RARE-Met's 180,000 cells times 1,000 resamples per group would otherwise
/// take minutes.
pub const BINOMIAL_FROM: usize = 5000;

/// [`bootstrap_ci`] of the mean of per-item values (accuracy when they are 0/1).
pub fn mean_ci(values: &[f64], b: Bootstrap) -> Option<(f64, f64)> {
    let n = values.len();
    if n > BINOMIAL_FROM && b.samples > 0 && values.iter().all(|v| *v == 0.0 || *v == 1.0) {
        let ones = values.iter().filter(|v| **v == 1.0).count();
        let p = ones as f64 / n as f64;
        let binomial = rand_distr::Binomial::new(n as u64, p).ok()?;
        let mut rng = ChaCha8Rng::seed_from_u64(b.seed);
        let mut draws: Vec<f64> = (0..b.samples)
            .map(|_| rand_distr::Distribution::sample(&binomial, &mut rng) as f64 / n as f64)
            .collect();
        return percentile_interval(&mut draws);
    }
    bootstrap_ci(n, b, |idx| {
        idx.iter().map(|&i| values[i]).sum::<f64>() / idx.len() as f64
    })
}

/// A paired interval of the difference of means `b - a` over the same items (for
/// `eval --compare`): one resample of item indices is applied to both.
pub fn paired_difference_ci(a: &[f64], b_values: &[f64], b: Bootstrap) -> Option<(f64, f64)> {
    if a.len() != b_values.len() {
        return None;
    }
    bootstrap_ci(a.len(), b, |idx| {
        idx.iter().map(|&i| b_values[i] - a[i]).sum::<f64>() / idx.len() as f64
    })
}
