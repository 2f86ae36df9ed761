//! Stages of the report track's first half: `reports` reads long reports (edgar-crawler 10-K
//! JSON, MinerU `content_list.json` from parsed PDFs, HTML, Markdown, plain text) into ordered
//! blocks with domain metadata, and `chunks` cuts them into retrieval-sized chunks counted in
//! cl100k tokens, never splitting a table or a paragraph that fits, keeping captions and
//! footnotes with their table and section titles with their first chunk (RARE, section 3.1 and
//! Appendix A). `chunks-import` starts the track from a user's own chunk table instead, keeping
//! the user's chunk and document ids.
//!
//! What this crate is not: it fetches nothing itself (an EDGAR source fetches through the run's
//! `noisebench-web` `Web`), calls no LLM and writes no tables; the pipeline
//! runner reads and writes the `reports` and `chunks` tables. The chunking functions are pure
//! ([`chunk_report`]) so tests and benches call them directly.

mod chunker;
mod chunks;
mod edgar;
// Public namespace: the chunk-fidelity measure of the `fidelity` example and the real-filing
// tests (`fidelity::words` would be ambiguous at the root).
pub mod fidelity;
// Only the flat-table tests call it, by module (`flat_table::rebuild`, `table_block`).
#[doc(hidden)]
pub mod flat_table;
mod html;
mod import;
mod markdown;
mod mineru;
mod preset;
mod reports;
// Public namespace: the synthetic RARE-shaped corpus the cli command, the scale bench and the
// synthetic-reports test build (`synthetic::generate`, `synthetic::write_corpus`).
pub mod synthetic;
mod table;
mod text_layout;

pub use chunker::{ChunkConfig, Chunker, ReportChunk, block_text, chunk_report};
pub use chunks::{ChunksConfig, ChunksStage, chunk_reports};
pub use edgar::read_filing;
pub use html::html_blocks;
pub use import::{
    ChunkColumns, ChunksImportConfig, ChunksImportStage, ImportError, ImportedChunk, import_chunks,
    read_chunk_table,
};
pub use markdown::markdown_blocks;
pub use mineru::mineru_blocks;
/// The token counter the chunker measures with (exact cl100k counts), from `noisebench-text`.
pub use noisebench_text::TokenCounter;
pub use preset::Domain;
pub use reports::annual::{FilingDocument, family, read_document};
pub use reports::edgar_live::{parse_submissions, parse_tickers};
pub use reports::items::{cut_items, filing_items};
pub use reports::submission::{Submission, SubmissionDocument, parse_submission};
pub use reports::text_filing::text_filing_blocks;
pub use reports::{Format, ReportsConfig, ReportsStage, Source, ingest};
pub use table::pipe_row_cells;
pub use text_layout::{Layout, text_blocks, text_blocks_with};
