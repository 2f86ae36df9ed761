//! Replay: answer requests from fixture folders and archives, never from the network.
//!
//! `replay_fixtures` names one fixture folder or several; a URL may be in only one of them. A
//! fixture folder holds one directory per site with an `index.toml`:
//!
//! ```toml
//! fetched_at = "2025-01-15T00:00:00Z"   # reported as the fetch time of every page
//! [[pages]]
//! url = "https://www.politifact.com/factchecks/list/?page=1"
//! file = "list-1.html"                  # relative to the site directory; omit for an empty body
//! status = 200                          # default 200
//! headers = { content-type = "text/html; charset=utf-8" }
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::archive;
use crate::error::WebError;

/// One site's `index.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureSite {
    #[serde(skip)]
    pub dir: PathBuf,
    pub fetched_at: Option<String>,
    #[serde(default)]
    pub pages: Vec<FixturePage>,
}

/// One URL of a fixture site.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixturePage {
    pub url: String,
    pub file: Option<PathBuf>,
    #[serde(default = "ok_status")]
    pub status: u16,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

fn ok_status() -> u16 {
    200
}

impl FixturePage {
    /// Headers with lower-case names and a content type guessed from the file name if none given.
    pub fn headers(&self) -> BTreeMap<String, String> {
        let mut headers: BTreeMap<String, String> = self
            .headers
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
            .collect();
        if !headers.contains_key("content-type")
            && let Some(file) = &self.file
        {
            let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
            let guess = match ext {
                "html" | "htm" => "text/html",
                "json" => "application/json",
                _ => "text/plain",
            };
            headers.insert("content-type".into(), guess.into());
        }
        headers
    }
}

impl FixtureSite {
    /// Load `<dir>/index.toml`.
    pub fn load(dir: &Path) -> Result<Self, WebError> {
        let path = dir.join("index.toml");
        let text = fs::read_to_string(&path).map_err(|e| WebError::Replay {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let mut site: FixtureSite = toml::from_str(&text).map_err(|e| WebError::Replay {
            path: path.clone(),
            message: e.to_string(),
        })?;
        site.dir = dir.to_path_buf();
        Ok(site)
    }

    /// Every `<root>/<site>/index.toml`, in directory-name order.
    pub(crate) fn load_all(root: &Path) -> Result<Vec<Self>, WebError> {
        let entries = fs::read_dir(root).map_err(|e| WebError::Replay {
            path: root.to_path_buf(),
            message: e.to_string(),
        })?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("index.toml").is_file())
            .collect();
        dirs.sort();
        dirs.iter().map(|d| Self::load(d)).collect()
    }

    /// The body of `page` (empty when it names no file).
    pub fn body(&self, page: &FixturePage) -> std::io::Result<Vec<u8>> {
        match &page.file {
            Some(file) => fs::read(self.dir.join(file)),
            None => Ok(Vec::new()),
        }
    }
}

/// The key a URL is looked up by: parsed and re-serialised, without fragment.
pub(crate) fn url_key(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.to_string(),
    }
}

#[derive(Debug, Clone)]
enum BodySource {
    File(PathBuf),
    Empty,
    Archive { dir: PathBuf, sha256: String },
}

#[derive(Debug, Clone)]
pub(crate) struct ReplayEntry {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub fetched_at: Option<String>,
    body: BodySource,
}

impl ReplayEntry {
    pub fn body(&self) -> std::io::Result<Vec<u8>> {
        match &self.body {
            BodySource::File(p) => fs::read(p),
            BodySource::Empty => Ok(Vec::new()),
            BodySource::Archive { dir, sha256 } => archive::read_object(dir, sha256),
        }
    }
}

/// The configuration error for a URL served by two fixture folders, naming both (and the site
/// index of each).
fn in_two_folders(url: &str, first: &(&Path, PathBuf), second: (&Path, &Path)) -> WebError {
    WebError::Config(noisebench_core::ConfigError::new(
        "replay_fixtures",
        format!(
            "{url} is in two fixture folders: {} ({}) and {} ({}); keep it in one",
            first.0.display(),
            first.1.display(),
            second.0.display(),
            second.1.display(),
        ),
    ))
}

/// URL -> response, from fixtures (first) and an archive (latest record per URL).
#[derive(Debug, Default)]
pub(crate) struct ReplayStore {
    entries: HashMap<String, ReplayEntry>,
}

impl ReplayStore {
    /// Load `archive_dir` (if any), then every fixture folder over it. A URL served by two of the
    /// fixture folders is refused (which page answers would depend on their order); within one
    /// folder, a later site's page replaces an earlier one's.
    pub fn load(fixtures: &[PathBuf], archive_dir: Option<&Path>) -> Result<Self, WebError> {
        let mut entries = HashMap::new();
        if let Some(dir) = archive_dir {
            let records = archive::read_index(dir).map_err(|e| WebError::Replay {
                path: dir.join(archive::INDEX_FILE),
                message: e.to_string(),
            })?;
            for r in records {
                entries.insert(
                    url_key(&r.url),
                    ReplayEntry {
                        status: r.status,
                        headers: r.headers,
                        fetched_at: Some(r.fetched_at),
                        body: BodySource::Archive {
                            dir: dir.to_path_buf(),
                            sha256: r.sha256,
                        },
                    },
                );
            }
        }
        // URL -> (folder, site index) of the fixture page serving it.
        let mut served_by: HashMap<String, (&Path, PathBuf)> = HashMap::new();
        for root in fixtures {
            for site in FixtureSite::load_all(root)? {
                let index = site.dir.join("index.toml");
                for page in &site.pages {
                    let key = url_key(&page.url);
                    if let Some(first) = served_by.get(&key)
                        && first.0 != root.as_path()
                    {
                        return Err(in_two_folders(&key, first, (root, &index)));
                    }
                    served_by.insert(key.clone(), (root.as_path(), index.clone()));
                    let body = match &page.file {
                        Some(f) => BodySource::File(site.dir.join(f)),
                        None => BodySource::Empty,
                    };
                    entries.insert(
                        key,
                        ReplayEntry {
                            status: page.status,
                            headers: page.headers(),
                            fetched_at: site.fetched_at.clone(),
                            body,
                        },
                    );
                }
            }
        }
        Ok(Self { entries })
    }

    pub fn get(&self, url: &str) -> Option<&ReplayEntry> {
        self.entries.get(&url_key(url))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}
