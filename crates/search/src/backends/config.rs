//! `BackendConfig`, the `backends` entries of the `search` stage's configuration: which backend
//! each names, and everything that depends on the backend's type (building it, checking its
//! secrets and files, whether it reads live sources, which files it reads), so the stage holds
//! no `match` over backend types and a new backend is one variant and its arms here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_core::{ConfigError, StageError};
use noisebench_llm::Llm;
use noisebench_web::{Mode, Web};
use schemars::JsonSchema;
use serde::Deserialize;

use super::Backend;
use super::brave::{Brave, BraveConfig};
use super::corpus::{Corpus, CorpusConfig, CorpusIndex, Dense, check_name};
use super::fixture::{Fixture, FixtureConfig};
use super::google::{Google, GoogleConfig};
use super::reddit_api::{RedditApi, RedditApiConfig};
use super::reddit_dump::{DumpIndex, RedditDump, RedditDumpConfig};
use super::retriever::{Retriever, RetrieverConfig};
use super::run::{Run, RunConfig};
use super::searxng::{Searxng, SearxngConfig};

/// One backend of the `search` stage; `type` picks it.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum BackendConfig {
    /// Google's Custom Search JSON API (API key and search engine id).
    Google(GoogleConfig),
    /// The Brave Search API (subscription token).
    Brave(BraveConfig),
    /// A SearxNG instance's JSON API, fetched through the run's web layer.
    Searxng(SearxngConfig),
    /// Reddit's search API (OAuth application token).
    Reddit(RedditApiConfig),
    /// A Reddit dump file, indexed once per content with BM25 (no network).
    RedditDump(RedditDumpConfig),
    /// The user's own documents (a JSON Lines, CSV or Parquet file, or a folder of HTML,
    /// Markdown and text files), indexed once per content with BM25 (no network) and, with
    /// `retrieval = "dense"` or `"hybrid"`, the LLM layer's embedder; hits carry their text, so
    /// the documents stage fetches nothing.
    Corpus(CorpusConfig),
    /// The user's own retriever: its run (a TREC run file or a Parquet of query id, doc id, rank
    /// and score) over the user's corpus chooses each query's documents.
    Run(RunConfig),
    /// The user's own retriever as an HTTP service (a documented JSON shape, or Elasticsearch
    /// and OpenSearch `_search`): its answer to each query chooses the query's documents.
    Retriever(RetrieverConfig),
    /// Recorded answers under `fixtures/search/` (tests and the demo; no network).
    Fixture(FixtureConfig),
}

/// `p` under `root` unless it is absolute.
fn resolve_path(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

impl BackendConfig {
    pub fn name(&self) -> &'static str {
        match self {
            BackendConfig::Google(_) => "google",
            BackendConfig::Brave(_) => "brave",
            BackendConfig::Searxng(_) => "searxng",
            BackendConfig::Reddit(_) => "reddit",
            BackendConfig::RedditDump(_) => "reddit-dump",
            BackendConfig::Corpus(_) => "corpus",
            BackendConfig::Run(_) => "run",
            BackendConfig::Retriever(_) => "retriever",
            BackendConfig::Fixture(_) => "fixture",
        }
    }

    /// Whether the backend embeds its queries (a corpus searched `dense` or `hybrid`), so the
    /// LLM layer's embedder decides its hits.
    pub fn embeds(&self) -> bool {
        matches!(self, BackendConfig::Corpus(c) if c.retrieval != super::corpus::CorpusRetrieval::Bm25)
    }

    /// The backend ready to answer; `field` (`backends[2]`) names it in errors, relative paths
    /// are under `root`, and a dump's index goes under `stage_dir` unless `index_dir` says where.
    /// `llm` is the run's LLM layer, whose embedder a corpus's `dense` and `hybrid` retrieval
    /// use (`None`: the stage has none).
    pub(crate) fn build(
        &self,
        field: &str,
        web: &Arc<Web>,
        llm: Option<&Llm>,
        root: &Path,
        stage_dir: &Path,
    ) -> Result<Box<dyn Backend>, StageError> {
        let ua = web.config().user_agent.clone();
        let cfg = |m: String| StageError::Config(ConfigError::new(field, m));
        Ok(match self {
            BackendConfig::Google(c) => Box::new(Google::new(c, &ua).map_err(cfg)?),
            BackendConfig::Brave(c) => Box::new(Brave::new(c, &ua).map_err(cfg)?),
            BackendConfig::Searxng(c) => Box::new(Searxng::new(c, web.clone()).map_err(cfg)?),
            BackendConfig::Reddit(c) => Box::new(RedditApi::new(c, &ua).map_err(cfg)?),
            BackendConfig::Fixture(c) => {
                Box::new(Fixture::load(&resolve_path(root, &c.dir)).map_err(cfg)?)
            }
            BackendConfig::RedditDump(c) => {
                let dump = resolve_path(root, &c.path);
                let index_root = match &c.index_dir {
                    Some(d) => resolve_path(root, d),
                    None => stage_dir.join("reddit-dump-index"),
                };
                let index = DumpIndex::open_or_build(&dump, &index_root)
                    .map_err(|e| StageError::Other(format!("{field}: {e}")))?;
                Box::new(RedditDump::new(index, c))
            }
            BackendConfig::Corpus(c) => {
                let index_root = match &c.index_dir {
                    Some(d) => resolve_path(root, d),
                    None => stage_dir.join("corpus-index"),
                };
                let path = resolve_path(root, &c.path);
                let index = CorpusIndex::open_or_build(&path, &c.columns, &index_root)
                    .map_err(|e| StageError::Other(format!("{field}: {e}")))?;
                if !c.retrieval.needs_embedder() {
                    return Ok(Box::new(Corpus::new(index, c)));
                }
                let llm = llm.ok_or_else(|| {
                    cfg(format!(
                        "retrieval = \"{}\" needs the LLM layer's embedder (`llm.embeddings`)",
                        c.retrieval.name()
                    ))
                })?;
                let dense = Dense::open_or_build(&path, c, &index, llm)
                    .map_err(|e| StageError::Other(format!("{field}: {e}")))?;
                Box::new(Corpus::new(index, c).with_dense(c.retrieval, dense))
            }
            BackendConfig::Run(c) => Box::new(
                Run::load(
                    &resolve_path(root, &c.path),
                    &resolve_path(root, &c.corpus),
                    c,
                )
                .map_err(|e| StageError::Other(format!("{field}: {e}")))?,
            ),
            BackendConfig::Retriever(c) => Box::new(
                Retriever::new(
                    c,
                    c.corpus.as_ref().map(|p| resolve_path(root, p)).as_deref(),
                    &ua,
                )
                .map_err(|e| StageError::Other(format!("{field}: {e}")))?,
            ),
        })
    }

    /// The environment variables the backend reads (its keys; SearxNG's URL when not given), as
    /// `(field, variable)`; `field` (`backends[2]`) prefixes the field. The caller checks them
    /// all before a run ([`noisebench_core::TypedStage::secret_variables`]).
    pub(crate) fn variables(&self, field: &str) -> Vec<(String, String)> {
        let f = |name: &str, var: &str| (format!("{field}.{name}"), var.to_string());
        match self {
            BackendConfig::Google(g) => {
                vec![f("api_key_env", &g.api_key_env), f("cx_env", &g.cx_env)]
            }
            BackendConfig::Brave(g) => vec![f("api_key_env", &g.api_key_env)],
            BackendConfig::Reddit(g) => vec![
                f("client_id_env", &g.client_id_env),
                f("client_secret_env", &g.client_secret_env),
            ],
            BackendConfig::Retriever(r) => {
                let key = r.http.api_key_env.iter();
                key.map(|v| f("http.api_key_env", v)).collect()
            }
            BackendConfig::Searxng(g) if g.base_url.is_none() => {
                vec![f("base_url_env", &g.base_url_env)]
            }
            _ => Vec::new(),
        }
    }

    /// What can be checked before a run besides the variables ([`Self::variables`]): the dump
    /// exists, the recorded answers load, a corpus's `dense` retrieval has an embedder
    /// (`has_embedder`: the stage was given the run's LLM layer). `field` (`backends[2]`)
    /// prefixes the field an error names.
    pub(crate) fn check(
        &self,
        field: &str,
        root: &Path,
        has_embedder: bool,
    ) -> Result<(), ConfigError> {
        let f = |name: &str| format!("{field}.{name}");
        match self {
            BackendConfig::Google(_)
            | BackendConfig::Brave(_)
            | BackendConfig::Reddit(_)
            | BackendConfig::Searxng(_) => {}
            BackendConfig::RedditDump(d) => {
                if !resolve_path(root, &d.path).is_file() {
                    return Err(ConfigError::new(
                        f("path"),
                        format!("{} does not exist", d.path.display()),
                    ));
                }
            }
            BackendConfig::Fixture(d) => {
                Fixture::load(&resolve_path(root, &d.dir))
                    .map_err(|m| ConfigError::new(f("dir"), m))?;
            }
            BackendConfig::Corpus(c) => {
                check_name(&c.name).map_err(|m| ConfigError::new(f("name"), m))?;
                if c.retrieval.needs_embedder() && !has_embedder {
                    return Err(ConfigError::new(
                        f("retrieval"),
                        format!(
                            "`{}` needs an embedder (`llm.embeddings`), and this search stage was built without the LLM layer",
                            c.retrieval.name()
                        ),
                    ));
                }
                if c.embed_batch == 0 {
                    return Err(ConfigError::new(f("embed_batch"), "must be at least 1"));
                }
                let path = resolve_path(root, &c.path);
                super::corpus::CorpusFormat::of(&path)
                    .and_then(|_| super::corpus::corpus_files(&path))
                    .map_err(|e| ConfigError::new(f("path"), e.to_string()))?;
            }
            BackendConfig::Run(c) => {
                check_name(&c.name).map_err(|m| ConfigError::new(f("name"), m))?;
                if !resolve_path(root, &c.path).is_file() {
                    return Err(ConfigError::new(
                        f("path"),
                        format!("{} does not exist", c.path.display()),
                    ));
                }
                let corpus = resolve_path(root, &c.corpus);
                super::corpus::CorpusFormat::of(&corpus)
                    .and_then(|_| super::corpus::corpus_files(&corpus))
                    .map_err(|e| ConfigError::new(f("corpus"), e.to_string()))?;
            }
            BackendConfig::Retriever(c) => {
                check_name(&c.name).map_err(|m| ConfigError::new(f("name"), m))?;
                let endpoint = &c.http.endpoint;
                url::Url::parse(endpoint).map_err(|e| {
                    ConfigError::new(f("http.endpoint"), format!("`{endpoint}`: {e}"))
                })?;
                if let Some(corpus) = &c.corpus {
                    let corpus = resolve_path(root, corpus);
                    super::corpus::CorpusFormat::of(&corpus)
                        .and_then(|_| super::corpus::corpus_files(&corpus))
                        .map_err(|e| ConfigError::new(f("corpus"), e.to_string()))?;
                }
            }
        }
        Ok(())
    }

    /// Whether the backend answers differently over time: the APIs do, a dump and recorded
    /// answers, a corpus and a run do not, and SearxNG does unless the web layer (`web_mode`) replays.
    pub(crate) fn reads_live_sources(&self, web_mode: Mode) -> bool {
        match self {
            BackendConfig::RedditDump(_)
            | BackendConfig::Corpus(_)
            | BackendConfig::Run(_)
            | BackendConfig::Fixture(_) => false,
            BackendConfig::Searxng(_) => web_mode == Mode::Live,
            _ => true,
        }
    }

    /// The files outside the pipeline's tables the backend reads (its fingerprint's inputs).
    pub(crate) fn external_files(&self, web: &Web, root: &Path) -> Vec<PathBuf> {
        match self {
            BackendConfig::RedditDump(d) => vec![resolve_path(root, &d.path)],
            BackendConfig::Corpus(c) => {
                super::corpus::corpus_files(&resolve_path(root, &c.path)).unwrap_or_default()
            }
            BackendConfig::Run(c) => {
                let mut files =
                    super::corpus::corpus_files(&resolve_path(root, &c.corpus)).unwrap_or_default();
                files.push(resolve_path(root, &c.path));
                files
            }
            // The answers are live; the corpus the ids name is an input.
            BackendConfig::Retriever(c) => c
                .corpus
                .as_ref()
                .and_then(|p| super::corpus::corpus_files(&resolve_path(root, p)).ok())
                .unwrap_or_default(),
            BackendConfig::Fixture(d) => Fixture::load(&resolve_path(root, &d.dir))
                .map(|f| f.files())
                .unwrap_or_default(),
            // SearxNG answers come through the web layer: replayed answers are inputs.
            BackendConfig::Searxng(_) => web.config().replay_inputs(root),
            _ => Vec::new(),
        }
    }
}

/// The name each backend's hits and drops carry (`search_hits.backend`, part of hit ids and drop
/// items): its type (`google`), or, when the pipeline has more than one backend of that type, the
/// type and its place in `backends` (`google[0]`, `google[2]`), so two backends of one type never
/// write the same hit id or drop item.
pub(crate) fn backend_labels(backends: &[BackendConfig]) -> Vec<String> {
    backends
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let name = b.name();
            let same_type = backends.iter().filter(|o| o.name() == name).count();
            if same_type > 1 {
                format!("{name}[{i}]")
            } else {
                name.to_string()
            }
        })
        .collect()
}
