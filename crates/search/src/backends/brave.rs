//! Brave Search API: `GET /res/v1/web/search?q` with the `X-Subscription-Token` header.
//!
//! At most 20 results per request (`count`), paged with `offset` (in pages, at most 9). Site
//! restriction is the `site:` operator in the query; a date window is `freshness=FROMtoTO`.

use serde::Deserialize;
use serde_json::Value;

use super::{
    Backend, Parsed, RawHit, SearchFailure, SearchRequest, json_object, text_of, with_site,
};
use crate::backends::api::{ApiClient, ApiLimits, env_secret};
use noisebench_web::HttpRequest;

#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BraveConfig {
    /// The Brave Search web search endpoint.
    #[serde(default = "default_endpoint")]
    pub endpoint: String,
    /// Environment variable holding the subscription token.
    #[serde(default = "default_key_env")]
    pub api_key_env: String,
    /// Pacing, retries, timeout and size cap of this backend's requests.
    #[serde(default)]
    pub limits: ApiLimits,
}

fn default_endpoint() -> String {
    "https://api.search.brave.com/res/v1/web/search".into()
}
fn default_key_env() -> String {
    "BRAVE_API_KEY".into()
}

pub struct Brave {
    endpoint: url::Url,
    key: String,
    client: ApiClient,
}

impl Brave {
    pub fn new(config: &BraveConfig, user_agent: &str) -> Result<Self, String> {
        let key = env_secret(&config.api_key_env)?;
        let endpoint = url::Url::parse(&config.endpoint)
            .map_err(|e| format!("endpoint `{}`: {e}", config.endpoint))?;
        let client = ApiClient::new(
            "brave",
            user_agent,
            config.limits.clone(),
            vec![key.clone()],
        )?;
        Ok(Self {
            endpoint,
            key,
            client,
        })
    }
}

impl Backend for Brave {
    fn name(&self) -> &'static str {
        "brave"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        let want = req.top_k.min(200);
        let per_page = want.clamp(1, 20);
        let mut all = Parsed::default();
        for page in 0..10usize {
            if all.hits.len() >= want {
                break;
            }
            let mut url = self.endpoint.clone();
            {
                let mut q = url.query_pairs_mut();
                q.append_pair("q", &with_site(&req.text, req.site.as_deref()))
                    .append_pair("count", &per_page.to_string());
                if page > 0 {
                    q.append_pair("offset", &page.to_string());
                }
                if req.date_from.is_some() || req.date_to.is_some() {
                    let from = req.date_from.clone().unwrap_or_else(|| "1970-01-01".into());
                    let to = req.date_to.clone().unwrap_or_else(|| "2100-01-01".into());
                    q.append_pair("freshness", &format!("{from}to{to}"));
                }
            }
            let body = self.client.send(
                HttpRequest::get(url)
                    .header("accept", "application/json")
                    .secret_header("x-subscription-token", self.key.clone()),
            )?;
            let parsed = parse(&body)?;
            let got = parsed.hits.len();
            for (k, v) in parsed.missing {
                *all.missing.entry(k).or_insert(0) += v;
            }
            all.hits.extend(parsed.hits);
            if got < per_page {
                break;
            }
        }
        all.hits.truncate(want);
        Ok(all)
    }
}

/// Parse one Brave answer: `web.results[]` (`url`, `title`, `description`, `page_age`). No `web`
/// section is an empty answer; a non-object or a `web.results` that is not a list is malformed.
/// The description is an HTML fragment and becomes text (`crate::entities::fragment_text`);
/// titles come as plain text.
pub fn parse(body: &str) -> Result<Parsed, SearchFailure> {
    let obj = json_object(body, "brave")?;
    if obj.get("type").and_then(Value::as_str) == Some("ErrorResponse") {
        let detail = obj
            .get("error")
            .and_then(|e| e.get("detail"))
            .and_then(Value::as_str)
            .unwrap_or("unspecified error");
        return Err(SearchFailure::new("api_error", format!("brave: {detail}")));
    }
    let results = match obj.get("web").and_then(|w| w.get("results")) {
        None | Some(Value::Null) => return Ok(Parsed::default()),
        Some(Value::Array(r)) => r,
        Some(_) => {
            return Err(SearchFailure::malformed(
                "brave: `web.results` is not a list",
            ));
        }
    };
    let hits = results
        .iter()
        .map(|r| RawHit {
            url: text_of(r.get("url")),
            title: text_of(r.get("title")),
            // An HTML fragment: `<strong>` around query words, `&#x27;`, `&quot;`.
            snippet: text_of(r.get("description"))
                .map(|d| crate::entities::fragment_text(&d))
                .filter(|d| !d.is_empty()),
            published: text_of(r.get("page_age")).and_then(|d| crate::extract::normalise_date(&d)),
            ..RawHit::default()
        })
        .collect();
    Ok(Parsed::from_hits(hits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_results() {
        let p = parse(r#"{"type":"search","web":{"results":[
            {"url":"https://b.example/1","title":"B1","description":"d","page_age":"2021-06-01T00:00:00"},
            {"url":"https://b.example/2"}]}}"#)
        .unwrap();
        assert_eq!(p.hits[0].published.as_deref(), Some("2021-06-01"));
        assert_eq!(p.missing.get("title"), Some(&1));
        assert!(parse(r#"{"type":"search"}"#).unwrap().hits.is_empty());
        assert_eq!(
            parse(r#"{"web":{"results":{}}}"#).unwrap_err().code,
            "malformed_response"
        );
    }
}
