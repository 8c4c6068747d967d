//! The cluster autoscaler (kubernetes/autoscaler `cluster-autoscaler`, v1.33), under
//! `--semantics kubernetes`: it adds a node to a node group when pods are unschedulable and a
//! new node would take them, and removes a node whose pods fit elsewhere when it is little
//! used. Its node groups are [`ClusterAutoscalerSpec`]'s; the nodes it may add are slots of
//! the spec's node table whose Node does not exist yet ([`NodeStatus::Absent`]).
//!
//! Upstream one loop (`StaticAutoscaler.RunOnce`, `core/static_autoscaler.go`) every
//! `--scan-interval` (10 s) looks at the unschedulable pods and scales up
//! ([`scale_up`]), or else considers scale-down ([`scale_down`]). The model makes each thing
//! the loop may do a step of its own, taken in any order with the other controllers':
//! - [`ClusterAction::AutoscalerScaleUp`]: a node group grows (under
//!   `--balance-similar-node-groups`, it and the groups similar to it share the new nodes:
//!   [`balance`]); its new slots are upcoming nodes ([`NodeStatus::Provisioning`]), which the
//!   scale-up simulation counts as if they were there, so the same pods do not grow another
//!   group;
//! - [`ClusterAction::NodeRegisters`]: an upcoming node's instance has booted and its Node
//!   registers, ready, empty but for its DaemonSet pods (a timer: at any later point);
//! - where the input says provisioning may fail, [`ClusterAction::NodeProvisioningFails`]:
//!   an upcoming node has not registered within `--max-node-provision-time` (a timer too),
//!   so the autoscaler deletes its instance and backs its group off
//!   (`clusterstate/clusterstate.go`: `updateScaleRequests` registers the failed scale-up,
//!   `RegisterFailedScaleUp` backs the group off; `removeOldUnregisteredNodes` in
//!   `core/static_autoscaler.go` deletes the long-unregistered node); a backed-off group
//!   gives no scale-up option (`NodeGroupScaleUpSafety`) until
//!   [`ClusterAction::AutoscalerBackoffEnds`] (a timer: `--initial-node-group-backoff-duration`,
//!   5 minutes, passes at any later point);
//! - [`ClusterAction::AutoscalerNoScaleUp`]: pods are unschedulable and no node group can take
//!   them (`NotTriggerScaleUp`). With an autoscaler, a pod that fits no node is what a
//!   scale-up is for, so the scheduler's failed cycle is not what violates
//!   `pod_always_schedulable`: this step is, and only once the cluster is settled (no work
//!   queued for the scheduler, kubelet, deployment or node controllers, no node being added or
//!   removed), so a pod waiting for room that a terminating pod or an upcoming node is about
//!   to give is not reported. This also covers a scale-down that evicts a pod which then
//!   cannot be placed;
//! - [`ClusterAction::AutoscalerSoftTaints`]: the loop puts its soft taint
//!   `DeletionCandidateOfClusterAutoscaler:PreferNoSchedule` on the nodes it finds unneeded
//!   and takes it off the others ([`soft_taint`]), so that kube-scheduler prefers other
//!   nodes for new pods;
//! - [`ClusterAction::AutoscalerScaleDown`], [`ClusterAction::AutoscalerEviction`],
//!   [`ClusterAction::AutoscalerScaleDownFails`] and [`ClusterAction::AutoscalerDeletesNode`]:
//!   a node is tainted, its pods evicted one by one through the Eviction API, then, once they
//!   are gone, its Node is deleted; or the drain times out on a pod the API keeps refusing and
//!   the node stays ([`actuation`]). A loop that scaled up does not scale down: a scale-down
//!   is a step only where no scale-up is.
//!
//! Time, as for the other controllers' timeouts, has no clock: each of the autoscaler's delays
//! is a timer that may run out at any later step, unless what it waits for changes first
//! (an over-approximation of every timing). So the delays need no state:
//! - `--scale-down-unneeded-time` (10 minutes) and `--scale-down-unready-time` (20): a node
//!   that is a candidate ([`scale_down::candidates`]) may be removed at any later point while
//!   it stays one (`planner.go`, `unneeded.go` `RemovableAt`); the removal step is enabled
//!   wherever it is a candidate, and a node that stops being one is no longer removed;
//! - `--scale-down-delay-after-add` (10 minutes), `-after-delete` (the scan interval) and
//!   `-after-failure` (3 minutes; `isScaleDownInCooldown` in `core/static_autoscaler.go`)
//!   only hold a scale-down back until they run out, which may be at once;
//! - `--max-node-provision-time` and the backoffs (`--initial-node-group-backoff-duration`,
//!   growing to `--max-node-group-backoff-duration`) run out at any later step, so their
//!   lengths, and the backoff's growth, are no different to the model.
//!
//! So a scale-down may come while other controllers are at work (a deployment replacing pods,
//! a node failing), as it does when the delays happen to run out then: its plan is made on
//! the state as the autoscaler's loop sees it, pending pods hinted onto the nodes they fit
//! ([`scale_down::hinted`]), so a node that just registered for a pending pod is not found
//! empty before the scheduler binds the pod there.

pub mod actuation;
pub mod balance;
pub mod scale_down;
pub mod scale_up;
pub mod simulation;
pub mod soft_taint;

use crate::cluster::node_groups::fresh_node;
use crate::cluster::{
    ClusterAction, ClusterAutoscalerSpec, ClusterSpec, ClusterState, IntentKind, NodeStatus,
    Recorder,
};
use scale_up::ScaleUp;

/// Visits the autoscaler's enabled steps in `state`. Returns false when `visit` asked to stop.
pub fn for_each(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    let Some(autoscaler) = &spec.cluster_autoscaler else {
        return true;
    };
    for n in 1..=spec.nodes.len() {
        let node = n as u16;
        let status = state.node(n).status;
        let registers = status == NodeStatus::Provisioning;
        if registers && !visit(ClusterAction::NodeRegisters { node }) {
            return false;
        }
        let fails = registers && autoscaler.provisioning_may_fail;
        if fails && !visit(ClusterAction::NodeProvisioningFails { node }) {
            return false;
        }
        let backed_off = status == NodeStatus::BackedOff;
        if backed_off && !visit(ClusterAction::AutoscalerBackoffEnds { node }) {
            return false;
        }
        if !actuation::for_each_step(spec, state, n, visit) {
            return false;
        }
    }
    match scale_up::scale_up(spec, autoscaler, state) {
        ScaleUp::Options(options) => {
            return options.iter().all(|option| {
                visit(ClusterAction::AutoscalerScaleUp {
                    group: option.group as u8,
                    nodes: option.nodes as u8,
                })
            });
        }
        ScaleUp::Impossible(_)
            if settled(spec, state)
                && !reported(spec, state)
                && !visit(ClusterAction::AutoscalerNoScaleUp) =>
        {
            return false;
        }
        _ => {}
    }
    if !autoscaler.scale_down_enabled {
        return true;
    }
    let plan = scale_down::plan(spec, autoscaler, state);
    if soft_taint::due(spec, autoscaler, state, &plan.unneeded)
        && !visit(ClusterAction::AutoscalerSoftTaints)
    {
        return false;
    }
    plan.candidates
        .into_iter()
        .all(|n| visit(ClusterAction::AutoscalerScaleDown { node: n as u16 }))
}

/// Whether the cluster of `state` has nothing under way that could place a pending pod: no
/// work queued for the scheduler, kubelet, deployment or node controllers, no node being
/// added or removed, and no group backed off (its backoff ends, and it may scale up again).
fn settled(spec: &ClusterSpec, state: &ClusterState) -> bool {
    state.others_quiet()
        && (1..=spec.nodes.len()).all(|n| {
            let node = state.node(n);
            !matches!(
                node.status,
                NodeStatus::Provisioning | NodeStatus::BackedOff
            ) && !node.maintenance.removing()
        })
}

/// Whether `pod_always_schedulable` is already violated in `state`.
fn reported(spec: &ClusterSpec, state: &ClusterState) -> bool {
    spec.intents
        .iter()
        .position(|i| *i == IntentKind::PodAlwaysSchedulable)
        .is_some_and(|i| state.monitors().violated & (1 << i) != 0)
}

/// Takes the autoscaler's step `action` in `state`.
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    action: &ClusterAction,
    rec: &mut Recorder,
) {
    let Some(autoscaler) = &spec.cluster_autoscaler else {
        return;
    };
    match *action {
        ClusterAction::AutoscalerScaleUp { group, nodes } => {
            scale_up_step(spec, autoscaler, state, group as usize, nodes as usize, rec)
        }
        ClusterAction::NodeRegisters { node } => {
            let n = node as usize;
            *state.node_mut(n) = fresh_node(spec, n, NodeStatus::Ready);
            rec.log(Some("Cluster autoscaler"), || {
                format!("Node {n} has registered: ready")
            });
        }
        ClusterAction::NodeProvisioningFails { node } => {
            let n = node as usize;
            state.node_mut(n).status = NodeStatus::BackedOff;
            rec.log(Some("Cluster autoscaler"), || {
                format!(
                    "Node {n} did not register within --max-node-provision-time: deleted, \
                     node group {} backed off",
                    group_of(autoscaler, n)
                )
            });
        }
        ClusterAction::AutoscalerBackoffEnds { node } => {
            let n = node as usize;
            state.node_mut(n).status = NodeStatus::Absent;
            rec.log(Some("Cluster autoscaler"), || {
                format!(
                    "The backoff of node group {} after node {n} failed has ended",
                    group_of(autoscaler, n)
                )
            });
        }
        ClusterAction::AutoscalerNoScaleUp => {
            if rec.is_recording() {
                if let ScaleUp::Impossible(pods) = scale_up::scale_up(spec, autoscaler, state) {
                    for (pod, why) in pods {
                        rec.log(Some("Cluster autoscaler - no_scale_up"), || {
                            format!("Pod {pod} didn't trigger scale-up: {why}")
                        });
                    }
                }
            }
            state.violate_pod_always_schedulable(spec);
        }
        ClusterAction::AutoscalerSoftTaints => soft_taint::update(spec, autoscaler, state, rec),
        ClusterAction::AutoscalerScaleDown { node } => {
            actuation::start_removal(spec, state, node as usize, rec)
        }
        ClusterAction::AutoscalerEviction { pod } => actuation::evict_pod(state, pod as usize, rec),
        ClusterAction::AutoscalerScaleDownFails { node } => {
            actuation::fail(spec, state, node as usize, rec)
        }
        ClusterAction::AutoscalerDeletesNode { node } => {
            actuation::delete(spec, state, node as usize, rec)
        }
        _ => {}
    }
}

/// The name of the node group slot `n` belongs to, for traces.
fn group_of(autoscaler: &ClusterAutoscalerSpec, n: usize) -> &str {
    autoscaler
        .node_groups
        .iter()
        .find(|g| g.slots.contains(&n))
        .map_or("", |g| &g.name)
}

/// Grows node group `group` by `nodes` nodes, or under `--balance-similar-node-groups`
/// splits them between it and the groups similar to it ([`balance`]).
fn scale_up_step(
    spec: &ClusterSpec,
    autoscaler: &ClusterAutoscalerSpec,
    state: &mut ClusterState,
    group: usize,
    nodes: usize,
    rec: &mut Recorder,
) {
    let options = match (autoscaler.balance_similar || rec.is_recording())
        .then(|| scale_up::every_option(spec, autoscaler, state))
    {
        Some(ScaleUp::Options(options)) => options,
        _ => Vec::new(),
    };
    let shares = if autoscaler.balance_similar {
        let targets = balance::targets(spec, autoscaler, &options, group);
        balance::split(autoscaler, state, &targets, nodes)
    } else {
        vec![(group, nodes)]
    };
    let mut grown = Vec::new();
    for (g, nodes) in shares {
        let before = autoscaler.node_groups[g].target_size(state);
        let slots = scale_up::grow(autoscaler, state, g, nodes);
        grown.push((g, before, slots));
    }
    rec.log(Some("Cluster autoscaler - scale_up"), || {
        // The pods the option was for.
        let pods: Vec<String> = options
            .iter()
            .find(|o| o.group == group)
            .map(|o| o.pods.iter().map(|p| p.to_string()).collect())
            .unwrap_or_default();
        let groups: Vec<String> = grown
            .iter()
            .map(|(g, before, slots)| {
                let slots: Vec<String> = slots.iter().map(|n| n.to_string()).collect();
                format!(
                    "node group {} {before} -> {} (nodes [{}] provisioning)",
                    autoscaler.node_groups[*g].name,
                    before + slots.len(),
                    slots.join(", ")
                )
            })
            .collect();
        format!(
            "Scale-up: {} for pods [{}]",
            groups.join(", "),
            pods.join(", ")
        )
    });
}
