//! Eventually stable reconciliation (`--intent esr`): it holds on every case's non-violation
//! variant, fails with a lasso where the descheduler and the other controllers (HPA,
//! deployment controller, scheduler) undo each other forever or a pod never fits, and a model
//! too small to hold the desired replicas gives no answer rather than a false one.

use crate::support::cli;

use cli::{json_of, kivi};
use serde_json::Value;

#[test]
fn every_non_violation_variant_converges_and_stays_converged() {
    for case in ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"] {
        let output = kivi(&[
            "check",
            "--case",
            case,
            "--non-violation",
            "--intent",
            "esr",
            "--format",
            "json",
        ]);
        assert_eq!(output.status.code(), Some(0), "{case}");
        let report = json_of(&output);
        assert_eq!(report["verdict"], "no_violation", "{case}");
        assert!(
            report["candidates"].as_u64().unwrap() > 0,
            "{case}: a sweep"
        );
    }
}

#[test]
fn the_descheduler_fighting_the_other_controllers_is_a_lasso_that_never_stays_converged() {
    let output = kivi(&[
        "check", "--case", "c8", "-o", "--intent", "esr", "--format", "json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let report = json_of(&output);
    assert_eq!(report["property"], "eventually_stable_reconciliation");
    let cycle: Vec<&str> = report["cycle"]
        .as_array()
        .expect("a cycle")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        cycle.iter().any(|line| line.contains("[Descheduler]")),
        "{cycle:?}"
    );
    assert!(
        cycle.iter().any(|line| line.contains("[Scheduler]")),
        "{cycle:?}"
    );
    let reasons = report["notConverged"].as_array().expect("reasons");
    assert!(reasons[0]
        .as_str()
        .unwrap()
        .starts_with("deployment 1: 5 of 6 desired replicas running on ready nodes"));
    let text = kivi(&[
        "check",
        "--case",
        "c8",
        "-o",
        "--intent",
        "eventually_stable_reconciliation",
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with("Eventually stable reconciliation is violated"),
        "{text}"
    );
    assert!(text.contains("Loop (repeats forever):"), "{text}");
}

#[test]
fn a_pod_no_node_fits_is_a_run_that_stops_unconverged() {
    let output = kivi(&["check", "--case", "c3", "-o", "--intent", "esr"]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("The run stops here: no controller has anything left to do."),
        "{text}"
    );
    assert!(text.contains(
        "not converged: deployment 1: 5 of 6 desired replicas running on ready nodes, 1 pending"
    ), "{text}");
}

#[test]
fn a_sweep_reports_the_smallest_topology_that_does_not_stay_converged() {
    let output = kivi(&[
        "check", "--case", "c5", "--intent", "esr", "--format", "json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let report = json_of(&output);
    assert_eq!(
        report["minimal"]["kivi"],
        "{node type 0: 1, node type 1: 1, deployment type 0: 2}"
    );
    assert_eq!(
        report["minimal"]["intents"][0],
        "eventually_stable_reconciliation"
    );
    assert_eq!(report["minimal"]["evictionLoop"], false);
    let sarif = kivi(&[
        "check", "--case", "c5", "--intent", "esr", "--format", "sarif",
    ]);
    let sarif: Value = serde_json::from_slice(&sarif.stdout).expect("SARIF");
    assert_eq!(
        sarif["runs"][0]["results"][0]["ruleId"],
        "eventually_stable_reconciliation"
    );
}

#[test]
fn too_few_pod_slots_for_the_desired_replicas_leave_the_answer_open() {
    // C7's single topology has 3 pod slots for a deployment of 15 replicas.
    let output = kivi(&[
        "check",
        "--case",
        "c7",
        "-o",
        "--non-violation",
        "--intent",
        "esr",
    ]);
    assert_eq!(output.status.code(), Some(3));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("the model has no pod slot for"), "{text}");
    assert!(
        text.contains("every one of the model's 3 pod slots is taken"),
        "{text}"
    );
    let refused = kivi(&["check", "--case", "c5", "--intent", "esr", "--loop"]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "one liveness search at a time"
    );
}

/// C8's single topology with `intents` instead of its own.
fn c8_with_intents(intents: serde_json::Value) -> String {
    let path = format!("{}/cases/c8/original.json", env!("CARGO_MANIFEST_DIR"));
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    document["intents"] = intents;
    document.to_string()
}

#[test]
fn an_input_that_lists_the_intent_is_checked_for_it_and_may_not_mix_it_with_safety_intents() {
    let listed = c8_with_intents(serde_json::json!([{"name": "eventually_stable_reconciliation"}]));
    let output = cli::kivi_with_stdin(&["check", "-", "--format", "json"], Some(&listed));
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        json_of(&output)["property"],
        "eventually_stable_reconciliation"
    );
    let mixed = c8_with_intents(serde_json::json!([
        {"name": "checkEventuallyStableReconciliation"},
        {"name": "checkEvictionCycle", "para": {"did": 1}}
    ]));
    let refused = cli::kivi_with_stdin(&["check", "-"], Some(&mixed));
    assert_eq!(refused.status.code(), Some(2));
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(
        error.contains("intents[0].name: eventually_stable_reconciliation is a liveness intent"),
        "{error}"
    );
}
