//! What a check measured.

use super::visited::VisitedStats;
use std::time::Duration;

/// One worker's share of a check.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct WorkerStats {
    /// States this worker expanded.
    pub expanded: u64,
    /// New states this worker stored.
    pub stored: u64,
    /// Transitions this worker computed.
    pub transitions: u64,
    /// Deepest state this worker stored.
    pub max_depth: u32,
    /// States this worker expanded by an ample set alone (partial-order reduction).
    pub ample: u64,
}

impl WorkerStats {
    /// Adds `other`'s counts to these.
    pub fn absorb(&mut self, other: &WorkerStats) {
        self.expanded += other.expanded;
        self.stored += other.stored;
        self.transitions += other.transitions;
        self.max_depth = self.max_depth.max(other.max_depth);
        self.ample += other.ample;
    }
}

/// Figures of a whole check.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Statistics {
    /// Distinct states stored, initial states included.
    pub states_stored: u64,
    /// Successors computed.
    pub transitions: u64,
    /// Successors that were already stored.
    pub revisits: u64,
    /// Deepest state stored (initial states are at depth 0).
    pub max_depth: u32,
    /// States expanded by an ample set alone (partial-order reduction).
    pub ample_expansions: u64,
    /// Wall-clock time of the search.
    pub elapsed_s: f64,
    /// Stored states per second.
    pub states_per_s: f64,
    /// Workers used.
    pub threads: usize,
    /// The visited set's figures.
    pub visited: VisitedStats,
    /// Bytes of visited set per stored state.
    pub bytes_per_state: f64,
    /// Each worker's share, to show load balance.
    pub workers: Vec<WorkerStats>,
}

impl Statistics {
    /// Combines per-worker counts, the initial states and the visited set's figures.
    pub fn new(
        initial_states: u64,
        workers: Vec<WorkerStats>,
        visited: VisitedStats,
        elapsed: Duration,
    ) -> Self {
        let mut total = WorkerStats::default();
        for worker in &workers {
            total.absorb(worker);
        }
        let states_stored = initial_states + total.stored;
        let elapsed_s = elapsed.as_secs_f64();
        Self {
            states_stored,
            transitions: total.transitions,
            revisits: total.transitions - total.stored,
            max_depth: total.max_depth,
            ample_expansions: total.ample,
            elapsed_s,
            states_per_s: if elapsed_s > 0.0 {
                states_stored as f64 / elapsed_s
            } else {
                0.0
            },
            threads: workers.len(),
            bytes_per_state: visited.bytes as f64 / states_stored.max(1) as f64,
            visited,
            workers,
        }
    }

    /// A multi-line human-readable summary.
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "states stored: {}\ntransitions: {}\nrevisits: {}\nmax depth: {}\nelapsed: {:.3} s ({:.0} states/s)\nvisited set: {} bytes ({:.1} bytes/state, load {:.2}, omission probability {:.1e})\n",
            self.states_stored,
            self.transitions,
            self.revisits,
            self.max_depth,
            self.elapsed_s,
            self.states_per_s,
            self.visited.bytes,
            self.bytes_per_state,
            self.visited.load,
            self.visited.omission_probability,
        );
        let expanded: u64 = self.workers.iter().map(|w| w.expanded).sum();
        if self.ample_expansions > 0 {
            text.push_str(&format!(
                "partial-order reduction: {} of {} states expanded by an ample set\n",
                self.ample_expansions, expanded
            ));
        }
        if self.workers.len() > 1 && expanded > 0 {
            let shares: Vec<String> = self
                .workers
                .iter()
                .map(|w| format!("{:.0}%", 100.0 * w.expanded as f64 / expanded as f64))
                .collect();
            text.push_str(&format!("work per thread: {}\n", shares.join(" ")));
        }
        text
    }
}
