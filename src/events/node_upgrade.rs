//! A rolling node upgrade as a user event (`upgrade`, `--semantics kubernetes` only): the nodes
//! are taken batch after batch (one node, or one zone, at a time), and each batch is cordoned,
//! drained, stopped for its upgrade and put back before the next one starts.
//!
//! Kubernetes has no upgrade controller: this is what an operator, `kubeadm upgrade`'s node
//! procedure or a tool such as kured does (cordon and `kubectl drain`, upgrade or reboot the
//! node, `kubectl uncordon`), one node or one zone at a time. Each batch goes through:
//! - [`UpgradeStep::Cordon`]: every node of the batch is cordoned in one step
//!   ([`MaintenancePhase::Cordoned`], `spec.unschedulable`), as `kubectl drain` cordons
//!   (`RunCordonOrUncordon`, k8s.io/kubectl/pkg/drain/default.go).
//! - The drain: the batch's pods are evicted through the Eviction API exactly as a `drain`
//!   event's are (`crate::events::drain`: one [`ClusterAction::DrainEviction`] per allowed pod,
//!   refused evictions retried in later states, DaemonSet pods ignored); the drain is complete
//!   once no pod is left on the batch's nodes. A drain that never completes blocks the upgrade
//!   for ever, which `drain_completes` reports.
//! - [`UpgradeStep::Restart`]: the drained nodes stop for their upgrade: their kubelets are down
//!   ([`NodeStatus::NotReady`], [`MaintenancePhase::Upgrading`]), so the node lifecycle
//!   controller sees them not ready and their zones' states follow. They stay Nodes of the
//!   cluster (the same names come back, as an in-place upgrade or a reboot keeps them), so they
//!   stay domains of topology spread constraints while they are down.
//! - [`UpgradeStep::Rejoin`]: the upgraded nodes are ready and uncordoned in one step (the
//!   kubelet registers again, then `kubectl uncordon`; a node ready but still cordoned schedules
//!   nothing, as while it was drained, so the two are one step).
//!
//! Each step acts on the batch's nodes that are where the step before left them: a node a
//! `drain` had cordoned already is upgraded with the batch, and one a maintenance holds is
//! drained with it and left to the maintenance. With a cluster autoscaler, a slot of a node group with no Node is not in the
//! batch (a node added later comes up on the new version), and the autoscaler may remove a
//! batch's node at any point (its eligibility checks read no cordon, and a stopped node is an
//! unready one): a node it deletes does not come back, and one whose removal fails goes on
//! with the upgrade ([`MaintenancePhase::with_removal`]).
//!
//! The next batch may be cordoned at any later step: tools that wait for the cluster to settle
//! first (kops' validation) are among the runs, and so are those that go on at once. A
//! replacement that registers a Node of a new name (a cloud's surge upgrade: a new node first,
//! the old one deleted after its drain) is not modelled: the model's nodes are fixed, so a
//! deleted node cannot leave the spread domains.
//!
//! Ids and ties: batches are taken in node id order (zones in the order of their first node)
//! under both `--tie-break` settings, so symmetry ([`crate::model::symmetry`]) permutes only
//! nodes of one batch (a zone's alike nodes) and the pods.

use crate::cluster::action::UpgradeStep;
use crate::cluster::{
    ClusterAction, ClusterSpec, ClusterState, MaintenancePhase, NodeStatus, Recorder, UpgradeBatch,
};

/// The phases of a batch, counted in the event's progress (`batch · PHASES + phase`):
/// [`WAITING`], [`DRAINING`], then stopped for its upgrade.
const PHASES: u16 = 3;
/// The batch is not cordoned yet.
const WAITING: u16 = 0;
/// The batch is cordoned and being drained.
const DRAINING: u16 = 1;

/// How many batches an upgrade taking `by` has in `spec`.
pub fn batch_count(spec: &ClusterSpec, by: UpgradeBatch) -> usize {
    by.of_nodes(spec).iter().max().map_or(0, |batch| batch + 1)
}

/// The nodes of batch `batch` (from 0) of an upgrade taking `by`, in id order.
pub fn batch_nodes(spec: &ClusterSpec, by: UpgradeBatch, batch: usize) -> Vec<usize> {
    match by {
        UpgradeBatch::Node => vec![batch + 1],
        UpgradeBatch::Zone => by
            .of_nodes(spec)
            .iter()
            .enumerate()
            .filter(|&(_, &zone)| zone == batch)
            .map(|(i, _)| i + 1)
            .collect(),
    }
}

/// Upgrade event `event`'s current batch and its phase in `state`.
fn position(state: &ClusterState, event: usize) -> (usize, u16) {
    let progress = state.events().progress[event];
    ((progress / PHASES) as usize, progress % PHASES)
}

/// The nodes upgrade event `event` drains in `state`: its batch's, while the batch is cordoned
/// and not yet stopped.
pub fn draining(
    spec: &ClusterSpec,
    state: &ClusterState,
    event: usize,
    by: UpgradeBatch,
) -> Option<Vec<usize>> {
    let (batch, phase) = position(state, event);
    (state.events().done & (1 << event) == 0 && phase == DRAINING)
        .then(|| batch_nodes(spec, by, batch))
}

/// Whether upgrade event `event` has not cordoned its first batch yet.
pub fn not_started(state: &ClusterState, event: usize) -> bool {
    state.events().progress[event] == 0
}

/// Visits upgrade event `event`'s next step in `state` when it is enabled: the cordon of a
/// waiting batch, the restart of a batch whose drain is complete (`drained`, as
/// `crate::events::drain::progress` says), the rejoin of a stopped batch. Returns false when
/// `visit` asked to stop.
pub fn for_each_step(
    state: &ClusterState,
    event: usize,
    drained: bool,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    let step = match position(state, event).1 {
        WAITING => UpgradeStep::Cordon,
        DRAINING if drained => UpgradeStep::Restart,
        DRAINING => return true,
        _ => UpgradeStep::Rejoin,
    };
    visit(ClusterAction::NodeUpgrade {
        event: event as u8,
        step,
    })
}

/// Upgrade event `event` takes step `step` on its current batch.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    event: usize,
    by: UpgradeBatch,
    step: UpgradeStep,
    rec: &mut Recorder,
) {
    let (batch, _) = position(state, event);
    for n in batch_nodes(spec, by, batch) {
        let node = state.node_mut(n);
        let (from, to) = match step {
            UpgradeStep::Cordon => (MaintenancePhase::Idle, MaintenancePhase::Cordoned),
            UpgradeStep::Restart => (MaintenancePhase::Cordoned, MaintenancePhase::Upgrading),
            UpgradeStep::Rejoin => (MaintenancePhase::Upgrading, MaintenancePhase::Idle),
        };
        if !node.status.exists() || node.maintenance.without_removal() != from {
            continue;
        }
        node.maintenance = node.maintenance.moved_to(to);
        match step {
            UpgradeStep::Cordon => {}
            UpgradeStep::Restart => node.status = NodeStatus::NotReady,
            UpgradeStep::Rejoin => node.status = NodeStatus::Ready,
        }
        rec.log(Some("node upgrade"), || match step {
            UpgradeStep::Cordon => format!("node/node-{n} cordoned"),
            UpgradeStep::Restart => format!("node/node-{n} stopped for its upgrade"),
            UpgradeStep::Rejoin => format!("node/node-{n} upgraded: ready and uncordoned"),
        });
    }
    state.events_mut().progress[event] += 1;
    if step == UpgradeStep::Rejoin && batch + 1 >= batch_count(spec, by) {
        state.events_mut().done |= 1 << event;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;
    use crate::cluster::{EventKind, EventSpec, Semantics};

    /// C3 under kubernetes with an upgrade taking `by`.
    fn c3_upgrading(by: UpgradeBatch) -> (ClusterSpec, ClusterState) {
        let cluster = cases::c3();
        let mut spec = cluster.spec.clone();
        spec.semantics = Semantics::Kubernetes;
        spec.events = vec![EventSpec {
            kind: EventKind::Upgrade { by },
            after_stable: false,
            first: false,
        }];
        (spec, cluster.state.clone())
    }

    fn steps(state: &ClusterState, drained: bool) -> Vec<ClusterAction> {
        let mut out = Vec::new();
        for_each_step(state, 0, drained, &mut |a| {
            out.push(a);
            true
        });
        out
    }

    /// Upgrade event 0 of `spec` takes `step` in `state`.
    fn take(spec: &ClusterSpec, state: &mut ClusterState, by: UpgradeBatch, step: UpgradeStep) {
        run(spec, state, 0, by, step, &mut Recorder::off());
    }

    fn upgrade(step: UpgradeStep) -> ClusterAction {
        ClusterAction::NodeUpgrade { event: 0, step }
    }

    #[test]
    fn each_node_is_cordoned_drained_stopped_and_put_back_before_the_next() {
        let (spec, mut state) = c3_upgrading(UpgradeBatch::Node);
        assert_eq!(batch_count(&spec, UpgradeBatch::Node), 3);
        assert!(not_started(&state, 0));
        assert_eq!(steps(&state, false), [upgrade(UpgradeStep::Cordon)]);
        let by = UpgradeBatch::Node;
        take(&spec, &mut state, by, UpgradeStep::Cordon);
        assert_eq!(state.node(1).maintenance, MaintenancePhase::Cordoned);
        assert_eq!(draining(&spec, &state, 0, by), Some(vec![1]));
        assert!(steps(&state, false).is_empty(), "waits for the drain");
        assert_eq!(steps(&state, true), [upgrade(UpgradeStep::Restart)]);
        take(&spec, &mut state, by, UpgradeStep::Restart);
        assert_eq!(
            (state.node(1).status, state.node(1).maintenance),
            (NodeStatus::NotReady, MaintenancePhase::Upgrading)
        );
        assert_eq!(draining(&spec, &state, 0, by), None);
        assert_eq!(steps(&state, false), [upgrade(UpgradeStep::Rejoin)]);
        take(&spec, &mut state, by, UpgradeStep::Rejoin);
        assert_eq!(
            (state.node(1).status, state.node(1).maintenance),
            (NodeStatus::Ready, MaintenancePhase::Idle)
        );
        assert_eq!(steps(&state, false), [upgrade(UpgradeStep::Cordon)]);
        take(&spec, &mut state, by, UpgradeStep::Cordon);
        assert_eq!(draining(&spec, &state, 0, by), Some(vec![2]));
        for step in [
            UpgradeStep::Restart,
            UpgradeStep::Rejoin,
            UpgradeStep::Cordon,
        ] {
            take(&spec, &mut state, by, step);
        }
        assert_eq!({ state.events().done }, 0, "node 3 is next");
        for step in [UpgradeStep::Restart, UpgradeStep::Rejoin] {
            take(&spec, &mut state, by, step);
        }
        assert_eq!({ state.events().done }, 1, "every node is upgraded");
    }

    #[test]
    fn a_zone_is_one_batch() {
        // C3: nodes 1 and 2 in zone 1, node 3 in zone 2.
        let (mut spec, mut state) = c3_upgrading(UpgradeBatch::Zone);
        let by = UpgradeBatch::Zone;
        assert_eq!(batch_count(&spec, by), 2);
        assert_eq!(batch_nodes(&spec, by, 0), [1, 2]);
        assert_eq!(batch_nodes(&spec, by, 1), [3]);
        take(&spec, &mut state, by, UpgradeStep::Cordon);
        assert_eq!(draining(&spec, &state, 0, by), Some(vec![1, 2]));
        assert_eq!(state.node(3).maintenance, MaintenancePhase::Idle);
        let zone = spec.label_keys.iter().position(|k| k == "zone").unwrap();
        spec.label_keys[zone] = "rack".into();
        assert_eq!(
            batch_count(&spec, by),
            1,
            "nodes without zone labels share one zone"
        );
    }
}
