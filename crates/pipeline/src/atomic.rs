//! Crash-safe file writes: a temporary file beside the target, fsync, rename, fsync of the folder.
//! A reader sees the old file or the new one, never a torn one.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The temporary name used for `path` while it is being written.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Write `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |file| file.write_all(bytes))
}

/// Create `path` atomically from whatever `fill` writes into the temporary file.
pub(crate) fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let tmp = temp_path(path);
    let result = (|| {
        let mut file = File::create(&tmp)?;
        injected_full_disk(path)?;
        fill(&mut file)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)?;
        sync_dir(path.parent().unwrap_or(Path::new(".")))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Create every file of `paths` atomically from what `fill` writes into their temporary files
/// (in the same order): all are renamed into place once `fill` and every fsync succeed; on a
/// failure before that, every temporary file is removed and no target is touched.
pub(crate) fn write_atomic_many(
    paths: &[PathBuf],
    fill: impl FnOnce(&mut [File]) -> io::Result<()>,
) -> io::Result<()> {
    let temps: Vec<PathBuf> = paths.iter().map(|p| temp_path(p)).collect();
    let result = (|| {
        let mut files = Vec::with_capacity(paths.len());
        for (path, tmp) in paths.iter().zip(&temps) {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)?;
            }
            files.push(File::create(tmp)?);
            injected_full_disk(path)?;
        }
        fill(&mut files)?;
        for file in &files {
            file.sync_all()?;
        }
        drop(files);
        for (path, tmp) in paths.iter().zip(&temps) {
            fs::rename(tmp, path)?;
        }
        let mut dirs: Vec<&Path> = paths
            .iter()
            .map(|p| p.parent().unwrap_or(Path::new(".")))
            .collect();
        dirs.dedup();
        dirs.into_iter().try_for_each(sync_dir)
    })();
    if result.is_err() {
        for tmp in &temps {
            let _ = fs::remove_file(tmp);
        }
    }
    result
}

/// The environment variable naming a folder whose files every atomic write fails on with
/// `ENOSPC`, as on a full disk: a test hook for machines where a test cannot mount a small file
/// system (it needs root). Unset, it costs one lookup per write.
pub const FULL_DISK_HOOK: &str = "NOISEBENCH_TEST_FULL_DISK_UNDER";

fn injected_full_disk(path: &Path) -> io::Result<()> {
    match std::env::var_os(FULL_DISK_HOOK) {
        Some(dir) if !dir.is_empty() && path.starts_with(&dir) => {
            // ENOSPC's number on Linux and macOS.
            Err(io::Error::from_raw_os_error(28))
        }
        _ => Ok(()),
    }
}

/// Remove, in `dir` (not below it), the temporary files [`write_atomic_with`] left when its
/// process was killed: those named for a process that no longer runs. A live writer's file is
/// never touched. Returns how many were removed.
pub(crate) fn sweep_orphan_temps(dir: &Path) -> usize {
    let mut removed = 0;
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = temp_owner(&name) else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) && fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// The pid in a temporary name `.<file>.<pid>.tmp`.
fn temp_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, pid) = rest.rsplit_once('.')?;
    pid.parse().ok()
}

/// Whether a process with this pid runs. On Linux `/proc` tells; elsewhere assume it does, so
/// nothing is swept that might be in use.
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// fsync a directory so that a rename inside it is durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_give_their_writer() {
        assert_eq!(temp_owner(".claims.parquet.4242.tmp"), Some(4242));
        assert_eq!(temp_owner(".stage.json.7.tmp"), Some(7));
        assert_eq!(temp_owner("claims.parquet"), None);
        assert_eq!(temp_owner(".claims.parquet.x.tmp"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn only_files_of_dead_writers_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        // A pid that ran and has exited.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let orphan = dir.path().join(format!(".claims.parquet.{dead}.tmp"));
        let ours = temp_path(&dir.path().join("labels.parquet"));
        let init = dir.path().join(".queries.parquet.1.tmp");
        let table = dir.path().join("claims.parquet");
        for p in [&orphan, &ours, &init, &table] {
            fs::write(p, b"x").unwrap();
        }
        assert_eq!(sweep_orphan_temps(dir.path()), 1);
        assert!(!orphan.exists());
        assert!(ours.exists() && init.exists() && table.exists());
    }
}
