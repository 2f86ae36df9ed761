//! `build-snapshot` and `refresh`: run a pipeline, then publish its snapshot with the run's
//! provenance, facts and exports, unless items are left to retry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use noisebench_core::LlmCall;
use noisebench_core::{CheckResult, TableKind};
use noisebench_pipeline::{Plan, PublishedTable, RunResult, check_published, table_io};
use noisebench_snapshot::{
    PublishOptions, PublishOutcome, PublishRequest, SourceExport, SourceTable, parent_checks,
};

use crate::{Loaded, Workspace};

/// The closed-book check's call log beside the run's (`work/<pipeline>/`).
pub const QUALITY_CALLS: &str = "quality_llm_calls.parquet";

/// The result of `build-snapshot`.
pub struct Built {
    pub run: RunResult,
    /// Totals over the run's call log (every stage's last run).
    pub llm: LlmTotals,
    pub outcome: Option<PublishOutcome>,
    /// Why nothing was published although the pipeline has a `[snapshot]` section: items failed
    /// for a transient cause and `allow_partial` is off, or a table check failed before
    /// publishing and `allow_degraded` is off. The caller exits non-zero with it.
    pub withheld: Option<String>,
    /// Every gate and table check of the run and before publishing.
    pub checks: Vec<CheckResult>,
    /// The line saying the report track produced nothing (`report_track_line`).
    pub report_track: Option<String>,
    /// The quote made before the run (a model with a price), beside what the run used.
    pub quote: Option<crate::QuoteVsActual>,
    /// Seconds the quality card took before publishing (its closed-book calls included); 0
    /// when nothing was to be published.
    pub quality_seconds: f64,
}

/// A build stopped by a failed gate or table check: the error, and what the run did up to
/// there (its summary table, LLM totals, the report track's line) for the caller to print
/// before it.
#[derive(Debug)]
pub struct Stopped {
    pub report: String,
    pub error: noisebench_pipeline::RunError,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for Stopped {}

/// Totals over a call log.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct LlmTotals {
    pub calls: u64,
    pub cache_hits: u64,
    pub failures: u64,
    /// Tokens of calls sent (cache hits excluded).
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Of `tokens_in`, those the provider served from its prompt cache (priced at the model's
    /// `cached_input_per_million`).
    pub tokens_cached: u64,
    pub cost_usd: f64,
    /// Calls per `backend:model`.
    pub models: BTreeMap<String, u64>,
    /// Calls per task.
    pub tasks: BTreeMap<String, u64>,
    /// Per model (`openai:<model>`): its task answers and how many of them were unusable: cut
    /// off (`truncated`), not JSON of the task's shape (`unparseable_output`) or dropped by a
    /// sense check (`off_topic`, `copied_example`...), per task too: a large share says the
    /// model is too weak for the job or misconfigured. Offline rules are not models and are
    /// left out.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub sense: BTreeMap<String, SenseShare>,
    /// Tasks whose categorical answers (stance, verdict) never changed over the run
    /// (`Llm::constant_answers`), one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub constant_answers: Vec<String>,
}

/// One model's answers and the unusable ones in a call log.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SenseShare {
    /// Task calls (embedding requests not counted), cache hits included.
    pub answers: u64,
    /// Of those, unusable: truncated, unparseable, or dropped by a sense check.
    pub dropped: u64,
    pub reasons: BTreeMap<String, u64>,
    /// The same per task.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tasks: BTreeMap<String, TaskShare>,
}

/// One task's answers by one model, and the unusable ones.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TaskShare {
    pub answers: u64,
    pub dropped: u64,
    pub reasons: BTreeMap<String, u64>,
}

/// Whether a call-log reason code says the model's answer was unusable (not that no answer
/// came: HTTP errors, budget, cache misses are the endpoint's or the run's, not the model's).
fn unusable_answer(code: &str) -> bool {
    matches!(code, "truncated" | "unparseable_output") || noisebench_llm::Sense::is_code(code)
}

impl LlmTotals {
    pub fn of(calls: &[LlmCall]) -> Self {
        let mut t = LlmTotals::default();
        for c in calls {
            t.calls += 1;
            t.cache_hits += c.cache_hit as u64;
            t.failures += c.error.is_some() as u64;
            // A cache hit's row carries the cached answer's token counts; they were paid for
            // once, by the call that filled the cache, so they are not counted again.
            if !c.cache_hit {
                t.tokens_in += c.tokens_in.max(0) as u64;
                t.tokens_out += c.tokens_out.max(0) as u64;
                t.tokens_cached += c.tokens_cached.max(0) as u64;
            }
            t.cost_usd += c.cost_usd.unwrap_or(0.0);
            let model = if c.model.is_empty() {
                c.backend.clone()
            } else {
                format!("{}:{}", c.backend, c.model)
            };
            if c.backend != "offline" && c.task != "embedding" {
                let share = t.sense.entry(model.clone()).or_default();
                share.answers += 1;
                let task = share.tasks.entry(c.task.clone()).or_default();
                task.answers += 1;
                let reason = c.error.as_deref().and_then(|e| e.split(':').next());
                if let Some(r) = reason.filter(|r| unusable_answer(r)) {
                    share.dropped += 1;
                    *share.reasons.entry(r.to_string()).or_default() += 1;
                    task.dropped += 1;
                    *task.reasons.entry(r.to_string()).or_default() += 1;
                }
            }
            *t.models.entry(model).or_default() += 1;
            *t.tasks.entry(c.task.clone()).or_default() += 1;
        }
        t
    }

    /// These totals with the quality card's closed-book calls added, those calls written to
    /// `work/<pipeline>/quality_llm_calls.parquet` (the run's call log is the stages').
    fn with_quality_calls(self, run_dir: &Path, calls: Vec<LlmCall>) -> Result<Self> {
        let mut all: Vec<LlmCall> = {
            let path = run_dir.join(noisebench_pipeline::LLM_CALLS);
            if path.is_file() {
                table_io::read_rows(&path)?
            } else {
                Vec::new()
            }
        };
        table_io::write_table(
            &run_dir.join(QUALITY_CALLS),
            &noisebench_core::Rows::LlmCalls(calls.clone()),
        )?;
        all.extend(calls);
        Ok(LlmTotals {
            constant_answers: self.constant_answers,
            ..Self::of(&all)
        })
    }

    /// Read `work/<pipeline>/llm_calls.parquet` (none: all zero).
    pub fn of_run(run_dir: &Path) -> Result<Self> {
        let path = run_dir.join(noisebench_pipeline::LLM_CALLS);
        if !path.is_file() {
            return Ok(Self::default());
        }
        let calls: Vec<LlmCall> = table_io::read_rows(&path)?;
        Ok(Self::of(&calls))
    }

    /// One line for the end of a run, then one per model with its unusable answers (cut off,
    /// unparseable, dropped by a sense check) and, when it had any, one per task of it, and one
    /// per task whose answers never changed.
    pub fn render(&self) -> String {
        let mut out = self.render_calls();
        let line = |dropped: u64, answers: u64, reasons: &BTreeMap<String, u64>| {
            let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r}={n}")).collect();
            format!(
                "{dropped} of {answers} answers dropped ({:.1}%){}{}",
                100.0 * dropped as f64 / answers.max(1) as f64,
                if reasons.is_empty() { "" } else { ": " },
                reasons.join(" ")
            )
        };
        for (model, s) in &self.sense {
            out.push_str(&format!(
                "\nsense checks, {model}: {}",
                line(s.dropped, s.answers, &s.reasons)
            ));
            if s.dropped > 0 {
                for (task, t) in &s.tasks {
                    out.push_str(&format!(
                        "\n  {task}: {}",
                        line(t.dropped, t.answers, &t.reasons)
                    ));
                }
            }
        }
        for line in &self.constant_answers {
            out.push_str(&format!("\nthe same answer all run long: {line}"));
        }
        out
    }

    fn render_calls(&self) -> String {
        format!(
            "LLM calls of the stages' last runs: {} ({} cache hits, {} failed), {} tokens in ({} of them from the provider's prompt cache), {} out sent (cache hits not counted), estimated {:.4} USD",
            self.calls,
            self.cache_hits,
            self.failures,
            self.tokens_in,
            self.tokens_cached,
            self.tokens_out,
            self.cost_usd
        )
    }
}

/// Run the whole pipeline, then publish its `[snapshot]` tables.
pub fn build_snapshot(
    ws: &Workspace,
    pipeline: &str,
    force: bool,
    options: &PublishOptions,
) -> Result<Built> {
    let loaded = ws.load(pipeline)?;
    let plan = &loaded.plan;
    // Held across the run and the publish: a second build of this pipeline in this folder is
    // refused until this one has published (the run takes the same lock again on this thread).
    let _lock = noisebench_pipeline::FolderLock::acquire(&ws.work_dir.join(plan.name()))?;
    let quoted = quote_first(ws, pipeline, &loaded, force)?;
    let run = match ws.run(&loaded, None, force) {
        Ok(run) => run,
        Err(e) => return Err(stopped(e, &loaded)),
    };
    let mut quote = match &quoted {
        Some(q) => Some(crate::QuoteVsActual::of(
            q,
            &calls_of_stages_that_ran(&run)?,
        )),
        None => None,
    };
    let mut llm = LlmTotals::of_run(&run.run_dir)?;
    llm.constant_answers = loaded.layers.llm.constant_answers();
    let report_track = report_track_line(plan, &run.summary);
    let unfinished = run.unfinished_message();
    let Some(section) = &plan.file.snapshot else {
        return Ok(Built {
            withheld: unfinished,
            checks: run.checks.clone(),
            report_track,
            run,
            llm,
            outcome: None,
            quote: quote.clone(),
            quality_seconds: 0.0,
        });
    };
    if let Some(message) = &unfinished
        && !ws.allow_partial
    {
        return Ok(Built {
            withheld: Some(format!(
                "not published: {message}, or pass --allow-partial to publish without them"
            )),
            checks: run.checks.clone(),
            report_track,
            run,
            llm,
            outcome: None,
            quote: quote.clone(),
            quality_seconds: 0.0,
        });
    }
    let (tables, partial) = crate::quality::snapshot_tables(plan, section, &run)?;
    // The tables' checks again, over what is to be published, and against the last version.
    let mut checks = run.checks.clone();
    let before = checks_before_publishing(plan, &tables, &partial, ws, &section.dataset)?;
    checks.extend(before);
    // The quality card, judged by its gates with the other checks before publishing.
    let quality_config = noisebench_quality::QualityConfig::from_table(plan.file.quality.as_ref())?;
    noisebench_core::memory::release();
    tracing::info!(pipeline = plan.name(), "quality card");
    let (measured, quality_seconds) = noisebench_core::measured("quality card: measured", || {
        crate::quality::measure_tables(&tables, &quality_config, &loaded.layers.llm)
    });
    let (quality, quality_calls) = measured?;
    if let Some(q) = &quoted {
        let mut sent = calls_of_stages_that_ran(&run)?;
        sent.extend(quality_calls.iter().cloned());
        quote = Some(crate::QuoteVsActual::of(q, &sent));
    }
    if !quality_calls.is_empty() {
        llm = llm.with_quality_calls(&run.run_dir, quality_calls)?;
    }
    checks.extend(noisebench_quality::gates(&quality, &quality_config.gates));
    let degraded = ws.allow_degraded || plan.file.gates.as_ref().is_some_and(|g| g.allow_degraded);
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| c.failed())
        .map(CheckResult::render)
        .collect();
    if !failed.is_empty() && !degraded {
        return Ok(Built {
            withheld: Some(format!(
                "not published: {} checks failed before publishing:\n  {}\n(pass --allow-degraded, or set `allow_degraded = true` under [gates], to publish anyway; the card and manifest.json then list what failed)",
                failed.len(),
                failed.join("\n  ")
            )),
            checks,
            report_track,
            run,
            llm,
            outcome: None,
            quote: quote.clone(),
            quality_seconds,
        });
    }
    let mut provenance = provenance(&loaded, &run, &llm)?;
    if let (Some(q), Some(layer)) = (
        &quote,
        provenance.get_mut("llm").and_then(|l| l.as_object_mut()),
    ) {
        layer.insert("quote".into(), serde_json::to_value(q)?);
    }
    if let Some(unfinished) = unfinished_provenance(&run)? {
        // Published with --allow-partial: the version says what it is missing.
        provenance.insert("unfinished".into(), unfinished);
    }
    if let Some(window) = fetch_window(&tables)? {
        provenance.insert("fetch_window".into(), window);
    }
    let exports = snapshot_exports(plan, &run);
    let request = PublishRequest {
        snapshots_dir: ws.snapshots_dir.clone(),
        dataset: section.dataset.clone(),
        title: section.title.clone(),
        description: section.description.clone(),
        license: section.license.clone(),
        pipeline: plan.name().to_string(),
        config_hash: plan.file.config_hash(),
        code_version: code_version(&ws.root),
        tables,
        exports,
        stages: run.summary.clone(),
        provenance,
        checks: checks.clone(),
        quality: Some(quality),
    };
    noisebench_core::memory::release();
    tracing::info!(pipeline = plan.name(), "publishing");
    let outcome = noisebench_snapshot::publish(&request, options)?;
    // The report goes beside the version, never inside it (published versions are immutable);
    // rewriting it on an unchanged build picks up evaluations run since. The version is
    // published by now, so a report that cannot be written is a warning, not a failed build.
    let (PublishOutcome::Published { dir, .. } | PublishOutcome::Unchanged { dir, .. }) = &outcome;
    report_beside(dir, &ws.root.join("evals"));
    Ok(Built {
        run,
        llm,
        outcome: Some(outcome),
        withheld: None,
        checks,
        report_track,
        quote,
        quality_seconds,
    })
}

/// A build that calls a model with a price is quoted first (`noisebench quote`, without a
/// sample; a refresh only under a budget, since the quote reruns its live stages): the quote is
/// kept in the work folder, and with `llm.max_cost` (or `--max-cost`) a quote above the budget
/// stops the build before any request, printing the quote. The mid-run stop stays as the
/// backstop for a projection that was wrong.
fn quote_first(
    ws: &Workspace,
    pipeline: &str,
    loaded: &Loaded,
    force: bool,
) -> Result<Option<crate::Quote>> {
    let config = loaded.layers.llm.config();
    let priced =
        crate::quote::priced(config) && config.cache.mode != noisebench_llm::CacheMode::CacheOnly;
    if !ws.quote || !priced || (ws.refresh && config.max_cost.is_none()) {
        return Ok(None);
    }
    let quote = crate::quote(ws, pipeline, 0, force)?;
    quote.save(&ws.work_dir)?;
    if let Some(max) = config.max_cost
        && quote.total.usd > max
    {
        anyhow::bail!(
            "the quote ({:.4} USD) is above the budget (llm.max_cost / --max-cost = {max:.4} USD): nothing was run and no request sent\n{}",
            quote.total.usd,
            quote.render()
        );
    }
    Ok(Some(quote))
}

/// The call records of the stages that ran (not the ones skipped as up to date).
fn calls_of_stages_that_ran(run: &RunResult) -> Result<Vec<LlmCall>> {
    let mut calls = Vec::new();
    for s in run.summary.iter().filter(|s| s.status != "skipped") {
        let path = run.run_dir.join(&s.id).join(noisebench_pipeline::LLM_CALLS);
        if path.is_file() {
            calls.extend(table_io::read_rows::<LlmCall>(&path)?);
        }
    }
    Ok(calls)
}

/// The report of the published version at `dir`, written beside it with the evaluation results
/// under `evals`; a report that cannot be written is a warning (the version is published).
fn report_beside(dir: &Path, evals: &Path) {
    let written = noisebench_core::timed("publishing: report written", || {
        crate::write_report(dir, Some(evals), None)
    });
    if let Err(e) = written {
        tracing::warn!("{}: report not written: {e:#}", dir.display());
    }
}

/// The table checks over what is to be published, and against the last version of the dataset
/// `dataset` in the workspace's snapshots (`parent_checks`); a table whose stage left items to retry is
/// excused what those items would have given.
fn checks_before_publishing(
    plan: &Plan,
    tables: &[SourceTable],
    partial: &BTreeMap<String, u64>,
    ws: &Workspace,
    dataset: &str,
) -> Result<Vec<CheckResult>> {
    tracing::info!(pipeline = plan.name(), "checking the tables to publish");
    noisebench_core::timed("checks before publishing", || {
        let published: Vec<PublishedTable> = tables
            .iter()
            .map(|t| PublishedTable {
                name: t.name.clone(),
                kind: t.kind,
                path: t.path.clone(),
            })
            .collect();
        let mut before = check_published(&published, &plan.checks);
        for result in &mut before {
            let retry = partial.get(&result.table).copied().unwrap_or(0);
            noisebench_pipeline::excuse_partial(std::slice::from_mut(result), retry);
        }
        before.extend(parent_checks(&ws.snapshots_dir, dataset, tables)?);
        Ok(before)
    })
}

/// The stages left with items to retry, by stage: their count and reasons; `None` when none.
fn unfinished_provenance(run: &RunResult) -> Result<Option<serde_json::Value>> {
    let unfinished: BTreeMap<&str, serde_json::Value> = run
        .unfinished()
        .into_iter()
        .map(|r| {
            let reasons = serde_json::to_value(r.retry_reasons()).unwrap_or_default();
            (
                r.id.as_str(),
                serde_json::json!({ "items": r.retry_items, "reasons": reasons }),
            )
        })
        .collect();
    if unfinished.is_empty() {
        return Ok(None);
    }
    Ok(Some(serde_json::to_value(unfinished)?))
}

/// A run stopped by a check, as [`Stopped`] with what the run did; any other error as it is.
fn stopped(e: anyhow::Error, loaded: &Loaded) -> anyhow::Error {
    match e.downcast::<noisebench_pipeline::RunError>() {
        Ok(noisebench_pipeline::RunError::Checks {
            stage,
            failures,
            results,
            summary,
            run_dir,
        }) => {
            let mut report = noisebench_pipeline::render_summary(&summary, &run_dir);
            let mut llm = LlmTotals::of_run(&run_dir).unwrap_or_default();
            llm.constant_answers = loaded.layers.llm.constant_answers();
            report.push_str(&llm.render());
            report.push('\n');
            if let Some(line) = report_track_line(&loaded.plan, &summary) {
                report.push_str(&line);
                report.push('\n');
            }
            let error = noisebench_pipeline::RunError::Checks {
                stage,
                failures,
                results,
                summary,
                run_dir,
            };
            anyhow::Error::new(Stopped { report, error })
        }
        Ok(other) => anyhow::Error::new(other),
        Err(e) => e,
    }
}

/// One line when the pipeline has a report track (stages up to the last one writing questions)
/// and it produced no question although its first stages read something: where it ran dry.
/// `None` when it produced questions or the pipeline has no such track.
pub(crate) fn report_track_line(
    plan: &Plan,
    summary: &[noisebench_core::StageSummary],
) -> Option<String> {
    let last = plan.stages.iter().rev().find(|s| {
        s.stage
            .outputs()
            .iter()
            .any(|o| o.kind == TableKind::Questions)
    })?;
    let track = plan.upstream_of(&last.id).ok()?;
    let of = |id: &str| summary.iter().find(|s| s.id == id);
    let sources: i64 = track
        .iter()
        .filter(|s| s.inputs.is_empty())
        .filter_map(|s| of(&s.id))
        .map(|s| s.items_out)
        .sum();
    if sources == 0 || of(&last.id).is_some_and(|s| s.items_out > 0) {
        return None;
    }
    let dry = track
        .iter()
        .filter_map(|s| of(&s.id))
        .find(|s| s.items_in > 0 && s.items_out == 0);
    let at = match dry {
        Some(s) => {
            let reasons: Vec<String> = s
                .drop_reasons
                .iter()
                .map(|(r, n)| format!("{r}={n}"))
                .collect();
            format!(
                ": it ran dry at `{}` ({} items in, none out{})",
                s.id,
                s.items_in,
                if reasons.is_empty() {
                    String::new()
                } else {
                    format!("; {}", reasons.join(" "))
                }
            )
        }
        None => String::new(),
    };
    Some(format!(
        "the report track produced nothing: no questions from {sources} source items{at}"
    ))
}

/// The side files stages declared as exports (the RAGuard CSVs, CONF-FACT's JSON), published
/// inside the version so that whoever downloads it gets what the papers' loaders read. A format
/// written by two stages goes under `<format>-<stage>`.
fn snapshot_exports(plan: &Plan, run: &RunResult) -> Vec<SourceExport> {
    let mut exports: Vec<SourceExport> = Vec::new();
    for stage in &plan.stages {
        let Some(record) = run.records.get(&stage.id) else {
            continue;
        };
        let dir = run.run_dir.join(&stage.id);
        let mut by_format: BTreeMap<&str, Vec<PathBuf>> = BTreeMap::new();
        for (name, file) in &record.files {
            if let Some(format) = &file.export {
                by_format.entry(format).or_default().push(dir.join(name));
            }
        }
        for (format, files) in by_format {
            exports.push(SourceExport {
                format: format.into(),
                stage: stage.id.clone(),
                folder: format.into(),
                files,
            });
        }
    }
    for i in 0..exports.len() {
        if exports
            .iter()
            .filter(|e| e.format == exports[i].format)
            .count()
            > 1
        {
            exports[i].folder = format!("{}-{}", exports[i].format, exports[i].stage);
        }
    }
    exports
}

/// What the manifest and the dataset card say about how the tables were made: the LLM layer
/// (backend, each task's model and prompt version, embedder; calls, tokens, cache hits, cost), the
/// web layer's mode, and each stage's facts (`facts:<stage>`: a labels stage's label distribution,
/// models, share of human labels, agreement).
fn provenance(
    loaded: &Loaded,
    run: &RunResult,
    llm: &LlmTotals,
) -> Result<BTreeMap<String, serde_json::Value>> {
    let mut p = BTreeMap::new();
    let mut layer = loaded.layers.llm.fingerprint();
    if let Some(obj) = layer.as_object_mut() {
        // Only the tasks the run used.
        if let Some(tasks) = obj.get_mut("tasks").and_then(|t| t.as_object_mut()) {
            tasks.retain(|task, _| llm.tasks.contains_key(task));
        }
        obj.insert("run".into(), serde_json::to_value(llm)?);
    }
    p.insert("llm".into(), layer);
    p.insert(
        "web".into(),
        serde_json::json!({ "mode": loaded.layers.web.config().mode }),
    );
    // Stages reading sources that change on their own: Croissant's `isLiveDataset`.
    let live: Vec<&str> = loaded
        .plan
        .stages
        .iter()
        .filter(|s| s.stage.reads_live_sources(&s.config))
        .map(|s| s.id.as_str())
        .collect();
    p.insert("live_sources".into(), serde_json::json!(live));
    // Every stage's facts, one generic path: the card renders them from here.
    for stage in &loaded.plan.stages {
        if let Some(facts) = run.records.get(&stage.id).and_then(|r| r.facts.as_ref()) {
            p.insert(format!("facts:{}", stage.id), serde_json::to_value(facts)?);
        }
    }
    Ok(p)
}

/// When the published rows were fetched: the earliest and latest `fetched_at` of every published
/// table that has the column (claims and documents; time-sensitive corpora are only as fresh as
/// this window). `None` when no published row was fetched (imported files only).
fn fetch_window(tables: &[SourceTable]) -> Result<Option<serde_json::Value>> {
    let mut window = serde_json::Map::new();
    for t in tables {
        if !t
            .kind
            .schema()
            .columns
            .iter()
            .any(|c| c.name == "fetched_at")
        {
            continue;
        }
        let rows = table_io::read_table(&t.path, t.kind)?;
        let times: Vec<String> = rows
            .json_rows()
            .filter_map(|r| r["fetched_at"].as_str().map(String::from))
            .collect();
        if let (Some(first), Some(last)) = (times.iter().min(), times.iter().max()) {
            window.insert(
                t.name.clone(),
                serde_json::json!({ "first": first, "last": last, "rows": times.len() }),
            );
        }
    }
    Ok((!window.is_empty()).then_some(serde_json::Value::Object(window)))
}

/// The crate version and, when the root is a git checkout, its commit.
pub fn code_version(root: &Path) -> String {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match commit {
        Some(c) if !c.is_empty() => format!("{} ({c})", env!("CARGO_PKG_VERSION")),
        _ => env!("CARGO_PKG_VERSION").to_string(),
    }
}
