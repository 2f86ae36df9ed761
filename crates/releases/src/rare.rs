//! RARE's QA records (`LeiLiLab/RARE`): the typed record, its writer and its readers.
//!
//! Layout: RARE's generator (`main/rag_dataset_generator.py`) writes two files, each one JSON
//! list (not JSON Lines), [`SINGLE_HOP_FILE`] and [`MULTI_HOP_FILE`]; `main/run_retrievals.py`,
//! `main/dataset_perturbation.py` and `main/robustness_evaluation.py` read them with
//! `json.load`. A record holds `question`, `answer`, `answer_chunk_ids`, `metadata`,
//! `source_sentences`, `entity_1`, `relation`, `entity_2` (one entry per triplet), and for
//! multi-hop records `multi_hop_type`.
//!
//! What we write ([`RareRecord`], `write_records`) differs, and why: every record carries
//! `id` (our question id, stable across refreshes), because RARE's retrieval and evaluation
//! scripts key results by `rec["id"]` while its generator never writes one; `split`
//! (`train`/`test`, or null); and always both `query_perturbations` (kind ->
//! `{perturbed_query, similarity}`) and `document_perturbations` (`back_translation` and
//! `regex_delete`, each a list of `{chunk_id, text, similarity}`), empty when there are none,
//! because the evaluation script indexes those keys without a default.
//!
//! Reading: [`read_records`] reads a file we wrote back into [`RareRecord`]s, strictly (any
//! missing field is an error naming the file). [`ReadRecord::from_value`] reads one record as
//! RARE's own files hold it (no `id`, no `split`, perturbations optional, ids as strings or
//! numbers), returning what it could not use as `(reason, detail)` problems for the caller to
//! count; `noisebench-eval` reads every RARE file through it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// RARE's single-hop file: a JSON list of records without `multi_hop_type`.
pub const SINGLE_HOP_FILE: &str = "rag_single_hop_dataset.json";
/// RARE's multi-hop file: a JSON list of records with `multi_hop_type`.
pub const MULTI_HOP_FILE: &str = "rag_multi_hop_dataset.json";
/// Both files, in the order `export-rare` writes them.
pub const RARE_FILES: [&str; 2] = [SINGLE_HOP_FILE, MULTI_HOP_FILE];

/// The multi-hop kinds RARE names in `multi_hop_type`.
pub const MULTI_HOP_KINDS: [&str; 3] = ["chained_multi_hop", "star_shaped", "inverted_star_shaped"];
/// The document perturbation kinds RARE's evaluation reads; each is always present in a record
/// we write.
pub const DOCUMENT_PERTURBATION_KINDS: [&str; 2] = ["back_translation", "regex_delete"];

/// Writing or reading a RARE file failed; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum RareError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: cannot encode JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: not a list of RARE records: {source}")]
    Decode {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// One record of RARE's files, as we write it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RareRecord {
    /// Our question id: RARE's later scripts key by `id`, its generator writes none.
    pub id: String,
    pub question: String,
    pub answer: String,
    pub answer_chunk_ids: Vec<String>,
    pub metadata: BTreeMap<String, String>,
    pub source_sentences: Vec<String>,
    pub entity_1: Vec<String>,
    pub relation: Vec<String>,
    pub entity_2: Vec<String>,
    /// `chained_multi_hop`, `star_shaped` or `inverted_star_shaped`; absent on single-hop
    /// records, as in RARE's single-hop file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_hop_type: Option<String>,
    /// `train` or `test`; null when the export had no splits.
    pub split: Option<String>,
    /// Kind (`character_level`, `word_level`, `grammar_perturbation`, `irrelevant_info`) ->
    /// the perturbed query.
    pub query_perturbations: BTreeMap<String, RareQueryPerturbation>,
    /// `back_translation` and `regex_delete` (always both) -> perturbed evidence chunks.
    pub document_perturbations: BTreeMap<String, Vec<RareDocumentPerturbation>>,
}

/// A perturbed query as RARE writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RareQueryPerturbation {
    pub perturbed_query: String,
    pub similarity: f64,
}

/// A perturbed evidence chunk as RARE writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RareDocumentPerturbation {
    pub chunk_id: String,
    pub text: String,
    pub similarity: Option<f64>,
}

/// Write `records` to `path` as one pretty-printed JSON list and a final newline (the bytes
/// `to_writer_pretty` gives for the whole list), serialising each as it comes: the document
/// perturbations' texts make the files hundreds of MB at RARE's size, which neither the records
/// nor a buffer hold whole. Returns `path`.
pub(crate) fn write_records(
    path: &Path,
    records: impl IntoIterator<Item = impl Serialize>,
) -> Result<PathBuf, RareError> {
    use serde::ser::{SerializeSeq, Serializer};
    let io = |source| RareError::Io {
        path: path.into(),
        source,
    };
    let json = |source| RareError::Json {
        path: path.into(),
        source,
    };
    let mut out =
        std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).map_err(io)?);
    let mut serializer = serde_json::Serializer::pretty(&mut out);
    let mut seq = serializer.serialize_seq(None).map_err(json)?;
    for record in records {
        seq.serialize_element(&record).map_err(json)?;
    }
    seq.end().map_err(json)?;
    std::io::Write::write_all(&mut out, b"\n").map_err(io)?;
    out.into_inner().map_err(|e| io(e.into_error()))?;
    Ok(path.into())
}

/// Create `dir` and its parents when missing.
pub(crate) fn create_dir(dir: &Path) -> Result<(), RareError> {
    std::fs::create_dir_all(dir).map_err(|source| RareError::Io {
        path: dir.into(),
        source,
    })
}

/// Read a file `write_records` wrote back into its records, strictly: every field of
/// [`RareRecord`] must be there (RARE's own files, which lack `id`, are read with
/// [`ReadRecord::from_value`]).
pub fn read_records(path: &Path) -> Result<Vec<RareRecord>, RareError> {
    let file = std::fs::File::open(path).map_err(|source| RareError::Io {
        path: path.into(),
        source,
    })?;
    serde_json::from_reader(std::io::BufReader::new(file)).map_err(|source| RareError::Decode {
        path: path.into(),
        source,
    })
}

/// One record as read from any RARE file, ours or the authors': only what a question needs,
/// every optional part optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadRecord {
    /// `id` (a string or a number) when the record has one; RARE's generator writes none.
    pub id: Option<String>,
    pub question: String,
    pub answer: String,
    /// Never empty.
    pub answer_chunk_ids: Vec<String>,
    pub source_sentences: Vec<String>,
    /// `multi_hop_type`; `None` for a single-hop record.
    pub multi_hop_type: Option<String>,
    /// `metadata.domain`.
    pub domain: Option<String>,
    pub split: Option<String>,
    /// `(kind, perturbed_query)`, in file order.
    pub query_perturbations: Vec<(String, String)>,
    /// `(kind, chunk_id, text)`, in file order.
    pub document_perturbations: Vec<(String, String, String)>,
}

/// Why a record was not read, or a part of it left out: a reason code and a detail.
pub type Problem = (&'static str, String);

impl ReadRecord {
    /// Read one record. Err: the record cannot be a question (`bad_record`: not an object;
    /// `missing_field`: no `question` or `answer`; `no_answer_chunks`). Ok: the record and the
    /// perturbations of another shape left out of it (`bad_perturbation`, one each).
    /// Strings are trimmed; an empty string counts as absent; list items that are not strings
    /// (or numbers, for ids) are left out.
    pub fn from_value(record: &Value) -> Result<(ReadRecord, Vec<Problem>), Problem> {
        let Some(o) = record.as_object() else {
            return Err((
                "bad_record",
                format!("a record is {}, not an object", json_kind(record)),
            ));
        };
        let question = string_field(o, "question");
        let answer = json_text(o.get("answer"));
        let (Some(question), Some(answer)) = (question, answer) else {
            let which = if string_field(o, "question").is_none() {
                "question"
            } else {
                "answer"
            };
            return Err(("missing_field", format!("no `{which}`")));
        };
        let answer_chunk_ids = string_list(o.get("answer_chunk_ids"));
        if answer_chunk_ids.is_empty() {
            return Err((
                "no_answer_chunks",
                "`answer_chunk_ids` is missing or empty".into(),
            ));
        }
        let mut problems = Vec::new();
        let query_perturbations = query_perturbations(o.get("query_perturbations"), &mut problems);
        let document_perturbations =
            document_perturbations(o.get("document_perturbations"), &mut problems);
        Ok((
            ReadRecord {
                id: json_text(o.get("id")),
                question,
                answer,
                answer_chunk_ids,
                source_sentences: string_list(o.get("source_sentences")),
                multi_hop_type: string_field(o, "multi_hop_type"),
                domain: o
                    .get("metadata")
                    .and_then(Value::as_object)
                    .and_then(|m| string_field(m, "domain")),
                split: string_field(o, "split"),
                query_perturbations,
                document_perturbations,
            },
            problems,
        ))
    }
}

/// `null`, `a boolean`, … for messages.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A string field, trimmed; `None` when absent, not a string, or empty.
fn string_field(o: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    o.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A JSON string or number as text (ids are written either way); `None` for anything else or
/// an empty string.
fn json_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A list of strings (ids or sentences); non-strings and empty strings left out.
fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| json_text(Some(x))).collect())
        .unwrap_or_default()
}

fn query_perturbations(v: Option<&Value>, problems: &mut Vec<Problem>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return out;
    };
    let Some(map) = v.as_object() else {
        problems.push((
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
            Some(text) => out.push((kind.clone(), text.to_string())),
            None => problems.push((
                "bad_perturbation",
                format!("query perturbation `{kind}` has no `perturbed_query` text"),
            )),
        }
    }
    out
}

fn document_perturbations(
    v: Option<&Value>,
    problems: &mut Vec<Problem>,
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return out;
    };
    let Some(map) = v.as_object() else {
        problems.push((
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
            problems.push((
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
                (Some(chunk_id), Some(text)) => {
                    out.push((kind.clone(), chunk_id, text.to_string()))
                }
                _ => problems.push((
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

/// The corpus file names RARE's folder may hold (a JSON list, or JSON Lines).
#[cfg(test)]
const CHUNK_FILES: [&str; 2] = ["chunks.json", "chunks.jsonl"];
/// The suffix of `run_retrievals.py`'s results file for the record file `<name>.json`.
pub const RETRIEVAL_RESULTS_SUFFIX: &str = "_retrieval_results.json";

/// One chunk of RARE's corpus. Read from objects with an id (`chunk_id` or `id`), a text
/// (`text`, `content` or `page_content`) and optionally `report_id`; written with `chunk_id`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkRow {
    #[serde(rename = "chunk_id")]
    pub id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_id: Option<String>,
}

impl ChunkRow {
    /// Read one chunk; Err: `bad_record` (not an object) or `missing_field` (no id or text).
    pub fn from_value(v: &Value) -> Result<ChunkRow, Problem> {
        let Some(o) = v.as_object() else {
            return Err((
                "bad_record",
                format!("a chunk is {}, not an object", json_kind(v)),
            ));
        };
        let id = json_text(o.get("chunk_id")).or_else(|| json_text(o.get("id")));
        let text = ["text", "content", "page_content"].iter().find_map(|k| {
            o.get(*k)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
        });
        let (Some(id), Some(text)) = (id, text) else {
            return Err((
                "missing_field",
                "a chunk needs an id (`chunk_id` or `id`) and a text (`text`, `content` or `page_content`)".into(),
            ));
        };
        Ok(ChunkRow {
            id,
            text: text.to_string(),
            report_id: json_text(o.get("report_id")),
        })
    }
}

/// A corpus text's items with their row names: a JSON list (`record N`), or JSON Lines when
/// the text does not start with `[` (`line N`; a line that does not parse is a `bad_json`
/// problem named by its line). Err: a list that does not parse, or a top level that is not a
/// list.
#[allow(clippy::type_complexity)]
pub fn chunk_values(
    text: &str,
) -> Result<(Vec<(String, Value)>, Vec<(String, Problem)>), ListError> {
    if text.trim_start().starts_with('[') {
        let items = json_list(text)?;
        let rows = items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("record {}", i + 1), v))
            .collect();
        return Ok((rows, Vec::new()));
    }
    let (mut items, mut problems) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row = format!("line {}", i + 1);
        match serde_json::from_str::<Value>(line) {
            Ok(v) => items.push((row, v)),
            Err(e) => problems.push((row, ("bad_json", e.to_string()))),
        }
    }
    Ok((items, problems))
}

/// Text that should hold one JSON list and does not.
#[derive(Debug)]
pub enum ListError {
    Json(serde_json::Error),
    /// The top level is something else (`an object`, ...).
    NotAList(&'static str),
}

/// The items of a text holding one JSON list.
pub(crate) fn json_list(text: &str) -> Result<Vec<Value>, ListError> {
    match serde_json::from_str(text).map_err(ListError::Json)? {
        Value::Array(items) => Ok(items),
        other => Err(ListError::NotAList(json_kind(&other))),
    }
}

/// Write a corpus as one JSON list of [`ChunkRow`]s.
#[cfg(test)]
fn write_chunks(path: &Path, chunks: &[ChunkRow]) -> Result<(), RareError> {
    write_json(path, chunks)
}

/// One entry of `run_retrievals.py`'s results: `{original_query, answer, variants{},
/// retrievers: {<name>: {original: [ids], <perturbation kind>: [ids]}}}`. Only what a join and
/// the retrieval cells need is typed; `answer` and `variants` are not read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RetrievalEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_query: Option<String>,
    /// Retriever name -> query form (`original` or a perturbation kind) -> chunk ids, best
    /// first.
    pub retrievers: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

impl RetrievalEntry {
    /// Read one entry; Err (`bad_retrieval_result`) when it has no `retrievers` object holding
    /// at least one list.
    pub fn from_value(entry: &Value) -> Result<RetrievalEntry, Problem> {
        let mut retrievers = BTreeMap::new();
        if let Some(by_name) = entry.get("retrievers").and_then(Value::as_object) {
            for (name, by_query) in by_name {
                let Some(by_query) = by_query.as_object() else {
                    continue;
                };
                let lists: BTreeMap<String, Vec<String>> = by_query
                    .iter()
                    .map(|(query, ids)| (query.clone(), string_list(Some(ids))))
                    .collect();
                if !lists.is_empty() {
                    retrievers.insert(name.clone(), lists);
                }
            }
        }
        if retrievers.is_empty() {
            return Err((
                "bad_retrieval_result",
                "no `retrievers` object with lists of chunk ids".into(),
            ));
        }
        Ok(RetrievalEntry {
            original_query: entry
                .get("original_query")
                .and_then(Value::as_str)
                .map(|q| q.trim().to_string()),
            retrievers,
        })
    }
}

/// A retrieval results file's value as entries by key (the record's `id`, or the hash of its
/// question), each read or the problem with it. Err: the value is not an object (saying what
/// it is).
#[allow(clippy::type_complexity)]
pub fn retrieval_entries(
    value: &Value,
) -> Result<Vec<(String, Result<RetrievalEntry, Problem>)>, String> {
    let Some(map) = value.as_object() else {
        return Err(format!(
            "retrieval results are an object keyed by record id (run_retrievals.py), found {}",
            json_kind(value)
        ));
    };
    Ok(map
        .iter()
        .map(|(key, entry)| (key.clone(), RetrievalEntry::from_value(entry)))
        .collect())
}

/// Write retrieval results as `run_retrievals.py` does: one object keyed by record id.
#[cfg(test)]
fn write_retrieval_results(
    path: &Path,
    entries: &BTreeMap<String, RetrievalEntry>,
) -> Result<(), RareError> {
    write_json(path, entries)
}

#[cfg(test)]
fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), RareError> {
    let json = serde_json::to_vec_pretty(value).map_err(|source| RareError::Json {
        path: path.into(),
        source,
    })?;
    std::fs::write(path, json).map_err(|source| RareError::Io {
        path: path.into(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, multi: bool) -> RareRecord {
        RareRecord {
            id: id.into(),
            question: format!("What is {id}?"),
            answer: format!("answer \"{id}\"\nsecond line"),
            answer_chunk_ids: vec![format!("chunk_{id}_0"), format!("chunk_{id}_1")],
            metadata: [("domain".to_string(), "finance".to_string())].into(),
            source_sentences: vec!["One.".into(), "Two — é.".into()],
            entity_1: vec!["a".into(), "b".into()],
            relation: vec!["r".into(), "s".into()],
            entity_2: vec!["b".into(), "c".into()],
            multi_hop_type: multi.then(|| "star_shaped".to_string()),
            split: multi.then(|| "test".to_string()),
            query_perturbations: [(
                "word_level".to_string(),
                RareQueryPerturbation {
                    perturbed_query: format!("Wht is {id}?"),
                    similarity: 0.875,
                },
            )]
            .into(),
            document_perturbations: [
                ("back_translation".to_string(), vec![]),
                (
                    "regex_delete".to_string(),
                    vec![RareDocumentPerturbation {
                        chunk_id: format!("chunk_{id}_1"),
                        text: "Two.".into(),
                        similarity: None,
                    }],
                ),
            ]
            .into(),
        }
    }

    /// Written records read back equal, both strictly and as any RARE file is read; the bytes
    /// are those of `to_writer_pretty` over the whole list, with a final newline.
    #[test]
    fn records_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let records = vec![record("q1", false), record("q2", true)];
        let path = write_records(&dir.path().join(MULTI_HOP_FILE), &records).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let mut whole = serde_json::to_vec_pretty(&records).unwrap();
        whole.push(b'\n');
        assert_eq!(bytes, whole);
        assert!(
            !String::from_utf8(bytes)
                .unwrap()
                .contains("\"multi_hop_type\": null")
        );

        assert_eq!(read_records(&path).unwrap(), records);

        let values: Vec<Value> = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for (value, written) in values.iter().zip(&records) {
            let (read, problems) = ReadRecord::from_value(value).unwrap();
            assert!(problems.is_empty(), "{problems:?}");
            assert_eq!(read.id.as_deref(), Some(written.id.as_str()));
            assert_eq!(read.question, written.question);
            assert_eq!(read.answer, written.answer.trim());
            assert_eq!(read.answer_chunk_ids, written.answer_chunk_ids);
            assert_eq!(read.source_sentences, written.source_sentences);
            assert_eq!(read.multi_hop_type, written.multi_hop_type);
            assert_eq!(read.split, written.split);
            assert_eq!(read.domain.as_deref(), Some("finance"));
            assert_eq!(
                read.query_perturbations,
                vec![("word_level".to_string(), format!("Wht is {}?", written.id))]
            );
            assert_eq!(
                read.document_perturbations,
                vec![(
                    "regex_delete".to_string(),
                    format!("chunk_{}_1", written.id),
                    "Two.".to_string()
                )]
            );
        }
        // An empty list is `[]` and reads back empty.
        let empty =
            write_records(&dir.path().join(SINGLE_HOP_FILE), Vec::<RareRecord>::new()).unwrap();
        assert_eq!(std::fs::read_to_string(&empty).unwrap(), "[]\n");
        assert!(read_records(&empty).unwrap().is_empty());
    }

    /// A record as RARE's generator writes it (no id, split or perturbations) reads; a file of
    /// them is not ours, and the strict reader says so naming the file.
    #[test]
    fn a_generator_record_reads_leniently_and_not_strictly() {
        let value = serde_json::json!({
            "question": " What did Acme earn? ",
            "answer": 42,
            "answer_chunk_ids": ["c1", 7, "", null],
            "metadata": {"company": "Acme"},
            "source_sentences": ["Acme earned 42."],
            "entity_1": ["Acme"], "relation": ["earned"], "entity_2": ["42"],
            "query_perturbations": {"word_level": {"similarity": 0.9}},
            "document_perturbations": {"regex_delete": [{"chunk_id": "c1"}], "back_translation": 3}
        });
        let (read, problems) = ReadRecord::from_value(&value).unwrap();
        assert_eq!(read.id, None);
        assert_eq!(read.question, "What did Acme earn?");
        assert_eq!(read.answer, "42");
        assert_eq!(read.answer_chunk_ids, vec!["c1", "7"]);
        assert_eq!(
            (read.domain, read.split, read.multi_hop_type),
            (None, None, None)
        );
        let reasons: Vec<&str> = problems.iter().map(|p| p.0).collect();
        assert_eq!(reasons, vec!["bad_perturbation"; 3], "{problems:?}");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("finance_single_hop.json");
        std::fs::write(&path, serde_json::to_string(&vec![&value]).unwrap()).unwrap();
        let err = read_records(&path).unwrap_err().to_string();
        assert!(err.contains("finance_single_hop.json"), "{err}");
    }

    #[test]
    fn records_that_cannot_be_questions_say_why() {
        let reason = |v: Value| ReadRecord::from_value(&v).unwrap_err();
        assert_eq!(reason(serde_json::json!([1])).0, "bad_record");
        assert_eq!(
            reason(serde_json::json!({"answer": "a", "answer_chunk_ids": ["c"]})),
            ("missing_field", "no `question`".to_string())
        );
        assert_eq!(
            reason(serde_json::json!({"question": "q", "answer_chunk_ids": ["c"]})),
            ("missing_field", "no `answer`".to_string())
        );
        assert_eq!(
            reason(serde_json::json!({"question": "q", "answer": "a", "answer_chunk_ids": []})).0,
            "no_answer_chunks"
        );
    }

    /// A corpus written by [`write_chunks`] reads back equal, as a list and as JSON Lines; the
    /// authors' other spellings (`id`, `content`, `page_content`) read too.
    #[test]
    fn chunks_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let chunks = vec![
            ChunkRow {
                id: "chunk_1".into(),
                text: "Revenue rose 4%.".into(),
                report_id: Some("r1".into()),
            },
            ChunkRow {
                id: "chunk_2".into(),
                text: "Costs fell.".into(),
                report_id: None,
            },
        ];
        let path = dir.path().join(CHUNK_FILES[0]);
        write_chunks(&path, &chunks).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"chunk_id\": \"chunk_1\""), "{text}");
        let (items, problems) = chunk_values(&text).unwrap();
        assert!(problems.is_empty());
        let read: Vec<ChunkRow> = items
            .iter()
            .map(|(_, v)| ChunkRow::from_value(v).unwrap())
            .collect();
        assert_eq!(read, chunks);
        assert_eq!(items[1].0, "record 2");

        let lines = "{\"id\": 7, \"content\": \"Seven.\"}\n\n{\"chunk_id\": \"c8\", \"page_content\": \"Eight.\"}\n{bad\n{\"id\": \"c9\"}\n";
        let (items, problems) = chunk_values(lines).unwrap();
        assert_eq!(problems.len(), 1);
        assert_eq!(
            (problems[0].0.as_str(), problems[0].1.0),
            ("line 4", "bad_json")
        );
        let read: Vec<Result<ChunkRow, Problem>> =
            items.iter().map(|(_, v)| ChunkRow::from_value(v)).collect();
        assert_eq!(read[0].as_ref().unwrap().id, "7");
        assert_eq!(read[1].as_ref().unwrap().text, "Eight.");
        assert_eq!(read[2].as_ref().unwrap_err().0, "missing_field");
        assert_eq!(items[2].0, "line 5");
        assert!(matches!(chunk_values("{}"), Ok((_, _))));
        assert!(matches!(chunk_values("[1,"), Err(ListError::Json(_))));
    }

    /// Retrieval results written as `run_retrievals.py` writes them read back equal; an entry
    /// without retriever lists is a `bad_retrieval_result` problem, a file that is not an
    /// object an error.
    #[test]
    fn retrieval_results_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let lists = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let entry = RetrievalEntry {
            original_query: Some("What rose?".into()),
            retrievers: [(
                "e5-large".to_string(),
                [
                    ("original".to_string(), lists(&["chunk_1", "chunk_2"])),
                    ("word_level".to_string(), lists(&["chunk_2"])),
                ]
                .into(),
            )]
            .into(),
        };
        let entries: BTreeMap<String, RetrievalEntry> = [("q1".to_string(), entry)].into();
        let path = dir
            .path()
            .join(format!("finance{RETRIEVAL_RESULTS_SUFFIX}"));
        write_retrieval_results(&path, &entries).unwrap();
        let value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let read = retrieval_entries(&value).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].0, "q1");
        assert_eq!(read[0].1.as_ref().unwrap(), &entries["q1"]);

        let odd = serde_json::json!({"k": {"original_query": "q", "retrievers": {"bm25": 3}}});
        let read = retrieval_entries(&odd).unwrap();
        assert_eq!(read[0].1.as_ref().unwrap_err().0, "bad_retrieval_result");
        let err = retrieval_entries(&serde_json::json!([1])).unwrap_err();
        assert!(err.contains("found a list"), "{err}");
    }
}
