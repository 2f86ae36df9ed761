//! Row-level changes between two versions, by id.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use noisebench_core::{Chunk, Question, Report, TableKind, TableRow, Triplet};
use noisebench_pipeline::table_io;
use serde::{Deserialize, Serialize};

use crate::manifest::Manifest;

/// How many ids per list CHANGES.md shows; changes.json has them all.
const LISTED: usize = 50;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableChanges {
    pub rows_before: u64,
    pub rows_after: u64,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    /// Rows that differ only in fetch bookkeeping (`fetched_at`, `archive_ref`): refetched,
    /// unchanged in content. They do not call for a new version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refetched: Vec<String>,
    /// The file's bytes differ although no row does (re-serialised).
    pub reserialised: bool,
    pub table_added: bool,
    pub table_removed: bool,
}

impl TableChanges {
    pub fn rows_differ(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changes {
    pub from: Option<String>,
    pub to: String,
    pub tables: BTreeMap<String, TableChanges>,
    /// The report track's changes by report: each report added, removed or changed, or whose
    /// chunks, triplets or questions changed, with the ids of those rows. Empty when the
    /// versions hold no `reports` table or nothing of it changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reports: Vec<ReportChange>,
    /// Export files (by path inside the snapshot, `exports/confact/confact.json`) added, removed
    /// or whose bytes differ from the parent's; unchanged ones are not listed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exports: BTreeMap<String, ExportChange>,
}

/// One export file that differs between two versions, compared by sha256.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportChange {
    /// `added`, `removed` or `changed`.
    pub status: String,
    pub sha256_before: Option<String>,
    pub sha256_after: Option<String>,
    pub bytes_before: Option<u64>,
    pub bytes_after: Option<u64>,
}

/// The export files that differ between `before` and `after` (path -> (sha256, bytes)).
pub fn diff_exports(
    before: &BTreeMap<String, (String, u64)>,
    after: &BTreeMap<String, (String, u64)>,
) -> BTreeMap<String, ExportChange> {
    let mut changes = BTreeMap::new();
    for file in before.keys().chain(after.keys()) {
        let (old, new) = (before.get(file), after.get(file));
        let status = match (old, new) {
            (None, Some(_)) => "added",
            (Some(_), None) => "removed",
            (Some(a), Some(b)) if a.0 != b.0 => "changed",
            _ => continue,
        };
        changes.insert(
            file.clone(),
            ExportChange {
                status: status.into(),
                sha256_before: old.map(|o| o.0.clone()),
                sha256_after: new.map(|n| n.0.clone()),
                bytes_before: old.map(|o| o.1),
                bytes_after: new.map(|n| n.1),
            },
        );
    }
    changes
}

/// A manifest's exports as path -> (sha256, bytes), for [`diff_exports`].
pub fn export_hashes(manifest: &Manifest) -> BTreeMap<String, (String, u64)> {
    manifest
        .exports
        .iter()
        .map(|(file, e)| (file.clone(), (e.sha256.clone(), e.bytes)))
        .collect()
}

impl ExportChange {
    /// One line for the card: "`file` changed (7 -> 5 bytes)".
    pub fn describe(&self, file: &str) -> String {
        let bytes = |b: Option<u64>| b.map_or_else(|| "-".to_string(), |b| b.to_string());
        match self.status.as_str() {
            "added" => format!("`{file}` added ({} bytes)", bytes(self.bytes_after)),
            "removed" => format!("`{file}` removed (was {} bytes)", bytes(self.bytes_before)),
            _ => format!(
                "`{file}` {} ({} -> {} bytes)",
                self.status,
                bytes(self.bytes_before),
                bytes(self.bytes_after)
            ),
        }
    }
}

/// Added, removed and changed ids of one table, for one report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowDelta {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

impl RowDelta {
    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    fn counts(&self) -> String {
        format!(
            "+{} -{} ~{}",
            self.added.len(),
            self.removed.len(),
            self.changed.len()
        )
    }
}

/// What changed of one report between two versions. A report keeps its id across versions
/// while its identity holds (an EDGAR filing: company, form and period; an amendment under
/// `replace` keeps its original's id), so a revised report is `changed`, and a new fiscal
/// year is a new report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportChange {
    pub report_id: String,
    /// Who and what it is: company, form and period (or title, or source path).
    pub name: String,
    /// `added`, `removed`, `changed` (its row differs) or `unchanged` (only rows derived from
    /// it moved, e.g. a chunk's position after an upstream setting changed).
    pub status: String,
    pub chunks: RowDelta,
    pub triplets: RowDelta,
    /// Questions naming the report among their `report_ids` (a multi-hop question spanning two
    /// reports is listed under both).
    pub questions: RowDelta,
}

/// The kind of semver bump a set of changes calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bump {
    None,
    Patch,
    Minor,
    Major,
}

impl Changes {
    /// Croissant 1.1: removed or changed rows (or a removed table) -> major; only additions ->
    /// minor; same rows in different bytes -> patch; nothing (or rows only refetched, their
    /// content unchanged) -> none. An export file is data too: one whose bytes changed -> patch
    /// (its rows are the tables', already compared); one added -> minor and one removed ->
    /// major, as a table added or removed.
    pub fn bump(&self) -> Bump {
        let mut bump = Bump::None;
        for e in self.exports.values() {
            let this = match e.status.as_str() {
                "removed" => Bump::Major,
                "added" => Bump::Minor,
                _ => Bump::Patch,
            };
            bump = bump.max(this);
        }
        for t in self.tables.values() {
            let this = if t.table_removed || !t.removed.is_empty() || !t.changed.is_empty() {
                Bump::Major
            } else if t.table_added || !t.added.is_empty() {
                Bump::Minor
            } else if t.reserialised {
                Bump::Patch
            } else {
                Bump::None
            };
            bump = bump.max(this);
        }
        bump
    }

    /// What differs among the export files, for a one-line build summary: `exports changed:
    /// confact/confact.json; exports added: ...` (paths under `exports/`); `None` when nothing.
    pub fn exports_summary(&self) -> Option<String> {
        let parts: Vec<String> = ["changed", "added", "removed"]
            .iter()
            .filter_map(|status| {
                let files: Vec<&str> = self
                    .exports
                    .iter()
                    .filter(|(_, e)| e.status == *status)
                    .map(|(file, _)| file.strip_prefix("exports/").unwrap_or(file))
                    .collect();
                (!files.is_empty()).then(|| format!("exports {status}: {}", files.join(", ")))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    pub fn render_markdown(&self) -> String {
        let mut out = match &self.from {
            Some(from) => format!("# Changes from {from} to {}\n\n", self.to),
            None => format!(
                "# Changes in {}\n\nFirst version: every row is new.\n\n",
                self.to
            ),
        };
        out.push_str("| table | rows before | rows after | added | removed | changed |\n|---|---:|---:|---:|---:|---:|\n");
        for (name, t) in &self.tables {
            let note = if t.table_added {
                " (new table)".to_string()
            } else if t.table_removed {
                " (table removed)".to_string()
            } else if t.reserialised && !t.rows_differ() {
                " (re-serialised)".to_string()
            } else if !t.refetched.is_empty() {
                format!(" ({} refetched, unchanged)", t.refetched.len())
            } else {
                String::new()
            };
            out.push_str(&format!(
                "| {name}{note} | {} | {} | {} | {} | {} |\n",
                t.rows_before,
                t.rows_after,
                t.added.len(),
                t.removed.len(),
                t.changed.len()
            ));
        }
        if !self.exports.is_empty() {
            out.push_str(
                "\n## Exports\n\nExport files added, removed or changed (compared by sha256).\n\n| file | status | bytes before | bytes after | sha256 before | sha256 after |\n|---|---|---:|---:|---|---|\n",
            );
            let cell = |v: Option<String>| v.unwrap_or_else(|| "-".into());
            for (file, e) in &self.exports {
                out.push_str(&format!(
                    "| `{file}` | {} | {} | {} | {} | {} |\n",
                    e.status,
                    cell(e.bytes_before.map(|b| b.to_string())),
                    cell(e.bytes_after.map(|b| b.to_string())),
                    cell(e.sha256_before.as_ref().map(|h| short(h))),
                    cell(e.sha256_after.as_ref().map(|h| short(h))),
                ));
            }
        }
        if !self.reports.is_empty() {
            out.push_str(
                "\n## Reports\n\nEach report added, removed or revised, and the rows that changed because of it (added, removed, changed).\n\n| report | status | chunks | triplets | questions |\n|---|---|---|---|---|\n",
            );
            for r in &self.reports {
                out.push_str(&format!(
                    "| `{}` {} | {} | {} | {} | {} |\n",
                    r.report_id,
                    r.name.replace('|', "/"),
                    r.status,
                    r.chunks.counts(),
                    r.triplets.counts(),
                    r.questions.counts()
                ));
            }
        }
        for (name, t) in &self.tables {
            for (label, ids) in [
                ("Added", &t.added),
                ("Removed", &t.removed),
                ("Changed", &t.changed),
            ] {
                if ids.is_empty() || (self.from.is_none() && label == "Added") {
                    continue;
                }
                out.push_str(&format!("\n## {label} in {name}\n\n"));
                for id in ids.iter().take(LISTED) {
                    out.push_str(&format!("- `{id}`\n"));
                }
                if ids.len() > LISTED {
                    out.push_str(&format!(
                        "- ... and {} more (all are in changes.json)\n",
                        ids.len() - LISTED
                    ));
                }
            }
        }
        out
    }
}

/// The first 12 hex digits of a sha256, for tables meant for reading.
fn short(sha256: &str) -> String {
    sha256.chars().take(12).collect()
}

/// A table file to compare: its kind, path and sha256.
pub(crate) struct TableSide<'a> {
    pub kind: TableKind,
    pub path: &'a Path,
    pub sha256: &'a str,
}

/// Compare one table's two sides by row id and row content hash.
pub(crate) fn diff_tables(
    before: Option<TableSide<'_>>,
    after: Option<TableSide<'_>>,
) -> Result<TableChanges, String> {
    let load = |side: &TableSide<'_>| -> Result<BTreeMap<String, (String, String)>, String> {
        let rows = table_io::read_table(side.path, side.kind).map_err(|e| e.to_string())?;
        Ok(rows
            .id_content_hashes()
            .into_iter()
            .map(|(id, full, content)| (id, (full, content)))
            .collect())
    };
    // A table on one side only: every row is added (or removed), whatever its content; only
    // the ids are read.
    let ids_only = |side: &TableSide<'_>| -> Result<BTreeMap<String, (String, String)>, String> {
        Ok(table_io::read_ids(side.path)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|id| (id, Default::default()))
            .collect())
    };
    let (old, new) = match (&before, &after) {
        (Some(b), Some(a)) => (load(b)?, load(a)?),
        (Some(b), None) => (ids_only(b)?, BTreeMap::new()),
        (None, Some(a)) => (BTreeMap::new(), ids_only(a)?),
        (None, None) => Default::default(),
    };
    let mut changes = TableChanges {
        rows_before: old.len() as u64,
        rows_after: new.len() as u64,
        table_added: before.is_none() && after.is_some(),
        table_removed: before.is_some() && after.is_none(),
        ..TableChanges::default()
    };
    for (id, (full, content)) in &new {
        match old.get(id) {
            None => changes.added.push(id.clone()),
            Some((_, c)) if c != content => changes.changed.push(id.clone()),
            Some((f, _)) if f != full => changes.refetched.push(id.clone()),
            Some(_) => {}
        }
    }
    changes.removed = old
        .keys()
        .filter(|id| !new.contains_key(*id))
        .cloned()
        .collect();
    if let (Some(b), Some(a)) = (&before, &after) {
        // Other bytes for the same rows; refetched rows explain other bytes by themselves.
        changes.reserialised = b.sha256 != a.sha256 && changes.refetched.is_empty();
    }
    Ok(changes)
}

/// Changes between two published versions (directories).
pub fn diff(v1: &Path, v2: &Path) -> Result<Changes, String> {
    let m1 = Manifest::read(v1)?;
    let m2 = Manifest::read(v2)?;
    let mut names: Vec<&String> = m1.tables.keys().chain(m2.tables.keys()).collect();
    names.sort();
    names.dedup();
    let mut changes = Changes {
        from: Some(m1.version.clone()),
        to: m2.version.clone(),
        tables: BTreeMap::new(),
        reports: Vec::new(),
        exports: diff_exports(&export_hashes(&m1), &export_hashes(&m2)),
    };
    for name in names {
        let side = |m: &Manifest,
                    dir: &Path|
         -> Result<Option<(TableKind, std::path::PathBuf, String)>, String> {
            let Some(entry) = m.tables.get(name) else {
                return Ok(None);
            };
            let kind = TableKind::from_name(&entry.kind)
                .ok_or_else(|| format!("{}: unknown table kind `{}`", dir.display(), entry.kind))?;
            Ok(Some((kind, dir.join(&entry.file), entry.sha256.clone())))
        };
        let a = side(&m1, v1)?;
        let b = side(&m2, v2)?;
        let t = diff_tables(
            a.as_ref().map(|(k, p, h)| TableSide {
                kind: *k,
                path: p,
                sha256: h,
            }),
            b.as_ref().map(|(k, p, h)| TableSide {
                kind: *k,
                path: p,
                sha256: h,
            }),
        )?;
        changes.tables.insert(name.clone(), t);
    }
    let files = |m: &Manifest, dir: &Path| -> BTreeMap<String, PathBuf> {
        m.tables
            .iter()
            .map(|(name, e)| (name.clone(), dir.join(&e.file)))
            .collect()
    };
    changes.reports = report_changes(&changes, &files(&m1, v1), &files(&m2, v2))?;
    Ok(changes)
}

/// A report's readable name: company, form and period when its metadata has them (EDGAR), else
/// its title, else its source path.
fn report_name(r: &Report) -> String {
    let m = &r.metadata;
    let parts: Vec<&str> = ["company", "filing_type", "period_of_report"]
        .iter()
        .filter_map(|k| m.get(*k).map(String::as_str))
        .filter(|v| !v.is_empty())
        .collect();
    if !parts.is_empty() {
        parts.join(" ")
    } else if let Some(t) = r.title.as_deref().filter(|t| !t.is_empty()) {
        t.to_string()
    } else {
        r.source_path.clone()
    }
}

fn rows_of<T: TableRow>(path: Option<&PathBuf>) -> Result<Vec<T>, String> {
    match path {
        Some(p) => table_io::read_rows(p).map_err(|e| e.to_string()),
        None => Ok(Vec::new()),
    }
}

/// Attribute the report track's row changes to reports. `old` and `new` name each version's
/// table files by table name (`reports`, `chunks`, `triplets`, `questions`; absent tables are
/// empty); `changes` holds the table diffs. Added and changed rows are read from the new
/// version, removed rows from the old one. Returns the reports in id order, only those with
/// something to say.
pub(crate) fn report_changes(
    changes: &Changes,
    old: &BTreeMap<String, PathBuf>,
    new: &BTreeMap<String, PathBuf>,
) -> Result<Vec<ReportChange>, String> {
    if !old.contains_key("reports") && !new.contains_key("reports") {
        return Ok(Vec::new());
    }
    let empty = TableChanges::default();
    let table = |name: &str| changes.tables.get(name).unwrap_or(&empty);
    let mut by_report: BTreeMap<String, ReportChange> = BTreeMap::new();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for (side, paths) in [(0, old), (1, new)] {
        for r in rows_of::<Report>(paths.get("reports"))? {
            if side == 1 || !names.contains_key(&r.id) {
                names.insert(r.id.clone(), report_name(&r));
            }
        }
    }
    fn touch<'a>(by: &'a mut BTreeMap<String, ReportChange>, id: &str) -> &'a mut ReportChange {
        by.entry(id.to_string()).or_insert_with(|| ReportChange {
            report_id: id.to_string(),
            status: "unchanged".into(),
            ..ReportChange::default()
        })
    }
    let t = table("reports");
    for (status, ids) in [
        ("added", &t.added),
        ("removed", &t.removed),
        ("changed", &t.changed),
    ] {
        for id in ids {
            touch(&mut by_report, id).status = status.into();
        }
    }
    // One table's changes spread over reports: `report_of` names the reports of a row.
    fn spread<T: TableRow>(
        by: &mut BTreeMap<String, ReportChange>,
        t: &TableChanges,
        old: Option<&PathBuf>,
        new: Option<&PathBuf>,
        id_of: impl Fn(&T) -> &str,
        reports_of: impl Fn(&T) -> Vec<String>,
        delta: impl Fn(&mut ReportChange) -> &mut RowDelta,
    ) -> Result<(), String> {
        if !t.rows_differ() {
            return Ok(());
        }
        let index = |rows: Vec<T>| -> BTreeMap<String, Vec<String>> {
            rows.iter()
                .map(|r| (id_of(r).to_string(), reports_of(r)))
                .collect()
        };
        let before = index(rows_of::<T>(old)?);
        let after = index(rows_of::<T>(new)?);
        let place = |by: &mut BTreeMap<String, ReportChange>,
                     ids: &[String],
                     side: &BTreeMap<String, Vec<String>>,
                     pick: fn(&mut RowDelta) -> &mut Vec<String>| {
            for id in ids {
                let reports: BTreeSet<&String> = side.get(id).into_iter().flatten().collect();
                for report in reports {
                    pick(delta(touch(by, report))).push(id.clone());
                }
            }
        };
        place(by, &t.added, &after, |d| &mut d.added);
        place(by, &t.removed, &before, |d| &mut d.removed);
        place(by, &t.changed, &after, |d| &mut d.changed);
        Ok(())
    }
    spread::<Chunk>(
        &mut by_report,
        table("chunks"),
        old.get("chunks"),
        new.get("chunks"),
        |c| &c.id,
        |c| vec![c.report_id.clone()],
        |r| &mut r.chunks,
    )?;
    spread::<Triplet>(
        &mut by_report,
        table("triplets"),
        old.get("triplets"),
        new.get("triplets"),
        |t| &t.id,
        |t| vec![t.report_id.clone()],
        |r| &mut r.triplets,
    )?;
    spread::<Question>(
        &mut by_report,
        table("questions"),
        old.get("questions"),
        new.get("questions"),
        |q| &q.id,
        |q| q.report_ids.clone(),
        |r| &mut r.questions,
    )?;
    Ok(by_report
        .into_values()
        .filter(|r| {
            r.status != "unchanged"
                || !(r.chunks.is_empty() && r.triplets.is_empty() && r.questions.is_empty())
        })
        .map(|mut r| {
            r.name = names.get(&r.report_id).cloned().unwrap_or_default();
            r
        })
        .collect())
}
