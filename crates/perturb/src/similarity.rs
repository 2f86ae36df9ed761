//! Choosing among candidates by embedding similarity (RARE C.1: the first candidate passing the
//! threshold, otherwise the most similar), and how similarities are recorded and summarised.

use serde::Serialize;

/// The index of the kept candidate: the first whose similarity is at least `min`, else the most
/// similar (the first of equals). `similarities` must not be empty.
pub(crate) fn select_candidate(similarities: &[f32], min: f64) -> usize {
    if let Some(i) = similarities.iter().position(|&s| f64::from(s) >= min) {
        return i;
    }
    let mut best = 0;
    for (i, &s) in similarities.iter().enumerate() {
        if s > similarities[best] {
            best = i;
        }
    }
    best
}

/// A similarity as recorded: six decimals, so a table does not carry float noise.
pub(crate) fn round_similarity(s: f32) -> f64 {
    (f64::from(s) * 1e6).round() / 1e6
}

/// Minimum, median, mean and maximum of some similarities (all 0 when there are none).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Distribution {
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
}

impl Distribution {
    pub fn of(values: &[f64]) -> Distribution {
        if values.is_empty() {
            return Distribution::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Distribution {
            min: v[0],
            median: round(median),
            mean: round(v.iter().sum::<f64>() / n as f64),
            max: v[n - 1],
        }
    }
}

fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_passing_else_most_similar() {
        assert_eq!(select_candidate(&[0.5, 0.9, 0.95], 0.85), 1);
        assert_eq!(select_candidate(&[0.5, 0.8, 0.8, 0.7], 0.85), 1);
        assert_eq!(select_candidate(&[0.2], 0.85), 0);
        let d = Distribution::of(&[0.9, 0.5, 0.7, 1.0]);
        assert_eq!((d.min, d.median, d.max), (0.5, 0.8, 1.0));
        assert_eq!(Distribution::of(&[]), Distribution::default());
    }
}
