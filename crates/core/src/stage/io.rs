//! What a stage reads and writes: its input and output specs, the tables given to it, its side files, its output.

use std::collections::BTreeMap;

use crate::rows::{Rows, TableKind, TableRow};

use super::{StageError, StageFacts, StageReport};

/// An input a stage expects: a role name (the key in the pipeline file's `inputs`) and its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSpec {
    pub role: &'static str,
    pub kind: TableKind,
    pub required: bool,
}

impl InputSpec {
    /// An input the stage cannot run without.
    pub const fn required(role: &'static str, kind: TableKind) -> Self {
        Self {
            role,
            kind,
            required: true,
        }
    }

    /// An input the stage uses when the pipeline gives it.
    pub const fn optional(role: &'static str, kind: TableKind) -> Self {
        Self {
            role,
            kind,
            required: false,
        }
    }
}

/// A table a stage writes. The first output is the stage's main table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    pub name: &'static str,
    pub kind: TableKind,
}

impl OutputSpec {
    pub const fn new(name: &'static str, kind: TableKind) -> Self {
        Self { name, kind }
    }
}

/// The tables given to a stage, by role.
#[derive(Debug, Default)]
pub struct Inputs {
    tables: BTreeMap<String, Rows>,
}

impl Inputs {
    pub fn new(tables: BTreeMap<String, Rows>) -> Self {
        Self { tables }
    }

    /// Take the rows of `role`, typed. Errors if the role is missing or holds another table.
    pub fn take<T: TableRow>(&mut self, role: &str) -> Result<Vec<T>, StageError> {
        let rows = self.tables.remove(role).ok_or_else(|| StageError::Input {
            role: role.into(),
            message: "not given".into(),
        })?;
        T::from_rows(rows).map_err(|other| StageError::Input {
            role: role.into(),
            message: format!("expected table {}, got {}", T::KIND, other.kind()),
        })
    }

    /// The rows of `role` as given, untyped (a stage that reads tables by kind); `None` when
    /// not given.
    pub fn take_rows(&mut self, role: &str) -> Option<Rows> {
        self.tables.remove(role)
    }

    /// Like [`Inputs::take`] for an optional input: `None` when not given.
    pub fn take_optional<T: TableRow>(&mut self, role: &str) -> Result<Option<Vec<T>>, StageError> {
        if self.tables.contains_key(role) {
            self.take(role).map(Some)
        } else {
            Ok(None)
        }
    }
}
/// A file (not a table) a stage writes into its stage directory: an export, a review sheet, a
/// graph in GraphML. Declared by the stage for a configuration, so the runner removes it before a
/// rerun, checks it was written, and hashes it into the stage record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideFile {
    /// The file name inside the stage directory.
    pub name: String,
    /// Publish it inside snapshots as `exports/<format>/<name>` (the papers' release formats).
    pub export: Option<&'static str>,
}

impl SideFile {
    /// A file kept beside the stage's tables.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            export: None,
        }
    }

    /// A file published in snapshots under `exports/<format>/`.
    pub fn export(name: impl Into<String>, format: &'static str) -> Self {
        Self {
            name: name.into(),
            export: Some(format),
        }
    }
}

/// A stage's result: output tables by name, its report and, optionally, its facts.
#[derive(Debug, Default)]
pub struct StageOutput {
    pub tables: BTreeMap<String, Rows>,
    pub report: StageReport,
    pub facts: Option<StageFacts>,
}

impl StageOutput {
    /// An output with this report and, so far, no tables.
    pub fn new(report: StageReport) -> Self {
        Self {
            report,
            ..Self::default()
        }
    }

    /// Add the stage's facts (see [`StageFacts`]).
    pub fn with_facts(mut self, facts: StageFacts) -> Self {
        self.facts = Some(facts);
        self
    }

    pub fn with_table<T: TableRow>(mut self, name: &str, rows: Vec<T>) -> Self {
        self.tables.insert(name.into(), T::into_rows(rows));
        self
    }
}
