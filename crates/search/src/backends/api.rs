//! The credentialed search APIs' transport (Google, Brave, Reddit OAuth, the user's retriever):
//! `noisebench-web`'s [`noisebench_web::api::ApiClient`] over its `HttpClient`, which sends the
//! custom headers, form bodies and keys these APIs need, never archives, and keeps the secrets
//! each request names out of every error detail and log line. This module only turns its
//! failures into [`SearchFailure`]s. Page URLs from search results always go through
//! `noisebench-web`'s archiving [`noisebench_web::Web`].

use noisebench_web::HttpRequest;
use noisebench_web::api::ApiFailure;
pub use noisebench_web::api::ApiLimits;
pub(crate) use noisebench_web::api::env_secret;

use crate::backends::SearchFailure;

impl From<ApiFailure> for SearchFailure {
    fn from(f: ApiFailure) -> Self {
        Self {
            code: f.code,
            transient: f.transient,
            detail: f.detail,
        }
    }
}

/// One backend's client: its limits, and the secrets removed from every error it reports.
#[derive(Debug)]
pub(crate) struct ApiClient(noisebench_web::api::ApiClient);

impl ApiClient {
    /// `secrets` are named on every request this client sends, on top of the request's own.
    pub fn new(
        backend: &'static str,
        user_agent: &str,
        limits: ApiLimits,
        secrets: Vec<String>,
    ) -> Result<Self, String> {
        noisebench_web::api::ApiClient::new(backend, user_agent, limits, secrets).map(Self)
    }

    /// Send (blocking), retrying 408/429/5xx and timeouts; the body of a 2xx answer.
    pub fn send(&self, request: HttpRequest) -> Result<String, SearchFailure> {
        Ok(self.0.send(request)?)
    }
}
