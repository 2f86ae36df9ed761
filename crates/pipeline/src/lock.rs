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

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread::ThreadId;
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

/// Locks the threads of this process hold, by lock file path, with the thread that took each:
/// that thread taking it again shares it, and a lock held by none of them that still names this
/// process as its holder is held by a child of ours (see [`CHILD_COPY_GRACE`]).
static HELD: Mutex<BTreeMap<PathBuf, (ThreadId, Weak<File>)>> = Mutex::new(BTreeMap::new());

/// How long a lock whose note names this process, and that no thread of it holds, is waited for:
/// a child process holds a copy of every descriptor from its fork until its exec closes them, so
/// a lock let go while another thread starts a process is held by that child for a moment.
const CHILD_COPY_GRACE: Duration = Duration::from_secs(5);

/// The thread of this process holding the lock file `path`, and its file, if one does.
fn held_here(path: &Path) -> Option<(ThreadId, Arc<File>)> {
    let held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    let (thread, file) = held.get(path)?;
    Some((*thread, file.upgrade()?))
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
        if let Some((thread, file)) = held_here(&path)
            && thread == std::thread::current().id()
        {
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
        let mut deadline = Instant::now() + wait;
        let mut graced = false;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(TryLockError::WouldBlock) => {
                    let holder = holder_of(&mut file);
                    if !graced && held_by_a_child_of_ours(&holder, &path) {
                        graced = true;
                        deadline = Instant::now() + CHILD_COPY_GRACE;
                        continue;
                    }
                    return Err(LockError::Held {
                        path: path.clone(),
                        holder: if holder.is_empty() {
                            "holder unknown".into()
                        } else {
                            holder
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
        HELD.lock().unwrap_or_else(PoisonError::into_inner).insert(
            path.clone(),
            (std::thread::current().id(), Arc::downgrade(&file)),
        );
        Ok(FolderLock { path, _file: file })
    }
}

/// The holder's note in the lock file (empty when it wrote none).
fn holder_of(file: &mut File) -> String {
    let mut holder = String::new();
    let _ = file
        .rewind()
        .and_then(|()| file.read_to_string(&mut holder));
    holder.trim().to_string()
}

/// The note names this process, yet no thread of it holds the lock: the holder is a copy of the
/// descriptor in a child process being started (see [`CHILD_COPY_GRACE`]).
fn held_by_a_child_of_ours(holder: &str, path: &Path) -> bool {
    holder.starts_with(&format!("pid {} ", std::process::id())) && held_here(path).is_none()
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

    /// A child process handed a copy of the lock's descriptor (as every child holds one between
    /// its fork and its exec) holds the lock after this process lets go: taking it again waits
    /// the copy out rather than refusing with this process named as the holder.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_copy_held_by_a_child_of_ours_is_waited_out() {
        let dir = tempfile::tempdir().unwrap();
        let held = FolderLock::acquire(dir.path()).unwrap();
        let copy = held._file.try_clone().unwrap();
        let Ok(mut child) = std::process::Command::new("sleep")
            .arg("0.5")
            .stdin(std::process::Stdio::from(copy))
            .spawn()
        else {
            return; // no sleep(1)
        };
        drop(held);
        let path = dir.path().to_path_buf();
        let taken = std::thread::spawn(move || FolderLock::acquire(&path).map(|_| ()))
            .join()
            .unwrap();
        child.wait().unwrap();
        taken.unwrap();
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
