//! A snapshot's report: one self-contained static HTML page (inline CSS, inline SVG figures drawn
//! with `plotters`' SVG backend) that shows what a published version holds, for a reviewer who
//! would rather look than read Parquet.
//!
//! [`ReportData`] is everything the page shows, already aggregated (counts, the values a
//! histogram bins, small tables); [`render`] turns it into the page. The page always has every
//! section of [`SECTION_IDS`], in that order, each saying "no data" when the snapshot has none
//! (a claims-only snapshot has no report track), and every figure has a caption saying what it
//! counts.
//!
//! What this crate is not: it reads no files (the cli's `report` module reads a version's
//! manifest, tables, card, changes and evaluation results and fills [`ReportData`]), it writes
//! nothing, and the page loads nothing: no script, font, image or style from anywhere else, so it
//! opens the same offline, from an archive or an email attachment.

mod figures;
mod html;

use std::collections::BTreeMap;

pub use html::render;

/// The `id` of every `<section>` of the page, in page order.
pub const SECTION_IDS: [&str; 13] = [
    "overview",
    "funnel",
    "labels",
    "documents",
    "credibility",
    "chunks",
    "graph",
    "patterns",
    "questions",
    "perturbations",
    "retrieval",
    "evals",
    "changes",
];

/// Everything the page shows, aggregated. Maps are ordered, so the same data renders the same
/// bytes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportData {
    pub overview: Overview,
    /// The run's stages in the order they ran; `None` when the version does not record them.
    pub stages: Option<Vec<StageFunnel>>,
    /// Labelled claim-document pairs: claim verdict -> label -> pairs (RAGuard Table 3a).
    pub labels: BTreeMap<String, BTreeMap<String, u64>>,
    /// Per claim, the number of documents retrieved for it (claims without any count as 0).
    pub documents_per_claim: Vec<f64>,
    /// Per document, its text's length in words.
    pub document_words: Vec<f64>,
    /// Documents by credibility level (`none` when unrated).
    pub credibility: BTreeMap<String, u64>,
    /// Documents by source type.
    pub source_types: BTreeMap<String, u64>,
    /// Per chunk, its token count.
    pub chunk_tokens: Vec<f64>,
    pub graph: Graph,
    /// Patterns: pattern kind -> report domain -> patterns (RARE Table 7).
    pub patterns: BTreeMap<String, BTreeMap<String, u64>>,
    /// Kept questions: kind -> split -> questions (`unsplit` for a question without a split).
    pub questions: BTreeMap<String, BTreeMap<String, u64>>,
    /// Judge scores: dimension (`clarity`, `correctness`, `reasonableness`) -> score -> questions.
    pub judge_scores: BTreeMap<String, BTreeMap<i64, u64>>,
    /// `query_perturbations.similarity`, one value per perturbed query.
    pub query_similarity: Vec<f64>,
    /// Perturbed queries by kind.
    pub query_perturbation_kinds: BTreeMap<String, u64>,
    /// `document_perturbations.similarity`, one value per perturbed chunk that has one.
    pub document_similarity: Vec<f64>,
    /// Perturbed chunks by kind.
    pub document_perturbation_kinds: BTreeMap<String, u64>,
    /// The `retrieval_metrics` table's rows.
    pub retrieval: Vec<MetricRow>,
    /// Evaluation results: accuracy and robustness rows of group `all`, per evaluation run.
    pub evals: Vec<EvalRow>,
    /// The changes against the parent (`changes.json`); `None` when the version has none.
    pub changes: Option<Changes>,
}

/// Who the version is and what it holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overview {
    pub dataset: String,
    pub version: String,
    pub parent: Option<String>,
    pub created_at: String,
    pub pipeline: String,
    pub code_version: String,
    /// Rows per published table, by table name.
    pub tables: BTreeMap<String, u64>,
    /// The parent version's rows per table, when the parent is published beside this version.
    pub parent_tables: Option<BTreeMap<String, u64>>,
}

/// One stage's funnel: items in, out, and dropped by reason.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageFunnel {
    pub id: String,
    pub kind: String,
    pub items_in: i64,
    pub items_out: i64,
    pub dropped: i64,
    pub drop_reasons: BTreeMap<String, i64>,
}

/// The knowledge graph's build: triplets, grounding, merges.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    /// Triplets per report id.
    pub triplets_per_report: BTreeMap<String, u64>,
    /// Share of extracted triplets grounded in their chunk, when the triplets stage recorded it.
    pub grounding_rate: Option<f64>,
    /// Relation merges: distinct relations before and after, when the graph stage recorded them.
    pub relations_before_after: Option<(i64, i64)>,
    /// Entities in the `entities` table, and how many of them occur in more than one report.
    pub entities: u64,
    pub cross_report_entities: u64,
    /// Alias merges (`aliases` table): kind -> rule -> aliases.
    pub aliases: BTreeMap<String, BTreeMap<String, u64>>,
}

/// A row of a metrics table (retrieval metrics).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricRow {
    pub scope: String,
    pub group: String,
    pub metric: String,
    pub k: Option<i64>,
    pub value: f64,
    pub n: i64,
}

/// An evaluation result row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EvalRow {
    /// The evaluation run (its folder under `evals/<dataset>@<version>/`).
    pub run: String,
    pub task: String,
    pub metric: String,
    pub value: f64,
    pub ci: Option<(f64, f64)>,
    pub n: i64,
}

/// The version's changes against its parent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub from: Option<String>,
    pub tables: Vec<TableChange>,
}

/// One table's changes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableChange {
    pub table: String,
    pub rows_before: u64,
    pub rows_after: u64,
    pub added: u64,
    pub removed: u64,
    pub changed: u64,
    /// `added` or `removed` when the whole table is new or gone.
    pub table_status: Option<String>,
}
