//! The `graph` stage: triplets in, one cross-report knowledge graph out.
//!
//! Relations are merged by embedding similarity ([`relations`]), entities aligned by
//! normalisation, the filer rule and the abbreviation rule ([`entities`]); every merge is an
//! `aliases` row. Each report's triplets form a graph of canonical edges, and the report graphs
//! merge into one petgraph graph ([`merge`]), written as the `graph_edges` and `entities` tables
//! and, beside them, as GraphML and node-link JSON ([`export`]). [`build_graph`] is the whole
//! computation, pure but for the embedder it is handed.

pub mod entities;
pub mod export;
pub mod merge;
pub mod relations;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use noisebench_core::{
    Alias, Block, ConfigError, Drops, Entity, GraphEdge, InputSpec, Inputs, OutputSpec, Report,
    SideFile, StageContext, StageError, StageFacts, StageOutput, StageReport, TableKind, Triplet,
    TypedStage, stable_id,
};
use noisebench_llm::Llm;
use serde::{Deserialize, Serialize};

use entities::{ReportContext, Rule, basic_key, resolve, suffix_words};
use export::{GRAPHML_FILE, JSON_FILE};
use merge::{KnowledgeGraph, ReportGraph, TripletRef};
use relations::{RelationMerge, merge_relations, relation_key};

/// The filer rule: company references in a report name the company that filed it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FilerConfig {
    /// Resolve company references ("the Company", "we", "our") to the filer named in the
    /// report's metadata. Needs the optional `reports` input; without it the rule does nothing.
    pub enabled: bool,
    /// Metadata keys naming the filer, the first non-empty one wins (finance reports carry
    /// `company`, policy reports `grantee`; economics reports neither, so the rule skips them).
    pub metadata_keys: Vec<String>,
    /// Entity names that refer to the filer, compared after case and punctuation are removed.
    pub phrases: Vec<String>,
}

impl Default for FilerConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            metadata_keys: vec!["company".into(), "grantee".into()],
            phrases: [
                "the company",
                "our company",
                "the registrant",
                "we",
                "us",
                "our",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// `[stages.<id>.config]` of a `graph` stage. Every field has a default.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct GraphConfig {
    /// Cosine similarity at or above which a relation merges into a more frequent canonical
    /// relation (RARE: 0.9). Greater than 0, at most 1.
    pub relation_threshold: f64,
    /// Corporate suffixes removed from the end of entity names ("Apple Inc." is "Apple"), per
    /// report domain (`finance`, `economics`, `policy`, `general`). Reports of an unlisted domain,
    /// and every report when the `reports` input is not given, use `general`.
    pub suffixes: BTreeMap<String, Vec<String>>,
    /// The filer rule: "the Company", "we", "our" resolve to the report's filer.
    pub filer: FilerConfig,
    /// Resolve an abbreviation to its long form where the same report defines it
    /// ("International Business Machines (IBM)"), in its text (`reports` input) or in its
    /// triplets' source sentences.
    pub abbreviations: bool,
    /// Write `graph.graphml` (GraphML) beside the tables.
    pub graphml: bool,
    /// Write `graph.json` (NetworkX node-link JSON, for `networkx.node_link_graph`) beside the
    /// tables.
    pub json: bool,
}

/// Suffixes of company names in filings and reports.
const CORPORATE_SUFFIXES: &[&str] = &[
    "Inc.",
    "Incorporated",
    "Corp.",
    "Corporation",
    "Co.",
    "Ltd.",
    "Limited",
    "LLC",
    "L.L.C.",
    "L.P.",
    "LP",
    "plc",
    "N.V.",
    "S.A.",
    "AG",
];

impl Default for GraphConfig {
    fn default() -> Self {
        let corporate: Vec<String> = CORPORATE_SUFFIXES.iter().map(|s| s.to_string()).collect();
        Self {
            relation_threshold: 0.9,
            suffixes: ["finance", "economics", "policy", "general"]
                .into_iter()
                .map(|d| (d.to_string(), corporate.clone()))
                .collect(),
            filer: FilerConfig::default(),
            abbreviations: true,
            graphml: true,
            json: true,
        }
    }
}

/// What the stage reports about the graph (its `stage.json` facts and the card's lines).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GraphFacts {
    pub triplets_in: usize,
    pub triplets_kept: usize,
    /// Dropped triplets per reason.
    pub dropped: BTreeMap<String, usize>,
    /// Distinct relation phrasings of the kept triplets, and canonical relations after merging.
    pub relations_before: usize,
    pub relations_after: usize,
    /// Distinct entity surface forms of the kept triplets, and canonical entities (nodes).
    pub entities_before: usize,
    pub entities_after: usize,
    /// `aliases` rows per rule.
    pub merges: BTreeMap<String, usize>,
    pub edges: usize,
    pub nodes: usize,
    /// Reports whose triplets are in the graph.
    pub reports: usize,
    /// Entities named by more than one report.
    pub cross_report_entities: usize,
    /// Edges stated by more than one report.
    pub cross_report_edges: usize,
    pub relation_threshold: f64,
    /// The embedder that compared relations (`hashed-ngrams:384`, `openai:<model>` ...).
    pub embedder: String,
}

impl GraphFacts {
    /// The facts as sentences for the dataset card.
    pub fn card_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.triplets_kept == 0 {
            lines.push(format!(
                "No triplets to build a graph from ({} read, {} dropped): the graph is empty.",
                self.triplets_in,
                self.triplets_in - self.triplets_kept
            ));
        } else {
            lines.push(format!(
                "{} triplets from {} reports became {} edges between {} entities; {} entities and {} edges appear in more than one report.",
                self.triplets_kept,
                self.reports,
                self.edges,
                self.nodes,
                self.cross_report_entities,
                self.cross_report_edges
            ));
            lines.push(format!(
                "Relations: {} phrasings merged into {} (embedding cosine at least {}, embedder {}).",
                self.relations_before, self.relations_after, self.relation_threshold, self.embedder
            ));
            lines.push(format!(
                "Entities: {} surface forms aligned into {}. Merges by rule: {}.",
                self.entities_before,
                self.entities_after,
                listed(&self.merges)
            ));
        }
        if !self.dropped.is_empty() {
            lines.push(format!("Dropped triplets: {}.", listed(&self.dropped)));
        }
        lines
    }
}

fn listed(counts: &BTreeMap<String, usize>) -> String {
    if counts.is_empty() {
        return "none".into();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A triplet the graph left out, with its reason code.
#[derive(Debug, Clone, PartialEq)]
pub struct DroppedTriplet {
    pub triplet_id: String,
    pub reason: &'static str,
    pub detail: String,
}

/// Everything [`build_graph`] makes.
#[derive(Debug, Clone, Default)]
pub struct GraphBuild {
    pub edges: Vec<GraphEdge>,
    pub entities: Vec<Entity>,
    pub aliases: Vec<Alias>,
    pub dropped: Vec<DroppedTriplet>,
    pub facts: GraphFacts,
    pub graph: KnowledgeGraph,
}

/// One kept triplet, resolved.
struct Resolved<'a> {
    triplet: &'a Triplet,
    head: (String, Rule, String),
    tail: (String, Rule, String),
    relation_key: String,
}

/// Whitespace collapsed and trimmed: the surface form rows show.
fn surface(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The most frequent form (ties by text), else the first fallback.
fn display(
    counts: Option<&BTreeMap<String, usize>>,
    fallback: Option<&BTreeSet<String>>,
) -> String {
    counts
        .and_then(|c| {
            c.iter()
                .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
                .map(|(s, _)| s.clone())
        })
        .or_else(|| fallback.and_then(|f| f.first().cloned()))
        .unwrap_or_default()
}

/// Each report's context for entity resolution.
fn report_contexts(
    config: &GraphConfig,
    triplets: &[&Triplet],
    reports: &[Report],
) -> BTreeMap<String, ReportContext> {
    let suffixes_of = |domain: &str| {
        suffix_words(
            config
                .suffixes
                .get(domain)
                .or_else(|| config.suffixes.get("general"))
                .map(Vec::as_slice)
                .unwrap_or_default(),
        )
    };
    let mut contexts: BTreeMap<String, ReportContext> = BTreeMap::new();
    for r in reports {
        let mut ctx = ReportContext {
            suffixes: suffixes_of(&r.domain),
            ..Default::default()
        };
        if config.filer.enabled {
            ctx.filer = config
                .filer
                .metadata_keys
                .iter()
                .filter_map(|k| r.metadata.get(k))
                .map(|v| surface(v))
                .find(|v| !v.is_empty());
        }
        if config.abbreviations {
            for block in &r.blocks {
                let text = match block {
                    Block::Heading { text, .. } | Block::Paragraph { text, .. } => text,
                    Block::Table { markdown, .. } => markdown,
                };
                for (k, v) in entities::abbreviations(text) {
                    ctx.abbreviations.entry(k).or_insert(v);
                }
            }
        }
        contexts.insert(r.id.clone(), ctx);
    }
    for t in triplets {
        let ctx = contexts
            .entry(t.report_id.clone())
            .or_insert_with(|| ReportContext {
                suffixes: suffixes_of("general"),
                ..Default::default()
            });
        if config.abbreviations {
            for (k, v) in entities::abbreviations(&t.source_sentence) {
                ctx.abbreviations.entry(k).or_insert(v);
            }
        }
    }
    contexts
}

/// Build the graph. `embed` turns relation keys into vectors (the stage passes the LLM layer's
/// embedder); its error is returned as is, before anything is built.
pub fn build_graph<E>(
    config: &GraphConfig,
    triplets: &[Triplet],
    reports: &[Report],
    embed: impl FnOnce(&[String]) -> Result<Vec<Vec<f32>>, E>,
) -> Result<GraphBuild, E> {
    let mut triplets: Vec<&Triplet> = triplets.iter().collect();
    triplets.sort_by(|a, b| a.id.cmp(&b.id));
    let contexts = report_contexts(config, &triplets, reports);
    let mut dropped = Vec::new();
    let mut resolved = resolve_triplets(config, &triplets, &contexts, &mut dropped);
    let names = entity_names(&resolved);
    let name_of = |key: &String| names[key].clone();

    // A triplet whose two entities became one is a self-loop: no question can be asked of it.
    resolved.retain(|r| {
        let (h, t) = (name_of(&r.head.0), name_of(&r.tail.0));
        if h == t {
            dropped.push(DroppedTriplet {
                triplet_id: r.triplet.id.clone(),
                reason: "self_loop",
                detail: format!(
                    "{:?} and {:?} are both the entity {h:?}",
                    r.triplet.entity_1, r.triplet.entity_2
                ),
            });
        }
        h != t
    });

    // Relations: counted per key over the kept triplets, merged by embedding.
    let mut relation_counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut relation_forms: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for r in &resolved {
        *relation_counts.entry(r.relation_key.clone()).or_default() += 1;
        *relation_forms
            .entry(r.relation_key.clone())
            .or_default()
            .entry(surface(&r.triplet.relation))
            .or_default() += 1;
    }
    let merged = merge_relations(&relation_counts, config.relation_threshold, embed)?;
    let relation_names: BTreeMap<String, String> = merged
        .targets
        .iter()
        .map(|(k, t)| (k.clone(), display(relation_forms.get(&t.canonical), None)))
        .collect();
    let names = Names {
        entities: names,
        relations: relation_names,
    };
    // The aliases and the graph read the same resolved triplets: built at the same time, and
    // the graph's edge and entity rows likewise.
    let (aliases, (graph, reports_spanned, edges, entities)) = noisebench_core::join(
        || aliases_of(&resolved, &names, &merged),
        || {
            let (graph, reports_spanned) = merged_graph(&resolved, &names);
            let (edges, entities) =
                noisebench_core::join(|| graph.edge_rows(), || graph.entity_rows());
            (graph, reports_spanned, edges, entities)
        },
    );
    let facts = GraphFacts {
        triplets_in: triplets.len(),
        triplets_kept: resolved.len(),
        relations_before: aliases.relation_surfaces.len(),
        relations_after: edges
            .iter()
            .map(|e| &e.relation)
            .collect::<BTreeSet<_>>()
            .len(),
        entities_before: aliases.entity_forms.len(),
        entities_after: entities.len(),
        edges: edges.len(),
        nodes: graph.node_count(),
        reports: reports_spanned,
        cross_report_entities: entities.iter().filter(|e| e.report_ids.len() > 1).count(),
        cross_report_edges: edges
            .iter()
            .filter(|e| e.report_ids.iter().collect::<BTreeSet<_>>().len() > 1)
            .count(),
        relation_threshold: config.relation_threshold,
        ..Default::default()
    };
    Ok(finish(facts, edges, entities, aliases.rows, dropped, graph))
}

/// Every triplet's entities and relation resolved; one with an entity or relation empty after
/// normalisation is dropped.
fn resolve_triplets<'a>(
    config: &GraphConfig,
    triplets: &[&'a Triplet],
    contexts: &BTreeMap<String, ReportContext>,
    dropped: &mut Vec<DroppedTriplet>,
) -> Vec<Resolved<'a>> {
    let phrases: Vec<String> = config.filer.phrases.iter().map(|p| basic_key(p)).collect();
    // Each triplet on every core; the drops are then taken in triplet order.
    let made = noisebench_core::parallel_map(triplets, noisebench_core::default_threads(), |t| {
        resolve_one(t, &contexts[&t.report_id], &phrases)
    });
    let mut resolved: Vec<Resolved> = Vec::new();
    for r in made {
        match r {
            Ok(r) => resolved.push(r),
            Err(d) => dropped.push(d),
        }
    }
    resolved
}

/// One triplet resolved, or dropped with the field that normalised to nothing.
fn resolve_one<'a>(
    t: &'a Triplet,
    ctx: &ReportContext,
    phrases: &[String],
) -> Result<Resolved<'a>, DroppedTriplet> {
    let head = resolve(&t.entity_1, ctx, phrases);
    let tail = resolve(&t.entity_2, ctx, phrases);
    let rel = relation_key(&t.relation);
    let empty = [
        ("entity_1", &t.entity_1, head.key.is_empty(), "empty_entity"),
        ("entity_2", &t.entity_2, tail.key.is_empty(), "empty_entity"),
        ("relation", &t.relation, rel.is_empty(), "empty_relation"),
    ];
    if let Some((field, value, _, reason)) = empty.iter().find(|e| e.2) {
        return Err(DroppedTriplet {
            triplet_id: t.id.clone(),
            reason,
            detail: format!("{field} {value:?} is empty after normalisation"),
        });
    }
    Ok(Resolved {
        triplet: t,
        head: (head.key, head.rule, head.resolved_to.unwrap_or_default()),
        tail: (tail.key, tail.rule, tail.resolved_to.unwrap_or_default()),
        relation_key: rel,
    })
}

/// Each entity key's display name: its most frequent literal form, else the filer's name or
/// the long form it stood for.
fn entity_names(resolved: &[Resolved<'_>]) -> BTreeMap<String, String> {
    let mut literal: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut fallback: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in resolved {
        for (end, raw) in [
            (&r.head, &r.triplet.entity_1),
            (&r.tail, &r.triplet.entity_2),
        ] {
            match end.1 {
                Rule::Filer | Rule::Abbreviation => {
                    fallback
                        .entry(end.0.clone())
                        .or_default()
                        .insert(surface(&end.2));
                }
                _ => {
                    *literal
                        .entry(end.0.clone())
                        .or_default()
                        .entry(surface(raw))
                        .or_default() += 1;
                }
            }
        }
    }
    literal
        .keys()
        .chain(fallback.keys())
        .map(|k| (k.clone(), display(literal.get(k), fallback.get(k))))
        .collect()
}

/// The display names of entity keys and of relation keys.
struct Names {
    entities: BTreeMap<String, String>,
    relations: BTreeMap<String, String>,
}

impl Names {
    fn entity(&self, key: &String) -> String {
        self.entities[key].clone()
    }

    fn relation(&self, key: &String) -> String {
        self.relations[key].clone()
    }
}

/// The alias rows, and the distinct surface forms of entities and relations seen.
struct Aliases {
    rows: Vec<Alias>,
    entity_forms: BTreeSet<String>,
    relation_surfaces: BTreeSet<String>,
}

/// Aliases: every surface form that is not its canonical name.
fn aliases_of(resolved: &[Resolved<'_>], names: &Names, merged: &RelationMerge) -> Aliases {
    let mut aliases: BTreeMap<String, Alias> = BTreeMap::new();
    let mut add_alias =
        |kind: &str, alias: &str, canonical: &str, rule: Rule, score, report: Option<&str>| {
            if alias == canonical && !matches!(rule, Rule::Filer | Rule::Abbreviation) {
                return;
            }
            let id = stable_id("alias", &[kind, alias, canonical, report.unwrap_or("")]);
            aliases.entry(id.clone()).or_insert_with(|| Alias {
                id,
                kind: kind.into(),
                alias: alias.into(),
                canonical: canonical.into(),
                rule: rule.as_str().into(),
                score,
                report_id: report.map(str::to_string),
            });
        };
    let mut entity_forms = BTreeSet::new();
    let mut relation_surfaces = BTreeSet::new();
    for r in resolved {
        for (end, raw) in [
            (&r.head, &r.triplet.entity_1),
            (&r.tail, &r.triplet.entity_2),
        ] {
            let alias = surface(raw);
            let canonical = names.entity(&end.0);
            entity_forms.insert(alias.clone());
            match end.1 {
                Rule::Filer | Rule::Abbreviation => add_alias(
                    "entity",
                    &alias,
                    &canonical,
                    end.1,
                    None,
                    Some(&r.triplet.report_id),
                ),
                _ => {
                    let rule = if basic_key(&alias) == basic_key(&canonical) {
                        Rule::Normalised
                    } else {
                        Rule::Suffix
                    };
                    add_alias("entity", &alias, &canonical, rule, None, None);
                }
            }
        }
        let alias = surface(&r.triplet.relation);
        relation_surfaces.insert(alias.clone());
        let target = &merged.targets[&r.relation_key];
        let (rule, score) = match target.score {
            Some(s) => (Rule::Embedding, Some(s)),
            None => (Rule::Normalised, None),
        };
        add_alias(
            "relation",
            &alias,
            &names.relation(&r.relation_key),
            rule,
            score,
            None,
        );
    }
    Aliases {
        rows: aliases.into_values().collect(),
        entity_forms,
        relation_surfaces,
    }
}

/// Per-report graphs of canonical edges, merged into one; and how many reports it spans.
fn merged_graph(resolved: &[Resolved<'_>], names: &Names) -> (KnowledgeGraph, usize) {
    let mut per_report: BTreeMap<&str, ReportGraph> = BTreeMap::new();
    for r in resolved {
        let t = r.triplet;
        per_report
            .entry(&t.report_id)
            .or_insert_with(|| ReportGraph::new(&t.report_id))
            .add(
                &names.entity(&r.head.0),
                &names.relation(&r.relation_key),
                &names.entity(&r.tail.0),
                TripletRef {
                    triplet_id: t.id.clone(),
                    chunk_id: t.chunk_id.clone(),
                    report_id: t.report_id.clone(),
                },
            );
    }
    let reports_spanned = per_report.len();
    let mut graph = KnowledgeGraph::new();
    for (_, g) in per_report {
        graph.merge(g);
    }
    (graph, reports_spanned)
}

/// The build, with the drops and merges counted into its facts and the drops in id order.
fn finish(
    mut facts: GraphFacts,
    edges: Vec<GraphEdge>,
    entities: Vec<Entity>,
    aliases: Vec<Alias>,
    mut dropped: Vec<DroppedTriplet>,
    graph: KnowledgeGraph,
) -> GraphBuild {
    for d in &dropped {
        *facts.dropped.entry(d.reason.to_string()).or_default() += 1;
    }
    for a in &aliases {
        *facts.merges.entry(a.rule.clone()).or_default() += 1;
    }
    dropped.sort_by(|a, b| a.triplet_id.cmp(&b.triplet_id));
    GraphBuild {
        edges,
        entities,
        aliases,
        dropped,
        facts,
        graph,
    }
}

/// The `graph` stage: input `triplets` (and optionally `reports`, for the filer rule and
/// abbreviations defined anywhere in a report); outputs `graph_edges` (main), `entities`,
/// `aliases`; side files `graph.graphml` and `graph.json` unless turned off.
pub struct GraphStage {
    llm: Llm,
}

impl GraphStage {
    /// `llm` is the run's handle; the stage uses only its embedder.
    pub fn new(llm: Llm) -> Self {
        Self { llm }
    }
}

impl TypedStage for GraphStage {
    type Config = GraphConfig;
    const KIND: &'static str = "graph";
    const VERSION: u32 = 1;
    // Many triplets become one edge: items in are triplets, items out edges.
    const ONE_TO_ONE: bool = false;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![
            InputSpec::required("triplets", TableKind::Triplets),
            InputSpec::optional("reports", TableKind::Reports),
        ]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![
            OutputSpec::new("graph_edges", TableKind::GraphEdges),
            OutputSpec::new("entities", TableKind::Entities),
            OutputSpec::new("aliases", TableKind::Aliases),
        ]
    }

    fn files(&self, config: &GraphConfig) -> Vec<SideFile> {
        let mut files = Vec::new();
        if config.graphml {
            files.push(SideFile::new(GRAPHML_FILE));
        }
        if config.json {
            files.push(SideFile::new(JSON_FILE));
        }
        files
    }

    fn validate(&self, config: &GraphConfig, _root: &Path) -> Result<(), ConfigError> {
        let t = config.relation_threshold;
        if !(t > 0.0 && t <= 1.0) {
            return Err(ConfigError::new(
                "relation_threshold",
                format!("must be greater than 0 and at most 1, got {t}"),
            ));
        }
        if config.filer.enabled && config.filer.metadata_keys.is_empty() {
            return Err(ConfigError::new(
                "filer.metadata_keys",
                "the filer rule is on but names no metadata key to read the filer from",
            ));
        }
        Ok(())
    }

    fn environment(&self) -> serde_json::Value {
        // Only the embedder decides this stage's output; it asks no LLM task.
        serde_json::json!({ "embedder": self.llm.embedder_name() })
    }

    fn run(
        &self,
        config: &GraphConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let triplets: Vec<Triplet> = inputs.take("triplets")?;
        let reports: Vec<Report> = inputs.take_optional("reports")?.unwrap_or_default();
        let mut drops = Drops::new(&ctx.stage_id);
        let embedder = self.llm.embedder_name();
        let built = build_graph(config, &triplets, &reports, |keys| {
            self.llm.embed(&ctx.stage_id, keys).map(|e| e.vectors)
        });
        let build = match built {
            Ok(mut b) => {
                b.facts.embedder = embedder;
                b
            }
            Err(e) => {
                // No relation could be compared: every triplet waits for a run whose embedder
                // answers (a transient reason makes the stage partial, so it reruns).
                for t in &triplets {
                    drops.add(&t.id, e.as_drop_reason(), e.to_string());
                }
                embedding_failed(&triplets, e.drop_reason(), embedder)
            }
        };
        for d in &build.dropped {
            drops.add(&d.triplet_id, d.reason, &d.detail);
        }
        write_files(config, ctx, &build)?;
        let facts = StageFacts::new(
            "How the knowledge graph was built",
            build.facts.card_lines(),
            &build.facts,
        );
        let mut out = StageOutput::new(StageReport {
            items_in: triplets.len() as u64,
            items_out: build.edges.len() as u64,
            drops: drops.into_records(),
        })
        .with_facts(facts)
        .with_table("graph_edges", build.edges)
        .with_table("entities", build.entities)
        .with_table("aliases", build.aliases);
        out.report.drops.sort();
        Ok(out)
    }
}

/// An empty graph whose facts say that every triplet was dropped for `reason`.
fn embedding_failed(triplets: &[Triplet], reason: String, embedder: String) -> GraphBuild {
    let mut build = GraphBuild::default();
    build.facts.triplets_in = triplets.len();
    build.facts.embedder = embedder;
    if !triplets.is_empty() {
        build.facts.dropped.insert(reason, triplets.len());
    }
    build
}

fn write_files(
    config: &GraphConfig,
    ctx: &StageContext,
    build: &GraphBuild,
) -> Result<(), StageError> {
    let write = |name: &str, bytes: Vec<u8>| {
        let path = ctx.stage_dir.join(name);
        std::fs::create_dir_all(&ctx.stage_dir)
            .and_then(|()| std::fs::write(&path, bytes))
            .map_err(|source| StageError::Io { path, source })
    };
    // The two side files are made and written at the same time.
    let (graphml, json) = noisebench_core::join(
        || {
            if !config.graphml {
                return Ok(());
            }
            write(
                GRAPHML_FILE,
                export::graphml(&build.entities, &build.edges).into_bytes(),
            )
        },
        || {
            if !config.json {
                return Ok(());
            }
            let json = export::node_link(&build.entities, &build.edges);
            let mut bytes =
                serde_json::to_vec_pretty(&json).map_err(|e| StageError::Other(e.to_string()))?;
            bytes.push(b'\n');
            write(JSON_FILE, bytes)
        },
    );
    graphml.and(json)
}
