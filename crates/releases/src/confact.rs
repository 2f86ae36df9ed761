//! CONF-FACT (repository `zoeyyes/CONFACT`): instances with their evidence, and the source
//! credibility tables; the typed instance, its writer and its readers.
//!
//! - The release: `data/dataset/HumC.pkl.gz` and `ModC.pkl.gz` ([`INSTANCE_FILES`]), gzip'd
//!   Python pickles of a list of dicts (`preprocess.py` opens them with `gzip.open` +
//!   `pickle.load`): `{id, claim, label, claim_date, review_date, country, question,
//!   original_claim_url, fact_checking_article, evidence_url: [{evidence_id, original_link,
//!   content}]}`; `ModC`'s evidence also carries `url_llm_check_result`, `majority_vote`,
//!   `html_file` and sometimes `archive_url`. Credibility: `all_media_data.pkl` and
//!   `mbfc_media_data.pkl` ([`CREDIBILITY_FILES`]), pickled dicts keyed by domain, each
//!   `{credibility, details, ...}` (`details` a list of paragraphs in the MBFC table, a text in
//!   the combined one).
//! - What we write (`Instance`, `write_instances`, [`export`]): the same list as JSON,
//!   `confact.json` ([`EXPORT_FILE`]), each evidence with the three stance votes and the
//!   majority in the authors' words (`Support`, `Reject`, `Not enough evidence`), its source's
//!   credibility and type, and our ids beside theirs (`claim_id`, `document_id`).
//! - Reading: [`decode`] turns a file's bytes (gzip or not; a pickle of protocol 2-5 or JSON)
//!   into a JSON value; [`ReadInstance::from_value`] reads one instance as any of these files
//!   hold it, lenient, reporting what it cannot use as `(reason, detail)`;
//!   [`read_media_table`] reads a credibility table; `read_instances` reads a file we wrote
//!   back strictly.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use noisebench_core::{Claim, ClaimDocumentLabel, Document, DocumentCredibility, Query};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::summary::{ExportError, ExportSummary, binary, create_dir, pairs_by_claim};

/// The release's instance files, one per split.
pub const INSTANCE_FILES: [&str; 2] = ["HumC.pkl.gz", "ModC.pkl.gz"];
/// The credibility tables' file names, in the order they are consulted.
pub const CREDIBILITY_FILES: [&str; 2] = ["all_media_data.pkl", "mbfc_media_data.pkl"];
/// The file [`export`] writes.
pub const EXPORT_FILE: &str = "confact.json";

/// One evidence of an instance, as we write it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// `<instance id>_<n>`, n from 1.
    pub evidence_id: String,
    pub original_link: String,
    /// The page's text; never empty in what [`export`] writes.
    pub content: String,
    pub url_prompt: Option<String>,
    pub text_prompt: Option<String>,
    pub reasoned_prompt: Option<String>,
    pub majority_vote: Option<String>,
    pub label: Option<String>,
    pub label_source: String,
    pub credibility: Option<String>,
    pub source_type: String,
    pub document_id: String,
}

/// One instance (a claim with its evidence), as we write it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Instance {
    pub id: u64,
    pub claim: String,
    /// `Supported` or `Refuted`, exactly.
    pub label: String,
    pub claim_date: Option<String>,
    pub review_date: Option<String>,
    pub country: Option<String>,
    pub question: Option<String>,
    pub original_claim_url: Option<String>,
    pub fact_checking_article: Option<String>,
    pub model_conflict: bool,
    pub human_conflict: Option<bool>,
    pub claim_id: String,
    pub evidence_url: Vec<Evidence>,
}

/// A stance in the authors' words: `Support`, `Reject`, `Not enough evidence`.
pub(crate) fn stance_word(s: Option<&str>) -> Option<&'static str> {
    match s?.trim().to_lowercase().as_str() {
        "support" => Some("Support"),
        "reject" => Some("Reject"),
        "not enough evidence" => Some("Not enough evidence"),
        _ => None,
    }
}

/// A stance as read: `Some(Some(true))` support, `Some(Some(false))` reject (or refute),
/// `Some(None)` not enough evidence (or empty), `None` a word that is none of these.
pub fn parse_stance(vote: &str) -> Option<Option<bool>> {
    let v = vote.trim().to_ascii_lowercase();
    if v.starts_with("support") {
        Some(Some(true))
    } else if v.starts_with("reject") || v.starts_with("refute") {
        Some(Some(false))
    } else if v.starts_with("not enough") || v.starts_with("nei") || v.is_empty() {
        Some(None)
    } else {
        None
    }
}

/// An instance's label as a verdict, trimmed and in any case: `Supported`/`Yes`/`True` true,
/// `Refuted`/`No`/`False` false (the original release wrote some as `"Supported "`).
pub(crate) fn parse_label(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "supported" | "yes" | "true" => Some(true),
        "refuted" | "no" | "false" => Some(false),
        _ => None,
    }
}

/// Write instances as one JSON list.
pub(crate) fn write_instances(path: &Path, instances: &[Instance]) -> Result<(), ExportError> {
    if let Some(parent) = path.parent() {
        create_dir(parent)?;
    }
    let json = serde_json::to_vec_pretty(instances)
        .map_err(|e| ExportError::io(path, std::io::Error::other(e)))?;
    std::fs::write(path, json).map_err(|e| ExportError::io(path, e))
}

/// Read a file [`write_instances`] wrote back, strictly: every field of [`Instance`] must be
/// there (the release's own files are read with [`decode`] and [`ReadInstance::from_value`]).
fn read_instances(path: &Path) -> Result<Vec<Instance>, ExportError> {
    let bytes = std::fs::read(path).map_err(|e| ExportError::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| ExportError::Decode {
        path: path.into(),
        message: format!("not a list of our CONF-FACT instances: {e}"),
    })
}

/// Write CONF-FACT-style `confact.json` (a list, one instance per claim with a true/false
/// verdict) to `path`, from the claims track's tables. `credibility` (the labels stage's
/// `document_credibility`) gives each evidence's credibility and source type (a document
/// without a row: no credibility, its own source type); `queries` gives each claim's yes/no
/// question (the first `question` query). A label row whose document has no text is left out
/// (`empty_document`): a CONF-FACT evidence is its content.
pub fn export(
    claims: &[Claim],
    documents: &[Document],
    credibility: &[DocumentCredibility],
    labels: &[ClaimDocumentLabel],
    queries: &[Query],
    path: &Path,
) -> Result<ExportSummary, ExportError> {
    let docs: BTreeMap<&str, &Document> = documents.iter().map(|d| (d.id.as_str(), d)).collect();
    let rated: BTreeMap<&str, &DocumentCredibility> = credibility
        .iter()
        .map(|c| (c.document_id.as_str(), c))
        .collect();
    let claim_index: BTreeMap<&str, &Claim> = claims.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut summary = ExportSummary::default();
    let usable = |l: &ClaimDocumentLabel, d: &Document| {
        if l.label.is_none() && l.stance.is_none() {
            Err((
                "no_label",
                "the label row has neither label nor stance".into(),
            ))
        } else if d.text.trim().is_empty() {
            Err((
                "empty_document",
                format!("document `{}` ({}): {}", d.id, d.url, empty_text_cause(d)),
            ))
        } else {
            Ok(())
        }
    };
    let by_claim = pairs_by_claim(labels, &docs, &claim_index, usable, &mut summary);
    let mut questions: BTreeMap<&str, &str> = BTreeMap::new();
    for q in queries.iter().filter(|q| q.kind == "question") {
        questions
            .entry(q.claim_id.as_str())
            .or_insert(q.text.as_str());
    }
    let mut out = Vec::new();
    for claim in claims {
        let Some(is_true) = binary(&claim.verdict) else {
            summary.claims_without_binary_verdict += 1;
            continue;
        };
        let id = out.len() as u64 + 1;
        let pairs = by_claim.get(claim.id.as_str()).cloned().unwrap_or_default();
        let has = |f: &dyn Fn(&ClaimDocumentLabel) -> bool| pairs.iter().any(|(l, _)| f(l));
        let reviewed = has(&|l| l.label_source == "human");
        let evidence: Vec<Evidence> = pairs
            .iter()
            .enumerate()
            .map(|(k, (l, d))| evidence(format!("{id}_{}", k + 1), l, d, rated.get(d.id.as_str())))
            .collect();
        summary.documents += evidence.len();
        let human = |stance: &'static str| {
            move |l: &ClaimDocumentLabel| {
                l.label_source == "human" && l.stance.as_deref() == Some(stance)
            }
        };
        out.push(Instance {
            id,
            claim: claim.text.clone(),
            label: if is_true { "Supported" } else { "Refuted" }.into(),
            claim_date: claim.claim_date.clone(),
            review_date: claim.review_date.clone(),
            country: claim.country.clone(),
            question: questions.get(claim.id.as_str()).map(|q| q.to_string()),
            original_claim_url: claim.original_url.clone(),
            fact_checking_article: claim.url.clone(),
            model_conflict: has(&|l| l.stance_majority.as_deref() == Some("support"))
                && has(&|l| l.stance_majority.as_deref() == Some("reject")),
            human_conflict: reviewed.then(|| has(&human("support")) && has(&human("reject"))),
            claim_id: claim.id.clone(),
            evidence_url: evidence,
        });
    }
    summary.claims = out.len();
    write_instances(path, &out)?;
    summary.files.push(path.into());
    Ok(summary)
}

/// Why a document has no text, from what the documents stage recorded of it.
fn empty_text_cause(d: &Document) -> &'static str {
    if d.is_link_post {
        "a Reddit link post (its body is a link; RAGuard keeps it by its title)"
    } else if d.body_removed {
        "a Reddit post whose body was deleted or removed"
    } else {
        "the page's text is empty"
    }
}

fn evidence(
    evidence_id: String,
    l: &ClaimDocumentLabel,
    d: &Document,
    rated: Option<&&DocumentCredibility>,
) -> Evidence {
    let word = |s: &Option<String>| stance_word(s.as_deref()).map(str::to_string);
    Evidence {
        evidence_id,
        original_link: d.url.clone(),
        content: d.text.clone(),
        url_prompt: word(&l.stance_url),
        text_prompt: word(&l.stance_text),
        reasoned_prompt: word(&l.stance_reasoned),
        majority_vote: word(&l.stance),
        label: l.label.clone(),
        label_source: l.label_source.clone(),
        credibility: rated.and_then(|c| c.credibility.clone()),
        source_type: rated.map_or(&d.source_type, |c| &c.source_type).clone(),
        document_id: d.id.clone(),
    }
}

/// A file that [`decode`] cannot turn into a value.
#[derive(Debug)]
pub enum DecodeError {
    /// gzip data that does not decompress.
    Gzip(String),
    /// gzip data that decompresses to nothing (or whitespace).
    EmptyGzip,
    /// A pickle that cannot be read even with foreign classes as absent.
    Pickle(String),
    /// Neither a pickle nor UTF-8 text: the bytes, for the caller to say what they look like.
    NotUtf8(Vec<u8>),
    /// Text that is not JSON.
    Json(serde_json::Error),
}

/// A decoded file: its value, and when a pickle held values of classes outside Python's
/// builtins (a numpy integer, a pandas timestamp), why they were read as absent.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub value: Value,
    pub unreadable: Option<String>,
}

fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

fn is_pickle(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes[0] == 0x80 && (2..=5).contains(&bytes[1])
}

/// A CONF-FACT data file's bytes as a value, by what they are (whatever the file's name): gzip
/// is decompressed; a pickle (protocol 2-5) is read with None and NaN as null, tuples and sets
/// as lists, dict keys as text; anything else is read as UTF-8 JSON (a byte-order mark
/// dropped). A pickle with class instances outside Python's builtins is read again with them
/// as null, and [`Decoded::unreadable`] says so.
pub fn decode(mut bytes: Vec<u8>) -> Result<Decoded, DecodeError> {
    if is_gzip(&bytes) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| DecodeError::Gzip(e.to_string()))?;
        if out.iter().all(u8::is_ascii_whitespace) {
            return Err(DecodeError::EmptyGzip);
        }
        bytes = out;
    }
    if is_pickle(&bytes) {
        let strict = serde_pickle::DeOptions::new().decode_strings();
        let first = match serde_pickle::value_from_slice(&bytes, strict) {
            Ok(v) => {
                return Ok(Decoded {
                    value: pickle_to_json(v),
                    unreadable: None,
                });
            }
            Err(e) => e,
        };
        let lenient = serde_pickle::DeOptions::new()
            .decode_strings()
            .replace_unresolved_globals();
        return match serde_pickle::value_from_slice(&bytes, lenient) {
            Ok(v) => Ok(Decoded {
                value: pickle_to_json(v),
                unreadable: Some(format!(
                    "the pickle holds values of Python classes outside the builtins ({first}); they are read as absent"
                )),
            }),
            Err(e) => Err(DecodeError::Pickle(e.to_string())),
        };
    }
    let text = String::from_utf8(bytes).map_err(|e| DecodeError::NotUtf8(e.into_bytes()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let value = serde_json::from_str(text).map_err(DecodeError::Json)?;
    Ok(Decoded {
        value,
        unreadable: None,
    })
}

/// A pickled value as JSON: None and NaN become null, tuples and sets lists, dict keys text,
/// big integers their decimal text, bytes their UTF-8 text (else null).
fn pickle_to_json(v: serde_pickle::Value) -> Value {
    use serde_pickle::Value as P;
    match v {
        P::None => Value::Null,
        P::Bool(b) => Value::Bool(b),
        P::I64(i) => Value::from(i),
        P::Int(i) => Value::String(i.to_string()),
        P::F64(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        P::Bytes(b) => String::from_utf8(b).map_or(Value::Null, Value::String),
        P::String(s) => Value::String(s),
        P::List(items) | P::Tuple(items) => {
            Value::Array(items.into_iter().map(pickle_to_json).collect())
        }
        P::Set(items) | P::FrozenSet(items) => Value::Array(
            items
                .into_iter()
                .map(|h| pickle_to_json(h.into_value()))
                .collect(),
        ),
        P::Dict(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let key = match pickle_to_json(k.into_value()) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, pickle_to_json(v))
                })
                .collect(),
        ),
    }
}

/// `null`, `a boolean`, … for messages.
pub fn json_kind(v: &Value) -> &'static str {
    crate::rare::json_kind(v)
}

/// A string field of a JSON object, trimmed; `None` when absent, not a string, or empty.
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

/// One entry of a credibility table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MediaEntry {
    /// `credibility`, lowercased (`high`, `mixed`, ...).
    pub level: Option<String>,
    /// `details`: a text, or a list of paragraphs joined by a space.
    pub details: Option<String>,
}

/// A credibility table as read: entries by domain (trimmed, lowercased, without `www.`; the
/// first of two spellings kept), and the entries that are not dicts (`bad_credibility`, named
/// by their domain).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MediaTable {
    pub entries: BTreeMap<String, MediaEntry>,
    pub problems: Vec<crate::Problem>,
}

/// Read a credibility table's value (a dict keyed by domain); `Err` names what it is instead.
pub fn read_media_table(value: &Value) -> Result<MediaTable, String> {
    let Some(map) = value.as_object() else {
        return Err(format!(
            "a credibility table is a dict keyed by domain, found {}",
            json_kind(value)
        ));
    };
    let mut table = MediaTable::default();
    for (domain, v) in map {
        let Some(o) = v.as_object() else {
            table.problems.push(crate::Problem::new(
                domain.clone(),
                "bad_credibility",
                format!("the entry of {domain} is {}, not a dict", json_kind(v)),
            ));
            continue;
        };
        let details = match o.get("details") {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Some(Value::Array(parts)) => {
                let parts: Vec<&str> = parts
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                (!parts.is_empty()).then(|| parts.join(" "))
            }
            _ => None,
        };
        let key = domain
            .trim()
            .trim_start_matches("www.")
            .to_ascii_lowercase();
        table.entries.entry(key).or_insert(MediaEntry {
            level: string_field(o, "credibility").map(|s| s.to_lowercase()),
            details,
        });
    }
    Ok(table)
}

/// Whether a value looks like a credibility table rather than instances: a non-empty dict whose
/// entries all have `credibility` or `details`.
pub fn is_media_table(value: &Value) -> bool {
    value.as_object().is_some_and(|map| {
        !map.is_empty()
            && map
                .values()
                .all(|v| v.get("credibility").is_some() || v.get("details").is_some())
    })
}

/// One evidence as read from any CONF-FACT file, ours or the authors'.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadEvidence {
    /// `evidence_id` (a string or a number) when present.
    pub evidence_id: Option<String>,
    pub original_link: Option<String>,
    /// `content`, trimmed; `None` when absent or empty.
    pub content: Option<String>,
    /// `majority_vote`, as written.
    pub majority_vote: Option<String>,
    /// The evidence's own `credibility` level, lowercased.
    pub credibility: Option<String>,
    pub credibility_score: Option<f64>,
    /// `source_background`, else `media_background`.
    pub background: Option<String>,
}

/// One instance as read from any CONF-FACT file: only what a claim needs, the rest optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadInstance {
    /// `id` (a string or a number) when present.
    pub id: Option<String>,
    pub claim: String,
    pub verdict: bool,
    pub question: Option<String>,
    pub claim_date: Option<String>,
    /// `evidence_url`, in order: each evidence, or why it is not one (`bad_record`).
    pub evidence: Vec<Result<ReadEvidence, (&'static str, String)>>,
}

impl ReadInstance {
    /// Read one instance. Err: it cannot be a claim (`bad_record`: not an object;
    /// `missing_field`: no `claim` text or no `label` string; `unknown_label`).
    pub fn from_value(record: &Value) -> Result<ReadInstance, (&'static str, String)> {
        let Some(o) = record.as_object() else {
            return Err((
                "bad_record",
                format!("an instance is {}, not an object", json_kind(record)),
            ));
        };
        let Some(claim) = string_field(o, "claim") else {
            return Err(("missing_field", "no `claim` text".into()));
        };
        let Some(raw_label) = o.get("label").and_then(Value::as_str) else {
            return Err(("missing_field", "no `label` string".into()));
        };
        let Some(verdict) = parse_label(raw_label) else {
            return Err(("unknown_label", format!("`label` is {raw_label:?}")));
        };
        let evidence = o
            .get("evidence_url")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(ReadEvidence::from_value)
            .collect();
        Ok(ReadInstance {
            id: json_text(o.get("id")),
            claim,
            verdict,
            question: string_field(o, "question"),
            claim_date: string_field(o, "claim_date"),
            evidence,
        })
    }
}

impl ReadEvidence {
    /// Read one evidence; Err (`bad_record`) when it is not an object.
    pub fn from_value(ev: &Value) -> Result<ReadEvidence, (&'static str, String)> {
        let Some(e) = ev.as_object() else {
            return Err((
                "bad_record",
                format!("an evidence is {}, not an object", json_kind(ev)),
            ));
        };
        Ok(ReadEvidence {
            evidence_id: json_text(e.get("evidence_id")),
            original_link: string_field(e, "original_link"),
            content: string_field(e, "content"),
            majority_vote: e
                .get("majority_vote")
                .and_then(Value::as_str)
                .map(str::to_string),
            credibility: string_field(e, "credibility").map(|s| s.to_lowercase()),
            credibility_score: e.get("credibility_score").and_then(Value::as_f64),
            background: string_field(e, "source_background")
                .or_else(|| string_field(e, "media_background")),
        })
    }
}

/// CONF-FACT's release format ([`crate::format::ReleaseFormat`]): `confact.json`, from
/// `claims`, `documents`, `labels`, `document_credibility` and (each claim's yes/no question)
/// `queries` when given.
pub struct Confact;

impl crate::format::ReleaseFormat for Confact {
    fn name(&self) -> &'static str {
        "confact"
    }
    fn stage_kind(&self) -> &'static str {
        "export-confact"
    }
    fn version(&self) -> u32 {
        2
    }
    fn about(&self) -> &'static str {
        "CONF-FACT-style confact.json: each claim with its evidence, credibility and stance"
    }
    fn items(&self) -> noisebench_core::TableKind {
        noisebench_core::TableKind::Labels
    }
    fn inputs(&self) -> Vec<noisebench_core::InputSpec> {
        use noisebench_core::{InputSpec, TableKind};
        let mut inputs = crate::summary::claims_track_inputs();
        inputs.push(InputSpec::optional("queries", TableKind::Queries));
        inputs.push(InputSpec::required(
            "document_credibility",
            TableKind::DocumentCredibility,
        ));
        inputs
    }
    fn files(&self) -> Vec<&'static str> {
        vec![EXPORT_FILE]
    }
    fn export(
        &self,
        tables: &dyn crate::format::TableSource,
        out: &Path,
    ) -> Result<crate::format::Exported, crate::format::BoxError> {
        let claims: Vec<Claim> = tables.require()?;
        let documents: Vec<Document> = tables.require()?;
        let labels: Vec<ClaimDocumentLabel> = tables.require()?;
        let credibility: Vec<DocumentCredibility> = tables.require()?;
        let queries: Vec<Query> = tables.read_or_empty()?;
        let path = out.join(EXPORT_FILE);
        Ok(crate::format::Exported::Claims(export(
            &claims,
            &documents,
            &credibility,
            &labels,
            &queries,
            &path,
        )?))
    }
    fn read_back(&self, dir: &Path) -> Result<usize, crate::format::BoxError> {
        let instances = read_instances(&dir.join(EXPORT_FILE))?;
        Ok(instances.iter().map(|i| i.evidence_url.len()).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The export of a small snapshot read back strictly and as any CONF-FACT file is read:
    /// every field is what the tables say; a document with no text is a counted drop.
    #[test]
    fn an_export_reads_back_field_by_field() {
        let (claims, docs, labels, credibility) = crate::test_tables::tables();
        let question = Query {
            id: "q1".into(),
            claim_id: "c2".into(),
            kind: "question".into(),
            text: "Did crime rise 50%?".into(),
            ..Query::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(EXPORT_FILE);
        let summary = export(&claims, &docs, &credibility, &labels, &[question], &path).unwrap();
        assert_eq!((summary.claims, summary.documents), (2, 3));
        let reasons: Vec<&str> = summary.skipped.iter().map(|s| s.reason).collect();
        assert_eq!(
            reasons,
            [
                "empty_document",
                "empty_document",
                "claim_verdict_not_binary",
                "unknown_claim",
                "unknown_document"
            ]
        );
        assert!(
            summary.skipped[0].detail.contains("`d2`")
                && summary.skipped[0].detail.contains("link post"),
            "{:?}",
            summary.skipped[0]
        );

        let read = read_instances(&path).unwrap();
        let d1 = |evidence_id: &str| Evidence {
            evidence_id: evidence_id.into(),
            original_link: "https://www.reddit.com/r/p/1".into(),
            content: "Body one,\nwith a newline.".into(),
            majority_vote: Some("Support".into()),
            label: Some("supporting".into()),
            label_source: "model".into(),
            credibility: Some("low".into()),
            source_type: "social media".into(),
            document_id: "d1".into(),
            ..Evidence::default()
        };
        let d3 = Evidence {
            evidence_id: "2_1".into(),
            original_link: "https://example.org/3".into(),
            content: "Body three".into(),
            majority_vote: Some("Support".into()),
            label: Some("misleading".into()),
            label_source: "model".into(),
            credibility: None,
            source_type: "news".into(),
            document_id: "d3".into(),
            ..Evidence::default()
        };
        let expected = vec![
            Instance {
                id: 1,
                claim: "Says \"we cut taxes\", and it's true.".into(),
                label: "Supported".into(),
                claim_id: "c1".into(),
                evidence_url: vec![d1("1_1")],
                ..Instance::default()
            },
            Instance {
                id: 2,
                claim: "Crime rose 50%.".into(),
                label: "Refuted".into(),
                question: Some("Did crime rise 50%?".into()),
                claim_id: "c2".into(),
                evidence_url: vec![d3, d1("2_2")],
                ..Instance::default()
            },
        ];
        assert_eq!(read, expected);

        // The same file as the release reader reads it.
        let value = decode(std::fs::read(&path).unwrap()).unwrap().value;
        let items = value.as_array().unwrap();
        assert_eq!(items.len(), 2);
        for (item, written) in items.iter().zip(&expected) {
            let instance = ReadInstance::from_value(item).unwrap();
            assert_eq!(instance.id, Some(written.id.to_string()));
            assert_eq!(instance.claim, written.claim);
            assert_eq!(instance.verdict, written.label == "Supported");
            assert_eq!(instance.question, written.question);
            assert_eq!(instance.evidence.len(), written.evidence_url.len());
            for (ev, w) in instance.evidence.iter().zip(&written.evidence_url) {
                let ev = ev.as_ref().unwrap();
                assert_eq!(ev.evidence_id.as_deref(), Some(w.evidence_id.as_str()));
                assert_eq!(ev.original_link.as_deref(), Some(w.original_link.as_str()));
                assert_eq!(ev.content.as_deref(), Some(w.content.as_str()));
                assert_eq!(ev.majority_vote, w.majority_vote);
                assert_eq!(ev.credibility, w.credibility);
            }
        }
    }

    fn fixture(path: &str) -> Vec<u8> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/releases/confact");
        std::fs::read(root.join(path)).unwrap()
    }

    /// The fixture pickles written by Python's `pickle` at protocols 2-5 (gzip'd;
    /// `fixtures/releases/confact/make_pickles.py`, HumC's first two instances) decode to the
    /// values that script wrote.
    #[test]
    fn pickles_of_every_protocol_decode_to_what_python_wrote() {
        for protocol in 2..=5 {
            let decoded = decode(fixture(&format!("protocols/p{protocol}.pkl.gz"))).unwrap();
            assert_eq!(decoded.unreadable, None);
            let items = decoded.value.as_array().unwrap();
            assert_eq!(items.len(), 2, "protocol {protocol}");
            assert_eq!(items[0]["id"], 1);
            assert_eq!(items[0]["review_date"], Value::Null);
            let first = ReadInstance::from_value(&items[0]).unwrap();
            assert_eq!(
                first.claim,
                "Lakeport banned single-use plastic bags in 2021."
            );
            assert!(first.verdict);
            let second = ReadInstance::from_value(&items[1]).unwrap();
            assert!(!second.verdict, "`Refuted ` with its trailing space");
            let ev = second.evidence[0].as_ref().unwrap();
            assert_eq!(ev.evidence_id.as_deref(), Some("2_1"));
            assert_eq!(
                ev.original_link.as_deref(),
                Some("https://citydata.example.gov/census/lakeport")
            );
        }
        let odd = decode(fixture("protocols/date_object.pkl.gz")).unwrap();
        assert!(odd.unreadable.is_some());
        assert_eq!(odd.value[0]["claim_date"], Value::Null);
        let table = decode(fixture("dataset/all_media_data.pkl")).unwrap().value;
        assert!(is_media_table(&table));
        let table = read_media_table(&table).unwrap();
        assert_eq!(
            table.entries["citydata.example.gov"],
            MediaEntry {
                level: Some("high".into()),
                details: Some("The city's open-data portal, run by its statistics office.".into()),
            }
        );
        assert!(matches!(
            decode(b"\x00\xff\xfe".to_vec()),
            Err(DecodeError::NotUtf8(_))
        ));
    }
}
