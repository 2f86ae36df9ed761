//! The Hugging Face Hub as a home for published versions: `noisebench hub push` makes one
//! published version (`snapshots/<dataset>/<version>/`) one commit of a dataset repository,
//! tagged `v<version>`, and `hf://OWNER/NAME@v1.2.0` reads a version back for `eval` and
//! `verify`.
//!
//! Every call to the Hub goes through huggingface's maintained Rust client, the `hf-hub` crate
//! (1.x): `whoami`, repository existence and creation, `refs`, one `create_commit` of every
//! file (the client asks `preupload` which files are large, uploads those first through the
//! LFS batch endpoint and Xet when the Hub offers it, and only then posts the commit), tags,
//! and downloads (`resolve`). No step is done by hand. A server that offers no Xet transfer
//! (the tests' fake Hub) gets every file inline in the commit, which the client falls back to.
//!
//! - [`plan`]: the pure part: the files of a version, its content digest (what "the same
//!   version" means: the sha256 of the tables and exports the manifest hashes, not the
//!   manifest's bytes, whose `created_at` differs between two builds of the same data), the tag, `hf://`
//!   references, and what a push does given what the Hub holds ([`plan::decide`]).
//! - [`client`]: [`Hub`], the operations over `hf-hub`.
//!
//! A push is idempotent and resumable: a tag that exists with the same digest is skipped; with
//! another digest it is refused, naming both; a push stopped before its commit left nothing
//! (large files uploaded so far are content-addressed and not uploaded again); one stopped
//! between commit and tag is finished by tagging the commit `main` holds, so a version is one
//! commit however often it is pushed.
//!
//! The token is read from an environment variable (`HF_TOKEN` unless configured otherwise)
//! and handed to the client only: no error, log line or file of ours holds it.
//!
//! What this crate is not: it builds and changes no version (the snapshot crate does), it
//! deletes nothing on the Hub, and it is no mirror of the S3 store (`noisebench-store`).
//!
//! # Modules
//!
//! The Hugging Face Hub as a home for published versions, beside `store` on the floor above
//! `snapshot` (it depends on `snapshot` for the manifest, and on huggingface's `hf-hub` client for
//! every call to the Hub). `plan.rs` is the pure part: the files of a version (`VersionUpload`),
//! its content digest (the sha256 of the tables' and exports' hashes, so two builds of the same
//! data are the same version), the tag `v<version>`, `hf://OWNER/NAME@v1.2.0` references (`HubRef`)
//! and `decide`, what a push does given the tag's and `main`'s digests; `stale_files`, what the
//! repository has and the version lacks. `client.rs` (`Hub`): whoami, repository creation, refs,
//! one `create_commit` of every file and of the deletes of stale ones (the client uploads large
//! files before it commits), the tag, and `download` of a version into a folder renamed when
//! complete. `HubConfig` is `[publish.hub]`. The cli's `hub.rs` wires it to `hub push`,
//! `[publish.hub]` after `build-snapshot`/`refresh`, and `hf://` inputs of `eval` and `verify`; its
//! tests run against testkit's `FakeHub`. Invariant: a version is one commit and one tag on the
//! Hub, never replaced; the token is read from the environment and held by the client only.

pub mod client;
pub mod plan;

use std::path::PathBuf;

pub use client::{Hub, Pushed};
pub use plan::{HubRef, VersionUpload};

/// `[publish.hub]` in a pipeline file: push every version `build-snapshot` or `refresh`
/// publishes to this dataset repository.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HubConfig {
    /// The dataset repository, `OWNER/NAME` (created on the first push when missing).
    pub repo: String,
    /// Create the repository private (only when it does not exist yet).
    #[serde(default)]
    pub private: bool,
    /// The environment variable holding a token with write access. Its value is never printed,
    /// logged or written.
    #[serde(default = "default_token_env")]
    pub token_env: String,
    /// The Hub's address; unset: `HF_ENDPOINT`, else `https://huggingface.co`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

fn default_token_env() -> String {
    "HF_TOKEN".into()
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            repo: String::new(),
            private: false,
            token_env: default_token_env(),
            endpoint: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error("{}: {reason}", dir.display())]
    Version { dir: PathBuf, reason: String },
    #[error("`{reference}`: {reason}")]
    Reference { reference: String, reason: String },
    #[error(
        "no Hub token: set {variable} to a token with write access (huggingface.co/settings/tokens)"
    )]
    NoToken { variable: String },
    #[error(
        "{endpoint} refused the token in {variable} (401 unauthorized): check that it is valid and has write access"
    )]
    Unauthorized { endpoint: String, variable: String },
    #[error(
        "{repo}: tag {tag} already exists with other content (content digest on the Hub {remote}, \
         this version's {local}); a published version is never replaced: publish a new version"
    )]
    TagConflict {
        repo: String,
        tag: String,
        local: String,
        remote: String,
    },
    #[error("{reference}: no such version on the Hub")]
    NoSuchVersion { reference: String },
    #[error("{endpoint}: {what}: {source}")]
    Hub {
        endpoint: String,
        what: String,
        #[source]
        source: hf_hub::HFError,
    },
    #[error("{endpoint}: {reason}")]
    Protocol { endpoint: String, reason: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl HubError {
    fn hub(endpoint: &str, what: &str, source: hf_hub::HFError) -> HubError {
        HubError::Hub {
            endpoint: endpoint.to_string(),
            what: what.to_string(),
            source,
        }
    }
}
