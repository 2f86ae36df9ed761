//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-label --test it`, one module with `--test it <module>::`.

mod common;

mod export;
mod labels;
mod prefix_share;
mod review;
mod sense;
