//! Parallel level-synchronous breadth-first search (the `bfs` strategy).
//!
//! Levels are explored one at a time; within a level the workers take chunks of the frontier
//! from a shared cursor. Each level keeps a log of how its states were reached (the parent's
//! index in the previous level and the action), so a violation found at level `d` yields a
//! path of exactly `d` steps: the shortest counterexample.
//!
//! Unlike depth-first search, whose stacks hold one path's siblings, breadth-first search
//! holds whole levels: the frontier being expanded, the next one being built, and every
//! level's log. All of it counts against the memory budget together with the visited set
//! ([`FrontierMemory`]); a search that would go past the budget stops as incomplete.

use super::{path_from, Search, SuccessorBatch, Via, POLL_INTERVAL};
use crate::engine::model::Model;
use crate::engine::outcome::Incompleteness;
use crate::engine::stats::WorkerStats;
use crate::engine::trace::Path;
use crate::engine::visited::{Insertion, VisitedPin, VisitedSet};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

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

/// The bytes breadth-first search holds besides the visited set: the levels' logs, the
/// frontier and the next level as it is built.
struct FrontierMemory {
    /// Links of every level so far plus the current frontier's states.
    held: AtomicU64,
    /// States found for the next level, reported by workers a chunk at a time.
    next: AtomicU64,
}

impl FrontierMemory {
    /// Whether the search, with `visited` bytes in its visited set, is still within `budget`.
    fn within(&self, visited: u64, budget: u64) -> bool {
        self.total() + visited <= budget
    }

    fn total(&self) -> u64 {
        self.held.load(Ordering::Relaxed) + self.next.load(Ordering::Relaxed)
    }
}

/// What one found state costs while it waits in the next level: its link for good, and its
/// state until the level after it is built.
fn found_bytes<M: Model>(model: &M, state: &M::State) -> u64 {
    (std::mem::size_of::<Found<M>>() + model.state_heap_bytes(state)) as u64
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
    let memory = FrontierMemory {
        held: AtomicU64::new(
            frontier
                .iter()
                .map(|state| found_bytes(search.model, state))
                .sum(),
        ),
        next: AtomicU64::new(0),
    };
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
            memory: &memory,
        };
        let work = |slot: &mut WorkerStats| search.guard(|| level.work(slot));
        if threads == 1 {
            work(&mut stats[0]);
        } else {
            let work = &work;
            rayon::scope(|scope| {
                let (first, rest) = stats.split_first_mut().expect("at least one worker");
                for slot in rest {
                    scope.spawn(move |_| {
                        work(slot);
                    });
                }
                work(first);
            });
        }
        let (links, states): (Vec<_>, Vec<_>) = next
            .into_inner()
            .into_iter()
            .map(|found| (found.link, found.state))
            .unzip();
        // The old frontier's states go; its links stay for the paths.
        let old_states: u64 = frontier
            .iter()
            .map(|state| {
                (std::mem::size_of::<M::State>() + search.model.state_heap_bytes(state)) as u64
            })
            .sum();
        memory.held.fetch_sub(old_states, Ordering::Relaxed);
        memory
            .held
            .fetch_add(memory.next.swap(0, Ordering::Relaxed), Ordering::Relaxed);
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
    memory: &'j FrontierMemory,
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
        let mut unreported = 0u64;
        let mut countdown = POLL_INTERVAL;
        'chunks: loop {
            if !self.report_memory(&mut unreported) {
                break;
            }
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
                                unreported += found_bytes(model, &successor.state);
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
        self.report_memory(&mut unreported);
        self.next.lock().append(&mut found);
    }

    /// Adds this worker's `unreported` bytes to the level's count; `false` (and the search
    /// stopped as incomplete) when the visited set and the levels together pass the budget.
    fn report_memory(&self, unreported: &mut u64) -> bool {
        let search = self.search;
        self.memory
            .next
            .fetch_add(std::mem::take(unreported), Ordering::Relaxed);
        let budget = search.options.memory_budget;
        let visited = search.visited.memory_bytes();
        if self.memory.within(visited, budget) {
            return true;
        }
        search.record_incomplete(Incompleteness::MemoryBudget {
            budget,
            needed: (self.memory.total() + visited).saturating_mul(2),
        });
        false
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
