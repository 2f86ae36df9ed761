//! noisebench's claims-track retrieval: three stages that turn claims into the documents a real
//! retriever would hand a RAG system.
//!
//! - [`QueriesStage`] (`queries`): per claim, LLM keywords (RAGuard 3.2), an LLM yes/no question
//!   (CONF-FACT 3.2), the claim itself, and optional counter-evidence queries conditioned on a
//!   draft verdict (CounterRefine 3.3); its LLM tasks are in `query_tasks`.
//! - [`SearchStage`] (`search`): every query through the configured [`backends`]: Google
//!   Programmable Search, Brave, SearxNG, Reddit's API, a local Reddit dump indexed for BM25 with
//!   `noisebench-index`, the user's own corpus (files or a folder) indexed the same way, the
//!   user's own retriever's run over that corpus, and recorded fixtures. Site restriction, top k, date window.
//! - [`DocumentsStage`] (`documents`): each distinct hit fetched once through `noisebench-web`,
//!   Reddit posts from their JSON, other pages through a readability extractor, canonical URLs,
//!   duplicates merged, claim-document links, source types, and passages of at most 256 words.
//!
//! What this crate is not: it labels nothing (the labels stage does), keeps no tables itself
//! (the runner writes them), and reaches the network only through `noisebench-web`: pages through
//! its archiving `Web`, credentialed search APIs through its non-archiving `HttpClient`
//! (`api::ApiClient`), so keys never reach the archive.

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
