//! PodDisruptionBudgets (`policy/v1`) and PriorityClasses (`scheduling.k8s.io/v1`): what the
//! eviction subresource and the descheduler's priority threshold read.

use super::labels::LabelSelector;

/// `minAvailable` or `maxUnavailable`: a count or a percentage (`intstr.IntOrString`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntOrPercent {
    /// A number of pods.
    Int(i32),
    /// A percentage of the expected pods, `0`–`100` (written `"50%"`).
    Percent(i32),
}

/// The status the disruption controller writes (`PodDisruptionBudgetStatus`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DisruptionStatus {
    /// `disruptionsAllowed`: how many healthy pods may be evicted now.
    pub disruptions_allowed: i32,
    /// `currentHealthy`: matching pods that are Ready and not terminating.
    pub current_healthy: i32,
    /// `desiredHealthy`: the fewest healthy pods the budget allows.
    pub desired_healthy: i32,
    /// `expectedPods`: the pods the budget counts from.
    pub expected_pods: i32,
}

/// A PodDisruptionBudget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodDisruptionBudget {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.selector`; absent (or empty) selects no pod for the eviction subresource.
    pub selector: Option<LabelSelector>,
    /// `spec.minAvailable`.
    pub min_available: Option<IntOrPercent>,
    /// `spec.maxUnavailable`.
    pub max_unavailable: Option<IntOrPercent>,
    /// `status`, when the disruption controller has written one.
    pub status: Option<DisruptionStatus>,
}

/// A PriorityClass: a name for a priority value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorityClass {
    /// `metadata.name`.
    pub name: String,
    /// `value`.
    pub value: i32,
}
