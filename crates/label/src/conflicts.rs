//! Conflicting evidence per claim (CONF-FACT 3.3-3.4): a claim is a *model conflict* (ModC) when
//! the model's majority stances include both a support and a reject, a *human conflict* (HumC)
//! when its reviewed stances do; an *exam conflict* when it has both a supporting and a
//! misleading document.

use std::collections::BTreeMap;

use noisebench_core::{Claim, ClaimDocumentLabel, Conflict, stable_id};

use crate::exam::{MISLEADING, SUPPORTING};

/// One row per claim that has at least one label row, in claim id order.
pub fn conflicts(claims: &[Claim], labels: &[ClaimDocumentLabel]) -> Vec<Conflict> {
    let verdicts: BTreeMap<&str, &str> = claims
        .iter()
        .map(|c| (c.id.as_str(), c.verdict.as_str()))
        .collect();
    let mut by_claim: BTreeMap<&str, Vec<&ClaimDocumentLabel>> = BTreeMap::new();
    for l in labels {
        by_claim.entry(l.claim_id.as_str()).or_default().push(l);
    }
    by_claim
        .into_iter()
        .map(|(claim_id, rows)| {
            let with = |stance: &str| -> Vec<String> {
                let mut v: Vec<String> = rows
                    .iter()
                    .filter(|l| l.stance.as_deref() == Some(stance))
                    .map(|l| l.document_id.clone())
                    .collect();
                v.sort();
                v
            };
            let count_label = |f: &dyn Fn(&str) -> bool| {
                rows.iter()
                    .filter(|l| l.label.as_deref().is_some_and(f))
                    .count() as i64
            };
            let majority_has =
                |s: &str| rows.iter().any(|l| l.stance_majority.as_deref() == Some(s));
            let human: Vec<&&ClaimDocumentLabel> =
                rows.iter().filter(|l| l.label_source == "human").collect();
            let human_conflict = (!human.is_empty()).then(|| {
                let has = |s: &str| human.iter().any(|l| l.stance.as_deref() == Some(s));
                has("support") && has("reject")
            });
            let supporting = count_label(&|l| l == SUPPORTING);
            let misleading = count_label(&|l| l == MISLEADING);
            Conflict {
                id: stable_id("conflict", &[claim_id]),
                claim_id: claim_id.to_string(),
                verdict: verdicts.get(claim_id).copied().unwrap_or("").to_string(),
                documents: rows.len() as i64,
                support_documents: with("support"),
                reject_documents: with("reject"),
                not_enough_evidence: rows
                    .iter()
                    .filter(|l| l.stance.as_deref() == Some("not enough evidence"))
                    .count() as i64,
                supporting,
                misleading,
                irrelevant: count_label(&|l| l == "irrelevant" || l == "unrelated"),
                model_conflict: majority_has("support") && majority_has("reject"),
                human_conflict,
                exam_conflict: supporting > 0 && misleading > 0,
            }
        })
        .collect()
}
