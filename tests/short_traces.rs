//! Counterexamples are shortest by default (#49): whatever the strategy and thread count, a
//! case's trace is as long as breadth-first search's; `--trace first` keeps the trace as found;
//! eviction loops are shortened.

use crate::support::cli;

use cli::{json_of, kivi};
use serde_json::Value;

const CASES: [&str; 8] = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"];

/// The JSON report of `kivi check --case CASE --original EXTRA…`, which must be a violation.
fn report(case: &str, extra: &[&str]) -> Value {
    let mut args = vec!["check", "--case", case, "--original", "--format", "json"];
    args.extend_from_slice(extra);
    let output = kivi(&args);
    assert_eq!(output.status.code(), Some(1), "{case} {extra:?}");
    json_of(&output)
}

/// Each counterexample's intent, printed lines and whether it is marked shortest, by intent
/// (strategies meet the intents in different orders).
fn traces(report: &Value) -> Vec<(String, usize, bool)> {
    let counterexamples = report["counterexamples"].as_array().expect("a list");
    let mut traces: Vec<_> = counterexamples
        .iter()
        .map(|c| {
            let lines = c["kiviTrace"].as_array().expect("a trace").len();
            let shortest = c["shortest"].as_bool().expect("says whether shortest");
            (
                c["intent"].as_str().expect("intent").to_string(),
                lines,
                shortest,
            )
        })
        .collect();
    traces.sort();
    traces
}

/// The lines of every counterexample together, and whether all are marked shortest.
fn total(traces: &[(String, usize, bool)]) -> (usize, bool) {
    let lines = traces.iter().map(|(_, lines, _)| lines).sum();
    (lines, traces.iter().all(|(_, _, shortest)| *shortest))
}

#[test]
fn every_strategy_prints_the_breadth_first_trace_length() {
    for case in CASES {
        let bfs = traces(&report(case, &["--strategy", "bfs"]));
        assert!(bfs.iter().all(|(_, _, shortest)| *shortest), "{case}");
        for extra in [
            &[][..],
            &["--threads", "1"],
            &["--threads", "3"],
            &["--strategy", "swarm", "--seed", "3"],
        ] {
            assert_eq!(traces(&report(case, extra)), bfs, "{case} {extra:?}");
        }
    }
}

/// C4's and C7's depth-first traces were longer than breadth-first ones (101 and 44 lines
/// over their violated intents against 77 and 26); `--trace first` still prints them as
/// found.
#[test]
fn trace_first_keeps_the_depth_first_length() {
    for (case, first, shortest) in [("c4", 101, 77), ("c7", 44, 26), ("c2", 14, 14)] {
        let as_found = traces(&report(case, &["--threads", "1", "--trace", "first"]));
        assert_eq!(
            total(&as_found),
            (first, false),
            "{case}: not claimed shortest"
        );
        let short = traces(&report(case, &["--threads", "1"]));
        assert_eq!(total(&short), (shortest, true), "{case}");
    }
}

/// The lines `kivi check --case CASE --original --loop --threads 1 EXTRA…` prints.
fn loop_lines(case: &str, extra: &[&str]) -> usize {
    let mut args = vec![
        "check",
        "--case",
        case,
        "--original",
        "--loop",
        "--threads",
        "1",
    ];
    args.extend_from_slice(extra);
    let output = kivi(&args);
    assert_eq!(output.status.code(), Some(1), "{case}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("Loop (repeats forever):"), "{text}");
    text.lines().count()
}

/// C4's eviction loop printed 256 lines as CNDFS found it, and 167 when only its own cycle's
/// states were searched for a shorter cycle; a shortest lasso of the whole cluster (node 1
/// panics three times, its counter stops at three, and the last round repeats) prints 63, 57
/// of them lines of steps. C8's: 54 as found; its shortest lasso is two steps shorter than the
/// 43 lines printed before, but its stem stops part-way into the round it repeats 745 times,
/// which folding leaves unfolded: 49.
#[test]
fn eviction_loops_are_shortened() {
    assert_eq!(loop_lines("c4", &["--trace", "first"]), 256);
    assert_eq!(loop_lines("c4", &[]), 63);
    assert_eq!(loop_lines("c8", &["--trace", "first"]), 54);
    assert_eq!(loop_lines("c8", &[]), 49);
}

/// The JSON report of `kivi check --case CASE --original EXTRA…` with `--loop` or an
/// `--intent`: a loop, replayed (the search checks every lasso it prints).
fn loop_report(case: &str, extra: &[&str]) -> Value {
    let mut args = vec!["check", "--case", case, "--original", "--format", "json"];
    args.extend_from_slice(extra);
    let output = kivi(&args);
    assert_eq!(output.status.code(), Some(1), "{case} {extra:?}");
    json_of(&output)
}

/// The steps of a loop report's path and cycle (a step's first line starts with `[`).
fn loop_steps(report: &Value) -> (usize, usize) {
    let steps = |lines: &Value| {
        let lines = lines.as_array().expect("lines");
        lines
            .iter()
            .filter(|l| l.as_str().is_some_and(|l| l.starts_with('[')))
            .count()
    };
    (steps(&report["prefix"]), steps(&report["cycle"]))
}

/// C4's shortest eviction loop, on one worker and on four: 45 lines of path and 12 of
/// cycle, marked shortest; the loop as found is not.
#[test]
fn c4_loop_is_a_shortest_lasso_of_the_cluster() {
    for threads in ["1", "4"] {
        let report = loop_report("c4", &["--loop", "--threads", threads]);
        assert_eq!(loop_steps(&report), (45, 12), "{threads} threads");
        assert_eq!(report["shortest"], true);
    }
    let first = loop_report("c4", &["--loop", "--threads", "1", "--trace", "first"]);
    assert_eq!(first["shortest"], false);
    assert!(loop_steps(&first).0 + loop_steps(&first).1 > 57);
}

/// `--intent esr` shortens its lasso the same way: C4's run that never stays converged
/// printed 92 lines, now 41.
#[test]
fn unstable_reconciliation_loops_are_shortened() {
    let lines = |extra: &[&str]| {
        let mut args = vec!["check", "--case", "c4", "--original", "--intent", "esr"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--threads", "1", "-q"]);
        let output = kivi(&args);
        assert_eq!(output.status.code(), Some(1));
        String::from_utf8_lossy(&output.stdout).lines().count()
    };
    assert_eq!(lines(&[]), 41);
    assert!(lines(&["--trace", "first"]) > 41);
}
