//! Reddit posts as Pushshift / Arctic Shift dumps and Reddit's own JSON give them: tolerant
//! parsing (fields missing, numbers as floats or strings), link posts and deleted or removed
//! bodies recognised. Titles and self texts are read as their authors wrote them: Reddit's JSON
//! escapes `&`, `<`, `>` (unless asked with `raw_json=1`) and dumps keep that escaping, so
//! references are decoded once here, where the text enters (`crate::entities::reddit_text`).

use serde_json::Value;

/// A Reddit submission, with what noisebench keeps of it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RedditPost {
    /// Base-36 id without the `t3_` prefix, lower case.
    pub id: String,
    /// The title, references decoded.
    pub title: String,
    /// `selftext` with references decoded (may be `[deleted]` or `[removed]`).
    pub selftext: String,
    pub subreddit: Option<String>,
    pub author: Option<String>,
    pub created_utc: Option<i64>,
    pub score: Option<i64>,
    pub permalink: Option<String>,
    /// The submission's `url`: the linked page for link posts.
    pub url: Option<String>,
    pub is_self: Option<bool>,
    pub removed_by_category: Option<String>,
}

fn as_i64(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s
            .trim()
            .parse::<i64>()
            .ok()
            .or_else(|| s.trim().parse::<f64>().ok().map(|f| f as i64)),
        _ => None,
    }
}

fn as_str(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// A text field as its author wrote it: Reddit's escaping (`&amp;`, `&lt;br/&gt;`) undone once.
fn as_text(v: Option<&Value>) -> Option<String> {
    as_str(v).map(|s| crate::entities::reddit_text(&s))
}

impl RedditPost {
    /// Parse one submission object. `None` when it has no usable id (neither `id` nor `name`).
    pub fn from_json(v: &Value) -> Option<RedditPost> {
        let obj = v.as_object()?;
        let id = as_str(obj.get("id"))
            .or_else(|| as_str(obj.get("name")).map(|n| n.trim_start_matches("t3_").to_string()))?
            .to_ascii_lowercase();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        Some(RedditPost {
            id,
            title: as_text(obj.get("title")).unwrap_or_default(),
            selftext: as_text(obj.get("selftext")).unwrap_or_default(),
            subreddit: as_str(obj.get("subreddit")),
            author: as_str(obj.get("author")),
            created_utc: as_i64(obj.get("created_utc")),
            score: as_i64(obj.get("score")),
            permalink: as_str(obj.get("permalink")),
            url: as_str(obj.get("url")),
            is_self: obj.get("is_self").and_then(Value::as_bool),
            removed_by_category: as_str(obj.get("removed_by_category")),
        })
    }

    /// The first post of a Reddit `.json` page: `[listing, comments]` or a bare listing.
    pub fn from_page_json(v: &Value) -> Option<RedditPost> {
        let listing = match v {
            Value::Array(items) => items.first()?,
            other => other,
        };
        let child = listing.get("data")?.get("children")?.as_array()?.first()?;
        RedditPost::from_json(child.get("data")?)
    }

    /// The post's URL on www.reddit.com (from its permalink, else its subreddit and id).
    pub fn post_url(&self) -> String {
        match (&self.permalink, &self.subreddit) {
            (Some(p), _) if p.starts_with('/') => format!("https://www.reddit.com{p}"),
            (Some(p), _) if p.starts_with("http") => p.clone(),
            (_, Some(sub)) => format!("https://www.reddit.com/r/{sub}/comments/{}/", self.id),
            _ => format!("https://www.reddit.com/comments/{}/", self.id),
        }
    }

    /// The body was deleted by its author or removed by moderators.
    pub fn body_removed(&self) -> bool {
        let body = self.selftext.trim();
        body == "[deleted]"
            || body == "[removed]"
            || (body.is_empty() && self.removed_by_category.is_some())
    }

    /// A link post: its content is another page, it has no self text of its own.
    pub fn is_link_post(&self) -> bool {
        match self.is_self {
            Some(is_self) => !is_self,
            None => {
                self.selftext.trim().is_empty()
                    && self.url.as_deref().is_some_and(|u| {
                        url::Url::parse(u)
                            .ok()
                            .and_then(|u| u.host_str().map(str::to_string))
                            .is_some_and(|h| !crate::canonical::is_reddit_host(&h))
                    })
            }
        }
    }

    /// The body as a document's text: empty when removed.
    pub fn body_text(&self) -> String {
        if self.body_removed() {
            String::new()
        } else {
            self.selftext.trim().to_string()
        }
    }

    /// `created_utc` as an RFC 3339 UTC timestamp.
    pub fn published(&self) -> Option<String> {
        let t = chrono::DateTime::from_timestamp(self.created_utc?, 0)?;
        Some(t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tolerant_parsing_and_flags() {
        let p = RedditPost::from_json(&json!({
            "name": "t3_AbC12", "title": "T", "selftext": "[removed]", "created_utc": "1600000000.0",
            "score": 12.0, "subreddit": "news", "permalink": "/r/news/comments/abc12/t/"
        }))
        .unwrap();
        assert_eq!(p.id, "abc12");
        assert_eq!(p.created_utc, Some(1_600_000_000));
        assert_eq!(p.score, Some(12));
        assert!(p.body_removed());
        assert_eq!(p.body_text(), "");
        assert!(!p.is_link_post());
        assert_eq!(p.published().unwrap(), "2020-09-13T12:26:40Z");
        assert_eq!(
            p.post_url(),
            "https://www.reddit.com/r/news/comments/abc12/t/"
        );
        let link = RedditPost::from_json(&json!({
            "id": "x1", "title": "L", "selftext": "", "url": "https://example.com/story"
        }))
        .unwrap();
        assert!(link.is_link_post());
        assert!(RedditPost::from_json(&json!({"title": "no id"})).is_none());
        let page = json!([{"data": {"children": [{"kind": "t3", "data": {"id": "q9", "title": "Q"}}]}}, {}]);
        assert_eq!(RedditPost::from_page_json(&page).unwrap().id, "q9");
    }
}
