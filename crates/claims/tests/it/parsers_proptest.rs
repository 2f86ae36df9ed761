//! The parsers never panic on arbitrary input (the cargo-fuzz target in `fuzz/` goes further).

use noisebench_claims::{claimreview, politifact};
use proptest::prelude::*;

fn base() -> url::Url {
    url::Url::parse("https://www.politifact.com/factchecks/list/?page=1").unwrap()
}

/// Fragments of the markup the parsers look for, so random input reaches their inner branches.
fn markup() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "<article class=\"m-statement\">",
        "<article class=\"m-statement m-statement--is-xlarge m-statement--false\">",
        "<li class=\"o-listicle__item\">",
        "<div class=\"m-statement__quote\"><a href=\"",
        "<div class=\"m-statement__desc\">stated on January 9, 2024 in ",
        "<div class=\"m-statement__meter\"><img src=\"/rulings/meter-",
        "<footer class=\"m-statement__footer\">By X \u{2022} ",
        "<p class=\"statement__text\">",
        "<p class=\"statement__meta\">on Tuesday, January 10th, 2012 in ",
        "<div class=\"statement__text\">",
        "<p class=\"statement__meta\"><a href=\"/personalities/x/\">X</a> on Monday, July 1st, 2019 in ",
        "<div class=\"meter\"><img src=\"/rulings/tom-",
        "<p><strong>Claim:</strong> ",
        "<p><b>Verdict</b>: ",
        "<img class=\"statement-detail\" src=\"tom_ruling_pof.png\">",
        "<script type=\"application/ld+json\">",
        "{\"@type\":\"ClaimReview\",\"reviewRating\":{\"alternateName\":",
        "\"itemReviewed\":{\"author\":[{\"name\":",
        "</script>",
        "<h2>No Results found</h2>",
        "\"",
        "}",
        "]",
        "</div>",
        "javascript:alert(1)",
    ]);
    prop::collection::vec(prop_oneof![pieces.prop_map(String::from), ".{0,12}"], 0..40)
        .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parsers_never_panic_on_markup(html in markup()) {
        let listing = politifact::parse_listing(&html, &base());
        for item in &listing.items {
            prop_assert!(item.url.starts_with("http"));
        }
        let _ = politifact::parse_article(&html, &base());
        let _ = claimreview::extract(&html);
        let _ = politifact::rating_from_image(&html);
    }

    /// A `[[sites]]` entry with any label reads any markup without panicking, and every claim it
    /// reads starts after its label.
    #[test]
    fn site_selectors_never_panic(
        html in markup(),
        label in prop_oneof![Just("Claim:".to_string()), Just("É".to_string()), ".{0,6}"],
    ) {
        let entry: noisebench_claims::SiteSelectors = serde_json::from_value(serde_json::json!({
            "host": "checks.example", "claim": "p", "claim_label": label,
            "rating": "p, b", "rating_label": "Verdict",
        }))
        .unwrap();
        let sites = noisebench_claims::Sites::new(&[entry]).unwrap();
        let readings =
            noisebench_claims::read_page_with_sites(&html, "https://checks.example/a", None, &sites);
        for claim in readings.into_iter().flatten() {
            prop_assert!(!claim.text.is_empty());
        }
    }

    #[test]
    fn parsers_never_panic_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = politifact::parse_listing(&text, &base());
        let _ = politifact::parse_article(&text, &base());
        let _ = claimreview::extract(&text);
    }
}
