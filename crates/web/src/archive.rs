//! The raw-page archive: bodies stored once per sha256, zstd-compressed, under
//! `objects/<first two hex>/<sha256>.zst`, and an append-only `index.jsonl` with one line per
//! response (URL, final URL, status, selected headers, fetch time, body sha256 and size).
//!
//! Why not WARC: see ARCHITECTURE.md. In short, content addressing deduplicates identical pages across
//! runs, any object is one `zstd -d` away, and the JSON-lines index opens in polars/DuckDB directly.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The index file name inside an archive directory.
pub const INDEX_FILE: &str = "index.jsonl";

/// One archived response: a line of `index.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveRecord {
    /// The URL requested in this hop.
    pub url: String,
    /// Where the fetch this hop belongs to ended (after redirects); equals `url` without redirects.
    pub final_url: String,
    pub status: u16,
    /// Selected response headers, lower-case names.
    pub headers: BTreeMap<String, String>,
    /// RFC 3339, UTC.
    pub fetched_at: String,
    /// sha256 of the (uncompressed) body: the object's name.
    pub sha256: String,
    pub size: u64,
}

/// An archive directory opened for writing.
#[derive(Debug)]
pub struct Archive {
    dir: PathBuf,
    index: Mutex<File>,
}

impl Archive {
    /// Open (creating if needed) the archive at `dir`.
    pub fn open(dir: &Path) -> io::Result<Self> {
        fs::create_dir_all(dir.join("objects"))?;
        let index = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(INDEX_FILE))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            index: Mutex::new(index),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Store `body` (if not stored yet) and append `record` to the index, fsynced.
    pub fn store(&self, record: &ArchiveRecord, body: &[u8]) -> io::Result<()> {
        let path = object_path(&self.dir, &record.sha256);
        if !path.exists() {
            let parent = path.parent().unwrap_or(&self.dir);
            fs::create_dir_all(parent)?;
            let compressed = zstd::encode_all(body, 3)?;
            // Write beside, fsync, rename: a crash never leaves a truncated object under its name.
            let tmp = parent.join(format!(".{}.{}.tmp", record.sha256, std::process::id()));
            {
                let mut f = File::create(&tmp)?;
                f.write_all(&compressed)?;
                f.sync_all()?;
            }
            fs::rename(&tmp, &path)?;
        }
        let mut line = serde_json::to_string(record).map_err(io::Error::other)?;
        line.push('\n');
        let mut index = self
            .index
            .lock()
            .map_err(|_| io::Error::other("archive index lock poisoned"))?;
        // One write per line with O_APPEND: concurrent writers never interleave within a line.
        index.write_all(line.as_bytes())?;
        index.sync_data()
    }
}

/// Where the object with `sha256` lives in the archive at `dir`.
pub fn object_path(dir: &Path, sha256: &str) -> PathBuf {
    let prefix = sha256.get(..2).unwrap_or("xx");
    dir.join("objects")
        .join(prefix)
        .join(format!("{sha256}.zst"))
}

/// The most an archived object may decompress to. Bodies are capped when fetched (10 MiB by
/// default), so anything past this is a corrupt or planted object (a decompression bomb).
pub(crate) const MAX_OBJECT_BYTES: u64 = 256 << 20;

/// Read and decompress an archived body; an object decompressing past `MAX_OBJECT_BYTES` is
/// refused (`InvalidData`) after at most that many bytes, never inflated whole.
pub fn read_object(dir: &Path, sha256: &str) -> io::Result<Vec<u8>> {
    read_object_capped(dir, sha256, MAX_OBJECT_BYTES)
}

/// [`read_object`] with a cap of `max` bytes.
pub fn read_object_capped(dir: &Path, sha256: &str, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = File::open(object_path(dir, sha256))?;
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(file)?
        .take(max + 1)
        .read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("archived object {sha256} decompresses to more than {max} bytes: refused"),
        ));
    }
    Ok(out)
}

/// All index lines of the archive at `dir`, in write order. A torn last line (crash while
/// appending) is skipped.
pub fn read_index(dir: &Path) -> io::Result<Vec<ArchiveRecord>> {
    let file = File::open(dir.join(INDEX_FILE))?;
    let mut records = Vec::new();
    let mut reader = BufReader::new(file);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if reader.read_until(b'\n', &mut bytes)? == 0 {
            break;
        }
        // A line that is not UTF-8 is a bad line, skipped like any other, not a failed read.
        let Ok(line) = std::str::from_utf8(&bytes) else {
            tracing::warn!(dir = %dir.display(), "skipping archive index line that is not UTF-8");
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(r) => records.push(r),
            Err(e) => tracing::warn!(dir = %dir.display(), "skipping bad archive index line: {e}"),
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_once_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let archive = Archive::open(dir.path()).unwrap();
        let body = b"<html>hello</html>".repeat(50);
        let sha = noisebench_core::sha256_hex(&body);
        let rec = ArchiveRecord {
            url: "https://a.example/x".into(),
            final_url: "https://a.example/x".into(),
            status: 200,
            headers: BTreeMap::from([("content-type".into(), "text/html".into())]),
            fetched_at: "2025-01-01T00:00:00Z".into(),
            sha256: sha.clone(),
            size: body.len() as u64,
        };
        archive.store(&rec, &body).unwrap();
        archive.store(&rec, &body).unwrap();
        assert_eq!(read_object(dir.path(), &sha).unwrap(), body);
        let index = read_index(dir.path()).unwrap();
        assert_eq!(index, vec![rec.clone(), rec]);
        let stored = fs::metadata(object_path(dir.path(), &sha)).unwrap().len();
        assert!(stored < body.len() as u64 / 5, "zstd compresses: {stored}");
    }
}
