//! The mix of a version against the maintainer's target: per dimension (question kinds,
//! domains, verdicts, source types, perturbation kinds) the actual shares, the target shares
//! (normalised to sum to 1) and the gaps, the largest named first.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::MixTarget;

/// One dimension's actual counts and shares, and its target when one is declared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixDimension {
    pub total: usize,
    pub counts: BTreeMap<String, usize>,
    pub actual: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub target: BTreeMap<String, f64>,
}

/// A value whose actual share differs from its target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixGap {
    pub dimension: String,
    pub value: String,
    pub target: f64,
    pub actual: f64,
    /// `actual - target`: negative when the version has too few.
    pub gap: f64,
}

/// The version's mix and its gaps to the target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mix {
    pub dimensions: BTreeMap<String, MixDimension>,
    /// Gaps of at least 0.05, largest first.
    pub gaps: Vec<MixGap>,
}

/// Gaps smaller than this are not named.
pub const NAMED_GAP: f64 = 0.05;

/// The mix of `counts` (dimension -> value -> count) against `target`.
pub fn mix(counts: BTreeMap<String, BTreeMap<String, usize>>, target: &MixTarget) -> Mix {
    let targets: BTreeMap<&str, &BTreeMap<String, f64>> = target.dimensions().into_iter().collect();
    let mut out = Mix::default();
    let mut names: Vec<String> = counts.keys().cloned().collect();
    names.extend(
        targets
            .iter()
            .filter(|(_, t)| !t.is_empty())
            .map(|(n, _)| n.to_string()),
    );
    names.sort();
    names.dedup();
    for name in names {
        let counts = counts.get(&name).cloned().unwrap_or_default();
        let total: usize = counts.values().sum();
        let actual: BTreeMap<String, f64> = counts
            .iter()
            .map(|(v, n)| (v.clone(), *n as f64 / total.max(1) as f64))
            .collect();
        let declared = targets
            .get(name.as_str())
            .copied()
            .cloned()
            .unwrap_or_default();
        let sum: f64 = declared.values().sum();
        let target: BTreeMap<String, f64> = if sum > 0.0 {
            declared.iter().map(|(v, s)| (v.clone(), s / sum)).collect()
        } else {
            BTreeMap::new()
        };
        if !target.is_empty() {
            let mut values: Vec<&String> = target.keys().chain(actual.keys()).collect();
            values.sort();
            values.dedup();
            for value in values {
                let t = target.get(value).copied().unwrap_or(0.0);
                let a = actual.get(value).copied().unwrap_or(0.0);
                if (a - t).abs() >= NAMED_GAP {
                    out.gaps.push(MixGap {
                        dimension: name.clone(),
                        value: value.clone(),
                        target: t,
                        actual: a,
                        gap: a - t,
                    });
                }
            }
        }
        out.dimensions.insert(
            name,
            MixDimension {
                total,
                counts,
                actual,
                target,
            },
        );
    }
    out.gaps.sort_by(|x, y| {
        y.gap
            .abs()
            .total_cmp(&x.gap.abs())
            .then_with(|| x.dimension.cmp(&y.dimension))
            .then_with(|| x.value.cmp(&y.value))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missed_target_is_named_with_its_gap() {
        let counts = BTreeMap::from([(
            "kinds".to_string(),
            BTreeMap::from([
                ("single_hop".to_string(), 9),
                ("star_shaped".to_string(), 1),
            ]),
        )]);
        let target = MixTarget {
            kinds: BTreeMap::from([("single_hop".into(), 1.0), ("star_shaped".into(), 1.0)]),
            ..MixTarget::default()
        };
        let m = mix(counts, &target);
        assert_eq!(m.gaps.len(), 2);
        assert_eq!(m.gaps[0].value, "single_hop");
        assert!((m.gaps[0].gap - 0.4).abs() < 1e-12);
        assert!((m.gaps[1].gap + 0.4).abs() < 1e-12);
        assert_eq!(m.dimensions["kinds"].target["star_shaped"], 0.5);
    }

    #[test]
    fn a_met_target_or_none_names_no_gap() {
        let counts = BTreeMap::from([(
            "verdicts".to_string(),
            BTreeMap::from([("true".to_string(), 5), ("false".to_string(), 5)]),
        )]);
        let target = MixTarget {
            verdicts: BTreeMap::from([("true".into(), 0.5), ("false".into(), 0.5)]),
            ..MixTarget::default()
        };
        assert!(mix(counts.clone(), &target).gaps.is_empty());
        let m = mix(counts, &MixTarget::default());
        assert!(m.gaps.is_empty());
        assert_eq!(m.dimensions["verdicts"].actual["true"], 0.5);
    }
}
