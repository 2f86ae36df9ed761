//! Recorded answers of the real services (`fixtures/real/search/`, provenance in its
//! PROVENANCE.md) through our parsers. Every expected value was written by reading the recorded
//! JSON, not by running the parsers.

use std::path::PathBuf;

use super::{Parsed, RawHit};

fn real(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/real/search")
        .join(path)
}

fn read(path: &str) -> String {
    let p = real(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn hit(url: &str, title: Option<&str>, snippet: Option<&str>, published: Option<&str>) -> RawHit {
    RawHit {
        url: Some(url.into()),
        title: title.map(Into::into),
        snippet: snippet.map(Into::into),
        published: published.map(Into::into),
        ..RawHit::default()
    }
}

/// No hit keeps a character reference or a tag of the answer's markup.
fn assert_no_markup(p: &Parsed) {
    for h in &p.hits {
        for text in [&h.title, &h.snippet].into_iter().flatten() {
            for bad in [
                "&#x27;",
                "&#39;",
                "&quot;",
                "&amp;",
                "&lt;",
                "&gt;",
                "<strong>",
                "</strong>",
            ] {
                assert!(!text.contains(bad), "`{bad}` left in {text:?}");
            }
        }
    }
}

#[test]
fn brave_recorded_answer() {
    // A Brave Web Search answer for the query `1` (20 results; descriptions are HTML fragments
    // with `<strong>`, `&quot;` and `&#x27;`).
    let p = super::brave::parse(&read("brave/web-search-q-1.json")).unwrap();
    assert_eq!(p.hits.len(), 20);
    assert!(p.missing.is_empty(), "{:?}", p.missing);
    assert_eq!(
        p.hits[0],
        hit(
            "https://open.spotify.com/track/0Jlcvv8IykzHaSmj49uNW8",
            Some("the 1"),
            Some("Listen to the 1 on Spotify. Song · Taylor Swift · 2020"),
            None
        )
    );
    assert_eq!(
        p.hits[1].url.as_deref(),
        Some("https://en.wikipedia.org/wiki/1")
    );
    assert_eq!(p.hits[1].published.as_deref(), Some("2025-06-29"));
    assert!(
        p.hits[1]
            .snippet
            .as_deref()
            .unwrap()
            .starts_with("1 (one, unit, unity) is a number, numeral, and glyph.")
    );
    assert_eq!(
        p.hits[6].snippet.as_deref(),
        Some(
            "I originally recorded a cover of \"the 1\" by Taylor Swift as a tribute to my \
             daughters for my Covers, Vol 1 album in 2022. I still love this song and am grate..."
        )
    );
    assert_eq!(
        p.hits[6].title.as_deref(),
        Some(
            "\"the 1\" by Taylor Swift #taylorswift #folklore #erastour #cover #coversong - YouTube"
        )
    );
    assert_eq!(p.hits[6].published.as_deref(), Some("2024-07-18"));
    assert!(
        p.hits[11]
            .snippet
            .as_deref()
            .unwrap()
            .ends_with("\"The 1\" sets Swift's conversational vocals over a ..."),
        "{:?}",
        p.hits[11].snippet
    );
    assert_eq!(
        p.hits[12].snippet.as_deref(),
        Some(
            "I cannot understand this. I have seen this in people's code. But cannot figure out \
             what it does. This is in Python. str(int(a[::-1]))"
        )
    );
    assert_eq!(
        p.hits[14].url.as_deref(),
        Some("https://www.youtube.com/watch?v=Ts8RGi8V-FM&pp=0gcJCdgAo7VqN5tD")
    );
    assert!(p.hits[16].snippet.as_deref().unwrap().starts_with(
        "I don't know how to find keyword for this (*-) in Google, and I don't know what is name."
    ));
    assert_eq!(
        p.hits[10].title.as_deref(),
        Some("1 Hotels: Sustainable Luxury Hotels & Resorts")
    );
    assert_eq!(
        p.hits[19].url.as_deref(),
        Some("https://www.usmle.org/step-exams/step-1")
    );
    assert_no_markup(&p);
}

#[test]
fn google_recorded_answer() {
    // A Custom Search JSON answer for `test` (9 items; `title` and `snippet` are plain text,
    // `htmlTitle` / `htmlSnippet` carry the markup and are not read).
    let p = super::google::parse(&read("google/customsearch-q-test.json")).unwrap();
    assert_eq!(p.hits.len(), 9);
    assert!(p.missing.is_empty(), "{:?}", p.missing);
    assert_eq!(
        p.hits[0],
        hit(
            "https://www.google.com/search/howsearchworks/mission/users/",
            Some("How Google's Algorithm is Focused on Its Users - Google Search"),
            Some(
                "Rigorous testing · Our goal is always to provide you the most useful and \
                 relevant information. Any changes we make to Search are always to improve the \
                 usefulness\u{a0}..."
            ),
            None
        )
    );
    assert_eq!(
        p.hits[3].snippet.as_deref(),
        Some(
            "Search the world's information, including webpages, images, videos and more. \
             Google has many special features to help you find exactly what you're \
             looking\u{a0}..."
        )
    );
    assert_eq!(
        p.hits[7].url.as_deref(),
        Some(
            "http://www.google.com/setprefdomain?prefdom=NL&prev=http://www.google.nl/&sig=K_027VGqou_vuxg1rPhtdQAXruJKo%3D"
        )
    );
    assert_eq!(p.hits[6].title.as_deref(), Some("Waymo – Waymo"));
    assert_eq!(
        p.hits[8].url.as_deref(),
        Some("https://www.google.com/partners/")
    );
    assert_no_markup(&p);
}

#[test]
fn reddit_search_recorded_by_praw() {
    // PRAW's cassette of `/r/all/search?q=praw oauth search&raw_json=1` (2016): six self posts.
    let p = super::reddit_api::parse(&read("reddit/praw-subreddit-search.json")).unwrap();
    let got: Vec<(&str, &str, &str)> = p
        .hits
        .iter()
        .map(|h| {
            (
                h.url.as_deref().unwrap(),
                h.title.as_deref().unwrap(),
                h.published.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "https://www.reddit.com/r/redditdev/comments/3gpbiu/prawoauth2util_problem_using_get_banned_raise/?ref=search_posts",
                "[PRAW][OAuth2Util] Problem using get_banned() : raise Forbidden(_raw=response)",
                "2015-08-12"
            ),
            (
                "https://www.reddit.com/r/redditdev/comments/3x4kt2/praw_is_there_an_easy_way_of_getting_a_list_of/?ref=search_posts",
                "[PRAW] Is there an easy way of getting a list of the subreddits I am subscribed to, without using OAuth?",
                "2015-12-16"
            ),
            (
                "https://www.reddit.com/r/learnpython/comments/3b4erh/collecting_submission_data_from_reddit/?ref=search_posts",
                "Collecting submission data from Reddit",
                "2015-06-25"
            ),
            (
                "https://www.reddit.com/r/redditdev/comments/1qvzkd/praw_opening_a_user_page/?ref=search_posts",
                "Praw, opening a user page.",
                "2013-11-18"
            ),
            (
                "https://www.reddit.com/r/bugs/comments/3qc02b/pagination_of_subreddit_contributor_list_does_not/?ref=search_posts",
                "Pagination of subreddit contributor list does not return a complete list of users.",
                "2015-10-26"
            ),
            (
                "https://www.reddit.com/r/p18s/comments/4at068/たびたび話題になるサイドバーの閲覧中ユーザ数についてまた調べた/?ref=search_posts",
                "たびたび話題になるサイドバーの閲覧中ユーザ数について（また）調べた",
                "2016-03-17"
            ),
        ]
    );
    assert!(
        p.hits[1].snippet.as_deref().unwrap().starts_with(
            "As the title says.  I have done a bit of looking around and I can't seem"
        )
    );
    assert!(
        p.hits[0]
            .snippet
            .as_deref()
            .unwrap()
            .starts_with("# solved\n\nProblem solved")
    );
    assert_no_markup(&p);
}

#[test]
fn reddit_listings_recorded_by_go_reddit() {
    // go-reddit's testdata: a search answer (two link posts, empty self texts) and a subreddit
    // listing, both without `raw_json=1`: `&` comes as `&amp;`.
    let p = super::reddit_api::parse(&read("reddit/go-reddit-search-posts.json")).unwrap();
    assert_eq!(
        p.hits,
        vec![
            hit(
                "https://www.reddit.com/r/WatchPeopleDieInside/comments/hybow9/pregnancy_test/",
                Some("Pregnancy test"),
                None,
                Some("2020-07-26")
            ),
            hit(
                "https://www.reddit.com/r/worldnews/comments/hmwhd7/brazilian_president_jair_bolsonaro_tests_positive/",
                Some("Brazilian president Jair Bolsonaro tests positive for coronavirus"),
                None,
                Some("2020-07-07")
            ),
        ]
    );
    assert_eq!(p.missing.get("snippet"), Some(&2));

    let p = super::reddit_api::parse(&read("reddit/go-reddit-subreddit-random.json")).unwrap();
    let titles: Vec<&str> = p.hits.iter().map(|h| h.title.as_deref().unwrap()).collect();
    assert_eq!(
        titles,
        [
            "Weekly Photography Thread - July 14, 2020",
            "Weekly Customization Thread - July 14, 2020",
            "Looking for a certain glass screen protector"
        ]
    );
    // The body as a document reads it: the link's `&amp;`s are `&`s again.
    let listing: serde_json::Value =
        serde_json::from_str(&read("reddit/go-reddit-subreddit-random.json")).unwrap();
    let post =
        crate::reddit::RedditPost::from_json(&listing["data"]["children"][2]["data"]).unwrap();
    assert_eq!(post.id, "huv6o6");
    assert!(
        post.body_text().contains(
            "samsung-galaxy-s8-nano-film-screen-protector?variant=29245065592874&utm_campaign=gs-2020-03-13&utm_source=google&utm_medium=smart_campaign&gclid="
        ),
        "{}",
        post.body_text()
    );
    assert!(post.body_text().ends_with("\n\nThanks!"));
    assert_eq!(p.hits[2].published.as_deref(), Some("2020-07-20"));
    assert_no_markup(&p);
}
