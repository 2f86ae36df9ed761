//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-web --test it`, one module with `--test it <module>::`.

mod hostile;
mod http;
mod http_logs;
mod web;
