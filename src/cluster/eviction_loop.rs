//! `--loop`: a reachable oscillation in which pods are evicted and re-created forever.
//!
//! Kivi's `-l` asks SPIN for non-progress cycles. kivi instead searches the cluster's state
//! graph for a lasso (see [`crate::engine::lasso`]) whose cycle evicts a pod: since the cycle
//! comes back to the same state, every pod it evicts is re-created within it, and the cluster
//! can repeat it forever without settling. Evictions are the descheduler's, the taint
//! manager's and the node controller's; a deployment scaling down is not one.

use super::{ClusterAction, ClusterModel, ClusterState, PodPhase};
use crate::engine::lasso::{find_lasso, Lasso, TooManyStates};

/// The default bound on the states the loop search stores.
pub const DEFAULT_MAX_STATES: usize = 2_000_000;

/// Whether `action`, taken in `before` and leading to `after`, evicted a pod.
pub fn evicts_pod(
    model: &ClusterModel,
    before: &ClusterState,
    action: &ClusterAction,
    after: &ClusterState,
) -> bool {
    matches!(
        action,
        ClusterAction::Descheduler | ClusterAction::TaintManager | ClusterAction::NodeController
    ) && (1..=model.spec().pods.len()).any(|p| {
        before.pod(p).phase != PodPhase::Terminating && after.pod(p).phase == PodPhase::Terminating
    })
}

/// Searches `model` for an eviction loop, storing at most `max_states` states. `Ok(None)`
/// means the cluster has none: every run settles or only loops without evicting.
pub fn find_eviction_loop(
    model: &ClusterModel,
    max_states: usize,
) -> Result<Option<Lasso<ClusterModel>>, TooManyStates> {
    find_lasso(
        model,
        |before: &ClusterState, action: &ClusterAction, after: &ClusterState| {
            evicts_pod(model, before, action, after)
        },
        max_states,
    )
}

/// A lasso as Kivi-style trace lines, numbered on from the prefix into the cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopLines {
    /// Lines of the path to the loop.
    pub prefix: Vec<String>,
    /// Lines of one round of the loop, which then repeats.
    pub cycle: Vec<String>,
}

/// The lines of `lasso` in Kivi's `[step][Controller] message` style.
pub fn loop_lines(model: &ClusterModel, lasso: &Lasso<ClusterModel>) -> LoopLines {
    let steps: Vec<_> = lasso
        .prefix
        .iter()
        .chain(&lasso.cycle)
        .map(|s| (s.action, s.state))
        .collect();
    let mut lines = model.kivi_trace(&lasso.init, &steps);
    let prefix_len = model
        .kivi_trace(&lasso.init, &steps[..lasso.prefix.len()])
        .len();
    let cycle = lines.split_off(prefix_len);
    LoopLines {
        prefix: lines,
        cycle,
    }
}
