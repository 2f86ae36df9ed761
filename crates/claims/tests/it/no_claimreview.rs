//! Real fact-check pages that carry no ClaimReview (fixtures/real/no-claimreview/, provenance
//! beside them): without a `[[sites]]` entry each is a `no_claimreview` drop; with the entries of
//! its `sites.toml` (CSS selectors a maintainer writes in the pipeline file) their claims are read,
//! field by field against golden values written by reading the pages. Then the same pages through
//! the stage, served on 127.0.0.1.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use noisebench_claims::politifact::Rating;
use noisebench_claims::{
    Mapped, PageReadings, SiteSelectors, Sites, VerdictMap, claim_id, read_page,
    read_page_with_sites,
};
use serde::Deserialize;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/real/no-claimreview")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[derive(Debug, Deserialize)]
struct Golden {
    page: Vec<GoldenClaim>,
}

#[derive(Debug, Deserialize)]
struct GoldenClaim {
    file: String,
    n: usize,
    page_url: String,
    text: String,
    rating: String,
    verdict: String,
    speaker: String,
    claim_date: String,
    review_date: String,
    venue: String,
    fact_checker: String,
    url: String,
    original_url: String,
}

#[derive(Debug, Deserialize)]
struct SitesFile {
    sites: Vec<SiteSelectors>,
}

fn golden() -> Vec<GoldenClaim> {
    toml::from_str::<Golden>(&read(&folder().join("golden.toml")))
        .unwrap()
        .page
}

fn site_entries() -> Vec<SiteSelectors> {
    toml::from_str::<SitesFile>(&read(&folder().join("sites.toml")))
        .unwrap()
        .sites
}

fn pages() -> Vec<(String, String)> {
    let provenance = read(&folder().join("PROVENANCE.md"));
    let mut pages = Vec::new();
    for line in provenance.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let file = cells[1].trim_matches('`').to_string();
        pages.push((file, cells[4].to_string()));
    }
    pages
}

/// Every page here has a provenance row, and the rows name the pages.
#[test]
fn every_page_has_its_provenance() {
    let listed: BTreeSet<String> = pages().into_iter().map(|(f, _)| f).collect();
    let present: BTreeSet<String> = std::fs::read_dir(folder())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".html"))
        .collect();
    assert_eq!(listed, present);
    assert_eq!(present.len(), 5);
}

/// Without a `[[sites]]` entry each page is a `no_claimreview` drop that says what would read it,
/// not an `empty_claim` "no claim text".
#[test]
fn pages_without_claimreview_are_named_so() {
    for (file, url) in pages() {
        let html = read(&folder().join(&file));
        let Err((reason, detail)) = read_page(&html, &url, None) else {
            panic!("{file}: read without a sites entry");
        };
        assert_eq!(reason, "no_claimreview", "{file}: {detail}");
        let host = url::Url::parse(&url)
            .unwrap()
            .host_str()
            .unwrap()
            .to_string();
        assert!(
            detail.contains("`sites` entry") && detail.contains(&host),
            "{file}: {detail}"
        );
    }
}

fn readings(sites: &Sites, file: &str, url: &str) -> PageReadings {
    read_page_with_sites(&read(&folder().join(file)), url, None, sites)
}

/// With the entries of sites.toml, every golden field of every claim; DW's page gives three
/// claims, each with its own id made from the page's URL and its text.
#[test]
fn golden_fields_read_with_site_selectors() {
    let sites = Sites::new(&site_entries()).unwrap();
    let raguard = VerdictMap::preset("raguard").unwrap();
    let (mut right, mut total, mut wrong) = (0, 0, Vec::new());
    let mut by_file: BTreeMap<&str, Vec<&GoldenClaim>> = BTreeMap::new();
    let golden = golden();
    for g in &golden {
        by_file.entry(g.file.as_str()).or_default().push(g);
    }
    for (file, claims) in by_file {
        let read = readings(&sites, file, &claims[0].page_url);
        assert_eq!(read.len(), claims.len(), "{file}: {read:?}");
        let mut ids = BTreeSet::new();
        for g in claims {
            let got = read[g.n - 1]
                .as_ref()
                .unwrap_or_else(|e| panic!("{file} #{}: {e:?}", g.n));
            let rating = match &got.rating {
                Rating::Slug(s) => s.clone(),
                Rating::Missing => String::new(),
                other => format!("{other:?}"),
            };
            let verdict = match raguard.map_word(got.rating_word.as_deref(), &rating) {
                Mapped::Verdict(v) => v.as_str().to_string(),
                _ => String::new(),
            };
            let opt = |v: &Option<String>| v.clone().unwrap_or_default();
            for (field, want, have) in [
                ("text", &g.text, got.text.clone()),
                ("rating", &g.rating, rating),
                ("verdict", &g.verdict, verdict),
                ("speaker", &g.speaker, opt(&got.speaker)),
                ("claim_date", &g.claim_date, opt(&got.claim_date)),
                ("review_date", &g.review_date, opt(&got.review_date)),
                ("venue", &g.venue, opt(&got.venue)),
                ("fact_checker", &g.fact_checker, opt(&got.fact_checker)),
                ("url", &g.url, got.url.clone()),
                ("original_url", &g.original_url, opt(&got.original_url)),
            ] {
                total += 1;
                if *want == have {
                    right += 1;
                } else {
                    wrong.push(format!(
                        "{file} #{}: {field}: want {want:?}, got {have:?}",
                        g.n
                    ));
                }
            }
            ids.insert(got.id.clone());
        }
        // One claim alone keeps the id an import of its URL makes; several get one each.
        let page_id = claim_id(Some(&read[0].as_ref().unwrap().url), "x");
        if read.len() == 1 {
            assert_eq!(ids, BTreeSet::from([page_id]), "{file}");
        } else {
            assert_eq!(ids.len(), read.len(), "{file}");
            assert!(!ids.contains(&page_id), "{file}");
        }
    }
    println!("golden fields right (pages without ClaimReview): {right} of {total}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// An entry whose claim selector selects nothing on the page: an `empty_claim` drop naming it.
#[test]
fn an_entry_that_selects_nothing_says_so() {
    let entry: SiteSelectors =
        toml::from_str("host = \"www.dw.com\"\nclaim = \"p.claim\"\nrating = \"p.rating\"\n")
            .unwrap();
    let sites = Sites::new(&[entry]).unwrap();
    let (file, url) = pages()
        .into_iter()
        .find(|(f, _)| f.starts_with("dw-"))
        .unwrap();
    let read = readings(&sites, &file, &url);
    let [Err(("empty_claim", detail))] = read.as_slice() else {
        panic!("{read:?}");
    };
    assert!(detail.contains("`p.claim`"), "{detail}");
}

/// The pages through the `claims-scrape` stage, replayed at their own URLs (this folder's
/// index.toml): with the `sites` entries in the stage's configuration, DW's three claims and
/// iVerify's are claims; Soch's claim has no rating (`missing_rating`); Geo and FactCheck.org,
/// which have no entry, are `no_claimreview` drops, counted like any other.
#[test]
fn pages_without_claimreview_through_the_stage() {
    let replay = crate::scrape::web(serde_json::json!({
        "mode": "replay", "replay_fixtures": "fixtures/real",
    }));
    let urls: Vec<String> = pages().into_iter().map(|(_, u)| u).collect();
    let sites: toml::Value = toml::from_str(&read(&folder().join("sites.toml"))).unwrap();
    let config = serde_json::json!({
        "sources": [{"kind": "articles", "urls": urls}],
        "sites": sites["sites"],
    });
    let (claims, report) = crate::scrape::run(&replay, config.clone());
    assert_eq!(
        report.drop_reasons(),
        BTreeMap::from([
            ("missing_rating".to_string(), 1),
            ("no_claimreview".to_string(), 2),
        ])
    );
    let hosts: Vec<&str> = claims.iter().map(|c| c.source.as_str()).collect();
    assert_eq!(
        hosts,
        [
            "scrape:www.dw.com",
            "scrape:www.dw.com",
            "scrape:www.dw.com",
            "scrape:pak.i-verify.org"
        ]
    );
    let golden = golden();
    for (claim, g) in claims.iter().zip(golden.iter()) {
        assert_eq!(
            (claim.text.as_str(), claim.verdict.as_str()),
            (g.text.as_str(), "false")
        );
        assert_eq!(claim.fact_checker.as_deref(), Some(g.fact_checker.as_str()));
        assert_eq!(claim.review_date.as_deref(), Some(g.review_date.as_str()));
    }
    // Without the entries: every page is a `no_claimreview` drop.
    let mut bare = config;
    bare.as_object_mut().unwrap().remove("sites");
    let (claims, report) = crate::scrape::run(&replay, bare);
    assert!(claims.is_empty());
    assert_eq!(
        report.drop_reasons(),
        BTreeMap::from([("no_claimreview".to_string(), 5)])
    );
}
