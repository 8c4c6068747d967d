//! The point of no return (#49 item 3): a safety counterexample marks the first step after
//! which every run fails, in text (`<- from here on, every run fails`), JSON
//! (`unavoidable_from`) and the HTML timeline; `--trace first` adds nothing.

use crate::support::cli::{json_of, kivi};
use crate::support::scratch;

/// Each counterexample's intent, steps and point of no return, by intent, for `kivi check
/// --case CASE --original -a EXTRA…`.
fn points(case: &str, extra: &[&str]) -> Vec<(String, usize, Option<u64>)> {
    let mut args = vec![
        "check",
        "--case",
        case,
        "--original",
        "-a",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let output = kivi(&args);
    assert_eq!(output.status.code(), Some(1), "{case} {extra:?}");
    let report = json_of(&output);
    let mut points: Vec<_> = report["counterexamples"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| {
            (
                c["intent"].as_str().expect("an intent").to_string(),
                c["steps"].as_array().expect("steps").len(),
                c["unavoidable_from"].as_u64(),
            )
        })
        .collect();
    points.sort();
    points
}

/// An intent, its counterexample's steps and its point of no return.
type Point<'a> = (&'a str, usize, Option<u64>);

#[test]
fn every_case_marks_where_its_failure_became_unavoidable() {
    // Kivi's scenarios script their events, so most fail whatever the controllers do; C4's
    // kernel panic becomes unavoidable after 13 of its 16 steps, and its unschedulable pod only
    // with the failing step itself.
    let expected: [(&str, &[Point]); 8] = [
        ("c1", &[("no_oscillation_replica_num", 29, Some(0))]),
        ("c2", &[("replica_num_always_meet_min", 9, Some(0))]),
        ("c3", &[("pod_always_schedulable", 6, Some(0))]),
        (
            "c4",
            &[
                ("no_kernel_panic", 16, Some(13)),
                ("pod_always_schedulable", 8, Some(8)),
            ],
        ),
        ("c5", &[("no_oscillation_eviction", 15, Some(0))]),
        ("c6", &[("replica_num_always_meet_exp", 13, Some(0))]),
        ("c7", &[("no_oscillation_eviction", 11, Some(0))]),
        ("c8", &[("no_oscillation_eviction", 16, Some(0))]),
    ];
    for (case, want) in expected {
        let want: Vec<_> = want
            .iter()
            .map(|(intent, steps, point)| (intent.to_string(), *steps, *point))
            .collect();
        for extra in [&[][..], &["--strategy", "bfs"], &["--threads", "1"]] {
            assert_eq!(points(case, extra), want, "{case} {extra:?}");
        }
    }
}

#[test]
fn trace_first_adds_no_point() {
    let points = points("c4", &["--trace", "first"]);
    assert!(
        points.iter().all(|(_, _, point)| point.is_none()),
        "{points:?}"
    );
}

#[test]
fn the_text_marks_the_step_and_the_start() {
    let output = kivi(&["check", "--case", "c4", "--original", "-a"]);
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let marks: Vec<usize> = (0..lines.len())
        .filter(|&at| lines[at] == "<- from here on, every run fails")
        .collect();
    assert_eq!(
        marks.len(),
        1,
        "only the kernel panic's trace is marked:\n{text}"
    );
    let before = lines[..marks[0]]
        .iter()
        .rev()
        .find(|line| line.starts_with('['))
        .expect("a step before the mark");
    assert_eq!(*before, "[36] node 1 kernel panic recovered", "{text}");
    let output = kivi(&["check", "--case", "c3", "--original"]);
    let text = String::from_utf8_lossy(&output.stdout);
    let counterexample: Vec<&str> = text
        .lines()
        .skip_while(|line| *line != "Counterexample:")
        .collect();
    assert_eq!(
        counterexample.get(1),
        Some(&"[init] <- from here on, every run fails"),
        "{text}"
    );
}

#[test]
fn the_html_timeline_draws_the_point() {
    let dir = scratch("no-return-html");
    let page = dir.join("c4.html");
    let page_arg = page.to_str().expect("a UTF-8 path");
    let output = kivi(&[
        "check",
        "--case",
        "c4",
        "--original",
        "-a",
        "--html",
        page_arg,
    ]);
    assert_eq!(output.status.code(), Some(1));
    let html = std::fs::read_to_string(&page).expect("the page");
    assert_eq!(html.matches(r#"<g class="no-return""#).count(), 1, "{html}");
}
