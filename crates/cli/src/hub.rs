//! `hub push`, `[publish.hub]` and `hf://` inputs: the command line's side of
//! `noisebench-hub`, which does the work. A version's HTML report is written here (the report
//! is this crate's) before it is pushed beside the version's files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use noisebench_hub::{Hub, HubConfig, HubRef, VersionUpload};

use crate::report::report_path;

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

/// `hub pull`: a version published to `config.repo` (`version`, else the latest `v<semver>`
/// tag) into `snapshots/<its dataset>/<version>/`, checked by `verify` before it appears there.
/// A runner that starts empty pulls the last version first, so `refresh` diffs against it and
/// picks the next version number. A repository with no version yet pulls nothing (a first run).
pub fn hub_pull(
    root: &Path,
    snapshots_dir: &Path,
    config: &HubConfig,
    version: Option<&str>,
) -> Result<String> {
    let hub = Hub::anonymous_or_token(config)?;
    let versions = hub
        .versions(&config.repo)
        .with_context(|| format!("listing the versions of {}", config.repo))?;
    let wanted = match version {
        Some(v) => {
            let v = semver::Version::parse(v.trim_start_matches('v'))
                .with_context(|| format!("`{v}` is not a version (v1.2.0)"))?;
            if !versions.contains(&v) {
                anyhow::bail!(
                    "{} has no version v{v} (its versions: {})",
                    config.repo,
                    list(&versions)
                );
            }
            v
        }
        None => match versions.last() {
            Some(v) => v.clone(),
            None => {
                return Ok(format!(
                    "{} has no published version yet: nothing pulled",
                    config.repo
                ));
            }
        },
    };
    let (owner, name) = config
        .repo
        .split_once('/')
        .context("the repository is OWNER/NAME")?;
    let at = HubRef {
        owner: owner.into(),
        name: name.into(),
        revision: format!("v{wanted}"),
    };
    let downloaded = hub
        .download(&at, &hub_cache(root))
        .with_context(|| format!("downloading {at} from {}", hub.endpoint()))?;
    let manifest = noisebench_snapshot::Manifest::read(&downloaded).map_err(anyhow::Error::msg)?;
    let target = snapshots_dir
        .join(&manifest.dataset)
        .join(&manifest.version);
    if target.join("manifest.json").is_file() {
        return Ok(format!(
            "{} already holds v{wanted} of {}: nothing pulled",
            target.display(),
            config.repo
        ));
    }
    let report = noisebench_snapshot::verify(&downloaded);
    if !report.ok() {
        anyhow::bail!(
            "v{wanted} of {} fails verification: {}",
            config.repo,
            report.problems.join("; ")
        );
    }
    let staging = snapshots_dir
        .join(&manifest.dataset)
        .join(format!(".pull-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    copy_tree(&downloaded, &staging)?;
    std::fs::rename(&staging, &target)
        .with_context(|| format!("moving the pulled version to {}", target.display()))?;
    Ok(format!(
        "pulled v{wanted} of {} into {}",
        config.repo,
        target.display()
    ))
}

fn list(versions: &[semver::Version]) -> String {
    if versions.is_empty() {
        return "none".into();
    }
    let tags: Vec<String> = versions.iter().map(|v| format!("v{v}")).collect();
    tags.join(", ")
}

/// Copy the files of `from` to `to` (created), folders included.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else {
            std::fs::copy(entry.path(), &dest)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// The pipeline's `[publish.hub]`, when it has one. `build-snapshot` and `refresh` read it
/// before they run (so a mistake in it stops them before any work) and, after publishing or
/// finding nothing new, push the latest version with [`hub_push`]: a version already on the Hub
/// is skipped, so a run that published nothing pushes nothing, and one whose push failed is
/// finished by the next run.
pub fn configured_hub(path: &Path) -> Result<Option<HubConfig>> {
    let file = noisebench_pipeline::PipelineFile::load(path)
        .with_context(|| format!("pipeline {}", path.display()))?;
    let Some(table) = file.publish.and_then(|p| p.hub) else {
        return Ok(None);
    };
    let config: HubConfig = toml::Value::Table(table)
        .try_into()
        .with_context(|| format!("{}: [publish.hub]", path.display()))?;
    let parts: Vec<&str> = config.repo.split('/').collect();
    if parts.len() != 2 || parts.iter().any(|p| p.trim().is_empty()) {
        anyhow::bail!(
            "{}: [publish.hub] needs `repo = \"OWNER/NAME\"`{}",
            path.display(),
            if config.repo.is_empty() {
                String::new()
            } else {
                format!(", not `{}`", config.repo)
            }
        );
    }
    Ok(Some(config))
}

/// `check`'s line for `[publish.hub]`: where versions go and whether the token's variable is
/// set (its value is never read into the text).
pub fn describe(config: &HubConfig) -> String {
    let set = std::env::var_os(&config.token_env).is_some_and(|v| !v.is_empty());
    format!(
        "hub: pushes each published version to {}{} ({}); token from {} ({})\n",
        config.repo,
        if config.private { ", private" } else { "" },
        config
            .endpoint
            .clone()
            .or_else(|| std::env::var("HF_ENDPOINT").ok())
            .unwrap_or_else(|| "https://huggingface.co".into()),
        config.token_env,
        if set {
            "set"
        } else {
            "NOT SET: a push will fail"
        }
    )
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
        let path = dir.path().join("pipelines/p.toml");
        let write = |hub: &str| {
            std::fs::create_dir_all(dir.path().join("pipelines")).unwrap();
            std::fs::write(
                dir.path().join("pipelines/p.toml"),
                format!("[pipeline]\nname = \"p\"\n{hub}"),
            )
            .unwrap();
        };
        write("");
        assert_eq!(configured_hub(&path).unwrap(), None);
        write("[publish.hub]\nrepo = \"acme/d\"\nprivate = true\n");
        let config = configured_hub(&path).unwrap().unwrap();
        assert_eq!((config.repo.as_str(), config.private), ("acme/d", true));
        assert_eq!(config.token_env, "HF_TOKEN");
        write("[publish.hub]\nrepo = \"acme/d\"\ntokn_env = \"X\"\n");
        let err = format!("{:#}", configured_hub(&path).unwrap_err());
        assert!(err.contains("tokn_env"), "{err}");
        write("[publish.hub]\nprivate = true\n");
        let err = format!("{:#}", configured_hub(&path).unwrap_err());
        assert!(err.contains("repo"), "{err}");
        write("[publish.hub]\nrepo = \"demo\"\n");
        let err = format!("{:#}", configured_hub(&path).unwrap_err());
        assert!(
            err.contains("OWNER/NAME") && err.contains("`demo`"),
            "{err}"
        );
    }
}
