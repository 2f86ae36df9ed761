//! The Hugging Face dataset card (`README.md`): a YAML header with one config per table and its
//! features, then sections on the tables, sources, construction, labels, limitations and versioning.

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_core::{DType, StageFacts, TableKind};
use noisebench_pipeline::table_io;

use serde::Serialize;

use crate::changes::Changes;
use crate::manifest::Manifest;
use crate::request::PublishRequest;

pub(crate) struct CardInput<'a> {
    pub request: &'a PublishRequest,
    pub manifest: &'a Manifest,
    pub changes: &'a Changes,
    /// The folder holding the snapshot's `data/`.
    pub dir: &'a Path,
}

/// Columns whose value distribution the card reports.
const CATEGORICAL: [&str; 12] = [
    "verdict",
    "original_rating",
    "label",
    "label_source",
    "kind",
    "source_type",
    "credibility",
    "split",
    "backend",
    "fact_checker",
    "country",
    "format",
];

/// A column's Hugging Face feature line (`dtype: string`, `sequence: string`).
fn hf_type(dtype: DType) -> &'static str {
    match dtype {
        DType::Str | DType::Json => "dtype: string",
        DType::Int => "dtype: int64",
        DType::Float => "dtype: float64",
        DType::Bool => "dtype: bool",
        DType::StrList => "sequence: string",
    }
}

fn yaml_string(s: &str) -> String {
    serde_json::to_string(s).expect("strings always serialise")
}

/// Value counts of the categorical columns of one table, most frequent first.
fn distributions(
    kind: TableKind,
    path: &Path,
) -> Result<BTreeMap<String, Vec<(String, u64)>>, String> {
    let schema = kind.schema();
    let columns: Vec<&str> = schema
        .columns
        .iter()
        .filter(|c| c.dtype == DType::Str && CATEGORICAL.contains(&c.name.as_str()))
        .map(|c| c.name.as_str())
        .collect();
    // Only those columns are read.
    let counts: BTreeMap<String, BTreeMap<String, u64>> = table_io::value_counts(path, &columns)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(column, values)| {
            let mut merged: BTreeMap<String, u64> = BTreeMap::new();
            for (value, n) in values {
                *merged
                    .entry(value.unwrap_or_else(|| "(none)".into()))
                    .or_insert(0) += n;
            }
            (column, merged)
        })
        // An empty table has no distribution to show.
        .filter(|(_, values)| !values.is_empty())
        .collect();
    Ok(counts
        .into_iter()
        .map(|(column, values)| {
            let mut sorted: Vec<(String, u64)> = values.into_iter().collect();
            sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            (column, sorted)
        })
        .collect())
}

/// The card's template: the text is here, the values come from [`Card`].
const TEMPLATE: &str = include_str!("card/card.md.j2");

/// Everything the card's template shows, computed from the request, manifest and changes.
#[derive(Serialize)]
struct Card {
    title: String,
    title_yaml: String,
    license: String,
    description: Option<String>,
    version: String,
    dataset: String,
    code_version: String,
    pipeline: String,
    config_hash: String,
    created_at: String,
    tables: Vec<TableCard>,
    split_list: Option<String>,
    croissant: bool,
    exports: Vec<ExportCard>,
    sources: Vec<String>,
    stages: Vec<StageCard>,
    llm: Option<String>,
    labels: Vec<String>,
    facts: Vec<FactsCard>,
    unfinished: Option<Vec<UnfinishedCard>>,
    checks: Option<ChecksCard>,
    /// The "Quality" section (Markdown), when the version has a quality card.
    quality: Option<String>,
    parent: Option<String>,
    added: usize,
    changed: usize,
    removed: usize,
    /// Export files added, removed or changed against the parent, one line each.
    export_changes: Vec<String>,
}

/// A table: its row count and description, its files (one per split, or `train`), its columns.
#[derive(Serialize)]
struct TableCard {
    name: String,
    rows: u64,
    description: String,
    splits: Vec<SplitCard>,
    columns: Vec<ColumnCard>,
}

#[derive(Serialize)]
struct SplitCard {
    name: String,
    file: String,
    bytes: u64,
    rows: u64,
}

#[derive(Serialize)]
struct ColumnCard {
    name: String,
    hf_type: &'static str,
    dtype: String,
    nullable: bool,
    description: String,
}

#[derive(Serialize)]
struct ExportCard {
    file: String,
    format: String,
    bytes: u64,
}

#[derive(Serialize)]
struct StageCard {
    id: String,
    kind: String,
    items_in: i64,
    items_out: i64,
    items_dropped: i64,
    reasons: String,
}

#[derive(Serialize)]
struct FactsCard {
    title: String,
    stage: String,
    lines: Vec<String>,
}

#[derive(Serialize)]
struct UnfinishedCard {
    stage: String,
    items: String,
    reasons: String,
}

#[derive(Serialize)]
struct ChecksCard {
    total: usize,
    passed: usize,
    failed: usize,
    skipped: usize,
    failed_lines: Vec<String>,
    rows: Vec<CheckCard>,
}

#[derive(Serialize)]
struct CheckCard {
    kind: &'static str,
    table: String,
    check: String,
    result: &'static str,
    checked: u64,
    failed: u64,
}

pub(crate) fn render_card(input: &CardInput<'_>) -> Result<String, String> {
    let card = card(input)?;
    let failed = |e: minijinja::Error| format!("the card's template: {e}");
    let mut env = minijinja::Environment::new();
    // Tag-only lines leave nothing behind, so the template reads as the card it writes.
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
        .map_err(failed)?;
    env.set_syntax(syntax);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.add_template("card.md", TEMPLATE).map_err(failed)?;
    env.get_template("card.md")
        .and_then(|t| t.render(minijinja::Value::from(minijinja::value::Serde(&card))))
        .map_err(failed)
}

/// The values of the card.
fn card(input: &CardInput<'_>) -> Result<Card, String> {
    let request = input.request;
    let manifest = input.manifest;
    let title = if request.title.is_empty() {
        request.dataset.clone()
    } else {
        request.title.clone()
    };
    let mut tables = Vec::new();
    let mut all_distributions = BTreeMap::new();
    for (name, entry) in &manifest.tables {
        let kind = TableKind::from_name(&entry.kind)
            .ok_or_else(|| format!("unknown table kind `{}`", entry.kind))?;
        tables.push(table_card(manifest, name, entry, kind));
        all_distributions.insert(
            name.clone(),
            distributions(kind, &input.dir.join(&entry.file))?,
        );
    }
    let (added, changed, removed) = input.changes.tables.values().fold((0, 0, 0), |acc, t| {
        (
            acc.0 + t.added.len(),
            acc.1 + t.changed.len(),
            acc.2 + t.removed.len(),
        )
    });
    Ok(Card {
        title_yaml: yaml_string(&title),
        title,
        license: request.license.as_deref().unwrap_or("other").to_string(),
        description: (!request.description.is_empty())
            .then(|| request.description.trim().to_string()),
        version: manifest.version.clone(),
        dataset: manifest.dataset.clone(),
        code_version: manifest.code_version.clone(),
        pipeline: manifest.pipeline.clone(),
        config_hash: manifest.config_hash.clone(),
        created_at: manifest.created_at.clone(),
        tables,
        split_list: split_list(manifest),
        croissant: manifest.metadata.contains_key(crate::manifest::CROISSANT),
        exports: manifest
            .exports
            .iter()
            .map(|(file, e)| ExportCard {
                file: file.clone(),
                format: e.format.clone(),
                bytes: e.bytes,
            })
            .collect(),
        sources: sources(manifest, &all_distributions),
        stages: request.stages.iter().map(stage_card).collect(),
        llm: manifest.provenance.get("llm").map(llm_paragraph),
        labels: labels(&all_distributions),
        facts: facts(manifest),
        unfinished: unfinished(manifest),
        checks: checks_card(&manifest.checks),
        quality: input
            .request
            .quality
            .as_ref()
            .map(noisebench_quality::render_markdown),
        parent: manifest.parent.clone(),
        added,
        changed,
        removed,
        export_changes: input
            .changes
            .exports
            .iter()
            .map(|(file, e)| e.describe(file))
            .collect(),
    })
}

/// One table's files (its split files, or one `train` split) and columns.
fn table_card(
    manifest: &Manifest,
    name: &str,
    entry: &crate::manifest::TableEntry,
    kind: TableKind,
) -> TableCard {
    let schema = kind.schema();
    let splits = match manifest.splits.get(name) {
        Some(splits) => splits
            .iter()
            .map(|(split, s)| SplitCard {
                name: split.clone(),
                file: s.file.clone(),
                bytes: s.bytes,
                rows: s.rows,
            })
            .collect(),
        None => vec![SplitCard {
            name: "train".into(),
            file: entry.file.clone(),
            bytes: entry.bytes,
            rows: entry.rows,
        }],
    };
    TableCard {
        name: name.to_string(),
        rows: entry.rows,
        description: schema.description.clone(),
        splits,
        columns: schema
            .columns
            .iter()
            .map(|c| ColumnCard {
                name: c.name.clone(),
                hf_type: hf_type(c.dtype),
                dtype: format!("{:?}", c.dtype),
                nullable: c.nullable,
                description: c.description.clone(),
            })
            .collect(),
    }
}

/// The split tables and their rows per split, `name` (`split: rows`, ...) joined by `; `.
fn split_list(manifest: &Manifest) -> Option<String> {
    if manifest.splits.is_empty() {
        return None;
    }
    let listed: Vec<String> = manifest
        .splits
        .iter()
        .map(|(name, splits)| {
            let parts: Vec<String> = splits
                .iter()
                .map(|(split, s)| format!("{split}: {}", s.rows))
                .collect();
            format!("`{name}` ({})", parts.join(", "))
        })
        .collect();
    Some(listed.join("; "))
}

/// Value counts by table and column.
type Distributions = BTreeMap<String, BTreeMap<String, Vec<(String, u64)>>>;

/// The sources section's lines: who the rows came from, and when pages were fetched.
fn sources(manifest: &Manifest, all_distributions: &Distributions) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, dists) in all_distributions {
        for column in ["fact_checker", "backend", "format", "country"] {
            if let Some(values) = dists.get(column) {
                let listed: Vec<String> = values
                    .iter()
                    .take(15)
                    .map(|(v, n)| format!("{v} ({n})"))
                    .collect();
                lines.push(format!("`{name}` by `{column}`: {}", listed.join(", ")));
            }
        }
    }
    if let Some(window) = manifest
        .provenance
        .get("fetch_window")
        .and_then(|w| w.as_object())
    {
        for (name, w) in window {
            lines.push(format!(
                "`{name}`: fetched from the web between {} and {} ({} rows carry a fetch time).",
                w["first"].as_str().unwrap_or("?"),
                w["last"].as_str().unwrap_or("?"),
                w["rows"]
            ));
        }
    }
    lines
}

fn stage_card(s: &noisebench_core::StageSummary) -> StageCard {
    let reasons: Vec<String> = s
        .drop_reasons
        .iter()
        .map(|(r, n)| format!("{r}: {n}"))
        .collect();
    StageCard {
        id: s.id.clone(),
        kind: s.kind.clone(),
        items_in: s.items_in,
        items_out: s.items_out,
        items_dropped: s.items_dropped,
        reasons: reasons.join(", "),
    }
}

/// The labels section's lines: the distribution of each label-like column.
fn labels(all_distributions: &Distributions) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, dists) in all_distributions {
        for column in [
            "verdict",
            "original_rating",
            "label",
            "label_source",
            "kind",
            "source_type",
            "credibility",
            "split",
        ] {
            if let Some(values) = dists.get(column) {
                let listed: Vec<String> = values.iter().map(|(v, n)| format!("{v}: {n}")).collect();
                lines.push(format!("`{name}.{column}`: {}", listed.join(", ")));
            }
        }
    }
    lines
}

/// Every stage's facts through one path: the stage phrased them, the card lists them.
fn facts(manifest: &Manifest) -> Vec<FactsCard> {
    manifest
        .provenance
        .iter()
        .filter_map(|(key, value)| {
            let stage = key.strip_prefix("facts:")?;
            let facts = serde_json::from_value::<StageFacts>(value.clone()).ok()?;
            Some(FactsCard {
                title: facts.title,
                stage: stage.to_string(),
                lines: facts.lines,
            })
        })
        .collect()
}

/// The stages left with unfinished items, for a version published with `--allow-partial`.
fn unfinished(manifest: &Manifest) -> Option<Vec<UnfinishedCard>> {
    let unfinished = manifest
        .provenance
        .get("unfinished")
        .and_then(|u| u.as_object())?;
    Some(
        unfinished
            .iter()
            .map(|(stage, u)| UnfinishedCard {
                stage: stage.clone(),
                items: u["items"].to_string(),
                reasons: counts(u.get("reasons")),
            })
            .collect(),
    )
}

/// What the build checked before publishing: the failed gates and checks in full (a version
/// published with `--allow-degraded` holds data that broke them), then every result.
fn checks_card(checks: &[noisebench_core::CheckResult]) -> Option<ChecksCard> {
    use noisebench_core::{CheckKind, CheckStatus};
    if checks.is_empty() {
        return None;
    }
    let count = |s: CheckStatus| checks.iter().filter(|c| c.status == s).count();
    Some(ChecksCard {
        total: checks.len(),
        passed: count(CheckStatus::Passed),
        failed: count(CheckStatus::Failed),
        skipped: count(CheckStatus::Skipped),
        failed_lines: checks
            .iter()
            .filter(|c| c.failed())
            .map(|c| c.render())
            .collect(),
        rows: checks
            .iter()
            .map(|c| CheckCard {
                kind: match c.kind {
                    CheckKind::Gate => "gate",
                    CheckKind::Check => "check",
                },
                table: c.table.clone(),
                check: c.check.clone(),
                result: match c.status {
                    CheckStatus::Passed => "passed",
                    CheckStatus::Failed => "FAILED",
                    CheckStatus::Skipped => "skipped",
                },
                checked: c.checked,
                failed: c.failed,
            })
            .collect(),
    })
}

/// `{"a": 1, "b": 2}` as `a: 1, b: 2` (values as JSON scalars).
fn counts(v: Option<&serde_json::Value>) -> String {
    match v.and_then(|v| v.as_object()) {
        Some(m) if !m.is_empty() => m
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}: {s}"),
                other => format!("{k}: {other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => "none".into(),
    }
}

/// The LLM layer in one paragraph: backend, models and prompt versions per task, calls.
fn llm_paragraph(llm: &serde_json::Value) -> String {
    let mut out = format!(
        "LLM layer: backend `{}`, embeddings `{}`.",
        llm["backend"].as_str().unwrap_or("unknown"),
        llm["embedder"].as_str().unwrap_or("unknown"),
    );
    if let Some(tasks) = llm["tasks"].as_object()
        && !tasks.is_empty()
    {
        out.push_str(" Tasks used (model, prompt version): ");
        let listed: Vec<String> = tasks
            .iter()
            .map(|(t, v)| {
                format!(
                    "`{t}` ({}, {})",
                    v["model"].as_str().unwrap_or("?"),
                    v["prompt_version"].as_str().unwrap_or("?")
                )
            })
            .collect();
        out.push_str(&listed.join(", "));
        out.push('.');
    }
    let run = &llm["run"];
    if run.is_object() {
        out.push_str(&format!(
            " Calls over the stages' last runs: {} ({} cache hits, {} failed), {} tokens in, {} out, \
             estimated cost {:.4} USD.",
            run["calls"], run["cache_hits"], run["failures"], run["tokens_in"], run["tokens_out"],
            run["cost_usd"].as_f64().unwrap_or(0.0)
        ));
    }
    out
}
