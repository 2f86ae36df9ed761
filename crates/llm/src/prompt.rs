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
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::error::LlmError;

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
    /// The example values the body shows (an entity, a question), each as written there: an
    /// answer repeating one for an input that does not hold it copied the prompt
    /// ([`crate::sense::not_an_example`]).
    #[serde(default)]
    examples: Vec<String>,
}

/// A loaded prompt.
#[derive(Debug)]
pub struct Prompt {
    pub task: String,
    pub version: String,
    /// The answer's JSON Schema.
    pub schema: serde_json::Value,
    /// The same, as the text given to templates (rendered once at load).
    schema_text: String,
    pub path: PathBuf,
    /// sha256 of the file's text: an edit that forgets to bump `version` still changes it.
    pub sha256: String,
    /// The example values the body shows (front matter `examples`), which an answer must not
    /// repeat for an input that does not hold them.
    pub examples: Vec<String>,
    template: minijinja::Environment<'static>,
}

/// The prompts of a directory, each loaded and compiled the first time its task asks for it.
///
/// Lazily, because the engine knows no task: the tasks are those the pipeline's stages declare
/// ([`crate::Llm::require`]), and a prompt file no stage uses is never read. A file's outcome
/// (loaded or absent) is kept for the life of the handle, so one run sees one version of it.
pub struct Prompts {
    dir: Option<PathBuf>,
    loaded: Mutex<BTreeMap<String, Option<Arc<Prompt>>>>,
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("Prompts")
            .field("dir", &self.dir)
            .field("loaded", &loaded.keys().collect::<Vec<_>>())
            .finish()
    }
}

const SYSTEM_MARK: &str = "<!-- system -->";
const USER_MARK: &str = "<!-- user -->";

impl Prompts {
    /// An empty set with no directory (the offline backend of tests needs none).
    pub fn empty() -> Self {
        Self {
            dir: None,
            loaded: Mutex::new(BTreeMap::new()),
        }
    }

    /// The prompts of `dir`, `<task>.md` each; nothing is read until a task asks.
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            dir: Some(dir.to_path_buf()),
            loaded: Mutex::new(BTreeMap::new()),
        }
    }

    /// The directory prompts are read from.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Parse and compile one prompt file's text for `task`, replacing any loaded one.
    pub fn add(&self, task: &str, path: &Path, text: &str) -> Result<Arc<Prompt>, LlmError> {
        let prompt = Arc::new(parse(task, path, text)?);
        self.loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(task.to_string(), Some(Arc::clone(&prompt)));
        Ok(prompt)
    }

    /// `task`'s prompt: `None` when its file does not exist; an error naming the file when it
    /// cannot be read or is malformed.
    pub fn get(&self, task: &str) -> Result<Option<Arc<Prompt>>, LlmError> {
        if let Some(p) = self
            .loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(task)
        {
            return Ok(p.clone());
        }
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        let path = dir.join(format!("{task}.md"));
        if !path.exists() {
            self.loaded
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(task.to_string(), None);
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| LlmError::Prompt(format!("{}: cannot read: {e}", path.display())))?;
        self.add(task, &path, &text).map(Some)
    }

    /// Render a task's messages from its input.
    pub fn render<I: Serialize>(
        &self,
        task: &str,
        input: &I,
    ) -> Result<(Vec<Message>, Arc<Prompt>), LlmError> {
        self.render_with(task, input, |_| None)
            .map(|(m, p, _)| (m, p))
    }

    /// Render a task's messages from its input, `schema_of` giving the schema for this input
    /// (`None`: the prompt's own): the messages, the prompt and the schema they show.
    pub(crate) fn render_with<I: Serialize>(
        &self,
        task: &str,
        input: &I,
        schema_of: impl FnOnce(&serde_json::Value) -> Option<serde_json::Value>,
    ) -> Result<(Vec<Message>, Arc<Prompt>, serde_json::Value), LlmError> {
        let prompt = self
            .get(task)?
            .ok_or_else(|| LlmError::Prompt(format!("no prompt template for task `{task}`")))?;
        let tmpl = prompt
            .template
            .get_template(task)
            .map_err(|e| LlmError::Prompt(format!("{task}: {e}")))?;
        let own = schema_of(&prompt.schema);
        let schema_text = own
            .as_ref()
            .map_or_else(|| prompt.schema_text.clone(), |s| s.to_string());
        let ctx = minijinja::context! {
            schema => schema_text.as_str(),
            ..minijinja::Value::from(minijinja::value::Serde(input))
        };
        let text = tmpl
            .render(ctx)
            .map_err(|e| LlmError::Prompt(format!("{task}: render: {e:#}")))?;
        let schema = own.unwrap_or_else(|| prompt.schema.clone());
        Ok((split_messages(&text), prompt, schema))
    }
}

/// Parse and compile one prompt file.
fn parse(task: &str, path: &Path, text: &str) -> Result<Prompt, LlmError> {
    let err = |m: String| LlmError::Prompt(format!("{}: {m}", path.display()));
    let rest = text
        .strip_prefix("+++\n")
        .ok_or_else(|| err("must open with `+++` front matter".into()))?;
    let end = rest
        .find("\n+++\n")
        .ok_or_else(|| err("front matter is not closed by `+++`".into()))?;
    let front: FrontMatter =
        toml::from_str(&rest[..end]).map_err(|e| err(format!("front matter: {e}")))?;
    if front.task != task {
        return Err(err(format!(
            "front matter says task `{}`, file is for `{task}`",
            front.task
        )));
    }
    let schema: serde_json::Value =
        serde_json::from_str(&front.schema).map_err(|e| err(format!("schema is not JSON: {e}")))?;
    let body = &rest[end + 5..];
    if !body.contains(USER_MARK) {
        return Err(err(format!("body has no `{USER_MARK}` section")));
    }
    for e in &front.examples {
        if e.trim().is_empty() || !body.contains(e.as_str()) {
            return Err(err(format!(
                "front matter `examples`: {e:?} is not written in the body"
            )));
        }
    }
    let mut template = minijinja::Environment::new();
    template.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    template
        .add_template_owned(task.to_string(), body.to_string())
        .map_err(|e| err(format!("template: {e}")))?;
    Ok(Prompt {
        task: task.to_string(),
        version: front.version,
        schema_text: schema.to_string(),
        schema,
        path: path.to_path_buf(),
        sha256: crate::sha256_hex_bytes(text.as_bytes()),
        examples: front.examples,
        template,
    })
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

    #[derive(Serialize)]
    struct ClaimInput {
        claim: String,
        max_keywords: usize,
    }

    #[test]
    fn parses_front_matter_and_renders() {
        let p = Prompts::empty();
        let text = "+++\ntask = \"keywords\"\nversion = \"3\"\nschema = '''{\"type\":\"object\"}'''\n+++\n<!-- system -->\nBe brief.\n<!-- user -->\nClaim: {{ claim }} ({{ max_keywords }}) {{ schema }}\n";
        p.add("keywords", Path::new("k.md"), text).unwrap();
        let input = ClaimInput {
            claim: "x".into(),
            max_keywords: 4,
        };
        let (m, prompt) = p.render("keywords", &input).unwrap();
        assert_eq!(prompt.version, "3");
        assert_eq!(m[0].content, "Be brief.");
        assert_eq!(m[1].content, "Claim: x (4) {\"type\":\"object\"}");
        let bad = "+++\ntask = \"triplets\"\nversion = \"1\"\nschema = '{}'\n+++\n<!-- user -->\n";
        let e = p.add("keywords", Path::new("k.md"), bad).unwrap_err();
        assert!(e.to_string().contains("front matter says task"), "{e}");
    }

    #[test]
    fn prompts_load_when_asked_and_absent_ones_are_none() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let p = Prompts::in_dir(&dir);
        assert!(format!("{p:?}").contains("loaded: []"), "{p:?}");
        assert_eq!(p.get("keywords").unwrap().unwrap().task, "keywords");
        assert!(p.get("no_such_task").unwrap().is_none());
        let e = p.render("no_such_task", &()).unwrap_err();
        assert!(e.to_string().contains("no prompt template"), "{e}");
        // Every file of the directory (but the re-ask text) is a well-formed prompt.
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if let Some(task) = name.strip_suffix(".md").filter(|t| *t != "reask") {
                assert!(p.get(task).unwrap().is_some(), "{name}");
            }
        }
    }
}
