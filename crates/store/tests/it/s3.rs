//! Object storage against a real S3 API server (moto) on 127.0.0.1: snapshots published, listed and
//! downloaded byte for byte; racing publishers; versions without a manifest; the LLM cache shared
//! through S3; stage folders pushed and pulled.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use common::{bucket, moto};
use noisebench_core::{Claim, Rows, TableKind};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{PublishOptions, PublishOutcome, PublishRequest, SourceTable};
use noisebench_store::snapshot::CLAIM;
use noisebench_store::{Location, Published, Remote, StoreError, stage};

fn claims(n: usize, tag: &str) -> Vec<Claim> {
    (0..n)
        .map(|i| Claim {
            id: format!("claim_{i:04}"),
            text: format!("{tag} claim number {i}"),
            verdict: if i % 3 == 0 { "false" } else { "true" }.into(),
            original_rating: "true".into(),
            source: "test".into(),
            ..Claim::default()
        })
        .collect()
}

/// Publish `rows` locally as the next version of `dataset` under `root/snapshots`; its folder.
fn local_version(root: &Path, dataset: &str, rows: Vec<Claim>) -> PathBuf {
    let path = root.join("work/claims.parquet");
    table_io::write_table(&path, &Rows::Claims(rows)).unwrap();
    let request = PublishRequest {
        snapshots_dir: root.join("snapshots"),
        dataset: dataset.into(),
        title: "Test".into(),
        description: "A test dataset.".into(),
        license: None,
        pipeline: "test".into(),
        config_hash: "abc".into(),
        code_version: "0.0.0".into(),
        tables: vec![SourceTable {
            name: "claims".into(),
            kind: TableKind::Claims,
            path,
        }],
        exports: vec![],
        stages: vec![],
        provenance: Default::default(),
        checks: Vec::new(),
        quality: None,
    };
    match noisebench_snapshot::publish(&request, &PublishOptions::default()).unwrap() {
        PublishOutcome::Published { dir, .. } => dir,
        other => panic!("{other:?}"),
    }
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn s3(bucket: &str, prefix: &str) -> Remote {
    moto();
    Remote::open(&Location::parse(&format!("s3://{bucket}/{prefix}")).unwrap()).unwrap()
}

fn v(s: &str) -> semver::Version {
    semver::Version::parse(s).unwrap()
}

#[test]
fn a_snapshot_is_published_listed_and_downloaded_byte_for_byte() {
    let b = bucket("snapshots-round-trip");
    let root = s3(&b, "team/snapshots");
    let dir = tempfile::tempdir().unwrap();
    let v1 = local_version(dir.path(), "demo", claims(40, "a"));
    assert_eq!(
        noisebench_store::list_versions(&root, "demo").unwrap(),
        vec![]
    );

    let started = std::time::Instant::now();
    let out = noisebench_store::publish(&v1, &root).unwrap();
    let Published::Published { files, bytes, .. } = out else {
        panic!("{out:?}")
    };
    let local = tree(&v1);
    assert_eq!(files, local.len());
    assert_eq!(bytes, local.values().map(|b| b.len() as u64).sum::<u64>());
    eprintln!(
        "published {files} files, {bytes} bytes in {:?}",
        started.elapsed()
    );

    // Publishing the same version again is a no-op, not an error.
    assert!(matches!(
        noisebench_store::publish(&v1, &root).unwrap(),
        Published::AlreadyThere { .. }
    ));
    let v2 = local_version(dir.path(), "demo", claims(50, "a"));
    noisebench_store::publish(&v2, &root).unwrap();
    assert_eq!(
        noisebench_store::list_versions(&root, "demo").unwrap(),
        vec![v("1.0.0"), v("1.1.0")]
    );
    assert_eq!(
        noisebench_store::latest(&root, "demo").unwrap(),
        Some(v("1.1.0"))
    );

    let elsewhere = tempfile::tempdir().unwrap();
    let got = noisebench_store::download(&root, "demo", &v("1.0.0"), elsewhere.path()).unwrap();
    assert_eq!(got, elsewhere.path().join("demo/1.0.0"));
    assert_eq!(
        tree(&got),
        local,
        "downloaded version differs from the published one"
    );
    assert!(noisebench_snapshot::verify(&got).ok());
    // Only the version itself lands there: no staging folder left behind.
    let names: Vec<_> = std::fs::read_dir(elsewhere.path().join("demo"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec!["1.0.0"]);
    // Downloading over an existing local copy is refused.
    let again = noisebench_store::download(&root, "demo", &v("1.0.0"), elsewhere.path());
    assert!(again.unwrap_err().to_string().contains("already exists"));
}

#[test]
fn a_tampered_download_fails_verification_and_leaves_nothing() {
    let b = bucket("snapshots-tampered");
    let root = s3(&b, "");
    let dir = tempfile::tempdir().unwrap();
    let v1 = local_version(dir.path(), "ds", claims(10, "a"));
    noisebench_store::publish(&v1, &root).unwrap();
    // Someone overwrites a data file after publication.
    let other = tempfile::tempdir().unwrap();
    let parquet = other.path().join("x.parquet");
    table_io::write_table(&parquet, &Rows::Claims(claims(10, "b"))).unwrap();
    root.upload(&parquet, "ds/1.0.0/data/claims.parquet")
        .unwrap();
    let target = tempfile::tempdir().unwrap();
    let err = noisebench_store::download(&root, "ds", &v("1.0.0"), target.path()).unwrap_err();
    assert!(err.to_string().contains("fails verification"), "{err}");
    assert!(err.to_string().contains("sha256"), "{err}");
    assert!(!target.path().join("ds/1.0.0").exists());
    assert_eq!(
        std::fs::read_dir(target.path().join("ds")).unwrap().count(),
        0
    );
}

#[test]
fn of_two_racing_publishers_of_one_version_exactly_one_wins() {
    let b = bucket("snapshots-race");
    for round in 0..5 {
        let dataset = format!("race{round}");
        let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
        // Same version, different rows: a loser that uploaded anything would corrupt the winner.
        let versions: Vec<PathBuf> = dirs
            .iter()
            .enumerate()
            .map(|(i, d)| local_version(d.path(), &dataset, claims(30 + i, &format!("p{i}"))))
            .collect();
        let barrier = Arc::new(Barrier::new(2));
        let results: Vec<Result<Published, StoreError>> = std::thread::scope(|s| {
            let handles: Vec<_> = versions
                .iter()
                .map(|dir| {
                    let barrier = Arc::clone(&barrier);
                    let b = b.clone();
                    s.spawn(move || {
                        let root = s3(&b, "");
                        barrier.wait();
                        noisebench_store::publish(dir, &root)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners: Vec<usize> = (0..2)
            .filter(|&i| matches!(results[i], Ok(Published::Published { .. })))
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        let loser = 1 - winners[0];
        let err = results[loser].as_ref().unwrap_err();
        assert!(
            matches!(err, StoreError::VersionTaken { .. }),
            "round {round}: {err}"
        );
        assert!(err.to_string().contains("already claimed"), "{err}");
        // What readers get is the winner's version, whole.
        let root = s3(&b, "");
        let target = tempfile::tempdir().unwrap();
        let got = noisebench_store::download(&root, &dataset, &v("1.0.0"), target.path()).unwrap();
        assert_eq!(tree(&got), tree(&versions[winners[0]]), "round {round}");
    }
}

#[test]
fn a_version_without_its_manifest_is_invisible_and_stays_claimed() {
    let b = bucket("snapshots-partial");
    let root = s3(&b, "snap");
    let dir = tempfile::tempdir().unwrap();
    let v1 = local_version(dir.path(), "ds", claims(10, "a"));
    noisebench_store::publish(&v1, &root).unwrap();
    // A publisher of 2.0.0 that died after its claim and data, before the manifest.
    root.put_create(
        "ds/2.0.0/.claim.json",
        b"{\"publisher\":\"dead host pid 1\"}".to_vec(),
    )
    .unwrap();
    root.upload(
        &v1.join("data/claims.parquet"),
        "ds/2.0.0/data/claims.parquet",
    )
    .unwrap();
    // And stray files under a name that is no version at all.
    root.put("ds/notes/x.txt", b"x".to_vec()).unwrap();
    assert_eq!(
        noisebench_store::list_versions(&root, "ds").unwrap(),
        vec![v("1.0.0")]
    );
    assert_eq!(
        noisebench_store::latest(&root, "ds").unwrap(),
        Some(v("1.0.0"))
    );
    let target = tempfile::tempdir().unwrap();
    let err = noisebench_store::download(&root, "ds", &v("2.0.0"), target.path()).unwrap_err();
    assert!(err.to_string().contains("not published"), "{err}");
    // Publishing that version now names the dead claim instead of mixing files with it.
    // Versions 1.0.0 then 2.0.0 locally (a changed row is a major bump).
    let local_root = tempfile::tempdir().unwrap();
    local_version(local_root.path(), "ds", claims(10, "a"));
    let v2 = local_version(local_root.path(), "ds", claims(10, "changed"));
    assert!(v2.ends_with("2.0.0"));
    let err = noisebench_store::publish(&v2, &root).unwrap_err();
    assert!(err.to_string().contains("dead host pid 1"), "{err}");
    assert!(!root.exists("ds/2.0.0/manifest.json").unwrap());
    // Once the dead claim is removed (by hand, as the error says), the version publishes.
    root.delete(&format!("ds/2.0.0/{CLAIM}")).unwrap();
    noisebench_store::publish(&v2, &root).unwrap();
    assert_eq!(
        noisebench_store::list_versions(&root, "ds").unwrap(),
        vec![v("1.0.0"), v("2.0.0")]
    );
}

#[test]
fn cache_entries_written_by_one_cache_dir_are_read_by_another_through_s3() {
    use noisebench_llm::cache::Cache;
    let b = bucket("llm-cache");
    moto();
    noisebench_store::install_llm_cache_remote();
    let url = format!("s3://{b}/cache/llm");
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let c1 = Cache::open(d1.path())
        .unwrap()
        .with_remote(noisebench_llm::cache::open_remote(&url).unwrap());
    let c2 = Cache::open(d2.path())
        .unwrap()
        .with_remote(noisebench_llm::cache::open_remote(&url).unwrap());
    let keys: Vec<String> = (0..20)
        .map(|i| noisebench_llm::sha256_hex_bytes(format!("request {i}").as_bytes()))
        .collect();
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(c2.get(k), None);
        c1.put(k, format!("answer {i}").as_bytes()).unwrap();
    }
    assert!(
        c2.keys().is_empty(),
        "nothing local in the second cache yet"
    );
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(c2.get(k).unwrap(), format!("answer {i}").as_bytes());
    }
    // Read-through entries are kept locally: the second cache now holds them on disk...
    assert_eq!(c2.keys(), {
        let mut k = keys.clone();
        k.sort();
        k
    });
    // ...as the same bytes the first wrote (the remote holds the local file format).
    let remote = s3(&b, "cache/llm");
    let name = format!("{}/{}.zst", &keys[0][..2], keys[0]);
    let file = d1.path().join(&name);
    assert_eq!(
        remote.get(&name).unwrap().unwrap(),
        std::fs::read(file).unwrap()
    );
    // An entry another machine wrote first is left as it is (create-only), and a damaged remote
    // entry is a miss, not a wrong answer.
    c2.put(&keys[0], b"different").unwrap();
    assert_eq!(
        remote.get(&name).unwrap().unwrap(),
        std::fs::read(d1.path().join(&name)).unwrap()
    );
    let k = noisebench_llm::sha256_hex_bytes(b"damaged");
    remote
        .put(&format!("{}/{k}.zst", &k[..2]), b"not zstd".to_vec())
        .unwrap();
    assert_eq!(c1.get(&k), None);
}

#[test]
fn a_configured_remote_cache_needs_a_parseable_location() {
    moto();
    noisebench_store::install_llm_cache_remote();
    let err = noisebench_llm::cache::open_remote("gs://bucket/x").unwrap_err();
    assert!(err.to_string().contains("unsupported scheme"), "{err}");
}

#[test]
fn a_stage_folder_round_trips_through_s3() {
    let b = bucket("work-folders");
    let remote = s3(&b, "work/demo/claims");
    let dir = tempfile::tempdir().unwrap();
    let stage = dir.path().join("claims");
    std::fs::create_dir_all(stage.join("parts")).unwrap();
    table_io::write_table(
        &stage.join("claims.parquet"),
        &Rows::Claims(claims(25, "a")),
    )
    .unwrap();
    std::fs::write(stage.join("parts/0-of-2.jsonl"), b"{\"a\":1}\n").unwrap();
    std::fs::write(stage.join("dropped.csv"), b"id,reason\n").unwrap();
    std::fs::write(stage.join("stage.json"), b"{\"stage\":\"claims\"}").unwrap();
    // Not finished on the remote yet: a pull fails instead of fetching half a stage.
    let other = tempfile::tempdir().unwrap();
    let pulled = other.path().join("work/demo/claims");
    let err = stage::pull_stage_dir(&remote, &pulled).unwrap_err();
    assert!(err.to_string().contains("has not finished"), "{err}");
    assert!(!pulled.exists());

    let pushed = stage::push_stage_dir(&stage, &remote).unwrap();
    assert_eq!(pushed.files, 4);
    let got = stage::pull_stage_dir(&remote, &pulled).unwrap();
    assert_eq!((got.files, got.bytes), (pushed.files, pushed.bytes));
    assert_eq!(tree(&pulled), tree(&stage));

    // A rerun that writes fewer files: the stale remote one goes, a new pull replaces the folder.
    std::fs::remove_file(stage.join("parts/0-of-2.jsonl")).unwrap();
    std::fs::write(
        stage.join("stage.json"),
        b"{\"stage\":\"claims\",\"run\":2}",
    )
    .unwrap();
    let pushed = stage::push_stage_dir(&stage, &remote).unwrap();
    assert_eq!(pushed.removed, 1);
    stage::pull_stage_dir(&remote, &pulled).unwrap();
    assert_eq!(tree(&pulled), tree(&stage));
    // A file changed remotely after the push (or by a push under way) fails the pull's check,
    // and the local folder stays as it was.
    remote
        .put("claims.parquet", b"not the pushed bytes".to_vec())
        .unwrap();
    let err = stage::pull_stage_dir(&remote, &pulled).unwrap_err();
    assert!(err.to_string().contains("differs from .push.json"), "{err}");
    assert_eq!(tree(&pulled), tree(&stage));
    // A push removes only what an earlier push listed: other objects at a wrong location stay.
    let shared = s3(&b, "");
    shared.put("someone/else.txt", b"keep me".to_vec()).unwrap();
    stage::push_stage_dir(&stage, &shared).unwrap();
    let again = stage::push_stage_dir(&stage, &shared).unwrap();
    assert_eq!(again.removed, 0);
    assert!(shared.exists("someone/else.txt").unwrap());
    // A folder without its record is not pushed.
    let unfinished = dir.path().join("unfinished");
    std::fs::create_dir_all(&unfinished).unwrap();
    assert!(stage::push_stage_dir(&unfinished, &remote).is_err());
}

#[test]
fn a_local_path_works_through_the_same_operations() {
    let dir = tempfile::tempdir().unwrap();
    let root = Remote::open(&Location::Local(dir.path().join("remote"))).unwrap();
    let v1 = local_version(dir.path(), "ds", claims(10, "a"));
    noisebench_store::publish(&v1, &root).unwrap();
    let other = tempfile::tempdir().unwrap();
    let v1b = local_version(other.path(), "ds", claims(11, "other"));
    assert!(matches!(
        noisebench_store::publish(&v1b, &root),
        Err(StoreError::VersionTaken { .. })
    ));
    assert_eq!(
        noisebench_store::list_versions(&root, "ds").unwrap(),
        vec![v("1.0.0")]
    );
    let target = tempfile::tempdir().unwrap();
    let got = noisebench_store::download(&root, "ds", &v("1.0.0"), target.path()).unwrap();
    assert_eq!(tree(&got), tree(&v1));
}

/// A task of our own for the engine test below: the claim's first words.
struct FirstWords;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct FirstWordsInput {
    claim: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct FirstWordsOutput {
    words: Vec<String>,
}

impl noisebench_llm::Task for FirstWords {
    const NAME: &'static str = "first_words";
    const OFFLINE_VERSION: &'static str = "store-test-1";
    type Input = FirstWordsInput;
    type Output = FirstWordsOutput;
    fn check(_: &FirstWordsInput, _: &FirstWordsOutput) -> Result<(), String> {
        Ok(())
    }
    fn offline(input: &FirstWordsInput) -> FirstWordsOutput {
        FirstWordsOutput {
            words: input
                .claim
                .split_whitespace()
                .take(2)
                .map(String::from)
                .collect(),
        }
    }
}

#[test]
fn llm_cache_remote_from_the_configuration_serves_another_machines_answers() {
    use noisebench_llm::{CacheMode, Llm, LlmConfig};
    let b = bucket("llm-config");
    noisebench_store::install_llm_cache_remote();
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = |dir: &Path, mode| {
        let mut cfg = LlmConfig::default();
        cfg.cache.dir = dir.to_path_buf();
        cfg.cache.offline = true;
        cfg.cache.mode = mode;
        cfg.cache.remote = Some(format!("s3://{b}/shared/llm"));
        cfg.embeddings.backend = noisebench_llm::EmbeddingBackend::Hashed;
        cfg
    };
    let input = |s: &str| FirstWordsInput { claim: s.into() };
    let first = Llm::new(config(d1.path(), CacheMode::ReadWrite), Path::new("/")).unwrap();
    let inputs = vec![input("taxes rose sharply"), input("wages fell again")];
    for r in first.run_batch::<FirstWords>("claims", inputs.clone()) {
        assert!(!r.unwrap().cache_hit);
    }
    // Another machine, cache-only: every answer comes from S3 (a miss would fail the item).
    let second = Llm::new(config(d2.path(), CacheMode::CacheOnly), Path::new("/")).unwrap();
    let got = second.run_batch::<FirstWords>("claims", inputs);
    let got: Vec<_> = got.into_iter().map(|r| r.unwrap()).collect();
    assert!(got.iter().all(|a| a.cache_hit));
    assert_eq!(got[0].value.words, vec!["taxes", "rose"]);
    let miss = second.run::<FirstWords>("claims", input("never asked"));
    assert_eq!(miss.unwrap_err().reason(), "cache_miss");
}

/// Upload and download times of a real snapshot version folder (the demo's, say) through moto.
/// Opt-in: `NOISEBENCH_STORE_SNAPSHOT=snapshots/demo/1.0.0 cargo test -p noisebench-store --test
/// it -- --ignored --nocapture s3::timing`.
#[test]
#[ignore = "needs NOISEBENCH_STORE_SNAPSHOT=<a published version folder>; prints timings"]
fn timing_of_a_real_snapshot_through_moto() {
    let dir = PathBuf::from(
        std::env::var("NOISEBENCH_STORE_SNAPSHOT")
            .expect("NOISEBENCH_STORE_SNAPSHOT=<dataset>/<version> folder"),
    );
    let dir = if dir.is_relative() {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(dir)
    } else {
        dir
    };
    let manifest = noisebench_snapshot::Manifest::read(&dir).unwrap();
    let b = bucket("timing");
    let root = s3(&b, "snapshots");
    let t = std::time::Instant::now();
    let out = noisebench_store::publish(&dir, &root).unwrap();
    let up = t.elapsed();
    let target = tempfile::tempdir().unwrap();
    let t = std::time::Instant::now();
    let got = noisebench_store::download(
        &root,
        &manifest.dataset,
        &v(&manifest.version),
        target.path(),
    )
    .unwrap();
    let down = t.elapsed();
    assert_eq!(tree(&got), tree(&dir));
    eprintln!("{out:?}: upload {up:?}, download and verify {down:?}");
}

#[test]
fn the_store_commands_publish_list_download_push_and_pull() {
    use noisebench_store::cli::{StoreCommand, run};
    let b = bucket("commands");
    moto();
    let remote = format!("s3://{b}/snapshots");
    let dir = tempfile::tempdir().unwrap();
    let v1 = local_version(dir.path(), "ds", claims(10, "a"));
    let out = run(StoreCommand::Publish {
        version_dir: v1.clone(),
        remote: remote.clone(),
    })
    .unwrap();
    assert!(
        out.starts_with("published ds 1.0.0 to s3://commands/snapshots: "),
        "{out}"
    );
    let v2 = local_version(dir.path(), "ds", claims(12, "a"));
    run(StoreCommand::Publish {
        version_dir: v2.clone(),
        remote: remote.clone(),
    })
    .unwrap();
    let listed = run(StoreCommand::List {
        remote: remote.clone(),
        dataset: "ds".into(),
    })
    .unwrap();
    assert_eq!(listed, "1.0.0\n1.1.0\n");
    let to = tempfile::tempdir().unwrap();
    let out = run(StoreCommand::Download {
        remote: remote.clone(),
        dataset: "ds".into(),
        version: None,
        to: to.path().to_path_buf(),
    })
    .unwrap();
    assert!(out.contains("ds/1.1.0"), "the latest: {out}");
    assert_eq!(tree(&to.path().join("ds/1.1.0")), tree(&v2));

    let stage = dir.path().join("work/demo/claims");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(stage.join("a.txt"), b"a").unwrap();
    std::fs::write(stage.join("stage.json"), b"{}").unwrap();
    let work = format!("s3://{b}/work/demo/claims");
    run(StoreCommand::Push {
        stage_dir: stage.clone(),
        remote: work.clone(),
    })
    .unwrap();
    let pulled = to.path().join("work/demo/claims");
    let out = run(StoreCommand::Pull {
        remote: work,
        stage_dir: pulled.clone(),
    })
    .unwrap();
    assert!(out.contains("2 files"), "{out}");
    assert_eq!(tree(&pulled), tree(&stage));
    let err = run(StoreCommand::List {
        remote: "s4://x/y".into(),
        dataset: "ds".into(),
    })
    .unwrap_err();
    assert!(err.to_string().contains("unsupported scheme"), "{err}");
}
