//! `--loop`: a reachable oscillation in which pods are evicted and re-created forever.
//!
//! Kivi's `-l` asks SPIN for non-progress cycles (on one core). kivi instead searches the
//! cluster's state graph for a lasso whose cycle evicts a pod, on every core and on the fly
//! ([`crate::engine::cndfs`]; the sequential [`crate::engine::lasso`] is the tests' reference): since the cycle
//! comes back to the same state, every pod it evicts is re-created within it, and the cluster
//! can repeat it forever without settling. Evictions are the descheduler's, the taint
//! manager's, the node controller's and (under `--semantics kubernetes`) the taint eviction
//! controller's; a deployment scaling down is not one.

use super::found::{searched_cluster, FoundLoop, LoopKind, LoopSearch};
use crate::cluster::{ClusterAction, ClusterState, PodPhase};
use crate::engine::cndfs::{find_lasso_parallel, LassoOptions};
use crate::engine::lasso::{find_lasso, TooManyStates};
use crate::engine::outcome::TraceLength;
use crate::model::ClusterModel;

/// Whether `action`, taken in `before` and leading to `after`, evicted a pod.
pub fn evicts_pod(
    model: &ClusterModel,
    before: &ClusterState,
    action: &ClusterAction,
    after: &ClusterState,
) -> bool {
    matches!(
        action,
        ClusterAction::Descheduler
            | ClusterAction::DeschedulerChoice { .. }
            | ClusterAction::TaintManager
            | ClusterAction::NodeController
            | ClusterAction::TolerationTimeout { .. }
    ) && (1..=model.spec().pods.len()).any(|p| {
        before.pod(p).phase != PodPhase::Terminating && after.pod(p).phase == PodPhase::Terminating
    })
}

/// Searches `model` for an eviction loop on every worker of `options`, on the fly
/// ([`crate::engine::cndfs`]). `Err` is an internal error: a loop found that does not replay.
pub fn find_eviction_loop(
    model: &ClusterModel,
    options: &LassoOptions,
) -> Result<LoopSearch, String> {
    let model = searched_cluster(model);
    let marked = |before: &ClusterState, action: &ClusterAction, after: &ClusterState| {
        evicts_pod(&model, before, action, after)
    };
    let outcome = find_lasso_parallel(&model, marked, options)?;
    Ok(LoopSearch::of(
        outcome,
        LoopKind::Eviction,
        &model,
        |lasso| lasso,
    ))
}

/// The sequential reference search ([`find_lasso`]: the whole graph, then Tarjan's
/// components), storing at most `max_states` states: its loop has a shortest prefix to the
/// eviction nearest the start and a shortest way back. Tests compare the parallel search with
/// it; `Ok(None)` means the cluster has no eviction loop.
pub fn find_eviction_loop_reference(
    model: &ClusterModel,
    max_states: usize,
) -> Result<Option<FoundLoop>, TooManyStates> {
    let model = searched_cluster(model);
    let lasso = find_lasso(
        &model,
        |before: &ClusterState, action: &ClusterAction, after: &ClusterState| {
            evicts_pod(&model, before, action, after)
        },
        max_states,
    )?;
    Ok(lasso.map(|lasso| FoundLoop {
        kind: LoopKind::Eviction,
        model,
        lasso,
        length: TraceLength::AsFound,
    }))
}
