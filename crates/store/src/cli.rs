//! `noisebench store ...`: the operations of this crate from the command line (the binary only
//! parses and prints; the work is here so it is tested without building the binary).

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::{Location, Published, Remote, StoreError};

#[derive(Debug, clap::Subcommand)]
pub enum StoreCommand {
    /// Upload a finished local snapshot version folder (`snapshots/<dataset>/<version>`) under
    /// REMOTE (`s3://bucket/prefix`): claimed first, manifest.json written last.
    Publish {
        /// The local version folder (`snapshots/<dataset>/<version>`).
        version_dir: PathBuf,
        /// Where to publish: `s3://bucket/prefix`.
        remote: String,
    },
    /// The versions of DATASET published under REMOTE (only those whose manifest exists).
    List {
        /// The store: `s3://bucket/prefix`.
        remote: String,
        /// The dataset's name (its `[snapshot] dataset`).
        dataset: String,
    },
    /// Download a published version (default: the latest) into `<to>/<dataset>/<version>` and
    /// verify it.
    Download {
        /// The store: `s3://bucket/prefix`.
        remote: String,
        /// The dataset's name (its `[snapshot] dataset`).
        dataset: String,
        /// The version to download (`1.2.0`); the latest when unset.
        #[arg(long)]
        version: Option<String>,
        /// The local folder of datasets to download into.
        #[arg(long, default_value = "snapshots")]
        to: PathBuf,
    },
    /// Upload a finished stage folder (`work/<pipeline>/<stage>`, stage.json last).
    Push {
        /// The local stage folder (`work/<pipeline>/<stage>`).
        stage_dir: PathBuf,
        /// Where to upload it: `s3://bucket/prefix/...`.
        remote: String,
    },
    /// Download a stage folder pushed to REMOTE into STAGE_DIR (stage.json read first).
    Pull {
        /// Where the stage folder was pushed: `s3://bucket/prefix/...`.
        remote: String,
        /// The local stage folder to write (`work/<pipeline>/<stage>`).
        stage_dir: PathBuf,
    },
}

fn open(url: &str) -> Result<Remote, StoreError> {
    Remote::open(&Location::parse(url)?)
}

/// Run one command; what to print.
pub fn run(command: StoreCommand) -> Result<String, StoreError> {
    let mut out = String::new();
    match command {
        StoreCommand::Publish {
            version_dir,
            remote,
        } => match crate::publish(&version_dir, &open(&remote)?)? {
            Published::Published {
                dataset,
                version,
                files,
                bytes,
            } => {
                let _ = writeln!(
                    out,
                    "published {dataset} {version} to {remote}: {files} files, {bytes} bytes"
                );
            }
            Published::AlreadyThere { dataset, version } => {
                let _ = writeln!(out, "{dataset} {version} is already published at {remote}");
            }
        },
        StoreCommand::List { remote, dataset } => {
            for v in crate::list_versions(&open(&remote)?, &dataset)? {
                let _ = writeln!(out, "{v}");
            }
        }
        StoreCommand::Download {
            remote,
            dataset,
            version,
            to,
        } => {
            let root = open(&remote)?;
            let version = match version {
                Some(v) => semver::Version::parse(&v).map_err(|e| StoreError::Invalid {
                    location: remote.clone(),
                    reason: format!("version `{v}`: {e}"),
                })?,
                None => crate::latest(&root, &dataset)?.ok_or_else(|| StoreError::Invalid {
                    location: format!("{remote}/{dataset}"),
                    reason: "no published version".into(),
                })?,
            };
            let dir = crate::download(&root, &dataset, &version, &to)?;
            let _ = writeln!(out, "downloaded and verified {}", dir.display());
        }
        StoreCommand::Push { stage_dir, remote } => {
            let t = crate::push_stage_dir(&stage_dir, &open(&remote)?)?;
            let _ = writeln!(
                out,
                "pushed {} to {remote}: {} files, {} bytes, {} stale removed",
                stage_dir.display(),
                t.files,
                t.bytes,
                t.removed
            );
        }
        StoreCommand::Pull { remote, stage_dir } => {
            let t = crate::pull_stage_dir(&open(&remote)?, &stage_dir)?;
            let _ = writeln!(
                out,
                "pulled {remote} into {}: {} files, {} bytes",
                stage_dir.display(),
                t.files,
                t.bytes
            );
        }
    }
    Ok(out)
}
