//! The quality card on the demo: every published version has `quality.json` beside its
//! manifest (hashed in it), a "Quality" section in its card and `rai:dataAnnotationAnalysis` in
//! its Croissant file and a section in its report page; the demo passes the quality gates; `noisebench quality --compare` says
//! how each number moved; a gate the demo cannot pass stops the publish unless
//! `--allow-degraded`.

use std::sync::Arc;

use noisebench_cli::{Workspace, build_snapshot, quality_moves, quality_text, version_quality};
use noisebench_core::{CheckStatus, NoProgress};
use noisebench_snapshot::{CROISSANT, Manifest, PublishOptions, PublishOutcome};

#[test]
fn the_demo_has_a_quality_card_and_passes_its_gates() {
    let (_, snapshot) = crate::shared::demo();
    let manifest = Manifest::read(snapshot).unwrap();
    assert!(manifest.metadata.contains_key("quality.json"));
    assert!(noisebench_snapshot::verify(snapshot).ok());
    let report = version_quality(snapshot).unwrap();
    // Both label methods ran on the claims track; the report track has questions and splits.
    let agreement = report.agreement.as_ref().unwrap();
    assert!(agreement.pairs > 0);
    let grounding = report.grounding.as_ref().unwrap();
    assert!(grounding.questions > 0);
    assert!(report.duplicates.cross_split.is_some());
    assert!(report.shortcut.is_some());
    assert_eq!(report.closed_book.status, "not_run");
    for t in ["questions", "claims", "documents"] {
        assert!(report.duplicates.tables.contains_key(t), "{t}");
    }
    // The gates ran before publishing and passed.
    let gates: Vec<_> = manifest
        .checks
        .iter()
        .filter(|c| c.table == "quality")
        .collect();
    assert_eq!(gates.len(), 3, "{gates:?}");
    assert!(
        gates.iter().all(|g| g.status == CheckStatus::Passed),
        "{gates:?}"
    );
    let card = std::fs::read_to_string(snapshot.join("README.md")).unwrap();
    assert!(card.contains("## Quality"), "{card}");
    assert!(card.contains("grounded questions"));
    let croissant: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snapshot.join(CROISSANT)).unwrap()).unwrap();
    let analysis = croissant["rai:dataAnnotationAnalysis"].as_str().unwrap();
    assert!(analysis.contains("Cohen's kappa"), "{analysis}");
    // The report page beside the version has the card's section.
    let page = snapshot.with_file_name(format!("{}.report.html", manifest.version));
    let page = std::fs::read_to_string(page).unwrap();
    let section = page.split("<section id=\"quality\">").nth(1).unwrap();
    let section = section.split("</section>").next().unwrap();
    assert!(section.contains("grounded questions"), "{section}");
    // Compared with itself, nothing moved.
    let text = quality_text(snapshot, Some(snapshot)).unwrap();
    assert!(text.contains("grounded share"), "{text}");
    assert!(text.contains("(+0.000)"), "{text}");
}

#[test]
fn a_quality_gate_the_build_fails_stops_the_publish_unless_degraded() {
    let (root, _) = crate::shared::demo_copy();
    // A first version again: the copy's published one has the same tables, so the build would
    // find nothing to publish.
    std::fs::remove_dir_all(root.join("snapshots/demo")).unwrap();
    let pipeline = root.join("pipelines/demo.toml");
    let mut text = std::fs::read_to_string(&pipeline).unwrap();
    // The demo's kappa is about 0.91 (docs/quality.md).
    text.push_str("\n[quality.gates]\nmin_kappa = 0.99\n");
    std::fs::write(&pipeline, text).unwrap();
    let ws = Workspace::at(&root, Arc::new(NoProgress));
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let withheld = built.withheld.expect("the gate stops the publish");
    assert!(withheld.contains("min_kappa"), "{withheld}");
    assert!(built.outcome.is_none());

    let mut ws = Workspace::at(&root, Arc::new(NoProgress));
    ws.allow_degraded = true;
    let built = build_snapshot(&ws, "demo", false, &PublishOptions::default()).unwrap();
    let Some(PublishOutcome::Published { dir, .. }) = built.outcome else {
        panic!("--allow-degraded publishes: {:?}", built.withheld)
    };
    let card = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(card.contains("min_kappa"), "{card}");
    // `diff` of two versions with cards lists the moves; one without a card, none.
    let (_, demo) = crate::shared::demo();
    let moves = quality_moves(demo, &dir).unwrap().unwrap();
    assert!(
        moves.contains("## Quality") && moves.contains("kappa: 0.909 -> 0.909"),
        "{moves}"
    );
}
