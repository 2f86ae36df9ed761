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
//! Bad rows (never fatal): `missing_column`, `bad_csv` (a row with the wrong number of
//! fields), `missing_field` (empty id or claim text), `bad_verdict`, `bad_list`,
//! `duplicate_id`, `unknown_claim`, `unknown_label`, `empty_document`, `missing_document`.
//! Row names are `line N`, the CSV line where the record starts (the header is line 1).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{LoadError, bad, domain_of, file_label, read_text};
use crate::data::{BadRow, Credibility, DocLabel, EvalClaim, EvalData, EvalDocument};

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

/// A CSV file's header and records, each with the line it starts on.
struct Table {
    file: String,
    headers: Vec<String>,
    rows: Vec<(String, Vec<String>)>,
}

impl Table {
    fn read(path: &Path, bad_rows: &mut Vec<BadRow>) -> Result<Table, LoadError> {
        let text = read_text(path, bad_rows)?;
        let file = file_label(path);
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_reader(text.as_bytes());
        let headers: Vec<String> = match reader.headers() {
            Ok(h) => h.iter().map(|s| s.trim().to_string()).collect(),
            Err(e) => {
                bad_rows.push(bad(&file, "line 1", "bad_csv", e.to_string()));
                Vec::new()
            }
        };
        // Lines are counted from the record's byte offset, past the line end the reader may
        // put it on: the csv crate's own line count is one short after CRLF line ends.
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
        let mut rows = Vec::new();
        for record in reader.records() {
            match record {
                Ok(r) => {
                    let line = r
                        .position()
                        .map_or_else(|| "unknown".into(), |p| line_at(p.byte()));
                    if r.len() != headers.len() {
                        bad_rows.push(bad(
                            &file,
                            line,
                            "bad_csv",
                            format!("{} fields, the header has {}", r.len(), headers.len()),
                        ));
                        continue;
                    }
                    rows.push((line, r.iter().map(str::to_string).collect()));
                }
                Err(e) => {
                    let line = e
                        .position()
                        .map(|p| line_at(p.byte()))
                        .unwrap_or_else(|| "unknown".into());
                    bad_rows.push(bad(&file, line, "bad_csv", e.to_string()));
                }
            }
        }
        Ok(Table {
            file,
            headers,
            rows,
        })
    }

    /// The index of a column, by name (case and surrounding spaces ignored).
    fn column(&self, name: &str) -> Option<usize> {
        self.headers
            .iter()
            .position(|h| h.eq_ignore_ascii_case(name))
    }

    /// The indices of the required columns, or every row turned into a `missing_column` bad
    /// row (naming the first missing column and the file's columns).
    fn require<const N: usize>(
        &self,
        names: [&str; N],
        bad_rows: &mut Vec<BadRow>,
    ) -> Option<[usize; N]> {
        let mut out = [0usize; N];
        for (slot, name) in out.iter_mut().zip(names) {
            match self.column(name) {
                Some(i) => *slot = i,
                None => {
                    let detail = format!(
                        "no column `{name}` in {} (columns: {})",
                        self.file,
                        self.headers.join(", ")
                    );
                    for (line, _) in &self.rows {
                        bad_rows.push(bad(
                            &self.file,
                            line.clone(),
                            "missing_column",
                            detail.clone(),
                        ));
                    }
                    return None;
                }
            }
        }
        Some(out)
    }
}

/// A cell, trimmed; empty when the column is absent.
fn cell(row: &[String], col: Option<usize>) -> &str {
    col.and_then(|i| row.get(i)).map(|s| s.trim()).unwrap_or("")
}

/// An id as text: `12`, also when a float column wrote it as `12.0` (pandas does so for an
/// integer column with a missing value), so the two files still join.
fn id_text(s: &str) -> &str {
    match s.strip_suffix(".0") {
        Some(int) if !int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()) => int,
        _ => s,
    }
}

/// A body Reddit shows in place of a text: a link post's `[Link Post]`, a removed post's
/// `[deleted]` or `[removed]`. Such a document is read as having no body.
fn is_placeholder(body: &str) -> bool {
    matches!(
        body.trim().to_ascii_lowercase().as_str(),
        "[link post]" | "[deleted]" | "[removed]" | "[deleted by user]" | "[removed by reddit]"
    )
}

/// `True`/`False` in any case.
fn parse_verdict(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
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

/// A claim row as read, before its documents are resolved.
struct ClaimRow {
    line: String,
    claim: EvalClaim,
    /// Its `Document IDs`, when the cell had a non-empty list.
    listed: Option<Vec<String>>,
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
    let claims = Table::read(claims_csv, &mut data.bad_rows)?;
    let docs = match documents_csv {
        Some(path) => Table::read(path, &mut data.bad_rows)?,
        None => Table {
            file: "documents.csv".into(),
            headers: DOCUMENT_COLUMNS.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        },
    };

    let claim_rows = read_claims(&claims, &mut data.bad_rows);
    let seen_docs = read_documents(&docs, &claim_rows, &mut data);
    attach_documents(
        &mut data,
        claim_rows,
        &seen_docs,
        &claims,
        &docs,
        documents_csv,
    );
    notes(&mut data, &claims, &docs, documents_csv);
    Ok(data)
}

/// The claims of `claims.csv` read, with their ids and the labels their `Document Labels`
/// give (the fallback label of a document), each row that cannot be read a bad row.
fn read_claims(claims: &Table, bad_rows: &mut Vec<BadRow>) -> ClaimRows {
    let mut claim_rows: Vec<ClaimRow> = Vec::new();
    let mut claim_ids: BTreeSet<String> = BTreeSet::new();
    // Labels from the claims' `Document Labels`, by document id: the fallback label.
    let mut listed_labels: BTreeMap<String, DocLabel> = BTreeMap::new();
    if let Some([c_id, c_text, c_verdict]) =
        claims.require(["Claim ID", "Claim", "Verdict"], bad_rows)
    {
        let (c_docs, c_labels, c_orig) = (
            claims.column("Document IDs"),
            claims.column("Document Labels"),
            claims.column("Original Verdict"),
        );
        let f = &claims.file;
        for (line, row) in &claims.rows {
            let id = id_text(cell(row, Some(c_id)));
            let text = cell(row, Some(c_text));
            if id.is_empty() || text.is_empty() {
                let which = if id.is_empty() { "Claim ID" } else { "Claim" };
                bad_rows.push(bad(
                    f,
                    line.clone(),
                    "missing_field",
                    format!("`{which}` is empty"),
                ));
                continue;
            }
            let Some(verdict) = parse_verdict(cell(row, Some(c_verdict))) else {
                bad_rows.push(bad(
                    f,
                    line.clone(),
                    "bad_verdict",
                    format!(
                        "`Verdict` is {:?}, not True or False",
                        cell(row, Some(c_verdict))
                    ),
                ));
                continue;
            };
            let mut lists = Vec::new();
            let mut unparsable = None;
            for (name, col) in [("Document IDs", c_docs), ("Document Labels", c_labels)] {
                let raw = cell(row, col);
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
                bad_rows.push(bad(f, line.clone(), "bad_list", detail));
                continue;
            }
            if !claim_ids.insert(id.to_string()) {
                bad_rows.push(bad(
                    f,
                    line.clone(),
                    "duplicate_id",
                    format!("claim {id} appears again"),
                ));
                continue;
            }
            let (ids, labels) = (&lists[0], &lists[1]);
            if ids.len() == labels.len() {
                for (doc, label) in ids.iter().zip(labels) {
                    if let Some(l) = DocLabel::parse(label) {
                        listed_labels.insert(doc.clone(), l);
                    }
                }
            }
            let orig = cell(row, c_orig);
            claim_rows.push(ClaimRow {
                line: line.clone(),
                listed: (!ids.is_empty()).then(|| ids.clone()),
                claim: EvalClaim {
                    id: id.to_string(),
                    text: text.to_string(),
                    question: None,
                    verdict,
                    original_verdict: (!orig.is_empty()).then(|| orig.to_string()),
                    documents: Vec::new(),
                    claim_date: None,
                },
            });
        }
    }
    ClaimRows {
        rows: claim_rows,
        ids: claim_ids,
        listed_labels,
    }
}

/// What [`read_claims`] read.
struct ClaimRows {
    rows: Vec<ClaimRow>,
    ids: BTreeSet<String>,
    listed_labels: BTreeMap<String, DocLabel>,
}

/// The documents of `documents.csv` into `data`, each row that cannot be read a bad row;
/// returns every document id seen (kept or not).
fn read_documents(docs: &Table, claims: &ClaimRows, data: &mut EvalData) -> BTreeSet<String> {
    let mut seen_docs: BTreeSet<String> = BTreeSet::new();
    if let Some([d_id, d_claim, d_text]) =
        docs.require(["Document ID", "Claim ID", "Full Text"], &mut data.bad_rows)
    {
        let (d_title, d_label, d_link) = (
            docs.column("Title"),
            docs.column("Document Label"),
            docs.column("Link"),
        );
        let f = &docs.file;
        for (line, row) in &docs.rows {
            let id = id_text(cell(row, Some(d_id)));
            let claim = id_text(cell(row, Some(d_claim)));
            if id.is_empty() || claim.is_empty() {
                let which = if id.is_empty() {
                    "Document ID"
                } else {
                    "Claim ID"
                };
                data.bad_rows.push(bad(
                    f,
                    line.clone(),
                    "missing_field",
                    format!("`{which}` is empty"),
                ));
                continue;
            }
            if !seen_docs.insert(id.to_string()) {
                data.bad_rows.push(bad(
                    f,
                    line.clone(),
                    "duplicate_id",
                    format!("document {id} appears again"),
                ));
                continue;
            }
            if !claims.ids.contains(claim) {
                data.bad_rows.push(bad(
                    f,
                    line.clone(),
                    "unknown_claim",
                    format!("document {id}: claim {claim} is not among the loaded claims"),
                ));
                continue;
            }
            let raw_label = cell(row, d_label);
            let label = if raw_label.is_empty() {
                claims.listed_labels.get(id).copied()
            } else {
                match DocLabel::parse(raw_label) {
                    Some(l) => Some(l),
                    None => {
                        data.bad_rows.push(bad(
                            f,
                            line.clone(),
                            "unknown_label",
                            format!("document {id}: `Document Label` is {raw_label:?}"),
                        ));
                        continue;
                    }
                }
            };
            let title = cell(row, d_title);
            let body = match cell(row, Some(d_text)) {
                b if is_placeholder(b) => "",
                b => b,
            };
            if title.is_empty() && body.is_empty() {
                data.bad_rows.push(bad(
                    f,
                    line.clone(),
                    "empty_document",
                    format!("document {id}: empty `Title` and `Full Text`"),
                ));
                continue;
            }
            let link = cell(row, d_link);
            data.documents.push(EvalDocument {
                id: id.to_string(),
                claim_id: Some(claim.to_string()),
                title: title.to_string(),
                text: if body.is_empty() { title } else { body }.to_string(),
                label,
                url: (!link.is_empty()).then(|| link.to_string()),
                domain: domain_of(link),
                credibility: Credibility::default(),
            });
        }
    }
    seen_docs
}

/// Each claim with its documents (those its `Document IDs` list, or else those naming it) into
/// `data`; a listed document not in `documents.csv` is a bad row.
fn attach_documents(
    data: &mut EvalData,
    claim_rows: ClaimRows,
    seen_docs: &BTreeSet<String>,
    claims: &Table,
    docs: &Table,
    documents_csv: Option<&Path>,
) {
    let kept: BTreeSet<&str> = data.documents.iter().map(|d| d.id.as_str()).collect();
    let mut by_claim: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for d in &data.documents {
        if let Some(c) = &d.claim_id {
            by_claim.entry(c.as_str()).or_default().push(d.id.clone());
        }
    }
    for row in claim_rows.rows {
        let mut claim = row.claim;
        claim.documents = match row.listed {
            Some(ids) if documents_csv.is_some() => {
                let mut found = Vec::new();
                for id in ids {
                    if kept.contains(id.as_str()) {
                        found.push(id);
                    } else if !seen_docs.contains(&id) {
                        data.bad_rows.push(bad(
                            &claims.file,
                            row.line.clone(),
                            "missing_document",
                            format!("claim {}: document {id} is not in {}", claim.id, docs.file),
                        ));
                    }
                }
                found
            }
            _ => by_claim.get(claim.id.as_str()).cloned().unwrap_or_default(),
        };
        data.claims.push(claim);
    }
}

/// The notes: what was loaded from which file, and columns not read.
fn notes(data: &mut EvalData, claims: &Table, docs: &Table, documents_csv: Option<&Path>) {
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
        "claims: {}: {} claims",
        claims.file,
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
                "documents: {}: {} documents ({linked} with no body, kept with their title as text)",
                docs.file,
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
