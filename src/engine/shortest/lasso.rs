//! Short lassos: a shortest lasso of the whole model in place of the one the search found.
//!
//! CNDFS's lasso falls out of its depth-first stacks, so both its stem and its cycle wander
//! (C4's eviction loop printed 256 lines). [`shorten_lasso`] explores the model breadth-first
//! from its initial states, storing states by fingerprint with their transitions
//! ([`Explored`]), and after a level looks for the shortest lasso among the states expanded
//! (once they have grown by a quarter since it last looked): as soon as one takes at most one
//! step more than the levels expanded, no lasso of the model is shorter (see
//! [`super::lasso_graph`]), and the search stops, having looked no deeper than that lasso.
//! Its states are then walked on the model from its initial state, each step an action
//! leading to the next state's encoding (under a symmetry reduction a stored state may be a
//! renaming of the one the walk is in), so the lasso printed is a path of the model.
//!
//! What it may spend: [`STATES`] states, the memory budget the loop search had, and as much
//! time again as that search took (at least [`LEAST_TIME`], within its time limit). Past
//! that it keeps the shortest lasso among the states it expanded if it is shorter than the
//! one found, else the one found, and says the loop may not be the shortest.

use super::lasso_graph::{Explored, LassoPath};
use super::Bounds;
use crate::engine::lasso::Lasso;
use crate::engine::memory::Use;
use crate::engine::model::{Model, StepBuffers, WorkerBounds};
use crate::engine::outcome::{Incompleteness, TraceLength};
use crate::engine::trace::Step;
use std::time::{Duration, Instant};

/// States the search for a shortest lasso may store.
pub const STATES: usize = 1_000_000;
/// The time every loop search may spend shortening its lasso, however quick it was.
pub const LEAST_TIME: Duration = Duration::from_millis(250);
/// Expansions between two looks at the clock and the cancel token.
const POLL: usize = 64;
/// The search looks for lassos among the expanded states once their number has grown by a
/// `1 / LOOK_AGAIN`-th since it last looked: on a graph with few states a level, as many looks
/// as levels would cost more than the levels.
const LOOK_AGAIN: usize = 4;

/// A lasso, and whether no lasso of the model is shorter.
pub struct Shortened<M: Model> {
    /// The lasso to print.
    pub lasso: Lasso<M>,
    /// [`TraceLength::Shortest`], or why a shorter one may exist.
    pub length: TraceLength,
}

/// A shortest lasso of `model` whose cycle takes a transition `marked` says yes to, in place
/// of `lasso` (found, replayed, after a search that took `spent`), within `bounds` and the
/// allowance of this module; `lasso` itself when a bound stops the search before it finds a
/// shorter one.
pub fn shorten_lasso<M: Model>(
    model: &M,
    marked: &(impl Fn(&M::State, &M::Action, &M::State) -> bool + Sync),
    lasso: Lasso<M>,
    bounds: Result<Bounds, String>,
    spent: Duration,
) -> Shortened<M> {
    let bounds = match bounds {
        Ok(bounds) => bounds,
        Err(why) => {
            return Shortened {
                lasso,
                length: TraceLength::MaybeLonger(why),
            }
        }
    };
    let found = lasso.prefix.len() + lasso.cycle.len();
    let (best, stopped) = search(model, marked, &bounds, spent, found);
    let shorter = best
        .filter(|(path, _)| path.len() < found)
        .and_then(|(path, explored)| walk(model, marked, &explored, &path));
    let length = stopped.map_or(TraceLength::Shortest, TraceLength::MaybeLonger);
    Shortened {
        lasso: shorter.unwrap_or(lasso),
        length,
    }
}

/// The shortest lasso found breadth-first, with the graph it was found in, and why the search
/// stopped before it could say that lasso is a shortest one (`None` when it is one, or when
/// no lasso is shorter than the `found` steps of the one in hand).
fn search<M: Model>(
    model: &M,
    marked: &impl Fn(&M::State, &M::Action, &M::State) -> bool,
    bounds: &Bounds,
    spent: Duration,
    found: usize,
) -> (Option<(LassoPath, Explored<M>)>, Option<String>) {
    let started = Instant::now();
    let mut allowed = spent.max(LEAST_TIME);
    if let Some(left) = bounds.time_left {
        allowed = allowed.min(left);
    }
    let held = bounds.memory.charge(Use::Stacks);
    let mut explored = Explored::new(model);
    let mut worker = model.worker(WorkerBounds::none());
    let mut buffers = StepBuffers::new();
    let mut looked_at = 0;
    let stopped = 'levels: loop {
        let level_end = explored.states.len();
        while explored.expanded() < level_end {
            if explored.states.len() >= STATES {
                break 'levels format!("the search for a shorter loop stored its {STATES} states");
            }
            if explored.expanded().is_multiple_of(POLL) {
                if bounds.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                    break 'levels Incompleteness::Cancelled.to_string();
                }
                if started.elapsed() >= allowed {
                    break 'levels format!(
                        "the search for a shorter loop used its {:.2} s",
                        allowed.as_secs_f64()
                    );
                }
            }
            let bytes = explored.expand_next(model, marked, &mut worker, &mut buffers);
            if !held.try_add(bytes) {
                break 'levels bounds.memory.exhausted(bytes).to_string();
            }
        }
        if explored.complete() {
            let best = explored.shortest_lasso(usize::MAX);
            return (best.map(|path| (path, explored)), None);
        }
        // Every lasso of `deepest + 1` steps or fewer is among the expanded states, so one of
        // at most `proven` (`deepest + 2`) steps among them is a shortest one, and so is the
        // lasso in hand when it is no longer and none shorter is among them.
        let proven = explored
            .expanded_depth()
            .map_or(1, |deepest| deepest as usize + 2);
        let last_look = found <= proven;
        if last_look || explored.expanded() >= looked_at + looked_at / LOOK_AGAIN {
            looked_at = explored.expanded();
            if let Some(path) = explored.shortest_lasso(proven) {
                if path.len() <= proven {
                    return (Some((path, explored)), None);
                }
            }
            if last_look {
                return (None, None);
            }
        }
    };
    let best = explored.shortest_lasso(usize::MAX);
    (best.map(|path| (path, explored)), Some(stopped))
}

/// `path` walked on `model` from its initial state: at each step an action to a state with
/// the next stored state's encoding, the marked one where the path takes its marked
/// transition. `None` if some step has no such action.
fn walk<M: Model>(
    model: &M,
    marked: &impl Fn(&M::State, &M::Action, &M::State) -> bool,
    explored: &Explored<M>,
    path: &LassoPath,
) -> Option<Lasso<M>> {
    let mut worker = model.worker(WorkerBounds::none());
    let encode = |worker: &mut M::Worker, state: &M::State| {
        let mut bytes = Vec::new();
        model.encode(worker, state, &mut bytes);
        bytes
    };
    let stem = path.stem[1..].iter().map(|&at| (at, false));
    let cycle = path
        .cycle
        .iter()
        .enumerate()
        .map(|(position, &at)| (at, position == path.marked_at));
    let init = explored.states[path.stem[0] as usize].clone();
    let mut steps: Vec<Step<M>> = Vec::with_capacity(path.len());
    let mut actions = Vec::new();
    for (at, must_mark) in stem.chain(cycle) {
        let target = encode(&mut worker, &explored.states[at as usize]);
        let from = steps.last().map_or(&init, |step| &step.state);
        actions.clear();
        model.actions(&mut worker, from, &mut actions);
        let step = actions.iter().find_map(|action| {
            let next = model.next_state(&mut worker, from, action)?;
            let fits =
                encode(&mut worker, &next) == target && (!must_mark || marked(from, action, &next));
            fits.then(|| Step {
                action: action.clone(),
                state: next,
            })
        })?;
        steps.push(step);
    }
    let cycle = steps.split_off(path.stem.len() - 1);
    Some(Lasso {
        init,
        prefix: steps,
        cycle,
    })
}
