//! A scheduler step's ties, as the model explores them: the ways one step of the scheduler
//! ([`crate::controllers::scheduler`]) may place its queue when pods tie between nodes.
//!
//! kube-scheduler's `selectHost` picks uniformly at random among the top-scored nodes, so
//! under `--tie-break any` every choice is explored. A step drains the queue as one atomic
//! block, as under `lowest` (so `any` explores exactly `lowest`'s interleavings, with every
//! choice at every tie), and has one outcome per way of placing its tied pods: the action
//! ([`ClusterAction::SchedulerChoice`](crate::cluster::ClusterAction)) numbers them in the
//! order [`for_each_choice`] lists them, and [`run`] lists the step again to replay one. A
//! queue without ties is one step with one outcome, as under `lowest`. The model may narrow a
//! tie to one node per group of interchangeable nodes and follow one partly placed state per
//! class ([`Reduce`]: by looking at the whole state, or by node labels it keeps up to date pod
//! by pod, [`Labels`]). A listing holds as many partly placed states and outcomes as the
//! search's memory budget allows ([`Use::Listings`]); one the budget cannot hold is listed in
//! part and the check reports itself incomplete.
//!
//! - `drain`: the queue drained pod by pod, each tie chosen by a `Choose` (digits of a listed
//!   outcome, or a probe that stops at the next tie).
//! - `listing`: [`for_each_choice`], every outcome breadth first.
//! - `placements`: where an outcome put each pod ([`Placements`]), to take it again in one pass.
//! - `cache`: what a worker remembers of the placements it listed, and the listings every
//!   worker of a search shares, as a caching wrapper around the listing.

mod cache;
mod drain;
mod listing;
mod placements;
#[cfg(test)]
mod tests;

pub use cache::{Listing, RememberedPlacements, SharedListings};
pub use drain::Drained;
pub use listing::for_each_choice;
pub use placements::{replay_placements, Placements};

use crate::cluster::{ClusterSpec, ClusterState, Recorder, TieBreak};
use crate::controllers::scheduler;
use crate::controllers::scheduler::fit_error::{self, FitError};
use crate::engine::memory::{allocation_size, Use};
use crate::engine::WorkerBounds;
use drain::{drain, Digits, Labelled};

/// What one worker keeps between scheduler steps: the controller's cycle scratch and the
/// candidates of the tie at hand, so that a step allocates nothing once they have grown.
#[derive(Default)]
pub struct StepScratch {
    /// The controller's buffers and matching-pod counts.
    cycle: scheduler::Scratch,
    /// The nodes of a tie worth exploring (the tie narrowed by the model).
    candidates: Vec<u16>,
    /// The labels a tie narrowed by labels kept ([`Reduce::Labels`]).
    labelled: Labelled,
}

/// Narrows the top-scored nodes of a tie (ascending ids) to those worth exploring, in place,
/// keeping their order: the model drops nodes interchangeable with one already listed when it
/// reduces by symmetry.
pub type Narrow<'a> = &'a dyn Fn(&ClusterState, &mut Vec<u16>);

/// A fingerprint of a state's class under the model's symmetry, equal for states that are
/// renamings of each other ([`for_each_choice`] lists one of each).
pub type Class<'a> = &'a dyn Fn(&ClusterState) -> u64;

/// How a listing or a replay of a scheduler step narrows ties and tells its partly placed
/// states apart (the model's symmetry reduction, if any). A listing and the replay of one of
/// its outcomes must be given the same, so that the replay meets the same candidates.
#[derive(Clone, Copy)]
pub enum Reduce<'a> {
    /// Every top-scored node is a candidate and partly placed states have no classes.
    Off,
    /// Ties are narrowed, and partly placed states classed (if given), by looking at the whole
    /// state each time.
    Whole(Narrow<'a>, Option<Class<'a>>),
    /// Nodes carry labels kept up to date pod by pod ([`Labels`]): a tie keeps the first
    /// candidate of each label, and a partly placed state's class is kept with its labels.
    Labels(&'a dyn Labels),
}

/// A reduction that labels nodes so that nodes with equal labels are interchangeable in the
/// state at hand, and keeps the labels (and a partly placed state's class) up to date as a
/// step binds pods, instead of comparing every tied node's pods at every tie: on a cluster of
/// a thousand alike nodes a tie has a thousand candidates, and a step binds thousands of pods.
pub trait Labels {
    /// The labels of the step's source, where the listing or replay starts.
    fn start(&self) -> Track;

    /// Updates `track` after the step bound pod `pod` to node `node`, giving `state`.
    fn bound(&self, track: &mut Track, state: &ClusterState, pod: usize, node: usize);

    /// The class of `state`, a partly placed state of the step whose labels `track` holds.
    fn class(&self, track: &Track, state: &ClusterState) -> u64;
}

/// A partly placed state's node labels and what its [`Labels`] keep beside them.
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// Per node id (index 0 unused): its label; nodes with equal labels are interchangeable.
    pub labels: Vec<u32>,
    /// Per node id: two sums the reduction keeps over the pods the step bound to the node.
    pub sums: Vec<[u64; 2]>,
    /// The reduction's running part of the state's class.
    pub class: u64,
}

impl Track {
    /// Bytes the labels and sums hold on the heap, as the allocator rounds their blocks.
    pub fn heap_bytes(&self) -> usize {
        allocation_size(self.labels.capacity() * std::mem::size_of::<u32>())
            + allocation_size(self.sums.capacity() * std::mem::size_of::<[u64; 2]>())
    }
}

/// How the listing of a scheduler step's outcomes ([`for_each_choice`]) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listed {
    /// Every outcome was visited.
    All,
    /// The visitor asked to stop.
    Stopped,
    /// The memory budget ([`Use::Listings`]) could not hold the step's partly placed states
    /// and outcomes: those visited are only some of them. A step drains the whole queue, so
    /// its outcomes are all the ways of placing its tied pods: without symmetry reduction the
    /// product of its ties' sizes (24 pods on 8 empty nodes spread by hostname: (8!)³ ≈ 6.6 ×
    /// 10¹³), with it one per class of outcomes (one, there).
    OutOfMemory {
        /// The outcomes listed before the budget ran out.
        listed: u64,
        /// The bytes the listing held when a charge was refused.
        held: u64,
    },
    /// The search the listing serves reached its time limit or was cancelled
    /// ([`WorkerBounds::stop_requested`], asked between partly placed states) before it was
    /// done: those visited are only some of the outcomes. A listing of a step on a large
    /// cluster can take longer than a search may run, so it is cut rather than finished.
    Cut,
}

/// One scheduler step: schedules every queued pod that is not running or terminating
/// ([`scheduler::run`] under [`TieBreak::Lowest`]).
///
/// Under [`TieBreak::Any`], `choice` is the number of the outcome in the order
/// [`for_each_choice`] lists them with the same `reduce`; the step is listed again to find
/// where that outcome puts each tied pod. Under [`TieBreak::Lowest`] it is ignored.
///
/// # Panics
/// When `choice` is not a listed outcome's number: a step is only ever taken with a number its
/// listing gave (the engine reports the panic as an internal error).
pub fn run(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    choice: u64,
    reduce: Reduce,
    scratch: &mut StepScratch,
    rec: &mut Recorder,
) {
    if spec.tie_break == TieBreak::Lowest {
        return scheduler::run(spec, state, &mut scratch.cycle, rec);
    }
    let digits = outcome_digits(spec, state, reduce, choice, scratch);
    replay(spec, state, &digits, reduce, scratch, rec);
}

/// The scheduler step whose ties take the candidates `digits` names, in the order the step
/// meets its ties with a choice (as [`for_each_choice`] gives them with the same `reduce`):
/// [`run`] without listing the step to find them.
fn replay(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    digits: &[u16],
    reduce: Reduce,
    scratch: &mut StepScratch,
    rec: &mut Recorder,
) {
    let mut track = start(reduce);
    scratch.cycle.resume_counts(None);
    let mut digits = Digits::new(digits);
    drain(spec, state, &mut digits, reduce, &mut track, rec, scratch);
}

/// The labels a step starts from under `reduce`, if it labels nodes.
fn start(reduce: Reduce) -> Option<Track> {
    match reduce {
        Reduce::Labels(labels) => Some(labels.start()),
        _ => None,
    }
}

/// Where outcome number `choice` of the step in `state` puts its tied pods: the index of the
/// candidate each tie with a choice takes, in the order the step meets them (none under
/// [`TieBreak::Lowest`], which has no choices).
fn outcome_digits(
    spec: &ClusterSpec,
    state: &ClusterState,
    reduce: Reduce,
    choice: u64,
    scratch: &mut StepScratch,
) -> Vec<u16> {
    if spec.tie_break == TieBreak::Lowest {
        return Vec::new();
    }
    let mut found = None;
    for_each_choice(
        spec,
        state,
        reduce,
        &WorkerBounds::none(),
        scratch,
        |index, digits, _| {
            if index != choice {
                return true;
            }
            found = Some(digits.to_vec());
            false
        },
    );
    found.unwrap_or_else(|| panic!("scheduler outcome {choice} is not one the step lists"))
}

/// The pod a scheduler step in `state` (outcome number `choice`, as [`run`] takes it) finds no
/// node for, with its `FitError`: the step replayed up to that pod, binding the pods before it.
pub fn first_unschedulable(
    spec: &ClusterSpec,
    state: &ClusterState,
    choice: u64,
    reduce: Reduce,
) -> Option<FitError> {
    let scratch = &mut StepScratch::default();
    let digits = match spec.tie_break {
        TieBreak::Lowest => Vec::new(),
        TieBreak::Any => outcome_digits(spec, state, reduce, choice, scratch),
    };
    let mut s = state.clone();
    let mut digits = Digits::new(&digits);
    let mut track = start(reduce);
    match drain(
        spec,
        &mut s,
        &mut digits,
        reduce,
        &mut track,
        &mut Recorder::off(),
        scratch,
    ) {
        Drained::Unschedulable { pod } => fit_error::fit_error(spec, &s, pod),
        _ => None,
    }
}
