//! The `claims-scrape` stage: fact-checked claims from the web.
//!
//! PolitiFact listing pages are paged (`/factchecks/list/?page=N` with speaker, ruling and category
//! filters) until "No Results found" or the page limit; each statement's article is then fetched,
//! unless the listing entry already settles its drop (a Flip-O-Meter ruling, a filter).
//! Any article URL can also be given directly (`kind = "articles"`), which makes every publisher
//! that ships schema.org ClaimReview a source. On each article the ClaimReview JSON-LD is read first,
//! field by field; PolitiFact's CSS layouts (current and pre-2020) fill what it lacks, and the
//! listing entry fills what the article lacks. All fetching goes through the run's shared [`Web`],
//! so the stage is polite live (one rate limit per host for the whole run, whichever stage asks)
//! and runs offline when that layer replays.
//!
//! The stored `url` is the one the page declares (ClaimReview `url`, canonical link, else the URL
//! fetched) with its scheme and port kept, so it leads back to the page; the id is made from its
//! canonical form. Publisher fields are the site's: every PolitiFact page, whatever its layout,
//! names [`politifact::FACT_CHECKER`] and [`politifact::COUNTRY`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use noisebench_core::{
    Claim, ConfigError, Drops, InputSpec, Inputs, OutputSpec, StageContext, StageError,
    StageOutput, StageReport, TableKind, TypedStage,
};
use noisebench_web::{Mode, Page, Web};
use scraper::Html;
use serde::Deserialize;
use url::Url;

use crate::claimreview::{self, ClaimReview};
use crate::dates::parse_date;
use crate::identity::{canonical_fact_check_url, claim_id, fact_check_url};
use crate::politifact::{self, Article, ListingItem, Rating};
use crate::verdict::{Mapped, PRESETS, VerdictMap, normalise_rating};

/// Configuration of `claims-scrape`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScrapeConfig {
    /// Where claims come from, in order.
    pub sources: Vec<ScrapeSource>,
    /// Verdict preset: `raguard` (default), `strict`, `averitec`, `factcheckqa`.
    #[serde(default = "default_verdicts")]
    pub verdicts: String,
    /// Extra or overriding rating entries: rating = "true" | "false" | "exclude".
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
    /// Not a setting: here only so that a `web` table in this configuration is refused with a
    /// message saying where its fields go (the pipeline's `[web]`), not as an unknown field.
    #[serde(default, rename = "web")]
    _web: NoStageWeb,
}

/// What a `web` table in the stage's configuration parses to: nothing, ever. The stage shares the
/// run's [`Web`] (one rate limit per host per run), so it has no web settings of its own.
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
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ScrapeSource {
    /// PolitiFact listing pages, then each statement's article.
    Politifact {
        /// Site root (default `https://www.politifact.com`).
        #[serde(default = "default_politifact")]
        base_url: String,
        /// Listing filters as PolitiFact names them: `speaker = "donald-trump"`,
        /// `ruling = "pants-fire"`, `category = "economy"`.
        speaker: Option<String>,
        ruling: Option<String>,
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
    Articles { urls: Vec<String> },
}

fn default_politifact() -> String {
    "https://www.politifact.com".into()
}

fn one() -> u32 {
    1
}

/// The `claims-scrape` stage, fetching through the run's shared [`Web`].
#[derive(Debug, Clone)]
pub struct ScrapeStage {
    web: Arc<Web>,
}

impl ScrapeStage {
    /// `web` is the run's web layer, built once from the pipeline's `[web]` table and shared by
    /// every stage that fetches, so they share its per-host rate limits and robots.txt cache.
    pub fn new(web: Arc<Web>) -> Self {
        Self { web }
    }
}

struct Resolved {
    verdicts: VerdictMap,
    /// Origins (`scheme://host:port`) of the configured PolitiFact sources: every page there is
    /// PolitiFact's, whatever its layout.
    politifact_origins: BTreeSet<String>,
    speakers: BTreeSet<String>,
    date_from: Option<String>,
    date_to: Option<String>,
    ratings: BTreeSet<String>,
}

fn resolve(config: &ScrapeConfig) -> Result<Resolved, ConfigError> {
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

/// "Donald Trump" and "donald-trump" compare equal.
fn slug(s: &str) -> String {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// A rating's comparable form: normalised, PolitiFact aliases folded.
fn rating_key(raw: &str) -> String {
    match politifact::classify_slug(&normalise_rating(raw)) {
        Rating::Slug(s) | Rating::FlipOMeter(s) => s,
        Rating::Unrecognised(s) => s,
        Rating::Missing => String::new(),
    }
}

/// Dates as scraped ("Tuesday, January 10th, 2012", "Jan. 5, 2024", RFC 3339) to ISO.
pub fn scraped_date(raw: &str) -> Option<String> {
    let mut s = raw.trim().to_string();
    // A leading weekday ("Tuesday, ").
    if let Some((head, rest)) = s.split_once(", ")
        && head.ends_with("day")
        && !head.contains(' ')
    {
        s = rest.to_string();
    }
    // Ordinals: "10th," -> "10,".
    let s: String = s
        .split(' ')
        .map(|w| {
            let core = w.trim_end_matches(',');
            let digits = core.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            if !digits.is_empty()
                && digits.chars().all(|c| c.is_ascii_digit())
                && matches!(&core[digits.len()..], "st" | "nd" | "rd" | "th")
            {
                w.replacen(core, digits, 1)
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    parse_date(&s).ok().flatten()
}

/// An article to fetch, with what its listing entry said.
struct Candidate {
    url: String,
    listing: Option<ListingItem>,
}

impl TypedStage for ScrapeStage {
    type Config = ScrapeConfig;
    const KIND: &'static str = "claims-scrape";
    const VERSION: u32 = 2;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        Vec::new()
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec {
            name: "claims",
            kind: TableKind::Claims,
        }]
    }

    fn validate(&self, config: &ScrapeConfig, _root: &Path) -> Result<(), ConfigError> {
        // The web layer checked its own table (and its replay folders) when it was built.
        resolve(config).map(drop)
    }

    fn environment(&self) -> serde_json::Value {
        serde_json::json!({ "web_mode": self.web.config().mode })
    }

    fn reads_live_sources(&self, _config: &ScrapeConfig) -> bool {
        self.web.config().mode == Mode::Live
    }

    fn external_files(&self, _config: &ScrapeConfig, root: &Path) -> Vec<std::path::PathBuf> {
        // Replay inputs are what the stage reads: fingerprint them.
        self.web.config().replay_inputs(root)
    }

    fn run(
        &self,
        config: &ScrapeConfig,
        _inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let resolved = resolve(config)?;
        let web = self.web.as_ref();
        let mut drops = Drops::new(&ctx.stage_id);
        let mut items_in = 0u64;
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut seen_urls = BTreeSet::new();
        for source in &config.sources {
            let found = match source {
                ScrapeSource::Politifact { .. } => {
                    list_politifact(web, source, &resolved, &mut drops, &mut items_in)
                }
                ScrapeSource::Articles { urls } => {
                    items_in += urls.len() as u64;
                    urls.iter()
                        .map(|u| Candidate {
                            url: u.clone(),
                            listing: None,
                        })
                        .collect()
                }
            };
            for c in found {
                let key = canonical_fact_check_url(&c.url).unwrap_or_else(|| c.url.clone());
                if seen_urls.insert(key) {
                    candidates.push(c);
                } else {
                    drops.add(&c.url, "merged_duplicate", "article listed twice");
                }
            }
        }

        let bar = ctx
            .progress
            .bar("claims-scrape: articles", Some(candidates.len() as u64));
        let mut claims: Vec<Claim> = Vec::new();
        let mut ids = BTreeSet::new();
        let batch = web.config().concurrency.max(1) * 4;
        for chunk in candidates.chunks(batch) {
            let urls: Vec<String> = chunk.iter().map(|c| c.url.clone()).collect();
            for (candidate, result) in chunk.iter().zip(web.fetch_many(&urls)) {
                match result {
                    Err(e) => drops.add(&candidate.url, &e.code(), e.to_string()),
                    Ok(page) => match claim_from_page(&page, candidate.listing.as_ref(), &resolved)
                    {
                        Err((reason, detail)) => drops.add(&candidate.url, reason, detail),
                        Ok(claim) => {
                            if ids.insert(claim.id.clone()) {
                                claims.push(claim);
                            } else {
                                drops.add(
                                    &candidate.url,
                                    "merged_duplicate",
                                    format!("id {} seen before", claim.id),
                                );
                            }
                        }
                    },
                }
            }
            bar.inc(chunk.len() as u64);
        }
        bar.finish();
        let report = StageReport {
            items_in,
            items_out: claims.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput {
            report,
            ..StageOutput::default()
        }
        .with_table("claims", claims))
    }
}

/// Page through a PolitiFact listing; returns the articles to fetch.
fn list_politifact(
    web: &Web,
    source: &ScrapeSource,
    resolved: &Resolved,
    drops: &mut Drops,
    items_in: &mut u64,
) -> Vec<Candidate> {
    let ScrapeSource::Politifact {
        base_url,
        speaker,
        ruling,
        category,
        start_page,
        max_pages,
        max_articles,
    } = source
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let Ok(base) = Url::parse(base_url) else {
        return out;
    };
    for page_no in *start_page..start_page.saturating_add(*max_pages) {
        let Ok(url) = politifact::listing_url(
            &base,
            page_no,
            speaker.as_deref(),
            ruling.as_deref(),
            category.as_deref(),
        ) else {
            break;
        };
        let page = match web.fetch(url.as_str()) {
            Ok(p) => p,
            Err(e) => {
                // Without this page we cannot know what follows: stop this source. A listing
                // page is not an item, so this is recorded, not counted as a dropped item.
                drops.add_failure(url.as_str(), &e.code(), e.to_string());
                break;
            }
        };
        let final_url = Url::parse(&page.final_url).unwrap_or(url.clone());
        let listing = politifact::parse_listing(&page.text, &final_url);
        *items_in += (listing.items.len() + listing.skipped) as u64;
        for i in 0..listing.skipped {
            drops.add(
                format!("{url}#{i}"),
                "bad_listing_item",
                "statement without a usable link",
            );
        }
        if listing.no_results {
            break;
        }
        if listing.items.is_empty() {
            drops.add_failure(
                url.as_str(),
                "empty_listing",
                "no statements and no \"No Results found\"",
            );
            break;
        }
        for item in listing.items {
            // The article could only confirm what the listing's meter already settles.
            if let Rating::FlipOMeter(ruling) = &item.rating {
                drops.add(
                    &item.url,
                    "flip_o_meter",
                    format!(
                        "the listing shows `{ruling}`, a Flip-O-Meter ruling, not a truth rating (article not fetched)"
                    ),
                );
                continue;
            }
            // Filter early on what the listing shows, to spare the fetch.
            let review = item.review_date.as_deref().and_then(scraped_date);
            let claim_date = item.claim_date.as_deref().and_then(scraped_date).or(review);
            let rating = match &item.rating {
                Rating::Slug(s) => Some(s.as_str()),
                _ => None,
            };
            if let Err((reason, detail)) = filters(
                resolved,
                item.speaker.as_deref(),
                claim_date.as_deref(),
                rating,
                true,
            ) {
                drops.add(&item.url, reason, detail);
                continue;
            }
            // After the filters, as documented: the cap counts articles that will be fetched.
            if max_articles.is_some_and(|m| out.len() >= m) {
                drops.add(&item.url, "max_articles", "source's max_articles reached");
                continue;
            }
            out.push(Candidate {
                url: item.url.clone(),
                listing: Some(item),
            });
        }
    }
    out
}

/// Apply the speaker, date and rating filters. `lenient`: unknown values pass (listing level, where
/// the article may still tell).
fn filters(
    r: &Resolved,
    speaker: Option<&str>,
    date: Option<&str>,
    rating: Option<&str>,
    lenient: bool,
) -> Result<(), (&'static str, String)> {
    if !r.speakers.is_empty() {
        match speaker {
            Some(s) if r.speakers.contains(&slug(s)) => {}
            None if lenient => {}
            other => {
                return Err((
                    "filtered_speaker",
                    format!("speaker {other:?} not in the filter"),
                ));
            }
        }
    }
    if r.date_from.is_some() || r.date_to.is_some() {
        match date {
            Some(d) => {
                if r.date_from.as_deref().is_some_and(|f| d < f)
                    || r.date_to.as_deref().is_some_and(|t| d > t)
                {
                    return Err(("filtered_date", format!("date {d} outside the range")));
                }
            }
            None if lenient => {}
            None => return Err(("filtered_date", "no date to compare with the range".into())),
        }
    }
    if !r.ratings.is_empty() {
        match rating {
            Some(s) if r.ratings.contains(&rating_key(s)) => {}
            None if lenient => {}
            other => {
                return Err((
                    "filtered_rating",
                    format!("rating {other:?} not in the filter"),
                ));
            }
        }
    }
    Ok(())
}

/// The rating a ClaimReview gives: its name, else a non-numeric value, else its image.
fn review_rating(cr: &ClaimReview) -> Rating {
    let named = cr.rating_name.as_deref().or(cr
        .rating_value
        .as_deref()
        .filter(|v| v.parse::<f64>().is_err()));
    if let Some(name) = named {
        return politifact::classify_slug(&normalise_rating(name));
    }
    match cr
        .rating_image
        .as_deref()
        .map(politifact::rating_from_image)
    {
        Some(r @ (Rating::Slug(_) | Rating::FlipOMeter(_))) => r,
        _ => Rating::Missing,
    }
}

fn first<T>(options: impl IntoIterator<Item = Option<T>>) -> Option<T> {
    options.into_iter().flatten().next()
}

/// Build a claim from a fetched article: ClaimReview first, then the page's CSS layout, then the
/// listing entry. Errors are (reason, detail) drops.
fn claim_from_page(
    page: &Page,
    listing: Option<&ListingItem>,
    resolved: &Resolved,
) -> Result<Claim, (&'static str, String)> {
    let base = Url::parse(&page.final_url).map_err(|e| ("bad_url", e.to_string()))?;
    let doc = Html::parse_document(&page.text);
    let review = claimreview::extract_from(&doc).into_iter().next();
    let article = politifact::parse_article_doc(&doc, &base);
    build_claim(page, &base, review.as_ref(), &article, listing, resolved)
}

/// Whether a page is PolitiFact's. Any one sign is enough, so that every page of the site, in
/// whatever layout and whichever path it came by, gets the same publisher fields.
fn is_politifact_page(
    resolved: &Resolved,
    page_urls: &[&Url],
    article: &Article,
    listing: Option<&ListingItem>,
) -> bool {
    listing.is_some()
        || article.layout != "none"
        || page_urls.iter().any(|u| {
            u.host_str().is_some_and(politifact::is_politifact_host)
                || resolved
                    .politifact_origins
                    .contains(&u.origin().ascii_serialization())
        })
}

fn build_claim(
    page: &Page,
    base: &Url,
    cr: Option<&ClaimReview>,
    article: &Article,
    listing: Option<&ListingItem>,
    resolved: &Resolved,
) -> Result<Claim, (&'static str, String)> {
    let text = first([
        cr.and_then(|c| c.claim_reviewed.clone()),
        article.statement.clone(),
        listing
            .map(|l| l.statement.clone())
            .filter(|s| !s.is_empty()),
    ])
    .ok_or((
        "empty_claim",
        "no claim text in JSON-LD, page or listing".to_string(),
    ))?;

    let rating = [
        cr.map(review_rating),
        article.rating.clone(),
        listing.map(|l| l.rating.clone()),
    ]
    .into_iter()
    .flatten()
    .find(|r| !r.is_missing())
    .unwrap_or(Rating::Missing);
    let slug = match rating {
        Rating::Missing => {
            return Err((
                "missing_rating",
                "no rating in JSON-LD, meter image or og:image".into(),
            ));
        }
        Rating::FlipOMeter(s) => {
            return Err((
                "flip_o_meter",
                format!("`{s}` is a Flip-O-Meter ruling, not a truth rating"),
            ));
        }
        Rating::Unrecognised(raw) => {
            return Err(("unknown_rating", format!("unrecognised rating `{raw}`")));
        }
        Rating::Slug(s) => s,
    };
    let verdict = match resolved.verdicts.map(&slug) {
        Mapped::Verdict(v) => v,
        Mapped::Excluded(why) => {
            return Err(("rating_excluded", format!("rating `{slug}`: {why}")));
        }
        Mapped::Unknown => {
            return Err((
                "unknown_rating",
                format!(
                    "rating `{slug}` is not in the `{}` verdict preset",
                    resolved.verdicts.name
                ),
            ));
        }
    };

    let speaker = first([
        cr.and_then(|c| c.claimant.clone()),
        article.speaker.clone(),
        listing.and_then(|l| l.speaker.clone()),
    ]);
    let date =
        |raws: [Option<&String>; 3]| raws.into_iter().flatten().find_map(|r| scraped_date(r));
    let claim_date = date([
        cr.and_then(|c| c.claim_date.as_ref()),
        article.claim_date.as_ref(),
        listing.and_then(|l| l.claim_date.as_ref()),
    ]);
    let review_date = date([
        cr.and_then(|c| c.review_date.as_ref()),
        article.review_date.as_ref(),
        listing.and_then(|l| l.review_date.as_ref()),
    ]);
    filters(
        resolved,
        speaker.as_deref(),
        claim_date.as_deref().or(review_date.as_deref()),
        Some(&slug),
        false,
    )?;

    let declared = [
        cr.and_then(|c| c.url.clone()),
        article.canonical_url.clone(),
        Some(page.final_url.clone()),
    ];
    // The id comes from the first declared URL exactly as it always has, so ids do not move.
    let id_url = first(declared.clone()).unwrap_or_default();
    let id_url = canonical_fact_check_url(&id_url).unwrap_or(id_url);
    // The stored URL is the same declared URL, resolved against the page and left fetchable (its
    // scheme and port kept); the page's own URL when nothing declared is usable.
    let url = declared
        .iter()
        .flatten()
        .find_map(|u| {
            base.join(u.trim())
                .ok()
                .and_then(|u| fact_check_url(u.as_str()))
        })
        .unwrap_or_else(|| page.final_url.clone());
    let stored = Url::parse(&url).ok();
    let site = stored
        .as_ref()
        .and_then(|u| u.host_str().map(str::to_string));
    let page_urls: Vec<&Url> = [Some(base), stored.as_ref()]
        .into_iter()
        .flatten()
        .collect();
    let (fact_checker, country) = if is_politifact_page(resolved, &page_urls, article, listing) {
        (
            Some(politifact::FACT_CHECKER.to_string()),
            Some(politifact::COUNTRY.to_string()),
        )
    } else {
        (
            first([cr.and_then(|c| c.publisher.clone()), site.clone()]),
            None,
        )
    };
    Ok(Claim {
        id: claim_id(Some(&id_url), &text),
        text,
        verdict: verdict.as_str().into(),
        original_rating: slug,
        speaker,
        claim_date,
        venue: first([article.venue.clone(), listing.and_then(|l| l.venue.clone())]),
        fact_checker,
        review_date,
        url: Some(url),
        original_url: cr.and_then(|c| c.appearance_url.clone()),
        country,
        topics: article.topics.clone(),
        source: format!("scrape:{}", site.unwrap_or_default()),
        fetched_at: Some(page.fetched_at.clone()),
        archive_ref: Some(page.sha256.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scraped_dates() {
        assert_eq!(
            scraped_date("Tuesday, January 10th, 2012").as_deref(),
            Some("2012-01-10")
        );
        assert_eq!(scraped_date("Jan. 5, 2024").as_deref(), Some("2024-01-05"));
        assert_eq!(
            scraped_date("Sept. 21, 2019").as_deref(),
            Some("2019-09-21")
        );
        assert_eq!(
            scraped_date("2024-02-01T10:00:00-05:00").as_deref(),
            Some("2024-02-01")
        );
        assert_eq!(scraped_date("someday"), None);
    }

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

    fn repo_root() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn the_stage_reads_the_shared_webs_configuration() {
        use noisebench_core::Stage;
        let config = serde_json::json!({"sources": [{"kind": "politifact"}]});
        let replay = Web::new(
            noisebench_web::WebConfig {
                mode: Mode::Replay,
                replay_fixtures: vec!["fixtures/web".into(), "fixtures/sites".into()],
                ..Default::default()
            },
            &repo_root(),
        )
        .unwrap();
        let stage = ScrapeStage::new(Arc::new(replay));
        assert!(!Stage::reads_live_sources(&stage, &config));
        assert_eq!(Stage::environment(&stage)["web_mode"], "replay");
        let files = Stage::external_files(&stage, &config, &repo_root()).unwrap();
        for site in ["web/who", "sites/politifact", "sites/checks-example"] {
            let index = repo_root().join("fixtures").join(site).join("index.toml");
            assert!(files.contains(&index), "{index:?} not in {files:?}");
        }
        assert!(
            files
                .iter()
                .any(|f| f.ends_with("politifact/article-a.html"))
        );

        let live = Web::new(noisebench_web::WebConfig::default(), &repo_root()).unwrap();
        let stage = ScrapeStage::new(Arc::new(live));
        assert!(Stage::reads_live_sources(&stage, &config));
        assert_eq!(Stage::environment(&stage)["web_mode"], "live");
        assert!(
            Stage::external_files(&stage, &config, &repo_root())
                .unwrap()
                .is_empty()
        );
    }
}
