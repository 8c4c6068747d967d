//! A deployment's scaling event under `--semantics kubernetes`: when its replicas change in the
//! middle of a RollingUpdate rollout, its replica sets are scaled in proportion
//! (`DeploymentController.sync` → `scale`, `pkg/controller/deployment/sync.go`) rather than
//! the new set taking the whole change.
//!
//! Each time the deployment controller scales a replica set it records on the set, with the
//! new size, the deployment's replicas (`deployment.kubernetes.io/desired-replicas`) and its
//! replicas plus maxSurge (`deployment.kubernetes.io/max-replicas`): `scaleReplicaSet` with
//! `deploymentutil.SetReplicasAnnotations`. The model keeps the replicas and the maxSurge
//! percentage they were resolved with ([`ReplicaSetState::desired_replicas`],
//! [`ReplicaSetState::surge_percent`]: 5 bytes a set, 0 under `kivi`).
//!
//! `syncDeployment` sees a scaling event when an active set (one with desired pods) records
//! other replicas than the deployment's (`isScalingEvent`). It then only scales (`sync`); the
//! rollout goes on at the next sync, which the replica sets' updates queue
//! (`updateReplicaSet` → `enqueueDeployment`). [`scale`]:
//! 1. with at most one active set (`deploymentutil.FindActiveOrLatest`), that set (with none,
//!    the new one) takes the deployment's replicas;
//! 2. with a saturated new set (`deploymentutil.IsSaturated`: it wants, records and has
//!    available exactly the deployment's replicas), the old sets go to 0;
//! 3. otherwise, for RollingUpdate, the active sets share out what the deployment may have
//!    now (replicas + maxSurge; nothing at 0 replicas) less what they have, each in
//!    proportion to its size and the max-replicas it records ([`proportional`]). Every active
//!    set is written, with its annotations.
//!
//! What the model assumes: an input's replica sets record the deployment's replicas (its
//! controller has seen them: [`annotate_initial`]). The old set stands for every older
//! template's set ([`super::kube_rollout`]) and is scaled as one set, so its share is rounded
//! once where Kubernetes rounds each older set's. A Recreate deployment has one active set
//! outside its rollouts, which is case 1: the deployment controller's Recreate path scales it
//! so; during a rollout (old set going to 0, `kube_recreate` in `deployment.rs`) a change of
//! replicas waits for the new set, where Kubernetes would first scale the old one.

use super::kube_replica_set::active;
use super::kube_rollout::{available, resolve_fenceposts};
use crate::cluster::{ClusterState, DeploymentState, ReplicaSetState, Strategy};
use std::cmp::Reverse;

/// `deploymentutil.MaxSurge`: the deployment's maxSurge resolved against its replicas, 0
/// unless it rolls out with RollingUpdate.
pub fn max_surge(dep: &DeploymentState) -> i32 {
    match dep.strategy {
        Strategy::RollingUpdate => {
            resolve_fenceposts(dep.max_surge, dep.max_unavailable, dep.spec_replicas).0
        }
        Strategy::Recreate => 0,
    }
}

/// Records on replica set `version` of deployment `d` the annotations the deployment
/// controller writes with each size it gives a set (`scaleReplicaSet` →
/// `SetReplicasAnnotations`): the deployment's replicas and maxSurge now.
pub fn annotate(state: &mut ClusterState, d: usize, version: usize) {
    let dep = state.deployment_mut(d);
    let surge_percent = match dep.strategy {
        Strategy::RollingUpdate => dep.max_surge,
        Strategy::Recreate => 0,
    };
    dep.replica_sets[version].desired_replicas = dep.spec_replicas;
    dep.replica_sets[version].surge_percent = surge_percent;
}

/// Gives every replica set of every deployment of the initial state the annotations of the
/// deployment as it stands, as if its controller had last scaled them.
pub fn annotate_initial(state: &mut ClusterState) {
    for d in 1..=state.deployments().len() {
        for version in 0..2 {
            annotate(state, d, version);
        }
    }
}

/// A set's `max-replicas` annotation: the replicas it records plus the maxSurge it recorded,
/// resolved against them.
pub fn max_replicas(set: &ReplicaSetState) -> i32 {
    let desired = set.desired_replicas;
    desired + resolve_fenceposts(set.surge_percent, 0, desired).0
}

/// `DeploymentController.isScalingEvent`: an active replica set of the deployment records
/// other replicas than the deployment's.
pub fn is_scaling_event(dep: &DeploymentState) -> bool {
    let replicas = dep.spec_replicas;
    dep.replica_sets
        .iter()
        .any(|set| set.spec_replicas > 0 && set.desired_replicas != replicas)
}

/// Whether `rolloutRolling` has anything left to do for deployment `d`: its old set wants pods,
/// or its new set wants other than the deployment's replicas. A sync that the replica sets'
/// updates queue after a scaling event changes nothing otherwise, so it is left out.
pub fn rollout_left(state: &ClusterState, d: usize) -> bool {
    let dep = state.deployment(d);
    let new = dep.cur_version as usize;
    let sets = dep.replica_sets;
    sets[1 - new].spec_replicas > 0 || sets[new].spec_replicas != dep.spec_replicas
}

/// `deploymentutil.IsSaturated` for the new set of deployment `d`: it wants, records and has
/// available exactly the deployment's replicas.
fn new_set_saturated(state: &ClusterState, d: usize) -> bool {
    let dep = state.deployment(d);
    let new = dep.cur_version as usize;
    let set = dep.replica_sets[new];
    let replicas = dep.spec_replicas;
    set.spec_replicas == replicas
        && set.desired_replicas == replicas
        && available(state, d, new) == replicas
}

/// `DeploymentController.scale` on a scaling event of deployment `d`: the size it gives each
/// replica set it writes, by version (`None`: left as it is). See the module documentation.
pub fn scale(state: &ClusterState, d: usize) -> [Option<i32>; 2] {
    let dep = *state.deployment(d);
    let new = dep.cur_version as usize;
    let old = 1 - new;
    let sets = dep.replica_sets;
    let replicas = dep.spec_replicas;
    let mut sizes = [None; 2];
    let active_sets: Vec<usize> = [new, old]
        .into_iter()
        .filter(|&v| sets[v].spec_replicas > 0)
        .collect();
    if active_sets.len() <= 1 {
        let only = active_sets.first().copied().unwrap_or(new);
        if sets[only].spec_replicas != replicas {
            sizes[only] = Some(replicas);
        }
    } else if new_set_saturated(state, d) {
        sizes[old] = Some(0);
    } else if dep.strategy == Strategy::RollingUpdate {
        let status_replicas = (0..2).map(|v| active(state, d, v).count() as i32).sum();
        let target = Target {
            replicas,
            max_surge: max_surge(&dep),
            status_replicas,
        };
        let read = |v: usize| ActiveSet {
            replicas: sets[v].spec_replicas,
            max_replicas: max_replicas(&sets[v]),
        };
        let shares = proportional(&[read(new), read(old)], &target);
        sizes[new] = Some(shares[0]);
        sizes[old] = Some(shares[1]);
    }
    sizes
}

/// What proportional scaling reads of one active replica set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActiveSet {
    /// Its desired replicas (`spec.replicas`).
    pub replicas: i32,
    /// Its `max-replicas` annotation (0: none).
    pub max_replicas: i32,
}

/// What proportional scaling reads of the deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Its desired replicas now.
    pub replicas: i32,
    /// Its maxSurge resolved against them (`MaxSurge`).
    pub max_surge: i32,
    /// Its pods (`status.replicas`): what a set's share is taken against when the set
    /// records no max-replicas.
    pub status_replicas: i32,
}

/// The proportional part of `DeploymentController.scale`: the new sizes of the active sets
/// `sets` (newest first), in their order. What the deployment may have
/// (`replicas + maxSurge`, 0 at 0 replicas) less what they have is given out largest set
/// first (among equal sizes the newer first when adding, the older first when taking away:
/// `controller.ReplicaSetsBySizeNewer` / `ReplicaSetsBySizeOlder`), each set's part by
/// [`proportion`]; what rounding leaves over goes to the first set, never below 0.
pub fn proportional(sets: &[ActiveSet], target: &Target) -> Vec<i32> {
    let allowed = if target.replicas > 0 {
        target.replicas + target.max_surge
    } else {
        0
    };
    let to_add = allowed - sets.iter().map(|set| set.replicas).sum::<i32>();
    let mut sizes: Vec<i32> = sets.iter().map(|set| set.replicas).collect();
    if to_add == 0 {
        return sizes;
    }
    let mut order: Vec<usize> = (0..sets.len()).collect();
    if to_add < 0 {
        order.reverse();
    }
    order.sort_by_key(|&i| Reverse(sets[i].replicas));
    let mut added = 0;
    for &i in &order {
        let part = proportion(sets[i], target, to_add, added);
        sizes[i] += part;
        added += part;
    }
    if let Some(&first) = order.first() {
        sizes[first] = (sizes[first] + to_add - added).max(0);
    }
    sizes
}

/// `deploymentutil.GetProportion`: the replicas `set` gains (or, negative, loses) of `to_add`
/// when `added` have been given out already: its fraction ([`fraction`]), within what is left.
pub fn proportion(set: ActiveSet, target: &Target, to_add: i32, added: i32) -> i32 {
    if set.replicas == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = fraction(set, target);
    let left = to_add - added;
    if to_add > 0 {
        fraction.min(left)
    } else {
        fraction.max(left)
    }
}

/// `deploymentutil.getReplicaSetFraction`: the set's size scaled by what the deployment may
/// have now over what it could have when the set was last scaled (its max-replicas, else the
/// deployment's pods), rounded half away from zero (`integer.RoundToInt32`), less its size;
/// its whole size, negative, when the deployment goes to 0.
pub fn fraction(set: ActiveSet, target: &Target) -> i32 {
    if target.replicas == 0 {
        return -set.replicas;
    }
    let now = i64::from(target.replicas + target.max_surge);
    let before = if set.max_replicas > 0 {
        set.max_replicas
    } else {
        target.status_replicas
    };
    if before <= 0 {
        return 0;
    }
    let before = i64::from(before);
    let scaled = (2 * i64::from(set.replicas) * now + before) / (2 * before);
    scaled as i32 - set.replicas
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(replicas: i32, max_replicas: i32) -> ActiveSet {
        ActiveSet {
            replicas,
            max_replicas,
        }
    }

    fn target(replicas: i32, max_surge: i32) -> Target {
        Target {
            replicas,
            max_surge,
            status_replicas: 0,
        }
    }

    /// `scale` → `GetProportion` → `getReplicaSetFraction`: a deployment of 10 with maxSurge 3
    /// (max-replicas 13) mid-rollout, new set 5 and old set 8, scaled to 15 with maxSurge 3:
    /// 18 allowed, 5 to add; the old set first (larger): round(8 · 18 / 13) = 11, +3; then
    /// the new set: round(5 · 18 / 13) = 7, +2; nothing left over.
    #[test]
    fn a_scale_up_mid_rollout_is_shared_in_proportion() {
        let sizes = proportional(&[set(5, 13), set(8, 13)], &target(15, 3));
        assert_eq!(sizes, [7, 11]);
    }

    /// The same rollout with maxSurge 30 %: 3 at 10 replicas, ⌈4.5⌉ = 5 at 15, so 20
    /// allowed and 7 to add: old round(8 · 20 / 13) = 12, new round(5 · 20 / 13) = 8.
    #[test]
    fn the_surge_is_resolved_against_the_new_replicas() {
        let sizes = proportional(&[set(5, 13), set(8, 13)], &target(15, 5));
        assert_eq!(sizes, [8, 12]);
    }

    /// Scaling down from 8 (maxSurge 1, max-replicas 9) to 3 (maxSurge 1): 4 allowed, 5 to
    /// take away; the old set (7) first: round(7 · 4 / 9) = 3, −4; the new set (2):
    /// round(2 · 4 / 9) = 1, −1.
    #[test]
    fn a_scale_down_mid_rollout_is_shared_in_proportion() {
        let sizes = proportional(&[set(2, 9), set(7, 9)], &target(3, 1));
        assert_eq!(sizes, [1, 3]);
    }

    /// What rounding leaves goes to the first (largest) set: new 2 and old 6 recording 9,
    /// scaled to 12 with no surge: 4 to add; old round(6 · 12 / 9) = 8, +2; new
    /// round(2 · 12 / 9) = 3, +1; the 1 left over to the old set.
    #[test]
    fn leftovers_go_to_the_largest_set() {
        let sizes = proportional(&[set(2, 9), set(6, 9)], &target(12, 0));
        assert_eq!(sizes, [3, 9]);
    }

    /// Equal sets: on the way up the newer one comes first (`ReplicaSetsBySizeNewer`) and takes
    /// round(5 · 11 / 10) − 5 = 1; on the way down the older one comes first
    /// (`ReplicaSetsBySizeOlder`): both fractions round(4.5) − 5 = 0, so the −1 left over is
    /// the older set's.
    #[test]
    fn equal_sets_order_newer_first_up_and_older_first_down() {
        let sets = [set(5, 10), set(5, 10)];
        assert_eq!(proportional(&sets, &target(11, 0)), [6, 5]);
        assert_eq!(proportional(&sets, &target(9, 0)), [5, 4]);
    }

    /// Leftovers may be several: new 1 and old 1 recording 3, scaled to 4 with no surge:
    /// each fraction is round(4 / 3) − 1 = 0, and the 2 left over go to the newer set.
    #[test]
    fn rounding_may_leave_several_replicas_to_the_first_set() {
        assert_eq!(proportional(&[set(1, 3), set(1, 3)], &target(4, 0)), [3, 1]);
    }

    /// To 0 replicas every set loses its whole size; a set recording no max-replicas is taken
    /// against the deployment's pods (`status.replicas`), and with none it gets nothing.
    #[test]
    fn fractions_at_zero_and_without_max_replicas() {
        assert_eq!(proportional(&[set(2, 9), set(7, 9)], &target(0, 0)), [0, 0]);
        let fallback = Target {
            replicas: 12,
            max_surge: 0,
            status_replicas: 6,
        };
        assert_eq!(fraction(set(3, 0), &fallback), 3, "3 · 12 / 6 − 3");
        assert_eq!(fraction(set(3, 0), &target(12, 0)), 0);
        assert_eq!(fraction(set(5, 10), &target(13, 0)), 2, "6.5 rounds up");
        assert_eq!(proportion(set(5, 10), &target(13, 0), 1, 0), 1, "within 1");
        assert_eq!(proportion(set(0, 10), &target(13, 0), 3, 0), 0, "empty set");
    }
}
