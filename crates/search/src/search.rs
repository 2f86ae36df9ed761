//! The `search` stage: every query through every configured backend, hits ranked as returned.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_core::{
    ConfigError, Drops, InputSpec, Inputs, OutputSpec, Query, SearchHit, ShardKey, StageContext,
    StageError, StageOutput, StageReport, TableKind, TypedStage, stable_id,
};
use noisebench_llm::Llm;
use noisebench_web::Web;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::backends::{BackendConfig, SearchRequest, backend_labels};
use crate::canonical::is_reddit_host;

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
/// use their own client, see [`crate::backends::api`]) and, for a `corpus` backend's `dense`
/// or `hybrid` retrieval, the run's [`Llm`] ([`SearchStage::with_llm`]: its embedder).
#[derive(Debug, Clone)]
pub struct SearchStage {
    web: Arc<Web>,
    llm: Option<Llm>,
}

impl SearchStage {
    pub fn new(web: Arc<Web>) -> Self {
        Self { web, llm: None }
    }

    /// The stage with the run's LLM layer, whose embedder (`llm.embeddings`) makes a corpus's
    /// document and query vectors.
    pub fn with_llm(self, llm: Llm) -> Self {
        Self {
            llm: Some(llm),
            ..self
        }
    }
}

fn on_site(host: &str, site: &str) -> bool {
    let host = host.to_ascii_lowercase();
    if is_reddit_host(site) {
        return is_reddit_host(&host);
    }
    host == site || host.ends_with(&format!(".{site}"))
}

/// What a backend left out of its answer (drops) or kept altered (failures), under the query's
/// item (`<query id>:<backend>:<doc id>`).
fn record_notes(drops: &mut Drops, item: &str, notes: &[crate::backends::HitNote]) {
    for note in notes {
        let at = format!("{item}:{}", note.at);
        if note.kept {
            drops.add_failure(at, note.code, note.detail.clone());
        } else {
            drops.add(at, note.code, note.detail.clone());
        }
    }
}

impl TypedStage for SearchStage {
    type Config = SearchConfig;
    const KIND: &'static str = "search";
    // 2: `search_hits` has `corpus_id` and `text` (set by the `corpus` backend).
    // 3: and `retrieved_by` (a corpus's dense and hybrid retrieval).
    const VERSION: u32 = 3;

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

    fn secret_variables(&self, c: &SearchConfig) -> Vec<(String, String)> {
        c.backends
            .iter()
            .enumerate()
            .flat_map(|(i, b)| b.variables(&format!("backends[{i}]")))
            .collect()
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
        for (i, b) in c.backends.iter().enumerate() {
            b.check(&format!("backends[{i}]"), root, self.llm.is_some())?;
        }
        Ok(())
    }

    fn environment(&self) -> serde_json::Value {
        serde_json::json!({ "web_mode": self.web.config().mode })
    }

    /// The embedder decides a corpus's dense and hybrid hits, and nothing else's: only a
    /// configuration with such a backend reruns when it changes.
    fn environment_of(&self, c: &SearchConfig) -> serde_json::Value {
        let mut environment = self.environment();
        if let Some(llm) = &self.llm
            && c.backends.iter().any(BackendConfig::embeds)
        {
            environment["embedder"] = serde_json::json!(llm.embedder_name());
        }
        environment
    }

    /// The API backends answer differently over time; a dump and recorded answers do not.
    fn reads_live_sources(&self, c: &SearchConfig) -> bool {
        let mode = self.web.config().mode;
        c.backends.iter().any(|b| b.reads_live_sources(mode))
    }

    fn external_files(&self, c: &SearchConfig, root: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = c
            .backends
            .iter()
            .flat_map(|b| b.external_files(&self.web, root))
            .collect();
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
            .map(|(i, b)| {
                b.build(
                    &format!("backends[{i}]"),
                    &self.web,
                    self.llm.as_ref(),
                    &ctx.root,
                    &ctx.stage_dir,
                )
            })
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
                    query_id: q.id.clone(),
                    text: q.text.clone(),
                    site: resolved.site.clone(),
                    top_k: resolved.top_k,
                    date_from: c.date_from.clone(),
                    date_to: c.date_to.clone(),
                };
                let parsed = match backend.search(&request) {
                    Ok(p) => p,
                    Err(f) => {
                        drops.add(item, f.reason(), f.detail);
                        continue;
                    }
                };
                record_notes(&mut drops, &item, &parsed.notes);
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
                    let Some(host) = hit_host(&url, h.corpus_id.is_some() && h.text.is_some())
                    else {
                        drops.add(hit_item, "bad_url", url);
                        continue;
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
                        corpus_id: h.corpus_id,
                        text: h.text,
                        retrieved_by: h.retrieved_by,
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

/// The host of a hit's address: `http(s)` with a host, or, for a corpus document (`local`: it
/// has its corpus id and text), `corpus://<name>/<id>`; `None` for anything else.
fn hit_host(url: &str, local: bool) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let scheme_ok = matches!(u.scheme(), "http" | "https") || (local && u.scheme() == "corpus");
    u.host_str().filter(|_| scheme_ok).map(str::to_string)
}
