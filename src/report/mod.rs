//! Turning outcomes into what users read: Kivi-style counterexample text, JSON reports,
//! per-topology tables with time distributions, and a progress bar for sweeps.
//!
//! - [`counterexample`]: one violation's steps, at Kivi's verbosity levels.
//! - [`single`]: the report of a single-topology check.
//! - [`sweep`]: the report of a scaling sweep.
//! - [`eviction_loop`]: the report of an eviction-loop search (`--loop`).
//! - [`snapshot`]: a cluster state as JSON.
//! - [`progress`]: the terminal progress bar.
//! - [`chart`]: SVG line charts for the benchmarks.

pub mod chart;
pub mod counterexample;
pub mod eviction_loop;
pub mod progress;
pub mod single;
pub mod snapshot;
pub mod sweep;

/// Output format of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Kivi's text: counterexample lines and a summary.
    Text,
    /// One JSON document with the same content.
    Json,
}
