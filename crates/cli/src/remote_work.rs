//! `--remote-work s3://bucket/prefix` (or `NOISEBENCH_REMOTE_WORK`): the work folder shared
//! through object storage, so the shards of a stage on different machines find their upstream
//! and a merge finds every part.
//!
//! The remote mirrors the repository root: a stage folder `work/<pipeline>/<stage>/` is at
//! `<remote>/work/<pipeline>/<stage>/`, a shard part at `.../<stage>/shards/<i>-of-<n>/`, the
//! web archive at `<remote>/work/archive/` (the archive's path under the root). Before a command
//! runs stages, every stage folder it needs is pulled when the remote has one (its `stage.json`
//! written) and the local folder lacks it or holds another `stage.json`; after, every stage
//! folder of the command whose `stage.json` differs from the remote one is pushed (a stage that
//! ran, a shard part, a merged stage; never the `shards/` inside a stage folder, which are
//! parts of their own). The archive is synced additively both ways. Transfers go through
//! `noisebench_store` (`stage.json` last on a push, first on a pull).
//!
//! What this is not: the LLM cache (`[llm.cache] remote`, shared on its own) nor snapshots
//! (`noisebench store publish`); no lock across machines (one writer per stage folder, as a
//! scheduler's steps run them); the pipeline-level call log and run summary stay local.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use noisebench_pipeline::runner::{SHARDS_DIR, STAGE_RECORD};
use noisebench_pipeline::{PipelineFile, Plan};
use noisebench_store::{ArchiveSync, Location, Remote, Transfer};

use crate::layers::DEFAULT_ARCHIVE_DIR;

/// The environment variable read when `--remote-work` is not given.
pub(crate) const REMOTE_WORK_ENV: &str = "NOISEBENCH_REMOTE_WORK";

/// The shared work folder's location.
#[derive(Debug, Clone)]
pub struct RemoteWork {
    pub location: Location,
}

/// What one command moved, printed on stderr as one line.
#[derive(Debug, Clone, Default)]
pub(crate) struct Moved {
    pub folders: usize,
    pub files: usize,
    pub bytes: u64,
    pub archive_objects: usize,
    pub archive_lines: usize,
    pub seconds: f64,
}

impl Moved {
    fn add(&mut self, t: Transfer) {
        self.folders += 1;
        self.files += t.files;
        self.bytes += t.bytes;
    }

    fn add_archive(&mut self, a: ArchiveSync) {
        self.archive_objects += a.objects;
        self.archive_lines += a.lines;
        self.bytes += a.bytes;
    }

    /// `pulled 3 stage folders (14 files, 210 KB), 0 archive objects in 0.4 s`
    pub fn render(&self, verb: &str) -> String {
        format!(
            "{verb} {} stage folders ({} files), {} archive objects and {} index lines: {} bytes in {:.2} s",
            self.folders,
            self.files,
            self.archive_objects,
            self.archive_lines,
            self.bytes,
            self.seconds
        )
    }
}

impl RemoteWork {
    /// `--remote-work`'s value, else `NOISEBENCH_REMOTE_WORK` (empty: unset); `None` when
    /// neither is given.
    pub fn from_option(given: Option<String>) -> Result<Option<RemoteWork>> {
        let text = given.or_else(|| {
            std::env::var(REMOTE_WORK_ENV)
                .ok()
                .filter(|v| !v.trim().is_empty())
        });
        text.map(|t| {
            Location::parse(t.trim())
                .map(|location| RemoteWork { location })
                .with_context(|| format!("--remote-work / {REMOTE_WORK_ENV}"))
        })
        .transpose()
    }

    fn open(&self, key: &str) -> Result<Remote> {
        Ok(Remote::open(&self.location.join(key))?)
    }

    /// Pull a stage folder (or shard part) when the remote one is finished and its `stage.json`
    /// differs from the local one; `None` when nothing was pulled.
    pub(crate) fn pull_folder(&self, key: &str, local: &Path) -> Result<Option<Transfer>> {
        let remote = self.open(key)?;
        let Some(there) = remote.get(STAGE_RECORD)? else {
            return Ok(None);
        };
        if std::fs::read(local.join(STAGE_RECORD)).ok().as_deref() == Some(&there[..]) {
            return Ok(None);
        }
        Ok(Some(noisebench_store::pull_stage_dir(&remote, local)?))
    }

    /// Push a finished stage folder (or shard part) whose `stage.json` differs from the remote
    /// one; `None` when nothing was pushed (unfinished locally, or the same there).
    pub(crate) fn push_folder(&self, local: &Path, key: &str) -> Result<Option<Transfer>> {
        let Ok(here) = std::fs::read(local.join(STAGE_RECORD)) else {
            return Ok(None);
        };
        let remote = self.open(key)?;
        if remote.get(STAGE_RECORD)?.as_deref() == Some(&here[..]) {
            return Ok(None);
        }
        Ok(Some(noisebench_store::push_stage_dir(local, &remote)?))
    }

    /// Pull what the stages need: the folders of `stages` (ids) of the pipeline, and the shard
    /// parts `parts` (`<stage>/shards/<i>-of-<n>`).
    pub(crate) fn pull(
        &self,
        work_dir: &Path,
        pipeline: &str,
        folders: &[String],
    ) -> Result<Moved> {
        let started = Instant::now();
        let mut moved = Moved::default();
        for folder in folders {
            let local = work_dir.join(pipeline).join(folder);
            if let Some(t) = self.pull_folder(&work_key(pipeline, folder), &local)? {
                moved.add(t);
            }
        }
        moved.seconds = started.elapsed().as_secs_f64();
        Ok(moved)
    }

    /// Push the folders (stage ids or shard parts) that differ from the remote.
    pub(crate) fn push(
        &self,
        work_dir: &Path,
        pipeline: &str,
        folders: &[String],
    ) -> Result<Moved> {
        let started = Instant::now();
        let mut moved = Moved::default();
        for folder in folders {
            let local = work_dir.join(pipeline).join(folder);
            if let Some(t) = self.push_folder(&local, &work_key(pipeline, folder))? {
                moved.add(t);
            }
        }
        moved.seconds = started.elapsed().as_secs_f64();
        Ok(moved)
    }

    /// Pull the web archive of a pipeline file whose web layer is live (replay keeps none).
    pub(crate) fn pull_archive(&self, file: &PipelineFile, root: &Path) -> Result<Moved> {
        let started = Instant::now();
        let mut moved = Moved::default();
        if let Some((dir, key)) = archive_of(file, root)? {
            moved.add_archive(noisebench_store::pull_archive(&self.open(&key)?, &dir)?);
        }
        moved.seconds = started.elapsed().as_secs_f64();
        Ok(moved)
    }

    /// Push the web archive's new objects and index lines.
    pub(crate) fn push_archive(&self, file: &PipelineFile, root: &Path) -> Result<Moved> {
        let started = Instant::now();
        let mut moved = Moved::default();
        if let Some((dir, key)) = archive_of(file, root)? {
            moved.add_archive(noisebench_store::push_archive(&dir, &self.open(&key)?)?);
        }
        moved.seconds = started.elapsed().as_secs_f64();
        Ok(moved)
    }
}

/// `work/<pipeline>/<folder>`: the remote key of a stage folder or shard part.
pub(crate) fn work_key(pipeline: &str, folder: &str) -> String {
    format!("work/{pipeline}/{folder}")
}

/// `<stage>/shards/<i>-of-<n>`: a shard part's folder under the pipeline's work folder.
pub(crate) fn shard_folder(stage: &str, shard: noisebench_core::Shard) -> String {
    format!("{stage}/{SHARDS_DIR}/{}", shard.dir_name())
}

/// The stage ids a command on `only` (or the whole plan) runs over, in plan order.
pub(crate) fn stages_of(plan: &Plan, only: Option<&str>) -> Result<Vec<String>> {
    Ok(match only {
        Some(id) => plan.upstream_of(id)?.iter().map(|s| s.id.clone()).collect(),
        None => plan.stages.iter().map(|s| s.id.clone()).collect(),
    })
}

/// The local archive folder of a pipeline file and its remote key (its path under the root, or
/// `work/archive` when it lies elsewhere); `None` when the web layer replays (no archive).
pub(crate) fn archive_of(file: &PipelineFile, root: &Path) -> Result<Option<(PathBuf, String)>> {
    let web = match &file.web {
        Some(t) => serde_json::to_value(t).context("[web]")?,
        None => serde_json::Value::Null,
    };
    if web.get("mode").and_then(|m| m.as_str()) == Some("replay") {
        return Ok(None);
    }
    let dir = PathBuf::from(
        web.get("archive_dir")
            .and_then(|d| d.as_str())
            .unwrap_or(DEFAULT_ARCHIVE_DIR),
    );
    let inside = dir.is_relative()
        && dir
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    let key = if inside {
        dir.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/")
    } else {
        DEFAULT_ARCHIVE_DIR.to_string()
    };
    let dir = if dir.is_relative() {
        root.join(dir)
    } else {
        dir
    };
    Ok(Some((dir, key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_mirror_the_work_folder() {
        assert_eq!(work_key("demo", "labels"), "work/demo/labels");
        let shard = noisebench_core::Shard { index: 1, count: 2 };
        assert_eq!(shard_folder("labels", shard), "labels/shards/1-of-2");
    }

    fn file(web: &str) -> PipelineFile {
        PipelineFile::parse(&format!("[pipeline]\nname = \"p\"\n{web}"), "test").unwrap()
    }

    #[test]
    fn the_archive_is_the_live_web_layers_and_mirrors_its_path() {
        let root = Path::new("/repo");
        assert!(
            archive_of(&file("[web]\nmode = \"replay\"\n"), root)
                .unwrap()
                .is_none()
        );
        assert_eq!(
            archive_of(&file(""), root).unwrap(),
            Some((root.join("work/archive"), "work/archive".to_string()))
        );
        assert_eq!(
            archive_of(&file("[web]\narchive_dir = \"data/pages\"\n"), root).unwrap(),
            Some((root.join("data/pages"), "data/pages".to_string()))
        );
        assert_eq!(
            archive_of(&file("[web]\narchive_dir = \"/mnt/pages\"\n"), root).unwrap(),
            Some((PathBuf::from("/mnt/pages"), "work/archive".to_string()))
        );
    }

    #[test]
    fn the_location_comes_from_the_option_else_nowhere() {
        let given = RemoteWork::from_option(Some("s3://bucket/run".into()))
            .unwrap()
            .unwrap();
        assert_eq!(given.location.to_string(), "s3://bucket/run");
        assert!(RemoteWork::from_option(Some("s4://bucket".into())).is_err());
    }
}
