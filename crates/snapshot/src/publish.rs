//! Publishing a new version, atomically and never over an existing one.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use noisebench_core::{
    CheckKind, CheckResult, CheckStatus, TableKind, default_threads, parallel_map, timed,
};
use noisebench_pipeline::atomic::{sync_dir, write_atomic};
use noisebench_pipeline::table_io;
use semver::Version;

use crate::card::{CardInput, render_card};
use crate::changes::{Bump, Changes, TableSide, diff_exports, diff_tables, export_hashes};
use crate::croissant::{CroissantInput, render_croissant};
use crate::manifest::{CROISSANT, ExportEntry, MANIFEST, Manifest, MetadataEntry, TableEntry};
pub use crate::request::{PublishRequest, SourceExport, SourceTable};
use crate::splits;

/// Test hooks.
#[derive(Debug, Clone, Default)]
pub struct PublishOptions {
    /// Fail (as a crash would) after this many files of the new version are written.
    pub fail_after_files: Option<usize>,
    /// Creation time to record instead of now (reproducible tests).
    pub created_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PublishOutcome {
    Published {
        version: String,
        dir: PathBuf,
        changes: Changes,
    },
    /// The tables and export files equal the latest version's, byte for byte: nothing was written.
    Unchanged { version: String, dir: PathBuf },
}

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Table(String),
    #[error(
        "version {version} of `{dataset}` already exists at {dir}; published versions are never overwritten"
    )]
    VersionExists {
        dataset: String,
        version: String,
        dir: PathBuf,
    },
    #[error("fault injected after {0} files")]
    Injected(usize),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PublishError + '_ {
    move |source| PublishError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Published versions of a dataset, ascending. Hidden (staging) folders are not versions.
pub fn list_versions(dataset_dir: &Path) -> Vec<Version> {
    let mut versions: Vec<Version> = fs::read_dir(dataset_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(MANIFEST).is_file())
        .filter_map(|e| Version::parse(&e.file_name().to_string_lossy()).ok())
        .collect();
    versions.sort();
    versions
}

pub fn latest_version(dataset_dir: &Path) -> Option<Version> {
    list_versions(dataset_dir).pop()
}

pub fn publish(
    request: &PublishRequest,
    options: &PublishOptions,
) -> Result<PublishOutcome, PublishError> {
    let dataset_dir = request.snapshots_dir.join(&request.dataset);
    fs::create_dir_all(&dataset_dir).map_err(io(&dataset_dir))?;
    // One publisher of a dataset at a time, from the choice of the parent to the rename: a second
    // waits, then diffs against what the first published (identical tables: `Unchanged`), so two
    // refreshes never both publish the same change, and neither removes the other's staging.
    let _lock = publish_lock(&request.snapshots_dir, &request.dataset)?;
    remove_stale_staging(&dataset_dir);
    let parent = latest_version(&dataset_dir);
    let parent = match parent {
        Some(v) => {
            let dir = dataset_dir.join(v.to_string());
            let manifest = Manifest::read(&dir).map_err(PublishError::Table)?;
            Some(Parent {
                version: v,
                dir,
                manifest,
            })
        }
        None => None,
    };
    // Export files are part of the version too: one that changed alone is a new version. They
    // are hashed while the tables are hashed and compared with the parent's.
    let (tables, export_sums) = noisebench_core::join(
        || {
            timed("publishing: tables hashed", || hash_tables(request)).and_then(|hashes| {
                let changes = timed("publishing: rows compared with the parent's", || {
                    diff_against_parent(request, parent.as_ref(), &hashes)
                })?;
                Ok((hashes, changes))
            })
        },
        || timed("publishing: exports hashed", || hash_exports(request)),
    );
    let (hashes, mut changes) = tables?;
    let export_sums = export_sums?;
    changes.exports = diff_exports(
        &parent
            .as_ref()
            .map(|p| export_hashes(&p.manifest))
            .unwrap_or_default(),
        &export_sums,
    );
    let version = match (&parent, changes.bump()) {
        (None, _) => Version::new(1, 0, 0),
        (Some(p), Bump::None) => {
            return Ok(PublishOutcome::Unchanged {
                version: p.version.to_string(),
                dir: p.dir.clone(),
            });
        }
        (Some(p), bump) => next_version(&p.version, bump),
    };
    changes.to = version.to_string();
    // A first version's reports are all new: the tables say so.
    if let Some(p) = &parent {
        changes.reports = timed("publishing: report changes found", || {
            report_changes(request, p, &changes)
        })?;
    }
    let final_dir = dataset_dir.join(version.to_string());
    if final_dir.exists() {
        return Err(PublishError::VersionExists {
            dataset: request.dataset.clone(),
            version: version.to_string(),
            dir: final_dir,
        });
    }

    // Stage everything in a hidden folder, then rename it into place.
    let mut staging = Staging::create(
        dataset_dir.join(format!(".staging-{version}-{}", std::process::id())),
        options.fail_after_files,
    )?;
    let entries = timed("publishing: tables copied", || {
        staging.copy_tables(request, &hashes)
    })?;
    let (split_files, exports) =
        staging.write_splits_and_exports(request, &entries, &export_sums)?;
    let manifest = Manifest {
        dataset: request.dataset.clone(),
        version: version.to_string(),
        parent: parent.as_ref().map(|p| p.version.to_string()),
        created_at: options
            .created_at
            .clone()
            .unwrap_or_else(|| chrono::Utc::now().to_rfc3339()),
        pipeline: request.pipeline.clone(),
        config_hash: request.config_hash.clone(),
        code_version: request.code_version.clone(),
        tables: entries,
        exports,
        provenance: request.provenance.clone(),
        splits: split_files,
        metadata: BTreeMap::new(),
        checks: request.checks.clone(),
        stages: request.stages.iter().map(stage_counts).collect(),
    };
    timed(
        "publishing: card, Croissant, changes and manifest written",
        || staging.write_metadata(request, manifest, &changes),
    )?;
    timed("publishing: version moved into place", || {
        staging.move_to(&final_dir, request, &version)
    })?;
    sync_dir(&dataset_dir).map_err(io(&dataset_dir))?;
    Ok(PublishOutcome::Published {
        version: version.to_string(),
        dir: final_dir,
        changes,
    })
}

/// The latest published version, the one a new version is diffed against.
struct Parent {
    version: Version,
    dir: PathBuf,
    manifest: Manifest,
}

/// The sha256 and size of each table to publish, by name (the files hashed on every core).
fn hash_tables(request: &PublishRequest) -> Result<BTreeMap<String, (String, u64)>, PublishError> {
    let sums = parallel_map(&request.tables, default_threads(), |t| {
        table_io::hash_file(&t.path).map_err(io(&t.path))
    });
    request
        .tables
        .iter()
        .zip(sums)
        .map(|(t, sum)| Ok((t.name.clone(), sum?)))
        .collect()
}

/// The sha256 and size of each export file to publish, by its path inside the snapshot. Two files
/// bound for one path are an error: one would silently replace the other.
fn hash_exports(request: &PublishRequest) -> Result<BTreeMap<String, (String, u64)>, PublishError> {
    let mut hashes = BTreeMap::new();
    let mut sources: BTreeMap<String, &Path> = BTreeMap::new();
    for export in &request.exports {
        for source in &export.files {
            let file = export_path(&export.folder, source)?;
            if let Some(first) = sources.insert(file.clone(), source) {
                return Err(PublishError::Table(format!(
                    "{file}: two export files would be published here, {} and {}; \
                     give them different names or folders",
                    first.display(),
                    source.display()
                )));
            }
        }
    }
    let files: Vec<(String, &Path)> = sources.into_iter().collect();
    let sums = parallel_map(&files, default_threads(), |(_, source)| {
        table_io::hash_file(source).map_err(io(source))
    });
    for ((file, _), sum) in files.into_iter().zip(sums) {
        hashes.insert(file, sum?);
    }
    Ok(hashes)
}

/// Where an export file goes inside the snapshot: `exports/<folder>/<file name>`.
fn export_path(folder: &str, source: &Path) -> Result<String, PublishError> {
    let name = source
        .file_name()
        .ok_or_else(|| PublishError::Table(format!("{}: not a file", source.display())))?
        .to_string_lossy();
    Ok(format!("exports/{folder}/{name}"))
}

/// The row changes of every table the request or the parent has.
fn diff_against_parent(
    request: &PublishRequest,
    parent: Option<&Parent>,
    hashes: &BTreeMap<String, (String, u64)>,
) -> Result<Changes, PublishError> {
    let mut changes = Changes {
        from: parent.map(|p| p.version.to_string()),
        ..Changes::default()
    };
    let mut names: Vec<String> = request.tables.iter().map(|t| t.name.clone()).collect();
    if let Some(p) = parent {
        names.extend(p.manifest.tables.keys().cloned());
    }
    names.sort();
    names.dedup();
    for name in &names {
        let new = request.tables.iter().find(|t| &t.name == name);
        let old = parent.and_then(|p| Some((p.manifest.tables.get(name)?, p.dir.as_path())));
        let old_path = old.map(|(e, d)| d.join(&e.file));
        let old_side = match (old, &old_path) {
            (Some((e, _)), Some(p)) => Some(TableSide {
                kind: TableKind::from_name(&e.kind).ok_or_else(|| {
                    PublishError::Table(format!(
                        "parent table `{name}` has unknown kind `{}`",
                        e.kind
                    ))
                })?,
                path: p,
                sha256: &e.sha256,
            }),
            _ => None,
        };
        let new_side = new.map(|t| TableSide {
            kind: t.kind,
            path: &t.path,
            sha256: &hashes[&t.name].0,
        });
        changes.tables.insert(
            name.clone(),
            diff_tables(old_side, new_side).map_err(PublishError::Table)?,
        );
    }
    Ok(changes)
}

/// The version after `parent` for a change of size `bump` (semver as Croissant applies it).
fn next_version(parent: &Version, bump: Bump) -> Version {
    let p = parent;
    match bump {
        Bump::None => p.clone(),
        Bump::Patch => Version::new(p.major, p.minor, p.patch + 1),
        Bump::Minor => Version::new(p.major, p.minor + 1, 0),
        Bump::Major => Version::new(p.major + 1, 0, 0),
    }
}

/// What changed report by report between the parent's tables and the request's.
fn report_changes(
    request: &PublishRequest,
    parent: &Parent,
    changes: &Changes,
) -> Result<Vec<crate::changes::ReportChange>, PublishError> {
    let old_files: BTreeMap<String, PathBuf> = parent
        .manifest
        .tables
        .iter()
        .map(|(name, e)| (name.clone(), parent.dir.join(&e.file)))
        .collect();
    let new_files: BTreeMap<String, PathBuf> = request
        .tables
        .iter()
        .map(|t| (t.name.clone(), t.path.clone()))
        .collect();
    crate::changes::report_changes(changes, &old_files, &new_files).map_err(PublishError::Table)
}

fn stage_counts(s: &noisebench_core::StageSummary) -> crate::manifest::StageCounts {
    crate::manifest::StageCounts {
        id: s.id.clone(),
        kind: s.kind.clone(),
        items_in: s.items_in,
        items_out: s.items_out,
        items_dropped: s.items_dropped,
        drop_reasons: s.drop_reasons.clone(),
    }
}

/// The hidden folder a version is written into before it is renamed into place; counts the
/// files written (a test hook fails after a given number, as a crash would).
struct Staging {
    dir: PathBuf,
    written: usize,
    fail_after: Option<usize>,
}

impl Staging {
    fn create(dir: PathBuf, fail_after: Option<usize>) -> Result<Self, PublishError> {
        let _ = fs::remove_dir_all(&dir);
        let data_dir = dir.join("data");
        fs::create_dir_all(&data_dir).map_err(io(&data_dir))?;
        Ok(Self {
            dir,
            written: 0,
            fail_after,
        })
    }

    /// One more file written.
    fn step(&mut self) -> Result<(), PublishError> {
        self.written += 1;
        match self.fail_after {
            Some(n) if self.written >= n => Err(PublishError::Injected(n)),
            _ => Ok(()),
        }
    }

    /// `source` copied to `file` (relative to the staging folder) and synced.
    fn copy_file(&self, source: &Path, file: &str) -> Result<PathBuf, PublishError> {
        copy_file(&self.dir, source, file)
    }

    /// Every table to `data/<name>.parquet`, with its manifest entry.
    fn copy_tables(
        &mut self,
        request: &PublishRequest,
        hashes: &BTreeMap<String, (String, u64)>,
    ) -> Result<BTreeMap<String, TableEntry>, PublishError> {
        let mut entries = BTreeMap::new();
        for t in &request.tables {
            let file = format!("data/{}.parquet", t.name);
            let target = self.copy_file(&t.path, &file)?;
            let (sha256, bytes) = hashes[&t.name].clone();
            let schema = t.kind.schema();
            let rows =
                table_io::row_count(&target).map_err(|e| PublishError::Table(e.to_string()))?;
            entries.insert(
                t.name.clone(),
                TableEntry {
                    file,
                    kind: t.kind.name().into(),
                    sha256,
                    rows,
                    bytes,
                    schema_version: schema.version,
                    schema_fingerprint: schema.fingerprint(),
                },
            );
            self.step()?;
        }
        Ok(entries)
    }

    /// The per-split copies of the question tables and the export files, written at once (the
    /// copies decode and encode Parquet, the exports are mostly disk): their manifest entries.
    #[allow(clippy::type_complexity)]
    fn write_splits_and_exports(
        &mut self,
        request: &PublishRequest,
        entries: &BTreeMap<String, TableEntry>,
        export_sums: &BTreeMap<String, (String, u64)>,
    ) -> Result<
        (
            BTreeMap<String, BTreeMap<String, crate::manifest::SplitEntry>>,
            BTreeMap<String, ExportEntry>,
        ),
        PublishError,
    > {
        let dir = self.dir.as_path();
        let (split_files, exports) = noisebench_core::join(
            || {
                timed("publishing: split copies written", || {
                    write_splits(dir, request, entries)
                })
            },
            || {
                timed("publishing: exports copied", || {
                    copy_exports(dir, request, export_sums)
                })
            },
        );
        let (split_files, exports) = (split_files?, exports?);
        // One step per table split and per export file, as when they were written in turn.
        for _ in 0..split_files.len() + exports.len() {
            self.step()?;
        }
        Ok((split_files, exports))
    }

    /// `croissant.json`, the card, the changes and the manifest.
    fn write_metadata(
        &mut self,
        request: &PublishRequest,
        mut manifest: Manifest,
        changes: &Changes,
    ) -> Result<(), PublishError> {
        // Croissant is written from the manifest's tables, then hashed into it: the manifest
        // vouches for every file of the version but itself.
        // The quality card is hashed into the manifest like Croissant.
        if let Some(quality) = &request.quality {
            let json =
                serde_json::to_vec_pretty(quality).expect("a quality report always serialises");
            let path = self.dir.join(noisebench_quality::QUALITY_FILE);
            write_atomic(&path, &json).map_err(io(&path))?;
            self.step()?;
            let (sha256, bytes) = table_io::hash_file(&path).map_err(io(&path))?;
            manifest.metadata.insert(
                noisebench_quality::QUALITY_FILE.into(),
                MetadataEntry { sha256, bytes },
            );
        }
        let croissant = render_croissant(&CroissantInput {
            request,
            manifest: &manifest,
            dir: &self.dir,
        })
        .map_err(PublishError::Table)?;
        let croissant_json =
            serde_json::to_vec_pretty(&croissant).expect("a JSON value always serialises");
        let croissant_path = self.dir.join(CROISSANT);
        write_atomic(&croissant_path, &croissant_json).map_err(io(&croissant_path))?;
        self.step()?;
        let (sha256, bytes) = table_io::hash_file(&croissant_path).map_err(io(&croissant_path))?;
        manifest
            .metadata
            .insert(CROISSANT.into(), MetadataEntry { sha256, bytes });
        let manifest_json =
            serde_json::to_vec_pretty(&manifest).expect("a manifest always serialises");
        let card = render_card(&CardInput {
            request,
            manifest: &manifest,
            changes,
            dir: &self.dir,
        })
        .map_err(PublishError::Table)?;
        let changes_json = serde_json::to_vec_pretty(changes).expect("changes always serialise");
        for (name, bytes) in [
            ("README.md", card.into_bytes()),
            ("CHANGES.md", changes.render_markdown().into_bytes()),
            ("changes.json", changes_json),
            (MANIFEST, manifest_json),
        ] {
            let path = self.dir.join(name);
            write_atomic(&path, &bytes).map_err(io(&path))?;
            self.step()?;
        }
        Ok(())
    }

    /// The finished version, read-only, renamed to `final_dir`.
    fn move_to(
        self,
        final_dir: &Path,
        request: &PublishRequest,
        version: &Version,
    ) -> Result<(), PublishError> {
        let staging = self.dir;
        make_read_only(&staging);
        sync_dir(&staging).map_err(io(&staging))?;
        // rename(2) fails on a non-empty target, so a racing publisher of the same version loses
        // instead of overwriting.
        fs::rename(&staging, final_dir).map_err(|source| {
            let _ = fs::remove_dir_all(&staging);
            if final_dir.exists() {
                PublishError::VersionExists {
                    dataset: request.dataset.clone(),
                    version: version.to_string(),
                    dir: final_dir.to_path_buf(),
                }
            } else {
                PublishError::Io {
                    path: final_dir.to_path_buf(),
                    source,
                }
            }
        })
    }
}

/// `source` copied to `file` (relative to the staging folder `dir`) and synced.
fn copy_file(dir: &Path, source: &Path, file: &str) -> Result<PathBuf, PublishError> {
    let target = dir.join(file);
    fs::copy(source, &target).map_err(io(source))?;
    fs::File::open(&target)
        .and_then(|f| f.sync_all())
        .map_err(io(&target))?;
    Ok(target)
}

/// Per-split copies of the question tables under the staging folder `dir`, when the version
/// has the splits to cut them by; each table's on a thread of its own.
fn write_splits(
    dir: &Path,
    request: &PublishRequest,
    entries: &BTreeMap<String, TableEntry>,
) -> Result<BTreeMap<String, BTreeMap<String, crate::manifest::SplitEntry>>, PublishError> {
    let mut split_files = BTreeMap::new();
    let data_dir = dir.join("data");
    // `entries` has every request table: `copy_tables` inserted each or returned.
    if let Some(splits_table) = request
        .tables
        .iter()
        .find(|t| t.kind == TableKind::QuestionSplits)
    {
        let assignment = splits::read_assignment(&dir.join(&entries[&splits_table.name].file))
            .map_err(PublishError::Table)?;
        let written = std::thread::scope(|scope| {
            let threads: Vec<_> = request
                .tables
                .iter()
                .filter(|t| splits::question_column(t.kind).is_some())
                .map(|t| {
                    let assignment = &assignment;
                    let source = dir.join(&entries[&t.name].file);
                    let thread = scope.spawn(move || {
                        splits::write_split_files(dir, &t.name, t.kind, &source, assignment)
                    });
                    (t, thread)
                })
                .collect();
            threads
                .into_iter()
                .map(|(t, thread)| {
                    let files = thread
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    (t, files)
                })
                .collect::<Vec<_>>()
        });
        for (t, files) in written {
            if let Some(files) = files.map_err(PublishError::Table)? {
                let folder = data_dir.join(&t.name);
                sync_dir(&folder).map_err(io(&folder))?;
                split_files.insert(t.name.clone(), files);
            }
        }
    }
    sync_dir(&data_dir).map_err(io(&data_dir))?;
    Ok(split_files)
}

/// Every export file to `exports/<folder>/<name>` under the staging folder `dir`, with its
/// manifest entry.
fn copy_exports(
    dir: &Path,
    request: &PublishRequest,
    hashes: &BTreeMap<String, (String, u64)>,
) -> Result<BTreeMap<String, ExportEntry>, PublishError> {
    let mut exports = BTreeMap::new();
    for export in &request.exports {
        let folder = dir.join("exports").join(&export.folder);
        fs::create_dir_all(&folder).map_err(io(&folder))?;
        for source in &export.files {
            let file = export_path(&export.folder, source)?;
            copy_file(dir, source, &file)?;
            let (sha256, bytes) = hashes[&file].clone();
            exports.insert(
                file,
                ExportEntry {
                    format: export.format.clone(),
                    stage: export.stage.clone(),
                    sha256,
                    bytes,
                },
            );
        }
        sync_dir(&folder).map_err(io(&folder))?;
    }
    Ok(exports)
}

/// The check against the latest published version of `dataset`: a table that had rows there
/// and has none in `tables` (`not_emptied`, one result per table the parent has). Nothing to
/// compare with (a first version): no results.
pub fn parent_checks(
    snapshots_dir: &Path,
    dataset: &str,
    tables: &[SourceTable],
) -> Result<Vec<CheckResult>, PublishError> {
    let dataset_dir = snapshots_dir.join(dataset);
    let Some(parent) = latest_version(&dataset_dir) else {
        return Ok(Vec::new());
    };
    let manifest =
        Manifest::read(&dataset_dir.join(parent.to_string())).map_err(PublishError::Table)?;
    let mut results = Vec::new();
    for t in tables {
        let Some(before) = manifest.tables.get(&t.name) else {
            continue;
        };
        let rows = table_io::row_count(&t.path).map_err(|e| PublishError::Table(e.to_string()))?;
        let emptied = before.rows > 0 && rows == 0;
        results.push(CheckResult {
            kind: CheckKind::Check,
            table: t.name.clone(),
            check: "not_emptied".into(),
            status: if emptied {
                CheckStatus::Failed
            } else {
                CheckStatus::Passed
            },
            checked: rows,
            failed: 0,
            ids: Vec::new(),
            detail: if emptied {
                format!("{} rows in version {parent}, none now", before.rows)
            } else {
                String::new()
            },
        });
    }
    Ok(results)
}

/// Staging folders left by a crashed publish hold no version; remove them.
/// How long a publisher waits for another publisher of the same dataset.
pub(crate) const PUBLISH_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// The lock on publishing `dataset`: `snapshots/.locks/<dataset>/.lock`, outside the dataset's
/// folder (which holds versions and their reports only).
fn publish_lock(
    snapshots_dir: &Path,
    dataset: &str,
) -> Result<noisebench_pipeline::FolderLock, PublishError> {
    let dir = snapshots_dir.join(".locks").join(dataset);
    noisebench_pipeline::FolderLock::acquire_within(&dir, PUBLISH_LOCK_WAIT).map_err(|e| match e {
        noisebench_pipeline::LockError::Io { path, source } => PublishError::Io { path, source },
        held => PublishError::Table(held.to_string()),
    })
}

fn remove_stale_staging(dataset_dir: &Path) {
    for entry in fs::read_dir(dataset_dir).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(".staging-") {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Published files are read-only: a snapshot is immutable.
fn make_read_only(dir: &Path) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            make_read_only(&path);
        } else if let Ok(meta) = fs::metadata(&path) {
            let mut perms = meta.permissions();
            perms.set_readonly(true);
            let _ = fs::set_permissions(&path, perms);
        }
    }
}
