//! Where a run reads and writes, loading and checking a pipeline, and running it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use noisebench_core::Progress;
use noisebench_core::Shard;
use noisebench_pipeline::{MergeCheck, PipelineFile, Plan, RunOptions, RunResult, Runner};

use crate::{Layers, LlmOverrides, registry};

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
    // Missing keys do not stop the description: they are named, all of them, after it.
    let (loaded, missing) = ws.load_with(pipeline, true)?;
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
        web_use(&loaded)?
    ));
    if let Some(snapshot) = &plan.file.snapshot {
        out.push_str(&format!(
            "snapshot: snapshots/{}/ <- {}\n",
            snapshot.dataset,
            snapshot.tables.join(", ")
        ));
    }
    if let Some(hub) = crate::hub::configured_hub(&ws.pipeline_path(pipeline))? {
        out.push_str(&crate::hub::describe(&hub));
    }
    if !missing.is_empty() {
        return Err(crate::keys::MissingKeys {
            missing,
            plan: Some(out),
        }
        .into());
    }
    Ok(out)
}

/// The web layer as the run will use it: its mode, or `not used` when it is live and no stage
/// reads a live source (the `[web]` default in a pipeline that fetches nothing).
fn web_use(loaded: &Loaded) -> Result<String> {
    let mode = serde_json::to_value(loaded.layers.web.config().mode)?;
    let mode = mode.as_str().unwrap_or("?");
    let live = loaded
        .plan
        .stages
        .iter()
        .any(|s| s.stage.reads_live_sources(&s.config));
    Ok(if mode == "live" && !live {
        "not used (no stage reads a live source)".into()
    } else {
        mode.into()
    })
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
    /// `--allow-degraded`: go on past a failed gate or table check and publish (the card and
    /// the manifest list what failed); without it such a build stops and publishes nothing.
    pub allow_degraded: bool,
    /// `--remote-work`: the work folder shared through object storage (pulled before stages
    /// run, pushed after; see `remote_work`).
    pub remote_work: Option<crate::remote_work::RemoteWork>,
    /// Ask each model of the pipeline its tasks' small examples before a run, and stop the
    /// run when one fails ([`Workspace::llm_preflight`]). The command line turns it on for
    /// every run (`--skip-preflight`: off); [`Workspace::at`] leaves it off, for library
    /// callers whose scripted models answer only what their test asks.
    pub preflight: bool,
    /// Quote a build with a priced model before it runs, refusing one whose quote is above
    /// `max_cost` (`build_snapshot`). The command line turns it on (`--skip-quote`: off);
    /// [`Workspace::at`] leaves it off, for library callers.
    pub quote: bool,
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
            allow_degraded: false,
            remote_work: None,
            preflight: false,
            quote: false,
        }
    }

    /// The LLM preflight of a loaded pipeline ([`noisebench_llm::Llm::preflight`]): every task
    /// its stages declared, asked of its model. `Ok(None)` when nothing is asked (the offline
    /// backend, cache-only answers).
    pub fn llm_preflight(
        &self,
        loaded: &Loaded,
    ) -> Result<Option<noisebench_llm::PreflightReport>> {
        let llm = &loaded.layers.llm;
        let tasks = llm.declared_tasks();
        let report = llm
            .preflight(&tasks)
            .map_err(|e| anyhow::anyhow!("LLM preflight: {e}"))?;
        Ok(report.skipped.is_none().then_some(report))
    }

    /// Before a run that calls a model: the preflight, printed to stderr; a model that fails it
    /// stops the run before anything is spent, with the report and what to try.
    fn preflight_or_stop(&self, loaded: &Loaded) -> Result<()> {
        if !self.preflight {
            return Ok(());
        }
        let Some(report) = self.llm_preflight(loaded)? else {
            return Ok(());
        };
        if report.failed() {
            anyhow::bail!(
                "the LLM preflight failed, nothing was run (skip it with --skip-preflight):\n{report}"
            );
        }
        eprint!("{report}");
        Ok(())
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
        Ok(self.load_with(pipeline, false)?.0)
    }

    /// [`Self::load`], first checking every key variable the pipeline names: an unset one
    /// stops it, all of them named ([`crate::keys::MissingKeys`]), unless `missing_ok` (for
    /// `check`, which sends nothing): then they are returned and the models lacking a key are
    /// loaded without one.
    fn load_with(
        &self,
        pipeline: &str,
        missing_ok: bool,
    ) -> Result<(Loaded, Vec<crate::keys::MissingKey>)> {
        let path = self.pipeline_path(pipeline);
        let context = || format!("pipeline {}", path.display());
        let mut file = PipelineFile::load(&path).with_context(context)?;
        let missing = crate::keys::missing_keys(&file, &self.root).with_context(context)?;
        if !missing.is_empty() && !missing_ok {
            return Err(crate::keys::MissingKeys {
                missing,
                plan: None,
            })
            .with_context(context);
        }
        crate::keys::without_missing_llm_keys(&mut file, &missing);
        // A `[quality]` table that does not parse stops the run before any work, not at publishing.
        let quality = noisebench_quality::QualityConfig::from_table(file.quality.as_ref())
            .with_context(context)?;
        // A merge's archive-only web layer reads the archive as it opens: pull it first.
        if let Some(remote) = &self.remote_work {
            let moved = remote.pull_archive(&file, &self.root)?;
            if moved.archive_objects + moved.archive_lines > 0 {
                eprintln!("remote work: {}", moved.render("pulled"));
            }
        }
        let layers = Layers::of(&file, &self.root, &self.llm_overrides).with_context(context)?;
        let plan = Plan::new(file, &self.root, &registry(&layers)).with_context(context)?;
        // The quality card asks the questions closed-book before publishing: its tasks are the
        // pipeline's like the stages' (templates checked now, `task_models` may name them).
        if plan.file.snapshot.is_some()
            && quality.closed_book.enabled
            && !noisebench_eval::closed_book::offline(&layers.llm)
        {
            noisebench_llm::StageTasks::new(
                layers.llm.clone(),
                &noisebench_eval::closed_book::TASKS[..],
            )
            .declare()
            .map_err(|e| anyhow::anyhow!("[quality.closed_book]: {e}"))
            .with_context(context)?;
        }
        // The stages declared their LLM tasks while the plan checked them; a task model for a
        // task none of them uses is a typo or a leftover.
        layers
            .llm
            .check_task_models()
            .map_err(|e| anyhow::anyhow!("[llm]: {e}"))
            .with_context(context)?;
        Ok((Loaded { plan, layers }, missing))
    }

    pub fn run(&self, loaded: &Loaded, only: Option<String>, force: bool) -> Result<RunResult> {
        self.preflight_or_stop(loaded)?;
        let folders = match &self.remote_work {
            Some(_) => crate::remote_work::stages_of(&loaded.plan, only.as_deref())?,
            None => Vec::new(),
        };
        self.with_remote(loaded, &folders, &folders, || {
            Ok(Runner::new(&loaded.plan, self.options(loaded, only, force)).run()?)
        })
    }

    /// With `--remote-work`: pull `pull` (stage folders or shard parts of the pipeline), run
    /// `f`, then push `push` and the web archive, also when `f` failed (what finished is kept).
    fn with_remote<T>(
        &self,
        loaded: &Loaded,
        pull: &[String],
        push: &[String],
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let Some(remote) = &self.remote_work else {
            return f();
        };
        let name = loaded.plan.name();
        let pulled = remote.pull(&self.work_dir, name, pull)?;
        eprintln!("remote work: {}", pulled.render("pulled"));
        let result = f();
        let pushed = remote.push(&self.work_dir, name, push).and_then(|mut m| {
            let a = remote.push_archive(&loaded.plan.file, &self.root)?;
            m.archive_objects += a.archive_objects;
            m.archive_lines += a.archive_lines;
            m.bytes += a.bytes;
            m.seconds += a.seconds;
            Ok(m)
        });
        match (result, pushed) {
            (Ok(v), Ok(m)) => {
                eprintln!("remote work: {}", m.render("pushed"));
                Ok(v)
            }
            (Ok(_), Err(e)) => Err(e.context(format!(
                "the command finished but pushing its work to {} failed; run it again to push",
                remote.location
            ))),
            (Err(e), pushed) => {
                if let Err(p) = pushed {
                    tracing::warn!("pushing to the remote work folder failed too: {p:#}");
                }
                Err(e)
            }
        }
    }

    /// `run STAGE --shard i/n`: the stage's share of the items, into
    /// `work/<pipeline>/<stage>/shards/<i>-of-<n>/`. Upstream stages must be up to date.
    pub fn run_shard(
        &self,
        loaded: &Loaded,
        stage: &str,
        shard: Shard,
        force: bool,
    ) -> Result<RunResult> {
        let mut options = self.options(loaded, Some(stage.to_string()), force);
        options.shard = Some(shard);
        let part = vec![crate::remote_work::shard_folder(stage, shard)];
        let mut pull = self.remote_upstream(loaded, stage)?;
        pull.extend(part.clone());
        self.with_remote(loaded, &pull, &part, || {
            Ok(Runner::new(&loaded.plan, options).run()?)
        })
    }

    /// With `--remote-work`: the stages `stage` needs (itself not included).
    fn remote_upstream(&self, loaded: &Loaded, stage: &str) -> Result<Vec<String>> {
        if self.remote_work.is_none() {
            return Ok(Vec::new());
        }
        let mut ids = crate::remote_work::stages_of(&loaded.plan, Some(stage))?;
        ids.retain(|id| id != stage);
        Ok(ids)
    }

    /// `merge STAGE --shards n`: check that the `n` parts are complete, run the stage over its
    /// whole input with every LLM answer read back from the parts' work (`loaded` must have been
    /// loaded with a cache-only LLM layer: an answer no part made fails its item, it is not
    /// asked again), then check the parts' rows against the merged tables.
    pub fn merge(
        &self,
        loaded: &Loaded,
        stage: &str,
        count: u32,
    ) -> Result<(RunResult, MergeCheck)> {
        let mut pull = self.remote_upstream(loaded, stage)?;
        if self.remote_work.is_some() {
            pull.extend(
                (0..count)
                    .map(|index| crate::remote_work::shard_folder(stage, Shard { index, count })),
            );
        }
        self.with_remote(loaded, &pull, &[stage.to_string()], || {
            self.merge_here(loaded, stage, count)
        })
    }

    fn merge_here(
        &self,
        loaded: &Loaded,
        stage: &str,
        count: u32,
    ) -> Result<(RunResult, MergeCheck)> {
        let options = self.options(loaded, Some(stage.to_string()), false);
        let runner = Runner::new(&loaded.plan, options);
        let parts = runner.shard_parts(count)?;
        let result = runner.run()?;
        if let Some(message) = result.unfinished_message() {
            anyhow::bail!(
                "the merge found items no shard answered: {message}; rerun the shards of `{stage}` (their finished answers are cached), then merge again"
            );
        }
        let merged = result
            .records
            .get(stage)
            .context("the merged stage has no record")?;
        let check = runner.check_parts(&parts, merged)?;
        if !check.differing.is_empty() {
            anyhow::bail!(
                "{} rows of the parts differ from the merged tables (first: {}): the stage gave an item different outputs in a shard and in the merge",
                check.differing.len(),
                check
                    .differing
                    .iter()
                    .take(5)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        Ok((result, check))
    }

    fn options(&self, loaded: &Loaded, only: Option<String>, force: bool) -> RunOptions {
        let mut options = RunOptions::new(&self.work_dir);
        options.only = only;
        options.force = force;
        options.refresh = self.refresh;
        options.allow_degraded = self.allow_degraded;
        options.progress = self.progress.clone();
        options.call_log = Some(Arc::new(loaded.layers.llm.clone()));
        options
    }
}
