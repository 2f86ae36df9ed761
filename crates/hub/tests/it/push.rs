//! `Hub::push` against the fake Hub: a first push creates the repository and makes one tagged
//! commit; a second is skipped; a changed version is a new commit and tag; a tag holding other
//! content is refused naming both digests; a push stopped at its commit or at its tag is
//! finished by the next one with one commit in all; a wrong token is a clear error that does
//! not echo it; the token reaches no file and no message.

use noisebench_hub::{Hub, HubError, Pushed, VersionUpload};
use noisebench_testkit::HubStep;

use crate::common::{REPO, TOKEN, config, hub, hub_bytes, report, version};

fn upload(root: &std::path::Path, v: &str) -> VersionUpload {
    VersionUpload::read(&root.join("snapshots/demo").join(v), Some(&report(root, v))).unwrap()
}

#[test]
fn first_push_creates_the_repository_and_one_tagged_commit_then_skips() {
    let hub = hub();
    let tmp = tempfile::tempdir().unwrap();
    version(tmp.path(), "1.0.0", "a");
    let hub_client = Hub::connect(&config(&hub, "NB_HUB_T1", TOKEN)).unwrap();
    let up = upload(tmp.path(), "1.0.0");

    let pushed = hub_client.push(&up, REPO, true).unwrap();
    let Pushed::Committed {
        commit,
        files,
        created_repo,
        ..
    } = &pushed
    else {
        panic!("{pushed:?}")
    };
    assert!(created_repo);
    assert_eq!(*files, 8, "{pushed}");
    let repo = hub.repo(REPO).unwrap();
    assert!(repo.private);
    // the Hub's initial commit, then ours
    assert_eq!(repo.commits.len(), 2);
    assert_eq!(&repo.tags["v1.0.0"], commit);
    let tree = &repo.resolve("v1.0.0").unwrap().files;
    for f in [
        "README.md",
        "data/claims.parquet",
        "exports/raguard/claims.csv",
        "croissant.json",
        "manifest.json",
        "CHANGES.md",
        "changes.json",
        "report.html",
    ] {
        assert!(tree.contains_key(f), "{f} missing: {:?}", tree.keys());
    }
    assert_eq!(
        tree["data/claims.parquet"],
        std::fs::read(tmp.path().join("snapshots/demo/1.0.0/data/claims.parquet")).unwrap()
    );

    let again = hub_client.push(&up, REPO, true).unwrap();
    assert_eq!(
        again,
        Pushed::AlreadyThere {
            repo: REPO.into(),
            tag: "v1.0.0".into()
        }
    );
    assert!(again.to_string().contains("already has v1.0.0"), "{again}");
    assert_eq!(hub.repo(REPO).unwrap().commits.len(), 2, "no new commit");
}

#[test]
fn a_changed_version_is_a_new_commit_and_tag() {
    let hub = hub();
    let tmp = tempfile::tempdir().unwrap();
    version(tmp.path(), "1.0.0", "a");
    version(tmp.path(), "1.1.0", "a,b");
    let c = Hub::connect(&config(&hub, "NB_HUB_T2", TOKEN)).unwrap();
    c.push(&upload(tmp.path(), "1.0.0"), REPO, false).unwrap();
    let second = c.push(&upload(tmp.path(), "1.1.0"), REPO, false).unwrap();
    assert!(
        matches!(
            second,
            Pushed::Committed {
                created_repo: false,
                ..
            }
        ),
        "{second:?}"
    );
    let repo = hub.repo(REPO).unwrap();
    assert_eq!(repo.commits.len(), 3);
    assert_ne!(repo.tags["v1.0.0"], repo.tags["v1.1.0"]);
    assert_eq!(repo.head().unwrap().oid, repo.tags["v1.1.0"]);
    let old = &repo.resolve("v1.0.0").unwrap().files["data/claims.parquet"];
    let new = &repo.resolve("v1.1.0").unwrap().files["data/claims.parquet"];
    assert_eq!(String::from_utf8_lossy(old), "PAR1 rows: a");
    assert_eq!(String::from_utf8_lossy(new), "PAR1 rows: a,b");
    assert!(!repo.private);
}

#[test]
fn a_file_the_new_version_lacks_is_deleted_in_its_commit_and_kept_under_the_old_tag() {
    let hub = hub();
    let tmp = tempfile::tempdir().unwrap();
    let old = version(tmp.path(), "1.0.0", "a");
    std::fs::create_dir_all(old.join("exports/confact")).unwrap();
    std::fs::write(old.join("exports/confact/confact.json"), "[]").unwrap();
    version(tmp.path(), "2.0.0", "b");
    let c = Hub::connect(&config(&hub, "NB_HUB_T8", TOKEN)).unwrap();
    c.push(&upload(tmp.path(), "1.0.0"), REPO, false).unwrap();
    c.push(&upload(tmp.path(), "2.0.0"), REPO, false).unwrap();
    let repo = hub.repo(REPO).unwrap();
    let gone = "exports/confact/confact.json";
    assert!(repo.resolve("v1.0.0").unwrap().files.contains_key(gone));
    let new = &repo.resolve("v2.0.0").unwrap().files;
    assert!(!new.contains_key(gone), "{:?}", new.keys());
    assert!(new.contains_key(".gitattributes"));
    assert_eq!(new.len(), 9, "the version's 8 files and .gitattributes");
}

#[test]
fn a_tag_holding_other_content_is_refused_naming_both_digests() {
    let hub = hub();
    let tmp = tempfile::tempdir().unwrap();
    let c = Hub::connect(&config(&hub, "NB_HUB_T3", TOKEN)).unwrap();
    // someone pushed another 1.0.0 first
    let other = tempfile::tempdir().unwrap();
    version(other.path(), "1.0.0", "other rows");
    let theirs = upload(other.path(), "1.0.0");
    c.push(&theirs, REPO, false).unwrap();

    version(tmp.path(), "1.0.0", "a");
    let ours = upload(tmp.path(), "1.0.0");
    let err = c.push(&ours, REPO, false).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, HubError::TagConflict { .. }), "{err:?}");
    assert!(
        msg.contains(&ours.digest) && msg.contains(&theirs.digest),
        "{msg}"
    );
    assert_eq!(
        hub.repo(REPO).unwrap().commits.len(),
        2,
        "nothing committed"
    );
}

#[test]
fn a_push_stopped_at_its_commit_leaves_nothing_and_the_rerun_commits_once() {
    let hub = hub();
    let tmp = tempfile::tempdir().unwrap();
    version(tmp.path(), "1.0.0", "a");
    let c = Hub::connect(&config(&hub, "NB_HUB_T4", TOKEN)).unwrap();
    let up = upload(tmp.path(), "1.0.0");
    hub.interrupt(HubStep::Commit);
    assert!(c.push(&up, REPO, false).is_err());
    let repo = hub.repo(REPO).unwrap();
    assert_eq!(repo.commits.len(), 1, "only the Hub's initial commit");
    assert!(repo.tags.is_empty());

    assert!(matches!(
        c.push(&up, REPO, false).unwrap(),
        Pushed::Committed { .. }
    ));
    let repo = hub.repo(REPO).unwrap();
    assert_eq!(repo.commits.len(), 2);
    assert_eq!(
        repo.resolve("v1.0.0").unwrap().files.len(),
        9,
        "8 files and .gitattributes"
    );
}

#[test]
fn a_push_stopped_before_its_tag_is_finished_without_a_second_commit() {
    let hub = hub();
    let tmp = tempfile::tempdir().unwrap();
    version(tmp.path(), "1.0.0", "a");
    let c = Hub::connect(&config(&hub, "NB_HUB_T5", TOKEN)).unwrap();
    let up = upload(tmp.path(), "1.0.0");
    hub.interrupt(HubStep::Tag);
    assert!(c.push(&up, REPO, false).is_err());
    let repo = hub.repo(REPO).unwrap();
    assert_eq!(repo.commits.len(), 2, "committed");
    assert!(repo.tags.is_empty(), "not tagged");

    let done = c.push(&up, REPO, false).unwrap();
    assert!(matches!(done, Pushed::Tagged { .. }), "{done:?}");
    let repo = hub.repo(REPO).unwrap();
    assert_eq!(repo.commits.len(), 2, "still one commit of ours");
    assert_eq!(repo.tags["v1.0.0"], repo.head().unwrap().oid);
}

#[test]
fn a_wrong_token_is_a_clear_error_that_does_not_echo_it() {
    let hub = hub();
    let tmp = tempfile::tempdir().unwrap();
    version(tmp.path(), "1.0.0", "a");
    let wrong = "hf_wrong_canary_0c1d2e3f";
    let c = Hub::connect(&config(&hub, "NB_HUB_T6", wrong)).unwrap();
    let err = c
        .push(&upload(tmp.path(), "1.0.0"), REPO, false)
        .unwrap_err();
    let msg = format!("{err} / {err:?}");
    assert!(matches!(err, HubError::Unauthorized { .. }), "{msg}");
    assert!(msg.contains("NB_HUB_T6") && msg.contains("401"), "{msg}");
    assert!(!msg.contains(wrong), "{msg}");
    assert!(hub.repo(REPO).is_none(), "nothing created");

    let unset = noisebench_hub::HubConfig {
        token_env: "NB_HUB_T6_UNSET".into(),
        ..noisebench_hub::HubConfig::default()
    };
    let err = Hub::connect(&unset).err().unwrap().to_string();
    assert!(err.contains("NB_HUB_T6_UNSET"), "{err}");
}

#[test]
fn the_token_is_sent_as_a_bearer_header_and_written_nowhere() {
    let hub = hub();
    let tmp = tempfile::tempdir().unwrap();
    version(tmp.path(), "1.0.0", "a");
    let c = Hub::connect(&config(&hub, "NB_HUB_T7", TOKEN)).unwrap();
    let pushed = c.push(&upload(tmp.path(), "1.0.0"), REPO, false).unwrap();
    assert!(!format!("{pushed} {pushed:?}").contains(TOKEN));
    assert!(!hub_bytes(&hub, REPO).contains(TOKEN));
    let writes: Vec<_> = hub
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert!(!writes.is_empty());
    for r in &writes {
        assert_eq!(
            r.authorization.as_deref(),
            Some(&*format!("Bearer {TOKEN}")),
            "{r:?}"
        );
        assert!(!r.path.contains(TOKEN), "{r:?}");
    }
    for entry in walk(tmp.path()) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(TOKEN),
            "{}",
            entry.display()
        );
    }
}

pub fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
