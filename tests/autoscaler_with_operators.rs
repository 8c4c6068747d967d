//! The cluster autoscaler beside what operators and failures do to its nodes, under
//! `--semantics kubernetes`: kernel panics, maintenance and rolling upgrades. The autoscaler's
//! eligibility checks read no cordon and take unready nodes (`eligibility.go`), so a node in
//! an operator's hands is a candidate like any other; a removal that fails leaves it in those
//! hands, a node it deletes does not come back, and a slot with no Node is passed by the
//! operator's walk over the nodes.

use crate::cluster_autoscaler::{
    autoscaler_steps, check_document, document, model, settled, two_pods_under_one_budget,
    SCALE_DOWN,
};
use crate::support::enabled;
use kivi::cluster::action::UpgradeStep;
use kivi::cluster::{ClusterAction, ClusterState, MaintenancePhase, NodeStatus};
use kivi::controllers::cluster_autoscaler::scale_down::candidates;
use kivi::controllers::cluster_autoscaler::scale_up::{
    drained_pods, scale_up, unschedulable_pods, ScaleUp,
};
use kivi::model::ClusterModel;
use serde_json::{json, Value};

/// `doc` with `events`.
fn with_events(mut doc: Value, events: Value) -> Value {
    doc["events"] = events;
    doc
}

/// `doc` with room for a fourth node in its group: slot 4, with no Node.
fn with_slot(mut doc: Value) -> Value {
    doc["controllers"]["clusterAutoscaler"]["nodeGroups"][0]["maxSize"] = json!(4);
    doc
}

/// The state `actions` lead to from `state`, one after the other.
fn after(m: &ClusterModel, state: &ClusterState, actions: &[ClusterAction]) -> ClusterState {
    actions.iter().fold(state.clone(), |state, action| {
        m.next_state(&state, action)
            .unwrap_or_else(|| panic!("{action:?} is not enabled"))
    })
}

/// The autoscaler's removal of empty node `node`: tainted, then deleted.
fn removal(node: u16) -> [ClusterAction; 2] {
    [
        ClusterAction::AutoscalerScaleDown { node },
        ClusterAction::AutoscalerDeletesNode { node },
    ]
}

#[test]
fn a_panicked_group_node_is_an_unready_candidate_and_does_not_come_back_once_deleted() {
    let doc = with_events(
        with_slot(document(SCALE_DOWN)),
        json!([{"name": "kernelPanic"}]),
    );
    let m = model(&doc);
    let autoscaler = m.spec().cluster_autoscaler.as_ref().unwrap();
    let mut panicked = settled(&m);
    panicked.node_mut(3).status = NodeStatus::Unhealthy;
    assert!(candidates(m.spec(), autoscaler, &panicked).contains(&3));
    let removed = after(&m, &panicked, &removal(3));
    assert_eq!(removed.node(3).status, NodeStatus::Absent);
    assert!(!enabled(&m, &removed).contains(&ClusterAction::KernelRecover { node: 3 }));

    let mut kept = doc.clone();
    kept["controllers"]["clusterAutoscaler"]["scaleDownUnreadyEnabled"] = json!(false);
    let m = model(&kept);
    let autoscaler = m.spec().cluster_autoscaler.as_ref().unwrap();
    assert!(!candidates(m.spec(), autoscaler, &panicked).contains(&3));

    let (code, states, output) = check_document(&doc, "ca-kernel-panic", "1");
    assert_eq!(code, Some(0), "{output}");
    // 210 without the soft taint, whose marks lag the unneeded nodes.
    assert_eq!(states, Some(962), "{output}");
}

#[test]
fn a_node_in_maintenance_may_be_removed_and_goes_on_with_it_when_the_removal_fails() {
    let doc = with_events(
        two_pods_under_one_budget(),
        json!([{"name": "maintenance", "para": {"p": 1}}]),
    );
    let m = model(&doc);
    let draining = after(
        &m,
        &settled(&m),
        &[
            ClusterAction::Maintenance { event: 0 },
            ClusterAction::MaintenanceStart { node: 1 },
        ],
    );
    assert_eq!(draining.node(1).maintenance, MaintenancePhase::Draining);
    assert!(
        autoscaler_steps(&m, &draining).contains(&ClusterAction::AutoscalerScaleDown { node: 1 })
    );
    let removing = after(
        &m,
        &draining,
        &[ClusterAction::AutoscalerScaleDown { node: 1 }],
    );
    assert_eq!(
        removing.node(1).maintenance,
        MaintenancePhase::ScaleDownDraining
    );
    // The operator's drain and the autoscaler's race over the node's pods.
    let steps = enabled(&m, &removing);
    for race in [
        ClusterAction::DrainEviction { event: 0, pod: 1 },
        ClusterAction::AutoscalerEviction { pod: 1 },
    ] {
        assert!(steps.contains(&race), "{race:?} not in {steps:?}");
    }
    // One disruption allowed: after one eviction the other is refused, and the removal may
    // time out; the node is then still drained for its maintenance.
    let failed = after(
        &m,
        &removing,
        &[
            ClusterAction::AutoscalerEviction { pod: 1 },
            ClusterAction::AutoscalerScaleDownFails { node: 1 },
        ],
    );
    assert_eq!(failed.node(1).maintenance, MaintenancePhase::Draining);

    doc_checks(&doc, "ca-maintenance", [110_644, 110_644]);
}

#[test]
fn a_maintenance_passes_the_slots_with_no_node_and_a_deleted_node_does_not_come_back() {
    let doc = with_events(
        with_slot(document(SCALE_DOWN)),
        json!([{"name": "maintenance", "para": {"p": 1}}]),
    );
    let m = model(&doc);
    let state = settled(&m);
    assert_eq!(state.node(4).status, NodeStatus::Absent);
    // Node 3 (empty) is removed while picked; the walk waits at it, then passes it and the
    // slot with no Node.
    let picked = after(&m, &state, &[ClusterAction::Maintenance { event: 0 }]);
    assert_eq!(picked.node(1).maintenance, MaintenancePhase::Picked);
    let removed = after(&m, &picked, &removal(3));
    let mut state = removed;
    for action in [
        ClusterAction::MaintenanceStart { node: 1 },
        ClusterAction::MaintenanceStop { node: 1 },
        ClusterAction::MaintenanceEnd { node: 1 },
        ClusterAction::Maintenance { event: 0 },
        ClusterAction::MaintenanceStart { node: 2 },
    ] {
        // Node 1's pod is evicted by the drain before it stops.
        if action == (ClusterAction::MaintenanceStop { node: 1 }) {
            state = after(
                &m,
                &state,
                &[ClusterAction::DrainEviction { event: 0, pod: 1 }],
            );
            state = drained(&m, state);
        }
        state = after(&m, &state, &[action]);
    }
    assert_eq!(state.node(3).status, NodeStatus::Absent);
    assert_eq!(state.node(3).maintenance, MaintenancePhase::Idle);
    assert_eq!(
        { state.events().done },
        1,
        "node 2 is picked, node 3 and slot 4 passed"
    );
}

/// `state` after the kubelet has taken every step it can (terminating pods removed).
fn drained(m: &ClusterModel, mut state: ClusterState) -> ClusterState {
    while let Some(kubelet) = enabled(m, &state)
        .into_iter()
        .find(|a| matches!(a, ClusterAction::Kubelet))
    {
        state = after(m, &state, &[kubelet]);
    }
    state
}

#[test]
fn an_upgrade_leaves_out_the_slots_with_no_node_and_a_failed_removal_keeps_the_cordon() {
    let doc = with_events(
        with_slot(two_pods_under_one_budget()),
        json!([{"name": "upgrade", "para": {"by": "node"}}]),
    );
    let m = model(&doc);
    let cordon = ClusterAction::NodeUpgrade {
        event: 0,
        step: UpgradeStep::Cordon,
    };
    let cordoned = after(&m, &settled(&m), std::slice::from_ref(&cordon));
    assert_eq!(cordoned.node(1).maintenance, MaintenancePhase::Cordoned);
    let failed = after(
        &m,
        &cordoned,
        &[
            ClusterAction::AutoscalerScaleDown { node: 1 },
            ClusterAction::AutoscalerEviction { pod: 1 },
            ClusterAction::AutoscalerScaleDownFails { node: 1 },
        ],
    );
    assert_eq!(failed.node(1).maintenance, MaintenancePhase::Cordoned);

    // The upgrade's fourth batch is slot 4, which has no Node: nothing is cordoned there.
    let mut at_slot = settled(&m);
    at_slot.events_mut().progress[0] = 9;
    let passed = after(&m, &at_slot, &[cordon]);
    assert_eq!(passed.node(4).status, NodeStatus::Absent);
    assert_eq!(passed.node(4).maintenance, MaintenancePhase::Idle);

    doc_checks(&doc, "ca-upgrade", [183_362, 183_362]);
}

/// Checks `doc` for the safety intents and for `drain_completes` (the maintenance or the
/// upgrade ends), asserting the states each stores.
fn doc_checks(doc: &Value, name: &str, states: [u64; 2]) {
    let mut doc = doc.clone();
    // These searches are about the operators: without the soft taint
    // (`--max-bulk-soft-taint-count=0`), whose lagging marks would multiply them (maintenance:
    // 110,644 states to 28,714,041).
    doc["controllers"]["clusterAutoscaler"]["maxBulkSoftTaintCount"] = json!(0);
    doc["intents"] = json!([{"name": "pod_always_schedulable"}, {"name": "pdb_never_violated"}]);
    let (code, stored, output) = check_document(&doc, name, "1");
    assert_eq!((code, stored), (Some(0), Some(states[0])), "{output}");
    doc["intents"] = json!([{"name": "drain_completes"}]);
    let (code, stored, output) = check_document(&doc, &format!("{name}-ends"), "1");
    assert_eq!((code, stored), (Some(0), Some(states[1])), "{output}");
}

#[test]
fn a_drained_nodes_pods_that_fit_nowhere_else_scale_a_group_up() {
    // Pod 1's node is being removed; since the removal was planned, an operator cordoned the
    // other nodes. The autoscaler finds room for the pods it is draining
    // (`currently_drained_nodes.go`), though no pod is unschedulable: slot 4 is added.
    let m = model(&with_slot(document(SCALE_DOWN)));
    let autoscaler = m.spec().cluster_autoscaler.as_ref().unwrap();
    let mut removing = after(
        &m,
        &settled(&m),
        &[ClusterAction::AutoscalerScaleDown { node: 1 }],
    );
    assert!(unschedulable_pods(m.spec(), &removing).is_empty());
    assert!(matches!(
        scale_up(m.spec(), autoscaler, &removing),
        ScaleUp::NotNeeded
    ));
    for n in [2, 3] {
        removing.node_mut(n).maintenance = MaintenancePhase::Cordoned;
    }
    assert_eq!(drained_pods(&removing), [1]);
    let steps = autoscaler_steps(&m, &removing);
    assert!(
        steps.contains(&ClusterAction::AutoscalerScaleUp { group: 0, nodes: 1 }),
        "{steps:?}"
    );
}
