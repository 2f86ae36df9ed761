//! The crate's integration tests in one binary: `cargo test -p noisebench-hub --test it`, one
//! module with `--test it <module>::`. Every test talks to a fake Hub on 127.0.0.1
//! (`noisebench_testkit::FakeHub`), never to the internet.

mod common;

mod properties;
mod push;
mod read_back;
