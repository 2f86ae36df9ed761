//! The crate's integration tests in one binary (one link instead of one per file):
//! `cargo test -p noisebench-cli --test it`, one module with `--test it <module>::`.

mod reliability_common;
mod shared;

mod architecture;
mod budget;
mod croissant;
mod demo;
mod docs;
mod eval;
mod faults;
mod full_disk;
mod hub;
mod hub_refresh;
mod logging;
mod own_corpus;
mod quality;
mod quote;
mod real_llm;
mod refresh;
mod refresh_cost;
mod refresh_exit;
mod reliability_faults;
mod reliability_kills;
mod remote_shards;
mod report;
mod report_versions;
mod sense_summary;
mod shards;
mod slurm;
mod synthetic_reports;
mod task_models;
mod two_runs;
mod validate;
