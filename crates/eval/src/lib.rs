//! Evaluation of models on noisy-retrieval benchmarks: a snapshot of ours or a seed release's own
//! files (RAGuard, CONF-FACT, RARE), the papers' tasks and metrics, and two reference systems.
//!
//! (crate documentation in progress)

pub mod answers;
pub mod confact;
pub mod data;
pub mod generate;
pub mod load;
pub mod metrics;
pub mod outcome;
pub mod systems;

pub use data::{
    BadRow, Credibility, DocLabel, DocVariant, EvalChunk, EvalClaim, EvalData, EvalDocument,
    EvalQuestion, QueryVariant, SourceFormat,
};
pub use generate::{
    AnswerForm, Ask, Example, Generated, Generator, Passage, Plain, Retriever, Style,
};
pub use outcome::{MetricValue, Scored, TaskOutcome};
