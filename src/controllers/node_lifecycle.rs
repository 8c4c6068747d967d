//! The node lifecycle controller under `--semantics kubernetes`: it puts the NoExecute
//! `node.kubernetes.io/unreachable` taint on nodes that are not ready, one node per step, as long
//! as their zone's state lets it, and takes the taint off nodes that are ready again
//! (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`). What the taint does to the
//! node's pods is the taint eviction controller's job ([`super::taint_eviction`]).
//!
//! What is modelled, function by function:
//! - `processTaintBaseEviction`: a node whose Ready condition is not true is added to its
//!   zone's tainting queue (`markNodeForTainting`); one that is ready again has the taint taken
//!   off at once (`markNodeAsReachable`), which cancels its pods' eviction timers.
//! - `doNoExecuteTaintingPass`: each zone's queue taints its nodes through a token-bucket rate
//!   limiter (`--node-eviction-rate`, 0.1 nodes a second). kivi has no clock for it: one
//!   [`ClusterAction::NodeLifecycle`] step taints one node, and every not-ready node of a zone
//!   whose limiter lets nodes through may be the next, so every order of the queue and every
//!   pace of the limiter is among the runs (an over-approximation of the queue's order, which
//!   is the order the nodes were seen not ready).
//! - `ComputeZoneState` and `setLimiterInZone`: a zone (its nodes' `topology.kubernetes.io/region`
//!   and `zone` labels, `nodetopology.GetZoneKey`; one zone when nodes have neither) is in
//!   FullDisruption when none of its nodes is ready, in PartialDisruption when more than 2
//!   are not ready and they are at least `--unhealthy-zone-threshold` (55 %) of it, Normal
//!   otherwise. Normal and FullDisruption zones taint at the normal rate (`HealthyQPSFunc`); a
//!   PartialDisruption zone of more than `--large-cluster-size-threshold` (50) nodes at the
//!   secondary rate, a smaller one not at all (`ReducedQPSFunc` returns 0).
//! - `handleDisruption`: when every zone is in FullDisruption (every node is not ready), the
//!   controller takes the taint off every node and stops tainting until some node is ready
//!   again; kivi does that in one step.
//!
//! The zone states are computed from the state as it is, where the controller computes them
//! every `--node-monitor-period` (5 s); the NoSchedule taint (`TaintNodesByCondition`, not
//! rate-limited) is on every node that is not ready, in the snapshot the scheduler reads
//! ([`crate::cluster::kube::of_model`]). The taints are `unreachable`, not `not-ready`: every
//! way the model takes a node down stops its kubelet
//! ([`crate::cluster::kube::of_model::NODE_DOWN_TAINT`]).

use crate::cluster::zones::zone_of_nodes;
use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, NodeStatus, Recorder};

/// `--unhealthy-zone-threshold`'s default: the share of not-ready nodes from which a zone with
/// more than two of them is partially disrupted.
pub const UNHEALTHY_ZONE_THRESHOLD: f32 = 0.55;
/// `--large-cluster-size-threshold`'s default: a partially disrupted zone of at most this many
/// nodes stops tainting.
pub const LARGE_CLUSTER_THRESHOLD: usize = 50;

/// A zone's state (`ZoneState` of the controller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneState {
    /// Few nodes are not ready: tainting at the normal rate.
    Normal,
    /// More than two nodes, and at least 55 %, are not ready.
    PartialDisruption,
    /// No node is ready.
    FullDisruption,
}

/// The state of a zone with `ready` ready and `not_ready` not-ready nodes
/// (`ComputeZoneState`).
pub fn zone_state(ready: usize, not_ready: usize) -> ZoneState {
    if ready == 0 && not_ready > 0 {
        ZoneState::FullDisruption
    } else if not_ready > 2
        && not_ready as f32 / (not_ready + ready) as f32 >= UNHEALTHY_ZONE_THRESHOLD
    {
        ZoneState::PartialDisruption
    } else {
        ZoneState::Normal
    }
}

/// Whether a zone of `size` nodes in `state` taints nodes (`setLimiterInZone`: a rate above 0).
pub fn zone_taints(state: ZoneState, size: usize) -> bool {
    match state {
        ZoneState::Normal | ZoneState::FullDisruption => true,
        ZoneState::PartialDisruption => size > LARGE_CLUSTER_THRESHOLD,
    }
}

/// The zones of a cluster in one state (`crate::cluster::zones`): per zone, its ready and
/// not-ready nodes.
pub struct Zones {
    /// Per node (index `n - 1`): the index of its zone in `counts`.
    zone_of: Vec<usize>,
    /// Per zone: (ready nodes, not-ready nodes).
    counts: Vec<(usize, usize)>,
}

impl Zones {
    /// The zones of `state`.
    pub fn of(spec: &ClusterSpec, state: &ClusterState) -> Self {
        let zone_of = zone_of_nodes(spec);
        let mut counts = vec![(0, 0); zone_of.iter().max().map_or(0, |z| z + 1)];
        for (i, &zone) in zone_of.iter().enumerate() {
            let status = state.node(i + 1).status;
            if status == NodeStatus::Ready {
                counts[zone].0 += 1;
            } else if status.is_down() {
                counts[zone].1 += 1;
            }
        }
        Zones { zone_of, counts }
    }

    /// The state of node `n`'s zone.
    pub fn state_of(&self, n: usize) -> ZoneState {
        let (ready, not_ready) = self.counts[self.zone_of[n - 1]];
        zone_state(ready, not_ready)
    }

    /// Whether node `n`'s zone taints nodes.
    pub fn taints(&self, n: usize) -> bool {
        let (ready, not_ready) = self.counts[self.zone_of[n - 1]];
        zone_taints(zone_state(ready, not_ready), ready + not_ready)
    }

    /// Whether every zone is in FullDisruption: the controller stops tainting and takes its
    /// taints off (`handleDisruption`).
    pub fn all_fully_disrupted(&self) -> bool {
        // A zone whose nodes are all a cluster autoscaler's absent slots has no Node: it is
        // no zone at all.
        let mut zones = self.counts.iter().filter(|&&counts| counts != (0, 0));
        zones.clone().next().is_some()
            && zones.all(|&(ready, not_ready)| {
                zone_state(ready, not_ready) == ZoneState::FullDisruption
            })
    }
}

/// Whether any node is not ready or tainted: the controller has nothing to do otherwise.
fn any_work(state: &ClusterState) -> bool {
    state
        .nodes()
        .iter()
        .any(|node| node.status.is_down() || node.no_execute_taint())
}

/// Visits the controller's enabled steps: under full disruption of every zone, one step that
/// takes every taint off (named by the first tainted node); otherwise one per node to taint or
/// untaint. Returns false when `visit` asked to stop.
pub fn for_each(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    if !any_work(state) {
        return true;
    }
    let zones = Zones::of(spec, state);
    if zones.all_fully_disrupted() {
        return match (1..=spec.nodes.len()).find(|&n| state.node(n).no_execute_taint()) {
            Some(n) => visit(ClusterAction::NodeLifecycle { node: n as u16 }),
            None => true,
        };
    }
    for n in 1..=spec.nodes.len() {
        let node = state.node(n);
        let untaint = node.no_execute_taint() && node.status == NodeStatus::Ready;
        let taint = !node.no_execute_taint() && node.status.is_down() && zones.taints(n);
        if (untaint || taint) && !visit(ClusterAction::NodeLifecycle { node: n as u16 }) {
            return false;
        }
    }
    true
}

/// The controller's step on node `n`: the taint goes on a node that is not ready and comes off
/// one that is ready again; when every zone is fully disrupted, it comes off every node.
pub fn run(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    let zones = Zones::of(spec, state);
    if zones.all_fully_disrupted() {
        rec.log(Some("nodeLifecycle"), || {
            "Every zone is fully disrupted: the unreachable NoExecute taints are taken off every \
             node and evictions stop"
                .to_string()
        });
        for node in state.nodes_mut() {
            node.set_no_execute_taint(false);
        }
        return;
    }
    let zone = zones.state_of(n);
    let node = state.node_mut(n);
    if node.status == NodeStatus::Ready {
        node.set_no_execute_taint(false);
        rec.log(Some("nodeLifecycle"), || {
            format!("Node {n} is ready again: its unreachable NoExecute taint is taken off")
        });
    } else {
        node.set_no_execute_taint(true);
        rec.log(Some("nodeLifecycle"), || {
            format!(
                "Node {n} is not ready: tainted node.kubernetes.io/unreachable:NoExecute (zone \
                 {zone:?})"
            )
        });
        super::taint_eviction::delete_untolerating(spec, state, n, rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ComputeZoneState`'s cases, as its table test (`TestComputeZoneState` in
    /// `node_lifecycle_controller_test.go`) reads them.
    #[test]
    fn zone_states_follow_compute_zone_state() {
        assert_eq!(zone_state(3, 0), ZoneState::Normal);
        assert_eq!(zone_state(0, 1), ZoneState::FullDisruption);
        assert_eq!(zone_state(0, 4), ZoneState::FullDisruption);
        assert_eq!(
            zone_state(1, 2),
            ZoneState::Normal,
            "two not ready are never partial"
        );
        assert_eq!(
            zone_state(2, 3),
            ZoneState::PartialDisruption,
            "3/5 = 60 % >= 55 %"
        );
        assert_eq!(zone_state(3, 3), ZoneState::Normal, "3/6 = 50 % < 55 %");
        assert_eq!(zone_state(0, 0), ZoneState::Normal);
    }

    /// `ReducedQPSFunc`: a small partially disrupted zone stops; `HealthyQPSFunc`: a fully
    /// disrupted one taints at the normal rate.
    #[test]
    fn small_partially_disrupted_zones_stop_tainting() {
        assert!(!zone_taints(ZoneState::PartialDisruption, 5));
        assert!(!zone_taints(ZoneState::PartialDisruption, 50));
        assert!(zone_taints(ZoneState::PartialDisruption, 51));
        assert!(zone_taints(ZoneState::FullDisruption, 2));
        assert!(zone_taints(ZoneState::Normal, 2));
    }
}
