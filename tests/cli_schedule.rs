//! `kivi schedule`: kube-scheduler's decision for the pending pods of a List, as text that says
//! why a pod is Pending and as the JSON the conformance vectors hold, from a file or standard
//! input; its exit codes (0 placed, 1 a pod fits nowhere, 2 bad input).

use crate::support::cli;

use cli::{json_of, kivi, kivi_with_stdin, stdout};
use flate2::read::GzDecoder;
use serde_json::{json, Value};
use std::io::Read;

const CLUSTER: &str = "tests/data/kube-scheduler/cli/cluster.yaml";

fn cluster() -> String {
    read(CLUSTER)
}

#[test]
fn the_text_says_where_the_pod_goes_and_why() {
    let output = kivi(&["schedule", CLUSTER]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        stdout(&output),
        "Pod shop/web-2: fits 2 of 4 node(s)
  Scheduled to one of node-c, node-d (tied top score 475; kube-scheduler picks one at random)
  Rejected nodes (the first filter that fails, in kube-scheduler's order):
    node-a  TaintToleration   node(s) had untolerated taint {dedicated: gpu}
    node-b  NodeResourcesFit  Insufficient cpu
  Scores (normalised, times the plugin's weight); skipped at PreScore: InterPodAffinity, NodeAffinity, PodTopologySpread:
    NODE    TaintToleration  NodeResourcesFit  NodeResourcesBalancedAllocation  ImageLocality  TOTAL
    node-c  300              75                100                              0              475
    node-d  300              75                100                              0              475
"
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn the_json_holds_the_decision_from_a_file_or_standard_input() {
    let from_file = kivi(&["schedule", CLUSTER, "--format", "json"]);
    let from_stdin = kivi_with_stdin(&["schedule", "-", "--format", "json"], Some(&cluster()));
    assert_eq!(from_file.status.code(), Some(0));
    assert_eq!(from_stdin.status.code(), Some(0));
    let decision = json_of(&from_file);
    assert_eq!(decision, json_of(&from_stdin));
    assert_eq!(decision["pending_pod"], "shop/web-2");
    assert_eq!(decision["feasible"], json!(["node-c", "node-d"]));
    assert_eq!(decision["top"], json!(["node-c", "node-d"]));
    assert_eq!(decision["total"], json!({"node-c": 475, "node-d": 475}));
    assert_eq!(decision["fit_error"], Value::Null);
    assert_eq!(
        decision["first_rejection"]["node-b"],
        json!({"plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"], "code": "Unschedulable"})
    );
    assert_eq!(
        decision["scores"]["node-c"],
        json!({"TaintToleration": 300, "NodeResourcesFit": 75,
               "NodeResourcesBalancedAllocation": 100, "ImageLocality": 0})
    );
}

#[test]
fn a_pod_that_fits_nowhere_gets_kube_schedulers_message_and_exit_1() {
    let text = cluster().replace("requests: {cpu: \"1\"", "requests: {cpu: \"5\"");
    let output = kivi_with_stdin(&["schedule", "-"], Some(&text));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let out = stdout(&output);
    assert!(
        out.starts_with(
            "Pod shop/web-2: fits 0 of 4 node(s)
  Warning  FailedScheduling  default-scheduler  0/4 nodes are available: 1 node(s) had \
untolerated taint {dedicated: gpu}, 3 Insufficient cpu. preemption: 0/4 nodes are available: \
1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.
  Rejected nodes (the first filter that fails, in kube-scheduler's order):
"
        ),
        "{out}"
    );
    assert!(!out.contains("Scores"), "{out}");
    let decision = json_of(&kivi_with_stdin(
        &["schedule", "-", "--format", "json"],
        Some(&text),
    ));
    assert_eq!(decision["feasible"], json!([]));
    assert_eq!(decision["top"], json!([]));
    assert_eq!(
        decision["fit_error"],
        "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 \
         Insufficient cpu."
    );
}

#[test]
fn several_pending_pods_are_each_decided_and_listed() {
    let text = format!(
        "{}- apiVersion: v1
  kind: Pod
  metadata: {{name: batch-1, namespace: shop}}
  spec:
    tolerations: [{{key: dedicated, operator: Exists}}]
    containers: [{{name: job, image: busybox, resources: {{requests: {{cpu: \"3500m\"}}}}}}]
",
        cluster()
    );
    let output = kivi_with_stdin(&["schedule", "-", "--format", "json"], Some(&text));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let decisions = json_of(&output);
    let decisions = decisions.as_array().expect("a list of decisions");
    assert_eq!(decisions.len(), 2);
    assert_eq!(decisions[0]["pending_pod"], "shop/web-2");
    assert_eq!(decisions[1]["pending_pod"], "shop/batch-1");
    assert_eq!(
        decisions[1]["feasible"],
        json!(["node-a", "node-c", "node-d"])
    );
    let text_output = kivi_with_stdin(&["schedule", "-"], Some(&text));
    let out = stdout(&text_output);
    assert!(
        out.contains("0              475\n\nPod shop/batch-1: fits 3 of 4 node(s)\n"),
        "{out}"
    );
}

#[test]
fn recorded_scenarios_give_the_recorded_decisions_through_the_command() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/kube-scheduler/vectors.jsonl.gz");
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let mut checked = 0;
    for (index, line) in text.lines().enumerate() {
        let vector: Value = serde_json::from_str(line).unwrap();
        if index % 20 != 0 && !vector["name"].as_str().unwrap().starts_with("sanity/") {
            continue;
        }
        let output = kivi_with_stdin(
            &["schedule", "-", "--format", "json"],
            vector["scenario"].as_str(),
        );
        let expected = &vector["expected"];
        let fits = !expected["feasible"].as_array().unwrap().is_empty();
        assert_eq!(
            output.status.code(),
            Some(if fits { 0 } else { 1 }),
            "{}",
            vector["name"]
        );
        let decision = json_of(&output);
        for field in [
            "feasible",
            "first_rejection",
            "scores",
            "total",
            "top",
            "fit_error",
        ] {
            assert_eq!(
                decision[field], expected[field],
                "{} {field}",
                vector["name"]
            );
        }
        checked += 1;
    }
    assert_eq!(
        checked, 53,
        "every 20th of the 1,000 and the 3 hand-written"
    );
}

#[test]
fn bad_input_is_an_error_naming_the_file_and_the_fix() {
    let no_pending = cluster().replace(
        "  metadata: {name: web-2, namespace: shop, labels: {app: web}}\n  spec:\n",
        "  metadata: {name: web-2, namespace: shop, labels: {app: web}}\n  spec:\n    nodeName: node-c\n",
    );
    let output = kivi_with_stdin(&["schedule", "-"], Some(&no_pending));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: <stdin>: no pending pod: every Pod has spec.nodeName"),
        "{stderr}"
    );
    let output = kivi(&["schedule", "tests/data/kube-scheduler"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("tests/data/kube-scheduler: a directory; `kivi schedule` reads one file"));
    let bad_quantity = cluster().replace("cpu: 1500m", "cpu: 1.5 cores");
    let output = kivi_with_stdin(&["schedule", "-"], Some(&bad_quantity));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: <stdin>:") && stderr.contains("Pod/shop/web-1"),
        "{stderr}"
    );
    let output = kivi(&["schedule", "tests/data/kube-scheduler/no-such-file.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no-such-file.json: cannot read"));
}

const VICTIMS: &str = "tests/data/kube-list/preemption-victims.json";
const VICTIMS_PDB: &str = "tests/data/kube-list/preemption-victims-pdb.json";

/// A victim in the JSON decision.
fn victim(namespace: &str, name: &str, priority: i32) -> Value {
    json!({"namespace": namespace, "name": name, "priority": priority})
}

/// Preemption helps on both nodes of `preemption-victims.json`: on node-a the priority-500 pod
/// is reprieved and batch-a (100) is the victim; on node-b the priority-2000 ingress stays and
/// both batch-b pods (60, 50) go. Fewer victims do not count before the highest victim's
/// priority: kube-scheduler nominates node-b.
#[test]
fn preemption_names_the_nominated_node_and_its_victims() {
    let output = kivi(&["schedule", VICTIMS]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        stdout(&output),
        "Pod default/critical: fits 0 of 2 node(s)
  Warning  FailedScheduling  default-scheduler  0/2 nodes are available: 2 Insufficient cpu.
  Preemption: evicting lower-priority pods makes room on node-a, node-b
  kube-scheduler nominates node-b (the lowest highest-victim priority of the candidates), \
deletes its victims and the pod waits for them to go
  Victims on each candidate node (most important first; * nominated):
      node-a  batch/batch-a (priority 100); 0 break a PodDisruptionBudget
    * node-b  batch/batch-b2 (priority 60), batch/batch-b1 (priority 50); 0 break a \
PodDisruptionBudget
  Rejected nodes (the first filter that fails, in kube-scheduler's order):
    node-a  NodeResourcesFit  Insufficient cpu
    node-b  NodeResourcesFit  Insufficient cpu
"
    );
    let decision = json_of(&kivi(&["schedule", VICTIMS, "--format", "json"]));
    assert_eq!(
        decision["preemption_candidates"],
        json!(["node-a", "node-b"])
    );
    assert_eq!(
        decision["preemption_victims"],
        json!([
            {"node": "node-a", "victims": [victim("batch", "batch-a", 100)],
             "pdb_violations": 0, "start_times_may_decide": false},
            {"node": "node-b",
             "victims": [victim("batch", "batch-b2", 60), victim("batch", "batch-b1", 50)],
             "pdb_violations": 0, "start_times_may_decide": false},
        ])
    );
    assert_eq!(decision["nominated_nodes"], json!(["node-b"]));
    assert_eq!(decision["nominated_node"], "node-b");
    assert_eq!(decision["nominated_by"], "highest_priority");
}

/// The same cluster with a PodDisruptionBudget over both batch-b pods whose status allows no
/// disruption: node-b's victims now break it twice, so node-a, which breaks nothing, wins. The
/// budget's status is what counts (as kube-scheduler reads it from the API): the same budget
/// allowing 2 disruptions leaves node-b the winner.
#[test]
fn a_budget_that_allows_no_disruption_makes_the_other_node_win() {
    let output = kivi(&["schedule", VICTIMS_PDB]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let out = stdout(&output);
    assert!(
        out.contains(
            "  kube-scheduler nominates node-a (the fewest PodDisruptionBudget violations of the \
             candidates), deletes its victims and the pod waits for them to go
  Victims on each candidate node (most important first; * nominated):
    * node-a  batch/batch-a (priority 100); 0 break a PodDisruptionBudget
      node-b  batch/batch-b2 (priority 60), batch/batch-b1 (priority 50); 2 break a \
PodDisruptionBudget
"
        ),
        "{out}"
    );
    let decision = json_of(&kivi(&["schedule", VICTIMS_PDB, "--format", "json"]));
    assert_eq!(decision["preemption_victims"][1]["pdb_violations"], 2);
    assert_eq!(decision["nominated_nodes"], json!(["node-a"]));
    assert_eq!(decision["nominated_node"], "node-a");
    assert_eq!(decision["nominated_by"], "pdb_violations");

    let text = read(VICTIMS_PDB);
    assert_eq!(text.matches("\"disruptionsAllowed\": 0").count(), 1);
    let allowing = text.replace("\"disruptionsAllowed\": 0", "\"disruptionsAllowed\": 2");
    let output = kivi_with_stdin(&["schedule", "-", "--format", "json"], Some(&allowing));
    let decision = json_of(&output);
    assert_eq!(decision["preemption_victims"][1]["pdb_violations"], 0);
    assert_eq!(decision["nominated_node"], "node-b");
    assert_eq!(decision["nominated_by"], "highest_priority");
}

/// With one priority-100 victim on each node the modelled criteria tie: both nodes are listed,
/// with what kube-scheduler decides by then (start times, then at random), and no single
/// nominated node. Two victims of equal priority on a node are marked: which of them
/// kube-scheduler spares depends on start times.
#[test]
fn nodes_tied_on_every_modelled_criterion_are_listed_with_what_decides_upstream() {
    let mut list: Value = serde_json::from_str(&read(VICTIMS)).unwrap();
    let items = list["items"].as_array_mut().unwrap();
    items.retain(|item| item["metadata"]["name"] != "batch-b2");
    let b1 = items
        .iter_mut()
        .find(|item| item["metadata"]["name"] == "batch-b1")
        .unwrap();
    b1["spec"]["priority"] = json!(100);
    b1["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("2");
    let tied = serde_json::to_string(&list).unwrap();
    let output = kivi_with_stdin(&["schedule", "-"], Some(&tied));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let out = stdout(&output);
    assert!(
        out.contains(
            "  node-a, node-b tie on the criteria kivi models (budget violations, highest victim \
             priority, sum of priorities, number of victims): kube-scheduler nominates the one \
             whose highest-priority victims started latest (kivi does not read start times), \
             else one of them at random, deletes its victims and the pod waits for them to go
  Victims on each candidate node (most important first; * nominated):
    * node-a  batch/batch-a (priority 100); 0 break a PodDisruptionBudget
    * node-b  batch/batch-b1 (priority 100); 0 break a PodDisruptionBudget
"
        ),
        "{out}"
    );
    let decision = json_of(&kivi_with_stdin(
        &["schedule", "-", "--format", "json"],
        Some(&tied),
    ));
    assert_eq!(decision["nominated_nodes"], json!(["node-a", "node-b"]));
    assert_eq!(decision["nominated_node"], Value::Null);
    assert_eq!(decision["nominated_by"], Value::Null);

    // node-a's priority-500 pod at 100 too: two pods of equal priority there, batch-a listed
    // after api-a, so api-a is spared and batch-a is the victim, as before, but marked.
    let equal = tied.replace("\"priority\":500", "\"priority\":100");
    assert_ne!(equal, tied);
    let out = stdout(&kivi_with_stdin(&["schedule", "-"], Some(&equal)));
    assert!(
        out.contains(
            "    * node-a  batch/batch-a (priority 100); 0 break a PodDisruptionBudget; pods of \
             equal priority: kube-scheduler spares those that started first, kivi those listed \
             first\n"
        ),
        "{out}"
    );
}

/// A file under the repository, read.
fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// `preemption-victims.json` with a second pending pod, `rival` (2 cores, priority 1000),
/// nominated to node-b by an earlier preemption (`status.nominatedNodeName`).
fn victims_with_a_nominated_rival() -> String {
    let mut list: Value = serde_json::from_str(&read(VICTIMS)).unwrap();
    let items = list["items"].as_array_mut().unwrap();
    let mut rival = items
        .iter()
        .find(|item| item["metadata"]["name"] == "critical")
        .expect("the pending pod")
        .clone();
    rival["metadata"]["name"] = "rival".into();
    rival["status"]["nominatedNodeName"] = "node-b".into();
    items.push(rival);
    list.to_string()
}

/// kube-scheduler adds the pods nominated to a node, of at least the pod's priority, while it
/// filters the node (`addGENominatedPods`), also when it looks for victims there: node-b's
/// room is held for rival, deleting its batch pods no longer makes room for critical, and
/// node-a is the only candidate. Rival tries its nominated node first.
#[test]
fn a_nominated_pod_holds_its_room_against_a_pod_of_equal_priority() {
    let output = kivi_with_stdin(&["schedule", "-"], Some(&victims_with_a_nominated_rival()));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    let critical = text
        .split("Pod default/rival")
        .next()
        .expect("critical's decision first");
    assert!(
        critical.contains("Preemption: evicting lower-priority pods makes room on node-a\n"),
        "{text}"
    );
    assert!(
        critical.contains("kube-scheduler nominates node-a"),
        "{text}"
    );
    let without = kivi(&["schedule", VICTIMS]);
    assert!(stdout(&without).contains("kube-scheduler nominates node-b"));
}

/// `victims_with_a_nominated_rival` with batch-b1 terminating on rival's nominated node-b,
/// with `condition` (a `DisruptionTarget` reason) in its status.
fn rival_beside_a_terminating_pod(reason: Option<&str>) -> String {
    let mut list: Value = serde_json::from_str(&victims_with_a_nominated_rival()).unwrap();
    let items = list["items"].as_array_mut().unwrap();
    let leaving = items
        .iter_mut()
        .find(|item| item["metadata"]["name"] == "batch-b1")
        .expect("batch-b1");
    leaving["metadata"]["deletionTimestamp"] = "2026-11-28T00:00:00Z".into();
    if let Some(reason) = reason {
        leaving["status"]["conditions"] =
            json!([{"type": "DisruptionTarget", "status": "True", "reason": reason}]);
    }
    list.to_string()
}

/// `PodEligibleToPreemptOthers` waits only for pods a preemption is deleting
/// (`podTerminatingByPreemption`: the `DisruptionTarget` condition with reason
/// `PreemptionByScheduler`): batch-b1 terminating for another reason, or evicted through the
/// Eviction API, does not hold rival back, and it preempts again.
#[test]
fn a_nominated_pod_waits_only_for_pods_a_preemption_deletes() {
    let rival_of = |list: &str| {
        let output = kivi_with_stdin(&["schedule", "-"], Some(list));
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let text = stdout(&output);
        text.split("Pod default/rival")
            .nth(1)
            .expect("rival's decision")
            .to_string()
    };
    for reason in [None, Some("EvictionByEvictionAPI")] {
        let rival = rival_of(&rival_beside_a_terminating_pod(reason));
        assert!(
            rival.contains("Preemption: evicting lower-priority pods makes room on node-a, node-b"),
            "{reason:?}: {rival}"
        );
    }
    let rival = rival_of(&rival_beside_a_terminating_pod(Some(
        "PreemptionByScheduler",
    )));
    assert!(
        rival.contains("preemption: not eligible due to a terminating pod on the nominated node."),
        "{rival}"
    );
    assert!(!rival.contains("Victims"), "{rival}");
}
