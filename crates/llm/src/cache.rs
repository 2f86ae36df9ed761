//! The response cache: one zstd file per key in a sharded directory.
//!
//! Why files and not a database: a kill at any moment must leave a valid cache, several runs may
//! share one cache, and a reviewer may delete entries by hand. Each entry is written to a unique
//! temporary file in its shard, fsynced, then renamed over its final name (atomic on POSIX), and
//! the shard directory is fsynced. A reader therefore sees either no entry or a whole one; a
//! killed writer leaves at most a `*.tmp` file, which readers never look at and [`Cache::open`]
//! sweeps when it is old. zstd frames carry a checksum, so an entry damaged on disk reads as a
//! miss (and is rewritten), never as a wrong answer. Failures are never written.

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

/// Temporary files older than this are leftovers of a killed writer.
const STALE_TMP: Duration = Duration::from_secs(3600);

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

    fn sweep(&self) {
        let Ok(shards) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        for shard in shards.flatten() {
            let Ok(files) = fs::read_dir(shard.path()) else {
                continue;
            };
            for f in files.flatten() {
                let p = f.path();
                let is_tmp = p.extension().is_some_and(|e| e == "tmp");
                let old = f
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|m| now.duration_since(m).ok())
                    .is_some_and(|age| age > STALE_TMP);
                if is_tmp && old {
                    let _ = fs::remove_file(&p);
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
}
