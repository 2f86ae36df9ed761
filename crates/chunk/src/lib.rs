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
//!
//! # Modules
//!
//! The report track's first half, three stages. `import.rs` (`ChunksImportStage`,
//! `chunks-import`): the user's own chunk table (JSON Lines, or Parquet through the `parquet`
//! crate's row reader) as `chunks` and `reports` rows, ids kept, a malformed row an error naming
//! file and line. `reports.rs` (`ReportsStage::new(web)`, `ingest`)
//! reads reports from files, or from EDGAR through `reports/edgar_live.rs` (the SEC's submissions
//! JSON and each filing's primary document, fetched through the run's `Web` at most 10 requests per
//! second with the configured User-Agent, amendments by rule, the 10-K family's forms taken or
//! counted), in parts under `edgar_live/`: `config.rs` (the source's configuration and checks),
//! `sec_json.rs` (the submissions index and ticker map parsed, pure), `fetch.rs` (the source's
//! `Web`, the harvest of filings and drops, report ids); items are cut by `reports/items.rs`, the
//! pure item cutter with its golden cases; a filing document, fetched or a local file, goes through
//! `reports/annual.rs` (10-K family recognised by `<TYPE>`, inline XBRL's `dei:` facts or the cover
//! page; form, company, CIK, period), `reports/submission.rs` (EDGAR's SGML submissions:
//! `<SEC-HEADER>`/`<IMS-HEADER>` fields, `<DOCUMENT>` blocks, exhibits kept apart) and
//! `reports/text_filing.rs` (a plain-text document to blocks: markup and page furniture gone,
//! `<TABLE>` laid out by its `<S>`/`<C>` columns) to the same item cutter, and
//! `reports/exhibit13.rs` (the annual report exhibit cut into the sections its pointer items
//! name, pure); other files through
//! `edgar.rs`, `mineru.rs`, `html.rs`, `markdown.rs` and `text_layout.rs` into ordered blocks, with
//! `flat_table.rs` (tables edgar-crawler flattened to one cell per line, rebuilt as Markdown or
//! kept whole as one table block), with `table.rs` (HTML tables laid out as HTML's table model lays
//! them out and written as dense Markdown pipe tables: spacer rows and columns gone, `$`/`%`/`)`
//! joined to their numbers; ragged pipe-table checks, captions and footnotes) and `preset.rs`
//! (domain metadata and chunk sizes); `fidelity.rs` measures the HTML path against what a browser
//! renders (`just fidelity`, the `examples/fidelity.rs` report over `fixtures/real/10k/`);
//! `chunks.rs` (`ChunksStage`, `chunk_reports`) runs `chunker.rs` (`chunk_report`, `Chunker`: pure,
//! so tests and benches call it directly), counting with `noisebench-text`'s `TokenCounter`
//! (re-exported; its speed is measured by this crate's bench). No LLM; the only fetching is the
//! EDGAR source's, through the web layer. `synthetic.rs`: a seeded generator of a corpus of RARE's
//! shape (10-K MD&A as edgar-crawler JSON, economic surveys as Markdown, policy plans as HTML;
//! sector names shared across reports so the graph links them) with a pipeline file over it, for
//! `noisebench generate-reports` and `just bench-rare`. Invariant: a table, or a paragraph that
//! fits, is never split; chunk ids come from the text, not the position.

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
pub use reports::exhibit13::{ExhibitCut, cut_exhibit};
pub use reports::items::{cut_items, filing_items};
pub use reports::submission::{Submission, SubmissionDocument, parse_submission};
pub use reports::text_filing::text_filing_blocks;
pub use reports::{Format, ReportsConfig, ReportsStage, Source, ingest};
pub use table::pipe_row_cells;
pub use text_layout::{Layout, text_blocks, text_blocks_with};
