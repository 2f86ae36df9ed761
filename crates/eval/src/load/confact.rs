//! CONF-FACT (repository `zoeyyes/CONFACT`): the release's instance files and its source
//! credibility tables.
//!
//! - Instances: `data/dataset/HumC.pkl.gz` and `ModC.pkl.gz`, gzip'd Python pickles of a list
//!   of dicts (`preprocess.py` opens them with `gzip.open` + `pickle.load`), or the same list as
//!   JSON: `{id, claim, label, claim_date, review_date, country, question, original_claim_url,
//!   fact_checking_article, evidence_url: [{evidence_id, original_link, content}]}`; `ModC`'s
//!   evidence also carries `url_llm_check_result`, `majority_vote`, `html_file` and sometimes
//!   `archive_url`. A file is read by what its bytes are (gzip, then pickle protocol 2-5 or
//!   JSON), whatever its name.
//! - Credibility: `all_media_data.pkl` and `mbfc_media_data.pkl` beside the instances (or named
//!   with `--credibility`): pickled dicts keyed by domain, each `{credibility, details, ...}`
//!   (`details` a list of paragraphs in the MBFC table, a text in the combined one; MBFC entries
//!   also have `media`, `url`). JSON objects of the same shape are read too.
//!
//! Choices:
//! - The label is read trimmed and in any case: `Supported`/`Yes`/`True` is a true verdict,
//!   `Refuted`/`No`/`False` a false one. The original release wrote some labels with a trailing
//!   space (`"Supported "`); they are accepted.
//! - A claim's id is the instance's `id` (a string or a number, as text); an instance without
//!   one gets `noisebench_core::id::stable_id("confact", [claim])`.
//! - Each evidence is a document: id `evidence_id` (else `<claim id>_<n>`, n from 1), the
//!   instance as its claim, no title, `content` as text, `original_link` as URL and domain (the
//!   host without `www.`, lowercased: the authors' `extract_domain` keys).
//! - An evidence's label: its `majority_vote` stance (`Support` / `Reject` / `Not enough
//!   evidence`, any case) against the claim's verdict: a stance agreeing with the verdict is
//!   `supporting`, one opposing it `misleading`, no stance `irrelevant`; so a claim with both is
//!   in the `conflict = yes` group, CONF-FACT's conflicting claims. No `majority_vote`: no label.
//! - Credibility of an evidence: its own fields when it has them (`credibility` level,
//!   `credibility_score`, `source_background` or `media_background`); else the tables' entry
//!   for its domain, as the authors' `--media_data all` does: the combined table first, then
//!   MBFC; the level is `credibility` lowercased, the background the `details` (paragraphs
//!   joined by a space), marked as model-written when the domain is not in the MBFC table.
//!   How many documents matched is a note of the load summary; a document with no credibility
//!   is reported by the credibility methods, which do not run when no document has any.
//! - Pickles hold Python values: `None` and NaN are absent fields; a class instance outside
//!   Python's builtins (a numpy integer, a pandas timestamp) cannot be rebuilt, so the file is
//!   read again with such values as absent, and one bad row `unreadable_values` says so.
//! - `question` and `claim_date` are kept when they are non-empty strings.
//!
//! Errors: a file with no instance at all, or whose instances have no `evidence_url` (the
//! documented field; `evidence` is not read), is a [`LoadError::NoRecords`] naming the file
//! and the fields found.
//!
//! Bad rows (never fatal): `bad_record` (an instance or evidence that is not an object: skipped),
//! `missing_field` (no claim text, or no label), `unknown_label` (instance skipped),
//! `duplicate_id`, `empty_document` (an evidence without content: that evidence skipped),
//! `unreadable_values`, `bad_credibility` (a credibility entry that is not a dict). Rows are
//! `record N` (from 1) and `record N evidence M`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    LoadError, bad, domain_of, file_label, json_kind, json_text, read_bytes, sniff, string_field,
};
use crate::data::{BadRow, Credibility, DocLabel, EvalClaim, EvalData, EvalDocument};

/// The credibility tables' file names, in the order they are consulted.
pub const CREDIBILITY_FILES: [&str; 2] = ["all_media_data.pkl", "mbfc_media_data.pkl"];

/// The credibility tables beside an instance file (`all_media_data.pkl`,
/// `mbfc_media_data.pkl`), those present.
pub fn credibility_beside(instances: &Path) -> Vec<PathBuf> {
    let dir = instances.parent().unwrap_or(Path::new("."));
    CREDIBILITY_FILES
        .iter()
        .map(|f| dir.join(f))
        .filter(|p| p.is_file())
        .collect()
}

fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

fn is_pickle(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes[0] == 0x80 && (2..=5).contains(&bytes[1])
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

/// A CONF-FACT data file's value: gzip'd or not, a pickle or JSON. A pickle with class
/// instances outside Python's builtins is read again with them as null, and one bad row says so.
pub(crate) fn read_value(path: &Path, bad_rows: &mut Vec<BadRow>) -> Result<Value, LoadError> {
    let mut bytes = read_bytes(path)?;
    if is_gzip(&bytes) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| LoadError::Pickle {
                path: path.to_path_buf(),
                detail: format!("gzip data that does not decompress: {e}"),
            })?;
        if out.iter().all(u8::is_ascii_whitespace) {
            return Err(LoadError::Empty {
                path: path.to_path_buf(),
            });
        }
        bytes = out;
    }
    if is_pickle(&bytes) {
        let strict = serde_pickle::DeOptions::new().decode_strings();
        return match serde_pickle::value_from_slice(&bytes, strict) {
            Ok(v) => Ok(pickle_to_json(v)),
            Err(first) => {
                let lenient = serde_pickle::DeOptions::new()
                    .decode_strings()
                    .replace_unresolved_globals();
                match serde_pickle::value_from_slice(&bytes, lenient) {
                    Ok(v) => {
                        bad_rows.push(bad(
                            &file_label(path),
                            "all",
                            "unreadable_values",
                            format!(
                                "the pickle holds values of Python classes outside the builtins ({first}); they are read as absent"
                            ),
                        ));
                        Ok(pickle_to_json(v))
                    }
                    Err(e) => Err(LoadError::Pickle {
                        path: path.to_path_buf(),
                        detail: format!("a Python pickle that cannot be read: {e}"),
                    }),
                }
            }
        };
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let detail = match sniff(e.as_bytes()) {
                Some(kind) => format!("it looks like {kind}"),
                None => "neither a pickle nor UTF-8 JSON".to_string(),
            };
            return Err(LoadError::NotUtf8 {
                path: path.to_path_buf(),
                detail,
            });
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    serde_json::from_str(text).map_err(|error| LoadError::Json {
        path: path.to_path_buf(),
        error,
    })
}

/// One credibility table entry, as read.
struct MediaEntry {
    level: Option<String>,
    details: Option<String>,
}

fn media_entry(v: &Value) -> Option<MediaEntry> {
    let o = v.as_object()?;
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
    Some(MediaEntry {
        level: string_field(o, "credibility").map(|s| s.to_lowercase()),
        details,
    })
}

/// The credibility tables, keyed by lowercased domain, with which table each came from.
#[derive(Default)]
struct Media {
    /// (table file name, is the MBFC table, entries).
    tables: Vec<(String, bool, BTreeMap<String, MediaEntry>)>,
}

impl Media {
    fn read(paths: &[PathBuf], data: &mut EvalData) -> Result<Media, LoadError> {
        let mut media = Media::default();
        for path in paths {
            let file = file_label(path);
            let value = read_value(path, &mut data.bad_rows)?;
            let Some(map) = value.as_object() else {
                return Err(LoadError::Layout {
                    path: path.to_path_buf(),
                    detail: format!(
                        "a credibility table is a dict keyed by domain, found {}",
                        json_kind(&value)
                    ),
                });
            };
            let mut entries = BTreeMap::new();
            for (domain, v) in map {
                match media_entry(v) {
                    Some(e) => {
                        let key = domain
                            .trim()
                            .trim_start_matches("www.")
                            .to_ascii_lowercase();
                        entries.entry(key).or_insert(e);
                    }
                    None => data.bad_rows.push(bad(
                        &file,
                        domain.clone(),
                        "bad_credibility",
                        format!("the entry of {domain} is {}, not a dict", json_kind(v)),
                    )),
                }
            }
            let mbfc = file.to_ascii_lowercase().contains("mbfc");
            media.tables.push((file, mbfc, entries));
        }
        // The combined table first, as the authors' `--media_data all`.
        media.tables.sort_by_key(|(_, mbfc, _)| *mbfc);
        Ok(media)
    }

    /// A domain's credibility, and whether it was written by a model (in a combined table but
    /// not in the MBFC one, when both were given).
    fn lookup(&self, domain: &str) -> Option<(Credibility, bool)> {
        let has_mbfc = self.tables.iter().any(|(_, mbfc, _)| *mbfc);
        let in_mbfc = self
            .tables
            .iter()
            .any(|(_, mbfc, t)| *mbfc && t.contains_key(domain));
        let entry = self.tables.iter().find_map(|(_, _, t)| t.get(domain))?;
        let generated = has_mbfc && !in_mbfc;
        let background = entry.details.clone().map(|d| {
            if generated {
                format!(
                    "{d} (This description was written by a model and not checked by a person.)"
                )
            } else {
                d
            }
        });
        Some((
            Credibility {
                level: entry.level.clone(),
                score: None,
                background,
            },
            generated,
        ))
    }
}

/// An evidence's label from its `majority_vote` stance against the claim's verdict.
fn stance_label(vote: &str, verdict: bool) -> Option<DocLabel> {
    let v = vote.trim().to_ascii_lowercase();
    let stance = if v.starts_with("support") {
        Some(true)
    } else if v.starts_with("reject") || v.starts_with("refute") {
        Some(false)
    } else if v.starts_with("not enough") || v.starts_with("nei") || v.is_empty() {
        None
    } else {
        return None;
    };
    Some(match stance {
        Some(s) if s == verdict => DocLabel::Supporting,
        Some(_) => DocLabel::Misleading,
        None => DocLabel::Irrelevant,
    })
}

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

/// A list of instances that holds at least one with `evidence_url`, CONF-FACT's evidence.
fn check_instances(path: &Path, records: &[Value]) -> Result<(), LoadError> {
    if records.is_empty() {
        return Err(LoadError::NoRecords {
            path: path.to_path_buf(),
            detail: "the list of instances is empty".into(),
        });
    }
    if !records.iter().any(|r| {
        r.as_object()
            .is_some_and(|o| o.contains_key("evidence_url"))
    }) {
        let fields: Vec<String> = records
            .iter()
            .find_map(Value::as_object)
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        return Err(LoadError::NoRecords {
            path: path.to_path_buf(),
            detail: format!(
                "no instance has `evidence_url`, CONF-FACT's list of evidence (fields of the first: {})",
                if fields.is_empty() {
                    "none".to_string()
                } else {
                    fields.join(", ")
                }
            ),
        });
    }
    Ok(())
}

/// How the evidence documents got their credibility, and the document ids seen.
#[derive(Default)]
struct Counts {
    /// Matched by domain in a credibility table.
    matched: usize,
    /// Of those, with a model-written description.
    generated: usize,
    /// Carrying their own.
    own: usize,
    doc_ids: BTreeSet<String>,
}

/// The evidence documents of one instance (claim `id`, at `file`'s `row`) into `data`; returns
/// their ids. An evidence that is not an object, has no content or repeats an id is a bad row.
fn evidence_documents(
    data: &mut EvalData,
    media: &Media,
    counts: &mut Counts,
    (file, row): (&str, &str),
    id: &str,
    verdict: bool,
    o: &serde_json::Map<String, Value>,
) -> Vec<String> {
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
                file,
                ev_row,
                "bad_record",
                format!("an evidence is {}, not an object", json_kind(ev)),
            ));
            continue;
        };
        let doc_id = json_text(e.get("evidence_id")).unwrap_or_else(|| format!("{id}_{}", m + 1));
        let Some(content) = string_field(e, "content") else {
            data.bad_rows.push(bad(
                file,
                ev_row,
                "empty_document",
                format!("evidence {doc_id} has no content"),
            ));
            continue;
        };
        if !counts.doc_ids.insert(doc_id.clone()) {
            data.bad_rows.push(bad(
                file,
                ev_row,
                "duplicate_id",
                format!("evidence {doc_id} appears again"),
            ));
            continue;
        }
        let link = string_field(e, "original_link");
        let domain = link.as_deref().and_then(domain_of);
        let mut credibility = credibility_of(e);
        if credibility.is_known() {
            counts.own += 1;
        } else if let Some((c, gen_)) = domain.as_deref().and_then(|d| media.lookup(d)) {
            credibility = c;
            counts.matched += 1;
            counts.generated += usize::from(gen_);
        }
        let label = e
            .get("majority_vote")
            .and_then(Value::as_str)
            .and_then(|v| stance_label(v, verdict));
        documents.push(doc_id.clone());
        data.documents.push(EvalDocument {
            id: doc_id,
            claim_id: Some(id.to_string()),
            title: String::new(),
            text: content,
            label,
            domain,
            url: link,
            credibility,
        });
    }
    documents
}

/// The notes: what was read, and how documents got their credibility.
fn notes(data: &mut EvalData, media: &Media, counts: &Counts, file: &str, records: usize) {
    let Counts {
        matched,
        generated,
        own,
        ..
    } = counts;
    let n = data.documents.len();
    data.notes.push(format!(
        "instances: {file}: {} read, {} claims, {n} evidence documents",
        records,
        data.claims.len()
    ));
    if media.tables.is_empty() {
        data.notes.push(format!(
            "credibility: no table (all_media_data.pkl / mbfc_media_data.pkl beside {file}, or --credibility); {own} of {n} documents carry their own"
        ));
    } else {
        let tables: Vec<String> = media
            .tables
            .iter()
            .map(|(f, _, t)| format!("{f} ({} domains)", t.len()))
            .collect();
        data.notes.push(format!(
            "credibility: {}: {matched} of {n} documents matched by domain ({generated} model-written descriptions), {own} carry their own, {} have none",
            tables.join(", "),
            n - *matched - *own
        ));
    }
}

/// Load a CONF-FACT instance file alone (see the module documentation for every choice).
pub fn load_confact(path: &Path) -> Result<EvalData, LoadError> {
    load_confact_with(path, &[])
}

/// Load a CONF-FACT instance file with credibility tables (see the module documentation).
pub fn load_confact_with(path: &Path, credibility: &[PathBuf]) -> Result<EvalData, LoadError> {
    let mut data = EvalData {
        name: "confact".into(),
        ..EvalData::default()
    };
    let json = path;
    let records = match read_value(path, &mut data.bad_rows)? {
        Value::Array(items) => items,
        Value::Object(map)
            if !map.is_empty()
                && map
                    .values()
                    .all(|v| v.get("credibility").is_some() || v.get("details").is_some()) =>
        {
            return Err(LoadError::Layout {
                path: path.to_path_buf(),
                detail: "a credibility table (a dict keyed by domain), not instances: evaluate HumC.pkl.gz or ModC.pkl.gz and give this file with --credibility".into(),
            });
        }
        other => {
            return Err(LoadError::NotAList {
                path: path.to_path_buf(),
                found: json_kind(&other),
            });
        }
    };
    let media = Media::read(credibility, &mut data)?;
    let file = file_label(json);
    check_instances(path, &records)?;
    let mut counts = Counts::default();
    let mut claim_ids = BTreeSet::new();
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
        let documents = evidence_documents(
            &mut data,
            &media,
            &mut counts,
            (file.as_str(), row.as_str()),
            &id,
            verdict,
            o,
        );
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
    if data.claims.is_empty() {
        return Err(LoadError::NoRecords {
            path: path.to_path_buf(),
            detail: format!(
                "none of its {} instances is usable (see the reasons: {})",
                records.len(),
                data.bad_row_counts()
                    .iter()
                    .map(|(r, n)| format!("{r} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    notes(&mut data, &media, &counts, &file, records.len());
    Ok(data)
}
