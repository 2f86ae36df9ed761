//! One shape for every release format: a [`ReleaseFormat`] says which tables it reads, which
//! files it writes, how it writes them from any [`TableSource`] and how it reads them back.
//! [`formats`](crate::formats) (at the crate root) is the one list: `noisebench export`, the
//! export stages ([`ExportStage`](crate::ExportStage), `export-<name>`) and the reference docs
//! derive from it, so adding a format is a module of this crate, a line in that list, and the
//! round trip every format passes in this crate's tests (`tests/it/formats.rs`).

use std::path::Path;

use noisebench_core::{InputSpec, Rows, TableKind, TableRow};

use crate::summary::{ExportSummary, RareSummary};

/// A table source's error, or an export's: boxed, whatever its type.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Where an export's tables come from: a published snapshot version, a stage's inputs, or
/// tables in memory. Object-safe: a format reads through `dyn TableSource`.
pub trait TableSource {
    /// The rows of `kind`'s table, or `None` when the source has no such table. A format asks
    /// for each kind once: a source may hand its rows over rather than copy them, and then
    /// has none the second time.
    fn rows(&self, kind: TableKind) -> Result<Option<Rows>, BoxError>;
}

impl dyn TableSource + '_ {
    /// The table of `T`'s kind, typed; `None` when the source has none.
    pub fn read<T: TableRow>(&self) -> Result<Option<Vec<T>>, BoxError> {
        match self.rows(T::KIND)? {
            None => Ok(None),
            Some(rows) => T::from_rows(rows).map(Some).map_err(|other| {
                format!("expected table `{}`, got `{}`", T::KIND, other.kind()).into()
            }),
        }
    }

    /// The table of `T`'s kind; a source without it is an error naming the table.
    pub fn require<T: TableRow>(&self) -> Result<Vec<T>, BoxError> {
        self.read::<T>()?
            .ok_or_else(|| format!("no `{}` table", T::KIND.name()).into())
    }

    /// The table of `T`'s kind, empty when the source has none.
    pub fn read_or_empty<T: TableRow>(&self) -> Result<Vec<T>, BoxError> {
        Ok(self.read::<T>()?.unwrap_or_default())
    }
}

/// Tables in memory, by kind (tests, and callers that already hold rows).
#[derive(Debug, Default)]
pub struct MemoryTables(pub Vec<Rows>);

impl TableSource for MemoryTables {
    fn rows(&self, kind: TableKind) -> Result<Option<Rows>, BoxError> {
        Ok(self.0.iter().find(|r| r.kind() == kind).cloned())
    }
}

/// One item an export left out: (item id, reason code, detail).
pub type Skipped = (String, &'static str, String);

/// What an export wrote: the claims track's summary, the RARE records', or records of a
/// format with no summary of its own.
#[derive(Debug, Clone)]
pub enum Exported {
    Claims(ExportSummary),
    Rare(RareSummary),
    Records {
        /// Records written.
        written: usize,
        /// Items left out, each with its reason.
        skipped: Vec<Skipped>,
    },
}

impl Exported {
    /// Items written: claim–document pairs, RARE records, records.
    pub fn written(&self) -> usize {
        match self {
            Exported::Claims(s) => s.documents,
            Exported::Rare(s) => s.single_hop + s.multi_hop,
            Exported::Records { written, .. } => *written,
        }
    }

    /// Items left out, each `(id, reason, detail)`: every item read is written or here.
    pub fn skipped(&self) -> Vec<Skipped> {
        match self {
            Exported::Claims(s) => s
                .skipped
                .iter()
                .map(|p| (p.label_id.clone(), p.reason, p.detail.clone()))
                .collect(),
            Exported::Rare(s) => s.skipped.clone(),
            Exported::Records { skipped, .. } => skipped.clone(),
        }
    }

    /// One line saying what was written to `out` and what was left out (with the reasons'
    /// counts).
    pub fn describe(&self, snapshot: &Path, out: &Path) -> String {
        let mut reasons: std::collections::BTreeMap<&str, usize> = Default::default();
        for (_, reason, _) in self.skipped() {
            *reasons.entry(reason).or_default() += 1;
        }
        let reasons: Vec<String> = reasons.iter().map(|(r, n)| format!("{r} {n}")).collect();
        let reasons = if reasons.is_empty() {
            String::new()
        } else {
            format!(": {}", reasons.join(", "))
        };
        match self {
            Exported::Claims(s) => format!(
                "{}: {} claims, {} documents written to {} ({} claims without a true/false verdict and {} label rows left out{reasons})",
                snapshot.display(),
                s.claims,
                s.documents,
                out.display(),
                s.claims_without_binary_verdict,
                s.pairs_skipped(),
            ),
            Exported::Rare(s) => format!(
                "{}: {} single-hop and {} multi-hop records written to {} ({} questions left out{reasons})",
                snapshot.display(),
                s.single_hop,
                s.multi_hop,
                out.display(),
                s.skipped.len()
            ),
            Exported::Records { written, skipped } => format!(
                "{}: {written} records written to {} ({} left out{reasons})",
                snapshot.display(),
                out.display(),
                skipped.len()
            ),
        }
    }
}

/// A paper's release format: its records, writer and reader live in its module; this is the
/// face everything else uses.
pub trait ReleaseFormat: Send + Sync {
    /// The name `noisebench export --format`, `exports/<name>/` in snapshots and the stage kind
    /// `export-<name>` use.
    fn name(&self) -> &'static str;
    /// The export stage's kind: `export-<name>` (a test holds every format to it).
    fn stage_kind(&self) -> &'static str;
    /// The export stage's version: bump it when the same tables give other files.
    fn version(&self) -> u32;
    /// One line for `noisebench export --help` and docs/cli.md (the choice's help).
    fn about(&self) -> &'static str;
    /// The table whose rows are its items: each one written or left out with a reason.
    fn items(&self) -> TableKind;
    /// The tables it reads, as the export stage's inputs (role, kind, required).
    fn inputs(&self) -> Vec<InputSpec>;
    /// The files it writes into its folder, in order.
    fn files(&self) -> Vec<&'static str>;
    /// Write the release into the folder `out` from `tables`: every item it reads (a label
    /// row, a question) written or left out with a reason.
    fn export(&self, tables: &dyn TableSource, out: &Path) -> Result<Exported, BoxError>;
    /// Read back what [`Self::export`] wrote into `dir`, strictly: the number of items written.
    fn read_back(&self, dir: &Path) -> Result<usize, BoxError>;
}
