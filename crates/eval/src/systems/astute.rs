//! Astute RAG (Algorithm 1): answer from the given passages and the model's own knowledge,
//! weighed against each other with their sources in view.
//!
//! Per ask, with `t` = [`AstuteConfig::iterations`] and `m̂` = [`AstuteConfig::max_internal_passages`]:
//!
//! 1. `astute_generate`: the model writes up to `m̂` passages of what it knows about the
//!    question (accurate, relevant, nothing invented; fewer or none when it knows little). Extra
//!    passages beyond `m̂` are dropped, in order.
//! 2. `D0` = the ask's passages (origin `external`, each with its own source name) followed by
//!    the model's (origin `internal`, ids `internal:<n>`).
//! 3. `t > 1`: `astute_consolidate` rounds `j = 1..t-1`, each given the question, `D0` and the
//!    previous round's passages (none in round 1, where `D0` is the current set), returning
//!    refined passages that cite the numbers of the `D0` passages they draw on; then
//!    `astute_answer` with `D0` and the last round's passages. `t = 1`: `astute_answer` with
//!    `D0` only.
//! 4. The answer follows the ask's form: one of the two words of a binary ask, a short phrase
//!    otherwise.
//!
//! A consolidated passage's origin comes from the `D0` passages it cites: `internal`,
//! `external`, `internal and external`, or `uncited` (citations outside `D0` are dropped).
//! Each step is one `run_batch` over the asks still alive, so a failed call fails its ask only.
//! [`Generated::steps`] reads `generate:<internal passages kept>`, `consolidate:<j>` per
//! round, `answer`; [`Generated::calls`] is `t + 1`.
//!
//! Offline rules (deterministic, no network):
//!
//! | task | rule |
//! |---|---|
//! | `astute_generate` | The offline backend knows nothing: no passage, `no_more: true`. |
//! | `astute_consolidate` | The current set (`D0` in round 1) filtered to the passages sharing at least two content words with the question (all of them if none does); each keeps its citations (a `D0` passage cites itself). |
//! | `astute_answer` | `offline_answer` over the final set (the last round's passages, or `D0` when `t = 1`) with the ask's question, form and style, so offline answers stay comparable with the plain generator's. |

use noisebench_llm::{Llm, LlmError, Task, TaskInfo};
use noisebench_text::words::content_words;
use serde::{Deserialize, Serialize};

use super::SystemsConfigError;
use super::steps;
use crate::generate::{
    AnswerForm, AnswerInput, AnswerOutput, Ask, Example, Generated, Generator, PassageView,
    offline_answer,
};

/// The tasks Astute RAG calls.
pub const TASKS: &[TaskInfo] = &[
    TaskInfo::of::<AstuteGenerate>(),
    TaskInfo::of::<AstuteConsolidate>(),
    TaskInfo::of::<AstuteAnswer>(),
];

/// Astute RAG's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AstuteConfig {
    /// `t`: 1 answers from the initial passages directly; each step above adds one
    /// consolidation round before the answer (1 to 3; default 2, as in the paper).
    pub iterations: usize,
    /// `m̂`: the most passages the model may write from its own knowledge (1 to 5; default 2).
    pub max_internal_passages: usize,
}

impl Default for AstuteConfig {
    fn default() -> Self {
        AstuteConfig {
            iterations: 2,
            max_internal_passages: 2,
        }
    }
}

/// The largest `m̂` a configuration may set. Each `astute_generate` request asks for at most
/// its own `m̂` ([`GenerateInput::max_passages`]): the prompt says it, and the task's bounds
/// ([`Task::bounds`]) write the same number into the schema's `maxItems` and the check.
const MAX_INTERNAL_PASSAGES: usize = 5;

/// The most passages one `astute_consolidate` round may return (the schema's `maxItems` and
/// the check, through [`Task::bounds`]): consolidation regroups the passages into fewer.
pub(crate) const MAX_CONSOLIDATED_PASSAGES: usize = 10;

impl AstuteConfig {
    pub fn validate(&self) -> Result<(), SystemsConfigError> {
        if !(1..=3).contains(&self.iterations) {
            return Err(SystemsConfigError {
                field: "astute.iterations".into(),
                message: format!("must be 1, 2 or 3, not {}", self.iterations),
            });
        }
        if !(1..=MAX_INTERNAL_PASSAGES).contains(&self.max_internal_passages) {
            return Err(SystemsConfigError {
                field: "astute.max_internal_passages".into(),
                message: format!(
                    "must be 1 to {MAX_INTERNAL_PASSAGES}, not {}",
                    self.max_internal_passages
                ),
            });
        }
        Ok(())
    }
}

/// Where a passage's knowledge comes from.
pub(crate) const EXTERNAL: &str = "external";
pub(crate) const INTERNAL: &str = "internal";

/// A passage as Astute's prompts show it: numbered within its set, with its origin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SourcedPassage {
    /// 1-based, within its set: what citations refer to (for `D0`).
    pub number: usize,
    pub text: String,
    /// `external`, `internal`; for a consolidated passage also `internal and external` or
    /// `uncited`.
    pub origin: String,
    /// An external passage's own source (a domain), when known.
    pub source: Option<String>,
    /// What is known of that source, when the ask shows backgrounds.
    pub background: Option<String>,
    /// The `D0` passages it draws on (empty for a `D0` passage).
    pub sources: Vec<usize>,
}

/// `astute_generate`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GenerateInput {
    pub question: String,
    /// `m̂`.
    pub max_passages: usize,
}

/// `astute_generate`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GenerateOutput {
    pub passages: Vec<String>,
    /// The model says it has nothing more (or nothing at all) it can state reliably.
    pub no_more: bool,
}

/// `astute_generate`: passages from the model's own knowledge (Astute RAG 3.3).
pub(crate) struct AstuteGenerate;
impl Task for AstuteGenerate {
    const NAME: &'static str = "astute_generate";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = GenerateInput;
    type Output = GenerateOutput;
    /// At most `m̂` passages, as the prompt asks; none is a valid answer.
    fn bounds(input: &GenerateInput) -> Vec<noisebench_llm::ItemBounds> {
        vec![noisebench_llm::ItemBounds {
            field: "passages",
            min: 0,
            max: input.max_passages,
        }]
    }
    /// Not probed by the preflight; the fuzz seed and the wiring tests' input.
    fn example() -> Option<GenerateInput> {
        serde_json::from_str(r#"{"question":"Who is the CEO of Apple?","max_passages":2}"#).ok()
    }
    fn offline(_: &GenerateInput) -> GenerateOutput {
        GenerateOutput {
            passages: Vec::new(),
            no_more: true,
        }
    }
}

/// `astute_consolidate`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConsolidateInput {
    pub question: String,
    /// The round, from 1.
    pub iteration: usize,
    /// `D0`.
    pub initial: Vec<SourcedPassage>,
    /// The previous round's passages; empty in round 1 (the current set is `D0` then).
    pub current: Vec<SourcedPassage>,
}

/// One consolidated passage as the model returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Consolidated {
    pub text: String,
    /// Numbers of the initial passages it draws on.
    pub sources: Vec<usize>,
}

/// `astute_consolidate`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConsolidateOutput {
    pub passages: Vec<Consolidated>,
}

/// `astute_consolidate`: one round of source-aware consolidation (Astute RAG 3.4).
pub(crate) struct AstuteConsolidate;
impl Task for AstuteConsolidate {
    const NAME: &'static str = "astute_consolidate";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = ConsolidateInput;
    type Output = ConsolidateOutput;
    /// At most [`MAX_CONSOLIDATED_PASSAGES`]; none is a valid answer (nothing bore on the
    /// question).
    fn bounds(_: &ConsolidateInput) -> Vec<noisebench_llm::ItemBounds> {
        vec![noisebench_llm::ItemBounds {
            field: "passages",
            min: 0,
            max: MAX_CONSOLIDATED_PASSAGES,
        }]
    }
    /// Not probed by the preflight; the fuzz seed and the wiring tests' input.
    fn example() -> Option<ConsolidateInput> {
        serde_json::from_str(
            r#"{"question":"Who is the CEO of Apple?","iteration":1,"initial":[{"number":1,"text":"Tim Cook is the CEO of Apple.","origin":"retrieved","source":null,"background":null,"sources":[]}],"current":[{"number":2,"text":"Apple's CEO is Tim Cook.","origin":"generated","source":null,"background":null,"sources":[1]}]}"#,
        )
        .ok()
    }
    fn offline(input: &ConsolidateInput) -> ConsolidateOutput {
        offline_consolidate(input)
    }
}

/// `astute_answer`'s input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FinalInput {
    pub question: String,
    /// `binary` or `open`.
    pub form: String,
    pub yes: Option<String>,
    pub no: Option<String>,
    /// The ask's style (`direct`, `cot`, `discern`).
    pub style: String,
    /// `t`: above 1, `consolidated` holds the last round's passages.
    pub iterations: usize,
    pub initial: Vec<SourcedPassage>,
    pub consolidated: Vec<SourcedPassage>,
    pub examples: Vec<Example>,
}

/// `astute_answer`: compare the groups of passages and answer (Astute RAG 3.5).
pub(crate) struct AstuteAnswer;
impl Task for AstuteAnswer {
    const NAME: &'static str = "astute_answer";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = FinalInput;
    type Output = AnswerOutput;
    /// Not probed by the preflight; the fuzz seed and the wiring tests' input.
    fn example() -> Option<FinalInput> {
        serde_json::from_str(
            r#"{"question":"Who is the CEO of Apple?","form":"open","yes":null,"no":null,"style":"short","iterations":1,"initial":[{"number":1,"text":"Tim Cook is the CEO of Apple.","origin":"retrieved","source":null,"background":null,"sources":[]}],"consolidated":[{"number":1,"text":"Tim Cook is the CEO of Apple.","origin":"retrieved","source":null,"background":null,"sources":[1]}],"examples":[]}"#,
        )
        .ok()
    }
    fn offline(input: &FinalInput) -> AnswerOutput {
        let last = if input.iterations > 1 {
            &input.consolidated
        } else {
            &input.initial
        };
        offline_answer(&AnswerInput {
            question: input.question.clone(),
            form: input.form.clone(),
            yes: input.yes.clone(),
            no: input.no.clone(),
            style: input.style.clone(),
            passages: last
                .iter()
                .map(|p| PassageView {
                    text: p.text.clone(),
                    source: p.source.clone(),
                    background: p.background.clone(),
                })
                .collect(),
            examples: input.examples.clone(),
        })
    }
}

fn offline_consolidate(input: &ConsolidateInput) -> ConsolidateOutput {
    let current = if input.iteration <= 1 {
        &input.initial
    } else {
        &input.current
    };
    let question = content_words(&input.question);
    let on_topic: Vec<&SourcedPassage> = current
        .iter()
        .filter(|p| content_words(&p.text).intersection(&question).count() >= 2)
        .collect();
    let kept = if on_topic.is_empty() {
        current.iter().collect()
    } else {
        on_topic
    };
    ConsolidateOutput {
        passages: kept
            .into_iter()
            .map(|p| Consolidated {
                text: p.text.clone(),
                sources: if p.sources.is_empty() {
                    vec![p.number]
                } else {
                    p.sources.clone()
                },
            })
            .collect(),
    }
}

/// `D0`: the ask's passages, then the model's own.
fn initial_set(ask: &Ask, internal: &[String]) -> Vec<SourcedPassage> {
    let external = ask.passages.iter().map(|p| SourcedPassage {
        number: 0,
        text: p.text.clone(),
        origin: EXTERNAL.into(),
        source: p.source.clone(),
        background: if ask.show_background {
            p.background.clone()
        } else {
            None
        },
        sources: Vec::new(),
    });
    let own = internal.iter().map(|t| SourcedPassage {
        number: 0,
        text: t.clone(),
        origin: INTERNAL.into(),
        source: None,
        background: None,
        sources: Vec::new(),
    });
    external
        .chain(own)
        .enumerate()
        .map(|(i, p)| SourcedPassage { number: i + 1, ..p })
        .collect()
}

/// A round's passages, numbered, with citations kept to `D0` and their origin derived from it.
fn consolidated_set(initial: &[SourcedPassage], out: ConsolidateOutput) -> Vec<SourcedPassage> {
    out.passages
        .into_iter()
        .filter(|c| !c.text.trim().is_empty())
        .enumerate()
        .map(|(i, c)| {
            let mut sources: Vec<usize> = c
                .sources
                .into_iter()
                .filter(|n| (1..=initial.len()).contains(n))
                .collect();
            sources.sort_unstable();
            sources.dedup();
            let cites = |origin: &str| sources.iter().any(|n| initial[n - 1].origin == origin);
            let origin = match (cites(INTERNAL), cites(EXTERNAL)) {
                (true, true) => "internal and external",
                (true, false) => INTERNAL,
                (false, true) => EXTERNAL,
                (false, false) => "uncited",
            };
            SourcedPassage {
                number: i + 1,
                text: c.text.trim().to_string(),
                origin: origin.into(),
                source: None,
                background: None,
                sources,
            }
        })
        .collect()
}

/// Astute RAG as a [`Generator`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Astute {
    pub config: AstuteConfig,
}

/// One ask on its way through the steps.
struct Progress {
    initial: Vec<SourcedPassage>,
    current: Vec<SourcedPassage>,
    steps: Vec<String>,
    calls: usize,
}

impl Generator for Astute {
    fn name(&self) -> &'static str {
        "astute"
    }

    fn tasks(&self) -> Vec<TaskInfo> {
        TASKS.to_vec()
    }

    fn generate(&self, llm: &Llm, stage: &str, asks: &[Ask]) -> Vec<Result<Generated, LlmError>> {
        // Validated configurations are in range already; clamping keeps an unvalidated one
        // from looping for ever or asking for no passage.
        let t = self.config.iterations.clamp(1, 3);
        let m = self
            .config
            .max_internal_passages
            .clamp(1, MAX_INTERNAL_PASSAGES);

        let mut states = steps::start::<AstuteGenerate, _>(
            llm,
            stage,
            asks,
            |a| GenerateInput {
                question: a.question.clone(),
                max_passages: m,
            },
            |ask, a| {
                let own: Vec<String> = a
                    .value
                    .passages
                    .iter()
                    .map(|p| p.trim().to_string())
                    .filter(|p| !p.is_empty())
                    .take(m)
                    .collect();
                Progress {
                    initial: initial_set(ask, &own),
                    current: Vec::new(),
                    steps: vec![format!("generate:{}", own.len())],
                    calls: 1,
                }
            },
        );
        for j in 1..t {
            steps::step::<AstuteConsolidate, _>(
                llm,
                stage,
                asks,
                &mut states,
                |_| true,
                |ask, s| ConsolidateInput {
                    question: ask.question.clone(),
                    iteration: j,
                    initial: s.initial.clone(),
                    current: s.current.clone(),
                },
                |s, a| {
                    s.current = consolidated_set(&s.initial, a.value);
                    s.steps.push(format!("consolidate:{j}"));
                    s.calls += 1;
                },
            );
        }
        steps::finish::<AstuteAnswer, _>(
            llm,
            stage,
            asks,
            states,
            "answer",
            |ask, s| final_input(ask, t, s),
            |_, mut s, a| {
                s.steps.push("answer".into());
                let answer = a.value.answer.clone();
                steps::generated(&a, answer, s.calls, s.steps)
            },
        )
    }
}

fn final_input(ask: &Ask, t: usize, s: &Progress) -> FinalInput {
    let (form, yes, no) = match &ask.form {
        AnswerForm::Binary { yes, no } => ("binary", Some(yes.clone()), Some(no.clone())),
        AnswerForm::Open => ("open", None, None),
    };
    FinalInput {
        question: ask.question.clone(),
        form: form.into(),
        yes,
        no,
        style: ask.style.as_str().into(),
        iterations: t,
        initial: s.initial.clone(),
        consolidated: s.current.clone(),
        examples: ask.examples.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Passage, Style};

    fn ask() -> Ask {
        let mut ask = Ask::new(
            "q1",
            "Which company leases Westgate Basin?",
            AnswerForm::Open,
        );
        ask.passages = vec![
            Passage {
                id: "c1".into(),
                text: "Ostrava Sawmill Group leases Westgate Basin from the port.".into(),
                source: Some("port.example".into()),
                background: Some("The port's own site.".into()),
            },
            Passage {
                id: "c2".into(),
                text: "A recipe for apple pie.".into(),
                source: None,
                background: None,
            },
        ];
        ask
    }

    #[test]
    fn the_initial_set_numbers_external_then_internal_passages() {
        let d0 = initial_set(&ask(), &["The basin was dredged in 1990.".into()]);
        let seen: Vec<(usize, &str, Option<&str>)> = d0
            .iter()
            .map(|p| (p.number, p.origin.as_str(), p.source.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                (1, EXTERNAL, Some("port.example")),
                (2, EXTERNAL, None),
                (3, INTERNAL, None)
            ]
        );
        // Backgrounds only when the ask shows them.
        assert_eq!(d0[0].background, None);
    }

    #[test]
    fn consolidated_passages_take_their_origin_from_what_they_cite() {
        let d0 = initial_set(&ask(), &["The basin was dredged in 1990.".into()]);
        let out = ConsolidateOutput {
            passages: vec![
                Consolidated {
                    text: " both ".into(),
                    sources: vec![3, 1, 1],
                },
                Consolidated {
                    text: "inside".into(),
                    sources: vec![3],
                },
                Consolidated {
                    text: "   ".into(),
                    sources: vec![1],
                },
                Consolidated {
                    text: "outside".into(),
                    sources: vec![2, 9],
                },
                Consolidated {
                    text: "nowhere".into(),
                    sources: vec![0, 7],
                },
            ],
        };
        let set = consolidated_set(&d0, out);
        let seen: Vec<(usize, &str, &str, Vec<usize>)> = set
            .iter()
            .map(|p| {
                (
                    p.number,
                    p.text.as_str(),
                    p.origin.as_str(),
                    p.sources.clone(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (1, "both", "internal and external", vec![1, 3]),
                (2, "inside", INTERNAL, vec![3]),
                (3, "outside", EXTERNAL, vec![2]),
                (4, "nowhere", "uncited", vec![]),
            ]
        );
    }

    #[test]
    fn the_offline_consolidation_keeps_on_topic_passages() {
        let d0 = initial_set(&ask(), &[]);
        let input = ConsolidateInput {
            question: "Which company leases Westgate Basin?".into(),
            iteration: 1,
            initial: d0.clone(),
            current: Vec::new(),
        };
        let out = offline_consolidate(&input);
        assert_eq!(out.passages.len(), 1);
        assert_eq!(out.passages[0].sources, [1]);
        // Nothing on topic: everything is kept.
        let off = ConsolidateInput {
            question: "Who painted the harbour lighthouse?".into(),
            ..input
        };
        assert_eq!(offline_consolidate(&off).passages.len(), 2);
    }

    /// No eval prompt's schema states an item count of its own (the counts come from each
    /// task's bounds, the numbers its check holds), and Astute's bounded tasks send the
    /// bounds their checks apply.
    #[test]
    fn every_eval_tasks_schema_and_check_agree() {
        use noisebench_llm::ItemBounds;
        use noisebench_llm::prompt::Prompts;
        use noisebench_llm::task::{check_answer, schema_for, schema_self_check};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let prompts = Prompts::in_dir(&dir);
        let mut tasks: Vec<TaskInfo> = TASKS.to_vec();
        tasks.extend(crate::systems::counterrefine::TASKS);
        tasks.extend(crate::answers::JUDGE_TASKS);
        tasks.extend(crate::confact::tasks());
        tasks.push(TaskInfo::of::<crate::generate::EvalAnswer>());
        assert_eq!(tasks.len(), 8);
        fn own_bounds(v: &serde_json::Value) -> bool {
            match v {
                serde_json::Value::Object(m) => m
                    .iter()
                    .any(|(k, x)| k == "minItems" || k == "maxItems" || own_bounds(x)),
                serde_json::Value::Array(a) => a.iter().any(own_bounds),
                _ => false,
            }
        }
        for t in &tasks {
            let prompt = prompts.get(t.name).unwrap().expect(t.name);
            assert!(!own_bounds(&prompt.schema), "{}: {}", t.name, prompt.schema);
        }

        for m in 1..=MAX_INTERNAL_PASSAGES {
            let input = GenerateInput {
                question: "Who leases Westgate Basin?".into(),
                max_passages: m,
            };
            let answer = |n: usize| GenerateOutput {
                passages: vec!["Westgate Basin is leased by a sawmill.".into(); n],
                no_more: true,
            };
            schema_self_check::<AstuteGenerate>(&prompts, &input, &answer(m)).unwrap();
            let sent = schema_for::<AstuteGenerate>(
                &prompts.get("astute_generate").unwrap().unwrap().schema,
                &input,
            );
            assert_eq!(sent["properties"]["passages"]["maxItems"], m);
            assert!(check_answer::<AstuteGenerate>(&input, &answer(0)).is_ok());
            assert!(check_answer::<AstuteGenerate>(&input, &answer(m + 1)).is_err());
        }
        let consolidate = ConsolidateInput {
            question: "Who leases Westgate Basin?".into(),
            iteration: 1,
            initial: initial_set(&ask(), &[]),
            current: Vec::new(),
        };
        let answer = ConsolidateOutput {
            passages: vec![
                Consolidated {
                    text: "A sawmill leases the basin.".into(),
                    sources: vec![1],
                };
                MAX_CONSOLIDATED_PASSAGES
            ],
        };
        schema_self_check::<AstuteConsolidate>(&prompts, &consolidate, &answer).unwrap();
        assert_eq!(
            AstuteConsolidate::bounds(&consolidate),
            [ItemBounds {
                field: "passages",
                min: 0,
                max: MAX_CONSOLIDATED_PASSAGES
            }]
        );
    }

    #[test]
    fn offline_answers_are_deterministic_and_prompts_render() {
        use noisebench_llm::prompt::Prompts;
        use noisebench_llm::task::offline_self_check;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let prompts = Prompts::in_dir(&dir);
        let mut a = ask();
        a.show_background = true;
        a.style = Style::Discern;
        let d0 = initial_set(&a, &["The basin was dredged in 1990.".into()]);
        let generated = offline_self_check::<AstuteGenerate>(
            &prompts,
            GenerateInput {
                question: a.question.clone(),
                max_passages: 2,
            },
        )
        .unwrap();
        assert_eq!(generated, r#"{"passages":[],"no_more":true}"#);
        let first = ConsolidateInput {
            question: a.question.clone(),
            iteration: 1,
            initial: d0.clone(),
            current: Vec::new(),
        };
        let consolidated =
            offline_self_check::<AstuteConsolidate>(&prompts, first.clone()).unwrap();
        assert_eq!(
            consolidated,
            r#"{"passages":[{"text":"Ostrava Sawmill Group leases Westgate Basin from the port.","sources":[1]}]}"#
        );
        let d1 = consolidated_set(&d0, offline_consolidate(&first));
        offline_self_check::<AstuteConsolidate>(
            &prompts,
            ConsolidateInput {
                iteration: 2,
                current: d1.clone(),
                ..first
            },
        )
        .unwrap();
        for (t, consolidated) in [(1, Vec::new()), (2, d1)] {
            let s = Progress {
                initial: d0.clone(),
                current: consolidated,
                steps: Vec::new(),
                calls: 0,
            };
            let answer =
                offline_self_check::<AstuteAnswer>(&prompts, final_input(&a, t, &s)).unwrap();
            assert!(
                answer.contains("Ostrava Sawmill Group leases Westgate Basin"),
                "{answer}"
            );
        }
        let mut binary = a.clone();
        binary.form = AnswerForm::Binary {
            yes: "true".into(),
            no: "false".into(),
        };
        let s = Progress {
            initial: d0,
            current: Vec::new(),
            steps: Vec::new(),
            calls: 0,
        };
        offline_self_check::<AstuteAnswer>(&prompts, final_input(&binary, 1, &s)).unwrap();
    }
}
