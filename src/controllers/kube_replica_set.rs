//! The ReplicaSet controller's scale-down under `--semantics kubernetes`: which of a replica
//! set's pods it deletes.
//!
//! `ReplicaSetController.manageReplicas` → `getPodsToDelete`
//! (`pkg/controller/replicaset/replica_set.go`) ranks the set's active pods (no deletion
//! timestamp) with `getPodsRankedByRelatedPodsOnSameNode`, each pod's rank being how many
//! active pods of the whole deployment (`getIndirectlyRelatedPods`: every replica set it owns)
//! share its node, sorts them by `controller.ActivePodsWithRanks.Less`
//! (`pkg/controller/controller_utils.go`) and deletes the first ones:
//! 1. unassigned before assigned;
//! 2. Pending before Running;
//! 3. not ready before ready;
//! 4. lower `controller.kubernetes.io/pod-deletion-cost` first;
//! 5. more co-located pods (higher rank) first;
//! 6. shorter ready time, 7. more restarts, 8. newer creation (each time compared in log₂
//!    buckets of its age under `LogarithmicScaleDown`), and then the pods' UIDs.
//!
//! The ranks are taken once, before any deletion. What the model cannot tell apart is a tie:
//! its pods have no readiness probes (a Running pod is ready: the kubelet sets Ready when the
//! containers start), no annotations (every pod of a set carries its template's deletion cost,
//! so key 4 is equal within a set), no restarts, and no creation or ready times (slots are
//! reused, ages saturate), while the UIDs are random. So keys 6 to 8 are a tie in the model:
//! under `--tie-break any` every tied pod may go (the step asks its [`Ties`]' picker), which
//! covers whichever one the real timestamps and UIDs would pick; under `lowest` the lowest
//! pod id goes.

use super::ties::Ties;
use crate::cluster::{ClusterState, PodPhase, WriteBudget};
use std::cmp::Reverse;

/// A pod's keys in `ActivePodsWithRanks.Less`, as far as the model tells them: a pod that
/// sorts lower is deleted first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    /// Bound to a node (`spec.nodeName` set).
    pub assigned: bool,
    /// Running rather than Pending.
    pub running: bool,
    /// Ready: Running, in the model.
    pub ready: bool,
    /// Active pods of the deployment on the pod's node, most first.
    pub co_located: Reverse<u32>,
}

/// The active (not terminating) pods of replica set `version` of deployment `d`, ascending.
pub fn active(state: &ClusterState, d: usize, version: usize) -> impl Iterator<Item = usize> + '_ {
    (1..=state.pods().len()).filter(move |&p| {
        let pod = state.pod(p);
        pod.owned
            && pod.deployment as usize == d
            && matches!(pod.phase, PodPhase::Pending | PodPhase::Running)
            && state.kube_replica_set_of(p) == version
    })
}

/// The pod template replica set `version` of deployment `d` creates pods from: the
/// deployment's for its current set; for its old set, which the model keeps no template for,
/// the template of the set's lowest-id pod (the old set grows when a scaling event shares
/// replicas out in proportion, or replaces a lost pod), and none when it has no pod.
pub fn template(state: &ClusterState, d: usize, version: usize) -> Option<u8> {
    let dep = state.deployment(d);
    if version == dep.cur_version as usize {
        return Some(dep.template);
    }
    (1..=state.pods().len())
        .find(|&p| {
            let pod = state.pod(p);
            pod.owned
                && pod.deployment as usize == d
                && pod.phase != PodPhase::Idle
                && state.kube_replica_set_of(p) == version
        })
        .map(|p| state.pod(p).template)
}

/// The active pods of replica set `version` of deployment `d` with their ranks, ascending ids.
pub fn ranked(state: &ClusterState, d: usize, version: usize) -> Vec<(Rank, usize)> {
    let mut on_node = vec![0u32; state.nodes().len() + 1];
    for pod in state.pods() {
        let active = matches!(pod.phase, PodPhase::Pending | PodPhase::Running);
        if pod.owned && pod.deployment as usize == d && active {
            if let Some(count) = on_node.get_mut(pod.loc as usize) {
                *count += 1;
            }
        }
    }
    active(state, d, version)
        .map(|p| {
            let pod = state.pod(p);
            let running = pod.phase == PodPhase::Running;
            let rank = Rank {
                assigned: pod.loc != 0,
                running,
                ready: running,
                co_located: Reverse(on_node.get(pod.loc as usize).copied().unwrap_or(0)),
            };
            (rank, p)
        })
        .collect()
}

/// Deletes `count` pods of replica set `version` of deployment `d`, first in rank order
/// (`getPodsToDelete`); among equally ranked pods the lowest id, or the one `ties`' picker
/// picks where fewer than all of them go. Stops after the write that spends `writes`, or where
/// the picker ends the step.
pub fn delete(
    state: &mut ClusterState,
    d: usize,
    version: usize,
    count: usize,
    writes: &mut WriteBudget,
    ties: &mut Ties,
) {
    let mut left = ranked(state, d, version);
    left.sort_unstable();
    let mut to_go = count.min(left.len());
    while to_go > 0 {
        let best = left[0].0;
        let tied = left.iter().take_while(|(rank, _)| *rank == best).count();
        let index = if tied <= to_go {
            0
        } else {
            let candidates: Vec<usize> = left[..tied].iter().map(|&(_, p)| p).collect();
            let Some(index) = ties.pick(&candidates) else {
                return;
            };
            index
        };
        let (_, pod) = left.remove(index);
        state.mark_for_deletion(d, pod);
        to_go -= 1;
        writes.write();
        if writes.crashed() {
            return;
        }
    }
}
