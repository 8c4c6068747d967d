//! PodDisruptionBudgets (`policy/v1`) and PriorityClasses (`scheduling.k8s.io/v1`): what the
//! eviction subresource and the descheduler's priority threshold read.

use super::labels::LabelSelector;
use super::pod::PreemptionPolicy;

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

/// `intstr.GetScaledValueFromIntOrPercent(value, total, roundUp)`
/// (`k8s.io/apimachinery/pkg/util/intstr/intstr.go`): a count as it is, a percentage of
/// `total` rounded up when `round_up` (the disruption controller always rounds up), down
/// otherwise.
pub fn scaled_value(value: IntOrPercent, total: i32, round_up: bool) -> i32 {
    match value {
        IntOrPercent::Int(n) => n,
        IntOrPercent::Percent(percent) => {
            let scaled = i64::from(percent) * i64::from(total);
            let whole = if round_up {
                scaled.div_euclid(100) + i64::from(scaled.rem_euclid(100) != 0)
            } else {
                scaled.div_euclid(100)
            };
            whole as i32
        }
    }
}

/// Whether the disruption controller counts the expected pods from the scale of the selected
/// pods' controllers (`getExpectedPodCount`): for `maxUnavailable` and a `minAvailable`
/// percentage; an integer `minAvailable` counts the pods themselves.
pub fn needs_scale(
    min_available: Option<IntOrPercent>,
    max_unavailable: Option<IntOrPercent>,
) -> bool {
    max_unavailable.is_some() || matches!(min_available, Some(IntOrPercent::Percent(_)))
}

impl DisruptionStatus {
    /// The status `failSafe` writes when the sync fails (a selected pod's controller, whose
    /// scale is needed, is not found): no disruption allowed. Upstream keeps the rest of the
    /// last status; with none kept, only the current healthy pods are known.
    pub fn fail_safe(current_healthy: i32) -> Self {
        Self {
            current_healthy,
            ..Self::default()
        }
    }

    /// The status the disruption controller writes for a budget of `min_available` or
    /// `max_unavailable` (`pkg/controller/disruption/disruption.go`): `getExpectedPodCount`
    /// takes the expected pods from `scale` (`getExpectedScale`: the summed scale of the
    /// controllers owning the matching pods) for `maxUnavailable` and a `minAvailable`
    /// percentage, and from `pods` (the matching pods) for an integer `minAvailable`;
    /// `desiredHealthy` is `expected - maxUnavailable` floored at 0, or `minAvailable`, each
    /// percentage rounded up; with neither field both stay 0. `updatePdbStatus` allows
    /// `currentHealthy - desiredHealthy` disruptions, none when that is negative or no pod is
    /// expected.
    pub fn compute(
        min_available: Option<IntOrPercent>,
        max_unavailable: Option<IntOrPercent>,
        pods: i32,
        scale: i32,
        current_healthy: i32,
    ) -> Self {
        let (expected_pods, desired_healthy) = match (max_unavailable, min_available) {
            (Some(max), _) => (scale, (scale - scaled_value(max, scale, true)).max(0)),
            (None, Some(IntOrPercent::Int(min))) => (pods, min),
            (None, Some(min)) => (scale, scaled_value(min, scale, true)),
            (None, None) => (0, 0),
        };
        let allowed = current_healthy - desired_healthy;
        Self {
            disruptions_allowed: if expected_pods <= 0 {
                0
            } else {
                allowed.max(0)
            },
            current_healthy,
            desired_healthy,
            expected_pods,
        }
    }
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

impl PodDisruptionBudget {
    /// Whether its status needs the selected pods' controllers' scale ([`needs_scale`]).
    pub fn needs_scale(&self) -> bool {
        needs_scale(self.min_available, self.max_unavailable)
    }
}

/// A PriorityClass: a name for a priority value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorityClass {
    /// `metadata.name`.
    pub name: String,
    /// `value`.
    pub value: i32,
    /// `globalDefault`: the priority of pods that name no class.
    pub global_default: bool,
    /// `preemptionPolicy` (defaulted to PreemptLowerPriority).
    pub preemption_policy: PreemptionPolicy,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_up_as_get_scaled_value_from_int_or_percent() {
        assert_eq!(scaled_value(IntOrPercent::Percent(50), 3, true), 2);
        assert_eq!(scaled_value(IntOrPercent::Percent(50), 3, false), 1);
        assert_eq!(scaled_value(IntOrPercent::Percent(34), 3, true), 2);
        assert_eq!(scaled_value(IntOrPercent::Percent(100), 7, true), 7);
        assert_eq!(scaled_value(IntOrPercent::Percent(0), 7, true), 0);
        assert_eq!(scaled_value(IntOrPercent::Int(4), 7, true), 4);
    }

    #[test]
    fn status_follows_get_expected_pod_count_and_update_pdb_status() {
        use IntOrPercent::{Int, Percent};
        let status = |min, max, pods, scale, healthy| {
            let s = DisruptionStatus::compute(min, max, pods, scale, healthy);
            (s.expected_pods, s.desired_healthy, s.disruptions_allowed)
        };
        // An integer minAvailable counts the matching pods, not the scale.
        assert_eq!(status(Some(Int(2)), None, 4, 3, 3), (4, 2, 1));
        // A minAvailable percentage of the scale, rounded up: 50 % of 3 is 2.
        assert_eq!(status(Some(Percent(50)), None, 3, 3, 3), (3, 2, 1));
        // maxUnavailable: the scale less the rounded-up unavailable, floored at 0.
        assert_eq!(status(None, Some(Int(1)), 3, 3, 3), (3, 2, 1));
        assert_eq!(status(None, Some(Percent(34)), 3, 3, 3), (3, 1, 2));
        assert_eq!(status(None, Some(Int(5)), 3, 3, 2), (3, 0, 2));
        // Fewer healthy than desired allows nothing, never a negative count.
        assert_eq!(status(Some(Int(3)), None, 3, 3, 2), (3, 3, 0));
        // No expected pods allows nothing, whatever is healthy; neither field expects none.
        assert_eq!(status(None, Some(Int(1)), 2, 0, 2), (0, 0, 0));
        assert_eq!(status(None, None, 3, 3, 3), (0, 0, 0));
    }
}
