//! Fetching the articles, a few times the web layer's concurrency at a time, each through the
//! run's shared `Web`: a failed fetch is a drop with the web layer's reason code (so a transient
//! one is retried by the next run), a page is made into claims ([`super::claim`]: one per
//! ClaimReview on it, each else a drop named `<url>#claimreview-<n>` when there are several), and
//! a claim whose id was seen before is merged.

use std::collections::BTreeSet;

use noisebench_core::{Claim, Drops, Progress};
use noisebench_web::Web;

use super::claim::claims_from_page;
use super::config::Resolved;
use super::listing::Candidate;

/// The claims of `candidates`, in order; every candidate that gives none is in `drops`.
pub(super) fn claims(
    web: &Web,
    candidates: &[Candidate],
    resolved: &Resolved,
    drops: &mut Drops,
    progress: &dyn Progress,
) -> Vec<Claim> {
    let bar = progress.bar("claims-scrape: articles", Some(candidates.len() as u64));
    let mut claims: Vec<Claim> = Vec::new();
    let mut ids = BTreeSet::new();
    let batch = web.config().concurrency.max(1) * 4;
    for chunk in candidates.chunks(batch) {
        let urls: Vec<String> = chunk.iter().map(|c| c.url.clone()).collect();
        for (candidate, result) in chunk.iter().zip(web.fetch_many(&urls)) {
            match result {
                Err(e) => drops.add(&candidate.url, e.drop_reason(), e.to_string()),
                Ok(page) => {
                    let made = claims_from_page(&page, candidate.listing.as_ref(), resolved);
                    let several = made.len() > 1;
                    for (i, made) in made.into_iter().enumerate() {
                        // A page reviewing several claims: each drop names its ClaimReview.
                        let item = if several {
                            format!("{}#claimreview-{}", candidate.url, i + 1)
                        } else {
                            candidate.url.clone()
                        };
                        match made {
                            Err((reason, detail)) => drops.add(item, reason, detail),
                            Ok(claim) => {
                                if ids.insert(claim.id.clone()) {
                                    claims.push(claim);
                                } else {
                                    drops.add(
                                        item,
                                        "merged_duplicate",
                                        format!("id {} seen before", claim.id),
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
        bar.inc(chunk.len() as u64);
    }
    bar.finish();
    claims
}
