//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-search --test it`, one module with `--test it <module>::`.

mod common;

mod corpus;
mod counter;
mod dense;
mod dump;
mod hostile;
mod live;
mod offline;
mod retriever;
mod run;
mod sense;
mod servers;
mod site_and_dates;
