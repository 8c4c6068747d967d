//! Where a listed outcome of a scheduler step put each pod it took off the queue
//! ([`Placements`]), and the step taken again from them in one pass ([`replay_placements`]).

use crate::cluster::{ClusterSpec, ClusterState, ItemClock, PodPhase, Queue, Recorder};
use crate::controllers::scheduler::{bind, fits_nowhere};

/// Where a listed outcome of a scheduler step put each pod it took off the queue, in queue
/// order: the pod's node, [`Placements::SKIPPED`] for a pod already running or terminating
/// (taken off and left as it is), or [`Placements::UNSCHEDULABLE`] for the pod that fit
/// nowhere and ended the step. Enough to take the step again without filtering, scoring or
/// narrowing anything ([`replay_placements`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placements(pub(super) Box<[u16]>);

impl Placements {
    /// A pod taken off the queue without being scheduled (running or terminating).
    pub const SKIPPED: u16 = 0;
    /// The pod that fit no node, which ends the step.
    pub const UNSCHEDULABLE: u16 = u16::MAX;

    /// The placements of the step from `source` that ended in `end`: each pod the step took
    /// off `source`'s queue, at the node `end` binds it to. Only the last can have fit
    /// nowhere (that ends the step), and a bound pod joins the kubelet's queue, so the last
    /// fit nowhere when `end` does not have it there. `None` when that cannot be told: the
    /// last pod was in the kubelet's queue already.
    pub fn of(source: &ClusterState, end: &ClusterState) -> Option<Self> {
        let queue = source.pending(Queue::Scheduler);
        let left = end.pending(Queue::Scheduler).len();
        let taken = &queue[..queue.len() - left];
        let skipped = |pod: usize| {
            matches!(
                source.pod(pod).phase,
                PodPhase::Running | PodPhase::Terminating
            )
        };
        let mut placements: Vec<u16> = taken
            .iter()
            .map(|&pod| match skipped(pod as usize) {
                true => Self::SKIPPED,
                false => end.pod(pod as usize).loc,
            })
            .collect();
        if let Some(&last) = taken.last().filter(|&&pod| !skipped(pod as usize)) {
            let in_kubelet_queue = |state: &ClusterState| {
                state.pod(last as usize).queued & crate::cluster::pod_queue::KUBELET != 0
            };
            if in_kubelet_queue(source) {
                return None;
            }
            if !in_kubelet_queue(end) {
                *placements.last_mut().expect("a pod was taken") = Self::UNSCHEDULABLE;
            }
        }
        Some(Self(placements.into()))
    }

    /// How many pods the step took off the queue.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the step took no pod off the queue.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The scheduler step that puts the pods it takes off the queue where `placements` says
/// ([`Placements::of`] an outcome [`for_each_choice`] listed from this state): the outcome's
/// state, in one pass over the queue instead of scheduling each pod again.
pub fn replay_placements(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    placements: &Placements,
    rec: &mut Recorder,
) {
    let mut clock = ItemClock::default();
    for &node in placements.0.iter() {
        let pod = state.pending(Queue::Scheduler)[0] as usize;
        match node {
            Placements::SKIPPED => {
                state.dequeue(Queue::Scheduler);
            }
            Placements::UNSCHEDULABLE => {
                fits_nowhere(spec, state, rec);
                break;
            }
            n => bind(spec, state, pod, n as usize),
        }
        clock.tick(spec, state);
    }
    clock.settle(spec, state);
}
