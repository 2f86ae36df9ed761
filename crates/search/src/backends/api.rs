//! The credentialed search APIs' transport (Google, Brave, Reddit OAuth, the user's retriever):
//! `noisebench-web`'s [`ApiClient`] over its `HttpClient`, which sends the custom headers, form
//! bodies and keys these APIs need, never archives, and keeps the secrets each request names out
//! of every error detail and log line. Its failures are the backends'
//! [`SearchFailure`](crate::backends::SearchFailure)s (the same type). Page URLs from search
//! results always go through `noisebench-web`'s archiving [`noisebench_web::Web`].

pub(crate) use noisebench_web::api::ApiClient;
pub use noisebench_web::api::ApiLimits;
pub(crate) use noisebench_web::api::env_secret;
