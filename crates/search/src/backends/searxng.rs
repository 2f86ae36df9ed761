//! SearxNG (self-hosted metasearch): `GET <base>/search?q&format=json&pageno=N`.
//!
//! The JSON format must be enabled in the instance's `settings.yml` (`search.formats`). The
//! request carries no secret, so it goes through `noisebench-web` like any page (pacing, robots,
//! retries, size cap, archive); a local instance needs `allow_addresses = ["loopback"]` or
//! `["private"]` in `[web]`. SearxNG has no absolute date filter: the stage filters dated results
//! by the window after the fact.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::{
    Backend, Parsed, RawHit, SearchFailure, SearchRequest, json_object, text_of, with_site,
};

#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearxngConfig {
    /// The instance's base URL (`http://localhost:8888`). Or give `base_url_env`.
    pub base_url: Option<String>,
    /// Environment variable holding the base URL.
    #[serde(default = "default_env")]
    pub base_url_env: String,
    /// Comma-separated engines (`google,bing`); the instance's defaults when absent.
    pub engines: Option<String>,
    /// Result language (`en`).
    pub language: Option<String>,
    /// Pages asked for at most (SearxNG pages hold about 10 results).
    #[serde(default = "default_pages")]
    pub max_pages: usize,
}

fn default_env() -> String {
    "SEARXNG_URL".into()
}
fn default_pages() -> usize {
    3
}

pub(crate) struct Searxng {
    base: url::Url,
    config: SearxngConfig,
    web: Arc<noisebench_web::Web>,
}

impl Searxng {
    pub fn new(config: &SearxngConfig, web: Arc<noisebench_web::Web>) -> Result<Self, String> {
        let raw = match &config.base_url {
            Some(b) => b.clone(),
            None => crate::backends::api::env_secret(&config.base_url_env)?,
        };
        let mut base = url::Url::parse(&raw).map_err(|e| format!("base_url `{raw}`: {e}"))?;
        if !base.path().ends_with('/') {
            let p = format!("{}/", base.path());
            base.set_path(&p);
        }
        Ok(Self {
            base,
            config: config.clone(),
            web,
        })
    }
}

impl Backend for Searxng {
    fn name(&self) -> &'static str {
        "searxng"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        let mut all = Parsed::default();
        for pageno in 1..=self.config.max_pages.max(1) {
            if all.hits.len() >= req.top_k {
                break;
            }
            let mut url = self
                .base
                .join("search")
                .map_err(|e| SearchFailure::new("bad_url", e.to_string()))?;
            {
                let mut q = url.query_pairs_mut();
                q.append_pair("q", &with_site(&req.text, req.site.as_deref()))
                    .append_pair("format", "json")
                    .append_pair("pageno", &pageno.to_string());
                if let Some(e) = &self.config.engines {
                    q.append_pair("engines", e);
                }
                if let Some(l) = &self.config.language {
                    q.append_pair("language", l);
                }
            }
            let page = self
                .web
                .fetch(url.as_str())
                .map_err(|e| SearchFailure::fetch(&e, format!("searxng: {e}")))?;
            let parsed = parse(&page.text)?;
            let got = parsed.hits.len();
            for (k, v) in parsed.missing {
                *all.missing.entry(k).or_insert(0) += v;
            }
            all.hits.extend(parsed.hits);
            if got == 0 {
                break;
            }
        }
        all.hits.truncate(req.top_k);
        Ok(all)
    }
}

/// Parse one SearxNG JSON answer: `results[]` (`url`, `title`, `content`, `publishedDate`).
/// A missing `results` list is malformed (SearxNG always sends one, empty when nothing matched).
pub fn parse(body: &str) -> Result<Parsed, SearchFailure> {
    let obj = json_object(body, "searxng")?;
    let results = match obj.get("results") {
        Some(Value::Array(r)) => r,
        _ => return Err(SearchFailure::malformed("searxng: no `results` list")),
    };
    let hits = results
        .iter()
        .map(|r| RawHit {
            url: text_of(r.get("url")),
            title: text_of(r.get("title")),
            snippet: text_of(r.get("content")),
            published: text_of(r.get("publishedDate"))
                .and_then(|d| crate::extract::normalise_date(&d)),
            ..RawHit::default()
        })
        .collect();
    Ok(Parsed::from_hits(hits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_results() {
        let p = parse(r#"{"query":"x","results":[{"url":"https://s.example/1","title":"S","content":"c","publishedDate":null}]}"#).unwrap();
        assert_eq!(p.hits.len(), 1);
        assert_eq!(p.hits[0].published, None);
        assert!(parse(r#"{"results":[]}"#).unwrap().hits.is_empty());
        assert_eq!(
            parse(r#"{"query":"x"}"#).unwrap_err().code,
            "malformed_response"
        );
    }
}
