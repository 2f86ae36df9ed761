//! `eval`: run a model on a snapshot or a seed release and write its predictions and metrics
//! under `evals/<benchmark>/<model>/`; `eval --compare A B`: two such folders side by side.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use noisebench_core::{
    Chunk, Claim, ClaimDocumentLabel, Document, DocumentCredibility, DocumentPerturbation, LlmCall,
    Metric, Prediction, Query, QueryPerturbation, Question, QuestionSplit, Report, Retrieval, Rows,
    TableRow,
};
use noisebench_eval::load::snapshot::{SnapshotTables, from_snapshot};
use noisebench_eval::{EvalConfig, EvalData, Evaluation, SourceFormat};
use noisebench_llm::Llm;
use noisebench_pipeline::table_io;

use crate::LlmOverrides;

/// The files of one evaluation's folder.
pub const PREDICTIONS_FILE: &str = "predictions.parquet";
pub const METRICS_FILE: &str = "metrics.parquet";
pub const CALLS_FILE: &str = "llm_calls.parquet";
pub const SUMMARY_FILE: &str = "summary.json";
pub const RESULTS_FILE: &str = "results.md";

/// What `noisebench eval` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct EvalRequest {
    /// A snapshot folder, a release folder, or release files.
    pub inputs: Vec<PathBuf>,
    /// `None`: detected from the inputs.
    pub format: Option<SourceFormat>,
    /// RARE's chunk corpus (JSON list or JSON Lines), for RARE records.
    pub chunks: Option<PathBuf>,
    /// CONF-FACT's credibility tables (`all_media_data.pkl`, `mbfc_media_data.pkl`); empty:
    /// those beside the instance file.
    pub credibility: Vec<PathBuf>,
    /// A folder of RARE's `<name>_retrieval_results.json` (besides the release folder and its
    /// `retrieval_results/`).
    pub retrieval_results: Option<PathBuf>,
    /// The configuration file (`[llm]`, `[eval]`); `None`: `pipelines/eval/default.toml` when present.
    pub config: Option<PathBuf>,
    pub system: Option<String>,
    pub families: Option<Vec<String>>,
    pub limit: Option<usize>,
    /// Which retriever's `retrievals` of a snapshot are the real retrieval.
    pub retriever: Option<String>,
    /// Where results go (`evals/`).
    pub out: PathBuf,
}

/// What an evaluation wrote.
pub struct EvalRun {
    pub evaluation: Evaluation,
    pub dir: PathBuf,
    /// What was loaded and set aside (`load_summary`), printed before the results.
    pub loaded: String,
    /// Items left unanswered for a transient cause (budget, network): a rerun resumes them.
    pub unfinished: usize,
}

/// Read a published snapshot's tables into the evaluation's shape (a table the version does
/// not publish is empty).
pub fn load_snapshot(path: &Path, retriever: Option<&str>) -> Result<EvalData> {
    let version = noisebench_snapshot::PublishedVersion::open(path)?;
    fn read<T: TableRow>(v: &noisebench_snapshot::PublishedVersion) -> Result<Vec<T>> {
        Ok(v.read::<T>()?.unwrap_or_default())
    }
    let m = version.manifest();
    let tables = SnapshotTables {
        name: format!("{}@{}", m.dataset, m.version),
        claims: read::<Claim>(&version)?,
        queries: read::<Query>(&version)?,
        documents: read::<Document>(&version)?,
        labels: read::<ClaimDocumentLabel>(&version)?,
        credibility: read::<DocumentCredibility>(&version)?,
        reports: read::<Report>(&version)?,
        chunks: read::<Chunk>(&version)?,
        questions: read::<Question>(&version)?,
        splits: read::<QuestionSplit>(&version)?,
        query_perturbations: read::<QueryPerturbation>(&version)?,
        document_perturbations: read::<DocumentPerturbation>(&version)?,
        retrievals: read::<Retrieval>(&version)?,
    };
    Ok(from_snapshot(tables, retriever))
}

// CONF-FACT's instance files in a release folder (`data/dataset/`).
use noisebench_releases::confact::INSTANCE_FILES as CONFACT_FILES;

/// A file's first bytes (up to 64 KiB), or an error naming it; an empty file is an error.
fn head_of(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut n = 0;
    while n < buf.len() {
        let got = f
            .read(&mut buf[n..])
            .with_context(|| format!("cannot read {}", path.display()))?;
        if got == 0 {
            break;
        }
        n += got;
    }
    buf.truncate(n);
    if buf.iter().all(u8::is_ascii_whitespace) {
        bail!("{} is empty", path.display());
    }
    Ok(buf)
}

/// The format of the inputs when not given: a snapshot folder; a folder with RAGuard's
/// `claims.csv`, CONF-FACT's `HumC.pkl.gz`/`ModC.pkl.gz`, or RARE's record files; RAGuard's CSV
/// files; a gzip'd or plain pickle (CONF-FACT); JSON with `evidence_url` (CONF-FACT) or
/// `answer_chunk_ids` (RARE) in its first records.
pub(crate) fn detect_format(inputs: &[PathBuf]) -> Result<SourceFormat> {
    let Some(first) = inputs.first() else {
        bail!("eval: no input given (a snapshot folder, or release files)");
    };
    if !first.exists() {
        bail!("{}: no such file or folder", first.display());
    }
    if first.is_dir() {
        if first.join(noisebench_snapshot::MANIFEST).is_file()
            || noisebench_snapshot::latest_version(first).is_some()
        {
            return Ok(SourceFormat::Snapshot);
        }
        if first.join("claims.csv").is_file() {
            return Ok(SourceFormat::Raguard);
        }
        if CONFACT_FILES.iter().any(|f| first.join(f).is_file()) {
            return Ok(SourceFormat::Confact);
        }
        let rare = noisebench_eval::load::RareInputs::discover(inputs, None, None)?;
        if !rare.records.is_empty() {
            return Ok(SourceFormat::Rare);
        }
        bail!(
            "{}: not a snapshot, nor a folder with RAGuard's claims.csv, CONF-FACT's HumC.pkl.gz / ModC.pkl.gz, or RARE's record files (*.json); say --format",
            first.display()
        );
    }
    let name = first
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".csv") {
        return Ok(SourceFormat::Raguard);
    }
    let head = head_of(first)?;
    if head.starts_with(&[0x1f, 0x8b])
        || (head.len() >= 2 && head[0] == 0x80 && (2..=5).contains(&head[1]))
        || name.ends_with(".pkl")
        || name.ends_with(".pkl.gz")
    {
        return Ok(SourceFormat::Confact);
    }
    let text = match std::str::from_utf8(&head) {
        Ok(t) => t.to_string(),
        // A multi-byte character cut at the end of the head is still text.
        Err(e) if e.error_len().is_none() => String::from_utf8_lossy(&head).into_owned(),
        Err(_) => {
            let kind = noisebench_eval::load::sniff(&head)
                .map(|k| format!("it looks like {k}"))
                .unwrap_or_else(|| "a binary file of no known kind".into());
            bail!("{}: not UTF-8 text, {kind}", first.display());
        }
    };
    if name.ends_with(noisebench_releases::rare::RETRIEVAL_RESULTS_SUFFIX) {
        return Ok(SourceFormat::Rare);
    }
    if text.contains("\"evidence_url\"") {
        Ok(SourceFormat::Confact)
    } else if text.contains("\"answer_chunk_ids\"") {
        Ok(SourceFormat::Rare)
    } else {
        bail!(
            "{}: cannot tell the format (no `evidence_url` or `answer_chunk_ids` field in its first records); say --format",
            first.display()
        )
    }
}

/// Load the inputs in `format`.
pub(crate) fn load_inputs(req: &EvalRequest, format: SourceFormat) -> Result<EvalData> {
    let inputs = &req.inputs;
    Ok(match format {
        SourceFormat::Snapshot => load_snapshot(&inputs[0], req.retriever.as_deref())?,
        SourceFormat::Raguard => {
            let (claims, documents) = match inputs.as_slice() {
                [dir] if dir.is_dir() => {
                    let docs = dir.join("documents.csv");
                    (dir.join("claims.csv"), docs.is_file().then_some(docs))
                }
                [claims] => (claims.clone(), None),
                [a, b] => (a.clone(), Some(b.clone())),
                _ => bail!("raguard: give the release folder, or claims.csv (and documents.csv)"),
            };
            noisebench_eval::load::load_raguard_files(&claims, documents.as_deref())?
        }
        SourceFormat::Confact => {
            let file = match inputs.as_slice() {
                [dir] if dir.is_dir() => {
                    let found: Vec<PathBuf> = CONFACT_FILES
                        .iter()
                        .map(|f| dir.join(f))
                        .filter(|p| p.is_file())
                        .collect();
                    match found.as_slice() {
                        [one] => one.clone(),
                        [] => bail!(
                            "{}: no CONF-FACT instance file (HumC.pkl.gz, ModC.pkl.gz)",
                            dir.display()
                        ),
                        _ => bail!(
                            "{}: holds both CONF-FACT splits; evaluate one at a time: {}",
                            dir.display(),
                            found
                                .iter()
                                .map(|p| p.display().to_string())
                                .collect::<Vec<_>>()
                                .join(" or ")
                        ),
                    }
                }
                [file] => file.clone(),
                _ => bail!("confact: give one instance file (HumC.pkl.gz, ModC.pkl.gz, or JSON)"),
            };
            let credibility = if req.credibility.is_empty() {
                noisebench_eval::load::credibility_beside(&file)
            } else {
                req.credibility.clone()
            };
            noisebench_eval::load::load_confact_with(&file, &credibility)?
        }
        SourceFormat::Rare => {
            let found = noisebench_eval::load::RareInputs::discover(
                inputs,
                req.chunks.as_deref(),
                req.retrieval_results.as_deref(),
            )?;
            noisebench_eval::load::load_rare_inputs(&found)?
        }
    })
}

/// Thousands separated by commas (`16,331`).
fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What was loaded and what was set aside, and why: printed before the results.
pub(crate) fn load_summary(data: &EvalData) -> String {
    let mut out = format!(
        "loaded {}: {} claims, {} documents, {} questions, {} chunks\n",
        data.name,
        count(data.claims.len()),
        count(data.documents.len()),
        count(data.questions.len()),
        count(data.chunks.len())
    );
    for note in &data.notes {
        out.push_str(&format!("  {note}\n"));
    }
    let counts = data.bad_row_counts();
    if counts.is_empty() {
        out.push_str("set aside: nothing\n");
    } else {
        out.push_str(&format!(
            "set aside or flagged: {} rows ({}); details in summary.json\n",
            count(data.bad_rows.len()),
            counts
                .iter()
                .map(|(r, n)| format!("{r} {}", count(*n)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out
}

/// Details of bad rows kept in `summary.json`; beyond it the summary says how many it left out.
pub(crate) const SUMMARY_DETAILS: usize = 100_000;

impl EvalRun {
    /// Tasks that scored at least one item.
    pub fn tasks_ran(&self) -> usize {
        self.evaluation
            .outcomes
            .iter()
            .filter(|o| !o.scored.is_empty())
            .count()
    }

    /// Why nothing ran, from the skipped families and the empty outcomes.
    pub fn why_nothing_ran(&self) -> String {
        let mut why: Vec<String> = self
            .evaluation
            .skipped
            .iter()
            .map(|(f, r)| format!("{f}: {r}"))
            .collect();
        for o in &self.evaluation.outcomes {
            if o.scored.is_empty() {
                let problems: Vec<String> =
                    o.problems.iter().map(|(p, n)| format!("{p} {n}")).collect();
                why.push(format!("{}: no item ({})", o.task, problems.join(", ")));
            }
        }
        why.join("; ")
    }
}

/// The `[llm]` and `[eval]` tables of the configuration file (both optional).
pub(crate) fn load_config(
    root: &Path,
    path: Option<&Path>,
    overrides: &LlmOverrides,
) -> Result<(Llm, EvalConfig)> {
    let default = root.join("pipelines").join("eval").join("default.toml");
    let path = match path {
        Some(p) => Some(p.to_path_buf()),
        None if default.is_file() => Some(default),
        None => None,
    };
    let table: serde_json::Value = match &path {
        None => serde_json::json!({}),
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| p.display().to_string())?;
            let value: toml::Value =
                toml::from_str(&text).with_context(|| p.display().to_string())?;
            serde_json::to_value(value)?
        }
    };
    let name = path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "(defaults)".into());
    if let Some(obj) = table.as_object()
        && let Some(k) = obj.keys().find(|k| *k != "llm" && *k != "eval")
    {
        bail!("{name}: unknown table `[{k}]` (an evaluation file has [llm] and [eval])");
    }
    let mut llm_table = table
        .get("llm")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
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
    let llm =
        Llm::from_value(&llm_table, root).map_err(|e| anyhow::anyhow!("{name}: [llm]: {e}"))?;
    let eval: EvalConfig =
        noisebench_core::stage::parse_config(table.get("eval").unwrap_or(&serde_json::json!({})))
            .map_err(|e| anyhow::anyhow!("{name}: [eval] {e}"))?;
    Ok((llm, eval))
}

/// Run an evaluation and write its folder: predictions, metrics, the call log, a summary and
/// the printed table.
pub fn run_eval(root: &Path, req: &EvalRequest, overrides: &LlmOverrides) -> Result<EvalRun> {
    let format = match req.format {
        Some(f) => f,
        None => detect_format(&req.inputs)?,
    };
    let mut data = load_inputs(req, format)?;
    // Results of two releases of one format must not share a folder: the input's own name joins
    // the format's (`raguard-2025` for a folder `2025/`), unless it is the format's name.
    if format != SourceFormat::Snapshot
        && let Some(stem) = req
            .inputs
            .first()
            .and_then(|p| p.file_name())
            .and_then(|s| s.to_str())
            .and_then(|s| s.split('.').next())
        && !stem.is_empty()
        && !stem.eq_ignore_ascii_case(format.name())
        && !stem.starts_with("rag_")
        && !stem.eq_ignore_ascii_case("claims")
        && !stem.eq_ignore_ascii_case("dataset")
    {
        data.name = format!("{}-{stem}", format.name());
    }
    let (llm, mut config) = load_config(root, req.config.as_deref(), overrides)?;
    if let Some(s) = &req.system {
        config.system = s.clone();
    }
    if let Some(f) = &req.families {
        config.families = f.clone();
    }
    if req.limit.is_some() {
        config.limit = req.limit;
    }
    let evaluation = noisebench_eval::evaluate(&data, &llm, &config)?;
    let scope = noisebench_eval::results::scope(&evaluation.model, &evaluation.system);
    let dir = req
        .out
        .join(noisebench_eval::results::folder_name(&evaluation.benchmark))
        .join(noisebench_eval::results::folder_name(&scope));
    std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
    let (predictions, metrics) = noisebench_eval::results::to_rows(&evaluation);
    let unfinished = predictions
        .iter()
        .filter(|p| {
            p.failure
                .as_deref()
                .is_some_and(noisebench_llm::LlmError::is_transient_code)
        })
        .count();
    table_io::write_table(
        &dir.join(PREDICTIONS_FILE),
        &Rows::EvalPredictions(predictions),
    )?;
    table_io::write_table(&dir.join(METRICS_FILE), &Rows::Metrics(metrics))?;
    // The call log of this run is appended to what earlier (resumed) runs logged.
    let calls_path = dir.join(CALLS_FILE);
    let mut calls: Vec<LlmCall> = if calls_path.is_file() {
        table_io::read_rows::<LlmCall>(&calls_path).unwrap_or_default()
    } else {
        Vec::new()
    };
    calls.extend(llm.drain_call_log());
    table_io::write_table(&calls_path, &Rows::LlmCalls(calls))?;
    let summary = serde_json::json!({
        "benchmark": evaluation.benchmark,
        "format": format.name(),
        "model": evaluation.model,
        "system": evaluation.system,
        "bad_rows": evaluation.bad_rows,
        "loaded": {
            "claims": data.claims.len(),
            "documents": data.documents.len(),
            "questions": data.questions.len(),
            "chunks": data.chunks.len(),
            "notes": data.notes,
        },
        "bad_row_details": data.bad_rows.iter().take(SUMMARY_DETAILS).collect::<Vec<_>>(),
        "bad_row_details_left_out": data.bad_rows.len().saturating_sub(SUMMARY_DETAILS),
        "skipped": evaluation.skipped,
        "problems": evaluation.outcomes.iter().map(|o| (o.task.clone(), o.problems.clone())).collect::<std::collections::BTreeMap<_, _>>(),
        "unfinished": unfinished,
        "config": config,
    });
    let path = dir.join(SUMMARY_FILE);
    std::fs::write(&path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| path.display().to_string())?;
    let path = dir.join(RESULTS_FILE);
    std::fs::write(&path, noisebench_eval::results::render(&evaluation))
        .with_context(|| path.display().to_string())?;
    Ok(EvalRun {
        evaluation,
        dir,
        loaded: load_summary(&data),
        unfinished,
    })
}

/// `eval --compare A B`: two result folders side by side.
pub fn compare_evals(a: &Path, b: &Path, samples: usize, seed: u64) -> Result<String> {
    let read = |dir: &Path| -> Result<(Vec<Metric>, Vec<Prediction>)> {
        let m = dir.join(METRICS_FILE);
        let p = dir.join(PREDICTIONS_FILE);
        Ok((
            table_io::read_rows::<Metric>(&m).with_context(|| m.display().to_string())?,
            table_io::read_rows::<Prediction>(&p).with_context(|| p.display().to_string())?,
        ))
    };
    let (ma, pa) = read(a)?;
    let (mb, pb) = read(b)?;
    let rows = noisebench_eval::results::compare(
        (&ma, &pa),
        (&mb, &pb),
        noisebench_eval::metrics::Bootstrap { samples, seed },
    );
    if rows.is_empty() {
        bail!(
            "{} and {}: no metric in common (different benchmarks or tasks?)",
            a.display(),
            b.display()
        );
    }
    Ok(noisebench_eval::results::render_comparison(
        &a.display().to_string(),
        &b.display().to_string(),
        &rows,
    ))
}
