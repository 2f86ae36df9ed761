//! A fake Hugging Face Hub on 127.0.0.1: dataset repositories held in memory, serving the
//! endpoints of the Hub's HTTP API that a client needs to create a repository, commit files,
//! tag and download (as the Hub documents them, hub-docs `api.md`, and as the `huggingface_hub`
//! and `hf-hub` clients' tests call them):
//!
//! - `GET /api/whoami-v2`: the token's account, 401 for any other token;
//! - `POST /api/repos/create` (`name`, `organization`, `private`, `type`): 409 when it exists;
//!   a new repository has one commit holding `.gitattributes`, as on the Hub;
//! - `GET /api/datasets/{owner}/{name}` (and `/revision/{rev}`): 404 when missing;
//! - `GET /api/datasets/{owner}/{name}/refs`: `branches` and `tags` with their `targetCommit`;
//! - `POST /api/datasets/{owner}/{name}/preupload/{rev}`: every file `regular` (this fake
//!   stores no LFS or Xet objects, so a client sends contents inline in the commit);
//! - `POST /api/datasets/{owner}/{name}/commit/{rev}` (NDJSON: `header` with `summary` and
//!   `parentCommit`, `file` base64, `deletedFile`): 412 when `parentCommit` is not the head;
//!   `lfsFile` entries are refused (no object was uploaded here);
//! - `POST /api/datasets/{owner}/{name}/tag/{rev}` (`tag`, `message`): 409 when it exists;
//! - `GET /api/datasets/{owner}/{name}/tree/{rev}[/{path}]` (`recursive`): the files and
//!   folders under a path, each `{type, oid, size, path}` (one page: no `Link` header);
//! - `POST /api/datasets/{owner}/{name}/paths-info/{rev}` (form: `paths` repeated): the entries
//!   of the paths that exist, others left out;
//! - `HEAD`/`GET /datasets/{owner}/{name}/resolve/{rev}/{path}`: the bytes, with `ETag`,
//!   `X-Repo-Commit` and `Content-Length`; 404 with `X-Error-Code` `EntryNotFound` or
//!   `RevisionNotFound`.
//!
//! Writes need `Authorization: Bearer <token>`; reads of public repositories need none, of
//! private ones the token. A step can be made to fail once ([`FakeHub::interrupt`]) to stand
//! for a push stopped there. Every request is recorded with its Authorization header.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::{any, get, post};
use base64::Engine;
use sha2::{Digest, Sha256};

use crate::Served;

/// A step of a push that [`FakeHub::interrupt`] can make fail once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubStep {
    Commit,
    Tag,
}

/// One commit of a repository: its id, message, parent and the whole tree after it.
#[derive(Debug, Clone)]
pub struct HubCommit {
    pub oid: String,
    pub summary: String,
    pub parent: Option<String>,
    pub files: BTreeMap<String, Vec<u8>>,
}

#[derive(Debug, Clone, Default)]
pub struct HubRepo {
    pub private: bool,
    /// Every commit, oldest first; `main` is the last.
    pub commits: Vec<HubCommit>,
    /// Tag name -> commit id.
    pub tags: BTreeMap<String, String>,
}

impl HubRepo {
    pub fn head(&self) -> Option<&HubCommit> {
        self.commits.last()
    }

    /// A branch, tag or commit id.
    pub fn resolve(&self, rev: &str) -> Option<&HubCommit> {
        let oid = match rev {
            "main" => return self.head(),
            rev => self.tags.get(rev).map(String::as_str).unwrap_or(rev),
        };
        self.commits.iter().find(|c| c.oid == oid)
    }
}

/// A request as received: method, path and query, and its Authorization header.
#[derive(Debug, Clone)]
pub struct HubRequest {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
}

#[derive(Default)]
pub struct HubState {
    pub repos: BTreeMap<String, HubRepo>,
    pub requests: Vec<HubRequest>,
    interrupt: Option<HubStep>,
    /// A step whose requests wait (see [`FakeHub::hold`]); how many have arrived.
    hold: Option<HubStep>,
    held: usize,
}

/// The fake Hub: its address and its state, shared with the server.
pub struct FakeHub {
    pub served: Served,
    state: Arc<Mutex<HubState>>,
}

#[derive(Clone)]
struct Ctx {
    state: Arc<Mutex<HubState>>,
    token: String,
    user: String,
}

impl FakeHub {
    /// Serve a Hub accepting `token` for the account `user`.
    pub fn start(user: &str, token: &str) -> FakeHub {
        let state = Arc::new(Mutex::new(HubState::default()));
        let ctx = Ctx {
            state: state.clone(),
            token: token.to_string(),
            user: user.to_string(),
        };
        let app = Router::new()
            .route("/api/whoami-v2", get(whoami))
            .route("/api/repos/create", post(create))
            .route("/api/datasets/{owner}/{name}", get(info))
            .route("/api/datasets/{owner}/{name}/revision/{rev}", get(info_rev))
            .route("/api/datasets/{owner}/{name}/refs", get(refs))
            .route(
                "/api/datasets/{owner}/{name}/preupload/{rev}",
                post(preupload),
            )
            .route("/api/datasets/{owner}/{name}/commit/{rev}", post(commit))
            .route("/api/datasets/{owner}/{name}/tag/{rev}", post(tag))
            .route("/api/datasets/{owner}/{name}/tree/{rev}", get(tree_root))
            .route("/api/datasets/{owner}/{name}/tree/{rev}/{*path}", get(tree))
            .route(
                "/api/datasets/{owner}/{name}/paths-info/{rev}",
                post(paths_info),
            )
            .route(
                "/datasets/{owner}/{name}/resolve/{rev}/{*path}",
                any(resolve),
            )
            // a commit carries its files inline here (no LFS): allow what the demo's takes
            .layer(axum::extract::DefaultBodyLimit::max(512 << 20))
            .layer(axum::middleware::from_fn_with_state(ctx.clone(), record))
            .with_state(ctx);
        FakeHub {
            served: Served::start(app),
            state,
        }
    }

    /// Make requests of `step` wait, unapplied, until [`FakeHub::release`] (or 60 s), then
    /// fail with 503: a client can be killed while its request is in the Hub's hands.
    pub fn hold(&self, step: HubStep) {
        self.state.lock().unwrap().hold = Some(step);
    }

    /// How many requests of the held step have arrived.
    pub fn held(&self) -> usize {
        self.state.lock().unwrap().held
    }

    /// Stop holding: waiting requests fail, later ones are served.
    pub fn release(&self) {
        self.state.lock().unwrap().hold = None;
    }

    /// `http://127.0.0.1:<port>`, the endpoint to give a client.
    pub fn url(&self) -> &str {
        self.served.url()
    }

    /// Make the next request of `step` fail (answered 400, which clients do not retry), as a
    /// push stopped there would.
    pub fn interrupt(&self, step: HubStep) {
        self.state.lock().unwrap().interrupt = Some(step);
    }

    /// A copy of a repository (`owner/name`).
    pub fn repo(&self, id: &str) -> Option<HubRepo> {
        self.state.lock().unwrap().repos.get(id).cloned()
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<HubRequest> {
        self.state.lock().unwrap().requests.clone()
    }

    /// A new commit on `main` of `repo` that sets one file (someone else's later change).
    pub fn commit_on_main(&self, repo: &str, path: &str, bytes: &[u8]) {
        let mut st = self.state.lock().unwrap();
        let r = st.repos.get_mut(repo).expect("the repository exists");
        let mut files = r.head().map(|c| c.files.clone()).unwrap_or_default();
        files.insert(path.to_string(), bytes.to_vec());
        new_commit(r, "a later change", files);
    }

    /// Give the tag `tag` of `repo` to a new commit holding `files` (a tag someone else made).
    pub fn force_tag(&self, repo: &str, tag: &str, files: BTreeMap<String, Vec<u8>>) {
        let mut st = self.state.lock().unwrap();
        let r = st.repos.entry(repo.to_string()).or_default();
        let c = new_commit(r, "someone else's commit", files);
        r.tags.insert(tag.to_string(), c);
    }
}

async fn record(
    State(ctx): State<Ctx>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let entry = HubRequest {
        method: req.method().to_string(),
        path: req.uri().to_string(),
        authorization: req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
    };
    ctx.state.lock().unwrap().requests.push(entry);
    next.run(req).await
}

fn json(status: StatusCode, v: serde_json::Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(v.to_string()))
        .unwrap()
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .header("x-error-code", code)
        .header("x-error-message", message)
        .body(Body::from(
            serde_json::json!({ "error": message }).to_string(),
        ))
        .unwrap()
}

/// `Some(true)`: the right token; `Some(false)`: a wrong one; `None`: none.
fn authorized(ctx: &Ctx, headers: &HeaderMap) -> Option<bool> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    Some(value.strip_prefix("Bearer ") == Some(ctx.token.as_str()))
}

fn invalid_token() -> Response {
    error(
        StatusCode::UNAUTHORIZED,
        "InvalidCredentials",
        "Invalid credentials in Authorization header",
    )
}

/// Writes: the right token or 401.
fn require_token(ctx: &Ctx, headers: &HeaderMap) -> Option<Response> {
    match authorized(ctx, headers) {
        Some(true) => None,
        _ => Some(invalid_token()),
    }
}

/// Reads: a wrong token is 401; a private repository needs the right one (else 404, as the Hub
/// hides it). `Some`: the refusal.
fn refuse_read(ctx: &Ctx, headers: &HeaderMap, repo: &HubRepo) -> Option<Response> {
    match authorized(ctx, headers) {
        Some(false) => Some(invalid_token()),
        None if repo.private => Some(error(
            StatusCode::NOT_FOUND,
            "RepoNotFound",
            "Repository not found",
        )),
        _ => None,
    }
}

fn take_interrupt(ctx: &Ctx, step: HubStep) -> Option<Response> {
    let mut st = ctx.state.lock().unwrap();
    if st.interrupt == Some(step) {
        st.interrupt = None;
        return Some(error(
            StatusCode::BAD_REQUEST,
            "Interrupted",
            "the fake Hub was told to stop this push here",
        ));
    }
    None
}

async fn wait_if_held(ctx: &Ctx, step: HubStep) -> Option<Response> {
    {
        let mut st = ctx.state.lock().unwrap();
        if st.hold != Some(step) {
            return None;
        }
        st.held += 1;
    }
    // polled, not notified: a release between the check above and a wait cannot be missed
    for _ in 0..1200 {
        if ctx.state.lock().unwrap().hold != Some(step) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Some(error(
        StatusCode::SERVICE_UNAVAILABLE,
        "Held",
        "the fake Hub held this request and did not apply it",
    ))
}

fn commit_oid(parent: Option<&str>, summary: &str, files: &BTreeMap<String, Vec<u8>>) -> String {
    let mut h = Sha256::new();
    h.update(parent.unwrap_or("").as_bytes());
    h.update(summary.as_bytes());
    for (path, bytes) in files {
        h.update(path.as_bytes());
        h.update(Sha256::digest(bytes));
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    hex[..40].to_string()
}

fn new_commit(repo: &mut HubRepo, summary: &str, files: BTreeMap<String, Vec<u8>>) -> String {
    let parent = repo.head().map(|c| c.oid.clone());
    let oid = commit_oid(parent.as_deref(), summary, &files);
    repo.commits.push(HubCommit {
        oid: oid.clone(),
        summary: summary.to_string(),
        parent,
        files,
    });
    oid
}

async fn whoami(State(ctx): State<Ctx>, headers: HeaderMap) -> Response {
    if authorized(&ctx, &headers) != Some(true) {
        return invalid_token();
    }
    json(
        StatusCode::OK,
        serde_json::json!({ "type": "user", "name": ctx.user, "fullname": ctx.user, "orgs": [] }),
    )
}

async fn create(State(ctx): State<Ctx>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(r) = require_token(&ctx, &headers) {
        return r;
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "BadRequest", "body is not JSON");
    };
    if v["type"] != "dataset" {
        return error(StatusCode::BAD_REQUEST, "BadRequest", "only datasets here");
    }
    let name = v["name"].as_str().unwrap_or_default();
    let owner = v["organization"].as_str().unwrap_or(&ctx.user);
    let id = format!("{owner}/{name}");
    let mut st = ctx.state.lock().unwrap();
    if st.repos.contains_key(&id) {
        return json(
            StatusCode::CONFLICT,
            serde_json::json!({ "error": "You already created this dataset repo", "url": id }),
        );
    }
    let mut repo = HubRepo {
        private: v["private"].as_bool().unwrap_or(false),
        ..HubRepo::default()
    };
    let mut files = BTreeMap::new();
    files.insert(
        ".gitattributes".to_string(),
        b"*.parquet filter=lfs diff=lfs merge=lfs -text\n".to_vec(),
    );
    new_commit(&mut repo, "initial commit", files);
    st.repos.insert(id.clone(), repo);
    json(
        StatusCode::OK,
        serde_json::json!({ "url": format!("https://huggingface.co/datasets/{id}"), "name": id }),
    )
}

fn repo_info(ctx: &Ctx, headers: &HeaderMap, id: &str, rev: &str) -> Response {
    let st = ctx.state.lock().unwrap();
    let Some(repo) = st.repos.get(id) else {
        if authorized(ctx, headers) == Some(false) {
            return invalid_token();
        }
        return error(
            StatusCode::NOT_FOUND,
            "RepoNotFound",
            "Repository not found",
        );
    };
    if let Some(r) = refuse_read(ctx, headers, repo) {
        return r;
    }
    let Some(c) = repo.resolve(rev) else {
        return error(StatusCode::NOT_FOUND, "RevisionNotFound", "Invalid rev id");
    };
    let siblings: Vec<_> = c
        .files
        .keys()
        .map(|f| serde_json::json!({ "rfilename": f }))
        .collect();
    json(
        StatusCode::OK,
        serde_json::json!({ "id": id, "sha": c.oid, "private": repo.private, "siblings": siblings }),
    )
}

async fn info(
    State(ctx): State<Ctx>,
    Path((owner, name)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    repo_info(&ctx, &headers, &format!("{owner}/{name}"), "main")
}

async fn info_rev(
    State(ctx): State<Ctx>,
    Path((owner, name, rev)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> Response {
    repo_info(&ctx, &headers, &format!("{owner}/{name}"), &rev)
}

async fn refs(
    State(ctx): State<Ctx>,
    Path((owner, name)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let st = ctx.state.lock().unwrap();
    let Some(repo) = st.repos.get(&format!("{owner}/{name}")) else {
        return error(
            StatusCode::NOT_FOUND,
            "RepoNotFound",
            "Repository not found",
        );
    };
    if let Some(r) = refuse_read(&ctx, &headers, repo) {
        return r;
    }
    let branches: Vec<_> = repo
        .head()
        .map(|c| serde_json::json!({ "name": "main", "ref": "refs/heads/main", "targetCommit": c.oid }))
        .into_iter()
        .collect();
    let tags: Vec<_> = repo
        .tags
        .iter()
        .map(|(t, oid)| serde_json::json!({ "name": t, "ref": format!("refs/tags/{t}"), "targetCommit": oid }))
        .collect();
    json(
        StatusCode::OK,
        serde_json::json!({ "branches": branches, "converts": [], "tags": tags }),
    )
}

async fn preupload(
    State(ctx): State<Ctx>,
    Path((owner, name, _rev)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(r) = require_token(&ctx, &headers) {
        return r;
    }
    if !ctx
        .state
        .lock()
        .unwrap()
        .repos
        .contains_key(&format!("{owner}/{name}"))
    {
        return error(
            StatusCode::NOT_FOUND,
            "RepoNotFound",
            "Repository not found",
        );
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "BadRequest", "body is not JSON");
    };
    let files: Vec<_> = v["files"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|f| serde_json::json!({ "path": f["path"], "uploadMode": "regular", "shouldIgnore": false }))
        .collect();
    json(StatusCode::OK, serde_json::json!({ "files": files }))
}

async fn commit(
    State(ctx): State<Ctx>,
    Path((owner, name, rev)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(r) = require_token(&ctx, &headers) {
        return r;
    }
    if let Some(r) = take_interrupt(&ctx, HubStep::Commit) {
        return r;
    }
    if let Some(r) = wait_if_held(&ctx, HubStep::Commit).await {
        return r;
    }
    if rev != "main" {
        return error(StatusCode::BAD_REQUEST, "BadRequest", "only main here");
    }
    let id = format!("{owner}/{name}");
    let mut summary = String::new();
    let mut parent_commit: Option<String> = None;
    let mut adds: Vec<(String, Vec<u8>)> = Vec::new();
    let mut deletes: Vec<String> = Vec::new();
    for line in body.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
            return error(StatusCode::BAD_REQUEST, "BadRequest", "a line is not JSON");
        };
        let value = &v["value"];
        match v["key"].as_str() {
            Some("header") => {
                summary = value["summary"].as_str().unwrap_or_default().to_string();
                parent_commit = value["parentCommit"].as_str().map(str::to_string);
            }
            Some("file") => {
                let path = value["path"].as_str().unwrap_or_default().to_string();
                let content = value["content"].as_str().unwrap_or_default();
                let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(content) else {
                    return error(
                        StatusCode::BAD_REQUEST,
                        "BadRequest",
                        "content is not base64",
                    );
                };
                adds.push((path, bytes));
            }
            Some("deletedFile") => {
                deletes.push(value["path"].as_str().unwrap_or_default().to_string())
            }
            Some("lfsFile") => {
                return error(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "LfsObjectMissing",
                    "no LFS object was uploaded to this server",
                );
            }
            _ => return error(StatusCode::BAD_REQUEST, "BadRequest", "unknown key"),
        }
    }
    if summary.is_empty() {
        return error(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "the commit has no summary",
        );
    }
    let mut st = ctx.state.lock().unwrap();
    let Some(repo) = st.repos.get_mut(&id) else {
        return error(
            StatusCode::NOT_FOUND,
            "RepoNotFound",
            "Repository not found",
        );
    };
    let head = repo.head().map(|c| c.oid.clone());
    if let Some(p) = &parent_commit
        && Some(p) != head.as_ref()
    {
        return error(
            StatusCode::PRECONDITION_FAILED,
            "ParentCommitMismatch",
            "A commit has happened since. Please refresh and try again.",
        );
    }
    let mut files = repo.head().map(|c| c.files.clone()).unwrap_or_default();
    for d in deletes {
        files.remove(&d);
    }
    for (path, bytes) in adds {
        files.insert(path, bytes);
    }
    let oid = new_commit(repo, &summary, files);
    json(
        StatusCode::OK,
        serde_json::json!({
            "success": true,
            "commitOid": oid,
            "commitUrl": format!("https://huggingface.co/datasets/{id}/commit/{oid}"),
            "commitMessage": summary,
        }),
    )
}

async fn tag(
    State(ctx): State<Ctx>,
    Path((owner, name, rev)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(r) = require_token(&ctx, &headers) {
        return r;
    }
    if let Some(r) = take_interrupt(&ctx, HubStep::Tag) {
        return r;
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, "BadRequest", "body is not JSON");
    };
    let Some(tag) = v["tag"].as_str() else {
        return error(StatusCode::BAD_REQUEST, "BadRequest", "no tag");
    };
    let mut st = ctx.state.lock().unwrap();
    let Some(repo) = st.repos.get_mut(&format!("{owner}/{name}")) else {
        return error(
            StatusCode::NOT_FOUND,
            "RepoNotFound",
            "Repository not found",
        );
    };
    if repo.tags.contains_key(tag) {
        return error(StatusCode::CONFLICT, "TagExists", "Tag already exists");
    }
    let Some(c) = repo.resolve(&rev).map(|c| c.oid.clone()) else {
        return error(StatusCode::NOT_FOUND, "RevisionNotFound", "Invalid rev id");
    };
    repo.tags.insert(tag.to_string(), c);
    json(StatusCode::OK, serde_json::json!({}))
}

/// The answer `f` gives for a revision of a readable repository, or the refusal (the repository
/// or revision missing, the token wrong, a private repository read without it).
fn with_commit(
    ctx: &Ctx,
    headers: &HeaderMap,
    id: &str,
    rev: &str,
    f: impl FnOnce(&HubCommit) -> Response,
) -> Response {
    let st = ctx.state.lock().unwrap();
    let Some(repo) = st.repos.get(id) else {
        return error(
            StatusCode::NOT_FOUND,
            "RepoNotFound",
            "Repository not found",
        );
    };
    if let Some(r) = refuse_read(ctx, headers, repo) {
        return r;
    }
    match repo.resolve(rev) {
        Some(c) => f(c),
        None => error(StatusCode::NOT_FOUND, "RevisionNotFound", "Invalid rev id"),
    }
}

fn content_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The entry of a file or folder as the tree and paths-info endpoints give it.
fn entry(commit: &HubCommit, path: &str) -> Option<serde_json::Value> {
    if let Some(bytes) = commit.files.get(path) {
        return Some(serde_json::json!({
            "type": "file", "oid": content_hash(bytes), "size": bytes.len(), "path": path,
        }));
    }
    let prefix = format!("{path}/");
    commit.files.keys().any(|f| f.starts_with(&prefix)).then(|| {
        serde_json::json!({ "type": "directory", "oid": content_hash(prefix.as_bytes()), "size": 0, "path": path })
    })
}

/// The entries under `dir` ("" for the root): its children, or with `recursive` every file and
/// folder below it, folders before the files inside them.
fn entries_under(commit: &HubCommit, dir: &str, recursive: bool) -> Vec<serde_json::Value> {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let mut paths = std::collections::BTreeSet::new();
    for file in commit.files.keys() {
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let depth = if recursive { parts.len() } else { 1 };
        for n in 1..=depth {
            paths.insert(format!("{prefix}{}", parts[..n].join("/")));
        }
    }
    paths.iter().filter_map(|p| entry(commit, p)).collect()
}

fn list_tree(
    ctx: &Ctx,
    headers: &HeaderMap,
    id: &str,
    rev: &str,
    path: &str,
    query: Option<&str>,
) -> Response {
    let path = path.trim_matches('/');
    let recursive = url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .any(|(k, v)| k == "recursive" && (v == "true" || v == "True" || v == "1"));
    with_commit(ctx, headers, id, rev, |commit| {
        if path.is_empty() || entry(commit, path).is_some_and(|e| e["type"] == "directory") {
            let entries = entries_under(commit, path, recursive);
            json(StatusCode::OK, serde_json::Value::Array(entries))
        } else {
            error(StatusCode::NOT_FOUND, "EntryNotFound", "Entry not found")
        }
    })
}

async fn tree_root(
    State(ctx): State<Ctx>,
    Path((owner, name, rev)): Path<(String, String, String)>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    list_tree(
        &ctx,
        &headers,
        &format!("{owner}/{name}"),
        &rev,
        "",
        uri.query(),
    )
}

async fn tree(
    State(ctx): State<Ctx>,
    Path((owner, name, rev, path)): Path<(String, String, String, String)>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    list_tree(
        &ctx,
        &headers,
        &format!("{owner}/{name}"),
        &rev,
        &path,
        uri.query(),
    )
}

async fn paths_info(
    State(ctx): State<Ctx>,
    Path((owner, name, rev)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    with_commit(&ctx, &headers, &format!("{owner}/{name}"), &rev, |commit| {
        let found = url::form_urlencoded::parse(&body)
            .filter(|(k, _)| k == "paths")
            .filter_map(|(_, p)| entry(commit, p.trim_matches('/')))
            .collect();
        json(StatusCode::OK, serde_json::Value::Array(found))
    })
}

async fn resolve(
    State(ctx): State<Ctx>,
    Path((owner, name, rev, path)): Path<(String, String, String, String)>,
    method: Method,
    headers: HeaderMap,
    _uri: Uri,
) -> Response {
    with_commit(&ctx, &headers, &format!("{owner}/{name}"), &rev, |c| {
        let Some(bytes) = c.files.get(&path) else {
            return error(StatusCode::NOT_FOUND, "EntryNotFound", "Entry not found");
        };
        let builder = Response::builder()
            .status(StatusCode::OK)
            .header(header::ETAG, format!("\"{}\"", content_hash(bytes)))
            .header("x-repo-commit", c.oid.clone())
            .header(header::CONTENT_LENGTH, bytes.len())
            .header(header::CONTENT_TYPE, "application/octet-stream");
        let body = if method == Method::HEAD {
            Body::empty()
        } else {
            Body::from(bytes.clone())
        };
        builder.body(body).unwrap()
    })
}
