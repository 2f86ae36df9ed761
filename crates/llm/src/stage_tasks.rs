//! The one adapter between a stage and the model tasks it asks: a stage declares its tasks once,
//! as a [`StageTasks`], and the adapter does the requiring (templates checked before any work,
//! [`Llm::require`]) and the fingerprinting ([`Llm::fingerprint_of`]) for it. The stage reports
//! the names to the runner (`TypedStage::tasks`), so the registry of stages is the one list of
//! every task a pipeline may ask (preflight, fuzz targets and the configuration reference read it
//! there). Nothing outside this crate calls `require` or `fingerprint_of` itself (the
//! architecture test holds every crate to it).
//!
//! What this is not: the engine's bookkeeping of declared tasks (`declared.rs`) nor what a
//! fingerprint covers (`fingerprint.rs`); this only says, once, which tasks are whose.

use std::borrow::Cow;

use noisebench_core::ConfigError;

use crate::Llm;
use crate::error::LlmError;
use crate::preflight::TaskInfo;

/// A stage's (or another caller's) model tasks, declared once, with the handle that asks them.
#[derive(Clone)]
pub struct StageTasks {
    llm: Llm,
    tasks: Cow<'static, [TaskInfo]>,
}

impl std::fmt::Debug for StageTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageTasks")
            .field("tasks", &self.names())
            .finish_non_exhaustive()
    }
}

impl StageTasks {
    /// The tasks `tasks` asked through `llm` (a stage's `TASKS` list, or a list computed from an
    /// evaluation's configuration).
    pub fn new(llm: Llm, tasks: impl Into<Cow<'static, [TaskInfo]>>) -> Self {
        Self {
            llm,
            tasks: tasks.into(),
        }
    }

    /// The handle the tasks are asked through.
    pub fn llm(&self) -> &Llm {
        &self.llm
    }

    /// The declared tasks, in declaration order.
    pub fn tasks(&self) -> &[TaskInfo] {
        &self.tasks
    }

    /// The declared tasks' names, in declaration order: what a stage reports as its tasks.
    pub fn names(&self) -> Vec<&'static str> {
        self.tasks.iter().map(|t| t.name).collect()
    }

    /// Declare every task to the engine ([`Llm::require`]): a caller that is not a stage (the
    /// evaluation, the quality card's closed-book questions) before it asks.
    pub fn declare(&self) -> Result<(), LlmError> {
        self.llm.require(&self.tasks)
    }

    /// A stage's configuration check: declare every task, a failure being the configuration's
    /// `llm` field.
    pub fn require(&self) -> Result<(), ConfigError> {
        self.require_only(&self.tasks)
    }

    /// A stage's configuration check when its configuration calls only some of its tasks:
    /// declare `used` (each one of the declared tasks; another is refused, so a stage's list
    /// stays the whole of what it may ask).
    pub fn require_only(&self, used: &[TaskInfo]) -> Result<(), ConfigError> {
        if let Some(t) = used.iter().find(|u| !self.tasks.iter().any(|t| t == *u)) {
            return Err(ConfigError::new(
                "llm",
                format!(
                    "task `{}` is not among the stage's declared tasks ({})",
                    t.name,
                    self.names().join(", ")
                ),
            ));
        }
        self.llm
            .require(used)
            .map_err(|e| ConfigError::new("llm", e.to_string()))
    }

    /// What decides the answers of every declared task ([`Llm::fingerprint_of`]): the stage's
    /// `environment`, or its LLM part.
    pub fn fingerprint(&self) -> serde_json::Value {
        self.llm.fingerprint_of(&self.tasks)
    }
}

#[cfg(test)]
mod tests {
    use crate::declared::tests::{EXAM, KEYWORDS};
    use crate::{Llm, TaskInfo};

    use super::StageTasks;

    const BOTH: &[TaskInfo] = &[KEYWORDS, EXAM];

    #[test]
    fn the_adapter_fingerprints_its_tasks_and_declares_only_them() {
        let llm = Llm::offline();
        let tasks = StageTasks::new(llm.clone(), BOTH);
        assert_eq!(tasks.names(), ["keywords", "exam_verdict"]);
        assert_eq!(tasks.fingerprint(), llm.fingerprint_of(BOTH));
        tasks.require_only(&[EXAM]).unwrap();
        assert_eq!(
            llm.declared_tasks()
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>(),
            ["exam_verdict"]
        );
        tasks.require().unwrap();
        assert_eq!(llm.declared_tasks().len(), 2);
        let only_keywords = StageTasks::new(llm, &[KEYWORDS][..]);
        let e = only_keywords.require_only(&[EXAM]).unwrap_err();
        assert_eq!(e.field, "llm");
        assert!(
            e.message
                .contains("`exam_verdict` is not among the stage's declared tasks (keywords)"),
            "{e}"
        );
    }
}
