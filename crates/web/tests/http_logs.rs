//! With secrets named, no log line holds one, at TRACE, through retries and failures. (Its own
//! test binary: it installs a global tracing subscriber.)

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use noisebench_testkit::{Served, capture_logs, refused_addr};
use noisebench_web::{AddressClass, HttpClient, HttpConfig, HttpRequest, RetryPolicy, Secret, Url};

const KEY: &str = "AIzaSy-logs-0123456789abcdef";
const TOKEN: &str = "tok-logs-5b4a39281706";

#[test]
fn no_log_line_holds_a_secret() {
    let logs = capture_logs();
    let app = Router::new()
        .fallback(|| async { (StatusCode::TOO_MANY_REQUESTS, "slow down").into_response() });
    let server = Served::start(app);
    let http = HttpClient::new(HttpConfig {
        rate_per_second: None,
        retry: RetryPolicy {
            max_retries: 2,
            first_delay: Duration::from_millis(10),
            retry_connect_errors: true,
            ..RetryPolicy::default()
        },
        allow_addresses: vec![AddressClass::Loopback],
        ..HttpConfig::default()
    })
    .unwrap();
    for base in [
        server.url().to_string(),
        format!("http://{}", refused_addr()),
    ] {
        let mut u = Url::parse(&format!("{base}/customsearch/v1")).unwrap();
        u.query_pairs_mut()
            .append_pair("key", KEY)
            .append_pair("q", "lemon");
        let _ = http.send_blocking(
            &HttpRequest::get(u)
                .secret(Secret::QueryParam("key".into()))
                .bearer_auth(TOKEN),
        );
    }
    let logs = logs.text();
    assert!(
        logs.contains("retrying"),
        "TRACE logs were captured: {logs}"
    );
    assert!(
        logs.contains("key=%5BREDACTED%5D"),
        "the URL is logged with its key replaced: {logs}"
    );
    assert!(!logs.contains(KEY) && !logs.contains(TOKEN), "{logs}");
}
