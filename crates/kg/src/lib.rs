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
//!
//! # Modules
//!
//! The report track's knowledge graph, three stages over pure functions. `triplets.rs`
//! (`TripletsStage::new(llm)`) with `triplets/`: `windows.rs` (windows of consecutive chunks per
//! report whose boundaries come from chunk content, so an edited chunk changes at most two
//! windows), `task.rs` (the `triplets` LLM task and its offline rule), `grounding.rs` (a triplet is
//! kept only if its sentence, normalised, is in the chunk it names, re-pointed within its window,
//! with both entities in it; every other one a counted drop). A triplet's id is its report,
//! normalised fact and sentence, not its chunk's id. `graph.rs` (`GraphStage::new(llm)`) with
//! `graph/`: `relations.rs` (relations merged by the embedder's cosine similarity, in a
//! deterministic order), `entities.rs` (alignment by normalisation and corporate suffixes, a
//! filing's "the Company"/"we" to its filer, abbreviations to the long form the report defines;
//! every merge an `aliases` row), `merge.rs` (one petgraph graph across reports), `export.rs`
//! (GraphML and NetworkX node-link JSON, written by hand for byte-stable output). `patterns.rs`
//! (`PatternsStage`) with `patterns/`: `index.rs` (the adjacency index over the edges), `mine.rs`
//! (single-hop edges, chains, stars and inverted stars under RARE's degree rules, never enumerating
//! simple paths), the distinct-chunk rule, dedupe by sorted triplet ids, a per-pattern cap kept by
//! bottom-k sampling on a seeded hash; counts per pattern in its facts), `count.rs` (capped chains
//! and inverted stars counted per centre and sampled uniformly by rank, never enumerated: the cost
//! is the graph and the cap, not the groups hubs make) and `group.rs` (a group of edges and the
//! seeded hashing both miners sample with). Invariant: a triplet is kept only when its source
//! sentence is in a chunk of its window; the same graph and seed give the same patterns, and
//! which single hops and stars are sampled depends only on each group's identity, so a refresh
//! moves only those an edit touches (capped chains and inverted stars may all move).

mod graph;
mod patterns;
mod triplets;

pub use graph::{FilerConfig, GraphConfig, GraphStage, build_graph};
pub use patterns::{
    EdgeRange, GraphIndex, PatternKind, PatternsConfig, PatternsStage, chains, inverted_stars,
    mine_pattern, mine_pattern_enumerating, mine_patterns, pattern_row, stars,
};
pub use triplets::task::{
    ExtractedTriplet, SENSE_MIN_TRIPLETS, TASKS, Triplets, TripletsInput, TripletsOutput,
    rule_triplets,
};
pub use triplets::{TripletsConfig, TripletsStage};
