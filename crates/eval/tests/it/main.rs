//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-eval --test it`, one module with `--test it <module>::`.

mod answers;
mod confact;
mod loaders;
mod metrics;
mod raguard;
mod rare_met;
mod systems;
