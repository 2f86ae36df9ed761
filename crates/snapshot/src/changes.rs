//! Row-level changes between two versions, by id.

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_core::TableKind;
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
    /// content unchanged) -> none.
    pub fn bump(&self) -> Bump {
        let mut bump = Bump::None;
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

/// A table file to compare: its kind, path and sha256.
pub struct TableSide<'a> {
    pub kind: TableKind,
    pub path: &'a Path,
    pub sha256: &'a str,
}

/// Compare one table's two sides by row id and row content hash.
pub fn diff_tables(
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
    let old = before.as_ref().map(load).transpose()?.unwrap_or_default();
    let new = after.as_ref().map(load).transpose()?.unwrap_or_default();
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
    Ok(changes)
}
