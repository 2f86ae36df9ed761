//! Prompt templates: `pipelines/prompts/<task>.md`.
//!
//! A file opens with TOML front matter between `+++` lines:
//!
//! ```text
//! +++
//! task = "keywords"
//! version = "1"
//! schema = '''{"type": "object", ...}'''   # JSON Schema of the answer
//! +++
//! <!-- system -->
//! ...minijinja template...
//! <!-- user -->
//! ...minijinja template...
//! ```
//!
//! The body is rendered with the task's input fields as variables, plus `schema` (the JSON Schema
//! as text). The version is part of the cache key; so are the rendered messages.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::LlmError;
use crate::task::TaskName;

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    task: String,
    version: String,
    schema: String,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
}

/// A loaded prompt.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub task: TaskName,
    pub version: String,
    /// The answer's JSON Schema.
    pub schema: serde_json::Value,
    /// The same, as the text given to templates (rendered once at load).
    schema_text: String,
    pub path: PathBuf,
    /// sha256 of the file's text: an edit that forgets to bump `version` still changes it.
    pub sha256: String,
}

/// All prompts found in a directory, compiled.
pub struct Prompts {
    prompts: BTreeMap<TaskName, Prompt>,
    env: minijinja::Environment<'static>,
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompts")
            .field("prompts", &self.prompts.keys().collect::<Vec<_>>())
            .finish()
    }
}

const SYSTEM_MARK: &str = "<!-- system -->";
const USER_MARK: &str = "<!-- user -->";

impl Prompts {
    /// An empty set (the offline backend needs none).
    pub fn empty() -> Self {
        Self {
            prompts: BTreeMap::new(),
            env: Self::new_env(),
        }
    }

    fn new_env() -> minijinja::Environment<'static> {
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env
    }

    /// Load every `<task>.md` in `dir` whose name is a known task. Files of unknown tasks are
    /// ignored; a malformed file is an error naming it.
    pub fn load(dir: &Path) -> Result<Self, LlmError> {
        let mut me = Self::empty();
        for task in TaskName::ALL {
            let path = dir.join(format!("{}.md", task.as_str()));
            if !path.exists() {
                continue;
            }
            let text = std::fs::read_to_string(&path)
                .map_err(|e| LlmError::Prompt(format!("{}: cannot read: {e}", path.display())))?;
            me.add(*task, &path, &text)?;
        }
        Ok(me)
    }

    /// Parse and compile one prompt file's text.
    pub fn add(&mut self, task: TaskName, path: &Path, text: &str) -> Result<(), LlmError> {
        let err = |m: String| LlmError::Prompt(format!("{}: {m}", path.display()));
        let rest = text
            .strip_prefix("+++\n")
            .ok_or_else(|| err("must open with `+++` front matter".into()))?;
        let end = rest
            .find("\n+++\n")
            .ok_or_else(|| err("front matter is not closed by `+++`".into()))?;
        let front: FrontMatter =
            toml::from_str(&rest[..end]).map_err(|e| err(format!("front matter: {e}")))?;
        if front.task != task.as_str() {
            return Err(err(format!(
                "front matter says task `{}`, file is for `{task}`",
                front.task
            )));
        }
        let schema: serde_json::Value = serde_json::from_str(&front.schema)
            .map_err(|e| err(format!("schema is not JSON: {e}")))?;
        let body = &rest[end + 5..];
        if !body.contains(USER_MARK) {
            return Err(err(format!("body has no `{USER_MARK}` section")));
        }
        self.env
            .add_template_owned(task.as_str().to_string(), body.to_string())
            .map_err(|e| err(format!("template: {e}")))?;
        self.prompts.insert(
            task,
            Prompt {
                task,
                version: front.version,
                schema_text: schema.to_string(),
                schema,
                path: path.to_path_buf(),
                sha256: crate::sha256_hex_bytes(text.as_bytes()),
            },
        );
        Ok(())
    }

    pub fn get(&self, task: TaskName) -> Option<&Prompt> {
        self.prompts.get(&task)
    }

    /// Render a task's messages from its input.
    pub fn render<I: Serialize>(
        &self,
        task: TaskName,
        input: &I,
    ) -> Result<(Vec<Message>, &Prompt), LlmError> {
        let prompt = self
            .prompts
            .get(&task)
            .ok_or_else(|| LlmError::Prompt(format!("no prompt template for task `{task}`")))?;
        let tmpl = self
            .env
            .get_template(task.as_str())
            .map_err(|e| LlmError::Prompt(format!("{task}: {e}")))?;
        let ctx = minijinja::context! {
            schema => prompt.schema_text.as_str(),
            ..minijinja::Value::from(minijinja::value::Serde(input))
        };
        let text = tmpl
            .render(ctx)
            .map_err(|e| LlmError::Prompt(format!("{task}: render: {e:#}")))?;
        Ok((split_messages(&text), prompt))
    }
}

fn split_messages(text: &str) -> Vec<Message> {
    let (system, user) = match text.split_once(USER_MARK) {
        Some((before, after)) => (before.replace(SYSTEM_MARK, ""), after.to_string()),
        None => (String::new(), text.to_string()),
    };
    let mut out = Vec::new();
    if !system.trim().is_empty() {
        out.push(Message {
            role: "system".into(),
            content: system.trim().to_string(),
        });
    }
    out.push(Message {
        role: "user".into(),
        content: user.trim().to_string(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_front_matter_and_renders() {
        let mut p = Prompts::empty();
        let text = "+++\ntask = \"keywords\"\nversion = \"3\"\nschema = '''{\"type\":\"object\"}'''\n+++\n<!-- system -->\nBe brief.\n<!-- user -->\nClaim: {{ claim }} ({{ max_keywords }}) {{ schema }}\n";
        p.add(TaskName::Keywords, Path::new("k.md"), text).unwrap();
        let (m, prompt) = p
            .render(
                TaskName::Keywords,
                &crate::task::KeywordsInput {
                    claim: "x".into(),
                    max_keywords: 4,
                },
            )
            .unwrap();
        assert_eq!(prompt.version, "3");
        assert_eq!(m[0].content, "Be brief.");
        assert_eq!(m[1].content, "Claim: x (4) {\"type\":\"object\"}");
        let bad = "+++\ntask = \"triplets\"\nversion = \"1\"\nschema = '{}'\n+++\n<!-- user -->\n";
        let e = p
            .add(TaskName::Keywords, Path::new("k.md"), bad)
            .unwrap_err();
        assert!(e.to_string().contains("front matter says task"), "{e}");
    }

    #[test]
    fn the_repository_prompts_all_load_and_render() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let p = Prompts::load(&dir).unwrap();
        for t in TaskName::ALL {
            assert!(p.get(*t).is_some(), "missing prompt for {t}");
        }
    }
}
