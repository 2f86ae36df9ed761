//! `claims-scrape` end to end: the fixture sites served from 127.0.0.1 and scraped through the real
//! client; then the archive replayed, and the fixture folder replayed, with no network.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use noisebench_claims::{ScrapeConfig, ScrapeStage};
use noisebench_core::rows::TableRow;
use noisebench_core::{Claim, Inputs, NoProgress, StageContext, StageReport, TypedStage};
use noisebench_testkit::Served;
use noisebench_web::Web;
use serde_json::json;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sites() -> PathBuf {
    repo_root().join("fixtures/sites")
}

type Pages = HashMap<String, (u16, BTreeMap<String, String>, Vec<u8>)>;

#[derive(Clone)]
struct Site {
    pages: Arc<Pages>,
    log: Arc<Mutex<Vec<(String, Instant)>>>,
}

impl Site {
    fn paths(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|(p, _)| p.clone())
            .collect()
    }
    fn times(&self) -> Vec<Instant> {
        self.log.lock().unwrap().iter().map(|(_, t)| *t).collect()
    }
}

async fn handle(State(site): State<Site>, uri: Uri) -> Response {
    let key = uri
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    site.log.lock().unwrap().push((key.clone(), Instant::now()));
    match site.pages.get(&key) {
        Some((status, headers, body)) => {
            let mut resp = (StatusCode::from_u16(*status).unwrap(), body.clone()).into_response();
            for (k, v) in headers {
                resp.headers_mut().insert(
                    HeaderName::try_from(k.as_str()).unwrap(),
                    HeaderValue::from_str(v).unwrap(),
                );
            }
            resp
        }
        None => (StatusCode::NOT_FOUND, "no such fixture").into_response(),
    }
}

/// Serve one fixture site (its index.toml, by path and query) on 127.0.0.1 until the returned
/// server is dropped.
fn serve(site_dir: &Path) -> (Served, Site) {
    serve_pages(fixture_pages(site_dir))
}

/// A fixture site's pages keyed by path and query, for tests that serve them changed.
fn fixture_pages(site_dir: &Path) -> Pages {
    let fixture = noisebench_web::FixtureSite::load(site_dir).unwrap();
    let mut pages = Pages::new();
    for page in &fixture.pages {
        let url = url::Url::parse(&page.url).unwrap();
        let key = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        pages.insert(
            key,
            (page.status, page.headers(), fixture.body(page).unwrap()),
        );
    }
    pages
}

fn serve_pages(pages: Pages) -> (Served, Site) {
    serve_pages_with(|_| pages)
}

/// Serve the pages `make` builds from the server's own URL (`http://127.0.0.1:<port>`), for pages
/// that link back to the server.
fn serve_pages_with(make: impl FnOnce(&str) -> Pages) -> (Served, Site) {
    let mut made = None;
    let served = Served::start_with(|base| {
        let site = Site {
            pages: Arc::new(make(base)),
            log: Arc::default(),
        };
        made = Some(site.clone());
        Router::new().fallback(handle).with_state(site)
    });
    (served, made.expect("start_with calls make"))
}

/// The page body without its lines matching `drop` (bytes, so windows-1252 pages stay intact).
fn without_lines(body: &[u8], drop: &[&str]) -> Vec<u8> {
    body.split_inclusive(|b| *b == b'\n')
        .filter(|line| {
            !drop
                .iter()
                .any(|d| line.windows(d.len()).any(|w| w == d.as_bytes()))
        })
        .flatten()
        .copied()
        .collect()
}

/// The PolitiFact fixture site with no `<link rel=canonical>` or `og:url`: its pages name no URL
/// of their own, so the URL they were fetched from is the one stored.
fn politifact_without_canonical() -> Pages {
    let mut pages = fixture_pages(&sites().join("politifact"));
    for (_, _, body) in pages.values_mut() {
        *body = without_lines(body, &["rel=\"canonical\"", "og:url"]);
    }
    pages
}

/// `from` replaced by `to` in a body of any encoding (both ASCII).
fn replace_ascii(body: &[u8], from: &str, to: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    while !rest.is_empty() {
        if rest.starts_with(from.as_bytes()) {
            out.extend_from_slice(to.as_bytes());
            rest = &rest[from.len()..];
        } else {
            out.push(rest[0]);
            rest = &rest[1..];
        }
    }
    out
}

fn page(body: impl Into<Vec<u8>>) -> (u16, BTreeMap<String, String>, Vec<u8>) {
    let headers = BTreeMap::from([(
        "content-type".to_string(),
        "text/html; charset=utf-8".to_string(),
    )]);
    (200, headers, body.into())
}

/// A run's web layer, built from a `[web]` table as the cli builds it from the pipeline file's.
pub(crate) fn web(table: serde_json::Value) -> Arc<Web> {
    Arc::new(Web::from_value(&table, &repo_root()).unwrap())
}

fn loopback_web() -> Arc<Web> {
    web(json!({"allow_addresses": ["loopback"], "rate_per_second": 50.0}))
}

fn ctx(dir: &Path) -> StageContext {
    StageContext {
        root: repo_root(),
        stage_dir: dir.to_path_buf(),
        pipeline: "test".into(),
        stage_id: "scraped".into(),
        progress: Arc::new(NoProgress),
    }
}

pub(crate) fn run(web: &Arc<Web>, config: serde_json::Value) -> (Vec<Claim>, StageReport) {
    let stage = ScrapeStage::new(web.clone());
    let config: ScrapeConfig = noisebench_core::stage::parse_config(&config).unwrap();
    stage.validate(&config, &repo_root()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut out = stage
        .run(&config, Inputs::default(), &ctx(dir.path()))
        .unwrap();
    let claims = Claim::from_rows(out.tables.remove("claims").unwrap()).unwrap();
    (claims, out.report)
}

fn sources(pf: &str, ce: &str) -> serde_json::Value {
    json!([
        {"kind": "politifact", "base_url": pf, "max_pages": 5},
        {"kind": "articles", "urls": [
            format!("{ce}/fact-checks/moon-cheese"),
            format!("{ce}/fact-checks/bridge-photo"),
            format!("{ce}/fact-checks/rail-jobs"),
        ]}
    ])
}

fn sha(path: &str) -> String {
    noisebench_core::sha256_hex(&std::fs::read(sites().join(path)).unwrap())
}

/// The claims the fixture sites hold, with the given fetch time (`None`: check separately).
fn expected(fetched_at: Option<&str>) -> Vec<Claim> {
    let pf = "https://www.politifact.com";
    // The stored URL is as the page declares it; the id is made from its canonical form, which
    // has no trailing slash (ids have not changed since the first release).
    let claim = |url: &str, text: &str, verdict: &str, rating: &str| Claim {
        id: noisebench_core::stable_id("claim", &[url.trim_end_matches('/')]),
        text: text.into(),
        verdict: verdict.into(),
        original_rating: rating.into(),
        url: Some(url.into()),
        fetched_at: fetched_at.map(String::from),
        ..Claim::default()
    };
    let s = |x: &str| Some(x.to_string());
    vec![
        Claim {
            speaker: s("Jane Senator"),
            claim_date: s("2024-01-09"),
            venue: s("a campaign speech in Ohio"),
            fact_checker: s("PolitiFact"),
            review_date: s("2024-01-12"),
            country: s("US"),
            topics: vec!["Education".into(), "Ohio".into()],
            source: "scrape:www.politifact.com".into(),
            archive_ref: Some(sha("politifact/article-a.html")),
            ..claim(
                &format!("{pf}/factchecks/2024/jan/12/jane-senator/claim-a/"),
                "The state cut its school budget in half last year.",
                "false",
                "false",
            )
        },
        Claim {
            speaker: s("Facebook posts"),
            claim_date: s("2024-01-11"),
            venue: s("a Facebook post"),
            fact_checker: s("PolitiFact"),
            review_date: s("2024-01-15"),
            country: s("US"),
            topics: vec!["Health Care".into(), "Facebook Fact-checks".into()],
            source: "scrape:www.politifact.com".into(),
            archive_ref: Some(sha("politifact/article-b.html")),
            ..claim(
                &format!("{pf}/factchecks/2024/jan/15/facebook-posts/claim-b/"),
                "Drinking seawater cures the flu.",
                "false",
                "pants-fire",
            )
        },
        Claim {
            speaker: s("Barack Obama"),
            claim_date: s("2012-01-10"),
            venue: s("a speech"),
            fact_checker: s("PolitiFact"),
            review_date: s("2012-01-12"),
            country: s("US"),
            topics: vec!["Economy".into(), "Trade".into()],
            source: "scrape:www.politifact.com".into(),
            archive_ref: Some(sha("politifact/legacy-h.html")),
            ..claim(
                &format!("{pf}/truth-o-meter/statements/2012/jan/10/barack-obama/legacy-h/"),
                "Exports grew faster than in any decade \u{2014} caf\u{e9} owners included.",
                "false",
                "mostly-false",
            )
        },
        Claim {
            speaker: s("Moon Blogger"),
            claim_date: s("2024-01-28"),
            fact_checker: s("Example Checks"),
            review_date: s("2024-02-01"),
            original_url: s("https://social.example/posts/123"),
            source: "scrape:checks.example".into(),
            archive_ref: Some(sha("checks-example/moon-cheese.html")),
            ..claim(
                "https://checks.example/fact-checks/moon-cheese",
                "The moon is made of cheese.",
                "false",
                "false",
            )
        },
        Claim {
            speaker: s("Transit Authority"),
            claim_date: s("2024-01-30"),
            fact_checker: s("Example Checks"),
            review_date: s("2024-02-05"),
            source: "scrape:checks.example".into(),
            archive_ref: Some(sha("checks-example/rail-jobs.html")),
            ..claim(
                "https://checks.example/fact-checks/rail-jobs",
                "The rail line created 3,000 jobs.",
                "true",
                "mostly-true",
            )
        },
    ]
}

fn expected_drops() -> BTreeMap<String, i64> {
    [
        ("flip_o_meter", 1),
        ("http_404", 1),
        ("missing_rating", 1),
        ("unknown_rating", 2),
        ("redirect_loop", 1),
        ("robots_disallowed", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn without_fetch_time(claims: &[Claim]) -> Vec<Claim> {
    claims
        .iter()
        .map(|c| Claim {
            fetched_at: None,
            ..c.clone()
        })
        .collect()
}

#[test]
fn scrape_live_then_replay_the_archive() {
    let (pf_server, pf) = serve(&sites().join("politifact"));
    let pf_addr = pf_server.addr();
    let (ce_server, ce) = serve(&sites().join("checks-example"));
    let ce_addr = ce_server.addr();
    let archive = tempfile::tempdir().unwrap();
    let live = web(json!({
        "allow_addresses": ["loopback"],
        "rate_per_second": 10.0,
        "archive_dir": archive.path(),
        "user_agent": "noisebench-test/1",
    }));
    let config =
        json!({"sources": sources(&format!("http://{pf_addr}"), &format!("http://{ce_addr}"))});
    let started = Instant::now();
    let (claims, report) = run(&live, config.clone());
    let elapsed = started.elapsed();
    eprintln!(
        "live scrape of the fixture sites: {elapsed:?}, {} requests",
        pf.paths().len() + ce.paths().len()
    );

    assert_eq!(without_fetch_time(&claims), expected(None));
    for c in &claims {
        let at = c.fetched_at.as_deref().unwrap();
        assert!(chrono_like(at), "{at}");
    }
    assert_eq!(report.drop_reasons(), expected_drops());
    assert_eq!(report.items_out, 5);
    // 4 + 5 listing items and 3 article URLs.
    assert_eq!(report.items_in, 12);

    // Paging stopped at "No Results found"; robots.txt read once; the disallowed page never asked.
    let paths = pf.paths();
    assert!(paths.contains(&"/factchecks/list/?page=3".to_string()));
    assert!(!paths.iter().any(|p| p.contains("page=4")), "{paths:?}");
    assert_eq!(paths.iter().filter(|p| *p == "/robots.txt").count(), 1);
    assert!(!paths.iter().any(|p| p.starts_with("/private/")));
    // Per-host pacing as the server saw it: 10/s means at most 10 requests in any second (one
    // more allowed for arrival jitter on a loaded machine; an unpaced client sends them all at
    // once).
    for site in [&pf, &ce] {
        let times = site.times();
        assert!(most_in_a_second(&times) <= 11, "{times:?}");
    }

    // Replay the archive: same claims (fetch times included), same drops, no request.
    let before = pf.paths().len() + ce.paths().len();
    let replay_web = web(json!({"mode": "replay", "replay_archive": archive.path()}));
    let started = Instant::now();
    let (replayed, replay_report) = run(&replay_web, config);
    eprintln!("archive replay: {:?}", started.elapsed());
    assert_eq!(replayed, claims);
    assert_eq!(replay_report.drop_reasons(), report.drop_reasons());
    assert_eq!(
        pf.paths().len() + ce.paths().len(),
        before,
        "replay made no request"
    );
}

/// Two `claims-scrape` stages run at once on the same host: the listing, and three articles given
/// directly. Returns the request times the server saw and how many times it was asked robots.txt.
fn two_stages_at_once(first: Arc<Web>, second: Arc<Web>) -> (Vec<Instant>, usize) {
    let (server, site) = serve(&sites().join("politifact"));
    let base = server.url().to_string();
    let listing = json!({"sources": [{"kind": "politifact", "base_url": base, "max_pages": 5}]});
    let articles = json!({"sources": [{"kind": "articles", "urls": [
        format!("{base}/factchecks/2024/jan/12/jane-senator/claim-a/"),
        format!("{base}/factchecks/2024/jan/15/facebook-posts/claim-b/"),
        format!("{base}/truth-o-meter/statements/2012/jan/10/barack-obama/legacy-h/"),
    ]}]});
    let start = std::sync::Barrier::new(2);
    let (listed, given) = std::thread::scope(|s| {
        let listed = s.spawn(|| {
            start.wait();
            run(&first, listing)
        });
        let given = s.spawn(|| {
            start.wait();
            run(&second, articles)
        });
        (listed.join().unwrap(), given.join().unwrap())
    });
    assert_eq!(listed.0.len(), 3, "{:?}", listed.1.drop_reasons());
    assert_eq!(given.0.len(), 3, "{:?}", given.1.drop_reasons());
    let robots = site.paths().iter().filter(|p| *p == "/robots.txt").count();
    (site.times(), robots)
}

/// The most requests the server saw within any one second.
fn most_in_a_second(times: &[Instant]) -> usize {
    times
        .iter()
        .map(|start| {
            times
                .iter()
                .filter(|t| **t >= *start && **t - *start < Duration::from_secs(1))
                .count()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn stages_sharing_the_runs_web_share_its_rate_limit_per_host() {
    let table = json!({"allow_addresses": ["loopback"], "rate_per_second": 10.0});
    // One `Web` for the run, as the cli builds it: 10/s for the host whichever stage asks, and
    // robots.txt read once.
    let shared = web(table.clone());
    let (times, robots) = two_stages_at_once(shared.clone(), shared);
    assert!(most_in_a_second(&times) <= 11, "{times:?}");
    assert_eq!(robots, 1);
    assert!(times.len() >= 12, "{} requests", times.len());

    // A `Web` per stage (as `claims-scrape` once built for itself) holds 10/s per stage only: the
    // server sees two streams, so some requests closer than 100 ms. This shows the check above
    // would catch a second limiter.
    let (times, robots) = two_stages_at_once(web(table.clone()), web(table));
    assert!(most_in_a_second(&times) >= 13, "{times:?}");
    assert_eq!(robots, 2);
}

fn chrono_like(s: &str) -> bool {
    s.len() >= 20 && s.as_bytes()[4] == b'-' && s.contains('T') && s.ends_with('Z')
}

#[test]
fn replay_from_the_fixture_folder_gives_the_same_ids() {
    let replay = web(json!({"mode": "replay", "replay_fixtures": "fixtures/sites"}));
    let config =
        json!({"sources": sources("https://www.politifact.com", "https://checks.example")});
    let (claims, report) = run(&replay, config);
    assert_eq!(claims, expected(Some("2025-01-15T00:00:00Z")));
    assert_eq!(report.drop_reasons(), expected_drops());
}

#[test]
fn filters_speakers_dates_and_ratings() {
    let replay = web(json!({"mode": "replay", "replay_fixtures": "fixtures/sites"}));
    let mut config = json!({
        "sources": sources("https://www.politifact.com", "https://checks.example"),
        "speakers": ["jane-senator", "Moon Blogger", "Barack Obama"],
        "date_from": "2020-01-01",
    });
    let (claims, report) = run(&replay, config.clone());
    let texts: Vec<&str> = claims
        .iter()
        .map(|c| c.speaker.as_deref().unwrap())
        .collect();
    assert_eq!(texts, ["Jane Senator", "Moon Blogger"]);
    let reasons = report.drop_reasons();
    // Listing level: Facebook posts and John Mayor x3; article level: Transit Authority (the
    // bridge photo's unknown rating is found before its speaker is compared). Obama (2012) by date.
    assert_eq!(reasons.get("filtered_speaker"), Some(&5), "{reasons:?}");
    assert_eq!(reasons.get("unknown_rating"), Some(&1), "{reasons:?}");
    assert_eq!(reasons.get("filtered_date"), Some(&1), "{reasons:?}");
    config["ratings"] = json!(["Mostly True", "pants-fire"]);
    config["speakers"] = json!([]);
    let (claims, _) = run(&replay, config);
    let ratings: Vec<&str> = claims.iter().map(|c| c.original_rating.as_str()).collect();
    assert_eq!(ratings, ["pants-fire", "mostly-true"]);
}

#[test]
fn internal_addresses_are_refused_when_not_allowed() {
    let (pf_server, pf) = serve(&sites().join("politifact"));
    let pf_addr = pf_server.addr();
    let guarded = web(json!({"rate_per_second": 50.0}));
    let config = json!({"sources": [{"kind": "politifact", "base_url": format!("http://{pf_addr}"), "max_pages": 2}]});
    let (claims, report) = run(&guarded, config);
    assert!(claims.is_empty());
    assert_eq!(
        report.drop_reasons(),
        BTreeMap::from([("blocked_address".to_string(), 1)])
    );
    assert!(pf.paths().is_empty());
}

#[test]
fn max_pages_bounds_the_listing() {
    let replay = web(json!({"mode": "replay", "replay_fixtures": "fixtures/sites"}));
    let config = json!({"sources": [{"kind": "politifact", "max_pages": 1, "max_articles": 2}]});
    let (claims, report) = run(&replay, config);
    assert_eq!(claims.len(), 2, "{claims:?}");
    let reasons = report.drop_reasons();
    // Page 1's third entry is a Flip-O-Meter ruling, dropped from the listing before the cap
    // counts; only the fourth is over the cap.
    assert_eq!(reasons.get("flip_o_meter"), Some(&1));
    assert_eq!(reasons.get("max_articles"), Some(&1));
}

/// Two live PolitiFact listing pages and their first articles. Run by hand:
/// `cargo test -p noisebench-claims --test it -- --ignored scrape::live_politifact` (needs internet;
/// NOISEBENCH_LIVE=1 must be set so a stray `--ignored` run stays offline).
#[test]
#[ignore]
fn live_politifact() {
    if std::env::var("NOISEBENCH_LIVE").as_deref() != Ok("1") {
        eprintln!("set NOISEBENCH_LIVE=1 to run");
        return;
    }
    let live = web(json!({"rate_per_second": 0.5}));
    let config = json!({"sources": [{"kind": "politifact", "max_pages": 2, "max_articles": 6}]});
    let (claims, report) = run(&live, config);
    eprintln!("{} claims, drops {:?}", claims.len(), report.drop_reasons());
    for c in &claims {
        eprintln!(
            "{} | {} | {} | {:?} | {:?}",
            c.original_rating, c.verdict, c.text, c.speaker, c.claim_date
        );
    }
    assert!(
        report.items_in >= 40,
        "two listing pages hold about 30 items each"
    );
    assert!(!claims.is_empty());
    assert!(claims.iter().all(|c| {
        c.url
            .as_deref()
            .unwrap()
            .starts_with("https://www.politifact.com/")
    }));
}

fn claim_with_text<'a>(claims: &'a [Claim], start: &str) -> &'a Claim {
    claims
        .iter()
        .find(|c| c.text.starts_with(start))
        .unwrap_or_else(|| panic!("no claim starting {start:?} in {claims:?}"))
}

#[test]
fn stored_urls_lead_back_to_the_page_fetched() {
    let (server, _site) = serve_pages_with(|base| {
        let mut pages = politifact_without_canonical();
        // A ClaimReview naming the page on this server, with a port, tracking parameters and a
        // fragment; and one naming it by a relative URL.
        let ce = fixture_pages(&sites().join("checks-example"));
        for (name, declared) in [
            (
                "moon-cheese",
                format!("{base}/fact-checks/moon-cheese?utm_source=feed#verdict"),
            ),
            ("rail-jobs", "/fact-checks/rail-jobs".to_string()),
        ] {
            let path = format!("/fact-checks/{name}");
            let body = String::from_utf8(ce[&path].2.clone()).unwrap().replace(
                &format!("https://checks.example/fact-checks/{name}"),
                &declared,
            );
            pages.insert(path, page(body));
        }
        pages
    });
    let base = server.url().to_string();
    let config = json!({"sources": [
        {"kind": "politifact", "base_url": base, "max_pages": 5},
        {"kind": "articles", "urls": [
            format!("{base}/fact-checks/moon-cheese"),
            format!("{base}/fact-checks/rail-jobs"),
        ]},
    ]});
    let (claims, _) = run(&loopback_web(), config);
    let url_of = |start: &str| claim_with_text(&claims, start).url.clone().unwrap();

    // No ClaimReview, no canonical link: the URL fetched, scheme and port kept.
    let b = url_of("Drinking seawater");
    assert_eq!(
        b,
        format!("{base}/factchecks/2024/jan/15/facebook-posts/claim-b/")
    );
    assert!(b.starts_with(&format!("http://127.0.0.1:{}/", server.addr().port())));
    assert_eq!(
        url_of("Exports grew"),
        format!("{base}/truth-o-meter/statements/2012/jan/10/barack-obama/legacy-h/")
    );
    // ClaimReview URLs: tracking parameters and fragment dropped, scheme and port kept; a relative
    // one resolved against the page.
    assert_eq!(
        url_of("The moon"),
        format!("{base}/fact-checks/moon-cheese")
    );
    assert_eq!(
        url_of("The rail line"),
        format!("{base}/fact-checks/rail-jobs")
    );
    // A ClaimReview naming the real site keeps that URL.
    assert_eq!(
        url_of("The state cut"),
        "https://www.politifact.com/factchecks/2024/jan/12/jane-senator/claim-a/"
    );

    // Ids are made as before, from the canonical form (https, no port, no trailing slash).
    let id_of = |start: &str| claim_with_text(&claims, start).id.clone();
    assert_eq!(
        id_of("Drinking seawater"),
        noisebench_core::stable_id(
            "claim",
            &["https://127.0.0.1/factchecks/2024/jan/15/facebook-posts/claim-b"]
        )
    );
    assert_eq!(
        id_of("The moon"),
        noisebench_core::stable_id("claim", &["https://127.0.0.1/fact-checks/moon-cheese"])
    );

    // Every stored URL on this server fetches the very page the claim was read from.
    let web = loopback_web();
    let mut checked = 0;
    for claim in &claims {
        let url = claim.url.as_deref().unwrap();
        if !url.starts_with(&base) {
            continue;
        }
        let page = web
            .fetch(url)
            .unwrap_or_else(|e| panic!("{url} does not lead back: {e}"));
        assert_eq!(page.status, 200, "{url}");
        assert_eq!(Some(&page.sha256), claim.archive_ref.as_ref(), "{url}");
        checked += 1;
    }
    assert_eq!(checked, 4, "{claims:?}");
}

/// A PolitiFact site on a loopback port (so no host rule can tell it is PolitiFact's) with one
/// current-layout article, one pre-2020 article, and one pre-2020 article in markup the legacy
/// selectors do not know (`div.statement__text`), whose statement and rating come from the listing.
fn politifact_layouts_site() -> Pages {
    let fixture = politifact_without_canonical();
    let entry = |href: &str, statement: &str, meter: &str| {
        format!(
            r#"<article class="m-statement">
  <div class="m-statement__meta"><a class="m-statement__name" title="Barack Obama">Barack Obama</a>
    <div class="m-statement__desc">stated on January 10, 2012 in a speech:</div></div>
  <div class="m-statement__quote"><a href="{href}">“{statement}”</a></div>
  <div class="m-statement__meter"><img class="c-image__original" src="https://static.politifact.com/politifact/rulings/meter-{meter}.jpg"></div>
  <footer class="m-statement__footer">By Old Reporter • January 12, 2012</footer>
</article>"#
        )
    };
    let listing = format!(
        "<html><body>{}{}{}</body></html>",
        entry(
            "/factchecks/current/",
            "Drinking seawater cures the flu.",
            "pants-fire"
        ),
        entry(
            "/truth-o-meter/statements/legacy/",
            "Exports grew faster.",
            "barely-true"
        ),
        entry(
            "/truth-o-meter/statements/legacy-variant/",
            "Imports fell.",
            "false"
        ),
    );
    let body = |path: &str| fixture[path].2.clone();
    let legacy = fixture["/truth-o-meter/statements/2012/jan/10/barack-obama/legacy-h/"].clone();
    let mut variant = legacy.clone();
    variant.2 = replace_ascii(
        &variant.2,
        "<p class=\"statement__text\">",
        "<div class=\"statement__text\">",
    );
    Pages::from([
        ("/factchecks/list/?page=1".into(), page(listing)),
        (
            "/factchecks/list/?page=2".into(),
            page("<h2>No Results found</h2>"),
        ),
        (
            "/factchecks/current/".into(),
            page(body("/factchecks/2024/jan/15/facebook-posts/claim-b/")),
        ),
        ("/truth-o-meter/statements/legacy/".into(), legacy),
        ("/truth-o-meter/statements/legacy-variant/".into(), variant),
    ])
}

#[test]
fn publisher_fields_are_the_sites_whatever_the_layout() {
    let (server, _site) = serve_pages(politifact_layouts_site());
    let base = server.url().to_string();
    let publisher = |claims: &[Claim]| -> Vec<(Option<String>, Option<String>)> {
        claims
            .iter()
            .map(|c| (c.fact_checker.clone(), c.country.clone()))
            .collect()
    };
    let politifact = (Some("PolitiFact".to_string()), Some("US".to_string()));

    // From the site's listing.
    let config = json!({"sources": [{"kind": "politifact", "base_url": base, "max_pages": 2}]});
    let (claims, report) = run(&loopback_web(), config);
    assert_eq!(claims.len(), 3, "{:?}", report.drop_reasons());
    assert_eq!(
        publisher(&claims),
        vec![politifact.clone(); 3],
        "{claims:?}"
    );

    // The same pages listed as articles of a configured PolitiFact site (no listing entry to help).
    let config = json!({"sources": [
        {"kind": "politifact", "base_url": base, "start_page": 2},
        {"kind": "articles", "urls": [
            format!("{base}/factchecks/current/"),
            format!("{base}/truth-o-meter/statements/legacy/"),
        ]},
    ]});
    let (claims, report) = run(&loopback_web(), config);
    assert_eq!(claims.len(), 2, "{:?}", report.drop_reasons());
    assert_eq!(publisher(&claims), vec![politifact; 2], "{claims:?}");
}

#[test]
fn flip_o_meter_entries_are_dropped_from_the_listing_unfetched() {
    let (server, site) = serve(&sites().join("politifact"));
    let base = server.url().to_string();
    let config = json!({"sources": [{"kind": "politifact", "base_url": base, "max_pages": 5}]});
    let (claims, report) = run(&loopback_web(), config);
    let flip_path = "/factchecks/2024/jan/16/jane-senator/flip-c/";
    let paths = site.paths();
    assert!(
        !paths.iter().any(|p| p == flip_path),
        "the flip entry's article was requested: {paths:?}"
    );
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("/factchecks/2024/jan/15/"))
    );
    let flips: Vec<_> = report
        .drops
        .iter()
        .filter(|d| d.reason == "flip_o_meter")
        .collect();
    assert_eq!(flips.len(), 1, "{:?}", report.drops);
    assert_eq!(flips[0].item, format!("{base}{flip_path}"));
    assert!(
        flips[0].detail.contains("full-flop") && flips[0].detail.contains("not fetched"),
        "{}",
        flips[0].detail
    );
    // Still accounted for: every listing item is a claim or a drop.
    assert_eq!(
        report.items_in,
        report.items_out + report.drops.iter().filter(|d| d.dropped).count() as u64
    );
    assert_eq!(claims.len(), 3);
}

/// Real pages (fixtures/real/, issue 32) through the stage end to end, served on 127.0.0.1:
/// today's PolitiFact listing (May 2026, meters as `-th` thumbnails, Pants on Fire as the class
/// `m-statement--fire`) with a ratings filter, which can only spare the fetches when the listing's
/// ratings are read; and real fact-check articles of five publishers, whose claims must hold their
/// golden fields.
#[test]
fn real_pages_through_the_stage() {
    let real = repo_root().join("fixtures/real");
    let file = |path: &str| std::fs::read(real.join(path)).unwrap();
    let article_2023 =
        "/factchecks/2023/may/31/tiktok-posts/rainbow-disconnection-roseanne-barr-didnt-share-co/";
    let factchecks = [
        "afp-factcheck-cdc.html",
        "vishvas-sunak.html",
        "snopes-piker.html",
        "indiatoday-modi.html",
        "aosfatos.html",
        "tfc-4539.html",
    ];
    let mut pages = Pages::from([
        (
            "/factchecks/list/?page=1".to_string(),
            page(file("politifact/list-2026-05.html")),
        ),
        (
            article_2023.to_string(),
            page(file("politifact/article-2023-rainbow.html")),
        ),
    ]);
    for f in factchecks {
        pages.insert(format!("/real/{f}"), page(file(&format!("factcheck/{f}"))));
    }
    pages.insert(
        "/real/edge/several-claimreviews.html".to_string(),
        page(file("factcheck/edge/several-claimreviews.html")),
    );
    let (server, site) = serve_pages(pages);
    let base = server.url().to_string();

    // The listing: 30 statements, 4 of them Pants on Fire. The filter drops 26 from the listing,
    // unfetched; the 4 articles are not served here (404).
    let config = json!({
        "sources": [{"kind": "politifact", "base_url": base, "max_pages": 1}],
        "ratings": ["pants-fire"],
    });
    let (claims, report) = run(&loopback_web(), config);
    assert!(claims.is_empty());
    assert_eq!(report.items_in, 30);
    assert_eq!(
        report.drop_reasons(),
        BTreeMap::from([
            ("filtered_rating".to_string(), 26),
            ("http_404".to_string(), 4)
        ])
    );
    let mut fetched: Vec<String> = site
        .paths()
        .into_iter()
        .filter(|p| p.starts_with("/factchecks/2026/"))
        .collect();
    fetched.sort();
    assert_eq!(
        fetched,
        [
            "/factchecks/2026/apr/06/social-media/American-Colonel-pilot-photos-AI-Iran/",
            "/factchecks/2026/apr/13/donald-trump/Pope-Leo-nuclear-weapon-Iran-Trump/",
            "/factchecks/2026/apr/22/tweets/Biden-Oval-Office-2024-elections/",
            "/factchecks/2026/apr/23/robert-f-kennedy-jr/percentage-decreases-drug-prices-trump-math/",
        ]
    );

    // Real articles: each claim holds its page's golden fields, Aos Fatos' "não é bem assim"
    // (half-true) included; the Taiwan FactCheck Center's 證據不足 (insufficient evidence) is
    // excluded by the `raguard` preset, and the edge page's four ClaimReviews are three claims and
    // a drop named after its ClaimReview.
    let mut urls: Vec<String> = factchecks
        .iter()
        .map(|f| format!("{base}/real/{f}"))
        .collect();
    urls.push(format!("{base}{article_2023}"));
    urls.push(format!("{base}/real/edge/several-claimreviews.html"));
    let config = json!({"sources": [{"kind": "articles", "urls": urls}]});
    let (claims, report) = run(&loopback_web(), config);
    assert_eq!(
        report.drop_reasons(),
        BTreeMap::from([
            ("empty_claim".to_string(), 1),
            ("rating_excluded".to_string(), 1)
        ])
    );
    let empty = report
        .drops
        .iter()
        .find(|d| d.reason == "empty_claim")
        .unwrap();
    assert_eq!(
        empty.item,
        format!("{base}/real/edge/several-claimreviews.html#claimreview-4")
    );
    let edge: Vec<&Claim> = claims
        .iter()
        .filter(|c| c.fact_checker.as_deref() == Some("Full Fact Example"))
        .collect();
    assert_eq!(edge.len(), 3, "{edge:?}");
    let claims: Vec<Claim> = claims
        .iter()
        .filter(|c| c.fact_checker.as_deref() != Some("Full Fact Example"))
        .cloned()
        .collect();
    let golden: toml::Value =
        toml::from_str(&std::fs::read_to_string(real.join("factcheck/golden.toml")).unwrap())
            .unwrap();
    let pf_golden: toml::Value =
        toml::from_str(&std::fs::read_to_string(real.join("politifact/golden.toml")).unwrap())
            .unwrap();
    let gold_pages: Vec<&toml::Value> = golden["page"]
        .as_array()
        .unwrap()
        .iter()
        .chain(pf_golden["page"].as_array().unwrap())
        .collect();
    assert_eq!(claims.len(), 6, "{claims:?}");
    // Aos Fatos declares its URL without a scheme: the page's is taken, here the server's http.
    let no_scheme = |u: &str| {
        u.split_once("://")
            .map_or(u.to_string(), |(_, r)| r.to_string())
    };
    for claim in &claims {
        let g = gold_pages
            .iter()
            .find(|g| g["url"].as_str().map(no_scheme) == claim.url.as_deref().map(no_scheme))
            .unwrap_or_else(|| panic!("no golden page with url {:?}", claim.url));
        let s = |k: &str| g[k].as_str().unwrap().to_string();
        let opt = |k: &str| Some(s(k)).filter(|v| !v.is_empty());
        assert_eq!(claim.text, s("text"));
        assert_eq!(claim.verdict, s("verdict"));
        assert_eq!(claim.original_rating, s("rating"));
        assert_eq!(claim.speaker, opt("speaker"), "{}", claim.text);
        assert_eq!(claim.claim_date, opt("claim_date"), "{}", claim.text);
        assert_eq!(claim.review_date, opt("review_date"), "{}", claim.text);
        assert_eq!(claim.venue, opt("venue"), "{}", claim.text);
        assert_eq!(claim.fact_checker, opt("fact_checker"), "{}", claim.text);
        assert_eq!(claim.original_url, opt("original_url"), "{}", claim.text);
        // The id an import of the same fact-check URL makes.
        assert_eq!(
            claim.id,
            noisebench_claims::claim_id(Some(&s("url")), "any text")
        );
    }
}

/// `verdict_map` keyed by the site's own rating word takes effect on real pages: the Taiwan
/// FactCheck Center's 證據不足 (insufficient evidence, which `raguard` excludes) mapped to false,
/// its 錯誤 (false) excluded; keyed by the normalised word, every site word meaning it follows.
#[test]
fn verdict_map_by_the_sites_own_word_on_real_pages() {
    let real = repo_root().join("fixtures/real/factcheck");
    let pages = Pages::from([
        (
            "/articles/4539".to_string(),
            page(std::fs::read(real.join("tfc-4539.html")).unwrap()),
        ),
        (
            "/articles/7177".to_string(),
            page(std::fs::read(real.join("tfc-7177.html")).unwrap()),
        ),
    ]);
    let (server, _site) = serve_pages(pages);
    let base = server.url().to_string();
    let urls = [
        format!("{base}/articles/4539"),
        format!("{base}/articles/7177"),
    ];
    let verdicts = |map: serde_json::Value| {
        let config = json!({"sources": [{"kind": "articles", "urls": urls}], "verdict_map": map});
        let (claims, report) = run(&loopback_web(), config);
        let got: Vec<(String, String)> = claims
            .iter()
            .map(|c| (c.original_rating.clone(), c.verdict.clone()))
            .collect();
        (got, report.drop_reasons())
    };
    let pair = |r: &str, v: &str| (r.to_string(), v.to_string());
    let (got, drops) = verdicts(json!({}));
    assert_eq!(got, [pair("false", "false")]);
    assert_eq!(drops, BTreeMap::from([("rating_excluded".to_string(), 1)]));
    let (got, drops) = verdicts(json!({"證據不足": "false", "錯誤": "exclude"}));
    assert_eq!(got, [pair("not-enough-evidence", "false")]);
    assert_eq!(drops, BTreeMap::from([("rating_excluded".to_string(), 1)]));
    let (got, _) = verdicts(json!({"not-enough-evidence": "true"}));
    assert_eq!(
        got,
        [pair("not-enough-evidence", "true"), pair("false", "false")]
    );
}
