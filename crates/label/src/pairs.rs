//! The claim-document pairs to label: one per link of `claim_documents`, in claim and rank
//! order. A link that repeats, names an unknown claim or document, has no true/false verdict
//! while the exam runs, or (with `empty_documents = "drop"`) points to an empty page is dropped
//! with its reason; an empty page is otherwise judged on its title, or not examined at all.

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::vocab::Verdict;
use noisebench_core::{Claim, ClaimDocument, Document, Drops, stable_id};

use crate::{EmptyDocuments, LabelConfig};

/// One claim-document pair to label.
pub(crate) struct Pair<'a> {
    pub id: String,
    pub claim: &'a Claim,
    pub doc: &'a Document,
    pub gold: Option<Verdict>,
    /// The page text the stance votes see (empty for an empty page).
    pub text: String,
    /// The text the exam sees: the page text, or the title of a title-only document (an empty
    /// document would render the prompt's no-document form, the zero-context probe).
    pub exam_text: String,
    /// Exam skipped: labelled irrelevant.
    pub skip_exam: bool,
}

/// The pairs of `links` to label; every link that cannot be one is recorded in `drops`.
pub(crate) fn pairs<'a>(
    config: &LabelConfig,
    claims: &'a [Claim],
    documents: &'a [Document],
    links: &[ClaimDocument],
    drops: &mut Drops,
) -> Vec<Pair<'a>> {
    let claims: BTreeMap<&str, &Claim> = claims.iter().map(|c| (c.id.as_str(), c)).collect();
    let docs: BTreeMap<&str, &Document> = documents.iter().map(|d| (d.id.as_str(), d)).collect();
    let mut links: Vec<&ClaimDocument> = links.iter().collect();
    links.sort_by(|a, b| {
        (&a.claim_id, a.best_rank, &a.document_id).cmp(&(&b.claim_id, b.best_rank, &b.document_id))
    });
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for link in links {
        let id = stable_id("label", &[&link.claim_id, &link.document_id]);
        if !seen.insert(id.clone()) {
            drops.add(
                id,
                "duplicate_link",
                format!(
                    "claim `{}` and document `{}` are linked more than once",
                    link.claim_id, link.document_id
                ),
            );
            continue;
        }
        let Some(claim) = claims.get(link.claim_id.as_str()).copied() else {
            drops.add(
                id,
                "unknown_claim",
                format!("claim `{}` is not in the claims input", link.claim_id),
            );
            continue;
        };
        let Some(doc) = docs.get(link.document_id.as_str()).copied() else {
            drops.add(
                id,
                "unknown_document",
                format!(
                    "document `{}` is not in the documents input",
                    link.document_id
                ),
            );
            continue;
        };
        match pair(config, id, claim, doc) {
            Ok(p) => out.push(p),
            Err((id, reason, detail)) => drops.add(id, reason, detail),
        }
    }
    out
}

/// The pair of a known claim and document, or why it cannot be labelled.
fn pair<'a>(
    config: &LabelConfig,
    id: String,
    claim: &'a Claim,
    doc: &'a Document,
) -> Result<Pair<'a>, (String, &'static str, String)> {
    let gold = gold_verdict(claim);
    if config.exam.enabled && gold.is_none() {
        return Err((
            id,
            "claim_verdict_not_binary",
            format!(
                "claim `{}` has verdict `{}`; the exam needs true or false",
                claim.id, claim.verdict
            ),
        ));
    }
    let empty = doc.text.trim().is_empty() || doc.body_removed;
    let has_title = doc.title.as_deref().is_some_and(|t| !t.trim().is_empty());
    let skip_exam = match (empty, config.empty_documents) {
        (false, _) => false,
        (true, EmptyDocuments::Drop) => {
            return Err((
                id,
                "empty_document",
                format!(
                    "document `{}` has no text (link post or removed body)",
                    doc.id
                ),
            ));
        }
        (true, EmptyDocuments::Irrelevant) => true,
        (true, EmptyDocuments::TitleOnly) => !has_title,
    };
    Ok(Pair {
        id,
        claim,
        doc,
        gold,
        text: if empty {
            String::new()
        } else {
            doc.text.clone()
        },
        exam_text: if empty {
            doc.title.clone().unwrap_or_default()
        } else {
            doc.text.clone()
        },
        skip_exam,
    })
}

/// The gold verdict of a claim as the exam needs it, or `None` if it is not true/false.
pub(crate) fn gold_verdict(claim: &Claim) -> Option<Verdict> {
    match claim.verdict.trim().to_lowercase().as_str() {
        "true" => Some(Verdict::True),
        "false" => Some(Verdict::False),
        _ => None,
    }
}
