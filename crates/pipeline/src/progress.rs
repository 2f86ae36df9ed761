//! Progress bars on a terminal (indicatif). Hidden when stderr is not a terminal. Each bar
//! logs its label, count and seconds when it finishes (`NOISEBENCH_LOG=info`): a stage's phases
//! timed, terminal or not.

use indicatif::{MultiProgress, ProgressBar as Bar, ProgressDrawTarget, ProgressStyle};
use noisebench_core::{Progress, ProgressBar};

/// Draws one bar per long loop of a stage.
pub struct BarProgress {
    multi: MultiProgress,
}

impl Default for BarProgress {
    fn default() -> Self {
        Self {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
        }
    }
}

impl Progress for BarProgress {
    fn bar(&self, label: &str, total: Option<u64>) -> Box<dyn ProgressBar> {
        let bar = match total {
            Some(n) => Bar::new(n).with_style(
                ProgressStyle::with_template(
                    "{prefix:>16} [{bar:30}] {pos}/{len} {per_sec} eta {eta}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            ),
            None => Bar::new_spinner(),
        };
        let bar = self.multi.add(bar);
        bar.set_prefix(label.to_string());
        Box::new(Drawn {
            bar,
            label: label.to_string(),
            started: std::time::Instant::now(),
        })
    }
}

struct Drawn {
    bar: Bar,
    label: String,
    started: std::time::Instant,
}

impl ProgressBar for Drawn {
    fn inc(&self, n: u64) {
        self.bar.inc(n);
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
        tracing::info!(
            label = %self.label,
            items = self.bar.position(),
            seconds = format!("{:.2}", self.started.elapsed().as_secs_f64()),
            "phase done"
        );
    }
}
