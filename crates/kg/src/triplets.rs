//! The `triplets` stage: chunks to grounded `(entity_1, relation, entity_2)` triplets.
//!
//! Each report's chunks are read in windows of consecutive chunks ([`windows`]: boundaries from
//! the chunks' content, so one edited chunk reruns at most two windows' calls); the LLM task
//! `triplets` ([`task`]) reads each window, every chunk prefixed by its id, and returns triplets
//! with the chunk and the sentence they rest on. Every returned triplet is grounded
//! ([`grounding`]): kept only when its sentence is in a chunk of the window (re-pointed when
//! that is not the chunk it named) and both its entities are in that sentence. Everything else
//! is a recorded failure with its reason. The stage counts its items in chunks: items in are
//! the chunks read, items dropped the chunks of windows whose call failed (with the LLM
//! layer's reason; a transient one is retried by the next run) or none of whose answered
//! triplets was found in them (`no_grounded_triplets`); items out are the triplets written.
//! An optional gleaning pass asks each window again for what the first answer missed.

pub mod grounding;
pub mod task;
pub mod windows;

use std::collections::{BTreeMap, BTreeSet};

use noisebench_core::{
    Chunk, ConfigError, Drops, InputSpec, Inputs, OutputSpec, ShardKey, StageContext, StageError,
    StageFacts, StageOutput, StageReport, TableKind, Triplet, TypedStage, stable_id,
};
use noisebench_llm::{Answer, Llm, LlmError, StageTasks};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use grounding::{GroundingWindow, Rejection, dedupe_key};
use task::{ExtractedTriplet, TASKS, Triplets, TripletsInput, TripletsOutput, WindowChunk};
use windows::Window;

/// Configuration of the `triplets` stage.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TripletsConfig {
    /// Chunks per window on average (RARE: 5): a window ends after a chunk whose text hashes
    /// to 0 modulo this, so one edited chunk changes at most two windows.
    #[serde(default = "default_window_size")]
    pub window_size: usize,
    /// At most this many chunks in one window (at least `window_size`).
    #[serde(default = "default_max_window")]
    pub max_window: usize,
    /// Triplets wanted per report, by domain (RARE: finance 150, economics 300, policy 400).
    /// A domain left out uses `default_target`.
    #[serde(default = "default_targets")]
    pub targets: BTreeMap<String, usize>,
    /// Triplets wanted per report of a domain `targets` does not name.
    #[serde(default = "default_target")]
    pub default_target: usize,
    /// The report length, in chunks, the targets are meant for: a window of k chunks asks for
    /// ceil(target x k / reference_chunks) triplets. A fixed length rather than each report's
    /// own keeps a window's request independent of the rest of its report.
    #[serde(default = "default_reference_chunks")]
    pub reference_chunks: usize,
    /// Ask every window a second time, showing the first answer, for triplets it missed.
    #[serde(default)]
    pub gleaning: bool,
}

fn default_window_size() -> usize {
    5
}
fn default_max_window() -> usize {
    12
}
fn default_targets() -> BTreeMap<String, usize> {
    [("finance", 150), ("economics", 300), ("policy", 400)]
        .into_iter()
        .map(|(d, n)| (d.to_string(), n))
        .collect()
}
fn default_target() -> usize {
    150
}
fn default_reference_chunks() -> usize {
    20
}

impl Default for TripletsConfig {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({}))
            .unwrap_or_else(|_| unreachable!("all fields have defaults"))
    }
}

impl TripletsConfig {
    /// How many triplets a window of `chunks` chunks of a `domain` report asks for.
    pub(crate) fn window_target(&self, domain: &str, chunks: usize) -> usize {
        let per_report = self
            .targets
            .get(domain)
            .copied()
            .unwrap_or(self.default_target);
        (per_report * chunks)
            .div_ceil(self.reference_chunks.max(1))
            .max(1)
    }
}

/// The `triplets` stage. Build with the run's [`Llm`].
#[derive(Debug, Clone)]
pub struct TripletsStage {
    llm: Llm,
    tasks: StageTasks,
}

impl TripletsStage {
    pub fn new(llm: Llm) -> Self {
        Self {
            tasks: StageTasks::new(llm.clone(), TASKS),
            llm,
        }
    }
}

/// What a run of the stage found, beyond its rows: the stage's facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct TripletsSummary {
    pub windows: usize,
    pub calls_failed: usize,
    /// Triplets the model returned, over every pass.
    pub answered: usize,
    /// Triplets whose sentence and entities were found in their window.
    pub grounded: usize,
    /// `grounded / answered` (1 when nothing was answered).
    pub grounding_rate: f64,
    /// Grounded triplets whose sentence was in another chunk of the window than the one named.
    pub repointed: usize,
    pub kept: usize,
    /// Dropped triplets per reason (LLM failures count windows).
    pub drops: BTreeMap<String, usize>,
    /// Kept triplets per report.
    pub per_report: BTreeMap<String, usize>,
}

impl TripletsSummary {
    fn facts(&self) -> StageFacts {
        let mut lines = vec![format!(
            "{} triplets kept from {} windows; grounding rate {:.1}% ({} of {} returned triplets found in their window), {} re-pointed to another chunk.",
            self.kept,
            self.windows,
            self.grounding_rate * 100.0,
            self.grounded,
            self.answered,
            self.repointed
        )];
        if !self.drops.is_empty() {
            let reasons: Vec<String> = self.drops.iter().map(|(r, n)| format!("{r} {n}")).collect();
            lines.push(format!("Dropped: {}.", reasons.join(", ")));
        }
        let reports: Vec<String> = self
            .per_report
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        if !reports.is_empty() {
            lines.push(format!("Triplets per report: {}.", reports.join(", ")));
        }
        StageFacts::new("Triplets", lines, self)
    }
}

/// Ground every answered triplet of every window into rows, recording what is dropped.
/// `answers[i]` holds window `i`'s answers (first pass, then gleaning) with their provenance.
pub(crate) fn ground_windows(
    windows: &[Window<'_>],
    answers: &[Vec<(String, &TripletsOutput)>],
    drops: &mut Drops,
    summary: &mut TripletsSummary,
) -> Vec<Triplet> {
    let mut rows = Vec::new();
    let mut seen: BTreeSet<[String; 4]> = BTreeSet::new();
    let mut occurrences: BTreeMap<String, usize> = BTreeMap::new();
    // Grounding is pure per window: every core grounds windows; what is kept, and the
    // occurrence counts, are decided in window order below.
    let pairs: Vec<(&Window<'_>, &Vec<(String, &TripletsOutput)>)> =
        windows.iter().zip(answers).collect();
    let grounded = noisebench_core::parallel_map(
        &pairs,
        noisebench_core::default_threads(),
        |(window, passes)| {
            let ground = GroundingWindow::new(&window.chunks);
            passes
                .iter()
                .map(|(_, output)| output.triplets.iter().map(|t| ground.ground(t)).collect())
                .collect::<Vec<Vec<_>>>()
        },
    );
    for ((window, passes), grounded) in pairs.iter().zip(grounded) {
        let (answered, found) = (summary.answered, summary.grounded);
        for ((pass, (provenance, output)), grounded) in passes.iter().enumerate().zip(grounded) {
            for ((i, t), grounded) in output.triplets.iter().enumerate().zip(grounded) {
                summary.answered += 1;
                let item = format!("{}/{pass}/{i}", window.name());
                let kept = grounded.and_then(|g| {
                    summary.grounded += 1;
                    summary.repointed += usize::from(g.repointed);
                    let chunk = &window.chunks[g.chunk];
                    if seen.insert(dedupe_key(&chunk.id, t)) {
                        Ok(row(chunk, t, provenance, &mut occurrences))
                    } else {
                        Err(Rejection::Duplicate)
                    }
                });
                match kept {
                    Ok(r) => rows.push(r),
                    Err(why) => {
                        // A returned triplet is not an item the stage read: a failure, with
                        // its reason, that costs its chunk only when the whole answer fails.
                        *summary.drops.entry(why.reason().into()).or_default() += 1;
                        drops.add_failure(item, why.reason(), describe(t));
                    }
                }
            }
        }
        let answered = summary.answered - answered;
        if answered > 0 && summary.grounded == found {
            for chunk in &window.chunks {
                drops.add(
                    chunk.id.clone(),
                    NO_GROUNDED_TRIPLETS,
                    format!(
                        "window {}: none of the {answered} triplets answered was found in it",
                        window.name()
                    ),
                );
            }
        }
    }
    rows
}

/// The drop reason of a window's chunks when the model answered triplets for it and none of
/// them was found in it.
pub const NO_GROUNDED_TRIPLETS: &str = "no_grounded_triplets";

fn describe(t: &ExtractedTriplet) -> String {
    let clip = |s: &str| s.chars().take(120).collect::<String>();
    format!(
        "({}; {}; {}) in {}: {}",
        clip(&t.entity_1),
        clip(&t.relation),
        clip(&t.entity_2),
        clip(&t.chunk_id),
        clip(&t.source_sentence)
    )
}

/// A triplet's row. Its id is its content: the report, the normalised triplet and its sentence,
/// so a fact keeps its id (and its patterns and questions theirs) when its chunk is edited
/// elsewhere or re-chunked. The same fact from the same sentence text a second time in one
/// report (a repeated sentence in another chunk) takes the next occurrence number.
fn row(
    chunk: &Chunk,
    t: &ExtractedTriplet,
    provenance: &str,
    occurrences: &mut BTreeMap<String, usize>,
) -> Triplet {
    let [_, e1, rel, e2] = dedupe_key(&chunk.id, t);
    let sentence = t.source_sentence.trim();
    let base = stable_id("triplet", &[&chunk.report_id, &e1, &rel, &e2, sentence]);
    let n = occurrences.entry(base.clone()).or_default();
    let id = if *n == 0 {
        base
    } else {
        stable_id(
            "triplet",
            &[&chunk.report_id, &e1, &rel, &e2, sentence, &n.to_string()],
        )
    };
    *n += 1;
    Triplet {
        id,
        report_id: chunk.report_id.clone(),
        chunk_id: chunk.id.clone(),
        entity_1: t.entity_1.trim().to_string(),
        relation: t.relation.trim().to_string(),
        entity_2: t.entity_2.trim().to_string(),
        source_sentence: t.source_sentence.trim().to_string(),
        provenance: provenance.to_string(),
    }
}

fn provenance(a: &Answer<TripletsOutput>) -> String {
    format!("{} (prompt {})", a.provenance, a.prompt_version)
}

fn window_input(c: &TripletsConfig, w: &Window<'_>) -> TripletsInput {
    TripletsInput {
        domain: w.domain().to_string(),
        target: c.window_target(w.domain(), w.chunks.len()),
        chunks: w
            .chunks
            .iter()
            .map(|c| WindowChunk {
                chunk_id: c.id.clone(),
                text: c.text.clone(),
            })
            .collect(),
        found: Vec::new(),
    }
}

impl TypedStage for TripletsStage {
    type Config = TripletsConfig;
    const KIND: &'static str = "triplets";
    const VERSION: u32 = 2;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::required("chunks", TableKind::Chunks)]
    }

    /// One report is one item: windows never cross reports.
    fn shard_keys(&self) -> Vec<ShardKey> {
        vec![ShardKey::new("chunks", "report_id")]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("triplets", TableKind::Triplets)]
    }

    fn validate(&self, c: &TripletsConfig, _root: &std::path::Path) -> Result<(), ConfigError> {
        if c.window_size == 0 {
            return Err(ConfigError::new("window_size", "must be at least 1"));
        }
        if c.max_window < c.window_size {
            return Err(ConfigError::new(
                "max_window",
                format!("must be at least window_size ({})", c.window_size),
            ));
        }
        if c.reference_chunks == 0 {
            return Err(ConfigError::new("reference_chunks", "must be at least 1"));
        }
        if c.default_target == 0 {
            return Err(ConfigError::new("default_target", "must be at least 1"));
        }
        if let Some((domain, _)) = c.targets.iter().find(|(_, n)| **n == 0) {
            return Err(ConfigError::new(
                format!("targets.{domain}"),
                "must be at least 1",
            ));
        }
        self.tasks.require()
    }

    fn environment(&self) -> serde_json::Value {
        self.tasks.fingerprint()
    }

    fn tasks(&self) -> Vec<&'static str> {
        self.tasks.names()
    }

    fn run(
        &self,
        c: &TripletsConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        self.validate(c, &ctx.root)?;
        let chunks: Vec<Chunk> = inputs.take("chunks")?;
        let stage = ctx.stage_id.as_str();
        let mut drops = Drops::new(stage);
        // Windows cut to what the model's context holds, when its size is known.
        let bare = TripletsInput {
            domain: "general".into(),
            target: c.window_target("general", c.max_window),
            chunks: Vec::new(),
            found: Vec::new(),
        };
        let room = self.llm.input_room::<Triplets>(&bare);
        let windows = windows::windows(&chunks, c.window_size, c.max_window, room);
        let first_inputs: Vec<TripletsInput> = windows.iter().map(|w| window_input(c, w)).collect();
        let first = self.ask(stage, ctx, "triplets", first_inputs.clone());
        let second = if c.gleaning {
            let glean: Vec<(usize, TripletsInput)> = first
                .iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    let a = r.as_ref().ok()?;
                    let mut input = first_inputs[i].clone();
                    input.found = a.value.triplets.clone();
                    Some((i, input))
                })
                .collect();
            let (at, glean): (Vec<usize>, Vec<TripletsInput>) = glean.into_iter().unzip();
            let answers = self.ask(stage, ctx, "triplets: gleaning", glean);
            at.into_iter().zip(answers).collect()
        } else {
            BTreeMap::new()
        };

        let mut summary = TripletsSummary {
            windows: windows.len(),
            ..TripletsSummary::default()
        };
        let mut answers: Vec<Vec<(String, &TripletsOutput)>> = Vec::new();
        for (i, w) in windows.iter().enumerate() {
            let mut passes = Vec::new();
            let results = std::iter::once((0, &first[i])).chain(second.get(&i).map(|r| (1, r)));
            for (pass, result) in results {
                match result {
                    Ok(a) => passes.push((provenance(a), &a.value)),
                    Err(e) => failed(&mut drops, &mut summary, w, pass, e),
                }
            }
            answers.push(passes);
        }
        let mut rows = ground_windows(&windows, &answers, &mut drops, &mut summary);
        noisebench_core::sort_by_id(&mut rows);
        summary.kept = rows.len();
        summary.grounding_rate = if summary.answered == 0 {
            1.0
        } else {
            summary.grounded as f64 / summary.answered as f64
        };
        for r in &rows {
            *summary.per_report.entry(r.report_id.clone()).or_default() += 1;
        }
        let report = StageReport {
            items_in: chunks.len() as u64,
            items_out: rows.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput::new(report)
            .with_table("triplets", rows)
            .with_facts(summary.facts()))
    }
}

/// A window whose call failed: on the first pass its chunks are dropped with the LLM layer's
/// reason (the stage counts chunks; transient ones are retried by the next run); a failed
/// gleaning pass costs no chunk (the first answer stands) and is recorded as a failure.
fn failed(
    drops: &mut Drops,
    summary: &mut TripletsSummary,
    w: &Window<'_>,
    pass: usize,
    e: &LlmError,
) {
    summary.calls_failed += 1;
    *summary.drops.entry(e.drop_reason()).or_default() += 1;
    if pass == 0 {
        for chunk in &w.chunks {
            drops.add(
                chunk.id.clone(),
                e.as_drop_reason(),
                format!("window {}: {e}", w.name()),
            );
        }
    } else {
        drops.add_failure(
            format!("{}/{pass}", w.name()),
            e.as_drop_reason(),
            e.to_string(),
        );
    }
}

impl TripletsStage {
    fn ask(
        &self,
        stage: &str,
        ctx: &StageContext,
        label: &str,
        inputs: Vec<TripletsInput>,
    ) -> Vec<Result<Answer<TripletsOutput>, LlmError>> {
        let bar = ctx.progress.bar(label, Some(inputs.len() as u64));
        let answers = self
            .llm
            .run_batch_with_progress::<Triplets>(stage, inputs, bar.as_ref());
        bar.finish();
        answers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_targets_follow_the_domain_and_the_window_alone() {
        let c = TripletsConfig::default();
        assert_eq!(c.window_target("finance", 5), 38);
        assert_eq!(c.window_target("policy", 5), 100);
        assert_eq!(c.window_target("general", 1), 8);
        let err =
            |json: serde_json::Value| serde_json::from_value::<TripletsConfig>(json).unwrap_err();
        assert!(
            err(serde_json::json!({"window": 5}))
                .to_string()
                .contains("unknown field")
        );
    }

    #[test]
    fn grounding_counts_repointed_duplicates_and_reasons() {
        let chunk = |id: &str, text: &str| Chunk {
            id: id.into(),
            report_id: "r1".into(),
            text: text.into(),
            ..Chunk::default()
        };
        let (a, b) = (
            chunk("c1", "Northwind Logistics acquired Baltic Freight Lines."),
            chunk("c2", "Baltic Freight Lines serves Riga Harbour."),
        );
        let w = Window {
            chunks: vec![&a, &b],
        };
        let t = |chunk: &str, e2: &str, sentence: &str| ExtractedTriplet {
            entity_1: "Baltic Freight Lines".into(),
            relation: "serves".into(),
            entity_2: e2.into(),
            chunk_id: chunk.into(),
            source_sentence: sentence.into(),
        };
        let out = TripletsOutput {
            triplets: vec![
                t(
                    "c1",
                    "Riga Harbour",
                    "Baltic Freight Lines serves Riga Harbour.",
                ),
                t(
                    "c2",
                    "Riga Harbour",
                    "baltic freight lines serves riga harbour",
                ),
                t(
                    "c2",
                    "Tallinn Port",
                    "Baltic Freight Lines serves Tallinn Port.",
                ),
                t(
                    "c3",
                    "Riga Harbour",
                    "Baltic Freight Lines serves Riga Harbour.",
                ),
            ],
        };
        let mut drops = Drops::new("triplets");
        let mut summary = TripletsSummary::default();
        let rows = ground_windows(
            &[w],
            &[vec![("offline".into(), &out)]],
            &mut drops,
            &mut summary,
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].chunk_id, "c2");
        assert_eq!(
            (summary.answered, summary.grounded, summary.repointed),
            (4, 2, 1)
        );
        let reasons: Vec<_> = summary
            .drops
            .iter()
            .map(|(r, n)| (r.as_str(), *n))
            .collect();
        assert_eq!(
            reasons,
            [("duplicate", 1), ("ungrounded", 1), ("unknown_chunk", 1)]
        );
        // A rejected triplet is a failure of a kept chunk (the stage counts chunks), recorded
        // but not an item dropped: the window grounded one triplet.
        assert_eq!((drops.len(), drops.dropped()), (3, 0));
    }
}
