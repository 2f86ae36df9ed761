//! Agreement between two sets of labels: Cohen's kappa and Krippendorff's alpha (nominal).
//!
//! Written by hand: both are a few lines over a contingency table, and the crates that offer them
//! bring numeric stacks this stage does not need.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// Agreement over the items both sides labelled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    /// Items labelled by both.
    pub items: usize,
    /// Share of items with the same label.
    pub observed: Option<f64>,
    /// Cohen's kappa; `None` when undefined (no items, or chance agreement is 1).
    pub cohen_kappa: Option<f64>,
    /// Krippendorff's alpha, nominal; `None` when undefined.
    pub krippendorff_alpha: Option<f64>,
}

impl Agreement {
    /// Agreement over `(a, b)` label pairs, one per item.
    pub fn of<S: AsRef<str>>(pairs: &[(S, S)]) -> Agreement {
        let items = pairs.len();
        let observed = (items > 0).then(|| {
            pairs
                .iter()
                .filter(|(a, b)| a.as_ref() == b.as_ref())
                .count() as f64
                / items as f64
        });
        let units: Vec<Vec<&str>> = pairs
            .iter()
            .map(|(a, b)| vec![a.as_ref(), b.as_ref()])
            .collect();
        Agreement {
            items,
            observed,
            cohen_kappa: cohen_kappa(pairs),
            krippendorff_alpha: krippendorff_alpha_nominal(&units),
        }
    }
}

/// Cohen's kappa for two raters: (p_o - p_e) / (1 - p_e), p_e from each rater's marginals.
pub fn cohen_kappa<S: AsRef<str>>(pairs: &[(S, S)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let mut a_counts: BTreeMap<&str, f64> = BTreeMap::new();
    let mut b_counts: BTreeMap<&str, f64> = BTreeMap::new();
    let mut same = 0.0;
    for (a, b) in pairs {
        *a_counts.entry(a.as_ref()).or_default() += 1.0;
        *b_counts.entry(b.as_ref()).or_default() += 1.0;
        if a.as_ref() == b.as_ref() {
            same += 1.0;
        }
    }
    let p_o = same / n;
    let p_e: f64 = a_counts
        .iter()
        .map(|(k, ca)| ca * b_counts.get(k).copied().unwrap_or(0.0))
        .sum::<f64>()
        / (n * n);
    if (1.0 - p_e).abs() < 1e-12 {
        return None;
    }
    Some((p_o - p_e) / (1.0 - p_e))
}

/// Krippendorff's alpha with the nominal metric, for any number of coders and missing values:
/// each unit is the list of values it received (units with fewer than two are not pairable).
/// alpha = 1 - D_o / D_e over the coincidence matrix.
pub fn krippendorff_alpha_nominal<S: AsRef<str>>(units: &[Vec<S>]) -> Option<f64> {
    let values: BTreeSet<&str> = units.iter().flatten().map(|v| v.as_ref()).collect();
    let mut o: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    for unit in units.iter().filter(|u| u.len() >= 2) {
        let m = unit.len() as f64;
        for (i, a) in unit.iter().enumerate() {
            for (j, b) in unit.iter().enumerate() {
                if i != j {
                    *o.entry((a.as_ref(), b.as_ref())).or_default() += 1.0 / (m - 1.0);
                }
            }
        }
    }
    let n_c: BTreeMap<&str, f64> = values
        .iter()
        .map(|c| {
            (
                *c,
                o.iter().filter(|((a, _), _)| a == c).map(|(_, v)| v).sum(),
            )
        })
        .collect();
    let n: f64 = n_c.values().sum();
    if n < 2.0 {
        return None;
    }
    let d_o: f64 = o.iter().filter(|((a, b), _)| a != b).map(|(_, v)| v).sum();
    let mut d_e = 0.0;
    for (c, nc) in &n_c {
        for (k, nk) in &n_c {
            if c != k {
                d_e += nc * nk;
            }
        }
    }
    d_e /= n - 1.0;
    if d_e.abs() < 1e-12 {
        return None;
    }
    Some(1.0 - d_o / d_e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) {
        let a = a.expect("defined");
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn hand_computed_two_coders() {
        // A: a a b b a ; B: a b b b a.
        // p_o = 4/5; marginals A (a 3, b 2), B (a 2, b 3); p_e = (3*2 + 2*3)/25 = 12/25;
        // kappa = (0.8 - 0.48) / 0.52 = 8/13.
        // Coincidences: o_aa = 4, o_bb = 4, o_ab = o_ba = 1; n_a = n_b = 5, n = 10;
        // D_o = 2, D_e = (5*5 + 5*5)/9 = 50/9; alpha = 1 - 18/50 = 0.64.
        let pairs = [("a", "a"), ("a", "b"), ("b", "b"), ("b", "b"), ("a", "a")];
        let ag = Agreement::of(&pairs);
        assert_eq!(ag.items, 5);
        close(ag.observed, 0.8);
        close(ag.cohen_kappa, 8.0 / 13.0);
        close(ag.krippendorff_alpha, 0.64);
    }

    #[test]
    fn hand_computed_three_values_and_missing() {
        // Three coders, one missing value; units: [s s s], [s m], [m m i], [i i], [s i m].
        // Pairable values: 3+2+3+2+3 = 13.
        // Coincidences (ordered pairs / (m_u - 1)):
        //   u1: o_ss += 6/2 = 3
        //   u2: o_sm += 1, o_ms += 1
        //   u3: o_mm += 2/2 = 1; o_mi, o_im += 2/2 = 1 each
        //   u4: o_ii += 2
        //   u5: each of o_si, o_is, o_sm, o_ms, o_im, o_mi += 1/2
        // o_ss 3, o_mm 1, o_ii 2; o_sm = o_ms = 1.5; o_mi = o_im = 1.5; o_si = o_is = 0.5.
        // n_s = 3 + 1.5 + 0.5 = 5; n_m = 1 + 1.5 + 1.5 = 4; n_i = 2 + 1.5 + 0.5 = 4; n = 13.
        // D_o = 2*(1.5 + 1.5 + 0.5) = 7; D_e = 2*(5*4 + 5*4 + 4*4)/12 = 112/12.
        // alpha = 1 - 7 * 12 / 112 = 0.25.
        let units = vec![
            vec!["s", "s", "s"],
            vec!["s", "m"],
            vec!["m", "m", "i"],
            vec!["i", "i"],
            vec!["s", "i", "m"],
            vec!["s"],
        ];
        close(krippendorff_alpha_nominal(&units), 0.25);
    }

    #[test]
    fn perfect_and_undefined() {
        let pairs = [("x", "x"), ("y", "y")];
        close(cohen_kappa(&pairs), 1.0);
        close(
            krippendorff_alpha_nominal(&[vec!["x", "x"], vec!["y", "y"]]),
            1.0,
        );
        assert_eq!(cohen_kappa(&[("x", "x")]), None, "chance agreement 1");
        assert_eq!(cohen_kappa::<&str>(&[]), None);
        assert_eq!(krippendorff_alpha_nominal(&[vec!["x", "x"]]), None);
        let empty: [(&str, &str); 0] = [];
        assert_eq!(Agreement::of(&empty).observed, None);
    }
}
