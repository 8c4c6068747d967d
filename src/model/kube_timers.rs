//! The steps only `--semantics kubernetes` has besides the scheduler's cycles: the node
//! lifecycle controller's taints and the timers that stand for Kubernetes' clocks (toleration
//! seconds, the HPA's stabilisation windows and its policies' periods), each a step that may
//! fire at any later point.

use crate::cluster::{ClusterAction, ClusterSpec, ClusterState, MAX_SCALE_EVENTS};
use crate::controllers;

/// Visits the node lifecycle controller's steps and every timer that may fire in `s`.
/// Returns false when `visit` asked to stop.
pub(super) fn for_each(
    spec: &ClusterSpec,
    s: &ClusterState,
    visit: &mut impl FnMut(ClusterAction) -> bool,
) -> bool {
    controllers::node_lifecycle::for_each(spec, s, visit)
        && controllers::taint_eviction::for_each(spec, s, visit)
        && controllers::kube_hpa::expirable(s).all(|d| {
            visit(ClusterAction::HpaWindowExpires {
                deployment: d as u8,
            })
        })
        && controllers::kube_hpa_behavior::for_each_timer(spec, s, visit)
}

/// What a check whose HPA window reached [`controllers::kube_hpa::WINDOW_MAX`] leaves out.
pub(super) fn saturated_window_note() -> String {
    format!(
        "an HPA allowing more than {max} replicas recorded a recommendation of {max} or more in \
         a stabilisation window, which keeps recommendations up to {max} apart",
        max = controllers::kube_hpa::WINDOW_MAX
    )
}

/// What a check whose HPA forgot a scale event early leaves out
/// ([`controllers::kube_hpa_behavior::forgot_event`]).
pub(super) fn forgotten_event_note() -> String {
    format!(
        "an HPA with spec.behavior rescaled more than {MAX_SCALE_EVENTS} times within its longest \
         policy period; the model forgot the oldest scale event early and did not explore the \
         runs in which it stays"
    )
}
