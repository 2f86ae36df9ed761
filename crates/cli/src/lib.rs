//! The `noisebench` command line: registers every stage with the runner and wires the commands
//! (`build-snapshot`, `run`, `verify`, `diff`, `inspect`, `export`, `schemas`) to the library
//! crates.
//!
//! It builds one [`Llm`] from the pipeline file's `[llm]` table and one [`Web`] from its `[web]`
//! table and hands them to the stages that need them, so every stage of a run shares one cache,
//! one set of rate limits, one budget and one call log.
//!
//! What this crate is not: it holds no stage logic. Its library half exists so the end-to-end tests
//! can drive the same code paths as the binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use noisebench_core::{
    Claim, ClaimDocumentLabel, Document, DropRecord, LlmCall, Progress, Query, TableKind,
};
use noisebench_llm::Llm;
use noisebench_pipeline::{PipelineFile, Plan, Registry, RunOptions, RunResult, Runner, table_io};
use noisebench_snapshot::{
    PublishOptions, PublishOutcome, PublishRequest, SourceExport, SourceTable,
};
use noisebench_web::Web;

/// Where a live run archives fetched responses when `[web] archive_dir` is not set.
pub const DEFAULT_ARCHIVE_DIR: &str = "work/archive";

/// The layers a pipeline's stages share, built from its `[llm]` and `[web]` tables.
#[derive(Clone)]
pub struct Layers {
    pub llm: Llm,
    pub web: Arc<Web>,
}

/// Command-line overrides of the `[llm]` table.
#[derive(Debug, Clone, Default)]
pub struct LlmOverrides {
    /// `--max-cost`: stop issuing new calls once the estimated cost reaches this (USD).
    pub max_cost: Option<f64>,
    /// `--cache-only`: answer only from the LLM cache; a miss fails the item (reproducibility).
    pub cache_only: bool,
}

impl Layers {
    /// Build the layers of a pipeline file. Errors name the table and field.
    pub fn of(file: &PipelineFile, root: &Path, overrides: &LlmOverrides) -> Result<Layers> {
        let mut llm_table = match &file.llm {
            Some(t) => serde_json::to_value(t).context("[llm]")?,
            None => serde_json::Value::Object(Default::default()),
        };
        if let Some(obj) = llm_table.as_object_mut() {
            if let Some(max) = overrides.max_cost {
                obj.insert("max_cost".into(), serde_json::json!(max));
            }
            if overrides.cache_only {
                let cache = obj.entry("cache").or_insert_with(|| serde_json::json!({}));
                if let Some(cache) = cache.as_object_mut() {
                    cache.insert("mode".into(), serde_json::json!("cache-only"));
                }
            }
        }
        let llm = Llm::from_value(&llm_table, root).map_err(|e| anyhow::anyhow!("[llm]: {e}"))?;
        let mut web_table = match &file.web {
            Some(t) => serde_json::to_value(t).context("[web]")?,
            None => serde_json::Value::Object(Default::default()),
        };
        // A live run keeps every response it fetched (DESIGN's work/archive/) unless the file
        // says where else; replay never fetches.
        if let Some(obj) = web_table.as_object_mut()
            && !obj.contains_key("archive_dir")
            && obj.get("mode").and_then(|m| m.as_str()) != Some("replay")
        {
            obj.insert("archive_dir".into(), serde_json::json!(DEFAULT_ARCHIVE_DIR));
        }
        let web = Web::from_value(&web_table, root).map_err(|e| anyhow::anyhow!("[web]: {e}"))?;
        Ok(Layers {
            llm,
            web: Arc::new(web),
        })
    }
}

/// Every stage kind the binary knows, wired to the pipeline's layers.
pub fn registry(layers: &Layers) -> Registry {
    let mut registry = Registry::new();
    registry
        .register(Arc::new(noisebench_claims::ImportStage))
        .register(Arc::new(noisebench_claims::ScrapeStage::new(
            layers.web.clone(),
        )))
        .register(Arc::new(noisebench_search::QueriesStage::new(
            layers.llm.clone(),
        )))
        .register(Arc::new(noisebench_search::SearchStage::new(
            layers.web.clone(),
        )))
        .register(Arc::new(noisebench_search::DocumentsStage::new(
            layers.web.clone(),
        )))
        .register(Arc::new(noisebench_label::LabelStage::new(
            layers.llm.clone(),
        )))
        .register(Arc::new(noisebench_label::ExportRaguardStage))
        .register(Arc::new(noisebench_label::ExportConfactStage))
        .register(Arc::new(noisebench_chunk::ReportsStage))
        .register(Arc::new(noisebench_chunk::ChunksStage));
    registry
}

/// A checked pipeline with the layers its stages use.
pub struct Loaded {
    pub plan: Plan,
    pub layers: Layers,
}

/// `check`: load and check a pipeline (the file, `[llm]`, `[web]`, every stage's configuration
/// and wiring, the snapshot tables) without running anything, and describe the plan: stages in
/// the order they run, their kinds, inputs, and whether they read live sources; the LLM backend
/// and the task models.
pub fn check(ws: &Workspace, pipeline: &str) -> Result<String> {
    let loaded = ws.load(pipeline)?;
    let plan = &loaded.plan;
    let mut out = format!(
        "pipeline `{}`: {} stages, configuration valid\n",
        plan.name(),
        plan.stages.len()
    );
    for stage in &plan.stages {
        let inputs: Vec<String> = stage
            .inputs
            .iter()
            .map(|(role, t)| format!("{role} <- {}.{}", t.stage, t.table))
            .collect();
        let live = if stage.stage.reads_live_sources(&stage.config) {
            "  [live: `refresh` reruns it]"
        } else {
            ""
        };
        out.push_str(&format!(
            "  {:<18} {:<16} {}{live}\n",
            stage.id,
            stage.stage.kind(),
            if inputs.is_empty() {
                "(no inputs)".to_string()
            } else {
                inputs.join(", ")
            }
        ));
    }
    let llm = loaded.layers.llm.fingerprint();
    let models: std::collections::BTreeSet<String> = llm["tasks"]
        .as_object()
        .map(|t| {
            t.values()
                .filter_map(|v| v["model"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    out.push_str(&format!(
        "llm: backend {}, models {}, embeddings {}\nweb: {}\n",
        llm["backend"].as_str().unwrap_or("?"),
        models.into_iter().collect::<Vec<_>>().join(", "),
        llm["embedder"].as_str().unwrap_or("?"),
        serde_json::to_value(loaded.layers.web.config().mode)?
            .as_str()
            .unwrap_or("?")
    ));
    if let Some(snapshot) = &plan.file.snapshot {
        out.push_str(&format!(
            "snapshot: snapshots/{}/ <- {}\n",
            snapshot.dataset,
            snapshot.tables.join(", ")
        ));
    }
    Ok(out)
}

/// Where a run reads and writes.
#[derive(Clone)]
pub struct Workspace {
    /// Relative paths in pipeline files resolve here (the repository root).
    pub root: PathBuf,
    /// `work/`
    pub work_dir: PathBuf,
    /// `snapshots/`
    pub snapshots_dir: PathBuf,
    pub progress: Arc<dyn Progress>,
    pub llm_overrides: LlmOverrides,
    /// `refresh`: rerun the stages that read live sources even when unchanged.
    pub refresh: bool,
    /// `--allow-partial`: publish even when items failed for a transient cause (the manifest
    /// says how many); without it such a build publishes nothing.
    pub allow_partial: bool,
}

impl Workspace {
    pub fn at(root: &Path, progress: Arc<dyn Progress>) -> Self {
        Self {
            root: root.into(),
            work_dir: root.join("work"),
            snapshots_dir: root.join("snapshots"),
            progress,
            llm_overrides: LlmOverrides::default(),
            refresh: false,
            allow_partial: false,
        }
    }

    /// `demo` -> `pipelines/demo.toml`; a path is taken as is.
    pub fn pipeline_path(&self, name_or_path: &str) -> PathBuf {
        let as_path = PathBuf::from(name_or_path);
        if name_or_path.ends_with(".toml") || as_path.components().count() > 1 {
            if as_path.is_absolute() {
                as_path
            } else {
                self.root.join(as_path)
            }
        } else {
            self.root
                .join("pipelines")
                .join(format!("{name_or_path}.toml"))
        }
    }

    /// Load and check a pipeline: its file, its `[llm]` and `[web]` layers, every stage's
    /// configuration and wiring. Nothing runs.
    pub fn load(&self, pipeline: &str) -> Result<Loaded> {
        let path = self.pipeline_path(pipeline);
        let context = || format!("pipeline {}", path.display());
        let file = PipelineFile::load(&path).with_context(context)?;
        let layers = Layers::of(&file, &self.root, &self.llm_overrides).with_context(context)?;
        let plan = Plan::new(file, &self.root, &registry(&layers)).with_context(context)?;
        // The stages declared their LLM tasks while the plan checked them; a task model for a
        // task none of them uses is a typo or a leftover.
        layers
            .llm
            .check_task_models()
            .map_err(|e| anyhow::anyhow!("[llm]: {e}"))
            .with_context(context)?;
        Ok(Loaded { plan, layers })
    }

    pub fn run(&self, loaded: &Loaded, only: Option<String>, force: bool) -> Result<RunResult> {
        let mut options = RunOptions::new(&self.work_dir);
        options.only = only;
        options.force = force;
        options.refresh = self.refresh;
        options.progress = self.progress.clone();
        options.call_log = Some(Arc::new(loaded.layers.llm.clone()));
        Ok(Runner::new(&loaded.plan, options).run()?)
    }
}

/// The result of `build-snapshot`.
pub struct Built {
    pub run: RunResult,
    /// Totals over the run's call log (every stage's last run).
    pub llm: LlmTotals,
    pub outcome: Option<PublishOutcome>,
    /// Why nothing was published although the pipeline has a `[snapshot]` section: items failed
    /// for a transient cause and `allow_partial` is off. The caller exits non-zero with it.
    pub withheld: Option<String>,
}

/// Totals over a call log.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct LlmTotals {
    pub calls: u64,
    pub cache_hits: u64,
    pub failures: u64,
    /// Tokens of calls sent (cache hits excluded).
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
    /// Calls per `backend:model`.
    pub models: BTreeMap<String, u64>,
    /// Calls per task.
    pub tasks: BTreeMap<String, u64>,
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
            }
            t.cost_usd += c.cost_usd.unwrap_or(0.0);
            let model = if c.model.is_empty() {
                c.backend.clone()
            } else {
                format!("{}:{}", c.backend, c.model)
            };
            *t.models.entry(model).or_default() += 1;
            *t.tasks.entry(c.task.clone()).or_default() += 1;
        }
        t
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

    /// One line for the end of a run.
    pub fn render(&self) -> String {
        format!(
            "LLM calls of the stages' last runs: {} ({} cache hits, {} failed), {} tokens in, {} out sent (cache hits not counted), estimated {:.4} USD",
            self.calls,
            self.cache_hits,
            self.failures,
            self.tokens_in,
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
    let run = ws.run(&loaded, None, force)?;
    let llm = LlmTotals::of_run(&run.run_dir)?;
    let unfinished = run.unfinished_message();
    let Some(section) = &plan.file.snapshot else {
        return Ok(Built {
            withheld: unfinished,
            run,
            llm,
            outcome: None,
        });
    };
    if let Some(message) = &unfinished
        && !ws.allow_partial
    {
        return Ok(Built {
            withheld: Some(format!(
                "not published: {message}, or pass --allow-partial to publish without them"
            )),
            run,
            llm,
            outcome: None,
        });
    }
    let mut tables = Vec::new();
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
    }
    let mut provenance = provenance(&loaded, &run, &llm)?;
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
    if !unfinished.is_empty() {
        // Published with --allow-partial: the version says what it is missing.
        provenance.insert("unfinished".into(), serde_json::to_value(unfinished)?);
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
    };
    let outcome = noisebench_snapshot::publish(&request, options)?;
    Ok(Built {
        run,
        llm,
        outcome: Some(outcome),
        withheld: None,
    })
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

/// A snapshot folder: a version folder as is, or a dataset folder's latest version.
pub fn resolve_snapshot(path: &Path) -> Result<PathBuf> {
    if path.join(noisebench_snapshot::MANIFEST).is_file() {
        return Ok(path.to_path_buf());
    }
    match noisebench_snapshot::latest_version(path) {
        Some(v) => Ok(path.join(v.to_string())),
        None => bail!(
            "{}: neither a snapshot version (no manifest.json) nor a dataset folder with versions",
            path.display()
        ),
    }
}

/// `inspect stage NAME`: schema, row count, first rows and drop reasons of a stage's outputs.
pub fn inspect_stage(ws: &Workspace, pipeline: &str, stage: &str, rows: usize) -> Result<String> {
    let loaded = ws.load(pipeline)?;
    let plan = &loaded.plan;
    let planned = plan
        .stage(stage)
        .with_context(|| format!("no stage `{stage}` in pipeline `{}`", plan.name()))?;
    let dir = ws.work_dir.join(plan.name()).join(stage);
    let record = noisebench_pipeline::runner::read_record(&dir).with_context(|| {
        format!(
            "stage `{stage}` has not run yet ({} has no stage.json)",
            dir.display()
        )
    })?;
    let mut out = format!(
        "stage `{stage}` (kind {}, version {})\nfingerprint {}\nitems in {}, out {}, dropped {}\n",
        planned.stage.kind(),
        record.version,
        record.fingerprint,
        record.items_in,
        record.items_out,
        record.items_dropped
    );
    for (reason, n) in &record.drop_reasons {
        out.push_str(&format!("  dropped {n:>6}  {reason}\n"));
    }
    for (name, file) in &record.tables {
        let path = dir.join(&file.file);
        let kind = TableKind::from_name(&file.kind)
            .with_context(|| format!("unknown kind {}", file.kind))?;
        out.push_str(&format!(
            "\ntable `{name}`: {} rows, {} bytes, sha256 {}\n",
            file.rows, file.bytes, file.sha256
        ));
        for column in kind.schema().columns {
            let null = if column.nullable { "?" } else { "" };
            out.push_str(&format!("  {:<22} {:?}{null}\n", column.name, column.dtype));
        }
        out.push_str(&format!(
            "{}\n",
            table_io::Table::open(&path)?.preview(rows)
        ));
        if name == "drops" && file.rows > 0 {
            let drops: Vec<DropRecord> = table_io::read_rows(&path)?;
            for d in drops.iter().take(rows.max(20)) {
                out.push_str(&format!("  {}  {}  {}\n", d.item, d.reason, d.detail));
            }
        }
    }
    Ok(out)
}

/// Write `schemas/<table>.json` for every table.
pub fn write_schemas(dir: &Path) -> Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    for kind in TableKind::ALL {
        let path = dir.join(format!("{}.json", kind.name()));
        let json = serde_json::to_string_pretty(&kind.schema())? + "\n";
        std::fs::write(&path, json).with_context(|| path.display().to_string())?;
    }
    Ok(TableKind::ALL.len())
}

/// The formats `noisebench export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// RAGuard's `claims.csv` and `documents.csv` (plus id maps back to ours).
    Raguard,
    /// CONF-FACT-style `confact.json`.
    Confact,
}

/// Export a published snapshot (a version folder) into `out`. Reads its `claims`, `documents`
/// and `labels` tables (and `queries` for CONF-FACT's questions), by name or else by kind.
pub fn export_snapshot(
    snapshot: &Path,
    format: ExportFormat,
    out: &Path,
) -> Result<noisebench_label::ExportSummary> {
    let manifest = noisebench_snapshot::Manifest::read(snapshot).map_err(anyhow::Error::msg)?;
    let path_of = |kind: TableKind| {
        manifest
            .tables
            .get(kind.name())
            .or_else(|| manifest.tables.values().find(|e| e.kind == kind.name()))
            .map(|e| snapshot.join(&e.file))
    };
    fn read<T: noisebench_core::TableRow>(path: Option<PathBuf>) -> Result<Option<Vec<T>>> {
        path.map(|p| table_io::read_rows::<T>(&p))
            .transpose()
            .map_err(Into::into)
    }
    let missing = |kind: TableKind| {
        anyhow::anyhow!(
            "{}: the snapshot has no `{}` table (its tables: {})",
            snapshot.display(),
            kind.name(),
            manifest
                .tables
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let claims: Vec<Claim> =
        read(path_of(TableKind::Claims))?.ok_or_else(|| missing(TableKind::Claims))?;
    let documents: Vec<Document> =
        read(path_of(TableKind::Documents))?.ok_or_else(|| missing(TableKind::Documents))?;
    let labels: Vec<ClaimDocumentLabel> =
        read(path_of(TableKind::Labels))?.ok_or_else(|| missing(TableKind::Labels))?;
    let summary = match format {
        ExportFormat::Raguard => {
            noisebench_label::export_raguard(&claims, &documents, &labels, out)?
        }
        ExportFormat::Confact => {
            let queries: Vec<Query> = read(path_of(TableKind::Queries))?.unwrap_or_default();
            std::fs::create_dir_all(out).with_context(|| out.display().to_string())?;
            noisebench_label::export_confact(
                &claims,
                &documents,
                &labels,
                &queries,
                &out.join(noisebench_label::CONFACT_FILE),
            )?
        }
    };
    Ok(summary)
}

/// `inspect claim|document|question|chunk|report ID`: the row itself, then every row of every
/// table of the run that names the id (queries and hits of a claim, the links and labels of a
/// document, drops whose item or detail mentions it), stage by stage in pipeline order. Long
/// strings are cut to `max_chars`; at most `max_rows` rows are shown per table.
pub fn inspect_id(
    ws: &Workspace,
    pipeline: &str,
    kind: TableKind,
    id: &str,
    max_rows: usize,
    max_chars: usize,
) -> Result<String> {
    let loaded = ws.load(pipeline)?;
    let run_dir = ws.work_dir.join(loaded.plan.name());
    let mut found_self = false;
    let mut sections = Vec::new();
    for stage in &loaded.plan.stages {
        let dir = run_dir.join(&stage.id);
        let Some(record) = noisebench_pipeline::runner::read_record(&dir) else {
            continue;
        };
        for (name, file) in &record.tables {
            let table_kind = TableKind::from_name(&file.kind)
                .with_context(|| format!("unknown table kind {}", file.kind))?;
            let rows = table_io::read_table(&dir.join(&file.file), table_kind)?;
            let hits: Vec<serde_json::Value> = rows
                .json_rows()
                .filter(|row| {
                    if table_kind == TableKind::Drops {
                        ["item", "detail"]
                            .iter()
                            .any(|k| row[*k].as_str().is_some_and(|s| s.contains(id)))
                    } else {
                        names(row, id)
                    }
                })
                .collect();
            if hits.is_empty() {
                continue;
            }
            found_self |= table_kind == kind && hits.iter().any(|r| r["id"] == id);
            let mut out = format!(
                "== stage `{}`, table `{name}`: {} row(s)\n",
                stage.id,
                hits.len()
            );
            for row in hits.iter().take(max_rows) {
                out.push_str(&serde_json::to_string_pretty(&cut(row, max_chars))?);
                out.push('\n');
            }
            if hits.len() > max_rows {
                out.push_str(&format!("... {} more\n", hits.len() - max_rows));
            }
            sections.push(out);
        }
    }
    if !found_self {
        bail!(
            "no {} `{id}` in the outputs of pipeline `{}` (has it run? `noisebench build-snapshot {pipeline}`)",
            kind.name(),
            loaded.plan.name()
        );
    }
    Ok(sections.join("\n"))
}

/// Whether a row names `id` in any column (a string equal to it, or a list holding it).
fn names(row: &serde_json::Value, id: &str) -> bool {
    match row {
        serde_json::Value::String(s) => s == id,
        serde_json::Value::Array(items) => items.iter().any(|v| names(v, id)),
        serde_json::Value::Object(map) => map.values().any(|v| names(v, id)),
        _ => false,
    }
}

/// Strings longer than `max` characters cut, with the full length noted.
fn cut(value: &serde_json::Value, max: usize) -> serde_json::Value {
    match value {
        serde_json::Value::String(s) if s.chars().count() > max => {
            let head: String = s.chars().take(max).collect();
            serde_json::Value::String(format!("{head}... ({} chars)", s.chars().count()))
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(|v| cut(v, max)).collect())
        }
        serde_json::Value::Object(map) => {
            serde_json::Value::Object(map.iter().map(|(k, v)| (k.clone(), cut(v, max))).collect())
        }
        other => other.clone(),
    }
}
