//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-pipeline --test it`, one module with `--test it <module>::`.

mod published_checks;
mod runner;
mod table_io;
