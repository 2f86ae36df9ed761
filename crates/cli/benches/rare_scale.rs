//! The report track at RARE's scale: a synthetic corpus of 527 reports (about 40K chunks,
//! `noisebench_chunk::synthetic`) built end to end with the offline backend, at 1/8, 1/4, 1/2
//! and 1 of that size. Each scale runs in a fresh child process (this bench, re-executed), so
//! its peak memory (VmHWM) is its own. Prints per-stage seconds, rows out and peak memory, the
//! publish time and peak memory per scale (and the quality card's seconds and share of the
//! build), then the totals side by side. A stage's peak is the process's highest resident memory
//! while it ran (with its table checks and writes): the runner logs `running` as each stage
//! starts and the build `checking the tables to publish`, `quality card` and `publishing`; at
//! each mark the peak so far is booked to the step it ends and reset (`/proc/self/clear_refs`).
//! Beside each peak, `start_MB` is the
//! resident memory at the step's mark: for a stage, once its input tables are read (the runner
//! logs `running` as it hands them over), so `peak_MB - start_MB` is the stage's own work.
//! `step_s` is the wall time from a step's mark to the next (the stage, its table writes and
//! checks, and the next stage's reading of its inputs), `cpu_s` the CPU seconds of every thread
//! of the process in it (user and system, `getrusage`), and `cores` their ratio: how many of
//! the machine's cores the step kept busy.
//!
//! `cargo bench -p noisebench-cli --bench rare_scale` (or `just bench-rare`). Environment:
//! `RARE_SCALE_REPORTS=527` (the full size), `RARE_SCALE_FRACTIONS=8,4,2,1` (divisors; `x4` is
//! four times the full size, 2,108 reports: `RARE_SCALE_FRACTIONS=8,4,2,1,x2,x4`),
//! `RARE_SCALE_KEEP=dir` keeps the corpus and work folder of the last scale there.
//!
//! What is timed: `build_snapshot` as the command line runs it (every stage, then publishing the
//! snapshot's 15 tables); the corpus is generated and written before the clock starts.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use noisebench_chunk::synthetic::{CorpusSpec, write_corpus};
use noisebench_cli::{Workspace, build_snapshot};
use noisebench_core::NoProgress;
use noisebench_snapshot::PublishOptions;

/// The allocator the `noisebench` binary uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CHILD: &str = "RARE_SCALE_CHILD";

fn main() {
    if let Ok(reports) = std::env::var(CHILD) {
        // As the binary does.
        noisebench_cli::memory_settings();
        child(reports.parse().expect("a report count"));
        return;
    }
    // `cargo bench` passes `--bench`; nothing else is read from the arguments.
    let full: usize = env_or("RARE_SCALE_REPORTS", 527);
    // Each size: `8` is 1/8 of the full size, `x4` four times it.
    let sizes: Vec<(String, usize)> = std::env::var("RARE_SCALE_FRACTIONS")
        .unwrap_or_else(|_| "8,4,2,1".into())
        .split(',')
        .map(|d| {
            let d = d.trim();
            let parse = |n: &str| -> usize {
                n.parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .expect("RARE_SCALE_FRACTIONS: divisors like 8,4,2,1, or x4 for four times")
            };
            match d.strip_prefix('x') {
                Some(m) => (format!("{m}x"), full * parse(m)),
                None => (format!("1/{d}"), full.div_ceil(parse(d))),
            }
        })
        .collect();
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut rows = Vec::new();
    for (label, reports) in sizes {
        eprintln!("rare_scale: {label} = {reports} reports");
        let out = std::process::Command::new(&exe)
            .env(CHILD, reports.to_string())
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("run the child");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        print!("{text}");
        assert!(out.status.success(), "scale {label} failed");
        let total = text
            .lines()
            .find_map(|l| l.strip_prefix("TOTAL "))
            .expect("the child prints its totals")
            .to_string();
        rows.push((label, reports, total));
    }
    println!(
        "\nscale  reports  chunks  triplets  edges  patterns  questions  stages_s  publish_s  total_s  peak_MB"
    );
    for (label, reports, total) in &rows {
        println!("{label:<5} {reports:>8}  {total}");
    }
    // Growth from each size to the next: the ratio of reports, and of total seconds and peak
    // memory (linear growth keeps the last two at the first).
    let fields = |t: &str| -> Vec<f64> {
        t.split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect()
    };
    for pair in rows.windows(2) {
        let (a, b) = (fields(&pair[0].2), fields(&pair[1].2));
        if let (Some(ta), Some(tb), Some(ma), Some(mb)) = (
            a.get(a.len().wrapping_sub(2)),
            b.get(b.len().wrapping_sub(2)),
            a.last(),
            b.last(),
        ) {
            println!(
                "{} -> {}: {:.2}x the reports, {:.2}x the time, {:.2}x the peak memory",
                pair[0].0,
                pair[1].0,
                pair[1].1 as f64 / pair[0].1 as f64,
                tb / ta,
                mb / ma
            );
        }
    }
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Each step of a build (a stage, the quality card, publishing) with the peak resident memory
/// while it ran, in MB, in order; the step running now is `current`.
#[derive(Default)]
struct StepPeaks {
    current: String,
    /// The resident memory when the step running now started, in MB.
    current_start: f64,
    /// When the step running now started: wall clock, and this process's CPU seconds.
    current_clock: Option<(Instant, f64)>,
    /// Each step ended, in order.
    done: Vec<Step>,
}

/// One step of a build, from its mark to the next.
#[derive(Debug, Clone)]
struct Step {
    name: String,
    /// Peak resident memory while it ran, and resident memory at its mark, in MB.
    peak: f64,
    start: f64,
    /// Wall seconds from its mark to the next, and CPU seconds (user and system, every
    /// thread) in them.
    wall: f64,
    cpu: f64,
}

impl StepPeaks {
    /// The step running now ends here; `next` starts.
    fn mark(&mut self, next: String) {
        let now = (Instant::now(), cpu_seconds());
        let (wall, cpu) = match self.current_clock.replace(now) {
            Some((at, cpu)) => (now.0.duration_since(at).as_secs_f64(), now.1 - cpu),
            None => (f64::NAN, f64::NAN),
        };
        let name = std::mem::replace(&mut self.current, next);
        let start = std::mem::replace(&mut self.current_start, status_mb("VmRSS:"));
        self.done.push(Step {
            name,
            peak: peak_mb(),
            start,
            wall,
            cpu,
        });
        reset_peak();
    }
}

/// CPU seconds this process has used so far, user and system, all threads.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one rusage struct, which lives on this stack frame.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return f64::NAN;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// A tracing layer booking the peak memory to each step at the marks the runner and the build
/// log: `running` (with the stage's id), `quality card`, `publishing`; it prints the seconds of
/// each of the card's measures and of each part of publishing as they are logged.
struct StepMemory(Arc<Mutex<StepPeaks>>);

#[derive(Default)]
struct MarkFields {
    message: String,
    stage: String,
}

impl tracing::field::Visit for MarkFields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "stage" => self.stage = format!("{value:?}"),
            _ => {}
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for StepMemory {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = MarkFields::default();
        event.record(&mut fields);
        let next = match fields.message.as_str() {
            "running" => fields.stage,
            "checking the tables to publish" | "quality card" | "publishing" => fields.message,
            part if part.starts_with("quality card: ")
                || part.starts_with("publishing: ")
                || part.starts_with("checks before publishing") =>
            {
                // Where the card's and the publish's time goes, one line per part.
                eprintln!("  {part}");
                return;
            }
            _ => return,
        };
        self.0.lock().expect("the step list").mark(next);
    }
}

/// Start the peak (VmHWM) over from the resident memory now (Linux 4.0 and later).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory of this process, in MB (VmHWM).
fn peak_mb() -> f64 {
    status_mb("VmHWM:")
}

/// A memory figure of this process's `/proc/self/status` (`VmHWM:`, `VmRSS:`), in MB.
fn status_mb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn child(reports: usize) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path();
    // The prompts the LLM tasks declare are read from pipelines/prompts/ under the root.
    noisebench_testkit::copy_dir(
        &noisebench_testkit::repo_root().join("pipelines"),
        &root.join("pipelines"),
    );
    let started = Instant::now();
    let corpus = write_corpus(&root.join("corpus"), &CorpusSpec::rare(reports, 42))
        .expect("write the corpus");
    eprintln!(
        "  corpus: {} reports, {} words, {:.1} MB, written in {:.1} s",
        corpus.reports,
        corpus.words,
        corpus.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    // Every gate and check must pass: `questions` drops repeated question texts.
    let steps = Arc::new(Mutex::new(StepPeaks {
        current: "load".into(),
        ..StepPeaks::default()
    }));
    {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::{Layer, filter::LevelFilter};
        let layer = StepMemory(steps.clone()).with_filter(LevelFilter::INFO);
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .expect("the only subscriber of the child");
    }
    reset_peak();
    steps.lock().expect("the step list").current_clock = Some((Instant::now(), cpu_seconds()));
    let ws = Workspace::at(root, Arc::new(NoProgress));
    let started = Instant::now();
    let built = build_snapshot(
        &ws,
        corpus.pipeline.to_str().expect("a UTF-8 path"),
        false,
        &PublishOptions::default(),
    )
    .expect("build the snapshot");
    let total = started.elapsed().as_secs_f64();
    assert!(built.outcome.is_some(), "{:?}", built.withheld);
    let steps: Vec<Step> = {
        let mut peaks = steps.lock().expect("the step list");
        peaks.mark(String::new());
        std::mem::take(&mut peaks.done)
    };
    // A step's figures (the one with the highest peak, should a name come twice).
    let step = |id: &str| {
        steps
            .iter()
            .filter(|s| s.name == id)
            .max_by(|a, b| a.peak.total_cmp(&b.peak))
            .cloned()
            .unwrap_or(Step {
                name: id.to_string(),
                peak: f64::NAN,
                start: f64::NAN,
                wall: f64::NAN,
                cpu: f64::NAN,
            })
    };
    let mut stage_sum = 0.0;
    let rows_of = |id: &str| {
        built
            .run
            .summary
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.items_out)
            .unwrap_or(-1)
    };
    println!(
        "{:<24} {:>8} {:>9} {:>9} {:>8} {:>8} {:>7} {:>7} {:>5}",
        "stage",
        "seconds",
        "items_in",
        "items_out",
        "start_MB",
        "peak_MB",
        "step_s",
        "cpu_s",
        "cores"
    );
    // One row: a label, three leading columns (a stage's seconds and items, or blank), then
    // the step's memory, wall and CPU seconds.
    let row = |label: &str, lead: [String; 3], st: &Step| {
        println!(
            "{label:<24} {:>8} {:>9} {:>9} {:>8.0} {:>8.0} {:>7.2} {:>7.2} {:>5.2}",
            lead[0],
            lead[1],
            lead[2],
            st.start,
            st.peak,
            st.wall,
            st.cpu,
            st.cpu / st.wall
        );
    };
    for s in &built.run.summary {
        stage_sum += s.seconds;
        let lead = [
            format!("{:.2}", s.seconds),
            s.items_in.to_string(),
            s.items_out.to_string(),
        ];
        row(&s.id, lead, &step(&s.id));
    }
    for (label, id) in [
        ("(loading the pipeline)", "load"),
        (
            "(checks before publishing)",
            "checking the tables to publish",
        ),
        ("(quality card)", "quality card"),
        ("(publishing)", "publishing"),
    ] {
        row(label, Default::default(), &step(id));
    }
    if let Some(s) = steps.iter().max_by(|a, b| a.peak.total_cmp(&b.peak)) {
        println!("the peak: {:.0} MB, during {}", s.peak, s.name);
    }
    // The whole build's peak: the highest of its steps' (the corpus was written before).
    let peak = steps.iter().map(|s| s.peak).fold(0.0, f64::max);
    let cpu: f64 = steps.iter().map(|s| s.cpu).filter(|c| c.is_finite()).sum();
    println!(
        "{:<24} {:>8.2}\n{:<24} {:>8.2}\n{:<24} {:>8.2}\npeak memory {peak:.0} MB",
        "quality card",
        built.quality_seconds,
        "publish (and overhead)",
        total - stage_sum - built.quality_seconds,
        "total",
        total
    );
    println!(
        "quality card: {:.1}% of the build",
        100.0 * built.quality_seconds / total
    );
    println!(
        "CPU {cpu:.1} s in {total:.1} s: {:.2} of {} cores busy on average",
        cpu / total,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "TOTAL {:>6}  {:>8}  {:>5}  {:>8}  {:>9}  {:>8.1}  {:>9.1}  {:>7.1}  {:>7.0}",
        rows_of("chunks"),
        rows_of("triplets"),
        rows_of("graph"),
        rows_of("patterns"),
        rows_of("qa-judge"),
        stage_sum,
        total - stage_sum,
        total,
        peak
    );
    if let Ok(keep) = std::env::var("RARE_SCALE_KEEP") {
        let keep = std::path::PathBuf::from(keep);
        let _ = std::fs::remove_dir_all(&keep);
        noisebench_testkit::copy_dir(root, &keep);
    }
}
