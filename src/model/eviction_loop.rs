//! `--loop`: a reachable oscillation in which pods are evicted and re-created forever.
//!
//! Kivi's `-l` asks SPIN for non-progress cycles. kivi instead searches the cluster's state
//! graph for a lasso (see [`crate::engine::lasso`]) whose cycle evicts a pod: since the cycle
//! comes back to the same state, every pod it evicts is re-created within it, and the cluster
//! can repeat it forever without settling. Evictions are the descheduler's, the taint
//! manager's and the node controller's; a deployment scaling down is not one.

use super::ClusterModel;
use crate::cluster::{ClusterAction, ClusterState, PodPhase};
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

/// An eviction loop and the cluster model its states belong to.
#[derive(Clone, Debug)]
pub struct EvictionLoop {
    /// The cluster without its intent monitors, which the lasso's states and steps are of:
    /// monitors only count, so leaving them out keeps them from lengthening or hiding loops.
    pub model: ClusterModel,
    /// The path to the loop and one round of it.
    pub lasso: Lasso<ClusterModel>,
}

impl EvictionLoop {
    /// The loop as Kivi-style trace lines.
    pub fn lines(&self) -> LoopLines {
        loop_lines(&self.model, &self.lasso)
    }
}

/// `model` without intent monitors (only the scheduler's own `pod_always_schedulable`).
fn without_monitors(model: &ClusterModel) -> ClusterModel {
    let mut spec = model.spec().clone();
    spec.intents.truncate(1);
    let mut init = model.initial_state().clone();
    *init.monitors_mut() = Default::default();
    ClusterModel::new(spec, init)
}

/// Searches `model` for an eviction loop, storing at most `max_states` states. `Ok(None)`
/// means the cluster has none: every run settles or only loops without evicting. This is what
/// `kivi check --loop` reports.
pub fn find_eviction_loop(
    model: &ClusterModel,
    max_states: usize,
) -> Result<Option<EvictionLoop>, TooManyStates> {
    let model = without_monitors(model);
    let lasso = find_lasso(
        &model,
        |before: &ClusterState, action: &ClusterAction, after: &ClusterState| {
            evicts_pod(&model, before, action, after)
        },
        max_states,
    )?;
    Ok(lasso.map(|lasso| EvictionLoop { model, lasso }))
}

/// A lasso as Kivi-style trace lines, numbered on from the prefix into the cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopLines {
    /// Lines of the path to the loop.
    pub prefix: Vec<String>,
    /// Lines of one round of the loop, which then repeats.
    pub cycle: Vec<String>,
}

/// The lines of `lasso` (of `model`) in Kivi's `[step][Controller] message` style.
pub fn loop_lines(model: &ClusterModel, lasso: &Lasso<ClusterModel>) -> LoopLines {
    let mut lines = Vec::new();
    let mut prefix_len = 0;
    let mut before = &lasso.init;
    for (index, step) in lasso.prefix.iter().chain(&lasso.cycle).enumerate() {
        if index == lasso.prefix.len() {
            prefix_len = lines.len();
        }
        for line in model.describe_step(before, &step.action) {
            lines.push(line.render(lines.len()));
        }
        before = &step.state;
    }
    let cycle = lines.split_off(prefix_len);
    LoopLines {
        prefix: lines,
        cycle,
    }
}
