//! What to fetch. PolitiFact listing pages are paged (`/factchecks/list/?page=N` with the source's
//! speaker, ruling and category filters) until "No Results found", an empty page, a page that
//! cannot be fetched, or the page limit; an entry the listing already settles is dropped there,
//! sparing the fetch (a Flip-O-Meter ruling, the lenient filters, the source's `max_articles`).
//! Article URLs given directly are taken as they are. An article listed twice is fetched once.

use std::collections::BTreeSet;

use noisebench_core::Drops;
use noisebench_web::Web;
use url::Url;

use super::config::{Resolved, ScrapeSource};
use super::filters::filters;
use crate::dates::scraped_date;
use crate::identity::canonical_fact_check_url;
use crate::politifact::{self, ListingItem, Rating};

/// Every article to fetch from `sources`, in order, each once; `items_in` counts the listing
/// entries and given URLs read.
pub(super) fn candidates(
    web: &Web,
    sources: &[ScrapeSource],
    resolved: &Resolved,
    drops: &mut Drops,
    items_in: &mut u64,
) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut seen_urls = BTreeSet::new();
    for source in sources {
        let found = match source {
            ScrapeSource::Politifact { .. } => {
                list_politifact(web, source, resolved, drops, items_in)
            }
            ScrapeSource::Articles { urls } => {
                *items_in += urls.len() as u64;
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
    candidates
}

/// An article to fetch, with what its listing entry said.
pub(super) struct Candidate {
    pub(super) url: String,
    pub(super) listing: Option<ListingItem>,
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
                drops.add_failure(url.as_str(), e.drop_reason(), e.to_string());
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
