//! What one worker of a search keeps while it steps a [`ClusterModel`](super::ClusterModel):
//! the engine creates it per worker ([`Model::worker`](crate::engine::Model::worker)) and
//! passes it to every step, so that the controllers and the reduction keep their scratch
//! buffers here instead of in thread-locals, and a step learns what it must of the search
//! (whether to stop a long listing, the memory budget, which children are computed again).

use super::kube_scheduling::CycleCache;
use super::scheduler_steps::{RememberedPlacements, StepScratch};
use super::symmetry;
use crate::cluster::ClusterState;
use crate::engine::memory::{Charge, MemoryBudget};
use crate::engine::model::WorkerBounds;

/// A [`ClusterModel`](super::ClusterModel)'s context for one worker.
pub struct ClusterWorker {
    /// The bounds of the search the worker serves.
    pub(super) bounds: WorkerBounds,
    /// The scheduler's cycle buffers and the candidates of a tie.
    pub(super) scheduler: StepScratch,
    /// The snapshot and the last kube-scheduler cycle (`--semantics kubernetes`).
    pub(super) kube: CycleCache,
    /// The queue a kubelet step takes.
    pub(super) kubelet: Vec<u32>,
    /// The reduction's canonical-order, fingerprint and narrowing buffers.
    pub(super) symmetry: symmetry::Scratch,
    /// The placements of the scheduler outcomes this worker listed from states whose
    /// children the search computes again.
    pub(super) placements: RememberedPlacements,
    /// The states the listing of a state's actions computed (scheduler outcomes), each with
    /// its action's place in the list, while they are handed to the engine.
    pub(super) computed: Vec<(usize, ClusterState)>,
    /// Bytes for fingerprints taken inside a step (outcomes told apart by their classes).
    pub(super) encoding: Vec<u8>,
    /// The search's memory budget (as `bounds` has it), which a state's successors are
    /// charged to when they are very many; taken out while they are listed.
    pub(super) budget: Option<MemoryBudget>,
    /// What the successors last handed over were charged (those past the first few thousand
    /// of a state, `successors::KEPT_ACTIONS`), held until the engine has taken them in.
    pub(super) handed_over: Option<Charge>,
}

impl ClusterWorker {
    /// A context for a worker of a search with `bounds`.
    pub fn new(bounds: WorkerBounds) -> Self {
        Self {
            placements: RememberedPlacements::new(bounds.memory()),
            budget: bounds.memory().cloned(),
            bounds,
            scheduler: StepScratch::default(),
            kube: CycleCache::default(),
            kubelet: Vec::new(),
            symmetry: symmetry::Scratch::default(),
            computed: Vec::new(),
            encoding: Vec::new(),
            handed_over: None,
        }
    }

    /// A context outside any search (a replay, a tool, a test).
    pub fn unbounded() -> Self {
        Self::new(WorkerBounds::none())
    }
}
