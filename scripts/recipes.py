#!/usr/bin/env python3
"""`just recipes`: follow ARCHITECTURE.md's "How to add" recipes for an LLM task, a stage and a
release format and a search backend in a temporary copy of the workspace, then build and test
the copy.

Each recipe in ARCHITECTURE.md ends with a `Places:` sentence naming, in backticks, every file the
change touches (placeholders `<crate>`, `<name>`, `<stage>`). This script reads those places and
nothing else decides where it writes: for each place it has one step (write the throwaway task
beside its stage and list it in the stage's `TASKS`; write its prompt; write the throwaway stage;
declare its module; register it; add it to the demo pipeline; assert its counts in the demo test),
chosen by what the place is; for the release format: write the throwaway format, declare its
module and list it in `formats()`; for the search backend: write the throwaway backend, declare its
module, add its configuration variant and arms, its fixture format and parser, a recorded answer
and its index entry, and a test against a fake server). A place it has no step for fails the run, and so does a build or test
of the copy that needs a place the recipe does not name: the text and the code cannot drift apart.

Then, in the copy (sharing this checkout's target folder, so only workspace crates are rebuilt):
`cargo check` of the stage crates, the cli library and the demo test; and the fuzz target's replay
test, which must list the throwaway task, render its prompt with its example and accept the offline
rule's answer; the releases crate's round trip, which every format in `formats()` passes and
which must have exported the throwaway format; and the search crate's test of the throwaway backend, live against a fake server
on 127.0.0.1 and replayed from its recorded answer through the `fixture` backend. It never touches this checkout. 7 min 43 s on 2 cores under a load of 10 (a second build of
the workspace crates), so it is not part of `just test`.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VALUES = {"<crate>": None, "<name>": "recipe_probe", "<stage>": "recipe_probe"}
TASK_CRATE = "label"  # the crate of the stage the throwaway task joins
STAGE_CRATE = "qa"  # the crate the throwaway stage joins
TASK_STRUCT = "RecipeProbe"
STAGE_STRUCT = "RecipeProbeStage"
STAGE_KIND = "recipe-probe"


def fail(message):
    print(f"recipes: {message}", file=sys.stderr)
    sys.exit(1)


def recipes(text):
    """Each `- **Title.**` bullet of the `## How to add` section: (title, places)."""
    section = re.search(r"^## How to add\n(.*?)(?=^## )", text, re.S | re.M)
    if not section:
        fail("ARCHITECTURE.md has no `## How to add` section")
    out = {}
    for bullet in re.split(r"\n(?=- \*\*)", section.group(1)):
        title = re.match(r"- \*\*(.+?)\.\*\*", bullet.strip())
        if not title:
            continue
        places = re.search(r"Places:\s+(.*?)(?:\.\s*$|\.\n)", bullet, re.S)
        out[title.group(1)] = re.findall(r"`([^`]+)`", places.group(1)) if places else None
    return out


TASK_CODE = '''

/// The throwaway task `scripts/recipes.py` adds by following ARCHITECTURE.md's recipe.
pub struct {struct};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct {struct}Input {{
    pub text: String,
}}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct {struct}Output {{
    pub words: usize,
}}

impl Task for {struct} {{
    const NAME: &'static str = "{name}";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = {struct}Input;
    type Output = {struct}Output;

    fn check(input: &{struct}Input, output: &{struct}Output) -> Result<(), String> {{
        if output.words > input.text.len() {{
            return Err("more words than characters".into());
        }}
        Ok(())
    }}

    fn offline(input: &{struct}Input) -> {struct}Output {{
        {struct}Output {{
            words: input.text.split_whitespace().count(),
        }}
    }}

    fn examples() -> Vec<{struct}Input> {{
        vec![
            {struct}Input {{
                text: "Lemon water cures cancer.".into(),
            }},
            {struct}Input {{
                text: "The vaccine was tested on 40,000 people.".into(),
            }},
        ]
    }}
}}
'''

PROMPT = """+++
task = "recipe_probe"
version = "1"
description = "The throwaway task of scripts/recipes.py: the words of a text."
schema = '''{"type": "object", "properties": {"words": {"type": "integer"}}, "required": ["words"], "additionalProperties": false}'''
+++
<!-- system -->
You count words.
<!-- user -->
How many words are in this text?

{{ text }}

Reply with only a JSON object of this shape (JSON Schema): {{ schema }}
"""

STAGE_CODE = '''//! The throwaway stage `scripts/recipes.py` adds by following ARCHITECTURE.md's recipe: a
//! `question_splits` row for every question whose text is not empty, the rest dropped.

use std::path::Path;

use noisebench_core::{{
    ConfigError, Drops, InputSpec, Inputs, OutputSpec, Question, QuestionSplit, StageContext,
    StageError, StageOutput, StageReport, TableKind, TypedStage, stable_id,
}};
use schemars::JsonSchema;
use serde::Deserialize;

/// Configuration of the `{kind}` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {{
    /// The split every kept question gets.
    #[serde(default = "default_split")]
    pub split: String,
}}

fn default_split() -> String {{
    "test".into()
}}

/// The work, a pure function: rows for the questions with a text, and the drops.
pub fn probe(config: &Config, questions: &[Question], drops: &mut Drops) -> Vec<QuestionSplit> {{
    let mut rows = Vec::new();
    for q in questions {{
        if q.question.trim().is_empty() {{
            drops.add(&q.id, "empty_question", "the question has no text");
            continue;
        }}
        rows.push(QuestionSplit {{
            id: stable_id("probe", &[&q.id]),
            question_id: q.id.clone(),
            kind: q.kind.clone(),
            split: config.split.clone(),
        }});
    }}
    rows
}}

/// The `{kind}` stage.
#[derive(Debug, Clone, Copy, Default)]
pub struct {struct};

impl TypedStage for {struct} {{
    type Config = Config;
    const KIND: &'static str = "{kind}";
    const VERSION: u32 = 1;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {{
        vec![InputSpec::required("questions", TableKind::Questions)]
    }}

    fn outputs(&self) -> Vec<OutputSpec> {{
        vec![OutputSpec::new("question_splits", TableKind::QuestionSplits)]
    }}

    fn validate(&self, c: &Config, _root: &Path) -> Result<(), ConfigError> {{
        if c.split != "test" && c.split != "train" {{
            return Err(ConfigError::new("split", "must be `test` or `train`"));
        }}
        Ok(())
    }}

    fn run(&self, c: &Config, mut inputs: Inputs, ctx: &StageContext) -> Result<StageOutput, StageError> {{
        self.validate(c, &ctx.root)?;
        let questions: Vec<Question> = inputs.take("questions")?;
        let mut drops = Drops::new(&ctx.stage_id);
        let rows = probe(c, &questions, &mut drops);
        let report = StageReport {{
            items_in: questions.len() as u64,
            items_out: rows.len() as u64,
            drops: drops.into_records(),
        }};
        Ok(StageOutput::new(report).with_table("question_splits", rows))
    }}
}}
'''


def edit(path, old_pattern, new, what):
    text = path.read_text()
    changed, n = re.subn(old_pattern, new, text, count=1, flags=re.M | re.S)
    if n != 1:
        fail(f"{path}: cannot {what} (no match for {old_pattern!r})")
    path.write_text(changed)


def task_steps(root, place):
    """The step of the LLM task recipe for one place (a path with `<crate>`/`<name>` filled)."""
    path = root / place
    fields = dict(struct=TASK_STRUCT, name=VALUES["<name>"])
    if place.endswith(".md") and "prompts" in place:
        path.write_text(PROMPT)
    elif path.suffix == ".rs" and path.exists() and "pub const TASKS" in path.read_text():
        with path.open("a") as f:
            f.write(TASK_CODE.format(**fields))
        edit(path, r"(pub const TASKS: &\[TaskInfo\] = &\[\n)", rf"\1    TaskInfo::of::<{TASK_STRUCT}>(),\n",
             "list the task in the stage's TASKS")
    else:
        fail(f"the LLM task recipe names `{place}`, for which this test has no step")


def stage_steps(root, place, demo_counts):
    """The step of the stage recipe for one place."""
    path = root / place
    module = VALUES["<stage>"]
    if place.endswith(f"/{module}.rs") and not path.exists():
        path.write_text(STAGE_CODE.format(kind=STAGE_KIND, struct=STAGE_STRUCT))
    elif path.name == "lib.rs":
        edit(path, r"^(mod splits;\n)", rf"\1mod {module};\npub use {module}::{STAGE_STRUCT};\n",
             "declare the module and re-export the stage at the crate root")
    elif path.suffix == ".rs" and ".register(Arc::new(" in path.read_text():
        edit(path, r"^(\s*)(\.add_checks\()",
             rf"\1.register(Arc::new(noisebench_{STAGE_CRATE}::{STAGE_STRUCT}))\n\1\2",
             "register the stage")
    elif path.suffix == ".toml":
        with path.open("a") as f:
            f.write(f'\n[stages.{STAGE_KIND}]\nkind = "{STAGE_KIND}"\ninputs = {{ questions = "qa-judge" }}\n')
    elif path.suffix == ".rs" and "tests" in path.parts:
        # The demo test's table of (stage, kind, items in, out, dropped): the probe keeps every
        # question the splits stage reads.
        edit(path, r'^(\s*)(\("splits", "splits", (\d+), (\d+), 0\),\n)',
             rf'\1\2\1("{STAGE_KIND}", "{STAGE_KIND}", \3, \4, 0),\n', "assert the stage's counts")
        demo_counts.append(path)
    else:
        fail(f"the stage recipe names `{place}`, for which this test has no step")


FORMAT_MODULE = "recipe_probe"
FORMAT_CODE = '''//! The throwaway release format `scripts/recipes.py` adds by following ARCHITECTURE.md's
//! recipe: each question of a known kind as one JSON line (`id`, `question`, `answer`).

use std::path::Path;

use noisebench_core::{{InputSpec, Question, TableKind}};
use serde::{{Deserialize, Serialize}};

use crate::format::{{BoxError, Exported, ReleaseFormat, TableSource}};

/// The one file it writes.
pub const FILE: &str = "{module}.jsonl";

/// One record, as written and read back.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeRecord {{
    pub id: String,
    pub question: String,
    pub answer: String,
}}

/// The throwaway format.
pub struct RecipeProbe;

impl ReleaseFormat for RecipeProbe {{
    fn name(&self) -> &'static str {{
        "{module}"
    }}
    fn stage_kind(&self) -> &'static str {{
        "export-{module}"
    }}
    fn version(&self) -> u32 {{
        1
    }}
    fn about(&self) -> &'static str {{
        "questions as JSON Lines (the recipes' throwaway format)"
    }}
    fn items(&self) -> TableKind {{
        TableKind::Questions
    }}
    fn inputs(&self) -> Vec<InputSpec> {{
        vec![InputSpec::required("questions", TableKind::Questions)]
    }}
    fn files(&self) -> Vec<&'static str> {{
        vec![FILE]
    }}
    fn export(&self, tables: &dyn TableSource, out: &Path) -> Result<Exported, BoxError> {{
        let questions: Vec<Question> = tables.require()?;
        std::fs::create_dir_all(out)?;
        let (mut text, mut written, mut skipped) = (String::new(), 0, Vec::new());
        for q in &questions {{
            if !crate::rare::MULTI_HOP_KINDS.contains(&q.kind.as_str()) && q.kind != "single_hop" {{
                skipped.push((q.id.clone(), "unknown_kind", format!("kind `{{}}`", q.kind)));
                continue;
            }}
            let record = ProbeRecord {{
                id: q.id.clone(),
                question: q.question.clone(),
                answer: q.answer.clone(),
            }};
            text.push_str(&serde_json::to_string(&record)?);
            text.push('\\n');
            written += 1;
        }}
        std::fs::write(out.join(FILE), text)?;
        Ok(Exported::Records {{ written, skipped }})
    }}
    fn read_back(&self, dir: &Path) -> Result<usize, BoxError> {{
        let text = std::fs::read_to_string(dir.join(FILE))?;
        let mut n = 0;
        for line in text.lines() {{
            serde_json::from_str::<ProbeRecord>(line)?;
            n += 1;
        }}
        Ok(n)
    }}
}}
'''


def format_steps(root, place):
    """The step of the release format recipe for one place."""
    path = root / place
    module = FORMAT_MODULE
    if place.endswith(f"/{module}.rs") and not path.exists():
        path.write_text(FORMAT_CODE.format(module=module))
    elif path.name == "lib.rs":
        edit(path, r"^(pub mod rare_export;\n)", rf"\1pub mod {module};\n", "declare the format's module")
        edit(path, r"(&crate::rare_export::Rare)(,?\s*\])", rf"\1, &crate::{module}::RecipeProbe\2",
             "list the format in formats()")
    else:
        fail(f"the release format recipe names `{place}`, for which this test has no step")


BACKEND_MODULE = "recipe_probe"
BACKEND_STRUCT = "RecipeProbe"
BACKEND_TYPE = "recipe-probe"
BACKEND_ANSWER = '{"items": [{"link": "https://probe.example/one", "name": "One", "text": "first"}, {"link": "https://probe.example/two", "name": "Two", "text": "second"}]}\n'
BACKEND_QUERY = "recipe probe recorded query"

BACKEND_CODE = '''//! The throwaway search backend `scripts/recipes.py` adds by following ARCHITECTURE.md's recipe:
//! `GET <base_url>?q=...` through the run's web layer, answering `{{"items": [{{"link", "name",
//! "text"}}]}}`.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::{{Backend, Parsed, RawHit, SearchFailure, SearchRequest, json_object, text_of}};

#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct {struct}Config {{
    /// The endpoint's URL.
    pub base_url: String,
}}

pub(crate) struct {struct} {{
    base: url::Url,
    web: Arc<noisebench_web::Web>,
}}

impl {struct} {{
    pub fn new(config: &{struct}Config, web: Arc<noisebench_web::Web>) -> Result<Self, String> {{
        let base = url::Url::parse(&config.base_url)
            .map_err(|e| format!("base_url `{{}}`: {{e}}", config.base_url))?;
        Ok(Self {{ base, web }})
    }}
}}

impl Backend for {struct} {{
    fn name(&self) -> &'static str {{
        "{module}"
    }}

    fn search(&self, req: &SearchRequest) -> Result<Parsed, SearchFailure> {{
        let mut url = self.base.clone();
        url.query_pairs_mut().append_pair("q", &req.text);
        let page = self
            .web
            .fetch(url.as_str())
            .map_err(|e| SearchFailure::new(e.code(), format!("{module}: {{e}}")))?;
        let mut parsed = parse(&page.text)?;
        parsed.hits.truncate(req.top_k);
        Ok(parsed)
    }}
}}

/// Parse one answer: `items[]` (`link`, `name`, `text`).
pub fn parse(body: &str) -> Result<Parsed, SearchFailure> {{
    let obj = json_object(body, "{module}")?;
    let Some(Value::Array(items)) = obj.get("items") else {{
        return Err(SearchFailure::malformed("{module}: no `items` list"));
    }};
    let hits = items
        .iter()
        .map(|r| RawHit {{
            url: text_of(r.get("link")),
            title: text_of(r.get("name")),
            snippet: text_of(r.get("text")),
            published: None,
            ..RawHit::default()
        }})
        .collect();
    Ok(Parsed::from_hits(hits))
}}
'''

BACKEND_TEST = '''

/// The throwaway backend `scripts/recipes.py` adds: live against a fake endpoint, then its
/// recorded answer replayed by the `fixture` backend, with the same hits.
#[test]
fn recipe_probe_backend_live_and_recorded() {{
    let answer = std::fs::read_to_string(root().join("fixtures/search/{module}/answer.json")).unwrap();
    let body = answer.clone();
    let served = Served::start_with(move |_| {{
        let body = body.clone();
        Router::new().route(
            "/probe",
            get(move || {{
                let body = body.clone();
                async move {{ respond(200, "application/json", body) }}
            }}),
        )
    }});
    let hits_of = |config: Value| {{
        let dir = tempfile::tempdir().unwrap();
        let mut out = run(
            &SearchStage::new(web()),
            config,
            inputs(vec![("queries", Rows::Queries(vec![query("q_probe", "{query}")]))]),
            &ctx(dir.path(), "search"),
        );
        assert!(out.report.drops.is_empty(), "{{:?}}", out.report.drops);
        let hits: Vec<SearchHit> = table(&mut out, "search_hits");
        hits.into_iter().map(|h| (h.rank, h.url)).collect::<Vec<_>>()
    }};
    let live = hits_of(json!({{"backends": [{{"type": "{type}", "base_url": format!("{{}}/probe", served.url())}}]}}));
    let recorded = hits_of(json!({{"backends": [{{"type": "fixture", "dir": root().join("fixtures/search")}}]}}));
    assert_eq!(
        live,
        vec![(1, "https://probe.example/one".to_string()), (2, "https://probe.example/two".to_string())]
    );
    assert_eq!(recorded, live);
}}
'''


def backend_steps(root, place):
    """The step of the search backend recipe for one place; the files it wrote."""
    path = root / place
    module, struct = BACKEND_MODULE, BACKEND_STRUCT
    if place.endswith(f"/{module}.rs") and not path.exists():
        path.write_text(BACKEND_CODE.format(struct=struct, module=module))
    elif path.name == "mod.rs":
        edit(path, r"^(pub mod searxng;\n)", rf"\1pub mod {module};\n", "declare the backend's module")
    elif path.name == "config.rs":
        edit(path, r"^(use super::searxng::\{Searxng, SearxngConfig\};\n)",
             rf"\1use super::{module}::{{{struct}, {struct}Config}};\n", "import the backend")
        edit(path, r"^(\s*)(Fixture\(FixtureConfig\),\n)",
             rf"\1\2\1/// The throwaway backend of `just recipes`.\n\1{struct}({struct}Config),\n",
             "add the configuration variant")
        edit(path, r'^(\s*)(BackendConfig::Fixture\(_\) => "fixture",\n)',
             rf'\1\2\1BackendConfig::{struct}(_) => "{module}",\n', "name the backend")
        edit(path, r"^(\s*)(BackendConfig::Searxng\(c\) => Box::new\(Searxng::new\(c, web.clone\(\)\).map_err\(cfg\)\?\),\n)",
             rf"\1\2\1BackendConfig::{struct}(c) => Box::new({struct}::new(c, web.clone()).map_err(cfg)?),\n",
             "build the backend")
        edit(path, r"^(\s*)(\| BackendConfig::Searxng\(_\) => \{\}\n)",
             rf"\1| BackendConfig::{struct}(_)\n\1\2", "check the backend")
    elif path.name == "fixture.rs":
        edit(path, r'^(pub const FORMATS: &\[&str\] = &\[)(.*?)(\];)', rf'\1\2, "{module}"\3',
             "name the fixture format")
        edit(path, r'^(\s*)("reddit" => super::reddit_api::parse\(&body\),\n)',
             rf'\1\2\1"{module}" => super::{module}::parse(&body),\n', "parse the fixture format")
    elif place.rstrip("/").endswith(f"search/{module}"):
        path.mkdir(parents=True, exist_ok=False)
        (path / "answer.json").write_text(BACKEND_ANSWER)
        return [f"{place.rstrip('/')}/answer.json"]
    elif path.name == "index.toml":
        with path.open("a") as f:
            f.write(f'\n[[responses]]\nquery = "{BACKEND_QUERY}"\nformat = "{module}"\nfile = "{module}/answer.json"\n')
    elif path.suffix == ".rs" and "tests" in path.parts and path.exists():
        with path.open("a") as f:
            f.write(BACKEND_TEST.format(module=module, type=BACKEND_TYPE, query=BACKEND_QUERY))
    else:
        fail(f"the search backend recipe names `{place}`, for which this test has no step")
    return [place]


def copy_workspace(dest):
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, check=True, capture_output=True).stdout.decode().split("\0")
    for name in files:
        if not name or name.startswith("fuzz/corpus/") or not (REPO / name).is_file():
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, dest / name)


def changed_files(copy):
    out = set()
    for path in copy.rglob("*"):
        if path.is_file() and "target" not in path.relative_to(copy).parts:
            rel = path.relative_to(copy)
            original = REPO / rel
            if not original.is_file() or original.read_bytes() != path.read_bytes():
                out.add(str(rel))
    return out


def cargo(copy, args, env):
    print(f"recipes: cargo {' '.join(args)}", flush=True)
    started = time.time()
    run = subprocess.run(["cargo", *args], cwd=copy, env=env, capture_output=True, text=True)
    print(f"recipes:   {time.time() - started:.0f} s", flush=True)
    if run.returncode != 0:
        fail(f"cargo {' '.join(args)} failed in the copy:\n{run.stdout}\n{run.stderr}")
    return run.stdout + run.stderr


def main():
    found = recipes((REPO / "ARCHITECTURE.md").read_text())
    task_places = found.get("An LLM task")
    stage_places = found.get("A stage")
    backend_places = found.get("A search backend")
    format_places = found.get("A release format")
    if not task_places or not stage_places or not backend_places or not format_places:
        fail(f"ARCHITECTURE.md's LLM task, stage, release format and search backend recipes need a `Places:` sentence: {found}")
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="noisebench-recipes-") as tmp:
        copy = Path(tmp)
        copy_workspace(copy)
        expected = set()
        VALUES["<crate>"] = TASK_CRATE
        for place in task_places:
            filled = fill(place)
            task_steps(copy, filled)
            expected.add(filled)
        VALUES["<crate>"] = STAGE_CRATE
        demo_tests = []
        for place in stage_places:
            filled = fill(place)
            stage_steps(copy, filled, demo_tests)
            expected.add(filled)
        VALUES["<name>"] = FORMAT_MODULE
        for place in format_places:
            filled = fill(place)
            format_steps(copy, filled)
            expected.add(filled)
        VALUES["<name>"] = BACKEND_MODULE
        for place in backend_places:
            expected.update(backend_steps(copy, fill(place)))
        changed = changed_files(copy)
        if changed != expected:
            fail(f"the copy changed {sorted(changed)}, the recipes name {sorted(expected)}")
        print(f"recipes: followed the recipes, changing {sorted(changed)}", flush=True)
        env = dict(os.environ)
        env.setdefault("CARGO_TARGET_DIR", str(REPO / "target"))
        test_targets = []
        for path in demo_tests:
            under = path.relative_to(copy / "crates/cli/tests").parts
            test_targets += ["--test", Path(under[0]).stem]
        cargo(copy, ["check", "--quiet", "-p", f"noisebench-{TASK_CRATE}", "-p", f"noisebench-{STAGE_CRATE}",
                     "-p", "noisebench-cli", "--lib", *test_targets], env)
        out = cargo(copy, ["test", "--quiet", "-p", "noisebench-fuzz-targets", "--no-default-features",
                           "--test", "it", "--", "every_task", "--nocapture"], env)
        name = f"{TASK_CRATE}::recipe_probe"
        if f"llm_answer task" not in out or f": {name}\n" not in out:
            fail(f"the fuzz target's replay did not ask the throwaway task {name}:\n{out}")
        out = cargo(copy, ["test", "--quiet", "-p", "noisebench-releases", "--test", "it", "--",
                           "formats::", "--nocapture"], env)
        if f"format {FORMAT_MODULE}:" not in out:
            fail(f"the formats' round trip did not export the throwaway format:\n{out}")
        out = cargo(copy, ["test", "--quiet", "-p", "noisebench-search", "--test", "it", "--",
                           "servers::recipe_probe_backend_live_and_recorded"], env)
        if "1 passed" not in out:
            fail(f"the throwaway backend's test did not run:\n{out}")
    print(f"recipes: the four recipes hold ({time.time() - started:.0f} s)")


def fill(place):
    for key, value in VALUES.items():
        place = place.replace(key, value)
    return place


if __name__ == "__main__":
    main()
