//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-store --test it`, one module with `--test it <module>::`.

mod common;

mod s3;
mod secrets;
mod work_sync;
