//! Parallel level-synchronous breadth-first search (the `bfs` strategy).
//!
//! Levels are explored one at a time; within a level the workers take chunks of the frontier
//! from a shared cursor. Each level keeps a log of how its states were reached (the parent's
//! index in the previous level and the action), so a violation found at level `d` yields a
//! path of exactly `d` steps: the shortest counterexample.

use super::{path_from, Search, SuccessorBatch, Via, POLL_INTERVAL};
use crate::engine::model::Model;
use crate::engine::stats::WorkerStats;
use crate::engine::trace::Path;
use crate::engine::visited::{Insertion, VisitedPin, VisitedSet};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// States a worker takes from the frontier at a time.
const CHUNK: usize = 64;

/// How one state of a level was reached.
struct Link<A> {
    parent: u32,
    via: Via<A>,
}

/// A state found while expanding a level, with its link.
struct Found<M: Model> {
    state: M::State,
    link: Link<M::Action>,
}

/// Explores from `initial` (initial-state index, state) level by level; returns each
/// worker's figures.
pub fn explore<M: Model, V: VisitedSet>(
    search: &Search<'_, M, V>,
    initial: Vec<(usize, M::State)>,
) -> Vec<WorkerStats> {
    let threads = search.options.threads.max(1);
    let mut stats = vec![WorkerStats::default(); threads];
    let mut levels: Vec<Vec<Link<M::Action>>> = Vec::new();
    let (links, mut frontier): (Vec<_>, Vec<_>) = initial
        .into_iter()
        .map(|(index, state)| {
            (
                Link {
                    parent: u32::MAX,
                    via: Via::Init(index),
                },
                state,
            )
        })
        .unzip();
    levels.push(links);
    let mut depth = 0u32;
    while !frontier.is_empty() && !search.stopped() {
        let cursor = AtomicUsize::new(0);
        let next: Mutex<Vec<Found<M>>> = Mutex::new(Vec::new());
        let level = LevelJob {
            search,
            levels: &levels,
            frontier: &frontier,
            depth,
            cursor: &cursor,
            next: &next,
        };
        if threads == 1 {
            level.work(&mut stats[0]);
        } else {
            let level = &level;
            rayon::scope(|scope| {
                let (first, rest) = stats.split_first_mut().expect("at least one worker");
                for slot in rest {
                    scope.spawn(move |_| level.work(slot));
                }
                level.work(first);
            });
        }
        let (links, states): (Vec<_>, Vec<_>) = next
            .into_inner()
            .into_iter()
            .map(|found| (found.link, found.state))
            .unzip();
        levels.push(links);
        frontier = states;
        depth += 1;
    }
    stats
}

/// The expansion of one level, shared by its workers.
struct LevelJob<'j, 's, 'm, M: Model, V: VisitedSet> {
    search: &'s Search<'m, M, V>,
    levels: &'j [Vec<Link<M::Action>>],
    frontier: &'j [M::State],
    depth: u32,
    cursor: &'j AtomicUsize,
    next: &'j Mutex<Vec<Found<M>>>,
}

impl<M: Model, V: VisitedSet> LevelJob<'_, '_, '_, M, V> {
    /// Takes chunks of the frontier until none is left, adding this worker's counts to
    /// `stats`.
    fn work(&self, stats: &mut WorkerStats) {
        let search = self.search;
        let model = search.model;
        let mut pin = search.visited.pin();
        let mut actions = Vec::new();
        let mut successors = SuccessorBatch::new();
        let mut found: Vec<Found<M>> = Vec::new();
        let mut countdown = POLL_INTERVAL;
        'chunks: loop {
            let start = self.cursor.fetch_add(CHUNK, Ordering::Relaxed);
            if start >= self.frontier.len() {
                break;
            }
            let end = (start + CHUNK).min(self.frontier.len());
            for (parent, state) in self.frontier[start..end].iter().enumerate() {
                let parent = (start + parent) as u32;
                if search.stopped() {
                    break 'chunks;
                }
                actions.clear();
                model.actions(state, &mut actions);
                if !search.may_expand(self.depth, !actions.is_empty()) {
                    continue;
                }
                stats.expanded += 1;
                if actions.is_empty() {
                    search.check_end_state(state, || self.path_to(parent, None));
                    continue;
                }
                successors.fill(model, state, &actions, false, &pin);
                stats.transitions += successors.entries.len() as u64;
                for (successor, key) in successors.drain() {
                    match pin.insert_if_new(key) {
                        Insertion::Seen => {}
                        Insertion::Full => {
                            search.record_full();
                            break 'chunks;
                        }
                        Insertion::New => {
                            stats.stored += 1;
                            stats.max_depth = stats.max_depth.max(self.depth + 1);
                            let action = &actions[successor.action];
                            if !search.check_new_state(&successor.state, || {
                                self.path_to(parent, Some(action))
                            }) {
                                found.push(Found {
                                    state: successor.state,
                                    link: Link {
                                        parent,
                                        via: Via::Action(action.clone()),
                                    },
                                });
                            }
                        }
                    }
                }
                pin = search.between_states(pin, &mut countdown);
            }
        }
        drop(pin);
        self.next.lock().append(&mut found);
    }

    /// The path to frontier state `index` of this level, plus `last` if given.
    fn path_to(&self, index: u32, last: Option<&M::Action>) -> Path<M::Action> {
        let mut vias = Vec::with_capacity(self.levels.len() + 1);
        if let Some(action) = last {
            vias.push(Via::Action(action.clone()));
        }
        let mut index = index;
        for level in self.levels.iter().rev() {
            let link = &level[index as usize];
            vias.push(link.via.clone());
            index = link.parent;
        }
        vias.reverse();
        path_from(vias)
    }
}
