//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-chunk --test it`, one module with `--test it <module>::`.

mod common;

mod edgar_live;
mod fixtures;
mod flat_tables;
mod hostile;
mod import;
mod properties;
mod rare_bugs;
