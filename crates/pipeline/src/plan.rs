//! Checking a pipeline file against the registered stages and ordering it as a DAG, before any work.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use noisebench_core::{Check, Stage, TableKind};
use petgraph::algo::{kosaraju_scc, toposort};
use petgraph::graph::{DiGraph, NodeIndex};

use crate::file::{FileError, PipelineFile};

/// Stage kinds the runner knows, by kind name.
#[derive(Default, Clone)]
pub struct Registry {
    stages: BTreeMap<&'static str, Arc<dyn Stage>>,
    checks: Vec<Check>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register(&mut self, stage: Arc<dyn Stage>) -> &mut Self {
        self.stages.insert(stage.kind(), stage);
        self
    }

    pub fn get(&self, kind: &str) -> Option<&Arc<dyn Stage>> {
        self.stages.get(kind)
    }

    pub fn kinds(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.stages.keys().copied()
    }

    /// Table checks beyond those core declares ([`noisebench_core::checks::declared`]): rules
    /// that need more than rows (text matching), from the crate of their concern.
    pub fn add_checks(&mut self, checks: impl IntoIterator<Item = Check>) -> &mut Self {
        self.checks.extend(checks);
        self
    }
}

/// A reference to one output table of one stage.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TableRef {
    pub stage: String,
    pub table: String,
    pub kind: TableKind,
}

/// A stage of the plan, checked.
#[derive(Clone)]
pub struct PlannedStage {
    pub id: String,
    pub stage: Arc<dyn Stage>,
    pub config: serde_json::Value,
    /// Input role -> table.
    pub inputs: BTreeMap<String, TableRef>,
    /// Files the stage reads besides tables (fingerprinted).
    pub external_files: Vec<PathBuf>,
}

/// A checked, ordered pipeline.
#[derive(Clone)]
pub struct Plan {
    pub file: PipelineFile,
    pub root: PathBuf,
    /// Stages in dependency order.
    pub stages: Vec<PlannedStage>,
    /// The registry's table checks beyond core's.
    pub checks: Vec<Check>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    File(#[from] FileError),
    #[error("stage `{stage}`: unknown kind `{kind}` (known: {known})")]
    UnknownKind {
        stage: String,
        kind: String,
        known: String,
    },
    #[error("stage `{stage}`, config field `{field}`: {message}")]
    Config {
        stage: String,
        field: String,
        message: String,
    },
    #[error("stage `{stage}`: unknown input `{role}` (this kind takes: {expected})")]
    UnknownInput {
        stage: String,
        role: String,
        expected: String,
    },
    #[error("stage `{stage}`: missing input `{role}` (a {kind} table)")]
    MissingInput {
        stage: String,
        role: String,
        kind: TableKind,
    },
    #[error(
        "stage `{stage}`, input `{role}`: `{reference}` names no stage or table of this pipeline"
    )]
    DanglingInput {
        stage: String,
        role: String,
        reference: String,
    },
    #[error(
        "stage `{stage}`, input `{role}`: `{reference}` is a {found} table, expected {expected}"
    )]
    InputKind {
        stage: String,
        role: String,
        reference: String,
        found: TableKind,
        expected: TableKind,
    },
    #[error("stages form a cycle: {0}")]
    Cycle(String),
    #[error("snapshot table `{reference}`: {message}")]
    Snapshot { reference: String, message: String },
    #[error("no stage `{0}` in this pipeline")]
    NoSuchStage(String),
}

impl Plan {
    /// Parse and check a pipeline file. `root` is where relative paths in configurations resolve.
    pub fn load(path: &Path, root: &Path, registry: &Registry) -> Result<Plan, PlanError> {
        let file = PipelineFile::load(path)?;
        Plan::new(file, root, registry)
    }

    pub fn new(file: PipelineFile, root: &Path, registry: &Registry) -> Result<Plan, PlanError> {
        check_gates(&file)?;
        // Kinds and configurations first: all of them, before any wiring.
        let mut stages: BTreeMap<String, PlannedStage> = BTreeMap::new();
        for (id, entry) in &file.stages {
            let stage = registry
                .get(&entry.kind)
                .ok_or_else(|| PlanError::UnknownKind {
                    stage: id.clone(),
                    kind: entry.kind.clone(),
                    known: registry.kinds().collect::<Vec<_>>().join(", "),
                })?;
            let config =
                serde_json::to_value(&entry.config).expect("TOML tables always convert to JSON");
            let config_error = |e: noisebench_core::ConfigError| PlanError::Config {
                stage: id.clone(),
                field: e.field,
                message: e.message,
            };
            stage.check(&config, root).map_err(config_error)?;
            let external_files = stage.external_files(&config, root).map_err(config_error)?;
            stages.insert(
                id.clone(),
                PlannedStage {
                    id: id.clone(),
                    stage: stage.clone(),
                    config,
                    inputs: BTreeMap::new(),
                    external_files,
                },
            );
        }
        // Wiring: every role known, every required role given, every reference resolves to a table
        // of the expected kind.
        let outputs: BTreeMap<String, Vec<noisebench_core::OutputSpec>> = stages
            .iter()
            .map(|(id, s)| (id.clone(), s.stage.outputs()))
            .collect();
        for (id, entry) in &file.stages {
            let planned = stages.get_mut(id).expect("inserted above");
            let specs = planned.stage.inputs();
            for role in entry.inputs.keys() {
                if !specs.iter().any(|s| s.role == role) {
                    return Err(PlanError::UnknownInput {
                        stage: id.clone(),
                        role: role.clone(),
                        expected: specs.iter().map(|s| s.role).collect::<Vec<_>>().join(", "),
                    });
                }
            }
            for spec in specs {
                let Some(reference) = entry.inputs.get(spec.role) else {
                    if spec.required {
                        return Err(PlanError::MissingInput {
                            stage: id.clone(),
                            role: spec.role.into(),
                            kind: spec.kind,
                        });
                    }
                    continue;
                };
                let table =
                    resolve(reference, &outputs).ok_or_else(|| PlanError::DanglingInput {
                        stage: id.clone(),
                        role: spec.role.into(),
                        reference: reference.clone(),
                    })?;
                if table.kind != spec.kind {
                    return Err(PlanError::InputKind {
                        stage: id.clone(),
                        role: spec.role.into(),
                        reference: reference.clone(),
                        found: table.kind,
                        expected: spec.kind,
                    });
                }
                planned.inputs.insert(spec.role.into(), table);
            }
        }
        if let Some(snapshot) = &file.snapshot {
            let mut names = BTreeMap::new();
            for reference in &snapshot.tables {
                let table = resolve(reference, &outputs).ok_or_else(|| PlanError::Snapshot {
                    reference: reference.clone(),
                    message: "names no stage or table of this pipeline".into(),
                })?;
                if let Some(other) = names.insert(table.table.clone(), reference.clone()) {
                    return Err(PlanError::Snapshot {
                        reference: reference.clone(),
                        message: format!(
                            "publishes table `{}` which `{other}` publishes too",
                            table.table
                        ),
                    });
                }
            }
        }
        // Order: a DAG over stages, edges from producer to consumer.
        let mut graph: DiGraph<String, ()> = DiGraph::new();
        let nodes: BTreeMap<String, NodeIndex> = stages
            .keys()
            .map(|id| (id.clone(), graph.add_node(id.clone())))
            .collect();
        for (id, planned) in &stages {
            for table in planned.inputs.values() {
                graph.update_edge(nodes[&table.stage], nodes[id], ());
            }
        }
        let order = toposort(&graph, None).map_err(|_| {
            let mut cycles: Vec<Vec<String>> = kosaraju_scc(&graph)
                .into_iter()
                .filter(|c| c.len() > 1 || graph.contains_edge(c[0], c[0]))
                .map(|c| {
                    let mut names: Vec<String> = c.into_iter().map(|n| graph[n].clone()).collect();
                    names.sort();
                    names
                })
                .collect();
            cycles.sort();
            PlanError::Cycle(
                cycles
                    .iter()
                    .map(|c| c.join(" -> "))
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
        let stages = order
            .into_iter()
            .map(|n| stages.remove(&graph[n]).expect("every node is a stage"))
            .collect();
        Ok(Plan {
            file,
            root: root.to_path_buf(),
            stages,
            checks: registry.checks.clone(),
        })
    }

    pub fn name(&self) -> &str {
        &self.file.pipeline.name
    }

    pub fn stage(&self, id: &str) -> Option<&PlannedStage> {
        self.stages.iter().find(|s| s.id == id)
    }

    /// The stage `id` and everything upstream of it, in order.
    pub fn upstream_of(&self, id: &str) -> Result<Vec<&PlannedStage>, PlanError> {
        let target = self
            .stage(id)
            .ok_or_else(|| PlanError::NoSuchStage(id.into()))?;
        let mut needed: std::collections::BTreeSet<String> = [target.id.clone()].into();
        for stage in self.stages.iter().rev() {
            if needed.contains(&stage.id) {
                needed.extend(stage.inputs.values().map(|t| t.stage.clone()));
            }
        }
        Ok(self
            .stages
            .iter()
            .filter(|s| needed.contains(&s.id))
            .collect())
    }

    /// Resolve `"<stage>"` or `"<stage>.<table>"` to a table of this plan.
    pub fn table(&self, reference: &str) -> Option<TableRef> {
        let outputs: BTreeMap<String, Vec<noisebench_core::OutputSpec>> = self
            .stages
            .iter()
            .map(|s| (s.id.clone(), s.stage.outputs()))
            .collect();
        resolve(reference, &outputs)
    }
}

/// Every `max_drop_share` is a share, and every stage given a gate exists.
fn check_gates(file: &PipelineFile) -> Result<(), PlanError> {
    let share = |stage: &str, field: &str, v: Option<f64>| match v {
        Some(v) if !(0.0..=1.0).contains(&v) => Err(PlanError::Config {
            stage: stage.into(),
            field: field.into(),
            message: format!("{v} is not a share between 0 and 1"),
        }),
        _ => Ok(()),
    };
    if let Some(g) = &file.gates {
        share("(pipeline)", "gates.max_drop_share", g.max_drop_share)?;
    }
    for (id, entry) in &file.stages {
        if let Some(g) = &entry.gate {
            share(id, "gate.max_drop_share", g.max_drop_share)?;
        }
    }
    Ok(())
}

fn resolve(
    reference: &str,
    outputs: &BTreeMap<String, Vec<noisebench_core::OutputSpec>>,
) -> Option<TableRef> {
    let (stage, table) = match reference.split_once('.') {
        Some((s, t)) => (s, Some(t)),
        None => (reference, None),
    };
    let specs = outputs.get(stage)?;
    let spec = match table {
        Some(t) => specs.iter().find(|s| s.name == t)?,
        None => specs.first()?,
    };
    Some(TableRef {
        stage: stage.into(),
        table: spec.name.into(),
        kind: spec.kind,
    })
}
