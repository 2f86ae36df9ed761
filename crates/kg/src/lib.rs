//! The knowledge graph of the report track: what sits between chunks and questions.
//!
//! Three stages, each a thin shell over pure functions that tests and benches call directly:
//! `triplets` (`triplets`: the LLM reads windows of consecutive chunks of a report and returns
//! `(entity_1, relation, entity_2)` with the chunk id and the exact source sentence; a triplet is
//! kept only when that sentence is found in the chunk it names), `graph` (`graph`: relations
//! merged by embedding similarity, entities aligned by normalisation and per-report rules, every
//! merge an `aliases` row, the per-report graphs merged into one with petgraph and written as
//! GraphML and node-link JSON), and `patterns` (`patterns`: single-hop edges, chains, stars and
//! inverted stars mined from the merged graph under RARE's degree rules, deduplicated, capped by
//! stable sampling).
//!
//! What this crate is not: it writes no questions (the `qa` crate will) and reads or writes no
//! files itself beyond its stages' declared side files; tables pass through the runner.

mod graph;
mod patterns;
mod triplets;

pub use graph::{FilerConfig, GraphConfig, GraphStage, build_graph};
pub use patterns::{
    GraphIndex, PatternKind, PatternsConfig, PatternsStage, chains, inverted_stars, mine_pattern,
    mine_patterns, pattern_row, stars,
};
pub use triplets::task::{
    ExtractedTriplet, SENSE_MIN_TRIPLETS, TASKS, Triplets, TripletsInput, TripletsOutput,
    rule_triplets,
};
pub use triplets::{TripletsConfig, TripletsStage};
