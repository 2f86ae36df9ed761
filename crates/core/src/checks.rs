//! What must hold of a table's rows, declared beside the tables' contracts, and what a run or a
//! snapshot found.
//!
//! A [`Check`] belongs to one table kind (the table whose rows it judges; its offenders are ids
//! of that table, or of the table it names) and may read others ([`Check::needs`]). The runner
//! runs a table's checks after the stage that writes it, over that stage's tables and the
//! nearest upstream table of each other kind, and again before publishing over the published
//! tables; a check whose tables are not in scope is skipped, not failed. The declarations here
//! ([`declared`]) read nothing but ids and the columns they judge ([`Tables::column`], a
//! [`StrColumn`]; each is [`Check::columns_only`]), so a reader of Parquet files decodes no
//! table's rows for them, and the same checks over rows in memory take those columns from the
//! rows; rules that need text matching read rows ([`typed`], [`Check::new`]) and live in the
//! crate of their concern (the `qa` crate's grounding rules), reaching the runner through its
//! registry.
//!
//! Beside checks, [`CheckResult`] also records the runner's gates on what a stage lost (see
//! `noisebench-pipeline`), so the card and the manifest list both in one shape.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{ClaimDocument, ClaimDocumentLabel, Question};
use crate::rows::{Rows, TableKind, TableRow};
use crate::{
    Chunk, DocumentPerturbation, Query, QueryPerturbation, QuestionSplit, Retrieval, SearchHit,
    Triplet,
};

/// How many offending ids a result keeps and a message names.
pub(crate) const SHOWN_IDS: usize = 5;

/// The pattern kinds a question may have (the `patterns` stage's vocabulary).
pub(crate) const QUESTION_KINDS: &[&str] = &[
    "single_hop",
    "chained_multi_hop",
    "star_shaped",
    "inverted_star_shaped",
];

/// The splits a question may be assigned to.
pub(crate) const SPLITS: &[&str] = &["train", "test"];

/// The tables a check may read: the table it judges and the ones it needs.
pub trait Tables {
    /// The rows of the `kind` table in scope, `None` when none is.
    fn rows(&self, kind: TableKind) -> Result<Option<&Rows>, String>;

    /// The ids of the `kind` table in scope (by default from its rows; a reader may take only
    /// the id column).
    fn ids(&self, kind: TableKind) -> Result<Option<Arc<HashSet<String>>>, String> {
        Ok(self
            .rows(kind)?
            .map(|rows| Arc::new(rows.ids().into_iter().collect())))
    }

    /// The string or string-list column `column` of the `kind` table in scope, `None` when none
    /// is. By default `of_rows` takes it from the table's rows; a reader of files may read that
    /// column alone, decoding no other.
    fn column(
        &self,
        kind: TableKind,
        _column: &str,
        of_rows: &dyn Fn(&Rows) -> Result<StrColumn, String>,
    ) -> Result<Option<Arc<StrColumn>>, String> {
        self.rows(kind)?
            .map(|rows| of_rows(rows).map(Arc::new))
            .transpose()
    }

    /// Whether a `kind` table is in scope, without reading it.
    fn has(&self, kind: TableKind) -> bool;
}

/// A string or string-list column of a table: a list of values per row (a string column's row
/// holds one value), every value's text in one buffer. What the checks that judge one or two
/// columns read instead of a table's rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StrColumn {
    text: String,
    /// Each value's end in `text`.
    ends: Vec<usize>,
    /// Each row's end in `ends`.
    rows: Vec<usize>,
}

impl StrColumn {
    /// Append a row holding `values`.
    pub fn push_row<'v>(&mut self, values: impl IntoIterator<Item = &'v str>) {
        for value in values {
            self.text.push_str(value);
            self.ends.push(self.text.len());
        }
        self.rows.push(self.ends.len());
    }

    /// Append a row holding the one value `value` (a string column's row).
    pub fn push(&mut self, value: &str) {
        self.push_row([value]);
    }

    /// The column of `rows`, each row's values given by `values`.
    pub fn of_rows<'r, T: 'r, V: IntoIterator<Item = &'r str>>(
        rows: &'r [T],
        values: impl Fn(&'r T) -> V,
    ) -> StrColumn {
        let mut column = StrColumn::default();
        column.rows.reserve(rows.len());
        for row in rows {
            column.push_row(values(row));
        }
        column
    }

    /// Its rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The values of row `row`.
    pub fn values(&self, row: usize) -> impl Iterator<Item = &str> + '_ {
        let first = if row == 0 { 0 } else { self.rows[row - 1] };
        (first..self.rows[row]).map(|v| {
            let start = if v == 0 { 0 } else { self.ends[v - 1] };
            &self.text[start..self.ends[v]]
        })
    }

    /// The first value of row `row` (a string column's value), `""` for a row of none.
    pub fn value(&self, row: usize) -> &str {
        self.values(row).next().unwrap_or_default()
    }
}

impl<'v> FromIterator<&'v str> for StrColumn {
    /// A string column, a value per row.
    fn from_iter<I: IntoIterator<Item = &'v str>>(values: I) -> StrColumn {
        let mut column = StrColumn::default();
        for value in values {
            column.push(value);
        }
        column
    }
}

/// Tables held in memory, one per kind.
#[derive(Default)]
pub struct InMemory(pub BTreeMap<TableKind, Rows>);

impl Tables for InMemory {
    fn rows(&self, kind: TableKind) -> Result<Option<&Rows>, String> {
        Ok(self.0.get(&kind))
    }
    fn has(&self, kind: TableKind) -> bool {
        self.0.contains_key(&kind)
    }
}

/// What a check's rule returns: how many items it looked at and the ids of those that break it.
pub type Found = (usize, Vec<String>);

type Rule = dyn Fn(&dyn Tables) -> Result<Found, String> + Send + Sync;

/// One declared check.
#[derive(Clone)]
pub struct Check {
    /// `not_null(id)`, `references(answer_chunk_ids -> chunks)`, `answer_grounded`...
    pub name: String,
    /// The table whose rows the check judges: it runs after the stage that writes this table.
    pub table: TableKind,
    /// The other tables it reads; when one is not in scope, the check is skipped.
    pub needs: Vec<TableKind>,
    /// Whether it reads whole rows (of its table and those it needs), not only columns and ids.
    rows: bool,
    rule: Arc<Rule>,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Check({} on {})", self.name, self.table)
    }
}

impl Check {
    /// A check named `name` on `table`, reading `needs` too, by `rule`, which may read their
    /// rows.
    pub fn new(
        name: impl Into<String>,
        table: TableKind,
        needs: Vec<TableKind>,
        rule: impl Fn(&dyn Tables) -> Result<Found, String> + Send + Sync + 'static,
    ) -> Check {
        Check {
            name: name.into(),
            table,
            needs,
            rows: true,
            rule: Arc::new(rule),
        }
    }

    /// The check, saying its rule reads only columns and ids ([`Tables::column`],
    /// [`Tables::ids`]), never rows: a reader of files then decodes no table's rows for it.
    pub fn columns_only(self) -> Check {
        Check {
            rows: false,
            ..self
        }
    }

    /// Whether the check reads the rows of its table and of those it needs (else only their
    /// columns and ids): a reader that knows it reads those tables' rows once and takes their
    /// columns from them.
    pub fn reads_rows(&self) -> bool {
        self.rows
    }

    /// Run the check over `tables`, naming the judged table `table_name` in the result.
    pub fn run(&self, table_name: &str, tables: &dyn Tables) -> CheckResult {
        let missing = std::iter::once(self.table)
            .chain(self.needs.iter().copied())
            .find(|k| !tables.has(*k));
        let mut result = CheckResult {
            kind: CheckKind::Check,
            table: table_name.to_string(),
            check: self.name.clone(),
            status: CheckStatus::Passed,
            checked: 0,
            failed: 0,
            ids: Vec::new(),
            detail: String::new(),
        };
        if let Some(kind) = missing {
            result.status = CheckStatus::Skipped;
            result.detail = format!("no `{kind}` table");
            return result;
        }
        match (self.rule)(tables) {
            Ok((checked, failed)) => {
                let failed: BTreeSet<String> = failed.into_iter().collect();
                result.checked = checked as u64;
                result.failed = failed.len() as u64;
                if !failed.is_empty() {
                    result.status = CheckStatus::Failed;
                }
                result.ids = failed.into_iter().take(SHOWN_IDS).collect();
            }
            Err(e) => {
                result.status = CheckStatus::Failed;
                result.detail = format!("could not run: {e}");
            }
        }
        result
    }
}

/// The typed rows of `T`'s table in scope.
pub fn typed<T: TableRow>(tables: &dyn Tables) -> Result<&[T], String> {
    match tables.rows(T::KIND)? {
        Some(rows) => {
            T::slice(rows).ok_or_else(|| format!("the `{}` table holds other rows", T::KIND))
        }
        None => Err(format!("no `{}` table", T::KIND)),
    }
}

/// The column `column` of `T`'s table in scope: read alone where the reader can, else from the
/// rows, each row's values given by `values`.
pub fn column_of<T: TableRow>(
    tables: &dyn Tables,
    column: &str,
    values: impl Fn(&T) -> Vec<&str>,
) -> Result<Arc<StrColumn>, String> {
    let of_rows = |rows: &Rows| {
        T::slice(rows)
            .map(|rows| StrColumn::of_rows(rows, &values))
            .ok_or_else(|| format!("the `{}` table holds other rows", T::KIND))
    };
    tables
        .column(T::KIND, column, &of_rows)?
        .ok_or_else(|| format!("no `{}` table", T::KIND))
}

/// The ids of the `kind` table in scope, in row order (its `id` column, read alone where the
/// reader can).
pub fn id_column(tables: &dyn Tables, kind: TableKind) -> Result<Arc<StrColumn>, String> {
    let of_rows = |rows: &Rows| Ok(rows.ids().iter().map(String::as_str).collect());
    tables
        .column(kind, "id", &of_rows)?
        .ok_or_else(|| format!("no `{kind}` table"))
}

/// The rows of `kind`'s table that `columns` (its columns) all have.
fn rows_of(kind: TableKind, columns: &[&StrColumn]) -> Result<usize, String> {
    let rows = columns.first().map_or(0, |c| c.len());
    match columns.iter().find(|c| c.len() != rows) {
        Some(other) => Err(format!(
            "the `{kind}` table's columns differ in rows: {rows} and {}",
            other.len()
        )),
        None => Ok(rows),
    }
}

/// The id column of `kind`'s table beside its column `values`, which has as many rows.
fn with_ids(
    tables: &dyn Tables,
    kind: TableKind,
    values: Arc<StrColumn>,
) -> Result<(Arc<StrColumn>, Arc<StrColumn>), String> {
    let ids = id_column(tables, kind)?;
    rows_of(kind, &[&ids, &values])?;
    Ok((ids, values))
}

/// `column` is never empty.
pub fn not_null<T: TableRow>(column: &'static str, value: fn(&T) -> &str) -> Check {
    Check::new(
        format!("not_null({column})"),
        T::KIND,
        vec![],
        move |tables| {
            let values = column_of::<T>(tables, column, |r| vec![value(r)])?;
            let (ids, values) = with_ids(tables, T::KIND, values)?;
            let failed = (0..values.len())
                .filter(|&i| values.value(i).trim().is_empty())
                .map(|i| row_name(ids.value(i), i))
                .collect();
            Ok((values.len(), failed))
        },
    )
    .columns_only()
}

/// Every value of `column` (a string or a list of strings; empty strings are not references)
/// is the id of a row of `target`. Offenders are the referring rows.
pub fn references<T: TableRow>(
    column: &'static str,
    target: TableKind,
    values: fn(&T) -> Vec<&str>,
) -> Check {
    Check::new(
        format!("references({column} -> {target})"),
        T::KIND,
        vec![target],
        move |tables| {
            let targets = tables
                .ids(target)?
                .ok_or_else(|| format!("no `{target}` table"))?;
            let (ids, values) = with_ids(tables, T::KIND, column_of::<T>(tables, column, values)?)?;
            let failed = (0..values.len())
                .filter(|&i| {
                    values
                        .values(i)
                        .any(|v| !v.is_empty() && !targets.contains(v))
                })
                .map(|i| ids.value(i).to_string())
                .collect();
            Ok((values.len(), failed))
        },
    )
    .columns_only()
}

/// `column` holds one of `accepted`.
pub(crate) fn accepted_values<T: TableRow>(
    column: &'static str,
    accepted: &'static [&'static str],
    value: fn(&T) -> &str,
) -> Check {
    Check::new(
        format!("accepted_values({column})"),
        T::KIND,
        vec![],
        move |tables| {
            let values = column_of::<T>(tables, column, |r| vec![value(r)])?;
            let (ids, values) = with_ids(tables, T::KIND, values)?;
            let failed = (0..values.len())
                .filter(|&i| !accepted.contains(&values.value(i)))
                .map(|i| ids.value(i).to_string())
                .collect();
            Ok((values.len(), failed))
        },
    )
    .columns_only()
}

/// The ids of a table are unique (the runner refuses a stage that repeats one; this says so
/// again of a published table).
pub fn unique_ids(kind: TableKind) -> Check {
    Check::new("unique(id)", kind, vec![], move |tables| {
        let ids = id_column(tables, kind)?;
        let twice = crate::rows::repeated((0..ids.len()).map(|i| ids.value(i)));
        Ok((ids.len(), twice.into_iter().map(str::to_string).collect()))
    })
    .columns_only()
}

fn row_name(id: &str, index: usize) -> String {
    if id.is_empty() {
        format!("row {index}")
    } else {
        id.to_string()
    }
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The checks core declares on `kind`'s rows: unique, non-empty ids on every table, references
/// between tables, accepted values of vocabularies, and the dataset rules that need nothing but
/// rows. The grounding rules (answers in their chunks, single-hop leaks, repeated question
/// texts) are the `qa` crate's (`noisebench_qa::table_checks`).
pub fn declared(kind: TableKind) -> Vec<Check> {
    use TableKind as K;
    let mut checks = vec![unique_ids(kind), non_empty_ids(kind)];
    match kind {
        K::Queries => checks.push(references::<Query>("claim_id", K::Claims, |r| {
            vec![&r.claim_id]
        })),
        K::SearchHits => checks.push(references::<SearchHit>("query_id", K::Queries, |r| {
            vec![&r.query_id]
        })),
        K::ClaimDocuments => {
            checks.push(references::<ClaimDocument>("claim_id", K::Claims, |r| {
                vec![&r.claim_id]
            }));
            checks.push(references::<ClaimDocument>(
                "document_id",
                K::Documents,
                |r| vec![&r.document_id],
            ));
        }
        K::Labels => {
            checks.push(references::<ClaimDocumentLabel>(
                "claim_id",
                K::Claims,
                |r| vec![&r.claim_id],
            ));
            checks.push(references::<ClaimDocumentLabel>(
                "document_id",
                K::Documents,
                |r| vec![&r.document_id],
            ));
            checks.push(labels_complete());
        }
        K::Chunks => checks.push(references::<Chunk>("report_id", K::Reports, |r| {
            vec![&r.report_id]
        })),
        K::Triplets => checks.push(references::<Triplet>("chunk_id", K::Chunks, |r| {
            vec![&r.chunk_id]
        })),
        K::Questions => {
            checks.push(accepted_values::<Question>("kind", QUESTION_KINDS, |r| {
                &r.kind
            }));
            checks.push(references::<Question>("answer_chunk_ids", K::Chunks, |r| {
                strs(&r.answer_chunk_ids)
            }));
            checks.push(references::<Question>("triplet_ids", K::Triplets, |r| {
                strs(&r.triplet_ids)
            }));
            checks.push(multi_hop_chunks());
        }
        K::RejectedQuestions => checks.push(rejected_not_kept()),
        K::QuestionSplits => {
            checks.push(accepted_values::<QuestionSplit>("split", SPLITS, |r| {
                &r.split
            }));
            checks.push(references::<QuestionSplit>(
                "question_id",
                K::Questions,
                |r| vec![&r.question_id],
            ));
        }
        K::QueryPerturbations => checks.push(references::<QueryPerturbation>(
            "question_id",
            K::Questions,
            |r| vec![&r.question_id],
        )),
        K::DocumentPerturbations => checks.push(references::<DocumentPerturbation>(
            "question_id",
            K::Questions,
            |r| vec![&r.question_id],
        )),
        K::Retrievals => checks.push(references::<Retrieval>("question_id", K::Questions, |r| {
            vec![&r.question_id]
        })),
        _ => {}
    }
    checks
}

fn non_empty_ids(kind: TableKind) -> Check {
    Check::new("not_null(id)", kind, vec![], move |tables| {
        let ids = id_column(tables, kind)?;
        let failed = (0..ids.len())
            .filter(|&i| ids.value(i).trim().is_empty())
            .map(|i| format!("row {i}"))
            .collect();
        Ok((ids.len(), failed))
    })
    .columns_only()
}

/// A multi-hop question (any kind but `single_hop`) has at least two distinct answer chunks.
pub fn multi_hop_chunks() -> Check {
    Check::new("multi_hop_chunks", TableKind::Questions, vec![], |tables| {
        let kinds = column_of::<Question>(tables, "kind", |q| vec![&q.kind])?;
        let (ids, kinds) = with_ids(tables, TableKind::Questions, kinds)?;
        let chunks =
            column_of::<Question>(tables, "answer_chunk_ids", |q| strs(&q.answer_chunk_ids))?;
        let rows = rows_of(TableKind::Questions, &[&ids, &chunks])?;
        let multi: Vec<usize> = (0..rows)
            .filter(|&i| kinds.value(i) != "single_hop")
            .collect();
        let failed = multi
            .iter()
            .filter(|&&i| chunks.values(i).collect::<BTreeSet<_>>().len() < 2)
            .map(|&i| ids.value(i).to_string())
            .collect();
        Ok((multi.len(), failed))
    })
    .columns_only()
}

/// Every claim-document pair has a `labels` row (same claim and document) whose `provenance`
/// is not empty. Offenders are `claim_documents` ids.
pub fn labels_complete() -> Check {
    Check::new(
        "labels_complete",
        TableKind::Labels,
        vec![TableKind::ClaimDocuments],
        |tables| {
            type L = ClaimDocumentLabel;
            let claims = column_of::<L>(tables, "claim_id", |l| vec![&l.claim_id])?;
            let documents = column_of::<L>(tables, "document_id", |l| vec![&l.document_id])?;
            let provenance = column_of::<L>(tables, "provenance", |l| vec![&l.provenance])?;
            let rows = rows_of(TableKind::Labels, &[&claims, &documents, &provenance])?;
            let labelled: BTreeSet<(&str, &str)> = (0..rows)
                .filter(|&i| !provenance.value(i).trim().is_empty())
                .map(|i| (claims.value(i), documents.value(i)))
                .collect();
            type D = ClaimDocument;
            let (ids, link_claims) = with_ids(
                tables,
                TableKind::ClaimDocuments,
                column_of::<D>(tables, "claim_id", |l| vec![&l.claim_id])?,
            )?;
            let link_documents = column_of::<D>(tables, "document_id", |l| vec![&l.document_id])?;
            let links = rows_of(TableKind::ClaimDocuments, &[&ids, &link_documents])?;
            let failed = (0..links)
                .filter(|&i| !labelled.contains(&(link_claims.value(i), link_documents.value(i))))
                .map(|i| ids.value(i).to_string())
                .collect();
            Ok((links, failed))
        },
    )
    .columns_only()
}

/// A rejected question is out of the benchmark: its id is not in `questions`.
pub fn rejected_not_kept() -> Check {
    Check::new(
        "rejected_not_kept",
        TableKind::RejectedQuestions,
        vec![TableKind::Questions],
        |tables| {
            let rejected = id_column(tables, TableKind::RejectedQuestions)?;
            let ids = tables
                .ids(TableKind::Questions)?
                .ok_or("no `questions` table")?;
            let failed = (0..rejected.len())
                .map(|i| rejected.value(i))
                .filter(|id| ids.contains(*id))
                .map(str::to_string)
                .collect();
            Ok((rejected.len(), failed))
        },
    )
    .columns_only()
}

/// A check's or a gate's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// A rule over a table's rows.
    Check,
    /// What a stage lost: its share of dropped items, an empty output from a non-empty input.
    Gate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    /// A table the check needs is not in scope.
    Skipped,
}

/// What one check or gate found: recorded in a stage's record, the card and `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    pub kind: CheckKind,
    /// The table judged (a gate: the stage's id).
    pub table: String,
    /// The check's name (`references(triplet_ids -> triplets)`, `max_drop_share`...).
    pub check: String,
    pub status: CheckStatus,
    /// Items looked at.
    pub checked: u64,
    /// Items that broke the rule.
    pub failed: u64,
    /// The first few offending ids (sorted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ids: Vec<String>,
    /// Why it was skipped, or what a gate measured and what to try.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl CheckResult {
    pub fn failed(&self) -> bool {
        self.status == CheckStatus::Failed
    }

    /// `table: check: ok (checked N)`, `table: check: FAILED (N of M rows): id, id (+K more)`,
    /// or `table: check: skipped (no `x` table)`; a gate's detail follows.
    pub fn render(&self) -> String {
        let what = match self.kind {
            CheckKind::Check => format!("table `{}`, check `{}`", self.table, self.check),
            CheckKind::Gate => format!("stage `{}`, gate `{}`", self.table, self.check),
        };
        let mut line = match self.status {
            CheckStatus::Skipped => format!("{what}: skipped"),
            CheckStatus::Passed => format!("{what}: ok (checked {})", self.checked),
            CheckStatus::Failed => {
                let mut l = format!(
                    "{what}: FAILED ({} of {} {})",
                    self.failed,
                    self.checked,
                    match self.kind {
                        CheckKind::Check => "rows",
                        CheckKind::Gate => "items",
                    }
                );
                if !self.ids.is_empty() {
                    l.push_str(": ");
                    l.push_str(&self.ids.join(", "));
                    let more = self.failed.saturating_sub(self.ids.len() as u64);
                    if more > 0 {
                        l.push_str(&format!(" (+{more} more)"));
                    }
                }
                l
            }
        };
        if !self.detail.is_empty() {
            line.push_str(&format!(" ({})", self.detail));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: &str, kind: &str, chunks: &[&str]) -> Question {
        Question {
            id: id.into(),
            kind: kind.into(),
            answer_chunk_ids: chunks.iter().map(|c| c.to_string()).collect(),
            ..Question::default()
        }
    }

    fn run_all(tables: &InMemory, kind: TableKind) -> Vec<CheckResult> {
        declared(kind)
            .iter()
            .map(|c| c.run(kind.name(), tables))
            .collect()
    }

    #[test]
    fn a_dangling_reference_and_an_unknown_kind_name_their_rows() {
        let mut t = InMemory::default();
        t.0.insert(
            TableKind::Questions,
            Rows::Questions(vec![
                q("q1", "single_hop", &["c1"]),
                q("q2", "chained_multi_hop", &["c1", "c9"]),
                q("q3", "loop", &["c1"]),
            ]),
        );
        t.0.insert(
            TableKind::Chunks,
            Rows::Chunks(vec![Chunk {
                id: "c1".into(),
                ..Chunk::default()
            }]),
        );
        let results = run_all(&t, TableKind::Questions);
        let by = |name: &str| results.iter().find(|r| r.check == name).unwrap();
        let refs = by("references(answer_chunk_ids -> chunks)");
        assert_eq!(
            (refs.status, refs.failed, &refs.ids[..]),
            (CheckStatus::Failed, 1, &["q2".to_string()][..])
        );
        assert_eq!(
            refs.render(),
            "table `questions`, check `references(answer_chunk_ids -> chunks)`: FAILED (1 of 3 rows): q2"
        );
        assert_eq!(by("accepted_values(kind)").ids, vec!["q3"]);
        // No triplets table in scope: skipped, not failed.
        let skipped = by("references(triplet_ids -> triplets)");
        assert_eq!(skipped.status, CheckStatus::Skipped);
        assert_eq!(by("multi_hop_chunks").ids, vec!["q3"]);
        assert_eq!(by("unique(id)").status, CheckStatus::Passed);
    }

    /// A column holds each row's values in order, a row of none as `""` for its value.
    #[test]
    fn a_column_holds_each_rows_values() {
        let mut lists = StrColumn::default();
        lists.push_row(["a", "bc"]);
        lists.push_row([]);
        lists.push("");
        lists.push_row(["d"]);
        let rows: Vec<Vec<&str>> = (0..lists.len())
            .map(|i| lists.values(i).collect())
            .collect();
        assert_eq!(rows, [vec!["a", "bc"], vec![], vec![""], vec!["d"]]);
        assert_eq!(
            (lists.value(0), lists.value(1), lists.value(3)),
            ("a", "", "d")
        );
        let strings: StrColumn = ["x", "", "yz"].into_iter().collect();
        assert_eq!(strings.len(), 3);
        assert_eq!(strings.value(2), "yz");
        let questions = [q("q1", "single_hop", &["c1", "c2"]), q("q2", "x", &[])];
        let of_rows = StrColumn::of_rows(&questions, |q| strs(&q.answer_chunk_ids));
        assert_eq!(of_rows.values(0).collect::<Vec<_>>(), ["c1", "c2"]);
        assert_eq!(of_rows.values(1).count(), 0);
    }

    #[test]
    fn duplicate_and_empty_ids_fail() {
        let mut t = InMemory::default();
        t.0.insert(
            TableKind::Chunks,
            Rows::Chunks(vec![
                Chunk {
                    id: "c1".into(),
                    ..Chunk::default()
                },
                Chunk {
                    id: "c1".into(),
                    ..Chunk::default()
                },
                Chunk::default(),
            ]),
        );
        let results = run_all(&t, TableKind::Chunks);
        let by = |name: &str| results.iter().find(|r| r.check == name).unwrap();
        assert_eq!(by("unique(id)").ids, vec!["c1"]);
        assert_eq!(by("not_null(id)").ids, vec!["row 2"]);
    }
}
