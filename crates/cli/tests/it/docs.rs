//! The docs against the code: the generated command-line reference is fresh; every relative
//! link and anchor in the user docs resolves; every `noisebench <command> --flag` a page names
//! exists (read from the generated reference); every LLM failure and sense reason the code
//! defines is listed in docs/llm.md.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use noisebench_testkit::repo_root;

/// The pages users read: the top-level Markdown files and docs/.
fn pages() -> Vec<PathBuf> {
    let root = repo_root();
    let mut out: Vec<PathBuf> = [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .filter(|p| p.exists())
    .collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(repo_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn committed_cli_reference_matches_the_code() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .arg("schemas")
        .arg(dir.path().join("schemas"))
        .arg("--doc")
        .arg(dir.path().join("configuration.md"))
        .arg("--cli-doc")
        .arg(dir.path().join("cli.md"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The command-line reference, and the drop reasons written beside the configuration
    // reference.
    for name in ["cli.md", "drop-reasons.md"] {
        let now = std::fs::read_to_string(dir.path().join(name)).unwrap();
        let committed = std::fs::read_to_string(repo_root().join("docs").join(name))
            .unwrap_or_else(|_| {
                panic!("docs/{name} is missing: run `noisebench schemas` (`just schemas`)")
            });
        assert_eq!(
            committed, now,
            "docs/{name} is stale: run `noisebench schemas` (`just schemas`)"
        );
    }
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, punctuation other than `-` and `_`
/// dropped; repeats get `-1`, `-2`.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let text = line.trim_start_matches('#').trim();
        let slug: String = text
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => {
                    Some(c.to_lowercase().next().unwrap_or(c))
                }
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

/// The text of a page outside fenced code blocks and inline code spans.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// `(target, anchor)` of every inline link `[text](target#anchor)` in the prose.
fn links(markdown: &str) -> Vec<(String, Option<String>)> {
    let text = prose(markdown);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split_whitespace().next().unwrap_or("");
        rest = &rest[end..];
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        match target.split_once('#') {
            Some((file, anchor)) => out.push((file.to_string(), Some(anchor.to_string()))),
            None => out.push((target.to_string(), None)),
        }
    }
    out
}

#[test]
fn every_link_and_anchor_in_the_docs_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (target, anchor) in links(&text) {
            let file = if target.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(&target)
            };
            if !file.exists() {
                broken.push(format!("{}: {target} does not exist", relative(&page)));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if file.extension().is_some_and(|e| e == "md") {
                let heads = anchors(&std::fs::read_to_string(&file).unwrap());
                if !heads.contains(&anchor) {
                    broken.push(format!(
                        "{}: {target}#{anchor}: no such heading",
                        relative(&page)
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The commands of the generated reference and each one's options (`--flag`), the global ones
/// under the empty path.
fn reference() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(repo_root().join("docs/cli.md")).unwrap();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if line == "## Global options" {
            current = Some(String::new());
        } else if let Some(path) = line
            .strip_prefix("## `noisebench")
            .and_then(|p| p.strip_suffix('`'))
        {
            current = Some(path.trim().to_string());
        }
        let Some(path) = &current else { continue };
        let flags = out.entry(path.clone()).or_default();
        if let Some(arg) = line.strip_prefix("| `--") {
            let name: String = arg
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-')
                .collect();
            flags.insert(format!("--{name}"));
        }
    }
    out
}

/// Every `noisebench <words> --flags` in the code of a page (inline spans and fenced blocks):
/// (the words after `noisebench`, the flags that follow on that span or line).
fn mentions(markdown: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut code = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            code.push(line.to_string());
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1 {
                code.push(span.to_string());
            }
        }
    }
    let mut out = Vec::new();
    for text in code {
        let mut rest = text.as_str();
        while let Some(i) = rest.find("noisebench ") {
            let before = rest[..i].chars().last();
            rest = &rest[i + "noisebench ".len()..];
            // Part of a longer name, or of a quoted string (`title = "noisebench demo"`).
            if before.is_some_and(|c| c.is_alphanumeric() || "-_\"'".contains(c)) {
                continue;
            }
            // The command line ends where the shell or the prose takes over.
            let line = rest
                .split(['|', ';', '#', '&', '>', '('])
                .next()
                .unwrap_or("");
            let mut words = Vec::new();
            let mut flags = Vec::new();
            for token in line.split_whitespace() {
                let token = token.trim_matches(|c: char| "[]{},.:\"'".contains(c));
                if let Some(flag) = token.strip_prefix("--") {
                    let flag = flag.split('=').next().unwrap_or("");
                    if !flag.is_empty() {
                        flags.push(format!("--{flag}"));
                    }
                } else if flags.is_empty() && words.len() < 2 {
                    words.push(token.to_string());
                }
            }
            out.push((words, flags));
        }
    }
    out
}

/// Problems with one mention: an unknown command, or a flag the command does not take.
fn mention_problems(
    reference: &BTreeMap<String, BTreeSet<String>>,
    words: &[String],
    flags: &[String],
) -> Vec<String> {
    let looks_like_command =
        |w: &String| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '-');
    let Some(first) = words.first() else {
        return Vec::new();
    };
    if !looks_like_command(first) {
        return Vec::new();
    }
    let mut path = first.clone();
    if !reference.contains_key(&path) {
        return vec![format!("`noisebench {path}`: no such command")];
    }
    if let Some(second) = words.get(1) {
        let deeper = format!("{path} {second}");
        if reference.contains_key(&deeper) {
            path = deeper;
        }
    }
    let global = &reference[""];
    flags
        .iter()
        .filter(|f| *f != "--help" && *f != "--version")
        .filter(|f| !reference[&path].contains(*f) && !global.contains(*f))
        .map(|f| format!("`noisebench {path}` takes no `{f}`"))
        .collect()
}

#[test]
fn every_command_and_flag_the_docs_name_exists() {
    let reference = reference();
    assert!(
        reference.contains_key("build-snapshot") && reference.contains_key("inspect stage"),
        "docs/cli.md lists no commands: {:?}",
        reference.keys()
    );
    let mut problems = Vec::new();
    for page in pages() {
        // The changelog names what a version had, including what is gone since.
        if page.ends_with("CHANGELOG.md") {
            continue;
        }
        let text = std::fs::read_to_string(&page).unwrap();
        for (words, flags) in mentions(&text) {
            for p in mention_problems(&reference, &words, &flags) {
                problems.push(format!("{}: {p}", relative(&page)));
            }
        }
    }
    problems.dedup();
    assert!(
        problems.is_empty(),
        "the docs name commands or flags the binary does not have:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_docs_checks_catch_what_they_are_for() {
    // Anchors as GitHub makes them, repeats numbered.
    let heads = anchors("# The `run` command\n## Run it\n## Run it\n```\n# not a heading\n```\n");
    assert_eq!(
        heads,
        ["the-run-command", "run-it", "run-it-1"]
            .map(String::from)
            .into()
    );
    // Links outside code only; web links skipped.
    let found = links("[a](b.md#c) `[x](y.md)` [w](https://x.org) [s](#here)");
    assert_eq!(
        found,
        vec![
            ("b.md".to_string(), Some("c".to_string())),
            (String::new(), Some("here".to_string()))
        ]
    );
    // A flag a command lacks, and an unknown command, are found; placeholders are not commands.
    let mut reference: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    reference.insert(String::new(), ["--root".to_string()].into());
    reference.insert("run".into(), ["--force".to_string()].into());
    reference.insert("inspect".into(), BTreeSet::new());
    reference.insert("inspect stage".into(), ["--rows".to_string()].into());
    let page = "`noisebench run STAGE --force --root .` and `noisebench run X --bogus`\n\
                ```\nnoisebench inspect stage labels --rows 3 | head\nnoisebench nope\n\
                noisebench <command> --help\ntitle = \"noisebench demo\"\n```\n";
    let problems: Vec<String> = mentions(page)
        .iter()
        .flat_map(|(w, f)| mention_problems(&reference, w, f))
        .collect();
    assert_eq!(
        problems,
        vec![
            "`noisebench run` takes no `--bogus`".to_string(),
            "`noisebench nope`: no such command".to_string()
        ]
    );
}

/// One of every `LlmError`, so that a new variant (and its reason) must be added here: the match
/// below has no catch-all.
fn every_llm_error() -> Vec<noisebench_llm::LlmError> {
    use noisebench_llm::LlmError as E;
    let all = vec![
        E::BudgetExhausted {
            spent: 1.0,
            max: 1.0,
        },
        E::CacheMiss {
            request_hash: String::new(),
        },
        E::Http {
            endpoint: String::new(),
            status: 400,
            detail: String::new(),
        },
        E::RetriesExhausted {
            attempts: 1,
            last: String::new(),
        },
        E::Unparseable {
            tries: 1,
            detail: String::new(),
        },
        E::Truncated { max_tokens: 1 },
        E::ContextExceeded {
            model: String::new(),
            context: None,
            detail: String::new(),
        },
        E::Senseless(noisebench_llm::Sense::OffTopic.because("")),
        E::BatchRequest {
            batch_id: String::new(),
            detail: String::new(),
        },
        E::BatchTimeout {
            batch_id: String::new(),
            waited_secs: 0.0,
        },
        E::Prompt(String::new()),
        E::Embedding(String::new()),
        E::Config(String::new()),
        E::Cache(String::new()),
        E::Internal(String::new()),
    ];
    for e in &all {
        match e {
            E::BudgetExhausted { .. }
            | E::CacheMiss { .. }
            | E::Http { .. }
            | E::RetriesExhausted { .. }
            | E::Unparseable { .. }
            | E::Truncated { .. }
            | E::ContextExceeded { .. }
            | E::Senseless(_)
            | E::BatchRequest { .. }
            | E::BatchTimeout { .. }
            | E::Prompt(_)
            | E::Embedding(_)
            | E::Config(_)
            | E::Cache(_)
            | E::Internal(_) => {}
        }
    }
    all
}

#[test]
fn every_llm_failure_and_sense_reason_is_in_the_llm_docs() {
    let text = std::fs::read_to_string(repo_root().join("docs/llm.md")).unwrap();
    let start = text
        .find("## LLM failure reasons")
        .expect("docs/llm.md has a `## LLM failure reasons` section");
    let section = &text[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut reasons: BTreeSet<String> = every_llm_error()
        .iter()
        .map(|e| e.reason().to_string())
        .collect();
    reasons.extend(
        noisebench_llm::Sense::ALL
            .iter()
            .map(|s| s.code().to_string()),
    );
    let missing: Vec<&String> = reasons
        .iter()
        .filter(|r| !section.contains(&format!("`{r}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/llm.md's \"LLM failure reasons\" does not list: {missing:?}"
    );
}

#[test]
fn every_table_is_in_the_snapshot_docs() {
    let text = std::fs::read_to_string(repo_root().join("docs/snapshots.md")).unwrap();
    let start = text
        .find("## Tables and schemas")
        .expect("docs/snapshots.md has a `## Tables and schemas` section");
    let missing: Vec<&str> = noisebench_core::TableKind::ALL
        .iter()
        .map(|k| k.name())
        .filter(|n| !text[start..].contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/snapshots.md's \"Tables and schemas\" does not list: {missing:?}"
    );
}

/// The tutorial's first commands (its first `sh` block after "## 1.") run on the demo, from the
/// checkout's root as the page says, and print what it says; a placeholder argument (`<...>`)
/// is filled from the demo.
#[test]
fn the_tutorials_demo_commands_run_on_the_demo() {
    let text = std::fs::read_to_string(repo_root().join("docs/tutorial.md")).unwrap();
    let section = &text[text
        .find("## 1.")
        .expect("the tutorial has a `## 1.` section")..];
    let start = section.find("From the command line").unwrap();
    let block = &section[start..];
    let block = &block[block.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("```").unwrap()];
    let (root, _) = crate::shared::demo();
    let claims = root.join("work/demo/claims/claims.parquet");
    let rows: Vec<noisebench_core::Claim> =
        noisebench_pipeline::table_io::read_rows(&claims).unwrap();
    let claim_id = rows.first().expect("the demo has claims").id.clone();
    let mut ran = 0;
    for line in block.lines() {
        let command = line.split(" #").next().unwrap().trim();
        let Some(args) = command.strip_prefix("noisebench ") else {
            continue;
        };
        let args = args.replace("<a claim_id from it>", &claim_id);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
            .args(args.split_whitespace())
            .current_dir(root)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "`{command}`: {}{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        // What the comment promises after "...", when it quotes the output.
        if let Some(promise) = line.split("... ").nth(1) {
            assert!(stdout.contains(promise.trim()), "`{command}`: {stdout}");
        }
        ran += 1;
    }
    assert_eq!(ran, 5, "{block}");
}

/// The model, shared-work and quote options show and work only on the commands they apply to;
/// given before the command (where they were global) they still work for those commands.
#[test]
fn options_apply_only_where_they_mean_something() {
    let noisebench = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for command in ["verify", "diff", "schemas"] {
        let (_, help, _) = noisebench(&[command, "--help"]);
        for flag in [
            "--max-cost",
            "--cache-only",
            "--remote-work",
            "--skip-quote",
        ] {
            assert!(!help.contains(flag), "{command} --help: {help}");
        }
    }
    let (_, help, _) = noisebench(&["build-snapshot", "--help"]);
    for flag in [
        "--max-cost",
        "--cache-only",
        "--remote-work",
        "--skip-quote",
    ] {
        assert!(help.contains(flag), "build-snapshot --help: {help}");
    }
    let (ok, _, err) = noisebench(&["--max-cost", "1", "verify", "snapshots/none"]);
    assert!(
        !ok && err.contains(
            "--max-cost does not apply to this command: it is an option of build-snapshot, refresh, check, quote, run and eval"
        ),
        "{err}"
    );
    let (ok, _, err) = noisebench(&["verify", "snapshots/none", "--cache-only"]);
    assert!(!ok && err.contains("--cache-only"), "{err}");
    // Before the command, for a command that takes it: as before (here `check` of the demo).
    // (`check` writes nothing: the shared demo checkout is read only.)
    let root = crate::shared::demo().0.to_str().unwrap();
    let (ok, out, err) = noisebench(&["--root", root, "--max-cost", "1", "check", "demo"]);
    assert!(ok && out.contains("pipeline `demo`"), "{out}{err}");
    let (ok, out, err) = noisebench(&["--root", root, "check", "demo", "--cache-only"]);
    assert!(ok && out.contains("web: replay"), "{out}{err}");
}
