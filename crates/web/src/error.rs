//! Why a fetch failed: one typed reason per failure, with a short code stages count drops by.

use std::path::PathBuf;

/// A failed fetch. [`FetchError::code`] is the drop reason (`robots_disallowed`, `http_404`, ...).
#[derive(Debug, Clone, thiserror::Error)]
pub enum FetchError {
    #[error("not a valid http(s) URL: {0}")]
    BadUrl(String),
    #[error("robots.txt disallows {0}")]
    RobotsDisallowed(String),
    #[error("robots.txt for {host} unavailable ({detail}); not fetching")]
    RobotsUnavailable { host: String, detail: String },
    #[error("blocked address: {0}")]
    BlockedAddress(String),
    #[error("body larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("redirect loop at {0}")]
    RedirectLoop(String),
    #[error("more than {0} redirects")]
    TooManyRedirects(u32),
    #[error("redirect without a usable Location from {0}")]
    BadRedirect(String),
    #[error("HTTP status {status} for {url}")]
    Http { status: u16, url: String },
    #[error("timed out: {0}")]
    Timeout(String),
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("name resolution failed: {0}")]
    Dns(String),
    #[error("request failed: {0}")]
    Request(String),
    #[error("not in the replay archive or fixtures: {0}")]
    NotInReplay(String),
    /// An archive-only layer (a merge of shards) found no archived response: the shard that
    /// should have fetched it did not finish.
    #[error("not in the archive (the shard that fetches it has not run): {0}")]
    NotArchived(String),
    #[error("archive {path}: {message}")]
    Archive { path: PathBuf, message: String },
}

impl FetchError {
    /// The short reason code stages use for drops.
    pub fn code(&self) -> String {
        match self {
            FetchError::BadUrl(_) => "bad_url".into(),
            FetchError::RobotsDisallowed(_) => "robots_disallowed".into(),
            FetchError::RobotsUnavailable { .. } => "robots_unavailable".into(),
            FetchError::BlockedAddress(_) => "blocked_address".into(),
            FetchError::TooLarge { .. } => "too_large".into(),
            FetchError::RedirectLoop(_) => "redirect_loop".into(),
            FetchError::TooManyRedirects(_) => "too_many_redirects".into(),
            FetchError::BadRedirect(_) => "bad_redirect".into(),
            FetchError::Http { status, .. } => format!("http_{status}"),
            FetchError::Timeout(_) => "timeout".into(),
            FetchError::Connect(_) => "connect_failed".into(),
            FetchError::Dns(_) => "dns_failed".into(),
            FetchError::Request(_) => "request_failed".into(),
            FetchError::NotInReplay(_) => "not_in_replay".into(),
            FetchError::NotArchived(_) => "not_archived".into(),
            FetchError::Archive { .. } => "archive_error".into(),
        }
    }

    /// The same failure with `url` in front of its detail. Page fetches name their URL this
    /// way; [`crate::HttpClient`] errors never hold one, since a request URL may carry a key.
    pub(crate) fn at(self, url: &url::Url) -> Self {
        match self {
            FetchError::Timeout(d) => FetchError::Timeout(format!("{url}: {d}")),
            FetchError::Connect(d) => FetchError::Connect(format!("{url}: {d}")),
            FetchError::Dns(d) => FetchError::Dns(format!("{url}: {d}")),
            FetchError::Request(d) => FetchError::Request(format!("{url}: {d}")),
            FetchError::BadUrl(d) => FetchError::BadUrl(format!("{url}: {d}")),
            other => other,
        }
    }
}

/// Building a [`crate::Web`] failed.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("configuration: {0}")]
    Config(#[from] noisebench_core::ConfigError),
    #[error("http client: {0}")]
    Client(String),
    #[error("runtime: {0}")]
    Runtime(std::io::Error),
    #[error("{path}: {message}")]
    Replay { path: PathBuf, message: String },
    #[error("archive {path}: {source}")]
    Archive {
        path: PathBuf,
        source: std::io::Error,
    },
}
