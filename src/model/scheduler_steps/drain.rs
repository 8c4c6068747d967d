//! A scheduler step drained pod by pod, each tie chosen by a [`Choose`]: the digits of a
//! listed outcome ([`Digits`]), or a [`Probe`] that stops at the next tie so that a listing
//! can branch there.

use super::{Reduce, StepScratch, Track};
use crate::cluster::{ClusterSpec, ClusterState, ItemClock, PodPhase, Queue, Recorder};
use crate::controllers::scheduler::{self, MatchingCache};

/// Where a scheduler step stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drained {
    /// The queue is empty.
    Empty,
    /// Under [`TieBreak::Any`], while listing: the listing branches on the tie of the pod at the
    /// head of the queue (a choice, or one node when it follows more than one partly placed
    /// state pod by pod); the pod is still queued.
    AtTie,
    /// While listing: the pod chosen before the step went on ([`Choose::head`]) is bound and
    /// the step stopped before the next pod, without scheduling it, so that the listing can
    /// tell the partly placed state's class first.
    Paused,
    /// Pod `pod` fits no node: `pod_always_schedulable` is violated and the pod stays unbound.
    Unschedulable {
        /// The pod.
        pod: usize,
    },
}

/// A tie a listing branches on: its candidates after narrowing and its number of top-scored
/// nodes (one node, or none, where the pod's node is no choice).
#[derive(Clone, Debug)]
pub(super) struct Tie {
    pub(super) candidates: Vec<u16>,
    pub(super) tied: usize,
}

/// How a step chooses among the candidates of a tie.
pub(super) trait Choose {
    /// At a tie of `tied` top-scored nodes (at least two) narrowed to `candidates` (at least
    /// one): the index of the chosen candidate, or `None` to stop the step before the tied pod.
    fn choose(&mut self, tied: usize, candidates: usize) -> Option<usize>;

    /// The node for the first pod the step schedules, with the size of its tie, when it was
    /// chosen before the step began (none by default: the pod is scheduled as any other).
    fn head(&mut self) -> Option<(usize, usize)> {
        None
    }

    /// Whether to stop before the pod now at the head of the queue, without scheduling it
    /// (no by default).
    fn pause(&self) -> bool {
        false
    }

    /// Whether [`Choose::choose`] is also asked at pods whose node is no choice (one
    /// top-scored node: `tied` is 1 and the candidate is that node), so that the step can stop
    /// before any pod (no by default).
    fn asked_at_every_pod(&self) -> bool {
        false
    }
}

/// Replays a listed outcome's digits ([`for_each_choice`]): each tie with a choice takes the
/// candidate its digit names, in order, and the first candidate once the digits run out.
pub(super) struct Digits<'a> {
    digits: &'a [u16],
    next: usize,
}

impl<'a> Digits<'a> {
    pub(super) fn new(digits: &'a [u16]) -> Self {
        Self { digits, next: 0 }
    }
}

impl Choose for Digits<'_> {
    fn choose(&mut self, _tied: usize, candidates: usize) -> Option<usize> {
        if candidates == 1 {
            return Some(0);
        }
        let digit = self.digits.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        Some(digit as usize)
    }
}

/// Binds the first pod to `head`'s node (if given), goes on through pods whose node is no
/// choice (unless it stops at every pod), and stops before the next pod with a choice (noting
/// its tie in `tie`) or where the step ends; or, pausing, stops right after the first pod.
pub(super) struct Probe {
    /// The node for the pod at the head of the queue and the size of its tie: a listing
    /// branching on that tie has scheduled the pod once in this very state, so its filters,
    /// scores and narrowing are not run again for every candidate.
    head: Option<(usize, usize)>,
    /// Whether to stop before the next pod the step schedules, choice or not.
    every_pod: bool,
    /// Whether to stop once `head` is bound, before scheduling the next pod at all.
    pause_after_head: bool,
    pub(super) tie: Option<Tie>,
}

impl Choose for Probe {
    fn choose(&mut self, tied: usize, candidates: usize) -> Option<usize> {
        if candidates == 1 && !self.every_pod {
            return Some(0);
        }
        self.tie = Some(Tie {
            candidates: Vec::with_capacity(candidates),
            tied,
        });
        None
    }

    fn head(&mut self) -> Option<(usize, usize)> {
        self.head.take()
    }

    fn pause(&self) -> bool {
        self.pause_after_head && self.head.is_none()
    }

    fn asked_at_every_pod(&self) -> bool {
        self.every_pod
    }
}

impl Probe {
    /// A probe binding the first pod to `head`'s node, if given, and stopping before the next
    /// pod with a choice, or before the next pod at all when `every_pod`.
    pub(super) fn new(head: Option<(usize, usize)>, every_pod: bool) -> Self {
        Self {
            head,
            every_pod,
            pause_after_head: false,
            tie: None,
        }
    }

    /// A probe binding the first pod to `head`'s node and stopping right after it
    /// ([`Drained::Paused`]).
    pub(super) fn binding(head: (usize, usize)) -> Self {
        Self {
            pause_after_head: true,
            ..Self::new(Some(head), true)
        }
    }

    /// Drains `state`'s queue as [`drain`] does, choosing as the probe says; where it stops at
    /// a tie, the tie keeps its narrowed candidates. `matching` are the matching-pod counts
    /// of `state` as a listing kept them (none: counted afresh), and `track` its labels; the
    /// counts of the state the probe stops in are returned, for going on from there.
    pub(super) fn drain(
        &mut self,
        spec: &ClusterSpec,
        state: &mut ClusterState,
        reduce: Reduce,
        track: &mut Option<Track>,
        matching: Option<MatchingCache>,
        scratch: &mut StepScratch,
    ) -> MatchingCache {
        scratch.cycle.resume_counts(matching);
        drain(
            spec,
            state,
            self,
            reduce,
            track,
            &mut Recorder::off(),
            scratch,
        );
        if let Some(tie) = &mut self.tie {
            tie.candidates.extend_from_slice(&scratch.candidates);
        }
        scratch.cycle.take_counts()
    }
}

/// [`run`] on `scratch`, choosing ties with `choose` among the candidates `reduce` leaves
/// (with the node labels `track`, kept up to date, where it labels nodes); where it stopped.
pub(super) fn drain(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    choose: &mut impl Choose,
    reduce: Reduce,
    track: &mut Option<Track>,
    rec: &mut Recorder,
    scratch: &mut StepScratch,
) -> Drained {
    let mut clock = ItemClock::default();
    let step = Step { reduce, track };
    let drained = drain_items(spec, state, choose, step, rec, scratch, &mut clock);
    clock.settle(spec, state);
    drained
}

/// How [`drain_items`] narrows ties: the reduction and the node labels it keeps.
struct Step<'r, 'a> {
    reduce: Reduce<'a>,
    track: &'r mut Option<Track>,
}

impl Step<'_, '_> {
    /// Narrows the top-scored nodes `candidates` (ascending ids) of a tie in `state`;
    /// `seen` is scratch.
    fn narrow(&self, state: &ClusterState, candidates: &mut Vec<u16>, seen: &mut Labelled) {
        match (self.reduce, &*self.track) {
            (Reduce::Whole(narrow, _), _) => narrow(state, candidates),
            (Reduce::Labels(_), Some(track)) => seen.keep_first(&track.labels, candidates),
            _ => {}
        }
    }

    /// The nodes a scheduling cycle may take as alike: those of equal labels, which are
    /// interchangeable in the state at hand (what narrowing a tie to one node per label rests
    /// on), so they filter and score alike.
    fn alike(&self) -> Option<scheduler::Alike<'_>> {
        match (self.reduce, &*self.track) {
            (Reduce::Labels(_), Some(track)) => Some(scheduler::Alike {
                kinds: &track.labels,
            }),
            _ => None,
        }
    }

    /// Keeps the labels up to date after pod `pod` was bound to node `node` in `state`.
    fn bound(&mut self, state: &ClusterState, pod: usize, node: usize) {
        if let (Reduce::Labels(labels), Some(track)) = (self.reduce, &mut *self.track) {
            labels.bound(track, state, pod, node);
        }
    }
}

/// Which labels a tie has kept a candidate of: the round in which each label was last kept,
/// so that a tie's narrowing costs one look-up per candidate and nothing to clear.
#[derive(Default)]
pub(super) struct Labelled {
    round: u32,
    kept_in: Vec<u32>,
}

impl Labelled {
    /// Keeps, of `candidates`, the first node of each label.
    fn keep_first(&mut self, labels: &[u32], candidates: &mut Vec<u16>) {
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.kept_in.fill(0);
            self.round = 1;
        }
        let round = self.round;
        let kept_in = &mut self.kept_in;
        candidates.retain(|&n| {
            let label = labels[n as usize] as usize;
            if label >= kept_in.len() {
                kept_in.resize(label + 1, 0);
            }
            let first = kept_in[label] != round;
            kept_in[label] = round;
            first
        });
    }
}

/// [`drain`]'s loop over the queued pods, each one tick of `clock`.
fn drain_items(
    spec: &ClusterSpec,
    state: &mut ClusterState,
    choose: &mut impl Choose,
    mut step: Step,
    rec: &mut Recorder,
    scratch: &mut StepScratch,
    clock: &mut ItemClock,
) -> Drained {
    while let Some(&head) = state.pending(Queue::Scheduler).first() {
        if choose.pause() {
            return Drained::Paused;
        }
        let pod = head as usize;
        let phase = state.pod(pod).phase;
        if phase != PodPhase::Running && phase != PodPhase::Terminating {
            let (n, tied) = match choose.head() {
                Some(head) => head,
                None => {
                    let alike = step.alike();
                    let Some(lowest) =
                        scheduler::select(spec, state, pod, &mut scratch.cycle, alike)
                    else {
                        scheduler::fits_nowhere(spec, state, rec);
                        return Drained::Unschedulable { pod };
                    };
                    let tied = scratch.cycle.tie_size();
                    if tied <= 1 && !choose.asked_at_every_pod() {
                        (lowest, tied)
                    } else {
                        let candidates = &mut scratch.candidates;
                        candidates.clear();
                        if tied <= 1 {
                            candidates.push(lowest as u16);
                        } else {
                            candidates.extend_from_slice(scratch.cycle.tied());
                            step.narrow(state, candidates, &mut scratch.labelled);
                        }
                        let Some(index) = choose.choose(tied, candidates.len()) else {
                            return Drained::AtTie;
                        };
                        (candidates[index] as usize, tied)
                    }
                }
            };
            scheduler::log_binding(rec, pod, n, tied);
            scratch.cycle.assume(spec, state, pod, n);
            scheduler::bind(spec, state, pod, n);
            step.bound(state, pod, n);
        } else {
            state.dequeue(Queue::Scheduler);
        }
        clock.tick(spec, state);
    }
    Drained::Empty
}
