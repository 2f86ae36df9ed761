//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-web --test it`, one module with `--test it <module>::`.
//! `tests/http_logs.rs` stays its own binary: it installs a process-wide log capture.

mod hostile;
mod http;
mod web;
