//! `--html FILE`: the page is self-contained, and its timeline is an SVG (parsed here as XML)
//! with one lane per node, one marked column per step that printed something, the pods where
//! the trace puts them, and the violating step outlined; loops are bracketed; a page that
//! cannot be written is a usage error found before the search.

use crate::support::{cli, scratch};

use cli::kivi;

/// The page `kivi check ARGS --html …` writes, and the exit code.
fn page(name: &str, args: &[&str]) -> (String, Option<i32>) {
    let dir = scratch(name);
    let path = dir.join("page.html");
    let path_text = path.to_str().unwrap();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-q", "--html", path_text]);
    let output = kivi(&all);
    let html = std::fs::read_to_string(&path).expect("the page is written");
    let _ = std::fs::remove_file(&path);
    (html, output.status.code())
}

/// The page's timelines, as parsed SVG documents' text.
fn charts(html: &str) -> Vec<&str> {
    html.match_indices("<svg class=\"timeline\"")
        .map(|(at, _)| {
            let end = html[at..].find("</svg>").expect("closed") + at + "</svg>".len();
            &html[at..end]
        })
        .collect()
}

/// The SVG's step columns: per column, its class and the lane (node id, 0 = no node) of each
/// pod drawn in it, in the order drawn.
fn columns(svg: &str) -> Vec<(String, Vec<(u32, u32)>)> {
    let doc = roxmltree::Document::parse(svg).expect("the timeline is well-formed SVG");
    let root = doc.root_element();
    let lanes: Vec<(u32, f64, f64)> = root
        .children()
        .filter(|n| n.attribute("data-node").is_some())
        .map(|lane| {
            let node = lane.attribute("data-node").unwrap().parse().unwrap();
            let rect = lane.children().find(|c| c.has_tag_name("rect")).unwrap();
            let y: f64 = rect.attribute("y").unwrap().parse().unwrap();
            let h: f64 = rect.attribute("height").unwrap().parse().unwrap();
            (node, y, y + h)
        })
        .collect();
    root.children()
        .filter(|n| n.attribute("data-step").is_some())
        .map(|step| {
            let pods = step
                .children()
                .filter(|n| n.attribute("data-pod").is_some())
                .map(|pod| {
                    let id = pod.attribute("data-pod").unwrap().parse().unwrap();
                    let rect = pod.children().find(|c| c.has_tag_name("rect")).unwrap();
                    let y: f64 = rect.attribute("y").unwrap().parse().unwrap();
                    let lane = lanes
                        .iter()
                        .find(|(_, top, bottom)| y >= *top && y < *bottom);
                    (id, lane.expect("every pod is in a lane").0)
                })
                .collect();
            (step.attribute("class").unwrap().to_string(), pods)
        })
        .collect()
}

#[test]
fn c3s_page_draws_the_trace_on_one_lane_per_node() {
    let (html, code) = page("c3", &["check", "--case", "c3", "--original"]);
    assert_eq!(code, Some(1));
    for outside in ["<script", "<link", "<img", "src=", "url(", "@import"] {
        assert!(
            !html.contains(outside),
            "the page loads nothing from elsewhere: {outside}"
        );
    }
    assert!(html.contains("violation: pod_always_schedulable"));
    let charts = charts(&html);
    assert_eq!(charts.len(), 1);
    let svg = charts[0];
    assert!(svg.contains(r#"data-lanes="3" data-steps="5""#), "{svg}");
    assert_eq!(
        svg.matches(r#"class="lane""#).count(),
        3,
        "one lane per node"
    );
    assert_eq!(
        svg.matches(r#"class="lane queue""#).count(),
        1,
        "and one for pods on no node"
    );
    assert_eq!(
        svg.matches(r#"<circle class="mark""#).count(),
        5,
        "one mark per step"
    );
    let columns = columns(svg);
    let classes: Vec<&str> = columns.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(classes, ["step", "step", "step", "step", "step violation"]);
    let placed = vec![(1, 1), (2, 1), (3, 2), (4, 3), (5, 3)];
    assert_eq!(columns[0].1, placed, "the initial placement");
    let mut last = placed.clone();
    last.push((6, 0));
    assert_eq!(columns[4].1, last, "pod 6 is created and fits no node");
    for expected in [
        "<title>[4][Scheduler - no_feasible_node] No feasible node!</title>",
        "[1][HPA] Need to rescale, pod number change from 5 to 6\n    because: New size: 6;",
        "Pod 6 cannot be scheduled: 0/3 nodes are available: 3 node(s) didn&#39;t match pod \
         topology spread constraints.",
        "    node 2: PodTopologySpread: topologyKey zone: domain zone=1 holds 3 matching pods",
    ] {
        assert!(html.contains(expected), "{expected} missing from {html}");
    }
}

#[test]
fn c5s_page_shows_the_evictions_and_the_terminating_pod() {
    let (html, code) = page("c5", &["check", "--case", "c5", "--original"]);
    assert_eq!(code, Some(1));
    let svg = charts(&html)[0];
    let columns = columns(svg);
    assert_eq!(columns.len(), 16);
    assert_eq!(columns.last().unwrap().0, "step violation");
    assert!(columns[..15].iter().all(|(class, _)| class == "step"));
    assert_eq!(columns[0].1, [(1, 1), (2, 2), (3, 3), (4, 3), (5, 3)]);
    assert!(
        svg.contains(r#"stroke-dasharray="2,2""#),
        "pod 4 terminating is dashed"
    );
    assert!(html.contains("because: RemoveDuplicates: node 3 runs 3 pods of deployment 1"));
}

#[test]
fn an_eviction_loop_is_bracketed_and_a_clean_check_has_no_chart() {
    let (html, code) = page(
        "c4-loop",
        &["check", "--case", "c4", "--original", "--loop"],
    );
    assert_eq!(code, Some(1));
    assert!(html.contains("Eviction loop found"));
    let svg = charts(&html)[0];
    assert!(svg.contains(r#"<g class="loop">"#) && svg.contains("repeats forever"));
    assert!(html.contains("<b>Loop (repeats forever):</b>"));
    let (html, code) = page("c3-clean", &["check", "--case", "c3", "--original", "--cn"]);
    assert_eq!(code, Some(0));
    assert!(
        html.contains(r#"<p class="verdict">no violation</p>"#),
        "{html}"
    );
    assert!(charts(&html).is_empty());
}

#[test]
fn a_loops_repeated_steps_are_folded_as_the_text_report_folds_them() {
    let args = [
        "check",
        "--case",
        "c5",
        "--original",
        "--loop",
        "--threads",
        "1",
    ];
    let (html, code) = page("c5-loop", &args);
    assert_eq!(code, Some(1));
    assert!(html.len() < 64 << 10, "a page of {} bytes", html.len());
    let svg = charts(&html)[0];
    let classes: Vec<String> = columns(svg).into_iter().map(|(class, _)| class).collect();
    assert_eq!(
        classes.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "step",
            "step",
            "step",
            "step",
            "step",
            "step",
            "step fold",
            "step",
            "step",
            "step",
            "step",
            "step"
        ],
        "the initial state, one round of 5 steps, their 749 repeats in one column, and the \
         loop's 5 steps (the shortest lasso enters its loop where a round ends)"
    );
    let note = "... the 5 step(s) above repeat 749 more times (lines [7]–[5249]) ...";
    assert!(svg.contains(&format!("<title>{note}</title>")), "{svg}");
    assert!(
        html.contains(&format!(
            "{note}\n<b>Loop (repeats forever):</b>\n[5250][Descheduler]"
        )),
        "{html}"
    );
    assert_eq!(
        html.matches("[Kubelet] Created pod 4 on node 3").count(),
        4,
        "in the first round and in the loop, each once in the chart's titles and once in the \
         trace: the 749 rounds between are folded"
    );
}

#[test]
fn a_sweep_draws_the_smallest_violating_topology() {
    let (html, code) = page("c8", &["check", "--case", "c8"]);
    assert_eq!(code, Some(1));
    let heading = "<h2>Topology {node type 0: 1, node type 1: 2, deployment type 0: 6}: \
                   no_oscillation_eviction</h2>";
    assert!(html.contains(heading), "{html}");
    assert_eq!(charts(&html).len(), 1);
}

#[test]
fn an_unwritable_page_is_a_usage_error_before_the_search() {
    let output = kivi(&[
        "check",
        "--case",
        "c3",
        "--html",
        "/nonexistent-dir/page.html",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--html /nonexistent-dir/page.html: cannot write the page"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "no search ran");
}

/// A counterexample whose replay ran out of time or memory (its steps from some point on
/// printed as the search found them, unchecked) says so, naming the bound, on the page and in
/// the SARIF result, as the text and JSON reports do.
#[test]
fn a_trace_replayed_past_the_time_limit_says_so_on_the_page_and_in_sarif() {
    use kivi::engine::{check, CheckOptions, ReplayBound, Unchecked};
    use kivi::report::{ci, html, single};

    let model = crate::support::case_model("c1", "original");
    let options = CheckOptions {
        threads: 1,
        ..CheckOptions::default()
    };
    let mut outcome = check(&model, &options).expect("the counterexample replays");
    let violation = outcome.violations.first_mut().expect("C1 is violated");
    let steps = violation.trace.steps.len();
    assert!(steps > 2, "{steps} steps");
    let page = html::single_page("c1", &model, &outcome).render();
    assert!(
        !page.contains("were not checked"),
        "a checked replay says nothing"
    );

    for (bound, named) in [
        (ReplayBound::Time, "(--timeout)"),
        (ReplayBound::Memory, "(--memory)"),
    ] {
        let unchecked = Unchecked { from: 2, bound };
        let note = single::unchecked_note(unchecked, steps);
        assert!(
            note.contains(named) && note.contains(&format!("last {} of {steps}", steps - 2)),
            "{note}"
        );
        outcome.violations[0].unchecked = Some(unchecked);
        let page = html::single_page("c1", &model, &outcome).render();
        assert!(page.contains(&format!("<b>{note}</b>")), "{page}");
        let sarif = ci::to_sarif(&single::to_json(&model, &outcome), "cases/c1/original.json");
        let message = sarif["runs"][0]["results"][0]["message"]["text"]
            .as_str()
            .expect("a result's message");
        assert!(message.ends_with(&note), "{message}");
    }
}
