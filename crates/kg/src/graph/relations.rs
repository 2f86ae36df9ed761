//! Relation normalisation: relations whose embeddings are close merge into one canonical relation.
//!
//! Relations are first reduced to a key (case, punctuation and spacing removed), then visited in a
//! fixed order (most frequent first, ties by key): each one joins the most similar canonical
//! relation chosen before it when their cosine similarity reaches the threshold (RARE: 0.9), and
//! otherwise becomes a canonical relation itself. The order makes the result independent of the
//! input's order, and frequent phrasings the ones others merge into.

use std::collections::BTreeMap;

use crate::graph::entities::basic_key;

/// A relation's key: lowercase words joined by single spaces.
pub(crate) fn relation_key(surface: &str) -> String {
    basic_key(surface)
}

/// Where one relation key went.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RelationTarget {
    /// The canonical relation's key (the key itself when it is canonical).
    pub canonical: String,
    /// The cosine similarity that merged it; `None` for a canonical relation.
    pub score: Option<f64>,
}

/// The result of [`merge_relations`]: every key's target, and the canonical keys in the order
/// they were chosen.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RelationMerge {
    pub targets: BTreeMap<String, RelationTarget>,
    pub canonical: Vec<String>,
}

/// Merge relation keys (with their triplet counts) by embedding similarity. `embed` gets the keys
/// in visiting order and returns one vector per key (any norm); its error is passed through.
pub(crate) fn merge_relations<E>(
    counts: &BTreeMap<String, usize>,
    threshold: f64,
    embed: impl FnOnce(&[String]) -> Result<Vec<Vec<f32>>, E>,
) -> Result<RelationMerge, E> {
    let mut order: Vec<(&String, usize)> = counts.iter().map(|(k, n)| (k, *n)).collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let keys: Vec<String> = order.iter().map(|(k, _)| (*k).clone()).collect();
    if keys.is_empty() {
        return Ok(RelationMerge::default());
    }
    let vectors: Vec<Vec<f32>> = embed(&keys)?.into_iter().map(unit).collect();
    let mut merge = RelationMerge::default();
    let mut canonical_vectors: Vec<usize> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let mut best: Option<(usize, f32)> = None;
        for (c, &j) in canonical_vectors.iter().enumerate() {
            let cos = dot(&vectors[i], &vectors[j]);
            // Strictly greater: on a tie the earlier canonical relation wins.
            if f64::from(cos) >= threshold && best.is_none_or(|(_, b)| cos > b) {
                best = Some((c, cos));
            }
        }
        let target = match best {
            Some((c, cos)) => RelationTarget {
                canonical: merge.canonical[c].clone(),
                score: Some((f64::from(cos) * 1e4).round() / 1e4),
            },
            None => {
                merge.canonical.push(key.clone());
                canonical_vectors.push(i);
                RelationTarget {
                    canonical: key.clone(),
                    score: None,
                }
            }
        };
        merge.targets.insert(key.clone(), target);
    }
    Ok(merge)
}

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f32::consts::FRAC_1_SQRT_2;

    /// A fixed embedder: each key's vector from a table, so similarities are known exactly.
    fn fixed(table: &[(&str, [f32; 3])]) -> impl Fn(&[String]) -> Result<Vec<Vec<f32>>, String> {
        let table: BTreeMap<String, Vec<f32>> = table
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.to_vec()))
            .collect();
        move |keys: &[String]| {
            keys.iter()
                .map(|k| table.get(k).cloned().ok_or(format!("no vector for {k}")))
                .collect()
        }
    }

    fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
        pairs.iter().map(|(k, n)| ((*k).to_string(), *n)).collect()
    }

    #[test]
    fn relations_merge_into_the_more_frequent_close_relation() {
        let embed = fixed(&[
            ("acquired", [1.0, 0.0, 0.0]),
            ("bought", [0.95, 0.31225, 0.0]), // cos 0.95 with acquired
            ("purchased", [0.91, 0.0, 0.4146]), // cos 0.91 with acquired
            ("reported", [0.0, 1.0, 0.0]),
            ("announced", [0.0, 0.8, 0.6]), // cos 0.8 with reported: its own
        ]);
        let c = counts(&[
            ("acquired", 5),
            ("bought", 2),
            ("purchased", 1),
            ("reported", 3),
            ("announced", 3),
        ]);
        let m = merge_relations(&c, 0.9, &embed).unwrap();
        // Visiting order: frequency, then text.
        assert_eq!(m.canonical, ["acquired", "announced", "reported"]);
        assert_eq!(m.targets["bought"].canonical, "acquired");
        assert_eq!(m.targets["bought"].score, Some(0.95));
        assert_eq!(m.targets["purchased"].canonical, "acquired");
        assert_eq!(m.targets["acquired"].score, None);
        assert_eq!(m.targets["announced"].canonical, "announced");
        // A higher threshold keeps purchased apart.
        let m = merge_relations(&c, 0.92, &embed).unwrap();
        assert_eq!(m.targets["purchased"].canonical, "purchased");
    }

    #[test]
    fn the_order_decides_which_relation_is_canonical_not_the_input() {
        let embed = fixed(&[("rose", [1.0, 0.0, 0.0]), ("rose to", [0.96, 0.28, 0.0])]);
        // Equal counts: the text decides ("rose" < "rose to").
        let m = merge_relations(&counts(&[("rose to", 2), ("rose", 2)]), 0.9, &embed).unwrap();
        assert_eq!(m.canonical, ["rose"]);
        assert_eq!(m.targets["rose to"].canonical, "rose");
        // More frequent wins.
        let m = merge_relations(&counts(&[("rose to", 3), ("rose", 2)]), 0.9, &embed).unwrap();
        assert_eq!(m.canonical, ["rose to"]);
        assert_eq!(m.targets["rose"].canonical, "rose to");
    }

    #[test]
    fn a_relation_joins_the_most_similar_canonical_and_ties_go_to_the_earlier() {
        let embed = fixed(&[
            ("a", [1.0, 0.0, 0.0]),
            ("b", [0.0, 1.0, 0.0]),
            ("c", [FRAC_1_SQRT_2, FRAC_1_SQRT_2, 0.0]), // equally close to a and b
            ("d", [0.2, 0.98, 0.0]),                    // closer to b
        ]);
        let c = counts(&[("a", 4), ("b", 3), ("c", 1), ("d", 1)]);
        let m = merge_relations(&c, 0.7, &embed).unwrap();
        assert_eq!(m.targets["c"].canonical, "a");
        assert_eq!(m.targets["d"].canonical, "b");
    }

    #[test]
    fn nothing_to_merge_asks_for_no_vectors_and_errors_pass_through() {
        let m = merge_relations(&BTreeMap::new(), 0.9, |_: &[String]| -> Result<_, String> {
            panic!("no call expected")
        })
        .unwrap();
        assert!(m.canonical.is_empty());
        let err = merge_relations(&counts(&[("x", 1)]), 0.9, |_: &[String]| {
            Err::<Vec<Vec<f32>>, _>("down".to_string())
        });
        assert_eq!(err.unwrap_err(), "down");
    }
}
