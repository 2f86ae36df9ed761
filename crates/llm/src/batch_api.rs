//! Batch mode (`llm.mode = "batch"`): the requests of one stage call that missed the cache go
//! to the model's first endpoint as one OpenAI Batch API job, at the providers' batch price.
//!
//! A job is a JSONL file, one [`BatchLine`] per distinct request (`custom_id` is the request
//! hash, `body` the chat completion body a live call would send), uploaded to `/v1/files` with
//! purpose `batch`, submitted to `/v1/batches` (`endpoint: /v1/chat/completions`,
//! `completion_window: 24h`), polled at `GET /v1/batches/{id}` every `llm.batch_poll_seconds`
//! until it ends (`completed`, `failed`, `expired`, `cancelled`), and read back from its
//! `output_file_id` and `error_file_id` (`GET /v1/files/{id}/content`). Each answer line then
//! takes the path a live reply takes ([`Transport::remote_with`]): parse, repair, sense checks, cache,
//! call log; its tokens are costed at `price * (1 - llm.batch_discount)` in the call log and
//! against `llm.max_cost`. What that path asks next (a re-ask of an unusable answer, the one
//! wider budget for a cut-off one) goes live at the full price: each follow-up depends on the
//! answer before it, and they are few. A line that came back with an error, and every request of
//! a job that ended without answering it, fails as `batch_request_failed`: transient, never
//! cached, so the next run sends exactly those again (in a new job).
//!
//! Resume: before the first poll, the job's id is written (atomically) to
//! `<cache dir>/batches/<job key>.json`, the job key being sha256 of the job's sorted request
//! hashes. A run killed while the job runs, or one that gave up at `llm.batch_timeout_seconds`
//! (its items fail as `batch_timeout`, transient), leaves that record; the next run asks for the
//! same requests (none of them got cached), finds the record and polls the recorded job instead
//! of submitting a new one. The record goes once the job's answers have been through the cache.
//! Without a cache (`llm.cache.mode = "off"`) nothing is recorded and a killed job is sent again.
//!
//! The same JSONL runs offline on vLLM: [`crate::Llm::batch_jsonl`] writes it without sending it, and
//! `python -m vllm.entrypoints.openai.run_batch -i in.jsonl -o out.jsonl --model M` answers it
//! with lines of the same output format.
//!
//! What this is not: a scheduler of its own (a job is one run's wait), nor a way to spread one
//! job over several endpoints, nor a client for embeddings batches.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use noisebench_web::{FetchError, HttpRequest, HttpResponse, Url};
use serde::{Deserialize, Serialize};

use crate::Answer;
use crate::error::LlmError;
use crate::openai::{self, OpenAiModel, Reply};
use crate::prompt::Message;
use crate::request::sha256_hex_bytes;
use crate::task::Task;
use crate::transport::{BatchReply, Request, Transport};

/// A job's input file stays under this (OpenAI takes up to 200 MB); a stage call with more
/// sends several jobs.
const MAX_JOB_BYTES: usize = 190 << 20;

/// The chat completions route every line names.
const CHAT_URL: &str = "/v1/chat/completions";

/// One line of a job's input file: OpenAI's batch request input object, which vLLM's
/// `run_batch` reads as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchLine {
    /// The request hash (the cache key): how an output line finds its request.
    pub custom_id: String,
    /// Always `POST`.
    pub method: String,
    /// Always `/v1/chat/completions`.
    pub url: String,
    /// The chat completion request body a live call would send.
    pub body: serde_json::Value,
}

impl BatchLine {
    /// The line of a prepared request: what a live call would send, under its request hash.
    pub(crate) fn of<T: Task>(model: &OpenAiModel, p: &crate::request::Prepared<T>) -> Self {
        BatchLine {
            custom_id: p.key.clone(),
            method: "POST".into(),
            url: CHAT_URL.into(),
            body: model.chat_request_body(&p.messages, &p.params, p.response_format.clone()),
        }
    }
}

/// What is kept on disk while a job runs, so that a killed run resumes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct JobRecord {
    batch_id: String,
    input_file_id: String,
    /// The endpoint's name in `llm.models.<m>.endpoints`.
    endpoint: String,
    model: String,
    requests: usize,
    submitted_at: String,
}

#[derive(Debug, Deserialize)]
struct BatchObject {
    id: String,
    status: String,
    #[serde(default)]
    output_file_id: Option<String>,
    #[serde(default)]
    error_file_id: Option<String>,
    #[serde(default)]
    errors: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct FileObject {
    id: String,
}

/// One line of an output or error file.
#[derive(Debug, Deserialize)]
struct OutputLine {
    custom_id: Option<String>,
    #[serde(default)]
    response: Option<OutputResponse>,
    #[serde(default)]
    error: Option<OutputError>,
}

#[derive(Debug, Deserialize)]
struct OutputResponse {
    status_code: u16,
    #[serde(default)]
    body: serde_json::Value,
}

#[derive(Debug, Deserialize)]
struct OutputError {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// What a job's files say about one request: the 200 response's body, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LineResult {
    Answered(serde_json::Value),
    Failed(String),
}

/// How one job ended for this run.
struct JobOutcome {
    /// By request hash; `Err` for every request when the job gave nothing back.
    lines: Result<HashMap<String, LineResult>, LlmError>,
    /// The job's id (for messages), when it got one.
    batch_id: String,
    /// `ended` status without answers for some requests (`failed`, `expired`...), for their
    /// errors.
    status: String,
    endpoint: String,
    waited: Duration,
    /// The record to remove once the answers are kept.
    record: Option<PathBuf>,
}

/// sha256 over the sorted request hashes of a job: the same requests, the same job, in any
/// order.
pub(crate) fn job_key<'a>(keys: impl IntoIterator<Item = &'a str>) -> String {
    let mut keys: Vec<&str> = keys.into_iter().collect();
    keys.sort_unstable();
    keys.dedup();
    let mut text = String::from("noisebench-batch-1\n");
    for k in keys {
        text.push_str(k);
        text.push('\n');
    }
    sha256_hex_bytes(text.as_bytes())
}

/// Split lines (their byte sizes, in order) into consecutive jobs of at most `max_requests`
/// lines and `max_bytes` bytes (a single larger line gets a job of its own).
pub(crate) fn chunk_ranges(
    sizes: &[usize],
    max_requests: usize,
    max_bytes: usize,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0usize);
    for (i, &n) in sizes.iter().enumerate() {
        let full = i - start >= max_requests.max(1) || (i > start && bytes + n > max_bytes);
        if full {
            out.push(start..i);
            start = i;
            bytes = 0;
        }
        bytes += n;
    }
    if start < sizes.len() {
        out.push(start..sizes.len());
    }
    out
}

/// Read an output file and an error file: each line's result by `custom_id`. A line that is not
/// JSON or has no `custom_id` cannot be matched to a request and is skipped (its request then
/// has no line, which fails it); counted in the second value.
pub(crate) fn parse_results(output: &str, errors: &str) -> (HashMap<String, LineResult>, usize) {
    let mut out = HashMap::new();
    let mut unreadable = 0;
    for line in output.lines().chain(errors.lines()) {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(l) = serde_json::from_str::<OutputLine>(line) else {
            unreadable += 1;
            continue;
        };
        let Some(id) = l.custom_id else {
            unreadable += 1;
            continue;
        };
        let result = match (l.response, l.error) {
            (Some(r), None) if r.status_code == 200 => LineResult::Answered(r.body),
            (Some(r), _) => LineResult::Failed(format!(
                "HTTP {}: {}",
                r.status_code,
                excerpt(&r.body.to_string(), 300)
            )),
            (None, Some(e)) => LineResult::Failed(format!(
                "{}: {}",
                e.code.as_deref().unwrap_or("error"),
                excerpt(e.message.as_deref().unwrap_or(""), 300)
            )),
            (None, None) => LineResult::Failed("a line with neither response nor error".into()),
        };
        // An answer wins over an error line for the same request (a provider that retried it).
        match out.get(&id) {
            Some(LineResult::Answered(_)) => {}
            _ => {
                out.insert(id, result);
            }
        }
    }
    (out, unreadable)
}

fn excerpt(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// A `multipart/form-data` body for `/v1/files`. Hand-written: two fields, and the HTTP client
/// the models use takes any body.
fn multipart(boundary: &str, filename: &str, file: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(file.len() + 512);
    let _ = write!(
        body,
        "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
         Content-Type: application/jsonl\r\n\r\n"
    );
    body.extend_from_slice(file);
    let _ = write!(body, "\r\n--{boundary}--\r\n");
    body
}

/// Write `value` to `path` atomically: temporary file, fsync, rename, fsync of the directory.
fn write_atomically(path: &Path, value: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("record path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(value)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

impl Transport {
    /// Answer the distinct requests of one stage call through Batch API jobs (one per model,
    /// split at `llm.batch_max_requests` and the file size limit); results by item index, the
    /// sharers of a request included, as the live path gives them.
    pub(crate) async fn remote_batch<T: Task>(
        self: Arc<Self>,
        requests: Vec<Request<T>>,
        bar: &dyn noisebench_core::ProgressBar,
    ) -> Vec<(usize, Result<Answer<T::Output>, LlmError>)> {
        let mut out = Vec::with_capacity(requests.len());
        let mut by_model: BTreeMap<String, (Arc<OpenAiModel>, Vec<Request<T>>)> = BTreeMap::new();
        for r in requests {
            match r.prepared.model.clone() {
                Some(m) => by_model
                    .entry(m.key.clone())
                    .or_insert_with(|| (m, Vec::new()))
                    .1
                    .push(r),
                // `answer_locally` answers every item without a model; none reaches here.
                None => {
                    let e = LlmError::Internal("batch request without a model".into());
                    for (j, _, _) in r.sharers {
                        out.push((j, Err(e.clone())));
                    }
                    out.push((r.sender, Err(e)));
                }
            }
        }
        for (_, (model, requests)) in by_model {
            out.extend(Arc::clone(&self).model_batch(model, requests, bar).await);
        }
        out
    }

    async fn model_batch<T: Task>(
        self: Arc<Self>,
        model: Arc<OpenAiModel>,
        requests: Vec<Request<T>>,
        bar: &dyn noisebench_core::ProgressBar,
    ) -> Vec<(usize, Result<Answer<T::Output>, LlmError>)> {
        let lines: Vec<(String, Vec<u8>)> = requests
            .iter()
            .map(|r| {
                let p = &r.prepared;
                let line = BatchLine::of(&model, p);
                let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
                bytes.push(b'\n');
                (p.key.clone(), bytes)
            })
            .collect();
        let sizes: Vec<usize> = lines.iter().map(|(_, b)| b.len()).collect();
        let ranges = chunk_ranges(&sizes, self.config.batch_max_requests, MAX_JOB_BYTES);
        let jobs = futures::future::join_all(
            ranges
                .iter()
                .map(|range| self.run_job(&model, &lines[range.clone()])),
        )
        .await;
        // Each request's first reply, from its job's files.
        let mut firsts: Vec<Option<BatchReply>> = Vec::with_capacity(requests.len());
        for (range, job) in ranges.iter().zip(&jobs) {
            for r in &requests[range.clone()] {
                firsts.push(Some(self.first_reply(
                    &r.prepared.key,
                    &r.prepared.messages,
                    job,
                )));
            }
        }
        // The batch's tokens are spent at the batch price, before any follow-up goes live.
        for first in firsts.iter().flatten() {
            if let Ok(reply) = &first.reply
                && let Some(price) = model.config.price
            {
                self.budget.add(
                    price.cost_cached(reply.tokens_in, reply.tokens_cached, reply.tokens_out)
                        * (1.0 - self.config.batch_discount),
                );
            }
        }
        let out = Arc::clone(&self)
            .dispatch::<T>(requests.into_iter().zip(firsts).collect(), bar)
            .await;
        // Every answer is in the cache now (or failed, to be asked again): the jobs that ended
        // are done with.
        for job in &jobs {
            if let Some(path) = &job.record
                && let Err(e) = std::fs::remove_file(path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(path = %path.display(), error = %e, "cannot remove a finished batch's record");
            }
        }
        out
    }

    /// One request's reply from its job: the answer line as a live reply would be, or its
    /// failure.
    fn first_reply(&self, key: &str, messages: &[Message], job: &JobOutcome) -> BatchReply {
        let failed = |detail: String| LlmError::BatchRequest {
            batch_id: job.batch_id.clone(),
            detail: self.redactor.text(&detail),
        };
        let reply = match &job.lines {
            Err(e) => Err(e.clone()),
            Ok(lines) => match lines.get(key) {
                Some(LineResult::Answered(body)) => {
                    let bytes = serde_json::to_vec(body).unwrap_or_default();
                    match openai::parse_chat_response(&bytes) {
                        Ok((value, usage)) => {
                            // Without `usage`, the estimate stands in for the prompt tokens
                            // (as live).
                            let usage = usage.unwrap_or_else(|| openai::TokenUsage {
                                input: openai::estimate_tokens(messages),
                                ..Default::default()
                            });
                            Ok(Reply {
                                value,
                                tokens_in: usage.input,
                                tokens_out: usage.output,
                                tokens_cached: usage.cached,
                                endpoint: job.endpoint.clone(),
                            })
                        }
                        Err(m) => Err(failed(format!("malformed response body: {m}"))),
                    }
                }
                Some(LineResult::Failed(why)) => Err(failed(format!("line failed: {why}"))),
                None => Err(failed(format!(
                    "no line for this request (batch status `{}`)",
                    job.status
                ))),
            },
        };
        match &reply {
            Ok(_) => self.bump_batch(|s| s.lines_answered += 1),
            Err(LlmError::BatchRequest { .. }) => self.bump_batch(|s| s.lines_failed += 1),
            Err(_) => {}
        }
        BatchReply {
            reply,
            endpoint: job.endpoint.clone(),
            waited: job.waited,
        }
    }

    /// Submit (or resume) one job and wait for it: its lines by request hash.
    async fn run_job(&self, model: &Arc<OpenAiModel>, lines: &[(String, Vec<u8>)]) -> JobOutcome {
        let started = Instant::now();
        let key = job_key(lines.iter().map(|(k, _)| k.as_str()));
        let record_path = self
            .local
            .cache()
            .map(|c| c.dir().join("batches").join(format!("{key}.json")));
        let mut outcome = JobOutcome {
            lines: Ok(HashMap::new()),
            batch_id: String::new(),
            status: String::new(),
            endpoint: String::new(),
            waited: Duration::ZERO,
            record: None,
        };
        let fail = |outcome: &mut JobOutcome, e: LlmError| {
            outcome.lines = Err(e);
            outcome.waited = started.elapsed();
        };
        // A recorded job for exactly these requests: poll it.
        let recorded: Option<JobRecord> = record_path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice(&b).ok());
        let mut resumed = None;
        if let Some(rec) = recorded {
            match model.endpoint_base(Some(&rec.endpoint)) {
                Some((name, base)) => {
                    tracing::info!(batch = %rec.batch_id, requests = rec.requests, "resuming a recorded batch");
                    resumed = Some((rec.batch_id, name.to_string(), base.to_string()));
                }
                None => {
                    tracing::warn!(batch = %rec.batch_id, endpoint = %rec.endpoint, "a recorded batch names an endpoint no longer configured: submitting anew");
                }
            }
        }
        let object = loop {
            let (batch_id, name, base, was_resumed) = match resumed.take() {
                Some((id, name, base)) => (id, name, base, true),
                None => match self
                    .submit_new(model, &key, lines, record_path.as_deref())
                    .await
                {
                    Ok((id, name, base)) => (id, name, base, false),
                    Err((endpoint, e)) => {
                        if let Some(name) = endpoint {
                            outcome.endpoint = format!("batch:{name}");
                        }
                        fail(&mut outcome, e);
                        return outcome;
                    }
                },
            };
            outcome.batch_id = batch_id.clone();
            outcome.endpoint = format!("batch:{name}");
            outcome.record = record_path.clone();
            if was_resumed {
                self.bump_batch(|s| s.jobs_resumed += 1);
            }
            match self.wait(model, &name, &base, &batch_id, started).await {
                Ok(Some(object)) => break (object, name, base),
                // The recorded job is unknown to the server (deleted, another account): send
                // the requests again.
                Ok(None) if was_resumed => {
                    tracing::warn!(batch = %batch_id, "the recorded batch is unknown to the server: submitting anew");
                    if let Some(p) = &record_path {
                        let _ = std::fs::remove_file(p);
                    }
                    outcome.record = None;
                    continue;
                }
                Ok(None) => {
                    let e = LlmError::BatchRequest {
                        batch_id: batch_id.clone(),
                        detail: "the server does not know the batch it created".into(),
                    };
                    fail(&mut outcome, e);
                    return outcome;
                }
                Err(e) => {
                    if matches!(e, LlmError::BatchTimeout { .. }) {
                        self.bump_batch(|s| s.jobs_timed_out += 1);
                    }
                    // The record stays: the next run polls this job again.
                    outcome.record = None;
                    fail(&mut outcome, e);
                    return outcome;
                }
            }
        };
        let (object, name, base) = object;
        outcome.status = object.status.clone();
        if object.status != "completed" {
            self.bump_batch(|s| s.jobs_ended_unfinished += 1);
            tracing::warn!(batch = %object.id, status = %object.status, errors = ?object.errors, "batch ended unfinished: its unanswered requests fail (transient)");
        }
        let mut texts = [String::new(), String::new()];
        for (text, file) in texts
            .iter_mut()
            .zip([&object.output_file_id, &object.error_file_id])
        {
            let Some(file) = file else { continue };
            match self
                .get(model, &name, &base, &format!("files/{file}/content"))
                .await
            {
                Ok(r) => *text = String::from_utf8_lossy(&r.body).into_owned(),
                Err(e) => {
                    // The record stays: the job's files can be read by the next run.
                    outcome.record = None;
                    fail(&mut outcome, e);
                    return outcome;
                }
            }
        }
        let (results, unreadable) = parse_results(&texts[0], &texts[1]);
        if unreadable > 0 {
            tracing::warn!(batch = %object.id, unreadable, "batch result lines without a readable custom_id: their requests fail");
        }
        outcome.lines = Ok(results);
        outcome.waited = started.elapsed();
        tracing::info!(batch = %object.id, status = %object.status, requests = lines.len(), secs = outcome.waited.as_secs_f64(), "batch done");
        outcome
    }

    /// Submit the requests as a new job on the model's first endpoint and record its id (when
    /// there is a cache to record it in): the batch id, endpoint name and base URL; or the
    /// endpoint tried, if any, and why it failed.
    async fn submit_new(
        &self,
        model: &Arc<OpenAiModel>,
        key: &str,
        lines: &[(String, Vec<u8>)],
        record_path: Option<&Path>,
    ) -> Result<(String, String, String), (Option<String>, LlmError)> {
        self.budget.check().map_err(|e| (None, e))?;
        let Some((name, base)) = model.endpoint_base(None) else {
            return Err((None, LlmError::Internal("model has no endpoint".into())));
        };
        let (name, base) = (name.to_string(), base.to_string());
        let (id, input_file_id) = self
            .submit(model, &name, &base, key, lines)
            .await
            .map_err(|e| (Some(name.clone()), e))?;
        if let Some(path) = record_path {
            let rec = JobRecord {
                batch_id: id.clone(),
                input_file_id,
                endpoint: name.clone(),
                model: model.model_id.clone(),
                requests: lines.len(),
                submitted_at: chrono::Utc::now().to_rfc3339(),
            };
            let bytes = serde_json::to_vec_pretty(&rec).unwrap_or_default();
            if let Err(e) = write_atomically(path, &bytes) {
                // The job runs anyway; only a resume would send it again.
                tracing::warn!(path = %path.display(), error = %e, "cannot record the batch id");
            }
        }
        let lines_n = lines.len() as u64;
        self.bump_batch(|s| {
            s.jobs_submitted += 1;
            s.lines_sent += lines_n;
        });
        Ok((id, name, base))
    }

    /// Upload the input file and create the batch: the batch's id and the input file's.
    async fn submit(
        &self,
        model: &OpenAiModel,
        name: &str,
        base: &str,
        key: &str,
        lines: &[(String, Vec<u8>)],
    ) -> Result<(String, String), LlmError> {
        let file: Vec<u8> = lines.iter().flat_map(|(_, b)| b.iter().copied()).collect();
        let boundary = format!("noisebench-batch-{}", &key[..32]);
        let body = multipart(
            &boundary,
            &format!("noisebench-{}.jsonl", &key[..16]),
            &file,
        );
        let request = HttpRequest::post(self.batch_url(name, base, "files")?)
            .bytes(&format!("multipart/form-data; boundary={boundary}"), body);
        let r = self.send(model, name, request).await?;
        let file: FileObject = self.json_of(name, &r)?;
        let request =
            HttpRequest::post(self.batch_url(name, base, "batches")?).json(&serde_json::json!({
                "input_file_id": &file.id,
                "endpoint": CHAT_URL,
                "completion_window": "24h",
                "metadata": {"noisebench_job": &key[..16]},
            }));
        let r = self.send(model, name, request).await?;
        let batch: BatchObject = self.json_of(name, &r)?;
        tracing::info!(batch = %batch.id, requests = lines.len(), endpoint = %name, "batch submitted");
        Ok((batch.id, file.id))
    }

    /// Poll until the job ends: its final object, `None` if the server does not know it, or
    /// [`LlmError::BatchTimeout`] once `llm.batch_timeout_seconds` have passed since `started`.
    async fn wait(
        &self,
        model: &OpenAiModel,
        name: &str,
        base: &str,
        batch_id: &str,
        started: Instant,
    ) -> Result<Option<BatchObject>, LlmError> {
        let poll = Duration::from_secs_f64(self.config.batch_poll_seconds);
        let timeout = Duration::from_secs_f64(self.config.batch_timeout_seconds);
        loop {
            let url = self.batch_url(name, base, &format!("batches/{batch_id}"))?;
            let r = self.send_raw(model, name, HttpRequest::get(url)).await?;
            if r.status == 404 {
                return Ok(None);
            }
            let r = self.check_status(name, r)?;
            let object: BatchObject = self.json_of(name, &r)?;
            if matches!(
                object.status.as_str(),
                "completed" | "failed" | "expired" | "cancelled"
            ) {
                return Ok(Some(object));
            }
            let waited = started.elapsed();
            if waited >= timeout {
                return Err(LlmError::BatchTimeout {
                    batch_id: batch_id.to_string(),
                    waited_secs: waited.as_secs_f64(),
                });
            }
            tracing::debug!(batch = %batch_id, status = %object.status, "batch not done yet");
            tokio::time::sleep(poll.min(timeout - waited)).await;
        }
    }

    fn batch_url(&self, name: &str, base: &str, path: &str) -> Result<Url, LlmError> {
        Url::parse(&format!("{base}/{path}")).map_err(|e| {
            LlmError::Internal(format!("endpoint `{name}`: not a URL with `{path}`: {e}"))
        })
    }

    async fn get(
        &self,
        model: &OpenAiModel,
        name: &str,
        base: &str,
        path: &str,
    ) -> Result<HttpResponse, LlmError> {
        let url = self.batch_url(name, base, path)?;
        self.send(model, name, HttpRequest::get(url)).await
    }

    /// Send with the model's key and retries; a non-2xx answer is an error.
    async fn send(
        &self,
        model: &OpenAiModel,
        name: &str,
        request: HttpRequest,
    ) -> Result<HttpResponse, LlmError> {
        let r = self.send_raw(model, name, request).await?;
        self.check_status(name, r)
    }

    async fn send_raw(
        &self,
        model: &OpenAiModel,
        name: &str,
        mut request: HttpRequest,
    ) -> Result<HttpResponse, LlmError> {
        if let Some(k) = model.api_key() {
            request = request.bearer_auth(k);
        }
        model.http().send(&request).await.map_err(|e| {
            let kind = match e {
                FetchError::Timeout(_) => "timeout",
                FetchError::Connect(_) | FetchError::Dns(_) => "connection error",
                _ => "transport error",
            };
            LlmError::RetriesExhausted {
                attempts: model.config.max_retries + 1,
                last: self.redactor.text(&format!("{kind} at `{name}`: {e}")),
            }
        })
    }

    fn check_status(&self, name: &str, r: HttpResponse) -> Result<HttpResponse, LlmError> {
        if r.is_success() {
            return Ok(r);
        }
        let detail = self.redactor.text(&r.excerpt(300));
        if noisebench_web::RetryPolicy::retries_status(r.status) {
            // `send` retried it already.
            return Err(LlmError::RetriesExhausted {
                attempts: r.attempts,
                last: format!("HTTP {} from `{name}`: {detail}", r.status),
            });
        }
        Err(LlmError::Http {
            endpoint: name.to_string(),
            status: r.status,
            detail,
        })
    }

    fn json_of<D: serde::de::DeserializeOwned>(
        &self,
        name: &str,
        r: &HttpResponse,
    ) -> Result<D, LlmError> {
        serde_json::from_slice(&r.body).map_err(|e| LlmError::RetriesExhausted {
            attempts: r.attempts,
            last: self
                .redactor
                .text(&format!("malformed Batch API answer from `{name}`: {e}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_key_is_the_set_of_requests() {
        let (a, b, c) = ("a".repeat(64), "b".repeat(64), "c".repeat(64));
        let k = job_key([a.as_str(), b.as_str(), c.as_str()]);
        assert_eq!(k, job_key([c.as_str(), a.as_str(), b.as_str()]));
        assert_eq!(k, job_key([c.as_str(), a.as_str(), b.as_str(), a.as_str()]));
        assert_ne!(k, job_key([a.as_str(), b.as_str()]));
        assert_eq!(k.len(), 64);
    }

    #[test]
    fn chunks_keep_every_line_in_order_within_the_limits() {
        // A small deterministic sweep over sizes and limits (the property, exhaustively small).
        let mut seed = 7u64;
        for case in 0..300 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = (seed >> 33) as usize % 40;
            let sizes: Vec<usize> = (0..n)
                .map(|i| 1 + ((seed >> (i % 30)) as usize % 50))
                .collect();
            let max_requests = 1 + case % 7;
            let max_bytes = 20 + case % 90;
            let ranges = chunk_ranges(&sizes, max_requests, max_bytes);
            let flat: Vec<usize> = ranges.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(
                flat,
                (0..n).collect::<Vec<_>>(),
                "every line once, in order"
            );
            for r in &ranges {
                assert!(!r.is_empty());
                assert!(r.len() <= max_requests);
                let bytes: usize = sizes[r.clone()].iter().sum();
                assert!(bytes <= max_bytes || r.len() == 1, "{bytes} > {max_bytes}");
            }
        }
        assert!(chunk_ranges(&[], 5, 10).is_empty());
        assert_eq!(chunk_ranges(&[1, 1, 1], 2, 100), vec![0..2, 2..3]);
        assert_eq!(chunk_ranges(&[60, 60, 10], 9, 100), vec![0..1, 1..3]);
    }

    #[test]
    fn results_are_read_from_both_files() {
        let output = r#"{"id": "r1", "custom_id": "k1", "response": {"status_code": 200, "request_id": "x", "body": {"choices": []}}, "error": null}
{"id": "r2", "custom_id": "k2", "response": {"status_code": 429, "body": {"error": "slow down"}}, "error": null}
not json
{"id": "r9", "response": null, "error": null}
"#;
        let errors = r#"{"id": "r3", "custom_id": "k3", "response": null, "error": {"code": "server_error", "message": "boom"}}
{"id": "r4", "custom_id": "k1", "response": null, "error": {"code": "server_error", "message": "dup"}}
"#;
        let (r, unreadable) = parse_results(output, errors);
        assert_eq!(unreadable, 2);
        assert_eq!(
            r["k1"],
            LineResult::Answered(serde_json::json!({"choices": []}))
        );
        assert!(matches!(&r["k2"], LineResult::Failed(m) if m.starts_with("HTTP 429")));
        assert_eq!(r["k3"], LineResult::Failed("server_error: boom".into()));
    }

    #[test]
    fn multipart_names_both_fields() {
        let body = String::from_utf8(multipart("BND", "x.jsonl", b"{\"a\":1}\n")).unwrap();
        assert!(body.starts_with("--BND\r\nContent-Disposition: form-data; name=\"purpose\""));
        assert!(body.contains("\r\n\r\nbatch\r\n--BND\r\n"));
        assert!(body.contains("name=\"file\"; filename=\"x.jsonl\""));
        assert!(body.ends_with("{\"a\":1}\n\r\n--BND--\r\n"));
    }

    #[test]
    fn records_are_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("batches").join("k.json");
        write_atomically(&path, b"{\"batch_id\": \"b\"}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"batch_id\": \"b\"}");
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 1, "no temporary file left: {left:?}");
    }
}
