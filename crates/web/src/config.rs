//! [`WebConfig`]: the `[web]` table of a pipeline file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::guard::AddressClass;

/// Live network, or replay from an archive and/or fixture folder without any network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Fetch from the network (archiving responses when `archive_dir` is set).
    #[default]
    Live,
    /// Serve from `replay_fixtures` and/or `replay_archive`; never touch the network.
    Replay,
}

/// Per-host overrides (the key is the host, with `:port` when the URL names a port).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// Requests per second to this host.
    pub rate_per_second: f64,
}

/// How the web layer fetches. Every field has a default, so `[web]` may be empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WebConfig {
    /// `live` (default) or `replay`.
    pub mode: Mode,
    /// Sent with every request and matched against robots.txt groups.
    pub user_agent: String,
    /// Requests per second per host (default 1).
    pub rate_per_second: f64,
    /// Per-host rate overrides, e.g. `hosts."www.politifact.com".rate_per_second = 0.5`.
    pub hosts: BTreeMap<String, HostConfig>,
    /// Whole-request timeout, seconds (default 30).
    pub timeout_seconds: f64,
    /// Connect timeout, seconds (default 10).
    pub connect_timeout_seconds: f64,
    /// Bodies larger than this are refused (`too_large`), checked while streaming (default 10 MB).
    pub max_body_bytes: u64,
    /// Retries after the first attempt on 408, 429, 5xx and timeouts (default 3).
    pub max_retries: u32,
    /// First backoff delay, milliseconds; doubles each retry, equal jitter (retry n waits half to
    /// all of `backoff_ms * 2^(n-1)`, at most `max_wait_seconds`), never less than a Retry-After
    /// (default 500).
    pub backoff_ms: u64,
    /// Longest backoff or Retry-After wait, seconds; a longer Retry-After gives up (default 60).
    pub max_wait_seconds: f64,
    /// Redirect hops followed before `too_many_redirects` (default 10).
    pub max_redirects: u32,
    /// Honour robots.txt (default true).
    pub robots: bool,
    /// Address classes that may be fetched although internal: `loopback`, `private`, `link_local`,
    /// `cgnat`, `multicast`, `unspecified`, `reserved`. Default none.
    #[schemars(schema_with = "address_classes_schema")]
    pub allow_addresses: Vec<AddressClass>,
    /// Fetches in flight at once in `fetch_many` (default 8; the per-host limit still applies).
    pub concurrency: usize,
    /// Where fetched responses are archived (live mode). Unset: no archive (a pipeline run
    /// archives to `work/archive` unless this says otherwise).
    pub archive_dir: Option<PathBuf>,
    /// Replay mode: an archive directory to serve from.
    pub replay_archive: Option<PathBuf>,
    /// Replay mode: fixture folders (`<site>/index.toml` files) to serve from, searched before
    /// the archive: one path or a list (`["fixtures/web", "fixtures/sites"]`). Every folder's sites
    /// are served; a URL found in two folders is a configuration error.
    #[serde(deserialize_with = "one_or_many_paths")]
    #[schemars(schema_with = "one_or_many_paths_schema")]
    pub replay_fixtures: Vec<PathBuf>,
}

/// `allow_addresses`: a list of [`AddressClass`] names, taken from the type's own list and serde
/// names (the guard's type stays free of schema derives).
fn address_classes_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<serde_json::Value> = AddressClass::ALL
        .iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .collect();
    schemars::json_schema!({
        "type": "array",
        "items": { "type": "string", "enum": names },
    })
}

/// What [`one_or_many_paths`] accepts.
fn one_or_many_paths_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            { "type": "string" },
            { "type": "array", "items": { "type": "string" } },
        ],
    })
}

/// `"a"` or `["a", "b"]`, so a pipeline with one fixture folder keeps its one string.
fn one_or_many_paths<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
    struct Paths;
    impl<'de> serde::de::Visitor<'de> for Paths {
        type Value = Vec<PathBuf>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a folder path or a list of folder paths")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(vec![PathBuf::from(v)])
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut paths = Vec::new();
            while let Some(p) = seq.next_element::<PathBuf>()? {
                paths.push(p);
            }
            Ok(paths)
        }
    }
    d.deserialize_any(Paths)
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            mode: Mode::Live,
            user_agent: crate::http::DEFAULT_USER_AGENT.into(),
            rate_per_second: 1.0,
            hosts: BTreeMap::new(),
            timeout_seconds: 30.0,
            connect_timeout_seconds: 10.0,
            max_body_bytes: 10 * 1024 * 1024,
            max_retries: 3,
            backoff_ms: 500,
            max_wait_seconds: 60.0,
            max_redirects: 10,
            robots: true,
            allow_addresses: Vec::new(),
            concurrency: 8,
            archive_dir: None,
            replay_archive: None,
            replay_fixtures: Vec::new(),
        }
    }
}

impl WebConfig {
    /// Parse the pipeline file's `[web]` table (unknown fields refused, errors name the field).
    pub fn from_value(value: &serde_json::Value) -> Result<Self, noisebench_core::ConfigError> {
        let config: Self = if value.is_null() {
            Self::default()
        } else {
            noisebench_core::stage::parse_config(value)?
        };
        config.validate()?;
        Ok(config)
    }

    /// Checks beyond the types.
    pub fn validate(&self) -> Result<(), noisebench_core::ConfigError> {
        use noisebench_core::ConfigError;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !positive(self.rate_per_second) {
            return Err(ConfigError::new("rate_per_second", "must be > 0"));
        }
        for (host, h) in &self.hosts {
            if !positive(h.rate_per_second) {
                return Err(ConfigError::new(
                    format!("hosts.{host}.rate_per_second"),
                    "must be > 0",
                ));
            }
        }
        if !positive(self.timeout_seconds) || !positive(self.connect_timeout_seconds) {
            return Err(ConfigError::new("timeout_seconds", "timeouts must be > 0"));
        }
        if !(self.max_wait_seconds.is_finite() && self.max_wait_seconds >= 0.0) {
            return Err(ConfigError::new("max_wait_seconds", "must be >= 0"));
        }
        if self.user_agent.trim().is_empty() {
            return Err(ConfigError::new("user_agent", "must not be empty"));
        }
        if self.concurrency == 0 {
            return Err(ConfigError::new("concurrency", "must be >= 1"));
        }
        if self.mode == Mode::Replay
            && self.replay_archive.is_none()
            && self.replay_fixtures.is_empty()
        {
            return Err(ConfigError::new(
                "mode",
                "replay needs `replay_archive` or `replay_fixtures`",
            ));
        }
        Ok(())
    }

    /// The files a replay reads (each fixture site's `index.toml` and page files, the archive's
    /// index), sorted: stages that fetch through replay fingerprint them, so editing a fixture
    /// page reruns them. Empty in live mode.
    pub fn replay_inputs(&self, root: &std::path::Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        if self.mode != Mode::Replay {
            return files;
        }
        for dir in &self.replay_fixtures {
            let Ok(sites) = crate::replay::FixtureSite::load_all(&root.join(dir)) else {
                continue;
            };
            for site in sites {
                files.push(site.dir.join("index.toml"));
                files.extend(
                    site.pages
                        .iter()
                        .filter_map(|p| p.file.as_ref())
                        .map(|f| site.dir.join(f)),
                );
            }
        }
        if let Some(dir) = &self.replay_archive {
            files.push(root.join(dir).join(crate::archive::INDEX_FILE));
        }
        files.sort();
        files.dedup();
        files
    }

    /// Requests per second for `host_key` (host, or host:port).
    pub fn rate_for(&self, host_key: &str) -> f64 {
        self.hosts
            .get(host_key)
            .map(|h| h.rate_per_second)
            .unwrap_or(self.rate_per_second)
    }
}
