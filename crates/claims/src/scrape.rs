//! The `claims-scrape` stage: fact-checked claims from the web.
//!
//! PolitiFact listing pages are paged (`/factchecks/list/?page=N` with speaker, ruling and category
//! filters) until "No Results found" or the page limit; each statement's article is then fetched,
//! unless the listing entry already settles its drop (a Flip-O-Meter ruling, a filter).
//! Any article URL can also be given directly (`kind = "articles"`), which makes every publisher
//! that ships schema.org ClaimReview a source. On each article the ClaimReview JSON-LD is read first,
//! field by field; PolitiFact's CSS layouts (current and pre-2020) fill what it lacks, and the
//! listing entry fills what the article lacks. A page with no ClaimReview is read with the CSS
//! selectors of its host's `[[sites]]` entry when there is one, else it is a `no_claimreview` drop. All fetching goes through the run's shared [`Web`],
//! so the stage is polite live (one rate limit per host for the whole run, whichever stage asks)
//! and runs offline when that layer replays.
//!
//! The stored `url` is the one the page declares (ClaimReview `url`, canonical link, else the URL
//! fetched) with its scheme and port kept, so it leads back to the page; the id is made from its
//! canonical form. Publisher fields are the site's: every PolitiFact page, whatever its layout,
//! names `politifact::FACT_CHECKER` and
//! `politifact::COUNTRY`.
//!
//! A run reads in two steps: `listing` decides what to fetch (listing pages, given URLs,
//! listing-level drops) and `articles` fetches it, `claim` making each page a claim; `config`
//! checks the configuration once for both, and `filters` holds the filters both apply.

mod articles; // fetching the articles, merging claims seen twice
mod claim; // a claim from a fetched page: which source gives each field
mod config; // the configuration, checked and resolved
mod filters; // the speaker, date and rating filters
mod listing; // what to fetch: PolitiFact listing paging, given URLs
mod sites; // per-site CSS selectors for pages without ClaimReview

use std::path::Path;
use std::sync::Arc;

use noisebench_core::{
    ConfigError, Drops, InputSpec, Inputs, OutputSpec, StageContext, StageError, StageOutput,
    StageReport, TableKind, TypedStage,
};
use noisebench_web::{Mode, Web};

pub use claim::{PageClaim, PageReadings, read_page, read_page_all, read_page_with_sites};
use config::resolve;
pub use config::{ScrapeConfig, ScrapeSource};
pub use sites::{SiteSelectors, Sites};
// Public here since the stage was one file; the parser lives with the crate's other dates.
pub use crate::dates::scraped_date;

/// The `claims-scrape` stage, fetching through the run's shared [`Web`].
#[derive(Debug, Clone)]
pub struct ScrapeStage {
    web: Arc<Web>,
}

impl ScrapeStage {
    /// `web` is the run's web layer, built once from the pipeline's `[web]` table and shared by
    /// every stage that fetches, so they share its per-host rate limits and robots.txt cache.
    pub fn new(web: Arc<Web>) -> Self {
        Self { web }
    }
}

impl TypedStage for ScrapeStage {
    type Config = ScrapeConfig;
    const KIND: &'static str = "claims-scrape";
    const VERSION: u32 = 3;
    const ONE_TO_ONE: bool = true;

    fn inputs(&self) -> Vec<InputSpec> {
        Vec::new()
    }

    fn outputs(&self) -> Vec<OutputSpec> {
        vec![OutputSpec::new("claims", TableKind::Claims)]
    }

    fn validate(&self, config: &ScrapeConfig, _root: &Path) -> Result<(), ConfigError> {
        // The web layer checked its own table (and its replay folders) when it was built.
        resolve(config).map(drop)
    }

    fn environment(&self) -> serde_json::Value {
        serde_json::json!({ "web_mode": self.web.config().mode })
    }

    fn reads_live_sources(&self, _config: &ScrapeConfig) -> bool {
        self.web.config().mode == Mode::Live
    }

    fn external_files(&self, _config: &ScrapeConfig, root: &Path) -> Vec<std::path::PathBuf> {
        // Replay inputs are what the stage reads: fingerprint them.
        self.web.config().replay_inputs(root)
    }

    fn run(
        &self,
        config: &ScrapeConfig,
        _inputs: Inputs,
        ctx: &StageContext,
    ) -> Result<StageOutput, StageError> {
        let resolved = resolve(config)?;
        let web = self.web.as_ref();
        let mut drops = Drops::new(&ctx.stage_id);
        let mut items_in = 0u64;
        let candidates =
            listing::candidates(web, &config.sources, &resolved, &mut drops, &mut items_in);
        let claims = articles::claims(
            web,
            &candidates,
            &resolved,
            &mut drops,
            ctx.progress.as_ref(),
        );
        let report = StageReport {
            items_in,
            items_out: claims.len() as u64,
            drops: drops.into_records(),
        };
        Ok(StageOutput {
            report,
            ..StageOutput::default()
        }
        .with_table("claims", claims))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_root() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn the_stage_reads_the_shared_webs_configuration() {
        use noisebench_core::Stage;
        let config = serde_json::json!({"sources": [{"kind": "politifact"}]});
        let replay = Web::new(
            noisebench_web::WebConfig {
                mode: Mode::Replay,
                replay_fixtures: vec!["fixtures/web".into(), "fixtures/sites".into()],
                ..Default::default()
            },
            &repo_root(),
        )
        .unwrap();
        let stage = ScrapeStage::new(Arc::new(replay));
        assert!(!Stage::reads_live_sources(&stage, &config));
        assert_eq!(Stage::environment(&stage)["web_mode"], "replay");
        let files = Stage::external_files(&stage, &config, &repo_root()).unwrap();
        for site in ["web/who", "sites/politifact", "sites/checks-example"] {
            let index = repo_root().join("fixtures").join(site).join("index.toml");
            assert!(files.contains(&index), "{index:?} not in {files:?}");
        }
        assert!(
            files
                .iter()
                .any(|f| f.ends_with("politifact/article-a.html"))
        );

        let live = Web::new(noisebench_web::WebConfig::default(), &repo_root()).unwrap();
        let stage = ScrapeStage::new(Arc::new(live));
        assert!(Stage::reads_live_sources(&stage, &config));
        assert_eq!(Stage::environment(&stage)["web_mode"], "live");
        assert!(
            Stage::external_files(&stage, &config, &repo_root())
                .unwrap()
                .is_empty()
        );
    }
}
