//! A pod template's `spec.nodeName` in a scaling sweep: each topology pins the pods to the
//! node the name gives (a node of a node group, `src/scaler/pinned_nodes.rs`), the topologies
//! without that node are left out with a note, and a name no topology has is an input error.

use std::path::Path;

use serde_json::Value;

use crate::support::cli::kivi_texts;
use crate::support::scratch::{copy_tree, scratch, Scratch};

const PINNED: &str = "tests/data/pinned-sweep";

/// The pinned-sweep input with `cache` pinned to `node` instead.
fn pinned_to(node: &str) -> Scratch {
    let dir = scratch("pinned-sweep");
    copy_tree(Path::new(PINNED), &dir);
    let manifests = dir.join("yaml/app.yaml");
    let text = std::fs::read_to_string(&manifests).unwrap();
    std::fs::write(&manifests, text.replace("node type 1-1", node)).unwrap();
    dir
}

/// `kivi check DIR --semantics kubernetes MORE`: its exit code, standard output and error.
fn under_kubernetes(dir: &str, more: &[&str]) -> (Option<i32>, String, String) {
    let args = [&["check", dir, "--semantics", "kubernetes"], more].concat();
    kivi_texts(&args)
}

/// The nodes per node type of each topology a sweep's JSON report decided, and of its
/// minimal violating one.
fn decided(report: &Value) -> (Vec<Vec<u64>>, Vec<u64>) {
    let per_type = |row: &Value| -> Vec<u64> {
        let counts = row["nodesPerType"].as_array().expect("nodes per type");
        counts.iter().map(|n| n.as_u64().unwrap()).collect()
    };
    let rows = report["rows"].as_array().expect("the sweep's rows");
    let minimal = &report["violations"][0];
    (rows.iter().map(per_type).collect(), per_type(minimal))
}

#[test]
fn a_pinned_pod_takes_its_node_in_every_topology_and_smaller_ones_are_not_swept() {
    let (code, stdout, stderr) = under_kubernetes(PINNED, &["--format", "json"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "topologies with fewer than 2 nodes of node group `node type 1` are not swept: \
             Deployment/cache pins its pods (nodeName) to node 2 of node group `node type 1`"
        ),
        "{stderr}"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let (rows, minimal) = decided(&report);
    // With the pin dropped, one `tier: web` node would already fail, and two would hold the
    // web pods beside a cache placed on the other node.
    assert_eq!(minimal, [2, 1], "{stdout}");
    assert!(rows.iter().all(|nodes| nodes[0] >= 2), "{rows:?}");

    // Pinned to the node no web pod may use, the two `tier: web` nodes hold them.
    let elsewhere = pinned_to("node type 2");
    let dir = elsewhere.to_str().unwrap();
    let (code, stdout, stderr) = under_kubernetes(dir, &["--format", "json"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(decided(&report).1, [1, 1], "{stdout}");
    let (code, stdout, stderr) = under_kubernetes(dir, &["--topology", "2,1:4,1"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");

    // A DaemonSet pinned to the second `tier: web` node takes a core there: two such nodes no
    // longer hold the web pods, and one is not swept.
    std::fs::write(elsewhere.join("yaml/agent.yaml"), AGENT).unwrap();
    let (code, stdout, stderr) = under_kubernetes(dir, &["--format", "json"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("DaemonSet/agent pins its pods (nodeName) to node 2 of node group"),
        "{stderr}"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(decided(&report).1, [2, 1], "{stdout}");
}

/// A DaemonSet of one-core agents pinned to the second node of the first node group.
const AGENT: &str = r#"apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      nodeName: node type 1-1
      containers:
      - name: agent
        image: registry.example/agent:1
        resources:
          requests:
            cpu: "1"
            memory: 256Mi
"#;

#[test]
fn a_topology_or_a_sweep_without_the_pinned_node_is_an_input_error() {
    let (code, _, stderr) = under_kubernetes(PINNED, &["--topology", "1,2:4,1"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "topology {node type 0: 1, node type 1: 2, deployment type 0: 4, deployment type 1: \
             1}: Deployment/cache pins its pods (nodeName) to node 2 of node group `node type \
             1`, but the topology has 1 of them; give it 2 or more"
        ),
        "{stderr}"
    );

    let beyond = pinned_to("node type 1-3");
    let (code, _, stderr) = kivi_texts(&["check", beyond.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "Deployment/cache: spec.nodeName `node type 1-3` is node 4 of node group `node type \
             1`, which has at most 3 (maxSize)"
        ),
        "{stderr}"
    );

    let unknown = pinned_to("node type 3");
    let (code, _, stderr) = kivi_texts(&["check", unknown.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("spec.nodeName `node type 3` is not a node of any node group"),
        "{stderr}"
    );

    let third = pinned_to("node type 1-2");
    let dir = third.to_str().unwrap();
    let (code, _, stderr) = kivi_texts(&["check", dir, "--confident-nodes", "2"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "nothing to verify: Deployment/cache pins its pods (nodeName) to node 3 of node \
             group `node type 1`, and no topology up to the confident size has more than 2 of \
             them"
        ),
        "{stderr}"
    );
}

/// A hand-written uniform-JSON template pins a pod template as the front-end writes it: the
/// node-failure model's pods pinned to the second node of the second node type.
#[test]
fn a_uniform_template_pins_pods_to_a_node_of_a_node_type() {
    let text = std::fs::read_to_string("bench-configs/models/c3-four-node-failures.json").unwrap();
    let mut template: Value = serde_json::from_str(&text).unwrap();
    let dir = scratch("pinned-uniform-template");
    let write = |template: &Value| {
        let path = dir.join("template.json");
        std::fs::write(&path, template.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    template["setup"]["podTemplates"][0]["nodeName"] =
        serde_json::json!({"nodeType": 2, "node": 2});
    let path = write(&template);
    // Unpinned, the sweep's first topology already leaves a pod Pending (exit 1); pinned,
    // every pod is bound to its node by the API and none waits for the scheduler.
    let (code, stdout, stderr) = kivi_texts(&["check", &path, "--tie-break", "any"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "topologies with fewer than 2 nodes of userDefined.nodesTypes[1] are not swept: \
             setup.podTemplates[0] pins its pods (nodeName) to node 2"
        ),
        "{stderr}"
    );

    template["setup"]["podTemplates"][0]["nodeName"]["zone"] = "a".into();
    let (code, _, stderr) = kivi_texts(&["check", &write(&template)]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("setup.podTemplates[0].nodeName.zone: unknown key"),
        "{stderr}"
    );
}
