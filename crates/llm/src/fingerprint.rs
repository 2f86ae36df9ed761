//! What decides a stage's answers, for the runner's fingerprint: per declared task its model,
//! prompt version and template hash (offline: its rule's version), plus the backend, sampling
//! parameters and embedder, worked out by the prepare part ([`Preparer`]).
//! [`crate::Llm::fingerprint_of`] covers the tasks a stage names; [`crate::Llm::fingerprint`]
//! every task declared so far.

use std::collections::BTreeMap;

use crate::preflight::TaskInfo;
use crate::request::Preparer;

impl Preparer {
    /// [`crate::Llm::fingerprint_of`], `embedder` naming the embedder.
    pub(crate) fn fingerprint_of(&self, tasks: &[TaskInfo], embedder: &str) -> serde_json::Value {
        let c = &self.config;
        let tasks: BTreeMap<&str, serde_json::Value> = tasks
            .iter()
            .map(|t| {
                let mut v = serde_json::json!({
                    "model": self.provenance(t.name),
                    "prompt_version": self.prompt_version(*t),
                });
                // The template's bytes, where a template is used: an edited prompt reruns the
                // stages that use it even when its version was not bumped.
                if self.is_openai()
                    && let Some(p) = self.prompt(t.name)
                {
                    v["prompt_sha256"] = serde_json::json!(p.sha256);
                }
                // The model's context decides which items fit and how long answers may be: a
                // larger one reruns the stage, so the items it refused are asked again.
                if let Some(m) = self.model_for(t.name) {
                    v["context_tokens"] = serde_json::json!(m.context_tokens());
                }
                (t.name, v)
            })
            .collect();
        let mut fp = serde_json::json!({
            "backend": c.backend.as_str(),
            "tasks": tasks,
            "temperature": c.temperature,
            "max_tokens": c.max_tokens,
            "seed": c.seed,
            "max_reasks": c.max_reasks,
            "embedder": embedder,
        });
        // Which of a model's answers are kept: the budget a cut-off answer gets once more, and
        // whether answers must pass their sense checks. The offline rules are neither.
        if self.is_openai() {
            fp["max_tokens_ceiling"] = c.max_tokens_ceiling.into();
            fp["sense_checks"] = c.sense_checks.into();
        }
        fp
    }

    /// [`crate::Llm::input_room`].
    pub(crate) fn input_room<T: crate::Task>(&self, bare: &T::Input) -> Option<u64> {
        let m = self.model_for(T::NAME)?;
        let context = u64::from(m.context_tokens()?);
        let (messages, _) = self.prompts.render(T::NAME, bare).ok()?;
        let prompt = crate::request::prompt_tokens_with_margin(&messages);
        let answer = u64::from(self.config.max_tokens);
        let left = context.saturating_sub(prompt + answer);
        // Text added to the prompt is counted with the same 15% margin.
        Some(left * 100 / 115)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::declared::tests::{EXAM, KEYWORDS};
    use crate::{Llm, TaskInfo};

    #[test]
    fn the_fingerprint_follows_models_prompts_and_parameters_but_not_limits() {
        let prompts = tempfile::tempdir().unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        for entry in std::fs::read_dir(&repo).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), prompts.path().join(entry.file_name())).unwrap();
        }
        let cache = tempfile::tempdir().unwrap();
        let config = |model: &str, rpm: u32, exam_model: Option<&str>| {
            let mut c = serde_json::json!({"backend": "openai", "model": "m", "prompts_dir": prompts.path(),
                "cache": {"dir": cache.path()}, "embeddings": {"backend": "hashed"},
                "models": {"m": {"name": model, "rpm": rpm,
                    "endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]},
                    "x": {"name": "gpt-x", "endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]}}});
            if let Some(m) = exam_model {
                c["task_models"] = serde_json::json!({"exam_verdict": m});
            }
            c
        };
        let fp = |v: serde_json::Value, tasks: &[TaskInfo]| {
            Llm::from_value(&v, Path::new("/"))
                .unwrap()
                .fingerprint_of(tasks)
        };
        let base = fp(config("gpt-a", 60, None), &[KEYWORDS, EXAM]);
        assert_eq!(base["tasks"]["keywords"]["model"], "openai:gpt-a");
        assert_eq!(base["tasks"]["keywords"]["prompt_version"], "2");
        assert_eq!(
            base["tasks"]["keywords"]["prompt_sha256"]
                .as_str()
                .map(str::len),
            Some(64)
        );
        // Only the declared tasks.
        assert_eq!(base["tasks"].as_object().unwrap().len(), 2);
        // Limits and endpoints decide how answers come, not what they are.
        assert_eq!(fp(config("gpt-a", 600, None), &[KEYWORDS, EXAM]), base);
        // Another model changes every task.
        assert_ne!(
            fp(config("gpt-b", 60, None), &[KEYWORDS, EXAM])["tasks"]["exam_verdict"],
            base["tasks"]["exam_verdict"]
        );
        // Another model for one task changes the fingerprint of the stages using it only.
        let only_keywords = fp(config("gpt-a", 60, None), &[KEYWORDS]);
        assert_eq!(
            fp(config("gpt-a", 60, Some("x")), &[KEYWORDS]),
            only_keywords
        );
        assert_ne!(fp(config("gpt-a", 60, Some("x")), &[KEYWORDS, EXAM]), base);
        // An edited template without a version bump changes its task only.
        let path = prompts.path().join("keywords.md");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace("Do not judge the claim.", "Never judge the claim."),
        )
        .unwrap();
        let edited = fp(config("gpt-a", 60, None), &[KEYWORDS, EXAM]);
        assert_ne!(edited["tasks"]["keywords"], base["tasks"]["keywords"]);
        assert_eq!(
            edited["tasks"]["exam_verdict"],
            base["tasks"]["exam_verdict"]
        );
        // The offline rules use no template; each task has its own rule version.
        let offline = Llm::offline().fingerprint_of(&[KEYWORDS, EXAM]);
        assert_eq!(offline["backend"], "offline");
        assert!(offline["tasks"]["keywords"].get("prompt_sha256").is_none());
        assert_eq!(
            offline["tasks"]["exam_verdict"]["prompt_version"],
            "offline-2"
        );
    }
}
