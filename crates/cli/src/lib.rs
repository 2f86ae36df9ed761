//! The `noisebench` command line: registers every stage with the runner and wires the commands
//! (`build-snapshot`, `run`, `verify`, `diff`, `inspect`, `schemas`) to the library crates.
//!
//! What this crate is not: it holds no stage logic. Its library half exists so the end-to-end tests
//! can drive the same code paths as the binary.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use noisebench_core::{Progress, TableKind};
use noisebench_pipeline::{Plan, Registry, RunOptions, RunResult, Runner, table_io};
use noisebench_snapshot::{PublishOptions, PublishOutcome, PublishRequest, SourceTable};

/// Every stage kind the binary knows.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register(Arc::new(noisebench_claims::ImportStage));
    registry
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
}

impl Workspace {
    pub fn at(root: &Path, progress: Arc<dyn Progress>) -> Self {
        Self {
            root: root.into(),
            work_dir: root.join("work"),
            snapshots_dir: root.join("snapshots"),
            progress,
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

    pub fn plan(&self, pipeline: &str) -> Result<Plan> {
        let path = self.pipeline_path(pipeline);
        Plan::load(&path, &self.root, &registry())
            .with_context(|| format!("pipeline {}", path.display()))
    }

    pub fn run(&self, plan: &Plan, only: Option<String>, force: bool) -> Result<RunResult> {
        let mut options = RunOptions::new(&self.work_dir);
        options.only = only;
        options.force = force;
        options.progress = self.progress.clone();
        Ok(Runner::new(plan, options).run()?)
    }
}

/// The result of `build-snapshot`.
pub struct Built {
    pub run: RunResult,
    pub outcome: Option<PublishOutcome>,
}

/// Run the whole pipeline, then publish its `[snapshot]` tables.
pub fn build_snapshot(
    ws: &Workspace,
    pipeline: &str,
    force: bool,
    options: &PublishOptions,
) -> Result<Built> {
    let plan = ws.plan(pipeline)?;
    let run = ws.run(&plan, None, force)?;
    let Some(section) = &plan.file.snapshot else {
        return Ok(Built { run, outcome: None });
    };
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
        stages: run.summary.clone(),
        provenance: Default::default(),
    };
    let outcome = noisebench_snapshot::publish(&request, options)?;
    Ok(Built {
        run,
        outcome: Some(outcome),
    })
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
    let plan = ws.plan(pipeline)?;
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
        let df = table_io::read_frame(&path)?;
        out.push_str(&format!("{}\n", df.head(Some(rows))));
        if name == "drops" && file.rows > 0 {
            let drops = table_io::read_table(&path, TableKind::Drops)?;
            if let noisebench_core::Rows::Drops(drops) = drops {
                for d in drops.iter().take(rows.max(20)) {
                    out.push_str(&format!("  {}  {}  {}\n", d.item, d.reason, d.detail));
                }
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
