//! The shared work folder's parts against a real S3 API server (moto on 127.0.0.1) and a local
//! folder: the web archive synced additively between two machines (objects copied once, index
//! lines pooled, nothing deleted), and stage folders whose `shards/` parts travel on their own.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use noisebench_store::{
    Location, Remote, pull_archive, pull_stage_dir, push_archive, push_stage_dir,
};
use noisebench_web::archive::{Archive, ArchiveRecord, read_index, read_object};

fn s3(bucket: &str, prefix: &str) -> Remote {
    common::moto();
    Remote::open(&Location::parse(&format!("s3://{bucket}/{prefix}")).unwrap()).unwrap()
}

fn local(dir: &Path) -> Remote {
    Remote::open(&Location::Local(dir.to_path_buf())).unwrap()
}

fn fetched(archive: &Archive, url: &str, body: &str, at: &str) -> String {
    let sha256 = noisebench_core::sha256_hex(body.as_bytes());
    let record = ArchiveRecord {
        url: url.into(),
        final_url: url.into(),
        status: 200,
        headers: BTreeMap::new(),
        fetched_at: at.into(),
        sha256: sha256.clone(),
        size: body.len() as u64,
    };
    archive.store(&record, body.as_bytes()).unwrap();
    sha256
}

/// url -> body of every indexed fetch.
fn pages(dir: &Path) -> BTreeMap<String, String> {
    read_index(dir)
        .unwrap()
        .into_iter()
        .map(|r| {
            let body = String::from_utf8(read_object(dir, &r.sha256).unwrap()).unwrap();
            (r.url, body)
        })
        .collect()
}

fn archives_pool_their_pages(remote: &Remote) {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (da, db) = (a.path().join("archive"), b.path().join("archive"));
    {
        let archive = Archive::open(&da).unwrap();
        fetched(
            &archive,
            "https://a.test/1",
            "page one",
            "2026-01-01T00:00:00Z",
        );
        fetched(
            &archive,
            "https://a.test/2",
            "page two",
            "2026-01-01T00:00:01Z",
        );
    }
    let pushed = push_archive(&da, remote).unwrap();
    assert_eq!((pushed.objects, pushed.lines), (2, 2));
    // Nothing new: nothing moves, no second index part.
    let again = push_archive(&da, remote).unwrap();
    assert_eq!((again.objects, again.lines), (0, 0));
    {
        // B fetched one page A has too (same body: the same object) and one of its own.
        let archive = Archive::open(&db).unwrap();
        fetched(
            &archive,
            "https://a.test/2",
            "page two",
            "2026-01-02T00:00:00Z",
        );
        fetched(
            &archive,
            "https://b.test/3",
            "page three",
            "2026-01-02T00:00:01Z",
        );
    }
    let pushed = push_archive(&db, remote).unwrap();
    assert_eq!((pushed.objects, pushed.lines), (1, 2));
    let parts = remote.list("index").unwrap();
    assert_eq!(parts.len(), 2, "{parts:?}");

    let pulled = pull_archive(remote, &da).unwrap();
    assert_eq!((pulled.objects, pulled.lines), (1, 2));
    // B lacks only page one's object, and A's two lines.
    let pulled = pull_archive(remote, &db).unwrap();
    assert_eq!((pulled.objects, pulled.lines), (1, 2));
    assert_eq!(pages(&da), pages(&db));
    assert_eq!(pages(&da).len(), 3);
    assert_eq!(read_index(&da).unwrap().len(), 4);
    // Synced both ways: a pull or push moves nothing more.
    for dir in [&da, &db] {
        let p = pull_archive(remote, dir).unwrap();
        assert_eq!((p.objects, p.lines), (0, 0));
        let p = push_archive(dir, remote).unwrap();
        assert_eq!((p.objects, p.lines), (0, 0));
    }
    // A new machine pulls everything into an archive the web layer opens.
    let c = tempfile::tempdir().unwrap();
    let dc = c.path().join("work/archive");
    pull_archive(remote, &dc).unwrap();
    assert_eq!(pages(&dc), pages(&da));
    Archive::open(&dc).unwrap();
    // A missing local archive pushes nothing and fails nothing.
    let none = push_archive(&c.path().join("none"), remote).unwrap();
    assert_eq!(none.objects + none.lines, 0);
}

#[test]
fn web_archives_of_two_machines_pool_through_s3() {
    archives_pool_their_pages(&s3(&common::bucket("work-sync-archive"), "work/archive"));
}

#[test]
fn web_archives_pool_through_a_local_folder() {
    let shared = tempfile::tempdir().unwrap();
    archives_pool_their_pages(&local(shared.path()));
}

#[test]
fn a_torn_last_index_line_is_not_glued_to_pulled_lines() {
    let shared = tempfile::tempdir().unwrap();
    let remote = local(shared.path());
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    {
        let archive = Archive::open(a.path()).unwrap();
        fetched(
            &archive,
            "https://a.test/1",
            "page one",
            "2026-01-01T00:00:00Z",
        );
    }
    push_archive(a.path(), &remote).unwrap();
    let archive = Archive::open(b.path()).unwrap();
    fetched(
        &archive,
        "https://b.test/2",
        "page two",
        "2026-01-01T00:00:00Z",
    );
    drop(archive);
    let index = b.path().join("index.jsonl");
    let mut text = std::fs::read_to_string(&index).unwrap();
    text.push_str("{\"url\":\"https://b.test/torn");
    std::fs::write(&index, text).unwrap();
    pull_archive(&remote, b.path()).unwrap();
    let urls: Vec<String> = read_index(b.path())
        .unwrap()
        .into_iter()
        .map(|r| r.url)
        .collect();
    assert_eq!(urls, ["https://b.test/2", "https://a.test/1"]);
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn stage_parts_travel_on_their_own(root: &Remote, stage: &str) {
    let a = tempfile::tempdir().unwrap();
    let dir = a.path().join("labels");
    write(&dir, "labels.parquet", "merged rows");
    write(&dir, "stage.json", "{\"id\":\"labels\"}");
    write(&dir, ".lock", "");
    write(&dir, "shards/0-of-2/labels.parquet", "part 0 rows");
    write(&dir, "shards/0-of-2/stage.json", "{\"part\":0}");
    let stage_remote = Remote::open(&root.location().join(stage)).unwrap();
    let t = push_stage_dir(&dir, &stage_remote).unwrap();
    assert_eq!(t.files, 2, "the stage's own files only: {t:?}");
    let keys: Vec<String> = stage_remote
        .list("")
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(keys, [".push.json", "labels.parquet", "stage.json"]);
    // The part goes up as a folder of its own; a later push of the stage leaves it alone.
    let part = Remote::open(&root.location().join(&format!("{stage}/shards/0-of-2"))).unwrap();
    push_stage_dir(&dir.join("shards/0-of-2"), &part).unwrap();
    write(&dir, "stage.json", "{\"id\":\"labels\",\"again\":true}");
    push_stage_dir(&dir, &stage_remote).unwrap();
    assert!(part.exists("stage.json").unwrap());
    assert!(part.exists("labels.parquet").unwrap());

    // Another machine with a part of its own pulls the stage: its part stays, none is fetched.
    let b = tempfile::tempdir().unwrap();
    let there = b.path().join("labels");
    write(&there, "shards/1-of-2/stage.json", "{\"part\":1}");
    write(&there, "old.parquet", "stale");
    pull_stage_dir(&stage_remote, &there).unwrap();
    assert_eq!(
        std::fs::read_to_string(there.join("stage.json")).unwrap(),
        "{\"id\":\"labels\",\"again\":true}"
    );
    assert!(!there.join("old.parquet").exists());
    assert!(there.join("shards/1-of-2/stage.json").is_file());
    assert!(!there.join("shards/0-of-2").exists());
    pull_stage_dir(&part, &there.join("shards/0-of-2")).unwrap();
    assert_eq!(
        std::fs::read_to_string(there.join("shards/0-of-2/labels.parquet")).unwrap(),
        "part 0 rows"
    );
}

#[test]
fn shard_parts_travel_apart_from_their_stage_through_s3() {
    stage_parts_travel_on_their_own(
        &s3(&common::bucket("work-sync-stage"), "run"),
        "work/demo/labels",
    );
}

#[test]
fn shard_parts_travel_apart_from_their_stage_through_a_local_folder() {
    let shared = tempfile::tempdir().unwrap();
    stage_parts_travel_on_their_own(&local(shared.path()), "work/demo/labels");
}
