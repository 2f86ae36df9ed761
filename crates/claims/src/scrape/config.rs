//! The stage's configuration: where claims come from (PolitiFact listings or article URLs), the
//! verdict preset and overrides, and the speaker, date and rating filters; checked and resolved
//! into the form the filters compare with ([`Resolved`]) before any fetch.

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::ConfigError;
use schemars::JsonSchema;
use serde::Deserialize;
use url::Url;

use super::sites::{SiteSelectors, Sites};
use crate::dates::parse_date;
use crate::politifact::{self, Rating};
use crate::verdict::{PRESETS, VerdictMap, normalise_rating};

/// Configuration of `claims-scrape`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrapeConfig {
    /// Where claims come from, in order.
    pub sources: Vec<ScrapeSource>,
    /// Verdict preset: `raguard` (default), `strict`, `averitec`, `factcheckqa`.
    #[serde(default = "default_verdicts")]
    pub verdicts: String,
    /// Extra or overriding rating entries: rating = "true" | "false" | "exclude". The key is the
    /// site's (or file's) own rating word ("Unproven") or the normalised one
    /// ("not-enough-evidence"); a key one or two letters off a known word is refused.
    #[serde(default)]
    pub verdict_map: BTreeMap<String, String>,
    /// Keep only these speakers (names or slugs, case-insensitive: "Donald Trump", "donald-trump").
    #[serde(default)]
    pub speakers: Vec<String>,
    /// Keep claims made on or after this date (claim date, else review date).
    pub date_from: Option<String>,
    /// Keep claims made on or before this date.
    pub date_to: Option<String>,
    /// Keep only these ratings (slugs or names: "pants-fire", "Mostly False").
    #[serde(default)]
    pub ratings: Vec<String>,
    /// CSS selectors for sites whose pages carry no ClaimReview JSON-LD, one entry per host
    /// (`[[stages.<id>.config.sites]]`); pages of other hosts without ClaimReview are dropped as
    /// `no_claimreview`.
    #[serde(default)]
    pub sites: Vec<SiteSelectors>,
    /// Not a setting: here only so that a `web` table in this configuration is refused with a
    /// message saying where its fields go (the pipeline's `[web]`), not as an unknown field.
    #[serde(default, rename = "web")]
    #[schemars(skip)]
    _web: NoStageWeb,
}

/// What a `web` table in the stage's configuration parses to: nothing, ever. The stage shares the
/// run's [`Web`](noisebench_web::Web) (one rate limit per host per run), so it has no web settings
/// of its own.
#[derive(Debug, Clone, Copy, Default)]
struct NoStageWeb;

impl<'de> Deserialize<'de> for NoStageWeb {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom(
            "claims-scrape has no `web` settings of its own: set them in the pipeline's `[web]` \
             table, which every stage shares (one rate limit per host per run; list several \
             fixture folders there as `replay_fixtures = [\"fixtures/web\", \"fixtures/sites\"]`)",
        ))
    }
}

fn default_verdicts() -> String {
    "raguard".into()
}

/// One source of fact-check articles.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ScrapeSource {
    /// PolitiFact listing pages, then each statement's article.
    Politifact {
        /// Site root (default `https://www.politifact.com`).
        #[serde(default = "default_politifact")]
        base_url: String,
        /// Listing filter: a PolitiFact speaker slug (`donald-trump`).
        speaker: Option<String>,
        /// Listing filter: a PolitiFact ruling slug (`pants-fire`, `false`, `half-true`).
        ruling: Option<String>,
        /// Listing filter: a PolitiFact category slug (`economy`, `health-care`).
        category: Option<String>,
        /// First listing page (default 1).
        #[serde(default = "one")]
        start_page: u32,
        /// Listing pages read at most (default 1).
        #[serde(default = "one")]
        max_pages: u32,
        /// Articles fetched at most from this source (after listing-level filters).
        max_articles: Option<usize>,
    },
    /// Fact-check article URLs (any publisher; ClaimReview JSON-LD or PolitiFact layouts).
    Articles {
        /// The article URLs, fetched in order.
        urls: Vec<String>,
    },
}

fn default_politifact() -> String {
    "https://www.politifact.com".into()
}

fn one() -> u32 {
    1
}

/// The configuration as the run compares with it: the verdict map built, speakers as slugs,
/// dates as ISO, ratings in their comparable form.
pub(super) struct Resolved {
    pub(super) verdicts: VerdictMap,
    /// Origins (`scheme://host:port`) of the configured PolitiFact sources: every page there is
    /// PolitiFact's, whatever its layout.
    pub(super) politifact_origins: BTreeSet<String>,
    pub(super) speakers: BTreeSet<String>,
    pub(super) date_from: Option<String>,
    pub(super) date_to: Option<String>,
    pub(super) ratings: BTreeSet<String>,
    /// The `[[sites]]` entries, compiled.
    pub(super) sites: Sites,
}

pub(super) fn resolve(config: &ScrapeConfig) -> Result<Resolved, ConfigError> {
    let mut verdicts = VerdictMap::preset(&config.verdicts).ok_or_else(|| {
        ConfigError::new(
            "verdicts",
            format!(
                "unknown preset `{}` (known: {})",
                config.verdicts,
                PRESETS.join(", ")
            ),
        )
    })?;
    for (rating, to) in &config.verdict_map {
        verdicts = verdicts
            .with_entry(rating, to)
            .map_err(|m| ConfigError::new(format!("verdict_map.{rating}"), m))?;
    }
    let date = |name: &str, v: &Option<String>| -> Result<Option<String>, ConfigError> {
        match v {
            None => Ok(None),
            Some(raw) => parse_date(raw).map_err(|m| ConfigError::new(name, m)),
        }
    };
    let date_from = date("date_from", &config.date_from)?;
    let date_to = date("date_to", &config.date_to)?;
    if let (Some(a), Some(b)) = (&date_from, &date_to)
        && a > b
    {
        return Err(ConfigError::new(
            "date_to",
            format!("{b} is before date_from {a}"),
        ));
    }
    if config.sources.is_empty() {
        return Err(ConfigError::new("sources", "at least one source is needed"));
    }
    for (i, source) in config.sources.iter().enumerate() {
        let field = |f: &str| format!("sources[{i}].{f}");
        match source {
            ScrapeSource::Politifact {
                base_url,
                max_pages,
                start_page,
                ..
            } => {
                parse_http(base_url).map_err(|m| ConfigError::new(field("base_url"), m))?;
                if *max_pages == 0 || *start_page == 0 {
                    return Err(ConfigError::new(field("max_pages"), "pages count from 1"));
                }
            }
            ScrapeSource::Articles { urls } => {
                for (j, u) in urls.iter().enumerate() {
                    parse_http(u).map_err(|m| ConfigError::new(field(&format!("urls[{j}]")), m))?;
                }
            }
        }
    }
    let politifact_origins = config
        .sources
        .iter()
        .filter_map(|source| match source {
            ScrapeSource::Politifact { base_url, .. } => Url::parse(base_url).ok(),
            ScrapeSource::Articles { .. } => None,
        })
        .map(|u| u.origin().ascii_serialization())
        .collect();
    Ok(Resolved {
        verdicts,
        politifact_origins,
        speakers: config.speakers.iter().map(|s| slug(s)).collect(),
        date_from,
        date_to,
        ratings: config.ratings.iter().map(|r| rating_key(r)).collect(),
        sites: Sites::new(&config.sites)?,
    })
}

fn parse_http(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw).map_err(|e| format!("`{raw}`: {e}"))?;
    if matches!(url.scheme(), "http" | "https") {
        Ok(url)
    } else {
        Err(format!("`{raw}` is not an http(s) URL"))
    }
}

/// A speaker's comparable form, as `Resolved::speakers` holds it: "Donald Trump" and
/// "donald-trump" compare equal.
pub(super) fn slug(s: &str) -> String {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// A rating's comparable form, as `Resolved::ratings` holds it: normalised, PolitiFact aliases
/// folded.
pub(super) fn rating_key(raw: &str) -> String {
    match politifact::classify_slug(&normalise_rating(raw)) {
        Rating::Slug(s) | Rating::FlipOMeter(s) => s,
        Rating::Unrecognised(s) => s,
        Rating::Missing => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_checked() {
        let parse = |v: serde_json::Value| noisebench_core::stage::parse_config::<ScrapeConfig>(&v);
        let err = parse(serde_json::json!({"sources": [{"kind": "politifact", "pages": 2}]}))
            .unwrap_err();
        assert!(err.message.contains("unknown field `pages`"), "{err}");
        let cfg =
            parse(serde_json::json!({"sources": [{"kind": "articles", "urls": ["ftp://x"]}]}))
                .unwrap();
        assert_eq!(resolve(&cfg).err().unwrap().field, "sources[0].urls[0]");
        let cfg =
            parse(serde_json::json!({"sources": [{"kind": "politifact"}], "verdicts": "nope"}))
                .unwrap();
        assert_eq!(resolve(&cfg).err().unwrap().field, "verdicts");
    }

    #[test]
    fn sites_and_verdict_map_keys_are_checked() {
        let parse = |v: serde_json::Value| {
            resolve(&noisebench_core::stage::parse_config::<ScrapeConfig>(&v).unwrap())
        };
        let err = parse(serde_json::json!({
            "sources": [{"kind": "politifact"}],
            "sites": [{"host": "www.dw.com", "claim": "p", "rating": "p:nope("}],
        }))
        .err()
        .unwrap();
        assert_eq!(err.field, "sites[0].rating");
        let err = parse(serde_json::json!({
            "sources": [{"kind": "politifact"}],
            "verdict_map": {"Unprovn": "true"},
        }))
        .err()
        .unwrap();
        assert_eq!(err.field, "verdict_map.Unprovn");
        assert!(err.message.contains("unproven"), "{err}");
        let ok = parse(serde_json::json!({
            "sources": [{"kind": "politifact"}],
            "verdict_map": {"Unproven": "true", "Satire": "exclude"},
            "sites": [{"host": "www.dw.com", "claim": "p", "claim_label": "Claim:"}],
        }));
        assert!(ok.is_ok());
    }

    #[test]
    fn a_stage_web_table_is_refused_pointing_to_the_pipelines() {
        let err = noisebench_core::stage::parse_config::<ScrapeConfig>(&serde_json::json!({
            "sources": [{"kind": "politifact"}],
            "web": {"mode": "replay", "replay_fixtures": "fixtures/sites"},
        }))
        .unwrap_err();
        assert_eq!(err.field, "web");
        assert!(
            err.message.contains("pipeline's `[web]` table") && err.message.contains("shares"),
            "{err}"
        );
    }
}
