//! Canonical URLs, domains and source types: how documents from different hits are recognised as
//! the same page, and what kind of source a page is.

use std::collections::BTreeMap;

use url::Url;

/// Query parameters that only track a visit; removed from canonical URLs.
const TRACKING_PARAMS: &[&str] = &[
    "fbclid",
    "gclid",
    "dclid",
    "gbraid",
    "wbraid",
    "msclkid",
    "yclid",
    "twclid",
    "igshid",
    "igsh",
    "mc_cid",
    "mc_eid",
    "_ga",
    "_gl",
    "ref",
    "ref_src",
    "ref_url",
    "cmpid",
    "ocid",
    "smid",
    "smtyp",
    "share_id",
    "utm",
    "rdt",
    "guccounter",
    "ito",
    "at_medium",
    "at_campaign",
    "sh",
    "s_cid",
    "spm",
];

/// Reddit hosts that serve the same posts as `www.reddit.com`.
const REDDIT_ALIASES: &[&str] = &[
    "reddit.com",
    "www.reddit.com",
    "m.reddit.com",
    "old.reddit.com",
    "np.reddit.com",
    "new.reddit.com",
    "i.reddit.com",
    "amp.reddit.com",
    "sh.reddit.com",
];

/// Why a URL has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a usable http(s) URL: {0}")]
pub struct BadUrl(pub String);

/// Whether `host` is a Reddit host (any alias, `redd.it`, or a subreddit-style subdomain).
pub(crate) fn is_reddit_host(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    h == "redd.it" || h == "reddit.com" || h.ends_with(".reddit.com")
}

/// A Reddit post's id from a post URL (`/r/<sub>/comments/<id>/...`, `/comments/<id>`,
/// `redd.it/<id>`), if the URL is one.
pub(crate) fn reddit_post_id(url: &Url) -> Option<String> {
    let host = url.host_str()?;
    if !is_reddit_host(host) {
        return None;
    }
    let segs: Vec<&str> = url.path_segments()?.filter(|s| !s.is_empty()).collect();
    if host.eq_ignore_ascii_case("redd.it") {
        return segs.first().map(|s| s.to_ascii_lowercase());
    }
    let pos = segs.iter().position(|s| *s == "comments")?;
    segs.get(pos + 1)
        .filter(|id| id.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(|id| id.to_ascii_lowercase())
}

/// The canonical form of a URL: http(s) only, lower-case host, no fragment, no tracking
/// parameters (`utm_*`, `fbclid`, ...), remaining parameters sorted; Reddit aliases (`m.`, `old.`,
/// `np.`, `redd.it`) become `www.reddit.com`, and a Reddit post URL becomes
/// `https://www.reddit.com/r/<sub>/comments/<id>/` (slug and comment path dropped).
pub fn canonical_url(raw: &str) -> Result<String, BadUrl> {
    let mut url = Url::parse(raw.trim()).map_err(|_| BadUrl(raw.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(BadUrl(raw.to_string()));
    }
    url.set_fragment(None);
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    if is_reddit_host(&host) {
        if let Some(id) = reddit_post_id(&url) {
            let segs: Vec<String> = url
                .path_segments()
                .map(|s| s.filter(|s| !s.is_empty()).map(str::to_string).collect())
                .unwrap_or_default();
            let sub = match (segs.first().map(String::as_str), segs.get(1)) {
                (Some("r"), Some(sub)) => Some(sub.to_ascii_lowercase()),
                _ => None,
            };
            return Ok(match sub {
                Some(sub) => format!("https://www.reddit.com/r/{sub}/comments/{id}/"),
                None => format!("https://www.reddit.com/comments/{id}/"),
            });
        }
        if REDDIT_ALIASES.contains(&host.as_str()) {
            let _ = url.set_scheme("https");
            let _ = url.set_host(Some("www.reddit.com"));
        }
    }
    let kept: BTreeMap<String, Vec<String>> = url
        .query_pairs()
        .filter(|(k, _)| {
            let k = k.to_ascii_lowercase();
            !k.starts_with("utm_") && !k.starts_with("__") && !TRACKING_PARAMS.contains(&k.as_str())
        })
        .fold(BTreeMap::new(), |mut m, (k, v)| {
            m.entry(k.into_owned()).or_default().push(v.into_owned());
            m
        });
    if kept.is_empty() {
        url.set_query(None);
    } else {
        let mut ser = url::form_urlencoded::Serializer::new(String::new());
        for (k, vs) in &kept {
            for v in vs {
                ser.append_pair(k, v);
            }
        }
        url.set_query(Some(&ser.finish()));
    }
    Ok(url.to_string())
}

/// Second-level labels under which registrations happen one level deeper (`bbc.co.uk`).
/// A small built-in list, not the full Public Suffix List: enough for the news, government
/// and academic hosts the source-type rules care about.
const TWO_LABEL_SUFFIXES: &[&str] = &[
    "co", "com", "org", "net", "gov", "ac", "edu", "gob", "gouv", "govt", "nic", "mil", "ne", "or",
    "go", "nhs", "ltd", "plc", "sch", "res",
];

/// The registrable part of a host (`news.bbc.co.uk` -> `bbc.co.uk`, `www.reddit.com` ->
/// `reddit.com`). IP addresses and single labels are returned as they are.
pub fn domain_of(host: &str) -> String {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return host;
    }
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() <= 2 {
        return host;
    }
    let n = labels.len();
    let tld = labels[n - 1];
    let second = labels[n - 2];
    let take = if tld.len() == 2 && TWO_LABEL_SUFFIXES.contains(&second) {
        3
    } else {
        2
    };
    labels[n.saturating_sub(take)..].join(".")
}

/// CONF-FACT's source types (Appendix G).
pub(crate) const SOURCE_TYPES: &[&str] = &[
    "mainstream news",
    "government",
    "non-profit",
    "academic",
    "social media",
    "other",
];

const SOCIAL: &[&str] = &[
    "reddit.com",
    "redd.it",
    "twitter.com",
    "x.com",
    "facebook.com",
    "fb.com",
    "instagram.com",
    "tiktok.com",
    "youtube.com",
    "youtu.be",
    "linkedin.com",
    "threads.net",
    "t.me",
    "telegram.org",
    "quora.com",
    "tumblr.com",
    "pinterest.com",
    "snapchat.com",
    "whatsapp.com",
    "truthsocial.com",
    "gab.com",
    "parler.com",
    "rumble.com",
    "bsky.app",
    "mastodon.social",
    "weibo.com",
    "vk.com",
    "discord.com",
    "medium.com",
    "substack.com",
    "sharechat.com",
];

const NEWS: &[&str] = &[
    "nytimes.com",
    "washingtonpost.com",
    "wsj.com",
    "usatoday.com",
    "latimes.com",
    "cnn.com",
    "foxnews.com",
    "nbcnews.com",
    "cbsnews.com",
    "abcnews.go.com",
    "go.com",
    "msnbc.com",
    "npr.org",
    "pbs.org",
    "reuters.com",
    "apnews.com",
    "bloomberg.com",
    "politico.com",
    "thehill.com",
    "axios.com",
    "cnbc.com",
    "time.com",
    "newsweek.com",
    "theatlantic.com",
    "nypost.com",
    "chicagotribune.com",
    "bostonglobe.com",
    "forbes.com",
    "businessinsider.com",
    "huffpost.com",
    "vox.com",
    "bbc.co.uk",
    "bbc.com",
    "theguardian.com",
    "independent.co.uk",
    "telegraph.co.uk",
    "thetimes.co.uk",
    "ft.com",
    "economist.com",
    "sky.com",
    "dailymail.co.uk",
    "mirror.co.uk",
    "itv.com",
    "channel4.com",
    "aljazeera.com",
    "dw.com",
    "france24.com",
    "lemonde.fr",
    "spiegel.de",
    "abc.net.au",
    "smh.com.au",
    "theage.com.au",
    "news.com.au",
    "aap.com.au",
    "sbs.com.au",
    "cbc.ca",
    "globalnews.ca",
    "ctvnews.ca",
    "thestar.com",
    "hindustantimes.com",
    "indiatimes.com",
    "ndtv.com",
    "thehindu.com",
    "indianexpress.com",
    "scmp.com",
    "straitstimes.com",
    "japantimes.co.jp",
    "nzherald.co.nz",
    "rnz.co.nz",
    "politifact.com",
    "factcheck.org",
    "snopes.com",
    "boomlive.in",
    "altnews.in",
];

const NON_PROFIT: &[&str] = &[
    "fullfact.org",
    "wikipedia.org",
    "who.int",
    "redcross.org",
    "amnesty.org",
    "hrw.org",
    "brookings.edu",
    "pewresearch.org",
    "kff.org",
    "aclu.org",
    "taxpolicycenter.org",
    "cbpp.org",
    "heritage.org",
    "cato.org",
    "urban.org",
    "rand.org",
    "unicef.org",
    "oxfam.org",
    "greenpeace.org",
    "wwf.org",
];

const ACADEMIC: &[&str] = &[
    "arxiv.org",
    "nature.com",
    "science.org",
    "sciencedirect.com",
    "springer.com",
    "wiley.com",
    "jstor.org",
    "plos.org",
    "thelancet.com",
    "nejm.org",
    "bmj.com",
    "researchgate.net",
    "ssrn.com",
    "pnas.org",
    "cell.com",
    "tandfonline.com",
    "frontiersin.org",
    "mdpi.com",
    "biorxiv.org",
    "medrxiv.org",
    "scholar.google.com",
    "semanticscholar.org",
];

const GOV_SUFFIXES: &[&str] = &[
    ".gov",
    ".mil",
    ".gov.uk",
    ".gov.au",
    ".gov.in",
    ".nic.in",
    ".gc.ca",
    ".canada.ca",
    ".govt.nz",
    ".gouv.fr",
    ".bund.de",
    ".europa.eu",
    ".gob.mx",
    ".gob.es",
    ".gov.br",
    ".go.jp",
    ".go.kr",
    ".gov.sg",
    ".gov.za",
    ".gov.ie",
    ".admin.ch",
    ".int",
];

fn in_list(domain: &str, host: &str, list: &[&str]) -> bool {
    list.iter().any(|d| {
        domain == *d
            || host == *d
            || host.ends_with(&format!(".{d}"))
            || domain.ends_with(&format!(".{d}"))
    })
}

/// The source type of a host by rules over its domain: user overrides first (keys are domains
/// or hosts), then built-in lists (social media, mainstream news, non-profit, academic), then
/// suffix rules (`.gov`, `.gov.uk`, `.int` ... -> government; `.edu`, `.ac.uk` -> academic;
/// other `.org` -> non-profit), else `other`.
///
/// Returns the type and where it came from: `config` (an override) or `rules`.
pub(crate) fn classify_source(
    host: &str,
    overrides: &BTreeMap<String, String>,
) -> (String, &'static str) {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_string();
    let domain = domain_of(&host);
    for key in [&host, &domain] {
        if let Some(t) = overrides.get(key.as_str()) {
            return (t.clone(), "config");
        }
    }
    (builtin_source_type(&host, &domain), "rules")
}

/// The built-in rules over a lower-case host without `www.` and its registrable domain.
fn builtin_source_type(host: &str, domain: &str) -> String {
    let dotted = format!(".{host}");
    if GOV_SUFFIXES.iter().any(|s| dotted.ends_with(s)) {
        return "government".into();
    }
    if in_list(domain, host, SOCIAL) {
        return "social media".into();
    }
    if in_list(domain, host, NEWS) {
        return "mainstream news".into();
    }
    if in_list(domain, host, ACADEMIC) {
        return "academic".into();
    }
    if in_list(domain, host, NON_PROFIT) {
        return "non-profit".into();
    }
    let labels: Vec<&str> = host.split('.').collect();
    let n = labels.len();
    if dotted.ends_with(".edu")
        || (n >= 3 && matches!(labels[n - 2], "edu" | "ac") && labels[n - 1].len() == 2)
    {
        return "academic".into();
    }
    if dotted.ends_with(".org") || (n >= 3 && labels[n - 2] == "org" && labels[n - 1].len() == 2) {
        return "non-profit".into();
    }
    "other".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_removes_tracking_fragments_and_reddit_aliases() {
        assert_eq!(
            canonical_url("https://Example.com/a?utm_source=x&b=2&fbclid=y&a=1#top").unwrap(),
            "https://example.com/a?a=1&b=2"
        );
        assert_eq!(
            canonical_url("https://example.com/a?utm_medium=x").unwrap(),
            "https://example.com/a"
        );
        for u in [
            "https://old.reddit.com/r/Politics/comments/abc123/some_slug/",
            "https://m.reddit.com/r/politics/comments/abc123/some_slug/?utm_source=share",
            "https://np.reddit.com/r/politics/comments/abc123/other_slug/def456/",
            "http://reddit.com/r/politics/comments/abc123",
        ] {
            assert_eq!(
                canonical_url(u).unwrap(),
                "https://www.reddit.com/r/politics/comments/abc123/",
                "{u}"
            );
        }
        assert_eq!(
            canonical_url("https://redd.it/abc123").unwrap(),
            "https://www.reddit.com/comments/abc123/"
        );
        assert_eq!(
            canonical_url("https://old.reddit.com/r/politics/").unwrap(),
            "https://www.reddit.com/r/politics/"
        );
        assert!(canonical_url("ftp://example.com/x").is_err());
        assert!(canonical_url("not a url").is_err());
    }

    #[test]
    fn domains_and_source_types() {
        assert_eq!(domain_of("news.bbc.co.uk"), "bbc.co.uk");
        assert_eq!(domain_of("www.reddit.com"), "reddit.com");
        assert_eq!(domain_of("example.com"), "example.com");
        assert_eq!(domain_of("127.0.0.1"), "127.0.0.1");
        let none = BTreeMap::new();
        let t = |h: &str| classify_source(h, &none).0;
        assert_eq!(t("www.reddit.com"), "social media");
        assert_eq!(t("www.nytimes.com"), "mainstream news");
        assert_eq!(t("www.cdc.gov"), "government");
        assert_eq!(t("www.ons.gov.uk"), "government");
        assert_eq!(t("www.who.int"), "government");
        assert_eq!(t("cs.stanford.edu"), "academic");
        assert_eq!(t("www.ox.ac.uk"), "academic");
        assert_eq!(t("www.nature.com"), "academic");
        assert_eq!(t("fullfact.org"), "non-profit");
        assert_eq!(t("someclub.org"), "non-profit");
        assert_eq!(t("shop.example.com"), "other");
        let over = BTreeMap::from([("example.com".to_string(), "academic".to_string())]);
        assert_eq!(
            classify_source("shop.example.com", &over),
            ("academic".to_string(), "config")
        );
    }
}
