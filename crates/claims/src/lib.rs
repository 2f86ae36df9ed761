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
//!
//! # Modules
//!
//! Claim stages. `import.rs` (`claims-import`, `ImportStage`), `verdict.rs` (rating normalisation
//! and verdict presets; rating names of nine languages and ClaimReview's numeric scale resolved to
//! normalised ratings; `verdict_map` entries keyed by the site's own word or the normalised one, a
//! misspelled key refused), `dates.rs` (dates as files and pages write them, to ISO), `identity.rs`
//! (canonical fact-check URLs and claim ids, shared by import and scraping; URLs a page declares
//! made absolute, scheme-less ones included), `text.rs` (claim text as it enters: character
//! references decoded once, enclosing quotation marks stripped). The `claims-scrape` stage is
//! `scrape.rs` (`ScrapeStage`, which reads in two steps) and `scrape/`: `config.rs` (its
//! configuration, checked and resolved once), `listing.rs` (what to fetch: PolitiFact listing
//! paging, article URLs given directly, each article once, the drops a listing entry already
//! settles), `articles.rs` (fetching the articles, failed fetches as drops, claims seen twice
//! merged), `claim.rs` (the claims of a fetched page, one per ClaimReview: ClaimReview first, then
//! the PolitiFact layout, then the listing entry, then the page's own date and publisher; its
//! rating, verdict, stored URL, id and publisher; `read_page`/`read_page_all` read a saved page the
//! same way; a page with nothing read as a claim and no ClaimReview is a `no_claimreview` drop),
//! `sites.rs` (the `[[sites]]` entries: per-host CSS selectors, labels and `@attribute`s reading
//! the claims of pages without ClaimReview as if they carried one), `filters.rs` (speaker, date and
//! rating filters, lenient on a listing entry, strict on the claim); over `politifact.rs` (listing
//! and article pages, current and pre-2020 layouts, ratings from meter images or the statement's
//! class) and `claimreview.rs` (schema.org ClaimReview JSON-LD, the publisher-independent path, and
//! what a page says of itself: date, publisher Organization, site name). `tests/it/real_pages.rs`
//! holds the fields of real pages (`fixtures/real/`) against golden values,
//! `tests/it/no_claimreview.rs` those of real pages without ClaimReview read with `[[sites]]`
//! selectors (docs/real-inputs-claims.md). `ScrapeStage::new(Arc<Web>)` takes the run's shared
//! `Web`, like the search crate's fetching stages, so one rate limit per host and one robots.txt
//! read hold across the run; the scrape configuration has no web settings of its own (a `web` field
//! there is refused, pointing to `[web]`). `fuzz/` (outside the workspace) fuzzes the parsers.
//! Invariant: a claim's id is its canonical fact-check URL's, so an imported and a scraped copy of
//! one fact-check are one claim.

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
