//! Claim ids: from the canonical fact-check URL when there is one, else from the claim text.
//! Imports and scrapes use the same function, so the same fact-check gets the same id either way.

use noisebench_core::stable_id;

/// The fact-check URL to store: scheme, host, port and path as given, without fragment or `utm_*`
/// parameters, so it still leads to the page (a test site on `http://127.0.0.1:<port>` included).
/// `None` for anything but an absolute http(s) URL.
pub fn fact_check_url(raw: &str) -> Option<String> {
    let mut url = parse_http(raw)?;
    url.set_fragment(None);
    if url.query_pairs().any(|(k, _)| is_tracking(&k)) {
        drop_tracking(&mut url);
    }
    Some(url.into())
}

/// The fact-check URL without fragment, default port, trailing slash or `utm_*` parameters, with
/// `http` upgraded to `https` and the host in lower case. It names the fact-check (ids are made
/// from it), it is not meant to be fetched: [`fact_check_url`] is.
pub fn canonical_fact_check_url(raw: &str) -> Option<String> {
    let mut url = parse_http(raw)?;
    let _ = url.set_scheme("https");
    url.set_fragment(None);
    let _ = url.set_port(None);
    // Always rewritten (even with nothing to drop), as ids have been made since the first release.
    drop_tracking(&mut url);
    let mut text = url.to_string();
    if text.ends_with('/') && url.path() != "/" {
        text.pop();
    }
    Some(text)
}

fn parse_http(raw: &str) -> Option<url::Url> {
    let url = url::Url::parse(raw.trim()).ok()?;
    matches!(url.scheme(), "http" | "https").then_some(url)
}

fn is_tracking(key: &str) -> bool {
    key.starts_with("utm_")
}

fn drop_tracking(url: &mut url::Url) {
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !is_tracking(k))
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
}

/// A claim's stable id: `claim_<hash>` of the canonical fact-check URL, or of the normalised
/// claim text when there is no usable URL.
pub fn claim_id(fact_check_url: Option<&str>, text: &str) -> String {
    match fact_check_url.and_then(canonical_fact_check_url) {
        Some(url) => stable_id("claim", &[&url]),
        None => {
            let normalised = text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            stable_id("claim", &["text", &normalised])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_urls_agree() {
        let a = "https://www.politifact.com/factchecks/2020/mar/03/x/y/";
        let b = "http://WWW.politifact.com/factchecks/2020/mar/03/x/y?utm_source=tw#top";
        assert_eq!(canonical_fact_check_url(a), canonical_fact_check_url(b));
        assert_eq!(claim_id(Some(a), "one"), claim_id(Some(b), "two"));
        assert_eq!(
            claim_id(None, "A  claim"),
            claim_id(Some("not a url"), "a claim")
        );
        assert_ne!(claim_id(None, "a claim"), claim_id(Some(a), "a claim"));
    }

    #[test]
    fn stored_urls_keep_scheme_port_and_path() {
        let raw = "http://127.0.0.1:18471/factchecks/x/?utm_source=tw&id=3#top";
        assert_eq!(
            fact_check_url(raw).as_deref(),
            Some("http://127.0.0.1:18471/factchecks/x/?id=3")
        );
        assert_eq!(
            canonical_fact_check_url(raw).as_deref(),
            Some("https://127.0.0.1/factchecks/x/?id=3")
        );
        // A query with nothing to drop is left as written.
        assert_eq!(
            fact_check_url("https://checks.example/a?q=a%20b").as_deref(),
            Some("https://checks.example/a?q=a%20b")
        );
        assert_eq!(fact_check_url("/relative/path"), None);
        assert_eq!(fact_check_url("ftp://x.example/"), None);
    }
}
