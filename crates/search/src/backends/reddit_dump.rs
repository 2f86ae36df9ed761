//! A local Reddit dump (Pushshift / Arctic Shift submissions: one JSON object a line, zstd
//! compressed) indexed for BM25 with `noisebench-index` (tantivy).
//!
//! The index is built once per dump content: it lives in `<index_dir>/<first 16 hex of the
//! dump's sha256>/` with a `dump.sha256` marker written last, and is reused while the dump's
//! sha256 is unchanged. Building writes to a temporary directory renamed into place, so an
//! interrupted build is never mistaken for a finished one. One indexing thread keeps document
//! order (and so every ranking tie) the same on every run; ties are further broken by post id.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use noisebench_index::{Bm25, Doc, IndexError, Location, Query, Spec, TextField};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{Backend, Parsed, RawHit, SearchFailure, SearchRequest};
use crate::reddit::RedditPost;

const MARKER: &str = "dump.sha256";
/// Bumped when the schema or tokenizer changes, so old indexes are rebuilt.
/// v2: titles and bodies are indexed with Reddit's escaping undone (`&amp;` -> `&`).
const INDEX_FORMAT: &str = "v2";

#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedditDumpConfig {
    /// The dump file (`.zst` NDJSON; plain `.ndjson`/`.jsonl` also read), relative to the root.
    pub path: PathBuf,
    /// Where indexes are kept; default `<stage dir>/reddit-dump-index`.
    pub index_dir: Option<PathBuf>,
    /// Weight of a title match relative to a body match.
    #[serde(default = "default_title_boost")]
    pub title_boost: f32,
}

fn default_title_boost() -> f32 {
    2.0
}

/// Why the dump could not be read or indexed.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("index {path}: {message}")]
    Index { path: PathBuf, message: String },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DumpError + '_ {
    move |source| DumpError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Counts from one pass over a dump.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DumpStats {
    pub lines: u64,
    pub posts: u64,
    /// Lines that were not JSON objects or had no post id (oversized lines included).
    pub bad_lines: u64,
    /// Lines longer than [`MAX_LINE_BYTES`], skipped unread (counted in `bad_lines` too): a
    /// decompression bomb or a corrupt dump never makes a line buffer grow past the limit.
    pub oversized_lines: u64,
}

/// The longest dump line read: a real submission is a few KiB, the largest a few hundred.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// The next line of `reader` into `buf` (without reading more than `max` bytes into it):
/// `None` at the end, `Some(true)` for a line that fit, `Some(false)` for one that did not (the
/// rest of it is skipped).
fn next_line(
    reader: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut fits = true;
    let mut any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any.then_some(fits));
        }
        any = true;
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..=i], true),
            None => (chunk, false),
        };
        let used = part.len();
        if fits && buf.len() + used <= max {
            buf.extend_from_slice(part);
        } else {
            fits = false;
            buf.clear();
        }
        reader.consume(used);
        if done {
            return Ok(Some(fits));
        }
    }
}

/// Open a dump for line reading: zstd when the name ends in `.zst`/`.zstd`, else plain.
fn open_lines(path: &Path) -> Result<Box<dyn BufRead>, DumpError> {
    let file = File::open(path).map_err(io_err(path))?;
    let name = path.to_string_lossy();
    if name.ends_with(".zst") || name.ends_with(".zstd") {
        let mut dec = zstd::stream::read::Decoder::new(file).map_err(io_err(path))?;
        // Pushshift and Arctic Shift dumps are compressed with a 2 GiB window.
        dec.window_log_max(31).map_err(io_err(path))?;
        Ok(Box::new(BufReader::with_capacity(1 << 20, dec)))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
    }
}

/// Call `f` on every post of the dump, in file order.
pub fn read_posts(path: &Path, mut f: impl FnMut(RedditPost)) -> Result<DumpStats, DumpError> {
    let mut stats = DumpStats::default();
    let mut reader = open_lines(path)?;
    let mut bytes = Vec::new();
    while let Some(fits) =
        next_line(&mut *reader, &mut bytes, MAX_LINE_BYTES).map_err(io_err(path))?
    {
        if !fits {
            stats.lines += 1;
            stats.bad_lines += 1;
            stats.oversized_lines += 1;
            continue;
        }
        // Invalid UTF-8 is replaced, not fatal: one bad byte loses at most its field.
        let line = String::from_utf8_lossy(&bytes);
        if line.trim().is_empty() {
            continue;
        }
        stats.lines += 1;
        match serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .as_ref()
            .and_then(RedditPost::from_json)
        {
            Some(p) => {
                stats.posts += 1;
                f(p);
            }
            None => stats.bad_lines += 1,
        }
    }
    Ok(stats)
}

/// sha256 of a file's bytes, hex.
pub(crate) fn file_sha256(path: &Path) -> Result<String, DumpError> {
    let mut file = File::open(path).map_err(io_err(path))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(io_err(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The dump's collection: post titles (boosted) and bodies searched; snippet and URL stored;
/// `created_utc` for date windows. The field names are those of indexes built before the index
/// crate existed, so those still open.
fn spec() -> Spec {
    Spec {
        text: vec![
            TextField {
                name: "title",
                stored: true,
            },
            TextField {
                name: "body",
                stored: false,
            },
        ],
        stored: vec!["snippet", "url"],
        time: Some("created"),
    }
}

/// A searchable index over one dump.
pub struct DumpIndex {
    index: Bm25,
    /// The dump's sha256.
    pub sha256: String,
    /// Where the index lives.
    pub dir: PathBuf,
    /// Whether this call built the index (false: reused).
    pub built: bool,
    /// Posts in the index.
    pub posts: u64,
}

/// One ranked post.
#[derive(Debug, Clone, PartialEq)]
pub struct DumpHit {
    pub id: String,
    pub score: f32,
    pub title: String,
    pub snippet: String,
    pub url: String,
    pub created_utc: Option<i64>,
}

fn index_err(path: &Path) -> impl FnOnce(IndexError) -> DumpError + '_ {
    move |e| DumpError::Index {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

impl DumpIndex {
    /// Open the index for `dump` under `index_root`, building it if there is none for the
    /// dump's current sha256.
    pub fn open_or_build(dump: &Path, index_root: &Path) -> Result<DumpIndex, DumpError> {
        let sha = file_sha256(dump)?;
        let dir = index_root.join(format!("{}-{INDEX_FORMAT}", &sha[..16]));
        let marker = dir.join(MARKER);
        let reuse = std::fs::read_to_string(&marker)
            .map(|m| m.trim() == sha)
            .unwrap_or(false);
        let built = !reuse;
        if built {
            Self::build(dump, &dir, &sha)?;
        }
        let index = Bm25::open(&dir, &spec()).map_err(index_err(&dir))?;
        let posts = index.len();
        tracing::info!(dump = %dump.display(), index = %dir.display(), built, posts, "reddit dump index ready");
        Ok(DumpIndex {
            index,
            sha256: sha,
            dir,
            built,
            posts,
        })
    }

    fn build(dump: &Path, dir: &Path, sha: &str) -> Result<DumpStats, DumpError> {
        let tmp = dir.with_extension("building");
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(io_err(&tmp))?;
        }
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(io_err(dir))?;
        }
        let mut builder = Bm25::create(&spec(), Location::Dir(&tmp)).map_err(index_err(&tmp))?;
        let mut failure: Option<IndexError> = None;
        let stats = read_posts(dump, |p| {
            if failure.is_some() {
                return;
            }
            let body = p.body_text();
            let snippet: String = body.chars().take(300).collect();
            let url = p.post_url();
            let doc = Doc {
                id: p.id,
                text: vec![p.title, body],
                stored: vec![snippet, url],
                time: p.created_utc,
            };
            if let Err(e) = builder.add(doc) {
                failure = Some(e);
            }
        })?;
        if let Some(e) = failure {
            return Err(index_err(&tmp)(e));
        }
        // Committed and merged before the marker: a marker always vouches for a whole index.
        drop(builder.finish().map_err(index_err(&tmp))?);
        std::fs::write(tmp.join(MARKER), sha).map_err(io_err(&tmp))?;
        std::fs::rename(&tmp, dir).map_err(io_err(dir))?;
        tracing::info!(
            posts = stats.posts,
            bad_lines = stats.bad_lines,
            "reddit dump indexed"
        );
        Ok(stats)
    }

    /// BM25 over title (boosted) and body; `from`/`to` are inclusive `created_utc` bounds.
    /// Ranked by score, ties by post id.
    pub fn search(
        &self,
        text: &str,
        top_k: usize,
        title_boost: f32,
        from: Option<i64>,
        to: Option<i64>,
    ) -> Result<Vec<DumpHit>, DumpError> {
        let boosts = [title_boost, 1.0];
        let query = Query {
            text,
            top_k,
            boosts: &boosts,
            from,
            to,
        };
        let hits = self.index.search(&query).map_err(index_err(&self.dir))?;
        Ok(hits
            .into_iter()
            .map(|h| DumpHit {
                title: h.field("title").to_string(),
                snippet: h.field("snippet").to_string(),
                url: h.field("url").to_string(),
                created_utc: h.time,
                score: h.score,
                id: h.id,
            })
            .collect())
    }

    /// The BM25 index (for benchmarks and inspection).
    pub fn bm25(&self) -> &Bm25 {
        &self.index
    }
}

/// `YYYY-MM-DD` as a UTC timestamp at the start (or end, `end = true`) of that day.
pub fn day_bound(date: &str, end: bool) -> Option<i64> {
    let d = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").ok()?;
    let t = if end {
        d.and_hms_opt(23, 59, 59)?
    } else {
        d.and_hms_opt(0, 0, 0)?
    };
    Some(t.and_utc().timestamp())
}

/// The dump as a search backend.
pub(crate) struct RedditDump {
    pub index: DumpIndex,
    title_boost: f32,
}

impl RedditDump {
    pub fn new(index: DumpIndex, config: &RedditDumpConfig) -> Self {
        Self {
            index,
            title_boost: config.title_boost,
        }
    }
}

impl Backend for RedditDump {
    fn name(&self) -> &'static str {
        "reddit-dump"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        if let Some(site) = &req.site
            && !crate::canonical::is_reddit_host(site.trim_start_matches("www."))
        {
            // A dump holds only Reddit posts: nothing of another site can match.
            return Ok(Parsed::default());
        }
        let from = req.date_from.as_deref().and_then(|d| day_bound(d, false));
        let to = req.date_to.as_deref().and_then(|d| day_bound(d, true));
        let hits = self
            .index
            .search(&req.text, req.top_k, self.title_boost, from, to)
            .map_err(|e| SearchFailure::new("index_error", e.to_string()))?;
        Ok(Parsed::from_hits(
            hits.into_iter()
                .map(|h| RawHit {
                    url: Some(h.url),
                    title: (!h.title.is_empty()).then_some(h.title),
                    snippet: (!h.snippet.is_empty()).then_some(h.snippet),
                    published: h
                        .created_utc
                        .and_then(|c| chrono::DateTime::from_timestamp(c, 0))
                        .map(|t| t.format("%Y-%m-%d").to_string()),
                    ..RawHit::default()
                })
                .collect(),
        ))
    }
}
