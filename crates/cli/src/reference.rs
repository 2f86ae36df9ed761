//! The configuration reference: the JSON Schema of every stage kind's configuration and of the
//! `[llm]` and `[web]` tables, generated from their Rust types (doc comments become
//! descriptions), and `docs/configuration.md`, rendered from those schemas. `noisebench schemas`
//! writes both beside the table schemas; a test holds the committed files to the code.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use noisebench_llm::{Llm, LlmConfig};
use noisebench_web::{Web, WebConfig};
use serde_json::{Map, Value};

use crate::layers::Layers;
use crate::registry::registry;

/// The names of the pipeline-wide tables, which share `schemas/config/` with the stage kinds
/// (`gate` is each stage's `[stages.<id>.gate]`, `hub` the `[publish.hub]` table: [`heading`]).
const LAYER_TABLES: [&str; 7] = ["llm", "web", "eval", "gates", "gate", "hub", "quality"];

/// The key of a stage kind's configuration schema that lists the model tasks the stage may ask
/// (an extension keyword: validators ignore it).
const TASKS_KEY: &str = "x-model-tasks";

/// A pipeline-wide table's heading: `[llm]`; `[stages.<id>.gate]` for `gate`.
fn heading(name: &str) -> String {
    if name == "gate" {
        "[stages.<id>.gate]".into()
    } else if name == "hub" {
        "[publish.hub]".into()
    } else {
        format!("[{name}]")
    }
}

/// The configuration schemas by name: every registered stage kind, then `llm`, `web`, `eval`
/// (the `[eval]` table of `noisebench eval`'s configuration file), `gates`, `gate` (a
/// stage's own gate), `hub` (`[publish.hub]`) and `quality` (the quality card, docs/quality.md).
pub fn config_schemas() -> Result<BTreeMap<String, Value>> {
    // The registry needs layers to build its stages; an offline `Llm` and a live `Web` without
    // an archive read and write nothing.
    let web = Web::new(WebConfig::default(), Path::new(".")).context("building a web layer")?;
    let layers = Layers {
        llm: Llm::offline(),
        web: Arc::new(web),
    };
    let registry = registry(&layers);
    let mut schemas = BTreeMap::new();
    for kind in registry.kinds() {
        if LAYER_TABLES.contains(&kind) {
            bail!(
                "stage kind `{kind}` would share schemas/config/{kind}.json with the [{kind}] table"
            );
        }
        if let Some(stage) = registry.get(kind) {
            let mut schema = stage.config_schema();
            // The model tasks the stage declared (its adapter's list, read through the
            // registry): the reference's one list of which stage asks what.
            let tasks = stage.tasks();
            if let (false, Value::Object(map)) = (tasks.is_empty(), &mut schema) {
                map.insert(TASKS_KEY.into(), serde_json::json!(tasks));
            }
            schemas.insert(kind.to_string(), ordered(schema));
        }
    }
    let llm = schemars::schema_for!(LlmConfig).to_value();
    schemas.insert("llm".into(), ordered(llm));
    let web = schemars::schema_for!(WebConfig).to_value();
    schemas.insert("web".into(), ordered(web));
    let eval = schemars::schema_for!(noisebench_eval::EvalConfig).to_value();
    schemas.insert("eval".into(), ordered(eval));
    let gates = schemars::schema_for!(noisebench_pipeline::Gates).to_value();
    schemas.insert("gates".into(), ordered(gates));
    let gate = schemars::schema_for!(noisebench_pipeline::StageGate).to_value();
    schemas.insert("gate".into(), ordered(gate));
    let hub = schemars::schema_for!(noisebench_hub::HubConfig).to_value();
    schemas.insert("hub".into(), ordered(hub));
    let quality = schemars::schema_for!(noisebench_quality::QualityConfig).to_value();
    schemas.insert("quality".into(), ordered(quality));
    Ok(schemas)
}

/// A schema with what a reader looks for first on top (`$schema`, `title`, `description`) and
/// its definitions last; the rest in the generator's order.
fn ordered(schema: Value) -> Value {
    let Value::Object(mut rest) = schema else {
        return schema;
    };
    let mut out = Map::new();
    for key in ["$schema", "title", "description"] {
        if let Some(v) = rest.shift_remove(key) {
            out.insert(key.into(), v);
        }
    }
    let defs = rest.shift_remove("$defs");
    out.extend(rest);
    if let Some(defs) = defs {
        out.insert("$defs".into(), defs);
    }
    Value::Object(out)
}

/// Write `<dir>/<name>.json` for every configuration schema (removing `.json` files there that no
/// longer name one: the folder is wholly generated) and the Markdown reference to `doc`.
/// Returns how many schemas were written.
pub fn write_config_reference(dir: &Path, doc: &Path) -> Result<usize> {
    let schemas = config_schemas()?;
    std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    for entry in std::fs::read_dir(dir).with_context(|| dir.display().to_string())? {
        let path = entry?.path();
        let stale = path.extension().is_some_and(|e| e == "json")
            && path
                .file_stem()
                .and_then(|s| s.to_str())
                .is_none_or(|s| !schemas.contains_key(s));
        if stale {
            std::fs::remove_file(&path).with_context(|| path.display().to_string())?;
        }
    }
    for (name, schema) in &schemas {
        let path = dir.join(format!("{name}.json"));
        let json = serde_json::to_string_pretty(schema)? + "\n";
        std::fs::write(&path, json).with_context(|| path.display().to_string())?;
    }
    if let Some(parent) = doc.parent() {
        std::fs::create_dir_all(parent).with_context(|| parent.display().to_string())?;
    }
    std::fs::write(doc, render_markdown(&schemas)).with_context(|| doc.display().to_string())?;
    Ok(schemas.len())
}

/// `docs/configuration.md`: per table, its description and one row per field (nested tables
/// flattened into dotted paths), the layer tables first, then the stage kinds by name.
pub fn render_markdown(schemas: &BTreeMap<String, Value>) -> String {
    let mut md = String::from(
        "# Configuration reference\n\
         \n\
         <!-- Generated by `noisebench schemas` from the configuration types: do not edit. -->\n\
         \n\
         Every setting a pipeline file (`pipelines/*.toml`) takes, generated from the Rust \
         configuration types by `noisebench schemas`, which also writes each table's JSON Schema \
         to `schemas/config/<name>.json` (for editors and validators). Descriptions are the \
         types' doc comments; `cargo test -p noisebench-cli --test it demo::` fails when this file or \
         a schema is stale.\n\
         \n\
         Reading the tables: `exam.enabled` is the field `enabled` of the nested table `exam`; \
         `sources[].path` is the field `path` of each item of the list `sources`; `<name>` is a \
         key of your choosing; `backends[type=google].endpoint` is a field of the items whose \
         `type` is `google`. *required* means the field must be given; a blank default means \
         the field is unset unless given. Unknown fields are refused everywhere.\n\
         \n",
    );
    let layers: Vec<&str> = LAYER_TABLES
        .iter()
        .copied()
        .filter(|n| schemas.contains_key(*n))
        .collect();
    let kinds: Vec<&str> = schemas
        .keys()
        .map(String::as_str)
        .filter(|n| !LAYER_TABLES.contains(n))
        .collect();
    md.push_str(
        "Pipeline-wide tables (`[eval]` is the table of `noisebench eval`'s configuration \
         file, `pipelines/eval/default.toml`, beside its `[llm]`): ",
    );
    md.push_str(&links(&layers, heading));
    md.push_str(".\n\nStage kinds (`[stages.<id>.config]` of a stage of that `kind`): ");
    md.push_str(&links(&kinds, str::to_string));
    md.push_str(".\n\n## Pipeline-wide tables\n");
    for name in layers {
        section(&mut md, &heading(name), name, &schemas[name]);
    }
    md.push_str(
        "\n## Stage kinds\n\
         \n\
         The `config` table of each stage, by the stage's `kind`.\n",
    );
    for name in kinds {
        section(&mut md, name, name, &schemas[name]);
    }
    md
}

/// `[a](#a), [b](#b)`: links to the sections' headings.
fn links(names: &[&str], heading: impl Fn(&str) -> String) -> String {
    names
        .iter()
        .map(|n| format!("[`{}`](#{})", heading(n), anchor(&heading(n))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// GitHub's anchor of a heading: lower case, punctuation other than `-` and `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| {
            if c == ' ' {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

fn section(md: &mut String, heading: &str, file: &str, schema: &Value) {
    let doc = Doc::new(schema);
    md.push_str(&format!("\n### `{heading}`\n\n"));
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        md.push_str(&one_line(d));
        md.push(' ');
    }
    md.push_str(&format!(
        "JSON Schema: [`schemas/config/{file}.json`](../schemas/config/{file}.json).\n\n"
    ));
    if let Some(tasks) = schema.get(TASKS_KEY).and_then(Value::as_array) {
        let names: Vec<String> = tasks
            .iter()
            .filter_map(Value::as_str)
            .map(|t| format!("`{t}`"))
            .collect();
        md.push_str(&format!(
            "Model tasks (the stage's own list; prompts `pipelines/prompts/<task>.md`, see \
             [the LLM layer](llm.md)): {}.\n\n",
            names.join(", ")
        ));
    }
    let mut rows = Vec::new();
    doc.fields("", &doc.flat(schema), None, &mut rows);
    if rows.is_empty() {
        md.push_str("No settings: the table is empty or left out.\n");
        return;
    }
    md.push_str("| Field | Type | Default | Description |\n| --- | --- | --- | --- |\n");
    for r in rows {
        md.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.path,
            cell(&r.ty),
            cell(&r.default),
            cell(&r.description)
        ));
    }
}

/// One row of a section's table.
struct Row {
    path: String,
    ty: String,
    default: String,
    description: String,
}

/// An internally tagged enum's schema (`#[serde(tag = "kind")]`).
struct Tagged {
    /// The field naming the variant.
    tag: String,
    /// Each variant's tag value and resolved schema.
    variants: Vec<(String, Map<String, Value>)>,
}

/// Nested tables are flattened to at most this depth (a guard against recursive types).
const MAX_DEPTH: usize = 8;

/// One schema document: its `$defs`, against which `$ref`s resolve.
struct Doc<'a> {
    defs: Option<&'a Map<String, Value>>,
}

impl<'a> Doc<'a> {
    fn new(root: &'a Value) -> Self {
        Self {
            defs: root.get("$defs").and_then(Value::as_object),
        }
    }

    /// `schema` with its `$ref` resolved and its `allOf` merged (the outer keys win, so a
    /// field's own description and default stay), and a `null` alternative (an `Option`) removed.
    fn flat(&self, schema: &Value) -> Map<String, Value> {
        self.flat_at(schema, 0)
    }

    fn flat_at(&self, schema: &Value, depth: usize) -> Map<String, Value> {
        let Some(obj) = schema.as_object() else {
            return Map::new();
        };
        let mut out = Map::new();
        let merge = |from: Map<String, Value>, out: &mut Map<String, Value>| {
            for (k, v) in from {
                match (k.as_str(), out.get_mut(&k)) {
                    ("properties", Some(Value::Object(have))) => {
                        if let Value::Object(more) = v {
                            for (pk, pv) in more {
                                have.entry(pk).or_insert(pv);
                            }
                        }
                    }
                    ("required", Some(Value::Array(have))) => {
                        if let Value::Array(more) = v {
                            have.extend(more);
                        }
                    }
                    (_, Some(_)) => {}
                    (_, None) => {
                        out.insert(k, v);
                    }
                }
            }
        };
        let mut own = obj.clone();
        let target = own.shift_remove("$ref");
        let all_of = own.shift_remove("allOf");
        merge(own, &mut out);
        if depth < MAX_DEPTH {
            if let Some(name) = target
                .as_ref()
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                && let Some(def) = self.defs.and_then(|d| d.get(name))
            {
                merge(self.flat_at(def, depth + 1), &mut out);
            }
            for part in all_of
                .as_ref()
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                merge(self.flat_at(part, depth + 1), &mut out);
            }
        }
        strip_null(out, |s| self.flat_at(s, depth + 1))
    }

    /// The rows of the fields of an object schema, under `prefix`.
    fn fields(
        &self,
        prefix: &str,
        schema: &Map<String, Value>,
        defaults: Option<&Value>,
        rows: &mut Vec<Row>,
    ) {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (name, prop) in props {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            let flat = self.flat(prop);
            // The enclosing table's default decides (Reddit's `limits` differ from the type's).
            let default = defaults
                .and_then(|d| d.get(name))
                .or_else(|| flat.get("default"));
            let mut description = flat
                .get("description")
                .and_then(Value::as_str)
                .map(one_line)
                .unwrap_or_default();
            for (value, doc) in self.choices(&flat) {
                description.push_str(&format!("<br>`{value}`: {doc}"));
            }
            rows.push(Row {
                path: path.clone(),
                ty: self.type_name(&flat),
                default: if required.contains(&name.as_str()) {
                    "*required*".into()
                } else {
                    default.map(default_text).unwrap_or_default()
                },
                description: description.trim_start_matches("<br>").to_string(),
            });
            if path.matches('.').count() < MAX_DEPTH {
                self.nested(&path, &flat, default, rows);
            }
        }
    }

    /// The rows below a field: its table's fields, its items', its map values', its variants'.
    fn nested(
        &self,
        path: &str,
        schema: &Map<String, Value>,
        default: Option<&Value>,
        rows: &mut Vec<Row>,
    ) {
        if schema.contains_key("properties") {
            self.fields(path, schema, default.filter(|d| d.is_object()), rows);
        } else if let Some(items) = schema.get("items") {
            let items = self.flat(items);
            self.nested(&format!("{path}[]"), &items, None, rows);
        } else if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
            let values = self.flat(values);
            self.nested(&format!("{path}.<name>"), &values, None, rows);
        } else if let Some(Tagged { tag, variants }) = self.tagged(schema) {
            // A list of tagged tables reads `sources[kind=articles]`, not `sources[][kind=...]`.
            let base = path.strip_suffix("[]").unwrap_or(path);
            for (value, variant) in variants {
                let at = format!("{base}[{tag}={value}]");
                rows.push(Row {
                    path: at.clone(),
                    ty: "table".into(),
                    default: String::new(),
                    description: variant
                        .get("description")
                        .and_then(Value::as_str)
                        .map(one_line)
                        .unwrap_or_default(),
                });
                let mut fields = variant.clone();
                if let Some(Value::Object(props)) = fields.get_mut("properties") {
                    props.shift_remove(&tag);
                }
                self.fields(&at, &fields, None, rows);
            }
        }
    }

    /// The alternatives of a schema (`oneOf` or `anyOf`), resolved.
    fn alternatives(&self, schema: &Map<String, Value>) -> Vec<Map<String, Value>> {
        ["oneOf", "anyOf"]
            .iter()
            .filter_map(|k| schema.get(*k).and_then(Value::as_array))
            .flatten()
            .map(|s| self.flat(s))
            .collect()
    }

    /// An internally tagged enum: the tag field and, per variant, its value and schema.
    fn tagged(&self, schema: &Map<String, Value>) -> Option<Tagged> {
        let variants = self.alternatives(schema);
        let first = variants.first()?;
        let tag = first
            .get("properties")?
            .as_object()?
            .iter()
            .find(|(_, p)| p.get("const").is_some())?
            .0
            .clone();
        let mut out = Vec::new();
        for v in variants {
            let value = v.get("properties")?.get(&tag)?.get("const")?;
            out.push((plain(value), v.clone()));
        }
        Some(Tagged { tag, variants: out })
    }

    /// The documented values of an enum whose variants carry doc comments.
    fn choices(&self, schema: &Map<String, Value>) -> Vec<(String, String)> {
        self.alternatives(schema)
            .iter()
            .filter_map(|v| {
                let value = v.get("const")?;
                let doc = v.get("description").and_then(Value::as_str)?;
                Some((plain(value), one_line(doc)))
            })
            .collect()
    }

    /// A short type for the table: `string`, `list of tables`, `` `csv` or `jsonl` ``.
    fn type_name(&self, schema: &Map<String, Value>) -> String {
        if let Some(value) = schema.get("const") {
            return format!("`{}`", plain(value));
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            return or_list(values.iter().map(|v| format!("`{}`", plain(v))).collect());
        }
        let alternatives = self.alternatives(schema);
        if !alternatives.is_empty() {
            if let Some(Tagged { tag, .. }) = self.tagged(schema) {
                return format!("table, by `{tag}`");
            }
            let mut names: Vec<String> = Vec::new();
            for a in &alternatives {
                let name = self.type_name(a);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            return or_list(names);
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => {
                let items = schema
                    .get("items")
                    .map(|i| self.flat(i))
                    .unwrap_or_default();
                match self.type_name(&items).as_str() {
                    "table" => "list of tables".into(),
                    t if t.starts_with("table, by") => format!("list of tables, {}", &t[7..]),
                    t => format!("list of {t}"),
                }
            }
            Some("object") if !schema.contains_key("properties") => {
                match schema.get("additionalProperties").filter(|v| v.is_object()) {
                    Some(values) => {
                        let values = self.flat(values);
                        match self.type_name(&values).as_str() {
                            "table" => "map of tables".into(),
                            t => format!("map of {t}"),
                        }
                    }
                    None => "table".into(),
                }
            }
            Some("object") => "table".into(),
            Some(t) => t.to_string(),
            None if schema.contains_key("properties") => "table".into(),
            None => "any".into(),
        }
    }
}

/// `schema` without a `null` alternative: `{"type": ["string", "null"]}` is a `string`, and an
/// `anyOf` of one schema and `null` is that schema (keeping the outer description and default).
fn strip_null(
    mut schema: Map<String, Value>,
    flat: impl Fn(&Value) -> Map<String, Value>,
) -> Map<String, Value> {
    if let Some(Value::Array(types)) = schema.get("type") {
        let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let ty = match rest.len() {
            1 => rest[0].clone(),
            _ => Value::Array(rest),
        };
        schema.insert("type".into(), ty);
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(alternatives)) = schema.get(key) else {
            continue;
        };
        let is_null = |s: &Value| s.get("type").is_some_and(|t| t == "null");
        if !alternatives.iter().any(is_null) {
            continue;
        }
        let rest: Vec<Value> = alternatives
            .iter()
            .filter(|s| !is_null(s))
            .cloned()
            .collect();
        schema.shift_remove(key);
        if let [one] = rest.as_slice() {
            for (k, v) in flat(one) {
                schema.entry(k).or_insert(v);
            }
        } else {
            schema.insert(key.into(), Value::Array(rest));
        }
    }
    schema
}

/// A value as written in a pipeline file's field: strings without quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A default for the table: TOML-like JSON in a code span; nothing for `null` and for tables
/// (their fields have rows of their own).
fn default_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Object(m) if !m.is_empty() => String::new(),
        other => format!("`{other}`"),
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(mut items: Vec<String>) -> String {
    match items.len() {
        0 => String::new(),
        1 => items.remove(0),
        _ => {
            let last = items.pop().unwrap_or_default();
            format!("{} or {last}", items.join(", "))
        }
    }
}

/// A doc comment as one line of a table cell.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A table cell: pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// A table of options.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, default)]
    struct Inner {
        /// How many.
        n: u32,
        /// Which way.
        way: Way,
    }

    impl Default for Inner {
        fn default() -> Self {
            Self { n: 3, way: Way::Up }
        }
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "kebab-case")]
    enum Way {
        /// Towards the top.
        Up,
        /// Towards the | bottom.
        Down,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
    #[allow(dead_code)] // only its schema is used
    enum Source {
        /// A file.
        File {
            /// Its path.
            path: String,
        },
        /// Nothing.
        Empty {},
    }

    /// The top.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // only its schema is used
    struct Top {
        /// Must be given.
        name: String,
        /// May be left out.
        label: Option<String>,
        /// Nested.
        #[serde(default = "other_inner")]
        inner: Inner,
        /// By name.
        #[serde(default)]
        named: BTreeMap<String, Inner>,
        /// Listed.
        #[serde(default)]
        sources: Vec<Source>,
    }

    fn other_inner() -> Inner {
        Inner {
            n: 7,
            way: Way::Down,
        }
    }

    fn rows_of(schema: &Value) -> Vec<String> {
        let doc = Doc::new(schema);
        let mut rows = Vec::new();
        doc.fields("", &doc.flat(schema), None, &mut rows);
        rows.iter()
            .map(|r| format!("{} | {} | {} | {}", r.path, r.ty, r.default, r.description))
            .collect()
    }

    #[test]
    fn nested_tables_flatten_to_dotted_paths_with_types_defaults_and_docs() {
        let schema = schemars::schema_for!(Top).to_value();
        assert_eq!(
            rows_of(&schema),
            [
                "name | string | *required* | Must be given.",
                "label | string |  | May be left out.",
                "inner | table |  | Nested.",
                // The field's default wins over the type's.
                "inner.n | integer | `7` | How many.",
                "inner.way | `up` or `down` | `\"down\"` | Which way.<br>`up`: Towards the top.<br>`down`: Towards the | bottom.",
                "named | map of tables | `{}` | By name.",
                "named.<name>.n | integer | `3` | How many.",
                "named.<name>.way | `up` or `down` | `\"up\"` | Which way.<br>`up`: Towards the top.<br>`down`: Towards the | bottom.",
                // No default shown: `Source` is not `Serialize`, so schemars cannot write one.
                "sources | list of tables, by `kind` |  | Listed.",
                "sources[kind=file] | table |  | A file.",
                "sources[kind=file].path | string | *required* | Its path.",
                "sources[kind=empty] | table |  | Nothing.",
            ]
        );
    }

    #[test]
    fn the_markdown_escapes_cells_and_ends_with_a_newline() {
        let schemas = BTreeMap::from([
            ("web".to_string(), schemars::schema_for!(Inner).to_value()),
            ("top".to_string(), schemars::schema_for!(Top).to_value()),
        ]);
        let md = render_markdown(&schemas);
        assert!(md.ends_with(" |\n"), "{md}");
        assert!(md.contains("Towards the \\| bottom."), "{md}");
        assert!(md.find("### `[web]`") < md.find("### `top`"), "{md}");
        assert!(md.contains("[`top`](#top)"), "{md}");
        assert!(md.contains("[`[web]`](#web)"), "{md}");
    }
}
