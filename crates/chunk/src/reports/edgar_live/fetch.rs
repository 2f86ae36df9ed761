//! Fetching through the web layer: the source's own [`Web`] (its User-Agent, the SEC's rate),
//! the companies and their listed filings, each filing's document read and cut into items under
//! the amendment rule, every failure a drop; and a fetched filing's metadata and report id.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use noisebench_core::{Block, DropReason, Drops, stable_id};
use noisebench_web::{HostConfig, Page, Url, Web, host_key};

use super::config::{Amendments, Cik, EdgarSource};
use super::sec_json::{Listed, parse_submissions, parse_tickers};
use crate::reports::annual;
use crate::reports::items::{cut_items, item_key};
use crate::reports::submission::SubmissionDocument;

impl EdgarSource {
    /// The web layer this source fetches through: the run's, with this source's User-Agent and
    /// each SEC host's rate capped at `rate_per_second` (and at the run's own rate for it).
    /// Of the run's kind ([`Web::derived`]): archive-only inside a merge, so it fetches nothing.
    pub fn web(&self, run_web: &Web) -> Result<Web, String> {
        let mut config = run_web.config().clone();
        if let Some(ua) = &self.user_agent {
            config.user_agent = ua.trim().to_string();
        }
        for url in [&self.base_url, &self.archives_url, &self.tickers_url] {
            let Ok(url) = Url::parse(url) else { continue };
            let host = host_key(&url);
            let rate = config.rate_for(&host).min(self.rate_per_second);
            config.hosts.insert(
                host,
                HostConfig {
                    rate_per_second: rate,
                },
            );
        }
        // The run's `Web::new` resolved its paths against the workspace root, which may itself be
        // relative (`--root ws`): made absolute here, against the directory the run started in,
        // they name the same folders whatever root this layer is built with.
        for p in [&mut config.archive_dir, &mut config.replay_archive]
            .into_iter()
            .flatten()
            .chain(config.replay_fixtures.iter_mut())
        {
            *p = std::path::absolute(&*p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        // Of the run's kind: inside a merge or an archive replay (archive-only) it fetches nothing.
        run_web
            .derived(config, std::path::Path::new("/"))
            .map_err(|e| e.to_string())
    }
}

/// A filing turned into a report's parts.
pub struct FetchedFiling {
    pub listed: Listed,
    pub url: String,
    pub blocks: Vec<Block>,
    /// Items asked for and not found in the document (the others were).
    pub missing: Vec<String>,
    /// The other documents of a full submission (`EX-13`, the annual report, ...), unread.
    pub exhibits: Vec<SubmissionDocument>,
    /// `incorporated_by_reference` and `annual_report_exhibit` metadata, when items point to
    /// the annual report ([`annual::follow_pointers`]).
    pub followed: BTreeMap<String, String>,
}

/// A per-filing or per-company failure: the drop item, reason code and detail.
pub(crate) struct EdgarDrop {
    pub item: String,
    pub reason: DropReason,
    pub detail: String,
}

/// What one EDGAR source gave: the filings read (in listing order) and the drops; every item
/// read is one of the two.
#[derive(Default)]
pub(crate) struct EdgarHarvest {
    pub filings: Vec<FetchedFiling>,
    pub drops: Vec<EdgarDrop>,
    /// Items read: filings listed (after the form and date filters), plus companies and tickers
    /// that failed before any filing was known.
    pub items_in: u64,
}

impl EdgarHarvest {
    fn drop(&mut self, item: String, reason: impl Into<DropReason>, detail: impl Into<String>) {
        self.drops.push(EdgarDrop {
            item,
            reason: reason.into(),
            detail: detail.into(),
        });
    }
}

/// The SEC's limit holds for all its hosts together, while the web layer paces each host on
/// its own; the source fetches one page at a time, so spacing its fetches bounds the total.
struct Fetcher<'a> {
    web: &'a Web,
    interval: Duration,
    last: Option<Instant>,
}

impl<'a> Fetcher<'a> {
    fn new(web: &'a Web, rate_per_second: f64) -> Self {
        // Replay and an archive-only layer send nothing, so there is nothing to space.
        let interval = if web.sends_nothing() {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(1.0 / rate_per_second)
        };
        Self {
            web,
            interval,
            last: None,
        }
    }

    fn fetch(&mut self, url: &str) -> Result<Page, (DropReason, String)> {
        if let Some(last) = self.last {
            let due = last + self.interval;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        self.last = Some(Instant::now());
        self.web
            .fetch(url)
            .map_err(|e| (e.drop_reason(), e.to_string()))
    }
}

/// The companies of a source, ten-digit CIKs in order (tickers after CIKs), each once.
fn companies(
    source: &EdgarSource,
    web: &mut Fetcher<'_>,
    harvest: &mut EdgarHarvest,
) -> Vec<String> {
    let mut ciks: Vec<String> = source.ciks.iter().filter_map(Cik::padded).collect();
    if !source.tickers.is_empty() {
        let map = web
            .fetch(&source.tickers_url)
            .and_then(|p| parse_tickers(&p.text).map_err(|e| ("invalid_json".into(), e)));
        for ticker in &source.tickers {
            let item = format!("edgar:ticker:{ticker}");
            match &map {
                Ok(m) => match m.get(&ticker.trim().to_ascii_uppercase()) {
                    Some(cik) => ciks.push(cik.clone()),
                    None => {
                        harvest.items_in += 1;
                        harvest.drop(
                            item,
                            "unknown_ticker",
                            format!("`{ticker}` is not in {}", source.tickers_url),
                        );
                    }
                },
                Err((code, detail)) => {
                    harvest.items_in += 1;
                    harvest.drop(item, code.clone(), detail.clone());
                }
            }
        }
    }
    let mut seen = BTreeSet::new();
    ciks.retain(|c| seen.insert(c.clone()));
    ciks
}

/// The filings a company lists that the source takes (forms, dates), with its further index
/// pages read when `from` reaches back to them; and those of the annual report's forms in the
/// dates that `forms` does not take (`10-KSB` under `forms = ["10-K"]`), each a counted drop.
fn listed(
    source: &EdgarSource,
    web: &mut Fetcher<'_>,
    cik10: &str,
) -> Result<(Vec<Listed>, Vec<Listed>), EdgarDrop> {
    let item = format!("edgar:CIK{cik10}");
    let fail = |(reason, detail): (DropReason, String)| EdgarDrop {
        item: item.clone(),
        reason,
        detail,
    };
    let page = web
        .fetch(&source.submissions_url(&format!("CIK{cik10}.json")))
        .map_err(fail)?;
    let cik = cik10.trim_start_matches('0');
    let index =
        parse_submissions(&page.text, cik, "").map_err(|e| fail(("invalid_json".into(), e)))?;
    let mut filings = index.filings;
    if let Some(from) = &source.from {
        for (name, first, last) in &index.pages {
            let overlaps = last.as_str() >= from.as_str()
                && source.to.as_deref().is_none_or(|t| first.as_str() <= t);
            if !overlaps {
                continue;
            }
            let more = web.fetch(&source.submissions_url(name)).map_err(fail)?;
            let more = parse_submissions(&more.text, &index.cik, &index.company)
                .map_err(|e| fail(("invalid_json".into(), format!("{name}: {e}"))))?;
            filings.extend(more.filings);
        }
    }
    let mut seen = BTreeSet::new();
    filings.retain(|f| {
        source.in_dates(&f.filing_date)
            && !f.primary_document.is_empty()
            && seen.insert(f.accession.clone())
    });
    let (mut filings, others): (Vec<Listed>, Vec<Listed>) = filings
        .into_iter()
        .partition(|f| source.form_match(&f.form).is_some());
    let not_taken: Vec<Listed> = others
        .into_iter()
        .filter(|f| annual::family(&f.form).is_some())
        .collect();
    // Newest first, so `latest` and amendments read in filing order.
    filings.sort_by(|a, b| {
        b.filing_date
            .cmp(&a.filing_date)
            .then(b.accession.cmp(&a.accession))
    });
    if let Some(n) = source.latest {
        let mut periods: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in &filings {
            periods
                .entry(f.base_form())
                .or_default()
                .insert(f.period().to_string());
        }
        let keep: BTreeSet<(String, String)> = periods
            .into_iter()
            .flat_map(|(form, ps)| ps.into_iter().rev().take(n).map(move |p| (form.clone(), p)))
            .collect();
        filings.retain(|f| keep.contains(&(f.base_form(), f.period().to_string())));
    }
    Ok((filings, not_taken))
}

/// Fetch one filing's document and cut its items.
fn read_one(
    source: &EdgarSource,
    web: &mut Fetcher<'_>,
    listed: &Listed,
    items: &[String],
) -> Result<FetchedFiling, (DropReason, String)> {
    let url = listed.document_url(&source.archives_url);
    let page = web.fetch(&url)?;
    // A plain-text submission (every filing before about 2001) is read as text, a wrapped HTML
    // one as its main document's HTML.
    let named_html = [".htm", ".html", ".xhtml"]
        .iter()
        .any(|e| listed.primary_document.to_ascii_lowercase().ends_with(e));
    let doc = annual::read_document(&page.text, named_html);
    let layout = doc.layout;
    let mut cut = cut_items(doc.blocks, items);
    let mut followed = BTreeMap::new();
    annual::follow_pointers(&mut cut, &doc.exhibits, &mut followed);
    if cut.blocks.is_empty() {
        return Err((
            "empty_item".into(),
            format!("items {items:?} not found in {url} (read as {layout})"),
        ));
    }
    Ok(FetchedFiling {
        listed: listed.clone(),
        url,
        blocks: cut.blocks,
        missing: cut.missing,
        exhibits: doc.exhibits,
        followed,
    })
}

/// Read one EDGAR source: companies, their listed filings, each taken filing's items, under the
/// amendment rule. Every failure is a drop with the web layer's reason code (or `invalid_json`,
/// `unknown_ticker`, `empty_item`, `amendment_ignored`, `superseded`).
pub(crate) fn harvest(source: &EdgarSource, web: &Web, items: &[String]) -> EdgarHarvest {
    let mut harvest = EdgarHarvest::default();
    let web = &mut Fetcher::new(web, source.rate_per_second);
    for cik10 in companies(source, web, &mut harvest) {
        let (filings, not_taken) = match listed(source, web, &cik10) {
            Ok(f) => f,
            Err(d) => {
                harvest.items_in += 1;
                harvest.drops.push(d);
                continue;
            }
        };
        harvest.items_in += (filings.len() + not_taken.len()) as u64;
        for f in not_taken {
            harvest.drop(
                f.item(),
                "form_not_taken",
                format!(
                    "{} is not among `forms` {:?}; name it there to take it",
                    f.form, source.forms
                ),
            );
        }
        // Groups of one period and form, newest filing first (`listed` sorted them).
        let mut groups: BTreeMap<(String, String), Vec<Listed>> = BTreeMap::new();
        for f in filings {
            let key = (f.base_form(), f.period().to_string());
            groups.entry(key).or_default().push(f);
        }
        for group in groups.into_values() {
            match source.amendments {
                Amendments::Ignore | Amendments::KeepBoth => {
                    for f in group {
                        if source.amendments == Amendments::Ignore && f.is_amendment() {
                            harvest.drop(
                                f.item(),
                                "amendment_ignored",
                                format!("{} ignored (`amendments = \"ignore\"`)", f.form),
                            );
                            continue;
                        }
                        match read_one(source, web, &f, items) {
                            Ok(r) => harvest.filings.push(r),
                            Err((reason, detail)) => harvest.drop(f.item(), reason, detail),
                        }
                    }
                }
                Amendments::Replace => {
                    let mut taken: Option<String> = None;
                    for f in group {
                        if let Some(by) = &taken {
                            harvest.drop(
                                f.item(),
                                "superseded",
                                format!("replaced by the later {by}"),
                            );
                            continue;
                        }
                        match read_one(source, web, &f, items) {
                            Ok(r) => {
                                taken = Some(format!("{} {}", f.form, f.accession));
                                harvest.filings.push(r);
                            }
                            // The next older filing of the period is tried instead.
                            Err((reason, detail)) => harvest.drop(f.item(), reason, detail),
                        }
                    }
                }
            }
        }
    }
    harvest
}

/// The metadata of a fetched filing, the edgar-crawler fields and where it came from.
pub(crate) fn filing_metadata(f: &FetchedFiling, items: &[String]) -> BTreeMap<String, String> {
    let l = &f.listed;
    let mut m = BTreeMap::from([
        ("cik".to_string(), l.cik.clone()),
        ("company".to_string(), l.company.clone()),
        ("filing_type".to_string(), l.form.clone()),
        ("filing_date".to_string(), l.filing_date.clone()),
        ("period_of_report".to_string(), l.report_date.clone()),
        ("items".to_string(), items.join(",")),
        ("accession_number".to_string(), l.accession.clone()),
    ]);
    m.extend(f.followed.clone());
    if !f.exhibits.is_empty() {
        m.insert(
            "exhibits".into(),
            f.exhibits
                .iter()
                .map(|d| d.kind.as_str())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    m
}

/// The report id of a filing: stable by company, form (the original's under `replace`, so an
/// amendment replaces it) and period, whatever accession or fetch brought it.
pub fn report_id(
    domain: &str,
    f: &FetchedFiling,
    amendments: Amendments,
    items: &[String],
) -> String {
    let l = &f.listed;
    let form = match amendments {
        Amendments::Replace => l.base_form(),
        Amendments::KeepBoth | Amendments::Ignore => l.form.clone(),
    };
    // `7` and `item_7` name the same item, so they give the same id.
    let keys: Vec<String> = items
        .iter()
        .map(|i| item_key(i).unwrap_or_else(|| i.clone()))
        .collect();
    stable_id(
        "report",
        &[domain, "edgar", &l.cik, &form, l.period(), &keys.join(",")],
    )
}

/// Record a harvest's drops.
pub(crate) fn record_drops(drops: &mut Drops, harvest_drops: Vec<EdgarDrop>) {
    for d in harvest_drops {
        tracing::warn!(item = %d.item, reason = %d.reason, "EDGAR filing dropped: {}", d.detail);
        drops.add(d.item, d.reason, d.detail);
    }
}
