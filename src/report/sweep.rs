//! The report of a scaling sweep: one row per decided topology, the minimal violating
//! topology in Kivi's words and in plain numbers, and the distribution of check times.

use super::counterexample::Verbosity;
use super::single::failures_text;
use crate::engine::Outcome;
use crate::model::ClusterModel;
use crate::scaler::jobs::JobVerdict;
use crate::scaler::Topology;
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::fmt::Write;

/// One decided topology.
#[derive(Clone, Debug)]
pub struct TopologyRow {
    /// The topology.
    pub topology: Topology,
    /// Its 1-based position in Kivi's order.
    pub position: usize,
    /// Pod slots the instantiated cluster holds (the most pods it can run, HPA included).
    pub pods: u64,
    /// How its check ended.
    pub verdict: JobVerdict,
    /// States stored.
    pub states: u64,
    /// Transitions computed.
    pub transitions: u64,
    /// Check time in seconds.
    pub elapsed_s: f64,
    /// Threads the check ran on.
    pub threads: usize,
    /// Whether the verdict was taken from the journal instead of checked again.
    pub from_journal: bool,
}

/// A violating topology with the check that found its violation.
pub struct ViolatingTopology {
    /// The topology.
    pub row: TopologyRow,
    /// Its cluster model, to print the counterexample.
    pub model: ClusterModel,
    /// The check's outcome, with the replayed counterexample.
    pub outcome: Outcome<ClusterModel>,
}

/// Everything a sweep found.
pub struct SweepReport {
    /// Fast-find level used.
    pub fast_find: u8,
    /// Topologies in Kivi's order up to the confident size.
    pub candidates: usize,
    /// Decided topologies, in Kivi's order.
    pub rows: Vec<TopologyRow>,
    /// Violating topologies, smallest first (one unless `--all-violations`).
    pub violations: Vec<ViolatingTopology>,
    /// Whether the first violation is guaranteed to be Kivi's minimal one.
    pub guaranteed_minimal: bool,
    /// Whether each violating topology's check went on to report every violated intent
    /// (`--all-violations`); otherwise it stopped at the first one it met.
    pub every_intent: bool,
    /// Topologies before the first violation whose check a bound cut short: each may hide a
    /// smaller violation, so the answer is then the smallest found, not a proven minimum.
    pub cut_short: usize,
    /// Why the sweep could not decide, if it could not.
    pub incomplete: Option<String>,
    /// Wall-clock time of the sweep.
    pub elapsed_s: f64,
    /// Worker threads.
    pub threads: usize,
}

/// Percentiles of the per-topology check times, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CheckTimes {
    /// Median.
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Slowest.
    pub max_ms: f64,
}

impl SweepReport {
    /// The distribution of check times of the topologies actually checked.
    pub fn check_times(&self) -> Option<CheckTimes> {
        // Microseconds, from 1 µs to 10^10 µs (almost three hours) at three significant figures.
        let mut histogram =
            Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("the bounds are valid");
        for row in self.rows.iter().filter(|row| !row.from_journal) {
            histogram.saturating_record((row.elapsed_s * 1e6).round().max(1.0) as u64);
        }
        if histogram.is_empty() {
            return None;
        }
        let ms = |micros: u64| micros as f64 / 1000.0;
        Some(CheckTimes {
            p50_ms: ms(histogram.value_at_quantile(0.5)),
            p90_ms: ms(histogram.value_at_quantile(0.9)),
            p99_ms: ms(histogram.value_at_quantile(0.99)),
            max_ms: ms(histogram.max()),
        })
    }

    /// Topologies decided up to and including the first violating one (Kivi's "topologies
    /// tried"), or all decided ones when none violates.
    pub fn decided_up_to_minimal(&self) -> usize {
        match self.violations.first() {
            Some(first) => self
                .rows
                .iter()
                .filter(|row| row.position <= first.row.position)
                .count(),
            None => self.rows.len(),
        }
    }

    /// The process exit code: 1 violation, 3 incomplete, 0 none.
    pub fn exit_code(&self) -> i32 {
        if !self.violations.is_empty() {
            1
        } else if self.incomplete.is_some() {
            3
        } else {
            0
        }
    }

    /// The report as text.
    pub fn to_text(&self, verbosity: Verbosity) -> String {
        let mut text = format!(
            "Scaling: {} topologies up to the confident size (fast-find {}, {} thread(s))\n",
            self.candidates, self.fast_find, self.threads
        );
        for violation in &self.violations {
            let _ = writeln!(
                text,
                "Topology {} ({}):",
                violation.row.topology,
                plain_size(&violation.row)
            );
            text.push_str(&failures_text(
                &violation.model,
                &violation.outcome,
                verbosity,
            ));
        }
        let _ = writeln!(text, "Summary:");
        match self.violations.first() {
            Some(first) => {
                let _ = writeln!(text, "    {} failure(s) found!", self.violations.len());
                let _ = writeln!(
                    text,
                    "    Violating intent(s): {}{}",
                    first.outcome.violated().join(", "),
                    if !self.every_intent {
                        " (the first found; --all-violations reports every intent violated)"
                    } else {
                        ""
                    }
                );
                let note = if self.cut_short > 0 {
                    format!(
                        " — smallest found; not guaranteed minimal: {} smaller topologies were \
                         cut short by a bound (--timeout, --memory or --depth)",
                        self.cut_short
                    )
                } else if self.guaranteed_minimal {
                    String::new()
                } else {
                    " — not guaranteed minimal: this fast-find level skips topologies".to_string()
                };
                let _ = writeln!(
                    text,
                    "    Minimal violating topology: {} ({}){note}",
                    first.row.topology,
                    plain_size(&first.row),
                );
            }
            None if self.incomplete.is_none() => {
                let _ = writeln!(text, "    No failure is found!");
            }
            None => {}
        }
        if let Some(reason) = &self.incomplete {
            let _ = writeln!(text, "    Incomplete: {reason}");
        }
        let _ = writeln!(
            text,
            "    Topologies decided: {} up to the answer ({} checks finished, {} from the journal)",
            self.decided_up_to_minimal(),
            self.rows.len(),
            self.rows.iter().filter(|row| row.from_journal).count()
        );
        if let Some(times) = self.check_times() {
            let _ = writeln!(
                text,
                "    Check time per topology: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                times.p50_ms, times.p90_ms, times.p99_ms, times.max_ms
            );
        }
        let _ = writeln!(text, "    Elapsed time: {:.3} seconds", self.elapsed_s);
        text
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self.rows.iter().map(row_json).collect();
        let violations: Vec<Value> = self
            .violations
            .iter()
            .map(|violation| {
                let mut value = row_json(&violation.row);
                value["report"] = super::single::to_json(&violation.model, &violation.outcome);
                value
            })
            .collect();
        let minimal = self.violations.first().map(|first| {
            json!({
                "kivi": first.row.topology.to_string(),
                "nodes": first.row.topology.total_nodes(),
                "replicas": first.row.topology.total_replicas(),
                "pods": first.row.pods,
                "position": first.row.position,
                "intents": first.outcome.violated(),
                "guaranteedMinimal": self.guaranteed_minimal && self.cut_short == 0,
                "cutShortBefore": self.cut_short,
            })
        });
        json!({
            "mode": "scaling",
            "verdict": match self.exit_code() { 1 => "violation", 3 => "incomplete", _ => "no_violation" },
            "fastFind": self.fast_find,
            "threads": self.threads,
            "candidates": self.candidates,
            "topologiesDecided": self.decided_up_to_minimal(),
            "checksFinished": self.rows.len(),
            "minimal": minimal,
            "incomplete": self.incomplete,
            "checkTimes": self.check_times(),
            "elapsed_s": self.elapsed_s,
            "violations": violations,
            "rows": rows,
        })
    }
}

fn plain_size(row: &TopologyRow) -> String {
    format!(
        "{} nodes, {} replicas, up to {} pods",
        row.topology.total_nodes(),
        row.topology.total_replicas(),
        row.pods
    )
}

fn row_json(row: &TopologyRow) -> Value {
    json!({
        "position": row.position,
        "kivi": row.topology.to_string(),
        "nodesPerType": row.topology.nodes(),
        "replicasPerType": row.topology.replicas(),
        "nodes": row.topology.total_nodes(),
        "replicas": row.topology.total_replicas(),
        "pods": row.pods,
        "verdict": row.verdict,
        "states": row.states,
        "transitions": row.transitions,
        "elapsed_s": row.elapsed_s,
        "threads": row.threads,
        "fromJournal": row.from_journal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(position: usize, elapsed_s: f64) -> TopologyRow {
        TopologyRow {
            topology: Topology::new(vec![1], vec![position as u64]),
            position,
            pods: 1,
            verdict: JobVerdict::NoViolation,
            states: 1,
            transitions: 0,
            elapsed_s,
            threads: 1,
            from_journal: false,
        }
    }

    #[test]
    fn check_times_cover_slow_topologies() {
        let report = SweepReport {
            fast_find: 0,
            candidates: 3,
            rows: vec![row(1, 0.0005), row(2, 0.003), row(3, 7.5)],
            violations: Vec::new(),
            guaranteed_minimal: true,
            every_intent: false,
            cut_short: 0,
            incomplete: None,
            elapsed_s: 7.6,
            threads: 1,
        };
        let times = report.check_times().expect("three rows");
        assert!((times.p50_ms - 3.0).abs() < 0.01, "{times:?}");
        assert!((times.max_ms - 7500.0).abs() < 10.0, "{times:?}");
        assert_eq!(report.exit_code(), 0);
    }
}
