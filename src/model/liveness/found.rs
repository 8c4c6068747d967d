//! What a liveness search of the cluster finds and reports: the kind of lasso, the lasso on
//! the cluster without its monitors, and the verdict.

use crate::engine::cndfs::{LassoOutcome, LassoSearch, LassoStats};
use crate::engine::lasso::Lasso;
use crate::engine::outcome::TraceLength;
use crate::engine::Model;
use crate::model::{ClusterModel, ModelOptions};

/// What a lasso of the cluster shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopKind {
    /// Pods are evicted and re-created forever (`--loop`).
    Eviction,
    /// After the last event and command the cluster never stays converged (`--intent esr`,
    /// [`super::stable_reconciliation`]).
    UnstableReconciliation,
    /// A started drain never completes: it is blocked forever, or again and again at the
    /// moments it retries (`--intent drain`, [`super::drain`]).
    DrainNeverCompletes,
}

impl LoopKind {
    /// The property's name in reports (the SARIF rule, the JSON `property`).
    pub fn rule(self) -> &'static str {
        match self {
            Self::Eviction => "eviction_loop",
            Self::UnstableReconciliation => "eventually_stable_reconciliation",
            Self::DrainNeverCompletes => "drain_completes",
        }
    }
}

/// A lasso of the cluster a liveness search found — an eviction loop, or a run that does not
/// stay converged, as its `kind` says — and the cluster model its states belong to.
#[derive(Clone, Debug)]
pub struct FoundLoop {
    /// What the lasso shows.
    pub kind: LoopKind,
    /// The cluster without its intent monitors, which the lasso's states and steps are of:
    /// monitors only count, so leaving them out keeps them from lengthening or hiding loops.
    pub model: ClusterModel,
    /// The path to the loop and one round of it.
    pub lasso: Lasso<ClusterModel>,
    /// Whether no lasso of the cluster is shorter ([`crate::engine::shortest::lasso`]).
    pub length: TraceLength,
}

/// The cluster a loop search explores (and its report's setup describes): `model` without
/// intent monitors (only the scheduler's own `pod_always_schedulable`), and
/// without symmetry reduction: in the reduced graph a cycle may close on a renaming of its
/// first state, which is a loop of the cluster only after several rounds, so the search keeps
/// states as they are and every loop it reports closes on its own first state.
pub fn searched_cluster(model: &ClusterModel) -> ClusterModel {
    let mut spec = model.spec().clone();
    spec.intents.truncate(1);
    let (tie_break, semantics, perturbations) =
        (spec.tie_break, spec.semantics, spec.perturbations);
    let mut init = model.initial_state().clone();
    *init.monitors_mut() = Default::default();
    ClusterModel::new(spec, init)
        .with_options(ModelOptions {
            tie_break,
            semantics,
            symmetry: false,
            perturbations,
        })
        .without_symmetry("a loop search keeps states as they are")
}

/// What an eviction-loop search decided.
#[derive(Debug)]
pub enum LoopVerdict {
    /// A loop, replayed on the model (boxed: it holds the model and the states of the lasso).
    Found(Box<FoundLoop>),
    /// The cluster has none: every run settles or only loops without evicting.
    None,
    /// The search stopped before deciding, for the reason given.
    Incomplete(String),
}

/// An eviction-loop search's verdict, counts and time: what `kivi check --loop` reports.
#[derive(Debug)]
pub struct LoopSearch {
    /// The verdict.
    pub verdict: LoopVerdict,
    /// States and transitions explored, workers, table size.
    pub stats: LassoStats,
    /// Wall time.
    pub elapsed: std::time::Duration,
}

impl LoopSearch {
    /// What the lasso search `outcome` over a model of `cluster`'s runs decided: a lasso it
    /// found, as steps of `cluster` (`on_the_cluster`), is a loop of `kind`.
    pub(super) fn of<M: Model>(
        outcome: LassoOutcome<M>,
        kind: LoopKind,
        cluster: &ClusterModel,
        on_the_cluster: impl FnOnce(Lasso<M>) -> Lasso<ClusterModel>,
    ) -> Self {
        let verdict = match outcome.search {
            LassoSearch::Found(lasso) => LoopVerdict::Found(Box::new(FoundLoop {
                kind,
                model: cluster.clone(),
                lasso: on_the_cluster(lasso),
                length: outcome.length,
            })),
            LassoSearch::None => LoopVerdict::None,
            LassoSearch::Incomplete(reason) => LoopVerdict::Incomplete(reason),
        };
        Self {
            verdict,
            stats: outcome.stats,
            elapsed: outcome.elapsed,
        }
    }
}
