//! The EDGAR source of the `reports` stage: 10-K filings (or other forms) fetched from the SEC's
//! public JSON and archives through the web layer, their items cut from the filing HTML.
//!
//! What it reads: the company submissions index (`<base_url>/submissions/CIK##########.json`,
//! `filings.recent` as parallel arrays, older pages listed in `filings.files`), the ticker map
//! (`company_tickers.json`) when tickers are given, and each filing's primary document
//! (`<archives_url>/Archives/edgar/data/<cik>/<accession without dashes>/<primaryDocument>`).
//! Every request goes through a [`Web`](noisebench_web::Web) derived from the run's (same
//! archive, replay or archive-only serving, guard, retries and body cap) whose User-Agent is the
//! source's declared one and whose rate to each SEC host is at most the source's
//! `rate_per_second` (never above `SEC_MAX_RATE`, the SEC's fair-access limit); the source also
//! spaces its own fetches by that rate, so the limit holds for the SEC's hosts together.
//!
//! What it is not: a crawler of EDGAR full-text search or XBRL facts, or a parser of the filing's
//! inline XBRL; items are cut by [`super::items`], on the text the HTML path ([`crate::html`])
//! reads.
//!
//! In parts: `config` (the source's configuration and its checks), `sec_json` (the SEC's JSON,
//! parsed), `fetch` (the web layer, the harvest of filings and drops, report ids).

mod config;
mod fetch;
mod sec_json;

pub use config::EdgarSource;
pub use fetch::{FetchedFiling, report_id};
pub(crate) use fetch::{filing_metadata, harvest, record_drops};
pub use sec_json::{parse_submissions, parse_tickers};
