//! The in-memory tables every loader fills and every task reads: claims with their documents
//! (RAGuard, CONF-FACT, our claims track) and questions with their chunks (RARE, our report
//! track). One shape whatever the input format, so a task never knows where its items came from.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where an evaluation's items came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// A published snapshot of ours (a version folder).
    Snapshot,
    /// RAGuard's `claims.csv` + `documents.csv`.
    Raguard,
    /// CONF-FACT: the release's gzip'd pickles (`HumC.pkl.gz`, `ModC.pkl.gz`) or a JSON list of
    /// instances, with the credibility pickles beside them.
    Confact,
    /// RARE's record files (`<domain>_single_hop...json`, `<domain>_multi_hop_perturbed.json`,
    /// the generator's `rag_*_dataset.json` and checkpoint files), with its retrieval results.
    Rare,
}

impl SourceFormat {
    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::Snapshot => "snapshot",
            SourceFormat::Raguard => "raguard",
            SourceFormat::Confact => "confact",
            SourceFormat::Rare => "rare",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Snapshot, Self::Raguard, Self::Confact, Self::Rare]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// A document's role for its claim (RAGuard 3.3): it leads the exam to the gold verdict, away
/// from it, or to no verdict. RAGuard's release says `unrelated` for `irrelevant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocLabel {
    Supporting,
    Misleading,
    Irrelevant,
}

impl DocLabel {
    pub fn as_str(self) -> &'static str {
        match self {
            DocLabel::Supporting => "supporting",
            DocLabel::Misleading => "misleading",
            DocLabel::Irrelevant => "irrelevant",
        }
    }

    /// `supporting`, `misleading`, `irrelevant` or `unrelated` (any case, trimmed).
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "supporting" | "support" => Some(DocLabel::Supporting),
            "misleading" => Some(DocLabel::Misleading),
            "irrelevant" | "unrelated" => Some(DocLabel::Irrelevant),
            _ => None,
        }
    }
}

/// A claim to fact-check, with its binary verdict and the documents associated with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalClaim {
    pub id: String,
    /// The claim as stated.
    pub text: String,
    /// CONF-FACT's yes/no question for the claim, when there is one.
    pub question: Option<String>,
    /// The binary verdict: true = the claim holds (RAGuard "True", CONF-FACT "Supported"/"Yes").
    pub verdict: bool,
    /// The fact-checker's own rating, when known (`half-true`).
    pub original_verdict: Option<String>,
    /// Ids of the documents associated with the claim, in the release's order.
    pub documents: Vec<String>,
    pub claim_date: Option<String>,
}

/// Source credibility of a document (CONF-FACT 4.3): a level, a score in (0, 1), a background
/// text describing the source; any may be missing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Credibility {
    /// `high`, `medium` or `low`.
    pub level: Option<String>,
    pub score: Option<f64>,
    /// What is known of the source (media name, type, credibility notes).
    pub background: Option<String>,
}

impl Credibility {
    /// Whether anything is known of the source.
    pub fn is_known(&self) -> bool {
        self.level.as_deref().is_some_and(|l| !l.trim().is_empty())
            || self.score.is_some()
            || self
                .background
                .as_deref()
                .is_some_and(|b| !b.trim().is_empty())
    }
}

/// A document: evidence for one claim (RAGuard, CONF-FACT) or a corpus entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalDocument {
    pub id: String,
    /// The claim the document is associated with, if any.
    pub claim_id: Option<String>,
    pub title: String,
    pub text: String,
    /// Its label for its claim, when the release has one.
    pub label: Option<DocLabel>,
    pub url: Option<String>,
    /// The source's domain (`reddit.com`, `nytimes.com`), when known.
    pub domain: Option<String>,
    pub credibility: Credibility,
}

/// A perturbed form of a question's query (RARE 5.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryVariant {
    /// `character_level`, `word_level`, `irrelevant_info`, `grammar_perturbation` (RARE's keys).
    pub kind: String,
    pub text: String,
}

/// A perturbed chunk (RARE 5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocVariant {
    /// `back_translation` (lexically different, answer kept) or `regex_delete` (lexically
    /// similar, answer removed).
    pub kind: String,
    pub chunk_id: String,
    pub text: String,
}

/// RARE's document perturbation keys.
pub(crate) const BACK_TRANSLATION: &str = "back_translation";
pub(crate) const REGEX_DELETE: &str = "regex_delete";

/// A question with its gold answer and the chunks that hold it (RARE).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalQuestion {
    pub id: String,
    pub question: String,
    pub answer: String,
    /// `single_hop`, `chained_multi_hop`, `star_shaped`, `inverted_star_shaped`.
    pub kind: String,
    /// `finance`, `economics`, `policy`, ... (`unknown` when not said).
    pub domain: String,
    pub answer_chunk_ids: Vec<String>,
    pub query_perturbations: Vec<QueryVariant>,
    pub document_perturbations: Vec<DocVariant>,
    /// Chunks real retrievers returned, best first, when the input has them (our `retrievals`
    /// table for the original query; RARE's `<domain>_retrieval_results.json` for every query
    /// and retriever); otherwise the evaluation retrieves with BM25.
    pub retrievals: Vec<RealRetrieval>,
    /// `train` or `test`, when the input says.
    pub split: Option<String>,
}

/// What one real retriever returned for one form of a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RealRetrieval {
    /// The retriever's name (`e5-large`, `bm25`, ...).
    pub retriever: String,
    /// `original`, or the query perturbation's kind (`word_level`, ...).
    pub query: String,
    /// Chunk ids, best first.
    pub chunk_ids: Vec<String>,
}

/// A corpus chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalChunk {
    pub id: String,
    pub text: String,
    pub report_id: Option<String>,
}

/// A row of an input file that could not be used, and why. Counted and reported; never fatal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BadRow {
    /// The file (name as given).
    pub file: String,
    /// The row: `line 12`, `record 3`, or an id.
    pub row: String,
    /// A short machine reason: `missing_column`, `bad_list`, `unknown_label`, `empty_document`,
    /// `unknown_claim`, `bad_verdict`, `duplicate_id`, `bad_json`, ...
    pub reason: String,
    /// What exactly was wrong, naming the column or field.
    pub detail: String,
}

/// Everything an evaluation reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalData {
    /// What is evaluated, for result rows and folders: `demo@1.0.3`, `raguard`, ...
    pub name: String,
    pub claims: Vec<EvalClaim>,
    pub documents: Vec<EvalDocument>,
    pub questions: Vec<EvalQuestion>,
    pub chunks: Vec<EvalChunk>,
    pub bad_rows: Vec<BadRow>,
    /// What the loader read and how it used it, one line each (`credibility: all_media_data.pkl,
    /// 812 domains; 40 of 52 documents matched`), for the printed load summary and
    /// `summary.json`.
    pub notes: Vec<String>,
}

impl EvalData {
    /// Bad rows counted by reason.
    pub fn bad_row_counts(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for b in &self.bad_rows {
            *out.entry(b.reason.clone()).or_insert(0) += 1;
        }
        out
    }

    /// Documents by id.
    pub fn documents_by_id(&self) -> BTreeMap<&str, &EvalDocument> {
        self.documents.iter().map(|d| (d.id.as_str(), d)).collect()
    }

    /// Documents with any credibility (a level, a score or a background).
    pub fn documents_with_credibility(&self) -> usize {
        self.documents
            .iter()
            .filter(|d| d.credibility.is_known())
            .count()
    }

    /// Chunks by id.
    pub fn chunks_by_id(&self) -> BTreeMap<&str, &EvalChunk> {
        self.chunks.iter().map(|c| (c.id.as_str(), c)).collect()
    }
}
