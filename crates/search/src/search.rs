//! The `search` stage: every query through every configured backend, hits ranked as returned.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_core::{
    ConfigError, Drops, InputSpec, Inputs, OutputSpec, Query, SearchHit, ShardKey, StageContext,
    StageError, StageOutput, StageReport, TableKind, TypedStage, stable_id,
};
use noisebench_web::Web;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::backends::brave::{Brave, BraveConfig};
use crate::backends::fixture::{Fixture, FixtureConfig};
use crate::backends::google::{Google, GoogleConfig};
use crate::backends::reddit_api::{RedditApi, RedditApiConfig};
use crate::backends::reddit_dump::{DumpIndex, RedditDump, RedditDumpConfig};
use crate::backends::searxng::{Searxng, SearxngConfig};
use crate::backends::{Backend, SearchRequest};
use crate::canonical::is_reddit_host;

/// One backend of the `search` stage; `type` picks it.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum BackendConfig {
    /// Google's Custom Search JSON API (API key and search engine id).
    Google(GoogleConfig),
    /// The Brave Search API (subscription token).
    Brave(BraveConfig),
    /// A SearxNG instance's JSON API, fetched through the run's web layer.
    Searxng(SearxngConfig),
    /// Reddit's search API (OAuth application token).
    Reddit(RedditApiConfig),
    /// A Reddit dump file, indexed once per content with BM25 (no network).
    RedditDump(RedditDumpConfig),
    /// Recorded answers under `fixtures/search/` (tests and the demo; no network).
    Fixture(FixtureConfig),
}

impl BackendConfig {
    pub fn name(&self) -> &'static str {
        match self {
            BackendConfig::Google(_) => "google",
            BackendConfig::Brave(_) => "brave",
            BackendConfig::Searxng(_) => "searxng",
            BackendConfig::Reddit(_) => "reddit",
            BackendConfig::RedditDump(_) => "reddit-dump",
            BackendConfig::Fixture(_) => "fixture",
        }
    }
}

/// The name each backend's hits and drops carry (`search_hits.backend`, part of hit ids and drop
/// items): its type (`google`), or, when the pipeline has more than one backend of that type, the
/// type and its place in `backends` (`google[0]`, `google[2]`), so two backends of one type never
/// write the same hit id or drop item.
pub fn backend_labels(backends: &[BackendConfig]) -> Vec<String> {
    backends
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let name = b.name();
            let same_type = backends.iter().filter(|o| o.name() == name).count();
            if same_type > 1 {
                format!("{name}[{i}]")
            } else {
                name.to_string()
            }
        })
        .collect()
}

/// Configuration of the `search` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// `raguard` (site reddit.com, top 10) or `confact` (open web, top 10); fields set here win.
    pub preset: Option<String>,
    /// Results kept per query and backend (default 10).
    pub top_k: Option<usize>,
    /// Restrict results to a site (`reddit.com`).
    pub site: Option<String>,
    /// Start of the inclusive date window, `YYYY-MM-DD`; dated hits before it are dropped.
    pub date_from: Option<String>,
    /// End of the inclusive date window, `YYYY-MM-DD`; dated hits after it are dropped.
    pub date_to: Option<String>,
    /// Only queries of these kinds (all when empty).
    #[serde(default)]
    pub kinds: Vec<String>,
    /// The search backends every query goes through, each selected by its `type`.
    pub backends: Vec<BackendConfig>,
}

/// Presets and defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub top_k: usize,
    pub site: Option<String>,
}

pub const PRESETS: &[&str] = &["raguard", "confact"];

fn check_date(field: &str, v: &Option<String>) -> Result<(), ConfigError> {
    if let Some(d) = v
        && chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_err()
    {
        return Err(ConfigError::new(field, format!("`{d}` is not YYYY-MM-DD")));
    }
    Ok(())
}

impl SearchConfig {
    pub fn resolve(&self) -> Result<Resolved, ConfigError> {
        let (top_k, site) = match self.preset.as_deref() {
            None | Some("confact") => (10, None),
            Some("raguard") => (10, Some("reddit.com".to_string())),
            Some(other) => {
                return Err(ConfigError::new(
                    "preset",
                    format!("unknown preset `{other}` (known: {})", PRESETS.join(", ")),
                ));
            }
        };
        let top_k = self.top_k.unwrap_or(top_k);
        if top_k == 0 {
            return Err(ConfigError::new("top_k", "must be at least 1"));
        }
        let site = match &self.site {
            Some(s) if s.trim().is_empty() => None,
            Some(s) => Some(s.trim().trim_start_matches("www.").to_ascii_lowercase()),
            None => site,
        };
        Ok(Resolved { top_k, site })
    }
}

/// The `search` stage. Build with the run's [`Web`] (used by SearxNG; the credentialed APIs
/// use their own client, see [`crate::api`]).
#[derive(Debug, Clone)]
pub struct SearchStage {
    web: Arc<Web>,
}

impl SearchStage {
    pub fn new(web: Arc<Web>) -> Self {
        Self { web }
    }

    fn resolve_path(root: &Path, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            root.join(p)
        }
    }

    fn build(
        &self,
        i: usize,
        b: &BackendConfig,
        ctx: &StageContext,
    ) -> Result<Box<dyn Backend>, StageError> {
        let field = format!("backends[{i}]");
        let ua = self.web.config().user_agent.clone();
        let cfg = |m: String| StageError::Config(ConfigError::new(field.clone(), m));
        Ok(match b {
            BackendConfig::Google(c) => Box::new(Google::new(c, &ua).map_err(cfg)?),
            BackendConfig::Brave(c) => Box::new(Brave::new(c, &ua).map_err(cfg)?),
            BackendConfig::Searxng(c) => Box::new(Searxng::new(c, self.web.clone()).map_err(cfg)?),
            BackendConfig::Reddit(c) => Box::new(RedditApi::new(c, &ua).map_err(cfg)?),
            BackendConfig::Fixture(c) => {
                Box::new(Fixture::load(&Self::resolve_path(&ctx.root, &c.dir)).map_err(cfg)?)
            }
            BackendConfig::RedditDump(c) => {
                let dump = Self::resolve_path(&ctx.root, &c.path);
                let index_root = match &c.index_dir {
                    Some(d) => Self::resolve_path(&ctx.root, d),
                    None => ctx.stage_dir.join("reddit-dump-index"),
                };
                let index = DumpIndex::open_or_build(&dump, &index_root)
                    .map_err(|e| StageError::Other(format!("{field}: {e}")))?;
                Box::new(RedditDump::new(index, c))
            }
        })
    }
}

fn on_site(host: &str, site: &str) -> bool {
    let host = host.to_ascii_lowercase();
    if is_reddit_host(site) {
        return is_reddit_host(&host);
    }
    host == site || host.ends_with(&format!(".{site}"))
}

impl TypedStage for SearchStage {
    type Config = SearchConfig;
    const KIND: &'static str = "search";
    const VERSION: u32 = 1;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::required("queries", TableKind::Queries)]
    }

    /// One query is one item. Not in live mode: API answers are not archived (they may carry
    /// keys), so a merge could not read them back, and a search API's quota is per key, so
    /// shards would not make it faster; a live search runs once.
    fn shard_keys(&self) -> Vec<ShardKey> {
        if self.web.config().mode == noisebench_web::Mode::Live {
            return Vec::new();
        }
        vec![ShardKey::new("queries", "id")]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("search_hits", TableKind::SearchHits)]
    }

    fn validate(&self, c: &SearchConfig, root: &Path) -> Result<(), ConfigError> {
        c.resolve()?;
        check_date("date_from", &c.date_from)?;
        check_date("date_to", &c.date_to)?;
        if let (Some(a), Some(b)) = (&c.date_from, &c.date_to)
            && a > b
        {
            return Err(ConfigError::new(
                "date_to",
                format!("{b} is before date_from {a}"),
            ));
        }
        if c.backends.is_empty() {
            return Err(ConfigError::new(
                "backends",
                "at least one backend is needed",
            ));
        }
        let env = |field: String, var: &str| -> Result<(), ConfigError> {
            crate::api::env_secret(var)
                .map(|_| ())
                .map_err(|m| ConfigError::new(field, m))
        };
        for (i, b) in c.backends.iter().enumerate() {
            let f = |name: &str| format!("backends[{i}].{name}");
            match b {
                BackendConfig::Google(g) => {
                    env(f("api_key_env"), &g.api_key_env)?;
                    env(f("cx_env"), &g.cx_env)?;
                }
                BackendConfig::Brave(g) => env(f("api_key_env"), &g.api_key_env)?,
                BackendConfig::Reddit(g) => {
                    env(f("client_id_env"), &g.client_id_env)?;
                    env(f("client_secret_env"), &g.client_secret_env)?;
                }
                BackendConfig::Searxng(g) => {
                    if g.base_url.is_none() {
                        env(f("base_url_env"), &g.base_url_env)?;
                    }
                }
                BackendConfig::RedditDump(d) => {
                    if !Self::resolve_path(root, &d.path).is_file() {
                        return Err(ConfigError::new(
                            f("path"),
                            format!("{} does not exist", d.path.display()),
                        ));
                    }
                }
                BackendConfig::Fixture(d) => {
                    Fixture::load(&Self::resolve_path(root, &d.dir))
                        .map_err(|m| ConfigError::new(f("dir"), m))?;
                }
            }
        }
        Ok(())
    }

    fn environment(&self) -> serde_json::Value {
        serde_json::json!({ "web_mode": self.web.config().mode })
    }

    /// The API backends answer differently over time; a dump and recorded answers do not.
    fn reads_live_sources(&self, c: &SearchConfig) -> bool {
        c.backends.iter().any(|b| match b {
            BackendConfig::RedditDump(_) | BackendConfig::Fixture(_) => false,
            // SearxNG is fetched through the web layer, which may be replaying.
            BackendConfig::Searxng(_) => self.web.config().mode == noisebench_web::Mode::Live,
            _ => true,
        })
    }

    fn external_files(&self, c: &SearchConfig, root: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for b in &c.backends {
            match b {
                BackendConfig::RedditDump(d) => files.push(Self::resolve_path(root, &d.path)),
                BackendConfig::Fixture(d) => {
                    if let Ok(f) = Fixture::load(&Self::resolve_path(root, &d.dir)) {
                        files.extend(f.files());
                    }
                }
                // SearxNG answers come through the web layer: replayed answers are inputs.
                BackendConfig::Searxng(_) => files.extend(self.web.config().replay_inputs(root)),
                _ => {}
            }
        }
        files.sort();
        files.dedup();
        files
    }

    fn run(
        &self,
        c: &SearchConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let resolved = c.resolve()?;
        let queries: Vec<Query> = inputs.take("queries")?;
        let mut drops = Drops::new(&ctx.stage_id);
        let kinds: BTreeSet<&str> = c.kinds.iter().map(String::as_str).collect();
        let selected: Vec<&Query> = queries
            .iter()
            .filter(|q| kinds.is_empty() || kinds.contains(q.kind.as_str()))
            .collect();
        let backends = c
            .backends
            .iter()
            .enumerate()
            .map(|(i, b)| self.build(i, b, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let bar = ctx
            .progress
            .bar("search", Some((selected.len() * backends.len()) as u64));
        let mut hits = Vec::new();
        let mut missing: BTreeMap<(String, String), u64> = BTreeMap::new();
        let labels = backend_labels(&c.backends);
        for (backend, name) in backends.iter().zip(&labels) {
            let name = name.as_str();
            for q in &selected {
                bar.inc(1);
                let item = format!("{}:{name}", q.id);
                let request = SearchRequest {
                    text: q.text.clone(),
                    site: resolved.site.clone(),
                    top_k: resolved.top_k,
                    date_from: c.date_from.clone(),
                    date_to: c.date_to.clone(),
                };
                let parsed = match backend.search(&request) {
                    Ok(p) => p,
                    Err(f) => {
                        drops.add(item, &f.code, f.detail);
                        continue;
                    }
                };
                for (field, n) in &parsed.missing {
                    *missing
                        .entry((name.to_string(), field.clone()))
                        .or_insert(0) += n;
                }
                if parsed.hits.is_empty() {
                    drops.add(
                        item,
                        "no_results",
                        format!("{name} returned no results for `{}`", q.text),
                    );
                    continue;
                }
                let mut seen = BTreeSet::new();
                for (pos, h) in parsed.hits.into_iter().enumerate() {
                    let rank = pos as i64 + 1;
                    let hit_item = format!("{item}:{rank}");
                    let Some(url) = h.url else {
                        drops.add(hit_item, "missing_url", "the result has no URL");
                        continue;
                    };
                    let host = match url::Url::parse(&url) {
                        Ok(u)
                            if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() =>
                        {
                            u.host_str().unwrap_or_default().to_string()
                        }
                        _ => {
                            drops.add(hit_item, "bad_url", url);
                            continue;
                        }
                    };
                    if let Some(site) = &resolved.site
                        && !on_site(&host, site)
                    {
                        drops.add(hit_item, "off_site", format!("{url} is not on {site}"));
                        continue;
                    }
                    if let Some(p) = &h.published {
                        let day = p.get(..10).unwrap_or(p);
                        let before = c.date_from.as_deref().is_some_and(|f| day < f);
                        let after = c.date_to.as_deref().is_some_and(|t| day > t);
                        if before || after {
                            drops.add(
                                hit_item,
                                "outside_date_window",
                                format!("{url} published {p}"),
                            );
                            continue;
                        }
                    }
                    if !seen.insert(url.clone()) {
                        drops.add(hit_item, "duplicate_hit", url);
                        continue;
                    }
                    hits.push(SearchHit {
                        id: stable_id("hit", &[&q.id, name, &url]),
                        query_id: q.id.clone(),
                        claim_id: q.claim_id.clone(),
                        backend: name.to_string(),
                        rank,
                        url,
                        title: h.title,
                        snippet: h.snippet,
                        published: h.published,
                    });
                }
            }
        }
        bar.finish();
        for ((backend, field), n) in &missing {
            tracing::info!(
                backend,
                field,
                results = n,
                "search results without this field (kept, column left empty)"
            );
        }
        let report = StageReport {
            items_in: selected.len() as u64,
            items_out: hits.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput {
            report,
            ..StageOutput::default()
        }
        .with_table("search_hits", hits))
    }
}
