//! Human review: a CSV sheet with one row per sampled claim-document pair, filled in by one or
//! two reviewers (and an adjudicator where they disagree), read back into the labels.
//!
//! The sheet's pairs are the report's sampled pairs (core's `sample_labels`: per claim verdict
//! and label, the `per_stratum` pairs whose ids hash lowest), so what a reviewer reads end to end
//! in the version's report is what they label; `per_stratum = 0` lists every pair. Rows keep the
//! labels' order.
//!
//! Export: `pair_id, claim_id, document_id, claim, verdict, title, excerpt, link, model_label,
//! model_stance`, then blank `reviewer_1_label, reviewer_1_stance, reviewer_2_label,
//! reviewer_2_stance, adjudicated_label, adjudicated_stance, notes`.
//!
//! Import: the human label of a pair is the adjudicated one; else the only reviewer's; else the
//! two reviewers' when they agree; two disagreeing reviewers with no adjudication leave the
//! model's label (counted as unresolved). Same for the stance. Reviewed rows take the human
//! label and stance and are marked `label_source = "human"`. Agreement is measured between the
//! model and the human result, and between the two reviewers where both answered.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use noisebench_core::{
    Claim, ClaimDocumentLabel, ConfigError, Document, Drops, StageContext, StageError,
    sample_labels,
};
use serde::{Deserialize, Serialize};

use crate::agreement::Agreement;
use crate::exam::{LabelPreset, truncate_chars};
use crate::stance::parse_stance;

/// `[stages.<id>.config.review]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ReviewConfig {
    /// Write `review_sheet.csv` into the stage directory.
    pub export: bool,
    /// Characters of document text in the sheet's `excerpt`.
    pub excerpt_chars: usize,
    /// Pairs per stratum (claim verdict x label) on the sheet: the same pairs, chosen by id
    /// hash, that the report shows with `noisebench report --per-stratum` of the same number.
    /// 0 lists every pair.
    pub per_stratum: usize,
    /// A filled-in sheet to import (relative to the repository root).
    pub import: Option<PathBuf>,
}

impl Default for ReviewConfig {
    fn default() -> Self {
        Self {
            export: true,
            excerpt_chars: 600,
            per_stratum: noisebench_core::DEFAULT_PER_STRATUM,
            import: None,
        }
    }
}

/// One row of the review sheet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReviewRow {
    pub pair_id: String,
    pub claim_id: String,
    pub document_id: String,
    pub claim: String,
    pub verdict: String,
    pub title: String,
    pub excerpt: String,
    pub link: String,
    pub model_label: String,
    pub model_stance: String,
    pub reviewer_1_label: String,
    pub reviewer_1_stance: String,
    pub reviewer_2_label: String,
    pub reviewer_2_stance: String,
    pub adjudicated_label: String,
    pub adjudicated_stance: String,
    pub notes: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("{path}: {message}")]
    Csv { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The sheet's rows for the sampled pairs of `labels` (`per_stratum` per claim verdict and
/// label, 0 for all; in label order), reviewer columns blank.
pub fn review_sheet(
    claims: &[Claim],
    documents: &[Document],
    labels: &[ClaimDocumentLabel],
    excerpt_chars: usize,
    per_stratum: usize,
) -> Vec<ReviewRow> {
    let sampled: BTreeSet<&str> = sample_labels(claims, labels, per_stratum)
        .iter()
        .flat_map(|s| s.items.iter().map(|l| l.id.as_str()))
        .collect();
    let claims: BTreeMap<&str, &Claim> = claims.iter().map(|c| (c.id.as_str(), c)).collect();
    let docs: BTreeMap<&str, &Document> = documents.iter().map(|d| (d.id.as_str(), d)).collect();
    labels
        .iter()
        .filter(|l| sampled.contains(l.id.as_str()))
        .map(|l| {
            let claim = claims.get(l.claim_id.as_str());
            let doc = docs.get(l.document_id.as_str());
            ReviewRow {
                pair_id: l.id.clone(),
                claim_id: l.claim_id.clone(),
                document_id: l.document_id.clone(),
                claim: claim.map(|c| c.text.clone()).unwrap_or_default(),
                verdict: claim.map(|c| c.verdict.clone()).unwrap_or_default(),
                title: doc.and_then(|d| d.title.clone()).unwrap_or_default(),
                excerpt: doc
                    .map(|d| truncate_chars(d.text.trim(), excerpt_chars))
                    .unwrap_or_default(),
                link: doc.map(|d| d.url.clone()).unwrap_or_default(),
                model_label: l.model_label.clone().unwrap_or_default(),
                model_stance: l.stance_majority.clone().unwrap_or_default(),
                ..ReviewRow::default()
            }
        })
        .collect()
}

/// Write the sheet as CSV with a header.
pub fn write_sheet(path: &Path, rows: &[ReviewRow]) -> Result<(), ReviewError> {
    let csv_err = |e: csv::Error| ReviewError::Csv {
        path: path.into(),
        message: e.to_string(),
    };
    let mut w = csv::Writer::from_path(path).map_err(csv_err)?;
    if rows.is_empty() {
        w.write_record(sheet_header()).map_err(csv_err)?;
    }
    for r in rows {
        w.serialize(r).map_err(csv_err)?;
    }
    w.flush().map_err(|source| ReviewError::Io {
        path: path.into(),
        source,
    })
}

fn sheet_header() -> Vec<String> {
    let v = serde_json::to_value(ReviewRow::default()).unwrap_or_default();
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// Read a (filled-in) sheet. Columns may be in any order; missing reviewer columns read blank;
/// `pair_id` is required.
pub fn read_sheet(path: &Path) -> Result<Vec<ReviewRow>, ReviewError> {
    let csv_err = |message: String| ReviewError::Csv {
        path: path.into(),
        message,
    };
    let mut r = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_path(path)
        .map_err(|e| csv_err(e.to_string()))?;
    let headers = r.headers().map_err(|e| csv_err(e.to_string()))?;
    if !headers.iter().any(|h| h == "pair_id") {
        return Err(csv_err("missing column `pair_id`".into()));
    }
    r.deserialize()
        .map(|row| row.map_err(|e| csv_err(e.to_string())))
        .collect()
}

/// A problem with one sheet row (it is skipped; the stage records it as a drop).
#[derive(Debug, Clone, PartialEq)]
pub struct RowProblem {
    pub pair_id: String,
    /// `review_unknown_pair`, `review_invalid_label`, `review_invalid_stance`.
    pub reason: &'static str,
    pub detail: String,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewOutcome {
    /// Sheet rows with at least one human answer.
    pub reviewed: usize,
    /// Label rows changed to `human`.
    pub applied: usize,
    /// Pairs whose two reviewers disagree with no adjudication (label or stance).
    pub unresolved: usize,
    #[serde(skip)]
    pub problems: Vec<RowProblem>,
    pub model_vs_human_label: Agreement,
    pub model_vs_human_stance: Agreement,
    pub reviewers_label: Agreement,
    pub reviewers_stance: Agreement,
}

/// The human answer from two reviewers and an adjudicator (see the module doc); `Err(())` when
/// the reviewers disagree with no adjudication.
fn resolve<T: PartialEq + Copy>(
    first: Option<T>,
    second: Option<T>,
    adjudicated: Option<T>,
) -> Result<Option<T>, ()> {
    match (adjudicated, first, second) {
        (Some(a), _, _) => Ok(Some(a)),
        (None, Some(a), Some(b)) if a == b => Ok(Some(a)),
        (None, Some(_), Some(_)) => Err(()),
        (None, a, b) => Ok(a.or(b)),
    }
}

/// Apply a filled-in sheet to `labels`.
pub fn apply_review(
    labels: &mut [ClaimDocumentLabel],
    sheet: &[ReviewRow],
    preset: LabelPreset,
    sheet_name: &str,
) -> ReviewOutcome {
    let index: BTreeMap<String, usize> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.id.clone(), i))
        .collect();
    let mut out = ReviewOutcome {
        reviewed: 0,
        applied: 0,
        unresolved: 0,
        problems: Vec::new(),
        model_vs_human_label: Agreement::of::<&str>(&[]),
        model_vs_human_stance: Agreement::of::<&str>(&[]),
        reviewers_label: Agreement::of::<&str>(&[]),
        reviewers_stance: Agreement::of::<&str>(&[]),
    };
    let (mut mh_label, mut mh_stance, mut rr_label, mut rr_stance) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for row in sheet {
        let problem = |reason: &'static str, detail: String| RowProblem {
            pair_id: row.pair_id.clone(),
            reason,
            detail,
        };
        let label_of = |s: &str, col: &str| -> Result<Option<&'static str>, RowProblem> {
            if s.trim().is_empty() {
                return Ok(None);
            }
            preset.normalise(s).map(Some).ok_or_else(|| {
                problem(
                    "review_invalid_label",
                    format!("`{col}` is `{s}`, expected supporting, misleading or irrelevant"),
                )
            })
        };
        let stance_of = |s: &str, col: &str| -> Result<Option<&'static str>, RowProblem> {
            if s.trim().is_empty() {
                return Ok(None);
            }
            parse_stance(s).map(|st| Some(st.as_str())).ok_or_else(|| {
                problem(
                    "review_invalid_stance",
                    format!("`{col}` is `{s}`, expected support, reject or not enough evidence"),
                )
            })
        };
        let parsed = (|| {
            Ok::<_, RowProblem>((
                label_of(&row.reviewer_1_label, "reviewer_1_label")?,
                label_of(&row.reviewer_2_label, "reviewer_2_label")?,
                label_of(&row.adjudicated_label, "adjudicated_label")?,
                stance_of(&row.reviewer_1_stance, "reviewer_1_stance")?,
                stance_of(&row.reviewer_2_stance, "reviewer_2_stance")?,
                stance_of(&row.adjudicated_stance, "adjudicated_stance")?,
            ))
        })();
        let (l1, l2, la, s1, s2, sa) = match parsed {
            Ok(p) => p,
            Err(p) => {
                out.problems.push(p);
                continue;
            }
        };
        if [l1, l2, la, s1, s2, sa].iter().all(Option::is_none) {
            continue;
        }
        let Some(&i) = index.get(row.pair_id.trim()) else {
            out.problems.push(problem(
                "review_unknown_pair",
                format!("no label row with id `{}`", row.pair_id),
            ));
            continue;
        };
        out.reviewed += 1;
        if let (Some(a), Some(b)) = (l1, l2) {
            rr_label.push((a, b));
        }
        if let (Some(a), Some(b)) = (s1, s2) {
            rr_stance.push((a, b));
        }
        let human_label = resolve(l1, l2, la);
        let human_stance = resolve(s1, s2, sa);
        if human_label.is_err() || human_stance.is_err() {
            out.unresolved += 1;
        }
        let human_label = human_label.ok().flatten();
        let human_stance = human_stance.ok().flatten();
        let l = &mut labels[i];
        if let (Some(h), Some(m)) = (
            human_label,
            l.model_label.as_deref().and_then(|m| preset.normalise(m)),
        ) {
            mh_label.push((m, h));
        }
        if let (Some(h), Some(m)) = (human_stance, l.stance_majority.as_deref()) {
            mh_stance.push((parse_stance(m).map_or("", |s| s.as_str()), h));
        }
        if human_label.is_none() && human_stance.is_none() {
            continue;
        }
        if let Some(h) = human_label {
            l.label = Some(h.to_string());
        }
        if let Some(h) = human_stance {
            l.stance = Some(h.to_string());
        }
        l.label_source = "human".into();
        l.provenance = format!("human:{sheet_name}; model: {}", l.provenance);
        out.applied += 1;
    }
    out.model_vs_human_label = Agreement::of(&mh_label);
    out.model_vs_human_stance = Agreement::of(&mh_stance);
    out.reviewers_label = Agreement::of(&rr_label);
    out.reviewers_stance = Agreement::of(&rr_stance);
    out
}

/// The review sheet's file name in the stage directory.
pub const REVIEW_SHEET: &str = "review_sheet.csv";

/// Write the review sheet into the stage directory, when `review.export` asks for it.
pub(crate) fn export_sheet(
    config: &ReviewConfig,
    ctx: &StageContext,
    claims: &[Claim],
    documents: &[Document],
    labels: &[ClaimDocumentLabel],
) -> Result<(), StageError> {
    if !config.export {
        return Ok(());
    }
    std::fs::create_dir_all(&ctx.stage_dir).map_err(|source| StageError::Io {
        path: ctx.stage_dir.clone(),
        source,
    })?;
    let rows = review_sheet(
        claims,
        documents,
        labels,
        config.excerpt_chars,
        config.per_stratum,
    );
    let path = ctx.stage_dir.join(REVIEW_SHEET);
    write_sheet(&path, &rows).map_err(|e| StageError::Other(e.to_string()))
}

/// Apply the filled-in sheet of `review.import`, if any, to `labels` (its labels take
/// precedence); each sheet row that cannot be applied is recorded in `drops`.
pub(crate) fn import_sheet(
    config: &ReviewConfig,
    preset: LabelPreset,
    ctx: &StageContext,
    labels: &mut [ClaimDocumentLabel],
    drops: &mut Drops,
) -> Result<Option<ReviewOutcome>, StageError> {
    let Some(path) = &config.import else {
        return Ok(None);
    };
    let sheet = read_sheet(&ctx.resolve(path))
        .map_err(|e| ConfigError::new("review.import", e.to_string()))?;
    let outcome = apply_review(labels, &sheet, preset, &path.display().to_string());
    for p in &outcome.problems {
        drops.add_failure(format!("review:{}", p.pair_id), p.reason, p.detail.clone());
    }
    Ok(Some(outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sheet_lists_the_sampled_pairs_in_label_order() {
        let claims: Vec<Claim> = ["true", "false"]
            .iter()
            .enumerate()
            .map(|(i, v)| Claim {
                id: format!("c{i}"),
                verdict: v.to_string(),
                ..Default::default()
            })
            .collect();
        let labels: Vec<ClaimDocumentLabel> = (0..40)
            .map(|i| ClaimDocumentLabel {
                id: format!("pair_{i:02}"),
                claim_id: format!("c{}", i % 2),
                document_id: format!("d{i}"),
                label: Some(["supporting", "misleading"][i / 20].into()),
                ..Default::default()
            })
            .collect();
        let rows = review_sheet(&claims, &[], &labels, 10, 3);
        assert_eq!(rows.len(), 4 * 3);
        let expected: Vec<&str> = {
            let sampled: BTreeSet<&str> = sample_labels(&claims, &labels, 3)
                .iter()
                .flat_map(|s| s.items.iter().map(|l| l.id.as_str()))
                .collect();
            labels
                .iter()
                .map(|l| l.id.as_str())
                .filter(|id| sampled.contains(id))
                .collect()
        };
        let ids: Vec<&str> = rows.iter().map(|r| r.pair_id.as_str()).collect();
        assert_eq!(ids, expected);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "label order");
        assert_eq!(review_sheet(&claims, &[], &labels, 10, 0).len(), 40);
    }

    #[test]
    fn resolution_rules() {
        assert_eq!(resolve(Some(1), None, None), Ok(Some(1)));
        assert_eq!(resolve(None, Some(2), None), Ok(Some(2)));
        assert_eq!(resolve(Some(1), Some(1), None), Ok(Some(1)));
        assert_eq!(resolve(Some(1), Some(2), None), Err(()));
        assert_eq!(resolve(Some(1), Some(2), Some(2)), Ok(Some(2)));
        assert_eq!(resolve::<i32>(None, None, None), Ok(None));
    }
}
