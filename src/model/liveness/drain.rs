//! `drain_completes` (`--intent drain`): every `drain` event that has started eventually
//! completes — no pod is left on its node ([`crate::events::drain`]).
//!
//! `kubectl drain` has no deadline by default: `evictPods` retries an eviction the Eviction
//! API refuses (429, a PodDisruptionBudget allowing no disruption) every 5 s for as long as
//! it takes. A drain that never completes is the classic incident: a budget whose
//! `minAvailable` equals the replicas, or whose evicted pods cannot be replaced because the
//! other nodes are full, so `disruptionsAllowed` never rises above 0.
//!
//! A violation is a lasso: a run that comes back to the same state forever with the drain
//! unfinished. Fairness: the drain retries every 5 s, while controllers act within
//! milliseconds; where the cluster is quiet (no controller has work queued) time passes, so a
//! retry falls there, and an eviction allowed in a quiet state is taken. A cycle is a
//! counterexample when it passes through a quiet state in which the drain is blocked
//! ([`Blocked`](crate::events::drain::DrainProgress::Blocked): pods left on the node, none terminating, every one refused):
//! kubectl's retries may all fall in such states, forever. A cycle whose quiet states all
//! allow an eviction is not one (the retry there succeeds), nor a busy cycle through no quiet
//! state. A run that stops (no step enabled) with the drain blocked is the lasso that stays
//! in its last state. So "no violation" means: every fair run finishes the drain, within the
//! model's bounds; the search is the parallel lasso search of `--loop` and `--intent esr`
//! ([`crate::engine::cndfs`]), and a search a bound cuts short is incomplete (exit 3), never
//! a proof.

use super::found::{searched_cluster, LoopKind, LoopSearch};
use crate::cluster::{ClusterAction, ClusterState};
use crate::engine::cndfs::{find_lasso_parallel, LassoOptions};
use crate::engine::lasso::Lasso;
use crate::engine::trace::Step;
use crate::engine::{Model, Property, StepBuffers, WorkerBounds};
use crate::events::drain::any_blocked;
pub use crate::events::drain::refusals;
use crate::model::{ClusterModel, ClusterWorker};

/// A step of the cluster with retries: a cluster step, or, where the cluster has none, the
/// run staying where it is (kubectl retrying against a cluster that no longer moves).
#[derive(Clone, Debug, PartialEq)]
enum Retry {
    /// A step of the cluster.
    Cluster(ClusterAction),
    /// Nothing is enabled: the run stays in its state.
    Stay,
}

/// The cluster, with a stay step in every state that has no other (so that a run which stops
/// is a lasso too).
struct Retrying<'a> {
    cluster: &'a ClusterModel,
}

impl Model for Retrying<'_> {
    type State = ClusterState;
    type Action = Retry;
    type Worker = ClusterWorker;

    fn worker(&self, bounds: WorkerBounds) -> ClusterWorker {
        self.cluster.worker(bounds)
    }

    fn init_states(&self) -> Vec<ClusterState> {
        vec![self.cluster.initial_state().clone()]
    }

    fn actions(&self, w: &mut ClusterWorker, state: &ClusterState, actions: &mut Vec<Retry>) {
        let mut cluster = Vec::new();
        Model::actions(self.cluster, w, state, &mut cluster);
        if cluster.is_empty() && !self.cluster.withholds_step(w, state) {
            actions.push(Retry::Stay);
        }
        actions.extend(cluster.into_iter().map(Retry::Cluster));
    }

    fn next_state(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        action: &Retry,
    ) -> Option<ClusterState> {
        match action {
            Retry::Cluster(step) => Model::next_state(self.cluster, w, state, step),
            Retry::Stay => Some(state.clone()),
        }
    }

    /// The cluster's successors (a scheduler step's outcomes as its listing computed them),
    /// or staying where there are none.
    fn successors(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        _: &mut StepBuffers<Retry, ClusterState>,
        mut visit: impl FnMut(Retry, ClusterState),
    ) {
        let mut any = false;
        self.cluster
            .successors(w, state, &mut StepBuffers::new(), |action, next| {
                any = true;
                visit(Retry::Cluster(action), next);
            });
        if !any && !self.cluster.withholds_step(w, state) {
            visit(Retry::Stay, state.clone());
        }
    }

    /// What the cluster model left out of the states it listed: a lasso search that found
    /// none is then incomplete, not a proof.
    fn left_out(&self) -> Option<String> {
        self.cluster.left_out()
    }

    fn encode(&self, w: &mut ClusterWorker, state: &ClusterState, out: &mut Vec<u8>) {
        Model::encode(self.cluster, w, state, out);
    }

    fn fingerprint(
        &self,
        w: &mut ClusterWorker,
        state: &ClusterState,
        scratch: &mut Vec<u8>,
    ) -> u64 {
        Model::fingerprint(self.cluster, w, state, scratch)
    }

    fn properties(&self) -> Vec<Property> {
        Vec::new()
    }

    fn holds(&self, _: &mut ClusterWorker, _property: usize, _state: &ClusterState) -> bool {
        true
    }

    fn state_heap_bytes(&self, state: &ClusterState) -> usize {
        self.cluster.state_heap_bytes(state)
    }
}

/// Whether a drain of `model` is blocked in `state` while the cluster is quiet: where
/// kubectl's retry falls, and is refused (see the module documentation).
fn refused_when_quiet(model: &ClusterModel, state: &ClusterState) -> bool {
    state.is_quiet() && any_blocked(model.spec(), state)
}

/// Searches `model` for a drain that never completes, on every worker of `options`. `Err` is
/// an internal error: a lasso found that does not replay.
pub fn find_stuck_drain(
    model: &ClusterModel,
    options: &LassoOptions,
) -> Result<LoopSearch, String> {
    let cluster = searched_cluster(model);
    let product = Retrying { cluster: &cluster };
    let marked =
        |_: &ClusterState, _: &Retry, after: &ClusterState| refused_when_quiet(&cluster, after);
    let outcome = find_lasso_parallel(&product, marked, options)?;
    Ok(LoopSearch::of(
        outcome,
        LoopKind::DrainNeverCompletes,
        &cluster,
        |lasso| on_the_cluster(&lasso),
    ))
}

/// The lasso as steps of the cluster alone: stay steps are left out (a cycle of stays only
/// becomes empty: the run stops there).
fn on_the_cluster(lasso: &Lasso<Retrying<'_>>) -> Lasso<ClusterModel> {
    let steps = |steps: &[Step<Retrying<'_>>]| -> Vec<Step<ClusterModel>> {
        steps
            .iter()
            .filter_map(|step| match &step.action {
                Retry::Cluster(action) => Some(Step {
                    action: *action,
                    state: step.state.clone(),
                }),
                Retry::Stay => None,
            })
            .collect()
    };
    Lasso {
        init: lasso.init.clone(),
        prefix: steps(&lasso.prefix),
        cycle: steps(&lasso.cycle),
    }
}
