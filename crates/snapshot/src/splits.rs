//! Per-split copies of the tables whose rows belong to a question (`questions`, and the query and
//! document perturbations made for a question), cut by the `question_splits` table.
//!
//! Hugging Face `datasets` picks a split's rows by file (`data_files`), not by a column, so a
//! `test`/`train` split a user can load needs one Parquet file per split. The full table stays in
//! `data/<table>.parquet` (the one other readers and the diff use); the copies go to
//! `data/<table>/<split>.parquet`. Other tables are not train/test data (claims, documents,
//! search hits are shared by every question) and keep a single file.

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_core::TableKind;
use noisebench_pipeline::table_io;

use crate::manifest::SplitEntry;

/// The split of rows whose question has no row in `question_splits` (kept, never dropped).
pub(crate) const UNASSIGNED: &str = "unassigned";

/// The column holding the question id, for the table kinds whose rows follow a question's split.
pub(crate) fn question_column(kind: TableKind) -> Option<&'static str> {
    match kind {
        TableKind::Questions => Some("id"),
        TableKind::QueryPerturbations | TableKind::DocumentPerturbations => Some("question_id"),
        _ => None,
    }
}

/// `question_id -> split` from a `question_splits` table.
pub(crate) fn read_assignment(path: &Path) -> Result<BTreeMap<String, String>, String> {
    let rows = table_io::read_table(path, TableKind::QuestionSplits).map_err(|e| e.to_string())?;
    Ok(rows
        .json_rows()
        .filter_map(|r| {
            Some((
                r.get("question_id")?.as_str()?.to_string(),
                r.get("split")?.as_str()?.to_string(),
            ))
        })
        .collect())
}

/// A split's file of table `name`, relative to the version's folder.
fn split_file(name: &str, split: &str) -> String {
    format!("data/{name}/{split}.parquet")
}

/// Write `data/<name>/<split>.parquet` under `dir` for each split the table's rows fall in;
/// `None` when the table's kind has no question column.
pub(crate) fn write_split_files(
    dir: &Path,
    name: &str,
    kind: TableKind,
    source: &Path,
    assignment: &BTreeMap<String, String>,
) -> Result<Option<BTreeMap<String, SplitEntry>>, String> {
    let Some(column) = question_column(kind) else {
        return Ok(None);
    };
    let folder = dir.join("data").join(name);
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    // A row group at a time: no table is held whole, and no row passes through JSON.
    let written = table_io::split_table(
        source,
        kind,
        column,
        |question| {
            question
                .and_then(|q| assignment.get(q))
                .map_or(UNASSIGNED, String::as_str)
                .to_string()
        },
        |split| dir.join(split_file(name, split)),
    )
    .map_err(|e| e.to_string())?;
    let entries = written
        .into_iter()
        .map(|(split, written)| {
            let entry = SplitEntry {
                file: split_file(name, &split),
                sha256: written.sha256,
                rows: written.rows,
                bytes: written.bytes,
            };
            (split, entry)
        })
        .collect();
    Ok(Some(entries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use noisebench_core::Rows;

    #[test]
    fn each_question_column_is_a_string_column_of_its_table() {
        let mut kinds = 0;
        for kind in TableKind::ALL {
            let Some(column) = question_column(*kind) else {
                continue;
            };
            kinds += 1;
            let schema = kind.schema();
            let found = schema.columns.iter().find(|c| c.name == column);
            assert!(
                found.is_some_and(|c| c.dtype == noisebench_core::DType::Str),
                "{kind:?}: `{column}`"
            );
        }
        assert_eq!(kinds, 3);
    }

    #[test]
    fn questions_split_by_assignment_and_unknown_questions_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut questions = Rows::one_default(TableKind::Questions);
        let values: Vec<serde_json::Value> = ["q1", "q2", "q3"]
            .iter()
            .map(|id| {
                let mut row = questions.json_rows().next().unwrap();
                row["id"] = serde_json::json!(id);
                row
            })
            .collect();
        questions = Rows::from_json_rows(TableKind::Questions, values).unwrap();
        let source = dir.path().join("questions.parquet");
        table_io::write_table(&source, &questions).unwrap();
        let assignment: BTreeMap<String, String> = [("q1", "test"), ("q2", "train")]
            .iter()
            .map(|(q, s)| (q.to_string(), s.to_string()))
            .collect();
        let entries = write_split_files(
            dir.path(),
            "questions",
            TableKind::Questions,
            &source,
            &assignment,
        )
        .unwrap()
        .unwrap();
        let rows: Vec<(&str, &str, u64)> = entries
            .iter()
            .map(|(s, e)| (s.as_str(), e.file.as_str(), e.rows))
            .collect();
        assert_eq!(
            rows,
            [
                ("test", "data/questions/test.parquet", 1),
                ("train", "data/questions/train.parquet", 1),
                ("unassigned", "data/questions/unassigned.parquet", 1),
            ]
        );
        let test = table_io::read_table(
            &dir.path().join("data/questions/test.parquet"),
            TableKind::Questions,
        )
        .unwrap();
        assert_eq!(test.json_rows().next().unwrap()["id"], "q1");
        assert!(
            write_split_files(
                dir.path(),
                "claims",
                TableKind::Claims,
                &source,
                &assignment
            )
            .unwrap()
            .is_none()
        );
    }
}
