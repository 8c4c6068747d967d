//! The cluster autoscaler's soft taint `DeletionCandidateOfClusterAutoscaler:PreferNoSchedule`
//! under `--semantics kubernetes` (`controllers::cluster_autoscaler::soft_taint`): put on the
//! nodes the autoscaler finds unneeded and taken off the others by a step of its own (the
//! loop's lag), shown to kube-scheduler, whose TaintToleration score then prefers other nodes
//! for pending pods; read from the input (a running cluster's Node carrying it) as the node's
//! mark; and off with `maxBulkSoftTaintCount: 0`.
//!
//! The cluster (`tests/data/autoscaler-model/soft-taint.json`): one group of nodes 1 and 2
//! (4 CPUs each, minimum 1); a batch pod of 3 CPUs on node 1 (75 %, above the 50 %
//! threshold); a web pod of 1 CPU pending. The autoscaler hints the web pod onto node 1, where
//! it fits first, so node 2 is empty and unneeded. Left to its scores, kube-scheduler puts the
//! web pod on the empty node 2 (LeastAllocated), which stays unneeded (the pod fits node 1),
//! so the autoscaler removes it and evicts the pod: the web deployment drops to 0 replicas
//! (`replica_num_always_meet_exp`, 1 expected).

use crate::cluster_autoscaler::{autoscaler_steps, check_document, document, model};
use crate::support::enabled;
use kivi::cluster::kube::of_model::snapshot;
use kivi::cluster::{ClusterAction, ClusterState, TaintEffect};
use kivi::model::ClusterModel;
use serde_json::{json, Value};

const SOFT_TAINT: &str = "tests/data/autoscaler-model/soft-taint.json";

/// `doc` with node 2 carrying the soft taint, as a running cluster's Node would after the
/// autoscaler's loop found it unneeded.
fn soft_tainted_node_2(mut doc: Value) -> Value {
    doc["setup"]["nodes"][1]["taint"] =
        json!(["DeletionCandidateOfClusterAutoscaler=1700000000:PreferNoSchedule"]);
    doc
}

/// The state after kube-scheduler's step in `state`.
fn scheduled(m: &ClusterModel, state: &ClusterState) -> ClusterState {
    let step = enabled(m, state)
        .into_iter()
        .find(|a| matches!(a, ClusterAction::Scheduler))
        .expect("the scheduler has pod 2 queued");
    m.next_state(state, &step).unwrap()
}

#[test]
fn an_unneeded_node_is_soft_tainted_and_a_pending_pod_then_prefers_the_other_node() {
    let m = model(&document(SOFT_TAINT));
    let start = m.initial_state().clone();
    let soft = ClusterAction::AutoscalerSoftTaints;
    let remove_2 = ClusterAction::AutoscalerScaleDown { node: 2 };
    assert_eq!(autoscaler_steps(&m, &start), [soft, remove_2]);

    // Before the loop has marked node 2, the scores send pod 2 there.
    assert_eq!({ scheduled(&m, &start).pod(2).loc }, 2);

    let marked = m.next_state(&start, &soft).unwrap();
    assert!(marked.node(2).deletion_candidate());
    assert!(!marked.node(1).deletion_candidate());
    let node_2 = &snapshot(m.spec(), &marked).nodes[1];
    assert!(
        node_2.taints.iter().any(|t| {
            t.key == "DeletionCandidateOfClusterAutoscaler"
                && t.effect == TaintEffect::PreferNoSchedule
        }),
        "{:?}",
        node_2.taints
    );
    assert_eq!(
        autoscaler_steps(&m, &marked),
        [remove_2],
        "the marks are up to date"
    );
    // TaintToleration (weight 3) outweighs LeastAllocated: pod 2 goes to node 1.
    assert_eq!({ scheduled(&m, &marked).pod(2).loc }, 1);
}

#[test]
fn the_soft_taint_comes_off_a_needed_node_and_stays_through_a_removal_until_the_node_goes() {
    // At its minimum (2) the group's nodes are no scale-down candidates at all
    // (`pre_filtering_processor.go`): the loop takes the soft taint off node 2.
    let mut at_min = soft_tainted_node_2(document(SOFT_TAINT));
    at_min["controllers"]["clusterAutoscaler"]["nodeGroups"][0]["minSize"] = json!(2);
    let m = model(&at_min);
    let start = m.initial_state().clone();
    assert!(start.node(2).deletion_candidate(), "read from the input");
    let soft = ClusterAction::AutoscalerSoftTaints;
    assert_eq!(autoscaler_steps(&m, &start), [soft]);
    let cleaned = m.next_state(&start, &soft).unwrap();
    assert!(!cleaned.node(2).deletion_candidate());
    assert_eq!(autoscaler_steps(&m, &cleaned), []);

    // A node being removed keeps its soft taint (`HasToBeDeletedTaint` nodes are passed
    // over); its deletion takes it with the Node.
    let m = model(&soft_tainted_node_2(document(SOFT_TAINT)));
    let start = m.initial_state().clone();
    let removing = m
        .next_state(&start, &ClusterAction::AutoscalerScaleDown { node: 2 })
        .unwrap();
    assert!(removing.node(2).deletion_candidate());
    assert!(!autoscaler_steps(&m, &removing).contains(&soft));
    let deleted = m
        .next_state(&removing, &ClusterAction::AutoscalerDeletesNode { node: 2 })
        .unwrap();
    assert!(!deleted.node(2).status.exists());
    assert!(!deleted.node(2).deletion_candidate());
}

#[test]
fn a_node_the_autoscaler_has_soft_tainted_keeps_a_pending_pod_off_it() {
    // Every run: with node 2 soft-tainted, pod 2 goes to node 1 and is never evicted.
    let doc = document(SOFT_TAINT);
    let (code, states, output) = check_document(&soft_tainted_node_2(doc.clone()), "ca-soft", "1");
    assert_eq!((code, states), (Some(0), Some(18)), "{output}");

    // Not yet marked: the scheduler may place pod 2 before the loop marks node 2, and the
    // removal then evicts it.
    let (code, states, output) = check_document(&doc, "ca-soft-lags", "1");
    assert_eq!((code, states), (Some(1), Some(69)), "{output}");
    for expected in [
        "Pod 2 is scheduled on node 2",
        "Node 2 is unneeded (25.0 % utilised)",
        "Now 0, expected 1.",
    ] {
        assert!(output.contains(expected), "{expected} not in {output}");
    }

    // With `--max-bulk-soft-taint-count=0` the loop never marks node 2, and a soft taint a
    // Node already carries stays.
    let mut off = doc.clone();
    off["controllers"]["clusterAutoscaler"]["maxBulkSoftTaintCount"] = json!(0);
    let (code, states, output) = check_document(&off, "ca-soft-off", "1");
    assert_eq!((code, states), (Some(1), Some(38)), "{output}");
    let (code, states, output) =
        check_document(&soft_tainted_node_2(off), "ca-soft-off-tainted", "1");
    assert_eq!((code, states), (Some(0), Some(18)), "{output}");
}

#[test]
fn the_soft_taint_in_a_trace_and_a_bad_bulk_count() {
    let mut doc = document(SOFT_TAINT);
    doc["intents"] = json!([{"name": "pod_always_schedulable"}]);
    let m = model(&doc);
    let start = m.initial_state().clone();
    let soft = ClusterAction::AutoscalerSoftTaints;
    let marked = m.next_state(&start, &soft).unwrap();
    let trace = m.kivi_trace(&start, &[(soft, marked)]);
    assert_eq!(
        trace,
        ["[0][Cluster autoscaler - soft_taint] DeletionCandidateOfClusterAutoscaler:PreferNoSchedule: \
          unneeded nodes [2] tainted"]
    );

    doc["controllers"]["clusterAutoscaler"]["maxBulkSoftTaintCount"] = json!(-1);
    let (code, _, output) = check_document(&doc, "ca-soft-bad", "1");
    assert_eq!(code, Some(2), "{output}");
    assert!(
        output.contains("controllers.clusterAutoscaler.maxBulkSoftTaintCount"),
        "{output}"
    );
}

#[test]
fn kivi_schedule_prefers_a_node_without_the_soft_taint() {
    // `kivi schedule`'s cluster, with node-d carrying the soft taint as a running cluster's
    // Node would: node-c and node-d tied at 475; now node-d's TaintToleration score is 0.
    let cluster = std::fs::read_to_string("tests/data/kube-scheduler/cli/cluster.yaml").unwrap();
    let node_d = "    name: node-d\n    labels: {kubernetes.io/hostname: node-d, topology.kubernetes.io/zone: zone-b}\n";
    assert!(cluster.contains(node_d));
    let tainted = cluster.replace(
        node_d,
        &format!(
            "{node_d}  spec:\n    taints: [{{key: DeletionCandidateOfClusterAutoscaler, \
             value: \"1700000000\", effect: PreferNoSchedule}}]\n"
        ),
    );
    let output = crate::support::cli::kivi_with_stdin(
        &["schedule", "-", "--format", "json"],
        Some(&tainted),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let decision = crate::support::cli::json_of(&output);
    assert_eq!(decision["top"], json!(["node-c"]));
    assert_eq!(decision["total"], json!({"node-c": 475, "node-d": 175}));
}
