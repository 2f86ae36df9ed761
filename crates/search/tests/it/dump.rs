//! The fixture Reddit dump: read, indexed once, reused while its sha256 is unchanged, searched
//! with the same ranked ids on every run.

use crate::common;

use noisebench_search::backends::reddit_dump::{DumpIndex, day_bound, read_posts};

fn dump() -> std::path::PathBuf {
    common::root().join("fixtures/reddit/posts.ndjson.zst")
}

fn ids(index: &DumpIndex, q: &str, k: usize) -> Vec<String> {
    index
        .search(q, k, 2.0, None, None)
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect()
}

#[test]
fn the_fixture_dump_reads_with_its_flaws_counted() {
    let mut removed = 0;
    let mut links = 0;
    let stats = read_posts(&dump(), |p| {
        removed += p.body_removed() as usize;
        links += p.is_link_post() as usize;
    })
    .unwrap();
    assert_eq!((stats.lines, stats.posts, stats.bad_lines), (302, 300, 2));
    assert_eq!((removed, links), (40, 20));
}

#[test]
fn indexed_once_reused_and_deterministic() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let first = DumpIndex::open_or_build(&dump(), a.path()).unwrap();
    assert!(first.built);
    assert_eq!(first.posts, 300);
    let q = "5G masts spread viral post coronavirus";
    let ranked = ids(&first, q, 10);
    assert_eq!(ranked.len(), 10);
    let top = first.search(q, 10, 2.0, None, None).unwrap();
    assert!(top.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(top.iter().all(|h| {
        h.url
            .starts_with("https://www.reddit.com/r/conspiracy/comments/")
    }));
    drop(first);
    // Reopened: not rebuilt, same ranking.
    let again = DumpIndex::open_or_build(&dump(), a.path()).unwrap();
    assert!(!again.built);
    assert_eq!(ids(&again, q, 10), ranked);
    // Built elsewhere from scratch: same ranking.
    let other = DumpIndex::open_or_build(&dump(), b.path()).unwrap();
    assert!(other.built);
    assert_eq!(ids(&other, q, 10), ranked);
    for q in [
        "hot water lemon coronavirus throat",
        "wind turbines birds cats",
        "oil production country",
    ] {
        assert_eq!(ids(&again, q, 5), ids(&other, q, 5), "{q}");
        assert!(!ids(&again, q, 5).is_empty(), "{q}");
    }
    assert!(
        ids(&again, "the of and", 5).is_empty(),
        "stop words alone match nothing"
    );
    // A date window keeps only posts created inside it.
    let (from, to) = (
        day_bound("2020-01-01", false),
        day_bound("2020-12-31", true),
    );
    let dated = again.search("coronavirus", 50, 2.0, from, to).unwrap();
    assert!(!dated.is_empty());
    assert!(dated.iter().all(|h| {
        h.created_utc
            .is_some_and(|c| c >= from.unwrap() && c <= to.unwrap())
    }));
}

#[test]
fn a_changed_dump_is_reindexed() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("posts.ndjson.zst");
    std::fs::copy(dump(), &copy).unwrap();
    let idx = dir.path().join("index");
    assert!(DumpIndex::open_or_build(&copy, &idx).unwrap().built);
    assert!(!DumpIndex::open_or_build(&copy, &idx).unwrap().built);
    // Append a post (a second zstd frame is still a valid stream).
    let extra = zstd::encode_all(&b"{\"id\":\"new1\",\"title\":\"Fresh post about lighthouses\",\"selftext\":\"lighthouse keeper\"}\n"[..], 3).unwrap();
    let mut bytes = std::fs::read(&copy).unwrap();
    bytes.extend(extra);
    std::fs::write(&copy, bytes).unwrap();
    let rebuilt = DumpIndex::open_or_build(&copy, &idx).unwrap();
    assert!(rebuilt.built);
    assert_eq!(rebuilt.posts, 301);
    assert_eq!(ids(&rebuilt, "lighthouses", 3)[0], "new1");
}

/// Three posts as Reddit served them without `raw_json=1` (go-reddit's recorded listing, one post
/// a line as Pushshift-style dumps keep them; fixtures/real/search/PROVENANCE.md): the body's
/// link holds `&amp;`. The index reads the text as its author wrote it, so `amp` is no word of it.
#[test]
fn a_dump_with_reddits_escaping_is_indexed_unescaped() {
    let dump = common::root().join("fixtures/real/search/reddit/go-reddit-random-posts.ndjson");
    let mut bodies = Vec::new();
    let stats = read_posts(&dump, |p| bodies.push((p.id.clone(), p.body_text()))).unwrap();
    assert_eq!((stats.lines, stats.posts, stats.bad_lines), (3, 3, 0));
    let (id, body) = &bodies[2];
    assert_eq!(id, "huv6o6");
    assert!(
        body.contains("?variant=29245065592874&utm_campaign=gs-2020-03-13&utm_source=google"),
        "{body}"
    );
    let dir = tempfile::tempdir().unwrap();
    let index = DumpIndex::open_or_build(&dump, dir.path()).unwrap();
    assert_eq!(index.posts, 3);
    assert_eq!(
        ids(&index, "glass screen protector edge to edge", 3)[0],
        "huv6o6"
    );
    assert!(
        ids(&index, "amp", 3).is_empty(),
        "`&amp;` was indexed as a word"
    );
}
