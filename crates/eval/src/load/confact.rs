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
//! The bytes are decoded, and each instance and credibility entry typed, by
//! `noisebench_releases::confact` (the format's one home, beside the writer our export uses);
//! this module joins credibility by domain and counts what it sets aside.
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
use std::path::{Path, PathBuf};

pub use noisebench_releases::confact::CREDIBILITY_FILES;
use noisebench_releases::confact::{
    self as format, DecodeError, MediaEntry, ReadEvidence, ReadInstance, is_media_table,
};
use serde_json::Value;

use super::{LoadError, bad, domain_of, file_label, json_kind, read_bytes, sniff};
use crate::data::{BadRow, Credibility, DocLabel, EvalClaim, EvalData, EvalDocument};

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

/// A CONF-FACT data file's value: gzip'd or not, a pickle or JSON
/// (`noisebench_releases::confact::decode`). A pickle with class instances outside Python's
/// builtins is read with them as null, and one bad row says so.
pub(crate) fn read_value(path: &Path, bad_rows: &mut Vec<BadRow>) -> Result<Value, LoadError> {
    let bytes = read_bytes(path)?;
    let path_buf = path.to_path_buf();
    match format::decode(bytes) {
        Ok(decoded) => {
            if let Some(why) = decoded.unreadable {
                bad_rows.push(bad(&file_label(path), "all", "unreadable_values", why));
            }
            Ok(decoded.value)
        }
        Err(DecodeError::Gzip(e)) => Err(LoadError::Pickle {
            path: path_buf,
            detail: format!("gzip data that does not decompress: {e}"),
        }),
        Err(DecodeError::EmptyGzip) => Err(LoadError::Empty { path: path_buf }),
        Err(DecodeError::Pickle(e)) => Err(LoadError::Pickle {
            path: path_buf,
            detail: format!("a Python pickle that cannot be read: {e}"),
        }),
        Err(DecodeError::NotUtf8(bytes)) => Err(LoadError::NotUtf8 {
            path: path_buf,
            detail: match sniff(&bytes) {
                Some(kind) => format!("it looks like {kind}"),
                None => "neither a pickle nor UTF-8 JSON".to_string(),
            },
        }),
        Err(DecodeError::Json(error)) => Err(LoadError::Json {
            path: path_buf,
            error,
        }),
    }
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
            let table = format::read_media_table(&value).map_err(|detail| LoadError::Layout {
                path: path.to_path_buf(),
                detail,
            })?;
            for p in table.problems {
                data.bad_rows.push(bad(&file, p.row, p.reason, p.detail));
            }
            let entries = table.entries;
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
    Some(match format::parse_stance(vote)? {
        Some(s) if s == verdict => DocLabel::Supporting,
        Some(_) => DocLabel::Misleading,
        None => DocLabel::Irrelevant,
    })
}

fn credibility_of(e: &ReadEvidence) -> Credibility {
    Credibility {
        level: e.credibility.clone(),
        score: e.credibility_score,
        background: e.background.clone(),
    }
}

/// Instances joined into claims and documents: the ids seen, and how many documents got
/// their credibility from a table (`matched`, of which `generated` model-written) or carried
/// their own (`own`).
struct Join<'a> {
    file: &'a str,
    media: &'a Media,
    claim_ids: BTreeSet<String>,
    doc_ids: BTreeSet<String>,
    matched: usize,
    generated: usize,
    own: usize,
}

impl Join<'_> {
    /// One instance as a claim with its evidence documents; a repeated id, an evidence that is
    /// not an object or has no content are bad rows.
    fn instance(&mut self, row: String, instance: ReadInstance, data: &mut EvalData) {
        let file = self.file;
        let id = instance
            .id
            .unwrap_or_else(|| noisebench_core::id::stable_id("confact", &[&instance.claim]));
        if !self.claim_ids.insert(id.clone()) {
            let detail = format!("claim {id} appears again");
            data.bad_rows.push(bad(file, row, "duplicate_id", detail));
            return;
        }
        let mut documents = Vec::new();
        for (m, ev) in instance.evidence.into_iter().enumerate() {
            let ev_row = format!("{row} evidence {}", m + 1);
            let e = match ev {
                Ok(e) => e,
                Err((reason, detail)) => {
                    data.bad_rows.push(bad(file, ev_row, reason, detail));
                    continue;
                }
            };
            let doc_id = e
                .evidence_id
                .clone()
                .unwrap_or_else(|| format!("{id}_{}", m + 1));
            let Some(content) = e.content.clone() else {
                let detail = format!("evidence {doc_id} has no content");
                data.bad_rows
                    .push(bad(file, ev_row, "empty_document", detail));
                continue;
            };
            if !self.doc_ids.insert(doc_id.clone()) {
                let detail = format!("evidence {doc_id} appears again");
                data.bad_rows
                    .push(bad(file, ev_row, "duplicate_id", detail));
                continue;
            }
            let domain = e.original_link.as_deref().and_then(domain_of);
            let mut credibility = credibility_of(&e);
            if credibility.is_known() {
                self.own += 1;
            } else if let Some((c, gen_)) = domain.as_deref().and_then(|d| self.media.lookup(d)) {
                credibility = c;
                self.matched += 1;
                self.generated += usize::from(gen_);
            }
            let label = e
                .majority_vote
                .as_deref()
                .and_then(|v| stance_label(v, instance.verdict));
            documents.push(doc_id.clone());
            data.documents.push(EvalDocument {
                id: doc_id,
                claim_id: Some(id.clone()),
                title: String::new(),
                text: content,
                label,
                domain,
                url: e.original_link,
                credibility,
            });
        }
        data.claims.push(EvalClaim {
            id,
            text: instance.claim,
            question: instance.question,
            verdict: instance.verdict,
            original_verdict: None,
            documents,
            claim_date: instance.claim_date,
        });
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
        value if is_media_table(&value) => {
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
    let mut join = Join {
        file: &file,
        media: &media,
        claim_ids: BTreeSet::new(),
        doc_ids: BTreeSet::new(),
        matched: 0,
        generated: 0,
        own: 0,
    };
    for (n, record) in records.iter().enumerate() {
        let row = format!("record {}", n + 1);
        match ReadInstance::from_value(record) {
            Ok(instance) => join.instance(row, instance, &mut data),
            Err((reason, detail)) => data.bad_rows.push(bad(&file, row, reason, detail)),
        }
    }
    let Join {
        matched,
        generated,
        own,
        ..
    } = join;
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
    let n = data.documents.len();
    data.notes.push(format!(
        "instances: {file}: {} read, {} claims, {n} evidence documents",
        records.len(),
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
            n - matched - own
        ));
    }
    Ok(data)
}
