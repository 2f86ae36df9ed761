//! Robustness material for the report track's questions (RARE 5.1, 5.2, Appendix B, C.1, C.2).
//!
//! Two stages: `query` (`query-perturbations`: every question's query with typos, synonym
//! swaps, a grammar rewrite and an irrelevant detail) and `document` (`document-perturbations`:
//! each question's evidence chunks with the answer's sentences deleted, and back-translated
//! through French). The perturbation rules are pure functions
//! (`typos`, `synonyms`, `protect`, `similarity`, [`delete_answer`]) that the
//! stages, tests and benches call directly; the LLM tasks and their offline rules are in
//! `tasks`.
//!
//! What this crate is not: an evaluator (it writes perturbed inputs, it does not score a RAG
//! system on them), a spelling or grammar model, or a translator of its own: rewrites and
//! translations come from the LLM layer, similarities from its embedder; nor a retriever (the
//! `retrieval` stage, which searches with the perturbed queries, is `noisebench-retrieval`).
//!
//! # Modules
//!
//! Robustness material for the questions. `query.rs` (`QueryPerturbationsStage::new(llm)`),
//! `document.rs` (`DocumentPerturbationsStage::new(llm)`, `delete_answer`), over pure rules:
//! `protect.rs` (the tokens no perturbation may touch: numbers, number words, the question's
//! entities and names), `typos.rs` (QWERTY neighbours), `synonyms.rs` (the WordNet table in
//! `data/`, compiled in), `similarity.rs` (candidate selection by embedding similarity), `tasks.rs`
//! (`query_grammar`, `query_irrelevant`, `back_translate` and their offline rules). Randomness is
//! ChaCha8 seeded per question, kind and candidate. Invariant: numbers, the question's entities and
//! names are never altered; a rebuild writes the same bytes, and a question's rows do not depend on
//! the others.

mod document;
mod protect;
mod query;
mod similarity;
mod synonyms;
mod tasks;
mod typos;

pub use document::{DocumentPerturbationsConfig, DocumentPerturbationsStage, delete_answer};
pub use protect::{protected_mask, question_phrases};
pub use query::{QueryPerturbationsConfig, QueryPerturbationsStage, rule_candidates};
pub use synonyms::{Synonyms, word_level};
pub use tasks::{
    BackTranslate, BackTranslateInput, BackTranslation, DOCUMENT_TASKS, QUERY_TASKS, QueryGrammar,
    QueryIrrelevant, RewriteInput, Rewrites,
};
pub use typos::character_level;
