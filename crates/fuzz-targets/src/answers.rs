//! The `llm_answer` target: a model's reply through `noisebench_llm::parse::parse_answer` for
//! every task of every stage crate and of the evaluation (its JSON shape and its own `check`).
//!
//! The tasks are the lists the crates already keep (each stage's `TASKS`, what its `StageTasks`
//! declares and fingerprints; the evaluation's `tasks()`), read through `TaskInfo`'s type-erased functions, so a
//! task added to its stage's list is fuzzed with no change here: its seed is its own
//! `Task::example` and the offline rule's answer to it.
//!
//! Input layout: the first byte picks the task (modulo the number of tasks); the rest is the
//! reply. When the rest holds a NUL byte, what comes before it is the task's input as JSON (used
//! when it is one of the task's inputs, else the task's example) and what follows is the reply.

use std::sync::OnceLock;

use noisebench_llm::TaskInfo;
use noisebench_llm::parse::{Parsed, first_object, remove_trailing_commas};

/// One task: its name (`<crate>::<task>`) and its declaration.
#[derive(Debug, Clone, Copy)]
pub struct TaskEntry {
    pub name: &'static str,
    pub task: TaskInfo,
}

/// Each crate's task lists, by crate. A stage crate's list is its stage's `TASKS`, the list its
/// `StageTasks` declares (a new stage with a list of its own adds it here; the cli's architecture
/// test holds these lists to the tasks `registry()` reports, as the whole of them).
fn lists() -> Vec<(&'static str, Vec<TaskInfo>)> {
    vec![
        ("label", noisebench_label::TASKS.to_vec()),
        ("kg", noisebench_kg::TASKS.to_vec()),
        ("search", noisebench_search::TASKS.to_vec()),
        ("qa", noisebench_qa::GENERATION_TASKS.to_vec()),
        ("qa", noisebench_qa::JUDGE_TASKS.to_vec()),
        ("perturb", noisebench_perturb::QUERY_TASKS.to_vec()),
        ("perturb", noisebench_perturb::DOCUMENT_TASKS.to_vec()),
        ("eval", noisebench_eval::tasks()),
    ]
}

/// Every task of every stage crate and of the evaluation, in list order (a task two crates
/// declare, `exam_verdict`, once per crate). The seed corpus holds one file per task.
pub fn tasks() -> &'static [TaskEntry] {
    static TASKS: OnceLock<Vec<TaskEntry>> = OnceLock::new();
    TASKS.get_or_init(|| {
        lists()
            .into_iter()
            .flat_map(|(krate, list)| {
                list.into_iter().map(move |task| TaskEntry {
                    name: Box::leak(format!("{krate}::{}", task.name).into_boxed_str()),
                    task,
                })
            })
            .collect()
    })
}

/// The llm_answer target.
pub fn llm_answer(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (input, reply) = match rest.iter().position(|&b| b == 0) {
        Some(n) => (Some(&rest[..n]), &rest[n + 1..]),
        None => (None, rest),
    };
    let reply = String::from_utf8_lossy(reply);
    check_repair(&reply);
    let all = tasks();
    run(&all[pick as usize % all.len()], input, &reply);
}

/// The repair step's own invariants: the object found is a balanced `{...}` slice of the reply,
/// and dropping trailing commas never adds anything.
fn check_repair(reply: &str) {
    if let Some(object) = first_object(reply) {
        assert!(object.starts_with('{') && object.ends_with('}'), "{object}");
        let repaired = remove_trailing_commas(object);
        assert!(repaired.len() <= object.len());
        if !object.contains(',') {
            assert_eq!(repaired, object);
        }
    }
}

/// The task's example input as JSON; a task without one fails here (and in the replay test).
pub fn example(entry: &TaskEntry) -> serde_json::Value {
    entry
        .task
        .example()
        .unwrap_or_else(|| panic!("{}: the task has no example", entry.name))
}

/// Parse `reply` as the task's answer to `input` (its example unless `input` is one of its
/// inputs as JSON). Anything accepted, written back as JSON, is accepted again, strictly and
/// equal to itself.
fn run(entry: &TaskEntry, input: Option<&[u8]>, reply: &str) {
    let task = entry.task;
    let given = input.and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok());
    let input = match given {
        Some(v) if task.reads(&v) => v,
        _ => example(entry),
    };
    if let Ok((written, _)) = task.parse(&input, reply) {
        match task.parse(&input, &written) {
            Ok((again, how)) => {
                assert_eq!(how, Parsed::Strict, "{written}");
                assert_eq!(again, written);
            }
            Err(e) => panic!(
                "{}: an accepted answer, written back, is refused: {e}\n{written}",
                entry.name
            ),
        }
    }
}

/// Whether the task accepts `reply` to `input` (JSON).
pub fn accepts(entry: &TaskEntry, input: &serde_json::Value, reply: &str) -> bool {
    entry.task.parse(input, reply).is_ok()
}

/// The task's seed without its pick byte: its example (JSON), NUL, the offline rule's answer.
pub fn seed(entry: &TaskEntry) -> Vec<u8> {
    let input = example(entry);
    let answer = entry
        .task
        .offline(&input)
        .unwrap_or_else(|e| panic!("{}: its example is not an input: {e}", entry.name));
    let mut out = serde_json::to_vec(&input).expect("an input serialises");
    out.push(0);
    out.extend(serde_json::to_vec_pretty(&answer).expect("an answer serialises"));
    out
}

/// A seed for every task: its file name (`seed-<crate>-<task>`) and bytes (the task's pick byte,
/// then [`seed`]).
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    tasks()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut bytes = vec![i as u8];
            bytes.extend(seed(t));
            (format!("seed-{}", t.name.replace("::", "-")), bytes)
        })
        .collect()
}
