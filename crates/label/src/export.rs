//! Exports in the shapes of the published datasets, as pure functions over typed rows.
//!
//! RAGuard (`claims.csv`, `documents.csv`; REFERENCE.md): integer ids, documents numbered
//! contiguously within each claim, list columns written as Python literals (`[16118, 16119]`,
//! `['unrelated', 'misleading']`) so the release's loaders (`ast.literal_eval`, join on
//! `Claim ID`) read them; `claim_id_map.csv` and `document_id_map.csv` map the integers back to
//! our ids. A RAGuard document row is a claim-document pair: a page found for two claims appears
//! twice, under two ids, as in the release.
//!
//! CONFACT (`confact.json`): one object per claim with its evidence list, each evidence with the
//! three stance votes and the majority, its source's credibility and type (from the labels
//! stage's `document_credibility`), labels written exactly (`Supported`, never `Supported `).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_core::{Claim, ClaimDocumentLabel, Document, DocumentCredibility, Query};
use serde::Serialize;

use crate::exam::LabelPreset;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Csv { path: PathBuf, message: String },
}

/// The files `export_raguard` writes into its folder.
pub const RAGUARD_FILES: [&str; 4] = [
    "claims.csv",
    "documents.csv",
    "claim_id_map.csv",
    "document_id_map.csv",
];

/// The file `export_confact` writes (the stage writes it into its folder).
pub const CONFACT_FILE: &str = "confact.json";

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExportSummary {
    pub claims: usize,
    pub documents: usize,
    /// Claims left out because their verdict is not true/false.
    pub claims_without_binary_verdict: usize,
    /// Label rows left out, each with its reason: no label, a missing claim or document, a
    /// claim whose verdict is not true/false.
    pub skipped: Vec<SkippedPair>,
    pub files: Vec<PathBuf>,
}

impl ExportSummary {
    /// How many label rows were left out.
    pub fn pairs_skipped(&self) -> usize {
        self.skipped.len()
    }

    fn skip(&mut self, label: &ClaimDocumentLabel, reason: &'static str, detail: String) {
        self.skipped.push(SkippedPair {
            label_id: label.id.clone(),
            reason,
            detail,
        });
    }
}

/// A label row an export left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedPair {
    pub label_id: String,
    /// `no_label`, `unknown_claim`, `unknown_document` or `claim_verdict_not_binary`.
    pub reason: &'static str,
    pub detail: String,
}

/// A string as a Python literal (single quotes, backslash escapes), as `repr` would read back.
pub fn py_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A list as a Python literal: `[1, 2]`, `['a', 'b']`, `[]`.
pub fn py_list<I: IntoIterator<Item = String>>(items: I) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(", "))
}

/// A rating slug as the RAGuard release writes it (`barely-true` -> `mostly-false`,
/// `pants-fire` -> `pants-on-fire`).
pub fn raguard_original_verdict(rating: &str) -> String {
    let slug = rating
        .trim()
        .to_lowercase()
        .replace(['_', ' '], "-")
        .replace('!', "");
    match slug.as_str() {
        "barely-true" => "mostly-false".into(),
        "pants-fire" | "pants-on-fire" => "pants-on-fire".into(),
        _ => slug,
    }
}

fn binary(verdict: &str) -> Option<bool> {
    match verdict.trim().to_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Label rows grouped per claim, in `labels` order, keeping rows whose claim (with a true/false
/// verdict) and document exist and that `usable` accepts; every other row is skipped with its
/// reason.
fn pairs_by_claim<'a>(
    labels: &'a [ClaimDocumentLabel],
    docs: &BTreeMap<&str, &'a Document>,
    claims: &BTreeMap<&str, &Claim>,
    usable: impl Fn(&ClaimDocumentLabel) -> bool,
    summary: &mut ExportSummary,
) -> BTreeMap<&'a str, Vec<(&'a ClaimDocumentLabel, &'a Document)>> {
    let mut out: BTreeMap<&str, Vec<_>> = BTreeMap::new();
    for l in labels {
        let Some(claim) = claims.get(l.claim_id.as_str()) else {
            summary.skip(
                l,
                "unknown_claim",
                format!("claim `{}` is not in the claims input", l.claim_id),
            );
            continue;
        };
        let Some(doc) = docs.get(l.document_id.as_str()) else {
            summary.skip(
                l,
                "unknown_document",
                format!("document `{}` is not in the documents input", l.document_id),
            );
            continue;
        };
        if binary(&claim.verdict).is_none() {
            summary.skip(
                l,
                "claim_verdict_not_binary",
                format!("claim `{}` has verdict `{}`", claim.id, claim.verdict),
            );
            continue;
        }
        if !usable(l) {
            summary.skip(l, "no_label", "the label row has no label to export".into());
            continue;
        }
        out.entry(l.claim_id.as_str()).or_default().push((l, *doc));
    }
    out
}

fn csv_writer(path: &Path) -> Result<csv::Writer<std::fs::File>, ExportError> {
    csv::Writer::from_path(path).map_err(|e| ExportError::Csv {
        path: path.into(),
        message: e.to_string(),
    })
}

fn write_rows(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<(), ExportError> {
    let mut w = csv_writer(path)?;
    let err = |e: csv::Error| ExportError::Csv {
        path: path.into(),
        message: e.to_string(),
    };
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(r).map_err(err)?;
    }
    w.flush().map_err(|source| ExportError::Io {
        path: path.into(),
        source,
    })
}

/// Write RAGuard-compatible `claims.csv` and `documents.csv` (plus the id maps) into `dir`.
///
/// Claims keep their order in `claims`; those without a true/false verdict are left out (and
/// counted). Documents keep the order of `labels` within a claim. Labels are written with the
/// release's words (`unrelated` for irrelevant). Rows with no label are left out (counted).
pub fn export_raguard(
    claims: &[Claim],
    documents: &[Document],
    labels: &[ClaimDocumentLabel],
    dir: &Path,
) -> Result<ExportSummary, ExportError> {
    std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
        path: dir.into(),
        source,
    })?;
    let docs: BTreeMap<&str, &Document> = documents.iter().map(|d| (d.id.as_str(), d)).collect();
    let claim_index: BTreeMap<&str, &Claim> = claims.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut summary = ExportSummary::default();
    let by_claim = pairs_by_claim(
        labels,
        &docs,
        &claim_index,
        |l| l.label.is_some(),
        &mut summary,
    );
    let (mut claim_rows, mut doc_rows, mut claim_map, mut doc_map) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut next_doc: u64 = 0;
    let mut next_claim: u64 = 0;
    for claim in claims {
        let Some(is_true) = binary(&claim.verdict) else {
            // Its label rows were skipped in `pairs_by_claim`.
            summary.claims_without_binary_verdict += 1;
            continue;
        };
        let claim_no = next_claim;
        next_claim += 1;
        let pairs = by_claim.get(claim.id.as_str()).cloned().unwrap_or_default();
        let mut ids = Vec::new();
        let mut words = Vec::new();
        for (label, doc) in pairs {
            let doc_no = next_doc;
            next_doc += 1;
            let word = label
                .label
                .as_deref()
                .and_then(|l| LabelPreset::Raguard.normalise(l))
                .unwrap_or("unrelated");
            ids.push(doc_no.to_string());
            words.push(py_str(word));
            doc_rows.push(vec![
                doc_no.to_string(),
                doc.title.clone().unwrap_or_default(),
                doc.text.clone(),
                claim_no.to_string(),
                word.to_string(),
                doc.url.clone(),
            ]);
            doc_map.push(vec![
                doc_no.to_string(),
                claim_no.to_string(),
                claim.id.clone(),
                doc.id.clone(),
                label.id.clone(),
            ]);
        }
        claim_rows.push(vec![
            claim_no.to_string(),
            claim.text.clone(),
            if is_true { "True" } else { "False" }.to_string(),
            py_list(ids),
            py_list(words),
            raguard_original_verdict(&claim.original_rating),
        ]);
        claim_map.push(vec![claim_no.to_string(), claim.id.clone()]);
    }
    summary.claims = claim_rows.len();
    summary.documents = doc_rows.len();
    let files = [
        (
            RAGUARD_FILES[0],
            &[
                "Claim ID",
                "Claim",
                "Verdict",
                "Document IDs",
                "Document Labels",
                "Original Verdict",
            ][..],
            &claim_rows,
        ),
        (
            RAGUARD_FILES[1],
            &[
                "Document ID",
                "Title",
                "Full Text",
                "Claim ID",
                "Document Label",
                "Link",
            ][..],
            &doc_rows,
        ),
        (RAGUARD_FILES[2], &["Claim ID", "claim_id"][..], &claim_map),
        (
            RAGUARD_FILES[3],
            &[
                "Document ID",
                "Claim ID",
                "claim_id",
                "document_id",
                "label_id",
            ][..],
            &doc_map,
        ),
    ];
    for (name, header, rows) in files {
        let path = dir.join(name);
        write_rows(&path, header, rows)?;
        summary.files.push(path);
    }
    Ok(summary)
}

fn confact_stance(s: Option<&str>) -> Option<&'static str> {
    match s? {
        "support" => Some("Support"),
        "reject" => Some("Reject"),
        "not enough evidence" => Some("Not enough evidence"),
        _ => None,
    }
}

#[derive(Serialize)]
struct Evidence {
    evidence_id: String,
    original_link: String,
    content: String,
    url_prompt: Option<&'static str>,
    text_prompt: Option<&'static str>,
    reasoned_prompt: Option<&'static str>,
    majority_vote: Option<&'static str>,
    label: Option<String>,
    label_source: String,
    credibility: Option<String>,
    source_type: String,
    document_id: String,
}

#[derive(Serialize)]
struct Instance {
    id: u64,
    claim: String,
    label: &'static str,
    claim_date: Option<String>,
    review_date: Option<String>,
    country: Option<String>,
    question: Option<String>,
    original_claim_url: Option<String>,
    fact_checking_article: Option<String>,
    model_conflict: bool,
    human_conflict: Option<bool>,
    claim_id: String,
    evidence_url: Vec<Evidence>,
}

/// Write CONFACT-style `confact.json` (an array, one object per claim with a true/false verdict)
/// to `path`. `credibility` (the labels stage's `document_credibility`) gives each evidence's
/// credibility and source type (a document without a row: no credibility, its own source type);
/// `queries` gives each claim's yes/no question (the first `question` query).
pub fn export_confact(
    claims: &[Claim],
    documents: &[Document],
    credibility: &[DocumentCredibility],
    labels: &[ClaimDocumentLabel],
    queries: &[Query],
    path: &Path,
) -> Result<ExportSummary, ExportError> {
    let docs: BTreeMap<&str, &Document> = documents.iter().map(|d| (d.id.as_str(), d)).collect();
    let rated: BTreeMap<&str, &DocumentCredibility> = credibility
        .iter()
        .map(|c| (c.document_id.as_str(), c))
        .collect();
    let claim_index: BTreeMap<&str, &Claim> = claims.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut summary = ExportSummary::default();
    let by_claim = pairs_by_claim(
        labels,
        &docs,
        &claim_index,
        |l| l.label.is_some() || l.stance.is_some(),
        &mut summary,
    );
    let mut questions: BTreeMap<&str, &str> = BTreeMap::new();
    for q in queries.iter().filter(|q| q.kind == "question") {
        questions
            .entry(q.claim_id.as_str())
            .or_insert(q.text.as_str());
    }
    let mut out = Vec::new();
    for claim in claims {
        let Some(is_true) = binary(&claim.verdict) else {
            summary.claims_without_binary_verdict += 1;
            continue;
        };
        let id = out.len() as u64 + 1;
        let pairs = by_claim.get(claim.id.as_str()).cloned().unwrap_or_default();
        let has = |f: &dyn Fn(&ClaimDocumentLabel) -> bool| pairs.iter().any(|(l, _)| f(l));
        let reviewed = has(&|l| l.label_source == "human");
        let evidence: Vec<Evidence> = pairs
            .iter()
            .enumerate()
            .map(|(k, (l, d))| Evidence {
                evidence_id: format!("{id}_{}", k + 1),
                original_link: d.url.clone(),
                content: d.text.clone(),
                url_prompt: confact_stance(l.stance_url.as_deref()),
                text_prompt: confact_stance(l.stance_text.as_deref()),
                reasoned_prompt: confact_stance(l.stance_reasoned.as_deref()),
                majority_vote: confact_stance(l.stance.as_deref()),
                label: l.label.clone(),
                label_source: l.label_source.clone(),
                credibility: rated.get(d.id.as_str()).and_then(|c| c.credibility.clone()),
                source_type: rated
                    .get(d.id.as_str())
                    .map_or(&d.source_type, |c| &c.source_type)
                    .clone(),
                document_id: d.id.clone(),
            })
            .collect();
        summary.documents += evidence.len();
        out.push(Instance {
            id,
            claim: claim.text.clone(),
            label: if is_true { "Supported" } else { "Refuted" },
            claim_date: claim.claim_date.clone(),
            review_date: claim.review_date.clone(),
            country: claim.country.clone(),
            question: questions.get(claim.id.as_str()).map(|q| q.to_string()),
            original_claim_url: claim.original_url.clone(),
            fact_checking_article: claim.url.clone(),
            model_conflict: has(&|l| l.stance_majority.as_deref() == Some("support"))
                && has(&|l| l.stance_majority.as_deref() == Some("reject")),
            human_conflict: reviewed.then(|| {
                has(&|l| l.label_source == "human" && l.stance.as_deref() == Some("support"))
                    && has(&|l| l.label_source == "human" && l.stance.as_deref() == Some("reject"))
            }),
            claim_id: claim.id.clone(),
            evidence_url: evidence,
        });
    }
    summary.claims = out.len();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ExportError::Io {
            path: parent.into(),
            source,
        })?;
    }
    let json = serde_json::to_vec_pretty(&out).map_err(|e| ExportError::Io {
        path: path.into(),
        source: std::io::Error::other(e),
    })?;
    std::fs::write(path, json).map_err(|source| ExportError::Io {
        path: path.into(),
        source,
    })?;
    summary.files.push(path.into());
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals() {
        assert_eq!(
            py_list(["16118".to_string(), "16119".to_string()]),
            "[16118, 16119]"
        );
        assert_eq!(
            py_list(["unrelated", "misleading"].map(py_str)),
            "['unrelated', 'misleading']"
        );
        assert_eq!(py_list(Vec::<String>::new()), "[]");
        assert_eq!(py_str("it's \\ ok"), r"'it\'s \\ ok'");
        assert_eq!(raguard_original_verdict("barely-true"), "mostly-false");
        assert_eq!(raguard_original_verdict("Pants on Fire!"), "pants-on-fire");
        assert_eq!(raguard_original_verdict("half-true"), "half-true");
    }
}
