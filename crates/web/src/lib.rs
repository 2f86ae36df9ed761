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
//!
//! # Modules
//!
//! Polite HTTP, the one way out to the network: pages, search APIs and LLM endpoints. `http.rs`
//! (`HttpClient`: the transport everything goes through, and the non-archiving request API:
//! GET/POST, headers, JSON/form/byte bodies, named secrets kept out of every error, log line and
//! excerpt (errors never hold the URL), per-host pacing with governor, timeouts, body caps while
//! streaming, the address guard, reqwest's redirects off and environment proxies ignored),
//! `retry.rs` (`RetryPolicy`: which failures are retried, backon's exponential backoff with equal
//! jitter, the one Retry-After parser), `client.rs` (`Web` and `Page` over `HttpClient`: robots.txt
//! with texting_robots fetched once per host, redirects followed hop by hop, the archive, replay;
//! `Web::request` sends a request under the `Web`'s own guard and pacing without archiving it),
//! `guard.rs` (address classes and `GuardedResolver`, a reqwest resolver that refuses names
//! resolving to disallowed addresses, so connections go only to checked addresses), `charset.rs`
//! (BOM, HTTP charset, `<meta>`, UTF-8, else windows-1252; encoding_rs), `archive.rs`
//! (content-addressed zstd objects and `index.jsonl`), `replay.rs` (fixture folders, one or a list
//! of them, no URL in two, and archives), `config.rs` (`[web]`), `error.rs` (one reason code per
//! failure, the drop reasons stages record). A `Web` fetches one page or many concurrently (results
//! in input order), blocking or async; an `HttpClient` sends retried or single attempts for callers
//! with their own retry loop (the LLM client). It owns a small tokio runtime (2 workers) so stage
//! code stays synchronous; called inside another runtime, the blocking methods run on a scoped
//! thread. Not a text extractor, a crawler or a cache with expiry. `nesting.rs` cuts HTML nested
//! past 512 elements in one pass before any parser sees it (html5ever's scope checks walk the
//! open-element stack, minutes on a 100,000-deep page). Invariant: every request noisebench sends
//! goes through `HttpClient` and its address guard; replay mode never touches the network.
//! `visible.rs` is the one rule of what a browser renders (`is_rendered`: no `display:none`,
//! `hidden`, `ix:header`, script, style, template, noscript, comment; `prune_unrendered` takes them
//! out of a parsed page, `strip_unrendered` of a string, `visible_text` is `innerText`'s words);
//! the chunk crate's HTML paths and the documents extraction's entry apply it. `api.rs`
//! (`ApiClient` over `HttpClient` for JSON APIs a pipeline file names: `ApiLimits` for pacing,
//! retries, timeout and size cap, secrets named on every request, `ApiFailure` with a reason
//! code) and `retriever.rs` (a user's HTTP retriever: the `generic` and Elasticsearch/OpenSearch
//! `_search` request and answer shapes, and the call), used by the search stage's API backends
//! and `retriever` backend and by the `retrieval` stage's `user` retriever.

pub mod api;
pub mod archive;
pub mod charset;
mod client;
pub mod config;
pub mod error;
pub mod guard;
mod http;
pub mod nesting;
pub mod replay;
pub mod retriever;
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
