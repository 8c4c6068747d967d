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
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CLUSTER)).unwrap()
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
