//! A local Reddit dump (Pushshift / Arctic Shift submissions: one JSON object a line, zstd
//! compressed) indexed for BM25 with tantivy.
//!
//! The index is built once per dump content: it lives in `<index_dir>/<first 16 hex of the
//! dump's sha256>/` with a `dump.sha256` marker written last, and is reused while the dump's
//! sha256 is unchanged. Building writes to a temporary directory renamed into place, so an
//! interrupted build is never mistaken for a finished one. One indexing thread keeps document
//! order (and so every ranking tie) the same on every run; ties are further broken by post id.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::ops::Bound;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer,
    StopWordFilter, TextAnalyzer,
};
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument, Term, doc};

use super::{Backend, Parsed, RawHit, SearchFailure, SearchRequest};
use crate::reddit::RedditPost;

const TOKENIZER: &str = "noisebench_en";
const MARKER: &str = "dump.sha256";
/// Bumped when the schema or tokenizer changes, so old indexes are rebuilt.
const INDEX_FORMAT: &str = "v1";

#[derive(Debug, Clone, PartialEq, Deserialize)]
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
    /// Lines that were not JSON objects or had no post id.
    pub bad_lines: u64,
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
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader.read_line(&mut line).map_err(io_err(path))?;
        if n == 0 {
            break;
        }
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
pub fn file_sha256(path: &Path) -> Result<String, DumpError> {
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

struct Fields {
    id: Field,
    title: Field,
    body: Field,
    snippet: Field,
    url: Field,
    created: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER)
        .set_index_option(IndexRecordOption::WithFreqs);
    let text = TextOptions::default().set_indexing_options(indexing);
    let fields = Fields {
        id: b.add_text_field("id", STRING | STORED),
        title: b.add_text_field("title", text.clone().set_stored()),
        body: b.add_text_field("body", text),
        snippet: b.add_text_field("snippet", STORED),
        url: b.add_text_field("url", STORED),
        created: b.add_i64_field("created", INDEXED | STORED | FAST),
    };
    (b.build(), fields)
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(
            StopWordFilter::new(Language::English)
                .unwrap_or_else(|| StopWordFilter::remove(Vec::<String>::new())),
        )
        .filter(Stemmer::new(Language::English))
        .build()
}

/// A searchable index over one dump.
pub struct DumpIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
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

fn index_err(path: &Path) -> impl FnOnce(tantivy::TantivyError) -> DumpError + '_ {
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
        let (_, fields) = schema();
        let reuse = std::fs::read_to_string(&marker)
            .map(|m| m.trim() == sha)
            .unwrap_or(false);
        let built = !reuse;
        if built {
            Self::build(dump, &dir, &sha)?;
        }
        let index = Index::open_in_dir(&dir).map_err(index_err(&dir))?;
        index.tokenizers().register(TOKENIZER, analyzer());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(index_err(&dir))?;
        let posts = reader.searcher().num_docs();
        tracing::info!(dump = %dump.display(), index = %dir.display(), built, posts, "reddit dump index ready");
        Ok(DumpIndex {
            index,
            reader,
            fields,
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
        std::fs::create_dir_all(&tmp).map_err(io_err(&tmp))?;
        let (schema, f) = schema();
        let index = Index::create_in_dir(&tmp, schema).map_err(index_err(&tmp))?;
        index.tokenizers().register(TOKENIZER, analyzer());
        let mut writer = index
            .writer_with_num_threads::<TantivyDocument>(1, 200_000_000)
            .map_err(index_err(&tmp))?;
        let mut failure: Option<tantivy::TantivyError> = None;
        let stats = read_posts(dump, |p| {
            if failure.is_some() {
                return;
            }
            let body = p.body_text();
            let snippet: String = body.chars().take(300).collect();
            let mut d = doc!(
                f.id => p.id.clone(),
                f.title => p.title.clone(),
                f.body => body,
                f.snippet => snippet,
                f.url => p.post_url(),
            );
            if let Some(c) = p.created_utc {
                d.add_i64(f.created, c);
            }
            if let Err(e) = writer.add_document(d) {
                failure = Some(e);
            }
        })?;
        if let Some(e) = failure {
            return Err(index_err(&tmp)(e));
        }
        writer.commit().map_err(index_err(&tmp))?;
        writer.wait_merging_threads().map_err(index_err(&tmp))?;
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
        let mut tokens = BTreeSet::new();
        let mut analyzer = analyzer();
        let mut stream = analyzer.token_stream(text);
        while stream.advance() {
            tokens.insert(stream.token().text.clone());
        }
        if tokens.is_empty() || top_k == 0 {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in &tokens {
            let title: Box<dyn Query> = Box::new(TermQuery::new(
                Term::from_field_text(self.fields.title, t),
                IndexRecordOption::WithFreqs,
            ));
            clauses.push((Occur::Should, Box::new(BoostQuery::new(title, title_boost))));
            clauses.push((
                Occur::Should,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.fields.body, t),
                    IndexRecordOption::WithFreqs,
                )),
            ));
        }
        let terms: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        let query: Box<dyn Query> = if from.is_some() || to.is_some() {
            let bound = |v: Option<i64>| match v {
                Some(v) => Bound::Included(Term::from_field_i64(self.fields.created, v)),
                None => Bound::Unbounded,
            };
            Box::new(BooleanQuery::new(vec![
                (Occur::Must, terms),
                (
                    Occur::Must,
                    Box::new(RangeQuery::new(bound(from), bound(to))),
                ),
            ]))
        } else {
            terms
        };
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(top_k + 16).order_by_score())
            .map_err(index_err(&self.dir))?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let d: TantivyDocument = searcher.doc(addr).map_err(index_err(&self.dir))?;
            let s = |f: Field| {
                d.get_first(f)
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            };
            hits.push(DumpHit {
                id: s(self.fields.id),
                score,
                title: s(self.fields.title),
                snippet: s(self.fields.snippet),
                url: s(self.fields.url),
                created_utc: d.get_first(self.fields.created).and_then(|v| v.as_i64()),
            });
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        hits.truncate(top_k);
        Ok(hits)
    }

    /// The tantivy index (for benchmarks and inspection).
    pub fn index(&self) -> &Index {
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
pub struct RedditDump {
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
                })
                .collect(),
        ))
    }
}
