//! The LLM tasks of the `labels` stage: `exam_verdict` (RAGuard's exam, whose contract is shared
//! with the queries stage in [`noisebench_core::vocab::exam`]), the three stance votes
//! `stance_url`, `stance_text`, `stance_reasoned` (CONF-FACT) and `credibility` (the domain
//! table's fallback). Each task is its input, its answer and checks, its offline rule and that
//! rule's version; its prompt is `pipelines/prompts/<name>.md`.
//!
//! The exam and the votes keep the model's JSON reply as their answer and read it with
//! [`Verdict::in_reply`] / [`Stance::in_reply`]: the check accepts a reply only when an answer can
//! be found in it (else the engine re-asks), so a stance at the end of a reasoning is not lost,
//! and every reader of a cached reply finds the same answer in it.
//!
//! Offline rules (deterministic, no network; relevance and cues from
//! [`noisebench_text::cues`]):
//!
//! | task | rule |
//! |---|---|
//! | `exam_verdict` | No document: `undecided`. Relevance = share of the claim's content words found in the document; below 0.5: `undecided`. Else more refuting cues (false, hoax, debunked, no evidence, misleading...) than supporting ones (true, confirmed, accurate, verified...): `false`, else `true`. |
//! | `stance_text` | The same cues and relevance: below 0.5: not enough evidence; more refuting cues: reject; else support. |
//! | `stance_reasoned` | `stance_text`'s decision, with a reasoning that lists the relevance and the cues found. |
//! | `stance_url` | The URL's host and path split into words; a refuting cue word with relevance >= 0.3: reject; relevance >= 0.5: support; else not enough evidence. |
//! | `credibility` | By domain: `.gov`/`.mil`/`gov.xx` high government; `.edu`/`ac.xx` high academic; known social sites low social media; known news outlets high mainstream news; `.org` medium non-profit; anything else low other (no information). |

use std::collections::BTreeMap;

use noisebench_core::label_enum;
use noisebench_core::vocab::{Stance, Verdict, exam};
use noisebench_llm::{Task, TaskInfo};
use noisebench_text::cues::Signals;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The tasks the `labels` stage may call: its fingerprint covers these, and its configuration
/// check asks the LLM layer for the prompts of those its configuration uses.
pub const TASKS: &[TaskInfo] = &[
    TaskInfo::of::<ExamVerdict>(),
    TaskInfo::of::<StanceUrl>(),
    TaskInfo::of::<StanceText>(),
    TaskInfo::of::<StanceReasoned>(),
    TaskInfo::of::<Credibility>(),
];

/// `exam_verdict`: the claim judged from one document (or none, the zero-context probe). Only
/// its wiring into the LLM engine is here; see [`noisebench_core::vocab::exam`].
pub struct ExamVerdict;
impl Task for ExamVerdict {
    const NAME: &'static str = exam::TASK;
    const OFFLINE_VERSION: &'static str = exam::OFFLINE_VERSION;
    type Input = exam::Input;
    type Output = Value;
    fn check(_: &exam::Input, reply: &Value) -> Result<(), String> {
        exam::check(reply)
    }
    fn category(reply: &Value) -> Option<String> {
        Verdict::in_reply(reply).map(|v| v.as_str().to_string())
    }
    fn offline(input: &exam::Input) -> Value {
        exam::offline_reply(input, noisebench_text::cues::cue_counts)
    }
    fn examples() -> Vec<exam::Input> {
        exam::examples()
    }
}

/// A claim and two texts, one supporting it and one rejecting it: the stance tasks' preflight
/// inputs.
fn stance_examples() -> Vec<StanceTextInput> {
    let claim = "The Riverside library opened a second branch in 2021.";
    [
        "The Riverside public library opened its second branch on Elm Street in May 2021, the city confirmed; the claim is accurate.",
        "Riverside's library has never opened a second branch; the plan for one was cancelled in 2019. The claim is false.",
    ]
    .iter()
    .map(|text| StanceTextInput {
        claim: claim.into(),
        claim_date: Some("2022-03-01".into()),
        text: (*text).into(),
    })
    .collect()
}

/// A stance reply's category for the run-wide constant-answer flag.
fn stance_category(reply: &Value) -> Option<String> {
    Stance::in_reply(reply).map(|s| s.as_str().to_string())
}

fn need_stance(reply: &Value) -> Result<(), String> {
    Stance::in_reply(reply).map(|_| ()).ok_or_else(|| {
        "no stance found: end with `Final answer: ` and one of support, reject, not enough evidence"
            .into()
    })
}

/// `stance_url`: stance of a document judged from its URL only (CONF-FACT Appendix A, B).
pub struct StanceUrl;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StanceUrlInput {
    pub claim: String,
    pub claim_date: Option<String>,
    pub url: String,
}
impl Task for StanceUrl {
    const NAME: &'static str = "stance_url";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = StanceUrlInput;
    type Output = Value;
    fn check(_: &StanceUrlInput, reply: &Value) -> Result<(), String> {
        need_stance(reply)
    }
    fn category(reply: &Value) -> Option<String> {
        stance_category(reply)
    }
    fn offline(input: &StanceUrlInput) -> Value {
        serde_json::json!({ "stance": stance_url_rule(input).as_str() })
    }
    fn examples() -> Vec<StanceUrlInput> {
        let claim = "The Riverside library opened a second branch in 2021.";
        [
            "https://www.riverside.gov/news/2021/library-opens-second-branch",
            "https://www.factcheck.org/2022/03/no-riverside-library-never-opened-second-branch-false-claim/",
        ]
        .iter()
        .map(|url| StanceUrlInput {
            claim: claim.into(),
            claim_date: Some("2022-03-01".into()),
            url: (*url).into(),
        })
        .collect()
    }
}

/// Input of `stance_text` and `stance_reasoned`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StanceTextInput {
    pub claim: String,
    pub claim_date: Option<String>,
    pub text: String,
}

/// `stance_text`: stance judged from the page text (CONF-FACT Appendix A, C).
pub struct StanceText;
impl Task for StanceText {
    const NAME: &'static str = "stance_text";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = StanceTextInput;
    type Output = Value;
    fn check(_: &StanceTextInput, reply: &Value) -> Result<(), String> {
        need_stance(reply)
    }
    fn category(reply: &Value) -> Option<String> {
        stance_category(reply)
    }
    fn offline(input: &StanceTextInput) -> Value {
        serde_json::json!({ "stance": stance_text_rule(input).0.as_str() })
    }
    fn examples() -> Vec<StanceTextInput> {
        stance_examples()
    }
}

/// `stance_reasoned`: reasoning first, then the stance (CONF-FACT Appendix A, D); the stance
/// may sit at the end of the reasoning.
pub struct StanceReasoned;
impl Task for StanceReasoned {
    const NAME: &'static str = "stance_reasoned";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = StanceTextInput;
    type Output = Value;
    fn check(_: &StanceTextInput, reply: &Value) -> Result<(), String> {
        need_stance(reply)
    }
    fn category(reply: &Value) -> Option<String> {
        stance_category(reply)
    }
    fn offline(input: &StanceTextInput) -> Value {
        let (stance, reasoning) = stance_text_rule(input);
        serde_json::json!({ "reasoning": reasoning, "stance": stance.as_str() })
    }
    fn examples() -> Vec<StanceTextInput> {
        stance_examples()
    }
}

label_enum!(
    /// Source credibility level.
    CredibilityLevel { High = "high", Medium = "medium", Low = "low" }
);
label_enum!(
    /// Source type (CONF-FACT Appendix G).
    SourceType { MainstreamNews = "mainstream news", Government = "government", NonProfit = "non-profit" | "nonprofit", Academic = "academic", SocialMedia = "social media", Other = "other" }
);

/// `credibility`: a source's credibility and type when the user's domain table has no entry
/// (CONF-FACT 4.3, Appendix G).
pub struct Credibility;
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CredibilityInput {
    pub domain: String,
    pub description: Option<String>,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CredibilityOutput {
    pub credibility: CredibilityLevel,
    pub source_type: SourceType,
}
impl Task for Credibility {
    const NAME: &'static str = "credibility";
    const OFFLINE_VERSION: &'static str = "offline-1";
    type Input = CredibilityInput;
    type Output = CredibilityOutput;
    fn offline(input: &CredibilityInput) -> CredibilityOutput {
        credibility_rule(input)
    }
    fn examples() -> Vec<CredibilityInput> {
        vec![
            CredibilityInput {
                domain: "cdc.gov".into(),
                description: Some("Centers for Disease Control and Prevention".into()),
            },
            CredibilityInput {
                domain: "reddit.com".into(),
                description: Some("a social news and discussion site".into()),
            },
        ]
    }
}

// ---------------------------------------------------------------------------------------------
// Offline rules.

fn cue_list(m: &BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        "none".into()
    } else {
        m.iter()
            .map(|(c, n)| format!("{c} ({n})"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn stance_text_rule(input: &StanceTextInput) -> (Stance, String) {
    if input.text.trim().is_empty() {
        return (
            Stance::NotEnoughEvidence,
            "The text is empty. Final answer: Not enough evidence.".into(),
        );
    }
    let s = Signals::of(&input.claim, &input.text);
    let stance = match Verdict::from_cues(s.relevance, s.refute_count(), s.support_count()) {
        Verdict::Undecided => Stance::NotEnoughEvidence,
        Verdict::False => Stance::Reject,
        Verdict::True => Stance::Support,
    };
    let label = match stance {
        Stance::Support => "Support",
        Stance::Reject => "Reject",
        Stance::NotEnoughEvidence => "Not enough evidence",
    };
    let reasoning = format!(
        "Share of the claim's content words found in the text: {:.2}. Refuting cues: {}. \
         Supporting cues: {}. Final answer: {label}.",
        s.relevance,
        cue_list(&s.refute),
        cue_list(&s.support)
    );
    (stance, reasoning)
}

fn stance_url_rule(input: &StanceUrlInput) -> Stance {
    let s = Signals::of(&input.claim, &input.url);
    if s.refute_count() > 0 && s.relevance >= 0.3 {
        Stance::Reject
    } else if s.relevance >= 0.5 {
        Stance::Support
    } else {
        Stance::NotEnoughEvidence
    }
}

const SOCIAL: &[&str] = &[
    "facebook.com",
    "instagram.com",
    "reddit.com",
    "tiktok.com",
    "twitter.com",
    "x.com",
    "youtube.com",
    "threads.net",
    "truthsocial.com",
    "t.me",
    "telegram.org",
    "medium.com",
    "substack.com",
];

const NEWS: &[&str] = &[
    "apnews.com",
    "bbc.co.uk",
    "bbc.com",
    "bloomberg.com",
    "cbsnews.com",
    "cnn.com",
    "economist.com",
    "ft.com",
    "nbcnews.com",
    "npr.org",
    "nytimes.com",
    "reuters.com",
    "theguardian.com",
    "usatoday.com",
    "washingtonpost.com",
    "wsj.com",
    "abcnews.go.com",
    "aljazeera.com",
    "lemonde.fr",
    "spiegel.de",
];

fn domain_is(domain: &str, site: &str) -> bool {
    domain == site || domain.ends_with(&format!(".{site}"))
}

fn credibility_rule(input: &CredibilityInput) -> CredibilityOutput {
    let d = input.domain.trim().to_lowercase();
    let d = d.trim_start_matches("www.").trim_end_matches('.');
    let labels: Vec<&str> = d.split('.').collect();
    let tld = labels.last().copied().unwrap_or("");
    let second = if labels.len() >= 2 {
        labels[labels.len() - 2]
    } else {
        ""
    };
    let (credibility, source_type) = if tld == "gov" || tld == "mil" || second == "gov" {
        (CredibilityLevel::High, SourceType::Government)
    } else if tld == "edu" || second == "ac" || second == "edu" {
        (CredibilityLevel::High, SourceType::Academic)
    } else if SOCIAL.iter().any(|s| domain_is(d, s)) {
        (CredibilityLevel::Low, SourceType::SocialMedia)
    } else if NEWS.iter().any(|s| domain_is(d, s)) {
        (CredibilityLevel::High, SourceType::MainstreamNews)
    } else if tld == "org" {
        (CredibilityLevel::Medium, SourceType::NonProfit)
    } else {
        (CredibilityLevel::Low, SourceType::Other)
    };
    CredibilityOutput {
        credibility,
        source_type,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stance_cues() {
        let claim = "The city banned plastic bags in 2019.";
        let (s, why) = stance_text_rule(&StanceTextInput {
            claim: claim.into(),
            claim_date: None,
            text: "Fact check: false. The city never banned plastic bags in 2019.".into(),
        });
        assert_eq!(s, Stance::Reject);
        assert!(why.ends_with("Final answer: Reject."), "{why}");
        let u = stance_url_rule(&StanceUrlInput {
            claim: claim.into(),
            claim_date: None,
            url: "https://example.com/fact-check/city-plastic-bags-ban-hoax".into(),
        });
        assert_eq!(u, Stance::Reject);
        let exam = |d: Option<&str>| {
            Verdict::in_reply(&ExamVerdict::offline(&exam::Input {
                claim: claim.into(),
                claim_date: None,
                document_title: None,
                document: d.map(String::from),
            }))
        };
        assert_eq!(exam(None), Some(Verdict::Undecided));
        assert_eq!(
            exam(Some("The city banned plastic bags in 2019, records show.")),
            Some(Verdict::True)
        );
        assert_eq!(
            exam(Some(
                "Posts saying the city banned plastic bags are a hoax; it is false."
            )),
            Some(Verdict::False)
        );
        assert_eq!(
            exam(Some("A recipe for apple pie.")),
            Some(Verdict::Undecided)
        );
    }

    #[test]
    fn credibility_by_domain() {
        let c = |d: &str| {
            let o = credibility_rule(&CredibilityInput {
                domain: d.into(),
                description: None,
            });
            (o.credibility, o.source_type)
        };
        assert_eq!(
            c("www.cdc.gov"),
            (CredibilityLevel::High, SourceType::Government)
        );
        assert_eq!(
            c("old.reddit.com"),
            (CredibilityLevel::Low, SourceType::SocialMedia)
        );
        assert_eq!(
            c("www.reuters.com"),
            (CredibilityLevel::High, SourceType::MainstreamNews)
        );
        assert_eq!(
            c("ox.ac.uk"),
            (CredibilityLevel::High, SourceType::Academic)
        );
        assert_eq!(
            c("example.org"),
            (CredibilityLevel::Medium, SourceType::NonProfit)
        );
        assert_eq!(
            c("blog.example"),
            (CredibilityLevel::Low, SourceType::Other)
        );
    }

    /// The offline answers through the engine: same input, same bytes, the tasks' own checks
    /// pass, and every prompt renders with the same inputs.
    /// Every task's preflight examples render, pass the offline rule's checks, and (where the
    /// answer is categorical) call for different answers from the rule.
    #[test]
    fn the_preflight_examples_are_inputs_the_rules_answer_differently() {
        use noisebench_llm::prompt::Prompts;
        use noisebench_llm::task::offline_self_check;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let prompts = Prompts::in_dir(&dir);
        fn all<T: Task>(prompts: &Prompts) -> Vec<String> {
            let examples = T::examples();
            assert!(examples.len() >= 2, "{}", T::NAME);
            examples
                .into_iter()
                .map(|i| offline_self_check::<T>(prompts, i).unwrap())
                .collect()
        }
        let differ = |v: Vec<String>| assert_ne!(v[0], v[1]);
        differ(all::<ExamVerdict>(&prompts));
        differ(all::<StanceText>(&prompts));
        differ(all::<StanceReasoned>(&prompts));
        differ(all::<StanceUrl>(&prompts));
        differ(all::<Credibility>(&prompts));
    }

    #[test]
    fn offline_answers_are_deterministic_and_prompts_render() {
        use noisebench_llm::prompt::Prompts;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        let prompts = Prompts::in_dir(&dir);
        fn answer<T: Task>(prompts: &Prompts, input: T::Input) -> String {
            noisebench_llm::task::offline_self_check::<T>(prompts, input).unwrap()
        }
        const CLAIM: &str = "Says the city of Springfield banned plastic bags in 2019.";
        const DOC: &str = "Springfield's council banned single-use plastic bags in 2019, city records show. \
                           The ban took effect in March.";
        let exam = answer::<ExamVerdict>(
            &prompts,
            exam::Input {
                claim: CLAIM.into(),
                claim_date: None,
                document_title: Some("Bag ban".into()),
                document: Some(DOC.into()),
            },
        );
        assert_eq!(exam, r#"{"verdict":"true"}"#);
        let url = answer::<StanceUrl>(
            &prompts,
            StanceUrlInput {
                claim: CLAIM.into(),
                claim_date: None,
                url: "https://news.example/springfield-plastic-bags-ban".into(),
            },
        );
        assert_eq!(url, r#"{"stance":"support"}"#);
        let st = StanceTextInput {
            claim: CLAIM.into(),
            claim_date: Some("2019-05-01".into()),
            text: DOC.into(),
        };
        assert_eq!(
            answer::<StanceText>(&prompts, st.clone()),
            r#"{"stance":"support"}"#
        );
        assert!(answer::<StanceReasoned>(&prompts, st).contains("Final answer: Support."));
        let cred = answer::<Credibility>(
            &prompts,
            CredibilityInput {
                domain: "www.springfield.gov".into(),
                description: None,
            },
        );
        assert_eq!(cred, r#"{"credibility":"high","source_type":"government"}"#);
    }

    #[test]
    fn the_stage_needs_the_prompts_of_the_tasks_its_configuration_uses_only() {
        use noisebench_core::TypedStage;
        use std::path::Path;
        let dir = tempfile::tempdir().unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/prompts");
        for task in ["stance_url", "stance_text", "stance_reasoned"] {
            let file = format!("{task}.md");
            std::fs::copy(repo.join(&file), dir.path().join(&file)).unwrap();
        }
        let llm = noisebench_llm::Llm::from_value(
            &serde_json::json!({"backend": "openai", "model": "m", "prompts_dir": dir.path(),
                "cache": {"mode": "off"}, "embeddings": {"backend": "hashed"},
                "models": {"m": {"endpoints": [{"name": "a", "url": "http://127.0.0.1:9/v1"}]}}}),
            Path::new("/"),
        )
        .unwrap();
        let stage = crate::LabelStage::new(llm);
        let config =
            |v: serde_json::Value| -> crate::LabelConfig { serde_json::from_value(v).unwrap() };
        let stance_only = config(serde_json::json!({"exam": {"enabled": false},
            "credibility": {"fallback": "none"}}));
        stage.validate(&stance_only, dir.path()).unwrap();
        let e = stage
            .validate(
                &config(serde_json::json!({"exam": {"enabled": false}})),
                dir.path(),
            )
            .unwrap_err();
        assert!(
            e.message.contains("no template for credibility"),
            "{}",
            e.message
        );
        let e = stage
            .validate(
                &config(serde_json::json!({"credibility": {"fallback": "none"}})),
                dir.path(),
            )
            .unwrap_err();
        assert!(
            e.message.contains("no template for exam_verdict"),
            "{}",
            e.message
        );
        assert_eq!(
            stage.environment()["tasks"].as_object().unwrap().len(),
            TASKS.len()
        );
    }
}
