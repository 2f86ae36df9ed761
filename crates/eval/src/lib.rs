//! Evaluation of models on noisy-retrieval benchmarks: a snapshot of ours or a seed release's own
//! files (RAGuard's CSV pair, CONF-FACT JSON, RARE's records), scored with the papers' tasks and
//! metrics, by a plain generator or one of two reference systems.
//!
//! Loaders ([`load`]) fill one in-memory shape ([`EvalData`]), counting bad rows instead of
//! failing. Each task family builds [`Ask`]s (a question, passages, the answer's form and a
//! prompting style) and hands them to a [`Generator`]: [`Plain`] (one `eval_answer` call each) or
//! a reference system ([`systems`]: Astute RAG, CounterRefine). Answers are parsed and judged
//! ([`answers`]: strict binary parsing, refusal detection, the two-stage answer judge) and scored
//! into [`TaskOutcome`]s: per-item [`Scored`] rows, metrics with seeded bootstrap intervals
//! ([`metrics`]), and problems counted by reason. [`raguard`] (zero-context, standard RAG at top
//! 1 and 5, oracle; retrieval precision, recall, NDCG, misleading retrieval recall), [`confact`]
//! (eleven methods with and without source credibility; accuracy and macro-F1) and [`rare_met`]
//! (the no-context probe, Table 3's rules, Table 4's robustness scores per pattern and domain)
//! are the families; [`evaluate`] runs those the data has items for; [`results`] turns the
//! outcome into `eval_predictions` and `metrics` rows, a printed table, and comparisons.
//!
//! Every model call goes through [`noisebench_llm::Llm`] (cache, limits, budget, call log). What
//! this crate is not: it reads and writes no files but the release formats its loaders read
//! (the binary reads snapshots and writes Parquet), and it is not a pipeline stage.
//!
//! # Modules
//!
//! Evaluation of models, not a stage (held to the stage crates' dependency rules all the same:
//! core, llm, text, index). `tasks()` in `lib.rs`: every LLM task it may call (each system's, the
//! answer judge, CONF-FACT's ensemble). `data.rs` (the in-memory tables every loader fills: claims,
//! documents, questions, chunks, bad rows, load notes), `load/` (the releases as published:
//! RAGuard's CSV pair or `claims.csv` alone; CONF-FACT's gzip'd pickles or JSON with its
//! credibility pickles joined by domain (`serde-pickle`, `flate2`); RARE's folders read as its
//! evaluator reads them, checkpoint files of concatenated objects, its
//! `<name>_retrieval_results.json` joined per question (`rare.rs`); file-level errors naming the
//! file and what its bytes look like; our snapshots from rows the binary read, `snapshot.rs`),
//! `generate.rs` (an `Ask`: question, passages, answer form, style, examples, retriever; the
//! `Generator` trait; the plain generator's `eval_answer` task and its offline reader), `systems/`
//! (Astute RAG and CounterRefine as generators), `answers.rs` (strict binary parsing,
//! normalisation, lexical match, refusal detection, the two-stage answer judge with the
//! `answer_judge` task), `metrics.rs` (accuracy, macro-F1, seeded percentile bootstrap;
//! precision/recall/NDCG at k are `noisebench_index::ranking`'s, re-exported), `raguard.rs`,
//! `confact.rs` (+ `confact/`), `rare_met.rs` (the three families' tasks, each returning
//! `TaskOutcome`s of scored items, metrics and counted problems), `run.rs` (`EvalConfig`,
//! `evaluate`), `closed_book.rs` (the quality card's closed-book check: each question asked with no
//! passage through `Plain`, judged by `judge_answers`; its `TASKS`, declared by the cli when a
//! pipeline publishes; `offline` tells the offline backend), `results.rs` (rows of
//! `eval_predictions` and `metrics`, the printed table, `--compare`). The binary's `eval.rs`
//! detects the format (by folder contents, name and magic bytes), prints the load summary, reads
//! snapshots, writes Parquet and `summary.json`; `main.rs` exits non-zero when no task scored an
//! item. `outcome.rs` (`TaskOutcome`: every item scored, the metrics with their intervals, the
//! counted problems), `confact/passages.rs` (passages with their source's background, BM25 over a
//! claim's passages, the credibility-aware rankings) and `confact/ensemble.rs` (the
//! `confact_ensemble` task), `systems/astute.rs` and `systems/counterrefine.rs` (each system's
//! tasks and offline rules) over `systems/steps.rs` (the step loop both run: one `run_batch` per
//! step over the asks still alive); CounterRefine by step under `counterrefine/`: `qtype.rs` (the
//! question's type), `draft.rs`, `retrieve.rs` (answer-conditioned queries), `refine.rs` (the
//! KEEP/REVISE gate) and `validate.rs` (the revision validator). Invariant: a bad input row is
//! skipped and counted with its reason and never stops a run; only a file that cannot be read is an
//! error.

pub mod answers;
pub mod closed_book;
pub mod confact;
pub mod data;
pub mod generate;
pub mod load;
pub mod metrics;
pub mod outcome;
pub mod raguard;
pub mod rare_met;
pub mod results;
pub mod run;
pub mod systems;

pub use answers::RefusalConfig;
pub use closed_book::{ClosedBookAnswer, ClosedBookItem, ask_closed_book};
pub use confact::ConfactConfig;
pub use data::{
    BadRow, Credibility, DocLabel, DocVariant, EvalChunk, EvalClaim, EvalData, EvalDocument,
    EvalQuestion, QueryVariant, RealRetrieval, SourceFormat,
};
pub use generate::{
    AnswerForm, Ask, Example, Generated, Generator, Passage, Plain, Retriever, Style,
};
pub use outcome::{MetricValue, Scored, TaskOutcome};
pub use raguard::RaguardConfig;
pub use rare_met::RareConfig;
pub use run::{EvalConfig, EvalError, Evaluation, evaluate};
pub use systems::{AstuteConfig, CounterRefineConfig, SystemsConfig};

/// Every LLM task the evaluation may call, whatever its configuration: each system's
/// (`systems::NAMES`), the answer judge and CONF-FACT's own ([`EvalConfig::tasks`] per system).
/// What the fuzz target iterates over; a task reaches it by being in its system's or module's
/// list.
pub fn tasks() -> Vec<noisebench_llm::TaskInfo> {
    let config = systems::SystemsConfig::default();
    let mut tasks: Vec<_> = systems::NAMES
        .iter()
        .filter_map(|name| systems::by_name(name, &config))
        .flat_map(|g| g.tasks())
        .chain([noisebench_llm::TaskInfo::of::<answers::AnswerJudge>()])
        .chain(confact::tasks())
        .collect();
    tasks.sort();
    tasks.dedup();
    tasks
}
