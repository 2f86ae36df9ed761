//! Stages of the report track's first half: `reports` reads long reports (edgar-crawler 10-K
//! JSON, MinerU `content_list.json` from parsed PDFs, HTML, Markdown, plain text) into ordered
//! blocks with domain metadata, and `chunks` cuts them into retrieval-sized chunks counted in
//! cl100k tokens, never splitting a table or a paragraph that fits, keeping captions and
//! footnotes with their table and section titles with their first chunk (RARE, section 3.1 and
//! Appendix A).
//!
//! What this crate is not: it fetches nothing itself (an EDGAR source fetches through the run's
//! `noisebench-web` `Web`), calls no LLM and writes no tables; the pipeline
//! runner reads and writes the `reports` and `chunks` tables. The chunking functions are pure
//! ([`chunk_report`]) so tests and benches call them directly.

pub mod chunker;
pub mod chunks;
pub mod edgar;
pub mod fidelity;
pub mod flat_table;
pub mod html;
pub mod markdown;
pub mod mineru;
pub mod preset;
pub mod reports;
pub mod synthetic;
pub mod table;
pub mod text_layout;

pub use chunker::{ChunkConfig, Chunker, ReportChunk, block_text, chunk_report};
pub use chunks::{ChunksConfig, ChunksStage, chunk_reports};
/// The token counter the chunker measures with (exact cl100k counts), from `noisebench-text`.
pub use noisebench_text::TokenCounter;
pub use preset::Domain;
pub use reports::{Format, ReportsConfig, ReportsStage, Source, ingest};
