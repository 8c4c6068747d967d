//! Clusters of real size: a thousand nodes and thousands of pods check with exact state
//! counts on every thread count and depth-first strategy, a violation at that size yields a
//! counterexample that replays, and sizes past the model's limits (5,000 nodes, 150,000 pod
//! slots) are refused with the limit named and exit code 2.
//!
//! States this large (tens of kilobytes) take the depth-first search's large-state path: a
//! state's children wait on the stack as the state and their action, and are computed again
//! when popped.

use crate::support::cli::{self, kivi_texts as kivi};
use crate::support::scratch;

#[test]
fn a_thousand_node_cluster_has_the_same_states_on_every_thread_count_and_strategy() {
    for strategy in ["dfs", "swarm"] {
        for threads in ["1", "2", "3"] {
            let (code, out, err) = kivi(&[
                "check",
                "--case",
                "c3",
                "--non-violation",
                "--topology",
                "500,500:3000",
                "--threads",
                threads,
                "--strategy",
                strategy,
            ]);
            assert_eq!(code, Some(0), "{strategy} {threads}: {out}{err}");
            assert!(
                out.contains("Setup: 1000 node(s), 6000 pod slot(s), 1 deployment(s)"),
                "{out}"
            );
            assert!(
                out.contains("States: 54010 stored, 72009 transitions, max depth 8"),
                "{strategy} {threads}: {out}"
            );
        }
    }
}

#[test]
fn a_violation_among_a_thousand_nodes_has_a_counterexample_that_replays() {
    let (code, out, err) = kivi(&[
        "check",
        "--case",
        "c1",
        "--topology",
        "1000:3000",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(report["verdict"], "violation");
    assert_eq!(report["summary"], "violation: no_oscillation_replica_num");
    let example = &report["counterexamples"][0];
    assert_eq!(
        example["initialState"]["nodes"].as_array().map(Vec::len),
        Some(1000)
    );
    assert!(
        example["steps"].as_array().is_some_and(|s| !s.is_empty()),
        "{example}"
    );
}

#[test]
fn sizes_past_the_limits_are_refused_with_the_limit_named() {
    let (code, _, err) = kivi(&["check", "--case", "c1", "--topology", "5001:30"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("setup.nodes: 5001 entries, more than the 5000 supported"),
        "{err}"
    );
    let (code, _, err) = kivi(&["check", "--case", "c1", "--topology", "25000:150001"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("setup.pods: 175000 entries, more than the 150000 supported"),
        "{err}"
    );
    assert!(
        err.contains("specReplicas: 150001 is out of range"),
        "{err}"
    );
}

/// A live-cluster dump of 5,000 nodes (`kubectl get nodes -o json` with the example's three
/// workers and 4,997 more like them) is read, dumped and checked like the small one.
#[test]
fn a_five_thousand_node_live_dump_is_read_dumped_and_checked() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/live-cluster-dump");
    let directory = scratch("live-5000");
    let setup = directory.join("setup");
    std::fs::create_dir_all(&setup).unwrap();
    for entry in std::fs::read_dir(example.join("setup")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), setup.join(entry.file_name())).unwrap();
    }
    let nodes_file = setup.join("shop-getnode.json");
    let mut nodes: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&nodes_file).unwrap()).unwrap();
    let items = nodes["items"].as_array_mut().unwrap();
    let worker = items[1].clone();
    for i in 0..4_997 {
        let name = format!("shop-x{i}");
        let mut node = worker.clone();
        node["metadata"]["name"] = serde_json::json!(name);
        node["metadata"]["uid"] = serde_json::json!(format!("node-{name}"));
        node["metadata"]["labels"]["kubernetes.io/hostname"] = serde_json::json!(name);
        items.push(node);
    }
    std::fs::write(&nodes_file, nodes.to_string()).unwrap();
    let input = directory.to_str().unwrap();
    let output = cli::kivi(&["dump", input]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["setup"]["nodes"].as_array().unwrap().len(), 5_000);
    let (code, out, err) = kivi(&["check", input]);
    assert!(matches!(code, Some(0 | 1)), "{out}{err}");
    assert!(
        out.contains("Setup: 5000 node(s), 6 pod slot(s), 1 deployment(s)"),
        "{out}"
    );
    std::fs::remove_dir_all(&directory).unwrap();
}
