//! [`Web`]: the one client every stage fetches through.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use texting_robots::Robot;
use url::Url;

use crate::archive::{Archive, ArchiveRecord};
use crate::config::{Mode, WebConfig};
use crate::error::{FetchError, WebError};
use crate::http::{HttpClient, HttpConfig, HttpRequest, HttpResponse};
use crate::replay::ReplayStore;
use crate::retry::{LongRetryAfter, RetryPolicy};

/// Response headers kept in [`Page::headers`] and in the archive.
const KEPT_HEADERS: &[&str] = &[
    "content-type",
    "content-language",
    "etag",
    "last-modified",
    "location",
    "retry-after",
];

/// A fetched page (status 2xx after redirects).
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The URL asked for.
    pub url: String,
    /// The URL that answered, after redirects.
    pub final_url: String,
    pub status: u16,
    /// Selected headers, lower-case names.
    pub headers: BTreeMap<String, String>,
    /// RFC 3339 UTC; in replay, the recorded time.
    pub fetched_at: String,
    /// sha256 of the body: its name in the archive (`archive_ref`).
    pub sha256: String,
    /// The encoding the text was decoded with (`UTF-8`, `windows-1252`, ...).
    pub encoding: String,
    /// The decoded body.
    pub text: String,
    pub body: Vec<u8>,
    /// Redirect targets followed, in order.
    pub redirects: Vec<String>,
}

/// One hop's raw response.
#[derive(Debug, Clone)]
struct Raw {
    url: Url,
    status: u16,
    headers: BTreeMap<String, String>,
    fetched_at: String,
    body: Vec<u8>,
}

enum RobotsRule {
    AllowAll,
    Rules(Box<Robot>),
    Failed(FetchError),
}

type RobotsCell = Arc<tokio::sync::OnceCell<RobotsRule>>;

struct Inner {
    config: WebConfig,
    /// The product token matched against robots.txt groups (`noisebench` of `noisebench/0.1 (...)`).
    robots_agent: String,
    /// Live mode's transport: guard, per-host pacing, retries, body cap.
    http: Option<HttpClient>,
    replay: Option<ReplayStore>,
    archive: Option<Archive>,
    robots: Mutex<HashMap<String, RobotsCell>>,
    /// Serves only what the live archive holds, fetches nothing (see [`Web::archive_only`]).
    archive_only: bool,
}

/// The polite web client. Build once per run; cheap to share by reference across threads.
///
/// Blocking methods ([`Web::fetch`], [`Web::fetch_many`]) drive an internal tokio runtime and may be
/// called from synchronous stage code (also from inside another runtime: they then block on a
/// scoped thread).
pub struct Web {
    inner: Arc<Inner>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Web")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Drop for Web {
    fn drop(&mut self) {
        // Dropping a runtime inside an async context panics; shutting down in the background does not.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Web {
    /// Build from a parsed config. Relative archive and replay paths resolve against `root`.
    pub fn new(mut config: WebConfig, root: &Path) -> Result<Self, WebError> {
        config.validate()?;
        for p in [&mut config.archive_dir, &mut config.replay_archive]
            .into_iter()
            .flatten()
            .chain(config.replay_fixtures.iter_mut())
        {
            if p.is_relative() {
                *p = root.join(&*p);
            }
        }
        let robots_agent = config
            .user_agent
            .split(['/', ' '])
            .next()
            .unwrap_or("noisebench")
            .to_string();
        let (http, replay, archive) = match config.mode {
            Mode::Live => {
                let http = HttpClient::new(page_http_config(&config))?;
                let archive = match &config.archive_dir {
                    Some(dir) => Some(Archive::open(dir).map_err(|source| WebError::Archive {
                        path: dir.clone(),
                        source,
                    })?),
                    None => None,
                };
                (Some(http), None, archive)
            }
            Mode::Replay => {
                let store =
                    ReplayStore::load(&config.replay_fixtures, config.replay_archive.as_deref())?;
                tracing::debug!(urls = store.len(), "replay store loaded");
                (None, Some(store), None)
            }
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("noisebench-web")
            .build()
            .map_err(WebError::Runtime)?;
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                robots_agent,
                http,
                replay,
                archive,
                robots: Mutex::new(HashMap::new()),
                archive_only: false,
            }),
            runtime: Some(runtime),
        })
    }

    /// A live layer that fetches nothing: every page comes from its archive (`archive_dir`),
    /// as the merge of a sharded stage reads back what its shards fetched. The configuration in
    /// force still says live, so the stages' fingerprints are those of the live run. A page the
    /// archive lacks fails with `not_archived`, a transient failure: its shard must run again.
    pub fn archive_only(config: WebConfig, root: &Path) -> Result<Self, WebError> {
        if config.mode != Mode::Live {
            return Self::new(config, root);
        }
        let dir = config.archive_dir.clone().ok_or_else(|| WebError::Replay {
            path: root.to_path_buf(),
            message: "an archive-only web layer needs `archive_dir`".into(),
        })?;
        let dir = if dir.is_relative() {
            root.join(dir)
        } else {
            dir
        };
        let mut replaying = config.clone();
        replaying.mode = Mode::Replay;
        replaying.replay_fixtures = Vec::new();
        replaying.archive_dir = None;
        replaying.replay_archive = dir.is_dir().then_some(dir);
        let mut web = Self::new(replaying, root)?;
        let inner = Arc::get_mut(&mut web.inner).expect("a new layer is not shared yet");
        inner.archive_only = true;
        inner.config = config;
        for p in inner.config.archive_dir.iter_mut() {
            if p.is_relative() {
                *p = root.join(&*p);
            }
        }
        Ok(web)
    }

    /// A layer of the same kind as this one under another configuration (a source's own
    /// User-Agent and rates): archive-only when this one is ([`Web::archive_only`]), so a layer
    /// derived inside a merge or a replay of the archive fetches nothing either; else as
    /// [`Web::new`] builds it (live or replay, as `config` says).
    pub fn derived(&self, config: WebConfig, root: &Path) -> Result<Self, WebError> {
        if self.inner.archive_only {
            Self::archive_only(config, root)
        } else {
            Self::new(config, root)
        }
    }

    /// Whether this layer sends no request: it replays (`mode = "replay"`) or serves only its
    /// archive ([`Web::archive_only`]), so callers need not pace their own fetches.
    pub fn sends_nothing(&self) -> bool {
        self.inner.archive_only || self.inner.config.mode == Mode::Replay
    }

    /// Build from the pipeline file's `[web]` table.
    pub fn from_value(value: &serde_json::Value, root: &Path) -> Result<Self, WebError> {
        Self::new(WebConfig::from_value(value)?, root)
    }

    /// The configuration in force (paths resolved).
    pub fn config(&self) -> &WebConfig {
        &self.inner.config
    }

    /// Fetch one URL, blocking.
    pub fn fetch(&self, url: &str) -> Result<Page, FetchError> {
        let inner = self.inner.clone();
        let url = url.to_string();
        self.block_on(async move { inner.fetch(&url).await })
    }

    /// Fetch many URLs concurrently (bounded by `concurrency`, paced per host), blocking. Results
    /// are in input order.
    pub fn fetch_many(&self, urls: &[String]) -> Vec<Result<Page, FetchError>> {
        let inner = self.inner.clone();
        let urls = urls.to_vec();
        let concurrency = self.inner.config.concurrency;
        self.block_on(async move {
            futures::stream::iter(urls)
                .map(|url| {
                    let inner = inner.clone();
                    async move { inner.fetch(&url).await }
                })
                .buffered(concurrency)
                .collect()
                .await
        })
    }

    /// Send a request that is not a page fetch (custom headers, a body, secrets), blocking: the
    /// same guard, per-host pacing, retries, timeouts and body cap as a page, but never archived
    /// and no robots.txt or redirects (see [`HttpClient`]). In replay mode nothing is sent
    /// (`not_in_replay`).
    pub fn request(&self, request: &HttpRequest) -> Result<HttpResponse, FetchError> {
        let inner = self.inner.clone();
        let request = request.clone();
        self.block_on(async move { inner.request(&request).await })
    }

    fn block_on<F>(&self, fut: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        // Invariant: `runtime` is Some from construction until drop.
        let rt = self.runtime.as_ref().expect("runtime lives until drop");
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| match s.spawn(|| rt.block_on(fut)).join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            })
        } else {
            rt.block_on(fut)
        }
    }
}

fn parse_http_url(url: &str) -> Result<Url, FetchError> {
    let parsed = Url::parse(url).map_err(|e| FetchError::BadUrl(format!("{url}: {e}")))?;
    match parsed.scheme() {
        "http" | "https" if parsed.host().is_some() => Ok(parsed),
        _ => Err(FetchError::BadUrl(url.to_string())),
    }
}

/// The transport settings of page fetches, from the `[web]` table.
fn page_http_config(config: &WebConfig) -> HttpConfig {
    HttpConfig {
        user_agent: config.user_agent.clone(),
        rate_per_second: Some(config.rate_per_second),
        host_rates: config
            .hosts
            .iter()
            .map(|(host, h)| (host.clone(), h.rate_per_second))
            .collect(),
        timeout: Duration::from_secs_f64(config.timeout_seconds),
        connect_timeout: Duration::from_secs_f64(config.connect_timeout_seconds),
        max_body_bytes: config.max_body_bytes,
        retry: RetryPolicy {
            max_retries: config.max_retries,
            first_delay: Duration::from_millis(config.backoff_ms),
            max_delay: Duration::from_secs_f64(config.max_wait_seconds),
            long_retry_after: LongRetryAfter::GiveUp,
            retry_connect_errors: false,
        },
        allow_addresses: config.allow_addresses.clone(),
        max_idle_per_host: None,
    }
}

impl Inner {
    async fn request(&self, request: &HttpRequest) -> Result<HttpResponse, FetchError> {
        match &self.http {
            Some(http) => http.send(request).await,
            None if self.archive_only => Err(FetchError::NotArchived(request.redacted_url())),
            None => Err(FetchError::NotInReplay(request.redacted_url())),
        }
    }

    async fn fetch(&self, url: &str) -> Result<Page, FetchError> {
        let start = parse_http_url(url)?;
        let mut hops: Vec<Raw> = Vec::new();
        let result = self.follow(&start, true, &mut hops).await;
        let result = match result {
            Err(FetchError::NotInReplay(u)) if self.archive_only => Err(FetchError::NotArchived(u)),
            other => other,
        };
        self.archive_hops(&hops)?;
        let (final_url, redirects) = result?;
        let last = hops
            .pop()
            .ok_or_else(|| FetchError::Request(url.to_string()))?;
        let sha256 = noisebench_core::sha256_hex(&last.body);
        let (text, encoding) = crate::charset::decode(
            &last.body,
            last.headers.get("content-type").map(String::as_str),
        );
        Ok(Page {
            url: url.to_string(),
            final_url: final_url.to_string(),
            status: last.status,
            headers: last.headers,
            fetched_at: last.fetched_at,
            sha256,
            encoding: encoding.to_string(),
            text,
            body: last.body,
            redirects,
        })
    }

    /// Follow redirects from `start`, checking robots.txt (if asked) and the address of every hop.
    /// Every response received is pushed onto `hops`; on success the last one is 2xx.
    async fn follow(
        &self,
        start: &Url,
        check_robots: bool,
        hops: &mut Vec<Raw>,
    ) -> Result<(Url, Vec<String>), FetchError> {
        let mut current = start.clone();
        let mut seen = vec![current.to_string()];
        let mut redirects = Vec::new();
        loop {
            if check_robots {
                self.check_robots(&current).await?;
            }
            let raw = match self.hop_with_retries(&current).await {
                Ok(raw) => raw,
                Err((err, raw)) => {
                    hops.extend(raw);
                    return Err(err);
                }
            };
            let status = raw.status;
            let location = raw.headers.get("location").cloned();
            hops.push(raw);
            if (300..400).contains(&status) && status != 304 {
                let next = location
                    .and_then(|l| current.join(&l).ok())
                    .filter(|u| matches!(u.scheme(), "http" | "https"))
                    .ok_or_else(|| FetchError::BadRedirect(current.to_string()))?;
                let key = next.to_string();
                if seen.contains(&key) {
                    return Err(FetchError::RedirectLoop(key));
                }
                if redirects.len() as u32 >= self.config.max_redirects {
                    return Err(FetchError::TooManyRedirects(self.config.max_redirects));
                }
                seen.push(key.clone());
                redirects.push(key);
                current = next;
                continue;
            }
            if !(200..300).contains(&status) {
                return Err(FetchError::Http {
                    status,
                    url: current.to_string(),
                });
            }
            return Ok((current, redirects));
        }
    }

    fn archive_hops(&self, hops: &[Raw]) -> Result<(), FetchError> {
        let Some(archive) = &self.archive else {
            return Ok(());
        };
        let final_url = hops.last().map(|h| h.url.to_string()).unwrap_or_default();
        for hop in hops {
            let record = ArchiveRecord {
                url: hop.url.to_string(),
                final_url: final_url.clone(),
                status: hop.status,
                headers: hop.headers.clone(),
                fetched_at: hop.fetched_at.clone(),
                sha256: noisebench_core::sha256_hex(&hop.body),
                size: hop.body.len() as u64,
            };
            archive
                .store(&record, &hop.body)
                .map_err(|e| FetchError::Archive {
                    path: archive.dir().to_path_buf(),
                    message: e.to_string(),
                })?;
        }
        Ok(())
    }

    /// One hop: from the replay store, or over the network through [`HttpClient::send`]
    /// (paced, guarded, retried on 408/429/5xx and timeouts honouring Retry-After, body capped).
    /// Errors carry the last response received, for the archive.
    async fn hop_with_retries(&self, url: &Url) -> Result<Raw, (FetchError, Option<Raw>)> {
        let Some(http) = &self.http else {
            return self.replay_hop(url).map_err(|e| (e, None));
        };
        let response = http
            .send(&HttpRequest::get(url.clone()))
            .await
            .map_err(|e| (e.at(url), None))?;
        let mut headers = response.headers;
        headers.retain(|name, _| KEPT_HEADERS.contains(&name.as_str()));
        let raw = Raw {
            url: url.clone(),
            status: response.status,
            headers,
            fetched_at: response.fetched_at,
            body: response.body,
        };
        if RetryPolicy::retries_status(raw.status) {
            return Err((
                FetchError::Http {
                    status: raw.status,
                    url: url.to_string(),
                },
                Some(raw),
            ));
        }
        Ok(raw)
    }

    /// One hop served from the replay store.
    fn replay_hop(&self, url: &Url) -> Result<Raw, FetchError> {
        let store = self
            .replay
            .as_ref()
            .ok_or_else(|| FetchError::Request("neither a client nor a replay store".into()))?;
        let entry = store
            .get(url.as_str())
            .ok_or_else(|| FetchError::NotInReplay(url.to_string()))?;
        let body = entry.body().map_err(|e| FetchError::Archive {
            path: url.to_string().into(),
            message: e.to_string(),
        })?;
        if body.len() as u64 > self.config.max_body_bytes {
            return Err(FetchError::TooLarge {
                limit: self.config.max_body_bytes,
            });
        }
        Ok(Raw {
            url: url.clone(),
            status: entry.status,
            headers: entry.headers.clone(),
            fetched_at: entry
                .fetched_at
                .clone()
                .unwrap_or_else(|| "1970-01-01T00:00:00Z".into()),
            body,
        })
    }

    async fn check_robots(&self, url: &Url) -> Result<(), FetchError> {
        if !self.config.robots {
            return Ok(());
        }
        let origin = url.origin().ascii_serialization();
        let cell = {
            let mut map = self
                .robots
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            map.entry(origin.clone()).or_default().clone()
        };
        let rule = cell
            .get_or_init(|| Box::pin(self.load_robots(&origin)))
            .await;
        match rule {
            RobotsRule::AllowAll => Ok(()),
            RobotsRule::Rules(robot) if robot.allowed(url.as_str()) => Ok(()),
            RobotsRule::Rules(_) => Err(FetchError::RobotsDisallowed(url.to_string())),
            RobotsRule::Failed(FetchError::BlockedAddress(d)) => {
                Err(FetchError::BlockedAddress(d.clone()))
            }
            RobotsRule::Failed(e) => Err(FetchError::RobotsUnavailable {
                host: origin,
                detail: e.to_string(),
            }),
        }
    }

    /// Fetch and parse `<origin>/robots.txt` (RFC 9309: 4xx means no rules; 5xx and unreachable
    /// mean "do not crawl").
    async fn load_robots(&self, origin: &str) -> RobotsRule {
        let url = match Url::parse(&format!("{origin}/robots.txt")) {
            Ok(u) => u,
            Err(e) => return RobotsRule::Failed(FetchError::BadUrl(e.to_string())),
        };
        let mut hops = Vec::new();
        let result = Box::pin(self.follow(&url, false, &mut hops)).await;
        if let Err(e) = self.archive_hops(&hops) {
            return RobotsRule::Failed(e);
        }
        match result {
            Ok(_) => {
                let body = hops.last().map(|h| h.body.as_slice()).unwrap_or_default();
                match Robot::new(&self.robots_agent, body) {
                    Ok(robot) => RobotsRule::Rules(Box::new(robot)),
                    Err(e) => {
                        tracing::warn!(%url, "unparsable robots.txt, treating as no rules: {e}");
                        RobotsRule::AllowAll
                    }
                }
            }
            Err(FetchError::Http { status, .. }) if (400..500).contains(&status) => {
                RobotsRule::AllowAll
            }
            Err(FetchError::NotInReplay(_)) => RobotsRule::AllowAll,
            Err(e) => RobotsRule::Failed(e),
        }
    }
}
