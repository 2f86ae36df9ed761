//! What an export from the claims track wrote and left out, shared by the RAGuard and
//! CONF-FACT writers: [`ExportSummary`], [`SkippedPair`], [`ExportError`], and the grouping of
//! label rows per claim both exports start from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use noisebench_core::{Claim, ClaimDocumentLabel, Document};
use serde::Serialize;

/// Writing or reading a release file failed; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Csv { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Decode { path: PathBuf, message: String },
}

impl ExportError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        ExportError::Io {
            path: path.into(),
            source,
        }
    }
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExportSummary {
    pub claims: usize,
    pub documents: usize,
    /// Claims left out because their verdict is not true/false.
    pub claims_without_binary_verdict: usize,
    /// Label rows left out, each with its reason: no label, a missing claim or document, a
    /// claim whose verdict is not true/false, a document with no text.
    pub skipped: Vec<SkippedPair>,
    pub files: Vec<PathBuf>,
}

impl ExportSummary {
    /// How many label rows were left out.
    pub fn pairs_skipped(&self) -> usize {
        self.skipped.len()
    }

    pub(crate) fn skip(
        &mut self,
        label: &ClaimDocumentLabel,
        reason: &'static str,
        detail: String,
    ) {
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
    /// `no_label`, `unknown_claim`, `unknown_document`, `claim_verdict_not_binary` or
    /// (CONF-FACT, whose evidence is its text) `empty_document`.
    pub reason: &'static str,
    pub detail: String,
}

/// A claim's verdict as true/false, `None` for any other verdict.
pub(crate) fn binary(verdict: &str) -> Option<bool> {
    match verdict.trim().to_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Label rows grouped per claim, in `labels` order, keeping rows whose claim (with a true/false
/// verdict) and document exist and that `usable` accepts (else `Err(reason, detail)`); every
/// other row is skipped with its reason.
pub(crate) fn pairs_by_claim<'a>(
    labels: &'a [ClaimDocumentLabel],
    docs: &BTreeMap<&str, &'a Document>,
    claims: &BTreeMap<&str, &Claim>,
    usable: impl Fn(&ClaimDocumentLabel, &Document) -> Result<(), (&'static str, String)>,
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
        if let Err((reason, detail)) = usable(l, doc) {
            summary.skip(l, reason, detail);
            continue;
        }
        out.entry(l.claim_id.as_str()).or_default().push((l, *doc));
    }
    out
}

/// Create a folder (and its parents), naming it on failure.
pub(crate) fn create_dir(dir: &Path) -> Result<(), ExportError> {
    std::fs::create_dir_all(dir).map_err(|e| ExportError::io(dir, e))
}

/// The claims track's tables every claims-track format reads: `claims`, `documents`, `labels`.
pub(crate) fn claims_track_inputs() -> Vec<noisebench_core::InputSpec> {
    use noisebench_core::{InputSpec, TableKind};
    vec![
        InputSpec::required("claims", TableKind::Claims),
        InputSpec::required("documents", TableKind::Documents),
        InputSpec::required("labels", TableKind::Labels),
    ]
}

/// What [`crate::rare_export::export_rare`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RareSummary {
    pub single_hop: usize,
    pub multi_hop: usize,
    /// Questions left out, each `(id, reason, detail)`: only a kind RARE has no file for.
    pub skipped: Vec<(String, &'static str, String)>,
    pub files: Vec<PathBuf>,
}
