//! The registry of stage kinds: every stage the binary knows, one line per kind, wired to the
//! pipeline's shared layers ([`Layers`]), and the table checks beyond those core declares. A new
//! stage is registered here.

use std::sync::Arc;

use noisebench_pipeline::Registry;

use crate::layers::Layers;

/// Every stage kind the binary knows, wired to the pipeline's layers.
pub fn registry(layers: &Layers) -> Registry {
    let mut registry = Registry::new();
    registry
        .register(Arc::new(noisebench_claims::ImportStage))
        .register(Arc::new(noisebench_claims::ScrapeStage::new(
            layers.web.clone(),
        )))
        .register(Arc::new(noisebench_search::QueriesStage::new(
            layers.llm.clone(),
        )))
        .register(Arc::new(
            noisebench_search::SearchStage::new(layers.web.clone()).with_llm(layers.llm.clone()),
        ))
        .register(Arc::new(noisebench_search::DocumentsStage::new(
            layers.web.clone(),
        )))
        .register(Arc::new(noisebench_label::LabelStage::new(
            layers.llm.clone(),
        )))
        .register(Arc::new(noisebench_chunk::ReportsStage::new(
            layers.web.clone(),
        )))
        .register(Arc::new(noisebench_chunk::ChunksStage))
        .register(Arc::new(noisebench_chunk::ChunksImportStage))
        .register(Arc::new(noisebench_kg::TripletsStage::new(
            layers.llm.clone(),
        )))
        .register(Arc::new(noisebench_kg::GraphStage::new(layers.llm.clone())))
        .register(Arc::new(noisebench_kg::PatternsStage))
        .register(Arc::new(noisebench_qa::QuestionsStage::new(
            layers.llm.clone(),
        )))
        .register(Arc::new(noisebench_qa::JudgeStage::new(layers.llm.clone())))
        .register(Arc::new(noisebench_qa::SplitsStage))
        .register(Arc::new(noisebench_perturb::QueryPerturbationsStage::new(
            layers.llm.clone(),
        )))
        .register(Arc::new(
            noisebench_perturb::DocumentPerturbationsStage::new(layers.llm.clone()),
        ))
        .register(Arc::new(noisebench_retrieval::RetrievalStage::new(
            layers.llm.clone(),
        )))
        .add_checks(table_checks());
    // One export stage per release format, from the formats' one list.
    for stage in noisebench_releases::export_stages() {
        registry.register(Arc::new(stage));
    }
    registry
}

/// The table checks beyond those core declares: the question tables' text rules. A build runs
/// them with core's after each stage and before publishing; `validate` runs the same.
pub fn table_checks() -> Vec<noisebench_core::Check> {
    noisebench_qa::table_checks()
}
