//! The `llm_answer` target: a model's reply through `noisebench_llm::parse::parse_answer` for
//! every task of every stage crate (its JSON shape and its own `check`).
//!
//! Input layout: the first byte picks the task (modulo the number of tasks); the rest is the
//! reply. When the rest holds a NUL byte, what comes before it is the task's input as JSON (used
//! when it deserialises, else the task's default input) and what follows is the reply.

use noisebench_llm::Task;
use noisebench_llm::parse::{Parsed, first_object, parse_answer, remove_trailing_commas};
use serde::de::DeserializeOwned;

/// One task: its name (`<crate>::<task>`), and its runner, acceptor and seed at one type.
pub struct TaskEntry {
    pub name: &'static str,
    /// Parse a reply (with the input JSON, if any) and check the invariants.
    pub run: fn(Option<&[u8]>, &str),
    /// Whether the task accepts a reply to an input (JSON).
    pub accepts: fn(&[u8], &str) -> bool,
    /// The seed: default input (JSON), NUL, the offline rule's answer; without the pick byte.
    pub seed: fn() -> Vec<u8>,
}

macro_rules! task {
    ($name:literal, $t:ty) => {
        TaskEntry {
            name: $name,
            run: run::<$t>,
            accepts: accepts_as::<$t>,
            seed: seed::<$t>,
        }
    };
}

/// Every task of every stage crate. The seed corpus holds one file per task (its default input
/// and the offline rule's answer to it).
pub const TASKS: &[TaskEntry] = &[
    task!("label::exam_verdict", noisebench_label::tasks::ExamVerdict),
    task!("label::stance_url", noisebench_label::tasks::StanceUrl),
    task!("label::stance_text", noisebench_label::tasks::StanceText),
    task!(
        "label::stance_reasoned",
        noisebench_label::tasks::StanceReasoned
    ),
    task!("label::credibility", noisebench_label::tasks::Credibility),
    task!("kg::triplets", noisebench_kg::triplets::task::Triplets),
    task!("search::keywords", noisebench_search::query_tasks::Keywords),
    task!(
        "search::claim_to_question",
        noisebench_search::query_tasks::ClaimToQuestion
    ),
    task!(
        "search::exam_verdict",
        noisebench_search::query_tasks::ExamVerdict
    ),
    task!("qa::single", noisebench_qa::tasks::QaSingle),
    task!("qa::multi", noisebench_qa::tasks::QaMulti),
    task!("qa::judge", noisebench_qa::tasks::QaJudge),
    task!(
        "perturb::query_grammar",
        noisebench_perturb::tasks::QueryGrammar
    ),
    task!(
        "perturb::query_irrelevant",
        noisebench_perturb::tasks::QueryIrrelevant
    ),
    task!(
        "perturb::back_translate",
        noisebench_perturb::tasks::BackTranslate
    ),
    task!("eval::answer_judge", noisebench_eval::answers::AnswerJudge),
    task!(
        "eval::counterrefine_draft",
        noisebench_eval::systems::counterrefine::CounterRefineDraft
    ),
    task!(
        "eval::counterrefine_refine",
        noisebench_eval::systems::counterrefine::CounterRefineRefine
    ),
    task!(
        "eval::astute_generate",
        noisebench_eval::systems::astute::AstuteGenerate
    ),
    task!(
        "eval::astute_consolidate",
        noisebench_eval::systems::astute::AstuteConsolidate
    ),
    task!(
        "eval::astute_answer",
        noisebench_eval::systems::astute::AstuteAnswer
    ),
    task!("eval::answer", noisebench_eval::generate::EvalAnswer),
    task!(
        "eval::confact_ensemble",
        noisebench_eval::confact::ConfactEnsemble
    ),
];

/// The llm_answer target.
pub fn llm_answer(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (input, reply) = match rest.iter().position(|&b| b == 0) {
        Some(n) => (Some(&rest[..n]), &rest[n + 1..]),
        None => (None, rest),
    };
    let reply = String::from_utf8_lossy(reply);
    check_repair(&reply);
    (TASKS[pick as usize % TASKS.len()].run)(input, &reply);
}

/// The repair step's own invariants: the object found is a balanced `{...}` slice of the reply,
/// and dropping trailing commas never adds anything.
fn check_repair(reply: &str) {
    if let Some(object) = first_object(reply) {
        assert!(object.starts_with('{') && object.ends_with('}'), "{object}");
        let repaired = remove_trailing_commas(object);
        assert!(repaired.len() <= object.len());
        if !object.contains(',') {
            assert_eq!(repaired, object);
        }
    }
}

/// The default input of a task, by its input type's JSON.
fn default_input<T: Task>() -> T::Input
where
    T::Input: DeserializeOwned,
{
    let json = match T::NAME {
        "exam_verdict" => {
            r#"{"claim":"5G towers spread the virus.","claim_date":"2020-04-01","document_title":"WHO myth busters","document":"5G mobile networks do not spread COVID-19. Viruses cannot travel on radio waves."}"#
        }
        "stance_url" => {
            r#"{"claim":"5G towers spread the virus.","claim_date":null,"url":"https://www.who.int/myths"}"#
        }
        "stance_text" | "stance_reasoned" => {
            r#"{"claim":"5G towers spread the virus.","claim_date":"2020-04-01","text":"Viruses cannot travel on radio waves or mobile networks."}"#
        }
        "credibility" => r#"{"domain":"who.int","description":"World Health Organization"}"#,
        "triplets" => {
            r#"{"domain":"finance","target":2,"chunks":[{"chunk_id":"c1","text":"Apple reported revenue of $394 billion in 2022. Tim Cook is the CEO of Apple."}],"found":[]}"#
        }
        "keywords" => r#"{"claim":"Lemon water cures cancer.","max_keywords":4}"#,
        "claim_to_question" => {
            r#"{"claim":"Lemon water cures cancer.","claim_date":"2021-05-02","speaker":"A blog"}"#
        }
        "qa_single" => {
            r#"{"triplet":{"entity_1":"Apple","relation":"reported revenue of","entity_2":"$394 billion","chunk_id":"c1","source_sentence":"Apple reported revenue of $394 billion in 2022."},"chunk":"Apple reported revenue of $394 billion in 2022. Tim Cook is the CEO of Apple.","metadata":{"company":"Apple"}}"#
        }
        "qa_multi" => {
            r#"{"pattern":"chain","triplets":[{"entity_1":"Tim Cook","relation":"is CEO of","entity_2":"Apple","chunk_id":"c1","source_sentence":"Tim Cook is the CEO of Apple."},{"entity_1":"Apple","relation":"reported revenue of","entity_2":"$394 billion","chunk_id":"c2","source_sentence":"Apple reported revenue of $394 billion in 2022."}],"chunks":["Tim Cook is the CEO of Apple.","Apple reported revenue of $394 billion in 2022."],"pivots":["Apple"],"metadata":{}}"#
        }
        "qa_judge" => {
            r#"{"question":"Who is the CEO of Apple?","answer":"Tim Cook","chunks":["Tim Cook is the CEO of Apple."],"source_sentences":["Tim Cook is the CEO of Apple."],"multi_hop":false}"#
        }
        "query_grammar" | "query_irrelevant" => {
            r#"{"query":"does lemon water cure cancer","candidates":3}"#
        }
        "back_translate" => {
            r#"{"text":"Lemon water does not cure cancer.","pivot_language":"German"}"#
        }
        "answer_judge" => {
            r#"{"question":"Who is the CEO of Apple?","gold_answer":"Tim Cook","prediction":"Tim Cook is."}"#
        }
        "counterrefine_draft" => {
            r#"{"question":"Is lemon water a cure for cancer?","form":"yes_no","yes":"true","no":"false","passages":[{"text":"No study shows lemon water cures cancer.","source":"who.int","background":null}]}"#
        }
        "counterrefine_refine" => {
            r#"{"question":"Is lemon water a cure for cancer?","form":"yes_no","yes":"true","no":"false","draft":"false","passages":[{"text":"No study shows lemon water cures cancer.","source":"who.int","background":null,"new":true}]}"#
        }
        "astute_generate" => r#"{"question":"Who is the CEO of Apple?","max_passages":2}"#,
        "astute_consolidate" => {
            r#"{"question":"Who is the CEO of Apple?","iteration":1,"initial":[{"number":1,"text":"Tim Cook is the CEO of Apple.","origin":"retrieved","source":null,"background":null,"sources":[]}],"current":[{"number":2,"text":"Apple's CEO is Tim Cook.","origin":"generated","source":null,"background":null,"sources":[1]}]}"#
        }
        "astute_answer" => {
            r#"{"question":"Who is the CEO of Apple?","form":"open","yes":null,"no":null,"style":"short","iterations":1,"initial":[{"number":1,"text":"Tim Cook is the CEO of Apple.","origin":"retrieved","source":null,"background":null,"sources":[]}],"consolidated":[{"number":1,"text":"Tim Cook is the CEO of Apple.","origin":"retrieved","source":null,"background":null,"sources":[1]}],"examples":[]}"#
        }
        "eval_answer" | "answer" => {
            r#"{"question":"Who is the CEO of Apple?","form":"open","yes":null,"no":null,"style":"short","passages":[{"text":"Tim Cook is the CEO of Apple.","source":"apple.com","background":null}],"examples":[{"question":"Who founded Apple?","answer":"Steve Jobs"}]}"#
        }
        "confact_ensemble" => {
            r#"{"question":"Is lemon water a cure for cancer?","yes":"true","no":"false","candidates":[{"source":"who.int","background":"A health agency.","answer":"false","reasoning":"No evidence."}]}"#
        }
        other => panic!("no default input for task {other}"),
    };
    serde_json::from_str(json)
        .unwrap_or_else(|e| panic!("default input of {} parses: {e}", T::NAME))
}

fn accepts_as<T: Task>(input: &[u8], reply: &str) -> bool
where
    T::Input: DeserializeOwned,
{
    let input: T::Input = serde_json::from_slice(input).expect("a seed's input parses");
    parse_answer::<T>(&input, reply).is_ok()
}

fn seed<T: Task>() -> Vec<u8>
where
    T::Input: DeserializeOwned,
{
    let input = default_input::<T>();
    let mut out = serde_json::to_vec(&input).expect("an input serialises");
    out.push(0);
    out.extend(serde_json::to_vec_pretty(&T::offline(&input)).expect("an answer serialises"));
    out
}

/// Parse `reply` as `T`'s answer. Anything accepted, written back as JSON, is accepted again,
/// strictly and equal to itself.
fn run<T: Task>(input: Option<&[u8]>, reply: &str)
where
    T::Input: DeserializeOwned,
{
    let input: T::Input = input
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or_else(default_input::<T>);
    if let Ok((out, _)) = parse_answer::<T>(&input, reply) {
        let written = serde_json::to_string(&out).expect("an answer serialises");
        match parse_answer::<T>(&input, &written) {
            Ok((again, how)) => {
                assert_eq!(how, Parsed::Strict, "{written}");
                assert_eq!(
                    serde_json::to_string(&again).expect("an answer serialises"),
                    written
                );
            }
            Err(e) => panic!(
                "{}: an accepted answer, written back, is refused: {e}\n{written}",
                T::NAME
            ),
        }
    }
}

/// A seed for every task: its file name (`seed-<crate>-<task>`) and bytes (the task's pick byte,
/// its default input, NUL, the offline rule's answer).
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    TASKS
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut bytes = vec![i as u8];
            bytes.extend((t.seed)());
            (format!("seed-{}", t.name.replace("::", "-")), bytes)
        })
        .collect()
}
