//! The pure part of a push and a read-back: which files a version puts in the repository, the
//! content digest that says whether two copies of a version are the same, the tag of a version,
//! `hf://owner/name@v1.2.0` references, and what to do given what the Hub already holds. No I/O
//! beyond reading the version folder, so it is tested without a server.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use noisebench_snapshot::Manifest;
use sha2::{Digest, Sha256};

use crate::HubError;

/// The name the version's HTML report gets in the repository.
pub const REPORT_IN_REPO: &str = "report.html";

/// The tag of a version: `v` and its semver (`v1.2.0`).
pub fn tag_of(version: &semver::Version) -> String {
    format!("v{version}")
}

/// The published versions among a repository's tag names (`v1.2.0`), oldest first; other tags
/// are not versions and are left out.
pub fn versions_of_tags<'a>(tags: impl IntoIterator<Item = &'a str>) -> Vec<semver::Version> {
    let mut versions: Vec<semver::Version> = tags
        .into_iter()
        .filter_map(|t| semver::Version::parse(t.strip_prefix('v')?).ok())
        .collect();
    versions.sort();
    versions.dedup();
    versions
}

/// What the data of a version is, independent of when or where it was written: the sha256 of
/// the sorted `path sha256` lines of the tables, per-split files and exports `manifest.json`
/// hashes. The metadata files (`croissant.json`) are left out: they are rendered from the data
/// with the publish date, so two builds of the same data differ there. Two copies of one version
/// with the same data have the same digest even if their manifests' `created_at` differ; any
/// changed byte of a table or export changes it.
pub fn content_digest(manifest: &Manifest) -> String {
    let mut lines: BTreeMap<&str, &str> = BTreeMap::new();
    for t in manifest.tables.values() {
        lines.insert(&t.file, &t.sha256);
    }
    for splits in manifest.splits.values() {
        for s in splits.values() {
            lines.insert(&s.file, &s.sha256);
        }
    }
    for (path, e) in &manifest.exports {
        lines.insert(path, &e.sha256);
    }
    let mut h = Sha256::new();
    for (path, sha) in lines {
        h.update(path.as_bytes());
        h.update(b" ");
        h.update(sha.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// One file of a push: where it goes in the repository and where it is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoFile {
    pub path_in_repo: String,
    pub local: PathBuf,
}

/// A published version as it will be pushed: its manifest, digest, tag and files.
#[derive(Debug, Clone)]
pub struct VersionUpload {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub version: semver::Version,
    pub digest: String,
    /// Every file of the version folder (card `README.md`, `data/`, `croissant.json`,
    /// `exports/`, `manifest.json`, `CHANGES.md`, `changes.json`) by its relative path, plus
    /// the report as [`REPORT_IN_REPO`]; sorted by path, hidden files left out.
    pub files: Vec<RepoFile>,
}

impl VersionUpload {
    pub fn tag(&self) -> String {
        tag_of(&self.version)
    }

    /// Read the version folder `dir` (`snapshots/<dataset>/<version>`), with the version's
    /// HTML report when given.
    pub fn read(dir: &Path, report: Option<&Path>) -> Result<VersionUpload, HubError> {
        let manifest = Manifest::read(dir).map_err(|reason| HubError::Version {
            dir: dir.to_path_buf(),
            reason,
        })?;
        let version = semver::Version::parse(&manifest.version).map_err(|e| HubError::Version {
            dir: dir.to_path_buf(),
            reason: format!("version `{}` in manifest.json: {e}", manifest.version),
        })?;
        let mut files = Vec::new();
        walk(dir, dir, &mut files)?;
        if let Some(report) = report {
            files.push(RepoFile {
                path_in_repo: REPORT_IN_REPO.into(),
                local: report.to_path_buf(),
            });
        }
        files.sort_by(|a, b| a.path_in_repo.cmp(&b.path_in_repo));
        Ok(VersionUpload {
            dir: dir.to_path_buf(),
            digest: content_digest(&manifest),
            manifest,
            version,
            files,
        })
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<RepoFile>) -> Result<(), HubError> {
    let io = |e| HubError::Io {
        path: dir.to_path_buf(),
        source: e,
    };
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if entry.file_type().map_err(io)?.is_dir() {
            walk(root, &path, out)?;
        } else if let Some(rel) = repo_path(root, &path) {
            out.push(RepoFile {
                path_in_repo: rel,
                local: path,
            });
        }
    }
    Ok(())
}

/// `path` relative to `root`, `/`-joined (the repository's separator on every platform).
fn repo_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// The files of the repository (`remote`, at the commit a push builds on) that the version does
/// not have: deleted in the push's commit, so the tag holds exactly the version (an export or a
/// table an earlier version had and this one has not). `.gitattributes`, the Hub's own, stays.
pub fn stale_files(
    remote: impl IntoIterator<Item = String>,
    upload: &VersionUpload,
) -> Vec<String> {
    let keep: std::collections::BTreeSet<&str> = upload
        .files
        .iter()
        .map(|f| f.path_in_repo.as_str())
        .collect();
    let mut stale: Vec<String> = remote
        .into_iter()
        .filter(|p| p != ".gitattributes" && !keep.contains(p.as_str()))
        .collect();
    stale.sort();
    stale.dedup();
    stale
}

/// A version of a dataset repository: `hf://OWNER/NAME@v1.2.0` (the `v` is optional; without
/// `@...`, the `main` branch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubRef {
    pub owner: String,
    pub name: String,
    /// A tag (`v1.2.0`) or a branch; `main` when the reference names none.
    pub revision: String,
}

impl HubRef {
    pub const SCHEME: &'static str = "hf://";

    /// Whether `s` is meant as a Hub reference (starts with `hf://`).
    pub fn is_hub(s: &str) -> bool {
        s.starts_with(Self::SCHEME)
    }

    pub fn parse(s: &str) -> Result<HubRef, HubError> {
        let bad = |reason: &str| HubError::Reference {
            reference: s.to_string(),
            reason: reason.to_string(),
        };
        let rest = s
            .strip_prefix(Self::SCHEME)
            .ok_or_else(|| bad("not an hf:// reference"))?;
        let (repo, revision) = match rest.split_once('@') {
            Some((repo, rev)) => (repo, Some(rev)),
            None => (rest, None),
        };
        let (owner, name) = parse_repo_id(repo).map_err(|r| bad(&r))?;
        let revision = match revision {
            None => "main".to_string(),
            Some("") => return Err(bad("empty revision after `@`")),
            Some(rev) => match semver::Version::parse(rev.strip_prefix('v').unwrap_or(rev)) {
                Ok(v) => tag_of(&v),
                Err(_) if valid_segment(rev) => rev.to_string(),
                Err(_) => return Err(bad("the revision is neither a version nor a branch name")),
            },
        };
        Ok(HubRef {
            owner,
            name,
            revision,
        })
    }

    pub fn repo_id(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

impl fmt::Display for HubRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hf://{}/{}@{}", self.owner, self.name, self.revision)
    }
}

/// `OWNER/NAME` as the Hub names a repository: two non-empty segments of letters, digits, `-`,
/// `_` and `.`.
pub fn parse_repo_id(repo: &str) -> Result<(String, String), String> {
    let (owner, name) = repo
        .split_once('/')
        .ok_or_else(|| format!("`{repo}` is not OWNER/NAME"))?;
    for part in [owner, name] {
        if !valid_segment(part) {
            return Err(format!(
                "`{repo}` is not OWNER/NAME (letters, digits, `-`, `_`, `.`)"
            ));
        }
    }
    Ok((owner.to_string(), name.to_string()))
}

fn valid_segment(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// What the Hub holds of a version before a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteState {
    /// The version's tag exists, and the content digest of the `manifest.json` it points at.
    pub tag_digest: Option<String>,
    /// The `main` branch's head commit and the digest of its `manifest.json` (if it has one).
    pub main: Option<(String, Option<String>)>,
}

/// What a push does, decided from [`RemoteState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The tag exists with the same content: nothing to do.
    AlreadyThere,
    /// The tag exists with other content: refuse.
    Conflict { remote_digest: String },
    /// `main` already holds this version (a push that committed and was stopped before it
    /// tagged): tag that commit, commit nothing.
    TagOnly { commit: String },
    /// Upload every file, commit (on top of `parent` when `main` exists), then tag.
    CommitAndTag { parent: Option<String> },
}

pub fn decide(local_digest: &str, remote: &RemoteState) -> Action {
    if let Some(tag_digest) = &remote.tag_digest {
        return if tag_digest == local_digest {
            Action::AlreadyThere
        } else {
            Action::Conflict {
                remote_digest: tag_digest.clone(),
            }
        };
    }
    match &remote.main {
        Some((commit, Some(digest))) if digest == local_digest => Action::TagOnly {
            commit: commit.clone(),
        },
        Some((commit, _)) => Action::CommitAndTag {
            parent: Some(commit.clone()),
        },
        None => Action::CommitAndTag { parent: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_the_semver_tags_in_semver_order() {
        let got = versions_of_tags(["v1.10.0", "v1.2.0", "release", "v2", "1.3.0", "v1.2.0"]);
        let want: Vec<semver::Version> = ["1.2.0", "1.10.0"]
            .iter()
            .map(|v| semver::Version::parse(v).unwrap())
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn references_parse_versions_branches_and_refuse_the_rest() {
        let r = HubRef::parse("hf://acme/noisy-demo@v1.2.0").unwrap();
        assert_eq!(r.repo_id(), "acme/noisy-demo");
        assert_eq!(r.revision, "v1.2.0");
        assert_eq!(HubRef::parse("hf://a/b@1.2.0").unwrap().revision, "v1.2.0");
        assert_eq!(HubRef::parse("hf://a/b").unwrap().revision, "main");
        assert_eq!(HubRef::parse("hf://a/b@dev").unwrap().revision, "dev");
        for bad in [
            "hf://a",
            "hf://a/b@",
            "hf:///b@v1.0.0",
            "s3://a/b",
            "hf://a/b/c",
            "hf://a/b@x y",
        ] {
            assert!(HubRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_tag_with_the_same_digest_is_skipped_and_another_refused() {
        let tagged = |d: &str| RemoteState {
            tag_digest: Some(d.into()),
            main: Some(("c1".into(), Some(d.into()))),
        };
        assert_eq!(decide("aa", &tagged("aa")), Action::AlreadyThere);
        assert_eq!(
            decide("aa", &tagged("bb")),
            Action::Conflict {
                remote_digest: "bb".into()
            }
        );
    }

    #[test]
    fn files_the_version_lacks_are_stale_but_gitattributes_stays() {
        let upload = VersionUpload {
            dir: PathBuf::from("v"),
            manifest: serde_json::from_value(serde_json::json!({
                "dataset": "d", "version": "1.0.0", "parent": null, "created_at": "t",
                "pipeline": "p", "config_hash": "c", "code_version": "0", "tables": {}
            }))
            .unwrap(),
            version: semver::Version::new(1, 0, 0),
            digest: "x".into(),
            files: ["README.md", "data/a.parquet"]
                .iter()
                .map(|p| RepoFile {
                    path_in_repo: p.to_string(),
                    local: PathBuf::from(p),
                })
                .collect(),
        };
        let remote = [
            "data/b.parquet",
            ".gitattributes",
            "README.md",
            "data/a.parquet",
            "data/b.parquet",
        ];
        assert_eq!(
            stale_files(remote.iter().map(|s| s.to_string()), &upload),
            vec!["data/b.parquet".to_string()]
        );
    }

    #[test]
    fn a_committed_but_untagged_version_is_only_tagged() {
        let state = RemoteState {
            tag_digest: None,
            main: Some(("c9".into(), Some("aa".into()))),
        };
        assert_eq!(
            decide("aa", &state),
            Action::TagOnly {
                commit: "c9".into()
            }
        );
        let older = RemoteState {
            tag_digest: None,
            main: Some(("c9".into(), Some("old".into()))),
        };
        assert_eq!(
            decide("aa", &older),
            Action::CommitAndTag {
                parent: Some("c9".into())
            }
        );
        let empty = RemoteState {
            tag_digest: None,
            main: None,
        };
        assert_eq!(decide("aa", &empty), Action::CommitAndTag { parent: None });
    }
}
