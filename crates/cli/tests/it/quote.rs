//! `noisebench quote` on the demo (both tracks) against a fake OpenAI-compatible endpoint that
//! answers every task and reports usage the way OpenAI does (tokens counted with the same
//! tokenizer, cached prompt tokens from a 1,024-token prefix cache): the quote sends nothing but
//! its sample; it is within 15% of the build's actual input tokens and 25% of its actual cost; a
//! budget below it stops the build before any request, the quote printed; projections say so.

use crate::reliability_common::{answer, checkout};

use std::path::Path;

use noisebench_testkit::{FakeServer, Reply};
use serde_json::Value;

/// gpt-4o-mini's list prices (USD per million tokens), cached input at half.
const PRICE: &str = "price = { input_per_million = 0.15, cached_input_per_million = 0.075, output_per_million = 0.60 }";

fn endpoint() -> FakeServer {
    let srv = FakeServer::answering(|body| Reply::Content(answer(body)));
    srv.count_usage_like_openai();
    srv
}

fn noisebench(root: &Path, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisebench"))
        .arg("--skip-preflight")
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The manifest of the one version published under `root` (any dataset).
fn manifest(root: &Path) -> Value {
    let datasets: Vec<_> = std::fs::read_dir(root.join("snapshots"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(datasets.len(), 1, "{datasets:?}");
    let path = datasets[0].join("1.0.0/manifest.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn the_quote_sends_only_its_sample_and_is_close_to_what_the_build_spends() {
    let srv = endpoint();
    let dir = checkout(&srv.url(), PRICE);
    let (ok, out, err) = noisebench(dir.path(), &["quote", "demo", "--sample", "3", "--json"]);
    assert!(ok, "{out}{err}");
    let quote: Value = serde_json::from_str(&out).unwrap();
    let rows = quote["rows"].as_array().unwrap();
    let sampled: u64 = rows
        .iter()
        .map(|r| r["sampled_calls"].as_u64().unwrap())
        .sum();
    assert_eq!(srv.requests() as u64, sampled, "only the sample is sent");
    assert!(sampled > 0 && sampled <= 3 * rows.len() as u64);
    // Every row has the fields the JSON promises; the first LLM stage's rows are exact, the
    // labels (documents found by the queries' stand-in answers) projected.
    for r in rows.iter().chain([&quote["total"]]) {
        for field in [
            "stage",
            "task",
            "calls",
            "input_tokens",
            "output_tokens",
            "usd",
            "projected",
        ] {
            assert!(!r[field].is_null(), "{field} missing in {r}");
        }
    }
    let row = |stage: &str, task: &str| {
        rows.iter()
            .find(|r| r["stage"] == stage && r["task"] == task)
            .unwrap_or_else(|| panic!("no row {stage}/{task} in {rows:?}"))
    };
    assert_eq!(row("queries", "keywords")["projected"], false);
    assert_eq!(row("labels", "exam_verdict")["projected"], true);
    // The quality card's closed-book check, asked before publishing, is quoted last.
    let card = row("quality", "eval_answer");
    assert_eq!(card["projected"], true);
    assert!(card["calls"].as_u64().unwrap() > 0, "{card}");
    assert_eq!(rows.last().unwrap()["stage"], "quality");
    let before = srv.requests();

    let (ok, out, err) = noisebench(dir.path(), &["build-snapshot", "demo"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("quote against actual"), "{out}");
    assert!(srv.requests() > before);
    // The build quoted again (its sample's measures kept) and set the quote beside its calls.
    let m = manifest(dir.path());
    figures(
        "demo, both tracks",
        &m["provenance"]["llm"]["quote"],
        &m,
        "labels",
    );
    within(&m["provenance"]["llm"]["quote"]["total"], 0.15, 0.25);
    // The card's calls are set beside their quote: one closed-book question per published one.
    let vs = m["provenance"]["llm"]["quote"]["rows"].as_array().unwrap();
    let card = vs
        .iter()
        .find(|r| r["stage"] == "quality" && r["task"] == "eval_answer")
        .unwrap_or_else(|| panic!("no quality row in {vs:?}"));
    let questions = m["tables"]["questions"]["rows"].as_u64().unwrap();
    assert_eq!(card["actual_calls"].as_u64(), Some(questions), "{card}");
    assert!(card["quoted_calls"].as_u64().unwrap() > 0, "{card}");
}

/// The quote's total against the build's: input tokens within `input`, USD within `usd`, and
/// the prompt-cache tokens the quote expects close to those the endpoint reported.
fn within(total: &Value, input: f64, usd: f64) {
    let f = |k: &str| {
        total[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{k} in {total}"))
    };
    let (qi, ai) = (f("quoted_input_tokens"), f("actual_input_tokens"));
    let (qu, au) = (f("quoted_usd"), f("actual_usd"));
    assert!(ai > 0.0 && au > 0.0, "{total}");
    assert!(
        (qi / ai - 1.0).abs() <= input,
        "input tokens: quoted {qi}, actual {ai}"
    );
    assert!(
        (qu / au - 1.0).abs() <= usd,
        "USD: quoted {qu}, actual {au}"
    );
    let (qc, ac) = (
        f("quoted_cached_input_tokens"),
        f("actual_cached_input_tokens"),
    );
    assert!(
        (qc - ac).abs() <= 0.15 * qc.max(ac) + 1.0,
        "prompt-cache tokens: quoted {qc}, reported {ac}"
    );
}

#[test]
fn on_a_rare_shaped_corpus_the_quote_is_close_to_what_the_build_spends() {
    let srv = endpoint();
    let dir = tempfile::tempdir().unwrap();
    noisebench_testkit::copy_dir(
        &noisebench_testkit::repo_root().join("pipelines"),
        &dir.path().join("pipelines"),
    );
    let spec = noisebench_chunk::synthetic::CorpusSpec {
        reports: 6,
        seed: 7,
        words_per_report: 4000,
    };
    let corpus =
        noisebench_chunk::synthetic::write_corpus(&dir.path().join("corpus"), &spec).unwrap();
    let text = std::fs::read_to_string(&corpus.pipeline).unwrap();
    let table = format!(
        "[llm]\nbackend = \"openai\"\nmodel = \"fake\"\nembeddings = {{ backend = \"hashed\" }}\ncache = {{ dir = \"work/cache\" }}\n\n[llm.models.fake]\nname = \"fake-model\"\nendpoints = [{{ name = \"local\", url = \"{}\" }}]\njson_schema = true\nsend_task = true\nmax_concurrency = 4\n{PRICE}\n",
        srv.url()
    );
    let pointed = text.replacen("[llm]\nbackend = \"offline\"\n", &table, 1);
    assert_ne!(
        pointed, text,
        "the generated pipeline's [llm] table has moved"
    );
    // The fake declines multi-hop questions (a counted drop), more than the default gate allows.
    let pointed = format!("{pointed}\n[stages.questions.gate]\nmax_drop_share = 0.95\n");
    std::fs::write(&corpus.pipeline, pointed).unwrap();
    let pipeline = corpus.pipeline.to_str().unwrap();
    let (ok, out, err) = noisebench(dir.path(), &["quote", pipeline, "--sample", "3", "--json"]);
    assert!(ok, "{out}{err}");
    let quote: Value = serde_json::from_str(&out).unwrap();
    let triplets = quote["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["task"] == "triplets")
        .unwrap_or_else(|| panic!("{quote}"));
    assert_eq!(triplets["projected"], false, "chunks exist before any call");
    let (ok, out, err) = noisebench(dir.path(), &["build-snapshot", pipeline]);
    assert!(ok, "{out}{err}");
    let m = manifest(dir.path());
    let q = &m["provenance"]["llm"]["quote"];
    figures("RARE-shaped corpus, 6 reports", q, &m, "questions");
    within(&q["total"], 0.15, 0.25);
}

/// The quote against the build, per stage and task, and tokens and USD per published row of
/// `table` (at the test's gpt-4o-mini prices), as markdown rows: what docs/performance.md
/// shows (`just quote-figures` prints them).
fn figures(title: &str, quote: &Value, manifest: &Value, table: &str) {
    let pct = |q: f64, a: f64| {
        if q > 0.0 {
            format!("{:+.1}%", (a / q - 1.0) * 100.0)
        } else {
            "-".into()
        }
    };
    let mut out = format!(
        "\n{title}\n| stage | task | calls q/a | tokens in q/a | error in | prefix-cache q/a | tokens out q/a | USD q/a | error USD |\n|---|---|---|---|---|---|---|---|---|\n"
    );
    let rows = quote["rows"].as_array().unwrap();
    for r in rows.iter().chain([&quote["total"]]) {
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        out.push_str(&format!(
            "| {} | {} | {}/{} | {}/{} | {} | {}/{} | {}/{} | {:.4}/{:.4} | {} |\n",
            r["stage"].as_str().unwrap_or(""),
            r["task"].as_str().unwrap_or(""),
            f("quoted_calls"),
            f("actual_calls"),
            f("quoted_input_tokens"),
            f("actual_input_tokens"),
            pct(f("quoted_input_tokens"), f("actual_input_tokens")),
            f("quoted_cached_input_tokens"),
            f("actual_cached_input_tokens"),
            f("quoted_output_tokens"),
            f("actual_output_tokens"),
            f("quoted_usd"),
            f("actual_usd"),
            pct(f("quoted_usd"), f("actual_usd")),
        ));
    }
    let published = manifest["tables"][table]["rows"].as_f64().unwrap_or(0.0);
    let total = &quote["total"];
    let a = |k: &str| total[k].as_f64().unwrap_or(0.0);
    out.push_str(&format!(
        "{published} published `{table}` rows: {:.0} tokens in and {:.0} out per row, {:.2} USD per 1,000 rows (actual)\n",
        a("actual_input_tokens") / published.max(1.0),
        a("actual_output_tokens") / published.max(1.0),
        a("actual_usd") / published.max(1.0) * 1000.0,
    ));
    eprintln!("{out}");
}

#[test]
fn a_budget_below_the_quote_stops_the_build_before_any_request() {
    let srv = endpoint();
    let dir = checkout(&srv.url(), PRICE);
    let (ok, out, err) = noisebench(
        dir.path(),
        &["--max-cost", "0.000001", "build-snapshot", "demo"],
    );
    assert!(!ok, "{out}{err}");
    assert!(err.contains("above the budget"), "{err}");
    assert!(
        err.contains("quote for `demo`"),
        "the quote is printed: {err}"
    );
    assert!(err.contains("projected"), "{err}");
    assert_eq!(srv.requests(), 0, "no request was sent");
    assert!(!dir.path().join("snapshots/demo").exists());
}
