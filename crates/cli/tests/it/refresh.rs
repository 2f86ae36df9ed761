//! `refresh`: a live fact-check site on 127.0.0.1 publishes a new article; `build-snapshot` sees
//! nothing new (no input changed), `refresh` refetches the live stage and publishes a minor
//! version, and stages that read no live source are left alone.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::{Path, State};
use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::NoProgress;
use noisebench_snapshot::{PublishOptions, PublishOutcome};
use noisebench_testkit::{Served, respond};

fn site_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/sites/checks-example")
}

/// Serves the ClaimReview fixture articles; `rail-jobs` only once `published` is set.
async fn article(
    State(published): State<Arc<AtomicBool>>,
    Path(slug): Path<String>,
) -> axum::response::Response {
    let visible = match slug.as_str() {
        "moon-cheese" => true,
        "rail-jobs" => published.load(Ordering::SeqCst),
        _ => false,
    };
    match std::fs::read_to_string(site_dir().join(format!("{slug}.html"))) {
        Ok(html) if visible => respond(200, "text/html; charset=utf-8", html),
        _ => respond(404, "text/plain", "no such article"),
    }
}

#[test]
fn refresh_refetches_live_stages_and_publishes_what_changed() {
    let published = Arc::new(AtomicBool::new(false));
    let site = Served::start(
        Router::new()
            .route("/fact-checks/{slug}", axum::routing::get(article))
            .with_state(published.clone()),
    );
    let dir = tempfile::tempdir().unwrap();
    let claims = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/claims/politifact.csv")
        .canonicalize()
        .unwrap();
    let pipeline = format!(
        r#"
[pipeline]
name = "live"

[web]
allow_addresses = ["loopback"]
rate_per_second = 50.0

[stages.scraped]
kind = "claims-scrape"
[stages.scraped.config]
sources = [{{ kind = "articles", urls = ["{url}/fact-checks/moon-cheese", "{url}/fact-checks/rail-jobs"] }}]

[stages.imported]
kind = "claims-import"
[[stages.imported.config.sources]]
path = "{claims}"
preset = "politifact"

[snapshot]
dataset = "live"
tables = ["scraped"]
"#,
        url = site.url(),
        claims = claims.display(),
    );
    let path = dir.path().join("live.toml");
    std::fs::write(&path, pipeline).unwrap();
    let path = path.to_str().unwrap();
    let mut ws = Workspace::at(dir.path(), Arc::new(NoProgress));

    let first = build_snapshot(&ws, path, false, &PublishOptions::default()).unwrap();
    let scraped = first
        .run
        .summary
        .iter()
        .find(|s| s.id == "scraped")
        .unwrap();
    assert_eq!(
        (scraped.items_out, scraped.drop_reasons.get("http_404")),
        (1, Some(&1))
    );
    assert!(
        matches!(first.outcome, Some(PublishOutcome::Published { ref version, .. }) if version == "1.0.0")
    );

    // The site publishes the second article. A build sees no changed input: nothing reruns.
    published.store(true, Ordering::SeqCst);
    let again = build_snapshot(&ws, path, false, &PublishOptions::default()).unwrap();
    assert_eq!(again.run.ran(), 0);
    assert!(matches!(
        again.outcome,
        Some(PublishOutcome::Unchanged { .. })
    ));

    // The live run archived what it fetched (work/archive by default).
    let index = std::fs::read_to_string(dir.path().join("work/archive/index.jsonl")).unwrap();
    // robots.txt (404: no rules), the missing article (404), the article (200).
    assert_eq!(index.lines().count(), 3, "{index}");
    assert!(
        index.contains("/fact-checks/moon-cheese\",\"status\":200"),
        "{index}"
    );

    // A refresh refetches the live stage only; the new claim is a minor version.
    ws.refresh = true;
    let refreshed = build_snapshot(&ws, path, false, &PublishOptions::default()).unwrap();
    let status: Vec<(&str, &str)> = refreshed
        .run
        .summary
        .iter()
        .map(|s| (s.id.as_str(), s.status.as_str()))
        .collect();
    assert_eq!(status, [("scraped", "ran"), ("imported", "skipped")]);
    let scraped = refreshed
        .run
        .summary
        .iter()
        .find(|s| s.id == "scraped")
        .unwrap();
    assert_eq!((scraped.items_out, scraped.items_dropped), (2, 0));
    match refreshed.outcome {
        Some(PublishOutcome::Published {
            version, changes, ..
        }) => {
            // moon-cheese was fetched again (a new fetch time) but says the same: not a change.
            assert_eq!(version, "1.1.0");
            let t = &changes.tables["claims"];
            assert_eq!(
                (t.added.len(), t.changed.len(), t.refetched.len()),
                (1, 0, 1)
            );
        }
        other => panic!("expected a new version, got {other:?}"),
    }

    // Refreshing again with nothing new on the site publishes nothing.
    let quiet = build_snapshot(&ws, path, false, &PublishOptions::default()).unwrap();
    assert!(
        matches!(quiet.outcome, Some(PublishOutcome::Unchanged { ref version, .. }) if version == "1.1.0")
    );
}
