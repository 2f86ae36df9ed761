//! `export`: a published snapshot in a paper's release format, and finding a snapshot folder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use noisebench_core::{
    Claim, ClaimDocumentLabel, Document, DocumentCredibility, DocumentPerturbation, Query,
    QueryPerturbation, Question, QuestionSplit,
};
use noisebench_snapshot::PublishedVersion;

/// A snapshot folder: a version folder as is, or a dataset folder's latest version.
pub fn resolve_snapshot(path: &Path) -> Result<PathBuf> {
    Ok(PublishedVersion::open(path)?.dir().to_path_buf())
}

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
        [Self::Raguard, Self::Confact, Self::Rare]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// What an export wrote: the claims track's summary, or the RARE records'.
#[derive(Debug, Clone)]
pub enum Exported {
    Claims(noisebench_label::ExportSummary),
    Rare(noisebench_qa::export::RareSummary),
}

impl Exported {
    /// One line saying what was written to `out` and what was left out.
    pub fn describe(&self, snapshot: &Path, out: &Path) -> String {
        match self {
            Exported::Claims(s) => format!(
                "{}: {} claims, {} documents written to {} ({} claims without a true/false verdict and {} label rows left out)",
                snapshot.display(),
                s.claims,
                s.documents,
                out.display(),
                s.claims_without_binary_verdict,
                s.pairs_skipped()
            ),
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

/// Export a published snapshot (a version folder) into `out`. Reads its `claims`, `documents`
/// and `labels` tables (and for CONF-FACT `document_credibility`, and `queries` for its
/// questions); for RARE its `questions` and, when published, `question_splits`,
/// `query_perturbations` and `document_perturbations`; each found by kind
/// ([`PublishedVersion`]).
pub fn export_snapshot(snapshot: &Path, format: ExportFormat, out: &Path) -> Result<Exported> {
    let version = PublishedVersion::open(snapshot)?;
    // RARE reads the report track's tables, the other formats the claims track's.
    let confact = match format {
        ExportFormat::Rare => {
            let questions: Vec<Question> = version.require()?;
            let splits: Vec<QuestionSplit> = version.read()?.unwrap_or_default();
            let queries: Vec<QueryPerturbation> = version.read()?.unwrap_or_default();
            let documents: Vec<DocumentPerturbation> = version.read()?.unwrap_or_default();
            let summary = noisebench_qa::export::export_rare(
                &questions,
                &splits,
                noisebench_qa::export::Perturbations {
                    queries: &queries,
                    documents: &documents,
                },
                out,
            )?;
            return Ok(Exported::Rare(summary));
        }
        ExportFormat::Raguard => false,
        ExportFormat::Confact => true,
    };
    let claims: Vec<Claim> = version.require()?;
    let documents: Vec<Document> = version.require()?;
    let labels: Vec<ClaimDocumentLabel> = version.require()?;
    let summary = if confact {
        let credibility: Vec<DocumentCredibility> = version.require()?;
        let queries: Vec<Query> = version.read()?.unwrap_or_default();
        std::fs::create_dir_all(out).with_context(|| out.display().to_string())?;
        noisebench_label::export_confact(
            &claims,
            &documents,
            &credibility,
            &labels,
            &queries,
            &out.join(noisebench_label::CONFACT_FILE),
        )?
    } else {
        noisebench_label::export_raguard(&claims, &documents, &labels, out)?
    };
    Ok(Exported::Claims(summary))
}
