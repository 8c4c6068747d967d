//! Every example in models/ gives its expected verdict, and the descheduler examples build the
//! same `controllers.descheduler` as the hand-written cases.

use crate::support::cli;

use cli::kivi;
use serde_json::{json, Value};

/// `kivi check MODEL --original` exits 1 and reports `intent` violated.
fn violates(model: &str, intent: &str) {
    let output = kivi(&["check", model, "--original", "-q"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("Violating intent(s): {intent}")),
        "{stdout}"
    );
}

fn dumped(model: &str) -> Value {
    let output = kivi(&["dump", model, "--original"]);
    assert_eq!(output.status.code(), Some(0));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn c1_hpa_oscillates() {
    violates("models/c1-hpa-oscillation", "no_oscillation_replica_num");
}

#[test]
fn c1_load_pattern_is_in_whole_cores() {
    let document = dumped("models/c1-hpa-oscillation");
    let template = &document["setup"]["podTemplates"][0];
    assert_eq!(template["cpuRequested"], 8);
    assert_eq!(template["curCpuRequest"], json!([8, 3]));
    assert_eq!(template["timeCpuRequest"], json!([0, 300]));
    assert_eq!(document["setup"]["nodes"][0]["cpu"], 64);
}

#[test]
fn c2_apply_without_replicas_goes_below_the_minimum() {
    violates(
        "models/c2-apply-without-replicas",
        "replica_num_always_meet_min",
    );
    let document = dumped("models/c2-apply-without-replicas");
    assert_eq!(
        document["setup"]["deploymentTemplates"][0]["specReplicas"],
        1
    );
    assert_eq!(
        document["userCommand"][1],
        json!({"name": "applyDeployment", "para": 1, "after_stable": true})
    );
}

#[test]
fn c3_spread_blocks_the_scale_up() {
    violates("models/c3-spread-hpa", "pod_always_schedulable");
    let output = kivi(&["check", "models/c3-spread-hpa", "-q"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stdout).contains(
        "Minimal violating topology: {node type 0: 1, node type 1: 2, deployment type 0: 3}"
    ));
}

/// The hand-written case's descheduler controller.
fn case_descheduler(case: &str) -> Value {
    let path = format!("{}/cases/{case}/original.json", env!("CARGO_MANIFEST_DIR"));
    let case: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    case["controllers"]["descheduler"].clone()
}

#[test]
fn c5_and_c8_build_the_cases_descheduler() {
    let c5 = dumped("models/c5-descheduler-duplicates");
    assert_eq!(
        c5["controllers"]["descheduler"]["profiles"],
        case_descheduler("c5")["profiles"]
    );
    let c8 = dumped("models/c8-spot-spread-descheduler");
    let expected = case_descheduler("c8");
    let built = &c8["controllers"]["descheduler"];
    assert_eq!(built["profiles"], expected["profiles"]);
    assert_eq!(
        built["args"]["constraintsTopologySpread"],
        expected["args"]["constraintsTopologySpread"]
    );
    let rules = &c8["setup"]["podTemplates"][0]["affinityRules"];
    assert_eq!(
        rules,
        &json!([
            {"isRequired": 0, "weight": 4, "labels": {"lifecycle": "spot"}},
            {"isRequired": 0, "weight": 5, "labels": {"lifecycle": "on-demand"}},
        ])
    );
}

#[test]
fn c5_descheduler_evicts_in_a_cycle() {
    violates(
        "models/c5-descheduler-duplicates",
        "no_oscillation_eviction",
    );
}

#[test]
fn c8_descheduler_fights_the_scheduler() {
    violates(
        "models/c8-spot-spread-descheduler",
        "no_oscillation_eviction",
    );
}

/// `kivi check models/spread-after-node-failure --semantics SEMANTICS`.
fn spread_after_node_failure(semantics: &str) -> std::process::Output {
    kivi(&[
        "check",
        "models/spread-after-node-failure",
        "--semantics",
        semantics,
        "--threads",
        "1",
    ])
}

#[test]
fn spread_after_node_failure_leaves_the_replacement_pending_under_kubernetes() {
    let output = spread_after_node_failure("kubernetes");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("Violating intent(s): pod_always_schedulable"));
    for line in [
        "[0][nodeFailure] Node 1 failed",
        "[2][taintEviction] The 300 s the pods on node 1 tolerate its unreachable taint have \
         passed: pod 1 is deleted",
        "[7][Scheduler - no_feasible_node] Pod 1's spread over kubernetes.io/hostname \
         (maxSkew 1), matching pods per domain: node 1, not ready: 0, node 2: 1, node 3: 1",
    ] {
        assert!(stdout.contains(line), "{line}\n{stdout}");
    }
}

#[test]
fn spread_after_node_failure_places_the_replacement_under_kivi() {
    let output = spread_after_node_failure("kivi");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("No failure is found!"), "{stdout}");
}

#[test]
fn drain_blocked_by_pdb_never_completes_and_its_fix_does() {
    let blocked = kivi(&["check", "models/drain-blocked-by-pdb", "--original", "-q"]);
    assert_eq!(blocked.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&blocked.stdout).contains("drain_completes is violated"));
    let fixed = kivi(&[
        "check",
        "models/drain-blocked-by-pdb/fixed",
        "--original",
        "-q",
    ]);
    assert_eq!(fixed.status.code(), Some(0));
}

#[test]
fn daemonset_starves_app_fails_and_its_fix_holds() {
    violates("models/daemonset-starves-app", "pod_always_schedulable");
    let fixed = kivi(&[
        "check",
        "models/daemonset-starves-app/fixed",
        "--original",
        "-q",
    ]);
    assert_eq!(fixed.status.code(), Some(0));
}

#[test]
fn preemption_of_critical_service_is_preempted_and_its_fix_is_not() {
    violates("models/preemption-of-critical-service", "no_preemption_of");
    let fixed = kivi(&[
        "check",
        "models/preemption-of-critical-service/fixed",
        "--original",
        "-q",
    ]);
    assert_eq!(fixed.status.code(), Some(0));
}

#[test]
fn autoscaler_zone_spread_strands_a_replica_and_a_group_per_zone_does_not() {
    violates("models/autoscaler-zone-spread", "pod_always_schedulable");
    let fixed = kivi(&[
        "check",
        "models/autoscaler-zone-spread/fixed",
        "--original",
        "-q",
    ]);
    assert_eq!(fixed.status.code(), Some(0));
}

#[test]
fn low_utilization_evicts_in_a_cycle_under_kubernetes() {
    violates("models/low-utilization-loop", "no_oscillation_eviction");
}

/// Every example that holds under `--semantics kubernetes` stores the same states whatever
/// the search: a complete search reaches the same graph, so a count that moves with the
/// strategy or the threads means a successor depends on more than its state (a worker's
/// cache reused where it no longer fits, as the kube-scheduler node table once was after the
/// autoscaler had replaced a node).
#[test]
fn examples_that_hold_store_the_same_states_under_every_search() {
    let examples = [
        ("models/autoscaler-zone-spread/fixed", 185),
        ("models/daemonset-starves-app/fixed", 22),
        ("models/drain-blocked-by-pdb/fixed", 19),
        ("models/pdb-blocks-descheduler", 3_775),
        ("models/preemption-of-critical-service/fixed", 634),
        ("models/zone-upgrade-blocked/fixed", 1_922),
    ];
    let searches: [&[&str]; 3] = [
        &["--strategy", "dfs", "--threads", "1"],
        &["--strategy", "bfs", "--threads", "2"],
        &["--strategy", "dfs", "--threads", "2"],
    ];
    for (model, states) in examples {
        for search in searches {
            let mut args = vec!["check", model, "--original", "--semantics", "kubernetes"];
            args.extend_from_slice(search);
            let (code, stdout, stderr) = cli::kivi_texts(&args);
            assert_eq!(code, Some(0), "{model} {search:?}: {stdout}{stderr}");
            assert_eq!(
                cli::stored_states(&stdout),
                states,
                "{model} {search:?}: {stdout}"
            );
        }
    }
}
