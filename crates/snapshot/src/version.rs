//! Typed reads of a published version: `PublishedVersion::open(path)?.read::<Question>()`.
//!
//! A version's tables are found by kind: the table published under its kind's name, else the
//! first (by name) of that kind. This is the one place that lookup lives; `eval`, `export`,
//! `report` and `validate` read through it.

use std::path::{Path, PathBuf};

use noisebench_core::{Rows, TableKind, TableRow};
use noisebench_pipeline::table_io;

use crate::manifest::{MANIFEST, Manifest, TableEntry};
use crate::publish::latest_version;

/// Why a version could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    #[error(
        "{0}: neither a snapshot version (no manifest.json) nor a dataset folder with versions"
    )]
    NotAVersion(PathBuf),
    #[error("{0}")]
    Manifest(String),
    #[error("{path}: table `{name}`: {message}")]
    Table {
        path: PathBuf,
        name: String,
        message: String,
    },
    #[error("{dir}: the snapshot has no `{kind}` table (its tables: {tables})")]
    Missing {
        dir: PathBuf,
        kind: TableKind,
        tables: String,
    },
}

/// One published version, its manifest read.
#[derive(Debug, Clone)]
pub struct PublishedVersion {
    dir: PathBuf,
    manifest: Manifest,
}

/// One table of a version: its name, kind and file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionTable {
    pub name: String,
    pub kind: TableKind,
    pub path: PathBuf,
}

impl PublishedVersion {
    /// A version folder as is, or a dataset folder's latest version.
    pub fn open(path: &Path) -> Result<PublishedVersion, VersionError> {
        let dir = if path.join(MANIFEST).is_file() {
            path.to_path_buf()
        } else {
            match latest_version(path) {
                Some(v) => path.join(v.to_string()),
                None => return Err(VersionError::NotAVersion(path.to_path_buf())),
            }
        };
        let manifest = Manifest::read(&dir).map_err(VersionError::Manifest)?;
        Ok(PublishedVersion { dir, manifest })
    }

    /// The version folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The entry of `kind`'s table: the one published under the kind's name, else the first
    /// of that kind.
    pub fn entry(&self, kind: TableKind) -> Option<(&str, &TableEntry)> {
        self.manifest
            .tables
            .get_key_value(kind.name())
            .filter(|(_, e)| e.kind == kind.name())
            .or_else(|| {
                self.manifest
                    .tables
                    .iter()
                    .find(|(_, e)| e.kind == kind.name())
            })
            .map(|(n, e)| (n.as_str(), e))
    }

    /// Whether the version has a `kind` table.
    pub fn has(&self, kind: TableKind) -> bool {
        self.entry(kind).is_some()
    }

    /// `read` applied to the file of `kind`'s table; `None` when the version has none, and an
    /// error naming the table when the file cannot be read.
    fn with_table<R>(
        &self,
        kind: TableKind,
        read: impl FnOnce(&Path) -> Result<R, table_io::TableError>,
    ) -> Result<Option<R>, VersionError> {
        let Some((name, entry)) = self.entry(kind) else {
            return Ok(None);
        };
        read(&self.dir.join(&entry.file))
            .map(Some)
            .map_err(|e| VersionError::Table {
                path: self.dir.clone(),
                name: name.to_string(),
                message: e.to_string(),
            })
    }

    /// The rows of `kind`'s table, untyped; `None` when the version has none.
    pub fn rows(&self, kind: TableKind) -> Result<Option<Rows>, VersionError> {
        self.with_table(kind, |path| table_io::read_table(path, kind))
    }

    /// The rows of `T`'s table, `None` when the version has none.
    pub fn read<T: TableRow>(&self) -> Result<Option<Vec<T>>, VersionError> {
        self.with_table(T::KIND, |path| table_io::read_rows::<T>(path))
    }

    /// The rows of `T`'s table whose `column` value `keep` accepts, in order (none when the
    /// version has no such table), decoding only those rows
    /// ([`table_io::read_table_where`]).
    pub fn read_where<T: TableRow>(
        &self,
        column: &str,
        keep: impl Fn(Option<&str>) -> bool,
    ) -> Result<Vec<T>, VersionError> {
        let rows = self.with_table(T::KIND, |path| {
            table_io::read_table_where(path, T::KIND, column, keep)
        })?;
        Ok(rows
            .and_then(|rows| T::from_rows(rows).ok())
            .unwrap_or_default())
    }

    /// The string columns `columns` of `kind`'s table, a value per row each, reading no other
    /// column; `None` when the version has no such table.
    pub fn string_columns(
        &self,
        kind: TableKind,
        columns: &[&str],
    ) -> Result<Option<Vec<Vec<Option<String>>>>, VersionError> {
        self.with_table(kind, |path| table_io::string_columns(path, columns))
    }

    /// The float column `column` of `kind`'s table, a value per row, reading no other column;
    /// `None` when the version has no such table.
    pub fn float_column(
        &self,
        kind: TableKind,
        column: &str,
    ) -> Result<Option<Vec<Option<f64>>>, VersionError> {
        self.with_table(kind, |path| table_io::float_column(path, column))
    }

    /// The rows of `T`'s table; an error naming the version's tables when it has none.
    pub fn require<T: TableRow>(&self) -> Result<Vec<T>, VersionError> {
        self.read::<T>()?.ok_or_else(|| VersionError::Missing {
            dir: self.dir.clone(),
            kind: T::KIND,
            tables: self
                .manifest
                .tables
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// Every table of the version, by name; an unknown kind is an error.
    pub fn tables(&self) -> Result<Vec<VersionTable>, VersionError> {
        self.manifest
            .tables
            .iter()
            .map(|(name, e)| {
                let kind = TableKind::from_name(&e.kind).ok_or_else(|| VersionError::Table {
                    path: self.dir.clone(),
                    name: name.clone(),
                    message: format!("unknown kind `{}`", e.kind),
                })?;
                Ok(VersionTable {
                    name: name.clone(),
                    kind,
                    path: self.dir.join(&e.file),
                })
            })
            .collect()
    }
}
