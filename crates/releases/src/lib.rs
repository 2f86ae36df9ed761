//! The seed papers' release formats, one home per format: each format's typed records, the
//! writer our export stages use and the reader `eval` uses, side by side, so that what we
//! write and what we read cannot drift apart.
//!
//! - [`rare`]: RARE's QA records (`LeiLiLab/RARE`): the two JSON lists `export-rare` writes
//!   ([`rare::RareRecord`], [`rare::write_records`]), the same records read back strictly
//!   ([`rare::read_records`]), and the lenient reading of one record as RARE's own code
//!   writes it ([`rare::ReadRecord::from_value`]: no `id`, perturbations optional, per-field
//!   problems reported rather than fatal).
//!
//! Not here (yet): the RAGuard CSV pair and CONF-FACT's JSON/pickle records with credibility
//! still have their writers in `noisebench-label` (`export.rs`) and their readers in
//! `noisebench-eval` (`load/raguard.rs`, `load/confact.rs`); RARE's corpus (`chunks.json`) and
//! retrieval results are still read in `noisebench-eval` (`load/rare.rs`).
//!
//! What this crate is not for: building records from pipeline tables (that stays in the stage
//! crates, which call in here to write), evaluation data types or bad-row accounting (that is
//! `eval`'s; the reader here reports problems as `(reason, detail)` pairs the caller counts).
//! It depends on no stage crate and never on polars (`crates/cli/tests/it/architecture.rs`).

pub mod rare;
