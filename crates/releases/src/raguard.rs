//! RAGuard (Hugging Face `UCSC-IRKM/RAGuard`): `claims.csv` and `documents.csv`, joined on
//! `Claim ID`; the typed rows, their writer and their reader.
//!
//! - `claims.csv` ([`CLAIM_COLUMNS`]): `Claim ID`, `Claim`, `Verdict` (`True`/`False`),
//!   `Document IDs` (a Python list literal in a string, `"[16118, 16119]"`), `Document Labels`
//!   (`"['unrelated', 'misleading']"`), `Original Verdict` (PolitiFact's rating).
//! - `documents.csv` ([`DOCUMENT_COLUMNS`]): `Document ID`, `Title`, `Full Text`, `Claim ID`,
//!   `Document Label` (`supporting`, `misleading`, `unrelated`), `Link`.
//!
//! Writing (`write_claims`, `write_documents`, and [`export`], which makes the rows from
//! the claims track's tables): integer ids, documents numbered contiguously within each claim,
//! list columns as Python literals so the release's loaders (`ast.literal_eval`, join on
//! `Claim ID`) read them; `claim_id_map.csv` and `document_id_map.csv` map the integers back to
//! our ids. A document row is a claim-document pair: a page found for two claims appears twice,
//! under two ids, as in the release.
//!
//! Reading ([`read_claims`], [`read_documents`]): one file's text into typed rows, each named by
//! the CSV line it starts on (also after CRLF line ends), with the rows that cannot be typed
//! reported as [`Problem`]s: `missing_column` (every row of a file lacking a required column),
//! `bad_csv`, `missing_field` (an empty id or claim text), `bad_verdict`, `bad_list`. Joining the
//! two files (duplicates, unknown claims, labels, empty bodies) is the caller's
//! (`noisebench-eval`'s `load/raguard.rs`).

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_core::{Claim, ClaimDocumentLabel, Document};

use crate::Problem;
use crate::summary::{ExportError, ExportSummary, binary, create_dir, pairs_by_claim};

/// The columns of RAGuard's `claims.csv`, as the dataset card lists them.
pub const CLAIM_COLUMNS: [&str; 6] = [
    "Claim ID",
    "Claim",
    "Verdict",
    "Document IDs",
    "Document Labels",
    "Original Verdict",
];

/// The columns of RAGuard's `documents.csv`, as the dataset card lists them.
pub const DOCUMENT_COLUMNS: [&str; 6] = [
    "Document ID",
    "Title",
    "Full Text",
    "Claim ID",
    "Document Label",
    "Link",
];

/// The files [`export`] writes into its folder.
pub const RAGUARD_FILES: [&str; 4] = [
    "claims.csv",
    "documents.csv",
    "claim_id_map.csv",
    "document_id_map.csv",
];

/// One row of `claims.csv`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClaimRow {
    /// The release's integer id, as text (`12`; `12.0` reads as `12`).
    pub claim_id: String,
    pub claim: String,
    pub verdict: bool,
    /// `Document IDs`, in order; empty when the cell is empty or `[]`.
    pub document_ids: Vec<String>,
    /// `Document Labels`, in order, as written (`unrelated`, `misleading`, ...).
    pub document_labels: Vec<String>,
    /// PolitiFact's rating (`mostly-false`); empty when none.
    pub original_verdict: String,
}

/// One row of `documents.csv`. Empty strings are empty cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocumentRow {
    pub document_id: String,
    pub title: String,
    pub full_text: String,
    pub claim_id: String,
    pub document_label: String,
    pub link: String,
}

/// A file's typed rows, each with the line it starts on (`line N`), its header, and what could
/// not be typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsvRows<R> {
    pub headers: Vec<String>,
    pub rows: Vec<(String, R)>,
    pub problems: Vec<Problem>,
}

/// A string as a Python literal (single quotes, backslash escapes), as `repr` would read back.
pub(crate) fn py_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A list as a Python literal: `[1, 2]`, `['a', 'b']`, `[]`.
pub(crate) fn py_list<I: IntoIterator<Item = String>>(items: I) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(", "))
}

/// An id as a Python literal: an integer bare (`16118`), anything else quoted.
fn py_id(id: &str) -> String {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        id.to_string()
    } else {
        py_str(id)
    }
}

/// A rating slug as the RAGuard release writes it (`barely-true` -> `mostly-false`,
/// `pants-fire` -> `pants-on-fire`).
pub fn original_verdict(rating: &str) -> String {
    let slug = rating
        .trim()
        .to_lowercase()
        .replace(['_', ' '], "-")
        .replace('!', "");
    match slug.as_str() {
        "barely-true" => "mostly-false".into(),
        "pants-fire" | "pants-on-fire" => "pants-on-fire".into(),
        _ => slug,
    }
}

/// A label in the release's words: `supporting`, `misleading`, `unrelated` (for irrelevant);
/// `None` for a word that is none of them.
pub fn label_word(label: &str) -> Option<&'static str> {
    match label.trim().to_lowercase().as_str() {
        "supporting" | "support" | "supports" => Some("supporting"),
        "misleading" | "mislead" | "misleads" => Some("misleading"),
        "irrelevant" | "unrelated" => Some("unrelated"),
        _ => None,
    }
}

/// A body Reddit shows in place of a text: a link post's `[Link Post]`, a removed post's
/// `[deleted]` or `[removed]` (any case). Such a document has no body.
pub fn is_placeholder(body: &str) -> bool {
    matches!(
        body.trim().to_ascii_lowercase().as_str(),
        "[link post]" | "[deleted]" | "[removed]" | "[deleted by user]" | "[removed by reddit]"
    )
}

/// An id as text: `12`, also when a float column wrote it as `12.0` (pandas does so for an
/// integer column with a missing value), so the two files still join.
pub(crate) fn id_text(s: &str) -> &str {
    match s.strip_suffix(".0") {
        Some(int) if !int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()) => int,
        _ => s,
    }
}

/// `True`/`False` in any case.
fn parse_verdict(s: &str) -> Option<bool> {
    binary(s)
}

/// A Python list literal as pandas writes a list column (`str(list)`): integers and quoted
/// strings (`'` or `"`, backslash escapes), commas, an optional trailing comma, `[]`. Items come
/// back as text (`16118`, `unrelated`). Anything else is an error saying where.
pub fn parse_py_list(s: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = s.trim().chars().collect();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    if chars.first() != Some(&'[') {
        return Err("does not start with `[`".into());
    }
    i += 1;
    let mut items = Vec::new();
    loop {
        skip_ws(&mut i);
        match chars.get(i) {
            None => return Err("no closing `]`".into()),
            Some(']') => {
                i += 1;
                break;
            }
            Some(&q) if q == '\'' || q == '"' => {
                i += 1;
                let mut item = String::new();
                loop {
                    match chars.get(i) {
                        None => return Err(format!("unterminated string at {}", item.len())),
                        Some(&c) if c == q => {
                            i += 1;
                            break;
                        }
                        Some('\\') => {
                            let (c, used) = unescape(&chars[i + 1..])
                                .ok_or_else(|| format!("bad escape at character {i}"))?;
                            item.push(c);
                            i += 1 + used;
                        }
                        Some(&c) => {
                            item.push(c);
                            i += 1;
                        }
                    }
                }
                items.push(item);
            }
            Some(c) if c.is_ascii_digit() || *c == '-' || *c == '+' => {
                let start = i;
                i += 1;
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                let n: i64 = text
                    .parse()
                    .map_err(|_| format!("`{text}` is not an integer"))?;
                items.push(n.to_string());
            }
            Some(c) => return Err(format!("unexpected `{c}` at character {i}")),
        }
        skip_ws(&mut i);
        match chars.get(i) {
            Some(',') => i += 1,
            Some(']') => {
                i += 1;
                break;
            }
            Some(c) => return Err(format!("expected `,` or `]`, found `{c}` at character {i}")),
            None => return Err("no closing `]`".into()),
        }
    }
    skip_ws(&mut i);
    if i < chars.len() {
        return Err(format!("text after the closing `]` at character {i}"));
    }
    Ok(items)
}

/// One escape after a backslash: the character and how many characters it used.
fn unescape(rest: &[char]) -> Option<(char, usize)> {
    let hex = |n: usize| -> Option<(char, usize)> {
        let digits: String = rest.get(1..=n)?.iter().collect();
        let code = u32::from_str_radix(&digits, 16).ok()?;
        Some((char::from_u32(code)?, n + 1))
    };
    Some(match rest.first()? {
        'n' => ('\n', 1),
        't' => ('\t', 1),
        'r' => ('\r', 1),
        'x' => return hex(2),
        'u' => return hex(4),
        'U' => return hex(8),
        c @ ('\\' | '\'' | '"') => (*c, 1),
        _ => return None,
    })
}

/// A CSV text's header and records (each with the line it starts on), and the records that do
/// not parse or have the wrong number of fields (`bad_csv`).
fn csv_records(text: &str) -> CsvRows<Vec<String>> {
    let mut out = CsvRows::default();
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    match reader.headers() {
        Ok(h) => out.headers = h.iter().map(|s| s.trim().to_string()).collect(),
        Err(e) => out
            .problems
            .push(Problem::new("line 1", "bad_csv", e.to_string())),
    }
    // Lines are counted from the record's byte offset, past the line end the reader may put it
    // on: the csv crate's own line count is one short after CRLF line ends.
    let bytes = text.as_bytes();
    let line_at = |byte: u64| {
        let mut end = (byte as usize).min(bytes.len());
        while end < bytes.len() && matches!(bytes[end], b'\r' | b'\n') {
            end += 1;
        }
        format!(
            "line {}",
            bytes[..end].iter().filter(|b| **b == b'\n').count() + 1
        )
    };
    for record in reader.records() {
        match record {
            Ok(r) => {
                let line = r
                    .position()
                    .map_or_else(|| "unknown".into(), |p| line_at(p.byte()));
                if r.len() != out.headers.len() {
                    let detail =
                        format!("{} fields, the header has {}", r.len(), out.headers.len());
                    out.problems.push(Problem::new(line, "bad_csv", detail));
                    continue;
                }
                out.rows
                    .push((line, r.iter().map(str::to_string).collect()));
            }
            Err(e) => {
                let line = e
                    .position()
                    .map(|p| line_at(p.byte()))
                    .unwrap_or_else(|| "unknown".into());
                out.problems
                    .push(Problem::new(line, "bad_csv", e.to_string()));
            }
        }
    }
    out
}

/// The index of a column, by name (case and surrounding spaces ignored).
fn column(headers: &[String], name: &str) -> Option<usize> {
    headers.iter().position(|h| h.eq_ignore_ascii_case(name))
}

/// The indices of the required columns, or every row turned into a `missing_column` problem
/// (naming the first missing column and the file's columns).
fn require<const N: usize>(
    file: &str,
    table: &mut CsvRows<Vec<String>>,
    names: [&str; N],
) -> Option<[usize; N]> {
    let mut out = [0usize; N];
    for (slot, name) in out.iter_mut().zip(names) {
        match column(&table.headers, name) {
            Some(i) => *slot = i,
            None => {
                let detail = format!(
                    "no column `{name}` in {file} (columns: {})",
                    table.headers.join(", ")
                );
                for (line, _) in std::mem::take(&mut table.rows) {
                    table
                        .problems
                        .push(Problem::new(line, "missing_column", detail.clone()));
                }
                return None;
            }
        }
    }
    Some(out)
}

/// A cell, trimmed; empty when the column is absent.
fn cell(row: &[String], col: Option<usize>) -> &str {
    col.and_then(|i| row.get(i)).map(|s| s.trim()).unwrap_or("")
}

/// Read `claims.csv`'s text (`file` names it in problems). Required columns: `Claim ID`,
/// `Claim`, `Verdict`; the others read as empty when absent.
pub fn read_claims(file: &str, text: &str) -> CsvRows<ClaimRow> {
    let mut table = csv_records(text);
    let mut out = CsvRows {
        headers: table.headers.clone(),
        ..CsvRows::default()
    };
    let Some([c_id, c_text, c_verdict]) =
        require(file, &mut table, ["Claim ID", "Claim", "Verdict"])
    else {
        out.problems = table.problems;
        return out;
    };
    out.problems = std::mem::take(&mut table.problems);
    let at = |name| column(&table.headers, name);
    let (c_docs, c_labels, c_orig) = (
        at("Document IDs"),
        at("Document Labels"),
        at("Original Verdict"),
    );
    for (line, row) in table.rows {
        let id = id_text(cell(&row, Some(c_id)));
        let text = cell(&row, Some(c_text));
        if id.is_empty() || text.is_empty() {
            let which = if id.is_empty() { "Claim ID" } else { "Claim" };
            let detail = format!("`{which}` is empty");
            out.problems
                .push(Problem::new(line, "missing_field", detail));
            continue;
        }
        let raw_verdict = cell(&row, Some(c_verdict));
        let Some(verdict) = parse_verdict(raw_verdict) else {
            let detail = format!("`Verdict` is {raw_verdict:?}, not True or False");
            out.problems.push(Problem::new(line, "bad_verdict", detail));
            continue;
        };
        let mut lists = Vec::new();
        let mut unparsable = None;
        for (name, col) in [("Document IDs", c_docs), ("Document Labels", c_labels)] {
            let raw = cell(&row, col);
            if raw.is_empty() {
                lists.push(Vec::new());
                continue;
            }
            match parse_py_list(raw) {
                Ok(items) => lists.push(items),
                Err(e) => {
                    unparsable = Some(format!("`{name}` {raw:?}: {e}"));
                    break;
                }
            }
        }
        if let Some(detail) = unparsable {
            out.problems.push(Problem::new(line, "bad_list", detail));
            continue;
        }
        let document_labels = lists.pop().unwrap_or_default();
        let document_ids = lists.pop().unwrap_or_default();
        let claim = ClaimRow {
            claim_id: id.to_string(),
            claim: text.to_string(),
            verdict,
            document_ids,
            document_labels,
            original_verdict: cell(&row, c_orig).to_string(),
        };
        out.rows.push((line, claim));
    }
    out
}

/// Read `documents.csv`'s text (`file` names it in problems). Required columns:
/// `Document ID`, `Claim ID`, `Full Text`; the others read as empty when absent.
pub fn read_documents(file: &str, text: &str) -> CsvRows<DocumentRow> {
    let mut table = csv_records(text);
    let mut out = CsvRows {
        headers: table.headers.clone(),
        ..CsvRows::default()
    };
    let Some([d_id, d_claim, d_text]) =
        require(file, &mut table, ["Document ID", "Claim ID", "Full Text"])
    else {
        out.problems = table.problems;
        return out;
    };
    out.problems = std::mem::take(&mut table.problems);
    let at = |name| column(&table.headers, name);
    let (d_title, d_label, d_link) = (at("Title"), at("Document Label"), at("Link"));
    for (line, row) in table.rows {
        let id = id_text(cell(&row, Some(d_id)));
        let claim = id_text(cell(&row, Some(d_claim)));
        if id.is_empty() || claim.is_empty() {
            let which = if id.is_empty() {
                "Document ID"
            } else {
                "Claim ID"
            };
            let detail = format!("`{which}` is empty");
            out.problems
                .push(Problem::new(line, "missing_field", detail));
            continue;
        }
        let doc = DocumentRow {
            document_id: id.to_string(),
            title: cell(&row, d_title).to_string(),
            full_text: cell(&row, Some(d_text)).to_string(),
            claim_id: claim.to_string(),
            document_label: cell(&row, d_label).to_string(),
            link: cell(&row, d_link).to_string(),
        };
        out.rows.push((line, doc));
    }
    out
}

/// Read a file [`write_claims`] or the release wrote, naming it in problems by its file name.
#[cfg(test)]
fn read_claims_file(path: &Path) -> Result<CsvRows<ClaimRow>, ExportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExportError::io(path, e))?;
    Ok(read_claims(&crate::file_name(path), &text))
}

/// Read a file [`write_documents`] or the release wrote, naming it in problems by its file name.
#[cfg(test)]
fn read_documents_file(path: &Path) -> Result<CsvRows<DocumentRow>, ExportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExportError::io(path, e))?;
    Ok(read_documents(&crate::file_name(path), &text))
}

fn write_rows(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<(), ExportError> {
    let err = |e: csv::Error| ExportError::Csv {
        path: path.into(),
        message: e.to_string(),
    };
    let mut w = csv::Writer::from_path(path).map_err(err)?;
    w.write_record(header).map_err(err)?;
    for r in rows {
        w.write_record(r).map_err(err)?;
    }
    w.flush().map_err(|e| ExportError::io(path, e))
}

/// Write `claims.csv` (the dataset card's columns, lists as Python literals).
pub(crate) fn write_claims(path: &Path, rows: &[ClaimRow]) -> Result<(), ExportError> {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.claim_id.clone(),
                r.claim.clone(),
                if r.verdict { "True" } else { "False" }.to_string(),
                py_list(r.document_ids.iter().map(|id| py_id(id))),
                py_list(r.document_labels.iter().map(|l| py_str(l))),
                r.original_verdict.clone(),
            ]
        })
        .collect();
    write_rows(path, &CLAIM_COLUMNS, &cells)
}

/// Write `documents.csv` (the dataset card's columns).
pub(crate) fn write_documents(path: &Path, rows: &[DocumentRow]) -> Result<(), ExportError> {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.document_id.clone(),
                r.title.clone(),
                r.full_text.clone(),
                r.claim_id.clone(),
                r.document_label.clone(),
                r.link.clone(),
            ]
        })
        .collect();
    write_rows(path, &DOCUMENT_COLUMNS, &cells)
}

/// Write RAGuard-compatible `claims.csv` and `documents.csv` (plus the id maps) into `dir`,
/// from the claims track's tables.
///
/// Claims keep their order in `claims`; those without a true/false verdict are left out (and
/// counted). Documents keep the order of `labels` within a claim. Labels are written with the
/// release's words (`unrelated` for irrelevant). Rows with no label are left out (counted).
pub fn export(
    claims: &[Claim],
    documents: &[Document],
    labels: &[ClaimDocumentLabel],
    dir: &Path,
) -> Result<ExportSummary, ExportError> {
    create_dir(dir)?;
    let docs: BTreeMap<&str, &Document> = documents.iter().map(|d| (d.id.as_str(), d)).collect();
    let claim_index: BTreeMap<&str, &Claim> = claims.iter().map(|c| (c.id.as_str(), c)).collect();
    let mut summary = ExportSummary::default();
    let has_label = |l: &ClaimDocumentLabel, _: &Document| match l.label {
        Some(_) => Ok(()),
        None => Err(("no_label", "the label row has no label to export".into())),
    };
    let by_claim = pairs_by_claim(labels, &docs, &claim_index, has_label, &mut summary);
    let (mut claim_rows, mut doc_rows, mut claim_map, mut doc_map) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for claim in claims {
        let Some(verdict) = binary(&claim.verdict) else {
            // Its label rows were skipped in `pairs_by_claim`.
            summary.claims_without_binary_verdict += 1;
            continue;
        };
        let claim_no = claim_rows.len().to_string();
        let mut row = ClaimRow {
            claim_id: claim_no.clone(),
            claim: claim.text.clone(),
            verdict,
            original_verdict: original_verdict(&claim.original_rating),
            ..ClaimRow::default()
        };
        for (label, doc) in by_claim.get(claim.id.as_str()).cloned().unwrap_or_default() {
            let doc_no = doc_rows.len().to_string();
            let word = label
                .label
                .as_deref()
                .and_then(label_word)
                .unwrap_or("unrelated");
            row.document_ids.push(doc_no.clone());
            row.document_labels.push(word.to_string());
            doc_rows.push(DocumentRow {
                document_id: doc_no.clone(),
                title: doc.title.clone().unwrap_or_default(),
                full_text: doc.text.clone(),
                claim_id: claim_no.clone(),
                document_label: word.to_string(),
                link: doc.url.clone(),
            });
            doc_map.push(vec![
                doc_no,
                claim_no.clone(),
                claim.id.clone(),
                doc.id.clone(),
                label.id.clone(),
            ]);
        }
        claim_rows.push(row);
        claim_map.push(vec![claim_no, claim.id.clone()]);
    }
    summary.claims = claim_rows.len();
    summary.documents = doc_rows.len();
    let paths = RAGUARD_FILES.map(|f| dir.join(f));
    write_claims(&paths[0], &claim_rows)?;
    write_documents(&paths[1], &doc_rows)?;
    write_rows(&paths[2], &["Claim ID", "claim_id"], &claim_map)?;
    let doc_map_header = [
        "Document ID",
        "Claim ID",
        "claim_id",
        "document_id",
        "label_id",
    ];
    write_rows(&paths[3], &doc_map_header, &doc_map)?;
    summary.files.extend(paths);
    Ok(summary)
}

/// RAGuard's release format ([`crate::format::ReleaseFormat`]): `claims.csv` and
/// `documents.csv` with id maps back to ours, from `claims`, `documents` and `labels`.
pub struct Raguard;

impl crate::format::ReleaseFormat for Raguard {
    fn name(&self) -> &'static str {
        "raguard"
    }
    fn stage_kind(&self) -> &'static str {
        "export-raguard"
    }
    fn version(&self) -> u32 {
        1
    }
    fn about(&self) -> &'static str {
        "RAGuard's claims.csv and documents.csv, with id maps back to ours"
    }
    fn items(&self) -> noisebench_core::TableKind {
        noisebench_core::TableKind::Labels
    }
    fn inputs(&self) -> Vec<noisebench_core::InputSpec> {
        crate::summary::claims_track_inputs()
    }
    fn files(&self) -> Vec<&'static str> {
        RAGUARD_FILES.to_vec()
    }
    fn export(
        &self,
        tables: &dyn crate::format::TableSource,
        out: &Path,
    ) -> Result<crate::format::Exported, crate::format::BoxError> {
        let claims: Vec<Claim> = tables.require()?;
        let documents: Vec<Document> = tables.require()?;
        let labels: Vec<ClaimDocumentLabel> = tables.require()?;
        Ok(crate::format::Exported::Claims(export(
            &claims, &documents, &labels, out,
        )?))
    }
    fn read_back(&self, dir: &Path) -> Result<usize, crate::format::BoxError> {
        let path = dir.join(RAGUARD_FILES[1]);
        let text = std::fs::read_to_string(&path).map_err(|e| ExportError::io(&path, e))?;
        let read = read_documents(RAGUARD_FILES[1], &text);
        if let Some(p) = read.problems.first() {
            return Err(format!("{}: {} {}: {}", path.display(), p.row, p.reason, p.detail).into());
        }
        Ok(read.rows.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals() {
        assert_eq!(
            py_list(["16118".to_string(), "16119".to_string()]),
            "[16118, 16119]"
        );
        assert_eq!(
            py_list(["unrelated", "misleading"].map(py_str)),
            "['unrelated', 'misleading']"
        );
        assert_eq!(py_list(Vec::<String>::new()), "[]");
        assert_eq!(py_str("it's \\ ok"), r"'it\'s \\ ok'");
        assert_eq!(py_id("12"), "12");
        assert_eq!(py_id("c-1"), "'c-1'");
        assert_eq!(original_verdict("barely-true"), "mostly-false");
        assert_eq!(original_verdict("Pants on Fire!"), "pants-on-fire");
        assert_eq!(original_verdict("half-true"), "half-true");
        assert_eq!(label_word("Irrelevant"), Some("unrelated"));
        assert_eq!(label_word("other"), None);
    }

    #[test]
    fn python_lists() {
        assert_eq!(parse_py_list("[16118, 16119]").unwrap(), ["16118", "16119"]);
        assert_eq!(
            parse_py_list("['unrelated', 'misleading']").unwrap(),
            ["unrelated", "misleading"]
        );
        assert_eq!(parse_py_list(" [] ").unwrap(), Vec::<String>::new());
        assert_eq!(id_text("12.0"), "12");
        assert_eq!(id_text("12"), "12");
        assert_eq!(id_text(".0"), ".0");
        assert_eq!(parse_py_list("[1,]").unwrap(), ["1"]);
        assert_eq!(
            parse_py_list(r#"["it's", 'say \'hi\'', 'a\\b', '\x41\u00e9']"#).unwrap(),
            ["it's", "say 'hi'", "a\\b", "Aé"]
        );
        for bad in [
            "",
            "16118",
            "[16118",
            "[16118 16119]",
            "[unrelated]",
            "['a' 'b']",
            "['a']x",
            "['a",
            "[1.5]",
            "['\\q']",
        ] {
            assert!(parse_py_list(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rows_are_named_by_their_line_and_bad_rows_by_reason() {
        let text = "Claim ID,Claim,Verdict,Document IDs\r\n\
                    1,\"two\r\nlines\",True,\"[3, 4]\"\r\n\
                    2,x,maybe,[]\r\n\
                    ,y,False,[]\r\n\
                    3,z,False,[3\r\n\
                    4,w\r\n\
                    5.0,v,false,\r\n";
        let read = read_claims("claims.csv", text);
        let lines: Vec<&str> = read.rows.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(lines, ["line 2", "line 8"]);
        assert_eq!(read.rows[0].1.document_ids, ["3", "4"]);
        assert_eq!(read.rows[0].1.claim, "two\r\nlines");
        assert_eq!(read.rows[1].1.claim_id, "5");
        assert!(!read.rows[1].1.verdict);
        let problems: Vec<(&str, &str)> = read
            .problems
            .iter()
            .map(|p| (p.row.as_str(), p.reason))
            .collect();
        assert_eq!(
            problems,
            [
                ("line 7", "bad_csv"),
                ("line 4", "bad_verdict"),
                ("line 5", "missing_field"),
                ("line 6", "bad_list"),
            ]
        );
        let missing = read_documents("documents.csv", "Document ID,Title\n1,a\n2,b\n");
        assert!(missing.rows.is_empty());
        assert_eq!(missing.problems.len(), 2);
        assert!(
            missing.problems[0]
                .detail
                .contains("no column `Claim ID` in documents.csv (columns: Document ID, Title)"),
            "{:?}",
            missing.problems
        );
    }

    /// The export of a small snapshot read back with this module's reader: every field of
    /// every row is what the tables say, and every label row left out is counted with its
    /// reason.
    #[test]
    fn an_export_reads_back_field_by_field() {
        let (claims, docs, labels, _) = crate::test_tables::tables();
        let dir = tempfile::tempdir().unwrap();
        let summary = export(&claims, &docs, &labels, dir.path()).unwrap();
        assert_eq!((summary.claims, summary.documents), (2, 4));
        assert_eq!(summary.claims_without_binary_verdict, 1);
        let reasons: Vec<&str> = summary.skipped.iter().map(|s| s.reason).collect();
        assert_eq!(
            reasons,
            [
                "no_label",
                "claim_verdict_not_binary",
                "unknown_claim",
                "unknown_document"
            ]
        );

        let read = read_claims_file(&dir.path().join("claims.csv")).unwrap();
        assert!(read.problems.is_empty(), "{:?}", read.problems);
        assert_eq!(read.headers, CLAIM_COLUMNS);
        let expected_claims = [
            ClaimRow {
                claim_id: "0".into(),
                claim: "Says \"we cut taxes\", and it's true.".into(),
                verdict: true,
                document_ids: vec!["0".into(), "1".into()],
                document_labels: vec!["supporting".into(), "unrelated".into()],
                original_verdict: "half-true".into(),
            },
            ClaimRow {
                claim_id: "1".into(),
                claim: "Crime rose 50%.".into(),
                verdict: false,
                document_ids: vec!["2".into(), "3".into()],
                document_labels: vec!["misleading".into(), "supporting".into()],
                original_verdict: "mostly-false".into(),
            },
        ];
        let rows: Vec<&ClaimRow> = read.rows.iter().map(|(_, r)| r).collect();
        assert_eq!(rows, expected_claims.iter().collect::<Vec<_>>());
        assert_eq!(read.rows[1].0, "line 3");

        let read = read_documents_file(&dir.path().join("documents.csv")).unwrap();
        assert!(read.problems.is_empty(), "{:?}", read.problems);
        assert_eq!(read.headers, DOCUMENT_COLUMNS);
        let row =
            |id: &str, title: &str, text: &str, claim: &str, label: &str, link: &str| DocumentRow {
                document_id: id.into(),
                title: title.into(),
                full_text: text.into(),
                claim_id: claim.into(),
                document_label: label.into(),
                link: link.into(),
            };
        let expected_docs = [
            row(
                "0",
                "Taxes, \"cut\"",
                "Body one,\nwith a newline.",
                "0",
                "supporting",
                "https://www.reddit.com/r/p/1",
            ),
            row(
                "1",
                "A link post",
                "",
                "0",
                "unrelated",
                "https://www.reddit.com/r/p/2",
            ),
            row(
                "2",
                "",
                "Body three",
                "1",
                "misleading",
                "https://example.org/3",
            ),
            row(
                "3",
                "Taxes, \"cut\"",
                "Body one,\nwith a newline.",
                "1",
                "supporting",
                "https://www.reddit.com/r/p/1",
            ),
        ];
        let rows: Vec<&DocumentRow> = read.rows.iter().map(|(_, r)| r).collect();
        assert_eq!(rows, expected_docs.iter().collect::<Vec<_>>());
        // The first document's body spans two lines: the next row starts on line 4.
        assert_eq!(read.rows[1].0, "line 4");

        let map = std::fs::read_to_string(dir.path().join("document_id_map.csv")).unwrap();
        assert_eq!(map.lines().nth(4), Some("3,1,c2,d1,label_c2_d1"), "{map}");
    }

    /// Rows written by [`write_claims`] / [`write_documents`] read back equal, ids that are
    /// not integers quoted in the list literal.
    #[test]
    fn written_rows_read_back_equal() {
        let dir = tempfile::tempdir().unwrap();
        let claims = vec![ClaimRow {
            claim_id: "7".into(),
            claim: "It's \"so\".".into(),
            verdict: false,
            document_ids: vec!["12".into(), "doc-b".into()],
            document_labels: vec!["misleading".into(), "it's odd".into()],
            original_verdict: String::new(),
        }];
        let path = dir.path().join("claims.csv");
        write_claims(&path, &claims).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"[12, 'doc-b']\""), "{text}");
        let read = read_claims_file(&path).unwrap();
        assert_eq!(
            read.rows.into_iter().map(|(_, r)| r).collect::<Vec<_>>(),
            claims
        );
    }
}
