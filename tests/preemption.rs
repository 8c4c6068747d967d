//! Priority and preemption under `--semantics kubernetes`: PriorityClasses read from manifests
//! (the Priority admission plugin's rules), kube-scheduler's DefaultPreemption in the scheduler
//! step (`SelectVictimsOnNode`, `pickOneNodeForPreemption`, `PodEligibleToPreemptOthers`) and
//! the intent `no_preemption_of`, on the example `models/preemption-of-critical-service` and
//! variants of it. The rules' details are unit-tested beside the code
//! (`controllers/kube_scheduler/default_preemption/tests.rs`, `model/kube_preemption_tests.rs`,
//! `input/priorities.rs`).

use crate::support::cli::{check_original, kivi_texts, stored_states};
use crate::support::scratch::{copy_tree, scratch, Scratch};
use std::path::Path;

const EXAMPLE: &str = "models/preemption-of-critical-service";
const FIXED: &str = "models/preemption-of-critical-service/fixed";

/// A copy of `model` with `files` (path under the model, contents) written over it.
fn variant(name: &str, model: &str, files: &[(&str, String)]) -> Scratch {
    let dir = scratch(name);
    copy_tree(Path::new(model), &dir);
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    dir
}

/// `model`'s file `path` with `from` replaced by `to` (which must be there).
fn edited(model: &str, path: &str, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(Path::new(model).join(path)).unwrap();
    assert!(text.contains(from), "{from} not in {model}/{path}");
    text.replace(from, to)
}

/// A copy of the example with `from` replaced by `to` in its PriorityClasses.
fn with_classes(name: &str, from: &str, to: &str) -> Scratch {
    const CLASSES: &str = "yaml/priority-classes.yaml";
    variant(
        name,
        EXAMPLE,
        &[(CLASSES, edited(EXAMPLE, CLASSES, from, to))],
    )
}

/// The intents file naming `deployment` in `no_preemption_of`.
fn no_preemption_of(deployment: &str) -> String {
    format!(r#"[{{"name": "no_preemption_of", "para": {{"deployment": "{deployment}"}}}}]"#)
}

/// A PodDisruptionBudget for `app` with `minAvailable` 1.
fn budget(app: &str) -> String {
    format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {app}\nspec:\n  \
         minAvailable: 1\n  selector:\n    matchLabels:\n      app: {app}\n"
    )
}

fn path(dir: &Scratch) -> &str {
    dir.to_str().unwrap()
}

#[test]
fn the_critical_service_without_a_class_is_the_cheapest_victim() {
    // Two 4-core nodes each left with 1 free core; ingest's third 2-core pod (priority 1000)
    // fits nowhere. payments (priority 0) on one node and reports (100) on the other are the
    // candidates' only victims: the lowest highest-victim priority picks payments.
    let (code, stdout, stderr) = check_original(EXAMPLE, &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Violating intent(s): no_preemption_of"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("Violated intent: pod_always_schedulable"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[Scheduler - preemption] Pod 5 preempts pod 2 on node 2"),
        "{stdout}"
    );
    assert!(stdout.contains("deployment 1 = payments"), "{stdout}");
}

#[test]
fn with_its_class_above_ingest_payments_is_never_preempted_and_reports_is() {
    let (code, stdout, stderr) = check_original(FIXED, &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("No failure is found!"), "{stdout}");
    // The same run now preempts reports, whose replacement fits in the core left free.
    let reports = variant(
        "preempt-reports",
        FIXED,
        &[("user_input/intents.json", no_preemption_of("reports"))],
    );
    let (code, stdout, _) = check_original(path(&reports), &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("[Scheduler - preemption] Pod "), "{stdout}");
    assert!(
        stdout.contains("Violating intent(s): no_preemption_of"),
        "{stdout}"
    );
}

#[test]
fn every_equally_good_node_is_an_outcome_under_any() {
    let (code, stdout, _) = check_original(EXAMPLE, &["--tie-break", "any"]);
    assert_eq!(code, Some(1), "{stdout}");
    let (code, stdout, _) = check_original(FIXED, &["--tie-break", "any"]);
    assert_eq!(code, Some(0), "{stdout}");
}

/// Preemption keeps symmetry on: every pick is explored, and a nominated node is renamed
/// with the nodes. On four nodes (payments 2, reports 2, ingest 6 replicas) the example and
/// its fix get the same verdicts as without the reduction, in over ten times fewer states.
#[test]
fn symmetry_stays_on_with_preemption_and_keeps_the_verdict() {
    const CONFIGS: &str = "user_input/cluster_configs.json";
    for (model, expected) in [(EXAMPLE, 1), (FIXED, 0)] {
        let mut config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(Path::new(model).join(CONFIGS)).unwrap())
                .unwrap();
        config["nodesTypes"][0]["num"] = 4.into();
        config["nodesTypes"][0]["maxSize"] = 4.into();
        for (d, replicas) in [2, 2, 6].into_iter().enumerate() {
            config["dTypes"][d]["num"] = replicas.into();
            config["dTypes"][d]["maxSize"] = replicas.into();
        }
        let name = format!("preemption-symmetry-{expected}");
        let dir = variant(&name, model, &[(CONFIGS, config.to_string())]);
        let any = ["--tie-break", "any"];
        let (code, reduced, stderr) = check_original(path(&dir), &any);
        assert_eq!(code, Some(expected), "{reduced}{stderr}");
        assert!(
            reduced.contains(
                "symmetry on (nodes in classes of 4; pods kept: more than one deployment)"
            ),
            "{reduced}"
        );
        let (code, full, stderr) =
            check_original(path(&dir), &[&any[..], &["--no-symmetry"]].concat());
        assert_eq!(code, Some(expected), "{full}{stderr}");
        assert!(
            stored_states(&reduced) * 10 < stored_states(&full),
            "{reduced}\n{full}"
        );
    }
}

#[test]
fn preemption_policy_never_preempts_nothing_and_the_pod_stays_pending() {
    let never = with_classes(
        "never",
        "value: 1000\n",
        "value: 1000\npreemptionPolicy: Never\n",
    );
    let (code, stdout, stderr) = check_original(path(&never), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Violating intent(s): pod_always_schedulable"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("Violated intent: no_preemption_of"),
        "{stdout}"
    );
    assert!(
        stdout.contains("preemption: not eligible due to preemptionPolicy=Never."),
        "{stdout}"
    );
}

#[test]
fn a_budget_moves_preemption_to_a_node_without_violations_but_does_not_forbid_it() {
    // payments' budget allows no disruption: its node's victims break a budget, reports'
    // node's do not, and the fewest violations come first (criterion 1).
    let spared = variant(
        "budget-spares-payments",
        EXAMPLE,
        &[("yaml/pdb.yaml", budget("payments"))],
    );
    let (code, stdout, stderr) = check_original(path(&spared), &[]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    // With a budget on reports too, both nodes break one: the priorities decide, and payments
    // is preempted despite its budget (preemption is not an eviction).
    let both = variant(
        "budgets-both",
        EXAMPLE,
        &[(
            "yaml/pdb.yaml",
            format!("{}---\n{}", budget("payments"), budget("reports")),
        )],
    );
    let (code, stdout, stderr) = check_original(path(&both), &[]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("Violating intent(s): no_preemption_of"),
        "{stdout}"
    );
}

#[test]
fn an_unknown_priority_class_is_an_input_error_at_its_line() {
    let typo = variant(
        "unknown-class",
        EXAMPLE,
        &[(
            "yaml/apps.yaml",
            edited(
                EXAMPLE,
                "yaml/apps.yaml",
                "priorityClassName: batch",
                "priorityClassName: batchh",
            ),
        )],
    );
    let (code, stdout, stderr) = check_original(path(&typo), &[]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    for expected in [
        "yaml/apps.yaml:",
        "Deployment/reports: spec.priorityClassName `batchh`: no PriorityClass with that name",
        "add a PriorityClass (apiVersion scheduling.k8s.io/v1) named `batchh`, or fix the name",
    ] {
        assert!(stderr.contains(expected), "{expected} not in {stderr}");
    }
}

#[test]
fn a_priority_written_in_the_pod_or_a_class_value_out_of_range_is_refused() {
    let written = variant(
        "written-priority",
        EXAMPLE,
        &[(
            "yaml/apps.yaml",
            edited(
                EXAMPLE,
                "yaml/apps.yaml",
                "priorityClassName: batch",
                "priorityClassName: batch\n      priority: 5",
            ),
        )],
    );
    let (code, _, stderr) = check_original(path(&written), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("spec.priority 5: the Priority admission plugin sets it"));
    let above = with_classes(
        "class-above-user-range",
        "value: 10000\n",
        "value: 1000000001\n",
    );
    let (code, _, stderr) = check_original(path(&above), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("only the system classes"), "{stderr}");
}

#[test]
fn kivi_semantics_refuses_priorities_with_exit_2() {
    let (code, stdout, stderr) = check_original(EXAMPLE, &["--semantics", "kivi"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("modelled under --semantics kubernetes only"),
        "{stderr}"
    );
}

/// A live-cluster dump (`kubectl get … -o json` files) whose `checkout` Deployment names
/// PriorityClass `shop-high` and whose pods were admitted with priority 1000 and
/// `preemptionPolicy: Never`, as `models/live-cluster-dump` with those fields written in.
fn dump_with_priorities(name: &str, pods: bool) -> Scratch {
    const DUMP: &str = "models/live-cluster-dump";
    let read = |path: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(Path::new(DUMP).join(path)).unwrap()).unwrap()
    };
    let mut deployments = read("setup/shop-getdeployment.json");
    let checkout = deployments["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|d| d["metadata"]["name"] == "checkout")
        .expect("the checkout Deployment");
    checkout["spec"]["template"]["spec"]["priorityClassName"] = "shop-high".into();
    let mut list = read("setup/shop-getpod.json");
    let items = list["items"].as_array_mut().unwrap();
    items.retain(|pod| pods || pod["metadata"]["namespace"] != "shop");
    for pod in items
        .iter_mut()
        .filter(|p| p["metadata"]["namespace"] == "shop")
    {
        pod["spec"]["priorityClassName"] = "shop-high".into();
        pod["spec"]["priority"] = 1000.into();
        pod["spec"]["preemptionPolicy"] = "Never".into();
    }
    variant(
        name,
        DUMP,
        &[
            ("setup/shop-getdeployment.json", deployments.to_string()),
            ("setup/shop-getpod.json", list.to_string()),
        ],
    )
}

/// The uniform document `kivi dump` makes of `dir`'s files: the exit code, the first pod
/// template's priority and preemption policy, and stderr.
fn dumped_priority(dir: &Path) -> (Option<i32>, serde_json::Value, serde_json::Value, String) {
    let (code, stdout, stderr) = kivi_texts(&["dump", dir.to_str().unwrap()]);
    let document: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_default();
    let template = &document["setup"]["podTemplates"][0];
    (
        code,
        template["priority"].clone(),
        template["preemptionPolicy"].clone(),
        stderr,
    )
}

/// Without the cluster's PriorityClasses, a dump's Deployment has the priority its pods were
/// admitted with (it was 0, whatever the class); with them, the class's value, and a warning
/// where the running pods differ; naming a class the dump shows nowhere is an input error.
#[test]
fn a_live_dump_takes_priorities_from_its_pods_or_its_priority_classes() {
    let admitted = dump_with_priorities("dump-admitted", true);
    let (code, priority, policy, stderr) = dumped_priority(&admitted);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!((priority, policy), (1000.into(), "Never".into()));

    let classes = r#"{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion":
        "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "shop-high"},
        "value": 500, "preemptionPolicy": "Never"}]}"#;
    std::fs::write(admitted.join("setup/shop-getpriorityclass.json"), classes).unwrap();
    let (code, priority, _, stderr) = dumped_priority(&admitted);
    assert_eq!((code, priority), (Some(0), 500.into()), "{stderr}");
    assert!(
        stderr.contains("Deployment/checkout: its running pods have priority 1000, its PriorityClass gives new pods 500"),
        "{stderr}"
    );

    let unknown = dump_with_priorities("dump-no-pods", false);
    let (code, _, _, stderr) = dumped_priority(&unknown);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("Deployment/checkout: spec.template names PriorityClass `shop-high`")
            && stderr.contains("getpriorityclass.json"),
        "{stderr}"
    );
}

/// `kivi check tests/data/preemption/<name>.json --semantics kubernetes -a` under
/// `--tie-break tie_break`: the exit code, the violated intents' line and the states stored.
fn check_preemption_case(name: &str, tie_break: &str) -> (Option<i32>, String, u64) {
    let file = format!("tests/data/preemption/{name}.json");
    let args = ["--semantics", "kubernetes", "-a", "--tie-break", tie_break];
    let (code, stdout, stderr) = check_original(&file, &args);
    let violating = stdout
        .lines()
        .find(|l| l.contains("Violating intent(s):"))
        .map_or(String::new(), |l| l.trim().to_string());
    assert!(stderr.is_empty(), "{stderr}");
    (code, violating, stored_states(&stdout))
}

/// Node 1 has 1 core free (a 3-core pod of priority 1000), node 2 none (a bare 2-core pod of
/// priority 0 and `protected`'s 2-core pod of priority 100). Pod 4 (2 cores, priority 1000)
/// preempts the bare pod on node 2; pod 5 (1 core, priority 1000) is queued before it once
/// the victim is gone. Without nominated pods in the filters, pod 5 scored node 2's freed
/// room higher and took it, and pod 4 then preempted `protected`: a violation of
/// `no_preemption_of` that kube-scheduler never makes (24 states). With them
/// (`addGENominatedPods`), node 2 is full for pod 5, which goes to node 1, and pod 4 to node 2.
#[test]
fn an_equal_priority_pod_queued_first_does_not_take_the_room_a_preemption_freed() {
    for tie_break in ["lowest", "any"] {
        let (code, violating, states) =
            check_preemption_case("equal-priority-takes-room", tie_break);
        assert_eq!((code, violating, states), (Some(0), String::new(), 20));
    }
}

/// Node 1 holds a pod of priority 1000 that its deployment (scaled to 0) deletes, node 2 a
/// bare pod of priority 0; both are otherwise full. Pod 5 (2 cores, priority 1000) preempts
/// on node 2 and is nominated there; once both pods are gone the nodes score alike, and pod
/// 5 goes to its nominated node (`evaluateNominatedNode`), not to either: under `any` the
/// outcome on node 1 is gone (28 states before, 24 now, as under `lowest`, which took node 1
/// and stored 26).
#[test]
fn the_nominated_node_is_taken_over_an_equally_scored_one() {
    for tie_break in ["lowest", "any"] {
        let (code, violating, states) = check_preemption_case("nominated-node-or-equal", tie_break);
        assert_eq!(
            (code, violating, states),
            (Some(0), String::new(), 24),
            "{tie_break}"
        );
    }
}

/// Two full nodes, each with a 2-core pod of priority 0 beside one of priority 1000, and pods
/// 5 and 6 (2 cores, priority 1000) pending. Pod 5 preempts on node 1 and is nominated there.
/// Pod 6 used to wait for pod 5's victim (some node where preemption would help held a
/// terminating pod of lower priority) and preempted on node 2 only once pod 5 was bound; now
/// it is nominated nowhere, so node 1's terminating pod does not hold it back, and node 1,
/// with pod 5 added, is no candidate: it preempts on node 2 at once
/// (`PodEligibleToPreemptOthers` reads the nominated node only). 24 states before, 20 now (45
/// and 39 under `any` without symmetry; 37 with it, which merges the two nodes' renamings).
#[test]
fn a_pod_does_not_wait_for_pods_terminating_on_a_node_it_is_not_nominated_to() {
    for (tie_break, expected) in [("lowest", 20), ("any", 37)] {
        let (code, violating, states) = check_preemption_case("two-preemptors", tie_break);
        assert_eq!(
            (code, violating, states),
            (Some(0), String::new(), expected),
            "{tie_break}"
        );
    }
    let (code, trace, stderr) = kivi_texts(&[
        "simulate",
        "tests/data/preemption/two-preemptors.json",
        "--semantics",
        "kubernetes",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        trace.contains("[0][Scheduler - preemption] Pod 5 preempts pod 1 on node 1")
            && trace.contains("[1][Scheduler - preemption] Pod 6 preempts pod 3 on node 2"),
        "{trace}"
    );
    assert!(!trace.contains("waits for"), "{trace}");
}
