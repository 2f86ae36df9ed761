//! The `graph` stage: alignment rules end to end, relation merging with a fixed embedder, the
//! merge across reports, the side files through NetworkX, an empty input.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;

use noisebench_core::{
    Alias, Block, Entity, GraphEdge, Inputs, NoProgress, Report, Rows, Stage, StageContext,
    StageOutput, TableRow, Triplet, TypedStage,
};
use noisebench_kg::build_graph;
use noisebench_kg::{GraphConfig, GraphStage};
use noisebench_llm::Llm;

fn triplet(id: &str, report: &str, e1: &str, rel: &str, e2: &str, sentence: &str) -> Triplet {
    Triplet {
        id: id.into(),
        report_id: report.into(),
        chunk_id: format!("chunk_{report}_{id}"),
        entity_1: e1.into(),
        relation: rel.into(),
        entity_2: e2.into(),
        source_sentence: sentence.into(),
        provenance: "offline".into(),
    }
}

fn report(id: &str, company: &str, text: &str) -> Report {
    Report {
        id: id.into(),
        domain: "finance".into(),
        format: "text".into(),
        source_path: format!("{id}.txt"),
        title: None,
        metadata: BTreeMap::from([("company".to_string(), company.to_string())]),
        blocks: vec![Block::Paragraph {
            text: text.into(),
            page: None,
        }],
    }
}

/// Two filings: Acme's (r1) and Widget's (r2).
fn fixture() -> (Vec<Triplet>, Vec<Report>) {
    let triplets = vec![
        triplet(
            "t01",
            "r1",
            "We",
            "acquired",
            "Widget Holdings, Inc.",
            "We acquired Widget Holdings, Inc.",
        ),
        triplet(
            "t02",
            "r1",
            "Acme Corp.",
            "partners with",
            "IBM",
            "Acme Corp. partners with IBM on cloud services.",
        ),
        triplet(
            "t03",
            "r1",
            "the Company",
            "bought",
            "Gadget LLC",
            "The Company bought Gadget LLC.",
        ),
        triplet(
            "t04",
            "r1",
            "Acme Corp.",
            "Reported",
            "net sales",
            "Acme Corp. reported net sales.",
        ),
        triplet(
            "t05",
            "r1",
            "—",
            "reported",
            "growth",
            "Growth was reported.",
        ),
        triplet("t06", "r1", "Acme", "...", "x", "Acme x."),
        triplet(
            "t07",
            "r1",
            "our",
            "acquired",
            "Acme Corp",
            "Our company acquired Acme Corp.",
        ),
        triplet(
            "t08",
            "r1",
            "Acme",
            "reported",
            "operating income",
            "Acme reported operating income.",
        ),
        triplet(
            "t09",
            "r1",
            "Acme Corp.",
            "reported",
            "revenue",
            "Acme Corp. reported revenue.",
        ),
        triplet(
            "t11",
            "r2",
            "Widget Holdings",
            "was acquired by",
            "Acme Corp.",
            "Widget Holdings was acquired by Acme Corp.",
        ),
        triplet(
            "t12",
            "r2",
            "The Company",
            "sells",
            "gears",
            "The Company sells gears.",
        ),
        triplet(
            "t13",
            "r2",
            "IBM",
            "supplies",
            "Widget Holdings",
            "IBM supplies Widget Holdings.",
        ),
        triplet(
            "t14",
            "r2",
            "ACME CORP.",
            "acquired",
            "Widget Holdings Inc",
            "ACME CORP. acquired Widget Holdings Inc last year.",
        ),
    ];
    let reports = vec![
        report(
            "r1",
            "ACME CORP",
            "Acme Corp. partners with International Business Machines (IBM) on cloud services.",
        ),
        report("r2", "Widget Holdings Inc.", "Widget Holdings sells gears."),
    ];
    (triplets, reports)
}

/// A fixed embedder: one axis per relation, "bought" at cosine 0.95 from "acquired".
fn fixed_embedder(keys: &[String]) -> Result<Vec<Vec<f32>>, String> {
    let axes = [
        "acquired",
        "partners with",
        "reported",
        "was acquired by",
        "sells",
        "supplies",
    ];
    keys.iter()
        .map(|k| {
            let mut v = vec![0f32; axes.len()];
            if k == "bought" {
                v[0] = 0.95;
                v[1] = 0.31225;
            } else {
                let i = axes
                    .iter()
                    .position(|a| a == k)
                    .ok_or(format!("no vector for {k}"))?;
                v[i] = 1.0;
            }
            Ok(v)
        })
        .collect()
}

fn alias<'a>(aliases: &'a [Alias], kind: &str, name: &str) -> Vec<&'a Alias> {
    aliases
        .iter()
        .filter(|a| a.kind == kind && a.alias == name)
        .collect()
}

#[test]
fn every_rule_merges_and_every_merge_is_an_alias_row() {
    let (triplets, reports) = fixture();
    let mut asked = Vec::new();
    let build = build_graph(&GraphConfig::default(), &triplets, &reports, |keys| {
        asked = keys.to_vec();
        fixed_embedder(keys)
    })
    .unwrap();
    // Visiting order: frequency, then text.
    assert_eq!(
        asked,
        [
            "reported",
            "acquired",
            "bought",
            "partners with",
            "sells",
            "supplies",
            "was acquired by"
        ]
    );

    let names: Vec<&str> = build.entities.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Acme Corp.",
            "Gadget LLC",
            "IBM",
            "International Business Machines",
            "Widget Holdings",
            "gears",
            "net sales",
            "operating income",
            "revenue"
        ]
    );

    let one = |kind: &str, name: &str| {
        let found = alias(&build.aliases, kind, name);
        assert_eq!(found.len(), 1, "{kind} {name}: {found:?}");
        let a = found[0];
        (
            a.canonical.as_str(),
            a.rule.as_str(),
            a.score,
            a.report_id.as_deref(),
        )
    };
    // Filer: per report.
    assert_eq!(
        one("entity", "We"),
        ("Acme Corp.", "filer", None, Some("r1"))
    );
    assert_eq!(
        one("entity", "the Company"),
        ("Acme Corp.", "filer", None, Some("r1"))
    );
    assert_eq!(
        one("entity", "The Company"),
        ("Widget Holdings", "filer", None, Some("r2"))
    );
    // Abbreviation: only where the report defines it.
    assert_eq!(
        one("entity", "IBM"),
        (
            "International Business Machines",
            "abbreviation",
            None,
            Some("r1")
        )
    );
    // Suffixes and case.
    assert_eq!(one("entity", "Acme"), ("Acme Corp.", "suffix", None, None));
    assert_eq!(
        one("entity", "Widget Holdings, Inc."),
        ("Widget Holdings", "suffix", None, None)
    );
    assert_eq!(
        one("entity", "Widget Holdings Inc"),
        ("Widget Holdings", "suffix", None, None)
    );
    assert_eq!(
        one("entity", "ACME CORP."),
        ("Acme Corp.", "normalised", None, None)
    );
    // Relations: case, then embedding.
    assert_eq!(
        one("relation", "Reported"),
        ("reported", "normalised", None, None)
    );
    assert_eq!(
        one("relation", "bought"),
        ("acquired", "embedding", Some(0.95), None)
    );
    // Canonical forms are no alias of themselves; dropped triplets leave no alias ("our").
    assert!(alias(&build.aliases, "entity", "Acme Corp.").is_empty());
    assert!(alias(&build.aliases, "entity", "our").is_empty());
    assert_eq!(build.aliases.len(), 10);
    let ids: std::collections::BTreeSet<_> = build.aliases.iter().map(|a| &a.id).collect();
    assert_eq!(ids.len(), build.aliases.len());

    // Drops, with reasons.
    let dropped: Vec<(&str, &str)> = build
        .dropped
        .iter()
        .map(|d| (d.triplet_id.as_str(), d.reason))
        .collect();
    assert_eq!(
        dropped,
        [
            ("t05", "empty_entity"),
            ("t06", "empty_relation"),
            ("t07", "self_loop")
        ]
    );

    // Facts.
    let f = &build.facts;
    assert_eq!((f.triplets_in, f.triplets_kept), (13, 10));
    assert_eq!((f.relations_before, f.relations_after), (8, 6));
    assert_eq!((f.entities_before, f.entities_after), (15, 9));
    assert_eq!((f.edges, f.nodes, f.reports), (9, 9, 2));
    assert_eq!((f.cross_report_entities, f.cross_report_edges), (2, 1));
    let merges: Vec<(&str, usize)> = f.merges.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        merges,
        [
            ("abbreviation", 1),
            ("embedding", 1),
            ("filer", 3),
            ("normalised", 2),
            ("suffix", 3)
        ]
    );
    let lines = f.card_lines();
    assert!(
        lines[0].starts_with("10 triplets from 2 reports became 9 edges between 9 entities"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l == "Dropped triplets: empty_entity 1, empty_relation 1, self_loop 1.")
    );
}

#[test]
fn an_entity_in_two_reports_is_one_node_and_one_statement_one_edge() {
    let (triplets, reports) = fixture();
    let build = build_graph(&GraphConfig::default(), &triplets, &reports, fixed_embedder).unwrap();
    let acme: &Entity = build
        .entities
        .iter()
        .find(|e| e.name == "Acme Corp.")
        .unwrap();
    assert_eq!(acme.report_ids, ["r1", "r2"]);
    // t01 t02 t03 t04 t08 t09 (r1), t11 t14 (r2).
    assert_eq!(acme.triplets, 8);
    let shared: &GraphEdge = build
        .edges
        .iter()
        .find(|e| e.head == "Acme Corp." && e.relation == "acquired" && e.tail == "Widget Holdings")
        .unwrap();
    assert_eq!(shared.triplet_ids, ["t01", "t14"]);
    assert_eq!(shared.report_ids, ["r1", "r2"]);
    assert_eq!(shared.chunk_ids, ["chunk_r1_t01", "chunk_r2_t14"]);
    // "bought" merged into "acquired": same relation, another tail.
    assert!(
        build
            .edges
            .iter()
            .any(|e| e.relation == "acquired" && e.tail == "Gadget LLC")
    );
    // Every edge's ends are entities; ids are unique.
    for e in &build.edges {
        assert!(build.entities.iter().any(|n| n.name == e.head));
        assert!(build.entities.iter().any(|n| n.name == e.tail));
    }
    let ids: std::collections::BTreeSet<_> = build.edges.iter().map(|e| &e.id).collect();
    assert_eq!(ids.len(), build.edges.len());

    // The input order changes nothing.
    let mut reversed = triplets.clone();
    reversed.reverse();
    let again = build_graph(&GraphConfig::default(), &reversed, &reports, fixed_embedder).unwrap();
    assert_eq!(again.edges, build.edges);
    assert_eq!(again.entities, build.entities);
    assert_eq!(again.aliases, build.aliases);
}

#[test]
fn rules_turned_off_or_without_reports_leave_their_forms_alone() {
    let (triplets, reports) = fixture();
    let mut config = GraphConfig::default();
    config.filer.enabled = false;
    config.abbreviations = false;
    let build = build_graph(&config, &triplets, &reports, fixed_embedder).unwrap();
    assert!(
        build
            .aliases
            .iter()
            .all(|a| a.rule != "filer" && a.rule != "abbreviation")
    );
    assert!(build.entities.iter().any(|e| e.name == "We"));
    assert!(
        build
            .entities
            .iter()
            .all(|e| e.name != "International Business Machines")
    );

    // Without the reports input there is no filer to resolve to; abbreviations still come from
    // the triplets' sentences when one defines them.
    let mut with_definition = triplets.clone();
    with_definition[1].source_sentence =
        "Acme Corp. partners with International Business Machines (IBM).".into();
    let build = build_graph(
        &GraphConfig::default(),
        &with_definition,
        &[],
        fixed_embedder,
    )
    .unwrap();
    assert!(build.aliases.iter().all(|a| a.rule != "filer"));
    let ibm = alias(&build.aliases, "entity", "IBM");
    assert_eq!(ibm.len(), 1);
    assert_eq!(ibm[0].report_id.as_deref(), Some("r1"));

    // No suffix list: "Acme Corp." and "Acme" stay apart.
    let mut config = GraphConfig::default();
    config.suffixes.clear();
    let build = build_graph(&config, &triplets, &reports, fixed_embedder).unwrap();
    assert!(build.entities.iter().any(|e| e.name == "Acme"));
}

fn ctx(dir: &std::path::Path) -> StageContext {
    StageContext {
        root: dir.to_path_buf(),
        stage_dir: dir.join("graph"),
        pipeline: "test".into(),
        stage_id: "graph".into(),
        progress: Arc::new(NoProgress),
    }
}

fn run_stage(
    config: serde_json::Value,
    triplets: Vec<Triplet>,
    reports: Option<Vec<Report>>,
    ctx: &StageContext,
) -> StageOutput {
    let mut tables = BTreeMap::new();
    tables.insert("triplets".to_string(), Triplet::into_rows(triplets));
    if let Some(r) = reports {
        tables.insert("reports".to_string(), Report::into_rows(r));
    }
    let stage = GraphStage::new(Llm::offline());
    Stage::check(&stage, &config, &ctx.root).unwrap();
    Stage::run(&stage, &config, Inputs::new(tables), ctx).unwrap()
}

fn rows<T: TableRow>(out: &StageOutput, name: &str) -> Vec<T> {
    let rows: Rows = out.tables.get(name).cloned().unwrap();
    T::from_rows(rows).unwrap_or_else(|_| panic!("{name}"))
}

/// Whether `python3` can import networkx; says `SKIPPED:` on stderr when not (fails instead when
/// `NOISEBENCH_REQUIRE_READERS` is set).
fn networkx_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import networkx"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        // CI installs the readers and sets this: there a missing module is a failure.
        assert!(
            std::env::var_os("NOISEBENCH_REQUIRE_READERS").is_none(),
            "python3 cannot import networkx; `pip install networkx`"
        );
        eprintln!(
            "SKIPPED: python3 with networkx is not available (`python3 -c \"import networkx\"` failed; `pip install networkx`)"
        );
    }
    ok
}

const LOAD: &str = r#"
import json, sys
import networkx as nx
g = nx.read_graphml(sys.argv[1])
with open(sys.argv[2]) as f:
    data = json.load(f)
try:
    j = nx.node_link_graph(data, edges="edges")
except TypeError:  # networkx < 3.4 names the keyword `link`
    j = nx.node_link_graph(data, link="edges")
print(json.dumps({
    "graphml": [g.number_of_nodes(), g.number_of_edges()],
    "json": [j.number_of_nodes(), j.number_of_edges()],
    "directed": [g.is_directed(), j.is_directed()],
    "acme_out": sorted(r for _, _, r in j.out_edges("Acme Corp.", data="relation")),
    "graphml_relations": sorted({d["relation"] for _, _, d in g.edges(data=True)}),
}))
"#;

#[test]
fn the_stage_writes_tables_and_side_files_that_networkx_loads() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (triplets, reports) = fixture();
    let out = run_stage(serde_json::json!({}), triplets, Some(reports), &ctx);
    let edges: Vec<GraphEdge> = rows(&out, "graph_edges");
    let entities: Vec<Entity> = rows(&out, "entities");
    let aliases: Vec<Alias> = rows(&out, "aliases");
    assert_eq!(out.report.items_in, 13);
    assert_eq!(out.report.items_out, edges.len() as u64);
    assert_eq!(out.report.drop_reasons().len(), 3);
    assert!(aliases.iter().any(|a| a.rule == "filer"));
    let facts = out.facts.as_ref().unwrap();
    assert_eq!(facts.title, "How the knowledge graph was built");
    assert_eq!(facts.data["embedder"], "hashed-ngrams:384");
    assert_eq!(facts.data["nodes"], entities.len());

    let graphml = ctx.stage_dir.join("graph.graphml");
    let json = ctx.stage_dir.join("graph.json");
    assert!(graphml.is_file() && json.is_file());
    // Byte-stable: a second run writes the same files.
    let first = (
        std::fs::read(&graphml).unwrap(),
        std::fs::read(&json).unwrap(),
    );
    let (triplets, reports) = fixture();
    run_stage(serde_json::json!({}), triplets, Some(reports), &ctx);
    assert_eq!(
        first,
        (
            std::fs::read(&graphml).unwrap(),
            std::fs::read(&json).unwrap()
        )
    );

    if !networkx_available() {
        return;
    }
    let script = dir.path().join("load.py");
    std::fs::write(&script, LOAD).unwrap();
    let loaded = noisebench_testkit::run_python_json(&script, [&graphml, &json]);
    let counts = serde_json::json!([entities.len(), edges.len()]);
    assert_eq!(loaded["graphml"], counts, "{loaded}");
    assert_eq!(loaded["json"], counts, "{loaded}");
    assert_eq!(loaded["directed"], serde_json::json!([true, true]));
    let mut acme_out: Vec<&str> = edges
        .iter()
        .filter(|e| e.head == "Acme Corp.")
        .map(|e| e.relation.as_str())
        .collect();
    acme_out.sort();
    assert_eq!(loaded["acme_out"], serde_json::json!(acme_out));
    let relations: std::collections::BTreeSet<&str> =
        edges.iter().map(|e| e.relation.as_str()).collect();
    assert_eq!(loaded["graphml_relations"], serde_json::json!(relations));
}

#[test]
fn an_empty_input_gives_empty_tables_and_a_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let out = run_stage(serde_json::json!({"json": false}), Vec::new(), None, &ctx);
    for name in ["graph_edges", "entities", "aliases"] {
        assert!(out.tables[name].is_empty(), "{name}");
    }
    assert_eq!(out.report.items_in, 0);
    assert!(out.report.drops.is_empty());
    let facts = out.facts.unwrap();
    assert_eq!(
        facts.lines,
        ["No triplets to build a graph from (0 read, 0 dropped): the graph is empty."]
    );
    // The GraphML of an empty graph is still written (the runner checks declared files).
    assert!(ctx.stage_dir.join("graph.graphml").is_file());
    assert!(!ctx.stage_dir.join("graph.json").exists());

    // Only unusable triplets: the same, with the drops counted.
    let out = run_stage(
        serde_json::json!({}),
        vec![triplet("t1", "r", "?", "rose", "sales", "Sales rose.")],
        None,
        &ctx,
    );
    assert!(out.tables["graph_edges"].is_empty());
    let lines = out.facts.unwrap().lines;
    assert_eq!(
        lines,
        [
            "No triplets to build a graph from (1 read, 1 dropped): the graph is empty.",
            "Dropped triplets: empty_entity 1."
        ]
    );
}

#[test]
fn the_configuration_is_checked_before_any_work() {
    let stage = GraphStage::new(Llm::offline());
    let root = std::path::Path::new("/");
    assert!(Stage::check(&stage, &serde_json::json!({"relation_treshold": 0.8}), root).is_err());
    let err = Stage::check(
        &stage,
        &serde_json::json!({"relation_threshold": 1.5}),
        root,
    )
    .unwrap_err();
    assert_eq!(err.field, "relation_threshold");
    let err = Stage::check(
        &stage,
        &serde_json::json!({"filer": {"metadata_keys": []}}),
        root,
    )
    .unwrap_err();
    assert_eq!(err.field, "filer.metadata_keys");
    assert!(
        Stage::check(
            &stage,
            &serde_json::json!({"filer": {"enabled": false, "metadata_keys": []}}),
            root
        )
        .is_ok()
    );
    let names: Vec<String> = Stage::files(&stage, &serde_json::json!({"graphml": false}))
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["graph.json"]);
    assert_eq!(TypedStage::inputs(&stage).len(), 2);
    assert_eq!(
        Stage::environment(&stage),
        serde_json::json!({"embedder": "hashed-ngrams:384"})
    );
    // Every configuration field is documented in the schema.
    let schema = Stage::config_schema(&stage);
    for (name, field) in schema["properties"].as_object().unwrap() {
        assert!(
            field.get("description").is_some(),
            "{name} has no description"
        );
    }
}

fn run_with(llm: Llm, triplets: Vec<Triplet>, ctx: &StageContext) -> StageOutput {
    let mut tables = BTreeMap::new();
    tables.insert("triplets".to_string(), Triplet::into_rows(triplets));
    let stage = GraphStage::new(llm);
    Stage::run(&stage, &serde_json::json!({}), Inputs::new(tables), ctx).unwrap()
}

#[test]
fn relations_are_compared_with_the_llm_layers_embedder() {
    let srv = noisebench_testkit::FakeServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = noisebench_testkit::openai_config(&srv.url(), &dir.path().join("cache"));
    cfg["embeddings"] = serde_json::json!({"backend": "openai", "model": "fake"});
    let llm = Llm::from_value(&cfg, dir.path()).unwrap();
    let (triplets, _) = fixture();
    let out = run_with(llm, triplets, &ctx(dir.path()));
    assert!(srv.requests() >= 1);
    let facts = out.facts.unwrap();
    assert_eq!(facts.data["embedder"], "openai:fake-model");
    assert!(!out.tables["graph_edges"].is_empty());
}

#[test]
fn a_failed_embedder_drops_every_triplet_for_a_rerun_not_the_stage() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}/v1", noisebench_testkit::refused_addr());
    let mut cfg = noisebench_testkit::openai_config(&url, &dir.path().join("cache"));
    cfg["embeddings"] = serde_json::json!({"backend": "openai", "model": "fake"});
    let llm = Llm::from_value(&cfg, dir.path()).unwrap();
    let (triplets, _) = fixture();
    let out = run_with(llm, triplets, &ctx(dir.path()));
    assert!(out.tables["graph_edges"].is_empty());
    assert_eq!(out.report.items_dropped(), 13);
    let reasons = out.report.drop_reasons();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    let reason = reasons.keys().next().unwrap();
    assert!(reason.starts_with("llm_"), "{reason}");
    assert_eq!(out.report.transient_drops(), 13, "{reason} is retried");
    let lines = out.facts.unwrap().lines;
    assert_eq!(lines[1], format!("Dropped triplets: {reason} 13."));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// Whatever order the triplets come in, and whichever of them are given, the same triplets
    /// give the same rows: every edge's triplets are sorted and every triplet is in one edge or
    /// one drop.
    #[test]
    fn rows_depend_on_the_triplets_not_their_order(
        keep in proptest::collection::vec(proptest::bool::ANY, 13),
        seed in 0u64..1000,
    ) {
        let (all, reports) = fixture();
        let chosen: Vec<Triplet> = all.into_iter().zip(&keep).filter(|(_, k)| **k).map(|(t, _)| t).collect();
        let mut shuffled = chosen.clone();
        // A seeded rotation and reversal: another order of the same triplets.
        if !shuffled.is_empty() {
            let n = shuffled.len();
            shuffled.rotate_left((seed as usize) % n);
        }
        if seed % 2 == 0 {
            shuffled.reverse();
        }
        let a = build_graph(&GraphConfig::default(), &chosen, &reports, fixed_embedder).unwrap();
        let b = build_graph(&GraphConfig::default(), &shuffled, &reports, fixed_embedder).unwrap();
        proptest::prop_assert_eq!(&a.edges, &b.edges);
        proptest::prop_assert_eq!(&a.entities, &b.entities);
        proptest::prop_assert_eq!(&a.aliases, &b.aliases);
        let in_edges: usize = a.edges.iter().map(|e| e.triplet_ids.len()).sum();
        proptest::prop_assert_eq!(in_edges + a.dropped.len(), chosen.len());
        for e in &a.edges {
            let mut sorted = e.triplet_ids.clone();
            sorted.sort();
            proptest::prop_assert_eq!(&sorted, &e.triplet_ids);
            proptest::prop_assert_eq!(e.chunk_ids.len(), e.triplet_ids.len());
            proptest::prop_assert_eq!(e.report_ids.len(), e.triplet_ids.len());
        }
    }
}
