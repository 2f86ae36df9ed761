//! RAGuard's release (Hugging Face `UCSC-IRKM/RAGuard`): `claims.csv` and `documents.csv`,
//! joined on `Claim ID`.
//!
//! - `claims.csv`: `Claim ID`, `Claim`, `Verdict` (`True`/`False`), `Document IDs` (a
//!   Python-style list in a string, `"[16118, 16119]"`), `Document Labels`
//!   (`"['unrelated', 'misleading']"`), `Original Verdict` (PolitiFact's rating). Required:
//!   `Claim ID`, `Claim`, `Verdict`.
//! - `documents.csv`: `Document ID`, `Title`, `Full Text`, `Claim ID`, `Document Label`
//!   (`supporting`, `misleading`, `unrelated`; the paper's first version says `irrelevant`),
//!   `Link`. Required: `Document ID`, `Claim ID`, `Full Text`.
//!
//! Choices:
//! - Ids stay the release's integers written as strings (`"12"`), claims and documents alike;
//!   `12.0` (a float column) reads as `12`.
//! - A claim's documents are its `Document IDs` list, in order; when that column is missing or
//!   the cell is empty (or `[]`), the documents whose `Claim ID` is the claim's, in file order.
//!   A listed id that documents.csv does not have at all is a `missing_document` bad row; one
//!   that documents.csv has but that was dropped (already counted there) is left out silently.
//! - A document's label is its `Document Label`; when that column is missing or the cell is
//!   empty, the label at the document's position in its claim's `Document Labels`, else none.
//! - About 4,100 of RAGuard's 16,331 documents are Reddit link posts or have an empty body.
//!   A body of `[Link Post]`, `[deleted]` or `[removed]` (any case) counts as no body. A
//!   document with a title but no body is KEPT with its title as its text (that is what a
//!   reader of the post sees; the load summary counts them); only one with neither is dropped
//!   (`empty_document`).
//! - `documents.csv` may be absent ([`load_raguard_files`] with `None`): the claims load with
//!   no documents and no bad row for their listed ids; only zero-context can run.
//! - The columns are the dataset card's ([`CLAIM_COLUMNS`], [`DOCUMENT_COLUMNS`]); any other
//!   column is named in a note and not read.
//! - The domain is the `Link`'s host without `www.` (`reddit.com`).
//!
//! The files are read into typed rows by `noisebench_releases::raguard` (the format's one home,
//! beside the writer our export uses), which reports `missing_column`, `bad_csv` (a row with the
//! wrong number of fields), `missing_field` (empty id or claim text), `bad_verdict` and
//! `bad_list`; the join here adds `duplicate_id`, `unknown_claim`, `unknown_label`,
//! `empty_document`, `missing_document`. All are bad rows (never fatal), named `line N`, the CSV
//! line where the record starts (the header is line 1).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use noisebench_releases::raguard::{self, CsvRows, DocumentRow, is_placeholder};
pub use noisebench_releases::raguard::{CLAIM_COLUMNS, DOCUMENT_COLUMNS, parse_py_list};

use super::{LoadError, bad, domain_of, file_label, read_text};
use crate::data::{BadRow, Credibility, DocLabel, EvalClaim, EvalData, EvalDocument};

/// A claim row as read, before its documents are resolved.
struct ClaimRow {
    line: String,
    claim: EvalClaim,
    /// Its `Document IDs`, when the cell had a non-empty list.
    listed: Option<Vec<String>>,
}

/// A reader's problems as bad rows of `file`.
fn problems_into(file: &str, problems: Vec<noisebench_releases::Problem>, out: &mut Vec<BadRow>) {
    for p in problems {
        out.push(bad(file, p.row, p.reason, p.detail));
    }
}

/// Load RAGuard's two CSV files (see the module documentation for every choice).
pub fn load_raguard(claims_csv: &Path, documents_csv: &Path) -> Result<EvalData, LoadError> {
    load_raguard_files(claims_csv, Some(documents_csv))
}

/// Load RAGuard's `claims.csv` and, when given, its `documents.csv`. Without documents the
/// claims load with no documents (zero-context needs none), and a note says so.
pub fn load_raguard_files(
    claims_csv: &Path,
    documents_csv: Option<&Path>,
) -> Result<EvalData, LoadError> {
    let mut data = EvalData {
        name: "raguard".into(),
        ..EvalData::default()
    };
    let claims_file = file_label(claims_csv);
    let claims_text = read_text(claims_csv, &mut data.bad_rows)?;
    let claims = raguard::read_claims(&claims_file, &claims_text);
    drop(claims_text);
    let (docs_file, docs) = match documents_csv {
        Some(path) => {
            let file = file_label(path);
            let text = read_text(path, &mut data.bad_rows)?;
            let docs = raguard::read_documents(&file, &text);
            (file, docs)
        }
        None => (
            "documents.csv".to_string(),
            CsvRows {
                headers: DOCUMENT_COLUMNS.iter().map(|c| c.to_string()).collect(),
                ..CsvRows::default()
            },
        ),
    };
    problems_into(&claims_file, claims.problems, &mut data.bad_rows);
    problems_into(&docs_file, docs.problems, &mut data.bad_rows);

    // Claims.
    let mut claim_rows: Vec<ClaimRow> = Vec::new();
    let mut claim_ids: BTreeSet<String> = BTreeSet::new();
    // Labels from the claims' `Document Labels`, by document id: the fallback label.
    let mut listed_labels: BTreeMap<String, DocLabel> = BTreeMap::new();
    for (line, row) in claims.rows {
        let id = row.claim_id;
        if !claim_ids.insert(id.clone()) {
            data.bad_rows.push(bad(
                &claims_file,
                line,
                "duplicate_id",
                format!("claim {id} appears again"),
            ));
            continue;
        }
        let (ids, labels) = (&row.document_ids, &row.document_labels);
        if ids.len() == labels.len() {
            for (doc, label) in ids.iter().zip(labels) {
                if let Some(l) = DocLabel::parse(label) {
                    listed_labels.insert(doc.clone(), l);
                }
            }
        }
        let orig = row.original_verdict;
        claim_rows.push(ClaimRow {
            line,
            listed: (!ids.is_empty()).then(|| ids.clone()),
            claim: EvalClaim {
                id,
                text: row.claim,
                question: None,
                verdict: row.verdict,
                original_verdict: (!orig.is_empty()).then_some(orig),
                documents: Vec::new(),
                claim_date: None,
            },
        });
    }

    // Documents.
    let mut seen_docs: BTreeSet<String> = BTreeSet::new();
    for (line, row) in docs.rows {
        if let Some(doc) = document(
            &docs_file,
            line,
            row,
            (&claim_ids, &listed_labels, &mut seen_docs),
            &mut data.bad_rows,
        ) {
            data.documents.push(doc);
        }
    }
    resolve_documents(
        claim_rows,
        &seen_docs,
        documents_csv.is_some(),
        (&claims_file, &docs_file),
        &mut data,
    );
    let unknown: Vec<&str> = docs
        .headers
        .iter()
        .chain(&claims.headers)
        .map(String::as_str)
        .filter(|h| {
            !DOCUMENT_COLUMNS
                .iter()
                .chain(&CLAIM_COLUMNS)
                .any(|c| c.eq_ignore_ascii_case(h))
        })
        .collect();
    data.notes.push(format!(
        "claims: {claims_file}: {} claims",
        data.claims.len()
    ));
    match documents_csv {
        Some(_) => {
            let linked = data
                .documents
                .iter()
                .filter(|d| d.text == d.title && !d.title.is_empty())
                .count();
            data.notes.push(format!(
                "documents: {docs_file}: {} documents ({linked} with no body, kept with their title as text)",
                data.documents.len()
            ));
        }
        None => data.notes.push(
            "documents: none (no documents.csv): claims only; only zero_context can run".into(),
        ),
    }
    if !unknown.is_empty() {
        data.notes.push(format!(
            "columns not in the dataset card, not read: {}",
            unknown.join(", ")
        ));
    }
    Ok(data)
}

/// One document row joined to the claims: `None` (with its bad row) when its id repeats, its
/// claim is not loaded, its label is unknown, or it has neither title nor body.
fn document(
    file: &str,
    line: String,
    row: DocumentRow,
    (claim_ids, listed_labels, seen_docs): (
        &BTreeSet<String>,
        &BTreeMap<String, DocLabel>,
        &mut BTreeSet<String>,
    ),
    bad_rows: &mut Vec<BadRow>,
) -> Option<EvalDocument> {
    let id = row.document_id;
    let claim = row.claim_id;
    if !seen_docs.insert(id.clone()) {
        bad_rows.push(bad(
            file,
            line,
            "duplicate_id",
            format!("document {id} appears again"),
        ));
        return None;
    }
    if !claim_ids.contains(&claim) {
        let detail = format!("document {id}: claim {claim} is not among the loaded claims");
        bad_rows.push(bad(file, line, "unknown_claim", detail));
        return None;
    }
    let raw_label = row.document_label;
    let label = if raw_label.is_empty() {
        listed_labels.get(&id).copied()
    } else {
        match DocLabel::parse(&raw_label) {
            Some(l) => Some(l),
            None => {
                let detail = format!("document {id}: `Document Label` is {raw_label:?}");
                bad_rows.push(bad(file, line, "unknown_label", detail));
                return None;
            }
        }
    };
    let title = row.title;
    let body = if is_placeholder(&row.full_text) {
        String::new()
    } else {
        row.full_text
    };
    if title.is_empty() && body.is_empty() {
        let detail = format!("document {id}: empty `Title` and `Full Text`");
        bad_rows.push(bad(file, line, "empty_document", detail));
        return None;
    }
    let link = row.link;
    Some(EvalDocument {
        domain: domain_of(&link),
        url: (!link.is_empty()).then_some(link),
        text: if body.is_empty() { title.clone() } else { body },
        title,
        id,
        claim_id: Some(claim),
        label,
        credibility: Credibility::default(),
    })
}

/// Each claim's documents: its `Document IDs` that were kept (an id documents.csv lacks
/// altogether is a `missing_document` bad row), else the documents naming it, in file order.
fn resolve_documents(
    claim_rows: Vec<ClaimRow>,
    seen_docs: &BTreeSet<String>,
    have_documents: bool,
    (claims_file, docs_file): (&str, &str),
    data: &mut EvalData,
) {
    let kept: BTreeSet<String> = data.documents.iter().map(|d| d.id.clone()).collect();
    let mut by_claim: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in &data.documents {
        if let Some(c) = &d.claim_id {
            by_claim.entry(c.clone()).or_default().push(d.id.clone());
        }
    }
    for row in claim_rows {
        let mut claim = row.claim;
        claim.documents = match row.listed {
            Some(ids) if have_documents => {
                let mut found = Vec::new();
                for id in ids {
                    if kept.contains(&id) {
                        found.push(id);
                    } else if !seen_docs.contains(&id) {
                        data.bad_rows.push(bad(
                            claims_file,
                            row.line.clone(),
                            "missing_document",
                            format!("claim {}: document {id} is not in {docs_file}", claim.id),
                        ));
                    }
                }
                found
            }
            _ => by_claim.get(&claim.id).cloned().unwrap_or_default(),
        };
        data.claims.push(claim);
    }
}
