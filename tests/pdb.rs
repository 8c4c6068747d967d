//! PodDisruptionBudgets in `kivi check`: read from manifests and uniform JSON, their status
//! computed as the disruption controller computes it, honoured by the descheduler's evictions
//! under `--semantics kubernetes`, ignored (with a warning) under `kivi`, and the intent
//! `pdb_never_violated`.

use crate::support::cli::{kivi, kivi_texts};
use crate::support::scratch::{copy_tree, scratch};
use kivi::cluster::kube::{DisruptionStatus, IntOrPercent};
use serde_json::{json, Value};
use std::path::Path;

const EXAMPLE: &str = "models/pdb-blocks-descheduler";
const C5: &str = "models/c5-descheduler-duplicates";

/// `kivi check DIR --original -q ARGS…`: the exit code, stdout and stderr.
fn check(dir: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["check", dir, "--original", "-q"];
    all.extend_from_slice(args);
    kivi_texts(&all)
}

/// A copy of `model` in a scratch directory, with `intents.json` holding `intents`.
fn with_intents(model: &str, intents: Value, name: &str) -> crate::support::scratch::Scratch {
    let dir = scratch(name);
    copy_tree(Path::new(model), &dir);
    std::fs::write(dir.join("user_input/intents.json"), intents.to_string()).unwrap();
    dir
}

/// The trace's step numbers of the descheduler's evictions, one per eviction.
fn eviction_steps(report: &str) -> Vec<&str> {
    report
        .lines()
        .filter(|l| l.contains("][Descheduler]"))
        .filter_map(|l| l.split(']').next())
        .collect()
}

#[test]
fn the_example_breaks_its_budget_under_kivi_and_keeps_it_under_kubernetes() {
    let (code, stdout, stderr) = check(EXAMPLE, &["--semantics", "kivi"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Violating intent(s): pdb_never_violated"),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "PodDisruptionBudgets are honoured under --semantics kubernetes only; Kivi's \
             semantics have none"
        ),
        "{stderr}"
    );
    let (code, stdout, stderr) = check(EXAMPLE, &["--semantics", "kubernetes"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("No failure is found!"), "{stdout}");
    assert!(!stderr.contains("PodDisruptionBudget"), "{stderr}");
}

#[test]
fn the_violation_is_the_descheduler_taking_the_budget_below_four() {
    let (code, stdout, _) = kivi_texts(&["check", EXAMPLE, "--original", "--semantics", "kivi"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "[pdb_never_violated] PodDisruptionBudget app has 2 healthy pods, fewer than the 4 \
             it requires, after a voluntary disruption!"
        ),
        "{stdout}"
    );
}

#[test]
fn the_eviction_api_lets_one_pod_go_per_cycle() {
    // minAvailable 4 of 5 healthy allows one disruption: each cycle evicts one duplicate, not
    // the three C5's cycle evicts without a budget, and the loop goes on one pod at a time.
    let dir = with_intents(
        EXAMPLE,
        json!([{"name": "checkEvictionCycle", "para": {"deployment": "app"}}]),
        "pdb-loop",
    );
    let dir = dir.to_str().unwrap();
    let (code, stdout, stderr) =
        kivi_texts(&["check", dir, "--original", "--semantics", "kubernetes"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let steps = eviction_steps(&stdout);
    assert!(steps.len() >= 3, "{stdout}");
    let mut distinct = steps.clone();
    distinct.dedup();
    assert_eq!(
        distinct, steps,
        "one eviction per descheduler step: {stdout}"
    );
}

#[test]
fn kivi_semantics_verdicts_do_not_change_with_a_budget() {
    // C5 with the example's budget added: under kivi the same verdict and the same states.
    let dir = scratch("c5-with-pdb");
    copy_tree(Path::new(C5), &dir);
    std::fs::copy(
        Path::new(EXAMPLE).join("yaml/pdb.yaml"),
        dir.join("yaml/pdb.yaml"),
    )
    .unwrap();
    let summary = |text: &str| {
        text.lines()
            .filter(|l| l.contains("Violating") || l.contains("States:"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (code, plain, _) = check(C5, &["--semantics", "kivi", "--threads", "1"]);
    let (code_with, with, _) = check(
        dir.to_str().unwrap(),
        &["--semantics", "kivi", "--threads", "1"],
    );
    assert_eq!(code, Some(1));
    assert_eq!(code_with, code);
    assert_eq!(summary(&with), summary(&plain));
}

#[test]
fn status_arithmetic_follows_the_disruption_controller() {
    use IntOrPercent::{Int, Percent};
    // (minAvailable, maxUnavailable, matching pods, controllers' scale, healthy) →
    // (expectedPods, desiredHealthy, disruptionsAllowed), as getExpectedPodCount and
    // updatePdbStatus compute them.
    let cases = [
        ((Some(Int(3)), None, 4, 5, 4), (4, 3, 1)),
        ((Some(Percent(50)), None, 5, 5, 5), (5, 3, 2)),
        ((Some(Percent(25)), None, 3, 3, 3), (3, 1, 2)),
        ((Some(Percent(100)), None, 3, 3, 3), (3, 3, 0)),
        ((None, Some(Int(1)), 5, 5, 5), (5, 4, 1)),
        ((None, Some(Percent(30)), 5, 5, 5), (5, 3, 2)),
        ((None, Some(Percent(0)), 5, 5, 5), (5, 5, 0)),
        ((None, Some(Int(9)), 5, 5, 1), (5, 0, 1)),
        ((Some(Int(4)), None, 5, 5, 3), (5, 4, 0)),
        ((Some(Int(1)), None, 0, 0, 0), (0, 1, 0)),
    ];
    for ((min, max, pods, scale, healthy), expected) in cases {
        let s = DisruptionStatus::compute(min, max, pods, scale, healthy);
        assert_eq!(
            (s.expected_pods, s.desired_healthy, s.disruptions_allowed),
            expected,
            "{min:?} {max:?} pods {pods} scale {scale} healthy {healthy}"
        );
        assert_eq!(s.current_healthy, healthy);
    }
}

/// The example with `pdb.yaml` replaced by `budget`: exit 2 naming `place` and saying `what`.
fn rejects_budget(budget: &str, place: &str, what: &str) {
    let dir = scratch("bad-pdb");
    copy_tree(Path::new(EXAMPLE), &dir);
    std::fs::write(dir.join("yaml/pdb.yaml"), budget).unwrap();
    let (code, _, stderr) = check(dir.to_str().unwrap(), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(place), "{stderr} does not name {place}");
    assert!(stderr.contains(what), "{stderr} does not say {what}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

const HEAD: &str = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: app\nspec:\n  selector:\n    matchLabels:\n      name: app\n";

#[test]
fn budgets_the_api_server_refuses_are_input_errors() {
    rejects_budget(
        &format!("{HEAD}  minAvailable: 2\n  maxUnavailable: 1\n"),
        "pdb.yaml:10:",
        "spec.minAvailable and spec.maxUnavailable are both set",
    );
    rejects_budget(
        &format!("{HEAD}  minAvailable: -1\n"),
        "PodDisruptionBudget/app: spec.minAvailable is -1",
        "must be 0 or more",
    );
    rejects_budget(
        &format!("{HEAD}  maxUnavailable: \"150%\"\n"),
        "PodDisruptionBudget/app: spec.maxUnavailable `150%`",
        "percentage from 0% to 100%",
    );
    rejects_budget(
        &HEAD.replace("policy/v1", "policy/v1beta1"),
        "PodDisruptionBudget/app: apiVersion `policy/v1beta1`",
        "write `apiVersion: policy/v1`",
    );
}

#[test]
fn a_budget_selecting_no_deployment_is_warned_about_and_left_out() {
    let dir = scratch("pdb-selects-nothing");
    copy_tree(Path::new(EXAMPLE), &dir);
    let budget = HEAD.replace("      name: app\n", "      name: other\n");
    std::fs::write(
        dir.join("yaml/pdb.yaml"),
        format!("{budget}  minAvailable: 4\n"),
    )
    .unwrap();
    let (code, stdout, stderr) = check(dir.to_str().unwrap(), &["--semantics", "kivi"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("PodDisruptionBudget/app selects no pod in the input"),
        "{stderr}"
    );
}

#[test]
fn match_expressions_select_deployments_by_their_template_labels() {
    let dir = scratch("pdb-expressions");
    copy_tree(Path::new(EXAMPLE), &dir);
    std::fs::write(
        dir.join("yaml/pdb.yaml"),
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: app\nspec:\n  \
         maxUnavailable: \"20%\"\n  selector:\n    matchExpressions:\n    - {key: name, \
         operator: In, values: [app, web]}\n",
    )
    .unwrap();
    let output = kivi(&["dump", dir.to_str().unwrap(), "--original"]);
    assert_eq!(output.status.code(), Some(0));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        document["pdbs"],
        json!([{"name": "app", "deployments": [1], "maxUnavailable": "20%"}])
    );
    // 20 % of 5 rounds up to 1 unavailable: desired 4 of 5, as minAvailable 4.
    let (code, stdout, _) = check(dir.to_str().unwrap(), &["--semantics", "kivi"]);
    assert_eq!(code, Some(1), "{stdout}");
}

/// The example as uniform JSON, its `pdbs` replaced by `pdbs`.
fn uniform_with(pdbs: Value, name: &str) -> (crate::support::scratch::Scratch, String) {
    let output = kivi(&["dump", EXAMPLE, "--original"]);
    assert_eq!(output.status.code(), Some(0));
    let mut document: Value = serde_json::from_slice(&output.stdout).unwrap();
    document["pdbs"] = pdbs;
    let dir = scratch(name);
    let file = dir.join("cluster.json");
    std::fs::write(&file, document.to_string()).unwrap();
    let file = file.to_str().unwrap().to_string();
    (dir, file)
}

#[test]
fn uniform_budgets_are_checked_with_their_paths() {
    let (_dir, file) = uniform_with(
        json!([{"name": "app", "deployments": [2], "minAvailable": 1, "maxUnavailable": "10%"}]),
        "uniform-bad-pdb",
    );
    let (code, _, stderr) = kivi_texts(&["check", &file, "-q"]);
    assert_eq!(code, Some(2), "{stderr}");
    for expected in [
        "pdbs[0]",
        "minAvailable and maxUnavailable are both set",
        "pdbs[0].deployments[0]",
        "2 is not a deployment id",
    ] {
        assert!(
            stderr.contains(expected),
            "{stderr} does not say {expected}"
        );
    }
    let (_dir, file) = uniform_with(
        json!([{"name": "app", "deployments": [1], "minAvailable": "101%"}]),
        "uniform-percent",
    );
    let (code, _, stderr) = kivi_texts(&["check", &file, "-q"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("pdbs[0].minAvailable"), "{stderr}");
    // `pods` lists bare pods only, by position in setup.pods.
    let (_dir, file) = uniform_with(
        json!([{"name": "app", "pods": [1, 999], "minAvailable": 1}]),
        "uniform-pdb-pods",
    );
    let (code, _, stderr) = kivi_texts(&["check", &file, "-q"]);
    assert_eq!(code, Some(2), "{stderr}");
    for expected in [
        "pdbs[0].pods[0]: pod 1 belongs to a deployment (workloadType 1)",
        "list its deployment under deployments",
        "pdbs[0].pods[1]: 999 is not a pod id",
    ] {
        assert!(
            stderr.contains(expected),
            "{stderr} does not say {expected}"
        );
    }
}

#[test]
fn uniform_budgets_decide_as_the_manifests_do() {
    let (_dir, file) = uniform_with(
        json!([{"name": "app", "deployments": [1], "maxUnavailable": 1}]),
        "uniform-pdb",
    );
    let (code, stdout, stderr) = kivi_texts(&["check", &file, "-q"]);
    assert_eq!(
        code,
        Some(1),
        "kivi, the default for uniform JSON: {stdout}{stderr}"
    );
    let (code, stdout, stderr) = kivi_texts(&["check", &file, "-q", "--semantics", "kubernetes"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
}

#[test]
fn the_json_report_names_the_intent() {
    let output = kivi(&[
        "check",
        EXAMPLE,
        "--original",
        "--semantics",
        "kivi",
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["violatedIntents"], json!(["pdb_never_violated"]));
}
