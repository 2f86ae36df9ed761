//! Running the table checks and the gates: after each stage over what it wrote and the nearest
//! upstream table of each other kind, and before publishing over the tables to publish.
//!
//! The checks are declared in core (`noisebench_core::checks`) and by the registry (rules that
//! need text matching); this module gives them the tables to read (a `Scope`: rows held in
//! memory or Parquet files read once, when a check first asks) and judges what a stage lost
//! ([`gates`]).

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use noisebench_core::checks::{Tables, declared};
use noisebench_core::{Check, CheckKind, CheckResult, CheckStatus, Rows, StageSummary, TableKind};

use crate::file::PipelineFile;
use crate::table_io;

/// The share of its items a stage may drop for good unless the pipeline file says otherwise.
pub(crate) const DEFAULT_MAX_DROP_SHARE: f64 = 0.5;

/// How many drop reasons a failed gate names.
const TOP_REASONS: usize = 3;

/// The tables a check may read: some in memory, the rest from files, each read at most once.
#[derive(Default)]
pub(crate) struct Scope<'a> {
    memory: BTreeMap<TableKind, &'a Rows>,
    files: BTreeMap<TableKind, PathBuf>,
    rows: BTreeMap<TableKind, OnceCell<Result<Rows, String>>>,
    ids: BTreeMap<TableKind, OnceCell<Result<Ids, String>>>,
}

/// A table's ids, shared by the checks that read them.
type Ids = Arc<HashSet<String>>;

impl<'a> Scope<'a> {
    /// Put `rows` in scope as its kind's table (the first given of a kind stays).
    pub fn hold(&mut self, rows: &'a Rows) {
        if !self.has(rows.kind()) {
            self.memory.insert(rows.kind(), rows);
        }
    }

    /// Put the Parquet file `path` in scope as `kind`'s table (the first given of a kind stays).
    pub fn file(&mut self, kind: TableKind, path: PathBuf) {
        if !self.has(kind) {
            self.files.insert(kind, path);
            self.rows.insert(kind, OnceCell::new());
            self.ids.insert(kind, OnceCell::new());
        }
    }
}

impl Tables for Scope<'_> {
    fn rows(&self, kind: TableKind) -> Result<Option<&Rows>, String> {
        if let Some(rows) = self.memory.get(&kind) {
            return Ok(Some(*rows));
        }
        let (Some(path), Some(cell)) = (self.files.get(&kind), self.rows.get(&kind)) else {
            return Ok(None);
        };
        cell.get_or_init(|| table_io::read_table(path, kind).map_err(|e| e.to_string()))
            .as_ref()
            .map(Some)
            .map_err(Clone::clone)
    }

    fn ids(&self, kind: TableKind) -> Result<Option<Ids>, String> {
        if let Some(rows) = self.memory.get(&kind) {
            return Ok(Some(Arc::new(rows.ids().into_iter().collect())));
        }
        let (Some(path), Some(cell)) = (self.files.get(&kind), self.ids.get(&kind)) else {
            return Ok(None);
        };
        cell.get_or_init(|| {
            // Rows already read serve; else only the id column is read.
            match self.rows.get(&kind).and_then(|c| c.get()) {
                Some(Ok(rows)) => Ok(Arc::new(rows.ids().into_iter().collect())),
                _ => table_io::read_ids(path)
                    .map(|ids| Arc::new(ids.into_iter().collect()))
                    .map_err(|e| e.to_string()),
            }
        })
        .clone()
        .map(Some)
    }

    fn has(&self, kind: TableKind) -> bool {
        self.memory.contains_key(&kind) || self.files.contains_key(&kind)
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
    let mut results = Vec::new();
    for t in tables {
        let mut scope = Scope::default();
        scope.file(t.kind, t.path.clone());
        for (kind, other) in &chosen {
            scope.file(*kind, other.path.clone());
        }
        results.extend(run_checks(&t.name, t.kind, extra, &scope));
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
