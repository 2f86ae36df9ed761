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
//! Beside the aggregates, the page shows sampled items end to end (`items`: a claim with its
//! queries, documents, labels and votes; a question with its chunks, pattern, judgement,
//! perturbations and retrieval; dropped items with their reason), chosen by core's
//! `stratified_sample`, the choice the labels stage's review sheet makes too.
//!
//! The crate builds its own data: `report_data` (feature `read`, module `read`) reads a published
//! version (its manifest with the run's stage counts and facts, its tables typed through
//! `noisebench_snapshot::PublishedVersion`, `changes.json`, the parent's manifest, the run
//! folder's drops, evaluation results) and `aggregate` counts, pure over the typed rows. Without
//! the feature it reads nothing and needs no Parquet reader (no polars), for rendering and its
//! tests.
//!
//! What this crate is not: it writes nothing (the cli writes the page where it belongs), and the
//! page loads nothing: no script, font, image or style from anywhere else (it has no script at
//! all: items fold with `<details>`), so it opens the same offline, from an archive or an email
//! attachment.
//!
//! # Modules
//!
//! A snapshot's report page. `ReportData` (aggregated counts, histogram values, tables) -> `render`
//! -> one self-contained HTML string (inline CSS, inline SVG from plotters' SVG backend, bars drawn
//! as rectangles so the bytes are the same every run, category names turned a quarter when they
//! would not fit side by side; no script, items fold with `<details>`, nothing loaded from
//! elsewhere). `items.rs` (`sample_items` over `ItemRows`, the version's typed rows: the sampled
//! claim-document pairs, questions and drops with everything about each, source sentences located
//! in their chunks, word diffs of perturbed chunks), `samples.rs` (their sections, texts escaped
//! and cut, each item's `noisebench inspect` command). `aggregate.rs` turns a version's typed rows
//! (`VersionRows`) into the page's counts, pure; `read.rs` (feature `read`, which brings snapshot
//! and pipeline, so polars: the cli turns it on) is `report_data`, filling `ReportData` from a
//! published version (its tables through `PublishedVersion::read`, its manifest with the run's
//! stage counts, `changes.json`, the parent's manifest, `evals/`, and the drops of the run folder
//! that built it while that folder still holds every published table). It writes no files: the
//! cli's `report.rs` writes `snapshots/<dataset>/<version>.report.html`. `figures.rs` draws the bar
//! charts and histograms into SVG strings; `html.rs` is the page (CSS, one section per part, tables
//! sorted for reading); `escape.rs`, the one HTML escaping rule the page, figures and samples
//! share. Invariant: the page loads nothing from elsewhere, and the same data gives the same bytes.

// Without the `read` feature nothing but the tests gathers rows: aggregating and sampling are
// `read`'s work.
#[cfg_attr(not(feature = "read"), allow(dead_code))]
mod aggregate;
mod escape;
mod figures;
mod html;
#[cfg_attr(not(feature = "read"), allow(dead_code))]
mod items;
#[cfg(feature = "read")]
mod read;
mod samples;

use std::collections::BTreeMap;

pub use html::render;
pub use items::{SampleStratum, Samples};
#[cfg(feature = "read")]
pub use read::{EvalResults, ReadError, report_data};

/// The `id` of every `<section>` of the page, in page order.
pub const SECTION_IDS: [&str; 17] = [
    "overview",
    "quality",
    "funnel",
    "drop-items",
    "labels",
    "documents",
    "credibility",
    "claim-items",
    "chunks",
    "graph",
    "patterns",
    "questions",
    "perturbations",
    "retrieval",
    "question-items",
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
    /// Sampled items shown end to end (`items::sample_items`).
    pub samples: Samples,
    /// The quality card's headline numbers (`quality.json`), `(measure, value)`; empty when the
    /// version has none.
    pub quality: Vec<(String, String)>,
    /// The LLM quote made before the build beside what the build's calls used
    /// (`provenance.llm.quote`: per stage and task, then the total); empty when the build did
    /// not quote (no priced model).
    pub quote: Vec<QuoteLine>,
}

/// One stage and task's quoted and actual LLM use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuoteLine {
    pub stage: String,
    pub task: String,
    pub projected: bool,
    pub calls: (u64, u64),
    pub input_tokens: (u64, u64),
    pub cached_input_tokens: (u64, u64),
    pub output_tokens: (u64, u64),
    pub usd: (f64, f64),
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
    /// Export files added, removed or changed (unchanged ones are not listed).
    pub exports: Vec<ExportChange>,
}

/// One export file that differs from the parent's, compared by sha256.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportChange {
    /// Its path inside the version (`exports/confact/confact.json`).
    pub file: String,
    /// `added`, `removed` or `changed`.
    pub status: String,
    pub bytes_before: Option<u64>,
    pub bytes_after: Option<u64>,
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

/// The page's size stays bounded however large the version: sampling caps the items, and each
/// item's lists and texts are capped too.
#[cfg(test)]
mod size_bound {
    use noisebench_core::*;

    use crate::items::{ItemRows, sample_items};
    use crate::{ReportData, render};

    /// Text of `n` characters, words of ordinary prose.
    fn text(n: usize, seed: usize) -> String {
        let words = [
            "revenue", "grew", "in", "the", "year", "net", "sales", "of", "Acme",
        ];
        let mut out = String::new();
        let mut i = seed;
        while out.len() < n {
            out.push_str(words[i % words.len()]);
            out.push(' ');
            i = i.wrapping_mul(31).wrapping_add(7);
        }
        out.truncate(n);
        out
    }

    /// A version with every stratum full and every text and list past its cap: the largest
    /// page the sample can make (`strata x per stratum x largest item`), at RARE's strata
    /// (2 verdicts x 3 labels; 4 question kinds x 3 splits; 60 stage x reason pairs).
    #[test]
    fn a_worst_case_version_renders_under_the_stated_bound() {
        let per = 20; // rows per stratum, past the 5 sampled
        let mut claims = Vec::new();
        let mut labels = Vec::new();
        let mut documents = Vec::new();
        let mut links = Vec::new();
        let mut queries = Vec::new();
        for (v, verdict) in ["true", "false"].iter().enumerate() {
            for (l, label) in ["supporting", "misleading", "irrelevant"]
                .iter()
                .enumerate()
            {
                for i in 0..per {
                    let claim = format!("cl_{v}_{l}_{i}");
                    claims.push(Claim {
                        id: claim.clone(),
                        text: text(400, i),
                        verdict: verdict.to_string(),
                        ..Default::default()
                    });
                    for q in 0..8 {
                        queries.push(Query {
                            id: format!("{claim}_q{q}"),
                            claim_id: claim.clone(),
                            kind: "keywords".into(),
                            text: text(150, q),
                            ..Default::default()
                        });
                    }
                    for d in 0..30 {
                        let doc = format!("doc_{v}_{l}_{i}_{d}");
                        documents.push(Document {
                            id: doc.clone(),
                            url: format!("https://example.org/{}", text(150, d).replace(' ', "/")),
                            domain: "example.org".into(),
                            title: Some(text(200, d)),
                            text: text(12_000, d),
                            ..Default::default()
                        });
                        links.push(ClaimDocument {
                            id: format!("link_{doc}"),
                            claim_id: claim.clone(),
                            document_id: doc.clone(),
                            best_rank: d as i64,
                            query_kinds: vec!["keywords".into(), "question".into()],
                            ..Default::default()
                        });
                        labels.push(ClaimDocumentLabel {
                            id: format!("pair_{doc}"),
                            claim_id: claim.clone(),
                            document_id: doc,
                            label: Some(label.to_string()),
                            exam_votes: vec!["full=true".into(); 4],
                            ..Default::default()
                        });
                    }
                }
            }
        }
        let mut chunks = Vec::new();
        let mut questions = Vec::new();
        let mut splits = Vec::new();
        let mut qps = Vec::new();
        let mut dps = Vec::new();
        let mut retrievals = Vec::new();
        for kind in [
            "single_hop",
            "chained_multi_hop",
            "star_shaped",
            "inverted_star_shaped",
        ] {
            for split in ["train", "dev", "test"] {
                for i in 0..per {
                    let q = format!("q_{kind}_{split}_{i}");
                    let chunk_ids: Vec<String> = (0..10).map(|c| format!("{q}_c{c}")).collect();
                    for (c, id) in chunk_ids.iter().enumerate() {
                        chunks.push(Chunk {
                            id: id.clone(),
                            text: text(6_000, c),
                            ..Default::default()
                        });
                        for k in 0..4 {
                            dps.push(DocumentPerturbation {
                                id: format!("{id}_p{k}"),
                                question_id: q.clone(),
                                chunk_id: id.clone(),
                                kind: format!("kind_{k}"),
                                text: text(6_000, c + k * (k % 2)),
                                ..Default::default()
                            });
                        }
                    }
                    for p in 0..20 {
                        qps.push(QueryPerturbation {
                            id: format!("{q}_qp{p}"),
                            question_id: q.clone(),
                            kind: format!("kind_{p}"),
                            perturbed_query: text(200, p),
                            ..Default::default()
                        });
                        for r in ["bm25", "embedding:hashed"] {
                            for rank in 1..=10 {
                                retrievals.push(Retrieval {
                                    id: format!("{q}_{p}_{r}_{rank}"),
                                    question_id: q.clone(),
                                    query_id: format!("{q}_qp{p}"),
                                    retriever: r.into(),
                                    chunk_id: format!("{q}_c{rank}"),
                                    rank,
                                    ground_truth: rank % 3 == 0,
                                    ..Default::default()
                                });
                            }
                        }
                    }
                    questions.push(Question {
                        id: q.clone(),
                        kind: kind.into(),
                        question: text(300, i),
                        answer: text(300, i + 1),
                        source_sentences: (0..10).map(|s| text(200, s)).collect(),
                        answer_chunk_ids: chunk_ids,
                        ..Default::default()
                    });
                    splits.push(QuestionSplit {
                        id: format!("s_{q}"),
                        question_id: q,
                        kind: kind.into(),
                        split: split.into(),
                    });
                }
            }
        }
        let mut drops = Vec::new();
        for stage in 0..12 {
            for reason in 0..5 {
                for i in 0..per {
                    drops.push(DropRecord {
                        id: format!("drop_{stage}_{reason}_{i}"),
                        stage: format!("stage_{stage}"),
                        item: text(120, i),
                        reason: format!("reason_{reason}"),
                        detail: text(3_000, i),
                        dropped: true,
                        ..Default::default()
                    });
                }
            }
        }
        let rows = ItemRows {
            claims: &claims,
            queries: &queries,
            documents: &documents,
            claim_documents: &links,
            labels: &labels,
            chunks: &chunks,
            questions: &questions,
            splits: &splits,
            query_perturbations: &qps,
            document_perturbations: &dps,
            retrievals: &retrievals,
            drops: Some(&drops),
            ..Default::default()
        };
        let samples = sample_items(&rows, 5, "pipelines/rare-finance.toml");
        assert_eq!(samples.claims.len(), 6);
        assert_eq!(samples.questions.len(), 12);
        assert_eq!(samples.drops.len(), 60);
        let page = render(&ReportData {
            samples,
            ..Default::default()
        });
        let mb = page.len() as f64 / 1e6;
        eprintln!("worst-case page: {:.2} MB", mb);
        assert!(page.len() < WORST_CASE_BYTES, "{mb:.2} MB");
    }

    /// The bound docs/report.md states for the page at RARE's strata, 5 items per stratum.
    const WORST_CASE_BYTES: usize = 8_000_000;
}
