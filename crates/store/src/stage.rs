//! A stage's output folder (`work/<pipeline>/<stage>/`) on object storage.
//!
//! `stage.json` is the stage's record and its "done" mark: a push removes the remote one first and
//! writes it last, a pull reads it first and writes it last, so a folder without `stage.json`
//! (remote or local) is never taken for a finished stage. Just before `stage.json` a push writes
//! `.push.json`, the list of the files it uploaded with their sha256 and size: a pull fetches
//! exactly those and checks them, and the next push removes only the files an earlier push
//! listed, so pushing to a wrong location never deletes anything else. One writer per stage
//! folder. A stage folder's `shards/` (its parts, each a stage folder of its own) and hidden
//! files are never part of its push, and a pull keeps the local `shards/`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use noisebench_pipeline::runner::{SHARDS_DIR, STAGE_RECORD};
use noisebench_pipeline::table_io::hash_file;
use serde_json::{Value, json};

use crate::snapshot::files_under;
use crate::{Location, Remote, StoreError};

/// The list of files of the last push, beside `stage.json`.
pub(crate) const PUSH_LIST: &str = ".push.json";

/// What a push or pull moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Transfer {
    pub files: usize,
    pub bytes: u64,
    /// Files an earlier push uploaded that this stage no longer writes, removed remotely.
    pub removed: usize,
}

/// Whether a file of a stage folder (relative, `/`-separated) belongs to the stage's own push:
/// not a hidden file (`.push.json`, `.lock`, half-written temporaries) and not under `shards/`
/// (each shard part is a stage folder of its own, pushed and pulled on its own).
pub(crate) fn is_stage_file(rel: &str) -> bool {
    !rel.split('/').any(|s| s.starts_with('.')) && rel.split('/').next() != Some(SHARDS_DIR)
}

/// File -> (sha256, bytes) from a `.push.json`.
fn parse_list(bytes: &[u8], at: &Location) -> Result<BTreeMap<String, (String, u64)>, StoreError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| StoreError::invalid(at, format!("unreadable: {e}")))?;
    let files = v["files"]
        .as_object()
        .ok_or_else(|| StoreError::invalid(at, "no `files` object"))?;
    files
        .iter()
        .map(|(k, f)| match (f["sha256"].as_str(), f["bytes"].as_u64()) {
            (Some(sha), Some(n)) => Ok((k.clone(), (sha.to_string(), n))),
            _ => Err(StoreError::invalid(
                at,
                format!("`{k}`: no sha256 or bytes"),
            )),
        })
        .collect()
}

/// Upload the finished stage folder `local` to `remote` (the stage's own location): every file,
/// those of the previous push that are gone removed, `.push.json`, then `stage.json` last.
pub fn push_stage_dir(local: &Path, remote: &Remote) -> Result<Transfer, StoreError> {
    let record = local.join(STAGE_RECORD);
    if !record.is_file() {
        return Err(StoreError::invalid(
            &Location::Local(local.to_path_buf()),
            format!("no {STAGE_RECORD}: the stage has not finished"),
        ));
    }
    let previous = match remote.get(PUSH_LIST)? {
        Some(b) => parse_list(&b, &remote.location().join(PUSH_LIST))?,
        None => BTreeMap::new(),
    };
    // Unfinished from here until the new record is written.
    remote.delete(STAGE_RECORD)?;
    let files: Vec<String> = files_under(local)?
        .into_iter()
        .filter(|r| r != STAGE_RECORD && is_stage_file(r))
        .collect();
    let mut t = Transfer::default();
    let mut listed = serde_json::Map::new();
    for rel in &files {
        let path = local.join(rel);
        let (sha256, bytes) = hash_file(&path).map_err(|e| StoreError::Io {
            path: path.clone(),
            source: e,
        })?;
        t.bytes += remote.upload(&path, rel)?;
        t.files += 1;
        listed.insert(rel.clone(), json!({"sha256": sha256, "bytes": bytes}));
    }
    for old in previous.keys().filter(|k| !listed.contains_key(*k)) {
        remote.delete(old)?;
        t.removed += 1;
    }
    remote.put(
        PUSH_LIST,
        serde_json::to_vec_pretty(&json!({ "files": listed })).unwrap_or_default(),
    )?;
    t.bytes += remote.upload(&record, STAGE_RECORD)?;
    t.files += 1;
    tracing::info!(location = %remote.location(), files = t.files, bytes = t.bytes, "stage pushed");
    Ok(t)
}

/// Download the stage folder at `remote` into `local`, replacing it: `stage.json` is read first
/// (none: an error, the stage has not finished there), then the files `.push.json` lists (every
/// object but dot-files when a folder was uploaded by other means), each checked against its
/// listed sha256 and size, into a hidden folder beside `local`; `stage.json` is written last and
/// the folder renamed into place.
pub fn pull_stage_dir(remote: &Remote, local: &Path) -> Result<Transfer, StoreError> {
    let Some(record) = remote.get(STAGE_RECORD)? else {
        return Err(StoreError::invalid(
            &remote.location().join(STAGE_RECORD),
            "not found: the stage has not finished (or not been pushed) there",
        ));
    };
    let list_at = remote.location().join(PUSH_LIST);
    let listed: BTreeMap<String, Option<(String, u64)>> = match remote.get(PUSH_LIST)? {
        Some(b) => parse_list(&b, &list_at)?
            .into_iter()
            .filter(|(k, _)| is_stage_file(k))
            .map(|(k, v)| (k, Some(v)))
            .collect(),
        None => remote
            .list("")?
            .into_iter()
            .filter(|e| e.key != STAGE_RECORD && is_stage_file(&e.key))
            .map(|e| (e.key, None))
            .collect(),
    };
    let name = local
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "stage".into());
    let staging = local.with_file_name(format!(".{name}.pull-{}", std::process::id()));
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |e| StoreError::Io { path, source: e }
    };
    let result = (|| {
        let _ = fs::remove_dir_all(&staging);
        fs::create_dir_all(&staging).map_err(io(&staging))?;
        let mut t = Transfer::default();
        for (key, expected) in &listed {
            let file = staging.join(key);
            t.bytes += remote.download(key, &file)?;
            t.files += 1;
            if let Some((sha256, bytes)) = expected {
                let got = hash_file(&file).map_err(io(&file))?;
                if (&got.0, got.1) != (sha256, *bytes) {
                    return Err(StoreError::invalid(
                        &remote.location().join(key),
                        format!(
                            "sha256 {} ({} bytes) differs from {PUSH_LIST}'s {sha256} ({bytes} bytes): \
                             a push is under way, pull again once it finishes",
                            got.0, got.1
                        ),
                    ));
                }
            }
        }
        // A push that started meanwhile removed or replaced the record: these files may mix runs.
        if remote.get(STAGE_RECORD)?.as_deref() != Some(&record[..]) {
            return Err(StoreError::invalid(
                &remote.location().join(STAGE_RECORD),
                "changed during the pull (a push is under way); pull again once it finishes",
            ));
        }
        fs::write(staging.join(STAGE_RECORD), &record).map_err(io(&staging))?;
        t.bytes += record.len() as u64;
        t.files += 1;
        // The stage's shard parts are folders of their own (pushed and pulled one by one):
        // a pull of the stage keeps the local ones.
        let parts = local.join(SHARDS_DIR);
        let kept = staging.join(SHARDS_DIR);
        let moved = parts.is_dir();
        if moved {
            fs::rename(&parts, &kept).map_err(io(&parts))?;
        }
        let replaced = (|| {
            if local.exists() {
                fs::remove_dir_all(local).map_err(io(local))?;
            }
            fs::rename(&staging, local).map_err(io(local))
        })();
        if let Err(e) = replaced {
            if moved {
                let _ = fs::create_dir_all(local);
                let _ = fs::rename(&kept, &parts);
            }
            return Err(e);
        }
        Ok(t)
    })();
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result
}
