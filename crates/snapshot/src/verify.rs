//! Rechecking a published snapshot: every file's sha256 and size, row counts, schemas; the split
//! files (and that their rows add up to their table's) and `croissant.json`.

use std::path::Path;

use noisebench_core::TableKind;
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

/// Check the snapshot in `dir` against its manifest and the current schemas.
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
    for (name, entry) in &manifest.tables {
        let path = dir.join(&entry.file);
        let problem = |m: String| format!("table `{name}` ({}): {m}", entry.file);
        match table_io::hash_file(&path) {
            Err(e) => {
                report.problems.push(problem(e.to_string()));
                continue;
            }
            Ok((sha, bytes)) => {
                if sha != entry.sha256 {
                    report.problems.push(problem(format!(
                        "sha256 {sha} differs from manifest {}",
                        entry.sha256
                    )));
                }
                if bytes != entry.bytes {
                    report.problems.push(problem(format!(
                        "{bytes} bytes, manifest says {}",
                        entry.bytes
                    )));
                }
            }
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
        match table_io::Table::open(&path) {
            Err(e) => report.problems.push(problem(e.to_string())),
            Ok(table) => {
                if table.rows() as u64 != entry.rows {
                    report.problems.push(problem(format!(
                        "{} rows, manifest says {}",
                        table.rows(),
                        entry.rows
                    )));
                }
                if let Err(problems) = table.check(&schema) {
                    report.problems.extend(problems.into_iter().map(&problem));
                }
                report.rows_checked += table.rows() as u64;
            }
        }
        report.tables_checked += 1;
    }
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
            match table_io::hash_file(&path) {
                Err(e) => {
                    report.problems.push(problem(e.to_string()));
                    continue;
                }
                Ok((sha, bytes)) => {
                    if sha != entry.sha256 {
                        report.problems.push(problem(format!(
                            "sha256 {sha} differs from manifest {}",
                            entry.sha256
                        )));
                    }
                    if bytes != entry.bytes {
                        report.problems.push(problem(format!(
                            "{bytes} bytes, manifest says {}",
                            entry.bytes
                        )));
                    }
                }
            }
            match table_io::Table::open(&path) {
                Err(e) => report.problems.push(problem(e.to_string())),
                Ok(t) => {
                    rows += t.rows() as u64;
                    if t.rows() as u64 != entry.rows {
                        report.problems.push(problem(format!(
                            "{} rows, manifest says {}",
                            t.rows(),
                            entry.rows
                        )));
                    }
                    if let Err(problems) = t.check(&kind.schema()) {
                        report.problems.extend(problems.into_iter().map(&problem));
                    }
                }
            }
            report.splits_checked += 1;
        }
        if rows != table.rows {
            report.problems.push(format!(
                "splits of `{name}` hold {rows} rows, the table {}",
                table.rows
            ));
        }
    }
    // Files the manifest does not name are not part of the snapshot.
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
    for (file, entry) in &manifest.metadata {
        match table_io::hash_file(&dir.join(file)) {
            Err(e) => report.problems.push(format!("{file}: {e}")),
            Ok((sha, bytes)) => {
                if sha != entry.sha256 {
                    report.problems.push(format!(
                        "{file}: sha256 {sha} differs from manifest {}",
                        entry.sha256
                    ));
                }
                if bytes != entry.bytes {
                    report.problems.push(format!(
                        "{file}: {bytes} bytes, manifest says {}",
                        entry.bytes
                    ));
                }
            }
        }
    }
    // Versions published before Croissant have no croissant.json; a later one must list its own.
    if dir.join(CROISSANT).is_file() && !manifest.metadata.contains_key(CROISSANT) {
        report
            .problems
            .push(format!("{CROISSANT} is not in the manifest"));
    }
    for (file, entry) in &manifest.exports {
        match table_io::hash_file(&dir.join(file)) {
            Err(e) => report.problems.push(format!("export {file}: {e}")),
            Ok((sha, bytes)) => {
                if sha != entry.sha256 {
                    report.problems.push(format!(
                        "export {file}: sha256 {sha} differs from manifest {}",
                        entry.sha256
                    ));
                }
                if bytes != entry.bytes {
                    report.problems.push(format!(
                        "export {file}: {bytes} bytes, manifest says {}",
                        entry.bytes
                    ));
                }
            }
        }
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
    for required in ["README.md", "CHANGES.md"] {
        if !dir.join(required).is_file() {
            report.problems.push(format!("{required} is missing"));
        }
    }
    report
}
