//! Rechecking a published snapshot: every file's sha256 and size, row counts, schemas; the split
//! files (and that their rows add up to their table's) and `croissant.json`.

use std::path::Path;

use noisebench_core::{TableKind, TableSchema};
use noisebench_pipeline::table_io;

use crate::manifest::{CROISSANT, Manifest};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub tables_checked: usize,
    pub rows_checked: u64,
    pub exports_checked: usize,
    /// Per-split files checked (`data/<table>/<split>.parquet`).
    pub splits_checked: usize,
    pub problems: Vec<String>,
}

impl VerifyReport {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A file against its manifest entry: `Err` when it cannot be read, else what differs (its
/// sha256, its size).
fn file_problems(path: &Path, sha256: &str, bytes: u64) -> Result<Vec<String>, String> {
    let (sha, size) = table_io::hash_file(path).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    if sha != sha256 {
        problems.push(format!("sha256 {sha} differs from manifest {sha256}"));
    }
    if size != bytes {
        problems.push(format!("{size} bytes, manifest says {bytes}"));
    }
    Ok(problems)
}

/// A Parquet table against its manifest row count and its schema: what differs, and the rows
/// it holds (0 when it cannot be opened).
fn table_problems(path: &Path, schema: &TableSchema, rows: u64) -> (Vec<String>, u64) {
    match table_io::Table::open(path) {
        Err(e) => (vec![e.to_string()], 0),
        Ok(table) => {
            let n = table.rows() as u64;
            let mut problems = Vec::new();
            if n != rows {
                problems.push(format!("{n} rows, manifest says {rows}"));
            }
            if let Err(more) = table.check(schema) {
                problems.extend(more);
            }
            (problems, n)
        }
    }
}

/// Check the snapshot in `dir` against its manifest and the current schemas. Files the manifest
/// does not name are not part of the snapshot: each is a problem.
pub fn verify(dir: &Path) -> VerifyReport {
    let mut report = VerifyReport::default();
    let manifest = match Manifest::read(dir) {
        Ok(m) => m,
        Err(e) => {
            report.problems.push(e);
            return report;
        }
    };
    if dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .as_deref()
        != Some(manifest.version.as_str())
    {
        report.problems.push(format!(
            "folder name differs from manifest version {}",
            manifest.version
        ));
    }
    check_tables(dir, &manifest, &mut report);
    check_splits(dir, &manifest, &mut report);
    check_unlisted_data(dir, &manifest, &mut report);
    check_metadata(dir, &manifest, &mut report);
    check_exports(dir, &manifest, &mut report);
    for required in ["README.md", "CHANGES.md"] {
        if !dir.join(required).is_file() {
            report.problems.push(format!("{required} is missing"));
        }
    }
    report
}

/// Every table's file, schema and rows.
fn check_tables(dir: &Path, manifest: &Manifest, report: &mut VerifyReport) {
    for (name, entry) in &manifest.tables {
        let path = dir.join(&entry.file);
        let problem = |m: String| format!("table `{name}` ({}): {m}", entry.file);
        match file_problems(&path, &entry.sha256, entry.bytes) {
            Err(e) => {
                report.problems.push(problem(e));
                continue;
            }
            Ok(problems) => report.problems.extend(problems.into_iter().map(&problem)),
        }
        let Some(kind) = TableKind::from_name(&entry.kind) else {
            report
                .problems
                .push(problem(format!("unknown table kind `{}`", entry.kind)));
            continue;
        };
        let schema = kind.schema();
        if schema.fingerprint() != entry.schema_fingerprint {
            report.problems.push(problem(format!(
                "schema `{}` has changed since publication (manifest v{}, code v{})",
                schema.table, entry.schema_version, schema.version
            )));
        }
        let (problems, rows) = table_problems(&path, &schema, entry.rows);
        report.problems.extend(problems.into_iter().map(&problem));
        report.rows_checked += rows;
        report.tables_checked += 1;
    }
}

/// Every split file, and that a table's splits hold its rows.
fn check_splits(dir: &Path, manifest: &Manifest, report: &mut VerifyReport) {
    for (name, splits) in &manifest.splits {
        let Some(table) = manifest.tables.get(name) else {
            report
                .problems
                .push(format!("splits of `{name}`: no such table in the manifest"));
            continue;
        };
        let Some(kind) = TableKind::from_name(&table.kind) else {
            continue;
        };
        let mut rows = 0;
        for (split, entry) in splits {
            let problem = |m: String| format!("split `{split}` of `{name}` ({}): {m}", entry.file);
            let path = dir.join(&entry.file);
            match file_problems(&path, &entry.sha256, entry.bytes) {
                Err(e) => {
                    report.problems.push(problem(e));
                    continue;
                }
                Ok(problems) => report.problems.extend(problems.into_iter().map(&problem)),
            }
            let (problems, n) = table_problems(&path, &kind.schema(), entry.rows);
            report.problems.extend(problems.into_iter().map(&problem));
            rows += n;
            report.splits_checked += 1;
        }
        if rows != table.rows {
            report.problems.push(format!(
                "splits of `{name}` hold {rows} rows, the table {}",
                table.rows
            ));
        }
    }
}

/// Files under `data/` that the manifest does not list.
fn check_unlisted_data(dir: &Path, manifest: &Manifest, report: &mut VerifyReport) {
    let data = dir.join("data");
    for entry in std::fs::read_dir(&data).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            for inner in std::fs::read_dir(entry.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let file = format!("data/{name}/{}", inner.file_name().to_string_lossy());
                let listed = manifest
                    .splits
                    .get(&name)
                    .is_some_and(|s| s.values().any(|e| e.file == file));
                if !listed {
                    report
                        .problems
                        .push(format!("{file} is not in the manifest"));
                }
            }
            continue;
        }
        let file = format!("data/{name}");
        if !manifest.tables.values().any(|t| t.file == file) {
            report
                .problems
                .push(format!("{file} is not in the manifest"));
        }
    }
}

/// The metadata files (`croissant.json`) against the manifest.
fn check_metadata(dir: &Path, manifest: &Manifest, report: &mut VerifyReport) {
    for (file, entry) in &manifest.metadata {
        let problems =
            file_problems(&dir.join(file), &entry.sha256, entry.bytes).unwrap_or_else(|e| vec![e]);
        report
            .problems
            .extend(problems.into_iter().map(|m| format!("{file}: {m}")));
    }
    // Versions published before Croissant have no croissant.json; a later one must list its own.
    if dir.join(CROISSANT).is_file() && !manifest.metadata.contains_key(CROISSANT) {
        report
            .problems
            .push(format!("{CROISSANT} is not in the manifest"));
    }
}

/// Every export file, and files under `exports/` that the manifest does not list.
fn check_exports(dir: &Path, manifest: &Manifest, report: &mut VerifyReport) {
    for (file, entry) in &manifest.exports {
        let problems =
            file_problems(&dir.join(file), &entry.sha256, entry.bytes).unwrap_or_else(|e| vec![e]);
        report
            .problems
            .extend(problems.into_iter().map(|m| format!("export {file}: {m}")));
        report.exports_checked += 1;
    }
    for folder in std::fs::read_dir(dir.join("exports"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for entry in std::fs::read_dir(folder.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let file = format!(
                "exports/{}/{}",
                folder.file_name().to_string_lossy(),
                entry.file_name().to_string_lossy()
            );
            if !manifest.exports.contains_key(&file) {
                report
                    .problems
                    .push(format!("{file} is not in the manifest"));
            }
        }
    }
}
