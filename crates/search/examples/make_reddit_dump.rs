//! Writes `fixtures/reddit/posts.ndjson.zst`: a few hundred invented Reddit submissions in the
//! Pushshift / Arctic Shift shape, on topics that overlap the claims in `fixtures/claims/`.
//! Deterministic (a fixed linear congruential generator): rerunning writes the same bytes.
//!
//! `cargo run -p noisebench-search --example make_reddit_dump`

use std::io::Write;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() as usize) % xs.len()]
    }
}

/// (subreddit, title templates, body sentences) per topic.
const TOPICS: &[(&str, &[&str], &[&str])] = &[
    (
        "Coronavirus",
        &[
            "Does hot water with lemon kill the coronavirus?",
            "My aunt says drinking hot lemon water every hour kills the virus in the throat",
            "Hot water and lemon coronavirus cure, any evidence?",
        ],
        &[
            "A forwarded message claims that drinking hot water with lemon every hour kills the coronavirus in the throat.",
            "Doctors say no drink can kill a virus that is already inside your cells.",
            "Warm drinks may soothe a sore throat but they do not cure Covid-19.",
            "The WHO lists hot drinks among the myths about the coronavirus.",
            "I drink lemon water anyway, it cannot hurt.",
        ],
    ),
    (
        "conspiracy",
        &[
            "5G masts are spreading the coronavirus, wake up",
            "Why did the coronavirus start where 5G masts went up first?",
            "5G towers and Covid: the viral post explained",
        ],
        &[
            "A viral post claims that 5G masts spread the coronavirus.",
            "Radio waves cannot carry a virus, and Covid-19 spread in countries with no 5G network.",
            "People set fire to phone masts after the rumour went viral.",
            "The timing of the 5G rollout and the pandemic is a coincidence.",
        ],
    ),
    (
        "politics",
        &[
            "New bill would let non-citizens vote in federal elections?",
            "Non-citizen voting bill: what does it actually say?",
            "Can non-citizens vote in federal elections now?",
        ],
        &[
            "Federal law already makes it a crime for non-citizens to vote in federal elections.",
            "The bill in question concerns local elections in one city, not federal elections.",
            "Some towns let non-citizens vote in school board races.",
            "The post about the bill has been shared thousands of times.",
        ],
    ),
    (
        "energy",
        &[
            "The US produces more oil than any other country in the world",
            "US oil production hits a record, more than Saudi Arabia and Russia",
            "Which country produces the most oil?",
        ],
        &[
            "According to the Energy Information Administration, the United States has produced more crude oil than any other country for several years.",
            "Saudi Arabia and Russia follow the US in oil production.",
            "Shale drilling in Texas and North Dakota drove the increase.",
            "Oil exports also rose after the export ban was lifted.",
        ],
    ),
    (
        "immigration",
        &[
            "Is crime higher in sanctuary cities than in other cities?",
            "Sanctuary cities and crime rates: a study",
            "Sanctuary city crime statistics thread",
        ],
        &[
            "Studies comparing sanctuary cities with other cities find no higher crime rate.",
            "A candidate said crime in sanctuary cities is higher than in other cities.",
            "Crime rates depend on many factors, including poverty and policing.",
            "Most people crossing the southern border are no longer from Mexico.",
        ],
    ),
    (
        "environment",
        &[
            "Do wind turbines kill more birds than cats?",
            "Wind turbines vs cats: bird deaths in the United States",
            "Bird deaths from wind farms are overstated",
        ],
        &[
            "Cats kill more than a billion birds each year in the United States.",
            "Estimates put bird deaths from wind turbines at a few hundred thousand a year.",
            "Wind turbines kill far fewer birds than cats, buildings or cars.",
            "Offshore wind farms are sited away from migration routes.",
        ],
    ),
    (
        "Economics",
        &[
            "Unemployment fell to 3.9% in the first quarter",
            "State unemployment rate drops, governor takes credit",
            "Jobs report: unemployment in the state hits a low",
        ],
        &[
            "The state unemployment rate fell to 3.9 percent in the first quarter of 2019.",
            "Manufacturing jobs grew faster than in any other state last year.",
            "Economists say the national trend explains most of the drop.",
        ],
    ),
    (
        "ukpolitics",
        &[
            "Inflation hit 11.1%, a 41-year high",
            "UK inflation record in October 2022",
            "Net migration reached 745,000 in 2022, revised ONS figures say",
        ],
        &[
            "Inflation in the UK hit 11.1 percent in October 2022, the highest in 41 years.",
            "The ONS revised net migration for 2022 up to 745,000.",
            "Energy prices drove most of the rise in inflation.",
        ],
    ),
    (
        "vaccines",
        &[
            "Was the new vaccine approved without any clinical trials?",
            "Vaccinated people shedding spike proteins?",
            "Vaccine approval timeline explained",
        ],
        &[
            "The vaccine was approved after clinical trials with tens of thousands of participants.",
            "Vaccinated people do not shed spike proteins that make others sick.",
            "More than 90 percent of adults in the county have received at least one dose.",
        ],
    ),
    (
        "australia",
        &[
            "Bushfires burned more than 17 million hectares",
            "Net overseas migration in 2022-23 was the highest on record",
            "A quarter of Australians were born overseas, census says",
        ],
        &[
            "The 2019-20 bushfires burned more than 17 million hectares across the country.",
            "Net overseas migration in 2022-23 was the highest on record.",
            "The 2021 census found more than a quarter of Australians were born overseas.",
        ],
    ),
];

const FILLER_SUBS: &[&str] = &["cooking", "gardening", "movies", "running", "books"];
const FILLER: &[&str] = &[
    "What is your favourite recipe for banana bread?",
    "My tomato plants have yellow leaves, help",
    "Best films of the decade so far",
    "Training for my first marathon, tips welcome",
    "Just finished a great novel about a lighthouse keeper",
    "How do you keep basil alive indoors?",
];
const AUTHORS: &[&str] = &[
    "quietfalcon",
    "maple_leaf_77",
    "data_nerd",
    "oldtimer",
    "riverstone",
    "night_owl_9",
];

fn id36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut s = Vec::new();
    loop {
        s.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

fn slug(title: &str) -> String {
    title
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(8)
        .collect::<Vec<_>>()
        .join("_")
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fixtures/reddit/posts.ndjson.zst".into());
    let mut rng = Lcg(20240501);
    let mut lines: Vec<String> = Vec::new();
    let base_time: i64 = 1_546_300_800; // 2019-01-01
    let mut n: u64 = 0;
    let mut push = |rng: &mut Lcg, sub: &str, title: String, body: String, kind: u64| {
        n += 1;
        let id = id36(1_000_000 + n * 7919);
        let created = base_time + (rng.next() % (5 * 365 * 86_400)) as i64;
        let author = rng.pick(AUTHORS).to_string();
        let score = (rng.next() % 2000) as i64 - 20;
        let permalink = format!("/r/{sub}/comments/{id}/{}/", slug(&title));
        let mut v = serde_json::json!({
            "id": id,
            "subreddit": sub,
            "author": author,
            "title": title,
            "selftext": body,
            "created_utc": created,
            "score": score,
            "permalink": permalink,
            "is_self": true,
            "url": format!("https://www.reddit.com{permalink}"),
            "num_comments": rng.next() % 300,
        });
        match kind {
            // A link post to a news page.
            1 => {
                v["is_self"] = false.into();
                v["selftext"] = "".into();
                v["url"] = "https://www.example-news.com/story".into();
            }
            2 => v["selftext"] = "[deleted]".into(),
            3 => {
                v["selftext"] = "[removed]".into();
                v["removed_by_category"] = "moderator".into();
            }
            // Fields missing (older dumps): no score, float timestamp, no is_self.
            4 => {
                let o = v.as_object_mut().expect("a JSON object");
                o.remove("score");
                o.remove("is_self");
                o.insert(
                    "created_utc".into(),
                    serde_json::json!(created as f64 + 0.5),
                );
            }
            _ => {}
        }
        lines.push(v.to_string());
    };
    for (sub, titles, sentences) in TOPICS {
        for i in 0..26u64 {
            let title = rng.pick(titles).to_string();
            let k = 2 + rng.next() % 3;
            let body = (0..k)
                .map(|_| rng.pick(sentences))
                .collect::<Vec<_>>()
                .join(" ");
            let kind = match i % 13 {
                5 => 1,
                7 => 2,
                9 => 3,
                11 => 4,
                _ => 0,
            };
            push(&mut rng, sub, title, body, kind);
        }
    }
    for _ in 0..40 {
        let sub = rng.pick(FILLER_SUBS);
        let title = rng.pick(FILLER).to_string();
        push(
            &mut rng,
            sub,
            title.clone(),
            format!("{title} Share your thoughts below."),
            0,
        );
    }
    // Lines a real dump has too: a truncated object and a comment-like record with no id.
    lines.insert(17, "{\"id\": \"broken\", \"title\": \"truncated".into());
    lines.insert(101, "{\"body\": \"a comment, not a submission\"}".into());
    let mut raw = lines.join("\n");
    raw.push('\n');
    let compressed = zstd::encode_all(raw.as_bytes(), 19).expect("zstd in memory");
    std::fs::File::create(&out)
        .and_then(|mut f| f.write_all(&compressed))
        .unwrap_or_else(|e| panic!("{out}: {e}"));
    println!("{out}: {} lines, {} bytes", lines.len(), compressed.len());
}
