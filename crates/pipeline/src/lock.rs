//! One writer per folder: an advisory lock (`flock`) on a file in the folder, so two runs of one
//! pipeline in one work folder never interleave their writes, and two publishers of one dataset
//! never both publish.
//!
//! The lock belongs to an open file, so the kernel releases it when its process ends, however it
//! ends (a SIGKILL included): a lock file left behind by a killed run is never a stale lock, and
//! nothing has to guess whether its pid still runs. The file holds the holder's pid and start time,
//! only for the message the next run gives. A thread that already holds a folder's lock may take
//! it again (`build-snapshot` holds it across the run and the publish it makes); another thread or
//! process waits or is refused.
//!
//! What this is not: a lock across machines (advisory locks on network file systems are not
//! reliable), or a lock readers need (a reader sees whole files only: see [`crate::atomic`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// The lock file's name in a locked folder.
pub(crate) const LOCK_FILE: &str = ".lock";

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{path}: another run is using this folder ({holder}); wait for it to finish, or stop it, then run again"
    )]
    Held { path: PathBuf, holder: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

thread_local! {
    /// Locks this thread holds, by lock file path: taken again, they are shared, not re-locked.
    static HELD: RefCell<BTreeMap<PathBuf, Weak<File>>> = const { RefCell::new(BTreeMap::new()) };
}

/// A held lock; released when the last guard for it on this thread is dropped.
#[derive(Debug)]
pub struct FolderLock {
    path: PathBuf,
    _file: Arc<File>,
}

impl FolderLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Take the lock on `dir` (created if missing), or fail at once naming who holds it.
    pub fn acquire(dir: &Path) -> Result<FolderLock, LockError> {
        Self::acquire_within(dir, Duration::ZERO)
    }

    /// Take the lock on `dir`, waiting up to `wait` for its holder to let go.
    pub fn acquire_within(dir: &Path, wait: Duration) -> Result<FolderLock, LockError> {
        let path = dir.join(LOCK_FILE);
        if let Some(file) = HELD.with(|h| h.borrow().get(&path).and_then(|w| w.upgrade())) {
            return Ok(FolderLock { path, _file: file });
        }
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(|source| LockError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let deadline = Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.read_to_string(&mut holder);
                    let holder = holder.trim();
                    return Err(LockError::Held {
                        path: path.clone(),
                        holder: if holder.is_empty() {
                            "holder unknown".into()
                        } else {
                            holder.into()
                        },
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        // Ours now: say who holds it (what a previous holder wrote is gone with it).
        let note = holder_note();
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(note.as_bytes()))
            .map_err(io)?;
        let file = Arc::new(file);
        HELD.with(|h| {
            h.borrow_mut().insert(path.clone(), Arc::downgrade(&file));
        });
        Ok(FolderLock { path, _file: file })
    }
}

/// `pid 4242 since unix time 1795000000: noisebench build-snapshot demo`.
fn holder_note() -> String {
    let args: Vec<String> = std::env::args().collect();
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "pid {} since unix time {since}: {}",
        std::process::id(),
        args.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_on_another_thread_is_refused_with_the_holder_named() {
        let dir = tempfile::tempdir().unwrap();
        let held = FolderLock::acquire(dir.path()).unwrap();
        // The same thread may take it again.
        let again = FolderLock::acquire(dir.path()).unwrap();
        let path = dir.path().to_path_buf();
        let refused = std::thread::spawn(move || FolderLock::acquire(&path).unwrap_err())
            .join()
            .unwrap();
        let message = refused.to_string();
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );
        assert!(message.contains("another run is using this folder"));
        drop(again);
        // Still held by the first guard.
        let path = dir.path().to_path_buf();
        assert!(
            std::thread::spawn(move || FolderLock::acquire(&path).is_err())
                .join()
                .unwrap()
        );
        drop(held);
        // Let go, it is free again. Waiting a little, not taking it at once: another test of this
        // binary may be starting a process (`flock`, `true`), and a child holds a copy of every
        // descriptor, this lock's included, from its fork until its exec closes them.
        let path = dir.path().to_path_buf();
        std::thread::spawn(move || {
            FolderLock::acquire_within(&path, Duration::from_secs(10)).unwrap()
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_waiting_taker_gets_the_lock_once_it_is_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let held = FolderLock::acquire(dir.path()).unwrap();
        let path = dir.path().to_path_buf();
        let waiter = std::thread::spawn(move || {
            FolderLock::acquire_within(&path, Duration::from_secs(10)).is_ok()
        });
        std::thread::sleep(Duration::from_millis(200));
        drop(held);
        assert!(waiter.join().unwrap());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_file_left_by_a_killed_process_does_not_hold() {
        let dir = tempfile::tempdir().unwrap();
        // A process that takes the lock (flock(1) holds it while `sleep` runs), then is killed.
        let lock = dir.path().join(LOCK_FILE);
        // `-o`: the lock stays with flock itself, not with the `sleep` it starts.
        let Ok(mut child) = std::process::Command::new("flock")
            .arg("-o")
            .arg(&lock)
            .args(["sleep", "5"])
            .spawn()
        else {
            return; // util-linux's flock is not installed
        };
        let start = Instant::now();
        while !lock.exists() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(200));
        let path = dir.path().to_path_buf();
        assert!(
            std::thread::spawn(move || FolderLock::acquire(&path).is_err())
                .join()
                .unwrap()
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(lock.exists());
        FolderLock::acquire(dir.path()).unwrap();
    }
}
