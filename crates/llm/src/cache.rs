//! The response cache: one zstd file per key in a sharded directory.
//!
//! Why files and not a database: a kill at any moment must leave a valid cache, several runs may
//! share one cache, and a reviewer may delete entries by hand. Each entry is written to a unique
//! temporary file in its shard, fsynced, then renamed over its final name (atomic on POSIX), and
//! the shard directory is fsynced. A reader therefore sees either no entry or a whole one; a
//! killed writer leaves at most a `*.tmp` file, which readers never look at and [`Cache::open`]
//! sweeps once no live process can own it. zstd frames carry a checksum, so an entry damaged on
//! disk reads as a miss (and is rewritten), never as a wrong answer. Failures are never written.
//!
//! A [`RemoteCache`] (`[llm.cache] remote`, object storage through `noisebench-store`) can sit
//! under the local directory, which stays the working copy: a local miss reads the remote entry
//! (and keeps it locally), a new entry is also written there, create-only (an entry another
//! machine wrote first is the same answer to the same request and is left as it is). A remote
//! that fails is logged and treated as a miss: the cache never fails a call.

use std::cell::RefCell;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use crate::error::LlmError;

/// A directory of cache entries keyed by 64-hex-digit sha256.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    counter: AtomicU64,
    remote: Option<Arc<dyn RemoteCache>>,
}

/// Entries shared with other machines: compressed entry bytes by `<shard>/<key>.zst`.
pub trait RemoteCache: Send + Sync + std::fmt::Debug {
    /// The stored bytes, `None` when there is no such entry.
    fn get(&self, name: &str) -> Result<Option<Vec<u8>>, String>;
    /// Store unless an entry exists (then leave it).
    fn put_if_absent(&self, name: &str, bytes: Vec<u8>) -> Result<(), String>;
}

/// Opens a [`RemoteCache`] from `[llm.cache] remote` (a URL such as `s3://bucket/prefix`).
pub(crate) type RemoteOpener = fn(&str) -> Result<Arc<dyn RemoteCache>, String>;

static REMOTE_OPENER: OnceLock<RemoteOpener> = OnceLock::new();

/// Register how `[llm.cache] remote` URLs are opened (`noisebench_store::install_llm_cache_remote`
/// does): this crate does not link an object store client itself. The first registration wins.
pub fn set_remote_opener(opener: RemoteOpener) {
    let _ = REMOTE_OPENER.set(opener);
}

/// Open `[llm.cache] remote` with the registered opener.
pub fn open_remote(url: &str) -> Result<Arc<dyn RemoteCache>, LlmError> {
    let opener = REMOTE_OPENER.get().ok_or_else(|| {
        LlmError::Config(format!(
            "llm.cache.remote = \"{url}\": this program has no object storage support registered \
             (noisebench_store::install_llm_cache_remote)"
        ))
    })?;
    opener(url).map_err(|e| LlmError::Config(format!("llm.cache.remote: {e}")))
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
            remote: None,
        };
        me.sweep();
        Ok(me)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Read through to and write through to `remote` (see the module documentation).
    pub fn with_remote(mut self, remote: Arc<dyn RemoteCache>) -> Self {
        self.remote = Some(remote);
        self
    }

    fn remote_name(key: &str) -> String {
        format!("{}/{key}.zst", &key[..2])
    }

    /// A local miss: the remote entry, kept locally when it decompresses.
    fn get_remote(&self, key: &str) -> Option<Vec<u8>> {
        let remote = self.remote.as_ref()?;
        let bytes = match remote.get(&Self::remote_name(key)) {
            Ok(b) => b?,
            Err(e) => {
                tracing::warn!(key, error = %e, "remote cache read failed: a miss");
                return None;
            }
        };
        match decompress(&bytes) {
            Ok(v) => {
                if let Err(e) = self.write_local(key, &bytes) {
                    tracing::warn!(key, error = %e, "remote cache entry not kept locally");
                }
                Some(v)
            }
            Err(e) => {
                tracing::warn!(key, error = %e, "damaged remote cache entry ignored");
                None
            }
        }
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
        let Ok(bytes) = fs::read(self.path(key)) else {
            return self.get_remote(key);
        };
        match decompress(&bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(key, error = %e, "damaged cache entry ignored");
                self.get_remote(key)
            }
        }
    }

    /// Store an entry atomically (temporary file, fsync, rename, fsync of the shard).
    pub fn put(&self, key: &str, value: &[u8]) -> Result<(), LlmError> {
        if !valid_key(key) {
            return Err(LlmError::Cache(format!("invalid key `{key}`")));
        }
        let compressed = compress(value)
            .map_err(|e| LlmError::Cache(format!("{}: zstd: {e}", self.dir.display())))?;
        self.write_local(key, &compressed)?;
        if let Some(remote) = &self.remote
            && let Err(e) = remote.put_if_absent(&Self::remote_name(key), compressed)
        {
            tracing::warn!(key, error = %e, "remote cache write failed: kept locally only");
        }
        Ok(())
    }

    /// Write compressed entry bytes atomically under the local directory.
    fn write_local(&self, key: &str, compressed: &[u8]) -> Result<(), LlmError> {
        let path = self.path(key);
        let shard = path
            .parent()
            .ok_or_else(|| LlmError::Internal("cache path has no parent".into()))?;
        let io = |what: &str, e: std::io::Error| {
            LlmError::Cache(format!("{}: {what}: {e}", shard.display()))
        };
        fs::create_dir_all(shard).map_err(|e| io("create shard", e))?;
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let tmp = shard.join(format!("{key}.{}.{n}.tmp", std::process::id()));
        let result = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(compressed)?;
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

    /// Every complete local entry's key, sorted (a remote layer's entries are not listed).
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

    /// A shared store in memory; `down` makes every call fail.
    #[derive(Debug, Default)]
    struct Shared {
        entries: std::sync::Mutex<std::collections::BTreeMap<String, Vec<u8>>>,
        down: std::sync::atomic::AtomicBool,
    }

    impl RemoteCache for Shared {
        fn get(&self, name: &str) -> Result<Option<Vec<u8>>, String> {
            if self.down.load(Ordering::Relaxed) {
                return Err("connection refused".into());
            }
            Ok(self.entries.lock().unwrap().get(name).cloned())
        }
        fn put_if_absent(&self, name: &str, bytes: Vec<u8>) -> Result<(), String> {
            if self.down.load(Ordering::Relaxed) {
                return Err("connection refused".into());
            }
            self.entries
                .lock()
                .unwrap()
                .entry(name.to_string())
                .or_insert(bytes);
            Ok(())
        }
    }

    #[test]
    fn a_remote_layer_is_read_through_and_written_through() {
        let shared = Arc::new(Shared::default());
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let a = Cache::open(d1.path()).unwrap().with_remote(shared.clone());
        let b = Cache::open(d2.path()).unwrap().with_remote(shared.clone());
        let key = crate::sha256_hex_bytes(b"k");
        a.put(&key, b"first").unwrap();
        let name = format!("{}/{key}.zst", &key[..2]);
        assert_eq!(
            shared.entries.lock().unwrap()[&name],
            fs::read(a.path(&key)).unwrap(),
            "the remote holds the local file's bytes"
        );
        assert!(b.keys().is_empty());
        assert_eq!(b.get(&key).as_deref(), Some(&b"first"[..]));
        assert_eq!(b.keys(), vec![key.clone()], "kept locally");
        // Create-only: an entry already shared stays as it is.
        b.put(&key, b"second").unwrap();
        let d3 = tempfile::tempdir().unwrap();
        let c = Cache::open(d3.path()).unwrap().with_remote(shared.clone());
        assert_eq!(c.get(&key).as_deref(), Some(&b"first"[..]));
        // A failing remote is a miss on read and a local-only write, never an error.
        shared.down.store(true, Ordering::Relaxed);
        let other = crate::sha256_hex_bytes(b"other");
        assert_eq!(a.get(&other), None);
        a.put(&other, b"x").unwrap();
        assert_eq!(a.get(&other).as_deref(), Some(&b"x"[..]));
        // A damaged shared entry is a miss.
        shared.down.store(false, Ordering::Relaxed);
        let bad = crate::sha256_hex_bytes(b"bad");
        shared
            .entries
            .lock()
            .unwrap()
            .insert(format!("{}/{bad}.zst", &bad[..2]), b"not zstd".to_vec());
        assert_eq!(a.get(&bad), None);
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
