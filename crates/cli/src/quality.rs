//! The quality card (`noisebench-quality`) of a build's tables before publishing, and of a
//! published version for `noisebench quality`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use noisebench_core::LlmCall;
use noisebench_core::{
    Chunk, Claim, ClaimDocumentLabel, Document, QueryPerturbation, Question, QuestionSplit,
    TableKind, TableRow,
};
use noisebench_eval::ClosedBookItem;
use noisebench_llm::Llm;
use noisebench_pipeline::{Plan, RunResult, table_io};
use noisebench_quality::{
    ClosedBook, ClosedBookAsked, QUALITY_FILE, QualityConfig, QualityReport, Tables,
};
use noisebench_snapshot::{PublishedVersion, SourceTable};

/// The rows the card reads, each table empty when the version has none of its kind.
#[derive(Default)]
struct Rows {
    claims: Vec<Claim>,
    documents: Vec<Document>,
    labels: Vec<ClaimDocumentLabel>,
    questions: Vec<Question>,
    chunks: Vec<Chunk>,
    /// Each report's id and domain: the card reads no other field of the reports.
    report_domains: Vec<(String, String)>,
    splits: Vec<QuestionSplit>,
    query_perturbations: Vec<QueryPerturbation>,
    /// Each document perturbation's kind: the card reads no other field of them.
    document_perturbation_kinds: Vec<String>,
}

impl Rows {
    /// Each kind's rows from the file `path` finds for it.
    fn read(path: impl Fn(TableKind) -> Option<PathBuf>) -> Result<Self> {
        fn one<T: TableRow>(path: &impl Fn(TableKind) -> Option<PathBuf>) -> Result<Vec<T>> {
            match path(T::KIND) {
                Some(p) => table_io::read_rows::<T>(&p)
                    .with_context(|| format!("quality card: {}", p.display())),
                None => Ok(Vec::new()),
            }
        }
        /// The string columns `names` of `kind`'s table, none when there is no such table.
        fn columns(
            path: &impl Fn(TableKind) -> Option<PathBuf>,
            kind: TableKind,
            names: &[&str],
        ) -> Result<Option<Vec<Vec<Option<String>>>>> {
            path(kind)
                .map(|p| {
                    table_io::string_columns(&p, names)
                        .with_context(|| format!("quality card: {}", p.display()))
                })
                .transpose()
        }
        noisebench_core::timed("quality card: tables read", || {
            Ok(Rows {
                claims: one(&path)?,
                documents: one(&path)?,
                labels: one(&path)?,
                questions: one(&path)?,
                chunks: one(&path)?,
                report_domains: columns(&path, TableKind::Reports, &["id", "domain"])?
                    .map(|mut c| {
                        let domains = c.pop().unwrap_or_default();
                        let ids = c.pop().unwrap_or_default();
                        ids.into_iter()
                            .zip(domains)
                            .map(|(id, domain)| {
                                (id.unwrap_or_default(), domain.unwrap_or_default())
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                splits: one(&path)?,
                query_perturbations: one(&path)?,
                document_perturbation_kinds: columns(
                    &path,
                    TableKind::DocumentPerturbations,
                    &["kind"],
                )?
                .and_then(|mut c| c.pop())
                .unwrap_or_default()
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect(),
            })
        })
    }

    fn tables(&self) -> Tables<'_> {
        Tables {
            claims: &self.claims,
            documents: &self.documents,
            labels: &self.labels,
            questions: &self.questions,
            chunks: &self.chunks,
            report_domains: &self.report_domains,
            splits: &self.splits,
            query_perturbations: &self.query_perturbations,
            document_perturbation_kinds: &self.document_perturbation_kinds,
        }
    }
}

/// The stage name of the closed-book check's calls in the call log.
pub const QUALITY_STAGE: &str = "quality";

/// The card of the tables a build is about to publish (the first table of each kind), with the
/// closed-book check asked of `llm` when it has a model; also the calls that check made.
pub(crate) fn measure_tables(
    tables: &[SourceTable],
    config: &QualityConfig,
    llm: &Llm,
) -> Result<(QualityReport, Vec<LlmCall>)> {
    let rows = Rows::read(|kind| {
        tables
            .iter()
            .find(|t| t.kind == kind)
            .map(|t| t.path.clone())
    })?;
    let mut report = noisebench_quality::measure(&rows.tables(), config);
    report.closed_book = closed_book(llm, &rows.questions, config)?;
    Ok((report, llm.drain_call_log()))
}

/// The `[snapshot]` tables as the run wrote them, and the items each one's stage left to
/// retry (published only with `--allow-partial`).
pub(crate) fn snapshot_tables(
    plan: &Plan,
    section: &noisebench_pipeline::SnapshotSection,
    run: &RunResult,
) -> Result<(Vec<SourceTable>, BTreeMap<String, u64>)> {
    let mut tables = Vec::new();
    let mut partial: BTreeMap<String, u64> = BTreeMap::new();
    for reference in &section.tables {
        let table = plan
            .table(reference)
            .with_context(|| format!("snapshot table `{reference}`"))?;
        let record = run
            .records
            .get(&table.stage)
            .with_context(|| format!("stage `{}` did not run", table.stage))?;
        let file = record
            .tables
            .get(&table.table)
            .with_context(|| format!("no table `{reference}`"))?;
        tables.push(SourceTable {
            name: table.table.clone(),
            kind: table.kind,
            path: run.run_dir.join(&table.stage).join(&file.file),
        });
        partial.insert(table.table.clone(), record.retry_items);
    }
    Ok((tables, partial))
}

/// The closed-book check over the questions `tables` would publish, asked of `llm` (in quote
/// mode by `noisebench quote`, which counts what the build's card will ask); the calls it made.
pub(crate) fn closed_book_of_tables(
    tables: &[SourceTable],
    config: &QualityConfig,
    llm: &Llm,
) -> Result<Vec<LlmCall>> {
    let Some(table) = tables.iter().find(|t| t.kind == TableKind::Questions) else {
        return Ok(Vec::new());
    };
    let questions = table_io::read_rows::<Question>(&table.path)
        .with_context(|| format!("quality card: {}", table.path.display()))?;
    closed_book(llm, &questions, config)?;
    Ok(llm.drain_call_log())
}

/// The closed-book check of `questions` ([`noisebench_eval::closed_book`]): not run with the
/// offline backend, with `[quality.closed_book] enabled = false`, or without questions; else each
/// question (or `max_questions` of them) asked of `llm` with no context and judged.
pub fn closed_book(
    llm: &Llm,
    questions: &[Question],
    config: &QualityConfig,
) -> Result<ClosedBook> {
    if noisebench_eval::closed_book::offline(llm) {
        return Ok(ClosedBook::not_run(
            "the offline backend answers no question without passages; configure a model \
             ([llm] backend = \"openai\") to ask them closed-book",
        ));
    }
    if !config.closed_book.enabled {
        return Ok(ClosedBook::not_run(
            "turned off ([quality.closed_book] enabled = false); remove it to ask each question \
             of the model with no context",
        ));
    }
    if questions.is_empty() {
        return Ok(ClosedBook::not_run("no questions"));
    }
    noisebench_llm::StageTasks::new(llm.clone(), &noisebench_eval::closed_book::TASKS[..])
        .declare()
        .map_err(|e| anyhow::anyhow!("quality card, closed-book check: {e}"))?;
    let chosen = noisebench_quality::closed_book_questions(
        questions,
        config.closed_book.max_questions,
        config.seed,
    );
    let items: Vec<ClosedBookItem> = chosen
        .iter()
        .map(|q| ClosedBookItem {
            id: q.id.clone(),
            question: q.question.clone(),
            answer: q.answer.clone(),
        })
        .collect();
    let answers = noisebench_eval::ask_closed_book(llm, QUALITY_STAGE, &items)
        .context("quality card, closed-book check")?;
    let asked: Vec<ClosedBookAsked> = answers
        .into_iter()
        .map(|a| ClosedBookAsked {
            question_id: a.id,
            answer: a.answer,
            correct: a.correct,
        })
        .collect();
    let reason = format!(
        "{} of {} questions asked with no context of {}",
        items.len(),
        questions.len(),
        llm.provenance(noisebench_eval::closed_book::TASKS[0].name)
    );
    Ok(noisebench_quality::closed_book(
        questions,
        &asked,
        reason,
        config.samples,
        config.seed,
    ))
}

/// A published version's card: its `quality.json`, or measured now with the default
/// configuration when the version has none.
pub fn version_quality(dir: &Path) -> Result<QualityReport> {
    let file = dir.join(QUALITY_FILE);
    if file.is_file() {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        return serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()));
    }
    let version = PublishedVersion::open(dir)?;
    let rows = Rows::read(|kind| {
        version
            .entry(kind)
            .map(|(_, entry)| version.dir().join(&entry.file))
    })?;
    Ok(noisebench_quality::measure(
        &rows.tables(),
        &QualityConfig::default(),
    ))
}

/// `noisebench quality SNAPSHOT [--compare OTHER]`: the card's section, then how each number
/// moved from `OTHER`.
pub fn quality_text(snapshot: &Path, compare: Option<&Path>) -> Result<String> {
    let report = version_quality(snapshot)?;
    let mut out = noisebench_quality::render_markdown(&report);
    if let Some(other) = compare {
        let before = version_quality(other)?;
        out.push_str(&format!("\n### Against {}\n\n", other.display()));
        for line in noisebench_quality::compare(&before, &report) {
            out.push_str(&format!("- {line}\n"));
        }
    }
    Ok(out)
}

/// For `noisebench diff`: how each quality number moved from `v1` to `v2`, as a Markdown
/// section; `None` unless both versions have a `quality.json` (an older version is not
/// measured on the spot here: `noisebench quality --compare` does that).
pub fn quality_moves(v1: &Path, v2: &Path) -> Result<Option<String>> {
    if !v1.join(QUALITY_FILE).is_file() || !v2.join(QUALITY_FILE).is_file() {
        return Ok(None);
    }
    let (before, after) = (version_quality(v1)?, version_quality(v2)?);
    let mut out = String::from("\n## Quality\n\n");
    for line in noisebench_quality::compare(&before, &after) {
        out.push_str(&format!("- {line}\n"));
    }
    Ok(Some(out))
}
