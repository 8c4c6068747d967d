//! Turning outcomes into what users read: Kivi-style counterexample text, JSON reports,
//! per-topology tables with time distributions, and a progress bar for sweeps.
//!
//! - [`counterexample`]: one violation's steps, at Kivi's verbosity levels.
//! - [`single`]: the report of a single-topology check.
//! - [`sweep`]: the report of a scaling sweep.
//! - [`eviction_loop`]: the report of an eviction-loop search (`--loop`).
//! - [`diff`]: `kivi diff`: the intents a configuration change breaks, fixes or keeps.
//! - [`html`]: a self-contained HTML page with each counterexample as a timeline.
//! - [`ci`]: SARIF and JUnit XML for CI systems, built from the JSON reports.
//! - [`deschedule`]: `kivi deschedule`: one descheduling cycle, plugin by plugin.
//! - [`schedule`]: `kivi schedule`: kube-scheduler's decision for a pending pod, explained.
//! - [`snapshot`]: a cluster state as JSON.
//! - [`progress`]: the terminal progress bar.
//! - [`chart`]: SVG line charts for the benchmarks.

pub mod chart;
pub mod ci;
pub mod counterexample;
pub mod deschedule;
pub mod diff;
pub mod eviction_loop;
pub mod html;
pub mod progress;
pub mod schedule;
pub mod single;
pub mod snapshot;
pub mod sweep;

/// `text` with the characters special to XML and HTML escaped, for element text and attribute
/// values alike (`'` as `&#39;`, which both read).
fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Output format of `kivi check`: Kivi's text, kivi's JSON, or a CI format built from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// Kivi's text: counterexample lines and a summary.
    Text,
    /// One JSON document with the same content.
    Json,
    /// SARIF 2.1.0, for code scanning (a result per violated intent, the trace as a code flow).
    Sarif,
    /// JUnit XML, for test reports (a test case per intent, or per topology in a sweep).
    Junit,
}

/// Output format of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Kivi's text: counterexample lines and a summary.
    Text,
    /// One JSON document with the same content.
    Json,
}
