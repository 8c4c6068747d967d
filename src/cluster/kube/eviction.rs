//! The Eviction API on a model state: what the API server answers when a pod of the model is
//! evicted (`POST pods/<name>/eviction`), as Kubernetes 1.33's eviction subresource decides it
//! (`EvictionREST.Create`, `pkg/registry/core/pod/storage/eviction.go`) on the status the
//! disruption controller would have written for the state ([`budget_status`]).
//!
//! The rules, in the order `EvictionREST.Create` applies them:
//! - a pod that is Pending, Succeeded, Failed or already terminating is deleted without a
//!   budget check (`canIgnorePDB`);
//! - a pod no budget selects is deleted;
//! - a pod two or more budgets select is refused with 500 ("This pod has more than one
//!   PodDisruptionBudget, which the eviction subresource does not support."), every time;
//! - a pod that is not Ready is deleted without charge while its budget is healthy
//!   (`currentHealthy >= desiredHealthy > 0`: the default `IfHealthyBudget`
//!   `unhealthyPodEvictionPolicy`);
//! - otherwise `checkAndDecrement`: refused with 429 TooManyRequests ("Cannot evict pod as it
//!   would violate the pod's disruption budget.") while `disruptionsAllowed` is 0, else
//!   allowed, and `disruptionsAllowed` decremented (the pod recorded in `DisruptedPods`).
//!
//! The model recomputes each budget's status from every state rather than keeping the
//! decremented count: an allowed eviction leaves the pod terminating, which takes it out of
//! `currentHealthy`, so the next state's `disruptionsAllowed` is the decremented one, as the
//! disruption controller's next `trySync` (which skips the pods in `DisruptedPods`) writes it.
//! The budget's `observedGeneration` is always current (the status is never stale).
//!
//! The descheduler's cycle makes the same check on its Kubernetes snapshot
//! (`controllers::kube_descheduler::disruption`); this one answers for the model's own pods,
//! which `kubectl drain` evicts (`crate::events::drain`).

use super::of_model::budget_status;
use crate::cluster::state::{NodeStatus, PodPhase};
use crate::cluster::{ClusterSpec, ClusterState};

/// What the eviction subresource answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictionAnswer {
    /// 201: the pod is deleted (evicted).
    Evicted,
    /// 429 TooManyRequests: budget `budget` (an index into `ClusterSpec::pdbs`) allows no
    /// disruption now; the caller may retry.
    TooManyRequests {
        /// The refusing budget.
        budget: usize,
    },
    /// 500: the pod is selected by more than one budget, which the subresource refuses.
    MultipleBudgets,
}

impl EvictionAnswer {
    /// Why the API server refused the eviction, in its own words with the refusing budget
    /// named; `None` for an eviction it allowed.
    pub fn refusal(self, spec: &ClusterSpec) -> Option<String> {
        match self {
            Self::Evicted => None,
            Self::TooManyRequests { budget } => Some(format!(
                "Cannot evict pod as it would violate the pod's disruption budget \
                 (PodDisruptionBudget {})",
                spec.pdbs[budget].name
            )),
            Self::MultipleBudgets => Some(
                "This pod has more than one PodDisruptionBudget, which the eviction \
                 subresource does not support"
                    .to_string(),
            ),
        }
    }
}

/// What the Eviction API answers for evicting pod `pod` of `state` (see the module
/// documentation).
pub fn evict(spec: &ClusterSpec, state: &ClusterState, pod: usize) -> EvictionAnswer {
    let record = state.pod(pod);
    if record.phase != PodPhase::Running {
        return EvictionAnswer::Evicted;
    }
    let mut selecting = spec
        .pdbs
        .iter()
        .enumerate()
        .filter(|(_, budget)| budget.selects(pod, record));
    let Some((index, budget)) = selecting.next() else {
        return EvictionAnswer::Evicted;
    };
    if selecting.next().is_some() {
        return EvictionAnswer::MultipleBudgets;
    }
    let status = budget_status(state, budget);
    let ready = record.loc != 0 && state.node(record.loc as usize).status == NodeStatus::Ready;
    if !ready && status.current_healthy >= status.desired_healthy && status.desired_healthy > 0 {
        return EvictionAnswer::Evicted;
    }
    if status.disruptions_allowed <= 0 {
        return EvictionAnswer::TooManyRequests { budget: index };
    }
    EvictionAnswer::Evicted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture::cases;
    use crate::cluster::kube::IntOrPercent;
    use crate::cluster::spec::DisruptionBudget;

    /// C3 at its start (5 running pods of deployment 1) with budgets `budgets`.
    fn c3_with(budgets: &[(Option<i32>, Option<i32>)]) -> (ClusterSpec, ClusterState) {
        let cluster = cases::c3();
        let mut spec = cluster.spec.clone();
        spec.pdbs = budgets
            .iter()
            .map(|&(min, max)| DisruptionBudget {
                name: "app".into(),
                namespace: "default".into(),
                deployments: vec![1],
                pods: Vec::new(),
                min_available: min.map(IntOrPercent::Int),
                max_unavailable: max.map(IntOrPercent::Int),
            })
            .collect();
        (spec, cluster.state.clone())
    }

    fn running(state: &ClusterState) -> Vec<usize> {
        (1..=state.pods().len())
            .filter(|&p| state.pod(p).phase == PodPhase::Running)
            .collect()
    }

    #[test]
    fn check_and_decrement_refuses_at_zero_disruptions_allowed() {
        // minAvailable = the running pods: disruptionsAllowed 0, a 429 for every running pod.
        let (mut spec, state) = c3_with(&[(Some(0), None)]);
        let pods = running(&state);
        spec.pdbs[0].min_available = Some(IntOrPercent::Int(pods.len() as i32));
        assert_eq!(
            evict(&spec, &state, pods[0]),
            EvictionAnswer::TooManyRequests { budget: 0 }
        );
        // One fewer required: one disruption allowed; once a pod is terminating (an
        // allowed eviction), the recomputed status allows none: the decrement.
        spec.pdbs[0].min_available = Some(IntOrPercent::Int(pods.len() as i32 - 1));
        assert_eq!(evict(&spec, &state, pods[0]), EvictionAnswer::Evicted);
        let mut after = state.clone();
        after.mark_for_deletion(1, pods[0]);
        assert_eq!(
            evict(&spec, &after, pods[1]),
            EvictionAnswer::TooManyRequests { budget: 0 }
        );
    }

    #[test]
    fn can_ignore_pdb_deletes_pods_that_are_not_running() {
        let (mut spec, state) = c3_with(&[(None, Some(0))]);
        let pods = running(&state);
        let mut after = state.clone();
        after.mark_for_deletion(1, pods[0]);
        assert_eq!(evict(&spec, &after, pods[0]), EvictionAnswer::Evicted);
        after.pod_mut(pods[1]).phase = PodPhase::Pending;
        assert_eq!(evict(&spec, &after, pods[1]), EvictionAnswer::Evicted);
        spec.pdbs.clear();
        assert_eq!(
            evict(&spec, &state, pods[2]),
            EvictionAnswer::Evicted,
            "no budget selects it"
        );
    }

    #[test]
    fn two_budgets_selecting_a_pod_are_refused() {
        let (spec, state) = c3_with(&[(Some(0), None), (Some(0), None)]);
        assert_eq!(
            evict(&spec, &state, running(&state)[0]),
            EvictionAnswer::MultipleBudgets
        );
    }

    #[test]
    fn an_unready_pod_passes_a_healthy_budget_without_charge() {
        // A pod on a not-ready node is not Ready. With minAvailable equal to the healthy pods
        // no disruption is allowed, yet the budget is healthy (current >= desired > 0), so the
        // pod passes without charge; one more required and it is refused.
        let (mut spec, mut state) = c3_with(&[(Some(1), None)]);
        let pods = running(&state);
        let node = state.pod(pods[0]).loc as usize;
        state.node_mut(node).status = NodeStatus::NotReady;
        let healthy = budget_status(&state, &spec.pdbs[0]).current_healthy;
        spec.pdbs[0].min_available = Some(IntOrPercent::Int(healthy));
        assert_eq!(evict(&spec, &state, pods[0]), EvictionAnswer::Evicted);
        spec.pdbs[0].min_available = Some(IntOrPercent::Int(healthy + 1));
        assert_eq!(
            evict(&spec, &state, pods[0]),
            EvictionAnswer::TooManyRequests { budget: 0 }
        );
    }
}
