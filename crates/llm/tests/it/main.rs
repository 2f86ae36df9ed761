//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-llm --test it`, one module with `--test it <module>::`.
//! `tests/secrets.rs` stays its own binary: it installs a process-wide log capture.

mod common;

mod batch_mode;
mod crash;
mod embeddings;
mod offline;
mod openai;
mod quote;
mod sense;
mod truncation;
