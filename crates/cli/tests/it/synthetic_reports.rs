//! The synthetic RARE-shaped corpus (`noisebench_chunk::synthetic`) runs through the whole
//! report track: a small corpus gives chunks, triplets that link reports, every question
//! pattern, kept questions, perturbations, retrieval and RARE's record files. The full-size
//! run is `just bench-rare`.

use std::sync::Arc;

use noisebench_chunk::synthetic::{CorpusSpec, generate, write_corpus};
use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::NoProgress;
use noisebench_snapshot::{PublishOptions, PublishOutcome};

#[test]
fn a_small_synthetic_corpus_runs_through_the_report_track() {
    let spec = CorpusSpec {
        reports: 4,
        seed: 42,
        words_per_report: 4000,
    };
    // Seeded: the same corpus twice.
    assert_eq!(generate(&spec), generate(&spec));

    let dir = tempfile::tempdir().unwrap();
    noisebench_testkit::copy_dir(
        &noisebench_testkit::repo_root().join("pipelines"),
        &dir.path().join("pipelines"),
    );
    let corpus = write_corpus(&dir.path().join("corpus"), &spec).unwrap();
    assert_eq!(corpus.reports, 4);
    // The synthetic corpus repeats entity names across reports: `questions` drops the repeated
    // question texts (`repeated_question`), so every gate and check passes.
    let ws = Workspace::at(dir.path(), Arc::new(NoProgress));
    let built = build_snapshot(
        &ws,
        corpus.pipeline.to_str().unwrap(),
        false,
        &PublishOptions::default(),
    )
    .unwrap();
    assert!(
        matches!(built.outcome, Some(PublishOutcome::Published { .. })),
        "{:?}",
        built.withheld
    );
    let out = |id: &str| {
        let s = built.run.summary.iter().find(|s| s.id == id).unwrap();
        assert_eq!(s.status, "ran", "{id}");
        s.items_out
    };
    for s in &built.run.summary {
        eprintln!(
            "{:<24} in {:>6} out {:>6} dropped {:>5} {:?}",
            s.id, s.items_in, s.items_out, s.items_dropped, s.drop_reasons
        );
    }
    assert_eq!(out("reports"), 4);
    assert!(out("chunks") >= 4 * 4, "{} chunks", out("chunks"));
    assert!(out("triplets") > 50, "{} triplets", out("triplets"));
    assert!(out("patterns") > 10, "{} patterns", out("patterns"));
    assert!(out("qa-judge") > 5, "{} kept questions", out("qa-judge"));
    assert!(out("query-perturbations") > 0);
    assert!(out("document-perturbations") > 0);
    assert!(out("retrieval") > 0);
    let failed: Vec<String> = built
        .checks
        .iter()
        .filter(|c| c.failed())
        .map(|c| format!("{}/{}", c.table, c.check))
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    let questions = built
        .run
        .summary
        .iter()
        .find(|s| s.id == "questions")
        .unwrap();
    assert!(
        questions.drop_reasons.contains_key("repeated_question"),
        "the corpus repeats question texts: {:?}",
        questions.drop_reasons
    );
}
