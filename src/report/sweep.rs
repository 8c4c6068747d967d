//! The report of a scaling sweep: one row per decided topology, the minimal violating
//! topology in Kivi's words and in plain numbers, and the distribution of check times.

use super::counterexample::Verbosity;
use super::eviction_loop;
use super::single::failures_text;
use crate::engine::Verdict;
use crate::model::liveness::LoopKind;
use crate::scaler::sweep::{Finding, SweepResult, TopologyRow};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::fmt::Write;

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

/// The distribution of the check times of the topologies actually checked (not taken from
/// the journal).
pub fn check_times(result: &SweepResult) -> Option<CheckTimes> {
    // Microseconds, from 1 µs to 10^10 µs (almost three hours) at three significant figures.
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("the bounds are valid");
    for row in result.rows.iter().filter(|row| !row.from_journal) {
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

/// Why the first violating topology is only the smallest found, or nothing when it is proven
/// minimal.
fn minimality_note(result: &SweepResult) -> String {
    let mut reasons = Vec::new();
    if result.cut_short > 0 {
        reasons.push(format!(
            "{} smaller topologies were cut short ({})",
            result.cut_short,
            result
                .cut_short_because
                .as_deref()
                .unwrap_or("a bound was reached")
        ));
    }
    if result.undecided > 0 {
        reasons.push(match &result.missing_shards {
            Some(missing) => format!(
                "{} smaller topologies were not decided ({missing})",
                result.undecided
            ),
            None => format!("{} smaller topologies were not decided", result.undecided),
        });
    }
    if !reasons.is_empty() {
        format!(
            " — smallest found; not guaranteed minimal: {}",
            reasons.join(", and ")
        )
    } else if result.guaranteed_minimal {
        String::new()
    } else {
        " — not guaranteed minimal: this fast-find level skips topologies".to_string()
    }
}

/// What a sweep's journal holds and how to resume, for an interrupted sweep.
fn resume_hint(result: &SweepResult) -> Option<String> {
    if !result.interrupted {
        return None;
    }
    Some(match &result.journal {
        Some(journal) => format!(
            "{} decided topologies are recorded in {}; run the same command again to resume",
            journal.recorded,
            journal.path.display()
        ),
        None => {
            "nothing was recorded; give --journal FILE to keep the progress of a sweep".to_string()
        }
    })
}

/// The sweep's answer as Kivi's text.
pub fn to_text(result: &SweepResult, verbosity: Verbosity) -> String {
    let mut text = format!(
        "Scaling: {} topologies up to the confident size{} (semantics {}, fast-find {}, {} \
         thread(s))\n",
        result.candidates,
        result
            .shard
            .map_or(String::new(), |shard| format!(" in shard {shard}")),
        result.semantics.name(),
        result.fast_find.level(),
        result.threads
    );
    for violation in &result.violations {
        let _ = writeln!(
            text,
            "Topology {} ({}):",
            violation.row.topology,
            plain_size(&violation.row)
        );
        text.push_str(&match &violation.finding {
            Finding::Intents(outcome) => failures_text(&violation.model, outcome, verbosity),
            Finding::Loop(found) => eviction_loop::found_text(found, verbosity),
        });
    }
    let _ = writeln!(text, "Summary:");
    match result.violations.first() {
        Some(first) => {
            let _ = writeln!(text, "    {} failure(s) found!", result.violations.len());
            match &first.finding {
                Finding::Intents(outcome) => {
                    let _ = writeln!(
                        text,
                        "    Violating intent(s): {}{}",
                        outcome.violated().join(", "),
                        if result.every_intent {
                            ""
                        } else {
                            " (the first found; --all-violations reports every intent violated)"
                        }
                    );
                }
                Finding::Loop(found) => {
                    let _ = writeln!(
                        text,
                        "    {}",
                        match found.kind {
                            LoopKind::Eviction => "Eviction loop: pods are evicted and re-created forever",
                            LoopKind::UnstableReconciliation => "Violating intent(s): eventually_stable_reconciliation (after the last event and command the cluster does not stay converged)",
                            LoopKind::DrainNeverCompletes => "Violating intent(s): drain_completes (a drain never completes)",
                        }
                    );
                }
            }
            let _ = writeln!(
                text,
                "    Minimal violating topology: {} ({}){}",
                first.row.topology,
                plain_size(&first.row),
                minimality_note(result)
            );
        }
        None if result.incomplete.is_none() => {
            let _ = writeln!(text, "    {}", nothing_found(result.liveness));
        }
        None => {}
    }
    if let Some(reason) = &result.incomplete {
        let _ = writeln!(text, "    Incomplete: {reason}");
    }
    if let Some(hint) = resume_hint(result) {
        let _ = writeln!(text, "    Interrupted: {hint}");
    }
    let _ = writeln!(
        text,
        "    Topologies decided: {} up to the answer ({} checks finished, {} from the journal)",
        result.decided_up_to_minimal(),
        result.rows.len(),
        result.rows.iter().filter(|row| row.from_journal).count()
    );
    if let Some(times) = check_times(result) {
        let _ = writeln!(
            text,
            "    Check time per topology: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            times.p50_ms, times.p90_ms, times.p99_ms, times.max_ms
        );
    }
    let _ = writeln!(text, "    Elapsed time: {:.3} seconds", result.elapsed_s);
    text
}

/// The summary of a sweep that found nothing it looked for: Kivi's words for intents, the
/// lasso's kind for a liveness sweep.
pub fn nothing_found(liveness: Option<LoopKind>) -> &'static str {
    match liveness {
        None => "No failure is found!",
        Some(LoopKind::Eviction) => "No eviction loop found!",
        Some(LoopKind::UnstableReconciliation) => "No run that fails to stay converged found!",
        Some(LoopKind::DrainNeverCompletes) => "No drain that never completes found!",
    }
}

/// The sweep's answer as JSON.
pub fn to_json(result: &SweepResult) -> Value {
    let rows: Vec<Value> = result.rows.iter().map(row_json).collect();
    let violations: Vec<Value> = result
        .violations
        .iter()
        .map(|violation| {
            let mut value = row_json(&violation.row);
            value["report"] = match &violation.finding {
                Finding::Intents(outcome) => super::single::to_json(&violation.model, outcome),
                Finding::Loop(found) => eviction_loop::found_json(found),
            };
            value
        })
        .collect();
    let minimal = result.violations.first().map(|first| {
        json!({
            "kivi": first.row.topology.to_string(),
            "nodes": first.row.topology.total_nodes(),
            "replicas": first.row.topology.total_replicas(),
            "pods": first.row.pods,
            "position": first.row.position,
            "intents": match &first.finding {
                Finding::Intents(outcome) => outcome.violated(),
                Finding::Loop(found) => match found.kind {
                    LoopKind::Eviction => Vec::new(),
                    LoopKind::UnstableReconciliation | LoopKind::DrainNeverCompletes => {
                        vec![found.kind.rule().to_string()]
                    }
                },
            },
            "evictionLoop": matches!(&first.finding, Finding::Loop(found) if found.kind == LoopKind::Eviction),
            "guaranteedMinimal": result.proven_minimal(),
            "cutShortBefore": result.cut_short,
            "undecidedBefore": result.undecided,
            "missingShards": result.missing_shards,
        })
    });
    json!({
        "mode": "scaling",
        "semantics": result.semantics,
        "verdict": match result.verdict() {
            Verdict::Violation => "violation",
            Verdict::Incomplete => "incomplete",
            Verdict::NoViolation => "no_violation",
        },
        "fastFind": result.fast_find.level(),
        "threads": result.threads,
        "candidates": result.candidates,
        "shard": result.shard,
        "topologiesDecided": result.decided_up_to_minimal(),
        "checksFinished": result.rows.len(),
        "minimal": minimal,
        "incomplete": result.incomplete,
        "interrupted": result.interrupted,
        "journal": result.journal.as_ref().map(|journal| json!({
            "path": journal.path,
            "recorded": journal.recorded,
        })),
        "checkTimes": check_times(result),
        "elapsed_s": result.elapsed_s,
        "violations": violations,
        "rows": rows,
    })
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
    use crate::cluster::Semantics;
    use crate::scaler::{FastFind, JobVerdict, Topology};

    fn row(position: usize, elapsed_s: f64, from_journal: bool) -> TopologyRow {
        TopologyRow {
            topology: Topology::new(vec![1], vec![position as u64]),
            position,
            pods: 1,
            verdict: JobVerdict::NoViolation,
            states: 1,
            transitions: 0,
            elapsed_s,
            threads: 1,
            from_journal,
            incomplete: None,
        }
    }

    fn result(rows: Vec<TopologyRow>) -> SweepResult {
        SweepResult {
            semantics: Semantics::Kivi,
            fast_find: FastFind::Exhaustive,
            candidates: 3,
            shard: None,
            rows,
            violations: Vec::new(),
            guaranteed_minimal: true,
            every_intent: false,
            cut_short: 0,
            cut_short_because: None,
            undecided: 0,
            missing_shards: None,
            incomplete: None,
            interrupted: false,
            journal: None,
            liveness: None,
            warnings: Vec::new(),
            elapsed_s: 7.6,
            threads: 1,
        }
    }

    #[test]
    fn check_times_cover_slow_topologies_and_skip_journaled_ones() {
        let sweep = result(vec![
            row(1, 0.0005, false),
            row(2, 0.003, false),
            row(3, 7.5, false),
            row(4, 100.0, true),
        ]);
        let times = check_times(&sweep).expect("three rows checked");
        assert!((times.p50_ms - 3.0).abs() < 0.01, "{times:?}");
        assert!((times.max_ms - 7500.0).abs() < 10.0, "{times:?}");
        assert_eq!(sweep.verdict(), Verdict::NoViolation);
    }

    #[test]
    fn an_interrupted_sweep_says_how_to_resume() {
        let mut sweep = result(vec![row(1, 0.001, false)]);
        sweep.interrupted = true;
        sweep.incomplete = Some("interrupted (Ctrl-C) with 1 of 3 topologies decided".into());
        sweep.journal = Some(crate::scaler::sweep::JournalSummary {
            path: "j.jsonl".into(),
            recorded: 1,
        });
        let text = to_text(&sweep, Verbosity::Steps);
        assert!(text.contains("Incomplete: interrupted (Ctrl-C) with 1 of 3 topologies decided"));
        assert!(text.contains(
            "Interrupted: 1 decided topologies are recorded in j.jsonl; run the same command \
             again to resume"
        ));
        assert!(!text.contains("No failure"));
        assert_eq!(sweep.verdict(), Verdict::Incomplete);
        assert_eq!(to_json(&sweep)["verdict"], "incomplete");
    }
}
