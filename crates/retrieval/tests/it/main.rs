//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-retrieval --test it`, one module with `--test it <module>::`.

mod pruning;
mod stage;
mod user;
