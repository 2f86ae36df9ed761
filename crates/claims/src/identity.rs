//! Claim ids: from the canonical fact-check URL when there is one, else from the claim text.
//! Imports and scrapes use the same function, so the same fact-check gets the same id either way.

use noisebench_core::stable_id;

/// The fact-check URL without fragment, default port, trailing slash or `utm_*` parameters, with
/// `http` upgraded to `https` and the host in lower case.
pub fn canonical_fact_check_url(raw: &str) -> Option<String> {
    let mut url = url::Url::parse(raw.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let _ = url.set_scheme("https");
    url.set_fragment(None);
    let _ = url.set_port(None);
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !k.starts_with("utm_"))
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    let mut text = url.to_string();
    if text.ends_with('/') && url.path() != "/" {
        text.pop();
    }
    Some(text)
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
}
