//! The response cache: one zstd file per key in a sharded directory.
//!
//! Why files and not a database: a kill at any moment must leave a valid cache, several runs may
//! share one cache, and a reviewer may delete entries by hand. Each entry is written to a unique
//! temporary file in its shard, fsynced, then renamed over its final name (atomic on POSIX), and
//! the shard directory is fsynced. A reader therefore sees either no entry or a whole one; a
//! killed writer leaves at most a `*.tmp` file, which readers never look at and [`Cache::open`]
//! sweeps once no live process can own it. zstd frames carry a checksum, so an entry damaged on
//! disk reads as a miss (and is rewritten), never as a wrong answer. Failures are never written.

use std::cell::RefCell;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::error::LlmError;

/// A directory of cache entries keyed by 64-hex-digit sha256.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    counter: AtomicU64,
}

/// Temporary files older than this are leftovers of a killed writer, whoever wrote them.
const STALE_TMP: Duration = Duration::from_secs(3600);

/// A temporary file whose writer's pid is not running here is swept once it is this old. Not at
/// once: a cache shared by other machines (or containers) holds their writers' files too, whose
/// pids mean nothing here, and none of them takes this long to write one entry.
const ORPHAN_TMP: Duration = Duration::from_secs(60);

impl Cache {
    /// Open (creating) a cache directory and sweep stale temporary files.
    pub fn open(dir: &Path) -> Result<Self, LlmError> {
        fs::create_dir_all(dir)
            .map_err(|e| LlmError::Cache(format!("{}: cannot create: {e}", dir.display())))?;
        let me = Self {
            dir: dir.to_path_buf(),
            counter: AtomicU64::new(0),
        };
        me.sweep();
        Ok(me)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.zst"))
    }

    /// Remove the temporary files of writers that are gone: older than [`STALE_TMP`], or named
    /// (`<key>.<pid>.<n>.tmp`) by a pid that is neither this process nor running, and older than
    /// [`ORPHAN_TMP`].
    fn sweep(&self) {
        let Ok(shards) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let me = std::process::id();
        for shard in shards.flatten() {
            let Ok(files) = fs::read_dir(shard.path()) else {
                continue;
            };
            for f in files.flatten() {
                let name = f.file_name();
                let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".tmp")) else {
                    continue;
                };
                let Some(age) = f
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|m| now.duration_since(m).ok())
                else {
                    continue;
                };
                let orphan = || {
                    writer_pid(stem)
                        .is_some_and(|pid| pid != me && process_is_gone(pid) == Some(true))
                };
                if age > STALE_TMP || (age > ORPHAN_TMP && orphan()) {
                    let _ = fs::remove_file(f.path());
                }
            }
        }
    }

    /// The decompressed entry, or `None` on a miss or a damaged entry.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        if !valid_key(key) {
            return None;
        }
        let bytes = fs::read(self.path(key)).ok()?;
        match decompress(&bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(key, error = %e, "damaged cache entry ignored");
                None
            }
        }
    }

    /// Store an entry atomically (temporary file, fsync, rename, fsync of the shard).
    pub fn put(&self, key: &str, value: &[u8]) -> Result<(), LlmError> {
        if !valid_key(key) {
            return Err(LlmError::Cache(format!("invalid key `{key}`")));
        }
        let path = self.path(key);
        let shard = path
            .parent()
            .ok_or_else(|| LlmError::Internal("cache path has no parent".into()))?;
        let io = |what: &str, e: std::io::Error| {
            LlmError::Cache(format!("{}: {what}: {e}", shard.display()))
        };
        fs::create_dir_all(shard).map_err(|e| io("create shard", e))?;
        let compressed = compress(value).map_err(|e| io("zstd", e))?;
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let tmp = shard.join(format!("{key}.{}.{n}.tmp", std::process::id()));
        let result = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&compressed)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            // Make the rename itself durable.
            fs::File::open(shard)?.sync_all()
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(io("write entry", e));
        }
        Ok(())
    }

    /// Every complete entry's key, sorted.
    pub fn keys(&self) -> Vec<String> {
        let mut out = Vec::new();
        let Ok(shards) = fs::read_dir(&self.dir) else {
            return out;
        };
        for shard in shards.flatten() {
            let Ok(files) = fs::read_dir(shard.path()) else {
                continue;
            };
            for f in files.flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                if let Some(key) = name.strip_suffix(".zst")
                    && valid_key(key)
                {
                    out.push(key.to_string());
                }
            }
        }
        out.sort();
        out
    }
}

thread_local! {
    // Creating a zstd context costs more than decompressing a small entry: keep one per thread.
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// One zstd frame with its content size (so reads allocate exactly) and a checksum (so damage
/// is detected).
fn compress(value: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut c = zstd::bulk::Compressor::new(3)?;
    c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
    c.set_parameter(zstd::zstd_safe::CParameter::ContentSizeFlag(true))?;
    c.compress(value)
}

fn decompress(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    const MAX_ENTRY: u64 = 256 << 20;
    match zstd::zstd_safe::get_frame_content_size(bytes) {
        Ok(Some(n)) if n <= MAX_ENTRY => DECOMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            let d = match &mut *slot {
                Some(d) => d,
                None => slot.insert(zstd::bulk::Decompressor::new()?),
            };
            d.decompress(bytes, n as usize)
        }),
        // No recorded size (another writer): the streaming decoder grows as needed.
        _ => zstd::stream::decode_all(bytes),
    }
}

/// The pid in a temporary file's name, `<key>.<pid>.<n>` without `.tmp`.
fn writer_pid(stem: &str) -> Option<u32> {
    let mut parts = stem.split('.');
    let (key, pid, n) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !valid_key(key) || n.parse::<u64>().is_err() {
        return None;
    }
    pid.parse().ok()
}

/// Whether no process has this pid; `None` when this system cannot tell (then only the age rule
/// sweeps).
#[cfg(target_os = "linux")]
fn process_is_gone(pid: u32) -> Option<bool> {
    let proc = Path::new("/proc");
    // Without a mounted /proc every pid would look dead.
    if !proc.join("self").exists() {
        return None;
    }
    Some(!proc.join(pid.to_string()).exists())
}

#[cfg(not(target_os = "linux"))]
fn process_is_gone(_pid: u32) -> Option<bool> {
    None
}

fn valid_key(key: &str) -> bool {
    key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::open(dir.path()).unwrap();
        let key = crate::sha256_hex_bytes(b"k");
        assert_eq!(c.get(&key), None);
        c.put(&key, b"hello").unwrap();
        assert_eq!(c.get(&key).as_deref(), Some(&b"hello"[..]));
        assert_eq!(c.keys(), vec![key.clone()]);
        // A damaged entry is a miss, not garbage.
        let p = c.path(&key);
        let mut bytes = fs::read(&p).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        fs::write(&p, bytes).unwrap();
        assert_eq!(c.get(&key), None);
        // Leftover temporary files are not entries.
        fs::write(p.with_file_name(format!("{key}.1.1.tmp")), b"partial").unwrap();
        assert_eq!(c.keys(), vec![key]);
        assert!(c.put("../../etc", b"x").is_err());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn open_sweeps_the_temporary_files_of_writers_that_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let key = crate::sha256_hex_bytes(b"k");
        let shard = dir.path().join(&key[..2]);
        fs::create_dir_all(&shard).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let ago = |secs| SystemTime::now() - Duration::from_secs(secs);
        let tmp = |pid: u32, n: u32, modified: SystemTime| {
            let p = shard.join(format!("{key}.{pid}.{n}.tmp"));
            fs::File::create(&p)
                .unwrap()
                .set_modified(modified)
                .unwrap();
            p
        };
        let killed = tmp(dead, 0, ago(120));
        let mine = tmp(me, 1, ago(120));
        let just_written = tmp(dead, 2, ago(0));
        let mine_but_old = tmp(me, 3, ago(2 * 3600));
        let unnamed = shard.join("stray.tmp");
        fs::File::create(&unnamed)
            .unwrap()
            .set_modified(ago(120))
            .unwrap();
        Cache::open(dir.path()).unwrap();
        assert!(!killed.exists(), "its writer is gone");
        assert!(mine.exists(), "this process may still be writing it");
        assert!(
            just_written.exists(),
            "too recent to rule out a writer on another machine sharing the cache"
        );
        assert!(!mine_but_old.exists(), "older than any write takes");
        assert!(
            unnamed.exists(),
            "no pid to check: only the age rule applies"
        );
    }
}
