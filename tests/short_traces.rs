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

/// C4's eviction loop printed 256 lines as CNDFS found it; its shortest cycle among those
/// states and a shortest stem to it print 167. C8's: 54, then 43.
#[test]
fn eviction_loops_are_shortened() {
    assert_eq!(loop_lines("c4", &["--trace", "first"]), 256);
    assert_eq!(loop_lines("c4", &[]), 167);
    assert_eq!(loop_lines("c8", &["--trace", "first"]), 54);
    assert_eq!(loop_lines("c8", &[]), 43);
}
