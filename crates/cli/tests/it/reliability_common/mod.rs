//! Shared by the reliability tests (kills, faults, two runs, full disk): an answer for every LLM
//! task the demo asks, read from the request's task and structured input (`send_task`), never
//! from the prompt's wording (both tracks: the report track's triplets come from the offline
//! rule over the input's chunks, so the graph, questions and perturbations get real work; a task
//! without a rule here gets its offline rule's answer), a
//! checkout of the demo pointed at a fake endpoint, the hashes of a published version, and a
//! run of the binary. The shard tests use it too.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use noisebench_llm::TaskInfo;
use serde_json::{Value, json};

/// Run the `noisebench` binary under `root` with `args` and extra environment `env`, asserting
/// it succeeds; its stdout and stderr.
pub fn noisebench(root: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .arg("--skip-preflight")
        .arg("--root")
        .arg(root)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "noisebench {args:?} failed:\n{text}");
    text
}

/// What identifies a request: its task and messages (the cache key's varying part).
pub fn request_key(body: &Value) -> String {
    json!([task_of(body), body["messages"]]).to_string()
}

pub fn hash_of(key: &str) -> u64 {
    let mut h = DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

/// The task a request is for: its `noisebench_task` field (the model's `send_task`).
pub fn task_of(body: &Value) -> &str {
    body["noisebench_task"]["name"].as_str().unwrap_or("")
}

/// The request's structured input: the task's `Input` as JSON, as the stage passed it.
pub fn input_of(body: &Value) -> &Value {
    &body["noisebench_task"]["input"]
}

/// Every task the demo pipeline's stages declare, and the quality card's, by name: the demo loaded once, offline, from
/// a checkout of its own (the stages declare their tasks when their configurations are checked).
pub fn demo_tasks() -> &'static BTreeMap<&'static str, TaskInfo> {
    static TASKS: OnceLock<BTreeMap<&'static str, TaskInfo>> = OnceLock::new();
    TASKS.get_or_init(|| {
        let dir = noisebench_testkit::checkout();
        let ws = noisebench_cli::Workspace::at(dir.path(), Arc::new(noisebench_core::NoProgress));
        let loaded = ws.load("demo").expect("the demo pipeline loads offline");
        loaded
            .layers
            .llm
            .declared_tasks()
            .into_iter()
            // The quality card's closed-book check, declared when a model is configured.
            .chain(noisebench_eval::closed_book::TASKS)
            .map(|t| (t.name, t))
            .collect()
    })
}

/// The task's offline rule over the request's input: how a fake endpoint answers every task it
/// has no rule of its own for (any task a stage of the demo declares, a new one included).
pub fn offline_answer(body: &Value) -> Value {
    let task = task_of(body);
    let info = demo_tasks().get(task).unwrap_or_else(|| {
        panic!(
            "a request for task `{task}`, which no stage of the demo declares (is `send_task` on?)"
        )
    });
    info.offline(input_of(body))
        .unwrap_or_else(|e| panic!("task `{task}`: {e}"))
}

/// A valid answer for each task the demo uses, a function of the request only (so a resumed or
/// repaired build gets the same answers as an uninterrupted one): varied by the request where
/// the tests want varied labels, declining multi-hop questions, and the task's offline rule over
/// the request's structured input for every other task.
pub fn answer(body: &Value) -> String {
    let task = task_of(body);
    let h = hash_of(&request_key(body)) >> 8;
    let verdict = ["true", "false", "undecided"][(h % 3) as usize];
    let stance = ["support", "reject", "not enough evidence"][(h % 3) as usize];
    let input = input_of(body);
    let text = |field: &str| input[field].as_str().unwrap_or("").trim();
    match task {
        "keywords" => json!({"keywords": keywords(text("claim"))}),
        "claim_to_question" => json!({"question": format!("Is it true that {}?", text("claim"))}),
        "exam_verdict" => json!({"verdict": verdict}),
        "stance_url" | "stance_text" => json!({"stance": stance}),
        "stance_reasoned" => json!({"reasoning": "The page says so.", "stance": stance}),
        "credibility" => json!({"credibility": "medium", "source_type": "other"}),
        "triplets" => json!({"triplets": triplets(input)}),
        "qa_single" => qa_single(&input["triplet"]),
        // Multi-hop questions declined: a counted drop, the same in every run.
        "qa_multi" => json!({"question": "", "answer": ""}),
        "qa_judge" => json!({"clarity": 4, "correctness": 4, "reasonableness": 4}),
        "query_grammar" => {
            let q = text("query").trim_end_matches('?');
            json!({"rewrites": [format!("{q}, is that so?")]})
        }
        "query_irrelevant" => {
            json!({"rewrites": [format!("On a rainy Tuesday, {}", text("query"))]})
        }
        "back_translate" => {
            let passage = match text("text") {
                "" => "The report says so.",
                t => t,
            };
            json!({"pivot": "Le rapport le dit.", "text": passage})
        }
        _ => offline_answer(body),
    }
    .to_string()
}

/// Up to three longer words of the claim: keywords a model would pick, on the claim's topic.
fn keywords(claim: &str) -> Vec<String> {
    let words: Vec<String> = claim
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 5)
        .take(3)
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        vec![claim.to_string()]
    } else {
        words
    }
}

/// The offline rule's triplets over the input's chunks, at most the target's number; none on a
/// gleaning pass (the input lists what was found already).
fn triplets(input: &Value) -> Vec<Value> {
    if input["found"].as_array().is_some_and(|f| !f.is_empty()) {
        return vec![];
    }
    let target = input["target"].as_u64().unwrap_or(5).max(1) as usize;
    let mut out = Vec::new();
    for chunk in input["chunks"].as_array().into_iter().flatten() {
        let id = chunk["chunk_id"].as_str().unwrap_or("");
        let text = chunk["text"].as_str().unwrap_or("");
        for t in noisebench_kg::rule_triplets(id.trim(), text.trim()) {
            out.push(serde_json::to_value(t).unwrap());
        }
    }
    out.truncate(target);
    out
}

/// A question whose answer is the fact's second entity.
fn qa_single(triplet: &Value) -> Value {
    let part = |f: &str| triplet[f].as_str().unwrap_or("");
    let (e1, rel, e2) = (part("entity_1"), part("relation"), part("entity_2"));
    if e1.is_empty() || e2.is_empty() {
        return json!({"question": "", "answer": ""});
    }
    json!({"question": format!("What did {e1} say it {rel}?"), "answer": e2})
}

/// A checkout with the demo pipeline pointed at `url`; `model` is extra lines for the model's
/// table (`timeout_secs = 2`; `max_concurrency` replaces [`CONCURRENCY`]), empty for the
/// defaults.
pub fn checkout(url: &str, model: &str) -> tempfile::TempDir {
    let dir = noisebench_testkit::checkout();
    point_at(dir.path(), url, model);
    dir
}

/// Replace the demo's offline `[llm]` table in `root` with the fake endpoint at `url`.
pub fn point_at(root: &Path, url: &str, model: &str) {
    let concurrency = if model.contains("max_concurrency") {
        String::new()
    } else {
        format!("max_concurrency = {CONCURRENCY}")
    };
    let mut pointed = demo_at_endpoint(
        root,
        url,
        "cache = { dir = \"work/cache\" }",
        &format!("{concurrency}\n{model}"),
    );
    // The fake declines multi-hop questions (a counted drop): most of what `questions` reads,
    // more than its gate allows by default.
    pointed.push_str("\n[stages.questions.gate]\nmax_drop_share = 0.9\n");
    let path = root.join("pipelines/demo.toml");
    std::fs::write(path, pointed).unwrap();
}

/// The configured concurrency of the fake model.
pub const CONCURRENCY: usize = 4;

/// sha256 of every file of a published version, by path inside it. What legitimately differs
/// between two builds of the same inputs is masked first: the creation time, and the counters of
/// how the run went (calls, cache hits, tokens: a resumed build answers from its cache). In the
/// manifest these are `created_at`, `provenance.llm.run` and the hashes of the card and the
/// Croissant file (compared themselves, masked).
pub fn version_files(version_dir: &Path) -> BTreeMap<String, String> {
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(version_dir.join("manifest.json")).unwrap()).unwrap();
    let created = manifest["created_at"].as_str().unwrap_or("").to_string();
    let mut out = BTreeMap::new();
    let mut stack = vec![version_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path
                .strip_prefix(version_dir)
                .unwrap()
                .display()
                .to_string();
            let mut bytes = std::fs::read(&path).unwrap();
            if name == "README.md" || name == "croissant.json" {
                let text = String::from_utf8(bytes)
                    .unwrap()
                    .replace(&created, "<created_at>");
                let masked: Vec<String> = text
                    .lines()
                    .map(|l| match l.find("Calls over the stages' last runs:") {
                        Some(at) => format!("{}<run counters>", &l[..at]),
                        None => l.to_string(),
                    })
                    .collect();
                bytes = masked.join("\n").into_bytes();
            } else if name == "manifest.json" {
                let m = manifest.as_object_mut().unwrap();
                m.remove("created_at");
                m.remove("metadata");
                if let Some(llm) = m
                    .get_mut("provenance")
                    .and_then(|p| p.get_mut("llm"))
                    .and_then(|l| l.as_object_mut())
                {
                    llm.remove("run");
                }
                bytes = serde_json::to_vec_pretty(&manifest).unwrap();
            }
            out.insert(name, noisebench_core::sha256_hex(&bytes));
        }
    }
    out
}

/// The only version of `snapshots/demo` under `root`, checking there is exactly one.
pub fn only_version(root: &Path) -> std::path::PathBuf {
    let dataset = root.join("snapshots/demo");
    let versions: Vec<String> = std::fs::read_dir(&dataset)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".report.html") && !name.starts_with('.'))
        .collect();
    assert_eq!(versions, ["1.0.0"], "{}", dataset.display());
    dataset.join("1.0.0")
}

/// A deterministic generator for seeded choices (splitmix64).
pub struct Seeded(pub u64);

impl Seeded {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A count from the environment (`NOISEBENCH_KILLS=20`), else `default`.
pub fn count_from_env(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The text of the demo pipeline in `root` with its offline `[llm]` table replaced by an OpenAI
/// backend whose one model (`fake`, schema-constrained, sending its task's name) is served at
/// `url`; `llm` is more lines of the `[llm]` table (its cache), `model` of the model's.
pub fn demo_at_endpoint(root: &Path, url: &str, llm: &str, model: &str) -> String {
    let demo = std::fs::read_to_string(root.join("pipelines/demo.toml")).unwrap();
    let table = format!(
        r#"[llm]
backend = "openai"
model = "fake"
embeddings = {{ backend = "hashed" }}
{llm}
[llm.models.fake]
name = "fake-model"
endpoints = [{{ name = "local", url = "{url}" }}]
json_schema = true
send_task = true
{model}
"#
    );
    let pointed = demo.replacen("[llm]\nbackend = \"offline\"\n", &table, 1);
    assert_ne!(pointed, demo, "the demo's [llm] table has moved");
    pointed
}
