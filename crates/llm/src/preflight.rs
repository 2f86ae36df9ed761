//! The preflight: before a build spends on a model, each declared task asks it the task's own
//! small examples ([`crate::Task::examples`]) through the ordinary path (prompt, schema, parse,
//! checks, sense checks, cache), and reports per task whether the model answers in the task's
//! JSON, whether an answer repeats the prompt's examples or is about something else, and
//! whether it gives one answer for inputs that call for different ones. A model that fails a
//! task stops the build (`noisebench check PIPELINE --llm` runs the same without building),
//! with what to try.
//!
//! It runs on a handle of its own built from the same `[llm]` table with the cache off, so its
//! calls join neither a stage's call log nor the run's counters of constant answers, and each
//! preflight judges the model as it answers now (a few requests per task).

use std::collections::BTreeMap;

use crate::Llm;
use crate::config::CacheMode;
use crate::error::LlmError;
use crate::task::Task;

/// One task's probe of its model.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskProbe {
    pub task: &'static str,
    /// `openai:<model id>`, or `offline` (not probed).
    pub model: String,
    /// How many examples were asked.
    pub asked: usize,
    /// What is wrong, one line each; empty: the model passed.
    pub problems: Vec<String>,
    /// Examples that could not be asked: the server failed for a transient cause (timeout,
    /// 429, 5xx) on every try. Not held against the model: the build goes on, and its stages
    /// retry such items themselves.
    pub unchecked: Vec<String>,
}

/// What the preflight found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreflightReport {
    pub probes: Vec<TaskProbe>,
    /// Per model key, what its server says worth knowing (context size, chat template).
    pub notes: BTreeMap<String, Vec<String>>,
    /// Why nothing was asked, when nothing was (offline backend, cache-only mode).
    pub skipped: Option<String>,
}

impl PreflightReport {
    /// Whether some task's model failed.
    pub fn failed(&self) -> bool {
        self.probes.iter().any(|p| !p.problems.is_empty())
    }

    /// What to try when [`PreflightReport::failed`].
    pub(crate) fn advice(&self) -> &'static str {
        "what to try: another model for the failing tasks (llm.model, or llm.task_models.<task>); \
         `json_schema = true` in llm.models.<model> when the server takes response_format \
         json_schema (llama.cpp and vLLM do), which holds the answer to the task's schema; the \
         server's chat template (llama.cpp: --jinja, --chat-template); a larger context \
         (context_tokens) when requests are refused as too long; docs/llm-weak-models.md"
    }
}

impl std::fmt::Display for PreflightReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(why) = &self.skipped {
            return writeln!(f, "LLM preflight skipped: {why}");
        }
        writeln!(f, "LLM preflight ({} tasks):", self.probes.len())?;
        for (model, notes) in &self.notes {
            for n in notes {
                writeln!(f, "  model {model}: {n}")?;
            }
        }
        for p in &self.probes {
            if p.asked == 0 {
                writeln!(f, "  -       {} ({}): no examples to ask", p.task, p.model)?;
            } else if p.problems.is_empty() && p.unchecked.is_empty() {
                writeln!(f, "  ok      {} ({}, {} inputs)", p.task, p.model, p.asked)?;
            } else if p.problems.is_empty() {
                writeln!(
                    f,
                    "  ?       {} ({}): could not check (a transient failure, not the model's):",
                    p.task, p.model
                )?;
                for u in &p.unchecked {
                    writeln!(f, "          {u}")?;
                }
            } else {
                writeln!(f, "  FAILED  {} ({}):", p.task, p.model)?;
                for problem in &p.problems {
                    writeln!(f, "          {problem}")?;
                }
            }
        }
        if self.failed() {
            writeln!(f, "{}", self.advice())?;
        }
        Ok(())
    }
}

impl Llm {
    /// Ask each task's model the task's examples and report ([`PreflightReport`]). Offline, or
    /// with the cache in `cache-only` mode (which must not call a model), nothing is asked.
    pub fn preflight(&self, tasks: &[TaskInfo]) -> Result<PreflightReport, LlmError> {
        let Some(models) = self.inner.prepare.models() else {
            return Ok(PreflightReport {
                skipped: Some("the offline backend calls no model".into()),
                ..PreflightReport::default()
            });
        };
        if self.config().cache.mode == CacheMode::CacheOnly {
            return Ok(PreflightReport {
                skipped: Some("llm.cache.mode = \"cache-only\" calls no model".into()),
                ..PreflightReport::default()
            });
        }
        // No cache: a model's answers are judged afresh each time (a server restarted with
        // another chat template answers otherwise under the same model name).
        let mut config = self.config().clone();
        config.cache.mode = CacheMode::Off;
        let own = Llm::new(config, &self.inner.root)?;
        let mut report = PreflightReport::default();
        let mut tasks = tasks.to_vec();
        tasks.sort();
        tasks.dedup();
        let used: std::collections::BTreeSet<String> = tasks
            .iter()
            .filter_map(|t| own.inner.prepare.model_for(t.name).map(|m| m.key.clone()))
            .collect();
        for key in used {
            let Some(m) = models.get(&key) else { continue };
            let info = m.server();
            let mut notes = Vec::new();
            match m.context_tokens() {
                Some(c) => notes.push(format!(
                    "context {c} tokens ({})",
                    if m.config.context_tokens.is_some() {
                        "context_tokens"
                    } else {
                        "as the server says"
                    }
                )),
                None => notes.push(
                    "context size unknown (set context_tokens, or a server that says it): prompts are not cut to fit".into(),
                ),
            }
            notes.extend(info.template_note());
            report.notes.insert(key, notes);
        }
        for t in &tasks {
            report.probes.push((t.probe)(&own));
        }
        Ok(report)
    }
}

/// How many times the preflight asks an example the server failed for a transient cause
/// (after the layer's own retries of each request).
const PREFLIGHT_TRIES: usize = 3;

/// Ask `T`'s examples of `llm` ([`TaskInfo::probe`]). An example the server failed for a
/// transient cause is asked again, up to [`PREFLIGHT_TRIES`] times, and if it never answered
/// it is `unchecked`, not a problem of the model. The sameness test applies only when every
/// example was answered.
pub(crate) fn probe<T: Task>(llm: &Llm) -> TaskProbe {
    let examples = T::examples();
    let model = llm.provenance(T::NAME);
    let mut probe = TaskProbe {
        task: T::NAME,
        model,
        asked: 0,
        problems: Vec::new(),
        unchecked: Vec::new(),
    };
    if examples.is_empty() || llm.inner.prepare.model_for(T::NAME).is_none() {
        return probe;
    }
    probe.asked = examples.len();
    let mut results: Vec<Option<Result<T::Output, LlmError>>> = vec![None; examples.len()];
    for _ in 0..PREFLIGHT_TRIES {
        let pending: Vec<usize> = (0..results.len())
            .filter(|&i| match &results[i] {
                None => true,
                Some(Err(e)) => is_transient(e),
                Some(Ok(_)) => false,
            })
            .collect();
        if pending.is_empty() {
            break;
        }
        let inputs: Vec<T::Input> = T::examples()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| pending.contains(i))
            .map(|(_, x)| x)
            .collect();
        let answers = llm.run_batch::<T>("preflight", inputs);
        for (i, a) in pending.into_iter().zip(answers) {
            results[i] = Some(a.map(|a| a.value));
        }
    }
    let mut kept = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Some(Ok(value)) => kept.push(
                T::category(&value)
                    .unwrap_or_else(|| serde_json::to_string(&value).unwrap_or_default()),
            ),
            Some(Err(e)) if is_transient(&e) => probe.unchecked.push(format!(
                "example {}: no answer after {PREFLIGHT_TRIES} tries ({}: {})",
                i + 1,
                e.reason(),
                clip(&e.to_string())
            )),
            Some(Err(e)) => probe.problems.push(format!(
                "example {}: {} ({}: {})",
                i + 1,
                what_failed(&e),
                e.reason(),
                clip(&e.to_string())
            )),
            None => {}
        }
    }
    if kept.len() >= 2 && kept.len() == probe.asked && kept.windows(2).all(|w| w[0] == w[1]) {
        probe.problems.push(format!(
            "the same answer for {} inputs that call for different ones: {}",
            kept.len(),
            clip(&kept[0])
        ));
    }
    probe
}

/// A failure the next try may not meet (timeout, 429, 5xx, the network): the server's, not
/// the model's.
fn is_transient(e: &LlmError) -> bool {
    e.is_transient()
}

/// What a failed example says of the model, in a few words.
fn what_failed(e: &LlmError) -> &'static str {
    match e {
        LlmError::Unparseable { .. } => "no usable JSON answer",
        LlmError::Senseless(s) if s.sense == crate::Sense::CopiedExample => {
            "echoes the prompt's example"
        }
        LlmError::Senseless(_) => "an answer not about its input",
        LlmError::Truncated { .. } => "the answer does not fit max_tokens",
        LlmError::ContextExceeded { .. } => "the request does not fit the context",
        _ => "the call failed",
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() <= 200 {
        return s.to_string();
    }
    let mut out: String = s.chars().take(200).collect();
    out.push_str("...");
    out
}

/// What a stage declares of a task it uses: enough for the engine to check its prompt,
/// fingerprint it and probe a model with it ([`Llm::preflight`]) without knowing its
/// types. Two declarations are the same task when name and offline version agree.
#[derive(Clone, Copy)]
pub struct TaskInfo {
    pub name: &'static str,
    pub offline_version: &'static str,
    /// Asks the task's examples ([`Task::examples`]) of a handle: the preflight's probe.
    pub(crate) probe: fn(&Llm) -> TaskProbe,
    example: fn() -> Option<serde_json::Value>,
    reads: fn(&serde_json::Value) -> bool,
    offline: fn(&serde_json::Value) -> Result<serde_json::Value, String>,
    parse: ParseJson,
    self_check: fn(&crate::prompt::Prompts) -> Result<String, String>,
}

/// A reply parsed against an input given as JSON: the answer written back as JSON and how it was
/// read.
type ParseJson = fn(&serde_json::Value, &str) -> Result<(String, crate::parse::Parsed), String>;

impl TaskInfo {
    /// The declaration of task `T`, usable in a `const` list.
    pub const fn of<T: Task>() -> TaskInfo {
        TaskInfo {
            name: T::NAME,
            offline_version: T::OFFLINE_VERSION,
            probe: probe::<T>,
            example: example_json::<T>,
            reads: |input| input_of::<T>(input).is_ok(),
            offline: offline_json::<T>,
            parse: parse_json::<T>,
            self_check: example_self_check::<T>,
        }
    }

    /// The task's [`Task::example`] as JSON.
    pub fn example(&self) -> Option<serde_json::Value> {
        (self.example)()
    }

    /// Whether `input` is one of the task's inputs (its `Input` read from JSON).
    pub fn reads(&self, input: &serde_json::Value) -> bool {
        (self.reads)(input)
    }

    /// [`Task::offline`] over an input given as JSON: the offline rule's answer as JSON, or why
    /// the input is not one of the task's. What a fake endpoint answers a task with.
    pub fn offline(&self, input: &serde_json::Value) -> Result<serde_json::Value, String> {
        (self.offline)(input)
    }

    /// [`crate::parse::parse_answer`] of `reply` to an input given as JSON: the answer written
    /// back as JSON and how it was read, or why the reply (or the input) was refused.
    pub fn parse(
        &self,
        input: &serde_json::Value,
        reply: &str,
    ) -> Result<(String, crate::parse::Parsed), String> {
        (self.parse)(input, reply)
    }

    /// [`crate::task::offline_self_check`] of the task's example against its prompt in `prompts`: the
    /// template renders it, the offline rule answers it the same twice and passes its checks.
    pub fn self_check(&self, prompts: &crate::prompt::Prompts) -> Result<String, String> {
        (self.self_check)(prompts)
    }

    fn key(&self) -> (&'static str, &'static str) {
        (self.name, self.offline_version)
    }
}

fn example_json<T: Task>() -> Option<serde_json::Value> {
    T::example().and_then(|input| serde_json::to_value(input).ok())
}

fn input_of<T: Task>(input: &serde_json::Value) -> Result<T::Input, String> {
    <T::Input as serde::Deserialize>::deserialize(input)
        .map_err(|e| format!("{}: not an input of the task: {e}", T::NAME))
}

fn offline_json<T: Task>(input: &serde_json::Value) -> Result<serde_json::Value, String> {
    let input = input_of::<T>(input)?;
    serde_json::to_value(T::offline(&input)).map_err(|e| format!("{}: {e}", T::NAME))
}

fn parse_json<T: Task>(
    input: &serde_json::Value,
    reply: &str,
) -> Result<(String, crate::parse::Parsed), String> {
    let input = input_of::<T>(input)?;
    let (answer, how) = crate::parse::parse_answer::<T>(&input, reply)?;
    let written = serde_json::to_string(&answer).map_err(|e| format!("{}: {e}", T::NAME))?;
    Ok((written, how))
}

fn example_self_check<T: Task>(prompts: &crate::prompt::Prompts) -> Result<String, String> {
    let input = T::example().ok_or_else(|| format!("{}: the task has no example", T::NAME))?;
    crate::task::offline_self_check::<T>(prompts, input)
}

impl std::fmt::Debug for TaskInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskInfo")
            .field("name", &self.name)
            .field("offline_version", &self.offline_version)
            .finish()
    }
}
impl PartialEq for TaskInfo {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for TaskInfo {}
impl PartialOrd for TaskInfo {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for TaskInfo {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}
impl std::hash::Hash for TaskInfo {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}
