//! The `noisebench` command line: registers every stage with the runner and wires the commands
//! (`build-snapshot`, `run`, `verify`, `validate`, `diff`, `inspect`, `export`, `eval`,
//! `report`, `schemas`) to the library crates.
//!
//! It builds one [`Llm`](noisebench_llm::Llm) from the pipeline file's `[llm]` table and one
//! [`Web`](noisebench_web::Web) from its `[web]` table and hands them to the stages that need them,
//! so every stage of a run shares one cache, one set of rate limits, one budget and one call log.
//!
//! Modules by concept: `layers` (the shared layers), `registry` (the stage kinds, one line each,
//! and the table checks beyond core's), `workspace`
//! (where a run reads and writes; loading, checking and running a pipeline), `build`
//! (`build-snapshot`/`refresh`: run, then publish with provenance, facts and exports), `inspect`,
//! `export`, `validate` (the dataset's own rules over a published snapshot), `eval` (a model on
//! a snapshot or a seed release, through the `eval` crate; results under `evals/`), `report` (a
//! version's self-contained HTML report, beside the version folder: the `report` crate
//! reads and aggregates the version, this module writes the page), `quote` (what a build will
//! ask its models and cost, before any call; and the quote beside the build's actuals),
//! `reference` (the configuration reference `schemas` writes), `cli_reference` (the
//! command-line reference it writes from the binary's clap definitions), `drop_reference` (the
//! reference of drop reasons it writes from the web and LLM layers' codes), `keys` (the key
//! variables a pipeline names, all checked before a run), `remote_work`
//! (`--remote-work`: the work folder shared through object storage).
//!
//! What this crate is not: it holds no stage logic. Its library half exists so the end-to-end tests
//! can drive the same code paths as the binary.
//!
//! # Modules
//!
//! The command line (`main.rs`: `build-snapshot`, `refresh`, `check`, `quote`, `run` (also `--shard
//! i/n`), `merge`, `plan`, `verify`, `validate`, `diff`, `quality`, `inspect`, `export`, `eval`,
//! `report`, `generate-reports`, `store`, `hub`, `schemas`; the binary allocates with mimalloc,
//! since rows read from Parquet are millions of small strings, and turns transparent huge pages off
//! for itself and has freed memory returned at once, `memory_settings`) over a library the end-to-end tests drive, one module per concern.
//! `layers.rs` builds the run's one `Llm` and one `Web` from the pipeline file's `[llm]` and
//! `[web]` tables and `registry.rs` registers every stage kind with them (`registry()`, one line
//! per kind, and `table_checks()`), so every stage of a run shares one cache, one set of rate
//! limits, one budget and one call log. `workspace.rs` knows where a run reads and writes, loads
//! and checks a pipeline and runs it, giving the `Llm` to the runner as its `CallLog`. `build.rs`
//! runs a pipeline and publishes its snapshot: the provenance (the LLM layer's fingerprint and call
//! totals, the web mode, every stage's facts, the fetch window), the side files stages declared as
//! exports, and no version at all while items are left to retry, unless `--allow-partial`, or while
//! a gate or a table check fails (during the run or over the tables to publish), unless
//! `--allow-degraded`; `report_track_line` says when the report track produced nothing.
//! `inspect.rs` shows a stage's tables or every row of a run naming an id; `export.rs` hands a
//! published snapshot's tables to `noisebench-releases`' `export` (the format by name from
//! `formats()`); `validate.rs` runs the tables' declared checks (core's and
//! `layers::table_checks()`, the ones a build runs) on a published snapshot; `eval.rs` detects an
//! evaluation's input format, reads a snapshot's tables for the `eval` crate, builds its `Llm` from
//! the evaluation file's `[llm]`, and writes `evals/<benchmark>/<model>/`. `reference.rs` is the
//! configuration reference `schemas` writes: each registered stage's `config_schema()` (with the
//! model tasks it reports, `x-model-tasks`) and the `[llm]`/`[web]` types' schemas to
//! `schemas/config/`, and `docs/configuration.md` rendered from those schemas (nested tables as
//! dotted paths); `cli_reference.rs` renders `docs/cli.md` from the binary's clap definitions and
//! `drop_reference.rs` `docs/drop-reasons.md` from the web and LLM layers' `DROP_CODES` (`schemas`
//! writes both too). `keys.rs` checks every key variable a pipeline names (the `[llm]` models' and
//! each stage's `secret_variables`) before a run and names every unset one at once. `scale.rs`:
//! `plan --emit slurm|k8s`, the plan's steps (`steps`: shard arrays and merges for per-item stages,
//! one run for the rest, a publish last) rendered as Slurm batch scripts with a `submit.sh`
//! chaining them with `--dependency=afterok`, or as Kubernetes Jobs (Indexed for shards) with an
//! `apply.sh` that waits for each. `remote_work.rs`: `--remote-work s3://...` (or
//! `NOISEBENCH_REMOTE_WORK`), the work folder shared through object storage: before a command runs
//! stages it pulls the stage folders it needs that the remote has finished, after it pushes those
//! whose `stage.json` changed (never a stage's `shards/`, which are parts of their own), and it
//! syncs the web archive additively both ways (`noisebench-store` does the transfers). `report.rs`
//! writes a version's report page (`noisebench-report` reads and aggregates its data). `hub.rs`:
//! `hub push` (the version's report written first), `[publish.hub]` read before
//! `build-snapshot`/`refresh` run and pushed after, and `hf://OWNER/NAME@v1.2.0` inputs of `eval`
//! and `verify` downloaded under `work/hub/` (`noisebench-hub` does the work). `quality.rs` finds
//! the tables a build is about to publish (`snapshot_tables`, whose questions `quote` also asks
//! closed-book) and reads them, or a published version's, for `noisebench-quality` (the card and
//! its gates before publishing; `noisebench quality`). `quote.rs`: `noisebench quote` (the pipeline
//! run in a scratch copy of its work folder with the LLM layer in quote mode, then priced per stage
//! and task), the quote a build makes first and refuses to start over (`max_cost`), and the quote
//! set beside what the build used (`QuoteVsActual`: run summary, manifest, report). Invariant: the
//! binary only parses arguments and prints; the work is in the library the end-to-end tests drive.

mod build;
mod cli_reference;
mod drop_reference;
mod eval;
mod export;
pub mod hub;
mod inspect;
pub mod keys;
mod layers;
mod quality;
pub mod quote;
mod reference;
mod registry;
pub mod remote_work;
mod report;
pub mod scale;
mod validate;
mod workspace;

use std::path::Path;

use anyhow::{Context, Result};
use noisebench_core::TableKind;

pub use build::{Built, LlmTotals, SenseShare, Stopped, TaskShare, build_snapshot, code_version};
pub use cli_reference::render_cli_reference;
pub use drop_reference::render_drop_reasons;
pub use eval::{
    CALLS_FILE, EvalRequest, EvalRun, METRICS_FILE, PREDICTIONS_FILE, RESULTS_FILE, SUMMARY_FILE,
    compare_evals, load_snapshot, run_eval,
};
pub use export::{Exported, export_snapshot, resolve_snapshot};
pub use inspect::{inspect_id, inspect_stage};
pub use layers::{Layers, LlmOverrides};
pub use quality::{closed_book, quality_moves, quality_text, version_quality};
pub use quote::{Quote, QuoteRow, QuoteVsActual, quote};
pub use reference::{config_schemas, render_markdown, write_config_reference};
pub use registry::{registry, table_checks};
pub use report::{report_data, write_report, write_report_sampled};
pub use validate::{ValidationReport, validate_snapshot};
pub use workspace::{Loaded, Workspace, check};

/// Write `schemas/<table>.json` for every table.
pub fn write_schemas(dir: &Path) -> Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    for kind in TableKind::ALL {
        let path = dir.join(format!("{}.json", kind.name()));
        let json = serde_json::to_string_pretty(&kind.schema())? + "\n";
        std::fs::write(&path, json).with_context(|| path.display().to_string())?;
    }
    Ok(TableKind::ALL.len())
}

/// How the `noisebench` binary (and the benches that measure it) uses memory: no transparent
/// huge pages, freed memory kept [`PURGE_DELAY_MS`] for reuse, and everything freed returned to
/// the system at each step's end (`noisebench_core::memory::release`).
pub fn memory_settings() {
    no_huge_pages();
    purge_after(PURGE_DELAY_MS);
    noisebench_core::memory::on_release(release_freed);
}

/// No transparent huge pages for this process: mimalloc takes fresh pages for each stage's
/// tables, and with THP the kernel zeroes a whole 2 MiB page on the first touch of each. At RARE
/// scale (docs/performance.md, "RARE scale") a build spent about a twentieth of its time there; without them
/// it is that much faster at the same peak memory. The setting is the process's and is inherited
/// by the processes it starts; where the kernel refuses it, nothing changes.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (v2 and v3 alike; `libmimalloc-sys`
/// names no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory stays with the allocator before it goes back to the system, in ms.
/// Returned at once (0), every page a stage frees and then allocates again is faulted in and
/// zeroed anew by the kernel (docs/performance.md, "RARE scale"); kept 100 ms, a stage's
/// batches reuse them. What a step leaves freed goes back at its end
/// (`noisebench_core::memory::release`).
pub const PURGE_DELAY_MS: std::os::raw::c_long = 100;

/// Freed memory goes back to the system `ms` after it is freed (at a later allocation), or at
/// [`release_freed`]. A `MIMALLOC_PURGE_DELAY` set in the environment is mimalloc's own setting
/// and is left as set. Has no effect where mimalloc is not the allocator.
fn purge_after(ms: std::os::raw::c_long) {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: mi_option_set stores an integer option; any thread may call it at any time.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ms) }
}

/// Everything freed so far goes back to the system. Threads that freed memory and then sit idle
/// (a stage's parallel workers once it ends, polars' readers) would otherwise keep it into the
/// next step, whose own memory comes on top (at RARE scale the quality card once ended with
/// 1.2 GB freed but still resident). Each of polars' threads collects its own heap, then this
/// thread collects its own and purges what every thread has left.
fn release_freed() {
    // SAFETY: mi_collect frees and purges the calling thread's unused pages; any thread may
    // call it at any time.
    noisebench_pipeline::table_io::on_each_reader_thread(|| unsafe {
        libmimalloc_sys::mi_collect(true)
    });
    // SAFETY: as above.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[cfg(test)]
mod tests {
    /// The unit tests allocate as the binary does, so the allocator's settings are tested as set.
    #[global_allocator]
    static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

    /// This process's resident memory, in MB.
    #[cfg(target_os = "linux")]
    fn resident_mb() -> f64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let kb: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        kb / 1024.0
    }

    /// 400 MB in 4 million short strings, as rows read from Parquet are, allocated and freed.
    fn allocate_and_free() {
        let rows: Vec<String> = (0..4_000_000).map(|i| format!("{i:>90}")).collect();
        assert_eq!(rows.len(), 4_000_000);
        drop(rows);
    }

    /// Threads that free what they allocated and then sit idle (a stage's parallel workers once
    /// it ends, polars' readers) leave no freed memory resident once the step's end releases it
    /// (without the release, 285 MB of the 400 MB stayed resident here).
    #[cfg(target_os = "linux")]
    #[test]
    fn memory_freed_by_threads_that_then_idle_leaves_the_process_at_release() {
        super::memory_settings();
        let before = resident_mb();
        let (freed, wait) = std::sync::mpsc::channel();
        let (release, idle) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            allocate_and_free();
            freed.send(()).unwrap();
            idle.recv().unwrap();
        });
        wait.recv().unwrap();
        noisebench_pipeline::table_io::on_each_reader_thread(allocate_and_free);
        noisebench_core::memory::release();
        let after = resident_mb();
        release.send(()).unwrap();
        worker.join().unwrap();
        assert!(
            after - before < 100.0,
            "{:.0} MB resident after the threads freed their 400 MB each ({before:.0} MB before)",
            after - before
        );
    }

    /// The kernel reports the process's THP switch in /proc/self/status (Linux 5.0 on).
    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_are_off_after_the_call() {
        super::memory_settings();
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with("THP_enabled:"))
            .expect("a kernel that reports THP_enabled");
        assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
    }
}
