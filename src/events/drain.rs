//! `kubectl drain` as a user event (`drain`, `--semantics kubernetes` only): cordon the node,
//! evict every pod the drain may delete through the Eviction API, retry the refused ones,
//! and finish once none is left on the node (k8s.io/kubectl/pkg/drain).
//!
//! - Cordon: the event's first step marks the node `spec.unschedulable`
//!   (`RunCordonOrUncordon`, `pkg/drain/default.go`): [`MaintenancePhase::Cordoned`], which
//!   kube-scheduler's NodeUnschedulable filter reads ([`crate::cluster::kube::of_model`]).
//!   The node stays ready and keeps running its pods until they are evicted; it stays
//!   cordoned after the drain (uncordoning is the operator's next command).
//! - Which pods: `GetPodsForDeletion` (`pkg/drain/drain.go`, filters in `pkg/drain/filters.go`)
//!   lists the node's pods; the model has no mirror pods or local storage, and its DaemonSet
//!   pods (`crate::controllers::daemon_set`) are not among the pods the drain lists, as
//!   `--ignore-daemonsets` skips them (`daemonSetFilter`), so of its filters only
//!   `unreplicatedFilter` applies: a pod no controller owns (a bare pod of
//!   the input) is refused without `--force`. kubectl then stops with that error and leaves
//!   the node cordoned and its pods in place; the model leaves such a pod on the node and the
//!   drain never ends, which is the same answer for `drain_completes`. With `--force`
//!   (`{"force": true}` in the event's `para`) such a pod is evicted like the others, through
//!   the Eviction API, and nothing replaces it. Pods are listed anew
//!   in every state rather than once (a pod bound to the cordoned node later, by a template's
//!   `nodeName`, is evicted too; kubectl would not see it).
//! - Evictions: `evictPods` (`pkg/drain/drain.go`) evicts every listed pod concurrently, one
//!   goroutine each, and retries a pod whose eviction is refused with 429 (a
//!   PodDisruptionBudget allows no disruption) every 5 s until `--timeout` (none by default:
//!   forever). The model makes each eviction the API allows its own step
//!   ([`ClusterAction::DrainEviction`], answered by [`crate::cluster::kube::eviction::evict`]),
//!   one pod per step, each allowed pod a successor of its own: kubectl's goroutines race, so
//!   any order of the allowed evictions, interleaved with the ReplicaSet controller, the
//!   scheduler and the kubelet replacing the evicted pods, is a run of the real drain, and one
//!   pod per step keeps every such interleaving (a step evicting several pods at once would
//!   be one of them). A refused eviction changes nothing, so it is not a step: the retry is
//!   the same eviction taken in a later state where the budget allows it. An evicted pod is
//!   terminating and queued for the kubelet ([`ClusterState::mark_for_deletion`]), as the
//!   descheduler's evictions are; its ReplicaSet replaces it on another node. With
//!   `--disable-eviction` (`{"disableEviction": true}`) kubectl deletes the pods instead
//!   (`deletePods`): nothing is refused, the PodDisruptionBudgets are bypassed, and
//!   `pdb_never_violated` reports a deletion that takes a budget below its healthy count.
//! - Done: `waitForDelete` waits until every evicted pod is gone; the drain is complete once
//!   no pod is left on the node ([`DrainProgress::Complete`]), terminating ones included.
//!
//! A rolling node upgrade drains each of its batches the same way ([`super::node_upgrade`]), and
//! so does a `maintenance` event under `--semantics kubernetes` ([`super::maintenance`]): their
//! evictions, progress and refusals are this module's, over the batch's or the maintained
//! nodes.

use super::{maintenance, node_upgrade};
use crate::cluster::kube::eviction::{evict, EvictionAnswer};
use crate::cluster::{
    ClusterAction, ClusterSpec, ClusterState, DrainOptions, EventKind, MaintenancePhase, PodPhase,
    Recorder, Semantics,
};

/// Where a drain event stands in a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrainProgress {
    /// Its node is not cordoned yet.
    NotStarted,
    /// Some pod on its node may be evicted now, or is terminating.
    Evicting,
    /// Pods are left on its node, none terminating, and the Eviction API refuses every one
    /// of them (or the drain refuses a pod no controller owns): kubectl retries.
    Blocked,
    /// No pod is left on its node.
    Complete,
}

/// The nodes event `event` drains in `state`: a started `drain`'s node, an upgrade's batch
/// while it is cordoned and not yet stopped ([`super::node_upgrade::draining`]), the nodes
/// the first `maintenance` event's drains are evicting under kubernetes
/// ([`super::maintenance::evicting_nodes`]; later maintenance events share them, so only the
/// first one lists them); otherwise where the event stands ([`DrainProgress::NotStarted`]
/// before its first cordon, [`DrainProgress::Complete`] between an upgrade's drains, after
/// them, and for every other event).
fn drained_nodes(
    spec: &ClusterSpec,
    state: &ClusterState,
    event: usize,
) -> Result<Vec<usize>, DrainProgress> {
    let started = state.events().done & (1 << event) != 0;
    match spec.events.get(event).map(|e| &e.kind) {
        Some(&EventKind::Drain { node, .. }) if started => Ok(vec![node as usize]),
        Some(EventKind::Drain { .. }) => Err(DrainProgress::NotStarted),
        Some(&EventKind::Upgrade { by }) => node_upgrade::draining(spec, state, event, by).ok_or(
            if node_upgrade::not_started(state, event) {
                DrainProgress::NotStarted
            } else {
                DrainProgress::Complete
            },
        ),
        Some(EventKind::Maintenance { .. }) if first_maintenance(spec) == Some(event) => {
            Ok(maintenance::evicting_nodes(spec, state))
        }
        _ => Err(DrainProgress::Complete),
    }
}

/// The index of `spec`'s first `maintenance` event, if it has one.
fn first_maintenance(spec: &ClusterSpec) -> Option<usize> {
    spec.events
        .iter()
        .position(|e| matches!(e.kind, EventKind::Maintenance { .. }))
}

/// The kubectl options of event `event`'s drains: a `drain` event's own, kubectl's defaults
/// for an upgrade's and a maintenance's.
fn options(spec: &ClusterSpec, event: usize) -> DrainOptions {
    match spec.events.get(event).map(|e| &e.kind) {
        Some(&EventKind::Drain { options, .. }) => options,
        _ => DrainOptions::default(),
    }
}

/// Whether a drain with `options` may delete pod `pod` of `state` now: a controller owns it
/// (or `--force`), it is not already terminating, and the Eviction API allows it (or
/// `--disable-eviction` deletes it without asking: `deletePods` in `pkg/drain/drain.go`).
fn may_evict(spec: &ClusterSpec, state: &ClusterState, options: DrainOptions, pod: usize) -> bool {
    let record = state.pod(pod);
    (record.owned || options.force)
        && record.phase != PodPhase::Terminating
        && (options.disable_eviction || evict(spec, state, pod) == EvictionAnswer::Evicted)
}

/// Where the drain of event `event` (a `drain`, or an upgrade's current batch) stands in
/// `state`.
pub fn progress(spec: &ClusterSpec, state: &ClusterState, event: usize) -> DrainProgress {
    let nodes = match drained_nodes(spec, state, event) {
        Ok(nodes) => nodes,
        Err(progress) => return progress,
    };
    let options = options(spec, event);
    let mut left = false;
    for pod in state.pods_on(&nodes) {
        left = true;
        if state.pod(pod).phase == PodPhase::Terminating || may_evict(spec, state, options, pod) {
            return DrainProgress::Evicting;
        }
    }
    if left {
        DrainProgress::Blocked
    } else {
        DrainProgress::Complete
    }
}

/// Whether some drain of `spec` is blocked in `state` ([`DrainProgress::Blocked`]).
pub fn any_blocked(spec: &ClusterSpec, state: &ClusterState) -> bool {
    (0..spec.events.len()).any(|event| progress(spec, state, event) == DrainProgress::Blocked)
}

/// Why each pod left on a blocked drain's node stays, in kubectl's and the API server's words.
pub fn refusals(spec: &ClusterSpec, state: &ClusterState) -> Vec<String> {
    let mut lines = Vec::new();
    for event in 0..spec.events.len() {
        if progress(spec, state, event) != DrainProgress::Blocked {
            continue;
        }
        let Ok(nodes) = drained_nodes(spec, state, event) else {
            continue;
        };
        let options = options(spec, event);
        for pod in state.pods_on(&nodes) {
            let node = state.pod(pod).loc;
            let why = if !state.pod(pod).owned && !options.force {
                "cannot delete Pods that declare no controller (use --force to override)"
                    .to_string()
            } else if options.disable_eviction {
                continue;
            } else {
                match evict(spec, state, pod).refusal(spec) {
                    Some(why) => why,
                    None => continue,
                }
            };
            lines.push(format!("node {node}: pod {pod}: {why}"));
        }
    }
    lines
}

/// Visits drain event `event`'s cordon, under `--semantics kubernetes` only (Kivi's scheduler
/// reads no cordon). Returns false when `visit` asked to stop.
pub fn for_each_cordon(
    spec: &ClusterSpec,
    event: usize,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    spec.semantics != Semantics::Kubernetes || visit(ClusterAction::Drain { event: event as u8 })
}

/// Visits every eviction a started drain (or an upgrade's or a maintenance's drain) may make in
/// `state`, by event and pod id. Returns false when `visit` asked to stop. Under `--semantics
/// kivi` there is none (a `drain` and an `upgrade` are refused there, and Kivi's maintenance
/// deletes pods without the Eviction API), and the events are not looked at: this runs in
/// every state.
pub fn for_each_eviction(
    spec: &ClusterSpec,
    state: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    if spec.semantics != Semantics::Kubernetes {
        return true;
    }
    for event in 0..spec.events.len() {
        let Ok(nodes) = drained_nodes(spec, state, event) else {
            continue;
        };
        let options = options(spec, event);
        for pod in state.pods_on(&nodes) {
            if may_evict(spec, state, options, pod)
                && !visit(ClusterAction::DrainEviction {
                    event: event as u8,
                    pod: pod as u32,
                })
            {
                return false;
            }
        }
    }
    true
}

/// Drain event `event` cordons its node. A node of a cluster autoscaler's group may have no
/// Node when the drain comes (not added yet, or removed): kubectl stops at once (`NotFound`),
/// and the drain has nothing to do. A node the autoscaler is removing is cordoned under its
/// removal, and stays cordoned if the removal fails ([`MaintenancePhase::with_removal`]). A
/// node another operator's procedure holds (picked or drained for maintenance, upgraded)
/// stays in its hands: the drain evicts its pods, and its phase is that procedure's.
pub fn cordon(spec: &ClusterSpec, state: &mut ClusterState, event: usize, rec: &mut Recorder) {
    state.events_mut().done |= 1 << event;
    let EventKind::Drain { node, .. } = spec.events[event].kind else {
        return;
    };
    let node = node as usize;
    let record = state.node_mut(node);
    if !record.status.exists() {
        rec.log(Some("kubectl drain"), || {
            format!("Error from server (NotFound): nodes \"node-{node}\" not found")
        });
        return;
    }
    if record.maintenance.without_removal() == MaintenancePhase::Idle {
        record.maintenance = record.maintenance.moved_to(MaintenancePhase::Cordoned);
    }
    rec.log(Some("kubectl drain"), || {
        format!("node/node-{node} cordoned")
    });
}

/// Drain event `event` evicts pod `pod` (deletes it, with `--disable-eviction`): it is
/// terminating and queued for the kubelet.
pub fn evict_pod(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    event: usize,
    pod: usize,
    rec: &mut Recorder,
) {
    let deployment = state.pod(pod).deployment as usize;
    state.mark_for_deletion(deployment, pod);
    let how = if options(spec, event).disable_eviction {
        "deleted"
    } else {
        "evicted"
    };
    rec.log(Some("kubectl drain"), || format!("pod/pod-{pod} {how}"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;
    use crate::cluster::kube::IntOrPercent;
    use crate::cluster::spec::DisruptionBudget;
    use crate::cluster::EventSpec;

    /// C3 under kubernetes with a drain of node 1 (two of the five pods) and a budget of
    /// `min_available` for deployment 1.
    fn c3_draining_node_1(min_available: i32) -> (ClusterSpec, ClusterState) {
        c3_draining_node_1_with(min_available, DrainOptions::default())
    }

    /// [`c3_draining_node_1`] with kubectl's `options`.
    fn c3_draining_node_1_with(
        min_available: i32,
        options: DrainOptions,
    ) -> (ClusterSpec, ClusterState) {
        let cluster = cases::c3();
        let mut spec = cluster.spec.clone();
        spec.semantics = Semantics::Kubernetes;
        spec.events = vec![EventSpec {
            kind: EventKind::Drain { node: 1, options },
            after_stable: false,
            first: false,
        }];
        spec.pdbs = vec![DisruptionBudget {
            name: "app".into(),
            namespace: "default".into(),
            deployments: vec![1],
            pods: Vec::new(),
            min_available: Some(IntOrPercent::Int(min_available)),
            max_unavailable: None,
        }];
        (spec, cluster.state.clone())
    }

    fn evictions(spec: &ClusterSpec, state: &ClusterState) -> Vec<ClusterAction> {
        let mut out = Vec::new();
        for_each_eviction(spec, state, &mut |a| {
            out.push(a);
            true
        });
        out
    }

    #[test]
    fn a_drain_cordons_then_evicts_each_allowed_pod_as_a_step_of_its_own() {
        let (spec, mut state) = c3_draining_node_1(3);
        assert_eq!(progress(&spec, &state, 0), DrainProgress::NotStarted);
        assert!(evictions(&spec, &state).is_empty(), "not cordoned yet");
        cordon(&spec, &mut state, 0, &mut Recorder::off());
        assert_eq!(state.node(1).maintenance, MaintenancePhase::Cordoned);
        // 5 healthy, 3 required: 2 disruptions allowed, one step per pod on node 1.
        let on_node_1: Vec<usize> = state.pods_on(&[1]).collect();
        assert_eq!(on_node_1.len(), 2);
        assert_eq!(
            evictions(&spec, &state),
            on_node_1
                .iter()
                .map(|&p| ClusterAction::DrainEviction {
                    event: 0,
                    pod: p as u32
                })
                .collect::<Vec<_>>()
        );
        evict_pod(&spec, &mut state, 0, on_node_1[0], &mut Recorder::off());
        assert_eq!(state.pod(on_node_1[0]).phase, PodPhase::Terminating);
        assert_eq!(progress(&spec, &state, 0), DrainProgress::Evicting);
    }

    #[test]
    fn a_refused_eviction_is_no_step_and_blocks_the_drain_until_the_budget_allows_it() {
        // minAvailable 5 of 5: every eviction gets a 429 (evictPods retries it every 5 s).
        let (spec, mut state) = c3_draining_node_1(5);
        cordon(&spec, &mut state, 0, &mut Recorder::off());
        assert!(evictions(&spec, &state).is_empty());
        assert_eq!(progress(&spec, &state, 0), DrainProgress::Blocked);
        let why = refusals(&spec, &state);
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(
            why[0].contains("Cannot evict pod as it would violate the pod's disruption budget"),
            "{why:?}"
        );
    }

    #[test]
    fn an_unreplicated_pod_is_never_evicted_without_force() {
        let (spec, mut state) = c3_draining_node_1(0);
        cordon(&spec, &mut state, 0, &mut Recorder::off());
        let pods: Vec<usize> = state.pods_on(&[1]).collect();
        state.pod_mut(pods[0]).owned = false;
        let offered = evictions(&spec, &state);
        assert_eq!(
            offered,
            [ClusterAction::DrainEviction {
                event: 0,
                pod: pods[1] as u32
            }]
        );
        evict_pod(&spec, &mut state, 0, pods[1], &mut Recorder::off());
        state.pod_mut(pods[1]).phase = PodPhase::Idle;
        assert_eq!(progress(&spec, &state, 0), DrainProgress::Blocked);
        assert!(refusals(&spec, &state)[0].contains("declare no controller"));
    }

    #[test]
    fn force_evicts_an_unreplicated_pod_too() {
        let force = DrainOptions {
            force: true,
            ..DrainOptions::default()
        };
        let (spec, mut state) = c3_draining_node_1_with(0, force);
        cordon(&spec, &mut state, 0, &mut Recorder::off());
        let pods: Vec<usize> = state.pods_on(&[1]).collect();
        state.pod_mut(pods[0]).owned = false;
        assert_eq!(evictions(&spec, &state).len(), 2);
        evict_pod(&spec, &mut state, 0, pods[0], &mut Recorder::off());
        assert_eq!(state.pod(pods[0]).phase, PodPhase::Terminating);
    }

    #[test]
    fn disable_eviction_deletes_what_the_budget_would_refuse() {
        // minAvailable 5 of 5 refuses every eviction (above); a deletion asks no budget.
        let delete = DrainOptions {
            disable_eviction: true,
            ..DrainOptions::default()
        };
        let (spec, mut state) = c3_draining_node_1_with(5, delete);
        cordon(&spec, &mut state, 0, &mut Recorder::off());
        assert_eq!(evictions(&spec, &state).len(), 2);
        assert_eq!(progress(&spec, &state, 0), DrainProgress::Evicting);
        assert!(refusals(&spec, &state).is_empty());
        let mut rec = Recorder::on();
        let pod = state.pods_on(&[1]).next().unwrap();
        evict_pod(&spec, &mut state, 0, pod, &mut rec);
        let deleted = format!("pod/pod-{pod} deleted");
        assert!(rec.into_lines().iter().any(|l| l.message == deleted));
    }

    #[test]
    fn the_drain_is_complete_once_no_pod_is_left_on_the_node() {
        let (spec, mut state) = c3_draining_node_1(0);
        cordon(&spec, &mut state, 0, &mut Recorder::off());
        for pod in state.clone().pods_on(&[1]).collect::<Vec<_>>() {
            state.pod_mut(pod).phase = PodPhase::Idle;
        }
        assert_eq!(progress(&spec, &state, 0), DrainProgress::Complete);
    }
}
