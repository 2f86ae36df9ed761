//! Why a fetch failed: one typed reason per failure, with a short code stages count drops by.

use std::path::PathBuf;

use noisebench_core::{DropCode, DropReason};

/// Whether an HTTP error status is worth asking again later: 408, 429 and 5xx.
pub fn http_status_is_transient(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}

const fn code(code: &'static str, transient: bool, meaning: &'static str) -> DropCode {
    DropCode {
        code,
        transient,
        meaning,
    }
}

/// A failed fetch. [`FetchError::drop_reason`] is the drop reason (`robots_disallowed`, `http_404`,
/// ...) with whether it is transient.
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

    /// The drop reason of this failure: its [`Self::code`] and whether a later run may well not
    /// meet it (a timeout, a refused connection, a 408/429/5xx, robots.txt not reachable, an
    /// archive-only run's miss): the layer that met the failure says so, stages carry it.
    pub fn drop_reason(&self) -> DropReason {
        let transient = match self {
            FetchError::Http { status, .. } => http_status_is_transient(*status),
            FetchError::RobotsUnavailable { .. }
            | FetchError::Timeout(_)
            | FetchError::Connect(_)
            | FetchError::Dns(_)
            | FetchError::Request(_)
            | FetchError::NotArchived(_) => true,
            FetchError::BadUrl(_)
            | FetchError::RobotsDisallowed(_)
            | FetchError::BlockedAddress(_)
            | FetchError::TooLarge { .. }
            | FetchError::RedirectLoop(_)
            | FetchError::TooManyRedirects(_)
            | FetchError::BadRedirect(_)
            | FetchError::NotInReplay(_)
            | FetchError::Archive { .. } => false,
        };
        if transient {
            DropReason::transient(self.code())
        } else {
            DropReason::permanent(self.code())
        }
    }

    /// Every code [`Self::drop_reason`] gives, for the generated reference of drop reasons.
    pub const DROP_CODES: &'static [DropCode] = &[
        code("bad_url", false, "not a valid http(s) URL"),
        code("robots_disallowed", false, "robots.txt disallows the URL"),
        code(
            "robots_unavailable",
            true,
            "robots.txt could not be read; nothing fetched",
        ),
        code(
            "blocked_address",
            false,
            "the host resolves to a private or local address",
        ),
        code(
            "too_large",
            false,
            "the body is larger than the configured limit",
        ),
        code("redirect_loop", false, "a redirect loop"),
        code("too_many_redirects", false, "more redirects than allowed"),
        code(
            "bad_redirect",
            false,
            "a redirect without a usable Location",
        ),
        code(
            "http_<status>",
            false,
            "an HTTP error status other than 408, 429 and 5xx",
        ),
        code("http_408", true, "the server timed out the request"),
        code("http_429", true, "rate limited"),
        code(
            "http_5xx",
            true,
            "a server error (`http_500`, `http_503`, ...)",
        ),
        code("timeout", true, "the request timed out"),
        code("connect_failed", true, "the connection failed"),
        code("dns_failed", true, "name resolution failed"),
        code("request_failed", true, "the request failed otherwise"),
        code(
            "not_in_replay",
            false,
            "replay mode: not in the archive or fixtures",
        ),
        code(
            "not_archived",
            true,
            "archive-only run (a merge): the shard that fetches it has not run",
        ),
        code(
            "archive_error",
            false,
            "the archive could not be read or written",
        ),
    ];

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

#[cfg(test)]
mod tests {
    use super::FetchError;

    #[test]
    fn the_web_layer_says_which_failures_are_transient() {
        let http = |status| FetchError::Http {
            status,
            url: "https://example.org/".into(),
        };
        for e in [
            http(408),
            http(429),
            http(500),
            http(503),
            FetchError::Timeout("t".into()),
            FetchError::Connect("c".into()),
            FetchError::Dns("d".into()),
            FetchError::Request("r".into()),
            FetchError::NotArchived("n".into()),
            FetchError::RobotsUnavailable {
                host: "h".into(),
                detail: "d".into(),
            },
        ] {
            assert!(e.drop_reason().is_transient(), "{e}");
            assert_eq!(e.drop_reason().code(), e.code());
        }
        for e in [
            http(404),
            http(403),
            http(400),
            FetchError::BadUrl("b".into()),
            FetchError::RobotsDisallowed("r".into()),
            FetchError::NotInReplay("n".into()),
            FetchError::TooLarge { limit: 1 },
        ] {
            assert!(!e.drop_reason().is_transient(), "{e}");
        }
        // Every code given is in the list the reference is generated from.
        let listed = |code: &str| {
            FetchError::DROP_CODES.iter().any(|c| {
                c.code == code
                    || (c.code == "http_5xx" && code.starts_with("http_5"))
                    || (c.code == "http_<status>" && code.starts_with("http_"))
            })
        };
        for e in [http(503), http(404), FetchError::Dns("d".into())] {
            assert!(listed(&e.code()), "{}", e.code());
        }
    }
}
