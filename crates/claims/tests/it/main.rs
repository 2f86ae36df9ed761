//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-claims --test it`, one module with `--test it <module>::`.

mod hostile;
mod import;
mod no_claimreview;
mod parsers_proptest;
mod real_pages;
mod scrape;
