//! The `documents` stage: fetch each distinct hit once, extract its text, merge duplicates, link
//! claims to documents, and cut passages.
//!
//! Reddit posts come from their JSON: read from a configured local dump when the post is in it,
//! else fetched as `<reddit_json_base>/r/<sub>/comments/<id>/.json`. Link posts and deleted or
//! removed bodies are kept and flagged. Other pages go through the readability extractor
//! ([`crate::extract`]). Hits resolve to canonical URLs ([`crate::canonical`]); documents with the
//! same normalised title and text are merged into the first one, and every hit of a claim is kept
//! as a link (`claim_documents`) to the document it resolved to. A hit that carries its text (a
//! document of the user's corpus, the `corpus` backend) becomes a document without any fetch,
//! its address (`corpus://<name>/<id>`) its canonical URL and its corpus id kept.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_core::{
    ClaimDocument, ConfigError, Document, DropReason, Drops, InputSpec, Inputs, OutputSpec,
    Passage, Query, SearchHit, ShardKey, StageContext, StageError, StageOutput, StageReport,
    TableKind, TypedStage, sha256_hex, stable_id,
};
use noisebench_web::{Page, Web};
use serde::Deserialize;

use crate::backends::reddit_dump::read_posts;
use crate::canonical::{SOURCE_TYPES, canonical_url, classify_source, domain_of, reddit_post_id};
use crate::extract::{detect_language, extract_html, tidy_text};
use crate::passages::{split_passages, word_count};
use crate::reddit::RedditPost;

/// Configuration of the `documents` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentsConfig {
    /// Reddit dumps (zstd NDJSON) to read posts from instead of fetching them.
    #[serde(default)]
    pub reddit_dumps: Vec<PathBuf>,
    /// Fetch Reddit posts missing from the dumps as JSON (false: drop them as `not_in_dump`).
    #[serde(default = "yes")]
    pub fetch_reddit: bool,
    /// Where Reddit post JSON is fetched from.
    #[serde(default = "default_reddit_base")]
    pub reddit_json_base: String,
    /// Passage size limit in words.
    #[serde(default = "default_passage_words")]
    pub passage_words: usize,
    /// Source types by domain or host, over the built-in rules (`"example.org" = "academic"`; one
    /// of `mainstream news`, `government`, `non-profit`, `academic`, `social media`, `other`).
    #[serde(default)]
    pub source_types: BTreeMap<String, String>,
    /// Pages whose decoded text has more than this share of U+FFFD replacement characters are
    /// dropped as `bad_encoding` (a charset that does not match the bytes).
    #[serde(default = "default_bad_encoding")]
    pub max_replacement_ratio: f64,
}

fn yes() -> bool {
    true
}
fn default_reddit_base() -> String {
    "https://www.reddit.com".into()
}
fn default_passage_words() -> usize {
    256
}
fn default_bad_encoding() -> f64 {
    0.01
}

/// The `documents` stage. Build with the run's [`Web`].
#[derive(Debug, Clone)]
pub struct DocumentsStage {
    web: Arc<Web>,
}

impl DocumentsStage {
    pub fn new(web: Arc<Web>) -> Self {
        Self { web }
    }
}

fn resolve(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

/// Whitespace-collapsed, lower-cased title and text: what duplicate detection compares.
fn content_hash(title: Option<&str>, text: &str) -> String {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    sha256_hex(format!("{}\n{}", norm(title.unwrap_or("")), norm(text)).as_bytes())
}

/// One distinct canonical URL and the hits that point to it.
struct Target {
    canonical: String,
    first_url: String,
    hits: Vec<usize>,
    reddit_id: Option<String>,
    /// A hit that carries the document's text (a corpus document): nothing to fetch.
    local: Option<usize>,
}

/// How a target is fetched.
enum Plan {
    Dump(String),
    Fetch(String),
    /// Made from the text the hit at this index carries.
    Local(usize),
}

/// Whether a hit carries its document's text (a corpus document), so nothing is fetched.
fn is_local(h: &SearchHit) -> bool {
    h.corpus_id.is_some() && h.text.is_some()
}

/// Distinct canonical URLs of the hits, in order of first appearance; a hit whose URL does
/// not parse is a drop. A corpus document's address (`corpus://<name>/<id>`) is its own
/// canonical URL.
fn targets_of(hits: &[SearchHit], drops: &mut Drops) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    let mut by_canonical: BTreeMap<String, usize> = BTreeMap::new();
    for (i, h) in hits.iter().enumerate() {
        let canonical = if is_local(h) {
            h.url.clone()
        } else {
            match canonical_url(&h.url) {
                Ok(u) => u,
                Err(e) => {
                    drops.add(&h.id, "bad_url", e.to_string());
                    continue;
                }
            }
        };
        let local = is_local(h).then_some(i);
        let t = *by_canonical.entry(canonical.clone()).or_insert_with(|| {
            let reddit_id = url::Url::parse(&canonical)
                .ok()
                .filter(|_| local.is_none())
                .and_then(|u| reddit_post_id(&u));
            targets.push(Target {
                canonical,
                first_url: h.url.clone(),
                hits: Vec::new(),
                reddit_id,
                local,
            });
            targets.len() - 1
        });
        targets[t].hits.push(i);
    }
    targets
}

/// The Reddit posts of the targets that the configured dumps hold, by post id.
fn local_posts(
    c: &DocumentsConfig,
    ctx: &StageContext,
    targets: &[Target],
) -> Result<BTreeMap<String, RedditPost>, StageError> {
    let wanted: BTreeSet<String> = targets.iter().filter_map(|t| t.reddit_id.clone()).collect();
    let mut local: BTreeMap<String, RedditPost> = BTreeMap::new();
    if !wanted.is_empty() {
        for d in &c.reddit_dumps {
            let path = resolve(&ctx.root, d);
            read_posts(&path, |p| {
                if wanted.contains(&p.id) && !local.contains_key(&p.id) {
                    local.insert(p.id.clone(), p);
                }
            })
            .map_err(|e| StageError::Other(e.to_string()))?;
        }
    }
    Ok(local)
}

/// Links: every hit of a claim that resolved to a document, one row per (claim, document).
fn claim_documents(
    hits: &[SearchHit],
    queries: &[Query],
    targets: &[Target],
    documents: &[Document],
    doc_of_target: &[Option<usize>],
) -> Vec<ClaimDocument> {
    let kind_of: BTreeMap<&str, &str> = queries
        .iter()
        .map(|q| (q.id.as_str(), q.kind.as_str()))
        .collect();
    let mut links: BTreeMap<(String, String), ClaimDocument> = BTreeMap::new();
    for (ti, t) in targets.iter().enumerate() {
        let Some(di) = doc_of_target[ti] else {
            continue;
        };
        let doc_id = &documents[di].id;
        for &hi in &t.hits {
            let h = &hits[hi];
            let link = links
                .entry((h.claim_id.clone(), doc_id.clone()))
                .or_insert_with(|| ClaimDocument {
                    id: stable_id("cd", &[&h.claim_id, doc_id]),
                    claim_id: h.claim_id.clone(),
                    document_id: doc_id.clone(),
                    hit_ids: Vec::new(),
                    best_rank: h.rank,
                    query_kinds: Vec::new(),
                });
            link.hit_ids.push(h.id.clone());
            link.best_rank = link.best_rank.min(h.rank);
            if let Some(k) = kind_of.get(h.query_id.as_str())
                && !link.query_kinds.iter().any(|q| q == k)
            {
                link.query_kinds.push(k.to_string());
            }
        }
    }
    let mut claim_documents: Vec<ClaimDocument> = links.into_values().collect();
    for l in &mut claim_documents {
        l.hit_ids.sort();
        l.query_kinds.sort();
    }
    claim_documents
}

/// Every document cut into passages of about `passage_words` words.
fn passages(c: &DocumentsConfig, documents: &[Document]) -> Vec<Passage> {
    let mut passages = Vec::new();
    for d in documents {
        for (i, text) in split_passages(&d.text, c.passage_words)
            .into_iter()
            .enumerate()
        {
            passages.push(Passage {
                id: stable_id("psg", &[&d.id, &i.to_string()]),
                document_id: d.id.clone(),
                index: i as i64,
                word_count: word_count(&text) as i64,
                text,
            });
        }
    }
    passages
}

impl DocumentsStage {
    /// How each target is read: from a dump, fetched (a Reddit post as its JSON), or not at
    /// all (a drop).
    fn plans(
        c: &DocumentsConfig,
        targets: &[Target],
        local: &BTreeMap<String, RedditPost>,
        drops: &mut Drops,
    ) -> Vec<Option<Plan>> {
        let mut plans: Vec<Option<Plan>> = Vec::with_capacity(targets.len());
        for t in targets {
            if let Some(hit) = t.local {
                plans.push(Some(Plan::Local(hit)));
                continue;
            }
            plans.push(match &t.reddit_id {
                Some(id) if local.contains_key(id) => Some(Plan::Dump(id.clone())),
                Some(_) if !c.fetch_reddit => {
                    drops.add(
                        &t.canonical,
                        "not_in_dump",
                        "the post is in no configured dump",
                    );
                    None
                }
                Some(_) => match Self::reddit_json_url(&c.reddit_json_base, &t.canonical) {
                    Some(u) => Some(Plan::Fetch(u)),
                    None => {
                        drops.add(&t.canonical, "bad_url", &t.canonical);
                        None
                    }
                },
                // The canonical URL: tracking parameters change nothing a reader sees.
                None => Some(Plan::Fetch(t.canonical.clone())),
            });
        }
        plans
    }

    /// Documents in target order, and the document of each target; duplicates by content
    /// merge into the first. `pages` answers the targets planned for fetching, in order.
    fn documents(
        c: &DocumentsConfig,
        hits: &[SearchHit],
        targets: &[Target],
        plans: &[Option<Plan>],
        local: &BTreeMap<String, RedditPost>,
        pages: Vec<Result<noisebench_web::Page, noisebench_web::FetchError>>,
        drops: &mut Drops,
    ) -> (Vec<Document>, Vec<Option<usize>>) {
        let mut pages = pages.into_iter();
        let mut documents: Vec<Document> = Vec::new();
        let mut by_hash: BTreeMap<String, usize> = BTreeMap::new();
        let mut doc_of_target: Vec<Option<usize>> = vec![None; targets.len()];
        for (ti, (t, plan)) in targets.iter().zip(plans).enumerate() {
            let doc = match plan {
                None => continue,
                Some(Plan::Dump(id)) => match local.get(id) {
                    Some(p) => Self::from_post(p, t, c, None),
                    None => continue,
                },
                Some(Plan::Local(hi)) => Self::from_hit(&hits[*hi], t, c),
                Some(Plan::Fetch(_)) => match pages.next() {
                    Some(Ok(page)) => match Self::from_page(&page, t, c) {
                        Ok(d) => d,
                        Err((code, detail)) => {
                            drops.add(&t.canonical, DropReason::permanent(code), detail);
                            continue;
                        }
                    },
                    Some(Err(e)) => {
                        drops.add(&t.canonical, e.drop_reason(), e.to_string());
                        continue;
                    }
                    None => continue,
                },
            };
            let empty =
                doc.text.trim().is_empty() && doc.title.as_deref().unwrap_or("").trim().is_empty();
            if !empty && let Some(&kept) = by_hash.get(&doc.content_hash) {
                drops.add(
                    &t.canonical,
                    "merged_duplicate",
                    format!(
                        "same content as {} ({})",
                        documents[kept].id, documents[kept].canonical_url
                    ),
                );
                doc_of_target[ti] = Some(kept);
                continue;
            }
            by_hash
                .entry(doc.content_hash.clone())
                .or_insert(documents.len());
            doc_of_target[ti] = Some(documents.len());
            documents.push(doc);
        }
        (documents, doc_of_target)
    }
}

fn replacement_ratio(text: &str) -> f64 {
    let total = text.chars().count().max(1);
    text.chars().filter(|c| *c == '\u{FFFD}').count() as f64 / total as f64
}

impl DocumentsStage {
    fn reddit_json_url(base: &str, canonical: &str) -> Option<String> {
        let u = url::Url::parse(canonical).ok()?;
        Some(format!("{}{}.json", base.trim_end_matches('/'), u.path()))
    }

    /// A document from a Reddit post.
    fn from_post(
        p: &RedditPost,
        t: &Target,
        cfg: &DocumentsConfig,
        page: Option<&Page>,
    ) -> Document {
        let text = p.body_text();
        let title = (!p.title.trim().is_empty()).then(|| p.title.trim().to_string());
        let host = url::Url::parse(&t.canonical)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let (source_type, source_type_source) = classify_source(&host, &cfg.source_types);
        let lang_text = format!("{} {}", title.as_deref().unwrap_or(""), text);
        Document {
            id: stable_id("doc", &[&t.canonical]),
            url: t.first_url.clone(),
            canonical_url: t.canonical.clone(),
            domain: domain_of(&host),
            source_type,
            source_type_source: source_type_source.into(),
            content_hash: content_hash(title.as_deref(), &text),
            language: detect_language(&lang_text),
            title,
            text,
            published: p.published(),
            fetched_at: page.map(|pg| pg.fetched_at.clone()),
            archive_ref: page.map(|pg| pg.sha256.clone()),
            subreddit: p.subreddit.clone(),
            author: p.author.clone(),
            score: p.score,
            is_link_post: p.is_link_post(),
            body_removed: p.body_removed(),
            corpus_id: None,
        }
    }

    /// A document from a hit that carries its text (a corpus document): its domain is the
    /// corpus's name, the host of its address.
    fn from_hit(h: &SearchHit, t: &Target, cfg: &DocumentsConfig) -> Document {
        let text = h.text.clone().unwrap_or_default();
        let host = url::Url::parse(&t.canonical)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let (source_type, source_type_source) = classify_source(&host, &cfg.source_types);
        let lang_text = format!("{} {}", h.title.as_deref().unwrap_or(""), text);
        Document {
            id: stable_id("doc", &[&t.canonical]),
            url: t.first_url.clone(),
            canonical_url: t.canonical.clone(),
            domain: host,
            source_type,
            source_type_source: source_type_source.into(),
            content_hash: content_hash(h.title.as_deref(), &text),
            language: detect_language(&lang_text),
            title: h.title.clone(),
            text,
            published: h.published.clone(),
            corpus_id: h.corpus_id.clone(),
            ..Document::default()
        }
    }

    /// A document from a fetched page, or a drop reason and detail.
    fn from_page(
        page: &Page,
        t: &Target,
        cfg: &DocumentsConfig,
    ) -> Result<Document, (String, String)> {
        let content_type = page
            .headers
            .get("content-type")
            .map(|c| c.to_ascii_lowercase())
            .unwrap_or_default();
        if t.reddit_id.is_some() {
            let value: serde_json::Value = serde_json::from_str(&page.text).map_err(|e| {
                (
                    "malformed_response".to_string(),
                    format!("Reddit JSON: {e}"),
                )
            })?;
            let post = RedditPost::from_page_json(&value).ok_or_else(|| {
                (
                    "malformed_response".to_string(),
                    "no post in the Reddit JSON".to_string(),
                )
            })?;
            return Ok(Self::from_post(&post, t, cfg, Some(page)));
        }
        if replacement_ratio(&page.text) > cfg.max_replacement_ratio {
            return Err((
                "bad_encoding".into(),
                format!(
                    "text decoded as {} has {:.1}% replacement characters",
                    page.encoding,
                    100.0 * replacement_ratio(&page.text)
                ),
            ));
        }
        let is_html = content_type.is_empty()
            || content_type.contains("html")
            || content_type.contains("xml");
        let (title, text, published, language) = if is_html {
            let e = extract_html(&page.text, &page.final_url)
                .map_err(|e| (e.code().to_string(), e.to_string()))?;
            (e.title, e.text, e.published, e.language)
        } else if content_type.starts_with("text/plain") {
            let text = tidy_text(&page.text);
            if text.is_empty() {
                return Err(("empty_text".into(), "the page is empty".into()));
            }
            let lang = detect_language(&text);
            (None, text, None, lang)
        } else {
            return Err((
                "unsupported_content_type".into(),
                format!("content type `{content_type}`"),
            ));
        };
        let host = url::Url::parse(&t.canonical)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let (source_type, source_type_source) = classify_source(&host, &cfg.source_types);
        Ok(Document {
            id: stable_id("doc", &[&t.canonical]),
            url: t.first_url.clone(),
            canonical_url: t.canonical.clone(),
            domain: domain_of(&host),
            source_type,
            source_type_source: source_type_source.into(),
            content_hash: content_hash(title.as_deref(), &text),
            title,
            text,
            published,
            language,
            fetched_at: Some(page.fetched_at.clone()),
            archive_ref: Some(page.sha256.clone()),
            subreddit: None,
            author: None,
            score: None,
            is_link_post: false,
            body_removed: false,
            corpus_id: None,
        })
    }
}

impl TypedStage for DocumentsStage {
    type Config = DocumentsConfig;
    const KIND: &'static str = "documents";
    // 2: no credibility columns (the labels stage rates credibility in a table of its own).
    // 3: documents of hits that carry their text (the `corpus` backend), with `corpus_id`.
    const VERSION: u32 = 3;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![
            InputSpec::required("search_hits", TableKind::SearchHits),
            InputSpec::optional("queries", TableKind::Queries),
        ]
    }

    /// One page is one item: hits are dealt out by their canonical URL (tracking variants and
    /// hosts of one page land in one shard, which fetches it once); merging redoes the steps
    /// across pages (same-content documents, claim links) over every hit, with pages from the
    /// archive.
    fn shard_keys(&self) -> Vec<ShardKey> {
        vec![ShardKey::mapped("search_hits", "url", |url| {
            canonical_url(url).unwrap_or_else(|_| url.to_string())
        })]
    }

    /// A claim's link to a document gathers its hits of every URL that led there (tracking
    /// variants, pages of the same content), which may sit in several shards.
    fn gathered_outputs(&self) -> Vec<&'static str> {
        vec!["claim_documents"]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec::new("documents", TableKind::Documents),
            OutputSpec::new("claim_documents", TableKind::ClaimDocuments),
            OutputSpec::new("passages", TableKind::Passages),
        ]
    }

    fn validate(&self, c: &DocumentsConfig, root: &Path) -> Result<(), ConfigError> {
        for (i, d) in c.reddit_dumps.iter().enumerate() {
            if !resolve(root, d).is_file() {
                return Err(ConfigError::new(
                    format!("reddit_dumps[{i}]"),
                    format!("{} does not exist", d.display()),
                ));
            }
        }
        url::Url::parse(&c.reddit_json_base)
            .map_err(|e| ConfigError::new("reddit_json_base", e.to_string()))?;
        if c.passage_words == 0 {
            return Err(ConfigError::new("passage_words", "must be at least 1"));
        }
        for (k, v) in &c.source_types {
            if !SOURCE_TYPES.contains(&v.as_str()) {
                return Err(ConfigError::new(
                    format!("source_types.{k}"),
                    format!("`{v}` is not one of: {}", SOURCE_TYPES.join(", ")),
                ));
            }
        }
        if !(0.0..=1.0).contains(&c.max_replacement_ratio) {
            return Err(ConfigError::new(
                "max_replacement_ratio",
                "must be within 0..=1",
            ));
        }
        Ok(())
    }

    fn external_files(&self, c: &DocumentsConfig, root: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = c.reddit_dumps.iter().map(|d| resolve(root, d)).collect();
        // Replayed pages are inputs too: editing a fixture page reruns the stage.
        files.extend(self.web.config().replay_inputs(root));
        files
    }

    fn environment(&self) -> serde_json::Value {
        serde_json::json!({ "web_mode": self.web.config().mode })
    }

    /// Pages and Reddit posts are fetched live unless the web layer replays (posts found in the
    /// configured dumps are not fetched, but a live web layer may fetch the rest).
    fn reads_live_sources(&self, _c: &DocumentsConfig) -> bool {
        self.web.config().mode == noisebench_web::Mode::Live
    }

    fn run(
        &self,
        c: &DocumentsConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.validate(c, &ctx.root)?;
        let hits: Vec<SearchHit> = inputs.take("search_hits")?;
        let queries: Vec<Query> = inputs.take_optional("queries")?.unwrap_or_default();
        let mut drops = Drops::new(&ctx.stage_id);
        let targets = targets_of(&hits, &mut drops);
        let local = local_posts(c, ctx, &targets)?;
        let plans = Self::plans(c, &targets, &local, &mut drops);
        let fetch_urls: Vec<String> = plans
            .iter()
            .filter_map(|p| match p {
                Some(Plan::Fetch(u)) => Some(u.clone()),
                _ => None,
            })
            .collect();
        let bar = ctx.progress.bar("documents", Some(fetch_urls.len() as u64));
        let pages = self.web.fetch_many(&fetch_urls);
        bar.inc(fetch_urls.len() as u64);
        bar.finish();
        let (documents, doc_of_target) =
            Self::documents(c, &hits, &targets, &plans, &local, pages, &mut drops);
        let claim_documents =
            claim_documents(&hits, &queries, &targets, &documents, &doc_of_target);
        let passages = passages(c, &documents);
        let report = StageReport {
            items_in: hits.len() as u64,
            items_out: documents.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput {
            report,
            ..StageOutput::default()
        }
        .with_table("documents", documents)
        .with_table("claim_documents", claim_documents)
        .with_table("passages", passages))
    }
}
