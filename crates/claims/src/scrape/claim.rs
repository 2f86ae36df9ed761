//! The claims of a fetched article page: one per ClaimReview on it (one for a page with none),
//! each a claim or a drop of its own; claims of one page declaring the same URL get ids made from
//! the URL and their text. Each field is taken from the first source that has it:
//! the page's ClaimReview JSON-LD (for a page without one, what its host's `[[sites]]` entry reads,
//! one claim per claim element), then its PolitiFact layout (current or pre-2020), then the
//! listing entry it came from, then what the page says of itself (its publication date, its
//! publisher Organization, `og:site_name`). Then the rating (resolved to a normalised rating by
//! name, sentence head, numeric scale or image, see [`crate::verdict`]; a Flip-O-Meter ruling, a missing,
//! unknown or excluded one is a drop), the verdict preset, the strict filters, the stored URL and
//! id, and the publisher fields (every PolitiFact page names PolitiFact, whatever its layout).

use std::collections::BTreeSet;

use noisebench_core::Claim;
use noisebench_web::Page;
use scraper::Html;
use url::Url;

use super::config::Resolved;
use super::filters::filters;
use super::sites::Sites;
use crate::claimreview::{self, ClaimReview};
use crate::dates::scraped_date;
use crate::identity::{self, canonical_fact_check_url, claim_id, fact_check_url};
use crate::politifact::{self, Article, ListingItem, Rating};
use crate::text::strip_outer_quotes;
use crate::verdict::{Mapped, normalise_rating, rating_on_scale, resolve_rating_name};

/// What a fetched fact-check page says of its claim, every field read, the rating not yet mapped
/// to a verdict (the stage's verdict preset does that). [`read_page`] gives it for a saved page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageClaim {
    /// The claim as the fact-checker quotes it (character references decoded; the quotation
    /// marks PolitiFact wraps statements in stripped when they enclose all of it).
    pub text: String,
    pub rating: Rating,
    /// The rating as the page words it, when a ClaimReview (or a `sites` entry) gives it a name:
    /// "Unproven", "Falso", "FACT-CHECK STATUS: FALSE". `verdict_map` entries keyed by it win.
    pub rating_word: Option<String>,
    pub speaker: Option<String>,
    /// ISO date.
    pub claim_date: Option<String>,
    pub venue: Option<String>,
    /// The fact-checking organisation (never a journalist).
    pub fact_checker: Option<String>,
    /// ISO date: the ClaimReview's, else the article's byline, the listing's, the page's own.
    pub review_date: Option<String>,
    /// The fact-check URL to store (declared by the page, resolved against it, fetchable).
    pub url: String,
    /// The canonical fact-check URL the id is made from.
    pub id_url: String,
    /// The claim's id: made from `id_url`, or from `id_url` and the claim text when another
    /// ClaimReview of the same page declares the same URL (so each claim of a page has its own).
    pub id: String,
    /// Where the claim appeared (ClaimReview `itemReviewed` URL or appearance).
    pub original_url: Option<String>,
    pub country: Option<String>,
    pub topics: Vec<String>,
    /// The stored URL's host.
    pub site: Option<String>,
}

/// What one page gives: one reading per ClaimReview on it (one for a page with none), each a
/// claim's fields or the (reason, detail) of its drop.
pub type PageReadings = Vec<Result<PageClaim, (&'static str, String)>>;

/// Read a saved fact-check page fetched from `page_url` (with the listing entry it came from, if
/// any): the fields a scrape stores, each from the first source that has it. PolitiFact pages are
/// told by their host or layout. Errors are (reason, detail), as the stage records drops. A page
/// with several ClaimReviews gives the first here; [`read_page_all`] gives every one.
pub fn read_page(
    html: &str,
    page_url: &str,
    listing: Option<&ListingItem>,
) -> Result<PageClaim, (&'static str, String)> {
    read_page_all(html, page_url, listing)
        .into_iter()
        .next()
        .unwrap_or_else(|| Err(("empty_claim", "nothing read".into())))
}

/// [`read_page`] for every ClaimReview of the page, in document order (one reading for a page
/// with none).
pub fn read_page_all(html: &str, page_url: &str, listing: Option<&ListingItem>) -> PageReadings {
    read_page_with_sites(html, page_url, listing, &Sites::default())
}

/// [`read_page_all`] with the stage's `[[sites]]` entries: a page without ClaimReview whose host
/// has an entry is read with its CSS selectors.
pub fn read_page_with_sites(
    html: &str,
    page_url: &str,
    listing: Option<&ListingItem>,
    sites: &Sites,
) -> PageReadings {
    let base = match Url::parse(page_url) {
        Ok(base) => base,
        Err(e) => return vec![Err(("bad_url", e.to_string()))],
    };
    let doc = Html::parse_document(&noisebench_web::nesting::limit_nesting(html));
    read_doc(&doc, &base, listing, &BTreeSet::new(), sites)
}

/// Build the claims of a fetched article, one per ClaimReview on it (one for a page with none):
/// ClaimReview first, then the page's CSS layout, then the listing entry. Errors are (reason,
/// detail) drops.
pub(super) fn claims_from_page(
    page: &Page,
    listing: Option<&ListingItem>,
    resolved: &Resolved,
) -> Vec<Result<Claim, (&'static str, String)>> {
    let base = match Url::parse(&page.final_url) {
        Ok(base) => base,
        Err(e) => return vec![Err(("bad_url", e.to_string()))],
    };
    let doc = Html::parse_document(&noisebench_web::nesting::limit_nesting(&page.text));
    read_doc(
        &doc,
        &base,
        listing,
        &resolved.politifact_origins,
        &resolved.sites,
    )
    .into_iter()
    .map(|read| build_claim(page, read?, resolved))
    .collect()
}

/// Every ClaimReview of the page read, in order; ids made distinct where two declare one URL. A
/// page with none is read with its host's `[[sites]]` entry, if it has one.
fn read_doc(
    doc: &Html,
    base: &Url,
    listing: Option<&ListingItem>,
    politifact_origins: &BTreeSet<String>,
    sites: &Sites,
) -> PageReadings {
    let mut reviews = claimreview::extract_from(doc);
    let mut site_error = None;
    if reviews.is_empty()
        && let Some(site) = base.host_str().and_then(|h| sites.for_host(h))
    {
        match site.read(doc) {
            Ok(read) => reviews = read,
            Err(detail) => site_error = Some(detail),
        }
    }
    let article = politifact::parse_article_doc(doc, base);
    let facts = claimreview::page_facts(doc);
    let page = Context {
        base,
        listing,
        politifact_origins,
        article: &article,
        facts: &facts,
    };
    let unreadable = claimreview::unreadable_claimreviews(doc);
    let mut readings: PageReadings = if let Some(detail) = site_error {
        vec![Err(("empty_claim", detail))]
    } else if reviews.is_empty() {
        // A page whose only ClaimReviews are unreadable is accounted for by their drops, unless
        // its layout still makes a claim.
        match read_one(None, &page) {
            Err(_) if !unreadable.is_empty() => Vec::new(),
            read => vec![read],
        }
    } else {
        reviews.iter().map(|cr| read_one(Some(cr), &page)).collect()
    };
    // A ClaimReview in a block that is not JSON: a drop of its own.
    readings.extend(
        unreadable
            .into_iter()
            .map(|detail| Err(("invalid_json_ld", detail))),
    );
    // Two ClaimReviews of one page declaring the same URL: each id from the URL and its text.
    let urls: Vec<String> = readings
        .iter()
        .flatten()
        .map(|r| r.id_url.clone())
        .collect();
    for read in readings.iter_mut().flatten() {
        if urls.iter().filter(|u| **u == read.id_url).count() > 1 {
            read.id = identity::claim_id_on_shared_page(&read.id_url, &read.text);
        }
    }
    readings
}

/// What the page around its ClaimReviews gives each of them.
struct Context<'a> {
    base: &'a Url,
    listing: Option<&'a ListingItem>,
    politifact_origins: &'a BTreeSet<String>,
    article: &'a Article,
    facts: &'a claimreview::PageFacts,
}

/// One claim of a page: `cr` (if any) first, then the page.
fn read_one(cr: Option<&ClaimReview>, page: &Context) -> Result<PageClaim, (&'static str, String)> {
    let Context {
        base,
        listing,
        politifact_origins,
        article,
        facts,
    } = *page;

    // Quotation marks enclosing the whole claim are not part of it (ClaimReview and PolitiFact's
    // statements alike); the CSS layouts strip them as they read.
    let text = first([
        cr.and_then(|c| c.claim_reviewed.as_deref())
            .map(strip_outer_quotes)
            .filter(|s| !s.is_empty()),
        article.statement.clone(),
        listing
            .map(|l| l.statement.clone())
            .filter(|s| !s.is_empty()),
    ])
    .ok_or_else(|| {
        if cr.is_none() && article.layout == "none" && listing.is_none() {
            // Nothing on the page is read as a claim: it shows one in its own markup.
            (
                "no_claimreview",
                format!(
                    "no ClaimReview JSON-LD and no PolitiFact layout; a `sites` entry for {} \
                     can read its claim with CSS selectors",
                    base.host_str().unwrap_or("its host")
                ),
            )
        } else {
            (
                "empty_claim",
                "no claim text in JSON-LD, page or listing".to_string(),
            )
        }
    })?;

    // The rating, with the word the page gives it when it came from a ClaimReview (a verdict_map
    // entry may be keyed by that word).
    let (rating, rating_word) = [
        cr.map(|c| (review_rating(c), rating_word(c))),
        article.rating.clone().map(|r| (r, None)),
        listing.map(|l| (l.rating.clone(), None)),
    ]
    .into_iter()
    .flatten()
    .find(|(r, _)| !r.is_missing())
    .unwrap_or((Rating::Missing, None));

    let speaker = first([
        cr.and_then(|c| c.claimant.clone()),
        article.speaker.clone(),
        listing.and_then(|l| l.speaker.clone()),
    ]);
    let date =
        |raws: [Option<&String>; 4]| raws.into_iter().flatten().find_map(|r| scraped_date(r));
    let claim_date = date([
        cr.and_then(|c| c.claim_date.as_ref()),
        article.claim_date.as_ref(),
        listing.and_then(|l| l.claim_date.as_ref()),
        None,
    ]);
    // A ClaimReview without a date: the article's byline, the listing's, the page's own date.
    let review_date = date([
        cr.and_then(|c| c.review_date.as_ref()),
        article.review_date.as_ref(),
        listing.and_then(|l| l.review_date.as_ref()),
        facts.published.as_ref(),
    ]);

    // The URL the page declares (ClaimReview `url`, canonical link), resolved against the page
    // (relative and scheme-less forms included); the URL fetched when it declares none usable.
    // The id is made from its canonical form, the stored URL is left fetchable.
    let declared = [
        cr.and_then(|c| c.url.clone()),
        article.canonical_url.clone(),
    ]
    .into_iter()
    .flatten()
    .find_map(|u| identity::resolve_declared(base, &u))
    .unwrap_or_else(|| base.clone());
    let url = fact_check_url(declared.as_str()).unwrap_or_else(|| declared.to_string());
    let id_url =
        canonical_fact_check_url(declared.as_str()).unwrap_or_else(|| declared.to_string());
    let stored = Url::parse(&url).ok();
    let site = stored
        .as_ref()
        .and_then(|u| u.host_str().map(str::to_string));
    let page_urls: Vec<&Url> = [Some(base), stored.as_ref()]
        .into_iter()
        .flatten()
        .collect();
    let (fact_checker, country) =
        if is_politifact_page(politifact_origins, &page_urls, article, listing) {
            (
                Some(politifact::FACT_CHECKER.to_string()),
                Some(politifact::COUNTRY.to_string()),
            )
        } else {
            // The organisation: the ClaimReview's, the page's publisher, its site name; a bare
            // host name only when the page names none.
            (
                first([
                    cr.and_then(|c| c.publisher.clone()),
                    facts.publisher.clone(),
                    facts.site_name.clone(),
                    site.clone(),
                ]),
                None,
            )
        };
    let original_url = cr
        .and_then(|c| c.original_url.as_deref())
        .and_then(|u| identity::resolve_declared(base, u))
        .map(String::from);
    let id = claim_id(Some(&id_url), &text);
    Ok(PageClaim {
        text,
        rating,
        rating_word,
        speaker,
        claim_date,
        venue: first([article.venue.clone(), listing.and_then(|l| l.venue.clone())]),
        fact_checker,
        review_date,
        url,
        id,
        id_url,
        original_url,
        country,
        topics: article.topics.clone(),
        site,
    })
}

/// The claim a page's reading makes: the rating mapped by the verdict preset (a Flip-O-Meter
/// ruling, a missing, unknown or excluded rating is a drop), then the strict filters.
fn build_claim(
    page: &Page,
    read: PageClaim,
    resolved: &Resolved,
) -> Result<Claim, (&'static str, String)> {
    let slug = match read.rating {
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
    let verdict = match resolved
        .verdicts
        .map_word(read.rating_word.as_deref(), &slug)
    {
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
    filters(
        resolved,
        read.speaker.as_deref(),
        read.claim_date.as_deref().or(read.review_date.as_deref()),
        Some(&slug),
        false,
    )?;
    Ok(Claim {
        id: read.id,
        text: read.text,
        verdict: verdict.as_str().into(),
        original_rating: slug,
        speaker: read.speaker,
        claim_date: read.claim_date,
        venue: read.venue,
        fact_checker: read.fact_checker,
        review_date: read.review_date,
        url: Some(read.url),
        original_url: read.original_url,
        country: read.country,
        topics: read.topics,
        source: format!("scrape:{}", read.site.unwrap_or_default()),
        fetched_at: Some(page.fetched_at.clone()),
        archive_ref: Some(page.sha256.clone()),
    })
}

/// The rating a ClaimReview gives, as a normalised rating where it can be resolved: its name
/// (`alternateName`, `name`, or a non-numeric `ratingValue`) when PolitiFact's slugs or the
/// multilingual table know it, else its numeric `ratingValue` on a stated `worstRating`..
/// `bestRating` scale, else its image (PolitiFact's meter); else the name as written (the verdict
/// preset then decides, and drops it as unknown unless configured), else missing.
fn review_rating(cr: &ClaimReview) -> Rating {
    let named = rating_name(cr);
    if let Some(name) = named {
        match politifact::classify_slug(&normalise_rating(name)) {
            r @ Rating::FlipOMeter(_) => return r,
            Rating::Slug(s) if politifact::TRUTH_SLUGS.contains(&s.as_str()) => {
                return Rating::Slug(s);
            }
            _ => {}
        }
        if let Some(normalised) = resolve_rating_name(name) {
            return Rating::Slug(normalised.into());
        }
    }
    if let Some(normalised) = cr
        .rating_value
        .as_deref()
        .and_then(|v| rating_on_scale(v, cr.rating_worst.as_deref(), cr.rating_best.as_deref()))
    {
        return Rating::Slug(normalised.into());
    }
    match cr
        .rating_image
        .as_deref()
        .map(politifact::rating_from_image)
    {
        Some(r @ (Rating::Slug(_) | Rating::FlipOMeter(_))) => r,
        _ => named.map_or(Rating::Missing, |name| {
            politifact::classify_slug(&normalise_rating(name))
        }),
    }
}

/// The name a ClaimReview gives its rating: `alternateName` / `name`, else a `ratingValue` that is
/// not a number.
fn rating_name(cr: &ClaimReview) -> Option<&str> {
    cr.rating_name.as_deref().or(cr
        .rating_value
        .as_deref()
        .filter(|v| v.trim().parse::<f64>().is_err()))
}

/// [`rating_name`], trimmed, when not empty: the site's own word for its rating.
fn rating_word(cr: &ClaimReview) -> Option<String> {
    rating_name(cr)
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
}

/// Whether a page is PolitiFact's. Any one sign is enough, so that every page of the site, in
/// whatever layout and whichever path it came by, gets the same publisher fields.
fn is_politifact_page(
    politifact_origins: &BTreeSet<String>,
    page_urls: &[&Url],
    article: &Article,
    listing: Option<&ListingItem>,
) -> bool {
    listing.is_some()
        || article.layout != "none"
        || page_urls.iter().any(|u| {
            u.host_str().is_some_and(politifact::is_politifact_host)
                || politifact_origins.contains(&u.origin().ascii_serialization())
        })
}

fn first<T>(options: impl IntoIterator<Item = Option<T>>) -> Option<T> {
    options.into_iter().flatten().next()
}
