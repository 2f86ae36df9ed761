//! noisebench's claims-track retrieval: three stages that turn claims into the documents a real
//! retriever would hand a RAG system.
//!
//! - [`QueriesStage`] (`queries`): per claim, LLM keywords (RAGuard 3.2), an LLM yes/no question
//!   (CONF-FACT 3.2), the claim itself, and optional counter-evidence queries conditioned on a
//!   draft verdict (CounterRefine 3.3); its LLM tasks are in `query_tasks`.
//! - [`SearchStage`] (`search`): every query through the configured [`backends`]: Google
//!   Programmable Search, Brave, SearxNG, Reddit's API, a local Reddit dump indexed for BM25 with
//!   `noisebench-index`, the user's own corpus (files or a folder) indexed the same way, the
//!   user's own retriever's run over that corpus or its answers as an HTTP service, and recorded
//!   fixtures. Site restriction, top k, date window.
//! - [`DocumentsStage`] (`documents`): each distinct hit fetched once through `noisebench-web`,
//!   Reddit posts from their JSON, other pages through a readability extractor, canonical URLs,
//!   duplicates merged, claim-document links, source types, and passages of at most 256 words.
//!
//! What this crate is not: it labels nothing (the labels stage does), keeps no tables itself
//! (the runner writes them), and reaches the network only through `noisebench-web`: pages through
//! its archiving `Web`, credentialed search APIs through its non-archiving `HttpClient`
//! (`api::ApiClient`), so keys never reach the archive.
//!
//! # Modules
//!
//! The claims track's retrieval, three stages. `queries.rs` (`QueriesStage::new(llm)`: keywords,
//! yes/no questions, the claim, counter-evidence queries) with `query_tasks.rs` (its LLM tasks
//! `keywords` and `claim_to_question` with their offline rules, and its wiring of `exam_verdict`),
//! `search.rs` (`SearchStage::new(Arc<Web>)`, `.with_llm(llm)` for a corpus's dense retrieval:
//! every query through every backend, site and date filters; two backends of one type are told
//! apart as `google[0]`, `google[1]` in hit ids, drops and `search_hits.backend`) over `backends/`
//! (`google.rs`, `brave.rs`, `searxng.rs`, `reddit_api.rs`, `reddit_dump.rs`: a dump indexed once
//! per content with `noisebench-index`'s BM25, `corpus.rs`: the user's documents (JSON Lines, CSV,
//! Parquet through the `parquet` crate's row reader, a folder of HTML, Markdown and text) indexed
//! the same way once per fingerprint, hits carrying their id and text so `documents.rs` fetches
//! nothing, `dense.rs`: its `dense`/`hybrid` retrieval (document vectors kept beside the index,
//! reciprocal rank fusion), `corpus_doc.rs`: the document and error both share, `run.rs`: the user's retriever's run (TREC or Parquet, read and ordered
//! by `noisebench_index::run`, which the `retrieval` stage shares) over such a corpus choosing the
//! documents (the one backend that reads `SearchRequest::query_id`; its losses come back as
//! `Parsed::notes`), `retriever.rs`: the user's retriever as an HTTP service (a documented JSON
//! shape, or Elasticsearch/OpenSearch `_search`, both `noisebench_web::retriever`'s) through
//! `api.rs`'s client, text from the answer or the corpus by id, `fixture.rs`; `real_inputs.rs`
//! tests the parsers on `fixtures/real/search/`), `documents.rs` (`DocumentsStage::new(Arc<Web>)`:
//! fetch each distinct hit once, extract, merge duplicates, link claims to documents, passages)
//! with `canonical.rs` (canonical URLs, domains, source types), `extract.rs` (dom_smoothie main
//! text, date, language) with `boilerplate.rs` (hidden content removed before Readability;
//! captions, credits, bylines, galleries, link lists removed from the block it keeps), `reddit.rs`
//! (posts from dumps and Reddit JSON), `entities.rs` (HTML character references decoded once where
//! text enters: Brave snippets, Reddit titles and bodies), `passages.rs`. `backends/api.rs` is
//! `noisebench_web::api::ApiClient` (a backend's `limits` turned into an `HttpClient`; its
//! `ApiFailure` is the backends' `SearchFailure`), for the credentialed search APIs (Google's key
//! named as a secret query parameter, Brave's as a secret header, Reddit's OAuth as basic auth
//! and a bearer token): never archived, keys in no error detail or log line. Result pages always
//! go through the archiving `Web`. `backends/mod.rs` is the `Backend` trait the stage calls, with
//! tolerant parsing (a result without title or snippet kept and counted, one without URL skipped,
//! an undocumented shape a `malformed_response` failure); `backends/config.rs` is
//! `BackendConfig` (the `backends` entries) with every `match` over backend types (build,
//! checks, live sources, files read).
//! Invariant: every fetch goes through the run's one `Web` (one rate limit and robots.txt per
//! host); search API keys are never archived or logged.

// Public namespace: one module per backend (`backends::reddit_dump::read_posts`,
// `backends::brave`), which the fuzz targets, benches and tests reach by path.
pub mod backends;
mod boilerplate;
mod canonical;
mod documents;
mod entities;
mod extract;
mod passages;
mod queries;
mod query_tasks;
mod reddit;
mod search;

pub use backends::BackendConfig;
pub use backends::brave::BraveConfig;
pub use backends::corpus::{CorpusColumns, CorpusConfig};
pub use backends::fixture::FixtureConfig;
pub use backends::google::GoogleConfig;
pub use backends::reddit_api::RedditApiConfig;
pub use backends::reddit_dump::RedditDumpConfig;
pub use backends::retriever::{RetrieverConfig, Shape as RetrieverShape};
pub use backends::run::RunConfig;
pub use backends::searxng::SearxngConfig;
pub use documents::{DocumentsConfig, DocumentsStage};
pub use extract::extract_html;
pub use queries::{QueriesConfig, QueriesStage};
pub use query_tasks::{
    ClaimToQuestion, ClaimToQuestionInput, ExamVerdict, Keywords, KeywordsInput, QUESTION_EXAMPLE,
    TASKS,
};
pub use reddit::RedditPost;
pub use search::{SearchConfig, SearchStage};
