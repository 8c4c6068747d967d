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
        && controllers::kube_hpa::expirable(spec, s).all(|d| {
            visit(ClusterAction::HpaWindowExpires {
                deployment: d as u8,
            })
        })
        && controllers::kube_hpa_behavior::for_each_timer(spec, s, visit)
}

/// What a check whose HPA window dropped a step leaves out
/// ([`controllers::hpa_window::saturated`]).
pub(super) fn saturated_window_note() -> String {
    format!(
        "an HPA over a range of more than 63 replicas held more than {steps} distinct \
         recommendations in a stabilisation window; the model kept the newest {steps} and did not \
         explore the runs in which the oldest still holds the HPA back",
        steps = controllers::hpa_window::LISTED_STEPS
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
