//! Parallel level-synchronous breadth-first search (the `bfs` strategy).
//!
//! Levels are explored one at a time; within a level the workers take chunks of the frontier
//! from a shared cursor. Each level keeps a log of how its states were reached (the parent's
//! index in the previous level and the action), so a violation found at level `d` yields a
//! path of exactly `d` steps: the shortest counterexample.
//!
//! Each worker builds its own part of the next level (its states and their links) and the
//! parts are never merged: a level's links are their parts plus the offset where each starts,
//! and a global index is found in them by binary search. A part's states are kept in chunks
//! of [`CHUNK`], the unit in which workers take the next frontier: a worker takes a chunk
//! whole, expands its states and keeps each expanded state to be overwritten by a successor
//! ([`Spare`]), so a level's states are recycled, or freed, by the workers that expand them,
//! in parallel, and new states rarely allocate. The only work between two levels is a prefix
//! sum over the chunks, so no single thread touches every state of a level (dropping each
//! spent level on the main thread had left about 3 of the node-failure topology's 58
//! CPU-seconds to one thread at 2f990e9).
//!
//! Unlike depth-first search, whose stacks hold one path's siblings, breadth-first search
//! holds whole levels: the frontier being expanded, the next one being built, and every
//! level's log. All of it is charged to the memory budget, which the visited set charges too
//! ([`FrontierMemory`]); a search the budget refuses stops as incomplete.

use super::{path_from, Expansion, LargeBatch, Poll, Search, Spare, SuccessorBatch, Via};
use crate::engine::memory::Charge;
use crate::engine::model::Model;
use crate::engine::stats::WorkerStats;
use crate::engine::trace::Path;
use crate::engine::visited::{Insertion, VisitedPin, VisitedSet};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// States a worker takes from the frontier at a time.
const CHUNK: usize = 64;

/// The most bytes of the next level a worker holds before it charges them: it charges at
/// each chunk it takes, and within a chunk once this much is held, since a chunk's states
/// may have millions of successors.
const REPORT_BYTES: u64 = crate::engine::memory::Tally::BATCH as u64;

/// How one state of a level was reached.
struct Link<A> {
    /// The parent's index in the previous level.
    parent: u64,
    via: Via<A>,
}

/// Items of one level, in the parts the workers built, with each part's first global index.
struct Parts<T> {
    parts: Vec<Vec<T>>,
    starts: Vec<usize>,
}

impl<T> Parts<T> {
    fn new(parts: Vec<Vec<T>>) -> Self {
        let mut starts = Vec::with_capacity(parts.len());
        let mut len = 0;
        for part in &parts {
            starts.push(len);
            len += part.len();
        }
        Self { parts, starts }
    }

    /// The item with global index `index` (below the number of items).
    fn get(&self, index: usize) -> &T {
        let part = self.starts.partition_point(|&start| start <= index) - 1;
        &self.parts[part][index - self.starts[part]]
    }
}

/// The states of the level being expanded, in chunks of at most [`CHUNK`] states that the
/// workers take whole, each chunk with the global index of its first state. Taking a chunk
/// moves its states out, so the worker that expands them also recycles or frees them.
struct Frontier<S> {
    chunks: Vec<Mutex<Vec<S>>>,
    starts: Vec<usize>,
}

impl<S> Frontier<S> {
    /// The frontier made of `parts`, each a worker's chunks in order; global indices run
    /// through the parts in order, as the links' [`Parts`] number them.
    fn new(parts: Vec<Vec<Vec<S>>>) -> Self {
        let mut chunks = Vec::new();
        let mut starts = Vec::new();
        let mut len = 0;
        for chunk in parts.into_iter().flatten() {
            starts.push(len);
            len += chunk.len();
            chunks.push(Mutex::new(chunk));
        }
        Self { chunks, starts }
    }

    /// Moves chunk `index`'s states out, with the global index of the first; `None` past
    /// the last chunk.
    fn take(&self, index: usize) -> Option<(usize, Vec<S>)> {
        let chunk = self.chunks.get(index)?;
        Some((self.starts[index], std::mem::take(&mut *chunk.lock())))
    }

    /// Whether the level has no states.
    fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}

/// The bytes breadth-first search holds besides the visited set — the levels' logs, the
/// frontier and the next level as it is built — charged to the memory budget.
struct FrontierMemory<'c> {
    /// Links of every level so far, the current frontier's states and the next level's.
    held: &'c Charge,
    /// The next level's states, reported by workers a chunk at a time.
    next_states: AtomicU64,
}

impl FrontierMemory<'_> {
    /// Charges a worker's `unreported` bytes of the next level; `false` when the budget
    /// refuses them.
    fn report(&self, unreported: Unreported) -> bool {
        self.next_states
            .fetch_add(unreported.states, Ordering::Relaxed);
        self.held.try_add(unreported.states + unreported.links)
    }

    /// Moves to the next level: the frontier's states (`frontier_states` bytes) go, the next
    /// level's states and links stay. Returns the new frontier's state bytes.
    fn next_level(&self, frontier_states: u64) -> u64 {
        self.held.sub(frontier_states);
        self.next_states.swap(0, Ordering::Relaxed)
    }
}

/// What one state costs while it waits in a level.
fn state_bytes<M: Model>(model: &M, state: &M::State) -> u64 {
    (std::mem::size_of::<M::State>() + model.state_heap_bytes(state)) as u64
}

/// Bytes a worker has added to the next level since it last reported them.
#[derive(Default)]
struct Unreported {
    states: u64,
    links: u64,
}

/// One worker's part of the next level: its states in chunks of [`CHUNK`] (all full but the
/// last) and their links.
struct Part<M: Model> {
    chunks: Vec<Vec<M::State>>,
    links: Vec<Link<M::Action>>,
}

impl<M: Model> Default for Part<M> {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            links: Vec::new(),
        }
    }
}

impl<M: Model> Part<M> {
    /// Adds `state`, reached through `link`.
    fn push(&mut self, state: M::State, link: Link<M::Action>) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => chunk.push(state),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(state);
                self.chunks.push(chunk);
            }
        }
        self.links.push(link);
    }
}

/// Explores from `initial` (initial-state index, state) level by level; returns each
/// worker's figures.
pub fn explore<M: Model, V: VisitedSet>(
    search: &Search<'_, M, V>,
    initial: Vec<(usize, M::State)>,
) -> Vec<WorkerStats> {
    let threads = search.options.threads.max(1);
    let mut workers: Vec<LevelWorker<M>> = (0..threads).map(|_| LevelWorker::new(search)).collect();
    let mut first = Part::<M>::default();
    let mut frontier_states = 0;
    for (index, state) in initial {
        frontier_states += state_bytes(search.model, &state);
        let link = Link {
            parent: u64::MAX,
            via: Via::Init(index),
        };
        first.push(state, link);
    }
    let link_bytes = (first.links.len() * std::mem::size_of::<Link<M::Action>>()) as u64;
    let mut levels: Vec<Parts<Link<M::Action>>> = vec![Parts::new(vec![first.links])];
    let mut frontier = Frontier::new(vec![first.chunks]);
    let memory = FrontierMemory {
        held: &search.held,
        next_states: AtomicU64::new(0),
    };
    if !memory.held.try_add(frontier_states + link_bytes) {
        search.record_out_of_memory(frontier_states + link_bytes);
    }
    let mut depth = 0u32;
    while !frontier.is_empty() && !search.stopped() {
        let cursor = AtomicUsize::new(0);
        let next: Mutex<Vec<Part<M>>> = Mutex::new(Vec::with_capacity(threads));
        let level = LevelJob {
            search,
            levels: &levels,
            frontier: &frontier,
            depth,
            cursor: &cursor,
            next: &next,
            memory: &memory,
        };
        let work = |slot: &mut LevelWorker<M>| search.guard(|| level.work(slot));
        if threads == 1 {
            work(&mut workers[0]);
        } else {
            let work = &work;
            rayon::scope(|scope| {
                let (first, rest) = workers.split_first_mut().expect("at least one worker");
                for slot in rest {
                    scope.spawn(move |_| {
                        work(slot);
                    });
                }
                work(first);
            });
        }
        let (links, chunks): (Vec<_>, Vec<_>) = next
            .into_inner()
            .into_iter()
            .map(|part| (part.links, part.chunks))
            .unzip();
        frontier_states = memory.next_level(frontier_states);
        levels.push(Parts::new(links));
        frontier = Frontier::new(chunks);
        depth += 1;
        // A worker polls within a level ([`Poll`]), but a level narrower than its first
        // interval ends before any poll: the bounds are looked at between levels too.
        search.poll_bounds();
    }
    workers.into_iter().map(|worker| worker.stats).collect()
}

/// What one worker keeps from level to level: its figures, its model context (so that the
/// model's caches last the whole search, as a depth-first worker's do), its buffers and its
/// clock.
struct LevelWorker<M: Model> {
    stats: WorkerStats,
    worker: M::Worker,
    successors: SuccessorBatch<M>,
    spare: Spare<M>,
    poll: Poll,
}

impl<M: Model> LevelWorker<M> {
    fn new<V: VisitedSet>(search: &Search<'_, M, V>) -> Self {
        Self {
            stats: WorkerStats::default(),
            worker: search.model_worker(),
            successors: SuccessorBatch::new(),
            spare: Spare::<M>::new(),
            poll: Poll::new(),
        }
    }
}

/// The expansion of one level, shared by its workers.
struct LevelJob<'j, 's, 'm, M: Model, V: VisitedSet> {
    search: &'s Search<'m, M, V>,
    levels: &'j [Parts<Link<M::Action>>],
    frontier: &'j Frontier<M::State>,
    depth: u32,
    cursor: &'j AtomicUsize,
    next: &'j Mutex<Vec<Part<M>>>,
    memory: &'j FrontierMemory<'s>,
}

impl<M: Model, V: VisitedSet> LevelJob<'_, '_, '_, M, V> {
    /// Takes chunks of the frontier until none is left, adding this worker's counts to
    /// `stats`; hands its part of the next level over at the end.
    fn work(&self, slot: &mut LevelWorker<M>) {
        let search = self.search;
        let model = search.model;
        let mut pin = search.visited.pin();
        let LevelWorker {
            stats,
            worker,
            successors,
            spare,
            poll,
        } = slot;
        let mut part = Part::<M>::default();
        let mut unreported = Unreported::default();
        let link_size = std::mem::size_of::<Link<M::Action>>() as u64;
        'chunks: loop {
            if !self.report_memory(&mut unreported) {
                break;
            }
            let Some((first, states)) = self
                .frontier
                .take(self.cursor.fetch_add(1, Ordering::Relaxed))
            else {
                break;
            };
            for (offset, state) in states.into_iter().enumerate() {
                if search.stopped() {
                    break 'chunks;
                }
                let parent = first + offset;
                if search
                    .options
                    .depth_limit
                    .is_some_and(|limit| self.depth >= limit)
                {
                    let mut actions = spare.take_actions();
                    model.actions(worker, &state, &mut actions);
                    search.may_expand(self.depth, !actions.is_empty());
                    spare.give_back_actions(actions);
                    spare.keep(state);
                    continue;
                }
                stats.expanded += 1;
                // Under partial-order reduction the model's ample set comes first, and the
                // state is expanded again in full when one of its successors was known.
                let mut expansion = search.first_expansion();
                loop {
                    expansion =
                        successors.fill(model, worker, &state, &pin, spare, &mut |_| {}, expansion);
                    let computed = successors.entries.len() as u64;
                    if computed == 0 {
                        search.check_end_state(&state, || self.path_to(parent, None));
                        break;
                    }
                    let Some(batch) = LargeBatch::charge(search, self.memory.held, successors)
                    else {
                        break 'chunks;
                    };
                    let mut known = false;
                    for (successor, key) in successors.drain() {
                        match pin.insert_if_new(key) {
                            Insertion::Seen => {
                                known = true;
                                spare.keep(successor.state);
                            }
                            Insertion::Full => {
                                search.record_full();
                                break 'chunks;
                            }
                            Insertion::New => {
                                stats.stored += 1;
                                stats.max_depth = stats.max_depth.max(self.depth + 1);
                                let action = &successor.action;
                                if !search.check_new_state(worker, &successor.state, || {
                                    self.path_to(parent, Some(action))
                                }) {
                                    unreported.states += state_bytes(model, &successor.state);
                                    unreported.links += link_size;
                                    let link = Link {
                                        parent: parent as u64,
                                        via: Via::Action(successor.action),
                                    };
                                    part.push(successor.state, link);
                                }
                            }
                        }
                    }
                    drop(batch);
                    model.successors_taken(worker);
                    if expansion == Expansion::Ample && known {
                        expansion = Expansion::Full;
                        continue;
                    }
                    stats.transitions += computed;
                    stats.ample += u64::from(expansion == Expansion::Ample);
                    break;
                }
                spare.keep(state);
                if unreported.states + unreported.links >= REPORT_BYTES
                    && !self.report_memory(&mut unreported)
                {
                    break 'chunks;
                }
                search.between_states(&mut pin, poll);
            }
        }
        drop(pin);
        self.report_memory(&mut unreported);
        self.next.lock().push(part);
    }

    /// Charges this worker's unreported bytes of the next level; `false` (and the search
    /// stopped as incomplete) when the budget refuses them.
    fn report_memory(&self, unreported: &mut Unreported) -> bool {
        let unreported = std::mem::take(unreported);
        let bytes = unreported.states + unreported.links;
        if self.memory.report(unreported) {
            return true;
        }
        self.search.record_out_of_memory(bytes);
        false
    }

    /// The path to frontier state `index` of this level, plus `last` if given.
    fn path_to(&self, index: usize, last: Option<&M::Action>) -> Path<M::Action> {
        let mut vias = Vec::with_capacity(self.levels.len() + 1);
        if let Some(action) = last {
            vias.push(Via::Action(action.clone()));
        }
        let mut index = index as u64;
        for level in self.levels.iter().rev() {
            let link = level.get(index as usize);
            vias.push(link.via.clone());
            index = link.parent;
        }
        vias.reverse();
        path_from(vias)
    }
}

#[cfg(test)]
mod tests {
    use super::{Frontier, Parts, CHUNK};

    #[test]
    fn parts_index_across_empty_and_uneven_parts() {
        let parts = Parts::new(vec![vec![0, 1, 2], vec![], vec![3], vec![4, 5, 6, 7]]);
        assert!((0..8).all(|i| *parts.get(i) == i));
    }

    /// The frontier's chunks number their states as the links' parts do, whatever the
    /// workers' parts and chunks look like, and each chunk is taken once.
    #[test]
    fn frontier_chunks_number_states_as_the_links_do() {
        let sizes = [3 * CHUNK + 5, 0, 1, CHUNK, 2 * CHUNK];
        let mut next = 0;
        let mut links = Vec::new();
        let mut parts = Vec::new();
        for size in sizes {
            let items: Vec<usize> = (next..next + size).collect();
            next += size;
            parts.push(items.chunks(CHUNK).map(<[usize]>::to_vec).collect());
            links.push(items);
        }
        let links = Parts::new(links);
        let frontier = Frontier::new(parts);
        let mut seen = 0;
        for index in 0.. {
            let Some((first, states)) = frontier.take(index) else {
                break;
            };
            assert!(!states.is_empty() && states.len() <= CHUNK);
            for (offset, state) in states.into_iter().enumerate() {
                assert_eq!(state, first + offset);
                assert_eq!(*links.get(first + offset), state);
                seen += 1;
            }
            assert_eq!(frontier.take(index).map(|(_, s)| s.len()), Some(0));
        }
        assert_eq!(seen, next);
    }
}
