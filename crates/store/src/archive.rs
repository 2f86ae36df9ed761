//! The web archive (`work/archive/`: bodies under `objects/<2 hex>/<sha256>.zst`, one
//! `index.jsonl` line per response) on object storage, synced additively so that the shards of
//! a stage on different machines pool what they fetched and a merge reads every page back.
//!
//! Objects are content-addressed: an object of a given name is the same bytes everywhere, so a
//! sync copies only the names the other side lacks and never overwrites or deletes one. The
//! index is append-only on every machine; on the remote it is kept as parts, `index/<id>.jsonl`,
//! each written once (create-only) by one push with the lines no earlier part holds. A pull
//! appends to the local `index.jsonl` the lines of the remote parts it lacks, objects first, so
//! a line never names an object that is not there.
//!
//! What this is not: a mirror. Nothing is ever deleted on either side, and two machines that
//! fetched one URL both keep their line (the archive's readers take the newest fetch).

use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use noisebench_web::archive::INDEX_FILE;

use crate::snapshot::files_under;
use crate::{Created, Remote, StoreError};

/// The archive's object folder.
pub(crate) const OBJECTS: &str = "objects";
/// Where a remote archive keeps its index parts.
pub(crate) const INDEX_PARTS: &str = "index";

/// What an archive sync moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArchiveSync {
    /// Objects copied (those the other side already had are not).
    pub objects: usize,
    pub bytes: u64,
    /// Index lines copied.
    pub lines: usize,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |e| StoreError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

/// The non-empty lines of a local index (none when there is no index yet).
fn local_lines(dir: &Path) -> Result<Vec<String>, StoreError> {
    let path = dir.join(INDEX_FILE);
    match fs::read_to_string(&path) {
        Ok(text) => Ok(lines_of(&text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(io(&path)(e)),
    }
}

fn lines_of(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// Every line of every remote index part, in part order (parts are named by time).
fn remote_lines(remote: &Remote) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    for entry in remote.list(INDEX_PARTS)? {
        if !entry.key.ends_with(".jsonl") {
            continue;
        }
        if let Some(bytes) = remote.get(&entry.key)? {
            out.extend(lines_of(&String::from_utf8_lossy(&bytes)));
        }
    }
    Ok(out)
}

/// Local object files, relative to the archive folder (`objects/ab/<sha>.zst`), hidden
/// temporaries left out.
fn local_objects(dir: &Path) -> Result<Vec<String>, StoreError> {
    let objects = dir.join(OBJECTS);
    if !objects.is_dir() {
        return Ok(Vec::new());
    }
    Ok(files_under(&objects)?
        .into_iter()
        .filter(|r| !r.split('/').any(|s| s.starts_with('.')))
        .map(|r| format!("{OBJECTS}/{r}"))
        .collect())
}

/// Upload what the local archive `dir` has and `remote` lacks: missing objects, then one index
/// part with the local lines no remote part holds. A missing local archive is nothing to push.
pub fn push_archive(dir: &Path, remote: &Remote) -> Result<ArchiveSync, StoreError> {
    let mut sync = ArchiveSync::default();
    if !dir.is_dir() {
        return Ok(sync);
    }
    let there: HashSet<String> = remote.list(OBJECTS)?.into_iter().map(|e| e.key).collect();
    for rel in local_objects(dir)? {
        if !there.contains(&rel) {
            sync.bytes += remote.upload(&dir.join(&rel), &rel)?;
            sync.objects += 1;
        }
    }
    let known: HashSet<String> = remote_lines(remote)?.into_iter().collect();
    let mut seen = HashSet::new();
    let new: Vec<String> = local_lines(dir)?
        .into_iter()
        .filter(|l| !known.contains(l) && seen.insert(l.clone()))
        .collect();
    if !new.is_empty() {
        let body = new.join("\n") + "\n";
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        // Create-only: two pushes never overwrite each other's part.
        for attempt in 0.. {
            let key = format!(
                "{INDEX_PARTS}/{stamp:024}-{}-{attempt}.jsonl",
                std::process::id()
            );
            if remote.put_create(&key, body.clone().into_bytes())? == Created::Created {
                break;
            }
        }
        sync.bytes += body.len() as u64;
        sync.lines = new.len();
    }
    if sync.objects + sync.lines > 0 {
        tracing::info!(location = %remote.location(), objects = sync.objects, lines = sync.lines, "archive pushed");
    }
    Ok(sync)
}

/// Download into the local archive `dir` (created) what `remote` has and it lacks: missing
/// objects (each written beside and renamed, its size checked), then the index lines it lacks,
/// appended to `index.jsonl`.
pub fn pull_archive(remote: &Remote, dir: &Path) -> Result<ArchiveSync, StoreError> {
    let mut sync = ArchiveSync::default();
    let entries: Vec<_> = remote
        .list(OBJECTS)?
        .into_iter()
        .filter(|e| !e.key.split('/').any(|s| s.starts_with('.')))
        .collect();
    let lines = remote_lines(remote)?;
    if entries.is_empty() && lines.is_empty() {
        return Ok(sync);
    }
    fs::create_dir_all(dir.join(OBJECTS)).map_err(io(dir))?;
    for entry in entries {
        let path = dir.join(&entry.key);
        if path.exists() {
            continue;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = path.with_file_name(format!(".{name}.pull-{}", std::process::id()));
        let n = remote.download(&entry.key, &tmp)?;
        if n != entry.bytes {
            let _ = fs::remove_file(&tmp);
            return Err(StoreError::invalid(
                &remote.location().join(&entry.key),
                format!("{n} bytes read, {} listed", entry.bytes),
            ));
        }
        fs::rename(&tmp, &path).map_err(io(&path))?;
        sync.objects += 1;
        sync.bytes += n;
    }
    let mut have: HashSet<String> = local_lines(dir)?.into_iter().collect();
    let missing: Vec<String> = lines
        .into_iter()
        .filter(|l| have.insert(l.clone()))
        .collect();
    if !missing.is_empty() {
        let path = dir.join(INDEX_FILE);
        let mut index = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        // A last line cut short by a crash is not glued to the first appended one.
        let torn = fs::read(&path)
            .map(|b| b.last().is_some_and(|&c| c != b'\n'))
            .unwrap_or(false);
        let body = format!("{}{}\n", if torn { "\n" } else { "" }, missing.join("\n"));
        index.write_all(body.as_bytes()).map_err(io(&path))?;
        index.sync_all().map_err(io(&path))?;
        sync.lines = missing.len();
        sync.bytes += body.len() as u64;
    }
    if sync.objects + sync.lines > 0 {
        tracing::info!(location = %remote.location(), objects = sync.objects, lines = sync.lines, "archive pulled");
    }
    Ok(sync)
}
