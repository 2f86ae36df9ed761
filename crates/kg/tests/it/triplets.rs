//! The `triplets` stage against a fake OpenAI-compatible endpoint: editing one chunk reruns at
//! most two windows' calls (the rest are cache hits), and bad answers (missing fields, chunk ids
//! outside the window, empty or enormous strings, repeated triplets, non-JSON, runaway lists)
//! become counted drops, never a failed stage; a failed call is a transient drop that the next
//! run retries alone; the offline rule on the knowledge-graph fixtures.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use noisebench_core::{
    Chunk, Inputs, NoProgress, StageContext, StageOutput, TableRow, Triplet, TypedStage,
    parse_config, stable_id,
};
use noisebench_kg::{TripletsConfig, TripletsStage};
use noisebench_llm::Llm;
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};
use serde_json::{Value, json};

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An `Llm` on the fake endpoint with JSON-schema answers, no retries or re-asks, and a cache
/// in `cache`.
fn llm(server: &FakeServer, cache: &Path) -> Llm {
    Llm::from_value(&strict_openai_config(&server.url(), cache), &repo_root()).unwrap()
}

/// A chunk whose id, like the chunker's, changes with its text; its index is its position.
fn chunk(report: &str, index: usize, text: &str) -> Chunk {
    Chunk {
        id: stable_id("chunk", &[report, text]),
        report_id: report.into(),
        index: index as i64,
        text: text.into(),
        metadata: [("domain".to_string(), "finance".to_string())].into(),
        ..Chunk::default()
    }
}

/// The chunks of the user prompt: `(id, text)` from each `Chunk ID:` line and the line after.
fn prompt_chunks(body: &Value) -> Vec<(String, String)> {
    let user = first_message(body, "user");
    let lines: Vec<&str> = user.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let id = l.strip_prefix("Chunk ID: ")?;
            Some((id.to_string(), lines.get(i + 1)?.to_string()))
        })
        .collect()
}

/// A good triplet from a chunk whose text is `<A> acquired <B>.`.
fn good(id: &str, text: &str) -> Value {
    let sentence = text.trim();
    let (a, b) = sentence
        .trim_end_matches('.')
        .split_once(" acquired ")
        .unwrap_or(("x", "y"));
    json!({"entity_1": a, "relation": "acquired", "entity_2": b, "chunk_id": id, "source_sentence": sentence})
}

fn run(stage: &TripletsStage, config: Value, chunks: &[Chunk], dir: &Path) -> StageOutput {
    let config: TripletsConfig = parse_config(&config).unwrap();
    stage.validate(&config, &repo_root()).unwrap();
    let mut tables = BTreeMap::new();
    tables.insert("chunks".to_string(), Chunk::into_rows(chunks.to_vec()));
    let ctx = StageContext {
        root: repo_root(),
        stage_dir: dir.to_path_buf(),
        pipeline: "test".into(),
        stage_id: "triplets".into(),
        progress: Arc::new(NoProgress),
    };
    stage.run(&config, Inputs::new(tables), &ctx).unwrap()
}

fn triplets(out: &mut StageOutput) -> Vec<Triplet> {
    Triplet::from_rows(out.tables.remove("triplets").unwrap()).unwrap()
}

#[test]
fn editing_or_inserting_one_chunk_reruns_at_most_two_windows() {
    let server = FakeServer::answering(|body| {
        let triplets: Vec<Value> = prompt_chunks(body)
            .iter()
            .map(|(id, text)| good(id, text))
            .collect();
        Reply::Content(json!({ "triplets": triplets }).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..40)
        .map(|i| format!("Alpha{i} Holdings acquired Beta{i} Limited."))
        .collect();
    let report = |texts: &[String]| -> Vec<Chunk> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| chunk("r1", i, t))
            .collect()
    };
    // No forced cut at the maximum (see `triplets::windows`): only content decides.
    let config = json!({"max_window": 40});
    let calls = |chunks: &[Chunk]| {
        let before = server.requests();
        // A new handle on the same cache, as a later run would have.
        let stage = TripletsStage::new(llm(&server, &dir.path().join("cache")));
        let mut out = run(&stage, config.clone(), chunks, dir.path());
        assert!(out.report.drops.is_empty(), "{:?}", out.report.drops);
        assert_eq!(triplets(&mut out).len(), chunks.len());
        server.requests() - before
    };

    let first = calls(&report(&texts));
    assert!(first >= 4, "40 chunks make several windows, got {first}");
    assert_eq!(
        calls(&report(&texts)),
        0,
        "an unchanged run is all cache hits"
    );
    for at in [0, 17, 39] {
        let mut edited = texts.clone();
        edited[at] = format!("Gamma{at} Holdings acquired Delta{at} Limited.");
        let n = calls(&report(&edited));
        assert!((1..=2).contains(&n), "editing chunk {at} sent {n} calls");
    }
    // Chunk ids that do not depend on position: an insertion reruns at most two windows too.
    // (The chunker's ids include the index, so there every later chunk's id would change.)
    let mut inserted = texts.clone();
    inserted.insert(20, "Epsilon Holdings acquired Zeta Limited.".into());
    let n = calls(&report(&inserted));
    assert!((1..=2).contains(&n), "inserting a chunk sent {n} calls");
}

#[test]
fn bad_answers_become_counted_drops() {
    // One chunk per window (every chunk ends one with window_size 1); the answer depends on
    // the first word of the chunk.
    let server = FakeServer::answering(|body| {
        let chunks = prompt_chunks(body);
        let (id, text) = &chunks[0];
        let kind = text.split_whitespace().next().unwrap_or("");
        let ok = good(id, text);
        let with = |field: &str, v: Value| {
            let mut t = ok.clone();
            t[field] = v;
            t
        };
        let triplets = match kind {
            "Missing" => {
                let mut t = ok.clone();
                t.as_object_mut().unwrap().remove("relation");
                vec![t]
            }
            "Outside" => vec![with("chunk_id", json!("chunk_elsewhere"))],
            "Empty" => vec![with("entity_1", json!("  "))],
            "Enormous" => vec![with(
                "source_sentence",
                json!(format!("{text} ").repeat(200)),
            )],
            "Repeated" => {
                let shouted = ok["entity_2"].as_str().unwrap_or("").to_uppercase();
                vec![ok.clone(), ok.clone(), with("entity_2", json!(shouted))]
            }
            "Invented" => vec![with("source_sentence", json!("Nobody acquired anything."))],
            "Wrongname" => vec![with("entity_2", json!("Omega Limited"))],
            "Runaway" => vec![ok.clone(); 500],
            "Garbled" => return Reply::Content("here are your triplets: none".into()),
            _ => vec![ok],
        };
        Reply::Content(json!({ "triplets": triplets }).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let kinds = [
        "Good",
        "Missing",
        "Outside",
        "Empty",
        "Enormous",
        "Repeated",
        "Invented",
        "Wrongname",
        "Runaway",
        "Garbled",
    ];
    let chunks: Vec<Chunk> = kinds
        .iter()
        .enumerate()
        .map(|(i, k)| chunk("r1", i, &format!("{k} Holdings acquired Beta{i} Limited.")))
        .collect();
    let stage = TripletsStage::new(llm(&server, &dir.path().join("cache")));
    let mut out = run(&stage, json!({"window_size": 1}), &chunks, dir.path());
    let rows = triplets(&mut out);
    // Good, and the first of Repeated (the third differs only in case: a duplicate too).
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert!(
        rows.iter()
            .all(|t| t.provenance.starts_with("openai:fake-model"))
    );
    let reasons = out.report.drop_reasons();
    let expected: BTreeMap<String, i64> = [
        ("duplicate", 2),
        ("empty_field", 2),
        ("entity_not_in_sentence", 1),
        ("llm_unparseable_output", 2),
        ("no_grounded_triplets", 6),
        ("oversize_field", 1),
        ("ungrounded", 1),
        ("unknown_chunk", 1),
    ]
    .into_iter()
    .map(|(r, n)| (r.to_string(), n))
    .collect();
    assert_eq!(reasons, expected);
    assert_eq!(out.report.transient_drops(), 0);
    // The stage counts chunks: of the ten read, those of the two windows whose answer was
    // unusable (Runaway, Garbled) and of the six whose triplets were all rejected (Missing,
    // Outside, Empty, Enormous, Invented, Wrongname) are dropped; a rejected triplet is a
    // failure recorded beside them, not a dropped item.
    let mut dropped: Vec<&str> = out
        .report
        .drops
        .iter()
        .filter(|d| d.dropped)
        .map(|d| d.item.as_str())
        .collect();
    dropped.sort();
    let mut expected_chunks: Vec<String> = [1, 2, 3, 4, 6, 7, 8, 9]
        .iter()
        .map(|i| chunks[*i].id.clone())
        .collect();
    expected_chunks.sort();
    assert_eq!(dropped, expected_chunks);
    assert_eq!(out.report.items_in, 10);
    assert_eq!(out.report.items_dropped(), 8);
    let facts = out.facts.expect("the stage reports its facts");
    assert_eq!(facts.data["kept"], json!(2));
    assert_eq!(facts.data["answered"], json!(1 + 1 + 1 + 1 + 1 + 3 + 1 + 1));
    // Good and the three of Repeated: a duplicate is grounded, then dropped as a repeat.
    assert_eq!(facts.data["grounded"], json!(4));
    assert!(
        facts.lines[0].contains("grounding rate 40.0%"),
        "{:?}",
        facts.lines
    );
}

#[test]
fn a_failed_call_is_a_transient_drop_that_the_next_run_retries_alone() {
    let down = Arc::new(AtomicBool::new(true));
    let flag = down.clone();
    let server = FakeServer::answering(move |body| {
        let chunks = prompt_chunks(body);
        if flag.load(Ordering::SeqCst) && chunks.iter().any(|(_, t)| t.starts_with("Flaky")) {
            return Reply::Status(503, None, "down".into());
        }
        let triplets: Vec<Value> = chunks.iter().map(|(id, t)| good(id, t)).collect();
        Reply::Content(json!({ "triplets": triplets }).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let chunks: Vec<Chunk> = ["Steady", "Flaky", "Calm"]
        .iter()
        .enumerate()
        .map(|(i, k)| chunk("r1", i, &format!("{k} Holdings acquired Beta{i} Limited.")))
        .collect();
    let config = json!({"window_size": 1});
    let stage = TripletsStage::new(llm(&server, &dir.path().join("cache")));
    let mut out = run(&stage, config.clone(), &chunks, dir.path());
    assert_eq!(triplets(&mut out).len(), 2);
    assert_eq!(out.report.transient_drops(), 1, "{:?}", out.report.drops);
    assert!(out.report.drops[0].reason.starts_with("llm_"));

    down.store(false, Ordering::SeqCst);
    let before = server.requests();
    let stage = TripletsStage::new(llm(&server, &dir.path().join("cache")));
    let mut out = run(&stage, config, &chunks, dir.path());
    assert_eq!(
        server.requests() - before,
        1,
        "only the failed window is asked again"
    );
    assert_eq!(triplets(&mut out).len(), 3);
    assert!(out.report.drops.is_empty());
}

#[test]
fn configuration_errors_name_the_field() {
    let server = FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    let stage = TripletsStage::new(llm(&server, dir.path()));
    let check = |v: Value| {
        let c: TripletsConfig = parse_config(&v).unwrap();
        stage.validate(&c, &repo_root()).unwrap_err().to_string()
    };
    assert!(check(json!({"window_size": 0})).contains("window_size"));
    assert!(check(json!({"window_size": 8, "max_window": 4})).contains("max_window"));
    assert!(check(json!({"targets": {"finance": 0}})).contains("targets.finance"));
    assert!(
        parse_config::<TripletsConfig>(&json!({"windows": 3}))
            .unwrap_err()
            .to_string()
            .contains("windows")
    );
}

/// The offline rule on the knowledge-graph fixtures (each report one chunk, as the chunker
/// makes them): the facts the demo's graph patterns are built from, one entity shared by the
/// two reports.
#[test]
fn the_offline_rule_reads_the_kg_fixture_reports() {
    let dir = tempfile::tempdir().unwrap();
    let root = repo_root().join("fixtures/reports/kg");
    let chunks: Vec<Chunk> = ["calder_port_review_2024", "northwind_logistics_report_2024"]
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(root.join(format!("{name}.md"))).unwrap();
            chunk(name, 0, &text)
        })
        .collect();
    let stage = TripletsStage::new(Llm::offline());
    let mut out = run(&stage, json!({}), &chunks, dir.path());
    assert!(out.report.drops.is_empty(), "{:?}", out.report.drops);
    let mut rows: Vec<(String, String, String, String)> = triplets(&mut out)
        .into_iter()
        .map(|t| (t.report_id, t.entity_1, t.relation, t.entity_2))
        .collect();
    rows.sort();
    let expect = |r: &str, a: &str, b: &str, c: &str| (r.into(), a.into(), b.into(), c.into());
    let calder = "calder_port_review_2024";
    let northwind = "northwind_logistics_report_2024";
    assert_eq!(
        rows,
        [
            expect(
                calder,
                "Calder Port Authority",
                "operates",
                "Eastgate Terminal"
            ),
            expect(
                calder,
                "Calder Port Authority",
                "selected",
                "Northwind Logistics"
            ),
            expect(calder, "Eastgate Terminal", "handled", "4.2 million"),
            expect(calder, "Harbour Trust", "funds", "Calder Maritime Museum"),
            expect(
                calder,
                "Kestrel Dredging Company",
                "manages",
                "Westgate Basin"
            ),
            expect(calder, "Northwind Logistics", "employs", "140 people"),
            expect(northwind, "Baltic Freight Lines", "serves", "Riga Harbour"),
            expect(
                northwind,
                "Northwind Logistics",
                "acquired",
                "Baltic Freight Lines"
            ),
            expect(
                northwind,
                "Northwind Logistics",
                "supplies",
                "Eastgate Terminal"
            ),
            expect(
                northwind,
                "Ostrava Sawmill Group",
                "leases",
                "Westgate Basin"
            ),
        ]
    );
    let facts = out.facts.unwrap();
    assert_eq!(facts.data["grounding_rate"], json!(1.0));
    assert_eq!(facts.data["per_report"][calder], json!(6));
}

/// Gemma 3 270M's answer to every window of two 10-K filings: the prompt's own example
/// entities, with chunk ids "1" to "5". Each window is one counted drop,
/// `llm_copied_example`, and no triplet is kept.
#[test]
fn the_prompts_example_returned_as_facts_is_a_counted_drop() {
    let server = FakeServer::answering(|_| {
        let triplets: Vec<Value> = (1..=5)
            .map(|i| {
                json!({"entity_1": "Northwind Logistics", "relation": "operates",
                    "entity_2": "the retirement-age reform", "chunk_id": i.to_string(),
                    "source_sentence": "Northwind Logistics operates the retirement-age reform."})
            })
            .collect();
        Reply::Content(json!({ "triplets": triplets }).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let chunks: Vec<Chunk> = (0..4)
        .map(|i| {
            chunk(
                "r1",
                i,
                &format!("Alpha{i} Holdings acquired Beta{i} Limited."),
            )
        })
        .collect();
    let stage = TripletsStage::new(llm(&server, &dir.path().join("cache")));
    let mut out = run(&stage, json!({"window_size": 1}), &chunks, dir.path());
    assert!(triplets(&mut out).is_empty());
    let reasons = out.report.drop_reasons();
    assert_eq!(
        reasons,
        [("llm_copied_example".to_string(), 4)]
            .into_iter()
            .collect()
    );
    let detail = &out.report.drops[0].detail;
    assert!(detail.contains("Northwind Logistics"), "{detail}");
}

/// A llama.cpp server with a small context: told through `/props`, the windows are cut to fit
/// and nothing is refused; not told, the same windows are refused as `llm_context_exceeded`
/// (naming the setting), and once the server says its context the stage's fingerprint changes,
/// so the runner reruns it without `--force`.
#[test]
fn windows_are_cut_to_the_servers_context() {
    // About 230 tokens per chunk; the server refuses a prompt that leaves no room in its
    // context of 2,048 tokens (counted in characters, as a real server counts by its own
    // tokenizer).
    let server = FakeServer::answering(|body| {
        let user = first_message(body, "user");
        // A server counting about four characters a token, with 64 kept for the answer.
        if user.len() > (2048 - 64) * 4 {
            return Reply::Status(
                400,
                None,
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#.into(),
            );
        }
        let triplets: Vec<Value> = prompt_chunks(body)
            .iter()
            .map(|(id, text)| good(id, text.split(". ").next().unwrap_or("")))
            .collect();
        Reply::Content(json!({ "triplets": triplets }).to_string())
    });
    let filler = "The group reviewed its freight contracts during the year and found them sound. "
        .repeat(14);
    let chunks: Vec<Chunk> = (0..12)
        .map(|i| {
            chunk(
                "r1",
                i,
                &format!("Alpha{i} Holdings acquired Beta{i} Limited. {filler}"),
            )
        })
        .collect();
    // Not told: one window of twelve chunks, refused.
    let dir = tempfile::tempdir().unwrap();
    let blind = TripletsStage::new(llm(&server, &dir.path().join("cache")));
    let config = json!({"window_size": 12, "max_window": 12});
    let out = run(&blind, config.clone(), &chunks, dir.path());
    let refused: Vec<_> = out
        .report
        .drops
        .iter()
        .filter(|d| d.reason == "llm_context_exceeded")
        .collect();
    assert!(!refused.is_empty(), "{:?}", out.report.drops);
    assert!(
        refused[0].detail.contains("context_tokens"),
        "{}",
        refused[0].detail
    );
    let before = blind.environment();
    let blind_requests = server.requests();
    // Told: windows that fit, every chunk read.
    server.set_props(Some(
        json!({"default_generation_settings": {"n_ctx": 2048}}),
    ));
    let told = TripletsStage::new(llm(&server, &dir.path().join("cache-told")));
    assert_ne!(told.environment(), before, "a rerun without --force");
    let mut out = run(&told, config, &chunks, dir.path());
    assert_eq!(out.report.drop_reasons(), BTreeMap::new());
    assert_eq!(triplets(&mut out).len(), 12);
    let windows = server.requests() - blind_requests;
    assert!(windows >= 3, "cut into windows that fit: {windows}");
}
