//! The unattended refresh of docs/publish.md, run as documented (`docs/examples/refresh.sh`) on
//! fresh clones that share only the S3 store (moto on 127.0.0.1, started by the test; `pip
//! install 'moto[server]'`) and the Hub (the fake Hub): the first run builds, publishes and
//! pushes 1.0.0; a second fresh clone with nothing changed sends no LLM request, publishes and
//! pushes nothing; a third, after one source changed, pushes one new version. Without a store,
//! the Hub alone: a fresh clone pulls the last version (`hub pull`), rebuilds, and pushes
//! nothing when nothing changed.

use crate::reliability_common;
// the binary's one moto server (a module loaded once: `remote_shards` holds it)
use crate::remote_shards::s3;

use std::path::Path;
use std::process::Command;

use noisebench_testkit::{FakeHub, FakeServer, Reply, repo_root};
use reliability_common::{answer, checkout};

const TOKEN: &str = "hf_canary_refresh_31c7a9e0";

/// A fresh clone of the demo pointed at the fake model, its LLM cache backed by the store and
/// `[publish.hub]` naming the Hub repository.
fn clone(model_url: &str, state: &str) -> tempfile::TempDir {
    let dir = checkout(model_url, "");
    let path = dir.path().join("pipelines/demo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    if state.starts_with("hub:") {
        std::fs::write(
            &path,
            format!("{text}\n[publish.hub]\nrepo = \"acme/demo\"\n"),
        )
        .unwrap();
        return dir;
    }
    let shared = text.replacen(
        r#"cache = { dir = "work/cache" }"#,
        &format!(r#"cache = {{ dir = "work/cache", remote = "{state}/llm-cache" }}"#),
        1,
    );
    assert_ne!(shared, text, "the test checkout's cache line has moved");
    std::fs::write(
        &path,
        format!("{shared}\n[publish.hub]\nrepo = \"acme/demo\"\n"),
    )
    .unwrap();
    dir
}

/// `docs/examples/refresh.sh` in `root` with its state in `state` (an S3 prefix, or `hub:` for
/// the Hub alone): its exit status and output.
fn refresh(root: &Path, state: &str, hub: &FakeHub) -> (i32, String) {
    let (var, value) = match state.strip_prefix("hub:") {
        Some(repo) => ("HUB_REPO", repo),
        None => ("STATE", state),
    };
    let out = Command::new("bash")
        .arg(repo_root().join("docs/examples/refresh.sh"))
        .current_dir(root)
        .env("PIPELINE", "demo")
        .env("DATASET", "demo")
        .env(var, value)
        .env("NOISEBENCH", env!("CARGO_BIN_EXE_noisebench"))
        .env("NOISEBENCH_FLAGS", "--skip-preflight")
        .env("HF_TOKEN", TOKEN)
        .env("HF_ENDPOINT", hub.url())
        .env_remove("NOISEBENCH_REMOTE_WORK")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains(TOKEN), "the token was printed:\n{text}");
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn refreshes_on_fresh_clones_sharing_only_the_store_and_the_hub() {
    s3::moto();
    let bucket = s3::bucket("hub-refresh");
    let state = format!("s3://{bucket}/demo");
    let model = FakeServer::answering(|b| Reply::Content(answer(b)));
    let hub = FakeHub::start("acme", TOKEN);

    let a = clone(&model.url(), &state);
    let (status, out) = refresh(a.path(), &state, &hub);
    assert_eq!(status, 10, "{out}");
    assert!(out.contains("pushed v1.0.0 to acme/demo"), "{out}");
    let repo = hub.repo("acme/demo").unwrap();
    assert_eq!(repo.tags.keys().collect::<Vec<_>>(), ["v1.0.0"]);
    let commits = repo.commits.len();

    let requests = model.requests();
    let b = clone(&model.url(), &state);
    let (status, out) = refresh(b.path(), &state, &hub);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("no change"), "{out}");
    assert_eq!(
        model.requests(),
        requests,
        "LLM requests on a refresh with nothing new"
    );
    assert_eq!(
        hub.repo("acme/demo").unwrap().commits.len(),
        commits,
        "nothing pushed"
    );

    let c = clone(&model.url(), &state);
    // one new report among the report track's sources
    std::fs::write(
        c.path().join("fixtures/reports/kg/meridian_survey_2024.md"),
        "# Meridian Survey Group annual review 2024\n\n## Outlook\n\nMeridian Survey Group \
         expects its survey revenue to grow in 2025, according to its chief executive, Dana \
         Whitfield. Meridian Survey Group is based in Calder.\n",
    )
    .unwrap();
    let (status, out) = refresh(c.path(), &state, &hub);
    assert_eq!(status, 10, "{out}");
    let repo = hub.repo("acme/demo").unwrap();
    assert_eq!(repo.commits.len(), commits + 1, "one new commit");
    assert_eq!(repo.tags.len(), 2, "{:?}", repo.tags);
    let (new_tag, commit) = repo.tags.iter().find(|(t, _)| *t != "v1.0.0").unwrap();
    assert_eq!(
        commit,
        &repo.head().unwrap().oid,
        "{new_tag} tags the new commit"
    );
    assert!(
        out.contains(&format!("pushed {new_tag} to acme/demo")),
        "{out}"
    );
}

#[test]
fn with_the_hub_alone_a_fresh_clone_pulls_the_last_version_and_pushes_nothing_unchanged() {
    let model = FakeServer::answering(|b| Reply::Content(answer(b)));
    let hub = FakeHub::start("acme", TOKEN);
    let state = "hub:acme/demo";

    let a = clone(&model.url(), state);
    let (status, out) = refresh(a.path(), state, &hub);
    assert_eq!(status, 10, "{out}");
    assert!(
        out.contains("acme/demo has no published version yet: nothing pulled")
            && out.contains("pushed v1.0.0 to acme/demo"),
        "{out}"
    );
    let commits = hub.repo("acme/demo").unwrap().commits.len();

    // a runner that starts empty: the version comes from the Hub, the stages are rebuilt
    let b = clone(&model.url(), state);
    let (status, out) = refresh(b.path(), state, &hub);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("pulled v1.0.0 of acme/demo"), "{out}");
    assert!(out.contains("no change"), "{out}");
    assert!(
        b.path()
            .join("snapshots/demo/1.0.0/manifest.json")
            .is_file()
    );
    assert_eq!(
        hub.repo("acme/demo").unwrap().commits.len(),
        commits,
        "nothing pushed"
    );

    // pulling again, or a version that is not there
    let pull = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_noisebench"))
            .arg("--root")
            .arg(b.path())
            .args(["hub", "pull", "--repo", "acme/demo"])
            .args(args)
            .env("HF_ENDPOINT", hub.url())
            .env("HF_TOKEN", TOKEN)
            .output()
            .unwrap()
    };
    let again = pull(&[]);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        again.status.success() && text.contains("already holds v1.0.0"),
        "{text}"
    );
    let missing = pull(&["--version", "v9.9.9"]);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        !missing.status.success() && err.contains("its versions: v1.0.0"),
        "{err}"
    );
}
