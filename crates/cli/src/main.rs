//! `noisebench`: build, inspect and verify noisy-retrieval benchmark snapshots.
// The commands' doc comments are their `--help` text, written for a terminal: `[llm]` is a
// configuration table and `<model>` a placeholder there, not a link or an HTML tag.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser, Subcommand};
use noisebench_cli::{
    EvalRequest, LlmOverrides, LlmTotals, Workspace, build_snapshot, check, compare_evals,
    export_snapshot, inspect_id, inspect_stage, resolve_snapshot, run_eval, validate_snapshot,
    write_config_reference, write_report_sampled, write_schemas,
};
use noisebench_core::TableKind;
use noisebench_pipeline::BarProgress;
use noisebench_snapshot::{PublishOptions, PublishOutcome};

/// mimalloc: a build allocates millions of small strings (rows read from Parquet, prompts,
/// pages); the system allocator spends a third of a 1M-row table read on them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "noisebench",
    version,
    about = "Build noisy-retrieval benchmarks as versioned Parquet snapshots"
)]
struct Cli {
    /// Repository root: relative paths in pipeline files, `work/` and `snapshots/` live here.
    #[arg(long, global = true, default_value = ".")]
    root: PathBuf,
    /// Do not ask each model its tasks' small examples before a run (the LLM preflight, which
    /// stops a run whose model answers them badly).
    #[arg(long, global = true)]
    skip_preflight: bool,
    /// `--max-cost` before the command: taken by the commands that have it ([`LlmOptions`]).
    #[arg(long, hide = true, value_name = "USD")]
    max_cost: Option<f64>,
    /// `--cache-only` before the command, likewise.
    #[arg(long, hide = true)]
    cache_only: bool,
    /// `--remote-work` before the command, likewise ([`RemoteOption`]).
    #[arg(long, hide = true, value_name = "LOCATION")]
    remote_work: Option<String>,
    /// `--skip-quote` before the command, likewise ([`BuildOptions`]).
    #[arg(long, hide = true)]
    skip_quote: bool,
    #[command(subcommand)]
    command: Command,
}

/// The options of the commands that call models.
#[derive(clap::Args)]
struct LlmOptions {
    /// Stop issuing new LLM calls once the estimated cost reaches this many USD (overrides
    /// `[llm] max_cost`); the stage in progress is left to resume on the next run.
    #[arg(long, value_name = "USD")]
    max_cost: Option<f64>,
    /// Answer LLM tasks only from the cache; a miss fails the item (reproducibility checks).
    #[arg(long)]
    cache_only: bool,
}

/// `--remote-work`, for the commands that run stages or write their jobs.
#[derive(clap::Args)]
struct RemoteOption {
    /// Share the work folder through object storage (`s3://bucket/prefix`; also
    /// NOISEBENCH_REMOTE_WORK): stage folders, shard parts and the web archive are pulled from
    /// `<prefix>/work/` before stages run and pushed there after, so shards on different
    /// machines find their upstream and a merge its parts.
    #[arg(long, value_name = "LOCATION")]
    remote_work: Option<String>,
}

/// The options of `build-snapshot` and `refresh` beyond their own.
#[derive(clap::Args)]
struct BuildOptions {
    #[command(flatten)]
    llm: LlmOptions,
    #[command(flatten)]
    remote: RemoteOption,
    /// Do not quote a build with a priced model before it runs (the quote that refuses a build
    /// whose cost is above `max_cost` before any request; `noisebench quote`).
    #[arg(long)]
    skip_quote: bool,
}

#[derive(Subcommand)]
enum HubCommand {
    /// Push a published version (a version folder, or a dataset folder: its latest) to the
    /// dataset repository OWNER/NAME as one commit tagged v<version>, with its report; the
    /// repository is created when missing. A version already there is skipped. The token is
    /// read from HF_TOKEN (or --token-env) and never printed.
    Push {
        /// A version folder (snapshots/demo/1.0.0) or a dataset folder (its latest version).
        snapshot: PathBuf,
        /// The dataset repository on the Hub.
        #[arg(long, value_name = "OWNER/NAME")]
        repo: String,
        /// Create the repository private (when it does not exist yet).
        #[arg(long)]
        private: bool,
        /// The environment variable holding the token.
        #[arg(long, default_value = "HF_TOKEN")]
        token_env: String,
    },
    /// Download a version published to OWNER/NAME (the latest, or --version) into
    /// snapshots/<dataset>/<version>/, checked before it appears there: what a runner that
    /// starts empty does before `refresh`, so the refresh diffs against the last version and
    /// numbers the next. A repository with no version yet pulls nothing.
    Pull {
        /// The dataset repository to pull from.
        #[arg(long, value_name = "OWNER/NAME")]
        repo: String,
        /// The version to pull (v1.2.0); the latest when unset.
        #[arg(long)]
        version: Option<String>,
        /// The environment variable holding a token (needed for a private repository).
        #[arg(long, default_value = "HF_TOKEN")]
        token_env: String,
    },
}

#[derive(Subcommand)]
enum Command {
    /// Run a pipeline (skipping unchanged stages) and publish its snapshot if anything changed.
    BuildSnapshot {
        /// A pipeline name (`demo` = pipelines/demo.toml) or a path.
        #[arg(default_value = "pipelines/demo.toml")]
        pipeline: String,
        /// Rerun every stage even if its fingerprint is unchanged.
        #[arg(long)]
        force: bool,
        /// Publish even when items failed for a transient cause (network, 429, 5xx, timeout,
        /// budget); the manifest lists them. Without it such a build publishes nothing and exits
        /// non-zero, and running again retries exactly those items.
        #[arg(long)]
        allow_partial: bool,
        /// Publish even when a stage lost more than its gate allows (`[gates]`), or a table
        /// failed its checks; the card and manifest.json list what failed. Without it such a
        /// build stops at that stage and publishes nothing.
        #[arg(long)]
        allow_degraded: bool,
        #[command(flatten)]
        options: BuildOptions,
    },
    /// Refetch what comes from live sources (web pages, search APIs) and publish a new version if
    /// anything changed: `build-snapshot` that also reruns unchanged stages reading live sources.
    Refresh {
        /// A pipeline name (`demo` = pipelines/demo.toml) or a path.
        #[arg(default_value = "pipelines/demo.toml")]
        pipeline: String,
        /// As for `build-snapshot`.
        #[arg(long)]
        allow_partial: bool,
        /// As for `build-snapshot`.
        #[arg(long)]
        allow_degraded: bool,
        /// For cron and systemd timers: exit 0 printing "no change" when nothing new was
        /// published, 10 when a new version was (any error stays 1).
        #[arg(long)]
        if_changed: bool,
        #[command(flatten)]
        options: BuildOptions,
    },
    /// Check a pipeline without running it: the file, [llm], [web], every stage's configuration
    /// and wiring, and print the plan (with a priced model, its quote); then name every API key
    /// variable the pipeline needs that is not set, all at once, and exit non-zero.
    Check {
        /// A pipeline name (`demo` = pipelines/demo.toml) or a path.
        #[arg(default_value = "pipelines/demo.toml")]
        pipeline: String,
        /// Also ask each model one small question per task (its examples) and report whether it
        /// answers in the task's JSON, repeats the prompt's examples, or gives one answer for
        /// different inputs; exits non-zero when a model fails.
        #[arg(long)]
        llm: bool,
        #[command(flatten)]
        options: LlmOptions,
    },
    /// What a build will ask its models and cost, before any call: per stage and task the
    /// requests, input and output tokens, USD at the configured prices and the wall time the
    /// limits allow; which stages the cache answers (free). Runs the pipeline in a scratch copy
    /// of its work folder with stand-in answers; stages downstream of them are projections.
    Quote {
        /// A pipeline name (`demo` = pipelines/demo.toml) or a path.
        #[arg(default_value = "pipelines/demo.toml")]
        pipeline: String,
        /// Send the first N requests of each task to the model for real (their answers are
        /// cached, so the build reuses them) and scale the rest by what they measured: answer
        /// lengths, re-asks, latency. Without it, answers are priced at their max_tokens ceiling.
        #[arg(long, default_value_t = 0, value_name = "N")]
        sample: usize,
        /// Quote as `--force` would build: every stage rerun.
        #[arg(long)]
        force: bool,
        /// Print the quote as JSON: `rows` (stage, task, calls, input_tokens, output_tokens,
        /// usd, projected, ...) and `total` with the same fields.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        options: LlmOptions,
    },
    /// Run one stage of a pipeline, and whatever it needs that is out of date.
    Run {
        /// The stage's id in the pipeline file (`[stages.<id>]`).
        stage: String,
        /// A pipeline name (`demo` = pipelines/demo.toml) or a path.
        #[arg(long, default_value = "pipelines/demo.toml")]
        pipeline: String,
        /// Rerun the stage even if its fingerprint is unchanged (what it needs reruns only when
        /// out of date).
        #[arg(long)]
        force: bool,
        /// Run only shard i of n (`--shard 2/8`, from 0) of a per-item stage: the items whose
        /// key hashes to it, into `work/<pipeline>/<stage>/shards/<i>-of-<n>/`. What the stage
        /// needs must be up to date (run or merged) first; `merge` joins the parts.
        #[arg(long)]
        shard: Option<String>,
        #[command(flatten)]
        llm: LlmOptions,
        #[command(flatten)]
        remote: RemoteOption,
    },
    /// Join the parts of a stage run in shards: checks all n parts are complete, runs the stage
    /// over its whole input with every LLM answer read from the parts' work (nothing is asked
    /// again), checks each part's rows against the result, and records the parts' calls.
    Merge {
        /// The stage's id in the pipeline file (`[stages.<id>]`).
        stage: String,
        /// A pipeline name (`demo` = pipelines/demo.toml) or a path.
        #[arg(long, default_value = "pipelines/demo.toml")]
        pipeline: String,
        /// How many shards the stage was run in.
        #[arg(long)]
        shards: u32,
        #[command(flatten)]
        remote: RemoteOption,
    },
    /// Write a pipeline as jobs for a scheduler that already runs your cluster: Slurm job arrays
    /// with `--dependency=afterok` (`OUT/submit.sh` submits them) or Kubernetes Indexed Jobs
    /// (one `OUT/NN-<step>.yaml` per step, `OUT/apply.sh` applies them in order). Per-item stages run as `--shards`
    /// shards followed by a merge; the rest run once; the last step publishes.
    Plan(PlanArgs),
    /// Recheck a snapshot's hashes, sizes, row counts and schemas.
    Verify {
        /// A version folder (snapshots/demo/1.0.0), a dataset folder (its latest version), or a
        /// version on the Hub (hf://OWNER/NAME@v1.2.0, downloaded once under work/hub/).
        snapshot: PathBuf,
    },
    /// Check a snapshot against the dataset's own rules (answers grounded in their chunks,
    /// multi-hop questions needing two chunks, references resolving, unique ids and question
    /// texts, every claim-document pair labelled): one line per check, non-zero exit on any
    /// failure. Checks whose tables the snapshot lacks are skipped.
    Validate {
        /// A version folder (snapshots/demo/1.0.0) or a dataset folder (its latest version).
        snapshot: PathBuf,
    },
    /// Print the row changes between two snapshot versions, and how their quality cards moved.
    Diff {
        /// The older version: a version folder (snapshots/demo/1.0.0) or a dataset folder.
        v1: PathBuf,
        /// The newer version, likewise.
        v2: PathBuf,
    },
    /// Print a snapshot's quality card (label agreement, grounding, near-duplicates and
    /// leakage, mix against the target, lexical shortcut; docs/quality.md) and, with
    /// `--compare`, how each number moved from another version.
    Quality {
        /// A version folder (snapshots/demo/1.0.0) or a dataset folder (its latest version).
        snapshot: PathBuf,
        /// Another version to compare with.
        #[arg(long)]
        compare: Option<PathBuf>,
    },
    /// Show a stage's schema, row count, first rows and drop reasons.
    Inspect {
        #[command(subcommand)]
        what: Inspect,
    },
    /// Write a published snapshot in a seed dataset's release format.
    Export {
        /// A release format, each with the files it writes (`noisebench_releases::formats()`).
        #[arg(value_parser = release_formats())]
        format: String,
        /// A version folder, or a dataset folder (its latest version).
        snapshot: PathBuf,
        /// Where to write (default `exports/<dataset>/<version>/<format>/`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Evaluate a model on a snapshot or a seed release (RAGuard, CONF-FACT, RARE-Met tasks):
    /// predictions, metrics with 95% bootstrap intervals and the call log go to
    /// `evals/<benchmark>/<model>/`, and the results table is printed. Calls go through the LLM
    /// layer (`[llm]` of the configuration file): a rerun is answered from the cache, and
    /// `--max-cost` stops it resumably.
    Eval(EvalArgs),
    /// Write a version's report: one self-contained HTML page (inline CSS and SVG figures, no
    /// script, nothing loaded from elsewhere) beside the version folder. `build-snapshot` writes
    /// it for every version it publishes.
    Report {
        /// A version folder, or a dataset folder (its latest version).
        snapshot: PathBuf,
        /// Where to write (default `snapshots/<dataset>/<version>.report.html`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Evaluation results to include: `<evals>/<dataset>@<version>/*/metrics.parquet`.
        #[arg(long, default_value = "evals")]
        evals: PathBuf,
        /// Sampled items shown per stratum (verdict x label, question kind x split, stage x drop
        /// reason); 0 shows every item.
        #[arg(long, default_value_t = noisebench_core::DEFAULT_PER_STRATUM)]
        per_stratum: usize,
    },
    /// Write a seeded synthetic report corpus of RARE's shape (10-K JSON, survey Markdown, plan
    /// HTML; about 76 chunks a report) and `OUT/pipeline.toml`, the report track over it with
    /// the offline backend: `noisebench build-snapshot OUT/pipeline.toml` runs it.
    GenerateReports {
        /// How many reports (RARE: 527).
        #[arg(long, default_value_t = noisebench_chunk::synthetic::RARE_REPORTS)]
        reports: usize,
        /// The seed of every random choice: the same seed, the same corpus.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// The folder to write the reports and their pipeline file into.
        #[arg(long)]
        out: PathBuf,
    },
    /// Object storage (`s3://bucket/prefix`, AWS_* environment variables): publish, list and
    /// download snapshot versions; push and pull stage folders.
    Store {
        #[command(subcommand)]
        command: noisebench_store::cli::StoreCommand,
    },
    /// The Hugging Face Hub: `hub push` makes a published version one commit of a dataset
    /// repository, tagged v<version> (docs/publish.md).
    Hub {
        #[command(subcommand)]
        command: HubCommand,
    },
    /// Write the generated references: schemas/<table>.json for every table, the
    /// configuration reference (schemas/config/<stage-kind>.json, llm.json, web.json and
    /// docs/configuration.md rendered from them), the command-line reference (docs/cli.md) and
    /// the drop reasons (drop-reasons.md beside the configuration reference).
    Schemas {
        /// The folder of the table schemas (the configuration schemas go to its `config/`).
        #[arg(default_value = "schemas")]
        dir: PathBuf,
        /// Where the Markdown configuration reference goes.
        #[arg(long, default_value = "docs/configuration.md")]
        doc: PathBuf,
        /// Where the Markdown command-line reference goes.
        #[arg(long, default_value = "docs/cli.md")]
        cli_doc: PathBuf,
    },
}

/// `plan`'s options.
#[derive(clap::Args)]
struct PlanArgs {
    /// A pipeline name (`demo` = pipelines/demo.toml) or a path.
    #[arg(default_value = "pipelines/demo.toml")]
    pipeline: String,
    /// `slurm` or `k8s`.
    #[arg(long, value_parser = ["slurm", "k8s"])]
    emit: String,
    /// Shards per per-item stage.
    #[arg(long, default_value_t = 4)]
    shards: u32,
    /// The folder to write.
    #[arg(long, default_value = "work/plan")]
    out: PathBuf,
    /// Kubernetes: the container image (holding `noisebench` and the repository at `--workdir`).
    #[arg(long, default_value = "noisebench:latest")]
    image: String,
    /// Kubernetes: the volume claim mounted at `--workdir` (shared by every pod: work, cache,
    /// snapshots).
    #[arg(long, default_value = "noisebench-work")]
    claim: String,
    /// Kubernetes: the repository folder inside the container.
    #[arg(long, default_value = "/work")]
    workdir: String,
    // The work folder the jobs share through object storage (handed to every job).
    #[command(flatten)]
    remote: RemoteOption,
}

#[derive(clap::Args)]
struct EvalArgs {
    /// A snapshot (version or dataset folder), RAGuard's folder or its claims.csv (and
    /// documents.csv), a CONF-FACT instance file (HumC.pkl.gz, ModC.pkl.gz, or JSON), or RARE's
    /// folder or record files; or a version on the Hub, hf://OWNER/NAME@v1.2.0 (downloaded
    /// once under work/hub/).
    #[arg(required_unless_present = "compare")]
    inputs: Vec<PathBuf>,
    /// The inputs' format (detected when not given).
    #[arg(long, value_parser = ["snapshot", "raguard", "confact", "rare"])]
    format: Option<String>,
    /// RARE's chunk corpus (a JSON list or JSON Lines of `{chunk_id, text}`; default: a
    /// `chunks.json` in the RARE folder).
    #[arg(long)]
    chunks: Option<PathBuf>,
    /// CONF-FACT's credibility tables (default: `all_media_data.pkl` and `mbfc_media_data.pkl`
    /// beside the instance file). Repeatable.
    #[arg(long)]
    credibility: Vec<PathBuf>,
    /// A folder of RARE's `<name>_retrieval_results.json` (default: the RARE folder and its
    /// `retrieval_results/`).
    #[arg(long)]
    retrieval_results: Option<PathBuf>,
    /// The evaluation file with `[llm]` and `[eval]` tables (default pipelines/eval/default.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The generator: `plain`, or a reference system `astute` / `counterrefine`.
    #[arg(long, value_parser = ["plain", "astute", "counterrefine"])]
    system: Option<String>,
    /// Task families to run (comma-separated): raguard, confact, rare.
    #[arg(long, value_delimiter = ',')]
    families: Option<Vec<String>>,
    /// Only the first N items of each family.
    #[arg(long)]
    limit: Option<usize>,
    /// A snapshot's retriever whose results are RARE-Met's real retrieval (default: the first).
    #[arg(long)]
    retriever: Option<String>,
    /// Where results go.
    #[arg(long, default_value = "evals")]
    out: PathBuf,
    /// Print two result folders (evals/<benchmark>/<model>) side by side, with B - A and its
    /// paired 95% bootstrap interval, instead of evaluating.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    compare: Option<Vec<PathBuf>>,
    #[command(flatten)]
    llm: LlmOptions,
}

#[derive(Subcommand)]
enum Inspect {
    /// A stage's schema, row counts, first rows and drop reasons.
    Stage {
        /// The stage's id in the pipeline file (`[stages.<id>]`).
        name: String,
        /// A pipeline name (`demo` = pipelines/demo.toml) or a path.
        #[arg(long, default_value = "pipelines/demo.toml")]
        pipeline: String,
        /// How many rows to show.
        #[arg(long, default_value_t = 5)]
        rows: usize,
    },
    /// A claim and every row that names it (queries, hits, links, labels, conflicts, drops).
    Claim(ItemArgs),
    /// A document and every row that names it (links, passages, labels, drops).
    Document(ItemArgs),
    /// A question and every row that names it.
    Question(ItemArgs),
    /// A chunk and every row that names it.
    Chunk(ItemArgs),
    /// A report and every row that names it (its chunks, drops).
    Report(ItemArgs),
}

#[derive(clap::Args)]
struct ItemArgs {
    /// The item's id (a `claim_id`, `document_id`, `question_id`, `chunk_id` or `report_id`).
    id: String,
    /// A pipeline name (`demo` = pipelines/demo.toml) or a path.
    #[arg(long, default_value = "pipelines/demo.toml")]
    pipeline: String,
    /// Rows shown per table.
    #[arg(long, default_value_t = 20)]
    rows: usize,
    /// Longer strings are cut to this many characters.
    #[arg(long, default_value_t = 300)]
    chars: usize,
}

fn main() {
    noisebench_cli::memory_settings();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("NOISEBENCH_LOG")
                .or_else(|_| tracing_subscriber::EnvFilter::try_from_env("RUST_LOG"))
                // By default, warnings; not the HTML parser's notes on the pages it repairs
                // ("foster parenting not implemented"), hundreds a run and nothing to act on.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,html5ever=error")),
        )
        .with_writer(std::io::stderr)
        .init();
    // `[llm.cache] remote = "s3://..."` opens through the store crate.
    noisebench_store::install_llm_cache_remote();
    if let Err(e) = run(Cli::parse()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    let mut ws = Workspace::at(&cli.root, Arc::new(BarProgress::default()));
    apply_options(&cli, &mut ws)?;
    ws.preflight = !cli.skip_preflight;
    match cli.command {
        Command::BuildSnapshot {
            pipeline,
            force,
            allow_partial,
            allow_degraded,
            ..
        } => {
            ws.allow_partial = allow_partial;
            ws.allow_degraded = allow_degraded;
            build_and_report(&ws, &pipeline, force)?;
        }
        Command::Refresh {
            pipeline,
            allow_partial,
            allow_degraded,
            if_changed,
            ..
        } => {
            ws.refresh = true;
            ws.allow_partial = allow_partial;
            ws.allow_degraded = allow_degraded;
            let published = build_and_report(&ws, &pipeline, false)?;
            if if_changed {
                if published {
                    std::process::exit(NEW_VERSION_EXIT);
                }
                println!("no change");
            }
        }
        Command::Check { pipeline, llm, .. } => check_command(&ws, &pipeline, llm)?,
        Command::Quote {
            pipeline,
            sample,
            force,
            json,
            ..
        } => {
            let q = noisebench_cli::quote(&ws, &pipeline, sample, force)?;
            q.save(&ws.work_dir)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&q)?);
            } else {
                print!("{}", q.render());
            }
        }
        Command::Store { command } => print!("{}", noisebench_store::cli::run(command)?),
        Command::Hub { command } => println!("{}", hub_command(&ws, command)?),
        Command::Run {
            stage,
            pipeline,
            force,
            shard,
            ..
        } => run_command(&ws, &pipeline, stage, force, shard)?,
        Command::Merge {
            stage,
            pipeline,
            shards,
            ..
        } => merge_command(ws, &pipeline, &stage, shards)?,
        Command::Plan(args) => plan_command(ws, &cli.root, args)?,
        Command::Verify { snapshot } => {
            verify_command(&noisebench_cli::hub::localize(&cli.root, &snapshot)?)?
        }
        Command::Validate { snapshot } => validate_command(&snapshot)?,
        Command::Diff { v1, v2 } => {
            let (v1, v2) = (resolve_snapshot(&v1)?, resolve_snapshot(&v2)?);
            let changes = noisebench_snapshot::diff(&v1, &v2).map_err(anyhow::Error::msg)?;
            print!("{}", changes.render_markdown());
            if let Some(moves) = noisebench_cli::quality_moves(&v1, &v2)? {
                print!("{moves}");
            }
        }
        Command::Quality { snapshot, compare } => quality_command(&snapshot, compare.as_deref())?,
        Command::Inspect { what } => inspect_command(&ws, what)?,
        Command::Export {
            format,
            snapshot,
            out,
        } => export_command(&cli.root, &format, &snapshot, out)?,
        Command::Eval(args) => eval_command(&ws, &cli.root, args)?,
        Command::Report {
            snapshot,
            out,
            evals,
            per_stratum,
        } => {
            let dir = resolve_snapshot(&snapshot)?;
            let path = write_report_sampled(
                &dir,
                Some(&cli.root.join(&evals)),
                out.as_deref(),
                per_stratum,
            )?;
            println!("{}", path.display());
        }
        Command::GenerateReports { reports, seed, out } => {
            let spec = noisebench_chunk::synthetic::CorpusSpec::rare(reports, seed);
            let out = cli.root.join(out);
            let w = noisebench_chunk::synthetic::write_corpus(&out, &spec)
                .map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
            println!(
                "wrote {} reports ({} words, {} bytes); pipeline {}",
                w.reports,
                w.words,
                w.bytes,
                w.pipeline.display()
            );
        }
        Command::Schemas { dir, doc, cli_doc } => {
            let dir = cli.root.join(dir);
            let n = write_schemas(&dir)?;
            let doc = cli.root.join(doc);
            let c = write_config_reference(&dir.join("config"), &doc)?;
            let cli_doc = cli.root.join(cli_doc);
            let reference =
                noisebench_cli::render_cli_reference(&<Cli as CommandFactory>::command())?;
            std::fs::write(&cli_doc, reference)
                .map_err(|e| anyhow::anyhow!("{}: {e}", cli_doc.display()))?;
            let drops_doc = doc.with_file_name("drop-reasons.md");
            std::fs::write(&drops_doc, noisebench_cli::render_drop_reasons())
                .map_err(|e| anyhow::anyhow!("{}: {e}", drops_doc.display()))?;
            println!(
                "wrote {n} table schemas, {c} configuration schemas in {} and {}, {} and {}",
                dir.join("config").display(),
                doc.display(),
                cli_doc.display(),
                drops_doc.display()
            );
        }
    }
    Ok(())
}

/// The model, shared-work and quote options the command takes (`None`: it takes none of them).
fn taken_options(command: &Command) -> (Option<&LlmOptions>, Option<&RemoteOption>, Option<bool>) {
    match command {
        Command::BuildSnapshot { options, .. } | Command::Refresh { options, .. } => (
            Some(&options.llm),
            Some(&options.remote),
            Some(options.skip_quote),
        ),
        Command::Check { options, .. } | Command::Quote { options, .. } => {
            (Some(options), None, None)
        }
        Command::Run { llm, remote, .. } => (Some(llm), Some(remote), None),
        Command::Merge { remote, .. } => (None, Some(remote), None),
        Command::Plan(args) => (None, Some(&args.remote), None),
        Command::Eval(args) => (Some(&args.llm), None, None),
        _ => (None, None, None),
    }
}

/// The command's model, shared-work and quote options into the workspace, with those given
/// before the command (where they once were global) taken as its own; one given before a command
/// that does not take it is refused, naming the commands that do.
fn apply_options(cli: &Cli, ws: &mut Workspace) -> Result<()> {
    let (llm, remote, skip_quote) = taken_options(&cli.command);
    for (flag, given, taken, takers) in [
        (
            "--max-cost",
            cli.max_cost.is_some(),
            llm.is_some(),
            "build-snapshot, refresh, check, quote, run and eval",
        ),
        (
            "--cache-only",
            cli.cache_only,
            llm.is_some(),
            "build-snapshot, refresh, check, quote, run and eval",
        ),
        (
            "--remote-work",
            cli.remote_work.is_some(),
            remote.is_some(),
            "build-snapshot, refresh, run, merge and plan",
        ),
        (
            "--skip-quote",
            cli.skip_quote,
            skip_quote.is_some(),
            "build-snapshot and refresh",
        ),
    ] {
        if given && !taken {
            bail!("{flag} does not apply to this command: it is an option of {takers}");
        }
    }
    ws.llm_overrides = LlmOverrides {
        max_cost: llm.and_then(|l| l.max_cost).or(cli.max_cost),
        cache_only: cli.cache_only || llm.is_some_and(|l| l.cache_only),
        ..LlmOverrides::default()
    };
    let remote_work = remote
        .and_then(|r| r.remote_work.clone())
        .or_else(|| cli.remote_work.clone());
    ws.remote_work = noisebench_cli::remote_work::RemoteWork::from_option(remote_work)?;
    ws.quote = !(cli.skip_quote || skip_quote == Some(true));
    Ok(())
}

/// `check`: the pipeline file's checks, and with `--llm` the LLM preflight.
/// `hub push` and `hub pull`: the line to print.
fn hub_command(ws: &Workspace, command: HubCommand) -> Result<String> {
    match command {
        HubCommand::Push {
            snapshot,
            repo,
            private,
            token_env,
        } => {
            let config = noisebench_hub::HubConfig {
                repo,
                private,
                token_env,
                ..noisebench_hub::HubConfig::default()
            };
            noisebench_cli::hub::hub_push(&snapshot, &config, private)
        }
        HubCommand::Pull {
            repo,
            version,
            token_env,
        } => {
            let config = noisebench_hub::HubConfig {
                repo,
                token_env,
                ..noisebench_hub::HubConfig::default()
            };
            noisebench_cli::hub::hub_pull(&ws.root, &ws.snapshots_dir, &config, version.as_deref())
        }
    }
}

fn check_command(ws: &Workspace, pipeline: &str, llm: bool) -> Result<()> {
    match check(ws, pipeline) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            // Missing keys: the plan still, then every missing key in the error.
            if let Some(plan) = e
                .downcast_ref::<noisebench_cli::keys::MissingKeys>()
                .and_then(|m| m.plan.as_ref())
            {
                print!("{plan}");
            }
            return Err(e);
        }
    }
    // With a priced model, what the build will cost (no request is sent).
    if noisebench_cli::quote::priced(ws.load(pipeline)?.layers.llm.config()) {
        print!(
            "{}",
            noisebench_cli::quote(ws, pipeline, 0, false)?.render()
        );
    }
    if llm {
        let loaded = ws.load(pipeline)?;
        match ws.llm_preflight(&loaded)? {
            None => {
                println!("LLM preflight: nothing to ask (offline backend or cache-only)")
            }
            Some(report) => {
                print!("{report}");
                if report.failed() {
                    anyhow::bail!("a model failed the LLM preflight");
                }
            }
        }
    }
    Ok(())
}

/// `run STAGE [--shard i/n]`: the stage (or one shard of it) and the summary.
fn run_command(
    ws: &Workspace,
    pipeline: &str,
    stage: String,
    force: bool,
    shard: Option<String>,
) -> Result<()> {
    let loaded = ws.load(pipeline)?;
    let result = match shard {
        Some(shard) => {
            let shard = noisebench_core::Shard::parse(&shard).map_err(anyhow::Error::msg)?;
            ws.run_shard(&loaded, &stage, shard, force)?
        }
        None => ws.run(&loaded, Some(stage), force)?,
    };
    print!("{}", result.render_summary());
    println!("{}", LlmTotals::of_run(&result.run_dir)?.render());
    if let Some(message) = result.unfinished_message() {
        bail!("{message}");
    }
    Ok(())
}

/// `merge STAGE --shards n`: the parts into the stage's tables.
fn merge_command(mut ws: Workspace, pipeline: &str, stage: &str, shards: u32) -> Result<()> {
    // Every answer comes from the parts: a miss is an item no shard finished.
    ws.llm_overrides.cache_only = true;
    ws.llm_overrides.archive_only = true;
    let loaded = ws.load(pipeline)?;
    let (result, check) = ws.merge(&loaded, stage, shards)?;
    print!("{}", result.render_summary());
    println!(
        "merged {} parts of `{stage}`: {} items; {} of {} part rows kept as they were, {} removed by steps over every item; {} LLM calls made by the parts",
        check.parts, check.items_in, check.same, check.part_rows, check.not_kept, check.calls
    );
    Ok(())
}

/// `plan`: the job files of a sharded run (Slurm or Kubernetes).
fn plan_command(mut ws: Workspace, root: &std::path::Path, args: PlanArgs) -> Result<()> {
    let PlanArgs {
        pipeline,
        emit,
        shards,
        out,
        image,
        claim,
        workdir,
        ..
    } = args;
    // Planning reads nothing remote: the shared work folder is only handed to the jobs.
    let remote_work = ws.remote_work.take().map(|r| r.location.to_string());
    let loaded = ws.load(&pipeline)?;
    let out = if out.is_absolute() {
        out
    } else {
        root.join(out)
    };
    let request = noisebench_cli::scale::PlanRequest {
        pipeline: ws.pipeline_path(&pipeline),
        root: std::fs::canonicalize(root)?,
        shards,
        binary: std::env::var_os("NOISEBENCH_BIN")
            .map(PathBuf::from)
            .unwrap_or(std::env::current_exe()?),
        image,
        claim,
        workdir,
        remote_work,
    };
    let written = match emit.as_str() {
        "slurm" => noisebench_cli::scale::write_slurm(&loaded.plan, &request, &out)?,
        _ => noisebench_cli::scale::write_k8s(&loaded.plan, &request, &out)?,
    };
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}

/// `verify`: every file of a snapshot against its manifest.
fn quality_command(snapshot: &std::path::Path, compare: Option<&std::path::Path>) -> Result<()> {
    let other = compare.map(resolve_snapshot).transpose()?;
    print!(
        "{}",
        noisebench_cli::quality_text(&resolve_snapshot(snapshot)?, other.as_deref())?
    );
    Ok(())
}

fn verify_command(snapshot: &std::path::Path) -> Result<()> {
    let dir = resolve_snapshot(snapshot)?;
    let report = noisebench_snapshot::verify(&dir);
    if !report.ok() {
        for p in &report.problems {
            eprintln!("problem: {p}");
        }
        bail!("{}: {} problems", dir.display(), report.problems.len());
    }
    println!(
        "{}: ok ({} tables, {} rows)",
        dir.display(),
        report.tables_checked,
        report.rows_checked
    );
    Ok(())
}

/// `validate`: a snapshot's tables against the checks of its rows.
fn validate_command(snapshot: &std::path::Path) -> Result<()> {
    let report = validate_snapshot(snapshot)?;
    print!("{}", report.render());
    if !report.ok() {
        bail!(
            "{}: {} of {} checks failed",
            report.snapshot.display(),
            report.failed_checks().len(),
            report.checks.len()
        );
    }
    Ok(())
}

/// `inspect`: a stage's record and rows, or one item across the tables.
fn inspect_command(ws: &Workspace, what: Inspect) -> Result<()> {
    let (kind, item) = match what {
        Inspect::Stage {
            name,
            pipeline,
            rows,
        } => {
            print!("{}", inspect_stage(ws, &pipeline, &name, rows)?);
            return Ok(());
        }
        Inspect::Claim(a) => (TableKind::Claims, a),
        Inspect::Document(a) => (TableKind::Documents, a),
        Inspect::Question(a) => (TableKind::Questions, a),
        Inspect::Chunk(a) => (TableKind::Chunks, a),
        Inspect::Report(a) => (TableKind::Reports, a),
    };
    print!(
        "{}",
        inspect_id(ws, &item.pipeline, kind, &item.id, item.rows, item.chars)?
    );
    Ok(())
}

/// `export`: a snapshot in a seed release's format.
fn export_command(
    root: &std::path::Path,
    format: &str,
    snapshot: &std::path::Path,
    out: Option<PathBuf>,
) -> Result<()> {
    let dir = resolve_snapshot(snapshot)?;
    let manifest = noisebench_snapshot::Manifest::read(&dir).map_err(anyhow::Error::msg)?;
    let out = out.unwrap_or_else(|| {
        root.join("exports")
            .join(&manifest.dataset)
            .join(&manifest.version)
            .join(format)
    });
    let exported = export_snapshot(&dir, format, &out)?;
    println!("{}", exported.describe(&dir, &out));
    Ok(())
}

/// `eval`: a model over a snapshot or a seed release, or two runs compared.
fn eval_command(ws: &Workspace, root: &std::path::Path, args: EvalArgs) -> Result<()> {
    if let Some(pair) = &args.compare {
        print!("{}", compare_evals(&pair[0], &pair[1], 1000, 0)?);
        return Ok(());
    }
    let inputs = args
        .inputs
        .iter()
        .map(|i| noisebench_cli::hub::localize(root, i))
        .collect::<Result<Vec<_>>>()?;
    let request = EvalRequest {
        inputs,
        format: args
            .format
            .as_deref()
            .and_then(noisebench_eval::SourceFormat::from_name),
        chunks: args.chunks,
        credibility: args.credibility,
        retrieval_results: args.retrieval_results,
        config: args.config,
        system: args.system,
        families: args.families,
        limit: args.limit,
        retriever: args.retriever,
        out: root.join(args.out),
    };
    let run = run_eval(root, &request, &ws.llm_overrides)?;
    print!("{}", run.loaded);
    print!("{}", noisebench_eval::results::render(&run.evaluation));
    println!("results in {}", run.dir.display());
    if run.tasks_ran() == 0 {
        bail!("no task ran: {}", run.why_nothing_ran());
    }
    if run.unfinished > 0 {
        bail!(
            "{} items were left unanswered for a transient cause (cost limit, network); run the same command again to resume: answers so far are cached",
            run.unfinished
        );
    }
    Ok(())
}

/// `refresh --if-changed`'s exit status when a new version was published.
const NEW_VERSION_EXIT: i32 = 10;

/// `build-snapshot` and `refresh`: run, print the summary, publish if changed and say which.
/// Returns whether a new version was published.
fn build_and_report(ws: &Workspace, pipeline: &str, force: bool) -> Result<bool> {
    let hub = noisebench_cli::hub::configured_hub(&ws.pipeline_path(pipeline))?;
    let built = match build_snapshot(ws, pipeline, force, &PublishOptions::default()) {
        Ok(built) => built,
        Err(e) => {
            if let Some(stopped) = e.downcast_ref::<noisebench_cli::Stopped>() {
                print!("{}", stopped.report);
            }
            return Err(e);
        }
    };
    print!("{}", built.run.render_summary());
    println!("{}", built.llm.render());
    if let Some(q) = &built.quote {
        print!("{}", q.render());
    }
    println!(
        "{} of {} stages ran; outputs in {}",
        built.run.ran(),
        built.run.summary.len(),
        built.run.run_dir.display()
    );
    let failed: Vec<String> = built
        .checks
        .iter()
        .filter(|c| c.failed())
        .map(|c| c.render())
        .collect();
    if !failed.is_empty() && built.withheld.is_none() {
        println!(
            "published with --allow-degraded although {} checks failed (the card lists them):\n  {}",
            failed.len(),
            failed.join("\n  ")
        );
    }
    if let Some(why) = built.withheld {
        if let Some(line) = &built.report_track {
            println!("{line}");
        }
        bail!("{why}");
    }
    let latest = match &built.outcome {
        Some(PublishOutcome::Unchanged { dir, .. } | PublishOutcome::Published { dir, .. }) => {
            Some(dir.clone())
        }
        None => None,
    };
    let published = match built.outcome {
        None => {
            println!("the pipeline has no [snapshot] section: nothing published");
            Ok(false)
        }
        Some(PublishOutcome::Unchanged { version, dir }) => {
            println!(
                "no change since version {version} ({}): nothing new published",
                dir.display()
            );
            Ok(false)
        }
        Some(PublishOutcome::Published {
            version,
            dir,
            changes,
        }) => {
            let (added, changed, removed) = changes.tables.values().fold((0, 0, 0), |a, t| {
                (
                    a.0 + t.added.len(),
                    a.1 + t.changed.len(),
                    a.2 + t.removed.len(),
                )
            });
            let exports = changes
                .exports_summary()
                .map(|e| format!("; {e}"))
                .unwrap_or_default();
            println!(
                "published version {version} at {} ({added} rows added, {changed} changed, {removed} removed{exports})",
                dir.display()
            );
            Ok(true)
        }
    };
    // `[publish.hub]`: the Hub gets the latest version (skipped when already there).
    if let (Some(dir), Some(hub)) = (latest, &hub) {
        println!("{}", noisebench_cli::hub::hub_push(&dir, hub, false)?);
    }
    // Last, so it is not missed: a report track that produced nothing.
    if let Some(line) = &built.report_track {
        println!("{line}");
    }
    published
}

/// The choices of `export`: every release format, its one-line description as its help.
fn release_formats() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        noisebench_releases::formats()
            .iter()
            .map(|f| clap::builder::PossibleValue::new(f.name()).help(f.about())),
    )
}
