//! Object storage: snapshots, the LLM cache and stage folders on `s3://bucket/prefix`, so shards on
//! different machines share them.
//!
//! A [`Location`] is a local path or `s3://bucket/prefix`; [`Remote::open`] turns either into an
//! object store (the `object_store` crate; S3 settings from the `AWS_*` environment variables
//! only, never logged). On top of it:
//!
//! - [`snapshot`]: publish a finished local snapshot version, list the published versions and
//!   download one (checked with `noisebench_snapshot::verify`). S3 has no rename, so a publish
//!   first claims the version with a create-only put (`If-None-Match: *`) of
//!   `<dataset>/<version>/.claim.json`, uploads the files, and writes `manifest.json` last (also
//!   create-only). Readers trust only versions whose manifest exists; of two publishers of one
//!   version exactly one wins the claim and the other uploads nothing.
//! - [`stage`]: push a stage's output folder after it ran (`stage.json` written last) and pull it
//!   on another machine (`stage.json` read first), so a shard finds the merged upstream.
//! - [`archive`]: the web archive (content-addressed objects and an append-only index) synced
//!   additively, so a merge reads back the pages every shard fetched.
//! - [`llm_cache`]: a read-through, write-through layer under the LLM engine's local cache
//!   (`[llm.cache] remote = "s3://..."`).
//!
//! What this crate is not: it runs no stages and decides no versions (the snapshot crate does);
//! it never deletes a published version; it is no general sync tool (one writer per stage folder,
//! as the pipeline runs them).
//!
//! # Modules
//!
//! Object storage (`s3://bucket/prefix`, or a local folder) through the `object_store` crate, so
//! shards on different machines share snapshots, stage folders, the web archive and the LLM cache.
//! `location.rs` (`Location`: a local path or `s3://bucket/prefix`; any other scheme is an error
//! naming it), `remote.rs` (`Remote::open`: a location as an object store with blocking operations;
//! S3 settings from the `AWS_*` variables only, never logged), `snapshot.rs` (publish a finished
//! version: claim it with a create-only `.claim.json`, upload, write `manifest.json` last and
//! create-only; list the versions that have a manifest; download into a hidden folder, check it
//! with `noisebench-snapshot`'s verify, rename), `stage.rs` (push and pull a stage folder:
//! `stage.json` removed first and written last on a push, read first and written last on a pull;
//! `.push.json` lists the pushed files with their sha256 and size, so a pull fetches and checks
//! exactly those and a push removes only what an earlier push listed; never `shards/` or hidden
//! files), `archive.rs` (the web archive synced additively: content-addressed objects copied once,
//! the append-only index kept on the remote as create-only parts), `llm_cache.rs` (the LLM cache's
//! shared layer: `noisebench_llm::cache::RemoteCache` over a `Remote`, entries the local files'
//! bytes), `cli.rs` (the work of `noisebench store ...`, tested without the binary). Its tests run
//! against moto's S3 server on 127.0.0.1. Invariant: nothing on the remote is deleted by a publish
//! or overwritten; a version or a stage folder counts as there only once its last file
//! (`manifest.json`, `stage.json`) is.

pub mod archive;
pub mod cli;
pub mod llm_cache;
pub mod location;
pub mod remote;
pub mod snapshot;
pub mod stage;

use std::path::PathBuf;

pub use archive::{ArchiveSync, pull_archive, push_archive};
pub use llm_cache::install_llm_cache_remote;
pub use location::Location;
pub use remote::{Created, Entry, Remote};
pub use snapshot::{Published, download, latest, list_versions, publish};
pub use stage::{Transfer, pull_stage_dir, push_stage_dir};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{location}: {reason}")]
    Location { location: String, reason: String },
    #[error("{location}: {what}: {source}")]
    Store {
        location: String,
        what: String,
        #[source]
        source: object_store::Error,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Another publisher holds (or finished) this version with other content.
    #[error(
        "{location}: version {version} is already claimed by another publisher ({holder}); \
         publish a new version, or, if that publisher died without writing manifest.json, \
         delete its .claim.json"
    )]
    VersionTaken {
        location: String,
        version: String,
        holder: String,
    },
    #[error("{location}: {reason}")]
    Invalid { location: String, reason: String },
}

impl StoreError {
    fn store(location: &Location, what: &str, source: object_store::Error) -> StoreError {
        StoreError::Store {
            location: location.to_string(),
            what: what.to_string(),
            source,
        }
    }

    fn invalid(location: &Location, reason: impl Into<String>) -> StoreError {
        StoreError::Invalid {
            location: location.to_string(),
            reason: reason.into(),
        }
    }
}
