//! The Hub operations, through huggingface's `hf-hub` client: who the token belongs to,
//! repository creation, refs and tags, one commit of many files, downloads. Each public method
//! blocks on a runtime of its own, so the command line calls it like the store crate's.

use std::path::{Path, PathBuf};

use hf_hub::repository::CommitOperation;
use hf_hub::{HFClient, HFError, HFRepository, RepoTypeDataset};
use noisebench_snapshot::{MANIFEST, Manifest};

use crate::plan::{
    Action, HubRef, RemoteState, VersionUpload, content_digest, decide, stale_files,
};
use crate::{HubConfig, HubError};

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// One new commit holding every file of the version, tagged.
    Committed {
        repo: String,
        tag: String,
        commit: String,
        files: usize,
        bytes: u64,
        created_repo: bool,
    },
    /// The version was already committed (a push stopped before its tag): only tagged.
    Tagged {
        repo: String,
        tag: String,
        commit: String,
    },
    /// The tag exists with the same content digest.
    AlreadyThere { repo: String, tag: String },
}

impl std::fmt::Display for Pushed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pushed::Committed {
                repo,
                tag,
                commit,
                files,
                bytes,
                created_repo,
            } => {
                if *created_repo {
                    write!(f, "created dataset repository {repo}; ")?;
                }
                write!(
                    f,
                    "pushed {tag} to {repo}: {files} files, {bytes} bytes in commit {commit}"
                )
            }
            Pushed::Tagged { repo, tag, commit } => write!(
                f,
                "{repo}: the version was already committed ({commit}) but not tagged; tagged it {tag}"
            ),
            Pushed::AlreadyThere { repo, tag } => write!(
                f,
                "{repo} already has {tag} with the same content: nothing pushed"
            ),
        }
    }
}

/// A connection to the Hub (or a server speaking its API) with the token of [`HubConfig`].
pub struct Hub {
    client: HFClient,
    endpoint: String,
    token_env: String,
    rt: tokio::runtime::Runtime,
}

impl Hub {
    /// Read the token from the variable the configuration names (`HF_TOKEN` by default). The
    /// token is handed to the client and kept nowhere else: no message of this crate holds it.
    pub fn connect(config: &HubConfig) -> Result<Hub, HubError> {
        let token = std::env::var(&config.token_env)
            .ok()
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| HubError::NoToken {
                variable: config.token_env.clone(),
            })?;
        Self::build(config, Some(token))
    }

    /// A connection without a token, for public repositories (read-back): the token variable
    /// is used when set.
    pub fn anonymous_or_token(config: &HubConfig) -> Result<Hub, HubError> {
        let token = std::env::var(&config.token_env)
            .ok()
            .filter(|t| !t.trim().is_empty());
        Self::build(config, token)
    }

    fn build(config: &HubConfig, token: Option<String>) -> Result<Hub, HubError> {
        let endpoint = config
            .endpoint
            .clone()
            .or_else(|| std::env::var("HF_ENDPOINT").ok())
            .unwrap_or_else(|| "https://huggingface.co".into());
        let mut builder = HFClient::builder()
            .endpoint(endpoint.clone())
            .user_agent(format!("noisebench/{}", env!("CARGO_PKG_VERSION")))
            // downloads go where the caller says (`local_dir`), not into the HF cache
            .cache_enabled(false);
        if let Some(token) = token {
            builder = builder.token(token);
        }
        let client = builder
            .build()
            .map_err(|e| HubError::hub(&endpoint, "client", e))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| HubError::Io {
                path: PathBuf::from("<tokio runtime>"),
                source: e,
            })?;
        Ok(Hub {
            client,
            endpoint,
            token_env: config.token_env.clone(),
            rt,
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn dataset(&self, owner: &str, name: &str) -> HFRepository<RepoTypeDataset> {
        self.client.dataset(owner, name)
    }

    /// An error of the Hub client, with a 401 said in words that name the variable (never
    /// its value).
    fn err(&self, what: &str, e: HFError) -> HubError {
        match e {
            HFError::AuthRequired { .. } => HubError::Unauthorized {
                endpoint: self.endpoint.clone(),
                variable: self.token_env.clone(),
            },
            e => HubError::hub(&self.endpoint, what, e),
        }
    }

    /// The account the token belongs to (`GET /api/whoami-v2`).
    pub fn whoami(&self) -> Result<String, HubError> {
        let user = self
            .rt
            .block_on(self.client.whoami().send())
            .map_err(|e| self.err("whoami", e))?;
        Ok(user.username)
    }

    /// The versions published to `repo` (`OWNER/NAME`): its `v<semver>` tags, oldest first;
    /// none when the repository does not exist.
    pub fn versions(&self, repo: &str) -> Result<Vec<semver::Version>, HubError> {
        let (owner, name) =
            crate::plan::parse_repo_id(repo).map_err(|reason| HubError::Reference {
                reference: repo.to_string(),
                reason,
            })?;
        let handle = self.dataset(&owner, &name);
        let exists = self
            .rt
            .block_on(handle.exists().send())
            .map_err(|e| self.err("repository info", e))?;
        if !exists {
            return Ok(Vec::new());
        }
        let refs = self
            .rt
            .block_on(handle.list_refs().send())
            .map_err(|e| self.err("refs", e))?;
        Ok(crate::plan::versions_of_tags(
            refs.tags.iter().map(|t| t.name.as_str()),
        ))
    }

    /// Push one published version (`snapshots/<dataset>/<version>`) to the dataset repository
    /// `repo` (`OWNER/NAME`) as one commit tagged `v<version>`, creating the repository
    /// (private when asked) if it is missing. The commit is made after the client has uploaded
    /// every large file, so a push stopped before it leaves no commit; one stopped after the
    /// commit and before the tag is finished by the next push, which tags that commit.
    pub fn push(
        &self,
        upload: &VersionUpload,
        repo: &str,
        private: bool,
    ) -> Result<Pushed, HubError> {
        let (owner, name) =
            crate::plan::parse_repo_id(repo).map_err(|reason| HubError::Reference {
                reference: repo.to_string(),
                reason,
            })?;
        self.whoami()?;
        let handle = self.dataset(&owner, &name);
        let exists = self
            .rt
            .block_on(handle.exists().send())
            .map_err(|e| self.err("repository info", e))?;
        let mut created_repo = false;
        if !exists {
            self.rt
                .block_on(
                    self.client
                        .create_repository()
                        .repo_id(repo)
                        .repo_type(RepoTypeDataset)
                        .private(private)
                        .send(),
                )
                .map_err(|e| self.err("create repository", e))?;
            created_repo = true;
            tracing::info!(repo, private, "created dataset repository");
        }
        let tag = upload.tag();
        let state = self.remote_state(&handle, &tag)?;
        match decide(&upload.digest, &state) {
            Action::AlreadyThere => Ok(Pushed::AlreadyThere {
                repo: repo.to_string(),
                tag,
            }),
            Action::Conflict { remote_digest } => Err(HubError::TagConflict {
                repo: repo.to_string(),
                tag,
                local: upload.digest.clone(),
                remote: remote_digest,
            }),
            Action::TagOnly { commit } => {
                self.tag(&handle, &tag, &commit, upload)?;
                Ok(Pushed::Tagged {
                    repo: repo.to_string(),
                    tag,
                    commit,
                })
            }
            Action::CommitAndTag { parent } => {
                let mut bytes = 0;
                let mut ops = Vec::with_capacity(upload.files.len());
                for f in &upload.files {
                    bytes += std::fs::metadata(&f.local)
                        .map_err(|e| HubError::Io {
                            path: f.local.clone(),
                            source: e,
                        })?
                        .len();
                    ops.push(CommitOperation::add_file(
                        f.path_in_repo.clone(),
                        f.local.clone(),
                    ));
                }
                // what the commit builds on and this version lacks goes in the same commit
                if let Some(parent) = &parent {
                    let info = self
                        .rt
                        .block_on(handle.info().revision(parent.clone()).send())
                        .map_err(|e| self.err("repository info", e))?;
                    let remote = info
                        .siblings
                        .unwrap_or_default()
                        .into_iter()
                        .map(|s| s.rfilename);
                    for path in stale_files(remote, upload) {
                        ops.push(CommitOperation::delete(path));
                    }
                }
                let m = &upload.manifest;
                let commit = handle
                    .create_commit()
                    .operations(ops)
                    .commit_message(format!("{} {}", m.dataset, upload.version))
                    .commit_description(format!(
                        "noisebench snapshot {} version {} (parent {}); content digest {}",
                        m.dataset,
                        upload.version,
                        m.parent.as_deref().unwrap_or("none"),
                        upload.digest
                    ))
                    // the commit fails (412) if main moved since it was read
                    .maybe_parent_commit(parent);
                let info = self
                    .rt
                    .block_on(commit.send())
                    .map_err(|e| self.err("commit", e))?;
                let commit = match info.commit_oid {
                    Some(oid) => oid,
                    None => self.main_head(&handle)?.ok_or_else(|| HubError::Protocol {
                        endpoint: self.endpoint.clone(),
                        reason: "the commit answer named no commit and main has none".into(),
                    })?,
                };
                self.tag(&handle, &tag, &commit, upload)?;
                Ok(Pushed::Committed {
                    repo: repo.to_string(),
                    tag,
                    commit,
                    files: upload.files.len(),
                    bytes,
                    created_repo,
                })
            }
        }
    }

    fn tag(
        &self,
        handle: &HFRepository<RepoTypeDataset>,
        tag: &str,
        commit: &str,
        upload: &VersionUpload,
    ) -> Result<(), HubError> {
        self.rt
            .block_on(
                handle
                    .create_tag()
                    .tag(tag)
                    .revision(commit)
                    .message(format!("{} {}", upload.manifest.dataset, upload.version))
                    .send(),
            )
            .map_err(|e| self.err("create tag", e))
    }

    fn main_head(
        &self,
        handle: &HFRepository<RepoTypeDataset>,
    ) -> Result<Option<String>, HubError> {
        let refs = self
            .rt
            .block_on(handle.list_refs().send())
            .map_err(|e| self.err("refs", e))?;
        Ok(refs
            .branches
            .into_iter()
            .find(|b| b.name == "main")
            .map(|b| b.target_commit))
    }

    /// The tag's and `main`'s content digests (from their `manifest.json`).
    fn remote_state(
        &self,
        handle: &HFRepository<RepoTypeDataset>,
        tag: &str,
    ) -> Result<RemoteState, HubError> {
        let refs = self
            .rt
            .block_on(handle.list_refs().send())
            .map_err(|e| self.err("refs", e))?;
        let tag_digest = match refs.tags.iter().find(|t| t.name == tag) {
            Some(t) => Some(
                self.manifest_digest(handle, &t.target_commit)?
                    .unwrap_or_else(|| "(no manifest.json)".to_string()),
            ),
            None => None,
        };
        let main = match refs.branches.iter().find(|b| b.name == "main") {
            Some(b) => Some((
                b.target_commit.clone(),
                self.manifest_digest(handle, &b.target_commit)?,
            )),
            None => None,
        };
        Ok(RemoteState { tag_digest, main })
    }

    /// The content digest of `manifest.json` at `revision`, or `None` when it has none.
    fn manifest_digest(
        &self,
        handle: &HFRepository<RepoTypeDataset>,
        revision: &str,
    ) -> Result<Option<String>, HubError> {
        let got = self.rt.block_on(
            handle
                .download_file_to_bytes()
                .filename(MANIFEST)
                .revision(revision)
                .send(),
        );
        let bytes = match got {
            Ok(b) => b,
            Err(HFError::EntryNotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.err("manifest.json", e)),
        };
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|e| HubError::Protocol {
                endpoint: self.endpoint.clone(),
                reason: format!("manifest.json at {revision}: {e}"),
            })?;
        Ok(Some(content_digest(&manifest)))
    }

    /// Download the version `at` names into `<cache>/<owner>/<name>/<version>/` (the folder
    /// named by its manifest's version, as `snapshots/<dataset>/<version>/` is, so `verify`
    /// reads it as it reads a published one) and return that folder. A tag whose folder exists
    /// is not asked for again; `main` always is. The manifest is fetched first, then every file
    /// it hashes with the card and change files; the folder is written as `.partial-*` and
    /// renamed when complete, so a stopped download is redone.
    pub fn download(&self, at: &HubRef, cache: &Path) -> Result<PathBuf, HubError> {
        let repo_dir = cache.join(&at.owner).join(&at.name);
        if let Some(version) = at.revision.strip_prefix('v')
            && semver::Version::parse(version).is_ok()
            && repo_dir.join(version).join(MANIFEST).is_file()
        {
            return Ok(repo_dir.join(version));
        }
        let partial = repo_dir.join(format!(".partial-{}", at.revision));
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |e| HubError::Io { path, source: e }
        };
        if partial.exists() {
            std::fs::remove_dir_all(&partial).map_err(io(&partial))?;
        }
        std::fs::create_dir_all(&partial).map_err(io(&partial))?;
        let handle = self.dataset(&at.owner, &at.name);
        let fetch = |file: &str| -> Result<(), HubError> {
            self.rt
                .block_on(
                    handle
                        .download_file()
                        .filename(file)
                        .revision(at.revision.clone())
                        .local_dir(partial.clone())
                        .send(),
                )
                .map(|_| ())
                .map_err(|e| match e {
                    HFError::RevisionNotFound { .. } => HubError::NoSuchVersion {
                        reference: at.to_string(),
                    },
                    HFError::EntryNotFound { .. } if file == MANIFEST => HubError::NoSuchVersion {
                        reference: at.to_string(),
                    },
                    e => self.err(file, e),
                })
        };
        fetch(MANIFEST)?;
        let manifest = Manifest::read(&partial).map_err(|reason| HubError::Protocol {
            endpoint: self.endpoint.clone(),
            reason,
        })?;
        let mut files: Vec<String> = manifest.tables.values().map(|t| t.file.clone()).collect();
        files.extend(
            manifest
                .splits
                .values()
                .flat_map(|s| s.values().map(|e| e.file.clone())),
        );
        files.extend(manifest.exports.keys().cloned());
        files.extend(manifest.metadata.keys().cloned());
        for file in files {
            fetch(&file)?;
        }
        // The card and the change files are not hashed in the manifest; a version has them.
        for file in ["README.md", "CHANGES.md", "changes.json"] {
            match fetch(file) {
                Ok(()) => {}
                Err(HubError::Hub { .. }) => {
                    tracing::warn!(file, "not in the repository; left out of the download")
                }
                Err(e) => return Err(e),
            }
        }
        // `local_dir` downloads may leave the client's bookkeeping folder; a version has none.
        let _ = std::fs::remove_dir_all(partial.join(".cache"));
        let dest = repo_dir.join(&manifest.version);
        if dest.join(MANIFEST).is_file() {
            // the same version read through another revision (`main`): keep the first copy
            std::fs::remove_dir_all(&partial).map_err(io(&partial))?;
        } else {
            if dest.exists() {
                std::fs::remove_dir_all(&dest).map_err(io(&dest))?;
            }
            std::fs::rename(&partial, &dest).map_err(io(&dest))?;
        }
        Ok(dest)
    }
}
