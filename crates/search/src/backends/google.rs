//! Google Programmable Search (Custom Search JSON API): `GET /customsearch/v1?key&cx&q`.
//!
//! At most 10 results per request; more are paged with `start` (1-based, up to 100 in all).
//! Site restriction uses `siteSearch` with `siteSearchFilter=i`; a date window uses
//! `sort=date:r:YYYYMMDD:YYYYMMDD`. The key travels as a query parameter, named as a secret to
//! `crate::backends::api::ApiClient`, which never archives and keeps it out of errors and logs.

use serde::Deserialize;
use serde_json::Value;

use super::{Backend, Parsed, RawHit, SearchFailure, SearchRequest, json_object, text_of};
use crate::backends::api::{ApiClient, ApiLimits, env_secret};
use noisebench_web::{HttpRequest, Secret};

#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoogleConfig {
    /// The Custom Search JSON API endpoint.
    #[serde(default = "default_endpoint")]
    pub endpoint: String,
    /// Environment variable holding the API key.
    #[serde(default = "default_key_env")]
    pub api_key_env: String,
    /// Environment variable holding the search engine id (`cx`).
    #[serde(default = "default_cx_env")]
    pub cx_env: String,
    /// Pacing, retries, timeout and size cap of this backend's requests.
    #[serde(default)]
    pub limits: ApiLimits,
}

fn default_endpoint() -> String {
    "https://www.googleapis.com/customsearch/v1".into()
}
fn default_key_env() -> String {
    "GOOGLE_API_KEY".into()
}
fn default_cx_env() -> String {
    "GOOGLE_CSE_ID".into()
}

pub struct Google {
    endpoint: url::Url,
    key: String,
    cx: String,
    client: ApiClient,
}

impl Google {
    pub fn new(config: &GoogleConfig, user_agent: &str) -> Result<Self, String> {
        let key = env_secret(&config.api_key_env)?;
        let cx = env_secret(&config.cx_env)?;
        let endpoint = url::Url::parse(&config.endpoint)
            .map_err(|e| format!("endpoint `{}`: {e}", config.endpoint))?;
        let client = ApiClient::new(
            "google",
            user_agent,
            config.limits.clone(),
            vec![key.clone(), cx.clone()],
        )?;
        Ok(Self {
            endpoint,
            key,
            cx,
            client,
        })
    }
}

/// `YYYY-MM-DD` -> `YYYYMMDD`.
fn compact(date: &str) -> String {
    date.replace('-', "")
}

impl Backend for Google {
    fn name(&self) -> &'static str {
        "google"
    }

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {
        let want = req.top_k.min(100);
        let mut all = Parsed::default();
        let mut start = 1usize;
        while all.hits.len() < want {
            let num = (want - all.hits.len()).min(10);
            let mut url = self.endpoint.clone();
            {
                let mut q = url.query_pairs_mut();
                q.append_pair("key", &self.key)
                    .append_pair("cx", &self.cx)
                    .append_pair("q", &req.text)
                    .append_pair("num", &num.to_string());
                if start > 1 {
                    q.append_pair("start", &start.to_string());
                }
                if let Some(site) = &req.site {
                    q.append_pair("siteSearch", site)
                        .append_pair("siteSearchFilter", "i");
                }
                if req.date_from.is_some() || req.date_to.is_some() {
                    let from = req.date_from.as_deref().map(compact).unwrap_or_default();
                    let to = req.date_to.as_deref().map(compact).unwrap_or_default();
                    q.append_pair("sort", &format!("date:r:{from}:{to}"));
                }
            }
            let body = self.client.send(
                HttpRequest::get(url)
                    .header("accept", "application/json")
                    .secret(Secret::QueryParam("key".into())),
            )?;
            let page = parse(&body)?;
            let got = page.hits.len();
            for (k, v) in page.missing {
                *all.missing.entry(k).or_insert(0) += v;
            }
            all.hits.extend(page.hits);
            if got < num || start + got > 100 {
                break;
            }
            start += got;
        }
        all.hits.truncate(want);
        Ok(all)
    }
}

/// Parse one Custom Search answer. No `items` (Google's empty result) is an empty answer; an
/// `error` object is `api_error`.
pub fn parse(body: &str) -> Result<Parsed, SearchFailure> {
    let obj = json_object(body, "google")?;
    if let Some(err) = obj.get("error") {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("unspecified error");
        return Err(SearchFailure::new("api_error", format!("google: {msg}")));
    }
    let items = match obj.get("items") {
        None | Some(Value::Null) => return Ok(Parsed::default()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(SearchFailure::malformed("google: `items` is not a list")),
    };
    let hits = items
        .iter()
        .map(|item| RawHit {
            url: text_of(item.get("link")),
            title: text_of(item.get("title")),
            snippet: text_of(item.get("snippet")),
            published: item
                .pointer("/pagemap/metatags/0/article:published_time")
                .and_then(Value::as_str)
                .and_then(crate::extract::normalise_date),
            ..RawHit::default()
        })
        .collect();
    Ok(Parsed::from_hits(hits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_items_empty_and_errors() {
        let p = parse(
            r#"{"kind":"customsearch#search","items":[
            {"link":"https://a.example/1","title":"One","snippet":"s1",
             "pagemap":{"metatags":[{"article:published_time":"2020-01-02T03:04:05Z"}]}},
            {"title":"no link"},
            {"link":"https://a.example/3"}]}"#,
        )
        .unwrap();
        assert_eq!(p.hits.len(), 3);
        assert_eq!(p.hits[0].published.as_deref(), Some("2020-01-02"));
        assert_eq!(p.missing.get("url"), Some(&1));
        assert_eq!(p.missing.get("title"), Some(&1));
        assert_eq!(p.missing.get("snippet"), Some(&2));
        assert!(
            parse(r#"{"searchInformation":{"totalResults":"0"}}"#)
                .unwrap()
                .hits
                .is_empty()
        );
        assert_eq!(parse("<html>").unwrap_err().code, "malformed_response");
        assert_eq!(
            parse(r#"{"items": 3}"#).unwrap_err().code,
            "malformed_response"
        );
        assert_eq!(
            parse(r#"{"error":{"message":"quota"}}"#).unwrap_err().code,
            "api_error"
        );
    }
}
