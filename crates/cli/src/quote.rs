//! `noisebench quote`: what a build will cost before it has cost anything.
//!
//! The pipeline runs as the build would, in a scratch copy of its work folder, with the LLM
//! layer in quote mode ([`noisebench_llm::Llm::start_quote`]): every request a model would get
//! is rendered exactly, counted with the model's tokenizer and answered by a stand-in; cache
//! hits are free; stages that are up to date are skipped as in the build. What a stage asks is
//! exact when nothing upstream of it was answered by a stand-in, and a projection otherwise
//! (its items come from stand-in answers, whose fan-out may differ from the model's). With
//! `--sample N`, the first N requests of each task go to the model for real (cached, so the
//! build reuses them): their usage gives answer lengths, re-asks and latency, which scale the
//! rest. Without a sample, answers are priced at their `max_tokens` ceiling.
//!
//! The quote is kept in `work/<pipeline>/quote.json`; after a build, [`QuoteVsActual`] sets
//! each stage's quote beside what its calls actually used.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use noisebench_core::LlmCall;
use noisebench_llm::{LlmMode, QuoteCall, QuoteSettings};
use noisebench_pipeline::table_io;
use serde::{Deserialize, Serialize};

use crate::{Loaded, Workspace};

/// Where a quote is kept, in the pipeline's work folder.
pub const QUOTE_FILE: &str = "quote.json";

/// The half-width, as a share, assumed for the calls and input tokens of a projected row: its
/// items come from stand-in answers, so how many there are is not measured.
const FANOUT_SPREAD: f64 = 0.25;

/// One stage and task of a quote.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuoteRow {
    pub stage: String,
    pub task: String,
    /// The model's key in `llm.models` (empty in the total).
    #[serde(default)]
    pub model: String,
    /// Requests the build will send.
    pub calls: u64,
    /// Items the cache already answers (free).
    pub cached_calls: u64,
    /// Requests the sample sent (already paid; the build reads them from the cache).
    pub sampled_calls: u64,
    pub input_tokens: u64,
    /// Of `input_tokens`, those in a prefix an earlier request of the build sends first (at
    /// least 1,024 tokens): what a provider's prompt cache serves, priced at the cached rate.
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// `ceiling` (each answer at its `max_tokens`), `sample` (the sample's mean answer),
    /// `none` (embeddings).
    pub output_basis: String,
    /// USD at the model's price (0 without one; batch mode's discount applied).
    pub usd: f64,
    /// The row's items come from stand-in answers upstream: a projection.
    pub projected: bool,
    /// The range of `usd` the row's uncertainty allows: the sample's spread, an output
    /// ceiling, and for a projection the fan-out spread.
    pub usd_low: f64,
    pub usd_high: f64,
    /// Minutes the model's `rpm`, `tpm` and concurrency allow (with the sample's latency);
    /// `None` when nothing bounds it.
    pub minutes: Option<f64>,
}

/// A whole quote.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Quote {
    pub pipeline: String,
    pub rows: Vec<QuoteRow>,
    pub total: QuoteRow,
    /// USD the sample spent (not part of `total`: the build reads those answers from the cache).
    pub sample_usd: f64,
    /// Stages up to date: the build skips them and asks nothing.
    pub up_to_date: Vec<String>,
    /// What counted each model's tokens.
    pub tokenizers: BTreeMap<String, String>,
    /// Models without a price (their rows cost 0).
    pub unpriced: Vec<String>,
    /// Per task, what a sample of real answers measured (this quote's, else the last quote's
    /// of the pipeline for the same model): what later quotes scale by.
    #[serde(default)]
    pub measured: BTreeMap<String, TaskMeasure>,
}

/// What a task's sampled answers measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskMeasure {
    /// The model's key in `llm.models`.
    pub model: String,
    /// Requests sampled.
    pub calls: u64,
    /// Output tokens per request, and the half-width of its 95% interval as a share.
    pub output_mean: f64,
    pub output_spread: f64,
    /// Billed input tokens over the rendered prompt's count (re-asks and wider budgets make it
    /// above 1).
    pub input_factor: f64,
    /// Milliseconds per request, waiting included.
    pub latency_ms: f64,
    /// The share of the model's answers that gave the stage something (not declined, empty or
    /// failed) over the same share of the stand-in answers to the same requests: what the
    /// items downstream of the task are scaled by.
    #[serde(default = "one")]
    pub keep_ratio: f64,
}

fn one() -> f64 {
    1.0
}

/// Per task, the sample's real answers, as they come.
#[derive(Debug, Default, Clone)]
struct Measured {
    model: String,
    /// Sampled requests whose model answer, and whose stand-in answer, gave something.
    model_produced: u64,
    stand_in_produced: u64,
    /// Output tokens per request.
    out: Vec<f64>,
    billed_in: u64,
    counted_in: u64,
    latency_ms: Vec<f64>,
    usd: f64,
}

impl Measured {
    fn measure(&self) -> TaskMeasure {
        TaskMeasure {
            model: self.model.clone(),
            calls: self.out.len() as u64,
            output_mean: mean(&self.out),
            output_spread: relative_ci(&self.out),
            input_factor: if self.counted_in > 0 {
                (self.billed_in as f64 / self.counted_in as f64).max(1.0)
            } else {
                1.0
            },
            latency_ms: mean(&self.latency_ms),
            keep_ratio: if self.stand_in_produced > 0 {
                self.model_produced as f64 / self.stand_in_produced as f64
            } else {
                1.0
            },
        }
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The half-width of a 95% interval of the mean of `v`, as a share of the mean.
fn relative_ci(v: &[f64]) -> f64 {
    let m = mean(v);
    if v.len() < 2 || m <= 0.0 {
        return 0.0;
    }
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    1.96 * (var.sqrt() / (v.len() as f64).sqrt()) / m
}

/// Whether a pipeline's LLM layer calls a model with a price: what `check` quotes and a build
/// quotes first.
pub fn priced(config: &noisebench_llm::LlmConfig) -> bool {
    config.backend == noisebench_llm::BackendKind::Openai
        && config.models.values().any(|m| m.price.is_some())
}

/// Quote `pipeline`: run it in a scratch copy of its work folder with the LLM layer in quote
/// mode (every stage rerun with `force`, as the build would), then price what it would ask.
pub fn quote(ws: &Workspace, pipeline: &str, sample: usize, force: bool) -> Result<Quote> {
    let probe = ws.load(pipeline)?;
    let name = probe.plan.name().to_string();
    drop(probe);
    std::fs::create_dir_all(&ws.work_dir).with_context(|| format!("{}", ws.work_dir.display()))?;
    let scratch = tempfile::Builder::new()
        .prefix(".quote-")
        .tempdir_in(&ws.work_dir)
        .with_context(|| format!("a scratch folder in {}", ws.work_dir.display()))?;
    let from = ws.work_dir.join(&name);
    if from.is_dir() {
        link_tree(&from, &scratch.path().join(&name))?;
    }
    let mut scratch_ws = ws.clone();
    scratch_ws.work_dir = scratch.path().to_path_buf();
    scratch_ws.preflight = false;
    scratch_ws.remote_work = None;
    scratch_ws.refresh = ws.refresh;
    // Stand-in answers may fail a stage's gate a real build passes: the quote goes on.
    scratch_ws.allow_degraded = true;
    let loaded = scratch_ws.load(pipeline)?;
    loaded
        .layers
        .llm
        .start_quote(QuoteSettings { sample })
        .map_err(|e| anyhow::anyhow!("[llm]: {e}"))?;
    let run = scratch_ws
        .run(&loaded, None, force)
        .context("the quote runs the pipeline as the build would, with stand-in answers")?;
    // The quality card asks the questions closed-book before publishing: quoted as stage
    // `quality`, over the questions the stand-ins gave.
    let mut logged: Vec<LlmCall> = quality_calls(&loaded, &run)?;
    let calls = loaded.layers.llm.take_quote_calls();
    let mut up_to_date = Vec::new();
    for s in &run.summary {
        if s.status == "skipped" {
            up_to_date.push(s.id.clone());
            continue;
        }
        let path = run.run_dir.join(&s.id).join(noisebench_pipeline::LLM_CALLS);
        if path.is_file() {
            logged.extend(table_io::read_rows::<LlmCall>(&path)?);
        }
    }
    let previous = Quote::load(&ws.work_dir, &name)
        .ok()
        .flatten()
        .map(|q| q.measured)
        .unwrap_or_default();
    let mut q = price(&loaded, &calls, &logged, &previous);
    q.pipeline = name;
    q.up_to_date = up_to_date;
    q.tokenizers = loaded.layers.llm.quote_tokenizers();
    Ok(q)
}

/// The closed-book calls the quality card would make over the tables the run would publish
/// (none without a `[snapshot]`, or when a snapshot table is missing); asked in quote mode.
fn quality_calls(loaded: &Loaded, run: &noisebench_pipeline::RunResult) -> Result<Vec<LlmCall>> {
    let plan = &loaded.plan;
    let Some(section) = &plan.file.snapshot else {
        return Ok(Vec::new());
    };
    let Ok((tables, _)) = crate::quality::snapshot_tables(plan, section, run) else {
        return Ok(Vec::new());
    };
    let config = noisebench_quality::QualityConfig::from_table(plan.file.quality.as_ref())?;
    crate::quality::closed_book_of_tables(&tables, &config, &loaded.layers.llm)
}

/// Hard-link every file of `from` into `to` (same file system: the work folder), but the
/// folder lock: the scratch run takes a lock of its own. Stages replace their files by rename,
/// never write into one, so the links leave the originals as they are.
fn link_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("{}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("{}", from.display()))? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            link_tree(&src, &dst)?;
        } else if kind.is_file()
            && entry.file_name() != ".lock"
            && std::fs::hard_link(&src, &dst).is_err()
        {
            std::fs::copy(&src, &dst).with_context(|| format!("{}", src.display()))?;
        }
    }
    Ok(())
}

/// Price the counted requests: one row per stage and task in plan order.
fn price(
    loaded: &Loaded,
    calls: &[QuoteCall],
    logged: &[LlmCall],
    previous: &BTreeMap<String, TaskMeasure>,
) -> Quote {
    let config = loaded.layers.llm.config();
    let batch = if config.mode == LlmMode::Batch {
        1.0 - config.batch_discount
    } else {
        1.0
    };
    let cached_calls = cache_hits(logged);
    let (measures, sample_usd) = sample_measures(calls, logged, previous);
    let stand_in_stages: BTreeSet<&str> = calls
        .iter()
        .filter(|c| !c.sampled)
        .map(|c| c.stage.as_str())
        .collect();
    let factor = fan_out_factors(loaded, calls, &measures, &stand_in_stages);
    // Each stage's tasks, in the order first asked.
    let mut groups: BTreeMap<(String, String), Vec<&QuoteCall>> = BTreeMap::new();
    for c in calls {
        groups
            .entry((c.stage.clone(), c.task.clone()))
            .or_default()
            .push(c);
    }
    for key in cached_calls.keys() {
        groups.entry(key.clone()).or_default();
    }
    let first_seen = |stage: &str, task: &str| {
        calls
            .iter()
            .position(|c| c.stage == stage && c.task == task)
    };
    let mut unpriced = BTreeSet::new();
    // One stage and task's row: `fan_out` scales a projection's calls.
    let mut row_of =
        |stage: &String, task: &String, group: &Vec<&QuoteCall>, fan_out: f64, projected: bool| {
            let model = group.first().map(|c| c.model.clone()).unwrap_or_default();
            let model_config = config.models.get(&model);
            if model_config.and_then(|m| m.price).is_none() && !model.is_empty() {
                unpriced.insert(model.clone());
            }
            let mut row = price_row(
                task,
                group,
                model_config,
                measures.get(task).filter(|m| m.model == model),
                fan_out,
                projected,
                batch,
            );
            row.stage = stage.clone();
            row.model = model;
            row.cached_calls = cached_calls
                .get(&(stage.clone(), task.clone()))
                .copied()
                .unwrap_or(0);
            row
        };
    let mut rows = Vec::new();
    for planned in &loaded.plan.stages {
        // A stage's tasks read the stage's inputs, not each other's answers (the exam and the
        // stances, single- and multi-hop questions): only stand-ins upstream project a row.
        let projected = loaded
            .plan
            .upstream_of(&planned.id)
            .map(|up| {
                up.iter()
                    .any(|u| u.id != planned.id && stand_in_stages.contains(u.id.as_str()))
            })
            .unwrap_or(false);
        let mut tasks: Vec<(&(String, String), &Vec<&QuoteCall>)> = groups
            .iter()
            .filter(|((stage, _), _)| stage == &planned.id)
            .collect();
        tasks.sort_by_key(|((s, t), _)| first_seen(s, t).unwrap_or(usize::MAX));
        for ((stage, task), group) in tasks {
            let fan_out = factor.get(&planned.id).copied().unwrap_or(1.0);
            rows.push(row_of(stage, task, group, fan_out, projected));
        }
    }
    // The quality card's calls, after the plan's stages: its questions come from the run.
    let card_projected = !stand_in_stages.is_empty();
    for ((stage, task), group) in groups
        .iter()
        .filter(|((stage, _), _)| stage == crate::quality::QUALITY_STAGE)
    {
        rows.push(row_of(stage, task, group, 1.0, card_projected));
    }
    Quote {
        total: total_of(&rows),
        rows,
        sample_usd,
        unpriced: unpriced.into_iter().collect(),
        measured: measures,
        ..Quote::default()
    }
}

/// Items the LLM cache answered, per stage and task.
fn cache_hits(logged: &[LlmCall]) -> BTreeMap<(String, String), u64> {
    let mut hits: BTreeMap<(String, String), u64> = BTreeMap::new();
    for c in logged.iter().filter(|c| c.cache_hit) {
        *hits.entry((c.stage.clone(), c.task.clone())).or_default() += 1;
    }
    hits
}

/// What this quote's sample measured per task, else the last quote's measures for the same
/// model; and what the sample spent.
fn sample_measures(
    calls: &[QuoteCall],
    logged: &[LlmCall],
    previous: &BTreeMap<String, TaskMeasure>,
) -> (BTreeMap<String, TaskMeasure>, f64) {
    // The sample's real calls, by stage and request hash.
    let real: BTreeMap<(&str, &str), &LlmCall> = logged
        .iter()
        .filter(|c| !c.cache_hit && c.attempts > 0)
        .map(|c| ((c.stage.as_str(), c.request_hash.as_str()), c))
        .collect();
    let mut measured: BTreeMap<String, Measured> = BTreeMap::new();
    for c in calls.iter().filter(|c| c.sampled) {
        if let Some(r) = real.get(&(c.stage.as_str(), c.request_hash.as_str())) {
            let m = measured.entry(c.task.clone()).or_default();
            m.model = c.model.clone();
            m.model_produced += c.model_produced.unwrap_or(false) as u64;
            m.stand_in_produced += c.stand_in_produced as u64;
            m.out.push(r.tokens_out.max(0) as f64);
            m.billed_in += r.tokens_in.max(0) as u64;
            m.counted_in += c.input_tokens;
            m.latency_ms.push((r.latency_ms + r.queue_ms).max(0) as f64);
            m.usd += r.cost_usd.unwrap_or(0.0);
        }
    }
    let mut measures: BTreeMap<String, TaskMeasure> = previous
        .iter()
        .filter(|(_, m)| calls.iter().any(|c| c.model == m.model))
        .map(|(t, m)| (t.clone(), m.clone()))
        .collect();
    measures.extend(
        measured
            .iter()
            .filter(|(_, m)| !m.out.is_empty())
            .map(|(t, m)| (t.clone(), m.measure())),
    );
    (measures, measured.values().map(|m| m.usd).sum())
}

/// The fan-out correction per stage. A stage's keep share: over its stand-in answers that
/// gave something, the share the model's would have (its tasks' keep ratios, weighted by those
/// answers). A stage downstream of stand-ins is scaled by the keep shares of the stages with
/// calls above it: the nearest one's, times that one's own factor.
fn fan_out_factors(
    loaded: &Loaded,
    calls: &[QuoteCall],
    measures: &BTreeMap<String, TaskMeasure>,
    stand_in_stages: &BTreeSet<&str>,
) -> BTreeMap<String, f64> {
    let keep_share = |stage: &str| {
        let (mut kept, mut all) = (0.0, 0.0);
        for c in calls
            .iter()
            .filter(|c| c.stage == stage && !c.sampled && c.stand_in_produced)
        {
            kept += measures.get(&c.task).map_or(1.0, |m| m.keep_ratio);
            all += 1.0;
        }
        if all > 0.0 { kept / all } else { 1.0 }
    };
    let position = |id: &str| loaded.plan.stages.iter().position(|s| s.id == id);
    let mut factor: BTreeMap<String, f64> = BTreeMap::new();
    for planned in &loaded.plan.stages {
        let nearest = loaded.plan.upstream_of(&planned.id).ok().and_then(|up| {
            up.into_iter()
                .filter(|u| u.id != planned.id && stand_in_stages.contains(u.id.as_str()))
                .max_by_key(|u| position(&u.id))
        });
        let f = nearest
            .map(|u| factor.get(&u.id).copied().unwrap_or(1.0) * keep_share(&u.id))
            .unwrap_or(1.0);
        factor.insert(planned.id.clone(), f);
    }
    factor
}

/// One stage and task's row from its counted requests: the stand-ins scaled by the re-asks and
/// the stage's fan-out, answers from the sample or at their ceiling, priced, with its range and
/// the minutes the model's limits allow.
fn price_row(
    task: &str,
    group: &[&QuoteCall],
    model_config: Option<&noisebench_llm::ModelConfig>,
    m: Option<&TaskMeasure>,
    fan_out: f64,
    projected: bool,
    batch: f64,
) -> QuoteRow {
    let price = model_config.and_then(|m| m.price);
    let stand_ins: Vec<&&QuoteCall> = group.iter().filter(|c| !c.sampled).collect();
    let reask = m.map(|m| m.input_factor).unwrap_or(1.0);
    let scale = |n: u64, by: f64| (n as f64 * by).round() as u64;
    let counted_in: u64 = stand_ins.iter().map(|c| c.input_tokens).sum();
    let input_tokens = scale(counted_in, reask * fan_out);
    let cached_input_tokens = scale(stand_ins.iter().map(|c| c.prefix_cached).sum(), fan_out);
    let calls_n = scale(stand_ins.len() as u64, fan_out);
    let (output_tokens, output_basis, out_spread) = if task == "embedding" {
        (0, "none", 0.0)
    } else {
        match m {
            Some(m) => (
                (m.output_mean * calls_n as f64).round() as u64,
                "sample",
                m.output_spread,
            ),
            None => (
                scale(stand_ins.iter().map(|c| c.max_tokens).sum(), fan_out),
                "ceiling",
                1.0,
            ),
        }
    };
    let cost = |input: f64, out: f64| {
        price
            .map(|p| {
                let cached = (cached_input_tokens as f64).min(input);
                p.cost_cached(input as u64, cached as u64, out as u64) * batch
            })
            .unwrap_or(0.0)
    };
    let fan = if projected { FANOUT_SPREAD } else { 0.0 };
    let (out_low, out_high) = if output_basis == "ceiling" {
        (0.0, output_tokens as f64)
    } else {
        let o = output_tokens as f64;
        (o * (1.0 - out_spread).max(0.0), o * (1.0 + out_spread))
    };
    let minutes = model_config.and_then(|mc| {
        let mut bounds = Vec::new();
        if let Some(rpm) = mc.rpm {
            bounds.push(calls_n as f64 / f64::from(rpm.max(1)));
        }
        if let Some(tpm) = mc.tpm {
            bounds.push((input_tokens + output_tokens) as f64 / f64::from(tpm.max(1)));
        }
        if let Some(m) = m.filter(|m| m.latency_ms > 0.0) {
            let per = m.latency_ms / 60_000.0;
            bounds.push(calls_n as f64 * per / mc.max_concurrency.max(1) as f64);
        }
        bounds.into_iter().reduce(f64::max)
    });
    QuoteRow {
        task: task.to_string(),
        calls: calls_n,
        sampled_calls: (group.len() - stand_ins.len()) as u64,
        input_tokens,
        cached_input_tokens,
        output_tokens,
        output_basis: output_basis.into(),
        usd: cost(input_tokens as f64, output_tokens as f64),
        projected,
        usd_low: cost(input_tokens as f64, out_low) * (1.0 - fan),
        usd_high: cost(input_tokens as f64, out_high) * (1.0 + fan),
        minutes,
        ..QuoteRow::default()
    }
}

/// The rows added up.
fn total_of(rows: &[QuoteRow]) -> QuoteRow {
    let mut total = QuoteRow {
        stage: "total".into(),
        ..QuoteRow::default()
    };
    for r in rows {
        total.calls += r.calls;
        total.cached_calls += r.cached_calls;
        total.sampled_calls += r.sampled_calls;
        total.input_tokens += r.input_tokens;
        total.cached_input_tokens += r.cached_input_tokens;
        total.output_tokens += r.output_tokens;
        total.usd += r.usd;
        total.usd_low += r.usd_low;
        total.usd_high += r.usd_high;
        total.projected |= r.projected;
        if let Some(m) = r.minutes {
            *total.minutes.get_or_insert(0.0) += m;
        }
    }
    total
}

impl Quote {
    /// The table a maintainer reads before a build.
    pub fn render(&self) -> String {
        let mut out = format!(
            "quote for `{}` (before any call; {} requests to send):\n",
            self.pipeline, self.total.calls
        );
        out.push_str(&format!(
            "  {:<22} {:<18} {:>7} {:>7} {:>11} {:>11} {:>10} {:>10}  {}\n",
            "stage", "task", "calls", "cached", "tokens in", "prefix", "tokens out", "USD", "notes"
        ));
        let line = |r: &QuoteRow| {
            let mut notes = Vec::new();
            if r.projected {
                notes.push(format!("projected, {:.4}-{:.4} USD", r.usd_low, r.usd_high));
            }
            match r.output_basis.as_str() {
                "ceiling" => notes.push("out at the max_tokens ceiling".to_string()),
                "sample" => notes.push("out from the sample".to_string()),
                _ => {}
            }
            if r.calls == 0 && r.cached_calls > 0 {
                notes.push("all from the cache (free)".to_string());
            }
            if r.sampled_calls > 0 {
                notes.push(format!("{} sampled", r.sampled_calls));
            }
            if let Some(m) = r.minutes {
                notes.push(format!("{m:.1} min"));
            }
            format!(
                "  {:<22} {:<18} {:>7} {:>7} {:>11} {:>11} {:>10} {:>10.4}  {}\n",
                r.stage,
                r.task,
                r.calls,
                r.cached_calls,
                r.input_tokens,
                r.cached_input_tokens,
                r.output_tokens,
                r.usd,
                notes.join("; ")
            )
        };
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out.push_str(&line(&self.total));
        out.push_str(&format!(
            "  range {:.4}-{:.4} USD{}; \"cached\" = items the LLM cache already answers (free); \"prefix\" = input tokens a provider's prompt cache can serve\n",
            self.total.usd_low,
            self.total.usd_high,
            if self.total.projected {
                " (rows marked projected come from stand-in answers upstream)"
            } else {
                ""
            }
        ));
        if self.sample_usd > 0.0 {
            out.push_str(&format!(
                "  the sample spent {:.4} USD (its answers are cached: the build does not pay them again)\n",
                self.sample_usd
            ));
        }
        if !self.up_to_date.is_empty() {
            out.push_str(&format!(
                "  up to date (the build skips them): {}\n",
                self.up_to_date.join(", ")
            ));
        }
        for (model, t) in &self.tokenizers {
            out.push_str(&format!("  tokens of `{model}`: {t}\n"));
        }
        if !self.unpriced.is_empty() {
            out.push_str(&format!(
                "  no price for {} (llm.models.<name>.price): counted at 0 USD\n",
                self.unpriced.join(", ")
            ));
        }
        out
    }

    /// The share of input tokens a provider's prompt cache can serve.
    pub fn prefix_share(&self) -> f64 {
        self.total.cached_input_tokens as f64 / self.total.input_tokens.max(1) as f64
    }

    /// Keep the quote in the pipeline's work folder, for the build to set beside its actuals.
    pub fn save(&self, work_dir: &Path) -> Result<PathBuf> {
        let dir = work_dir.join(&self.pipeline);
        std::fs::create_dir_all(&dir).with_context(|| format!("{}", dir.display()))?;
        let path = dir.join(QUOTE_FILE);
        let tmp = dir.join(format!("{QUOTE_FILE}.tmp"));
        std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)
            .with_context(|| format!("{}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("{}", path.display()))?;
        Ok(path)
    }

    /// The quote kept for `pipeline`, if any.
    pub fn load(work_dir: &Path, pipeline: &str) -> Result<Option<Quote>> {
        let path = work_dir.join(pipeline).join(QUOTE_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        let bytes = std::fs::read(&path).with_context(|| format!("{}", path.display()))?;
        Ok(Some(
            serde_json::from_slice(&bytes).with_context(|| format!("{}", path.display()))?,
        ))
    }
}

/// One stage and task's quote beside what the build's calls used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuoteVsActualRow {
    pub stage: String,
    pub task: String,
    pub quoted_calls: u64,
    pub actual_calls: u64,
    pub quoted_input_tokens: u64,
    pub actual_input_tokens: u64,
    pub quoted_cached_input_tokens: u64,
    pub actual_cached_input_tokens: u64,
    pub quoted_output_tokens: u64,
    pub actual_output_tokens: u64,
    pub quoted_usd: f64,
    pub actual_usd: f64,
    pub projected: bool,
}

/// A quote beside the build that followed it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuoteVsActual {
    pub rows: Vec<QuoteVsActualRow>,
    pub total: QuoteVsActualRow,
}

impl QuoteVsActual {
    /// Set `quote` beside the calls the build sent (cache hits are free and not counted).
    pub fn of(quote: &Quote, calls: &[LlmCall]) -> QuoteVsActual {
        let mut rows: BTreeMap<(String, String), QuoteVsActualRow> = BTreeMap::new();
        for r in &quote.rows {
            let row = rows.entry((r.stage.clone(), r.task.clone())).or_default();
            row.quoted_calls = r.calls;
            row.quoted_input_tokens = r.input_tokens;
            row.quoted_cached_input_tokens = r.cached_input_tokens;
            row.quoted_output_tokens = r.output_tokens;
            row.quoted_usd = r.usd;
            row.projected = r.projected;
        }
        for c in calls.iter().filter(|c| !c.cache_hit && c.attempts > 0) {
            let row = rows.entry((c.stage.clone(), c.task.clone())).or_default();
            row.actual_calls += 1;
            row.actual_input_tokens += c.tokens_in.max(0) as u64;
            row.actual_cached_input_tokens += c.tokens_cached.max(0) as u64;
            row.actual_output_tokens += c.tokens_out.max(0) as u64;
            row.actual_usd += c.cost_usd.unwrap_or(0.0);
        }
        let mut total = QuoteVsActualRow {
            stage: "total".into(),
            ..Default::default()
        };
        let rows: Vec<QuoteVsActualRow> = rows
            .into_iter()
            .map(|((stage, task), mut r)| {
                r.stage = stage;
                r.task = task;
                total.quoted_calls += r.quoted_calls;
                total.actual_calls += r.actual_calls;
                total.quoted_input_tokens += r.quoted_input_tokens;
                total.actual_input_tokens += r.actual_input_tokens;
                total.quoted_cached_input_tokens += r.quoted_cached_input_tokens;
                total.actual_cached_input_tokens += r.actual_cached_input_tokens;
                total.quoted_output_tokens += r.quoted_output_tokens;
                total.actual_output_tokens += r.actual_output_tokens;
                total.quoted_usd += r.quoted_usd;
                total.actual_usd += r.actual_usd;
                total.projected |= r.projected;
                r
            })
            .collect();
        QuoteVsActual { rows, total }
    }

    /// The actual over the quoted, as a signed share (`+0.12`: 12% more than quoted).
    pub fn error(quoted: f64, actual: f64) -> Option<f64> {
        (quoted > 0.0).then(|| actual / quoted - 1.0)
    }

    /// The run summary's table: per stage and task, quoted and actual calls, tokens and USD.
    pub fn render(&self) -> String {
        let mut out = String::from("quote against actual (calls sent; cache hits are free):\n");
        out.push_str(&format!(
            "  {:<16} {:<20} {:>15} {:>23} {:>19} {:>19} {:>21}\n",
            "stage",
            "task",
            "calls q/a",
            "tokens in q/a",
            "prefix q/cached",
            "tokens out q/a",
            "USD q/a"
        ));
        let line = |r: &QuoteVsActualRow| {
            let err = Self::error(r.quoted_usd, r.actual_usd)
                .map(|e| format!(" ({:+.0}%)", e * 100.0))
                .unwrap_or_default();
            format!(
                "  {:<16} {:<20} {:>15} {:>23} {:>19} {:>19} {:>21}{}{}\n",
                r.stage,
                r.task,
                format!("{}/{}", r.quoted_calls, r.actual_calls),
                format!("{}/{}", r.quoted_input_tokens, r.actual_input_tokens),
                format!(
                    "{}/{}",
                    r.quoted_cached_input_tokens, r.actual_cached_input_tokens
                ),
                format!("{}/{}", r.quoted_output_tokens, r.actual_output_tokens),
                format!("{:.4}/{:.4}", r.quoted_usd, r.actual_usd),
                err,
                if r.projected { " projected" } else { "" }
            )
        };
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out.push_str(&line(&self.total));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_of_a_mean_narrows_with_the_sample() {
        assert_eq!(relative_ci(&[10.0]), 0.0);
        let few = relative_ci(&[8.0, 12.0, 10.0]);
        let many = relative_ci(&[8.0, 12.0, 10.0, 8.0, 12.0, 10.0, 8.0, 12.0, 10.0]);
        assert!(few > many && many > 0.0, "{few} {many}");
    }

    #[test]
    fn quote_against_actual_counts_sent_calls_only() {
        let quote = Quote {
            rows: vec![QuoteRow {
                stage: "labels".into(),
                task: "exam_verdict".into(),
                calls: 2,
                input_tokens: 100,
                output_tokens: 10,
                usd: 1.0,
                ..QuoteRow::default()
            }],
            ..Quote::default()
        };
        let call = |hit: bool, attempts: i64| LlmCall {
            stage: "labels".into(),
            task: "exam_verdict".into(),
            tokens_in: 55,
            tokens_out: 6,
            tokens_cached: 5,
            attempts,
            cache_hit: hit,
            cost_usd: Some(0.6),
            ..LlmCall::default()
        };
        let v = QuoteVsActual::of(&quote, &[call(false, 1), call(false, 1), call(true, 0)]);
        assert_eq!(v.rows.len(), 1);
        let r = &v.total;
        assert_eq!((r.quoted_calls, r.actual_calls), (2, 2));
        assert_eq!(
            (r.actual_input_tokens, r.actual_cached_input_tokens),
            (110, 10)
        );
        assert!((r.actual_usd - 1.2).abs() < 1e-12);
        let e = QuoteVsActual::error(r.quoted_usd, r.actual_usd).unwrap();
        assert!((e - 0.2).abs() < 1e-9);
        assert!(v.render().contains("+20%"));
    }
}
