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

/// No transparent huge pages for this process: mimalloc takes fresh pages for each stage's
/// tables, and with THP the kernel zeroes a whole 2 MiB page on the first touch of each. At RARE
/// scale (docs/performance.md, "RARE scale") a build spent about a twentieth of its time there; without them
/// it is that much faster at the same peak memory. The setting is the process's and is inherited
/// by the processes it starts; where the kernel refuses it, nothing changes.
pub fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    /// The kernel reports the process's THP switch in /proc/self/status (Linux 5.0 on).
    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_are_off_after_the_call() {
        super::no_huge_pages();
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with("THP_enabled:"))
            .expect("a kernel that reports THP_enabled");
        assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
    }
}
