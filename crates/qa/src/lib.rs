//! Questions from the knowledge graph's patterns (RARE 3.4, Appendix E and F).
//!
//! Three stages, each a thin shell over pure functions that tests and benches call directly:
//! `questions` (`questions`: one LLM call per pattern group, a prompt per pattern kind, then
//! deterministic checks, each failure a counted drop with its reason), `judge` (`qa-judge`:
//! an LLM judge scores every pair; pairs at or below the threshold in any dimension move to
//! `rejected_questions`), and `splits` (`splits`: train/test per pattern kind by a seeded hash
//! of the question id, so a refresh never moves a question). RARE's record format, and the
//! `export-rare` stage that writes it, are `noisebench-releases`'.
//!
//! What this crate is not: it mines no patterns (the `kg` crate does) and perturbs nothing
//! (the `perturb` crate does); it reads or writes no files itself; tables pass through the
//! runner.
//!
//! # Modules
//!
//! Questions from the graph's patterns, three stages over pure functions. `tasks.rs` (the
//! `qa_single`, `qa_multi`, `qa_judge` tasks and their offline rules); `checks.rs` (the text
//! checks, each a `Rejection` with its drop reason; `ChunkIndex`, the entity -> chunks index built
//! by one Aho-Corasick pass over every chunk's normalised text, for the negative-distractor check;
//! `named_entities`; `near_duplicates`); `questions.rs` (`QuestionsStage::new(llm)`: `prepare`
//! resolves patterns into prompt inputs and skips generic pivots before any call, `assemble` checks
//! the answers, `dedupe` drops near duplicates by text and embedding); `judge.rs`
//! (`JudgeStage::new(llm)`: kept questions, judgements, rejected questions); `splits.rs`
//! (`SplitsStage`: test/train by a seeded hash of the question id, so a refresh never moves a
//! question); `table_checks.rs` (the question tables' text rules as table checks, which the cli
//! adds to core's). Invariant: one question per pattern, its id the pattern's; a question's split
//! depends on its id alone.

mod checks;
mod judge;
mod questions;
mod splits;
mod table_checks;
mod tasks;

pub use judge::{JudgeConfig, JudgeStage};
pub use questions::{
    Corpus, Prompt, QuestionsConfig, QuestionsStage, assemble, dedupe, prepare, sample_toward_mix,
};
pub use splits::{SplitsConfig, SplitsStage, assign};
pub use table_checks::table_checks;
pub use tasks::{
    GENERATION_TASKS, JUDGE_TASKS, MultiHopPattern, QaMulti, QaMultiInput, QaOutput, QaSingle,
    QaSingleInput, SharedText, TripletText,
};
