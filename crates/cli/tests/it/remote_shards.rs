//! Shards on two machines that share only an S3 prefix (`--remote-work`, and
//! `[llm.cache] remote` for the LLM cache): two checkouts with their own work folders and cache
//! folders, a real S3 API server (moto on 127.0.0.1, started by the test; `pip install
//! 'moto[server]'`) and the fake OpenAI endpoint. Machine A runs `labels`' upstream and shard
//! 0/2 of `labels`; machine B runs shard 1/2, pulling the upstream from S3; A merges, pulling
//! B's part, with B's answers read from the shared cache (the merge asks the endpoint nothing),
//! and builds the snapshot. Its data and exports equal those of a build on one machine.

use crate::reliability_common;
#[path = "../../../store/tests/it/common/mod.rs"]
pub(crate) mod s3;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use noisebench_cli::Workspace;
use noisebench_core::NoProgress;
use noisebench_store::{Location, Remote};
use noisebench_testkit::{FakeServer, Reply};
use reliability_common::{answer, checkout, noisebench, only_version, version_files};

/// The demo's cache folder, backed by `remote`.
fn share_cache(root: &Path, remote: &str) {
    let path = root.join("pipelines/demo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let shared = text.replacen(
        r#"cache = { dir = "work/cache" }"#,
        &format!(r#"cache = {{ dir = "work/cache", remote = "{remote}" }}"#),
        1,
    );
    assert_ne!(shared, text, "the test checkout's cache line has moved");
    std::fs::write(path, shared).unwrap();
}

/// The line `remote work: <verb> N stage folders ...` of a command's output, and its N.
fn moved(out: &str, verb: &str) -> (usize, String) {
    let prefix = format!("remote work: {verb} ");
    let line = out
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in:\n{out}"));
    let n = line[prefix.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (n, line.to_string())
}

/// The published files under `data/` and `exports/` (the rows and the seed-format exports; the
/// manifest records the pipeline file, which differs by the cache line).
fn data_and_exports(version: &Path) -> BTreeMap<String, String> {
    version_files(version)
        .into_iter()
        .filter(|(name, _)| name.starts_with("data/") || name.starts_with("exports/"))
        .collect()
}

#[test]
fn shards_on_two_machines_sharing_only_an_s3_prefix_publish_what_one_machine_publishes() {
    s3::moto();
    let bucket = s3::bucket("remote-shards");
    let server = FakeServer::answering(|b| Reply::Content(answer(b)));

    let whole = checkout(&server.url(), "");
    noisebench(whole.path(), &["build-snapshot"], &[]);
    let whole_requests = server.requests();
    let ws = Workspace::at(whole.path(), Arc::new(NoProgress));
    let plan = ws.load("demo").unwrap().plan;
    let mut upstream: Vec<String> = plan
        .upstream_of("labels")
        .unwrap()
        .iter()
        .map(|s| s.id.clone())
        .filter(|id| id != "labels")
        .collect();
    upstream.sort();

    let cache = format!("s3://{bucket}/cache");
    let work = format!("s3://{bucket}/run");
    let a = checkout(&server.url(), "");
    let b = checkout(&server.url(), "");
    share_cache(a.path(), &cache);
    share_cache(b.path(), &cache);
    let on_a = |args: &[&str]| {
        let mut all = vec!["--remote-work", work.as_str()];
        all.extend_from_slice(args);
        noisebench(a.path(), &all, &[])
    };
    // B takes the location from the environment.
    let on_b = |args: &[&str]| noisebench(b.path(), args, &[("NOISEBENCH_REMOTE_WORK", &work)]);

    // A: labels' upstream (each `run` runs what it needs), then its shard of labels.
    let inputs: std::collections::BTreeSet<&str> = plan
        .stage("labels")
        .unwrap()
        .inputs
        .values()
        .map(|t| t.stage.as_str())
        .collect();
    for stage in inputs {
        let out = on_a(&["run", stage]);
        eprintln!("A run {stage}: {}", moved(&out, "pushed").1);
    }
    let out = on_a(&["run", "labels", "--shard", "0/2"]);
    assert_eq!(moved(&out, "pushed").0, 1, "{out}");
    let remote = Remote::open(&Location::parse(&work).unwrap()).unwrap();
    let pushed: Vec<String> = remote.list_dirs("work/demo").unwrap();
    let mut expected = upstream.clone();
    expected.push("labels".into());
    expected.sort();
    assert_eq!(pushed, expected, "stage folders on S3 after A's runs");

    // B: its shard, with the upstream pulled from S3 (B never runs it).
    let before = server.requests();
    let out = on_b(&["run", "labels", "--shard", "1/2"]);
    let (pulled, line) = moved(&out, "pulled");
    eprintln!("B shard 1/2: {line}");
    assert_eq!(pulled, upstream.len(), "{out}");
    assert!(out.contains("labels [1/2]"), "{out}");
    let b_requests = server.requests() - before;
    assert!(b_requests > 0, "B's shard asked nothing:\n{out}");
    for stage in &upstream {
        let record = |root: &Path| {
            std::fs::read(root.join("work/demo").join(stage).join("stage.json")).unwrap()
        };
        assert_eq!(
            record(a.path()),
            record(b.path()),
            "`{stage}` on B is not A's"
        );
    }
    // B's answers are in the shared cache, not in A's cache folder.
    let cached = Remote::open(&Location::parse(&cache).unwrap())
        .unwrap()
        .list("")
        .unwrap();
    assert!(!cached.is_empty());

    // A merges: B's part comes from S3, B's answers from the shared cache.
    let before = server.requests();
    let out = on_a(&["merge", "labels", "--shards", "2"]);
    assert_eq!(
        server.requests(),
        before,
        "the merge asked the endpoint:\n{out}"
    );
    assert!(out.contains("merged 2 parts"), "{out}");
    let (pulled, line) = moved(&out, "pulled");
    eprintln!("A merge: {line}");
    assert_eq!(pulled, 1, "only B's part is new to A:\n{out}");
    assert!(
        a.path()
            .join("work/demo/labels/shards/1-of-2/stage.json")
            .is_file()
    );
    // The merged stage went up without its parts; the parts are folders of their own.
    let labels: Vec<String> = remote
        .list("work/demo/labels")
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert!(labels.contains(&"work/demo/labels/stage.json".to_string()));
    assert!(labels.contains(&"work/demo/labels/shards/0-of-2/stage.json".to_string()));
    assert!(labels.contains(&"work/demo/labels/shards/1-of-2/stage.json".to_string()));
    let push_list: serde_json::Value =
        serde_json::from_slice(&remote.get("work/demo/labels/.push.json").unwrap().unwrap())
            .unwrap();
    assert!(
        push_list["files"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| !k.starts_with("shards/")),
        "{push_list}"
    );

    let out = on_a(&["build-snapshot"]);
    eprintln!("A build-snapshot: {}", moved(&out, "pushed").1);
    let (va, vw) = (only_version(a.path()), only_version(whole.path()));
    let (fa, fw) = (data_and_exports(&va), data_and_exports(&vw));
    assert!(fw.keys().any(|k| k.starts_with("data/")), "{fw:?}");
    assert_eq!(fa, fw);
    eprintln!(
        "one machine: {whole_requests} requests; two machines: {} (B's shard: {b_requests})",
        server.requests() - whole_requests
    );

    // A third machine with an empty work folder pulls every stage and has nothing to run.
    let c = checkout(&server.url(), "");
    share_cache(c.path(), &cache);
    let before = server.requests();
    let out = noisebench(
        c.path(),
        &["--remote-work", &work, "run", "export-raguard"],
        &[],
    );
    assert_eq!(server.requests(), before, "{out}");
    eprintln!("C run export-raguard: {}", moved(&out, "pulled").1);
    assert!(out.contains("remote work: pushed 0 stage folders"), "{out}");
    assert!(!out.contains(" ran "), "{out}");
}

/// A fake SearxNG and web site on 127.0.0.1: every query gets two results on the site, every page
/// a paragraph of its own; every request is counted.
fn live_site() -> (
    noisebench_testkit::Served,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    use axum::Router;
    use axum::extract::{Query, State};
    use axum::http::Uri;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Clone)]
    struct Site {
        base: String,
        hits: Arc<AtomicUsize>,
    }
    async fn searx(
        State(s): State<Site>,
        Query(p): Query<std::collections::HashMap<String, String>>,
    ) -> axum::response::Response {
        s.hits.fetch_add(1, Ordering::SeqCst);
        let q = p.get("q").cloned().unwrap_or_default();
        let results: Vec<serde_json::Value> = if p.get("pageno").map(String::as_str) == Some("1") {
            let slug: String = q
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .take(40)
                .collect();
            (1..=2)
                .map(|i| {
                    serde_json::json!({"url": format!("{}/site/{slug}-{i}", s.base),
                        "title": format!("{q} ({i})"), "content": format!("About {q}.")})
                })
                .collect()
        } else {
            Vec::new()
        };
        noisebench_testkit::respond(
            200,
            "application/json",
            serde_json::json!({"query": q, "results": results}).to_string(),
        )
    }
    async fn page(State(s): State<Site>, uri: Uri) -> axum::response::Response {
        s.hits.fetch_add(1, Ordering::SeqCst);
        let path = uri.path().to_string();
        let Some(name) = path.strip_prefix("/site/") else {
            return noisebench_testkit::respond(404, "text/plain", "not found");
        };
        let text =
            format!("<p>The page {name} reports what the claim says, with dates and names.</p>")
                .repeat(20);
        noisebench_testkit::respond(
            200,
            "text/html; charset=utf-8",
            format!("<html><head><title>{name}</title></head><body>{text}</body></html>"),
        )
    }
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let served = noisebench_testkit::Served::start_with(move |base| {
        Router::new()
            .route("/searx/search", axum::routing::get(searx))
            .fallback(page)
            .with_state(Site {
                base: base.to_string(),
                hits: counted,
            })
    });
    (served, hits)
}

const LIVE: &str = r#"
[pipeline]
name = "live"
description = "Claims searched on a fake SearxNG and their pages fetched live."

[llm]
backend = "offline"

[web]
mode = "live"
allow_addresses = ["loopback"]
rate_per_second = 500.0
max_retries = 0

[stages.claims]
kind = "claims-import"
[[stages.claims.config.sources]]
path = "fixtures/claims/politifact.csv"
preset = "politifact"
verdicts = "raguard"

[stages.queries]
kind = "queries"
inputs = { claims = "claims" }
[stages.queries.config]
kinds = ["keywords"]

[stages.search]
kind = "search"
inputs = { queries = "queries" }
[stages.search.config]
top_k = 2
[[stages.search.config.backends]]
type = "searxng"
base_url = "URL/searx"

[stages.documents]
kind = "documents"
inputs = { search_hits = "search", queries = "queries" }
"#;

/// The URLs in the web archive under `root`.
fn archived(root: &Path) -> std::collections::BTreeSet<String> {
    noisebench_web::archive::read_index(&root.join("work/archive"))
        .map(|records| records.into_iter().map(|r| r.url).collect())
        .unwrap_or_default()
}

#[test]
fn a_merge_reads_the_pages_another_machines_shard_fetched_from_the_shared_archive() {
    s3::moto();
    let bucket = s3::bucket("remote-archive");
    let work = format!("s3://{bucket}/run");
    let (site, hits) = live_site();
    let count = || hits.load(std::sync::atomic::Ordering::SeqCst);
    let machine = || {
        let dir = noisebench_testkit::checkout();
        std::fs::write(
            dir.path().join("pipelines/live.toml"),
            LIVE.replace("URL", site.url()),
        )
        .unwrap();
        dir
    };
    let (a, b, whole) = (machine(), machine(), machine());
    let on = |root: &Path, args: &[&str]| {
        let mut all = vec!["--remote-work", work.as_str()];
        all.extend_from_slice(args);
        noisebench(root, &all, &[])
    };

    on(a.path(), &["run", "search", "--pipeline", "live"]);
    let searched = archived(a.path());
    assert!(!searched.is_empty(), "the search answers are archived");
    on(
        a.path(),
        &["run", "documents", "--pipeline", "live", "--shard", "0/2"],
    );
    let out = on(
        b.path(),
        &["run", "documents", "--pipeline", "live", "--shard", "1/2"],
    );
    eprintln!("B shard 1/2: {}", moved(&out, "pushed").1);
    let (on_a, on_b) = (archived(a.path()), archived(b.path()));
    // B pulled A's archive as it loaded the pipeline, and fetched pages A never did.
    assert!(on_b.is_superset(&searched));
    let only_b: Vec<&String> = on_b.difference(&on_a).collect();
    assert!(!only_b.is_empty(), "B's shard fetched nothing of its own");

    let before = count();
    let out = on(
        a.path(),
        &["merge", "documents", "--pipeline", "live", "--shards", "2"],
    );
    assert_eq!(count(), before, "the merge fetched:\n{out}");
    assert!(out.contains("merged 2 parts"), "{out}");
    let pulled = out
        .lines()
        .find(|l| l.starts_with("remote work: pulled") && !l.contains(" 0 archive objects"))
        .unwrap_or_else(|| panic!("the merge pulled no archive objects:\n{out}"));
    eprintln!("A merge: {pulled}");
    assert!(archived(a.path()).is_superset(&on_b));

    // The merged documents are those of one unsharded run, but for when each page was fetched.
    noisebench(
        whole.path(),
        &["run", "documents", "--pipeline", "live"],
        &[],
    );
    let tables = |root: &Path| {
        let dir = root.join("work/live/documents");
        let record = noisebench_pipeline::runner::read_record(&dir).unwrap();
        record
            .tables
            .iter()
            .map(|(name, t)| {
                if name != "documents" {
                    return (name.clone(), t.sha256.clone());
                }
                let rows = noisebench_pipeline::table_io::read_table(
                    &dir.join(&t.file),
                    noisebench_core::TableKind::Documents,
                )
                .unwrap();
                let masked: Vec<serde_json::Value> = rows
                    .json_rows()
                    .map(|mut v| {
                        assert!(v["fetched_at"].is_string(), "{v}");
                        v["fetched_at"] = serde_json::Value::Null;
                        v
                    })
                    .collect();
                assert!(!masked.is_empty());
                (name.clone(), serde_json::to_string(&masked).unwrap())
            })
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(tables(a.path()), tables(whole.path()));
}
