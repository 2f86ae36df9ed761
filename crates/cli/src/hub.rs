//! `hub push`, `[publish.hub]` and `hf://` inputs: the command line's side of
//! `noisebench-hub`, which does the work. A version's HTML report is written here (the report
//! is this crate's) before it is pushed beside the version's files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use noisebench_hub::{Hub, HubConfig, HubRef, VersionUpload};

use crate::report::report_path;
use crate::workspace::Workspace;

/// Where `hf://` versions are downloaded: `work/hub/<owner>/<name>/<version>/`.
pub fn hub_cache(root: &Path) -> PathBuf {
    root.join("work").join("hub")
}

/// Push the published version at `snapshot` (a version folder, or a dataset folder: its latest
/// version) as `config` says; the line to print.
pub fn hub_push(snapshot: &Path, config: &HubConfig, private: bool) -> Result<String> {
    let dir = crate::resolve_snapshot(snapshot)?;
    let manifest = noisebench_snapshot::Manifest::read(&dir).map_err(anyhow::Error::msg)?;
    let report = report_path(&dir, &manifest.version);
    if !report.is_file() {
        crate::write_report(&dir, None, Some(&report))
            .with_context(|| format!("writing the report of {}", dir.display()))?;
    }
    let upload = VersionUpload::read(&dir, Some(&report))?;
    let hub = Hub::connect(config)?;
    let pushed = hub
        .push(&upload, &config.repo, private || config.private)
        .with_context(|| format!("pushing {} to {}", dir.display(), config.repo))?;
    Ok(pushed.to_string())
}

/// The pipeline's `[publish.hub]`, when it has one. `build-snapshot` and `refresh` read it
/// before they run (so a mistake in it stops them before any work) and, after publishing or
/// finding nothing new, push the latest version with [`hub_push`]: a version already on the Hub
/// is skipped, so a run that published nothing pushes nothing, and one whose push failed is
/// finished by the next run.
pub fn configured_hub(ws: &Workspace, pipeline: &str) -> Result<Option<HubConfig>> {
    let path = ws.pipeline_path(pipeline);
    let file = noisebench_pipeline::PipelineFile::load(&path)
        .with_context(|| format!("pipeline {}", path.display()))?;
    let Some(table) = file.publish.and_then(|p| p.hub) else {
        return Ok(None);
    };
    let config: HubConfig = toml::Value::Table(table)
        .try_into()
        .with_context(|| format!("{}: [publish.hub]", path.display()))?;
    if config.repo.is_empty() {
        anyhow::bail!(
            "{}: [publish.hub] needs `repo = \"OWNER/NAME\"`",
            path.display()
        );
    }
    Ok(Some(config))
}

/// An input of `eval` or `verify`: an `hf://OWNER/NAME@v1.2.0` reference is downloaded (once)
/// under [`hub_cache`] and its folder returned; anything else is returned as it is.
pub fn localize(root: &Path, input: &Path) -> Result<PathBuf> {
    let Some(s) = input.to_str().filter(|s| HubRef::is_hub(s)) else {
        return Ok(input.to_path_buf());
    };
    let at = HubRef::parse(s)?;
    let hub = Hub::anonymous_or_token(&HubConfig::default())?;
    let dir = hub
        .download(&at, &hub_cache(root))
        .with_context(|| format!("downloading {at} from {}", hub.endpoint()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_input_is_left_as_it_is_and_a_bad_reference_refused() {
        let root = Path::new("/nowhere");
        assert_eq!(
            localize(root, Path::new("snapshots/demo")).unwrap(),
            Path::new("snapshots/demo")
        );
        let err = localize(root, Path::new("hf://only-owner")).unwrap_err();
        assert!(err.to_string().contains("OWNER/NAME"), "{err}");
    }

    #[test]
    fn publish_hub_is_read_and_a_mistake_in_it_named() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path(), std::sync::Arc::new(noisebench_core::NoProgress));
        let write = |hub: &str| {
            std::fs::create_dir_all(dir.path().join("pipelines")).unwrap();
            std::fs::write(
                dir.path().join("pipelines/p.toml"),
                format!("[pipeline]\nname = \"p\"\n{hub}"),
            )
            .unwrap();
        };
        write("");
        assert_eq!(configured_hub(&ws, "p").unwrap(), None);
        write("[publish.hub]\nrepo = \"acme/d\"\nprivate = true\n");
        let config = configured_hub(&ws, "p").unwrap().unwrap();
        assert_eq!((config.repo.as_str(), config.private), ("acme/d", true));
        assert_eq!(config.token_env, "HF_TOKEN");
        write("[publish.hub]\nrepo = \"acme/d\"\ntokn_env = \"X\"\n");
        let err = format!("{:#}", configured_hub(&ws, "p").unwrap_err());
        assert!(err.contains("tokn_env"), "{err}");
        write("[publish.hub]\nprivate = true\n");
        let err = format!("{:#}", configured_hub(&ws, "p").unwrap_err());
        assert!(err.contains("repo"), "{err}");
    }
}
