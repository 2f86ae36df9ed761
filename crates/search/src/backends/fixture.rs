//! The fixture backend: recorded answers replayed from files, no network.
//!
//! A fixture folder holds `index.toml`:
//!
//! ```toml
//! [[responses]]
//! query = "hot water lemon coronavirus"   # the query text (case and spacing ignored)
//! format = "searxng"                      # google | brave | searxng | reddit | elasticsearch
//! file = "searxng/hot-water-lemon.json"   # relative to the folder
//! ```
//!
//! Each file is parsed by the named backend's parser, so a recorded answer exercises the same
//! code as a live one. A query with no recording fails as `not_recorded`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Backend, Parsed, SearchFailure, SearchRequest};

#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixtureConfig {
    /// The folder with `index.toml`, relative to the repository root.
    pub dir: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Index {
    #[serde(default)]
    responses: Vec<Recording>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Recording {
    query: String,
    format: String,
    file: PathBuf,
}

pub const FORMATS: &[&str] = &["google", "brave", "searxng", "reddit", "elasticsearch"];

pub struct Fixture {
    dir: PathBuf,
    recordings: BTreeMap<String, Recording>,
}

/// Case-folded, whitespace-collapsed query text: the lookup key.
pub(crate) fn query_key(text: &str) -> String {
    text.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

impl Fixture {
    /// Load `<dir>/index.toml`; errors name the file and the entry.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let path = dir.join("index.toml");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let index: Index = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut recordings = BTreeMap::new();
        for (i, r) in index.responses.into_iter().enumerate() {
            if !FORMATS.contains(&r.format.as_str()) {
                return Err(format!(
                    "{}: responses[{i}].format `{}` is not one of {}",
                    path.display(),
                    r.format,
                    FORMATS.join(", ")
                ));
            }
            if !dir.join(&r.file).is_file() {
                return Err(format!(
                    "{}: responses[{i}].file `{}` does not exist",
                    path.display(),
                    r.file.display()
                ));
            }
            recordings.insert(query_key(&r.query), r);
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            recordings,
        })
    }

    /// Every file the index names (for fingerprinting).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self
            .recordings
            .values()
            .map(|r| self.dir.join(&r.file))
            .collect();
        v.push(self.dir.join("index.toml"));
        v.sort();
        v.dedup();
        v
    }
}

impl Backend for Fixture {
    fn name(&self) -> &'static str {
        "fixture"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        let r = self.recordings.get(&query_key(&req.text)).ok_or_else(|| {
            SearchFailure::new(
                "not_recorded",
                format!("fixture: no recording for `{}`", req.text),
            )
        })?;
        let path = self.dir.join(&r.file);
        let body = std::fs::read_to_string(&path).map_err(|e| {
            SearchFailure::new("fixture_unreadable", format!("{}: {e}", path.display()))
        })?;
        let mut parsed = match r.format.as_str() {
            "google" => super::google::parse(&body),
            "brave" => super::brave::parse(&body),
            "searxng" => super::searxng::parse(&body),
            "reddit" => super::reddit_api::parse(&body),
            // An `_search` answer read as the `retriever` backend reads one with its default
            // fields; a hit without `_source.text` is dropped (no corpus here).
            "elasticsearch" => super::retriever::parse_elasticsearch(&body, "text", "title")
                .map(|a| super::retriever::to_parsed(a, None, "retriever", usize::MAX)),
            // `load` refuses a format not in FORMATS: one listed there without a parser here.
            other => Err(SearchFailure::new(
                "fixture_format",
                format!("fixture: no parser for format `{other}`"),
            )),
        }?;
        parsed.hits.truncate(req.top_k);
        Ok(parsed)
    }
}
