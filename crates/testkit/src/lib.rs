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
//!
//! # Modules
//!
//! Test support, only ever a dev-dependency. `served.rs` (`Served`: an axum `Router` on 127.0.0.1,
//! on a background thread, stopped on drop; `respond`, `refused_addr`), `openai.rs` (`FakeServer`:
//! a fake OpenAI-compatible chat-completions and embeddings endpoint answering from a script, a
//! default `Reply` or a rule over the request body (`Reply::rule`, `FakeServer::answering`), with
//! 429/Retry-After, 5xx, slow, raw/truncated and custom-usage replies (and
//! `count_usage_like_openai`: `usage.rs` counts prompt, completion and prompt-cache tokens as
//! OpenAI reports them), recording arrivals, requests in flight, bodies and Authorization headers;
//! `openai_config`, and `strict_openai_config` with no retries or re-asks), `python.rs`
//! (`pandas_available`, `run_python_json` for the release-loader checks), `checkout.rs` (a
//! temporary copy of the repository's pipelines and fixtures for end-to-end tests), `hub.rs`
//! (`FakeHub`: dataset repositories in memory behind the Hub API's whoami, create, info, refs,
//! preupload, commit, tag and resolve endpoints, with a step that can be made to fail once),
//! `logs.rs` (`capture_logs`: every log line of a test binary, for the checks that no secret
//! reaches one). It knows no noisebench types, so any crate's tests can use it without a dependency
//! cycle; helpers that need a crate's own types (llm's `keywords`, label's `task_of`/`FakeLlm`)
//! stay in that crate's `tests/it/common`. Invariant: a dev-dependency only, depending on no crate
//! of ours; every server it starts listens on 127.0.0.1 and stops when dropped.

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
