//! The Hugging Face dataset card (`README.md`): a YAML header with one config per table and its
//! features, then sections on the tables, sources, construction, labels, limitations and versioning.

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_core::{DType, StageFacts, TableKind};
use noisebench_pipeline::table_io;

use crate::changes::Changes;
use crate::manifest::Manifest;
use crate::request::PublishRequest;

pub struct CardInput<'a> {
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

fn hf_feature(name: &str, dtype: DType) -> String {
    match dtype {
        DType::Str | DType::Json => format!("  - name: {name}\n    dtype: string\n"),
        DType::Int => format!("  - name: {name}\n    dtype: int64\n"),
        DType::Float => format!("  - name: {name}\n    dtype: float64\n"),
        DType::Bool => format!("  - name: {name}\n    dtype: bool\n"),
        DType::StrList => format!("  - name: {name}\n    sequence: string\n"),
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

pub fn render_card(input: &CardInput<'_>) -> Result<String, String> {
    let request = input.request;
    let manifest = input.manifest;
    let mut out = String::from("---\n");
    let title = if request.title.is_empty() {
        request.dataset.clone()
    } else {
        request.title.clone()
    };
    out.push_str(&format!("pretty_name: {}\n", yaml_string(&title)));
    out.push_str(&format!(
        "license: {}\n",
        request.license.as_deref().unwrap_or("other")
    ));
    out.push_str("tags:\n- noisebench\n- retrieval-augmented-generation\n- robustness\n");
    out.push_str("configs:\n");
    for (name, entry) in &manifest.tables {
        out.push_str(&format!("- config_name: {name}\n  data_files:\n"));
        match manifest.splits.get(name) {
            Some(splits) => {
                for (split, s) in splits {
                    out.push_str(&format!("  - split: {split}\n    path: {}\n", s.file));
                }
            }
            None => out.push_str(&format!("  - split: train\n    path: {}\n", entry.file)),
        }
    }
    out.push_str("dataset_info:\n");
    for (name, entry) in &manifest.tables {
        let kind = TableKind::from_name(&entry.kind)
            .ok_or_else(|| format!("unknown table kind `{}`", entry.kind))?;
        out.push_str(&format!("- config_name: {name}\n  features:\n"));
        for column in kind.schema().columns {
            out.push_str(&hf_feature(&column.name, column.dtype));
        }
        out.push_str("  splits:\n");
        match manifest.splits.get(name) {
            Some(splits) => {
                for (split, s) in splits {
                    out.push_str(&format!(
                        "  - name: {split}\n    num_bytes: {}\n    num_examples: {}\n",
                        s.bytes, s.rows
                    ));
                }
            }
            None => out.push_str(&format!(
                "  - name: train\n    num_bytes: {}\n    num_examples: {}\n",
                entry.bytes, entry.rows
            )),
        }
    }
    out.push_str("---\n\n");

    out.push_str(&format!("# {title}\n\n"));
    if !request.description.is_empty() {
        out.push_str(&format!("{}\n\n", request.description.trim()));
    }
    out.push_str(&format!(
        "Version **{}** of `{}`, built by [noisebench](https://github.com/noisebench/noisebench) ({}) from the \
         pipeline `{}` (configuration sha256 `{}`) on {}.\n\n",
        manifest.version, manifest.dataset, manifest.code_version, manifest.pipeline, manifest.config_hash, manifest.created_at
    ));

    out.push_str("## Tables\n\n| config | rows | description |\n|---|---:|---|\n");
    let mut all_distributions = BTreeMap::new();
    for (name, entry) in &manifest.tables {
        let kind = TableKind::from_name(&entry.kind)
            .ok_or_else(|| format!("unknown table kind `{}`", entry.kind))?;
        out.push_str(&format!(
            "| `{name}` | {} | {} |\n",
            entry.rows,
            kind.schema().description
        ));
        all_distributions.insert(
            name.clone(),
            distributions(kind, &input.dir.join(&entry.file))?,
        );
    }
    out.push_str("\nLoad one table with `datasets.load_dataset(\"<repo>\", \"<config>\")` or open the Parquet file \
                  directly with pandas, polars or DuckDB. Each table has its own columns: join on the id columns \
                  (`claim_id`, `document_id`, `report_id`, `question_id`).\n\n");
    if !manifest.splits.is_empty() {
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
        out.push_str(&format!(
            "Splits: the configs whose rows belong to a question are cut by `question_splits` into one file per \
             split, so `load_dataset` gives their real splits: {}. The full table stays in `data/<table>.parquet`. \
             Every other config has a single `train` split only because `datasets` needs one: claims, documents, \
             search hits and the rest are shared by all questions and are not train/test data.\n\n",
            listed.join("; ")
        ));
    }
    if manifest.metadata.contains_key(crate::manifest::CROISSANT) {
        out.push_str(
            "Croissant 1.1 metadata (files, record sets, splits, provenance, Responsible AI fields) is in \
             `croissant.json`: `mlcroissant.Dataset(jsonld=\"croissant.json\").records(\"<table>\")`.\n\n",
        );
    }
    for (name, entry) in &manifest.tables {
        let kind = TableKind::from_name(&entry.kind).expect("checked above");
        out.push_str(&format!(
            "### `{name}` columns\n\n| column | type | description |\n|---|---|---|\n"
        ));
        for column in kind.schema().columns {
            let null = if column.nullable { ", nullable" } else { "" };
            out.push_str(&format!(
                "| `{}` | {:?}{null} | {} |\n",
                column.name, column.dtype, column.description
            ));
        }
        out.push('\n');
    }

    if !manifest.exports.is_empty() {
        out.push_str(
            "## Exports\n\nThe same data in the shapes the original releases' loaders read (not Hugging Face \
             configs; sha256 in `manifest.json`):\n\n| file | format | bytes |\n|---|---|---:|\n",
        );
        for (file, e) in &manifest.exports {
            out.push_str(&format!("| `{file}` | {} | {} |\n", e.format, e.bytes));
        }
        out.push('\n');
    }

    out.push_str("## Sources\n\n");
    let mut sources_listed = false;
    for (name, dists) in &all_distributions {
        for column in ["fact_checker", "backend", "format", "country"] {
            if let Some(values) = dists.get(column) {
                sources_listed = true;
                let listed: Vec<String> = values
                    .iter()
                    .take(15)
                    .map(|(v, n)| format!("{v} ({n})"))
                    .collect();
                out.push_str(&format!(
                    "- `{name}` by `{column}`: {}\n",
                    listed.join(", ")
                ));
            }
        }
    }
    if let Some(window) = manifest
        .provenance
        .get("fetch_window")
        .and_then(|w| w.as_object())
    {
        for (name, w) in window {
            sources_listed = true;
            out.push_str(&format!(
                "- `{name}`: fetched from the web between {} and {} ({} rows carry a fetch time).\n",
                w["first"].as_str().unwrap_or("?"),
                w["last"].as_str().unwrap_or("?"),
                w["rows"]
            ));
        }
    }
    if !sources_listed {
        out.push_str("- See the construction section for the stages that produced each table.\n");
    }
    out.push('\n');

    out.push_str("## Construction\n\nStages in the order they ran (items in, out, dropped with reasons):\n\n");
    out.push_str(
        "| stage | kind | in | out | dropped | drop reasons |\n|---|---|---:|---:|---:|---|\n",
    );
    for s in &request.stages {
        let reasons: Vec<String> = s
            .drop_reasons
            .iter()
            .map(|(r, n)| format!("{r}: {n}"))
            .collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            s.id,
            s.kind,
            s.items_in,
            s.items_out,
            s.items_dropped,
            reasons.join(", ")
        ));
    }
    if let Some(llm) = manifest.provenance.get("llm") {
        out.push_str(&llm_paragraph(llm));
    }
    out.push('\n');

    out.push_str("## Labels\n\n");
    let mut labels_listed = false;
    for (name, dists) in &all_distributions {
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
                labels_listed = true;
                let listed: Vec<String> = values.iter().map(|(v, n)| format!("{v}: {n}")).collect();
                out.push_str(&format!("- `{name}.{column}`: {}\n", listed.join(", ")));
            }
        }
    }
    if !labels_listed {
        out.push_str("- No label columns in this snapshot.\n");
    }
    // Every stage's facts through one path: the stage phrased them, the card lists them.
    for (key, value) in &manifest.provenance {
        let Some(stage) = key.strip_prefix("facts:") else {
            continue;
        };
        let Ok(facts) = serde_json::from_value::<StageFacts>(value.clone()) else {
            continue;
        };
        out.push_str(&format!("\n### {} (stage `{stage}`)\n\n", facts.title));
        for line in &facts.lines {
            out.push_str(&format!("- {line}\n"));
        }
    }
    out.push_str(
        "\nClaims carry a binary `verdict` mapped from the fact-checker's `original_rating` by the configured verdict \
         preset (`raguard` counts half-true as true, as the RAGuard release does; `strict` drops it). Rows whose \
         provenance says `offline` were produced by deterministic rules, not by a language model.\n\n",
    );

    out.push_str(
        "## Limitations\n\n\
         - Verdicts are the fact-checkers' judgements mapped to two classes; the mapping loses nuance (half-true, \
         cherry-picking) and the preset decides where it goes.\n\
         - Sources are what the configured inputs and search backends returned at build time; the web changes, \
         and a rebuild may differ. The manifest records the pipeline configuration hash so differences can be traced.\n\
         - Dropped items are counted by reason in the construction table; they are not in the data.\n\
         - Labels made by the offline backend are rule-based stand-ins meant for testing pipelines, not gold labels.\n\n",
    );

    if let Some(unfinished) = manifest
        .provenance
        .get("unfinished")
        .and_then(|u| u.as_object())
    {
        out.push_str(
            "## Published with unfinished items\n\nThis version was published with `--allow-partial`: these \
             stages had items that failed for a transient cause (network, rate limit, server error, budget) and \
             are missing from the data.\n\n| stage | items | reasons |\n|---|---:|---|\n",
        );
        for (stage, u) in unfinished {
            out.push_str(&format!(
                "| `{stage}` | {} | {} |\n",
                u["items"],
                counts(u.get("reasons"))
            ));
        }
        out.push('\n');
    }

    out.push_str(&checks_section(&manifest.checks));

    out.push_str("## Versioning\n\n");
    match &manifest.parent {
        Some(parent) => out.push_str(&format!(
            "This version follows {parent}. Versions follow semver as Croissant 1.1 applies it to datasets: \
             rows only added -> minor, rows changed or removed -> major, same rows re-serialised -> patch. \
             See `CHANGES.md`.\n"
        )),
        None => out.push_str(
            "This is the first version. Later versions follow semver as Croissant 1.1 applies it to datasets: \
             rows only added -> minor, rows changed or removed -> major, same rows re-serialised -> patch.\n",
        ),
    }
    let (added, changed, removed) = input.changes.tables.values().fold((0, 0, 0), |acc, t| {
        (
            acc.0 + t.added.len(),
            acc.1 + t.changed.len(),
            acc.2 + t.removed.len(),
        )
    });
    out.push_str(&format!(
        "\nAgainst the parent: {added} rows added, {changed} changed, {removed} removed.\n"
    ));
    Ok(out)
}

/// `{"a": 1, "b": 2}` as `a: 1, b: 2` (values as JSON scalars).
/// What the build checked before publishing: the failed gates and checks in full (a version
/// published with `--allow-degraded` holds data that broke them), then every result.
fn checks_section(checks: &[noisebench_core::CheckResult]) -> String {
    use noisebench_core::{CheckKind, CheckStatus};
    if checks.is_empty() {
        return String::new();
    }
    let count = |s: CheckStatus| checks.iter().filter(|c| c.status == s).count();
    let mut out = format!(
        "## Checks\n\nThe build judged what each stage lost (gates) and checked the tables' rows, {} results in all: {} passed, {} failed, {} skipped (a table they need was not there).\n\n",
        checks.len(),
        count(CheckStatus::Passed),
        count(CheckStatus::Failed),
        count(CheckStatus::Skipped)
    );
    let failed: Vec<_> = checks.iter().filter(|c| c.failed()).collect();
    if !failed.is_empty() {
        out.push_str(
            "**Published with `--allow-degraded`: these failed, and the data shows it.**\n\n",
        );
        for c in &failed {
            out.push_str(&format!("- {}\n", c.render()));
        }
        out.push('\n');
    }
    out.push_str("<details><summary>Every gate and check</summary>\n\n| kind | stage or table | check | result | checked | failed |\n|---|---|---|---|---:|---:|\n");
    for c in checks {
        out.push_str(&format!(
            "| {} | `{}` | `{}` | {} | {} | {} |\n",
            match c.kind {
                CheckKind::Gate => "gate",
                CheckKind::Check => "check",
            },
            c.table,
            c.check,
            match c.status {
                CheckStatus::Passed => "passed",
                CheckStatus::Failed => "FAILED",
                CheckStatus::Skipped => "skipped",
            },
            c.checked,
            c.failed
        ));
    }
    out.push_str("\n</details>\n\n");
    out
}

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
        "\nLLM layer: backend `{}`, embeddings `{}`.",
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
    out.push('\n');
    out
}
