//! `validate`: a published snapshot checked against its tables' declared checks.
//!
//! `verify` checks that the files are the ones the manifest names (hashes, sizes, schemas);
//! this checks what the rows say, with the same checks a build runs after each stage and before
//! publishing: core's (unique, non-empty ids; references between tables; accepted values;
//! multi-hop questions with two chunks, every pair labelled, rejected questions not kept) and
//! the registry's (answers grounded in their chunks, no chunk answering a multi-hop question
//! alone, no repeated question text). A check whose tables the snapshot lacks is skipped, not
//! failed, so the same command serves the claims-only and report-only datasets.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;
use noisebench_core::CheckResult;
use noisebench_pipeline::{PublishedTable, check_published};
use noisebench_snapshot::PublishedVersion;

/// Every check's result for one snapshot version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationReport {
    /// The version folder validated.
    pub snapshot: PathBuf,
    /// One result per check of each published table, table by table.
    pub checks: Vec<CheckResult>,
}

impl ValidationReport {
    /// No check failed (skipped checks do not fail).
    pub fn ok(&self) -> bool {
        !self.checks.iter().any(CheckResult::failed)
    }

    /// The result of the check called `name`: a failed one if any table failed it, else the
    /// first.
    pub fn check(&self, name: &str) -> Option<&CheckResult> {
        let mut named = self.checks.iter().filter(|c| c.check == name);
        let first = named.clone().next();
        named.find(|c| c.failed()).or(first)
    }

    /// Names of the checks that failed (each once, in the order they ran).
    pub fn failed_checks(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for c in self.checks.iter().filter(|c| c.failed()) {
            if !names.contains(&c.check.as_str()) {
                names.push(&c.check);
            }
        }
        names
    }

    /// One line per check, then a verdict line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for c in &self.checks {
            let _ = writeln!(out, "{}", c.render());
        }
        let failed = self.failed_checks();
        let _ = if failed.is_empty() {
            writeln!(out, "{}: valid", self.snapshot.display())
        } else {
            writeln!(
                out,
                "{}: {} checks failed ({})",
                self.snapshot.display(),
                failed.len(),
                failed.join(", ")
            )
        };
        out
    }
}

/// Validate a snapshot: a version folder, or a dataset folder (its latest version). Errors only
/// when the snapshot cannot be read; broken rules are in the report.
pub fn validate_snapshot(path: &Path) -> Result<ValidationReport> {
    let version = PublishedVersion::open(path)?;
    let tables: Vec<PublishedTable> = version
        .tables()?
        .into_iter()
        .map(|t| PublishedTable {
            name: t.name,
            kind: t.kind,
            path: t.path,
        })
        .collect();
    let checks = check_published(&tables, &crate::registry::table_checks());
    Ok(ValidationReport {
        snapshot: version.dir().to_path_buf(),
        checks,
    })
}
