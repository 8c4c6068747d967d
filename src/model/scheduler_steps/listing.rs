//! Every outcome of a scheduler step under `--tie-break any` ([`for_each_choice`]), followed
//! pod by pod, breadth first, one partly placed state per class.

use super::drain::{Probe, Tie};
use super::{start, Listed, Reduce, StepScratch, Track, Use};
use crate::cluster::{ClusterSpec, ClusterState};
use crate::controllers::scheduler::MatchingCache;
use crate::engine::memory::{allocation_size, Charge, Tally};
use crate::engine::WorkerBounds;

/// Calls `visit` with every outcome of a scheduler step in `state`, numbered from 0: the
/// outcome's number (for [`run`]), where it puts the tied pods (the candidate each tie with a
/// choice takes) and the state it leads to; a step without ties has one outcome. Stops when
/// `visit` returns false.
///
/// The step is followed pod by pod, breadth first: every partly placed state branches to each
/// candidate of its next pod's tie (narrowed as `reduce` says). Where `reduce` classes partly
/// placed states, one in the same class as one already met is not followed further: the rest of the step places the
/// same queue on renamed nodes from there, so its outcomes are renamings of outcomes already
/// listed (placing two alike pods on two alike nodes is one outcome, not two). A tie between
/// two groups of nodes over k alike pods then lists k + 1 outcomes instead of 2^k, and a
/// rollout onto empty alike nodes one.
///
/// While more than one partly placed state is followed, each is taken one pod further at a
/// time, so that all of them have placed the same pods (the queue is drained in order) and
/// two that meet in one class are merged at once, before either schedules the rest of the
/// queue: merging only at the next tie with a choice would schedule each pod between the two
/// ties once per partly placed state, which on a rollout over n nodes is O(n) pods per
/// state. A lone partly placed state without a choice goes on to its next choice in one go.
///
/// The search's `bounds` are asked before each partly placed state is followed; when they
/// say stop the listing ends there ([`Listed::Cut`]). The partly placed states of the next pod
/// and the outcomes listed are charged to their memory budget ([`Use::Listings`]) until the
/// listing ends; when it refuses, the listing ends there ([`Listed::OutOfMemory`]). A step
/// replayed by its number is listed without bounds, so that the replay finds the outcome the
/// search listed.
pub fn for_each_choice(
    spec: &ClusterSpec,
    state: &ClusterState,
    reduce: Reduce,
    bounds: &WorkerBounds,
    scratch: &mut StepScratch,
    mut visit: impl FnMut(u64, &[u16], ClusterState) -> bool,
) -> Listed {
    let class = |track: &Option<Track>, state: &ClusterState| match (reduce, track) {
        (Reduce::Whole(_, class), _) => class.map(|class| class(state)),
        (Reduce::Labels(labels), Some(track)) => Some(labels.class(track, state)),
        _ => None,
    };
    let mut first = state.clone();
    let mut track = start(reduce);
    let mut probe = Probe::new(None, false);
    let matching = probe.drain(spec, &mut first, reduce, &mut track, None, scratch);
    let Some(tie) = probe.tie else {
        return match visit(0, &[], first) {
            true => Listed::All,
            false => Listed::Stopped,
        };
    };
    let mut listed = 0;
    let charge = bounds.memory().map(|budget| budget.charge(Use::Listings));
    let mut held = Held::new(charge.as_ref());
    let mut frontier = vec![Partial {
        state: first,
        matching,
        track,
        tie,
        digits: Vec::new(),
    }];
    while !frontier.is_empty() {
        let alone = frontier.len() == 1 && frontier[0].tie.candidates.len() == 1;
        let mut further = Vec::new();
        for partial in frontier {
            if bounds.stop_requested() {
                return Listed::Cut;
            }
            let Partial {
                state,
                matching,
                track,
                tie,
                digits,
            } = partial;
            let mut kept = Some((state, matching, track));
            // A candidate's state that repeated a class, for the next candidate to be copied
            // over: a copy of the kept state, so only the records it wrote are copied back.
            let mut repeated: Option<ClusterState> = None;
            let last = tie.candidates.len() - 1;
            for (digit, &node) in tie.candidates.iter().enumerate() {
                let (mut next, matching, mut track) = match digit == last {
                    true => kept.take().expect("the last candidate takes the state"),
                    false => {
                        let (state, matching, track) =
                            kept.as_ref().expect("kept for the last candidate");
                        let next = match repeated.take() {
                            Some(mut over) => {
                                over.clone_from(state);
                                over
                            }
                            None => state.clone(),
                        };
                        (next, matching.clone(), track.clone())
                    }
                };
                let head = (node as usize, tie.tied);
                // Alone, the pods are all placed before the state is told apart; else it is
                // told apart right after the tied pod is bound, and the next pod is scheduled
                // only in the partly placed states of new classes.
                let mut probe = match alone {
                    true => Probe::new(Some(head), false),
                    false => Probe::binding(head),
                };
                let matching =
                    probe.drain(spec, &mut next, reduce, &mut track, Some(matching), scratch);
                match held.repeats(class(&track, &next), listed) {
                    Ok(true) => {
                        repeated = Some(next);
                        continue;
                    }
                    Ok(false) => {}
                    Err(end) => return end,
                }
                // Alone, the probe placed every pod; else the rest are placed now.
                let (matching, resume) = match alone {
                    true => (matching, probe),
                    false => {
                        let mut resume = Probe::new(None, true);
                        let matching = resume.drain(
                            spec,
                            &mut next,
                            reduce,
                            &mut track,
                            Some(matching),
                            scratch,
                        );
                        (matching, resume)
                    }
                };
                let mut digits = digits.clone();
                if tie.candidates.len() > 1 {
                    digits.push(digit as u16);
                }
                let partial = resume.tie.is_some();
                let beside = match partial {
                    true => {
                        digits.len() * std::mem::size_of::<u16>()
                            + matching.heap_bytes(allocation_size)
                            + track.as_ref().map_or(0, Track::heap_bytes)
                    }
                    false => 0,
                };
                if !held.add(&next, beside, partial) {
                    return held.out_of_memory(listed);
                }
                match resume.tie {
                    Some(tie) => further.push(Partial {
                        state: next,
                        matching,
                        track,
                        tie,
                        digits,
                    }),
                    None => {
                        if !visit(listed, &digits, next) {
                            return Listed::Stopped;
                        }
                        listed += 1;
                    }
                }
            }
        }
        held.next_round();
        frontier = further;
    }
    Listed::All
}

/// What a listing holds, charged to the search's budget when it has one: the partly placed
/// states of the pod at hand and of the next one (the round at hand frees the first as it
/// follows them), every outcome listed (until the listing ends and the search takes them),
/// and the classes of the partly placed states followed.
struct Held<'a> {
    tally: Option<Tally<'a>>,
    /// The classes of the partly placed states followed: one is followed per class.
    classes: std::collections::HashSet<u64>,
    /// Bytes of the class set's table.
    class_bytes: u64,
    /// Bytes of the partly placed states this round follows.
    frontier: u64,
    /// Bytes of the partly placed states this round has followed to the next pod.
    further: u64,
    /// Bytes of the outcomes listed.
    outcomes: u64,
}

impl<'a> Held<'a> {
    fn new(charge: Option<&'a Charge>) -> Self {
        Self {
            tally: charge.map(Tally::new),
            classes: std::collections::HashSet::new(),
            class_bytes: 0,
            frontier: 0,
            further: 0,
            outcomes: 0,
        }
    }

    /// Counts `state` as held, with `beside` bytes kept on the heap beside it: a partly
    /// placed state followed to the next pod when `partial` (its choices, matching-pod counts
    /// and labels beside it), else an outcome. `false` when the budget refuses it.
    fn add(&mut self, state: &ClusterState, beside: usize, partial: bool) -> bool {
        let bytes =
            (std::mem::size_of::<Partial>() + state.heap_bytes(allocation_size) + beside) as u64;
        match partial {
            true => self.further += bytes,
            false => self.outcomes += bytes,
        }
        self.tally.as_mut().is_none_or(|tally| tally.add(bytes))
    }

    /// Whether a partly placed state of class `class` (none: unclassed) repeats one the
    /// listing followed; a new class is kept. `Err` ends a listing of `listed` outcomes whose
    /// budget refuses the room the class set grows by (its table holds a value and a control
    /// byte per slot).
    fn repeats(&mut self, class: Option<u64>, listed: u64) -> Result<bool, Listed> {
        let Some(class) = class else {
            return Ok(false);
        };
        let before = self.classes.capacity();
        let new = self.classes.insert(class);
        let grown = self.classes.capacity().saturating_sub(before);
        if grown > 0 {
            let bytes = (grown * (std::mem::size_of::<u64>() + 1)) as u64;
            self.class_bytes += bytes;
            if !self.tally.as_mut().is_none_or(|tally| tally.add(bytes)) {
                return Err(self.out_of_memory(listed));
            }
        }
        Ok(!new)
    }

    /// How a listing the budget refused ends, with `listed` outcomes listed.
    fn out_of_memory(&self, listed: u64) -> Listed {
        Listed::OutOfMemory {
            listed,
            held: self.bytes(),
        }
    }

    /// Ends a round: the states it followed are freed, those it followed to the next pod are
    /// the next round's.
    fn next_round(&mut self) {
        let freed = std::mem::replace(&mut self.frontier, std::mem::take(&mut self.further));
        if let Some(tally) = &mut self.tally {
            tally.sub(freed);
        }
    }

    /// What the listing holds now, in bytes.
    fn bytes(&self) -> u64 {
        self.frontier + self.further + self.outcomes + self.class_bytes
    }
}

/// A partly placed step in a listing: the state so far with its matching-pod counts and node
/// labels (where the reduction labels nodes), the tie its next pod meets (its candidates may
/// be one node), and the candidates taken at the ties with a choice before it.
struct Partial {
    state: ClusterState,
    matching: MatchingCache,
    track: Option<Track>,
    tie: Tie,
    digits: Vec<u16>,
}
