//! The eviction subresource's PodDisruptionBudget check, as the Kubernetes 1.33 API server
//! makes it (`pkg/registry/core/pod/storage/eviction.go`), on the status the disruption
//! controller wrote (`pkg/controller/disruption/disruption.go`).

use super::outcome::Refusal;
use crate::cluster::kube::{DisruptionStatus, Pod, PodDisruptionBudget, PodPhase, Selector};

/// The budgets' statuses as evictions use them up during a cycle.
#[derive(Clone, Debug)]
pub struct Budgets<'a> {
    budgets: &'a [PodDisruptionBudget],
    statuses: Vec<DisruptionStatus>,
}

impl<'a> Budgets<'a> {
    /// The budgets with the status each carries (none: nothing allowed).
    pub fn new(budgets: &'a [PodDisruptionBudget]) -> Self {
        Self {
            budgets,
            statuses: budgets
                .iter()
                .map(|b| b.status.unwrap_or_default())
                .collect(),
        }
    }

    /// What the eviction subresource answers for `pod`: `Ok` (and the budget charged) or the
    /// refusal. A pod that is Pending, Succeeded, Failed or terminating is deleted without a
    /// check; a budget whose selector is absent or empty selects nothing; a not-ready pod
    /// passes without charge while the budget is healthy (`currentHealthy >= desiredHealthy >
    /// 0`, the default `IfHealthyBudget` policy); otherwise `disruptionsAllowed` must be
    /// positive, and is decremented.
    pub fn evict(&mut self, pod: &Pod, terminating: bool) -> Result<(), Refusal> {
        if terminating
            || matches!(
                pod.phase,
                PodPhase::Pending | PodPhase::Succeeded | PodPhase::Failed
            )
        {
            return Ok(());
        }
        let matching: Vec<usize> = self
            .budgets
            .iter()
            .enumerate()
            .filter(|(_, b)| b.namespace == pod.namespace && selects(b, pod))
            .map(|(index, _)| index)
            .collect();
        let index = match matching.as_slice() {
            [] => return Ok(()),
            [one] => *one,
            _ => return Err(Refusal::PdbMultiple),
        };
        let status = &mut self.statuses[index];
        if !pod.ready
            && status.current_healthy >= status.desired_healthy
            && status.desired_healthy > 0
        {
            return Ok(());
        }
        if status.disruptions_allowed <= 0 {
            return Err(Refusal::Pdb);
        }
        status.disruptions_allowed -= 1;
        Ok(())
    }
}

/// Whether `budget` selects `pod` (an absent or empty selector selects nothing here).
fn selects(budget: &PodDisruptionBudget, pod: &Pod) -> bool {
    let selector = Selector::from_label_selector(budget.selector.as_ref());
    !selector.is_empty() && selector.matches(&pod.labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::kube::{LabelSelector, Labels};

    fn budget(allowed: i32, current: i32, desired: i32) -> PodDisruptionBudget {
        PodDisruptionBudget {
            namespace: "default".into(),
            name: "web".into(),
            selector: Some(LabelSelector {
                match_labels: Labels::from([("app".to_string(), "web".to_string())]),
                match_expressions: Vec::new(),
            }),
            min_available: None,
            max_unavailable: None,
            status: Some(DisruptionStatus {
                disruptions_allowed: allowed,
                current_healthy: current,
                desired_healthy: desired,
                expected_pods: current,
            }),
        }
    }

    fn pod(ready: bool) -> Pod {
        let mut pod = Pod::new("default", "web-1");
        pod.labels.insert("app".into(), "web".into());
        pod.phase = PodPhase::Running;
        pod.ready = ready;
        pod
    }

    #[test]
    fn each_eviction_uses_up_one_allowed_disruption() {
        let budgets = [budget(1, 3, 2)];
        let mut state = Budgets::new(&budgets);
        assert_eq!(state.evict(&pod(true), false), Ok(()));
        assert_eq!(state.evict(&pod(true), false), Err(Refusal::Pdb));
        assert_eq!(
            state.evict(&pod(true), true),
            Ok(()),
            "terminating: no check"
        );
    }

    #[test]
    fn a_not_ready_pod_passes_a_healthy_budget_free() {
        let budgets = [budget(0, 2, 2)];
        let mut state = Budgets::new(&budgets);
        assert_eq!(state.evict(&pod(false), false), Ok(()));
        assert_eq!(state.evict(&pod(true), false), Err(Refusal::Pdb));
        let unhealthy = [budget(0, 1, 2)];
        assert_eq!(
            Budgets::new(&unhealthy).evict(&pod(false), false),
            Err(Refusal::Pdb)
        );
    }

    #[test]
    fn two_budgets_refuse_and_an_empty_selector_selects_nothing() {
        let two = [budget(5, 3, 1), budget(5, 3, 1)];
        assert_eq!(
            Budgets::new(&two).evict(&pod(true), false),
            Err(Refusal::PdbMultiple)
        );
        let mut empty = budget(0, 3, 3);
        empty.selector = Some(LabelSelector::default());
        assert_eq!(Budgets::new(&[empty]).evict(&pod(true), false), Ok(()));
    }
}
