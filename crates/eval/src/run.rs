//! One evaluation: which task families run on the data ([`EvalConfig`]), with which generator,
//! and everything they produced ([`Evaluation`]).

use std::collections::BTreeMap;

use noisebench_llm::{Llm, TaskInfo};
use serde::{Deserialize, Serialize};

use crate::answers::{AnswerJudge, DEFAULT_MAX_ANSWER_WORDS, RefusalConfig, RefusalDetector};
use crate::confact::{ConfactConfig, run_confact};
use crate::data::EvalData;
use crate::generate::Generator;
use crate::metrics::Bootstrap;
use crate::outcome::TaskOutcome;
use crate::raguard::{RaguardConfig, RaguardRun, run_raguard};
use crate::rare_met::{RareConfig, RareRun, run_rare};
use crate::systems::SystemsConfig;

/// The task families.
pub(crate) const FAMILIES: [&str; 3] = ["raguard", "confact", "rare"];

/// What `noisebench eval` runs (`[eval]` of its configuration file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Task families to run, among `raguard`, `confact`, `rare`; a family runs only when the
    /// data has its items (claims with documents; questions with chunks).
    pub families: Vec<String>,
    /// The generator: `plain`, `astute` or `counterrefine`.
    pub system: String,
    /// The reference systems' settings.
    pub systems: SystemsConfig,
    /// Seed of the claim split, the two-shot draw and the bootstrap.
    pub seed: u64,
    /// Bootstrap resamples per interval (0: no intervals).
    pub bootstrap_samples: usize,
    /// Only the first this many items per family (quick runs); `None`: all.
    pub limit: Option<usize>,
    /// Answers longer than this many words are counted as `rambling`.
    pub max_answer_words: usize,
    /// How refusals are recognised (RARE-Met's safe refusals; a refusal to a yes/no question is
    /// out of scope).
    pub refusal: RefusalConfig,
    /// RAGuard's tasks: the claim split, two-shot examples, retrieval depths and gains.
    pub raguard: RaguardConfig,
    /// CONF-FACT's tasks: passages, ranking, credibility weighting, methods.
    pub confact: ConfactConfig,
    /// RARE-Met: real retrieval depth and the split evaluated.
    pub rare: RareConfig,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            families: FAMILIES.iter().map(|f| f.to_string()).collect(),
            system: "plain".into(),
            systems: SystemsConfig::default(),
            seed: 0,
            bootstrap_samples: 1000,
            limit: None,
            max_answer_words: DEFAULT_MAX_ANSWER_WORDS,
            refusal: RefusalConfig::default(),
            raguard: RaguardConfig::default(),
            confact: ConfactConfig::default(),
            rare: RareConfig::default(),
        }
    }
}

/// Why an evaluation could not start.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("[eval] families: unknown family `{0}` (known: raguard, confact, rare)")]
    UnknownFamily(String),
    #[error("[eval] system: unknown system `{0}` (known: plain, astute, counterrefine)")]
    UnknownSystem(String),
    #[error("[eval] refusal.patterns: {0}")]
    Refusal(String),
    #[error("[eval] {0}")]
    Llm(String),
    #[error("[eval] {0}")]
    Config(String),
}

/// Everything an evaluation produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// What was evaluated (`EvalData::name`).
    pub benchmark: String,
    /// `offline` or `openai:<model>`: the model of `eval_answer`.
    pub model: String,
    pub system: String,
    pub outcomes: Vec<TaskOutcome>,
    /// Input rows that could not be used, by reason.
    pub bad_rows: BTreeMap<String, usize>,
    /// Families that did not run, and why.
    pub skipped: BTreeMap<String, String>,
}

impl EvalConfig {
    /// The generator this configuration names.
    pub fn generator(&self) -> Result<Box<dyn Generator>, EvalError> {
        crate::systems::by_name(&self.system, &self.systems)
            .ok_or_else(|| EvalError::UnknownSystem(self.system.clone()))
    }

    /// Every LLM task the evaluation may call with this configuration.
    pub fn tasks(&self) -> Result<Vec<TaskInfo>, EvalError> {
        let mut tasks = self.generator()?.tasks();
        tasks.push(TaskInfo::of::<AnswerJudge>());
        tasks.extend(crate::confact::tasks());
        tasks.sort();
        tasks.dedup();
        Ok(tasks)
    }

    /// Check the configuration before any call.
    pub fn check(&self) -> Result<(), EvalError> {
        if let Some(f) = self
            .families
            .iter()
            .find(|f| !FAMILIES.contains(&f.as_str()))
        {
            return Err(EvalError::UnknownFamily(f.clone()));
        }
        self.generator()?;
        self.systems
            .validate()
            .map_err(|e| EvalError::Config(e.to_string()))?;
        self.confact
            .validate()
            .map_err(|e| EvalError::Config(format!("confact: {e}")))?;
        if !(0.0..=1.0).contains(&self.raguard.test_share) {
            return Err(EvalError::Config(format!(
                "raguard.test_share: {} is not in 0..=1",
                self.raguard.test_share
            )));
        }
        RefusalDetector::new(&self.refusal).map_err(|e| EvalError::Refusal(e.to_string()))?;
        Ok(())
    }
}

/// Run every configured family that `data` has items for.
pub fn evaluate(data: &EvalData, llm: &Llm, config: &EvalConfig) -> Result<Evaluation, EvalError> {
    config.check()?;
    noisebench_llm::StageTasks::new(llm.clone(), config.tasks()?)
        .declare()
        .map_err(|e| EvalError::Llm(e.to_string()))?;
    let generator = config.generator()?;
    let refusal =
        RefusalDetector::new(&config.refusal).map_err(|e| EvalError::Refusal(e.to_string()))?;
    let boot = Bootstrap {
        samples: config.bootstrap_samples,
        seed: config.seed,
    };
    let stage = "eval";
    let mut out = Evaluation {
        benchmark: data.name.clone(),
        model: llm.provenance(<crate::generate::EvalAnswer as noisebench_llm::Task>::NAME),
        system: generator.name().to_string(),
        bad_rows: data.bad_row_counts(),
        ..Default::default()
    };
    let wants = |f: &str| config.families.iter().any(|x| x == f);
    let has_documents = data.claims.iter().any(|c| !c.documents.is_empty());
    if wants("raguard") {
        if data.claims.is_empty() {
            out.skipped.insert("raguard".into(), "no claims".into());
        } else {
            if data.documents.is_empty() {
                out.skipped.insert(
                    "raguard_rag_and_oracle".into(),
                    "no documents (claims.csv alone?): only zero_context runs".into(),
                );
            }
            let run = RaguardRun {
                llm,
                generator: generator.as_ref(),
                refusal: &refusal,
                max_answer_words: config.max_answer_words,
                boot,
                seed: config.seed,
                limit: config.limit,
                stage,
            };
            out.outcomes
                .extend(run_raguard(data, &config.raguard, &run));
        }
    }
    if wants("confact") {
        if data.claims.is_empty() || !has_documents {
            out.skipped
                .insert("confact".into(), "no claims with documents".into());
        } else {
            let limited;
            let data = match config.limit {
                Some(n) if data.claims.len() > n => {
                    let mut d = data.clone();
                    d.claims.truncate(n);
                    limited = d;
                    &limited
                }
                _ => data,
            };
            let mut confact = config.confact.clone();
            if crate::confact::claim_documents_with_credibility(data).0 == 0 {
                let (aware, rest): (Vec<String>, Vec<String>) = confact
                    .methods
                    .iter()
                    .cloned()
                    .partition(|m| crate::confact::CREDIBILITY_METHODS.contains(&m.as_str()));
                for m in aware {
                    out.skipped.insert(
                        format!("confact_{m}"),
                        "no document has source credibility (a level, score or background): give the release's credibility tables (all_media_data.pkl, mbfc_media_data.pkl beside the instances, or --credibility)".into(),
                    );
                }
                confact.methods = rest;
            }
            out.outcomes.extend(run_confact(
                data,
                llm,
                generator.as_ref(),
                &confact,
                boot,
                stage,
            ));
        }
    }
    if wants("rare") {
        if data.questions.is_empty() || data.chunks.is_empty() {
            out.skipped
                .insert("rare".into(), "no questions with chunks".into());
        } else {
            let run = RareRun {
                llm,
                generator: generator.as_ref(),
                refusal: &refusal,
                boot,
                limit: config.limit,
                stage,
            };
            out.outcomes.extend(run_rare(data, &config.rare, &run));
        }
    }
    Ok(out)
}
