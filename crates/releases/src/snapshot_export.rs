//! Which tables of a published snapshot become which release: the assembly behind
//! `noisebench export`. The tables come from any [`TableSource`] (the CLI hands in a published
//! snapshot version), so this crate reads no snapshot file itself.

use std::path::Path;

use noisebench_core::{
    Claim, ClaimDocumentLabel, Document, DocumentCredibility, DocumentPerturbation, Query,
    QueryPerturbation, Question, QuestionSplit, TableRow,
};

use crate::rare_export::{Perturbations, RareSummary, export_rare};
use crate::summary::ExportSummary;

/// The formats `noisebench export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// RAGuard's `claims.csv` and `documents.csv` (plus id maps back to ours).
    Raguard,
    /// CONF-FACT-style `confact.json`.
    Confact,
    /// RARE's `rag_single_hop_dataset.json` and `rag_multi_hop_dataset.json`.
    Rare,
}

impl ExportFormat {
    /// Every format, in the order the CLI lists them.
    pub const ALL: [ExportFormat; 3] = [Self::Raguard, Self::Confact, Self::Rare];

    /// The format as the command line and `exports/<format>/` spell it.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Raguard => "raguard",
            ExportFormat::Confact => "confact",
            ExportFormat::Rare => "rare",
        }
    }

    /// The format called `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// A table source's error, or an export's: boxed, whatever its type.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Where an export's tables come from: a published snapshot version, or tables in memory.
pub trait TableSource {
    /// The table of `T`'s kind, or `None` when the source has no such table.
    fn read<T: TableRow>(&self) -> Result<Option<Vec<T>>, BoxError>;

    /// The table of `T`'s kind; a source without it is an error naming the table.
    fn require<T: TableRow>(&self) -> Result<Vec<T>, BoxError> {
        self.read::<T>()?
            .ok_or_else(|| format!("no `{}` table", T::KIND.name()).into())
    }
}

/// What an export wrote: the claims track's summary, or the RARE records'.
#[derive(Debug, Clone)]
pub enum Exported {
    Claims(ExportSummary),
    Rare(RareSummary),
}

impl Exported {
    /// One line saying what was written to `out` and what was left out (with the reasons'
    /// counts).
    pub fn describe(&self, snapshot: &Path, out: &Path) -> String {
        match self {
            Exported::Claims(s) => {
                let mut reasons: std::collections::BTreeMap<&str, usize> = Default::default();
                for skipped in &s.skipped {
                    *reasons.entry(skipped.reason).or_default() += 1;
                }
                let reasons: Vec<String> =
                    reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
                format!(
                    "{}: {} claims, {} documents written to {} ({} claims without a true/false verdict and {} label rows left out{})",
                    snapshot.display(),
                    s.claims,
                    s.documents,
                    out.display(),
                    s.claims_without_binary_verdict,
                    s.pairs_skipped(),
                    if reasons.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", reasons.join(", "))
                    }
                )
            }
            Exported::Rare(s) => format!(
                "{}: {} single-hop and {} multi-hop records written to {} ({} questions left out)",
                snapshot.display(),
                s.single_hop,
                s.multi_hop,
                out.display(),
                s.skipped.len()
            ),
        }
    }
}

/// Export a snapshot's tables in `format` into the folder `out`: RAGuard from `claims`,
/// `documents` and `labels`; CONF-FACT from those, `document_credibility` and (for its
/// questions) `queries` when present; RARE from `questions` and, when present,
/// `question_splits`, `query_perturbations` and `document_perturbations`.
pub fn export(
    source: &impl TableSource,
    format: ExportFormat,
    out: &Path,
) -> Result<Exported, BoxError> {
    match format {
        ExportFormat::Rare => {
            let questions: Vec<Question> = source.require()?;
            let splits: Vec<QuestionSplit> = source.read()?.unwrap_or_default();
            let queries: Vec<QueryPerturbation> = source.read()?.unwrap_or_default();
            let documents: Vec<DocumentPerturbation> = source.read()?.unwrap_or_default();
            let perturbations = Perturbations {
                queries: &queries,
                documents: &documents,
            };
            let summary = export_rare(&questions, &splits, perturbations, out)?;
            Ok(Exported::Rare(summary))
        }
        ExportFormat::Raguard | ExportFormat::Confact => {
            let claims: Vec<Claim> = source.require()?;
            let documents: Vec<Document> = source.require()?;
            let labels: Vec<ClaimDocumentLabel> = source.require()?;
            let summary = if format == ExportFormat::Confact {
                let credibility: Vec<DocumentCredibility> = source.require()?;
                let queries: Vec<Query> = source.read()?.unwrap_or_default();
                let path = out.join(crate::confact::EXPORT_FILE);
                crate::confact::export(&claims, &documents, &credibility, &labels, &queries, &path)?
            } else {
                crate::raguard::export(&claims, &documents, &labels, out)?
            };
            Ok(Exported::Claims(summary))
        }
    }
}
