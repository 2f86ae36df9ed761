//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-kg --test it`, one module with `--test it <module>::`.

mod graph;
mod patterns;
mod sense;
mod triplets;
