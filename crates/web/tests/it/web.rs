//! The client against a fake server on 127.0.0.1: pacing, robots, retries, caps, redirects, the
//! address guard, charsets, archive and replay.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use noisebench_testkit::Served;
use noisebench_web::{AddressClass, FetchError, Mode, Web, WebConfig};

#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<(String, Instant)>>>);

impl Log {
    fn paths(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(p, _)| p.clone())
            .collect()
    }
    fn count(&self, path: &str) -> usize {
        self.paths().iter().filter(|p| *p == path).count()
    }
    fn times(&self) -> Vec<Instant> {
        self.0.lock().unwrap().iter().map(|(_, t)| *t).collect()
    }
}

async fn handle(State(log): State<Log>, uri: Uri) -> Response {
    let path = uri
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let n = {
        let mut l = log.0.lock().unwrap();
        l.push((path.clone(), Instant::now()));
        l.iter().filter(|(p, _)| *p == path).count()
    };
    match uri.path() {
        "/robots.txt" => "User-agent: *\nDisallow: /private\n".into_response(),
        "/flaky" if n <= 2 => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "0")],
            "busy",
        )
            .into_response(),
        "/flaky" => "finally".into_response(),
        "/patient" => (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "120")],
            "later",
        )
            .into_response(),
        "/big" => vec![b'x'; 4096].into_response(),
        "/big-stream" => {
            let chunks = (0..8).map(|_| Ok::<_, std::io::Error>(vec![b'y'; 1024]));
            Body::from_stream(futures::stream::iter(chunks)).into_response()
        }
        "/loop-a" => redirect("/loop-b"),
        "/loop-b" => redirect("/loop-a"),
        "/hop1" => redirect("/hop2"),
        "/hop2" => redirect("/ok"),
        "/to-metadata" => redirect("http://169.254.169.254/latest/meta-data/"),
        "/latin1" => (
            [(header::CONTENT_TYPE, "text/html")],
            b"<html><head><meta charset=\"iso-8859-1\"></head><body>Caf\xe9 cr\xe8me</body></html>"
                .to_vec(),
        )
            .into_response(),
        "/slow" => {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            "late".into_response()
        }
        "/missing" => (StatusCode::NOT_FOUND, "no").into_response(),
        _ => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            format!("<p>page {path}</p>"),
        )
            .into_response(),
    }
}

fn redirect(to: &str) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, to.to_string())], "").into_response()
}

/// Serve the fake site on 127.0.0.1 until the returned server is dropped; with its request log.
fn serve() -> (Served, Log) {
    let log = Log::default();
    let app = Router::new().fallback(handle).with_state(log.clone());
    (Served::start(app), log)
}

fn config() -> WebConfig {
    WebConfig {
        rate_per_second: 50.0,
        allow_addresses: vec![AddressClass::Loopback],
        backoff_ms: 10,
        max_retries: 2,
        timeout_seconds: 5.0,
        ..WebConfig::default()
    }
}

fn web(config: WebConfig) -> Web {
    Web::new(config, std::path::Path::new("/")).unwrap()
}

fn code(r: Result<noisebench_web::Page, FetchError>) -> String {
    match r {
        Ok(p) => format!("ok:{}", p.status),
        Err(e) => e.code(),
    }
}

#[test]
fn per_host_rate_limit_spaces_requests() {
    let (server, log) = serve();
    let addr = server.addr();
    let mut cfg = config();
    cfg.robots = false;
    cfg.hosts.insert(
        format!("127.0.0.1:{}", addr.port()),
        noisebench_web::HostConfig {
            rate_per_second: 5.0,
        },
    );
    let web = web(cfg);
    let urls: Vec<String> = (0..6).map(|i| format!("http://{addr}/p{i}")).collect();
    let started = Instant::now();
    let results = web.fetch_many(&urls);
    assert!(results.iter().all(|r| r.is_ok()));
    let times = log.times();
    assert_eq!(times.len(), 6);
    // 5/s means 200 ms apart.
    crate::http::assert_paced(&times, Duration::from_millis(200));
    assert!(started.elapsed() >= Duration::from_millis(950));
}

#[test]
fn robots_txt_is_fetched_once_and_honoured() {
    let (server, log) = serve();
    let addr = server.addr();
    let web = web(config());
    assert_eq!(code(web.fetch(&format!("http://{addr}/public"))), "ok:200");
    assert_eq!(
        code(web.fetch(&format!("http://{addr}/private/x"))),
        "robots_disallowed"
    );
    assert_eq!(code(web.fetch(&format!("http://{addr}/other"))), "ok:200");
    assert_eq!(log.count("/robots.txt"), 1);
    assert_eq!(
        log.count("/private/x"),
        0,
        "a disallowed URL is never requested"
    );
}

#[test]
fn retries_honour_retry_after_and_give_up_on_long_waits() {
    let (server, log) = serve();
    let addr = server.addr();
    let web = web(config());
    let page = web.fetch(&format!("http://{addr}/flaky")).unwrap();
    assert_eq!(page.text, "finally");
    assert_eq!(log.count("/flaky"), 3);
    // Retry-After 120 s is more than max_wait_seconds (60): no retry, the 429 is the reason.
    assert_eq!(
        code(web.fetch(&format!("http://{addr}/patient"))),
        "http_429"
    );
    assert_eq!(log.count("/patient"), 1);
    assert_eq!(
        code(web.fetch(&format!("http://{addr}/missing"))),
        "http_404"
    );
    assert_eq!(log.count("/missing"), 1, "a 404 is not retried");
}

#[test]
fn timeouts_are_retried_then_reported() {
    let (server, log) = serve();
    let addr = server.addr();
    let mut cfg = config();
    cfg.timeout_seconds = 0.3;
    cfg.max_retries = 1;
    cfg.robots = false;
    let web = web(cfg);
    assert_eq!(code(web.fetch(&format!("http://{addr}/slow"))), "timeout");
    assert_eq!(log.count("/slow"), 2);
}

#[test]
fn large_bodies_are_refused_by_length_and_while_streaming() {
    let (server, _log) = serve();
    let addr = server.addr();
    let mut cfg = config();
    cfg.max_body_bytes = 2048;
    let web = web(cfg);
    assert_eq!(code(web.fetch(&format!("http://{addr}/big"))), "too_large");
    assert_eq!(
        code(web.fetch(&format!("http://{addr}/big-stream"))),
        "too_large"
    );
    assert_eq!(code(web.fetch(&format!("http://{addr}/small"))), "ok:200");
}

#[test]
fn redirects_are_followed_and_loops_end_with_a_reason() {
    let (server, _log) = serve();
    let addr = server.addr();
    let web = web(config());
    let page = web.fetch(&format!("http://{addr}/hop1")).unwrap();
    assert_eq!(page.final_url, format!("http://{addr}/ok"));
    assert_eq!(
        page.redirects,
        vec![format!("http://{addr}/hop2"), format!("http://{addr}/ok")]
    );
    assert_eq!(
        code(web.fetch(&format!("http://{addr}/loop-a"))),
        "redirect_loop"
    );
    let mut cfg = config();
    cfg.max_redirects = 1;
    let web = self::web(cfg);
    assert_eq!(
        code(web.fetch(&format!("http://{addr}/hop1"))),
        "too_many_redirects"
    );
}

#[test]
fn internal_addresses_are_refused_unless_allowed() {
    let (server, log) = serve();
    let addr = server.addr();
    let mut cfg = config();
    cfg.allow_addresses.clear();
    let strict = web(cfg);
    assert_eq!(
        code(strict.fetch(&format!("http://{addr}/x"))),
        "blocked_address"
    );
    // A host name goes through the guarded resolver.
    assert_eq!(
        code(strict.fetch(&format!("http://localhost:{}/x", addr.port()))),
        "blocked_address"
    );
    assert_eq!(
        code(strict.fetch("http://[::ffff:10.0.0.1]/")),
        "blocked_address"
    );
    assert!(
        log.paths().is_empty(),
        "nothing reached the server: {:?}",
        log.paths()
    );
    // Loopback allowed, but a redirect hop to the metadata address is checked again.
    let lenient = web(config());
    assert_eq!(
        code(lenient.fetch(&format!("http://{addr}/to-metadata"))),
        "blocked_address"
    );
}

#[test]
fn non_utf8_pages_decode_from_the_meta_charset() {
    let (server, _log) = serve();
    let addr = server.addr();
    let page = web(config())
        .fetch(&format!("http://{addr}/latin1"))
        .unwrap();
    assert!(page.text.contains("Café crème"), "{}", page.text);
    assert_eq!(page.encoding, "windows-1252");
}

#[test]
fn archive_then_replay_gives_identical_pages_without_network() {
    let (server, log) = serve();
    let addr = server.addr();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config();
    cfg.archive_dir = Some(dir.path().to_path_buf());
    let live = web(cfg);
    let urls: Vec<String> = ["/hop1", "/latin1", "/missing", "/a?page=2"]
        .iter()
        .map(|p| format!("http://{addr}{p}"))
        .collect();
    let first = live.fetch_many(&urls);
    drop(live);
    let requests = log.paths().len();
    let index = noisebench_web::archive::read_index(dir.path()).unwrap();
    // robots.txt, hop1, hop2, ok, latin1, missing, a?page=2
    assert_eq!(index.len(), 7, "{index:#?}");
    let hop = index.iter().find(|r| r.url.ends_with("/hop1")).unwrap();
    assert_eq!(hop.status, 302);
    assert_eq!(hop.final_url, format!("http://{addr}/ok"));

    let replay_cfg = WebConfig {
        mode: Mode::Replay,
        replay_archive: Some(dir.path().to_path_buf()),
        ..WebConfig::default()
    };
    let replay = web(replay_cfg);
    let second = replay.fetch_many(&urls);
    assert_eq!(log.paths().len(), requests, "replay made no request");
    assert_eq!(first.len(), second.len());
    for (a, b) in first.iter().zip(&second) {
        match (a, b) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => assert_eq!(a.code(), b.code()),
            _ => panic!("{a:?} vs {b:?}"),
        }
    }
    assert_eq!(
        code(replay.fetch(&format!("http://{addr}/never"))),
        "not_in_replay"
    );
}

/// A layer derived from an archive-only one (a source's own User-Agent inside a merge) is
/// archive-only too: it serves what the archive holds and sends the server nothing, robots.txt
/// included; a layer derived from a live one fetches.
#[test]
fn a_layer_derived_from_an_archive_only_one_serves_the_archive_and_sends_nothing() {
    let (server, log) = serve();
    let addr = server.addr();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config();
    cfg.archive_dir = Some(dir.path().to_path_buf());
    let url = format!("http://{addr}/a");
    let live = web(cfg.clone());
    let fetched = live.fetch(&url).unwrap();
    assert!(!live.sends_nothing());
    let before = log.paths().len();
    assert_eq!(before, 2, "robots.txt and the page: {:?}", log.paths());

    let root = std::path::Path::new("/");
    let run = Web::archive_only(cfg.clone(), root).unwrap();
    let mut own = run.config().clone();
    own.user_agent = "Jane Doe jane@example.org".into();
    let derived = run.derived(own, root).unwrap();
    assert!(run.sends_nothing() && derived.sends_nothing());
    // The configuration in force still says live (the live run's fingerprints), with its own
    // User-Agent.
    assert_eq!(derived.config().mode, Mode::Live);
    assert_eq!(derived.config().user_agent, "Jane Doe jane@example.org");
    assert_eq!(derived.fetch(&url).unwrap(), fetched);
    assert_eq!(
        code(derived.fetch(&format!("http://{addr}/never"))),
        "not_archived"
    );
    assert_eq!(
        log.paths().len(),
        before,
        "the archive-only layer sent {} requests",
        log.paths().len() - before
    );

    let from_live = live.derived(live.config().clone(), root).unwrap();
    assert!(!from_live.sends_nothing());
    assert_eq!(code(from_live.fetch(&format!("http://{addr}/b"))), "ok:200");
    assert_eq!(log.count("/b"), 1);
}

#[test]
fn fixture_folders_replay_urls_to_files() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("example");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("index.toml"),
        r#"
fetched_at = "2025-01-15T00:00:00Z"
[[pages]]
url = "https://example.org/a?x=1"
file = "a.html"
[[pages]]
url = "https://example.org/old"
status = 301
headers = { Location = "/a?x=1" }
[[pages]]
url = "https://example.org/robots.txt"
file = "robots.txt"
"#,
    )
    .unwrap();
    std::fs::write(
        site.join("a.html"),
        b"<meta charset=windows-1252>\x93hi\x94",
    )
    .unwrap();
    std::fs::write(
        site.join("robots.txt"),
        "User-agent: *\nDisallow: /secret\n",
    )
    .unwrap();
    let web = web(WebConfig {
        mode: Mode::Replay,
        replay_fixtures: vec![dir.path().to_path_buf()],
        ..WebConfig::default()
    });
    let page = web.fetch("https://example.org/old").unwrap();
    assert_eq!(page.final_url, "https://example.org/a?x=1");
    assert_eq!(page.text, "<meta charset=windows-1252>\u{201c}hi\u{201d}");
    assert_eq!(page.fetched_at, "2025-01-15T00:00:00Z");
    assert_eq!(
        page.headers,
        BTreeMap::from([("content-type".to_string(), "text/html".to_string())])
    );
    assert_eq!(
        code(web.fetch("https://example.org/secret")),
        "robots_disallowed"
    );
    assert_eq!(code(web.fetch("https://example.org/b")), "not_in_replay");
}

/// A fixture folder holding one site whose `index.toml` serves `urls` (each an empty 200 page).
fn fixture_folder(site: &str, urls: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let site_dir = dir.path().join(site);
    std::fs::create_dir_all(&site_dir).unwrap();
    let mut index = String::from("fetched_at = \"2025-01-15T00:00:00Z\"\n");
    for url in urls {
        index.push_str(&format!("[[pages]]\nurl = \"{url}\"\n"));
    }
    std::fs::write(site_dir.join("index.toml"), index).unwrap();
    dir
}

#[test]
fn replay_serves_every_fixture_folder_of_a_list() {
    let a = fixture_folder("a", &["https://a.example/one"]);
    let b = fixture_folder("b", &["https://b.example/two"]);
    // One string, as before, or a list.
    let one = WebConfig::from_value(&serde_json::json!({
        "mode": "replay", "replay_fixtures": a.path(),
    }))
    .unwrap();
    assert_eq!(one.replay_fixtures, [a.path()]);
    let both = WebConfig::from_value(&serde_json::json!({
        "mode": "replay", "replay_fixtures": [a.path(), b.path()],
    }))
    .unwrap();
    assert_eq!(both.replay_fixtures, [a.path(), b.path()]);
    let mut indexes = vec![a.path().join("a/index.toml"), b.path().join("b/index.toml")];
    indexes.sort();
    assert_eq!(both.replay_inputs(std::path::Path::new("/")), indexes);
    let web = web(both);
    assert_eq!(code(web.fetch("https://a.example/one")), "ok:200");
    assert_eq!(code(web.fetch("https://b.example/two")), "ok:200");
    assert_eq!(code(web.fetch("https://b.example/one")), "not_in_replay");

    let err = WebConfig::from_value(&serde_json::json!({
        "mode": "replay", "replay_fixtures": 3,
    }))
    .unwrap_err();
    assert_eq!(err.field, "replay_fixtures");
    assert!(err.message.contains("a folder path or a list"), "{err}");
}

#[test]
fn a_url_in_two_fixture_folders_is_a_configuration_error() {
    let a = fixture_folder("site", &["https://same.example/page"]);
    let b = fixture_folder("mirror", &["https://same.example/page#top"]);
    let config = WebConfig::from_value(&serde_json::json!({
        "mode": "replay", "replay_fixtures": [a.path(), b.path()],
    }))
    .unwrap();
    let err = Web::new(config, std::path::Path::new("/")).unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, noisebench_web::WebError::Config(ref e) if e.field == "replay_fixtures"),
        "{message}"
    );
    assert!(message.contains("https://same.example/page"), "{message}");
    for folder in [&a, &b] {
        assert!(
            message.contains(&folder.path().display().to_string()),
            "{message}"
        );
    }
}

#[test]
fn config_from_value_refuses_unknown_fields() {
    let err = WebConfig::from_value(&serde_json::json!({"rate": 2})).unwrap_err();
    assert!(err.message.contains("unknown field `rate`"), "{err}");
    let cfg = WebConfig::from_value(&serde_json::json!({
        "rate_per_second": 2.0,
        "hosts": {"www.politifact.com": {"rate_per_second": 0.5}},
        "allow_addresses": ["loopback"],
    }))
    .unwrap();
    assert_eq!(cfg.rate_for("www.politifact.com"), 0.5);
    assert_eq!(cfg.rate_for("example.org"), 2.0);
    let err = WebConfig::from_value(&serde_json::json!({"mode": "replay"})).unwrap_err();
    assert_eq!(err.field, "mode");
}
