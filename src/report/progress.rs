//! The progress bar of a scaling sweep: topologies done out of the total, the current scale,
//! states per second and the time left. Drawn on standard error only when it is a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Instant;

/// A sweep's progress bar; does nothing when hidden.
pub struct SweepProgress {
    bar: ProgressBar,
    started: Instant,
    states: u64,
}

impl SweepProgress {
    /// A bar for `total` topologies, shown unless `quiet` or standard error is not a terminal.
    pub fn new(total: u64, quiet: bool) -> Self {
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden())
        } else {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} topologies  {msg}  ETA {eta}")
                    .expect("the template is valid"),
            );
            bar
        };
        Self {
            bar,
            started: Instant::now(),
            states: 0,
        }
    }

    /// Records a finished topology with its `states`, described as `scale`.
    pub fn finished(&mut self, scale: &str, states: u64) {
        self.states += states;
        let rate = self.states as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        self.bar
            .set_message(format!("at {scale}, {rate:.0} states/s"));
        self.bar.inc(1);
    }

    /// Removes the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
