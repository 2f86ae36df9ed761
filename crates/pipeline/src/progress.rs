//! Progress bars on a terminal (indicatif). Hidden when stderr is not a terminal.

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
        Box::new(Drawn(bar))
    }
}

struct Drawn(Bar);

impl ProgressBar for Drawn {
    fn inc(&self, n: u64) {
        self.0.inc(n);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}
