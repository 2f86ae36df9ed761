//! Our snapshots: the published tables of a version, already read (the binary reads Parquet;
//! this crate links no Parquet reader), turned into [`EvalData`].
//!
//! - Claims: those whose `verdict` is `true` or `false` (others are bad rows, reason
//!   `bad_verdict`: a benchmark question needs a binary gold answer); each claim's documents are
//!   its labelled pairs in `labels` (label `supporting`, `misleading`, `irrelevant`; a pair
//!   without a label is kept unlabelled); its CONF-FACT question is its `question` query, if any.
//! - Documents: every document of a labelled pair, with its domain and, from
//!   `document_credibility`, a level and a background sentence. A document of several claims
//!   is one corpus entry; its per-claim labels live on each claim's list.
//! - Questions: every published question with its split, perturbations and, for the original
//!   query, the chunks the chosen retriever returned (`retrievals` rows whose `query_id` is the
//!   question id; the retriever named `retriever`, else the first by name). Domain from the
//!   question's metadata (`domain`), else its first report's domain.

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::{
    Chunk, Claim, ClaimDocumentLabel, Document, DocumentCredibility, DocumentPerturbation, Query,
    QueryPerturbation, Question, QuestionSplit, Report, Retrieval,
};

use crate::data::{
    BadRow, Credibility, DocLabel, DocVariant, EvalChunk, EvalClaim, EvalData, EvalDocument,
    EvalQuestion, QueryVariant, RealRetrieval,
};

/// The tables of one snapshot version an evaluation reads; any may be empty.
#[derive(Debug, Clone, Default)]
pub struct SnapshotTables {
    /// `<dataset>@<version>`.
    pub name: String,
    pub claims: Vec<Claim>,
    pub queries: Vec<Query>,
    pub documents: Vec<Document>,
    pub labels: Vec<ClaimDocumentLabel>,
    pub credibility: Vec<DocumentCredibility>,
    pub reports: Vec<Report>,
    pub chunks: Vec<Chunk>,
    pub questions: Vec<Question>,
    pub splits: Vec<QuestionSplit>,
    pub query_perturbations: Vec<QueryPerturbation>,
    pub document_perturbations: Vec<DocumentPerturbation>,
    pub retrievals: Vec<Retrieval>,
}

/// Our snapshot tables as [`EvalData`]. `retriever`: which retriever's results are the real
/// retrieval of the original queries.
pub fn from_snapshot(t: SnapshotTables, retriever: Option<&str>) -> EvalData {
    let mut data = EvalData {
        name: t.name.clone(),
        ..Default::default()
    };
    let file = |table: &str| format!("{}/{table}", t.name);

    claims_track(&t, &file, &mut data);
    report_track(&t, retriever, &file, &mut data);
    data
}

/// The documents a claim's pairs name, with the label of each pair.
type Pairs<'t> = BTreeMap<&'t str, Vec<(&'t str, Option<DocLabel>)>>;

/// Claims with a binary verdict and their labelled documents, into `data`.
fn claims_track(t: &SnapshotTables, file: &dyn Fn(&str) -> String, data: &mut EvalData) {
    let questions: BTreeMap<&str, &str> = t
        .queries
        .iter()
        .filter(|q| q.kind == "question")
        .map(|q| (q.claim_id.as_str(), q.text.as_str()))
        .collect();
    let mut pairs: Pairs<'_> = BTreeMap::new();
    for l in &t.labels {
        let label = l.label.as_deref().and_then(DocLabel::parse);
        if l.label.is_some() && label.is_none() {
            data.bad_rows.push(BadRow {
                file: file("labels"),
                row: l.id.clone(),
                reason: "unknown_label".into(),
                detail: format!("label `{}`", l.label.clone().unwrap_or_default()),
            });
        }
        pairs
            .entry(l.claim_id.as_str())
            .or_default()
            .push((l.document_id.as_str(), label));
    }
    let documents: BTreeMap<&str, &Document> =
        t.documents.iter().map(|d| (d.id.as_str(), d)).collect();
    let credibility: BTreeMap<&str, &DocumentCredibility> = t
        .credibility
        .iter()
        .map(|c| (c.document_id.as_str(), c))
        .collect();
    let mut used_documents: BTreeMap<&str, Option<DocLabel>> = BTreeMap::new();
    let mut claim_of_document: BTreeMap<&str, &str> = BTreeMap::new();
    for c in &t.claims {
        let verdict = match c.verdict.trim().to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            other => {
                data.bad_rows.push(BadRow {
                    file: file("claims"),
                    row: c.id.clone(),
                    reason: "bad_verdict".into(),
                    detail: format!("verdict `{other}` is neither true nor false"),
                });
                continue;
            }
        };
        let mut docs = Vec::new();
        for (d, label) in pairs.get(c.id.as_str()).cloned().unwrap_or_default() {
            if !documents.contains_key(d) {
                data.bad_rows.push(BadRow {
                    file: file("labels"),
                    row: format!("{}:{d}", c.id),
                    reason: "unknown_document".into(),
                    detail: format!("document `{d}` is not in the documents table"),
                });
                continue;
            }
            docs.push(d.to_string());
            // The first claim naming a document owns its label in the corpus row.
            used_documents.entry(d).or_insert(label);
            claim_of_document.entry(d).or_insert(c.id.as_str());
        }
        data.claims.push(EvalClaim {
            id: c.id.clone(),
            text: c.text.clone(),
            question: questions.get(c.id.as_str()).map(|q| q.to_string()),
            verdict,
            original_verdict: Some(c.original_rating.clone()),
            documents: docs,
            claim_date: c.claim_date.clone(),
        });
    }
    for (id, label) in &used_documents {
        let d = documents[id];
        let cred = credibility.get(id);
        let level = cred.and_then(|c| c.credibility.clone());
        let background = cred.map(|c| {
            format!(
                "Source: {}. Type: {}. Rated credibility: {}.",
                c.domain,
                c.source_type,
                c.credibility.as_deref().unwrap_or("unknown")
            )
        });
        data.documents.push(EvalDocument {
            id: d.id.clone(),
            claim_id: claim_of_document.get(id).map(|c| c.to_string()),
            title: d.title.clone().unwrap_or_default(),
            text: d.text.clone(),
            label: *label,
            url: Some(d.url.clone()),
            domain: Some(d.domain.clone()),
            credibility: Credibility {
                level,
                score: None,
                background,
            },
        });
    }
    own_label_entries(data, &pairs, &used_documents, &claim_of_document);
}

/// A claim's per-pair labels may differ from the corpus row's when documents are shared;
/// keep the claim's own view by giving such documents a claim-specific entry.
fn own_label_entries(
    data: &mut EvalData,
    pairs: &Pairs<'_>,
    used_documents: &BTreeMap<&str, Option<DocLabel>>,
    claim_of_document: &BTreeMap<&str, &str>,
) {
    let labels_by_pair: BTreeMap<(&str, &str), Option<DocLabel>> = pairs
        .iter()
        .flat_map(|(c, ds)| ds.iter().map(move |(d, l)| ((*c, *d), *l)))
        .collect();
    let mut extra = Vec::new();
    for claim in &mut data.claims {
        for doc_id in claim.documents.iter_mut() {
            let own = labels_by_pair
                .get(&(claim.id.as_str(), doc_id.as_str()))
                .copied()
                .flatten();
            let corpus = used_documents.get(doc_id.as_str()).copied().flatten();
            let owner = claim_of_document.get(doc_id.as_str()).copied();
            if (own != corpus || owner != Some(claim.id.as_str()))
                && let Some(base) = data.documents.iter().find(|d| &d.id == doc_id)
            {
                let mut d = base.clone();
                d.id = format!("{}@{}", base.id, claim.id);
                d.claim_id = Some(claim.id.clone());
                d.label = own;
                *doc_id = d.id.clone();
                extra.push(d);
            }
        }
    }
    data.documents.extend(extra);
}

/// Chunks and questions (with their splits, perturbations and the chosen retriever's
/// results for the original query), into `data`.
fn report_track(
    t: &SnapshotTables,
    retriever: Option<&str>,
    file: &dyn Fn(&str) -> String,
    data: &mut EvalData,
) {
    let report_domain: BTreeMap<&str, &str> = t
        .reports
        .iter()
        .map(|r| (r.id.as_str(), r.domain.as_str()))
        .collect();
    data.chunks = t
        .chunks
        .iter()
        .map(|c| EvalChunk {
            id: c.id.clone(),
            text: c.text.clone(),
            report_id: Some(c.report_id.clone()),
        })
        .collect();
    let split: BTreeMap<&str, &str> = t
        .splits
        .iter()
        .map(|s| (s.question_id.as_str(), s.split.as_str()))
        .collect();
    let chosen = retriever.map(str::to_string).or_else(|| {
        t.retrievals
            .iter()
            .map(|r| r.retriever.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .next()
    });
    let mut retrieved: BTreeMap<&str, Vec<(i64, &str)>> = BTreeMap::new();
    for r in &t.retrievals {
        if Some(&r.retriever) == chosen.as_ref() && r.query_id == r.question_id {
            retrieved
                .entry(r.question_id.as_str())
                .or_default()
                .push((r.rank, r.chunk_id.as_str()));
        }
    }
    let chunk_ids: BTreeSet<&str> = t.chunks.iter().map(|c| c.id.as_str()).collect();
    let mut query_variants: BTreeMap<&str, Vec<QueryVariant>> = BTreeMap::new();
    for p in &t.query_perturbations {
        query_variants
            .entry(p.question_id.as_str())
            .or_default()
            .push(QueryVariant {
                kind: p.kind.clone(),
                text: p.perturbed_query.clone(),
            });
    }
    let mut doc_variants: BTreeMap<&str, Vec<DocVariant>> = BTreeMap::new();
    for p in &t.document_perturbations {
        doc_variants
            .entry(p.question_id.as_str())
            .or_default()
            .push(DocVariant {
                kind: p.kind.clone(),
                chunk_id: p.chunk_id.clone(),
                text: p.text.clone(),
            });
    }
    for q in &t.questions {
        if let Some(missing) = q
            .answer_chunk_ids
            .iter()
            .find(|c| !chunk_ids.contains(c.as_str()))
        {
            data.bad_rows.push(BadRow {
                file: file("questions"),
                row: q.id.clone(),
                reason: "unknown_chunk".into(),
                detail: format!("answer chunk `{missing}` is not in the chunks table"),
            });
            continue;
        }
        let mut hits = retrieved.remove(q.id.as_str()).unwrap_or_default();
        hits.sort();
        let domain = q
            .metadata
            .get("domain")
            .cloned()
            .or_else(|| {
                q.report_ids
                    .first()
                    .and_then(|r| report_domain.get(r.as_str()))
                    .map(|d| d.to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        data.questions.push(EvalQuestion {
            id: q.id.clone(),
            question: q.question.clone(),
            answer: q.answer.clone(),
            kind: q.kind.clone(),
            domain,
            answer_chunk_ids: q.answer_chunk_ids.clone(),
            query_perturbations: query_variants.remove(q.id.as_str()).unwrap_or_default(),
            document_perturbations: doc_variants.remove(q.id.as_str()).unwrap_or_default(),
            retrievals: if hits.is_empty() {
                Vec::new()
            } else {
                vec![RealRetrieval {
                    retriever: chosen.clone().unwrap_or_default(),
                    query: crate::rare_met::ORIGINAL.to_string(),
                    chunk_ids: hits.into_iter().map(|(_, c)| c.to_string()).collect(),
                }]
            },
            split: split.get(q.id.as_str()).map(|s| s.to_string()),
        });
    }
}
