//! Polite HTTP for noisebench: the one way stages fetch pages from the web.
//!
//! [`Web`] paces requests per host (governor), honours robots.txt (texting_robots, fetched once per
//! host), retries 429/5xx/timeouts with backoff that honours Retry-After (backon), caps body size
//! while streaming, decodes charsets (header, then `<meta>`; encoding_rs), refuses internal addresses
//! on every redirect hop (and pins connections to the checked addresses), and archives every
//! response content-addressed by sha256 with zstd. In replay mode it serves the same requests from an
//! archive or a fixture folder without touching the network. Every failure is a [`FetchError`] with a
//! short [`FetchError::code`] that stages count drops by.
//!
//! What this crate is not: an HTML parser or text extractor (stages do that on [`Page::text`]), a
//! crawler (it fetches the URLs it is given and follows only redirects), or a cache with expiry.

pub mod archive;
pub mod charset;
mod client;
pub mod config;
pub mod error;
pub mod guard;
pub mod replay;

pub use archive::{Archive, ArchiveRecord};
pub use client::{Page, Web, host_key};
pub use config::{HostConfig, Mode, WebConfig};
pub use error::{FetchError, WebError};
pub use guard::AddressClass;
pub use replay::{FixturePage, FixtureSite};
