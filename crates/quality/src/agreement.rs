//! Label agreement: where a claim-document pair has both the RAGuard exam label and the
//! CONF-FACT stance vote, the vote is mapped into the exam's vocabulary through the claim's
//! verdict (a document supporting a true claim, or rejecting a false one, is `supporting`; the
//! opposite is `misleading`; not enough evidence is `irrelevant`) and the two are compared with
//! Cohen's kappa, a seeded bootstrap 95% interval, the confusion matrix and sampled
//! disagreements. Where a human review round labelled pairs (`label_source = "human"`),
//! Krippendorff's alpha of the three coders on them (the exam, the mapped stance vote and the
//! reviewer), with the same kind of interval.

use std::collections::{BTreeMap, HashMap};

use noisebench_core::{Claim, ClaimDocumentLabel};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The exam's vocabulary, in the order the confusion matrix lists it.
pub const LABELS: [&str; 3] = ["supporting", "misleading", "irrelevant"];

/// How the exam labels and the mapped stance votes agree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Pairs with both an exam label and a stance vote (and a true or false claim).
    pub pairs: usize,
    /// Share of those pairs where the two agree.
    pub observed: f64,
    /// Cohen's kappa; `None` when it is undefined (every pair has the same label in both).
    pub kappa: Option<f64>,
    /// The bootstrap 95% interval of kappa (2.5th and 97.5th percentiles).
    pub interval: Option<[f64; 2]>,
    /// Exam label -> mapped stance -> pairs.
    pub confusion: BTreeMap<String, BTreeMap<String, usize>>,
    /// A seeded sample of the pairs where they disagree.
    pub disagreements: Vec<Disagreement>,
    /// How many pairs disagree in all.
    pub disagreeing: usize,
}

/// One pair where the exam and the stance vote disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disagreement {
    pub id: String,
    pub claim_id: String,
    pub document_id: String,
    pub verdict: String,
    pub exam: String,
    pub stance: String,
    /// The stance in the exam's vocabulary.
    pub mapped: String,
}

/// An exam label in the common vocabulary (`unrelated`, RAGuard's name, is `irrelevant`).
fn exam_label(label: &str) -> Option<usize> {
    match label.trim().to_ascii_lowercase().as_str() {
        "supporting" => Some(0),
        "misleading" => Some(1),
        "irrelevant" | "unrelated" => Some(2),
        _ => None,
    }
}

/// A stance vote in the exam's vocabulary, given the claim's verdict.
pub fn map_stance(stance: &str, verdict: &str) -> Option<&'static str> {
    let verdict = match verdict.trim().to_ascii_lowercase().as_str() {
        "true" => true,
        "false" => false,
        _ => return None,
    };
    match stance.trim().to_ascii_lowercase().as_str() {
        "support" => Some(if verdict { "supporting" } else { "misleading" }),
        "reject" => Some(if verdict { "misleading" } else { "supporting" }),
        "not enough evidence" | "not_enough_evidence" => Some("irrelevant"),
        _ => None,
    }
}

/// Cohen's kappa of pairs of category indexes (`k` categories); `None` when the expected
/// agreement is 1 (kappa is undefined) or there are no pairs.
pub fn cohen_kappa(pairs: &[(usize, usize)], k: usize) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let mut a = vec![0f64; k];
    let mut b = vec![0f64; k];
    let mut agree = 0f64;
    for &(x, y) in pairs {
        a[x] += 1.0;
        b[y] += 1.0;
        agree += f64::from(u8::from(x == y));
    }
    let po = agree / n;
    let pe: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum::<f64>() / (n * n);
    if (1.0 - pe).abs() < 1e-12 {
        return None;
    }
    Some((po - pe) / (1.0 - pe))
}

/// The 2.5th and 97.5th percentiles of kappa over `resamples` seeded bootstrap resamples
/// (resamples where kappa is undefined are left out).
pub fn bootstrap_interval(
    pairs: &[(usize, usize)],
    k: usize,
    resamples: usize,
    seed: u64,
) -> Option<[f64; 2]> {
    if pairs.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sample = Vec::with_capacity(pairs.len());
    let mut kappas = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        sample.clear();
        sample.extend((0..pairs.len()).map(|_| pairs[rng.random_range(0..pairs.len())]));
        if let Some(kappa) = cohen_kappa(&sample, k) {
            kappas.push(kappa);
        }
    }
    if kappas.is_empty() {
        return None;
    }
    kappas.sort_by(f64::total_cmp);
    let at = |q: f64| kappas[((kappas.len() - 1) as f64 * q).round() as usize];
    Some([at(0.025), at(0.975)])
}

/// The agreement of the exam and the stance vote over `labels`; `None` when no pair has both.
pub fn label_agreement(
    labels: &[ClaimDocumentLabel],
    claims: &[Claim],
    resamples: usize,
    samples: usize,
    seed: u64,
) -> Option<Agreement> {
    let verdicts: HashMap<&str, &str> = claims
        .iter()
        .map(|c| (c.id.as_str(), c.verdict.as_str()))
        .collect();
    let mut pairs = Vec::new();
    let mut confusion: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut disagreeing = Vec::new();
    for row in labels {
        // The exam's own label: a reviewer's override keeps it in `model_label`.
        let exam = row.model_label.as_deref().or(row.label.as_deref());
        let (Some(exam), Some(stance)) = (exam, row.stance_majority.as_deref()) else {
            continue;
        };
        let Some(verdict) = verdicts.get(row.claim_id.as_str()) else {
            continue;
        };
        let (Some(x), Some(mapped)) = (exam_label(exam), map_stance(stance, verdict)) else {
            continue;
        };
        let y = exam_label(mapped).unwrap_or(2);
        pairs.push((x, y));
        *confusion
            .entry(LABELS[x].to_string())
            .or_default()
            .entry(mapped.to_string())
            .or_default() += 1;
        if x != y {
            disagreeing.push(Disagreement {
                id: row.id.clone(),
                claim_id: row.claim_id.clone(),
                document_id: row.document_id.clone(),
                verdict: verdict.to_string(),
                exam: exam.to_string(),
                stance: stance.to_string(),
                mapped: mapped.to_string(),
            });
        }
    }
    if pairs.is_empty() {
        return None;
    }
    let agree = pairs.iter().filter(|(x, y)| x == y).count();
    let count = disagreeing.len();
    Some(Agreement {
        pairs: pairs.len(),
        observed: agree as f64 / pairs.len() as f64,
        kappa: cohen_kappa(&pairs, LABELS.len()),
        interval: bootstrap_interval(&pairs, LABELS.len(), resamples, seed),
        confusion,
        disagreements: crate::sample(disagreeing, samples, seed, |d| d.id.as_str()),
        disagreeing: count,
    })
}

/// Krippendorff's alpha for nominal values: `units` holds each unit's values (category
/// indexes), one per coder that coded it; units with fewer than two values are not pairable
/// and left out. `None` when no unit is pairable or every value is the same (the expected
/// disagreement is 0). Missing values are what alpha is for: a coder may skip a unit.
pub fn krippendorff_alpha(units: &[Vec<usize>], k: usize) -> Option<f64> {
    // The coincidence matrix: each ordered pair of values within a unit of m values weighs
    // 1 / (m - 1).
    let mut o = vec![vec![0f64; k]; k];
    for values in units.iter().filter(|v| v.len() >= 2) {
        let w = 1.0 / (values.len() - 1) as f64;
        for (i, &a) in values.iter().enumerate() {
            for (j, &b) in values.iter().enumerate() {
                if i != j {
                    o[a][b] += w;
                }
            }
        }
    }
    let totals: Vec<f64> = o.iter().map(|row| row.iter().sum()).collect();
    let n: f64 = totals.iter().sum();
    if n <= 1.0 {
        return None;
    }
    let (mut observed, mut expected) = (0f64, 0f64);
    for c in 0..k {
        for d in 0..k {
            if c != d {
                observed += o[c][d];
                expected += totals[c] * totals[d];
            }
        }
    }
    if expected <= 0.0 {
        return None;
    }
    Some(1.0 - (n - 1.0) * observed / expected)
}

/// How the machine labels agree with a human review round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewAgreement {
    /// Reviewed pairs with at least two of the three coders' labels.
    pub pairs: usize,
    /// The coders, in order: `exam`, `stance` (mapped through the verdict), `human`.
    pub coders: Vec<String>,
    /// Krippendorff's alpha (nominal) of the three coders; `None` when undefined.
    pub alpha: Option<f64>,
    /// Its bootstrap 95% interval over the pairs.
    pub interval: Option<[f64; 2]>,
    /// Share of reviewed pairs where the reviewer kept the exam's label.
    pub human_agrees_with_exam: f64,
}

/// Krippendorff's alpha of the exam, the mapped stance vote and the reviewer on the pairs a
/// human reviewed (`label_source = "human"`, the reviewer's label in `label`, the exam's in
/// `model_label`); `None` without such pairs.
pub fn review_agreement(
    labels: &[ClaimDocumentLabel],
    claims: &[Claim],
    resamples: usize,
    seed: u64,
) -> Option<ReviewAgreement> {
    let verdicts: HashMap<&str, &str> = claims
        .iter()
        .map(|c| (c.id.as_str(), c.verdict.as_str()))
        .collect();
    let mut units = Vec::new();
    let (mut compared, mut kept) = (0usize, 0usize);
    for row in labels.iter().filter(|l| l.label_source == "human") {
        let exam = row
            .model_label
            .as_deref()
            .or(row.label.as_deref())
            .and_then(exam_label);
        let stance = row
            .stance_majority
            .as_deref()
            .zip(verdicts.get(row.claim_id.as_str()))
            .and_then(|(s, v)| map_stance(s, v))
            .and_then(exam_label);
        let human = row.label.as_deref().and_then(exam_label);
        if let (Some(e), Some(h)) = (exam, human) {
            compared += 1;
            kept += usize::from(e == h);
        }
        let values: Vec<usize> = [exam, stance, human].into_iter().flatten().collect();
        if values.len() >= 2 {
            units.push(values);
        }
    }
    if units.is_empty() {
        return None;
    }
    let alpha = krippendorff_alpha(&units, LABELS.len());
    let interval = (resamples > 0).then(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut alphas: Vec<f64> = (0..resamples)
            .filter_map(|_| {
                let sample: Vec<Vec<usize>> = (0..units.len())
                    .map(|_| units[rng.random_range(0..units.len())].clone())
                    .collect();
                krippendorff_alpha(&sample, LABELS.len())
            })
            .collect();
        alphas.sort_by(f64::total_cmp);
        let at = |q: f64| alphas[((alphas.len() - 1) as f64 * q).round() as usize];
        (!alphas.is_empty()).then(|| [at(0.025), at(0.975)])
    });
    Some(ReviewAgreement {
        pairs: units.len(),
        coders: vec!["exam".into(), "stance".into(), "human".into()],
        alpha,
        interval: interval.flatten(),
        human_agrees_with_exam: if compared == 0 {
            0.0
        } else {
            kept as f64 / compared as f64
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn krippendorffs_own_example_gives_his_alpha() {
        // Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": four coders, twelve
        // units, missing values; nominal alpha 0.743. Values 1-5 as indexes 0-4; unit 12 has
        // one value and is not pairable.
        let units: Vec<Vec<usize>> = [
            vec![1, 1, 1],
            vec![2, 2, 3, 2],
            vec![3, 3, 3, 3],
            vec![3, 3, 3, 3],
            vec![2, 2, 2, 2],
            vec![1, 2, 3, 4],
            vec![4, 4, 4, 4],
            vec![1, 1, 2, 1],
            vec![2, 2, 2, 2],
            vec![5, 5, 5],
            vec![1, 1],
            vec![3],
        ]
        .into_iter()
        .map(|u| u.into_iter().map(|v| v - 1).collect())
        .collect();
        let alpha = krippendorff_alpha(&units, 5).unwrap();
        assert!((alpha - 0.743).abs() < 0.001, "{alpha}");
        // Perfect agreement is 1; one value everywhere is undefined.
        assert_eq!(
            krippendorff_alpha(&[vec![0, 0], vec![1, 1, 1]], 3),
            Some(1.0)
        );
        assert_eq!(krippendorff_alpha(&[vec![2, 2], vec![2, 2]], 3), None);
        assert_eq!(krippendorff_alpha(&[vec![2]], 3), None);
    }

    #[test]
    fn kappa_is_one_for_perfect_agreement_and_zero_for_chance() {
        let same: Vec<(usize, usize)> = (0..30).map(|i| (i % 3, i % 3)).collect();
        assert_eq!(cohen_kappa(&same, 3), Some(1.0));
        // Independent marginals, both uniform over two labels: observed = expected = 0.5.
        let chance = [(0, 0), (0, 1), (1, 0), (1, 1)];
        assert!(cohen_kappa(&chance, 2).unwrap().abs() < 1e-12);
        // One label everywhere: undefined.
        assert_eq!(cohen_kappa(&[(1, 1), (1, 1)], 3), None);
        assert_eq!(cohen_kappa(&[], 3), None);
    }

    #[test]
    fn a_known_table_gives_the_textbook_kappa() {
        // 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no: po = 0.7, pe = 0.5, kappa = 0.4.
        let mut pairs = vec![(0, 0); 20];
        pairs.extend(vec![(0, 1); 5]);
        pairs.extend(vec![(1, 0); 10]);
        pairs.extend(vec![(1, 1); 15]);
        assert!((cohen_kappa(&pairs, 2).unwrap() - 0.4).abs() < 1e-12);
        let [lo, hi] = bootstrap_interval(&pairs, 2, 500, 7).unwrap();
        assert!(lo < 0.4 && 0.4 < hi, "{lo} {hi}");
        assert_eq!(bootstrap_interval(&pairs, 2, 500, 7), Some([lo, hi]));
    }

    #[test]
    fn stances_map_through_the_verdict() {
        assert_eq!(map_stance("support", "true"), Some("supporting"));
        assert_eq!(map_stance("support", "false"), Some("misleading"));
        assert_eq!(map_stance("reject", "true"), Some("misleading"));
        assert_eq!(map_stance("reject", "false"), Some("supporting"));
        assert_eq!(
            map_stance("not enough evidence", "true"),
            Some("irrelevant")
        );
        assert_eq!(map_stance("support", "half-true"), None);
    }

    proptest! {
        #[test]
        fn kappa_stays_within_its_bounds(pairs in prop::collection::vec((0usize..3, 0usize..3), 1..60)) {
            if let Some(k) = cohen_kappa(&pairs, 3) {
                prop_assert!((-1.0 - 1e-9..=1.0 + 1e-9).contains(&k), "{k}");
            }
        }

        #[test]
        fn the_interval_is_ordered(pairs in prop::collection::vec((0usize..3, 0usize..3), 2..40), seed in 0u64..50) {
            if let Some([lo, hi]) = bootstrap_interval(&pairs, 3, 50, seed) {
                prop_assert!(lo <= hi);
            }
        }
    }
}
