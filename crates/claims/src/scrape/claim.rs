//! A claim from a fetched article page. Each field is taken from the first source that has it:
//! the page's ClaimReview JSON-LD, then its PolitiFact layout (current or pre-2020), then the
//! listing entry it came from. Then the rating (a Flip-O-Meter ruling, a missing, unknown or
//! excluded one is a drop), the verdict preset, the strict filters, the stored URL and id, and the
//! publisher fields (every PolitiFact page names PolitiFact, whatever its layout).

use noisebench_core::Claim;
use noisebench_web::Page;
use scraper::Html;
use url::Url;

use super::config::Resolved;
use super::filters::filters;
use crate::claimreview::{self, ClaimReview};
use crate::dates::scraped_date;
use crate::identity::{canonical_fact_check_url, claim_id, fact_check_url};
use crate::politifact::{self, Article, ListingItem, Rating};
use crate::verdict::{Mapped, normalise_rating};

/// Build a claim from a fetched article: ClaimReview first, then the page's CSS layout, then the
/// listing entry. Errors are (reason, detail) drops.
pub(super) fn claim_from_page(
    page: &Page,
    listing: Option<&ListingItem>,
    resolved: &Resolved,
) -> Result<Claim, (&'static str, String)> {
    let base = Url::parse(&page.final_url).map_err(|e| ("bad_url", e.to_string()))?;
    let doc = Html::parse_document(&noisebench_web::nesting::limit_nesting(&page.text));
    let review = claimreview::extract_from(&doc).into_iter().next();
    let article = politifact::parse_article_doc(&doc, &base);
    build_claim(page, &base, review.as_ref(), &article, listing, resolved)
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

fn first<T>(options: impl IntoIterator<Item = Option<T>>) -> Option<T> {
    options.into_iter().flatten().next()
}
