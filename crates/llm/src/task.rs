//! The [`Task`] trait: what the engine needs to know of a named model call. Each task lives in
//! the crate of the stage that uses it (its input, typed answer, checks, offline rule and that
//! rule's version), beside that stage; this crate knows none of them.
//!
//! A stage calls a task through [`crate::Llm::run`] / [`crate::Llm::run_batch`] with the task's
//! marker type, e.g. `llm.run_batch::<Keywords>("queries", inputs)`, and declares the tasks it
//! may call ([`TaskInfo`]): its configuration check asks the engine to confirm their prompts
//! ([`crate::Llm::require`]), and its fingerprint covers those tasks only
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
    /// The prompt template's variables.
    type Input: Serialize + Clone + Send + Sync + 'static;
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
}

/// What a stage declares of a task it uses: enough for the engine to check its prompt and
/// fingerprint it without knowing its types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskInfo {
    pub name: &'static str,
    pub offline_version: &'static str,
}

impl TaskInfo {
    /// The declaration of task `T`, usable in a `const` list.
    pub const fn of<T: Task>() -> TaskInfo {
        TaskInfo {
            name: T::NAME,
            offline_version: T::OFFLINE_VERSION,
        }
    }
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
    T::check(&input, &a.value)
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
pub fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

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
