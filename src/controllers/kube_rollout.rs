//! A RollingUpdate deployment's rollout under `--semantics kubernetes`: how many pods its new
//! and old replica sets should have (`DeploymentController.rolloutRolling`,
//! `pkg/controller/deployment/rolling.go`).
//!
//! The model keeps two replica sets per deployment: the current one is the new set (its pods
//! have the deployment's template), the other one holds every older template's pods (a
//! `kubectl apply` of a new template makes the other set current: see
//! [`crate::events`]' `apply`). Kubernetes scales its old sets down together, oldest first,
//! so one set for them all decides the same counts.
//!
//! A change of the deployment's replicas in the middle of a rollout is not the rollout's:
//! `syncDeployment` first scales every active set in proportion (`sync` → `scale`,
//! [`super::kube_scale`]), the old set too, and the rollout goes on from there at the next
//! sync.
//!
//! Availability: the model's pods have no readiness probes and `minReadySeconds` is 0, so a
//! pod is available as soon as the kubelet starts it (`podutil.IsPodAvailable`); a Pending
//! pod is not. The sets' available counts are read from the pods at each reconcile, as an
//! up-to-date `status.availableReplicas`.

use super::kube_replica_set::active;
use crate::cluster::{ClusterState, PodPhase};

/// `deploymentutil.ResolveFenceposts` (`pkg/controller/deployment/util/deployment_util.go`):
/// maxSurge rounded up and maxUnavailable rounded down, both percentages of the desired
/// replicas; both 0 would deadlock the rollout, so maxUnavailable is then 1.
pub fn resolve_fenceposts(max_surge: u8, max_unavailable: u8, desired: i32) -> (i32, i32) {
    let surge = (max_surge as i32 * desired + 99) / 100;
    let unavailable = max_unavailable as i32 * desired / 100;
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

/// Whether deployment `d`'s old set still has a desired count or any pod (Pending, Running or
/// terminating): a Recreate rollout waits for it to be empty (`oldPodsRunning`,
/// `pkg/controller/deployment/recreate.go`).
pub fn old_set_left(state: &ClusterState, d: usize) -> bool {
    let dep = state.deployment(d);
    let old = 1 - dep.cur_version as usize;
    dep.replica_sets[old].spec_replicas != 0
        || (1..=state.pods().len()).any(|p| {
            let pod = state.pod(p);
            pod.owned
                && pod.deployment as usize == d
                && pod.phase != PodPhase::Idle
                && state.kube_replica_set_of(p) == old
        })
}

/// The available pods of replica set `version` of deployment `d`: its started pods not being
/// deleted.
pub fn available(state: &ClusterState, d: usize, version: usize) -> i32 {
    active(state, d, version)
        .filter(|&p| state.pod(p).phase == PodPhase::Running)
        .count() as i32
}

/// The desired counts `(new, old)` one pass of `rolloutRolling` sets for deployment `d`:
/// `reconcileNewReplicaSet` first (it surges the new set up to `replicas + maxSurge` pods in
/// all, or brings it down to `replicas`); only when that changes nothing,
/// `reconcileOldReplicaSets` (`cleanupUnhealthyReplicas` takes away old pods that are not
/// available, within what `maxUnavailable` allows; `scaleDownOldReplicaSetsForRollingUpdate`
/// then takes away available old pods while more than `replicas − maxUnavailable` pods are
/// available).
pub fn plan(state: &ClusterState, d: usize) -> (i32, i32) {
    let dep = *state.deployment(d);
    let new = dep.cur_version as usize;
    let old = 1 - new;
    let desired = dep.spec_replicas;
    let (new_spec, old_spec) = (
        dep.replica_sets[new].spec_replicas,
        dep.replica_sets[old].spec_replicas,
    );
    let (surge, unavailable) = resolve_fenceposts(dep.max_surge, dep.max_unavailable, desired);
    if new_spec > desired {
        return (desired, old_spec);
    }
    if new_spec < desired {
        let max_total = desired + surge;
        let current = new_spec + old_spec;
        if current < max_total {
            let up = (max_total - current).min(desired - new_spec);
            return (new_spec + up, old_spec);
        }
    }
    if old_spec == 0 {
        return (new_spec, 0);
    }
    let min_available = desired - unavailable;
    let (new_available, old_available) = (available(state, d, new), available(state, d, old));
    let new_unavailable = new_spec - new_available;
    let max_scaled_down = new_spec + old_spec - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return (new_spec, old_spec);
    }
    let cleanup = max_scaled_down.min(old_spec - old_available).max(0);
    let old_spec = old_spec - cleanup;
    let all_available = new_available + old_available;
    let scale_down = if all_available <= min_available {
        0
    } else {
        (all_available - min_available).min(old_spec)
    };
    (new_spec, old_spec - scale_down)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surge_rounds_up_and_unavailability_down() {
        assert_eq!(resolve_fenceposts(25, 25, 5), (2, 1));
        assert_eq!(resolve_fenceposts(10, 10, 5), (1, 0));
        assert_eq!(resolve_fenceposts(0, 0, 5), (0, 1), "never both 0");
        assert_eq!(
            resolve_fenceposts(0, 10, 5),
            (0, 1),
            "0 of 5 pods rounds to 0"
        );
    }
}
