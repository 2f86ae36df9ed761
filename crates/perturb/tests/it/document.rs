//! The `document-perturbations` stage: answer deletion on a chunk where the answer appears twice,
//! back-translation through a fake OpenAI-compatible endpoint on 127.0.0.1 (a good translation
//! kept, an empty one, a French one and one that lost the answer dropped with their reasons),
//! missing and empty chunks as `no_chunk_text` drops, and the offline rule end to end.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use noisebench_core::{
    Chunk, DocumentPerturbation, Inputs, NoProgress, Question, StageContext, StageOutput, TableRow,
    Triplet, TypedStage, parse_config,
};
use noisebench_llm::Llm;
use noisebench_perturb::delete_answer;
use noisebench_perturb::{DocumentPerturbationsConfig, DocumentPerturbationsStage};
use noisebench_testkit::{FakeServer, Reply, first_message, strict_openai_config};
use noisebench_text::contains_phrase;
use serde_json::{Value, json};

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn llm(server: &FakeServer, cache: &Path) -> Llm {
    Llm::from_value(&strict_openai_config(&server.url(), cache), &repo_root()).unwrap()
}

fn chunk(id: &str, text: &str) -> Chunk {
    Chunk {
        id: id.into(),
        report_id: "r1".into(),
        text: text.into(),
        ..Chunk::default()
    }
}

/// A question on `chunk` answered by `answer`, with one evidence sentence (through a triplet).
fn question(id: &str, chunks: &[&str], answer: &str, triplet: &str) -> Question {
    Question {
        id: id.into(),
        kind: "single_hop".into(),
        question: format!("Which company does question {id} ask about?"),
        answer: answer.into(),
        answer_chunk_ids: chunks.iter().map(|c| c.to_string()).collect(),
        triplet_ids: vec![triplet.into()],
        ..Question::default()
    }
}

const TWICE: &str = "Northwind Logistics acquired Baltic Freight Lines in 2021. Revenue grew 8% to $96.4 million.\nAfter the deal, Baltic Freight Lines became the group's largest carrier. Costs were flat.";

fn fixture() -> (Vec<Question>, Vec<Triplet>, Vec<Chunk>) {
    let chunks = vec![
        chunk("c_twice", TWICE),
        chunk(
            "c_empty_tr",
            "Calder Port Authority operates Eastgate Terminal. Volumes rose in 2023.",
        ),
        chunk(
            "c_french",
            "Harbour Trust funds Calder Maritime Museum. The museum opened in 1998.",
        ),
        chunk(
            "c_lost",
            "Riverton received $12 million from the Valdoria Fund. The grant ends in 2026.",
        ),
        chunk("c_blank", "  \n "),
    ];
    let triplet = |id: &str, chunk: &str, sentence: &str| Triplet {
        id: id.into(),
        chunk_id: chunk.into(),
        source_sentence: sentence.into(),
        ..Triplet::default()
    };
    let triplets = vec![
        triplet(
            "t1",
            "c_twice",
            "Northwind Logistics acquired Baltic Freight Lines in 2021.",
        ),
        triplet(
            "t2",
            "c_empty_tr",
            "Calder Port Authority operates Eastgate Terminal.",
        ),
        triplet(
            "t3",
            "c_french",
            "Harbour Trust funds Calder Maritime Museum.",
        ),
        triplet(
            "t4",
            "c_lost",
            "Riverton received $12 million from the Valdoria Fund.",
        ),
    ];
    let questions = vec![
        question("q1", &["c_twice"], "Baltic Freight Lines", "t1"),
        question("q2", &["c_empty_tr"], "Eastgate Terminal", "t2"),
        question("q3", &["c_french"], "Calder Maritime Museum", "t3"),
        question(
            "q4",
            &["c_lost", "c_missing", "c_blank"],
            "Valdoria Fund",
            "t4",
        ),
        question("q5", &[], "nothing", "t9"),
    ];
    (questions, triplets, chunks)
}

fn run(stage: &DocumentPerturbationsStage, config: Value) -> StageOutput {
    let (questions, triplets, chunks) = fixture();
    let config: DocumentPerturbationsConfig = parse_config(&config).unwrap();
    stage.validate(&config, &repo_root()).unwrap();
    let mut tables = BTreeMap::new();
    tables.insert("questions".to_string(), Question::into_rows(questions));
    tables.insert("triplets".to_string(), Triplet::into_rows(triplets));
    tables.insert("chunks".to_string(), Chunk::into_rows(chunks));
    let dir = tempfile::tempdir().unwrap();
    let ctx = StageContext {
        root: repo_root(),
        stage_dir: dir.path().to_path_buf(),
        pipeline: "test".into(),
        stage_id: "document_perturbations".into(),
        progress: Arc::new(NoProgress),
    };
    stage.run(&config, Inputs::new(tables), &ctx).unwrap()
}

fn rows(out: &mut StageOutput) -> Vec<DocumentPerturbation> {
    DocumentPerturbation::from_rows(out.tables.remove("document_perturbations").unwrap()).unwrap()
}

fn drops(out: &StageOutput) -> Vec<(String, String)> {
    let mut d: Vec<(String, String)> = out
        .report
        .drops
        .iter()
        .map(|d| (d.item.clone(), d.reason.clone()))
        .collect();
    d.sort();
    d
}

#[test]
fn answer_deletion_removes_the_answer_where_it_appears_twice() {
    let evidence = ["Northwind Logistics acquired Baltic Freight Lines in 2021."];
    let d = delete_answer(TWICE, &evidence, "Baltic Freight Lines").unwrap();
    assert!(
        !contains_phrase(&d.text, "Baltic Freight Lines"),
        "{}",
        d.text
    );
    assert_eq!(
        d.text,
        "Revenue grew 8% to $96.4 million.\nCosts were flat."
    );
    assert_eq!((d.evidence_deleted, d.answer_sentences_deleted), (1, 1));
    // Deleting the evidence alone would have left the answer in the chunk.
    assert!(contains_phrase(
        &TWICE.replace(evidence[0], ""),
        "Baltic Freight Lines"
    ));
}

#[test]
fn back_translations_are_checked_and_deletions_made_through_the_fake_endpoint() {
    let server = FakeServer::answering(|body| {
        assert_eq!(
            body["response_format"]["json_schema"]["name"],
            "back_translate"
        );
        let user = first_message(body, "user");
        assert!(user.contains("into French"), "{user}");
        let (pivot, text) = if user.contains("Northwind") {
            (
                "Northwind Logistics a acquis...",
                "In 2021 Northwind Logistics bought Baltic Freight Lines. Revenue rose 8% to $96.4 million.\nFollowing the deal, Baltic Freight Lines became the largest carrier of the group. Costs stayed flat.",
            )
        } else if user.contains("Calder Port") {
            ("", "  ")
        } else if user.contains("Harbour Trust") {
            (
                "...",
                "Harbour Trust finance le musée maritime de Calder. Le musée a ouvert ses portes en 1998 et il est toujours très populaire.",
            )
        } else {
            (
                "...",
                "Riverton got $12 million from a national fund. The grant ends in 2026.",
            )
        };
        Reply::Content(json!({"pivot": pivot, "text": text}).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let stage = DocumentPerturbationsStage::new(llm(&server, &dir.path().join("cache")));
    let mut out = run(&stage, json!({}));
    let got = rows(&mut out);
    assert_eq!(
        server.requests(),
        4,
        "one call per distinct chunk with text"
    );

    let kinds: Vec<(&str, &str)> = got
        .iter()
        .map(|r| (r.question_id.as_str(), r.kind.as_str()))
        .collect();
    let mut expected = vec![
        ("q1", "back_translation"),
        ("q1", "regex_delete"),
        ("q2", "regex_delete"),
        ("q3", "regex_delete"),
        ("q4", "regex_delete"),
    ];
    let mut sorted = kinds.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
    let q1_delete = got
        .iter()
        .find(|r| r.question_id == "q1" && r.kind == "regex_delete")
        .unwrap();
    assert_eq!(
        q1_delete.text,
        "Revenue grew 8% to $96.4 million.\nCosts were flat."
    );
    assert!(
        q1_delete
            .provenance
            .contains("1 evidence and 1 further answer sentences deleted")
    );
    let q1_bt = got
        .iter()
        .find(|r| r.question_id == "q1" && r.kind == "back_translation")
        .unwrap();
    assert!(q1_bt.text.starts_with("In 2021 Northwind Logistics bought"));
    assert!(
        q1_bt.provenance.starts_with("openai:fake-model (prompt "),
        "{}",
        q1_bt.provenance
    );
    for r in &got {
        let s = r.similarity.unwrap();
        assert!((-1.0..=1.0).contains(&s) && s > 0.0, "{r:?}");
    }
    assert_eq!(
        drops(&out),
        [
            (
                "q2/c_empty_tr/back_translation".to_string(),
                "empty_translation".to_string()
            ),
            (
                "q3/c_french/back_translation".to_string(),
                // The task's sense check, counted against the model.
                "llm_wrong_language".to_string()
            ),
            ("q4/c_blank".to_string(), "no_chunk_text".to_string()),
            (
                "q4/c_lost/back_translation".to_string(),
                "answer_lost_in_translation".to_string()
            ),
            ("q4/c_missing".to_string(), "no_chunk_text".to_string()),
            ("q5".to_string(), "no_chunk_text".to_string()),
        ]
    );
    let facts = out.facts.unwrap();
    assert_eq!(facts.data["kept"]["regex_delete"], 4);
    assert_eq!(facts.data["translations"], 4);
    assert_eq!(facts.data["extra_deletions"], 1);
}

#[test]
fn a_failed_call_is_a_transient_drop_and_the_offline_rule_runs_end_to_end() {
    let server = FakeServer::answering(|_| Reply::Status(503, None, "{}".into()));
    let dir = tempfile::tempdir().unwrap();
    let stage = DocumentPerturbationsStage::new(llm(&server, &dir.path().join("cache")));
    let out = run(&stage, json!({"kinds": ["back_translation"]}));
    let failed: Vec<_> = out
        .report
        .drops
        .iter()
        .filter(|d| d.reason.starts_with("llm_"))
        .collect();
    assert_eq!(failed.len(), 4);
    assert!(failed.iter().all(|d| d.retry), "{failed:?}");

    let stage = DocumentPerturbationsStage::new(Llm::offline());
    let mut out = run(&stage, json!({}));
    let got = rows(&mut out);
    // The offline rule rewords nothing in these chunks but keeps every answer: four
    // back-translations, four deletions.
    assert_eq!(got.len(), 8, "{:?}", drops(&out));
    let mut again = run(&stage, json!({}));
    assert_eq!(rows(&mut again), got);
}

/// SmolLM2-135M's back-translations of two 10-K filings: the single word `pivot` (embedding
/// similarity 0.03-0.12 to its chunk). Each is a counted drop against the model
/// (`llm_length_changed`), so none reaches the export; with the sense checks off, the stage's
/// own check still drops it (`length_changed`), and a translation that keeps the length but
/// not the words is `meaning_lost`.
#[test]
fn a_one_word_back_translation_is_a_counted_drop() {
    let server = FakeServer::answering(|_| {
        Reply::Content(json!({"pivot": "pivot", "text": "pivot"}).to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let stage = DocumentPerturbationsStage::new(llm(&server, &dir.path().join("cache")));
    let out = run(&stage, json!({"kinds": ["back_translation"]}));
    let reasons = out.report.drop_reasons();
    // q1, q2, q3 and q4's c_lost: four chunks with text, each translated to one word.
    assert_eq!(reasons.get("llm_length_changed"), Some(&4), "{reasons:?}");
    assert_eq!(out.report.items_out, 0);

    let mut off = strict_openai_config(&server.url(), &dir.path().join("cache-off"));
    off["sense_checks"] = json!(false);
    let stage = DocumentPerturbationsStage::new(Llm::from_value(&off, &repo_root()).unwrap());
    let out = run(&stage, json!({"kinds": ["back_translation"]}));
    assert_eq!(out.report.drop_reasons().get("length_changed"), Some(&4));

    let server = FakeServer::answering(|body| {
        // As many words as the passage, none of its own.
        let n = first_message(body, "user")
            .split("Passage:\n")
            .nth(1)
            .and_then(|r| r.split("\n\nReply").next())
            .map_or(10, |p| p.split_whitespace().count());
        let words = [
            "the", "weather", "was", "lovely", "and", "warm", "today", "in", "spring",
        ];
        let text: Vec<&str> = (0..n).map(|i| words[i % words.len()]).collect();
        let text = text.join(" ");
        Reply::Content(json!({"pivot": "...", "text": text}).to_string())
    });
    let stage = DocumentPerturbationsStage::new(llm(&server, &dir.path().join("cache-2")));
    let out = run(&stage, json!({"kinds": ["back_translation"]}));
    assert_eq!(
        out.report.drop_reasons().get("llm_meaning_lost"),
        Some(&4),
        "{:?}",
        out.report.drop_reasons()
    );
}
