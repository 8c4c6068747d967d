//! Eventually stable reconciliation (ESR, `--intent esr`), the liveness property Anvil (OSDI
//! '24) proves of controllers: if at some point the desired state stops changing, the cluster
//! eventually matches it and matches it from then on.
//!
//! Here the desired state stops changing when no more events (load changes, failures,
//! maintenance, kernel panics) and no more user commands start — a maintenance or a kernel
//! panic under way still ends, as it would on its own — and the cluster matches it
//! when it is *converged*: every deployment that exists has exactly its desired replicas
//! (`spec.replicas`, as the HPA or the user last set it) running on ready nodes, all in its
//! current replica set, and none of its pods pending or terminating. ESR fails when some run,
//! from some point on free of events and commands, is not converged infinitely often: it loops
//! without converging, or leaves convergence again and again (an HPA and a descheduler
//! fighting), or stops in a state that is not converged (a pod no node fits, a replica the
//! deployment controller never makes).
//!
//! The search is the parallel lasso search of the eviction-loop check
//! ([`crate::engine::cndfs`]) on a product of the cluster with one bit, *settled*: a run may
//! settle at any state, after which events and commands are off; a settled state with nothing
//! left to do stays where it is (the stutter of a finished run). The transitions into settled
//! states that are not converged are the marked ones, so a lasso whose cycle is marked is a
//! settled run that is not converged infinitely often, which is exactly a counterexample. The
//! lasso is printed on the cluster alone: the path, where the events stop, and the loop (or
//! the state the run stops in).
//!
//! Kubernetes guarantees none of this: controllers are level-triggered and retry forever, so a
//! cluster that cannot converge (unschedulable pods, controllers undoing each other) keeps
//! trying without an error; that is why it is worth checking.

use super::found::{searched_cluster, FoundLoop, LoopKind, LoopSearch, LoopVerdict};
use crate::cluster::{ClusterAction, ClusterState, NodeStatus, PodPhase};
use crate::engine::cndfs::{find_lasso_parallel, LassoOptions, LassoSearch};
use crate::engine::lasso::Lasso;
use crate::engine::trace::Step;
use crate::engine::{Model, Property, StepBuffers, WorkerBounds};
use crate::model::{ClusterModel, ClusterWorker};

/// How far a state is from the desired state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Convergence {
    /// Every deployment has its desired replicas running on ready nodes, and nothing else.
    Converged,
    /// Some deployment does not match.
    NotConverged,
    /// Every deployment matches except for replicas the model has no pod slot for: a bounded
    /// model cannot say whether the cluster would converge.
    OutOfSlots,
}

/// One deployment that does not match its desired state, with its pods counted.
#[derive(Clone, Copy, Debug, Default)]
struct Shortfall {
    desired: i32,
    running: i32,
    pending: i32,
    terminating: i32,
    old: i32,
    /// Short only of replicas the model has no free pod slot for.
    out_of_slots: bool,
}

/// The deployments of `state` (by id) that do not match their desired state, counted in one
/// pass over the pods.
fn shortfalls(state: &ClusterState) -> Vec<(usize, Shortfall)> {
    let deployments = state.deployments();
    let mut counts = vec![Shortfall::default(); deployments.len() + 1];
    let mut free_slot = false;
    for pod in state.pods() {
        let d = usize::from(pod.deployment);
        if pod.phase == PodPhase::Idle {
            free_slot = true;
            continue;
        }
        if !pod.owned || d == 0 || d > deployments.len() {
            continue;
        }
        let count = &mut counts[d];
        match pod.phase {
            PodPhase::Idle => {}
            PodPhase::Pending => count.pending += 1,
            PodPhase::Terminating => count.terminating += 1,
            PodPhase::Running => {
                let node = usize::from(pod.loc);
                if node != 0 && state.node(node).status == NodeStatus::Ready {
                    count.running += 1;
                }
            }
        }
        let current = usize::from(deployments[d - 1].cur_version);
        if pod.replica_set != 0 && !pod.in_replica_set(current) {
            count.old += 1;
        }
    }
    let mut short = Vec::new();
    for (index, deployment) in deployments.iter().enumerate() {
        let mut count = counts[index + 1];
        count.desired = deployment.spec_replicas;
        let unsettled = count.pending + count.terminating + count.old;
        if !deployment.active || (count.running == count.desired && unsettled == 0) {
            continue;
        }
        count.out_of_slots = !free_slot && count.running < count.desired && unsettled == 0;
        short.push((index + 1, count));
    }
    short
}

/// How far `state` is from the desired state; see the module documentation.
pub fn convergence(state: &ClusterState) -> Convergence {
    let short = shortfalls(state);
    if short.iter().any(|(_, count)| !count.out_of_slots) {
        Convergence::NotConverged
    } else if short.is_empty() {
        Convergence::Converged
    } else {
        Convergence::OutOfSlots
    }
}

/// Why `state` is not converged: one line per deployment that does not match its desired
/// state (empty when the cluster is converged).
pub fn unconverged(state: &ClusterState) -> Vec<String> {
    shortfalls(state)
        .into_iter()
        .map(|(id, count)| {
            let mut why = format!(
                "deployment {id}: {} of {} desired replicas running on ready nodes",
                count.running, count.desired
            );
            for (n, what) in [
                (count.pending, "pending"),
                (count.terminating, "terminating"),
                (count.old, "of an old replica set"),
            ] {
                if n > 0 {
                    why.push_str(&format!(", {n} {what}"));
                }
            }
            if count.out_of_slots {
                why.push_str(&format!(
                    " (every one of the model's {} pod slots is taken)",
                    state.pods().len()
                ));
            }
            why
        })
        .collect()
}

/// A state of the product: the cluster, and whether the run has settled (no more events or
/// commands start).
#[derive(Clone, Debug, PartialEq)]
struct Phased {
    cluster: ClusterState,
    settled: bool,
}

/// A step of the product.
#[derive(Clone, Debug, PartialEq)]
enum PhasedAction {
    /// A step of the cluster.
    Cluster(ClusterAction),
    /// No event or command happens from here on.
    Settle,
    /// A settled run with nothing left to do stays where it is.
    Stay,
}

/// The cluster with the settled bit; see the module documentation.
struct Settling<'a> {
    cluster: &'a ClusterModel,
}

impl Model for Settling<'_> {
    type State = Phased;
    type Action = PhasedAction;
    type Worker = ClusterWorker;

    fn worker(&self, bounds: WorkerBounds) -> ClusterWorker {
        self.cluster.worker(bounds)
    }

    fn init_states(&self) -> Vec<Phased> {
        vec![Phased {
            cluster: self.cluster.initial_state().clone(),
            settled: false,
        }]
    }

    fn actions(&self, w: &mut ClusterWorker, state: &Phased, actions: &mut Vec<PhasedAction>) {
        let mut cluster = Vec::new();
        Model::actions(self.cluster, w, &state.cluster, &mut cluster);
        actions.extend(
            cluster
                .into_iter()
                .filter(|action| self.taken(state, action))
                .map(PhasedAction::Cluster),
        );
        let stuck = actions.is_empty() && !self.cluster.withholds_step(w, &state.cluster);
        self.settle_or_stay(state, stuck, |action| actions.push(action));
    }

    fn next_state(
        &self,
        w: &mut ClusterWorker,
        state: &Phased,
        action: &PhasedAction,
    ) -> Option<Phased> {
        match action {
            PhasedAction::Cluster(step) => Some(Phased {
                cluster: Model::next_state(self.cluster, w, &state.cluster, step)?,
                settled: state.settled,
            }),
            PhasedAction::Settle => Some(Phased {
                cluster: state.cluster.clone(),
                settled: true,
            }),
            PhasedAction::Stay => Some(state.clone()),
        }
    }

    /// The cluster's successors (a scheduler step's outcomes as its listing computed them),
    /// then settling or staying, in the order of [`Model::actions`].
    fn successors(
        &self,
        w: &mut ClusterWorker,
        state: &Phased,
        _: &mut StepBuffers<PhasedAction, Phased>,
        mut visit: impl FnMut(PhasedAction, Phased),
    ) {
        let mut any = false;
        let settled = state.settled;
        self.cluster.successors(
            w,
            &state.cluster,
            &mut StepBuffers::new(),
            |action, cluster| {
                if self.taken(state, &action) {
                    any = true;
                    visit(PhasedAction::Cluster(action), Phased { cluster, settled });
                }
            },
        );
        let stuck = !any && !self.cluster.withholds_step(w, &state.cluster);
        self.settle_or_stay(state, stuck, |action| {
            let next = match action {
                PhasedAction::Settle => Phased {
                    cluster: state.cluster.clone(),
                    settled: true,
                },
                _ => state.clone(),
            };
            visit(action, next);
        });
    }

    /// What the cluster model left out of the states it listed: a lasso search that found
    /// none is then incomplete, not a proof.
    fn left_out(&self) -> Option<String> {
        self.cluster.left_out()
    }

    fn encode(&self, w: &mut ClusterWorker, state: &Phased, out: &mut Vec<u8>) {
        Model::encode(self.cluster, w, &state.cluster, out);
        out.push(u8::from(state.settled));
    }

    fn fingerprint(&self, w: &mut ClusterWorker, state: &Phased, scratch: &mut Vec<u8>) -> u64 {
        let cluster = Model::fingerprint(self.cluster, w, &state.cluster, scratch);
        // Settled states are told apart by a fixed odd multiplier's mix of the cluster's.
        if state.settled {
            cluster.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29) ^ 0x5e77
        } else {
            cluster
        }
    }

    fn properties(&self) -> Vec<Property> {
        Vec::new()
    }

    fn holds(&self, _: &mut ClusterWorker, _property: usize, _state: &Phased) -> bool {
        true
    }

    fn state_heap_bytes(&self, state: &Phased) -> usize {
        self.cluster.state_heap_bytes(&state.cluster)
    }
}

impl Settling<'_> {
    /// Whether the product takes the cluster's `action` in `state`: a settled run takes no
    /// event or command but those that end a disturbance.
    fn taken(&self, state: &Phased, action: &ClusterAction) -> bool {
        !state.settled || !action.is_environment() || action.ends_disturbance()
    }

    /// Gives `add` the product's own step in `state`: settling, or for a settled run whose
    /// cluster takes no step (`stuck`; not where the model withholds one it cannot take,
    /// [`ClusterModel::withholds_step`]), staying.
    fn settle_or_stay(&self, state: &Phased, stuck: bool, mut add: impl FnMut(PhasedAction)) {
        if !state.settled {
            add(PhasedAction::Settle);
        } else if stuck {
            add(PhasedAction::Stay);
        }
    }
}

/// Searches `model` for a run that violates eventually stable reconciliation, on every worker
/// of `options`. `Err` is an internal error: a lasso found that does not replay.
pub fn find_unstable_reconciliation(
    model: &ClusterModel,
    options: &LassoOptions,
) -> Result<LoopSearch, String> {
    // Without symmetry (a cycle of the reduced graph may close on a renaming) and without
    // intent monitors, as the eviction-loop search.
    let cluster = searched_cluster(model);
    let product = Settling { cluster: &cluster };
    // First a run that is not converged infinitely often for a reason the model does not
    // impose; failing that, one that stays short of replicas only for want of pod slots,
    // which leaves the answer open.
    let settled_in = |wanted: Convergence| {
        move |_: &Phased, _: &PhasedAction, after: &Phased| {
            after.settled && convergence(&after.cluster) == wanted
        }
    };
    let genuine = settled_in(Convergence::NotConverged);
    let mut outcome = find_lasso_parallel(&product, genuine, options)?;
    let mut stats = outcome.stats;
    let verdict = match outcome.search {
        LassoSearch::Found(lasso) => LoopVerdict::Found(Box::new(FoundLoop {
            kind: LoopKind::UnstableReconciliation,
            lasso: on_the_cluster(&lasso),
            model: cluster.clone(),
            length: outcome.length.clone(),
        })),
        LassoSearch::Incomplete(reason) => LoopVerdict::Incomplete(reason),
        LassoSearch::None => {
            let bounded = settled_in(Convergence::OutOfSlots);
            let second = find_lasso_parallel(&product, bounded, options)?;
            stats.states += second.stats.states;
            stats.transitions += second.stats.transitions;
            outcome.elapsed += second.elapsed;
            match second.search {
                LassoSearch::None => LoopVerdict::None,
                LassoSearch::Incomplete(reason) => LoopVerdict::Incomplete(reason),
                LassoSearch::Found(lasso) => {
                    let cycle = std::iter::once(lasso.entry())
                        .chain(lasso.cycle.iter().map(|step| &step.state));
                    let reasons = cycle
                        .map(|state| unconverged(&state.cluster))
                        .find(|reasons| !reasons.is_empty())
                        .unwrap_or_default();
                    LoopVerdict::Incomplete(format!(
                        "a run settles short of replicas the model has no pod slot for ({}); \
                         give the topology more pod slots (more pods in the input, or a \
                         template's larger topologies) to decide",
                        reasons.join("; ")
                    ))
                }
            }
        }
    };
    Ok(LoopSearch {
        verdict,
        stats,
        elapsed: outcome.elapsed,
    })
}

/// The product's lasso as steps of the cluster alone: the settle and stay steps, which do not
/// change the cluster, are left out (a cycle of stays only becomes empty: the run stops there).
fn on_the_cluster(lasso: &Lasso<Settling<'_>>) -> Lasso<ClusterModel> {
    let steps = |steps: &[Step<Settling<'_>>]| -> Vec<Step<ClusterModel>> {
        steps
            .iter()
            .filter_map(|step| match &step.action {
                PhasedAction::Cluster(action) => Some(Step {
                    action: *action,
                    state: step.state.cluster.clone(),
                }),
                PhasedAction::Settle | PhasedAction::Stay => None,
            })
            .collect()
    };
    Lasso {
        init: lasso.init.cluster.clone(),
        prefix: steps(&lasso.prefix),
        cycle: steps(&lasso.cycle),
    }
}
