//! Stages that produce fact-checked claims.
//!
//! `claims-import` ([`ImportStage`]) reads claims from CSV or JSONL files with a column mapping
//! (presets for AVeriTeC, FactCheckQA and PolitiFact-style files) and maps each rating to a binary
//! verdict through a [`verdict::VerdictMap`] preset (`raguard`, `strict`, `averitec`,
//! `factcheckqa`). Only the claim and rating columns are required; a preset's other columns may be
//! missing from a file. Rows with an empty claim, a missing or unknown rating or a bad date are
//! dropped and recorded with their file and 1-based line (the same for LF and CRLF files);
//! duplicates merge by id, also with another stage's claims given as its optional `claims` input.
//!
//! `claims-scrape` ([`ScrapeStage`]) reads fact-check sites through the run's shared
//! `noisebench-web` client (so its per-host rate limits hold across every fetching stage):
//! PolitiFact listing and article pages (current and pre-2020 layouts, [`politifact`]) and any page
//! carrying schema.org ClaimReview JSON-LD ([`claimreview`]), with the same rows and ids as the
//! import.
//!
//! What this crate is not: it does not search for or fetch evidence documents (that is `search`),
//! and it never reads or writes Parquet (the runner does).

// Public namespaces: the page parsers the fuzz targets and the real-page tests call by module
// (`politifact::parse_listing`, `claimreview::extract`).
pub mod claimreview;
mod dates;
mod identity;
mod import;
pub mod politifact;
mod scrape;
mod text;
mod verdict;

pub use dates::parse_date;
pub use identity::claim_id;
pub use import::{ColumnPreset, ImportConfig, ImportStage, SourceConfig};
pub use scrape::{
    PageClaim, PageReadings, ScrapeConfig, ScrapeSource, ScrapeStage, SiteSelectors, Sites,
    read_page, read_page_all, read_page_with_sites, scraped_date,
};
pub use verdict::{Mapped, NORMALISED_RATINGS, VerdictMap};
