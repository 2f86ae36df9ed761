//! The `chunks` stage: the `reports` table to the `chunks` table.

use std::path::Path;

use noisebench_core::{
    Chunk, ConfigError, Drops, InputSpec, Inputs, OutputSpec, Report, ShardKey, StageContext,
    StageError, StageOutput, StageReport, TableKind, TypedStage,
};
use serde::Deserialize;

use crate::chunker::{ChunkConfig, Chunker};
use crate::preset::Domain;

fn default_min_words() -> usize {
    30
}

/// Configuration of the `chunks` stage. Sizes left out come from the preset.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChunksConfig {
    /// The preset for every report (finance: 800 tokens, 100 overlap; others: 600, 0).
    /// Default: each report's own domain.
    #[serde(default)]
    pub preset: Option<Domain>,
    /// Override the preset's token limit (cl100k tokens, at least 64).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// Override the preset's overlap (less than half the limit).
    #[serde(default)]
    pub overlap_tokens: Option<usize>,
    /// Chunks with fewer words merge into a neighbour (default 30).
    #[serde(default = "default_min_words")]
    pub min_words: usize,
}

impl Default for ChunksConfig {
    fn default() -> Self {
        Self {
            preset: None,
            max_tokens: None,
            overlap_tokens: None,
            min_words: default_min_words(),
        }
    }
}

impl ChunksConfig {
    /// The chunk configuration for a report of `domain`.
    pub fn resolve(&self, domain: Domain) -> ChunkConfig {
        let base = ChunkConfig::for_domain(self.preset.unwrap_or(domain));
        ChunkConfig {
            max_tokens: self.max_tokens.unwrap_or(base.max_tokens),
            overlap_tokens: self.overlap_tokens.unwrap_or(base.overlap_tokens),
            min_words: self.min_words,
        }
    }

    fn check(&self) -> Result<(), ConfigError> {
        for domain in [
            Domain::Finance,
            Domain::Economics,
            Domain::Policy,
            Domain::General,
        ] {
            let c = self.resolve(domain);
            if c.max_tokens < 64 {
                return Err(ConfigError::new("max_tokens", "must be at least 64"));
            }
            if c.overlap_tokens * 2 >= c.max_tokens {
                return Err(ConfigError::new(
                    "overlap_tokens",
                    format!("must be less than half of max_tokens ({})", c.max_tokens),
                ));
            }
        }
        Ok(())
    }
}

/// The `chunks` stage.
#[derive(Debug, Default, Clone, Copy)]
pub struct ChunksStage;

/// Chunk every report; reports that give no chunk are drops.
pub fn chunk_reports(
    reports: &[Report],
    config: &ChunksConfig,
    stage: &str,
) -> (Vec<Chunk>, Drops) {
    let mut drops = Drops::new(stage);
    let mut chunks = Vec::new();
    // Reports are chunked on every core (a chunker per thread: it keeps a cache); chunks and
    // drops are kept in report order.
    let all = noisebench_core::parallel_map_with(
        reports,
        noisebench_core::default_threads(),
        Chunker::new,
        |chunker, r| {
            let domain = Domain::from_name(&r.domain).unwrap_or_default();
            chunker.chunk(r, &config.resolve(domain))
        },
    );
    for (report, out) in reports.iter().zip(all) {
        if out.is_empty() {
            drops.add(
                report.id.clone(),
                "empty_report",
                "the report has no text to chunk",
            );
        }
        chunks.extend(out.into_iter().map(|c| c.chunk));
    }
    (chunks, drops)
}

impl TypedStage for ChunksStage {
    type Config = ChunksConfig;
    const KIND: &'static str = "chunks";
    const VERSION: u32 = 2;

    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec::required("reports", TableKind::Reports)]
    }

    /// One report is one item.
    fn shard_keys(&self) -> Vec<ShardKey> {
        vec![ShardKey::new("reports", "id")]
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("chunks", TableKind::Chunks)]
    }

    fn validate(&self, config: &ChunksConfig, _root: &Path) -> Result<(), ConfigError> {
        config.check()
    }

    fn run(
        &self,
        config: &ChunksConfig,
        mut inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        config.check()?;
        let reports: Vec<Report> = inputs.take("reports")?;
        let bar = ctx.progress.bar("chunks", Some(reports.len() as u64));
        let (chunks, drops) = chunk_reports(&reports, config, &ctx.stage_id);
        bar.inc(reports.len() as u64);
        bar.finish();
        tracing::info!(
            reports = reports.len(),
            chunks = chunks.len(),
            "reports chunked"
        );
        let report = StageReport {
            items_in: reports.len() as u64,
            items_out: chunks.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput::new(report).with_table("chunks", chunks))
    }
}
