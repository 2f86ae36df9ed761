//! A retriever's run: the rankings a user's own retriever wrote, read from a TREC run file
//! (`qid Q0 docid rank score tag` a line, whitespace-separated) or a Parquet file with columns
//! `query_id`, `doc_id`, `rank` and `score`, and one query's rows put in order
//! ([`rank_rows`]). Both the `run` search backend (claims track) and the `retrieval` stage
//! (report track) read runs through this module, so they order and drop rows alike.
//!
//! A query's rows are ordered by rank; rows sharing a rank by score (higher first), then doc id,
//! each tie noted (`tied_rank`, kept). A doc id the caller does not know (`unknown_doc_id`) and a
//! doc listed twice for a query (`duplicate_doc`) are left out with their reason. A malformed line
//! is a [`RunError::Row`] naming the file and line: [`read_run`] stops at the first,
//! [`read_run_lenient`] keeps the good rows and returns every bad line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Why a run (or a Parquet table) could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A line of a text file, or a Parquet row counted from 1, that is not a whole row.
    #[error("{path}, line {line}: {message}")]
    Row {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
}

/// One row of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub query_id: String,
    pub doc_id: String,
    pub rank: i64,
    pub score: f64,
    /// The row's line in the file (a Parquet row, from 1).
    pub line: u64,
}

/// A row [`rank_rows`] left out (`kept: false`) or kept while noting it (`kept: true`: a tie).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunNote {
    /// The row's doc id.
    pub doc_id: String,
    /// `unknown_doc_id`, `duplicate_doc` or `tied_rank`.
    pub code: &'static str,
    pub detail: String,
    pub kept: bool,
}

fn row_err(path: &Path, line: u64, message: String) -> RunError {
    RunError::Row {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// Every row of a run file, in file order; the first malformed line is an error.
pub fn read_run(path: &Path) -> Result<Vec<RunRow>, RunError> {
    let (rows, mut bad) = read_run_lenient(path)?;
    match bad.is_empty() {
        true => Ok(rows),
        false => Err(bad.remove(0)),
    }
}

/// Every well-formed row of a run file, in file order, and every malformed line as a
/// [`RunError::Row`]; an unreadable file is an error.
pub fn read_run_lenient(path: &Path) -> Result<(Vec<RunRow>, Vec<RunError>), RunError> {
    let parquet = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
    let mut rows = Vec::new();
    let mut bad = Vec::new();
    if parquet {
        for (line, fields) in parquet_rows(path)? {
            match parquet_row(path, line, &fields) {
                Ok(r) => rows.push(r),
                Err(e) => bad.push(e),
            }
        }
        return Ok((rows, bad));
    }
    let text = std::fs::read_to_string(path).map_err(|source| RunError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    for (i, line) in text.lines().enumerate() {
        match trec_line(path, i as u64 + 1, line) {
            Ok(Some(r)) => rows.push(r),
            Ok(None) => {}
            Err(e) => bad.push(e),
        }
    }
    Ok((rows, bad))
}

/// One TREC line; `None` for a blank one.
fn trec_line(path: &Path, line_no: u64, line: &str) -> Result<Option<RunRow>, RunError> {
    let parts: Vec<&str> = line.split_whitespace().collect();
    if parts.is_empty() {
        return Ok(None);
    }
    let [qid, _q0, doc, rank, score, _tag] = parts[..] else {
        return Err(row_err(
            path,
            line_no,
            format!(
                "{} fields where a TREC run line has 6 (qid Q0 docid rank score tag)",
                parts.len()
            ),
        ));
    };
    Ok(Some(RunRow {
        query_id: qid.to_string(),
        doc_id: doc.to_string(),
        rank: parse_rank(path, line_no, rank)?,
        score: parse_score(path, line_no, score)?,
        line: line_no,
    }))
}

fn parse_rank(path: &Path, line: u64, v: &str) -> Result<i64, RunError> {
    v.trim()
        .parse::<i64>()
        .map_err(|_| row_err(path, line, format!("rank `{v}` is not an integer")))
}

fn parse_score(path: &Path, line: u64, v: &str) -> Result<f64, RunError> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite())
        .ok_or_else(|| row_err(path, line, format!("score `{v}` is not a number")))
}

/// A table row: column name -> value as text.
pub type Fields = BTreeMap<String, String>;

fn parquet_row(path: &Path, line: u64, fields: &Fields) -> Result<RunRow, RunError> {
    let get = |name: &str| {
        fields
            .get(name)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| row_err(path, line, format!("no `{name}`")))
    };
    Ok(RunRow {
        query_id: get("query_id")?.to_string(),
        doc_id: get("doc_id")?.to_string(),
        rank: parse_rank(path, line, get("rank")?)?,
        score: parse_score(path, line, get("score")?)?,
        line,
    })
}

/// Parquet, row by row (the `parquet` crate's record reader: no Arrow, no polars), each row
/// numbered from 1 as its "line". Strings as they are, binary as UTF-8, dates as `YYYY-MM-DD`,
/// other values as the reader writes them; nulls are missing.
pub fn parquet_rows(path: &Path) -> Result<Vec<(u64, Fields)>, RunError> {
    use parquet::file::reader::SerializedFileReader;
    use parquet::record::Field;
    let file = std::fs::File::open(path).map_err(|source| RunError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = SerializedFileReader::new(file).map_err(|e| RunError::File {
        path: path.to_path_buf(),
        message: format!("not a Parquet file: {e}"),
    })?;
    let mut rows = Vec::new();
    for (i, row) in reader.into_iter().enumerate() {
        let line = i as u64 + 1;
        let row = row.map_err(|e| row_err(path, line, format!("unreadable row: {e}")))?;
        let fields = row
            .into_columns()
            .into_iter()
            .filter_map(|(name, value)| {
                let text = match value {
                    Field::Null => return None,
                    Field::Str(s) => s,
                    Field::Bytes(b) => String::from_utf8_lossy(b.data()).into_owned(),
                    other => other.to_string(),
                };
                Some((name, text))
            })
            .collect();
        rows.push((line, fields));
    }
    Ok(rows)
}

/// A run's rows grouped by query id, each query's rows in order: by rank, then score (higher
/// first), then doc id.
pub fn by_query(rows: Vec<RunRow>) -> BTreeMap<String, Vec<RunRow>> {
    let mut out: BTreeMap<String, Vec<RunRow>> = BTreeMap::new();
    for row in rows {
        out.entry(row.query_id.clone()).or_default().push(row);
    }
    for rows in out.values_mut() {
        rows.sort_by(|a, b| {
            a.rank
                .cmp(&b.rank)
                .then(b.score.total_cmp(&a.score))
                .then(a.doc_id.cmp(&b.doc_id))
        });
    }
    out
}

/// One query's rows (in [`by_query`]'s order) as its ranking: rows whose doc `known` refuses and
/// repeated docs left out, ties kept and noted; at most `top_k` rows.
pub fn rank_rows(
    rows: &[RunRow],
    known: impl Fn(&str) -> bool,
    top_k: usize,
) -> (Vec<&RunRow>, Vec<RunNote>) {
    let mut kept: Vec<&RunRow> = Vec::new();
    let mut notes = Vec::new();
    let mut seen = BTreeSet::new();
    for row in rows {
        if kept.len() == top_k {
            break;
        }
        let note = |code, detail: String, kept| RunNote {
            doc_id: row.doc_id.clone(),
            code,
            detail,
            kept,
        };
        if !known(&row.doc_id) {
            notes.push(note(
                "unknown_doc_id",
                format!("line {}: no document `{}`", row.line, row.doc_id),
                false,
            ));
            continue;
        }
        if !seen.insert(row.doc_id.as_str()) {
            notes.push(note(
                "duplicate_doc",
                format!("line {}: `{}` listed again", row.line, row.doc_id),
                false,
            ));
            continue;
        }
        if let Some(prev) = kept.last()
            && prev.rank == row.rank
        {
            notes.push(note(
                "tied_rank",
                format!(
                    "line {}: rank {} also given to `{}`; ordered by score, then doc id",
                    row.line, row.rank, prev.doc_id
                ),
                true,
            ));
        }
        kept.push(row);
    }
    (kept, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// On any rows: at most k kept, each doc once and known, in `by_query`'s order; every
        /// row before the cut is kept or noted as left out, and every tie among the kept noted.
        #[test]
        fn ranking_keeps_or_notes_every_row(
            raw in proptest::collection::vec((0u8..6, 1i64..5, 0u8..4), 0..20),
            k in 1usize..6,
        ) {
            let rows: Vec<RunRow> = raw
                .iter()
                .enumerate()
                .map(|(i, (d, rank, s))| row("q", &format!("d{d}"), *rank, f64::from(*s), i as u64 + 1))
                .collect();
            let grouped = by_query(rows);
            let ordered = grouped.get("q").cloned().unwrap_or_default();
            let known = |d: &str| d != "d5";
            let (kept, notes) = rank_rows(&ordered, known, k);
            prop_assert!(kept.len() <= k);
            let docs: BTreeSet<&str> = kept.iter().map(|r| r.doc_id.as_str()).collect();
            prop_assert_eq!(docs.len(), kept.len());
            prop_assert!(kept.iter().all(|r| known(&r.doc_id)));
            let position = |r: &RunRow| ordered.iter().position(|o| std::ptr::eq(o, r));
            let at: Vec<usize> = kept.iter().filter_map(|r| position(r)).collect();
            prop_assert!(at.windows(2).all(|w| w[0] < w[1]));
            let seen = at.last().map_or(ordered.len(), |&last| {
                if kept.len() == k { last + 1 } else { ordered.len() }
            });
            let left_out = notes.iter().filter(|n| !n.kept).count();
            prop_assert_eq!(kept.len() + left_out, seen);
            let ties = kept.windows(2).filter(|w| w[0].rank == w[1].rank).count();
            prop_assert_eq!(notes.iter().filter(|n| n.kept).count(), ties);
        }
    }

    fn row(q: &str, d: &str, rank: i64, score: f64, line: u64) -> RunRow {
        RunRow {
            query_id: q.into(),
            doc_id: d.into(),
            rank,
            score,
            line,
        }
    }

    #[test]
    fn lenient_reading_keeps_good_rows_and_names_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.trec");
        std::fs::write(
            &path,
            "q1 Q0 a 1 2.0 t\n\nq1 Q0 b x 1.0 t\nq1 Q0 c 2\nq2 Q0 d 1 NaN t\nq2 Q0 e 1 1 t\n",
        )
        .unwrap();
        let (rows, bad) = read_run_lenient(&path).unwrap();
        let docs: Vec<&str> = rows.iter().map(|r| r.doc_id.as_str()).collect();
        assert_eq!(docs, ["a", "e"]);
        assert_eq!(rows[1].line, 6);
        let lines: Vec<String> = bad.iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 3);
        assert!(
            lines[0].ends_with("line 3: rank `x` is not an integer"),
            "{lines:?}"
        );
        assert!(lines[1].contains("line 4: 4 fields"), "{lines:?}");
        assert!(lines[2].contains("line 5: score `NaN`"), "{lines:?}");
        let strict = read_run(&path).unwrap_err().to_string();
        assert!(strict.contains("run.trec, line 3"), "{strict}");
    }

    #[test]
    fn rows_in_order_with_ties_unknowns_and_repeats_noted() {
        let grouped = by_query(vec![
            row("q", "b", 2, 1.0, 1),
            row("q", "a", 2, 1.0, 2),
            row("q", "z", 1, 5.0, 3),
            row("q", "c", 2, 3.0, 4),
            row("q", "a", 3, 0.5, 5),
            row("q", "d", 4, 0.1, 6),
        ]);
        let rows = &grouped["q"];
        let order: Vec<&str> = rows.iter().map(|r| r.doc_id.as_str()).collect();
        assert_eq!(order, ["z", "c", "a", "b", "a", "d"]);
        let (kept, notes) = rank_rows(rows, |d| d != "z", 4);
        let kept: Vec<&str> = kept.iter().map(|r| r.doc_id.as_str()).collect();
        assert_eq!(kept, ["c", "a", "b", "d"]);
        let codes: Vec<(&str, &str, bool)> = notes
            .iter()
            .map(|n| (n.code, n.doc_id.as_str(), n.kept))
            .collect();
        assert_eq!(
            codes,
            [
                ("unknown_doc_id", "z", false),
                ("tied_rank", "a", true),
                ("tied_rank", "b", true),
                ("duplicate_doc", "a", false),
            ]
        );
        assert_eq!(rank_rows(rows, |_| true, 2).0.len(), 2);
    }
}
