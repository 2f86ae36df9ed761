//! Polite HTTP for noisebench: the one way out to the network, for pages, search APIs and LLM
//! endpoints alike.
//!
//! [`Web`] fetches pages: it paces requests per host (governor), honours robots.txt
//! (texting_robots, fetched once per host), retries 408/429/5xx/timeouts with backoff that honours
//! Retry-After (backon), caps body size while streaming, decodes charsets (header, then `<meta>`;
//! encoding_rs), refuses internal addresses on every redirect hop (and pins connections to the
//! checked addresses), and archives every response content-addressed by sha256 with zstd. In
//! replay mode it serves the same requests from an archive or a fixture folder without touching
//! the network. Every failure is a [`FetchError`] with a short [`FetchError::code`] that stages
//! count drops by.
//!
//! [`HttpClient`] is the transport under it, and the API for every other request: GET or POST,
//! headers, JSON, form or byte bodies, and named [`Secret`]s that reach the server and no error,
//! log line or excerpt; never archived. [`RetryPolicy`] and `parse_retry_after` are the one
//! retry schedule and Retry-After parser all of them use.
//!
//! [`visible`] is the one rule of what a browser renders of a page (no `display:none`, `hidden`,
//! inline XBRL header, script, style, template or comment), which every reader of pages and
//! filings applies before it reads text.
//!
//! What this crate is not: a text extractor (stages do that on [`Page::text`]), a
//! crawler (it fetches the URLs it is given and follows only redirects), or a cache with expiry.

pub mod archive;
pub mod charset;
mod client;
pub mod config;
pub mod error;
pub mod guard;
mod http;
pub mod nesting;
pub mod replay;
mod retry;
pub mod visible;

pub use archive::{Archive, ArchiveRecord};
pub use client::{Page, Web};
pub use config::{HostConfig, Mode, WebConfig};
pub use error::{FetchError, WebError};
pub use guard::AddressClass;
pub use http::{
    HttpClient, HttpConfig, HttpRequest, HttpResponse, Method, REDACTED, Secret, host_key,
};
pub use replay::{FixturePage, FixtureSite};
pub use retry::{LongRetryAfter, RetryPolicy, RetrySchedule};
/// Request URLs are `url::Url`s; re-exported so callers need not depend on `url` themselves.
pub use url::Url;
