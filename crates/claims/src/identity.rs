//! Claim ids: from the canonical fact-check URL when there is one, else from the claim text.
//! Imports and scrapes use the same function, so the same fact-check gets the same id either way.

use noisebench_core::stable_id;

/// The fact-check URL to store: scheme, host, port and path as given (runs of `/` in the path
/// made one: `snopes.com//fact-check/x` is `snopes.com/fact-check/x`), without fragment or `utm_*`
/// parameters, so it still leads to the page (a test site on `http://127.0.0.1:<port>` included).
/// `None` for anything but an absolute http(s) URL.
pub(crate) fn fact_check_url(raw: &str) -> Option<String> {
    let mut url = parse_http(raw)?;
    collapse_slashes(&mut url);
    url.set_fragment(None);
    if url.query_pairs().any(|(k, _)| is_tracking(&k)) {
        drop_tracking(&mut url);
    }
    Some(url.into())
}

/// The fact-check URL without fragment, default port, trailing slash, doubled `/` in the path or
/// `utm_*` parameters, with `http` upgraded to `https` and the host in lower case. It names the
/// fact-check (ids are made from it, by import and scrape alike), it is not meant to be fetched:
/// [`fact_check_url`] is.
pub(crate) fn canonical_fact_check_url(raw: &str) -> Option<String> {
    let mut url = parse_http(raw)?;
    collapse_slashes(&mut url);
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

/// A URL a page declares for itself (ClaimReview `url`, canonical link), made absolute against the
/// page's own URL `base`. Besides absolute, scheme-relative (`//host/p`) and relative forms, a
/// scheme-less URL whose first segment is a host name (`aosfatos.org/noticias/x/`, as some
/// publishers write it) is read as that host with the page's scheme, not as a path under the page.
/// `None` when the result is not an http(s) URL.
pub(crate) fn resolve_declared(base: &url::Url, raw: &str) -> Option<url::Url> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    let url = match url::Url::parse(raw) {
        Ok(url) => url,
        Err(url::ParseError::RelativeUrlWithoutBase) if starts_with_host(raw) => {
            url::Url::parse(&format!("{}://{raw}", base.scheme())).ok()?
        }
        Err(_) => base.join(raw).ok()?,
    };
    matches!(url.scheme(), "http" | "https").then_some(url)
}

/// Whether a scheme-less reference starts with a host name: `name.tld` (letters-only top-level
/// label, not a file extension such as `.html`) followed by `/`, `?`, `#`, `:` or the end.
fn starts_with_host(raw: &str) -> bool {
    if raw.starts_with(['/', '.', '?', '#']) {
        return false;
    }
    let host = raw.split(['/', '?', '#', ':']).next().unwrap_or("");
    let labels: Vec<&str> = host.split('.').collect();
    let Some(tld) = labels.last() else {
        return false;
    };
    const FILE_EXTENSIONS: [&str; 10] = [
        "html", "htm", "php", "asp", "aspx", "jsp", "cgi", "shtml", "xml", "json",
    ];
    labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !l.starts_with('-')
        })
        && tld.len() >= 2
        && tld.chars().all(|c| c.is_ascii_alphabetic())
        && !FILE_EXTENSIONS.contains(&tld.to_ascii_lowercase().as_str())
}

/// Runs of `/` in the path made one (`//fact-check/x` is `/fact-check/x`).
fn collapse_slashes(url: &mut url::Url) {
    if url.path().contains("//") {
        let mut path = String::with_capacity(url.path().len());
        for c in url.path().chars() {
            if !(c == '/' && path.ends_with('/')) {
                path.push(c);
            }
        }
        url.set_path(&path);
    }
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

/// The id of one of several claims a page reviews under one URL (several ClaimReviews declaring
/// the same `url`): `claim_<hash>` of the canonical URL and the normalised claim text, so each
/// claim of the page has its own id, stable across runs.
pub(crate) fn claim_id_on_shared_page(fact_check_url: &str, text: &str) -> String {
    let url =
        canonical_fact_check_url(fact_check_url).unwrap_or_else(|| fact_check_url.to_string());
    let normalised = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    stable_id("claim", &[&url, "text", &normalised])
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
    fn declared_urls_resolve_against_the_page() {
        let page = url::Url::parse("https://www.aosfatos.org/noticias/video-x/").unwrap();
        let r = |raw: &str| resolve_declared(&page, raw).map(String::from);
        // Aos Fatos' ClaimReview `url` has no scheme.
        assert_eq!(
            r("aosfatos.org/noticias/video-x/").as_deref(),
            Some("https://aosfatos.org/noticias/video-x/")
        );
        assert_eq!(
            r("/estadao-verifica/y/").as_deref(),
            Some("https://www.aosfatos.org/estadao-verifica/y/")
        );
        assert_eq!(
            r("//cdn.example/a").as_deref(),
            Some("https://cdn.example/a")
        );
        // A file name is a relative path, not a host.
        assert_eq!(
            r("other.html").as_deref(),
            Some("https://www.aosfatos.org/noticias/video-x/other.html")
        );
        assert_eq!(r("mailto:a@b.example"), None);
        assert_eq!(r("  "), None);
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
        // Snopes declares `//fact-check/...`; a CSV names the same page with one slash.
        assert_eq!(
            fact_check_url("https://www.snopes.com//fact-check/x/").as_deref(),
            Some("https://www.snopes.com/fact-check/x/")
        );
        assert_eq!(
            claim_id(Some("https://www.snopes.com//fact-check/x/"), "a"),
            claim_id(Some("https://www.snopes.com/fact-check/x"), "b")
        );
        assert_eq!(fact_check_url("ftp://x.example/"), None);
    }
}
