//! Arbitrary bytes into the listing, article and JSON-LD parsers: none may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use noisebench_claims::{claimreview, politifact};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let base = url::Url::parse("https://www.politifact.com/factchecks/list/?page=1").unwrap();
    let _ = politifact::parse_listing(&text, &base);
    let _ = politifact::parse_article(&text, &base);
    let _ = politifact::rating_from_image(&text);
    let _ = claimreview::extract(&text);
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let mut out = Vec::new();
        claimreview::from_json(&value, &mut out);
    }
});
