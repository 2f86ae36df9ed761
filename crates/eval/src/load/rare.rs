//! RARE's QA records (`LeiLiLab/RARE`: `rag_single_hop_dataset.json`,
//! `rag_multi_hop_dataset.json`, after `dataset_perturbation.py`): JSON lists of
//! `{question, answer, answer_chunk_ids[], metadata{..}, source_sentences[], entity_1[],
//! relation[], entity_2[], multi_hop_type?, query_perturbations?, document_perturbations?}`,
//! and optionally the chunk corpus.
//!
//! Choices:
//! - Kind: `multi_hop_type` (`chained_multi_hop`, `star_shaped`, `inverted_star_shaped`);
//!   absent: `single_hop`. Domain: `metadata.domain`, else `unknown`. `split` when present.
//! - Id: the record's `id` when it has one. RARE's generator writes none (and its later scripts
//!   read one), so a record without gets `noisebench_core::id::stable_id("q", [question,
//!   answer])`: the same on every run and independent of the record's position.
//! - `query_perturbations.<kind> = {perturbed_query, similarity}` become [`QueryVariant`]s;
//!   `document_perturbations.<kind> = [{chunk_id, text, similarity}]` become [`DocVariant`]s,
//!   both in file order. A perturbation of another shape is skipped (`bad_perturbation`); the
//!   record is kept.
//! - Chunks: from `chunks` when given, a JSON list or JSON Lines of objects with an id
//!   (`chunk_id` or `id`), a text (`text`, `content` or `page_content`) and optionally
//!   `report_id`. Without it, each answer chunk is rebuilt from the source sentences of the
//!   records naming it, joined by a space (distinct sentences, first seen first). RARE's
//!   multi-hop records list their chunk ids from a set, so a sentence cannot be tied to its own
//!   chunk; every answer chunk of a record gets all its sentences. Such a corpus holds only the
//!   facts asked about, so one bad row `chunks_from_source_sentences` (row `all`) says how many
//!   chunks were rebuilt, to keep the shortcut visible in every report.
//!
//! Bad rows (never fatal): `bad_record` (a record that is not an object), `missing_field` (no
//! question or answer; in the corpus, no id or text), `no_answer_chunks`, `duplicate_id`,
//! `bad_perturbation`, `missing_chunk` (an answer chunk the corpus lacks; the question is
//! kept), `bad_json` (a JSON Lines line that does not parse), `chunks_from_source_sentences`.
//! Rows are `record N` (from 1) for lists and `line N` for JSON Lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    LoadError, bad, file_label, json_kind, json_text, parse_json_list, read_json_list, read_text,
    string_field,
};
use crate::data::{BadRow, DocVariant, EvalChunk, EvalData, EvalQuestion, QueryVariant};

/// A list of strings (ids or sentences); non-strings and empty strings left out.
fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| json_text(Some(x))).collect())
        .unwrap_or_default()
}

/// The query perturbations of a record; bad ones reported and skipped.
fn query_variants(
    v: Option<&Value>,
    file: &str,
    row: &str,
    bad_rows: &mut Vec<BadRow>,
) -> Vec<QueryVariant> {
    let mut out = Vec::new();
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return out;
    };
    let Some(map) = v.as_object() else {
        bad_rows.push(bad(
            file,
            row,
            "bad_perturbation",
            format!("`query_perturbations` is {}, not an object", json_kind(v)),
        ));
        return out;
    };
    for (kind, p) in map {
        match p
            .as_object()
            .and_then(|o| o.get("perturbed_query"))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
        {
            Some(text) => out.push(QueryVariant {
                kind: kind.clone(),
                text: text.to_string(),
            }),
            None => bad_rows.push(bad(
                file,
                row,
                "bad_perturbation",
                format!("query perturbation `{kind}` has no `perturbed_query` text"),
            )),
        }
    }
    out
}

/// The document perturbations of a record; bad ones reported and skipped.
fn doc_variants(
    v: Option<&Value>,
    file: &str,
    row: &str,
    bad_rows: &mut Vec<BadRow>,
) -> Vec<DocVariant> {
    let mut out = Vec::new();
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return out;
    };
    let Some(map) = v.as_object() else {
        bad_rows.push(bad(
            file,
            row,
            "bad_perturbation",
            format!(
                "`document_perturbations` is {}, not an object",
                json_kind(v)
            ),
        ));
        return out;
    };
    for (kind, list) in map {
        let Some(items) = list.as_array() else {
            bad_rows.push(bad(
                file,
                row,
                "bad_perturbation",
                format!(
                    "document perturbation `{kind}` is {}, not a list",
                    json_kind(list)
                ),
            ));
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let o = item.as_object();
            let chunk_id = json_text(o.and_then(|o| o.get("chunk_id")));
            let text = o
                .and_then(|o| o.get("text"))
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty());
            match (chunk_id, text) {
                (Some(chunk_id), Some(text)) => out.push(DocVariant {
                    kind: kind.clone(),
                    chunk_id,
                    text: text.to_string(),
                }),
                _ => bad_rows.push(bad(
                    file,
                    row,
                    "bad_perturbation",
                    format!(
                        "document perturbation `{kind}` item {}: needs `chunk_id` and `text`",
                        i + 1
                    ),
                )),
            }
        }
    }
    out
}

/// Read a corpus file: a JSON list, or JSON Lines when the text does not start with `[`.
fn read_chunks(path: &Path, data: &mut EvalData) -> Result<(), LoadError> {
    let file = file_label(path);
    let text = read_text(path, &mut data.bad_rows)?;
    let items: Vec<(String, Value)> = if text.trim_start().starts_with('[') {
        parse_json_list(path, &text)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("record {}", i + 1), v))
            .collect()
    } else {
        let mut items = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let row = format!("line {}", i + 1);
            match serde_json::from_str::<Value>(line) {
                Ok(v) => items.push((row, v)),
                Err(e) => data
                    .bad_rows
                    .push(bad(&file, row, "bad_json", e.to_string())),
            }
        }
        items
    };
    let mut seen = BTreeSet::new();
    for (row, v) in items {
        let Some(o) = v.as_object() else {
            data.bad_rows.push(bad(
                &file,
                row,
                "bad_record",
                format!("a chunk is {}, not an object", json_kind(&v)),
            ));
            continue;
        };
        let id = json_text(o.get("chunk_id")).or_else(|| json_text(o.get("id")));
        let text = ["text", "content", "page_content"].iter().find_map(|k| {
            o.get(*k)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
        });
        let (Some(id), Some(text)) = (id, text) else {
            data.bad_rows.push(bad(
                &file,
                row,
                "missing_field",
                "a chunk needs an id (`chunk_id` or `id`) and a text (`text`, `content` or `page_content`)",
            ));
            continue;
        };
        if !seen.insert(id.clone()) {
            data.bad_rows.push(bad(
                &file,
                row,
                "duplicate_id",
                format!("chunk {id} appears again"),
            ));
            continue;
        }
        data.chunks.push(EvalChunk {
            id,
            text: text.to_string(),
            report_id: json_text(o.get("report_id")),
        });
    }
    Ok(())
}

/// Load RARE's record files and, if given, its corpus (see the module documentation for every
/// choice).
pub fn load_rare(records: &[PathBuf], chunks: Option<&Path>) -> Result<EvalData, LoadError> {
    let mut data = EvalData {
        name: "rare".into(),
        ..EvalData::default()
    };
    let mut ids = BTreeSet::new();
    // Sentences of each answer chunk, for a corpus rebuilt from them.
    let mut sentences: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut chunk_order: Vec<String> = Vec::new();
    for path in records {
        let file = file_label(path);
        let items = read_json_list(path, &mut data.bad_rows)?;
        for (n, record) in items.iter().enumerate() {
            let row = format!("record {}", n + 1);
            let Some(o) = record.as_object() else {
                data.bad_rows.push(bad(
                    &file,
                    row,
                    "bad_record",
                    format!("a record is {}, not an object", json_kind(record)),
                ));
                continue;
            };
            let (Some(question), Some(answer)) =
                (string_field(o, "question"), json_text(o.get("answer")))
            else {
                let which = if string_field(o, "question").is_none() {
                    "question"
                } else {
                    "answer"
                };
                data.bad_rows
                    .push(bad(&file, row, "missing_field", format!("no `{which}`")));
                continue;
            };
            let answer_chunk_ids = string_list(o.get("answer_chunk_ids"));
            if answer_chunk_ids.is_empty() {
                data.bad_rows.push(bad(
                    &file,
                    row,
                    "no_answer_chunks",
                    "`answer_chunk_ids` is missing or empty",
                ));
                continue;
            }
            let id = json_text(o.get("id"))
                .unwrap_or_else(|| noisebench_core::id::stable_id("q", &[&question, &answer]));
            if !ids.insert(id.clone()) {
                data.bad_rows.push(bad(
                    &file,
                    row,
                    "duplicate_id",
                    format!("question {id} appears again"),
                ));
                continue;
            }
            let record_sentences = string_list(o.get("source_sentences"));
            for c in &answer_chunk_ids {
                let list = sentences.entry(c.clone()).or_insert_with(|| {
                    chunk_order.push(c.clone());
                    Vec::new()
                });
                for s in &record_sentences {
                    if !list.contains(s) {
                        list.push(s.clone());
                    }
                }
            }
            let query_perturbations = query_variants(
                o.get("query_perturbations"),
                &file,
                &row,
                &mut data.bad_rows,
            );
            let document_perturbations = doc_variants(
                o.get("document_perturbations"),
                &file,
                &row,
                &mut data.bad_rows,
            );
            data.questions.push(EvalQuestion {
                id,
                question,
                answer,
                kind: string_field(o, "multi_hop_type").unwrap_or_else(|| "single_hop".into()),
                domain: o
                    .get("metadata")
                    .and_then(Value::as_object)
                    .and_then(|m| string_field(m, "domain"))
                    .unwrap_or_else(|| "unknown".into()),
                answer_chunk_ids,
                query_perturbations,
                document_perturbations,
                retrieved: Vec::new(),
                split: string_field(o, "split"),
            });
        }
    }
    match chunks {
        Some(path) => {
            read_chunks(path, &mut data)?;
            let file = file_label(path);
            let have: BTreeSet<&str> = data.chunks.iter().map(|c| c.id.as_str()).collect();
            let mut missing = Vec::new();
            for q in &data.questions {
                for c in &q.answer_chunk_ids {
                    if !have.contains(c.as_str()) {
                        missing.push(bad(
                            &file,
                            q.id.clone(),
                            "missing_chunk",
                            format!("answer chunk {c} of question {} is not in the corpus", q.id),
                        ));
                    }
                }
            }
            data.bad_rows.extend(missing);
        }
        None => {
            for id in chunk_order {
                let text = sentences.remove(&id).unwrap_or_default().join(" ");
                data.chunks.push(EvalChunk {
                    id,
                    text,
                    report_id: None,
                });
            }
            if !data.chunks.is_empty() {
                let file = records.first().map(|p| file_label(p)).unwrap_or_default();
                data.bad_rows.push(bad(
                    &file,
                    "all",
                    "chunks_from_source_sentences",
                    format!(
                        "no corpus given: {} answer chunks rebuilt from the records' source sentences",
                        data.chunks.len()
                    ),
                ));
            }
        }
    }
    Ok(data)
}
