//! `inspect`: a stage's tables, or an id and every row of a run that names it.

use anyhow::{Context, Result, bail};
use noisebench_core::{DropRecord, TableKind};
use noisebench_pipeline::table_io;

use crate::Workspace;

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
