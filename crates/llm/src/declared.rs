//! The tasks a pipeline's stages declare, kept by the prepare part ([`Preparer`]):
//! [`crate::Llm::require`] checks each one's template (with the
//! `openai` backend a missing one is a configuration error) and refuses two rules under one name;
//! once every stage has declared its tasks, [`crate::Llm::check_task_models`] refuses a `task_models` key
//! no stage uses. The declared set is what [`crate::Llm::fingerprint`] covers.

use crate::call_log::lock;
use crate::error::LlmError;
use crate::preflight::TaskInfo;
use crate::request::Preparer;
use crate::task;

impl Preparer {
    /// [`crate::Llm::require`]: each task's template checked (required with `openai`), the
    /// tasks counted as the pipeline's.
    pub(crate) fn require(&self, tasks: &[TaskInfo]) -> Result<(), LlmError> {
        let mut missing = Vec::new();
        for t in tasks {
            if !task::valid_name(t.name) {
                return Err(LlmError::Internal(format!(
                    "task name `{}` is not lowercase snake case",
                    t.name
                )));
            }
            let prompt = self.prompts.get(t.name)?;
            if prompt.is_none() && self.is_openai() {
                missing.push(t.name);
            }
            let mut declared = lock(&self.declared);
            match declared.get(t.name) {
                // Two definitions under one name would share cache keys with different rules.
                Some(d) if d != t => {
                    return Err(LlmError::Internal(format!(
                        "task `{}` is declared with offline rules `{}` and `{}`",
                        t.name, d.offline_version, t.offline_version
                    )));
                }
                _ => {
                    declared.insert(t.name, *t);
                }
            }
        }
        if !missing.is_empty() {
            let dir = self
                .prompts
                .dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default();
            return Err(LlmError::Config(format!(
                "llm.prompts_dir: {dir} has no template for {}",
                missing.join(", ")
            )));
        }
        Ok(())
    }

    /// The tasks declared so far, in name order.
    pub(crate) fn declared_tasks(&self) -> Vec<TaskInfo> {
        lock(&self.declared).values().copied().collect()
    }

    /// [`crate::Llm::check_task_models`]: `llm.task_models` names declared tasks only.
    pub(crate) fn check_task_models(&self) -> Result<(), LlmError> {
        let declared = lock(&self.declared);
        for task in self.config.task_models.keys() {
            if !declared.contains_key(task.as_str()) {
                let known: Vec<&str> = declared.keys().copied().collect();
                return Err(LlmError::Config(format!(
                    "llm.task_models.{task}: no stage of this pipeline uses task `{task}` (its tasks: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;

    use crate::{Llm, Task, TaskInfo};

    struct Keywords;

    impl Task for Keywords {
        const NAME: &'static str = "keywords";
        const OFFLINE_VERSION: &'static str = "offline-1";
        type Input = serde_json::Value;
        type Output = serde_json::Value;
        fn offline(_: &serde_json::Value) -> serde_json::Value {
            serde_json::json!({"keywords": ["k"]})
        }
    }

    struct ExamVerdict;

    impl Task for ExamVerdict {
        const NAME: &'static str = "exam_verdict";
        const OFFLINE_VERSION: &'static str = "offline-2";
        type Input = serde_json::Value;
        type Output = serde_json::Value;
        fn offline(_: &serde_json::Value) -> serde_json::Value {
            serde_json::json!({"verdict": "undecided"})
        }
    }

    pub(crate) const KEYWORDS: TaskInfo = TaskInfo::of::<Keywords>();

    pub(crate) const EXAM: TaskInfo = TaskInfo::of::<ExamVerdict>();

    #[test]
    fn openai_needs_the_prompts_of_the_declared_tasks_only() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = serde_json::json!({"backend": "openai", "model": "m", "prompts_dir": dir.path(),
            "models": {"m": {"endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]}}});
        let llm = Llm::from_value(&cfg, Path::new("/")).unwrap();
        llm.require(&[]).unwrap();
        let e = llm.require(&[KEYWORDS]).unwrap_err();
        assert!(e.to_string().contains("no template for keywords"), "{e}");
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts/exam_verdict.md"),
            dir.path().join("exam_verdict.md"),
        )
        .unwrap();
        llm.require(&[EXAM]).unwrap();
    }

    #[test]
    fn declared_tasks_are_the_pipelines_and_task_models_name_only_them() {
        let cfg = serde_json::json!({"backend": "offline", "task_models": {"keywords": "m"},
            "models": {"m": {"endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]}},
            "cache": {"mode": "off"}, "embeddings": {"backend": "hashed"}});
        let llm = Llm::from_value(&cfg, Path::new("/nonexistent")).unwrap();
        assert_eq!(llm.fingerprint()["tasks"], serde_json::json!({}));
        let e = llm.check_task_models().unwrap_err();
        assert!(
            e.to_string().contains("llm.task_models.keywords: no stage"),
            "{e}"
        );
        llm.require(&[KEYWORDS, EXAM]).unwrap();
        llm.check_task_models().unwrap();
        assert_eq!(
            llm.fingerprint()["tasks"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["exam_verdict", "keywords"]
        );
        // One name, two rules: refused (they would share cache keys).
        struct Impostor;
        impl Task for Impostor {
            const NAME: &'static str = "keywords";
            const OFFLINE_VERSION: &'static str = "other";
            type Input = serde_json::Value;
            type Output = serde_json::Value;
            fn offline(_: &serde_json::Value) -> serde_json::Value {
                serde_json::Value::Null
            }
        }
        assert!(llm.require(&[TaskInfo::of::<Impostor>()]).is_err());
    }
}
