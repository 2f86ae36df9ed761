//! How much of the labels stage's input a provider's prompt cache can serve, measured by
//! quoting the stage (no request is sent) over real fact-check articles of 1,024 tokens or more
//! (`fixtures/real/factcheck`, their paragraphs as the documents' text): with the prompts laid
//! out for prefix caches (`pipelines/prompts/`) and, side by side, with the layout before
//! (`tests/fixtures/prompts-unshared/`). The exam and the two stance tasks read the same document
//! for the same claim; opened alike, the second and third requests repeat the first's prefix.

use crate::common::*;

use std::path::Path;

use noisebench_core::{TypedStage, parse_config};
use noisebench_label::{LabelConfig, LabelStage};
use noisebench_llm::{Llm, LlmConfig, QuoteSettings};

/// The text of a page's paragraphs, tags stripped (enough to give the model a real article).
fn paragraphs(html: &str) -> String {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<p") {
        let after = &rest[start..];
        let Some(open_end) = after.find('>') else {
            break;
        };
        let Some(close) = after.find("</p>") else {
            break;
        };
        if close > open_end {
            let inner = &after[open_end + 1..close];
            let mut text = String::new();
            let mut in_tag = false;
            for ch in inner.chars() {
                match ch {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => text.push(c),
                    _ => {}
                }
            }
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if !text.is_empty() {
                out.push(text);
            }
        }
        rest = &after[close + 4..];
    }
    out.join("\n\n")
}

/// A quoting handle of the openai backend (never contacted) over `prompts`.
fn quoting(prompts: &Path) -> Llm {
    let config = serde_json::json!({
        "backend": "openai",
        "model": "mini",
        "prompts_dir": prompts,
        "cache": {"mode": "off"},
        "embeddings": {"backend": "hashed"},
        "models": {"mini": {
            "name": "gpt-4o-mini",
            "endpoints": [{"name": "unused", "url": "http://127.0.0.1:9/v1"}]
        }}
    });
    let llm = Llm::new(LlmConfig::from_value(&config).unwrap(), &repo_root()).unwrap();
    llm.start_quote(QuoteSettings::default()).unwrap();
    llm
}

/// The share of the labels stage's quoted input tokens in a prefix an earlier request sent,
/// and the input tokens, over `docs` with the prompts in `prompts`.
fn share(prompts: &Path, docs: &[(String, String)]) -> (f64, u64) {
    let claims: Vec<_> = (0..docs.len())
        .map(|i| {
            claim(
                &format!("c{i}"),
                &format!("The article {i} reports a claim that was rated false."),
                "false",
            )
        })
        .collect();
    let documents: Vec<_> = docs
        .iter()
        .enumerate()
        .map(|(i, (name, text))| {
            doc(
                &format!("d{i}"),
                &format!("https://factcheck.example.org/{name}"),
                name,
                text,
            )
        })
        .collect();
    let links: Vec<_> = (0..docs.len())
        .map(|i| link(&format!("c{i}"), &format!("d{i}"), 1))
        .collect();
    let llm = quoting(prompts);
    let stage = LabelStage::new(llm.clone());
    let config: LabelConfig = parse_config(&serde_json::json!({})).unwrap();
    let dir = tempfile::tempdir().unwrap();
    stage
        .run(
            &config,
            inputs(&claims, &documents, &links),
            &ctx(dir.path()),
        )
        .unwrap();
    let calls = llm.take_quote_calls();
    let input: u64 = calls.iter().map(|c| c.input_tokens).sum();
    let cached: u64 = calls.iter().map(|c| c.prefix_cached).sum();
    for task in ["exam_verdict", "stance_text", "stance_reasoned"] {
        assert!(calls.iter().any(|c| c.task == task), "{task} was not asked");
    }
    (cached as f64 / input.max(1) as f64, input)
}

#[test]
fn the_labels_prompts_share_their_document_prefix() {
    let dir = repo_root().join("fixtures/real/factcheck");
    let mut docs: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| {
            let html = std::fs::read_to_string(&p).unwrap();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, paragraphs(&html))
        })
        // Documents of 1,024 tokens or more, once cut to the exam's 12,000 characters.
        .filter(|(_, text)| {
            let cut: String = text.chars().take(12_000).collect();
            noisebench_llm::count_tokens(&cut) >= 1024
        })
        .collect();
    docs.sort();
    assert!(docs.len() >= 5, "{} long articles", docs.len());
    let unshared = repo_root().join("crates/label/tests/fixtures/prompts-unshared");
    let before_dir = tempfile::tempdir().unwrap();
    // The layout before: the repository's prompts with the three labels prompts as they were.
    for entry in std::fs::read_dir(repo_root().join("pipelines/prompts")).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(&p, before_dir.path().join(p.file_name().unwrap())).unwrap();
    }
    for name in ["exam_verdict.md", "stance_text.md", "stance_reasoned.md"] {
        std::fs::copy(unshared.join(name), before_dir.path().join(name)).unwrap();
    }
    let (before, input_before) = share(before_dir.path(), &docs);
    let (after, input_after) = share(&repo_root().join("pipelines/prompts"), &docs);
    eprintln!(
        "labels over {} real articles of 1,024+ tokens: cacheable share {:.1}% before ({input_before} input tokens), {:.1}% after ({input_after})",
        docs.len(),
        before * 100.0,
        after * 100.0
    );
    assert!(after >= 0.5, "cacheable share after: {after:.3}");
    assert!(after > before + 0.3, "before {before:.3}, after {after:.3}");
}
