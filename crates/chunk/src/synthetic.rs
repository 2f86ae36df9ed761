//! A seeded generator of a synthetic report corpus shaped like RARE's (527 long reports:
//! 10-K MD&A sections, economic surveys, policy plans; about 40K chunks), for benchmarking the
//! report track at scale without shipping real filings.
//!
//! The text is made for the pipeline to work on, not to be read: every report has headings,
//! Markdown tables with captions, filler sentences the triplet rule finds nothing in, and
//! sentences of the form the `triplets` task's offline rule reads (`<Name> <verb phrase>
//! <Name or number phrase>`). Entities come from sector pools shared by many reports, so the
//! merged graph links reports, and from names unique to one report. Each of those appears in
//! several facts, so the graph has no edge with a lone head and a lone tail: the corpus gives
//! no `single_hop` patterns (its questions are all multi-hop; RARE's test split has about as
//! many single-hop questions as multi-hop ones).
//! Finance reports are written as edgar-crawler JSON (their metadata per filing), economics
//! reports as Markdown and policy plans as HTML; [`write_corpus`] also writes a pipeline file
//! (the demo's report track, offline backend) that reads them.
//!
//! What it is not: a model of real reports' language or statistics. Same `reports` and `seed`,
//! same bytes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::preset::Domain;

/// Most groups per pattern and report the written pipeline keeps (`max_per_pattern`).
pub(crate) const PATTERNS_PER_REPORT: usize = 45;

/// RARE-Set's size: 527 reports.
pub const RARE_REPORTS: usize = 527;

/// One generated report file.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticReport {
    /// File name inside the corpus folder (`finance/…json`, `economics/…md`, `policy/…html`).
    pub file: String,
    pub domain: Domain,
    /// Metadata the pipeline file gives this report's source (economics and policy; finance
    /// reports carry theirs in the JSON).
    pub metadata: Vec<(String, String)>,
    pub content: String,
    /// Words of report text (tables and markup excluded), for sizing.
    pub words: usize,
}

/// How a corpus is shaped. [`CorpusSpec::rare`] gives RARE's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CorpusSpec {
    pub reports: usize,
    pub seed: u64,
    /// Mean words of running text per report (each report varies by up to a third either way).
    pub words_per_report: usize,
}

impl CorpusSpec {
    /// `reports` reports of RARE's length (about 76 chunks each, so 527 give about 40K chunks).
    pub fn rare(reports: usize, seed: u64) -> Self {
        Self {
            reports,
            seed,
            words_per_report: 30_000,
        }
    }
}

const SECTORS: &[(&str, &[&str])] = &[
    (
        "logistics",
        &[
            "Logistics",
            "Freight Lines",
            "Shipping",
            "Terminals",
            "Rail",
        ],
    ),
    ("energy", &["Energy", "Power", "Renewables", "Gas", "Grid"]),
    (
        "banking",
        &["Bank", "Capital", "Financial", "Credit Union", "Trust"],
    ),
    (
        "health",
        &[
            "Pharmaceuticals",
            "Health Systems",
            "Biologics",
            "Medical",
            "Clinics",
        ],
    ),
    (
        "materials",
        &["Steel", "Mining", "Chemicals", "Cement", "Timber"],
    ),
    (
        "technology",
        &[
            "Software",
            "Semiconductors",
            "Networks",
            "Data Systems",
            "Robotics",
        ],
    ),
    (
        "consumer",
        &["Foods", "Retail", "Beverages", "Apparel", "Home Goods"],
    ),
    (
        "industrials",
        &[
            "Engineering",
            "Motors",
            "Aerospace",
            "Machinery",
            "Construction",
        ],
    ),
];

const STEMS: &[&str] = &[
    "Calder",
    "Northwind",
    "Kestrel",
    "Ostrava",
    "Meridian",
    "Solent",
    "Tamar",
    "Brecon",
    "Corran",
    "Dunmore",
    "Eskdale",
    "Fenwick",
    "Garron",
    "Halden",
    "Ivel",
    "Jarrow",
    "Kinross",
    "Lomond",
    "Marlow",
    "Nairn",
    "Orwell",
    "Penrith",
    "Quarry",
    "Rannoch",
    "Selkirk",
    "Tiverton",
    "Ulster",
    "Varley",
    "Wensley",
    "Yarrow",
    "Zenith",
    "Ashby",
    "Bramley",
    "Cromer",
    "Deverell",
    "Elmstead",
    "Farley",
    "Glenmore",
    "Hartwell",
    "Inverary",
    "Kelso",
    "Larkhill",
    "Moorside",
    "Newbold",
    "Oakham",
    "Pelham",
    "Redmire",
    "Stanton",
    "Thornbury",
    "Upwell",
    "Vantage",
    "Whitby",
    "Alder",
    "Beacon",
    "Cobalt",
    "Driftwood",
    "Ember",
    "Falcon",
    "Granite",
    "Heron",
];

const COUNTRIES: &[&str] = &[
    "Valdoria",
    "Ostrevia",
    "Marenland",
    "Kelvany",
    "Drossia",
    "Tarnova",
    "Belmaria",
    "Corvina",
    "Estavia",
    "Lunaria",
    "Norvane",
    "Pallisia",
    "Quorra",
    "Rhodavia",
    "Sevrania",
    "Tellmark",
];

const STATES: &[&str] = &[
    "AL", "CO", "GA", "IA", "KS", "MN", "NM", "OR", "TN", "VT", "WI",
];

const CITIES: &[&str] = &[
    "Riverton",
    "Lakewood",
    "Millbrook",
    "Ashford",
    "Brookhaven",
    "Cedar Falls",
    "Fairview",
    "Greenfield",
    "Hillcrest",
    "Kingsport",
    "Maplewood",
    "Oakridge",
    "Pinecrest",
    "Stonebridge",
];

const MONTHS: &[&str] = &[
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Relations between two names: `{a}` and `{b}` are filled, the rest is the verb phrase and
/// words the rule reads as its complement or ignores.
const NAME_RELATIONS: &[&str] = &[
    "{a} acquired {b} in {month}, adding capacity in its core markets.",
    "{a} operates {b} under a long-term concession.",
    "{a} supplies {b} with components under a multi-year contract.",
    "{a} partnered with {b} on a joint distribution programme.",
    "{a} leases {b} for its regional operations.",
    "{a} invested in {b} during the year.",
    "{a} selected {b} as its principal contractor.",
    "{a} manages {b} on behalf of its owners.",
    "{a} serves {b} from two regional hubs.",
    "{a} competes with {b} in most of its markets.",
    "{a} borrowed from {b} under a revolving credit facility.",
    "{a} is a subsidiary of {b} and reports through its parent.",
    "{a} owns {b} outright since the restructuring.",
    "{a} signed a supply agreement with {b} in {month}.",
    "{a} sold {b} to a group of private investors.",
    "{a} hired {b} to review its procurement controls.",
    "{a} insures {b} against operational losses.",
    "{a} finances {b} through a dedicated credit line.",
];

/// Relations from a name to a number phrase; `{n}` is filled with a figure and its unit.
const NUMBER_RELATIONS: &[&str] = &[
    "{a} reported revenue of {money} for {year}.",
    "{a} employs {people} people across its sites.",
    "{a} recorded impairment charges of {money} in the fourth quarter.",
    "{a} generated operating cash of {money} during the period.",
    "{a} paid dividends of {money} to shareholders.",
    "{a} handled {tonnes} tonnes of cargo in {year}.",
    "{a} spent {money} on capital projects.",
    "{a} issued senior notes of {money} maturing in {later}.",
    "{a} repurchased {money} of its common stock.",
];

const ECONOMY_RELATIONS: &[&str] = &[
    "The fiscal deficit narrowed to {pct} percent of GDP in {year}.",
    "The unemployment rate fell to {pct} percent by the end of {year}.",
    "Consumer price inflation eased to {pct} percent in {month}.",
    "Public debt rose to {pct} percent of GDP.",
    "Export growth slowed to {pct} percent as external demand weakened.",
    "{c} exports {b} products to most of its neighbours.",
    "{c} imports {b} equipment for its energy transition.",
    "{bank} raised policy rates to {pct} percent in {month}.",
    "{bank} lowered reserve requirements to {pct} percent.",
    "{ministry} allocated {money} to {b} for infrastructure upgrades.",
    "{ministry} oversees {b} and its investment programme.",
];

const POLICY_RELATIONS: &[&str] = &[
    "{grantee} allocated {money} to {b} for housing repairs.",
    "{grantee} awarded {money} to {b} in {month}.",
    "{grantee} selected {b} as the lead agency for the programme.",
    "{grantee} administers {b} with support from state partners.",
    "{b} provides {homes} homes with weatherization services each year.",
    "{b} funds {b2} through matching grants.",
    "{b} manages {b2} under the action plan.",
    "{grantee} approved {money} for {b} in the budget.",
];

/// Sentences the rule reads nothing from: no name or definite phrase just before a verb of
/// its list, or a verb phrase it does not know.
const FILLER: &[&str] = &[
    "Demand softened in the second half as customers delayed orders.",
    "Margins improved because input costs declined faster than prices.",
    "Management expects conditions to remain uncertain over the next twelve months.",
    "Working capital requirements increased with the growth in receivables.",
    "Several factors could cause actual results to differ materially from these expectations.",
    "Competition for skilled labour remained intense throughout the period.",
    "Higher interest costs offset part of the gain in operating income.",
    "Seasonal patterns in shipments were broadly in line with prior years.",
    "Liquidity is expected to be sufficient to meet obligations as they fall due.",
    "Changes in exchange rates had a modest effect on reported results.",
    "Productivity growth has been weak since the pandemic, weighing on living standards.",
    "Housing affordability has deteriorated in most large cities.",
    "Structural reforms would raise potential growth and ease fiscal pressure.",
    "Energy prices have been volatile, adding to uncertainty for households and firms.",
    "Labour force participation among older workers is still low by international standards.",
    "Credit conditions tightened as banks raised lending standards.",
    "Residents identified affordable housing as their highest priority during consultations.",
    "Public hearings were held in each ward before the plan was adopted.",
    "Funds will be targeted to households below eighty percent of area median income.",
    "Performance will be measured against the goals set out in this plan.",
    "Outreach to minority and women-owned businesses continued during the programme year.",
    "The review found that most projects were delivered on time and within budget.",
    "Capital expenditure was focused on maintenance and efficiency projects.",
    "Inventory levels were reduced to match the lower run rate of orders.",
];

const SECTION_TITLES: &[(&str, &[&str])] = &[
    (
        "finance",
        &[
            "Overview",
            "Results of Operations",
            "Segment Results",
            "Liquidity and Capital Resources",
            "Critical Accounting Estimates",
            "Contractual Obligations",
            "Outlook",
        ],
    ),
    (
        "economics",
        &[
            "Key policy insights",
            "Recent macroeconomic developments",
            "Monetary and financial policy",
            "Fiscal policy and public finances",
            "Raising productivity",
            "Labour market and skills",
            "The green transition",
        ],
    ),
    (
        "policy",
        &[
            "Executive summary",
            "Needs assessment",
            "Housing market analysis",
            "Strategic plan",
            "Annual action plan",
            "Expected resources",
            "Monitoring",
        ],
    ),
];

/// Names of one sector's pool: stem and suffix combined, about 150 names per sector.
fn sector_names(sector: usize) -> Vec<String> {
    let (_, suffixes) = SECTORS[sector];
    let mut names = Vec::new();
    for (i, stem) in STEMS.iter().enumerate() {
        // Each sector uses a different half of the stems with each suffix.
        for (j, suffix) in suffixes.iter().enumerate() {
            if (i + j + sector).is_multiple_of(2) {
                names.push(format!("{stem} {suffix}"));
            }
        }
    }
    names
}

/// Every four consecutive reports (two filings, a survey, a plan) talk about one sector.
fn sector_of(index: usize) -> usize {
    index / 4 % SECTORS.len()
}

fn pick_str<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items[rng.random_range(0..items.len())]
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

fn money(rng: &mut ChaCha8Rng) -> String {
    let whole = rng.random_range(1..1000);
    let tenth = rng.random_range(0..10);
    let unit = if rng.random_bool(0.8) {
        "million"
    } else {
        "billion"
    };
    format!("${whole}.{tenth} {unit}")
}

fn thousands(n: u32) -> String {
    if n >= 1000 {
        format!("{},{:03}", n / 1000, n % 1000)
    } else {
        n.to_string()
    }
}

/// A report's cast: its own name, the shared names it talks about, names only it has.
struct Cast {
    focal: String,
    shared: Vec<String>,
    own: Vec<String>,
}

fn fill(template: &str, rng: &mut ChaCha8Rng, cast: &Cast, extra: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (key, value) in extra {
        out = out.replace(key, value);
    }
    let year = rng.random_range(2015..2025);
    let pick_name = |rng: &mut ChaCha8Rng| -> String {
        // Mostly shared names (they link reports), some the report's own.
        if rng.random_bool(0.7) {
            pick(rng, &cast.shared).clone()
        } else {
            pick(rng, &cast.own).clone()
        }
    };
    if out.contains("{a}") {
        let a = if rng.random_bool(0.35) {
            cast.focal.clone()
        } else {
            pick_name(rng)
        };
        out = out.replace("{a}", &a);
    }
    if out.contains("{b2}") {
        let b2 = pick_name(rng);
        out = out.replace("{b2}", &b2);
    }
    if out.contains("{b}") {
        let b = pick_name(rng);
        out = out.replace("{b}", &b);
    }
    let money = money(rng);
    let pct = format!("{}.{}", rng.random_range(0..12), rng.random_range(0..10));
    let people = thousands(rng.random_range(40..60_000));
    let homes = thousands(rng.random_range(20..5000));
    let tonnes = format!(
        "{}.{} million",
        rng.random_range(1..90),
        rng.random_range(0..10)
    );
    out.replace("{money}", &money)
        .replace("{pct}", &pct)
        .replace("{people}", &people)
        .replace("{homes}", &homes)
        .replace("{tonnes}", &tonnes)
        .replace("{month}", pick_str(rng, MONTHS))
        .replace("{year}", &year.to_string())
        .replace("{later}", &(year + rng.random_range(3..12)).to_string())
}

/// A Markdown table with a caption: figures by segment or indicator over three years.
fn table(rng: &mut ChaCha8Rng, n: usize, domain: Domain, cast: &Cast) -> String {
    let year = rng.random_range(2018..2025);
    let mut out = match domain {
        Domain::Economics => format!("Table {n}. Selected indicators, per cent\n\n"),
        Domain::Policy => format!("Table {n}: Allocations by activity (USD)\n\n"),
        _ => format!("Table {n}: Revenue by segment (in millions)\n\n"),
    };
    let _ = writeln!(out, "| Item | {} | {} | {} |", year - 2, year - 1, year);
    out.push_str("|---|---:|---:|---:|\n");
    for _ in 0..rng.random_range(3..8) {
        let label = if domain == Domain::Economics {
            pick(
                rng,
                &[
                    "GDP growth",
                    "Inflation",
                    "Unemployment",
                    "Fiscal balance",
                    "Current account",
                    "Public debt",
                ],
            )
            .to_string()
        } else {
            pick(rng, &cast.shared).clone()
        };
        let _ = writeln!(
            out,
            "| {label} | {}.{} | {}.{} | {}.{} |",
            rng.random_range(0..900),
            rng.random_range(0..10),
            rng.random_range(0..900),
            rng.random_range(0..10),
            rng.random_range(0..900),
            rng.random_range(0..10)
        );
    }
    out
}

/// One report's sections: (title, paragraphs and tables as Markdown blocks).
fn sections(
    rng: &mut ChaCha8Rng,
    domain: Domain,
    cast: &Cast,
    words: usize,
    relations: &[&str],
    extra: &[(&str, &str)],
) -> (Vec<(String, Vec<String>)>, usize) {
    let titles = SECTION_TITLES
        .iter()
        .find(|(d, _)| *d == domain.name())
        .map(|(_, t)| *t)
        .unwrap_or(&[]);
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut written = 0;
    let mut tables = 0;
    let mut section = 0;
    while written < words {
        let title = format!(
            "{} {}",
            titles[section % titles.len()],
            if section >= titles.len() {
                format!("({})", section / titles.len() + 1)
            } else {
                String::new()
            }
        )
        .trim()
        .to_string();
        let mut blocks = Vec::new();
        for _ in 0..rng.random_range(6..14) {
            if rng.random_bool(0.12) {
                tables += 1;
                blocks.push(table(rng, tables, domain, cast));
                continue;
            }
            let mut paragraph = Vec::new();
            for _ in 0..rng.random_range(4..9) {
                // About 3 facts a chunk: RARE asks for 150 to 400 triplets a report.
                let sentence = if rng.random_bool(0.06) {
                    fill(pick_str(rng, relations), rng, cast, extra)
                } else if rng.random_bool(0.02) {
                    fill(pick_str(rng, NUMBER_RELATIONS), rng, cast, extra)
                } else {
                    pick(rng, FILLER).to_string()
                };
                written += sentence.split_whitespace().count();
                paragraph.push(sentence);
            }
            blocks.push(paragraph.join(" "));
        }
        out.push((title, blocks));
        section += 1;
    }
    (out, written)
}

fn cast(rng: &mut ChaCha8Rng, sector: usize, focal: String, own_prefix: &str) -> Cast {
    let pool = sector_names(sector);
    let mut shared: Vec<String> = (0..40).map(|_| pick(rng, &pool).clone()).collect();
    // A few names from a neighbouring sector: suppliers and lenders cross sectors.
    let other = sector_names((sector + 1 + rng.random_range(0..SECTORS.len() - 1)) % SECTORS.len());
    shared.extend((0..8).map(|_| pick(rng, &other).clone()));
    shared.sort();
    shared.dedup();
    let own = (0..30)
        .map(|i| {
            format!(
                "{own_prefix} {} {}",
                pick(rng, &["North", "South", "East", "West", "Upper", "Lower"]),
                ["Plant", "Depot", "Facility", "Campus", "Terminal", "Works"][i % 6]
            )
        })
        .collect();
    Cast { focal, shared, own }
}

fn finance_report(rng: &mut ChaCha8Rng, index: usize, words: usize) -> SyntheticReport {
    let sector = sector_of(index);
    let pool = sector_names(sector);
    // Finance reports are 0 and 2 of every 4, sectors change every 4 reports: this is the
    // report's place among its sector's filers, so no two filers share a name.
    let place = index / (4 * SECTORS.len()) * 2 + index % 4 / 2;
    let focal = format!("{} Corporation", pool[place % pool.len()]);
    let stem = focal.split(' ').next().unwrap_or("Report").to_string();
    let cast = cast(rng, sector, focal.clone(), &format!("{stem} Group"));
    let (sections, written) = sections(rng, Domain::Finance, &cast, words, NAME_RELATIONS, &[]);
    let mut item7 = String::from(
        "ITEM 7. MANAGEMENT'S DISCUSSION AND ANALYSIS OF FINANCIAL CONDITION AND RESULTS OF OPERATIONS\n",
    );
    for (title, blocks) in &sections {
        let _ = writeln!(item7, "{title}");
        for block in blocks {
            item7.push_str(block);
            if !block.ends_with('\n') {
                item7.push('\n');
            }
        }
        // "We" sentences: the graph's filer rule resolves them to the company.
        let _ = writeln!(
            item7,
            "We acquired {} in {}, and integration is on schedule.",
            pick(rng, &cast.shared),
            pick(rng, MONTHS)
        );
    }
    let cik = 1_000_000 + index * 37;
    let year = 2015 + index % 9;
    let json = serde_json::json!({
        "cik": cik.to_string(),
        "company": focal.to_uppercase(),
        "filing_type": "10-K",
        "filing_date": format!("{}-02-{:02}", year + 1, 1 + index % 28),
        "period_of_report": format!("{year}-12-31"),
        "filename": format!("{cik}_10K_{year}_0000{cik}-{}-000{:03}.htm", (year + 1) % 100, index % 1000),
        "item_7": item7,
    });
    SyntheticReport {
        file: format!("finance/{cik}_10K_{year}.json"),
        domain: Domain::Finance,
        metadata: Vec::new(),
        content: serde_json::to_string_pretty(&json).unwrap_or_default(),
        words: written,
    }
}

fn economics_report(rng: &mut ChaCha8Rng, index: usize, words: usize) -> SyntheticReport {
    let country = COUNTRIES[index % COUNTRIES.len()];
    let year = 2016 + (index / COUNTRIES.len()) % 9;
    let sector = sector_of(index);
    let bank = format!("Central Bank of {country}");
    let ministry = format!("Ministry of Finance of {country}");
    let cast = cast(rng, sector, bank.clone(), country);
    let extra = [
        ("{c}", country),
        ("{bank}", bank.as_str()),
        ("{ministry}", ministry.as_str()),
    ];
    let (sections, written) = sections(
        rng,
        Domain::Economics,
        &cast,
        words,
        ECONOMY_RELATIONS,
        &extra,
    );
    let mut md = format!("# OECD Economic Surveys: {country} {year}\n\n");
    for (title, blocks) in &sections {
        let _ = write!(md, "## {title}\n\n");
        for block in blocks {
            md.push_str(block.trim_end());
            md.push_str("\n\n");
        }
    }
    SyntheticReport {
        file: format!("economics/{}_{year}_{index:04}.md", country.to_lowercase()),
        domain: Domain::Economics,
        metadata: vec![
            ("country".into(), country.into()),
            ("year".into(), year.to_string()),
        ],
        content: md,
        words: written,
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn policy_report(rng: &mut ChaCha8Rng, index: usize, words: usize) -> SyntheticReport {
    let city = CITIES[index % CITIES.len()];
    let state = STATES[index % STATES.len()];
    let year = 2018 + (index / CITIES.len()) % 7;
    let grantee = format!("City of {city}");
    let sector = sector_of(index);
    let mut cast = cast(rng, sector, grantee.clone(), city);
    // Plans name local agencies and programmes, shared by the plans of one city.
    cast.shared.extend(
        [
            "Housing Authority",
            "Community Land Trust",
            "Weatherization Program",
            "Homeless Coalition",
            "Workforce Board",
        ]
        .iter()
        .map(|s| format!("{city} {s}")),
    );
    let extra = [("{grantee}", grantee.as_str())];
    let (sections, written) = sections(rng, Domain::Policy, &cast, words, POLICY_RELATIONS, &extra);
    let title = format!("{grantee} Consolidated Plan {year}");
    let mut html = format!(
        "<!DOCTYPE html>\n<html><head><title>{title}</title></head><body>\n<h1>{title}</h1>\n"
    );
    for (heading, blocks) in &sections {
        let _ = writeln!(html, "<h2>{}</h2>", escape(heading));
        for block in blocks {
            if block.contains("\n|") {
                let mut lines = block.lines();
                let caption = lines.next().unwrap_or_default();
                let _ = writeln!(html, "<p>{}</p>\n<table>", escape(caption));
                for (i, line) in lines.filter(|l| l.starts_with('|')).enumerate() {
                    if i == 1 {
                        continue; // the Markdown delimiter row
                    }
                    let cell = if i == 0 { "th" } else { "td" };
                    html.push_str("<tr>");
                    for c in line.trim_matches('|').split('|') {
                        let _ = write!(html, "<{cell}>{}</{cell}>", escape(c.trim()));
                    }
                    html.push_str("</tr>\n");
                }
                html.push_str("</table>\n");
            } else {
                let _ = writeln!(html, "<p>{}</p>", escape(block));
            }
        }
    }
    html.push_str("</body></html>\n");
    SyntheticReport {
        file: format!(
            "policy/{}_{year}_{index:04}.html",
            city.to_lowercase().replace(' ', "_")
        ),
        domain: Domain::Policy,
        metadata: vec![
            ("grantee".into(), grantee),
            ("state".into(), state.into()),
            ("year".into(), year.to_string()),
        ],
        content: html,
        words: written,
    }
}

/// The corpus: report `i` is finance, economics or policy in the proportions 2:1:1, each
/// from its own seeded stream, so a corpus of n reports is the first n of a larger one.
pub fn generate(spec: &CorpusSpec) -> Vec<SyntheticReport> {
    (0..spec.reports)
        .map(|i| {
            let mut rng = ChaCha8Rng::seed_from_u64(
                spec.seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            let words = spec.words_per_report * rng.random_range(67..134) / 100;
            match i % 4 {
                0 | 2 => finance_report(&mut rng, i, words),
                1 => economics_report(&mut rng, i, words),
                _ => policy_report(&mut rng, i, words),
            }
        })
        .collect()
}

/// What [`write_corpus`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenCorpus {
    pub reports: usize,
    pub words: usize,
    pub bytes: usize,
    /// The pipeline file reading the corpus (report track, offline backend).
    pub pipeline: PathBuf,
}

/// Write the corpus under `dir` (`finance/`, `economics/`, `policy/`) and `dir/pipeline.toml`:
/// the demo's report track over these files with the offline backend, work and snapshot names
/// `rare-synthetic`.
pub fn write_corpus(dir: &Path, spec: &CorpusSpec) -> std::io::Result<WrittenCorpus> {
    let reports = generate(spec);
    let mut bytes = 0;
    let mut words = 0;
    for sub in ["finance", "economics", "policy"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    for r in &reports {
        std::fs::write(dir.join(&r.file), &r.content)?;
        bytes += r.content.len();
        words += r.words;
    }
    let pipeline = dir.join("pipeline.toml");
    std::fs::write(&pipeline, pipeline_toml(dir, &reports))?;
    Ok(WrittenCorpus {
        reports: reports.len(),
        words,
        bytes,
        pipeline,
    })
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The pipeline file: one source for the finance JSON files, one per economics or policy file
/// (their metadata differ), then the report track's stages as in `pipelines/demo.toml`.
pub fn pipeline_toml(dir: &Path, reports: &[SyntheticReport]) -> String {
    let root = dir.display().to_string();
    let mut sources = vec![format!(
        "  {{ path = {}, format = \"edgar\", domain = \"finance\" }},",
        toml_str(&format!("{root}/finance/*.json"))
    )];
    for r in reports.iter().filter(|r| r.domain != Domain::Finance) {
        let metadata: Vec<String> = r
            .metadata
            .iter()
            .map(|(k, v)| format!("{k} = {}", toml_str(v)))
            .collect();
        sources.push(format!(
            "  {{ path = {}, domain = \"{}\", metadata = {{ {} }} }},",
            toml_str(&format!("{root}/{}", r.file)),
            r.domain.name(),
            metadata.join(", ")
        ));
    }
    format!(
        r#"# A synthetic RARE-sized corpus ({n} reports) written by `noisebench generate-reports`.
# The report track of pipelines/demo.toml, offline backend.

[pipeline]
name = "rare-synthetic"
description = "The report track over a synthetic corpus of {n} reports."

[llm]
backend = "offline"

[stages.reports]
kind = "reports"
[stages.reports.config]
sources = [
{sources}
]

[stages.chunks]
kind = "chunks"
inputs = {{ reports = "reports" }}

[stages.triplets]
kind = "triplets"
inputs = {{ chunks = "chunks" }}

[stages.graph]
kind = "graph"
inputs = {{ triplets = "triplets", reports = "reports" }}

# RARE samples at most 30,000 groups per pattern over 527 reports; the synthetic graph's hubs
# give more, so the cap scales with the corpus: about 45 a report per pattern (RARE-Set: 48,295
# questions over 527 reports).
[stages.patterns]
kind = "patterns"
inputs = {{ graph_edges = "graph" }}
[stages.patterns.config]
max_per_pattern = {cap}

[stages.questions]
kind = "questions"
inputs = {{ patterns = "patterns", triplets = "triplets", chunks = "chunks", reports = "reports" }}

[stages.qa-judge]
kind = "qa-judge"
inputs = {{ questions = "questions", chunks = "chunks" }}

[stages.splits]
kind = "splits"
inputs = {{ questions = "qa-judge" }}

[stages.query-perturbations]
kind = "query-perturbations"
inputs = {{ questions = "qa-judge" }}

[stages.document-perturbations]
kind = "document-perturbations"
inputs = {{ questions = "qa-judge", triplets = "triplets", chunks = "chunks" }}

[stages.retrieval]
kind = "retrieval"
inputs = {{ questions = "qa-judge", query_perturbations = "query-perturbations", chunks = "chunks" }}

[stages.export-rare]
kind = "export-rare"
inputs = {{ questions = "qa-judge", splits = "splits", query_perturbations = "query-perturbations", document_perturbations = "document-perturbations" }}

# The reports are written from templates, so their questions are near-twins across splits by
# construction (41% of test questions at 66 reports, docs/quality.md): the leakage gate is
# lifted, and the quality card still reports the share.
[quality.gates]
max_cross_split_duplicate_share = 1.0

[snapshot]
dataset = "rare-synthetic"
title = "Synthetic RARE-sized report corpus"
description = "The report track over {n} synthetic reports."
license = "cc-by-4.0"
tables = ["reports", "chunks", "triplets", "graph", "graph.entities", "graph.aliases", "patterns", "qa-judge", "qa-judge.question_judgements", "qa-judge.rejected_questions", "splits", "query-perturbations", "document-perturbations", "retrieval", "retrieval.retrieval_metrics"]
"#,
        n = reports.len(),
        cap = PATTERNS_PER_REPORT * reports.len().max(1),
        sources = sources.join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_corpus_and_another_seed_another() {
        let spec = CorpusSpec {
            reports: 8,
            seed: 7,
            words_per_report: 2000,
        };
        let a = generate(&spec);
        assert_eq!(a, generate(&spec));
        let b = generate(&CorpusSpec { seed: 8, ..spec });
        assert_ne!(a[0].content, b[0].content);
        // A smaller corpus is the start of a larger one.
        let small = generate(&CorpusSpec { reports: 3, ..spec });
        assert_eq!(&a[..3], &small[..]);
        let domains: Vec<_> = a.iter().map(|r| r.domain).collect();
        assert!(domains.contains(&Domain::Finance));
        assert!(domains.contains(&Domain::Economics));
        assert!(domains.contains(&Domain::Policy));
        for r in &a {
            assert!(
                r.words >= 2000 * 67 / 100,
                "{} has {} words",
                r.file,
                r.words
            );
        }
    }

    #[test]
    fn reports_hold_sentences_the_triplet_rule_reads_and_shared_names() {
        let spec = CorpusSpec {
            reports: 4,
            seed: 1,
            words_per_report: 3000,
        };
        let reports = generate(&spec);
        // The four reports talk about sector 0: its names recur across them.
        let in_all = sector_names(0)
            .into_iter()
            .filter(|n| {
                reports
                    .iter()
                    .filter(|r| r.content.contains(n.as_str()))
                    .count()
                    >= 2
            })
            .count();
        assert!(in_all > 10, "{in_all} names shared");

        assert!(reports[1].content.contains("| Item |"));
        assert!(reports[3].content.contains("<table>"));
    }
}
