//! `report`: a published version's HTML report, written beside the version folder, never
//! inside it (published versions are immutable). What the page shows is read and aggregated by
//! `noisebench-report` (`report_data`); this module chooses the paths and writes the page.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use noisebench_core::DEFAULT_PER_STRATUM;
use noisebench_pipeline::atomic;
use noisebench_report::{EvalResults, ReportData};

/// The report's file name beside the version folder: `<version>.report.html`.
pub(crate) fn report_path(version_dir: &Path, version: &str) -> PathBuf {
    version_dir
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!("{version}.report.html"))
}

/// Write the report of the published version at `version_dir` to `out` (default
/// `snapshots/<dataset>/<version>.report.html`, beside the version folder), including the
/// evaluation results under `evals_dir` when given. Returns the path written.
pub fn write_report(
    version_dir: &Path,
    evals_dir: Option<&Path>,
    out: Option<&Path>,
) -> Result<PathBuf> {
    write_report_sampled(version_dir, evals_dir, out, DEFAULT_PER_STRATUM)
}

/// [`write_report`] with `per_stratum` sampled items per stratum (0: every item).
pub fn write_report_sampled(
    version_dir: &Path,
    evals_dir: Option<&Path>,
    out: Option<&Path>,
    per_stratum: usize,
) -> Result<PathBuf> {
    let data = report_data_sampled(version_dir, evals_dir, per_stratum)?;
    let path = match out {
        Some(p) => p.to_path_buf(),
        None => report_path(version_dir, &data.overview.version),
    };
    let page = noisebench_report::render(&data);
    atomic::write_atomic(&path, page.as_bytes()).with_context(|| path.display().to_string())?;
    Ok(path)
}

/// Everything the report shows about the version at `version_dir`, with the evaluation results
/// `noisebench eval` wrote under `evals_dir` (`<evals>/<dataset>@<version>/*/metrics.parquet`).
pub fn report_data(version_dir: &Path, evals_dir: Option<&Path>) -> Result<ReportData> {
    report_data_sampled(version_dir, evals_dir, DEFAULT_PER_STRATUM)
}

/// [`report_data`] with `per_stratum` sampled items per stratum.
pub(crate) fn report_data_sampled(
    version_dir: &Path,
    evals_dir: Option<&Path>,
    per_stratum: usize,
) -> Result<ReportData> {
    let evals = evals_dir.map(|dir| EvalResults {
        dir,
        metrics_file: crate::METRICS_FILE,
    });
    Ok(noisebench_report::report_data(
        version_dir,
        evals,
        per_stratum,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_goes_beside_the_version_folder() {
        assert_eq!(
            report_path(Path::new("snapshots/demo/1.2.0"), "1.2.0"),
            Path::new("snapshots/demo/1.2.0.report.html")
        );
    }
}
