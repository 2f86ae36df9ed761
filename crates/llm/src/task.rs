//! The [`Task`] trait: what the engine needs to know of a named model call. Each task lives in
//! the crate of the stage that uses it (its input, typed answer, checks, offline rule and that
//! rule's version), beside that stage; this crate knows none of them.
//!
//! A stage calls a task through [`crate::Llm::run`] / [`crate::Llm::run_batch`] with the task's
//! marker type, e.g. `llm.run_batch::<Keywords>("queries", inputs)`, and declares the tasks it
//! may call ([`crate::TaskInfo`]): its configuration check asks the engine to confirm their
//! prompts ([`crate::Llm::require`]), and its fingerprint covers those tasks only
//! ([`crate::Llm::fingerprint_of`]).

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A task: its name, input, typed answer, checks and offline rule.
pub trait Task: Send + Sync + 'static {
    /// The task's name: its prompt file `pipelines/prompts/<name>.md`, its key in
    /// `llm.task_models`, and what cache keys and the call log say. Lowercase snake case.
    const NAME: &'static str;
    /// Version of [`Task::offline`]'s rule, part of every offline request key: bump it when the
    /// rule's answers change, so cached offline answers of the old rule are not reused.
    const OFFLINE_VERSION: &'static str;
    /// The prompt template's variables (read back from JSON by the fuzz target and by fake
    /// endpoints that answer from the request's `noisebench_task` field).
    type Input: Serialize + DeserializeOwned + Clone + Send + Sync + 'static;
    /// The answer, parsed strictly from the model's JSON.
    type Output: Serialize + DeserializeOwned + Clone + Send + Sync + 'static;

    /// Checks beyond the JSON shape (empty strings, score ranges). An error is a parse error:
    /// it triggers a re-ask, then fails the item.
    fn check(_input: &Self::Input, _output: &Self::Output) -> Result<(), String> {
        Ok(())
    }

    /// Whether a well-formed answer is about its input ([`crate::sense`]: off topic, the
    /// prompt's example copied, an entity its sentence does not hold...). A failure is a drop
    /// with the sense's reason code (after one re-ask when [`Task::REASK_SENSELESS`]); applied
    /// to a model's answers, cached ones included, unless `llm.sense_checks` is off. The
    /// offline rule's answers must pass it ([`offline_self_check`]).
    fn sense(_input: &Self::Input, _output: &Self::Output) -> Result<(), crate::sense::Senseless> {
        Ok(())
    }

    /// Re-ask once, quoting the failed sense check, before dropping the item (default: drop at
    /// once; a re-ask costs a call and small models tend to repeat themselves).
    const REASK_SENSELESS: bool = false;

    /// The answer's category when the task's answer is categorical (a stance, a verdict): a
    /// task whose answers fall in one category over a whole run is flagged in the run summary
    /// ([`crate::Llm::constant_answers`]). `None`: not categorical.
    fn category(_output: &Self::Output) -> Option<String> {
        None
    }

    /// The offline backend's deterministic answer.
    fn offline(input: &Self::Input) -> Self::Output;

    /// What a model's answer depends on, when that is less than the whole prompt: requests to a
    /// model whose inputs have the same reuse key share one request hash, so they share the
    /// cache entry, merge within a batch and join the same call-log row. `None` (the default):
    /// the rendered prompt itself. A task overrides it only where its prompt carries context
    /// that may change without changing what was asked (the questions tasks show whole chunks
    /// but ask about facts and their sentences), so an edit elsewhere in that context keeps the
    /// answer. The offline rule always answers the whole input.
    fn reuse_key(_input: &Self::Input) -> Option<serde_json::Value> {
        None
    }

    /// How many items each array of the answer may hold, for this input: the one source of
    /// both the JSON Schema's `minItems`/`maxItems` sent to the model (and shown in the prompt)
    /// and the check of every answer ([`check_answer`]), so the two never disagree. A prompt's
    /// own schema leaves these bounds out ([`schema_self_check`] fails on one it declares).
    fn bounds(_input: &Self::Input) -> Vec<ItemBounds> {
        Vec::new()
    }

    /// About how many tokens a full answer to this input takes, when that grows with the input
    /// (a rewrite or a translation of a passage): the request's `max_tokens` is at least this,
    /// and the one re-ask of a cut-off answer gets twice it, so a budget follows the input's
    /// size instead of `llm.max_tokens`. `None`: the configured budgets.
    fn answer_tokens(_input: &Self::Input) -> Option<u64> {
        None
    }

    /// Inputs for the preflight ([`crate::Llm::preflight`]): small, and different enough that a
    /// model reading them answers them differently (the preflight flags one answer for all).
    /// Empty: the task is not probed.
    fn examples() -> Vec<Self::Input> {
        Vec::new()
    }

    /// One small input of the task: the fuzz target's seed (with the offline rule's answer to
    /// it) and what the task's wiring is tested with. Default: the first of
    /// [`Task::examples`]; a task that is not probed gives one here. Every task has one (the
    /// fuzz target's replay test fails on a task without).
    fn example() -> Option<Self::Input> {
        Self::examples().into_iter().next()
    }
}

/// A bound on the number of items of one array field of an answer (a top-level field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemBounds {
    /// The answer's field (`rewrites`).
    pub field: &'static str,
    pub min: usize,
    pub max: usize,
}

/// The task's bounds ([`Task::bounds`]) and then its own [`Task::check`]: what every parsed
/// answer must pass.
pub fn check_answer<T: Task>(input: &T::Input, output: &T::Output) -> Result<(), String> {
    let bounds = T::bounds(input);
    if !bounds.is_empty() {
        let json = serde_json::to_value(output).map_err(|e| e.to_string())?;
        for b in bounds {
            let n = json
                .get(b.field)
                .and_then(serde_json::Value::as_array)
                .map_or(0, Vec::len);
            if n < b.min || n > b.max {
                let wanted = if b.min == b.max {
                    format!("{}", b.min)
                } else {
                    format!("{} to {}", b.min, b.max)
                };
                return Err(format!("`{}` has {n} items, wanted {wanted}", b.field));
            }
        }
    }
    T::check(input, output)
}

/// The answer's JSON Schema for one input: the prompt's schema with the task's
/// [`Task::bounds`] written into it as `minItems`/`maxItems` of each bounded field.
pub fn schema_for<T: Task>(schema: &serde_json::Value, input: &T::Input) -> serde_json::Value {
    let mut schema = schema.clone();
    for b in T::bounds(input) {
        if let Some(field) = schema
            .get_mut("properties")
            .and_then(|p| p.get_mut(b.field))
            .and_then(serde_json::Value::as_object_mut)
        {
            field.insert("minItems".into(), b.min.into());
            field.insert("maxItems".into(), b.max.into());
        }
    }
    schema
}

/// What every task's tests check of its prompt's schema against its bounds, for one input: each
/// bounded field is an array property of the schema; the schema declares no `minItems` or
/// `maxItems` of its own anywhere (they come from [`Task::bounds`] only, so the model is never
/// held to another number than the check); the schema sent for the input carries the bounds;
/// and an answer one item past a bound fails [`check_answer`]. `answer` is a valid answer to
/// `input` whose bounded arrays have at least one item.
pub fn schema_self_check<T: Task>(
    prompts: &crate::prompt::Prompts,
    input: &T::Input,
    answer: &T::Output,
) -> Result<(), String> {
    let prompt = prompts
        .get(T::NAME)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{}: no prompt", T::NAME))?;
    fn own_bounds(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    if k == "minItems" || k == "maxItems" {
                        out.push(format!("{at}/{k}"));
                    }
                    own_bounds(x, format!("{at}/{k}"), out);
                }
            }
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    own_bounds(x, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut own = Vec::new();
    own_bounds(&prompt.schema, String::new(), &mut own);
    if !own.is_empty() {
        return Err(format!(
            "{}: the prompt's schema sets {} itself; item counts come from the task's bounds",
            T::NAME,
            own.join(", ")
        ));
    }
    check_answer::<T>(input, answer).map_err(|e| format!("{}: the answer fails: {e}", T::NAME))?;
    let sent = schema_for::<T>(&prompt.schema, input);
    let mut json = serde_json::to_value(answer).map_err(|e| e.to_string())?;
    for b in T::bounds(input) {
        let field = &sent["properties"][b.field];
        if field["type"] != "array" {
            return Err(format!(
                "{}: `{}` is not an array of the schema",
                T::NAME,
                b.field
            ));
        }
        if field["minItems"] != b.min || field["maxItems"] != b.max {
            return Err(format!(
                "{}: the schema's bounds of `{}` are not the task's",
                T::NAME,
                b.field
            ));
        }
        // One item past the maximum fails the check.
        let items = json[b.field]
            .as_array_mut()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| format!("{}: the answer's `{}` is empty", T::NAME, b.field))?;
        let first = items[0].clone();
        let original = items.clone();
        while items.len() <= b.max {
            items.push(first.clone());
        }
        let over: T::Output = serde_json::from_value(json.clone()).map_err(|e| e.to_string())?;
        if check_answer::<T>(input, &over).is_ok() {
            return Err(format!(
                "{}: an answer of {} `{}` passes the check, past the schema's maxItems {}",
                T::NAME,
                b.max + 1,
                b.field,
                b.max
            ));
        }
        json[b.field] = serde_json::Value::Array(original);
    }
    Ok(())
}

/// What every task's own tests check of its offline rule and prompt: the template in `prompts`
/// renders `input` with no placeholder left; the offline rule answers the same input twice with
/// the same request hash and the same bytes; the answer passes the task's `check`. Returns the
/// answer as JSON, for the test to compare with what it expects.
pub fn offline_self_check<T: Task>(
    prompts: &crate::prompt::Prompts,
    input: T::Input,
) -> Result<String, String> {
    let (messages, _) = prompts
        .render(T::NAME, &input)
        .map_err(|e| format!("{}: {e}", T::NAME))?;
    if messages.iter().any(|m| m.content.contains("{{")) {
        return Err(format!(
            "{}: a placeholder is left in the rendered prompt",
            T::NAME
        ));
    }
    let run = || {
        crate::Llm::offline()
            .run::<T>("self-check", input.clone())
            .map_err(|e| format!("{}: {e}", T::NAME))
    };
    let (a, b) = (run()?, run()?);
    if a.request_hash != b.request_hash {
        return Err(format!(
            "{}: the request hash differs between runs",
            T::NAME
        ));
    }
    check_answer::<T>(&input, &a.value)
        .map_err(|e| format!("{}: the offline answer fails its check: {e}", T::NAME))?;
    T::sense(&input, &a.value)
        .map_err(|e| format!("{}: the offline answer fails its sense check: {e}", T::NAME))?;
    let json = serde_json::to_string(&a.value).map_err(|e| e.to_string())?;
    if json != serde_json::to_string(&b.value).map_err(|e| e.to_string())? {
        return Err(format!(
            "{}: the offline answer differs between runs",
            T::NAME
        ));
    }
    Ok(json)
}

/// Whether `name` is a well-formed task name (lowercase ASCII letters, digits and `_`, starting
/// with a letter): it is a file name and a configuration key.
pub(crate) fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TaskInfo;

    struct Echo;
    impl Task for Echo {
        const NAME: &'static str = "echo";
        const OFFLINE_VERSION: &'static str = "echo-1";
        type Input = String;
        type Output = String;
        fn offline(input: &String) -> String {
            input.clone()
        }
    }

    #[test]
    fn a_task_declares_itself() {
        const DECLARED: &[TaskInfo] = &[TaskInfo::of::<Echo>()];
        assert_eq!(DECLARED[0].name, "echo");
        assert_eq!(DECLARED[0].offline_version, "echo-1");
        assert!(valid_name("stance_url") && valid_name("qa2"));
        assert!(
            !valid_name("Stance") && !valid_name("a-b") && !valid_name("") && !valid_name("_x")
        );
    }
}
