//! A CONF-FACT file (repository `zoeyyes/CONFACT`): a JSON list of instances
//! `{id, claim, label, claim_date, review_date, country, question, original_claim_url,
//! fact_checking_article, evidence_url: [{evidence_id, original_link, content}]}`.
//!
//! Choices:
//! - The label is read trimmed and in any case: `Supported`/`Yes`/`True` is a true verdict,
//!   `Refuted`/`No`/`False` a false one. The original release wrote some labels with a trailing
//!   space (`"Supported "`); they are accepted.
//! - A claim's id is the instance's `id` (a string or a number, as text); an instance without
//!   one gets `noisebench_core::id::stable_id("confact", [claim])`.
//! - Each evidence is a document: id `evidence_id` (else `<claim id>_<n>`, n from 1), the
//!   instance as its claim, no title, `content` as text, `original_link` as URL and domain.
//!   Credibility fields, when an evidence has them: `credibility` (a level), `credibility_score`
//!   (a number) and `source_background` or `media_background` (a text).
//! - `question` and `claim_date` are kept when they are non-empty strings.
//!
//! Bad rows (never fatal): `bad_record` (an instance or evidence that is not an object: skipped),
//! `missing_field` (no claim text, or no label), `unknown_label` (instance skipped),
//! `duplicate_id`, `empty_document` (an evidence without content: that evidence skipped). Rows
//! are `record N` (from 1) and `record N evidence M`.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::{
    LoadError, bad, domain_of, file_label, json_kind, json_text, read_json_list, string_field,
};
use crate::data::{Credibility, EvalClaim, EvalData, EvalDocument};

fn parse_label(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "supported" | "yes" | "true" => Some(true),
        "refuted" | "no" | "false" => Some(false),
        _ => None,
    }
}

fn credibility_of(e: &serde_json::Map<String, Value>) -> Credibility {
    Credibility {
        level: string_field(e, "credibility").map(|s| s.to_lowercase()),
        score: e.get("credibility_score").and_then(Value::as_f64),
        background: string_field(e, "source_background")
            .or_else(|| string_field(e, "media_background")),
    }
}

/// Load a CONF-FACT JSON file (see the module documentation for every choice).
pub fn load_confact(json: &Path) -> Result<EvalData, LoadError> {
    let mut data = EvalData {
        name: "confact".into(),
        ..EvalData::default()
    };
    let records = read_json_list(json, &mut data.bad_rows)?;
    let file = file_label(json);
    let mut claim_ids = BTreeSet::new();
    let mut doc_ids = BTreeSet::new();
    for (n, record) in records.iter().enumerate() {
        let row = format!("record {}", n + 1);
        let Some(o) = record.as_object() else {
            data.bad_rows.push(bad(
                &file,
                row,
                "bad_record",
                format!("an instance is {}, not an object", json_kind(record)),
            ));
            continue;
        };
        let Some(text) = string_field(o, "claim") else {
            data.bad_rows
                .push(bad(&file, row, "missing_field", "no `claim` text"));
            continue;
        };
        let Some(raw_label) = o.get("label").and_then(Value::as_str) else {
            data.bad_rows
                .push(bad(&file, row, "missing_field", "no `label` string"));
            continue;
        };
        let Some(verdict) = parse_label(raw_label) else {
            data.bad_rows.push(bad(
                &file,
                row,
                "unknown_label",
                format!("`label` is {raw_label:?}"),
            ));
            continue;
        };
        let id = json_text(o.get("id"))
            .unwrap_or_else(|| noisebench_core::id::stable_id("confact", &[&text]));
        if !claim_ids.insert(id.clone()) {
            data.bad_rows.push(bad(
                &file,
                row,
                "duplicate_id",
                format!("claim {id} appears again"),
            ));
            continue;
        }
        let mut documents = Vec::new();
        let evidence = o
            .get("evidence_url")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for (m, ev) in evidence.iter().enumerate() {
            let ev_row = format!("{row} evidence {}", m + 1);
            let Some(e) = ev.as_object() else {
                data.bad_rows.push(bad(
                    &file,
                    ev_row,
                    "bad_record",
                    format!("an evidence is {}, not an object", json_kind(ev)),
                ));
                continue;
            };
            let doc_id =
                json_text(e.get("evidence_id")).unwrap_or_else(|| format!("{id}_{}", m + 1));
            let Some(content) = string_field(e, "content") else {
                data.bad_rows.push(bad(
                    &file,
                    ev_row,
                    "empty_document",
                    format!("evidence {doc_id} has no content"),
                ));
                continue;
            };
            if !doc_ids.insert(doc_id.clone()) {
                data.bad_rows.push(bad(
                    &file,
                    ev_row,
                    "duplicate_id",
                    format!("evidence {doc_id} appears again"),
                ));
                continue;
            }
            let link = string_field(e, "original_link");
            documents.push(doc_id.clone());
            data.documents.push(EvalDocument {
                id: doc_id,
                claim_id: Some(id.clone()),
                title: String::new(),
                text: content,
                label: None,
                domain: link.as_deref().and_then(domain_of),
                url: link,
                credibility: credibility_of(e),
            });
        }
        data.claims.push(EvalClaim {
            id,
            text,
            question: string_field(o, "question"),
            verdict,
            original_verdict: None,
            documents,
            claim_date: string_field(o, "claim_date"),
        });
    }
    Ok(data)
}
