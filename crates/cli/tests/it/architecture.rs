//! The architecture's dependency rules, read from `cargo metadata` so they hold without anyone
//! remembering them: stage crates never depend on each other; only `noisebench-pipeline` links
//! polars; `core` depends on no other crate of ours; test support is never a normal dependency;
//! `releases` (the release formats, used by the export stages and `eval`) depends only on `core`
//! and `text` of ours; `report` depends on `core` alone unless its `read` feature (reading a
//! published version: snapshot, pipeline) is on, so the page builds and tests without polars.
//! Read from the sources: no import circle between a crate's modules (through `crate::`,
//! `super::` and `self::` paths), stages named from their crate's root, every crate in
//! ARCHITECTURE.md's code map (an entry short enough to be a map) and every module in its crate's
//! root doc, no function over 150 lines, one integration-test binary per crate.

use std::collections::BTreeMap;

use serde_json::Value;

/// Our crates that are not stages. Every other `noisebench-*` crate is a stage crate, so a new
/// stage crate is held to the rules without being listed; a new shared crate must be added here.
const LAYERS: &[&str] = &[
    "noisebench-core",
    "noisebench-pipeline",
    "noisebench-snapshot",
    "noisebench-llm",
    "noisebench-web",
    "noisebench-text",
    "noisebench-index",
    "noisebench-report",
    "noisebench-cli",
    // object storage for snapshots, stage folders, the web archive and the LLM cache
    "noisebench-store",
    // a published version as a tagged commit on the Hugging Face Hub, and read back
    "noisebench-hub",
    "noisebench-testkit",
    // fuzz targets over every stage crate's parsers; nothing depends on it
    "noisebench-fuzz-targets",
    // the seed papers' release formats (records, reader, writer); export stages and eval use it
    "noisebench-releases",
];

/// Shared crates a stage crate may use.
const BELOW_STAGES: &[&str] = &[
    "noisebench-core",
    "noisebench-llm",
    "noisebench-web",
    "noisebench-text",
    "noisebench-index",
    "noisebench-releases",
];

/// The only crates of ours `noisebench-releases` may depend on: it sits below the stages.
const BELOW_RELEASES: &[&str] = &["noisebench-core", "noisebench-text"];

/// The only crates of ours `noisebench-report` depends on without its `read` feature.
const BELOW_REPORT: &[&str] = &["noisebench-core"];

struct Dep {
    name: String,
    /// `normal`, `dev` or `build`.
    kind: String,
    /// Only with a feature that turns it on.
    optional: bool,
}

fn workspace() -> BTreeMap<String, Vec<Dep>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| Dep {
                    name: d["name"].as_str().unwrap().to_string(),
                    kind: d["kind"].as_str().unwrap_or("normal").to_string(),
                    optional: d["optional"].as_bool().unwrap_or(false),
                })
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

/// Rule violations of a workspace, one sentence each.
fn violations(crates: &BTreeMap<String, Vec<Dep>>) -> Vec<String> {
    let ours = |n: &str| n.starts_with("noisebench-");
    let stage = |n: &str| ours(n) && !LAYERS.contains(&n);
    let mut found = Vec::new();
    for (name, deps) in crates {
        for dep in deps {
            let d = dep.name.as_str();
            if stage(name) && stage(d) && d != name {
                found.push(format!(
                    "stage crate {name} depends on stage crate {d} ({}); share through core, text or index",
                    dep.kind
                ));
            }
            if stage(name)
                && ours(d)
                && !stage(d)
                && !BELOW_STAGES.contains(&d)
                && dep.kind == "normal"
                && d != "noisebench-testkit"
            {
                found.push(format!(
                    "stage crate {name} depends on {d}, which sits above the stages"
                ));
            }
            if (d == "polars" || d.starts_with("polars-")) && name != "noisebench-pipeline" {
                found.push(format!(
                    "{name} depends on {d} ({}); only noisebench-pipeline links polars",
                    dep.kind
                ));
            }
            if name == "noisebench-releases"
                && ours(d)
                && !BELOW_RELEASES.contains(&d)
                && d != "noisebench-testkit"
            {
                found.push(format!(
                    "noisebench-releases depends on {d} ({}); release formats use only core and text",
                    dep.kind
                ));
            }
            if name == "noisebench-report"
                && ours(d)
                && !BELOW_REPORT.contains(&d)
                && dep.kind == "normal"
                && !dep.optional
            {
                found.push(format!(
                    "noisebench-report depends on {d} without its `read` feature; the page builds from core alone"
                ));
            }
            if name == "noisebench-core" && ours(d) {
                found.push(format!(
                    "noisebench-core depends on {d}; core depends on none of ours"
                ));
            }
            if d == "noisebench-testkit" && dep.kind != "dev" {
                found.push(format!(
                    "{name} has noisebench-testkit as a {} dependency; it is test support only",
                    dep.kind
                ));
            }
        }
    }
    found
}

#[test]
fn the_workspace_keeps_its_dependency_rules() {
    let crates = workspace();
    assert!(
        crates.contains_key("noisebench-pipeline"),
        "{:?}",
        crates.keys()
    );
    let found = violations(&crates);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_rules_catch_what_they_are_for() {
    let dep = |name: &str, kind: &str| Dep {
        name: name.into(),
        kind: kind.into(),
        optional: false,
    };
    let mut crates = BTreeMap::new();
    crates.insert(
        "noisebench-kg".to_string(),
        vec![
            dep("noisebench-label", "normal"),
            dep("noisebench-text", "normal"),
        ],
    );
    crates.insert(
        "noisebench-snapshot".to_string(),
        vec![dep("polars", "normal")],
    );
    crates.insert(
        "noisebench-qa".to_string(),
        vec![dep("noisebench-pipeline", "normal")],
    );
    crates.insert(
        "noisebench-core".to_string(),
        vec![dep("noisebench-llm", "normal")],
    );
    crates.insert(
        "noisebench-eval".to_string(),
        vec![dep("noisebench-testkit", "normal")],
    );
    crates.insert(
        "noisebench-releases".to_string(),
        vec![
            dep("noisebench-label", "normal"),
            dep("noisebench-text", "normal"),
        ],
    );
    crates.insert(
        "noisebench-label".to_string(),
        vec![dep("noisebench-releases", "normal")],
    );
    crates.insert(
        "noisebench-report".to_string(),
        vec![
            dep("noisebench-snapshot", "normal"),
            Dep {
                optional: true,
                ..dep("noisebench-pipeline", "normal")
            },
        ],
    );
    let found = violations(&crates).join("\n");
    for expected in [
        "noisebench-report depends on noisebench-snapshot without its `read` feature",
        "noisebench-releases depends on noisebench-label",
        "stage crate noisebench-kg depends on stage crate noisebench-label",
        "noisebench-snapshot depends on polars",
        "stage crate noisebench-qa depends on noisebench-pipeline",
        "noisebench-core depends on noisebench-llm",
        "noisebench-eval has noisebench-testkit as a normal dependency",
    ] {
        assert!(found.contains(expected), "{expected:?} not in\n{found}");
    }
    assert!(!found.contains("noisebench-text"), "{found}");
    assert!(
        !found.contains("noisebench-report depends on noisebench-pipeline"),
        "{found}"
    );
    // A stage crate may use the release formats.
    assert!(!found.contains("depends on noisebench-releases"), "{found}");
}

/// A module's imports: the modules it names, by name (`scrape::config`).
type Graph = BTreeMap<String, std::collections::BTreeSet<String>>;

/// A source file's module path from its path parts under `src/`: `scrape/config.rs` is
/// `scrape::config`, `systems/mod.rs` is `systems`, `lib.rs` and `main.rs` the crate root (none).
fn module_of(parts: &[String]) -> Vec<String> {
    let (file, dirs) = parts.split_last().expect("a file name");
    let stem = file.trim_end_matches(".rs");
    let mut module = dirs.to_vec();
    let root = dirs.is_empty() && (stem == "lib" || stem == "main");
    if stem != "mod" && !root {
        module.push(stem.to_string());
    }
    module
}

/// The import graphs of one crate from its source files (path parts under `src/`, text; `bin/`
/// left out: each is a crate root of its own). Every `crate::`, `super::` and `self::` path a
/// module names outside its tests and comments ([`module_paths`]) is resolved to the longest
/// module it names. The first graph joins modules (`scrape::config -> scrape::filters`), leaving
/// out edges between a module and its ancestors (a parent declares and re-exports its children,
/// a child may use its parent's items: one unit); the second joins the top-level modules
/// (`scrape -> dates`).
fn module_graphs(files: &[(Vec<String>, String)]) -> (Graph, Graph) {
    let modules: std::collections::BTreeSet<Vec<String>> = files
        .iter()
        .map(|(parts, _)| module_of(parts))
        .filter(|m| !m.is_empty())
        .collect();
    let (mut nested, mut top) = (Graph::new(), Graph::new());
    for (parts, text) in files {
        let from = module_of(parts);
        if from.is_empty() || parts[0] == "bin" {
            continue;
        }
        let name = from.join("::");
        nested.entry(name.clone()).or_default();
        top.entry(from[0].clone()).or_default();
        for path in module_paths(text, &from) {
            let Some(to) = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains(p))
            else {
                continue;
            };
            if to[0] != from[0] {
                top.entry(from[0].clone())
                    .or_default()
                    .insert(to[0].clone());
            }
            if !to.starts_with(&from) && !from.starts_with(&to) {
                nested
                    .entry(name.clone())
                    .or_default()
                    .insert(to.join("::"));
            }
        }
    }
    (nested, top)
}

/// Every crate's import graphs ([`module_graphs`]), read from `crates/*/src`.
fn module_imports() -> BTreeMap<String, (Graph, Graph)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    crate_files(&root)
        .into_iter()
        .map(|(name, files)| {
            let src = root.join("crates").join(&name).join("src");
            let files: Vec<(Vec<String>, String)> = files
                .into_iter()
                .map(|parts| {
                    let text = std::fs::read_to_string(src.join(parts.join("/"))).unwrap();
                    (parts, text)
                })
                .collect();
            (name, module_graphs(&files))
        })
        .collect()
}

/// The paths a module names through `crate::`, `super::` (repeated) and `self::`, made absolute
/// from the crate root (`module` is the naming module's path) and split into segments, group
/// by group (`super::{a, b::{C, D}}`), leaving out comments and everything from the first
/// `#[cfg(test)]` on. Item names stay at the end of a path: the caller takes the longest module.
fn module_paths(text: &str, module: &[String]) -> std::collections::BTreeSet<Vec<String>> {
    let code: String = text
        .split("#[cfg(test)]")
        .next()
        .unwrap_or("")
        .lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = std::collections::BTreeSet::new();
    for keyword in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(keyword) {
            // `noisebench_core::` is another crate; the second `super::` of `super::super::` was
            // read with the first.
            if code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            {
                continue;
            }
            let mut base = match keyword {
                "crate::" => Vec::new(),
                "self::" => module.to_vec(),
                _ => module[..module.len().saturating_sub(1)].to_vec(),
            };
            let mut rest = &code[at + keyword.len()..];
            if keyword == "super::" {
                while let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                }
            }
            let mut paths = Vec::new();
            use_tree(rest.as_bytes(), &mut 0, &base, &mut paths);
            found.extend(paths);
        }
    }
    found
}

/// The paths of the use tree at `s[*at..]` under `prefix` (`a::b::{c, d::{E, self}}` gives
/// `a::b::c`, `a::b::d::E`, `a::b::d`), into `out`; `*at` ends after it.
fn use_tree(s: &[u8], at: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let skip_space = |at: &mut usize| {
        while *at < s.len() && s[*at].is_ascii_whitespace() {
            *at += 1;
        }
    };
    let mut path = prefix.to_vec();
    loop {
        skip_space(at);
        if *at < s.len() && s[*at] == b'{' {
            *at += 1;
            loop {
                skip_space(at);
                if *at >= s.len() || s[*at] == b'}' {
                    *at += 1;
                    return;
                }
                use_tree(s, at, &path, out);
                // What follows a path in a group (`as name`) up to its comma or brace.
                while *at < s.len() && s[*at] != b',' && s[*at] != b'}' {
                    *at += 1;
                }
                if *at < s.len() && s[*at] == b',' {
                    *at += 1;
                }
            }
        }
        let start = *at;
        while *at < s.len() && (s[*at].is_ascii_alphanumeric() || s[*at] == b'_') {
            *at += 1;
        }
        let ident = String::from_utf8_lossy(&s[start..*at]).into_owned();
        if ident.is_empty() {
            break;
        }
        if ident != "self" {
            path.push(ident);
        }
        if s[*at..].starts_with(b"::") {
            *at += 2;
        } else {
            break;
        }
    }
    if !path.is_empty() {
        out.push(path);
    }
}

/// The import circles of one crate's modules: each strongly connected set of two or more,
/// sorted.
fn circles(modules: &BTreeMap<String, std::collections::BTreeSet<String>>) -> Vec<Vec<String>> {
    // Reachability by search from each module; a circle is a set of modules that reach each
    // other (crates have a few dozen modules at most).
    let reach = |from: &str| {
        let mut seen = std::collections::BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for next in modules.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, std::collections::BTreeSet<String>> =
        modules.keys().map(|m| (m, reach(m))).collect();
    let mut found: std::collections::BTreeSet<Vec<String>> = std::collections::BTreeSet::new();
    for (m, r) in &reached {
        if !r.contains(*m) {
            continue;
        }
        let circle: Vec<String> = r
            .iter()
            .filter(|o| reached.get(o).is_some_and(|back| back.contains(*m)))
            .cloned()
            .collect();
        if circle.len() > 1 {
            found.insert(circle);
        }
    }
    found.into_iter().collect()
}

/// Import circles tolerated while they are being removed, each by moving one item to a leaf
/// module: none today. A circle fixed must leave this list (the test says so), and no new one
/// may appear.
const KNOWN_CIRCLES: &[(&str, &[&str])] = &[];

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    let imports = module_imports();
    assert!(
        imports
            .get("claims")
            .is_some_and(|(nested, _)| nested.contains_key("scrape::config")),
        "{:?}",
        imports.keys()
    );
    for (krate, (nested, top)) in imports {
        let mut of_crate: std::collections::BTreeSet<Vec<String>> =
            circles(&nested).into_iter().collect();
        of_crate.extend(circles(&top));
        for circle in of_crate {
            found.push((krate.clone(), circle));
        }
    }
    let known: Vec<(String, Vec<String>)> = KNOWN_CIRCLES
        .iter()
        .map(|(k, c)| (k.to_string(), c.iter().map(|s| s.to_string()).collect()))
        .collect();
    let new: Vec<String> = found
        .iter()
        .filter(|f| !known.contains(f))
        .map(|(k, c)| format!("{k}: {}", c.join(" <-> ")))
        .collect();
    assert!(
        new.is_empty(),
        "modules that import each other (move the shared item to a module both use):\n{}",
        new.join("\n")
    );
    let fixed: Vec<String> = known
        .iter()
        .filter(|k| !found.contains(k))
        .map(|(k, c)| format!("{k}: {}", c.join(" <-> ")))
        .collect();
    assert!(
        fixed.is_empty(),
        "fixed, so remove from KNOWN_CIRCLES: {}",
        fixed.join("; ")
    );
}

#[test]
fn the_circle_check_finds_a_circle_and_reads_paths() {
    let strings = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
    assert_eq!(
        module_paths(
            "use crate::a::X;\nuse crate::{b, c::{Y, d::Z as W}};\n// crate::d\n\
             noisebench_core::e();\nuse super::f::G;\nself::g::h();\nsuper::super::i::J;\n\
             pub use self::k::{self, L};\n#[cfg(test)]\nuse crate::m;",
            &strings(&["p", "q"])
        ),
        [
            &["a", "X"][..],
            &["b"],
            &["c", "Y"],
            &["c", "d", "Z"],
            &["p", "f", "G"],
            &["p", "q", "g", "h"],
            &["i", "J"],
            &["p", "q", "k"],
            &["p", "q", "k", "L"],
        ]
        .iter()
        .map(|p| strings(p))
        .collect()
    );
    let modules: Graph = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, used)| (m.to_string(), used.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(circles(&modules), vec![vec!["a", "b", "c"]]);
}

/// Two sibling modules that import each other through their parent (`super::`) are a circle,
/// as modules of two top levels that do through `crate::`; a parent and the child it declares
/// and re-exports (`self::`), which uses the parent's items, are not.
#[test]
fn the_circle_check_finds_a_circle_through_super() {
    let files: Vec<(Vec<String>, String)> = [
        ("lib.rs", "mod dates;\nmod scrape;\n"),
        (
            "scrape.rs",
            "mod config;\nmod filters;\npub use self::config::Config;\npub struct Page;\n",
        ),
        ("scrape/config.rs", "use super::filters::{slug, rating_key};\n"),
        (
            "scrape/filters.rs",
            "use super::config::Resolved;\nuse super::Page;\nfn f() { super::super::dates::parse(); }\n",
        ),
        ("dates.rs", "pub fn parse() {}\n"),
    ]
    .into_iter()
    .map(|(p, t)| (p.split('/').map(String::from).collect(), t.to_string()))
    .collect();
    let (nested, top) = module_graphs(&files);
    assert_eq!(
        circles(&nested),
        vec![vec!["scrape::config", "scrape::filters"]]
    );
    assert!(nested["scrape::filters"].contains("dates"), "{nested:?}");
    assert!(circles(&top).is_empty(), "{top:?}");
    // A path back from `dates` closes a circle of the top levels too.
    let mut files = files;
    files[4].1 = "use crate::scrape::Config;\npub fn parse() {}\n".into();
    let (_, top) = module_graphs(&files);
    assert_eq!(circles(&top), vec![vec!["dates", "scrape"]]);
}

/// Whether `name` is a stage's or a configuration's type name (`TripletsStage`, `GraphConfig`).
fn is_stage_type(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && (name.ends_with("Stage") || name.ends_with("Config"))
}

/// Where the path expression starting at byte `i` of `s` ends (`a::b::C`, `a::{b, c::D}`).
fn path_end(s: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < s.len() {
        match s[i] {
            b'{' => depth += 1,
            b'}' if depth == 0 => return i,
            b'}' => depth -= 1,
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b':' => {}
            b',' | b' ' | b'\n' | b'\t' | b'\r' if depth > 0 => {}
            _ => return i,
        }
        i += 1;
    }
    i
}

/// The stage and configuration type names of a path expression (`triplets::TripletsStage`,
/// `{judge::JudgeStage, X}`) that come after at least one module (`mods` counts those above it).
fn stage_types_below_modules(expr: &str, mods: usize, found: &mut Vec<String>) {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in expr.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&expr[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&expr[start..]);
    for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        if let (Some(open), Some(close)) = (part.find('{'), part.rfind('}')) {
            let head = part[..open].split("::").filter(|s| !s.is_empty()).count();
            stage_types_below_modules(&part[open + 1..close], mods + head, found);
            continue;
        }
        for (k, seg) in part.split("::").filter(|s| !s.is_empty()).enumerate() {
            let name = seg.split_whitespace().next().unwrap_or("");
            if mods + k > 0 && is_stage_type(name) {
                found.push(name.to_string());
            }
        }
    }
}

/// The paths in `text` that name a stage or configuration type of one of `stage_crates`
/// (`noisebench_kg`) through a module of it, except into `own` (the crate whose `src/` the text
/// is): `line: noisebench_kg::...TripletsStage`.
fn module_paths_to_stage_types(text: &str, stage_crates: &[String], own: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for (at, _) in text.match_indices("noisebench_") {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let krate: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let start = at + krate.len();
        if !text[start..].starts_with("::") || krate == own || !stage_crates.contains(&krate) {
            continue;
        }
        let start = start + 2;
        let mut names = Vec::new();
        stage_types_below_modules(&text[start..path_end(bytes, start)], 0, &mut names);
        let line = text[..at].matches('\n').count() + 1;
        found.extend(
            names
                .into_iter()
                .map(|n| format!("{line}: {krate}::...{n}")),
        );
    }
    found
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// One path convention: a stage crate re-exports its stages and configurations at its root,
/// and everything outside its `src/` (the cli's registry, other crates, its own tests and
/// benches, the docs) names them there: `noisebench_kg::TripletsStage`, never through the module
/// that defines it (`triplets::TripletsStage`).
#[test]
fn stages_and_configs_are_named_from_their_crate_root() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut stage_crates = Vec::new();
    let mut files: Vec<(std::path::PathBuf, String)> = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if !dir.join("src").is_dir() {
            continue;
        }
        let module = format!("noisebench_{}", name.replace('-', "_"));
        if !LAYERS.contains(&format!("noisebench-{name}").as_str()) {
            stage_crates.push(module.clone());
        }
        for (sub, own) in [
            ("src", module),
            ("tests", String::new()),
            ("benches", String::new()),
        ] {
            let mut found = Vec::new();
            rust_files(&dir.join(sub), &mut found);
            files.extend(found.into_iter().map(|f| (f, own.clone())));
        }
    }
    assert!(
        stage_crates.contains(&"noisebench_kg".to_string()),
        "{stage_crates:?}"
    );
    for doc in ["ARCHITECTURE.md", "README.md"] {
        files.push((root.join(doc), String::new()));
    }
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        files.push((entry.unwrap().path(), String::new()));
    }
    let mut found = Vec::new();
    for (file, own) in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for hit in module_paths_to_stage_types(&text, &stage_crates, own) {
            found.push(format!(
                "{}:{hit}",
                file.strip_prefix(&root).unwrap_or(file).display()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "stages and configurations named through a module of their crate (re-export them at \
         the crate root and name them there):\n{}",
        found.join("\n")
    );
}

/// The longest a crate's entry in ARCHITECTURE.md's code map may be: the map says what a crate
/// is, what others may name of it and its invariant; the walk through its modules is its root
/// doc's.
const MAP_ENTRY_LINES: usize = 12;

/// What the code map and the crates' root docs leave out: every crate folder has an entry in
/// ARCHITECTURE.md's code map (`- `crates/<name>``) of at most `MAP_ENTRY_LINES` lines stating
/// its "Architecture invariant:", and every module file of the crate is named in its root doc
/// (`docs`: the `//!` text of its `lib.rs`), by its path under `src/` (`scrape/config.rs`) or by
/// its name (`config.rs`) beside its folder's (`scrape/`); a folder's `mod.rs` by the folder.
/// `lib.rs` and `main.rs` need no mention.
fn unmapped(
    map: &str,
    crates: &[(String, Vec<Vec<String>>)],
    docs: &BTreeMap<String, String>,
) -> Vec<String> {
    let start = map
        .find("## Code map")
        .expect("ARCHITECTURE.md has a `## Code map` section");
    let section = &map[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let entries: BTreeMap<&str, &str> = section
        .split("\n- `crates/")
        .skip(1)
        .filter_map(|e| Some((e.split('`').next()?, e)))
        .collect();
    let mut out = Vec::new();
    for (name, files) in crates {
        match entries.get(name.as_str()) {
            None => out.push(format!("crate {name}: no entry")),
            Some(entry) => {
                if !entry.contains("Architecture invariant:") {
                    out.push(format!("crate {name}: no invariant"));
                }
                let lines = entry.trim_end().lines().count();
                if lines > MAP_ENTRY_LINES {
                    out.push(format!(
                        "crate {name}: {lines} lines in the map (at most {MAP_ENTRY_LINES}: \
                         the detail goes to its root doc)"
                    ));
                }
            }
        }
        let doc = docs.get(name).map_or("", String::as_str);
        for parts in files {
            let (file, folders) = parts.split_last().expect("a file name");
            if folders.is_empty() && (file == "lib.rs" || file == "main.rs") {
                continue;
            }
            let named = if file == "mod.rs" {
                doc.contains(&format!("`{}/", folders.join("/")))
            } else {
                doc.contains(&parts.join("/"))
                    || (doc.contains(&format!("`{file}`"))
                        && folders.iter().all(|f| {
                            doc.contains(&format!("{f}/")) || doc.contains(&format!("`{f}.rs`"))
                        }))
            };
            if !named {
                out.push(format!(
                    "crate {name}: {} not in its root doc",
                    parts.join("/")
                ));
            }
        }
    }
    out
}

/// Each crate's root doc: the `//!` lines of its `src/lib.rs` (or `src/main.rs`).
fn root_docs(
    root: &std::path::Path,
    crates: &[(String, Vec<Vec<String>>)],
) -> BTreeMap<String, String> {
    crates
        .iter()
        .map(|(name, _)| {
            let src = root.join("crates").join(name).join("src");
            let text = std::fs::read_to_string(src.join("lib.rs"))
                .or_else(|_| std::fs::read_to_string(src.join("main.rs")))
                .unwrap_or_default();
            let doc: Vec<&str> = text
                .lines()
                .take_while(|l| l.starts_with("//!"))
                .map(|l| l.trim_start_matches("//!"))
                .collect();
            (name.clone(), doc.join("\n"))
        })
        .collect()
}

/// Every crate folder and its `src/**/*.rs` files, as path parts under `src/`.
fn crate_files(root: &std::path::Path) -> Vec<(String, Vec<Vec<String>>)> {
    fn walk(dir: &std::path::Path, at: &[String], out: &mut Vec<Vec<String>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let mut parts = at.to_vec();
            parts.push(name.clone());
            if path.is_dir() {
                walk(&path, &parts, out);
            } else if name.ends_with(".rs") {
                out.push(parts);
            }
        }
    }
    let mut crates = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let path = entry.unwrap().path();
        if path.join("Cargo.toml").is_file() {
            let mut files = Vec::new();
            walk(&path.join("src"), &[], &mut files);
            files.sort();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            crates.push((name, files));
        }
    }
    crates.sort();
    crates
}

#[test]
fn the_code_map_names_every_crate_and_module() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let crates = crate_files(&root);
    assert!(crates.len() >= 20, "{crates:?}");
    let missing = unmapped(&map, &crates, &root_docs(&root, &crates));
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map or a crate's root doc leaves out: {missing:#?}"
    );
}

#[test]
fn the_path_check_finds_module_paths_to_stages() {
    let crates = ["noisebench_aa".to_string(), "noisebench_bb".to_string()];
    let text = "use noisebench_aa::triplets::TripletsStage;\n\
        use noisebench_aa::{GraphStage, patterns::{PatternsConfig, mine}};\n\
        let s = noisebench_bb::judge::JudgeStage::new(llm);\n\
        use noisebench_bb::{JudgeConfig, splits::assign};\n\
        noisebench_aa::TripletsStage::new(llm);\n\
        use noisebench_core::model::CoreConfig;";
    assert_eq!(
        module_paths_to_stage_types(text, &crates, ""),
        [
            "1: noisebench_aa::...TripletsStage",
            "2: noisebench_aa::...PatternsConfig",
            "3: noisebench_bb::...JudgeStage",
        ]
    );
    // Inside its own crate a module path is fine. (Crates `aa` and `bb` do not exist, so the
    // workspace check does not read these lines as paths.)
    assert!(module_paths_to_stage_types(text, &crates, "noisebench_aa").len() == 1);
}

#[test]
fn the_code_map_check_finds_what_is_left_out() {
    let map = "## Code map\n\n- `crates/a` (`a`): what a is.\n  Architecture invariant: none.\n\
               - `crates/b` (`b`): nothing.\n  Invariant: unlabelled.\n\
               - `crates/d` (`d`): a manual.\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n\
               Architecture invariant: none.\n\n## Next\n- `crates/c`: `z.rs`. Invariant.\n";
    let files = |paths: &[&str]| -> Vec<Vec<String>> {
        paths
            .iter()
            .map(|p| p.split('/').map(str::to_string).collect())
            .collect()
    };
    let crates = vec![
        (
            "a".to_string(),
            files(&["lib.rs", "x.rs", "scrape/y.rs", "scrape/w.rs", "q/mod.rs"]),
        ),
        ("b".to_string(), files(&["main.rs"])),
        ("c".to_string(), files(&["z.rs"])),
        ("d".to_string(), files(&["lib.rs"])),
    ];
    let docs: BTreeMap<String, String> =
        [("a", " `x.rs` and `scrape/`: `y.rs`."), ("c", " `z.rs`")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    assert_eq!(
        unmapped(map, &crates, &docs),
        [
            "crate a: scrape/w.rs not in its root doc",
            "crate a: q/mod.rs not in its root doc",
            "crate b: no invariant",
            "crate c: no entry",
            "crate d: 13 lines in the map (at most 12: the detail goes to its root doc)",
        ]
    );
}

/// What breaks "one integration-test binary per crate" (`tests/it/main.rs`, a module per
/// concern; each binary links the whole dependency tree again): every other binary Cargo builds
/// from a crate's `tests/` (`tests/<name>.rs`, `tests/<dir>/main.rs`; `files` are paths under
/// `tests/`), unless the crate's `tests/it/main.rs` (`it_main`) says "`tests/<name>.rs` stays its
/// own binary" and why (a process-wide log capture needs a process of its own).
fn extra_test_binaries(krate: &str, files: &[String], it_main: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for file in files {
        let parts: Vec<&str> = file.split('/').collect();
        let binary = match parts.as_slice() {
            [name] => name.ends_with(".rs"),
            [_, "main.rs"] => true,
            _ => false,
        };
        let excused =
            it_main.is_some_and(|m| m.contains(&format!("`tests/{file}` stays its own binary")));
        if binary && file != "it/main.rs" && !excused {
            out.push(format!(
                "crate {krate}: tests/{file} is an integration-test binary beside tests/it/main.rs \
                 (make it a module of tests/it/)"
            ));
        }
    }
    out
}

#[test]
fn every_crate_has_one_integration_test_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    for (name, _) in crate_files(&root) {
        let tests = root.join("crates").join(&name).join("tests");
        let mut paths = Vec::new();
        rust_files(&tests, &mut paths);
        let files: Vec<String> = paths
            .iter()
            .map(|p| {
                let rel = p.strip_prefix(&tests).unwrap();
                rel.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect();
        let it_main = std::fs::read_to_string(tests.join("it/main.rs")).ok();
        found.extend(extra_test_binaries(&name, &files, it_main.as_deref()));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_test_binary_check_finds_a_second_binary() {
    let files: Vec<String> = [
        "it/main.rs",
        "it/common/mod.rs",
        "it/stage.rs",
        "retrieval.rs",
        "secrets.rs",
        "bench/main.rs",
    ]
    .map(String::from)
    .into();
    let it_main = "//! One binary.\n//! `tests/secrets.rs` stays its own binary: it installs a \
                   process-wide log capture.\nmod common;\nmod stage;\n";
    let found = extra_test_binaries("c", &files, Some(it_main));
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].starts_with("crate c: tests/retrieval.rs is"),
        "{found:#?}"
    );
    assert!(
        found[1].starts_with("crate c: tests/bench/main.rs is"),
        "{found:#?}"
    );
    // Without the reason, the log-capture binary is a second binary too; a lone `tests/x.rs`
    // is not the one binary either.
    assert_eq!(extra_test_binaries("c", &files, None).len(), 3);
    assert_eq!(
        extra_test_binaries("d", &["retrieval.rs".to_string()], None).len(),
        1
    );
}

/// The longest a non-test function may be, in lines from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 150;

/// `text` with comments, string and char literals blanked to spaces (newlines kept), so braces
/// and keywords found in what is left are code.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest.
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r')))
            && (i == 0 || !ident(chars[i - 1]))
            && {
                let start = if c == 'b' { i + 2 } else { i + 1 };
                let hashes = chars[start..].iter().take_while(|&&h| h == '#').count();
                chars.get(start + hashes) == Some(&'"')
            }
        {
            // A raw string: r"..", r#".."#, br"..".
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[start..].iter().take_while(|&&h| h == '#').count();
            let body = start + hashes + 1;
            let mut j = body;
            while j < chars.len() {
                if chars[j] == '"'
                    && chars[j + 1..].iter().take(hashes).all(|&h| h == '#')
                    && chars[j + 1..].len() >= hashes
                {
                    break;
                }
                j += 1;
            }
            let end = (j + 1 + hashes).min(chars.len());
            for &ch in &chars[i..end] {
                blank(&mut out, ch);
            }
            i = end;
        } else if c == '"' {
            blank(&mut out, c);
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let skip = if chars[i] == '\\' { 2 } else { 1 };
                for &ch in chars.iter().skip(i).take(skip) {
                    blank(&mut out, ch);
                }
                i += skip;
            }
            if i < chars.len() {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\u{..}'); a lone quote is a lifetime or label.
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '\'' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            for &ch in &chars[i..end] {
                blank(&mut out, ch);
            }
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The index of the brace closing the one opened at `open` in `code`.
fn closing_brace(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (at, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Where the item starting at `from` opens its body (`{`), or `None` if it ends at a `;` first
/// (a declaration without a body); brackets and parentheses may hold `;` (`[u8; 4]`).
fn body_start(code: &[u8], from: usize) -> Option<usize> {
    let mut nesting = 0i32;
    for (at, &b) in code.iter().enumerate().skip(from) {
        match b {
            b'(' | b'[' => nesting += 1,
            b')' | b']' => nesting -= 1,
            b'{' if nesting == 0 => return Some(at),
            b';' if nesting == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The non-test functions of one source file longer than `max` lines: `(name, line, lines)`,
/// and the modules it declares as test-only without a body (`#[cfg(test)] mod x;`).
fn long_functions(text: &str, max: usize) -> (Vec<(String, usize, usize)>, Vec<String>) {
    let code = code_only(text);
    let bytes = code.as_bytes();
    let line_of = |at: usize| bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    // Byte ranges of test-only items: what follows `#[cfg(test)]` up to its closing brace.
    let mut test_ranges = Vec::new();
    let mut test_modules = Vec::new();
    for (at, _) in code.match_indices("#[cfg(test)]") {
        let from = at + "#[cfg(test)]".len();
        match body_start(bytes, from) {
            Some(open) => test_ranges.push(at..closing_brace(bytes, open)),
            None => {
                let decl = code[from..].split(';').next().unwrap_or("");
                let words: Vec<&str> = decl.split_whitespace().collect();
                if let Some(m) = words.iter().position(|w| *w == "mod")
                    && let Some(name) = words.get(m + 1)
                {
                    test_modules.push(name.to_string());
                }
            }
        }
    }
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        if at > 0 && is_ident(bytes[at - 1]) {
            continue;
        }
        let name: String = code[at + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // `fn(u8) -> u8` is a type, not an item.
        if name.is_empty() || test_ranges.iter().any(|r| r.contains(&at)) {
            continue;
        }
        let Some(open) = body_start(bytes, at) else {
            continue;
        };
        let lines = line_of(closing_brace(bytes, open)) - line_of(at) + 1;
        if lines > max {
            found.push((name, line_of(at), lines));
        }
    }
    (found, test_modules)
}

/// Every non-test function of the workspace's crates (`crates/*/src`, leaving out test-only
/// modules) longer than `max` lines, as `path:line fn name: N lines`.
fn workspace_long_functions(max: usize) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            files.push(src);
        }
    }
    let mut skipped: Vec<std::path::PathBuf> = Vec::new();
    let mut found = Vec::new();
    let mut stack = files;
    stack.sort();
    let mut rs = Vec::new();
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                rs.push(path);
            }
        }
    }
    rs.sort();
    // Declarations first, so a `#[cfg(test)] mod x;` skips `x.rs` wherever it sorts.
    let mut results = Vec::new();
    for path in &rs {
        let text = std::fs::read_to_string(path).unwrap();
        let (long, test_modules) = long_functions(&text, max);
        let stem = path.file_stem().unwrap().to_string_lossy();
        let dir = if ["lib", "main", "mod"].contains(&stem.as_ref()) {
            path.parent().unwrap().to_path_buf()
        } else {
            path.with_extension("")
        };
        for m in test_modules {
            skipped.push(dir.join(format!("{m}.rs")));
            skipped.push(dir.join(m));
        }
        results.push((path.clone(), long));
    }
    for (path, long) in results {
        if skipped.iter().any(|s| path.starts_with(s)) {
            continue;
        }
        let shown = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for (name, line, lines) in long {
            found.push(format!("{shown}:{line} fn {name}: {lines} lines"));
        }
    }
    found
}

/// Functions over the limit that another change is splitting, as (file name, function): none
/// today. An entry fixed must leave this list (the test says so), and no other function may
/// pass the limit.
const KNOWN_LONG: &[(&str, &str)] = &[];

#[test]
fn no_function_outside_tests_is_longer_than_150_lines() {
    let found = workspace_long_functions(MAX_FN_LINES);
    let known = |line: &str, (file, name): (&str, &str)| {
        line.split(':')
            .next()
            .is_some_and(|path| path.ends_with(&format!("/{file}")))
            && line.contains(&format!(" fn {name}: "))
    };
    let new: Vec<&String> = found
        .iter()
        .filter(|l| !KNOWN_LONG.iter().any(|k| known(l, *k)))
        .collect();
    assert!(
        new.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them into named steps):\n{}",
        new.iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let fixed: Vec<String> = KNOWN_LONG
        .iter()
        .filter(|k| !found.iter().any(|l| known(l, **k)))
        .map(|(file, name)| format!("{file}: fn {name}"))
        .collect();
    assert!(
        fixed.is_empty(),
        "no longer over {MAX_FN_LINES} lines, so remove from KNOWN_LONG: {}",
        fixed.join("; ")
    );
}

#[test]
fn the_length_check_measures_functions_and_skips_tests() {
    let body = |n: usize| "    let x = 1;\n".repeat(n);
    let text = format!(
        "/// fn in_a_comment() {{\nfn short() {{\n{}}}\n\nfn long<'a>(x: [u8; 4], s: &'a str) -> char {{\n    let s = \"}} fn not_code() {{\";\n    let r = r#\"}}\"#;\n    let c = '}}';\n{}    '{{'\n}}\n\n#[cfg(test)]\nmod tests {{\n    fn also_long() {{\n{}    }}\n}}\n\n#[cfg(test)]\nmod more;\n",
        body(3),
        body(10),
        body(20)
    );
    let (found, test_modules) = long_functions(&text, 10);
    // `long` runs from its `fn` line (8) to its closing brace: the signature, 3 lines of
    // literals, 10 lets, the last expression and the brace.
    assert_eq!(found, vec![("long".to_string(), 8, 16)]);
    assert_eq!(test_modules, vec!["more".to_string()]);
    assert!(long_functions(&text, 16).0.is_empty());
}

/// Calls of the LLM engine's task declaration (`require`) and task fingerprint
/// (`fingerprint_of`) on a handle named `llm` (`self.llm`, `layers.llm`, `tasks.llm()`) or
/// through `Llm::`, as `line: call`, in `text` with comments and strings blanked.
fn task_calls_outside_the_adapter(text: &str) -> Vec<String> {
    let code = code_only(text);
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for method in ["require", "fingerprint_of"] {
        let call = format!(".{method}(");
        let path = format!("Llm::{method}(");
        for (at, _) in code.match_indices(&call) {
            // The receiver's last word, across the line breaks rustfmt puts in a chain.
            let before = code[..at].trim_end();
            let before = before.strip_suffix("()").unwrap_or(before);
            let word_start = before
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            if &before[word_start..] == "llm" {
                let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                found.push(format!("{line}: llm{call}"));
            }
        }
        for (at, _) in code.match_indices(&path) {
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            found.push(format!("{line}: {path}"));
        }
    }
    found
}

/// One list of tasks: a stage (or the evaluation, or the cli) declares its model tasks once,
/// through `noisebench_llm::StageTasks`, which alone calls the engine's `require` and
/// `fingerprint_of`; and no crate outside the stage crates and the engine writes a task list of
/// its own (`TaskInfo::of::<...>()`): the cli and the fuzz targets read the stages' lists.
#[test]
fn model_tasks_are_declared_once_through_the_adapter() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if name == "llm" {
            continue;
        }
        let stage_crate = !LAYERS.contains(&format!("noisebench-{name}").as_str());
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let shown = file
                .strip_prefix(&root)
                .unwrap_or(&file)
                .display()
                .to_string();
            for hit in task_calls_outside_the_adapter(&text) {
                found.push(format!("{shown}:{hit} (declare through StageTasks)"));
            }
            if !stage_crate && code_only(&text).contains("TaskInfo::of::<") {
                found.push(format!(
                    "{shown}: a task list outside the stage crates (read the stages' lists)"
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_adapter_check_finds_direct_calls() {
    let text = "fn validate(&self) {\n    self.llm\n        .require(TASKS)\n}\n\
                fn env(&self) { self.tasks.llm().fingerprint_of(TASKS) }\n\
                fn ok(&self) { self.tasks.require(); source.require()?; self.fingerprint_of(s) }\n\
                // llm.require(&[]) in a comment\n\
                fn path() { Llm::require(&llm, &[]) }\n";
    assert_eq!(
        task_calls_outside_the_adapter(text),
        [
            "3: llm.require(",
            "8: Llm::require(",
            "5: llm.fingerprint_of("
        ]
    );
}

/// The registry is the one list of model tasks: each registered stage's fingerprint covers
/// exactly the tasks it reports (its adapter's list), and the fuzz targets' stage tasks are
/// those of the registry, no more and no fewer (the evaluation's tasks are its own list).
#[test]
fn the_registry_is_the_one_list_of_model_tasks() {
    use std::collections::BTreeSet;
    let web = noisebench_web::Web::new(
        noisebench_web::WebConfig::default(),
        std::path::Path::new("."),
    )
    .unwrap();
    let layers = noisebench_cli::Layers {
        llm: noisebench_llm::Llm::offline(),
        web: std::sync::Arc::new(web),
    };
    let registry = noisebench_cli::registry(&layers);
    let mut registered = BTreeSet::new();
    for kind in registry.kinds() {
        let stage = registry.get(kind).unwrap();
        let tasks: BTreeSet<&str> = stage.tasks().into_iter().collect();
        let env = stage.environment();
        // The fingerprint is the environment, or its `tasks` part beside other settings.
        let fingerprint = if env.get("backend").is_some() {
            &env
        } else {
            &env["tasks"]
        };
        let covered: BTreeSet<&str> = fingerprint["tasks"]
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(covered, tasks, "stage `{kind}`: fingerprint against tasks");
        registered.extend(stage.tasks());
    }
    assert!(registered.contains("stance_url"), "{registered:?}");
    let fuzzed: BTreeSet<&str> = noisebench_fuzz_targets::llm_tasks()
        .iter()
        .filter(|t| !t.name.starts_with("eval::"))
        .map(|t| t.task.name)
        .collect();
    assert_eq!(
        fuzzed, registered,
        "the fuzz targets' stage tasks are not the registry's"
    );
}
