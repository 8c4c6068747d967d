//! Node maintenance (Kivi's `maintenance` and `maintenanceNode`): nodes are drained in id order,
//! at most `p` at a time, and each is put back once the cluster settles or its wait time has
//! passed.
//!
//! The event walks the nodes in id order and waits at each until it is ready, not yet
//! maintained, and fewer than `p` nodes are in maintenance; it then picks the node and moves
//! on within the same step, so up to `p` nodes are picked together. A picked node is drained in
//! a later step of its own. It comes back when the HPA, scheduler, kubelet, deployment and node
//! controllers are all idle, or once [`MAINTENANCE_WAIT_TIME`] has passed since it went down;
//! coming back moves the clock to at least the end of that wait, as Kivi does.
//!
//! How a node is drained depends on the semantics:
//! - `--semantics kivi` (Kivi's `maintenanceNode`): the drain takes the node down at once (not
//!   ready, queued for the node controller, which deletes every pod on it in its next step).
//!   No PodDisruptionBudget is asked.
//! - `--semantics kubernetes`: Kubernetes has no maintenance controller; what takes a node out
//!   for maintenance is an operator or a tool running `kubectl drain`, stopping the machine
//!   once the drain is done, and `kubectl uncordon` when it is back (the procedure of
//!   "Safely Drain a Node" in the Kubernetes documentation; kured and managed node pools do
//!   the same). So the drain cordons the node ([`MaintenancePhase::Draining`] while the node
//!   is still ready: `spec.unschedulable`), its pods are evicted through the Eviction API as a
//!   `drain` event's are ([`super::drain`]: one [`ClusterAction::DrainEviction`] per pod the
//!   API allows, refused ones retried in later states, so PodDisruptionBudgets are honoured and
//!   `drain_completes` reports a maintenance that never gets its node empty), and once no pod
//!   is left on the node it stops ([`ClusterAction::MaintenanceStop`]: not ready). Its wait
//!   starts then; its return makes it ready and uncordons it in one step.
//!
//! With a cluster autoscaler (`--semantics kubernetes`), the walk passes the slots of its node
//! groups that have no Node when it reaches them (a node added later comes up new); the
//! autoscaler may remove a node at any point of its maintenance, as it may any node (its
//! eligibility checks read no cordon): the operator's drain and the autoscaler's race over
//! the node's pods, a node the autoscaler deletes does not come back, and one whose removal
//! fails goes on with its maintenance ([`MaintenancePhase::with_removal`]).
//!
//! Ids and ties: Kubernetes has no maintenance controller; an operator or an upgrade tool
//! (`kubectl drain`, a managed node-pool upgrade) picks the order, often any order. kivi walks
//! the nodes in id order under both `--tie-break` settings, as Kivi does, so the order is one
//! fixed choice rather than every choice, and symmetry keeps every node of a model with a
//! maintenance event apart, permuting its pods only ([`crate::model::symmetry`]).

use crate::cluster::timing::MAINTENANCE_WAIT_TIME;
use crate::cluster::{
    ClusterAction, ClusterSpec, ClusterState, MaintenancePhase, NodeStatus, Queue, Recorder,
    Semantics,
};

/// The nodes picked or down for maintenance (a node a `drain` event cordoned is not).
fn in_maintenance(state: &ClusterState) -> usize {
    state
        .nodes()
        .iter()
        .filter(|n| {
            matches!(
                n.maintenance.without_removal(),
                MaintenancePhase::Picked | MaintenancePhase::Draining
            )
        })
        .count()
}

/// Whether the event walking the nodes passes node `n` without picking it: a slot of a
/// cluster autoscaler's node group with no Node (not added yet, or removed). A node the
/// autoscaler adds after the walk has passed it comes up new and is not maintained.
fn passes(state: &ClusterState, n: usize) -> bool {
    !state.node(n).status.exists()
}

/// Whether node `n` may be picked now (a node the cluster autoscaler is removing is waited
/// for: it is either deleted, and passed, or kept, and picked).
fn can_pick(state: &ClusterState, n: usize, parallel: u8) -> bool {
    let node = state.node(n);
    node.status == NodeStatus::Ready
        && !node.maintained
        && node.maintenance == MaintenancePhase::Idle
        && in_maintenance(state) < parallel as usize
}

/// Visits maintenance event `event`'s pick when the node it waits at can be picked. Returns
/// false when `visit` asked to stop.
pub fn for_each_pick(
    spec: &ClusterSpec,
    state: &ClusterState,
    event: usize,
    parallel: u8,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    let next = state.events().progress[event] as usize + 1;
    if next > spec.nodes.len() || !(passes(state, next) || can_pick(state, next, parallel)) {
        return true;
    }
    visit(ClusterAction::Maintenance { event: event as u8 })
}

/// Visits every picked node's drain, every drained node's stop and every stopped node's return
/// that is enabled. Returns false when `visit` asked to stop.
pub fn for_each_node_step(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    if !spec.maintenance_enabled() {
        return true;
    }
    for n in 1..=spec.nodes.len() {
        let node = n as u16;
        let action = match state.node(n).maintenance.without_removal() {
            MaintenancePhase::Picked => ClusterAction::MaintenanceStart { node },
            MaintenancePhase::Draining if state.node(n).status == NodeStatus::Ready => {
                if state.pods_on(&[n]).next().is_some() {
                    continue;
                }
                ClusterAction::MaintenanceStop { node }
            }
            MaintenancePhase::Draining => {
                if state.node(n).maintenance_elapsed < MAINTENANCE_WAIT_TIME && !state.is_quiet() {
                    continue;
                }
                ClusterAction::MaintenanceEnd { node }
            }
            _ => continue,
        };
        if !visit(action) {
            return false;
        }
    }
    true
}

/// The nodes whose pods a maintenance drains through the Eviction API in `state`: under
/// `--semantics kubernetes`, those being drained and still ready (stopped nodes hold no pod
/// to evict), in id order; none under `--semantics kivi`, whose drain deletes pods directly.
pub fn evicting_nodes(spec: &ClusterSpec, state: &ClusterState) -> Vec<usize> {
    if spec.semantics != Semantics::Kubernetes {
        return Vec::new();
    }
    (1..=spec.nodes.len())
        .filter(|&n| {
            let node = state.node(n);
            node.maintenance.without_removal() == MaintenancePhase::Draining
                && node.status == NodeStatus::Ready
        })
        .collect()
}

/// Maintenance event `event` picks nodes from the one it waits at, in id order, for as long as
/// they can be picked or passed; it is done once it has passed the last node.
pub fn pick(spec: &ClusterSpec, state: &mut ClusterState, event: usize, parallel: u8) {
    while (state.events().progress[event] as usize) < spec.nodes.len() {
        let n = state.events().progress[event] as usize + 1;
        if !passes(state, n) {
            if !can_pick(state, n, parallel) {
                return;
            }
            state.node_mut(n).maintenance = MaintenancePhase::Picked;
        }
        state.events_mut().progress[event] += 1;
    }
    state.events_mut().done |= 1 << event;
}

/// Node `n`'s drain starts. Under `--semantics kivi` it turns not ready and is queued for the
/// node controller; under `--semantics kubernetes` it is cordoned and stays ready while its pods
/// are evicted.
pub fn start(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    let kubernetes = spec.semantics == Semantics::Kubernetes;
    rec.log(Some("maintenanceNode"), || {
        if kubernetes {
            format!("Starting maintenance for node {n}: kubectl drain, node/node-{n} cordoned")
        } else {
            format!("Starting maintenance for node {n}")
        }
    });
    let node = state.node_mut(n);
    node.maintenance = node.maintenance.moved_to(MaintenancePhase::Draining);
    node.maintenance_elapsed = 0;
    if kubernetes {
        return;
    }
    node.status = NodeStatus::NotReady;
    state.enqueue(Queue::Node, n);
}

/// Node `n`, drained through the Eviction API, stops for its maintenance: not ready, its wait
/// starting now.
pub fn stop(state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    let node = state.node_mut(n);
    node.status = NodeStatus::NotReady;
    node.maintenance_elapsed = 0;
    rec.log(Some("maintenanceNode"), || {
        format!("Node {n} is drained and stops for its maintenance")
    });
}

/// Node `n`'s maintenance ends: it is ready and maintained, and the clock has moved at least to
/// the end of its wait.
pub fn end(spec: &ClusterSpec, state: &mut ClusterState, n: usize, rec: &mut Recorder) {
    let elapsed = state.node(n).maintenance_elapsed;
    let node = state.node_mut(n);
    node.status = NodeStatus::Ready;
    node.maintained = true;
    node.maintenance = node.maintenance.moved_to(MaintenancePhase::Idle);
    node.maintenance_elapsed = 0;
    rec.log(Some("maintenanceNode"), || {
        format!("End maintenance for node {n}")
    });
    state.advance(
        spec,
        (MAINTENANCE_WAIT_TIME - elapsed.min(MAINTENANCE_WAIT_TIME)) as u32,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::{cases, Fixture};
    use crate::cluster::EventKind;

    /// C6 with maintenance of `parallel` nodes at a time, started.
    fn with_parallel(parallel: u8) -> Fixture {
        let mut cluster = cases::c6();
        cluster.spec.events[0].kind = EventKind::Maintenance { parallel };
        cluster.state.events_mut().after_stable_started = true;
        cluster
    }

    fn steps(spec: &ClusterSpec, state: &ClusterState) -> Vec<ClusterAction> {
        let mut out = Vec::new();
        for_each_node_step(spec, state, &mut |a| {
            out.push(a);
            true
        });
        out
    }

    #[test]
    fn picks_up_to_p_nodes_in_order_and_waits_for_one_to_return() {
        let cluster = with_parallel(2);
        let spec = &cluster.spec;
        let mut state = cluster.state.clone();
        pick(spec, &mut state, 0, 2);
        let phases: Vec<_> = (1..=3).map(|n| state.node(n).maintenance).collect();
        assert_eq!(
            phases,
            [
                MaintenancePhase::Picked,
                MaintenancePhase::Picked,
                MaintenancePhase::Idle
            ]
        );
        assert_eq!({ state.events().progress[0] }, 2, "waits at node 3");
        assert_eq!({ state.events().done }, 0);
        let mut visited = Vec::new();
        for_each_pick(spec, &state, 0, 2, &mut |a| {
            visited.push(a);
            true
        });
        assert!(visited.is_empty(), "two nodes are in maintenance");

        start(spec, &mut state, 1, &mut Recorder::off());
        assert_eq!(state.node(1).status, NodeStatus::NotReady);
        assert_eq!(state.pending(Queue::Node), [1]);
        assert_eq!(
            steps(spec, &state),
            [ClusterAction::MaintenanceStart { node: 2 }],
            "node 1 waits for the cluster to settle"
        );
        state.advance(spec, 700);
        assert_eq!({ state.node(1).maintenance_elapsed }, MAINTENANCE_WAIT_TIME);
        assert!(steps(spec, &state).contains(&ClusterAction::MaintenanceEnd { node: 1 }));
        end(spec, &mut state, 1, &mut Recorder::off());
        assert_eq!(state.node(1).status, NodeStatus::Ready);
        assert!(state.node(1).maintained);
        pick(spec, &mut state, 0, 2);
        assert_eq!(state.node(3).maintenance, MaintenancePhase::Picked);
        assert_eq!({ state.events().done }, 1, "every node has been passed");
    }

    #[test]
    fn returning_early_moves_the_clock_to_the_end_of_the_wait() {
        let cluster = with_parallel(1);
        let spec = &cluster.spec;
        let mut state = cluster.state.clone();
        pick(spec, &mut state, 0, 1);
        start(spec, &mut state, 1, &mut Recorder::off());
        state.advance(spec, 10);
        assert_eq!({ state.node(1).maintenance_elapsed }, 10);
        state.dequeue(Queue::Node);
        assert!(state.is_quiet());
        assert_eq!(
            steps(spec, &state),
            [ClusterAction::MaintenanceEnd { node: 1 }]
        );
        let before = state.clone();
        end(spec, &mut state, 1, &mut Recorder::off());
        assert_eq!(state.node(1).maintenance, MaintenancePhase::Idle);
        let mut expected = before;
        expected.advance(spec, (MAINTENANCE_WAIT_TIME - 10) as u32);
        assert_eq!(state.clock(), expected.clock());
    }

    #[test]
    fn under_kubernetes_the_node_is_drained_through_the_eviction_api_then_stopped() {
        use crate::cluster::kube::IntOrPercent;
        use crate::cluster::spec::DisruptionBudget;
        use crate::events::drain::{self, DrainProgress};
        let mut cluster = with_parallel(1);
        cluster.spec.semantics = Semantics::Kubernetes;
        let spec = &cluster.spec;
        let mut state = cluster.state.clone();
        pick(spec, &mut state, 0, 1);
        start(spec, &mut state, 1, &mut Recorder::off());
        assert_eq!(
            state.node(1).status,
            NodeStatus::Ready,
            "cordoned, still up"
        );
        assert_eq!(state.node(1).maintenance, MaintenancePhase::Draining);
        assert!(
            state.queue_is_empty(Queue::Node),
            "the node controller has nothing to do"
        );
        let on_node: Vec<usize> = state.pods_on(&[1]).collect();
        assert!(!on_node.is_empty());
        assert_eq!(evicting_nodes(spec, &state), [1]);
        assert!(steps(spec, &state).is_empty(), "pods are left: no stop yet");

        let mut evictions = Vec::new();
        drain::for_each_eviction(spec, &state, &mut |a| {
            evictions.push(a);
            true
        });
        let expected: Vec<_> = on_node
            .iter()
            .map(|&pod| ClusterAction::DrainEviction {
                event: 0,
                pod: pod as u32,
            })
            .collect();
        assert_eq!(evictions, expected);

        // A budget that allows no disruption refuses every eviction: the drain is blocked.
        let mut budgeted = spec.clone();
        let deployment = state.pod(on_node[0]).deployment;
        let running = (1..=state.pods().len())
            .filter(|&p| state.pod(p).deployment == deployment)
            .filter(|&p| state.pod(p).phase == crate::cluster::PodPhase::Running)
            .count();
        budgeted.pdbs = vec![DisruptionBudget {
            name: "app".into(),
            namespace: "default".into(),
            deployments: vec![deployment],
            pods: Vec::new(),
            min_available: Some(IntOrPercent::Int(running as i32)),
            max_unavailable: None,
        }];
        assert_eq!(
            drain::progress(&budgeted, &state, 0),
            DrainProgress::Blocked
        );

        // Once its pods are gone, the node stops; its wait starts then.
        state.advance(spec, 30);
        for &pod in &on_node {
            state.pod_mut(pod).phase = crate::cluster::PodPhase::Idle;
        }
        assert_eq!(drain::progress(spec, &state, 0), DrainProgress::Complete);
        assert_eq!(
            steps(spec, &state),
            [ClusterAction::MaintenanceStop { node: 1 }]
        );
        stop(&mut state, 1, &mut Recorder::off());
        assert_eq!(state.node(1).status, NodeStatus::NotReady);
        assert_eq!({ state.node(1).maintenance_elapsed }, 0);
        assert!(evicting_nodes(spec, &state).is_empty());
        assert_eq!(
            steps(spec, &state),
            [ClusterAction::MaintenanceEnd { node: 1 }],
            "the cluster is quiet"
        );
    }
}
