//! `kivi check` end to end: verdicts, exit codes, scaling answers, journals and bad input.

use crate::support::{cli, scratch};

use cli::{json_of, kivi};
use serde_json::Value;

fn expected(case: &str) -> Value {
    let path = format!("{}/cases/{case}/expected.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("expected.json")).expect("JSON")
}

/// The paper's cases.
const SINGLE_TOPOLOGY_CASES: [&str; 8] = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"];

#[test]
fn single_topologies_violate_the_intent_kivi_reports() {
    for case in SINGLE_TOPOLOGY_CASES {
        let intent = expected(case)["original"]["violatedIntents"][0]
            .as_str()
            .expect("an intent")
            .to_string();
        for extra in [&[][..], &["--threads", "1"], &["--strategy", "bfs"]] {
            let mut args = vec!["check", "--case", case, "--original", "--format", "json"];
            args.extend_from_slice(extra);
            let output = kivi(&args);
            assert_eq!(output.status.code(), Some(1), "{case} {extra:?}");
            let report = json_of(&output);
            let violated: Vec<&str> = report["violatedIntents"]
                .as_array()
                .expect("list")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            assert!(
                violated.contains(&intent.as_str()),
                "{case} {extra:?}: {violated:?}"
            );
            let trace = report["counterexamples"][0]["kiviTrace"]
                .as_array()
                .expect("a trace");
            assert!(!trace.is_empty(), "{case}: empty counterexample");
        }
    }
}

#[test]
fn non_violation_variants_have_no_violation() {
    for case in SINGLE_TOPOLOGY_CASES {
        for extra in [&[][..], &["--threads", "1"], &["--strategy", "bfs"]] {
            let mut args = vec!["check", "--case", case, "--original", "--non-violation"];
            args.extend_from_slice(extra);
            let output = kivi(&args);
            assert_eq!(output.status.code(), Some(0), "{case} {extra:?}");
            let text = String::from_utf8_lossy(&output.stdout);
            assert!(text.contains("No failure is found!"), "{case}: {text}");
        }
    }
}

/// Kivi + SPIN's scaling results: topologies tried and the minimal violating topology.
const SCALING: [(&str, u64, &str); 8] = [
    ("c1", 3, "{node type 0: 1, deployment type 0: 3}"),
    ("c2", 2, "{node type 0: 1, deployment type 0: 2}"),
    (
        "c3",
        58,
        "{node type 0: 1, node type 1: 2, deployment type 0: 3}",
    ),
    ("c4", 5, "{node type 0: 2, deployment type 0: 5}"),
    (
        "c5",
        2,
        "{node type 0: 1, node type 1: 1, deployment type 0: 2}",
    ),
    ("c6", 2, "{node type 0: 2, deployment type 0: 2}"),
    (
        "c7",
        2,
        "{node type 0: 1, node type 1: 0, deployment type 0: 1}",
    ),
    (
        "c8",
        70,
        "{node type 0: 1, node type 1: 2, deployment type 0: 6}",
    ),
];

#[test]
fn scaling_finds_kivis_minimal_topology_with_any_thread_count() {
    for (case, tried, minimal) in SCALING {
        for threads in ["1", "2", "4"] {
            let output = kivi(&[
                "check",
                "--case",
                case,
                "--format",
                "json",
                "--threads",
                threads,
            ]);
            assert_eq!(output.status.code(), Some(1), "{case} {threads}");
            let report = json_of(&output);
            assert_eq!(report["minimal"]["kivi"], minimal, "{case} {threads}");
            assert_eq!(report["topologiesDecided"], tried, "{case} {threads}");
            assert_eq!(report["minimal"]["guaranteedMinimal"], true);
        }
    }
}

#[test]
fn gallop_reports_the_same_minimal_topology() {
    for (case, _, minimal) in SCALING {
        let output = kivi(&[
            "check",
            "--case",
            case,
            "--format",
            "json",
            "--fast-find",
            "3",
        ]);
        assert_eq!(output.status.code(), Some(1), "{case}");
        let report = json_of(&output);
        assert_eq!(report["minimal"]["kivi"], minimal, "{case}");
        assert_eq!(report["minimal"]["guaranteedMinimal"], true, "{case}");
    }
}

#[test]
fn non_violation_sweeps_check_every_topology() {
    for (case, count) in [
        ("c1", 36),
        ("c2", 36),
        ("c3", 264),
        ("c4", 20),
        ("c5", 36),
        ("c6", 20),
        ("c7", 36),
        ("c8", 264),
    ] {
        let output = kivi(&[
            "check",
            "--case",
            case,
            "--non-violation",
            "--format",
            "json",
        ]);
        assert_eq!(output.status.code(), Some(0), "{case}");
        let report = json_of(&output);
        assert_eq!(report["candidates"], count, "{case}");
        assert_eq!(report["checksFinished"], count, "{case}");
    }
}

#[test]
fn an_interrupted_sweep_resumes_from_its_journal() {
    let dir = scratch("journal");
    let journal = dir.join("c3.jsonl");
    let journal_arg = journal.to_str().expect("utf-8 path");
    let args = [
        "check",
        "--case",
        "c3",
        "--non-violation",
        "--format",
        "json",
        "--journal",
        journal_arg,
    ];
    let full = json_of(&kivi(&args));
    let lines: Vec<String> = std::fs::read_to_string(&journal)
        .expect("journal written")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 265, "a header and a line per topology");
    assert!(lines[0].starts_with(r#"{"header":{"#));
    // Interrupt: keep the header and the first hundred decisions, as if the process had been
    // killed there.
    std::fs::write(&journal, lines[..101].join("\n") + "\n").expect("truncate");
    let resumed = json_of(&kivi(&args));
    assert_eq!(resumed["verdict"], full["verdict"]);
    assert_eq!(resumed["checksFinished"], 264);
    let from_journal = resumed["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|row| row["fromJournal"] == true)
        .count();
    assert_eq!(from_journal, 100);
    assert_eq!(
        std::fs::read_to_string(&journal)
            .expect("journal")
            .lines()
            .count(),
        265,
        "the resumed run's header is the same, so it is not written again"
    );
}

#[test]
fn malformed_input_names_the_place_and_exits_2() {
    let dir = scratch("malformed");
    let file = dir.join("broken.json");
    std::fs::write(&file, "{\n  \"setup\": {\n    \"nodes\": [1, 2,\n}\n").expect("write");
    let output = kivi(&["check", file.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(2));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("broken.json:4:1"), "{message}");

    let output = kivi(&["check", "--case", "c9"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("c1 to c8"));

    let output = kivi(&["check", "--case", "c3", "--fast-find", "7"]);
    assert_eq!(output.status.code(), Some(2));

    // A directory is read as manifests: the broken file in it is named, with its place.
    let output = kivi(&["check", dir.to_str().expect("utf-8")]);
    assert_eq!(output.status.code(), Some(2));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("broken.json:4:1"), "{message}");
}

#[test]
fn a_tiny_memory_budget_exits_3_and_says_what_is_needed() {
    let output = kivi(&[
        "bench", "engine", "--vars", "6", "--max", "9", "--memory", "64K",
    ]);
    assert_eq!(output.status.code(), Some(3));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("memory budget"), "{text}");
    assert!(text.contains("--memory"), "{text}");
}

#[test]
fn bench_engine_counts_a_million_states_on_any_thread_count() {
    for threads in ["1", "2", "4"] {
        let output = kivi(&[
            "bench",
            "engine",
            "--model",
            "counters",
            "--vars",
            "6",
            "--max",
            "9",
            "--threads",
            threads,
            "--format",
            "json",
        ]);
        assert_eq!(output.status.code(), Some(0));
        let report = json_of(&output);
        assert_eq!(report["states_stored"], 1_000_000, "{threads} threads");
        assert_eq!(report["threads"], threads.parse::<u64>().unwrap());
        assert!(report["bytes_per_state"].as_f64().unwrap() <= 16.0);
    }
}

#[test]
fn loop_finds_the_eviction_oscillations_as_lassos() {
    for case in ["c5", "c8"] {
        let output = kivi(&["check", "--case", case, "--original", "--loop"]);
        assert_eq!(output.status.code(), Some(1), "{case}");
        let text = String::from_utf8_lossy(&output.stdout);
        let cycle = text
            .split("Loop (repeats forever):\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{case}: no loop part in {text}"));
        assert!(cycle.contains("pending for deletion"), "{case}: {cycle}");
        assert!(cycle.contains("Adding a new pod"), "{case}: {cycle}");

        let output = kivi(&[
            "check",
            "--case",
            case,
            "--original",
            "--loop",
            "--non-violation",
        ]);
        assert_eq!(output.status.code(), Some(0), "{case} non-violation");
    }
}

#[test]
fn a_loop_at_verbosity_4_shows_the_state_after_each_step() {
    let args = [
        "check",
        "--case",
        "c5",
        "--original",
        "--loop",
        "--threads",
        "1",
    ];
    let states = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("    state: "))
            .count()
    };
    let output = kivi(&args);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(states(&String::from_utf8_lossy(&output.stdout)), 0);

    let output = kivi(&[&args[..], &["-v", "4"][..]].concat());
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    let (path, cycle) = text
        .split_once("Loop (repeats forever):\n")
        .unwrap_or_else(|| panic!("no loop part in {text}"));
    assert!(
        path.contains("... the 14 line(s) above repeat 749 more times ..."),
        "the round's 7 lines, its 5 states and a reason's 2 lines fold: {path}"
    );
    assert_eq!(
        states(path),
        5,
        "the round's 5 steps; the shortest lasso enters its loop where a round ends: {path}"
    );
    assert_eq!(states(cycle), 5, "the loop's 5 steps: {cycle}");
    let last = cycle
        .lines()
        .rfind(|l| l.starts_with("    state: "))
        .unwrap();
    let state: Value = serde_json::from_str(&last["    state: ".len()..]).expect("JSON");
    assert_eq!(
        state["deployments"][0]["replicas"], 5,
        "the loop ends where it starts, its pod re-created: {last}"
    );
}

#[test]
fn loop_sweeps_name_the_smallest_topology_with_an_eviction_loop() {
    let output = kivi(&["check", "--case", "c5", "--loop", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report = json_of(&output);
    assert_eq!(report["mode"], "scaling");
    assert_eq!(report["minimal"]["evictionLoop"], true);
    assert_eq!(
        report["minimal"]["kivi"],
        "{node type 0: 1, node type 1: 1, deployment type 0: 2}"
    );
    let cycle = report["violations"][0]["report"]["cycle"]
        .as_array()
        .unwrap();
    assert!(cycle
        .iter()
        .any(|l| l.as_str().unwrap().contains("pending for deletion")));

    let output = kivi(&["check", "--case", "c3", "--loop"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "C3 has no eviction loop at any size"
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("    No eviction loop found!"), "{text}");
    assert!(!text.contains("No failure is found!"), "{text}");
}

#[test]
fn scale_six_sweeps_check_kivis_1644_topologies() {
    for case in ["c3", "c8"] {
        let output = kivi(&[
            "check",
            "--case",
            case,
            "--non-violation",
            "--scale",
            "6",
            "--format",
            "json",
            "--quiet",
        ]);
        assert_eq!(output.status.code(), Some(0), "{case}");
        let report = json_of(&output);
        assert_eq!(report["candidates"], 1644, "{case}");
        assert_eq!(report["checksFinished"], 1644, "{case}");
    }
}

#[test]
fn one_chosen_topology_of_a_template_is_checked_alone() {
    // C3's minimal violating topology, chosen directly.
    let output = kivi(&[
        "check",
        "--case",
        "c3",
        "--topology",
        "1,2:3",
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let report = json_of(&output);
    assert_eq!(report["violatedIntents"][0], "pod_always_schedulable");
    // A large one: 32 nodes and 224 pod slots, where one state has about 1,500 successors
    // (more than the first visited table holds). Exact count of this model.
    for threads in ["1", "2"] {
        let output = kivi(&[
            "check",
            "--case",
            "c3",
            "--non-violation",
            "--topology",
            "16,16:127",
            "--format",
            "json",
            "--threads",
            threads,
        ]);
        assert_eq!(output.status.code(), Some(0), "{threads} threads");
        let report = json_of(&output);
        assert_eq!(report["stats"]["states_stored"], 1531, "{threads} threads");
    }
    // Counts that do not fit the template's types, and a malformed argument.
    let output = kivi(&["check", "--case", "c3", "--topology", "3:6"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("give 2 comma-separated node counts"),
        "{stderr}"
    );
    let output = kivi(&["check", "--case", "c3", "--topology", "1,2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("e.g. `1,2:6`"));
}

/// A pod that fits no node is explained as kube-scheduler's FitError explains it, under the
/// counterexample and in the JSON report.
#[test]
fn an_unschedulable_pod_is_explained_in_kube_schedulers_words() {
    let reason = "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints.";
    let output = kivi(&["check", "--case", "c3", "--original"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("Pod 6 cannot be scheduled: {reason}")),
        "{stdout}"
    );
    let output = kivi(&["check", "--case", "c3", "--original", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let skew = |node: usize, key: &str, value: usize, holds: usize, min: usize| {
        serde_json::json!({
            "node": node,
            "plugin": "PodTopologySpread",
            "detail": format!(
                "topologyKey {key}: domain {key}={value} holds {holds} matching pods, +1 with \
                 this pod, the fewest in a domain is {min}: skew 2 > maxSkew 1"
            ),
        })
    };
    let nodes = [
        skew(1, "hostname", 1, 2, 1),
        skew(2, "zone", 1, 3, 2),
        skew(3, "hostname", 3, 2, 1),
    ];
    assert_eq!(
        report["counterexamples"][0]["unschedulable"],
        serde_json::json!({"pod": 6, "reason": reason, "nodes": nodes})
    );
    assert!(
        !stdout.contains("    node 1: PodTopologySpread"),
        "the per-node numbers wait for --verbose 3: {stdout}"
    );
    let output = kivi(&["check", "--case", "c3", "--original", "--verbose", "3"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for node in &nodes {
        let line = format!(
            "    node {}: PodTopologySpread: {}",
            node["node"],
            node["detail"].as_str().unwrap()
        );
        assert!(stdout.contains(&line), "{line} missing from {stdout}");
    }
}

/// The HPA's and the descheduler's steps say why, in Kubernetes' words at the default
/// verbosity and with their numbers at --verbose 3: C3's scale-up (the HPA's rescale event and
/// replica calculation), C5's RemoveDuplicates eviction and C8's topology-spread eviction.
#[test]
fn controllers_say_why_they_scaled_and_evicted() {
    let text = |case: &str, verbose: &str| {
        let output = kivi(&["check", "--case", case, "--original", "--verbose", verbose]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let c3 = text("c3", "2");
    assert!(
        c3.contains(
            "[1][HPA] Need to rescale, pod number change from 5 to 6\n    because: New size: 6; \
         reason: cpu resource utilization (percentage of request) above target\n[2]"
        ),
        "{c3}"
    );
    let c3 = text("c3", "3");
    assert!(c3.contains(
        "    numbers: cpu resource utilization (percentage of request) 102% of request (41 used \
         / 40 requested over 5 pod(s)), target 91%: ceil(5 × 41 / (40 × 91%)) = 6; bounds \
         minReplicas 5, maxReplicas 6, scale-up limit 10\n"
    ), "{c3}");
    let c5 = text("c5", "3");
    assert!(
        c5.contains(
            "[0][Descheduler] Duplicated Pod 4 (status 1) on node 3 pending for deletion!\n    \
         because: RemoveDuplicates: node 3 runs 3 pods of deployment 1, more than its share of \
         the 3 nodes that can take them\n    numbers: 5 pods of deployment 1 over 3 feasible \
         nodes: at most ceil(5 / 3) = 2 per node; node 3 holds 3 (1 + 2 duplicates), so the \
         first 1 duplicate(s) are evicted\n"
        ),
        "{c5}"
    );
    let c8 = text("c8", "3");
    assert!(c8.contains(
        "    because: RemovePodsViolatingTopologySpreadConstraint: the domains of topology key \
         hostname differ by 2 matching pods, more than maxSkew 1\n    numbers: matching pods \
         per domain [hostname=1: 3, hostname=2: 2, hostname=3: 1]: skew 3 - 1 = 2 > maxSkew 1; \
         balancing towards the average of 6 pods over 3 domains evicts 1 from hostname=1\n"
    ), "{c8}");
    assert!(
        !text("c8", "2").contains("    numbers:"),
        "numbers wait for --verbose 3"
    );
}

/// A sweep or a loop search cut short says what cut it: a listing the memory budget could not
/// hold (a scheduler step's outcomes, a scale-down's victims), not the generic list of bounds, and
/// no advice to drop a `--no-symmetry` never given (#46 row 8).
#[test]
fn an_incomplete_answer_names_what_cut_it_short() {
    let sweep = kivi(&[
        "check",
        "--case",
        "c1",
        "--non-violation",
        "--tie-break",
        "any",
        "--memory",
        "16M",
        "-q",
    ]);
    assert_eq!(sweep.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&sweep.stdout);
    // What meets the budget first depends on the order the topologies' checks run in and on
    // how their threads interleave: a scheduler step's outcomes, a scale-down's victims, a
    // state's successors, or the visited set with the listings (named with their shares and
    // the memory needed to go on).
    assert!(
        [
            "was cut short (a scheduler step under --tie-break any had more outcomes than the \
             memory budget holds",
            "was cut short (a deployment controller step under --tie-break any had more ways to \
             pick its scale-down victims",
            "was cut short (a state had more successors than the memory budget holds",
            "was cut short (memory budget of 16 MiB reached (visited set ",
        ]
        .iter()
        .any(|reason| stdout.contains(reason)),
        "{stdout}"
    );
    assert!(
        stdout.contains("give it more --memory")
            || stdout.contains("are needed to go on (--memory)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("--timeout, --memory or --depth"),
        "{stdout}"
    );
    assert!(!stdout.contains("--no-symmetry"), "{stdout}");
    let report = json_of(&kivi(&[
        "check",
        "--case",
        "c1",
        "--non-violation",
        "--tie-break",
        "any",
        "--memory",
        "16M",
        "--format",
        "json",
    ]));
    assert_eq!(report["verdict"], "incomplete");
    let reason = report["incomplete"].as_str().unwrap_or_default();
    // Which of the listing and the visited set reaches the budget first depends on how the
    // threads interleave; either way the reason names the budget.
    assert!(
        reason.contains("more outcomes than the memory budget holds")
            || reason.contains("more ways to pick its scale-down victims")
            || reason.contains("more successors than the memory budget holds")
            || reason.contains("memory budget of 16 MiB reached"),
        "{reason}"
    );

    let lasso = kivi(&[
        "check",
        "--case",
        "c1",
        "--loop",
        "--tie-break",
        "any",
        "--topology",
        "3:17",
        "--memory",
        "4M",
        "-q",
    ]);
    assert_eq!(lasso.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&lasso.stdout);
    // The two threads decide whether a scheduler step's outcomes or a scale-down's victims
    // meet the budget first; either is a listing cut short, named as such.
    assert!(
        stdout.contains("more outcomes than the memory budget holds")
            || stdout.contains("more ways to pick its scale-down victims"),
        "{stdout}"
    );
    assert!(
        stdout.contains("symmetry reduction is off (a loop search keeps states as they are)"),
        "{stdout}"
    );
    assert!(!stdout.contains("--no-symmetry"), "{stdout}");
    // The setup is the searched cluster's: without symmetry, whatever the check's would be.
    assert!(
        stdout.contains("symmetry off (a loop search keeps states as they are)"),
        "{stdout}"
    );
}

/// `--timeout` bounds a whole sweep, not each topology: C1's loop sweep under
/// `--tie-break any` has 36 topologies, 22 of which need more than 2 s each, so a limit per
/// topology ran for 46 s on one thread. With one deadline the sweep ends in about 2 s, and
/// the topologies it cut short make the answer incomplete, naming --timeout.
#[test]
fn a_sweeps_timeout_is_one_deadline_for_all_its_topologies() {
    let started = std::time::Instant::now();
    let output = kivi(&[
        "check",
        "--case",
        "c1",
        "--loop",
        "--tie-break",
        "any",
        "--threads",
        "1",
        "--timeout",
        "2",
        "--format",
        "json",
        "-q",
    ]);
    let wall = started.elapsed().as_secs_f64();
    assert_eq!(output.status.code(), Some(3), "{}", cli::stdout(&output));
    let report = json_of(&output);
    assert_eq!(report["verdict"], "incomplete");
    let reason = report["incomplete"].as_str().expect("a reason");
    assert!(
        reason.contains("time limit of 2 s reached (--timeout, shared by the sweep's topologies)"),
        "{reason}"
    );
    assert!(wall < 12.0, "a 2 s sweep ran {wall:.1} s");
}
