//! docs/own-corpus.md followed end to end: the shipped `own-corpus` pipeline builds both tracks
//! offline from a local corpus and a user's chunk table, the documents keep their corpus ids, the
//! RARE export cites the user's chunk ids, a changed document reruns the claims track only, and
//! the user's retriever's run chooses documents, its losses counted with their reasons, and a
//! run over chunk ids is scored in the retrieval metrics as `user:<name>`.

use std::collections::BTreeSet;
use std::sync::Arc;

use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::{
    Chunk, Document, Metric, NoProgress, Query, QueryPerturbation, Question, Retrieval,
};
use noisebench_pipeline::table_io;
use noisebench_snapshot::{PublishOptions, PublishOutcome};
use noisebench_testkit::checkout;

fn published(built: &noisebench_cli::Built) -> std::path::PathBuf {
    match &built.outcome {
        Some(PublishOutcome::Published { dir, .. }) => dir.clone(),
        other => panic!("nothing published: {other:?} {:?}", built.withheld),
    }
}

/// (stage, status) of a run, in plan order.
fn statuses(built: &noisebench_cli::Built) -> Vec<(String, String)> {
    built
        .run
        .summary
        .iter()
        .map(|s| (s.id.clone(), s.status.clone()))
        .collect()
}

#[test]
fn own_corpus_builds_both_tracks_offline_with_the_users_ids() {
    let dir = checkout();
    let root = dir.path();
    let ws = Workspace::at(root, Arc::new(NoProgress));

    // 1. Build the shipped example.
    let built = build_snapshot(&ws, "own-corpus", false, &PublishOptions::default()).unwrap();
    let snapshot = published(&built);
    assert!(noisebench_snapshot::verify(&snapshot).ok());
    let summary: Vec<(&str, i64, i64, i64)> = built
        .run
        .summary
        .iter()
        .map(|s| (s.id.as_str(), s.items_in, s.items_out, s.items_dropped))
        .collect();
    assert_eq!(
        summary,
        [
            ("claims", 5, 5, 0),
            ("queries", 5, 15, 0),
            ("search", 15, 63, 0),
            ("documents", 63, 6, 0),
            ("labels", 24, 24, 0),
            ("export-raguard", 24, 24, 0),
            ("chunks", 39, 39, 0),
            ("triplets", 39, 3, 0),
            ("graph", 3, 3, 0),
            ("patterns", 3, 2, 0),
            ("questions", 2, 1, 1),
            ("qa-judge", 1, 1, 0),
            ("splits", 1, 1, 0),
            ("query-perturbations", 4, 3, 1),
            ("retrieval", 4, 24, 0),
            ("document-perturbations", 2, 2, 0),
            ("export-rare", 1, 1, 0),
        ]
    );

    // 2. Documents: from the corpus folder, each with its id there (its path), nothing fetched.
    let corpus = root.join("fixtures/own-corpus/documents");
    let files: BTreeSet<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let documents: Vec<Document> =
        table_io::read_rows(&snapshot.join("data/documents.parquet")).unwrap();
    assert_eq!(documents.len(), 6);
    for d in &documents {
        let id = d
            .corpus_id
            .as_deref()
            .expect("a corpus document has its id");
        assert!(files.contains(id), "{id}");
        assert_eq!(d.canonical_url, format!("corpus://own-corpus/{id}"));
        assert_eq!(
            (d.domain.as_str(), d.fetched_at.as_deref()),
            ("own-corpus", None)
        );
        assert!(d.text.split_whitespace().count() > 50, "{id}: {}", d.text);
    }
    // The CDC fact-check is among the documents of the claim it reviews, labelled.
    assert!(
        documents
            .iter()
            .any(|d| d.corpus_id.as_deref() == Some("afp-factcheck-cdc.html"))
    );

    // 4. Chunks: the user's ids, and the RARE export cites them.
    let user_ids: BTreeSet<String> =
        std::fs::read_to_string(root.join("fixtures/own-corpus/chunks.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["chunk_id"].as_str().unwrap().to_string()
            })
            .collect();
    let chunks: Vec<Chunk> = table_io::read_rows(&snapshot.join("data/chunks.parquet")).unwrap();
    let chunk_ids: BTreeSet<String> = chunks.iter().map(|c| c.id.clone()).collect();
    assert_eq!(chunk_ids, user_ids);
    let rare: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(snapshot.join("exports/rare/rag_single_hop_dataset.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(rare.len(), 1);
    let cited: Vec<&str> = rare
        .iter()
        .flat_map(|q| q["answer_chunk_ids"].as_array().unwrap())
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(cited, ["xetel-10k-1996/mdna-011"]);
    assert!(cited.iter().all(|c| user_ids.contains(*c)));
    let perturbed = rare[0]["document_perturbations"]["back_translation"][0]["chunk_id"]
        .as_str()
        .unwrap();
    assert!(user_ids.contains(perturbed), "{perturbed}");

    // 5. Rebuild: nothing changed, nothing runs.
    let again = build_snapshot(&ws, "own-corpus", false, &PublishOptions::default()).unwrap();
    assert_eq!(again.run.ran(), 0);

    // A document added: the claims track reruns (a new index, once), the report track does not.
    std::fs::write(
        corpus.join("notes.md"),
        "# Saudi team reward rumour\n\nA viral social media post said Saudi team members would \
         be awarded a Rolls Royce Phantom car after the World Cup win; the team denied it.\n",
    )
    .unwrap();
    let changed = build_snapshot(&ws, "own-corpus", false, &PublishOptions::default()).unwrap();
    let ran: Vec<(String, String)> = statuses(&changed)
        .into_iter()
        .filter(|(_, status)| status != "skipped")
        .collect();
    let ran: Vec<&str> = ran.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(ran, ["search", "documents", "labels", "export-raguard"]);
    let snapshot = published(&changed);
    let documents: Vec<Document> =
        table_io::read_rows(&snapshot.join("data/documents.parquet")).unwrap();
    assert!(
        documents
            .iter()
            .any(|d| d.corpus_id.as_deref() == Some("notes.md"))
    );
    let indexes = std::fs::read_dir(root.join("work/own-corpus/search/corpus-index"))
        .unwrap()
        .count();
    assert_eq!(indexes, 2, "one index per corpus content");

    // 6. The user's retriever: a run over the queries (here every document for every query, in
    // reverse name order), which names one document the corpus lacks and leaves a query out.
    let queries: Vec<Query> =
        table_io::read_rows(&root.join("work/own-corpus/queries/queries.parquet")).unwrap();
    assert_eq!(queries.len(), 15);
    let mut names: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.reverse();
    let mut run = String::new();
    for q in &queries[1..] {
        for (i, name) in names.iter().enumerate() {
            run.push_str(&format!("{} Q0 {name} {} {} mine\n", q.id, i + 1, 10 - i));
        }
    }
    run.push_str(&format!("{} Q0 gone.html 2 9.5 mine\n", queries[1].id));
    std::fs::write(root.join("fixtures/own-corpus/mine.run"), run).unwrap();
    let pipeline = root.join("pipelines/own-corpus.toml");
    let mut text = std::fs::read_to_string(&pipeline).unwrap();
    text = text.replace(
        "name = \"own-corpus\"\n\n",
        "name = \"own-corpus\"\n[[stages.search.config.backends]]\ntype = \"run\"\n\
         path = \"fixtures/own-corpus/mine.run\"\ncorpus = \"fixtures/own-corpus/documents\"\n\
         name = \"own-corpus\"\n\n",
    );
    assert!(text.contains("type = \"run\""));
    std::fs::write(&pipeline, text).unwrap();
    let with_run = build_snapshot(&ws, "own-corpus", false, &PublishOptions::default()).unwrap();
    let search = with_run
        .run
        .summary
        .iter()
        .find(|s| s.id == "search")
        .unwrap();
    assert_eq!(search.status, "ran");
    assert_eq!(search.drop_reasons.get("not_in_run"), Some(&1));
    assert_eq!(search.drop_reasons.get("unknown_doc_id"), Some(&1));
    let snapshot = published(&with_run);
    let documents: Vec<Document> =
        table_io::read_rows(&snapshot.join("data/documents.parquet")).unwrap();
    let found: BTreeSet<&str> = documents
        .iter()
        .filter_map(|d| d.corpus_id.as_deref())
        .collect();
    let all: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(found, all, "the run brought every document of the corpus");

    // 7. The user's retriever in the retrieval metrics: a run over chunk ids for the question
    // (its answer chunk first) and its perturbed queries (the answer second; the second after a
    // chunk id that is none; the third left out), scored beside BM25 as `user:mine`.
    let questions: Vec<Question> =
        table_io::read_rows(&root.join("work/own-corpus/qa-judge/questions.parquet")).unwrap();
    let perturbations: Vec<QueryPerturbation> = table_io::read_rows(
        &root.join("work/own-corpus/query-perturbations/query_perturbations.parquet"),
    )
    .unwrap();
    assert_eq!((questions.len(), perturbations.len()), (1, 3));
    let question = &questions[0];
    let answer = question.answer_chunk_ids[0].clone();
    let others: Vec<&String> = user_ids.iter().filter(|c| **c != answer).take(2).collect();
    let mut run = String::new();
    for (rank, chunk) in [&answer, others[0], others[1]].iter().enumerate() {
        run.push_str(&format!(
            "{} Q0 {chunk} {} {} mine\n",
            question.id,
            rank + 1,
            3 - rank
        ));
    }
    for (rank, chunk) in [others[0], &answer].iter().enumerate() {
        run.push_str(&format!(
            "{} Q0 {chunk} {} 1.0 mine\n",
            perturbations[0].id,
            rank + 1
        ));
    }
    for (rank, chunk) in ["no-such-chunk", answer.as_str()].iter().enumerate() {
        run.push_str(&format!(
            "{} Q0 {chunk} {} 1.0 mine\n",
            perturbations[1].id,
            rank + 1
        ));
    }
    std::fs::write(root.join("fixtures/own-corpus/mine-chunks.run"), run).unwrap();
    let retrieval_inputs = "inputs = { questions = \"qa-judge\", query_perturbations = \"query-perturbations\", chunks = \"chunks\" }\n";
    let text = std::fs::read_to_string(&pipeline).unwrap();
    assert!(text.contains(retrieval_inputs));
    let text = text.replace(
        retrieval_inputs,
        &format!(
            "{retrieval_inputs}[stages.retrieval.config]\n\
             user = {{ name = \"mine\", run = \"fixtures/own-corpus/mine-chunks.run\" }}\n"
        ),
    );
    std::fs::write(&pipeline, text).unwrap();
    let with_user = build_snapshot(&ws, "own-corpus", false, &PublishOptions::default()).unwrap();
    published(&with_user);
    let retrieval = with_user
        .run
        .summary
        .iter()
        .find(|s| s.id == "retrieval")
        .unwrap();
    assert_eq!(retrieval.status, "ran");
    assert_eq!(retrieval.drop_reasons.get("not_in_run"), Some(&1));
    assert_eq!(retrieval.drop_reasons.get("unknown_doc_id"), Some(&1));
    let rows: Vec<Retrieval> =
        table_io::read_rows(&root.join("work/own-corpus/retrieval/retrievals.parquet")).unwrap();
    let mut user: Vec<(&str, i64, &str, bool)> = rows
        .iter()
        .filter(|r| r.retriever == "user:mine")
        .map(|r| {
            (
                r.query_id.as_str(),
                r.rank,
                r.chunk_id.as_str(),
                r.ground_truth,
            )
        })
        .collect();
    user.sort();
    let mut want: Vec<(&str, i64, &str, bool)> = vec![
        (question.id.as_str(), 1, answer.as_str(), true),
        (question.id.as_str(), 2, others[0].as_str(), false),
        (question.id.as_str(), 3, others[1].as_str(), false),
        (perturbations[0].id.as_str(), 1, others[0].as_str(), false),
        (perturbations[0].id.as_str(), 2, answer.as_str(), true),
        (perturbations[1].id.as_str(), 1, answer.as_str(), true),
    ];
    want.sort();
    assert_eq!(user, want);
    assert!(rows.iter().any(|r| r.retriever == "bm25"));
    let metrics: Vec<Metric> =
        table_io::read_rows(&root.join("work/own-corpus/retrieval/retrieval_metrics.parquet"))
            .unwrap();
    let mrr = metrics
        .iter()
        .find(|m| m.scope == "user:mine" && m.metric == "mrr" && m.group == "all")
        .unwrap();
    // Reciprocal ranks 1, 1/2 and 1 over the three queries the run ranks.
    assert_eq!(mrr.n, 3);
    assert!((mrr.value - 2.5 / 3.0).abs() < 1e-9, "{}", mrr.value);
}
