//! `noisebench`: build, inspect and verify noisy-retrieval benchmark snapshots.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};
use noisebench_cli::{Workspace, build_snapshot, inspect_stage, resolve_snapshot, write_schemas};
use noisebench_pipeline::BarProgress;
use noisebench_snapshot::{PublishOptions, PublishOutcome};

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
    #[command(subcommand)]
    command: Command,
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
    },
    /// Run one stage of a pipeline, and whatever it needs that is out of date.
    Run {
        stage: String,
        #[arg(long, default_value = "pipelines/demo.toml")]
        pipeline: String,
        #[arg(long)]
        force: bool,
    },
    /// Recheck a snapshot's hashes, sizes, row counts and schemas.
    Verify {
        /// A version folder (snapshots/demo/1.0.0) or a dataset folder (its latest version).
        snapshot: PathBuf,
    },
    /// Print the row changes between two snapshot versions.
    Diff { v1: PathBuf, v2: PathBuf },
    /// Show a stage's schema, row count, first rows and drop reasons.
    Inspect {
        #[command(subcommand)]
        what: Inspect,
    },
    /// Write schemas/<table>.json for every table.
    Schemas {
        #[arg(default_value = "schemas")]
        dir: PathBuf,
    },
}

#[derive(Subcommand)]
enum Inspect {
    Stage {
        name: String,
        #[arg(long, default_value = "pipelines/demo.toml")]
        pipeline: String,
        /// How many rows to show.
        #[arg(long, default_value_t = 5)]
        rows: usize,
    },
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("NOISEBENCH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run(Cli::parse()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    let ws = Workspace::at(&cli.root, Arc::new(BarProgress::default()));
    match cli.command {
        Command::BuildSnapshot { pipeline, force } => {
            let built = build_snapshot(&ws, &pipeline, force, &PublishOptions::default())?;
            print!("{}", built.run.render_summary());
            println!(
                "{} of {} stages ran; outputs in {}",
                built.run.ran(),
                built.run.summary.len(),
                built.run.run_dir.display()
            );
            match built.outcome {
                None => println!("the pipeline has no [snapshot] section: nothing published"),
                Some(PublishOutcome::Unchanged { version, dir }) => {
                    println!(
                        "no change since version {version} ({}): nothing new published",
                        dir.display()
                    )
                }
                Some(PublishOutcome::Published {
                    version,
                    dir,
                    changes,
                }) => {
                    let (added, changed, removed) =
                        changes.tables.values().fold((0, 0, 0), |a, t| {
                            (
                                a.0 + t.added.len(),
                                a.1 + t.changed.len(),
                                a.2 + t.removed.len(),
                            )
                        });
                    println!(
                        "published version {version} at {} ({added} rows added, {changed} changed, {removed} removed)",
                        dir.display()
                    );
                }
            }
        }
        Command::Run {
            stage,
            pipeline,
            force,
        } => {
            let plan = ws.plan(&pipeline)?;
            let result = ws.run(&plan, Some(stage), force)?;
            print!("{}", result.render_summary());
        }
        Command::Verify { snapshot } => {
            let dir = resolve_snapshot(&snapshot)?;
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
        }
        Command::Diff { v1, v2 } => {
            let changes =
                noisebench_snapshot::diff(&resolve_snapshot(&v1)?, &resolve_snapshot(&v2)?)
                    .map_err(anyhow::Error::msg)?;
            print!("{}", changes.render_markdown());
        }
        Command::Inspect {
            what:
                Inspect::Stage {
                    name,
                    pipeline,
                    rows,
                },
        } => {
            print!("{}", inspect_stage(&ws, &pipeline, &name, rows)?);
        }
        Command::Schemas { dir } => {
            let n = write_schemas(&cli.root.join(dir))?;
            println!("wrote {n} schemas");
        }
    }
    Ok(())
}
