//! The ways a deployment controller step may pick its scale-down victims under
//! `--tie-break any`.
//!
//! Kubernetes' ReplicaSet controller deletes, among the pods it ranks equally, whichever an
//! unstable sort puts first ([`crate::controllers::deployment`]); Kivi, and kivi under
//! `--tie-break lowest`, the lowest pod id. Under `any` the model explores every choice, so its
//! runs include every run of `lowest` (a scale-down under `lowest` is the path that always
//! takes the first candidate).
//!
//! A step's choices are listed breadth first as *paths*: the index taken at each tie, in
//! order. A path is run from the step's source until the step ends or meets a tie past the
//! path's end ([`PickVictim`] then ends the step). Two partial runs that stopped after the
//! same number of picks in states with one fingerprint go on alike (the step's progress is in
//! the state: the deployments left in its queue, each replica set's desired count and the pods
//! in deletion say how many victims are still to come), so only the first is followed; two
//! whole runs that end in states with one fingerprint are one outcome. With symmetry on, the
//! fingerprint is the state's class, so interchangeable victims are one choice; without it,
//! picks in different orders that delete the same pods still meet.

use crate::cluster::ClusterState;
use crate::controllers::ties::PickVictim;
use crate::engine::memory::{Tally, Use};
use crate::engine::WorkerBounds;
use std::collections::{HashSet, VecDeque};

/// A step's listed outcomes.
pub struct Listing {
    /// Each outcome's picks ([`PathPicker::replaying`]), in the order listed.
    pub picks: Vec<u64>,
    /// Why some outcomes were left out, if any were.
    pub cut: Option<Cut>,
}

/// Why a listing left outcomes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The memory budget could not hold the partial runs and outcomes listed.
    Memory,
    /// A path of picks has too many to number in 64 bits.
    Overflow,
    /// The search the listing serves reached its time limit or was cancelled.
    Stopped,
}

/// What a listing holds on the heap, by what its buffers have room for: `picks` picks, the
/// partial runs still to follow (and `more` about to be queued), and the fingerprints that
/// told ends and partial runs apart (a hash set's table has a control byte a slot and at
/// least an eighth of its slots free).
fn heap_bytes(
    picks: usize,
    todo: &VecDeque<Path>,
    more: u64,
    ends: &HashSet<u64>,
    met: &HashSet<(u64, usize)>,
) -> u64 {
    let set = |slots: usize, entry: usize| (slots * 8 / 7 * (entry + 1)) as u64;
    let path = std::mem::size_of::<Path>() as u64;
    (picks * 8) as u64
        + (todo.capacity() as u64 + more) * path
        + set(ends.capacity(), 8)
        + set(met.capacity(), 16)
}

/// A path of picks, as a number in mixed radix: the first pick is the number modulo the
/// first tie's candidates, the next pick the rest modulo the next tie's, and so on; past the
/// path's last pick every tie takes its first candidate (digits 0).
#[derive(Clone, Copy)]
struct Path {
    /// The picks.
    number: u64,
    /// How many picks the path makes.
    len: usize,
    /// The product of the candidates of the path's ties: what the next pick is multiplied by.
    scale: u64,
}

/// Takes the candidate each pick of a path names; past its end, either ends the step (while
/// listing) or takes the first candidate.
pub struct PathPicker {
    rest: u64,
    left: Option<usize>,
    /// How many candidates the tie past the path's end offered (0: none was met).
    stopped_at: usize,
}

impl PathPicker {
    /// A picker that takes the picks `picks` numbers (a [`Listing`]'s) and then the first
    /// candidates.
    pub fn replaying(picks: u64) -> Self {
        Self {
            rest: picks,
            left: None,
            stopped_at: 0,
        }
    }

    fn listing(path: Path) -> Self {
        Self {
            rest: path.number,
            left: Some(path.len),
            stopped_at: 0,
        }
    }
}

impl PickVictim for PathPicker {
    fn pick(&mut self, candidates: &[usize]) -> Option<usize> {
        if let Some(left) = &mut self.left {
            if *left == 0 {
                self.stopped_at = candidates.len();
                return None;
            }
            *left -= 1;
        }
        let n = candidates.len() as u64;
        let index = self.rest % n;
        self.rest /= n;
        Some(index as usize)
    }
}

/// Lists the outcomes of the step `run` takes from `source` (`run` takes the step on a copy of
/// the source, asking the picker at each tie), telling states apart by `fingerprint`; what
/// the listing holds is charged to the memory budget of the search's `bounds`
/// ([`Use::Listings`]) until it ends, and the listing stops once they say the search must. Partial runs
/// that meet are followed once only when `merge_partial`: for a step whose progress is all in
/// the state, as the deployment controller's. The descheduler marks pods before it evicts
/// them and visits nodes in id order, so two of its partial runs with one fingerprint may go
/// on differently: each is followed.
pub fn list(
    source: &ClusterState,
    run: &dyn Fn(&mut ClusterState, &mut PathPicker),
    fingerprint: &mut dyn FnMut(&ClusterState) -> u64,
    merge_partial: bool,
    bounds: &WorkerBounds,
) -> Listing {
    let charge = bounds.memory().map(|budget| budget.charge(Use::Listings));
    // Charged a batch ahead, so that the budget is asked once a batch.
    let room = |bytes: u64| match &charge {
        Some(charge) if bytes > charge.bytes() => charge.try_resize(bytes + Tally::BATCH as u64),
        _ => true,
    };
    let cut = |picks, why| Listing {
        picks,
        cut: Some(why),
    };
    let mut picks = Vec::new();
    let mut ends = HashSet::new();
    let mut met = HashSet::new();
    let mut todo = VecDeque::from([Path {
        number: 0,
        len: 0,
        scale: 1,
    }]);
    let mut state = source.clone();
    while let Some(path) = todo.pop_front() {
        if bounds.stop_requested() {
            return cut(picks, Cut::Stopped);
        }
        state.clone_from(source);
        let mut picker = PathPicker::listing(path);
        run(&mut state, &mut picker);
        let arity = picker.stopped_at as u64;
        if arity == 0 {
            if ends.insert(fingerprint(&state)) {
                if !room(heap_bytes(picks.capacity(), &todo, 0, &ends, &met)) {
                    return cut(picks, Cut::Memory);
                }
                picks.push(path.number);
            }
            continue;
        }
        if merge_partial && !met.insert((fingerprint(&state), path.len)) {
            continue;
        }
        let Some(scale) = path.scale.checked_mul(arity) else {
            return cut(picks, Cut::Overflow);
        };
        if !room(heap_bytes(picks.capacity(), &todo, arity, &ends, &met)) {
            return cut(picks, Cut::Memory);
        }
        for index in 0..arity {
            todo.push_back(Path {
                number: path.number + index * path.scale,
                len: path.len + 1,
                scale,
            });
        }
    }
    Listing { picks, cut: None }
}
