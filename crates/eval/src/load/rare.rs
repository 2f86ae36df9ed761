//! RARE's QA records (`LeiLiLab/RARE`), as its code writes and reads them, and its retrieval
//! results.
//!
//! Layout (see [`RareInputs::discover`]): a folder is read as `robustness_evaluation.py` reads
//! `--dataset_dir`: every `*.json` is a record file (`finance_multi_hop_perturbed.json`,
//! `<domain>_single_hop...json`, the generator's `rag_single_hop_dataset.json`), except
//! `chunks.json` / `chunks.jsonl` (the corpus, unless `--chunks` names one),
//! `*_retrieval_results.json` (retrieval results; also read from the folder's
//! `retrieval_results/`), the evaluator's own outputs (`*_checkpoint.json`,
//! `*_interim_results_batch_*.json`, `*_final_report.json`, `*_robustness_results.json`) and the
//! generator's checkpoint `updated_<name>.json` when its final `<name>.json` is there too; each
//! file left out is named in the load summary.
//!
//! Records: `{question, answer, answer_chunk_ids[], metadata{..}, source_sentences[],
//! entity_1[], relation[], entity_2[], multi_hop_type?, query_perturbations?,
//! document_perturbations?}`, in a JSON list, or JSON objects one after another (the
//! generator's checkpoint files `updated_rag_*_dataset.json`, written a record at a time). A
//! checkpoint cut short keeps its whole records; the rest is one `bad_json` bad row naming the
//! line. Rows are `record N` in lists, `record N (line L)` in checkpoints. Each record is read
//! by `noisebench_releases::rare::ReadRecord::from_value`, each chunk by `ChunkRow::from_value`
//! and each retrieval result by `RetrievalEntry::from_value`: the RARE format's one home, beside
//! the typed record and writer `export-rare` uses.
//!
//! Choices:
//! - Kind: `multi_hop_type` (`chained_multi_hop`, `star_shaped`, `inverted_star_shaped`);
//!   absent: `single_hop`. Domain: `metadata.domain`, else the file name's
//!   (`domain_from_name`: `finance` for `finance_multi_hop_perturbed.json`), else `unknown`.
//!   `split` when present.
//! - Id: the record's `id` when it has one. RARE's generator writes none (and its later scripts
//!   read one), so a record without gets `noisebench_core::id::stable_id("q", [question,
//!   answer])`: the same on every run and independent of the record's position.
//! - `query_perturbations.<kind> = {perturbed_query, similarity}` become [`QueryVariant`]s;
//!   `document_perturbations.<kind> = [{chunk_id, text, similarity}]` become [`DocVariant`]s,
//!   both in file order. A perturbation of another shape is skipped (`bad_perturbation`); the
//!   record is kept.
//! - Retrieval results (`run_retrievals.py`): `<stem>_retrieval_results.json` for the record
//!   file `<stem>.json` (else `<domain>_retrieval_results.json`), an object `{query_id:
//!   {original_query, answer, variants, retrievers: {<name>: {original: [ids], <kind>: [ids]}}}}`.
//!   RARE keys it by the record's `id`, else by Python's salted `hash(question)`, which cannot
//!   be recomputed; so a record is joined by its `id` when it has one, else by `original_query`
//!   equal to its question. Each (retriever, query form) list becomes a [`RealRetrieval`] that
//!   RARE-Met's retrieval cells use; a question with no entry is a `no_retrieval_result` bad
//!   row (kept: its retrieval cells use BM25). The load summary says which file served which
//!   records and how many joined.
//! - Chunks: from the corpus when there is one, a JSON list or JSON Lines of objects with an id
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
//! kept), `bad_json` (a JSON Lines line, or the rest of a checkpoint, that does not parse),
//! `no_retrieval_result`, `bad_retrieval_result` (an entry without retriever lists),
//! `chunks_from_source_sentences`. Errors: no record file at all, retrieval results that are
//! not an object ([`LoadError::Layout`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use noisebench_releases::rare::{self, ChunkRow, ReadRecord, RetrievalEntry};

use super::{LoadError, bad, file_label, parse_json_list, read_text};
use crate::data::{DocVariant, EvalChunk, EvalData, EvalQuestion, QueryVariant, RealRetrieval};

/// Read a corpus file (a JSON list, or JSON Lines when the text does not start with `[`), each
/// chunk typed by `noisebench_releases::rare::ChunkRow`.
fn read_chunks(path: &Path, data: &mut EvalData) -> Result<(), LoadError> {
    let file = file_label(path);
    let text = read_text(path, &mut data.bad_rows)?;
    let (items, problems) = rare::chunk_values(&text).map_err(|e| list_error(path, e))?;
    for (row, (reason, detail)) in problems {
        data.bad_rows.push(bad(&file, row, reason, detail));
    }
    let mut seen = BTreeSet::new();
    for (row, v) in items {
        let chunk = match ChunkRow::from_value(&v) {
            Ok(c) => c,
            Err((reason, detail)) => {
                data.bad_rows.push(bad(&file, row, reason, detail));
                continue;
            }
        };
        if !seen.insert(chunk.id.clone()) {
            let detail = format!("chunk {} appears again", chunk.id);
            data.bad_rows.push(bad(&file, row, "duplicate_id", detail));
            continue;
        }
        data.chunks.push(EvalChunk {
            id: chunk.id,
            text: chunk.text,
            report_id: chunk.report_id,
        });
    }
    Ok(())
}

/// A text that should be one JSON list, as the file's error.
fn list_error(path: &Path, e: rare::ListError) -> LoadError {
    match e {
        rare::ListError::Json(error) => LoadError::Json {
            path: path.to_path_buf(),
            error,
        },
        rare::ListError::NotAList(found) => LoadError::NotAList {
            path: path.to_path_buf(),
            found,
        },
    }
}

/// RARE's inputs, by role: record files, the corpus, retrieval results.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RareInputs {
    /// Record files: JSON lists, or the generator's checkpoint files (JSON objects one after
    /// another).
    pub records: Vec<PathBuf>,
    /// The chunk corpus (a JSON list or JSON Lines); `None`: answer chunks rebuilt from the
    /// records' source sentences.
    pub chunks: Option<PathBuf>,
    /// `run_retrievals.py`'s `<name>_retrieval_results.json` files.
    pub retrieval_results: Vec<PathBuf>,
    /// Files of the folder that were left out, and why (printed in the load summary).
    pub left_out: Vec<(PathBuf, String)>,
}

/// The evaluator's own outputs and the generator's intermediate files: never records.
fn not_records(name: &str) -> Option<&'static str> {
    if name.ends_with("_checkpoint.json") {
        Some("robustness_evaluation.py's checkpoint, not records")
    } else if name.contains("_interim_results_batch_")
        || name.ends_with("_final_report.json")
        || name.ends_with("_robustness_results.json")
    {
        Some("robustness_evaluation.py's results, not records")
    } else if name == "kg_traverse_triplets.json" || name == "triplets.json" {
        Some("the generator's triplets, not records")
    } else {
        None
    }
}

fn is_corpus_name(name: &str) -> bool {
    let stem = name
        .strip_suffix(".json")
        .or_else(|| name.strip_suffix(".jsonl"))
        .unwrap_or(name);
    stem == "chunks" || stem.ends_with("_chunks") || stem.starts_with("chunks_")
}

impl RareInputs {
    /// RARE's inputs from what the user gave: a folder (every `*.json` in it, as RARE's
    /// evaluator reads it, plus `*_retrieval_results.json` in its `retrieval_results/`
    /// subfolder; `chunks.json`/`chunks.jsonl` is the corpus unless `chunks` names one), or
    /// files (record files and `*_retrieval_results.json`). `retrieval_dir`: another folder of
    /// retrieval results. When a folder has both the generator's checkpoint
    /// `updated_<name>.json` and its final `<name>.json`, the final file is read.
    pub fn discover(
        inputs: &[PathBuf],
        chunks: Option<&Path>,
        retrieval_dir: Option<&Path>,
    ) -> Result<RareInputs, LoadError> {
        let mut out = RareInputs {
            chunks: chunks.map(Path::to_path_buf),
            ..Default::default()
        };
        let list = |dir: &Path| -> Result<Vec<PathBuf>, LoadError> {
            let entries = std::fs::read_dir(dir).map_err(|error| LoadError::Io {
                path: dir.to_path_buf(),
                error,
            })?;
            let mut files: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            Ok(files)
        };
        let mut candidates: Vec<PathBuf> = Vec::new();
        let mut retrieval_dirs: Vec<PathBuf> =
            retrieval_dir.map(Path::to_path_buf).into_iter().collect();
        for input in inputs {
            if input.is_dir() {
                candidates.extend(list(input)?);
                let sub = input.join("retrieval_results");
                if sub.is_dir() {
                    retrieval_dirs.push(sub);
                }
            } else {
                candidates.push(input.clone());
            }
        }
        for dir in &retrieval_dirs {
            for f in list(dir)? {
                if file_label(&f).ends_with("_retrieval_results.json") {
                    out.retrieval_results.push(f);
                }
            }
        }
        let names: BTreeSet<String> = candidates.iter().map(|p| file_label(p)).collect();
        for path in candidates {
            let name = file_label(&path);
            let given_alone = inputs.iter().any(|i| i == &path);
            if name.ends_with("_retrieval_results.json") {
                if !out.retrieval_results.contains(&path) {
                    out.retrieval_results.push(path);
                }
            } else if !given_alone && !name.ends_with(".json") && !name.ends_with(".jsonl") {
                out.left_out.push((path, "not a .json file".into()));
            } else if !given_alone && is_corpus_name(&name) {
                if out.chunks.is_none() {
                    out.chunks = Some(path);
                } else if out.chunks.as_deref() != Some(path.as_path()) {
                    out.left_out
                        .push((path, "another corpus was given with --chunks".into()));
                }
            } else if !given_alone && name.ends_with(".jsonl") {
                out.left_out
                    .push((path, "JSON Lines other than a corpus".into()));
            } else if let (false, Some(why)) = (given_alone, not_records(&name)) {
                out.left_out.push((path, why.into()));
            } else if let (false, Some(final_name)) = (given_alone, name.strip_prefix("updated_"))
                && names.contains(final_name)
            {
                out.left_out.push((
                    path,
                    format!("the generator's checkpoint; its final file {final_name} is read"),
                ));
            } else {
                out.records.push(path);
            }
        }
        Ok(out)
    }
}

/// The domain a file's name gives: what comes before `_single_hop` or `_multi_hop`
/// (`finance_multi_hop_perturbed.json` -> `finance`), as RARE names its files; `None` for other
/// names and the generator's generic ones (`rag_single_hop_dataset`,
/// `updated_rag_multi_hop_dataset`).
pub(crate) fn domain_from_name(path: &Path) -> Option<String> {
    let name = file_label(path);
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    let at = ["_single_hop", "_multi_hop"]
        .iter()
        .filter_map(|m| stem.find(m))
        .min()?;
    let prefix = &stem[..at];
    let generic =
        prefix.is_empty() || prefix == "rag" || prefix == "updated_rag" || prefix.ends_with("_rag");
    (!generic).then(|| prefix.to_string())
}

/// The line (from 1) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A record file's records with their row names: a JSON list (`record N`), or JSON objects one
/// after another as the generator's checkpoint files hold them (`record N (line L)`). A
/// checkpoint cut short (the generator stopped mid-write) keeps what came before; the rest is
/// one `bad_json` bad row naming the line.
fn read_records(path: &Path, data: &mut EvalData) -> Result<Vec<(String, Value)>, LoadError> {
    let text = read_text(path, &mut data.bad_rows)?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return Ok(parse_json_list(path, &text)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("record {}", i + 1), v))
            .collect());
    }
    if !trimmed.starts_with('{') {
        // Neither a list nor objects: the JSON error says where.
        return parse_json_list(path, &text).map(|_| Vec::new());
    }
    let file = file_label(path);
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    loop {
        let offset = stream.byte_offset();
        // The next object starts at the first non-blank byte after the previous one.
        let start = offset
            + text[offset..]
                .find(|c: char| !c.is_whitespace())
                .unwrap_or(0);
        match stream.next() {
            None => break,
            Some(Ok(v)) => {
                out.push((
                    format!("record {} (line {})", out.len() + 1, line_of(&text, start)),
                    v,
                ));
            }
            Some(Err(e)) => {
                data.bad_rows.push(bad(
                    &file,
                    format!("line {}", e.line()),
                    "bad_json",
                    format!(
                        "{e}; the rest of the file (from line {}) is not read",
                        line_of(&text, start)
                    ),
                ));
                break;
            }
        }
    }
    Ok(out)
}

/// One `run_retrievals.py` result entry's lists, one per (retriever, query form).
fn retrievals_of(entry: RetrievalEntry) -> Vec<RealRetrieval> {
    let mut out = Vec::new();
    for (retriever, by_query) in entry.retrievers {
        for (query, chunk_ids) in by_query {
            out.push(RealRetrieval {
                retriever: retriever.clone(),
                query,
                chunk_ids,
            });
        }
    }
    out
}

/// A retrieval results file, for joining: entries by key and by original query.
struct ResultsFile {
    path: PathBuf,
    by_key: BTreeMap<String, Vec<RealRetrieval>>,
    by_query: BTreeMap<String, Vec<RealRetrieval>>,
    retrievers: BTreeSet<String>,
    used: bool,
}

fn read_results(path: &Path, data: &mut EvalData) -> Result<ResultsFile, LoadError> {
    let text = read_text(path, &mut data.bad_rows)?;
    let value: Value = serde_json::from_str(&text).map_err(|error| LoadError::Json {
        path: path.to_path_buf(),
        error,
    })?;
    let entries = rare::retrieval_entries(&value).map_err(|detail| LoadError::Layout {
        path: path.to_path_buf(),
        detail,
    })?;
    let file = file_label(path);
    let mut out = ResultsFile {
        path: path.to_path_buf(),
        by_key: BTreeMap::new(),
        by_query: BTreeMap::new(),
        retrievers: BTreeSet::new(),
        used: false,
    };
    for (key, entry) in entries {
        let entry = match entry {
            Ok(e) => e,
            Err((reason, detail)) => {
                data.bad_rows.push(bad(&file, key, reason, detail));
                continue;
            }
        };
        let query = entry.original_query.clone();
        let r = retrievals_of(entry);
        out.retrievers.extend(r.iter().map(|x| x.retriever.clone()));
        if let Some(q) = query {
            out.by_query.entry(q).or_insert_with(|| r.clone());
        }
        out.by_key.insert(key, r);
    }
    Ok(out)
}

/// Load RARE's record files and, if given, its corpus (see the module documentation for every
/// choice).
pub fn load_rare(records: &[PathBuf], chunks: Option<&Path>) -> Result<EvalData, LoadError> {
    load_rare_inputs(&RareInputs {
        records: records.to_vec(),
        chunks: chunks.map(Path::to_path_buf),
        ..Default::default()
    })
}

/// Load RARE's inputs (see the module documentation for every choice).
pub fn load_rare_inputs(inputs: &RareInputs) -> Result<EvalData, LoadError> {
    let mut data = EvalData {
        name: "rare".into(),
        ..EvalData::default()
    };
    if inputs.records.is_empty() {
        return Err(LoadError::Layout {
            path: inputs
                .left_out
                .first()
                .and_then(|(p, _)| p.parent())
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            detail: "no RARE record file (`<domain>_single_hop...json`, `<domain>_multi_hop_perturbed.json`, `rag_*_dataset.json`)".into(),
        });
    }
    for (path, why) in &inputs.left_out {
        data.notes
            .push(format!("left out {}: {why}", file_label(path)));
    }
    let mut results: Vec<ResultsFile> = Vec::new();
    for path in &inputs.retrieval_results {
        results.push(read_results(path, &mut data)?);
    }
    let mut seen = Seen::default();
    for path in &inputs.records {
        let file = file_label(path);
        let stem = file.strip_suffix(".json").unwrap_or(&file).to_string();
        let name_domain = domain_from_name(path);
        let items = read_records(path, &mut data)?;
        let first_question = data.questions.len();
        // The results for this file: `<stem>_retrieval_results.json` (run_retrievals.py names
        // them so), else `<domain>_retrieval_results.json`.
        let result_index = results
            .iter()
            .position(|r| file_label(&r.path) == format!("{stem}_retrieval_results.json"))
            .or_else(|| {
                name_domain.as_ref().and_then(|d| {
                    results
                        .iter()
                        .position(|r| file_label(&r.path) == format!("{d}_retrieval_results.json"))
                })
            });
        let mut join = Join::default();
        for (row, record) in &items {
            let result = result_index.map(|i| &mut results[i]);
            let file = RecordFile {
                file: &file,
                name_domain: name_domain.as_deref(),
            };
            add_question(&mut data, &mut seen, &mut join, file, row, record, result);
        }
        let loaded = data.questions.len() - first_question;
        data.notes.push(format!(
            "records: {file}: {} read, {loaded} questions{}",
            items.len(),
            name_domain
                .as_ref()
                .map(|d| format!(" (domain from the name: {d})"))
                .unwrap_or_default()
        ));
        match result_index {
            Some(i) => data.notes.push(format!(
                "retrieval results: {} ({} retrievers: {}) for {file}: {} of {} questions joined{}; retrieval cells use them",
                file_label(&results[i].path),
                results[i].retrievers.len(),
                results[i].retrievers.iter().cloned().collect::<Vec<_>>().join(", "),
                join.joined,
                join.joined + join.unjoined,
                if join.unjoined > 0 { ", the rest use BM25" } else { "" }
            )),
            None => data.notes.push(format!(
                "retrieval results: none for {file} (no {stem}_retrieval_results.json): retrieval cells use BM25 over the corpus"
            )),
        }
    }
    unused_results_notes(inputs, &results, &mut data);
    corpus(inputs, &mut data, seen)?;
    Ok(data)
}

/// The question ids and answer chunks seen so far, over every record file.
#[derive(Default)]
struct Seen {
    ids: BTreeSet<String>,
    /// Sentences of each answer chunk, for a corpus rebuilt from them.
    sentences: BTreeMap<String, Vec<String>>,
    chunk_order: Vec<String>,
}

/// How many questions of a record file found their retrieval results, and how many did not.
#[derive(Default)]
struct Join {
    joined: usize,
    unjoined: usize,
}

/// A record file's label and the domain its name gives.
#[derive(Clone, Copy)]
struct RecordFile<'a> {
    file: &'a str,
    name_domain: Option<&'a str>,
}

/// One record as a question into `data`, joined to its retrieval results when the file has
/// some; a record that cannot be read or repeats an id is a bad row.
fn add_question(
    data: &mut EvalData,
    seen: &mut Seen,
    join: &mut Join,
    RecordFile { file, name_domain }: RecordFile<'_>,
    row: &str,
    record: &Value,
    results: Option<&mut ResultsFile>,
) {
    let row = row.to_string();
    let (record, problems) = match ReadRecord::from_value(record) {
        Ok(read) => read,
        Err((reason, detail)) => {
            data.bad_rows.push(bad(file, row, reason, detail));
            return;
        }
    };
    let ReadRecord {
        id: own_id,
        question,
        answer,
        answer_chunk_ids,
        source_sentences: record_sentences,
        multi_hop_type,
        domain,
        split,
        query_perturbations,
        document_perturbations,
    } = record;
    let id = own_id
        .clone()
        .unwrap_or_else(|| noisebench_core::id::stable_id("q", &[&question, &answer]));
    if !seen.ids.insert(id.clone()) {
        data.bad_rows.push(bad(
            file,
            row,
            "duplicate_id",
            format!("question {id} appears again"),
        ));
        return;
    }
    for c in &answer_chunk_ids {
        let list = seen.sentences.entry(c.clone()).or_insert_with(|| {
            seen.chunk_order.push(c.clone());
            Vec::new()
        });
        for s in &record_sentences {
            if !list.contains(s) {
                list.push(s.clone());
            }
        }
    }
    for (reason, detail) in problems {
        data.bad_rows.push(bad(file, row.clone(), reason, detail));
    }
    let query_perturbations = query_perturbations
        .into_iter()
        .map(|(kind, text)| QueryVariant { kind, text })
        .collect();
    let document_perturbations = document_perturbations
        .into_iter()
        .map(|(kind, chunk_id, text)| DocVariant {
            kind,
            chunk_id,
            text,
        })
        .collect();
    // RARE's evaluator joins on `str(record["id"])`; its generator writes no id and
    // run_retrievals.py then keys by Python's (salted) hash of the question, so a record
    // without an id is joined on the question text (`original_query`).
    let mut retrievals = Vec::new();
    if let Some(r) = results {
        let found = own_id
            .as_ref()
            .and_then(|k| r.by_key.get(k))
            .or_else(|| r.by_query.get(question.trim()));
        match found {
            Some(found) => {
                retrievals = found.clone();
                r.used = true;
                join.joined += 1;
            }
            None => {
                join.unjoined += 1;
                data.bad_rows.push(bad(
                    &file_label(&r.path),
                    row.clone(),
                    "no_retrieval_result",
                    format!(
                        "question {id} of {file} has no entry (by id or `original_query`); its retrieval cells use BM25"
                    ),
                ));
            }
        }
    }
    data.questions.push(EvalQuestion {
        id,
        question,
        answer,
        kind: multi_hop_type.unwrap_or_else(|| "single_hop".into()),
        domain: domain
            .or_else(|| name_domain.map(str::to_string))
            .unwrap_or_else(|| "unknown".into()),
        answer_chunk_ids,
        query_perturbations,
        document_perturbations,
        retrievals,
        split,
    });
}

/// A note for each retrieval results file that no record file's name matches.
fn unused_results_notes(inputs: &RareInputs, results: &[ResultsFile], data: &mut EvalData) {
    for r in results {
        if !r.used
            && !inputs.records.iter().any(|p| {
                let f = file_label(p);
                let stem = f.strip_suffix(".json").unwrap_or(&f);
                file_label(&r.path) == format!("{stem}_retrieval_results.json")
                    || domain_from_name(p).is_some_and(|d| {
                        file_label(&r.path) == format!("{d}_retrieval_results.json")
                    })
            })
        {
            data.notes.push(format!(
                "left out {}: no record file of that name",
                file_label(&r.path)
            ));
        }
    }
}

/// The corpus: the given chunks file (each answer chunk missing from it a bad row), or else
/// the answer chunks rebuilt from the records' source sentences.
fn corpus(inputs: &RareInputs, data: &mut EvalData, mut seen: Seen) -> Result<(), LoadError> {
    match inputs.chunks.as_deref() {
        Some(path) => {
            read_chunks(path, data)?;
            let file = file_label(path);
            data.notes
                .push(format!("corpus: {file}: {} chunks", data.chunks.len()));
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
            for id in std::mem::take(&mut seen.chunk_order) {
                let text = seen.sentences.remove(&id).unwrap_or_default().join(" ");
                data.chunks.push(EvalChunk {
                    id,
                    text,
                    report_id: None,
                });
            }
            if !data.chunks.is_empty() {
                let file = inputs
                    .records
                    .first()
                    .map(|p| file_label(p))
                    .unwrap_or_default();
                data.bad_rows.push(bad(
                    &file,
                    "all",
                    "chunks_from_source_sentences",
                    format!(
                        "no corpus given: {} answer chunks rebuilt from the records' source sentences",
                        data.chunks.len()
                    ),
                ));
                data.notes.push(format!(
                    "corpus: none given (--chunks, or chunks.json in the folder): {} answer chunks rebuilt from source sentences; retrieval searches only them",
                    data.chunks.len()
                ));
            }
        }
    }
    Ok(())
}
