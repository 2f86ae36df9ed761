//! The quality card of a benchmark version: is the benchmark any good? Pure functions over the
//! rows of the tables a version publishes (types from `noisebench-core`):
//!
//! - in [`agreement`], where a claim-document pair has both the RAGuard exam label and the
//!   CONF-FACT stance vote, Cohen's kappa with a seeded bootstrap interval, the confusion
//!   matrix and sampled disagreements;
//! - in [`grounding`], per question, its answer and each cited sentence found in its source
//!   chunks (exact, then a normalised fuzzy span match), as a distribution and a share;
//! - in [`duplicates`], near-duplicates (MinHash signatures from `gaoya` in LSH bands, and exact normalised text)
//!   within the questions, claims and documents, and test questions with a twin in train;
//! - in [`mix`], the version's mix of question kinds, domains, verdicts, source types and
//!   perturbation kinds against a declared target, the largest gaps named;
//! - in [`shortcut`], the BM25 rank of each question's gold chunk, per question kind;
//! - in [`mod@closed_book`], the questions a model answered right with no context (asked by the
//!   caller through the eval layer), per question kind, flagged.
//!
//! [`measure`] gathers them into a [`QualityReport`] (`quality.json` beside a version's
//! manifest), [`gates`] judges it against the configured [`QualityGates`] as checks run before
//! publishing, [`render_markdown`] writes the card's "Quality" section and [`compare`] says how
//! each number moved between two versions.
//!
//! What this crate is not: it reads and writes no files (the snapshot crate writes
//! `quality.json`, the cli reads the tables), calls no model (the caller asks the closed-book
//! questions and hands the judged answers in), and decides nothing about publishing: a gate's failure is a `CheckResult` the
//! build weighs with the others.
//!
//! # Modules
//!
//! The quality card of a version, not a stage (held to the stage crates' rules: it depends on
//! `core`, `text` and `index`). Pure functions over the published tables' rows, configured by
//! `[quality]` (`config.rs`): label agreement (`agreement.rs`: the stance vote mapped into the
//! exam's vocabulary through the claim's verdict, Cohen's kappa with a seeded bootstrap interval;
//! Krippendorff's alpha of exam, stance and reviewer on a human review round's pairs), grounding
//! (`grounding.rs`: exact, then normalised fuzzy span match of answers and cited sentences),
//! near-duplicates and leakage across splits (`duplicates.rs`: MinHash signatures from `gaoya` in
//! LSH bands read a bounded window per bucket, exact normalised text; each distinct normalised text
//! compared once, on every core), the closed-book share (`closed_book.rs`: which questions to ask,
//! and the share per question kind and the flagged questions from the answers the cli had the eval
//! layer judge), the mix against `[quality.mix]` (`mix.rs`), the gold chunk's BM25 rank
//! (`shortcut.rs`, over `index`'s `Impacts`); `report.rs` gathers them (`measure`), judges the
//! `[quality.gates]` (`gates`, `CheckResult`s the build weighs before publishing), renders the
//! card's section and compares two reports. The cli reads the tables (`crates/cli/src/quality.rs`),
//! the snapshot crate writes `quality.json`, the card section and Croissant's
//! `rai:dataAnnotationAnalysis`; the report's `read` feature shows its headline numbers.
//! docs/quality.md. Invariant: no I/O, no model calls (the closed-book answers come in judged); the
//! same rows, answers and configuration give the same report.

pub mod agreement;
pub mod closed_book;
mod config;
pub mod duplicates;
pub mod grounding;
pub mod mix;
mod report;
pub mod shortcut;

pub use closed_book::{ClosedBook, ClosedBookAsked, closed_book, closed_book_questions};
pub use config::{ClosedBookConfig, ConfigError, MixTarget, QualityConfig, QualityGates};
pub use report::{
    Duplicates, QUALITY_FILE, QualityReport, Tables, compare, gates, headline, measure,
    render_markdown,
};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// Up to `n` of `items`, a seeded sample in id order (all of them when there are few).
pub(crate) fn sample<T>(mut items: Vec<T>, n: usize, seed: u64, id: impl Fn(&T) -> &str) -> Vec<T> {
    items.sort_by(|a, b| id(a).cmp(id(b)));
    if items.len() > n {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        items.shuffle(&mut rng);
        items.truncate(n);
        items.sort_by(|a, b| id(a).cmp(id(b)));
    }
    items
}
