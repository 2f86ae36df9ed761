//! Test support shared by the workspace's integration tests, benches and nothing else: fake HTTP
//! servers on 127.0.0.1 and a way to run the Python checks. [`Served`] serves any axum `Router`
//! on a background thread and stops it when dropped; [`FakeServer`] is a fake OpenAI-compatible
//! endpoint (chat completions, embeddings and the Batch API) answering from a script, a default
//! reply or a rule over the request body, and recording what it received; [`pandas_available`] and
//! [`run_python_json`] run a Python script (e.g. a release loader) over test output;
//! [`checkout`] copies the repository's pipelines and fixtures into a temporary folder;
//! [`capture_logs`] keeps every log line of a test binary for secret checks; [`FakeHub`] is a
//! fake Hugging Face Hub (repositories, commits, tags, downloads).
//!
//! It is a dev-dependency only: no crate lists it under `[dependencies]`, and nothing here is
//! meant for production code. It is not a mock of the real services' quirks beyond what the tests
//! name, it never reaches the internet (servers bind loopback addresses only), and it knows no
//! noisebench types, so any crate's tests can use it without a dependency cycle.

mod checkout;
mod hub;
mod logs;
mod openai;
mod python;
mod served;
pub mod usage;

pub use checkout::{checkout, copy_dir, repo_root};
pub use hub::{FakeHub, HubCommit, HubRepo, HubRequest, HubStep};
pub use logs::{CapturedLogs, capture_logs};
pub use openai::{
    BatchApi, FakeBatch, FakeServer, KEYWORDS_OK, LineFilter, Record, Reply, Rule, ServerState,
    StoredFile, fake_vector, first_message, openai_config, strict_openai_config,
};
pub use python::{pandas_available, run_python_json};
pub use served::{Served, refused_addr, respond};
