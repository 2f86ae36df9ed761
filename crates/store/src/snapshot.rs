//! Snapshots on object storage: `<root>/<dataset>/<version>/`, the local layout file for file.
//!
//! A version is visible once its `manifest.json` exists, and `manifest.json` is written last.
//! Before uploading anything a publisher claims the version with a create-only put of
//! `.claim.json`: uploading first and racing only on the manifest would let the loser's files
//! overwrite the winner's after the winner's manifest is in place.

use std::fs;
use std::path::{Path, PathBuf};

use noisebench_snapshot::{MANIFEST, Manifest};
use semver::Version;

use crate::{Created, Remote, StoreError};

/// The claim object of a version being (or having been) published.
pub const CLAIM: &str = ".claim.json";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Published {
    /// This call uploaded the version.
    Published {
        dataset: String,
        version: String,
        files: usize,
        bytes: u64,
    },
    /// The same version with the same manifest was already there (a rerun).
    AlreadyThere { dataset: String, version: String },
}

/// Upload the finished local version folder `version_dir` (`.../<dataset>/<version>/`, as
/// `noisebench_snapshot::publish` wrote it) under `root`. Fails with
/// [`StoreError::VersionTaken`] when another publisher holds the version with other content.
pub fn publish(version_dir: &Path, root: &Remote) -> Result<Published, StoreError> {
    let manifest = Manifest::read(version_dir).map_err(|e| StoreError::Invalid {
        location: version_dir.display().to_string(),
        reason: e,
    })?;
    let local_manifest = fs::read(version_dir.join(MANIFEST)).map_err(|e| StoreError::Io {
        path: version_dir.join(MANIFEST),
        source: e,
    })?;
    let (dataset, version) = (manifest.dataset.clone(), manifest.version.clone());
    let prefix = format!("{dataset}/{version}");
    let key = |name: &str| format!("{prefix}/{name}");
    let taken = |holder: String| StoreError::VersionTaken {
        location: root.location().join(&prefix).to_string(),
        version: version.clone(),
        holder,
    };
    // A rerun of a publish that finished: nothing to do if the manifests are the same bytes.
    let already = |remote: Option<Vec<u8>>| -> Result<Option<Published>, StoreError> {
        match remote {
            None => Ok(None),
            Some(bytes) if bytes == local_manifest => Ok(Some(Published::AlreadyThere {
                dataset: dataset.clone(),
                version: version.clone(),
            })),
            Some(_) => Err(taken("its manifest.json differs from this one".into())),
        }
    };
    if let Some(done) = already(root.get(&key(MANIFEST))?)? {
        return Ok(done);
    }
    let claim = serde_json::json!({
        "publisher": publisher_id(),
        "manifest_sha256": noisebench_pipeline::table_io::hash_file(&version_dir.join(MANIFEST))
            .map(|(sha, _)| sha)
            .unwrap_or_default(),
    });
    if root.put_create(&key(CLAIM), claim.to_string().into_bytes())? == Created::AlreadyExists {
        if let Some(done) = already(root.get(&key(MANIFEST))?)? {
            return Ok(done);
        }
        let holder = root
            .get(&key(CLAIM))?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_else(|| "unknown".into());
        return Err(taken(holder));
    }
    let mut files = 0;
    let mut bytes = 0;
    for rel in files_under(version_dir)? {
        if rel == MANIFEST {
            continue;
        }
        bytes += root.upload(&version_dir.join(&rel), &key(&rel))?;
        files += 1;
    }
    if root.put_create(&key(MANIFEST), local_manifest.clone())? == Created::AlreadyExists {
        return Err(StoreError::invalid(
            &root.location().join(&key(MANIFEST)),
            "appeared while this publisher held the version's claim (someone wrote it without claiming)",
        ));
    }
    tracing::info!(location = %root.location().join(&prefix), files, bytes, "snapshot published");
    Ok(Published::Published {
        dataset,
        version,
        files: files + 1,
        bytes: bytes + local_manifest.len() as u64,
    })
}

/// Published versions of `dataset` under `root`, ascending: only those whose manifest exists.
pub fn list_versions(root: &Remote, dataset: &str) -> Result<Vec<Version>, StoreError> {
    let mut out = Vec::new();
    for name in root.list_dirs(dataset)? {
        let Ok(v) = Version::parse(&name) else {
            continue;
        };
        if root.exists(&format!("{dataset}/{name}/{MANIFEST}"))? {
            out.push(v);
        }
    }
    out.sort();
    Ok(out)
}

pub fn latest(root: &Remote, dataset: &str) -> Result<Option<Version>, StoreError> {
    Ok(list_versions(root, dataset)?.pop())
}

/// Download a published version to `snapshots_dir/<dataset>/<version>/` and check it with
/// `noisebench_snapshot::verify` (hashes, sizes, rows, schemas) before it appears there: the
/// files land in a hidden folder that is renamed into place only when they verify.
pub fn download(
    root: &Remote,
    dataset: &str,
    version: &Version,
    snapshots_dir: &Path,
) -> Result<PathBuf, StoreError> {
    let prefix = format!("{dataset}/{version}");
    if !root.exists(&format!("{prefix}/{MANIFEST}"))? {
        return Err(StoreError::invalid(
            &root.location().join(&prefix),
            "not published (no manifest.json)",
        ));
    }
    let target = snapshots_dir.join(dataset).join(version.to_string());
    if target.exists() {
        return Err(StoreError::invalid(
            &crate::Location::Local(target),
            "already exists locally",
        ));
    }
    let staging_parent = snapshots_dir
        .join(dataset)
        .join(format!(".download-{}", std::process::id()));
    let staging = staging_parent.join(version.to_string());
    let result = (|| {
        let _ = fs::remove_dir_all(&staging_parent);
        for entry in root.list(&prefix)? {
            let rel = entry.key[prefix.len() + 1..].to_string();
            if rel == CLAIM {
                continue;
            }
            root.download(&entry.key, &staging.join(&rel))?;
        }
        let report = noisebench_snapshot::verify(&staging);
        if !report.ok() {
            return Err(StoreError::invalid(
                &root.location().join(&prefix),
                format!(
                    "downloaded copy fails verification: {}",
                    report.problems.join("; ")
                ),
            ));
        }
        fs::rename(&staging, &target).map_err(|e| StoreError::Io {
            path: target.clone(),
            source: e,
        })
    })();
    let _ = fs::remove_dir_all(&staging_parent);
    result.map(|()| target)
}

/// Every file under `dir`, as `/`-separated relative paths, sorted.
pub(crate) fn files_under(dir: &Path) -> Result<Vec<String>, StoreError> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), StoreError> {
        let io = |e| StoreError::Io {
            path: dir.to_path_buf(),
            source: e,
        };
        for entry in fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.is_dir() {
                walk(base, &path, out)?;
            } else if let Ok(rel) = path.strip_prefix(base) {
                let parts: Vec<_> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort();
    Ok(out)
}

/// Who holds a claim, for the message of the publisher that lost it.
fn publisher_id() -> String {
    let host = fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    format!("{host} pid {} at unix time {now:.3}", std::process::id())
}
