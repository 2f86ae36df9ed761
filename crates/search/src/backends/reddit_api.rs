//! Reddit search through the OAuth API with an application-only token
//! (`grant_type=client_credentials`): `POST <token_url>` with HTTP basic auth, then
//! `GET <api_base>/search?q&limit&sort&t&type=link&raw_json=1` with `Authorization: bearer`.
//!
//! Results are Reddit posts; the hit URL is the post's permalink on www.reddit.com. Reddit has no
//! absolute date filter: the stage filters by `created_utc` after the fact.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use super::{Backend, Parsed, RawHit, SearchFailure, SearchRequest, json_object};
use crate::backends::api::{ApiClient, ApiLimits, env_secret};
use crate::reddit::RedditPost;
use noisebench_web::{HttpRequest, Secret};

#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedditApiConfig {
    /// Where the application-only OAuth token is asked for.
    #[serde(default = "default_token_url")]
    pub token_url: String,
    /// Base URL of the authenticated API (`/search` is asked there).
    #[serde(default = "default_api_base")]
    pub api_base: String,
    /// Environment variable holding the OAuth client id.
    #[serde(default = "default_id_env")]
    pub client_id_env: String,
    /// Environment variable holding the OAuth client secret.
    #[serde(default = "default_secret_env")]
    pub client_secret_env: String,
    /// `relevance`, `hot`, `top`, `new`, `comments`.
    #[serde(default = "default_sort")]
    pub sort: String,
    /// `hour`, `day`, `week`, `month`, `year`, `all`.
    #[serde(default = "default_time")]
    pub time: String,
    /// Pacing, retries, timeout and size cap of this backend's requests (by default paced for
    /// Reddit's limit of about 100 requests a minute per client).
    #[serde(default = "reddit_limits")]
    pub limits: ApiLimits,
}

fn default_token_url() -> String {
    "https://www.reddit.com/api/v1/access_token".into()
}
fn default_api_base() -> String {
    "https://oauth.reddit.com".into()
}
fn default_id_env() -> String {
    "REDDIT_CLIENT_ID".into()
}
fn default_secret_env() -> String {
    "REDDIT_CLIENT_SECRET".into()
}
fn default_sort() -> String {
    "relevance".into()
}
fn default_time() -> String {
    "all".into()
}
/// Reddit allows about 100 requests a minute per OAuth client.
fn reddit_limits() -> ApiLimits {
    ApiLimits {
        min_interval_ms: 700,
        ..ApiLimits::default()
    }
}

pub(crate) struct RedditApi {
    config: RedditApiConfig,
    token_url: url::Url,
    search_url: url::Url,
    client_id: String,
    client_secret: String,
    client: ApiClient,
    token: Mutex<Option<(String, Instant)>>,
}

impl RedditApi {
    pub fn new(config: &RedditApiConfig, user_agent: &str) -> Result<Self, String> {
        let client_id = env_secret(&config.client_id_env)?;
        let client_secret = env_secret(&config.client_secret_env)?;
        let token_url = url::Url::parse(&config.token_url)
            .map_err(|e| format!("token_url `{}`: {e}", config.token_url))?;
        let search_url =
            url::Url::parse(&format!("{}/search", config.api_base.trim_end_matches('/')))
                .map_err(|e| format!("api_base `{}`: {e}", config.api_base))?;
        let client = ApiClient::new(
            "reddit",
            user_agent,
            config.limits.clone(),
            vec![client_id.clone(), client_secret.clone()],
        )?;
        Ok(Self {
            config: config.clone(),
            token_url,
            search_url,
            client_id,
            client_secret,
            client,
            token: Mutex::new(None),
        })
    }

    fn token(&self) -> Result<String, SearchFailure> {
        let mut slot = self.token.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((t, until)) = slot.as_ref()
            && Instant::now() < *until
        {
            return Ok(t.clone());
        }
        let body = self
            .client
            .send(
                HttpRequest::post(self.token_url.clone())
                    .basic_auth(&self.client_id, &self.client_secret)
                    .form(&[("grant_type", "client_credentials")]),
            )
            .map_err(|f| f.prefixed("token"))?;
        let obj = json_object(&body, "reddit token")?;
        let token = obj
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                SearchFailure::new("token_failed", "reddit: no access_token in the answer")
            })?
            .to_string();
        let ttl = obj
            .get("expires_in")
            .and_then(Value::as_u64)
            .unwrap_or(3600);
        // Renew a minute early so a token never expires mid-request.
        let until = Instant::now() + Duration::from_secs(ttl.saturating_sub(60).max(1));
        *slot = Some((token.clone(), until));
        Ok(token)
    }
}

impl Backend for RedditApi {
    fn name(&self) -> &'static str {
        "reddit"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        let token = self.token()?;
        let mut url = self.search_url.clone();
        url.query_pairs_mut()
            .append_pair("q", &req.text)
            .append_pair("limit", &req.top_k.clamp(1, 100).to_string())
            .append_pair("sort", &self.config.sort)
            .append_pair("t", &self.config.time)
            .append_pair("type", "link")
            .append_pair("raw_json", "1");
        let body = self.client.send(
            // Reddit's documented spelling is lower-case `bearer`.
            HttpRequest::get(url)
                .secret(Secret::Value(token.clone()))
                .secret_header("authorization", format!("bearer {token}"))
                .header("accept", "application/json"),
        )?;
        let mut parsed = parse(&body)?;
        parsed.hits.truncate(req.top_k);
        Ok(parsed)
    }
}

/// Parse a Reddit listing (`data.children[].data`). A child that is not a post is counted as
/// missing its URL.
pub fn parse(body: &str) -> Result<Parsed, SearchFailure> {
    let obj = json_object(body, "reddit")?;
    let children = match obj.get("data").and_then(|d| d.get("children")) {
        Some(Value::Array(c)) => c,
        _ => return Err(SearchFailure::malformed("reddit: no `data.children` list")),
    };
    let hits = children
        .iter()
        .map(|c| match c.get("data").and_then(RedditPost::from_json) {
            Some(p) => post_hit(&p),
            None => RawHit::default(),
        })
        .collect();
    Ok(Parsed::from_hits(hits))
}

/// A post as a search hit: permalink URL, title, the body's first 300 characters, date.
pub fn post_hit(p: &RedditPost) -> RawHit {
    let body = p.body_text();
    RawHit {
        url: Some(p.post_url()),
        title: (!p.title.trim().is_empty()).then(|| p.title.trim().to_string()),
        snippet: (!body.is_empty()).then(|| body.chars().take(300).collect()),
        published: p
            .published()
            .and_then(|d| crate::extract::normalise_date(&d)),
        ..RawHit::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_listing() {
        let p = parse(
            r#"{"kind":"Listing","data":{"children":[
            {"kind":"t3","data":{"id":"a1","title":"Post","selftext":"Body","subreddit":"news",
             "permalink":"/r/news/comments/a1/post/","created_utc":1600000000}},
            {"kind":"t3","data":{}}]}}"#,
        )
        .unwrap();
        assert_eq!(
            p.hits[0].url.as_deref(),
            Some("https://www.reddit.com/r/news/comments/a1/post/")
        );
        assert_eq!(p.hits[0].published.as_deref(), Some("2020-09-13"));
        assert_eq!(p.missing.get("url"), Some(&1));
        assert_eq!(
            parse(r#"{"data":{}}"#).unwrap_err().code,
            "malformed_response"
        );
    }
}
