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
            statuses: budgets.iter().map(|b| b.status.unwrap_or_default()).collect(),
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
