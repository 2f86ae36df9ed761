//! Running the table checks and the gates: after each stage over what it wrote and the nearest
//! upstream table of each other kind, and before publishing over the tables to publish.
//!
//! The checks are declared in core (`noisebench_core::checks`) and by the registry (rules that
//! need text matching); this module gives them the tables to read (a `Scope`: rows held in
//! memory or Parquet files, of which each table's rows, each column and each table's ids are
//! read at most once, when a check first asks, a column alone unless the table's rows are read)
//! and judges what a stage lost ([`gates`]). Before publishing, one scope serves every published
//! table ([`check_published`]): a table referenced by several is read once, its rows only where
//! a check reads rows, and let go after the last table whose checks read it.

use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use noisebench_core::checks::{StrColumn, Tables, declared};
use noisebench_core::{Check, CheckKind, CheckResult, CheckStatus, Rows, StageSummary, TableKind};

use crate::file::PipelineFile;
use crate::table_io;

/// The share of its items a stage may drop for good unless the pipeline file says otherwise.
pub(crate) const DEFAULT_MAX_DROP_SHARE: f64 = 0.5;

/// How many drop reasons a failed gate names.
const TOP_REASONS: usize = 3;

/// The tables a check may read: some in memory, the rest from files, each table's rows, each
/// column and its ids read at most once; a kind in neither is asked of the scope it stands over,
/// if any.
#[derive(Default)]
pub(crate) struct Scope<'a> {
    memory: BTreeMap<TableKind, &'a Rows>,
    files: BTreeMap<TableKind, PathBuf>,
    rows: BTreeMap<TableKind, OnceCell<Result<Rows, String>>>,
    ids: BTreeMap<TableKind, OnceCell<Result<Ids, String>>>,
    columns: RefCell<Columns>,
    /// Kinds whose rows some check reads: their columns are taken from the rows, read once,
    /// not read from the file besides.
    rows_first: BTreeSet<TableKind>,
    over: Option<&'a dyn Tables>,
}

/// A table's ids, shared by the checks that read them.
type Ids = Arc<HashSet<String>>;

/// The columns read of each kind, by name (or why one could not be).
type Columns = BTreeMap<(TableKind, String), Result<Arc<StrColumn>, String>>;

impl<'a> Scope<'a> {
    /// A scope over `over`: the kinds this one is not given are `over`'s.
    pub fn over(over: &'a dyn Tables) -> Scope<'a> {
        Scope {
            over: Some(over),
            ..Scope::default()
        }
    }

    /// Put `rows` in scope as its kind's table (the first given of a kind stays).
    pub fn hold(&mut self, rows: &'a Rows) {
        if !self.given(rows.kind()) {
            self.memory.insert(rows.kind(), rows);
        }
    }

    /// Put the Parquet file `path` in scope as `kind`'s table (the first given of a kind stays).
    pub fn file(&mut self, kind: TableKind, path: PathBuf) {
        if !self.given(kind) {
            self.files.insert(kind, path);
            self.rows.insert(kind, OnceCell::new());
            self.ids.insert(kind, OnceCell::new());
        }
    }

    /// Read the rows of `kind`'s file, when a column of it is first asked for, and take its
    /// columns from them.
    pub fn rows_first(&mut self, kind: TableKind) {
        self.rows_first.insert(kind);
    }

    /// Let go of the rows read of `kind`'s table, keeping the columns and ids taken from them;
    /// a column asked for after is read alone.
    pub fn forget_rows(&mut self, kind: TableKind) {
        if let Some(cell) = self.rows.get_mut(&kind) {
            cell.take();
        }
        self.rows_first.remove(&kind);
    }

    /// Let go of what was read of `kind`'s table (it is read again if asked for).
    pub fn forget(&mut self, kind: TableKind) {
        self.forget_rows(kind);
        if let Some(cell) = self.ids.get_mut(&kind) {
            cell.take();
        }
        self.columns.get_mut().retain(|(k, _), _| *k != kind);
    }

    /// Whether this scope was given a `kind` table (not the one it stands over).
    fn given(&self, kind: TableKind) -> bool {
        self.memory.contains_key(&kind) || self.files.contains_key(&kind)
    }

    /// The rows of `kind` already in memory or read, not reading them.
    fn rows_at_hand(&self, kind: TableKind) -> Option<&Rows> {
        match self.memory.get(&kind) {
            Some(rows) => Some(*rows),
            None => self.rows.get(&kind)?.get()?.as_ref().ok(),
        }
    }
}

impl Tables for Scope<'_> {
    fn rows(&self, kind: TableKind) -> Result<Option<&Rows>, String> {
        if let Some(rows) = self.memory.get(&kind) {
            return Ok(Some(*rows));
        }
        let (Some(path), Some(cell)) = (self.files.get(&kind), self.rows.get(&kind)) else {
            return self.over.map_or(Ok(None), |over| over.rows(kind));
        };
        cell.get_or_init(|| table_io::read_table(path, kind).map_err(|e| e.to_string()))
            .as_ref()
            .map(Some)
            .map_err(Clone::clone)
    }

    fn ids(&self, kind: TableKind) -> Result<Option<Ids>, String> {
        let Some(cell) = self.ids.get(&kind) else {
            if let Some(rows) = self.memory.get(&kind) {
                return Ok(Some(Arc::new(rows.ids().into_iter().collect())));
            }
            return self.over.map_or(Ok(None), |over| over.ids(kind));
        };
        cell.get_or_init(|| {
            // From the id column, which the checks of ids read too.
            let of_rows = |rows: &Rows| Ok(rows.ids().iter().map(String::as_str).collect());
            let ids = self.column(kind, "id", &of_rows)?.unwrap_or_default();
            Ok(Arc::new(
                (0..ids.len()).map(|i| ids.value(i).to_string()).collect(),
            ))
        })
        .clone()
        .map(Some)
    }

    fn column(
        &self,
        kind: TableKind,
        column: &str,
        of_rows: &dyn Fn(&Rows) -> Result<StrColumn, String>,
    ) -> Result<Option<Arc<StrColumn>>, String> {
        if !self.given(kind) {
            return self
                .over
                .map_or(Ok(None), |over| over.column(kind, column, of_rows));
        }
        let key = (kind, column.to_string());
        if let Some(read) = self.columns.borrow().get(&key) {
            return read.clone().map(Some);
        }
        let read = match (self.rows_at_hand(kind), self.files.get(&kind)) {
            (Some(rows), _) => of_rows(rows),
            (None, Some(_)) if self.rows_first.contains(&kind) => match self.rows(kind)? {
                Some(rows) => of_rows(rows),
                None => return Ok(None),
            },
            (None, Some(path)) => {
                table_io::read_str_column(path, kind, column).map_err(|e| e.to_string())
            }
            (None, None) => return Ok(None),
        }
        .map(Arc::new);
        self.columns.borrow_mut().insert(key, read.clone());
        read.map(Some)
    }

    fn has(&self, kind: TableKind) -> bool {
        self.given(kind) || self.over.is_some_and(|over| over.has(kind))
    }
}

/// Every check on `kind`'s tables: core's and the registry's `extra`.
pub(crate) fn checks_of(kind: TableKind, extra: &[Check]) -> Vec<Check> {
    let mut checks = declared(kind);
    checks.extend(extra.iter().filter(|c| c.table == kind).cloned());
    checks
}

/// Run every check on the table `name` (of `kind`, in `scope`).
pub(crate) fn run_checks(
    name: &str,
    kind: TableKind,
    extra: &[Check],
    scope: &dyn Tables,
) -> Vec<CheckResult> {
    checks_of(kind, extra)
        .iter()
        .map(|c| c.run(name, scope))
        .collect()
}

/// One table to check before publishing: its name in the snapshot, kind and file.
#[derive(Debug, Clone)]
pub struct PublishedTable {
    pub name: String,
    pub kind: TableKind,
    pub path: PathBuf,
}

/// Every check of every table to publish, over the tables to publish: a reference resolves to
/// the table of its kind published under the kind's name, else the first of that kind. A
/// check whose tables are not published is skipped.
///
/// One scope serves every table, so a table's rows, each column and its ids are read once
/// however many tables' checks read them; the rows of a kind only where some check reads rows
/// (its columns are then taken from them), and what was read of a kind is let go after the last
/// table whose checks read it.
pub fn check_published(tables: &[PublishedTable], extra: &[Check]) -> Vec<CheckResult> {
    let mut chosen: BTreeMap<TableKind, &PublishedTable> = BTreeMap::new();
    for t in tables {
        let replace = match chosen.get(&t.kind) {
            None => true,
            Some(c) => c.name != t.kind.name() && t.name == t.kind.name(),
        };
        if replace {
            chosen.insert(t.kind, t);
        }
    }
    let mut shared = Scope::default();
    for (kind, t) in &chosen {
        shared.file(*kind, t.path.clone());
    }
    // The kinds of the shared scope each table's checks read, and after which table each is
    // read no more.
    let checks: Vec<Vec<Check>> = tables.iter().map(|t| checks_of(t.kind, extra)).collect();
    let mut last_read: BTreeMap<TableKind, usize> = BTreeMap::new();
    let mut last_rows: BTreeMap<TableKind, usize> = BTreeMap::new();
    for (i, (t, checks)) in tables.iter().zip(&checks).enumerate() {
        let own = chosen.get(&t.kind).is_some_and(|c| c.path == t.path);
        for check in checks {
            let read = check.needs.iter().copied().filter(|k| *k != t.kind);
            for kind in read.chain(own.then_some(t.kind)) {
                last_read.insert(kind, i);
                if check.reads_rows() {
                    last_rows.insert(kind, i);
                    shared.rows_first(kind);
                }
            }
        }
    }
    let mut results = Vec::new();
    for (i, (t, checks)) in tables.iter().zip(&checks).enumerate() {
        if chosen.get(&t.kind).is_some_and(|c| c.path == t.path) {
            results.extend(checks.iter().map(|c| c.run(&t.name, &shared)));
        } else {
            // Another table of a chosen kind: its own file, the rest shared.
            let mut scope = Scope::over(&shared);
            scope.file(t.kind, t.path.clone());
            if checks.iter().any(Check::reads_rows) {
                scope.rows_first(t.kind);
            }
            results.extend(checks.iter().map(|c| c.run(&t.name, &scope)));
        }
        for (kind, _) in last_rows.iter().filter(|(_, last)| **last == i) {
            shared.forget_rows(*kind);
        }
        for (kind, _) in last_read.iter().filter(|(_, last)| **last == i) {
            shared.forget(*kind);
        }
    }
    results
}

/// The gates a stage's run (its summary row, and how many items it left to retry) passes or
/// fails: `max_drop_share` (the items it dropped for good,
/// as a share of the items it read, at most the pipeline's or the stage's setting) and
/// `output_not_empty` (a stage that read items wrote some). Items left to retry are not
/// judged: such a stage is partial, and nothing is published until they are done.
/// `environment` is the stage's environment (its tasks' models, `max_tokens`), for the hint.
/// `constant` lists the stage's tasks whose categorical answers never changed
/// (`CallLog::constant_answers`): they fail the gate `constant_answers` (`constant_gate`).
pub fn gates(
    file: &PipelineFile,
    record: &StageSummary,
    retry_items: u64,
    environment: &serde_json::Value,
    constant: &[String],
) -> Vec<CheckResult> {
    let mut results = drop_gates(file, record, retry_items, environment);
    results.push(constant_gate(record, retry_items, constant));
    results
}

/// `constant_answers`: a model that gave every item of the stage the same stance or verdict
/// (over at least `noisebench_llm`'s `CONSTANT_AFTER` answers) is not reading them, however
/// few of its answers were dropped.
fn constant_gate(record: &StageSummary, retry_items: u64, constant: &[String]) -> CheckResult {
    let mut gate = CheckResult {
        kind: CheckKind::Gate,
        table: record.id.clone(),
        check: "constant_answers".into(),
        status: CheckStatus::Passed,
        checked: record.items_in.max(0) as u64,
        failed: 0,
        ids: Vec::new(),
        detail: String::new(),
    };
    if retry_items > 0 {
        gate.status = CheckStatus::Skipped;
        gate.detail = format!("{retry_items} items left to retry");
    } else if !constant.is_empty() {
        gate.status = CheckStatus::Failed;
        gate.failed = constant.len() as u64;
        gate.detail = format!(
            "the same answer for every item: {}; hint: the model is not reading its inputs: try a stronger model (`[llm] task_models`), `json_schema = true`, or the server's chat template (`noisebench check PIPELINE --llm`)",
            constant.join("; ")
        );
    }
    gate
}

/// `max_drop_share` and `output_not_empty`.
fn drop_gates(
    file: &PipelineFile,
    record: &StageSummary,
    retry_items: u64,
    environment: &serde_json::Value,
) -> Vec<CheckResult> {
    let max = file
        .stages
        .get(&record.id)
        .and_then(|s| s.gate.as_ref())
        .and_then(|g| g.max_drop_share)
        .or_else(|| file.gates.as_ref().and_then(|g| g.max_drop_share))
        .unwrap_or(DEFAULT_MAX_DROP_SHARE);
    let gate = |check: &str| CheckResult {
        kind: CheckKind::Gate,
        table: record.id.clone(),
        check: check.into(),
        status: CheckStatus::Passed,
        checked: record.items_in.max(0) as u64,
        failed: 0,
        ids: Vec::new(),
        detail: String::new(),
    };
    let mut share = gate("max_drop_share");
    let mut empty = gate("output_not_empty");
    if retry_items > 0 {
        for g in [&mut share, &mut empty] {
            g.status = CheckStatus::Skipped;
            g.detail = format!("{retry_items} items left to retry");
        }
        return vec![share, empty];
    }
    let dropped = record.items_dropped.max(0) as u64;
    share.failed = dropped;
    // Of the items read, or of those accounted for when a stage counts its drops in finer
    // units than its input (a search drops a query's backend, not the query).
    let of = (record.items_in.max(0) as u64).max(record.items_out.max(0) as u64 + dropped);
    share.checked = of;
    let ratio = if of == 0 {
        0.0
    } else {
        dropped as f64 / of as f64
    };
    let mut reasons: Vec<(&String, &i64)> = record.drop_reasons.iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let top = reasons
        .iter()
        .take(TOP_REASONS)
        .map(|(r, n)| format!("{r}={n}"))
        .collect::<Vec<_>>()
        .join(" ");
    let hint = hint(&file.pipeline.name, record, environment);
    if ratio > max {
        share.status = CheckStatus::Failed;
        share.detail = format!(
            "dropped {dropped} of {of} items ({:.1}%, more than the {:.0}% allowed); top reasons: {top}; {hint}",
            100.0 * ratio,
            100.0 * max
        );
    } else if record.items_in > 0 {
        share.detail = format!(
            "dropped {dropped} of {of} items ({:.1}%, at most {:.0}% allowed)",
            100.0 * ratio,
            100.0 * max
        );
    }
    if record.items_in > 0 && record.items_out == 0 {
        // The reasons and the hint once, on the share's gate when it failed too.
        let (top, hint) = if share.failed() {
            (String::new(), "see the gate above".to_string())
        } else {
            (top, hint)
        };
        empty.status = CheckStatus::Failed;
        empty.failed = record.items_in.max(0) as u64;
        empty.detail = format!(
            "read {} items and wrote none; dropped {dropped} ({:.1}%){}; {hint}",
            record.items_in,
            100.0 * ratio,
            if top.is_empty() {
                String::new()
            } else {
                format!(", top reasons: {top}")
            }
        );
    }
    vec![share, empty]
}

/// What to try when a stage lost too much: for drops of LLM answers, the model that gave them
/// and the settings that most often help; else where the drops are listed.
fn hint(pipeline: &str, record: &StageSummary, environment: &serde_json::Value) -> String {
    let llm = record.drop_reasons.keys().any(|r| {
        r.starts_with("llm_")
            || matches!(
                r.as_str(),
                "truncated"
                    | "off_topic"
                    | "copied_example"
                    | "unparseable"
                    | "schema"
                    | "no_grounded_triplets"
            )
    });
    let inspect = format!(
        "the drops are in work/{pipeline}/{}/drops.parquet (`noisebench inspect`)",
        record.id
    );
    if !llm {
        return format!("hint: {inspect}");
    }
    let models: Vec<String> = environment["tasks"]
        .as_object()
        .map(|tasks| {
            tasks
                .iter()
                .map(|(task, v)| {
                    let model = v["model"]
                        .as_str()
                        .map(String::from)
                        .unwrap_or_else(|| v["model"].to_string());
                    format!("{task} by {model}")
                })
                .collect()
        })
        .unwrap_or_default();
    let max_tokens = environment["max_tokens"]
        .as_u64()
        .map(|n| format!(" (now {n})"))
        .unwrap_or_default();
    format!(
        "hint: the model's answers were unusable ({}): try a stronger model (`[llm] task_models`), `json_schema = true` on an endpoint whose server supports it, or a larger `max_tokens`{max_tokens}; {inspect}",
        if models.is_empty() {
            "tasks of this stage".to_string()
        } else {
            models.join(", ")
        }
    )
}

/// The table checks of a stage that left `retry_items` items to retry are not judged yet: its
/// tables lack those items (a `labels` table missing pairs fails `labels_complete`), and such a
/// stage is partial, so nothing is published until a run retries them (unless
/// `--allow-partial`, whose manifest lists what is missing). Its failed checks become skipped,
/// saying why.
pub fn excuse_partial(results: &mut [CheckResult], retry_items: u64) {
    if retry_items == 0 {
        return;
    }
    for r in results
        .iter_mut()
        .filter(|r| r.kind == CheckKind::Check && r.failed())
    {
        r.status = CheckStatus::Skipped;
        r.detail = format!(
            "{} rows failed while {retry_items} items are left to retry; judged when they are done",
            r.failed
        );
    }
}

/// The failed results among `results`, one line each, for an error message.
pub(crate) fn render_failed(results: &[CheckResult]) -> String {
    results
        .iter()
        .filter(|r| r.failed())
        .map(CheckResult::render)
        .collect::<Vec<_>>()
        .join("\n  ")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use noisebench_core::checks::{InMemory, column_of, id_column, typed};
    use noisebench_core::*;
    use polars::prelude::*;

    use super::*;

    fn q(id: &str, kind: &str, chunks: &[&str], triplets: &[&str]) -> Question {
        Question {
            id: id.into(),
            kind: kind.into(),
            answer_chunk_ids: chunks.iter().map(|c| c.to_string()).collect(),
            triplet_ids: triplets.iter().map(|t| t.to_string()).collect(),
            ..Question::default()
        }
    }

    /// Tables with offenders of every declared check that reads columns.
    fn tables() -> Vec<Rows> {
        let chunk = |id: &str, report: &str| Chunk {
            id: id.into(),
            report_id: report.into(),
            ..Chunk::default()
        };
        let split = |id: &str, question: &str, split: &str| QuestionSplit {
            id: id.into(),
            question_id: question.into(),
            split: split.into(),
            ..QuestionSplit::default()
        };
        let label = |id: &str, claim: &str, document: &str, provenance: &str| ClaimDocumentLabel {
            id: id.into(),
            claim_id: claim.into(),
            document_id: document.into(),
            provenance: provenance.into(),
            ..ClaimDocumentLabel::default()
        };
        let link = |id: &str, claim: &str, document: &str| ClaimDocument {
            id: id.into(),
            claim_id: claim.into(),
            document_id: document.into(),
            ..ClaimDocument::default()
        };
        vec![
            Rows::Reports(vec![Report {
                id: "r1".into(),
                ..Report::default()
            }]),
            Rows::Chunks(vec![
                chunk("c1", "r1"),
                chunk("c1", "r1"),
                chunk("", "r9"),
                chunk("c2", ""),
            ]),
            Rows::Triplets(vec![Triplet {
                id: "t1".into(),
                chunk_id: "c7".into(),
                ..Triplet::default()
            }]),
            Rows::Questions(vec![
                q("q1", "single_hop", &["c1"], &["t1"]),
                q("q2", "chained_multi_hop", &["c1", "c9"], &[]),
                q("q3", "loop", &["c1", "c1"], &["t5"]),
            ]),
            Rows::RejectedQuestions(vec![
                RejectedQuestion {
                    id: "q2".into(),
                    ..RejectedQuestion::default()
                },
                RejectedQuestion {
                    id: "q8".into(),
                    ..RejectedQuestion::default()
                },
            ]),
            Rows::QuestionSplits(vec![split("s1", "q1", "train"), split("s2", "q9", "dev")]),
            Rows::Retrievals(vec![Retrieval {
                id: "x1".into(),
                question_id: "q4".into(),
                ..Retrieval::default()
            }]),
            Rows::Claims(vec![Claim {
                id: "k1".into(),
                ..Claim::default()
            }]),
            Rows::ClaimDocuments(vec![link("l1", "k1", "d1"), link("l2", "k1", "d2")]),
            Rows::Labels(vec![
                label("b1", "k1", "d1", "judge"),
                label("b2", "k1", "d2", " "),
            ]),
        ]
    }

    /// Write `rows` to `dir/<kind>.parquet`, as published.
    fn publish(dir: &Path, rows: &Rows) -> PublishedTable {
        let path = dir.join(format!("{}.parquet", rows.kind()));
        table_io::write_table(&path, rows).unwrap();
        PublishedTable {
            name: rows.kind().name().into(),
            kind: rows.kind(),
            path,
        }
    }

    /// The questions of [`tables`] at `path`, their `metadata` cells not JSON: the file matches
    /// the schema but its rows do not decode.
    fn undecodable_questions(path: &Path) {
        let Rows::Questions(questions) = &tables()[3] else {
            unreachable!()
        };
        let rows = Rows::Questions(questions.clone());
        let mut df = table_io::rows_to_frame(&rows).unwrap();
        let broken = vec!["not json"; rows.len()];
        df.with_column(Series::new("metadata".into(), broken).into_column())
            .unwrap();
        table_io::write_frame(path, &mut df).unwrap();
        assert!(table_io::read_table(path, TableKind::Questions).is_err());
    }

    /// Over files, the checks before publishing find what the same checks find over the same
    /// rows in memory: counts, offenders, skips.
    #[test]
    fn published_files_are_judged_as_rows_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let published: Vec<PublishedTable> =
            tables().iter().map(|r| publish(dir.path(), r)).collect();
        let got = check_published(&published, &[]);
        let memory = InMemory(tables().into_iter().map(|r| (r.kind(), r)).collect());
        let want: Vec<CheckResult> = published
            .iter()
            .flat_map(|t| run_checks(&t.name, t.kind, &[], &memory))
            .collect();
        assert_eq!(got, want);
        let failed: Vec<String> = got
            .iter()
            .filter(|r| r.failed())
            .map(|r| format!("{}/{}: {:?}", r.table, r.check, r.ids))
            .collect();
        assert_eq!(
            failed,
            [
                "chunks/unique(id): [\"c1\"]",
                "chunks/not_null(id): [\"row 2\"]",
                "chunks/references(report_id -> reports): [\"\"]",
                "triplets/references(chunk_id -> chunks): [\"t1\"]",
                "questions/accepted_values(kind): [\"q3\"]",
                "questions/references(answer_chunk_ids -> chunks): [\"q2\"]",
                "questions/references(triplet_ids -> triplets): [\"q3\"]",
                "questions/multi_hop_chunks: [\"q3\"]",
                "rejected_questions/rejected_not_kept: [\"q2\"]",
                "question_splits/accepted_values(split): [\"s2\"]",
                "question_splits/references(question_id -> questions): [\"s2\"]",
                "retrievals/references(question_id -> questions): [\"x1\"]",
                "labels/labels_complete: [\"l2\"]",
            ]
        );
        assert!(
            got.iter()
                .any(|r| r.status == CheckStatus::Skipped && r.table == "labels"),
            "no `documents` table: skipped"
        );
    }

    /// The column checks read columns, not rows: a questions file whose rows do not decode is
    /// judged all the same, unless a check reads its rows (then none can run).
    #[test]
    fn column_checks_read_no_rows() {
        let dir = tempfile::tempdir().unwrap();
        let chunks = publish(dir.path(), &tables()[1]);
        let path = dir.path().join("questions.parquet");
        undecodable_questions(&path);
        let questions = PublishedTable {
            name: "questions".into(),
            kind: TableKind::Questions,
            path,
        };
        let tables = [questions, chunks];
        let results = check_published(&tables, &[]);
        let by = |name: &str| {
            results
                .iter()
                .find(|r| r.table == "questions" && r.check == name)
                .unwrap()
        };
        assert_eq!(by("unique(id)").status, CheckStatus::Passed);
        assert_eq!(by("not_null(id)").status, CheckStatus::Passed);
        assert_eq!(by("accepted_values(kind)").ids, ["q3"]);
        assert_eq!(by("references(answer_chunk_ids -> chunks)").ids, ["q2"]);
        assert_eq!(by("multi_hop_chunks").ids, ["q3"]);
        assert!(
            results
                .iter()
                .all(|r| !r.detail.starts_with("could not run")),
            "{results:?}"
        );
        // A check that reads the rows: they are read first, and do not decode.
        let rows_read = Check::new("rows", TableKind::Questions, vec![], |tables| {
            typed::<Question>(tables).map(|q| (q.len(), vec![]))
        });
        let results = check_published(&tables, &[rows_read]);
        assert!(
            results
                .iter()
                .filter(|r| r.table == "questions" && r.status != CheckStatus::Skipped)
                .all(|r| r.detail.contains("does not decode")),
            "{results:?}"
        );
    }

    /// A second table of a kind is judged on its own file, rows and columns; the references of
    /// other tables resolve to the table published under the kind's name.
    #[test]
    fn a_second_table_of_a_kind_is_judged_on_its_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("train.parquet");
        let train = Rows::Questions(vec![
            q("q1", "single_hop", &["c1"], &[]),
            q("q1", "single_hop", &["c1"], &[]),
        ]);
        table_io::write_table(&path, &train).unwrap();
        let train = PublishedTable {
            name: "train".into(),
            kind: TableKind::Questions,
            path,
        };
        let splits = Rows::QuestionSplits(vec![QuestionSplit {
            id: "s3".into(),
            question_id: "q3".into(),
            split: "test".into(),
            ..QuestionSplit::default()
        }]);
        let tables = [
            train,
            publish(dir.path(), &tables()[3]),
            publish(dir.path(), &splits),
        ];
        let rows_read = Check::new("rows", TableKind::Questions, vec![], |tables| {
            typed::<Question>(tables).map(|q| (q.len(), vec![]))
        });
        let results = check_published(&tables, &[rows_read]);
        let by = |table: &str, check: &str| {
            results
                .iter()
                .find(|r| r.table == table && r.check == check)
                .unwrap()
        };
        assert_eq!(by("train", "unique(id)").ids, ["q1"]);
        assert_eq!(by("train", "rows").checked, 2);
        assert_eq!(by("questions", "unique(id)").status, CheckStatus::Passed);
        assert_eq!(by("questions", "rows").checked, 3);
        let reference = by("question_splits", "references(question_id -> questions)");
        assert_eq!(reference.status, CheckStatus::Passed);
    }

    /// A scope reads each column of a file once, and only when asked; a kind read as rows
    /// gives its columns from them; what is forgotten is read again.
    #[test]
    fn a_scope_reads_a_column_once_and_columns_from_rows_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = publish(dir.path(), &tables()[3]).path;
        let kinds = |tables: &dyn Tables| column_of::<Question>(tables, "kind", |q| vec![&q.kind]);
        let mut scope = Scope::default();
        scope.file(TableKind::Questions, path.clone());
        let ids = id_column(&scope, TableKind::Questions).unwrap();
        std::fs::remove_file(&path).unwrap();
        // Gone from disk: the ids come from the column read, the kinds are not read yet.
        assert!(Arc::ptr_eq(
            &ids,
            &id_column(&scope, TableKind::Questions).unwrap()
        ));
        assert_eq!(scope.ids(TableKind::Questions).unwrap().unwrap().len(), 3);
        assert!(kinds(&scope).is_err());
        scope.forget(TableKind::Questions);
        assert!(id_column(&scope, TableKind::Questions).is_err());

        let path = publish(dir.path(), &tables()[3]).path;
        let mut scope = Scope::default();
        scope.file(TableKind::Questions, path.clone());
        scope.rows_first(TableKind::Questions);
        assert_eq!(kinds(&scope).unwrap().value(2), "loop");
        std::fs::remove_file(&path).unwrap();
        let ids = id_column(&scope, TableKind::Questions).unwrap();
        assert_eq!((ids.len(), ids.value(1)), (3, "q2"));
        // Rows let go: a column not yet taken is read alone (and the file is gone).
        scope.forget_rows(TableKind::Questions);
        assert!(kinds(&scope).is_ok(), "taken before");
        assert!(
            column_of::<Question>(&scope, "answer_chunk_ids", |q| {
                q.answer_chunk_ids.iter().map(String::as_str).collect()
            })
            .is_err()
        );
    }
}
