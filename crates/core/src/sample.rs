//! The review sample: a deterministic, stratified choice of items that the report shows end to
//! end and the labels stage's review sheet lists, so what a reviewer reads in the report is what
//! they label.
//!
//! Within each stratum (a claim verdict and a label, a question kind and split, a stage and a drop
//! reason), the items kept are the `per_stratum` whose ids hash lowest under [`sample_key`]
//! (bottom-k by a salted sha256 of the id). The choice depends on nothing but the ids and the
//! strata: not on row order, the run, the machine or the other strata, and an item stays chosen
//! when rows are added to its stratum unless a new one hashes lower.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::{Claim, ClaimDocumentLabel, Question, QuestionSplit};

/// The default number of items per stratum (the report's and the review sheet's).
pub const DEFAULT_PER_STRATUM: usize = 5;

/// The sampling key of an id: the first 8 bytes of sha256 over a fixed salt and the id, so the
/// sample is not the ids' own (content-hash) order.
pub fn sample_key(id: &str) -> u64 {
    let mut hasher = Sha256::new();
    hasher.update(b"noisebench-review-sample\x1f");
    hasher.update(id.as_bytes());
    let digest = hasher.finalize();
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(bytes)
}

/// One stratum of a sample: every item of it counted, the chosen ones in key order.
#[derive(Debug, Clone, PartialEq)]
pub struct Stratum<'a, K, T> {
    pub key: K,
    /// Items in the stratum, chosen or not.
    pub total: usize,
    /// The chosen items, lowest [`sample_key`] first (ties by id).
    pub items: Vec<&'a T>,
}

/// `items` grouped by `stratum`, each group's `per_stratum` items of lowest [`sample_key`] of
/// `id` kept; strata in key order. `per_stratum == 0` keeps every item (still in key order).
pub fn stratified_sample<'a, T, K: Ord + Clone>(
    items: &'a [T],
    per_stratum: usize,
    stratum: impl Fn(&T) -> K,
    id: impl Fn(&T) -> &str,
) -> Vec<Stratum<'a, K, T>> {
    let mut groups: BTreeMap<K, Vec<(u64, &'a T)>> = BTreeMap::new();
    for item in items {
        groups
            .entry(stratum(item))
            .or_default()
            .push((sample_key(id(item)), item));
    }
    groups
        .into_iter()
        .map(|(key, mut members)| {
            let total = members.len();
            members.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| id(a.1).cmp(id(b.1))));
            if per_stratum > 0 {
                members.truncate(per_stratum);
            }
            Stratum {
                key,
                total,
                items: members.into_iter().map(|(_, item)| item).collect(),
            }
        })
        .collect()
}

/// The stratum of a claim-document pair: its claim's verdict and its label, as the report's
/// verdict x label table counts them (`unknown` for a claim not published, `unlabelled`).
pub(crate) fn label_stratum(verdict: Option<&str>, label: Option<&str>) -> [String; 2] {
    [
        verdict.unwrap_or("unknown").to_string(),
        label.unwrap_or("unlabelled").to_string(),
    ]
}

/// The sampled claim-document pairs (label rows) by claim verdict and label: the pairs the
/// report shows and the review sheet lists.
pub fn sample_labels<'a>(
    claims: &[Claim],
    labels: &'a [ClaimDocumentLabel],
    per_stratum: usize,
) -> Vec<Stratum<'a, [String; 2], ClaimDocumentLabel>> {
    let verdicts: BTreeMap<&str, &str> = claims
        .iter()
        .map(|c| (c.id.as_str(), c.verdict.as_str()))
        .collect();
    stratified_sample(
        labels,
        per_stratum,
        |l| {
            label_stratum(
                verdicts.get(l.claim_id.as_str()).copied(),
                l.label.as_deref(),
            )
        },
        |l| l.id.as_str(),
    )
}

/// The sampled questions by kind and split (`unsplit` for a question without one).
pub fn sample_questions<'a>(
    questions: &'a [Question],
    splits: &[QuestionSplit],
    per_stratum: usize,
) -> Vec<Stratum<'a, [String; 2], Question>> {
    let splits: BTreeMap<&str, &str> = splits
        .iter()
        .map(|s| (s.question_id.as_str(), s.split.as_str()))
        .collect();
    stratified_sample(
        questions,
        per_stratum,
        |q| {
            [
                q.kind.clone(),
                splits
                    .get(q.id.as_str())
                    .copied()
                    .unwrap_or("unsplit")
                    .to_string(),
            ]
        },
        |q| q.id.as_str(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items() -> Vec<(String, &'static str)> {
        (0..100)
            .map(|i| {
                let stratum = ["a", "b", "c"][i % 3];
                (format!("item_{i}"), stratum)
            })
            .collect()
    }

    #[test]
    fn pairs_are_stratified_by_verdict_and_label() {
        let claims = vec![
            Claim {
                id: "c1".into(),
                verdict: "true".into(),
                ..Default::default()
            },
            Claim {
                id: "c2".into(),
                verdict: "false".into(),
                ..Default::default()
            },
        ];
        let labels: Vec<ClaimDocumentLabel> = (0..30)
            .map(|i| ClaimDocumentLabel {
                id: format!("pair_{i}"),
                claim_id: ["c1", "c2", "gone"][i % 3].into(),
                label: (i % 2 == 0).then(|| "supporting".to_string()),
                ..Default::default()
            })
            .collect();
        let sample = sample_labels(&claims, &labels, 2);
        let keys: Vec<[&str; 2]> = sample
            .iter()
            .map(|s| [s.key[0].as_str(), s.key[1].as_str()])
            .collect();
        assert_eq!(
            keys,
            [
                ["false", "supporting"],
                ["false", "unlabelled"],
                ["true", "supporting"],
                ["true", "unlabelled"],
                ["unknown", "supporting"],
                ["unknown", "unlabelled"],
            ]
        );
        assert!(sample.iter().all(|s| s.total == 5 && s.items.len() == 2));
    }

    #[test]
    fn every_stratum_gets_its_share_and_is_counted() {
        let items = items();
        let sample = stratified_sample(&items, 5, |i| i.1, |i| i.0.as_str());
        let keys: Vec<&str> = sample.iter().map(|s| s.key).collect();
        assert_eq!(keys, ["a", "b", "c"]);
        assert_eq!(
            sample.iter().map(|s| s.total).collect::<Vec<_>>(),
            [34, 33, 33]
        );
        for s in &sample {
            assert_eq!(s.items.len(), 5);
            assert!(s.items.iter().all(|i| i.1 == s.key));
            let keys: Vec<u64> = s.items.iter().map(|i| sample_key(&i.0)).collect();
            assert!(keys.windows(2).all(|w| w[0] <= w[1]));
            // The chosen ones hash lowest in their stratum.
            let worst = *keys.last().unwrap();
            let below = items
                .iter()
                .filter(|i| i.1 == s.key && sample_key(&i.0) <= worst)
                .count();
            assert_eq!(below, 5);
        }
        let small = stratified_sample(&items[..4], 5, |i| i.1, |i| i.0.as_str());
        assert_eq!(small.iter().map(|s| s.items.len()).sum::<usize>(), 4);
        let all = stratified_sample(&items, 0, |i| i.1, |i| i.0.as_str());
        assert_eq!(all.iter().map(|s| s.items.len()).sum::<usize>(), 100);
    }

    #[test]
    fn the_choice_ignores_row_order_and_survives_removing_unchosen_rows() {
        let items = items();
        let chosen = |items: &[(String, &'static str)]| -> Vec<String> {
            stratified_sample(items, 3, |i| i.1, |i| i.0.as_str())
                .iter()
                .flat_map(|s| s.items.iter().map(|i| i.0.clone()))
                .collect()
        };
        let mut reversed = items.clone();
        reversed.reverse();
        assert_eq!(chosen(&items), chosen(&reversed));
        // Removing the items no stratum chose changes nothing.
        let first = chosen(&items);
        let fewer: Vec<_> = items
            .iter()
            .filter(|i| first.contains(&i.0) || i.0.ends_with('7'))
            .cloned()
            .collect();
        assert!(fewer.len() < items.len());
        assert_eq!(chosen(&fewer), first);
        assert_eq!(sample_key("x"), sample_key("x"));
        assert_ne!(sample_key("x"), sample_key("y"));
    }
}
