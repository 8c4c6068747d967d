//! Parallel depth-first search with work donation (the `dfs` and `swarm` strategies).
//!
//! Every worker runs depth-first on a private stack. The stack holds, for each pending state,
//! how it was reached (its [`Via`]) and its depth; the worker's current path is the chain of
//! `Via`s from an initial state to the state being expanded. By the usual property of
//! depth-first search, every pending state at depth `d` is a child of the current path's node
//! at depth `d - 1`, so a counterexample is simply the current path plus one step: no parent
//! log is kept and nothing is stored per state beyond its fingerprint.
//!
//! Load balance: a worker that runs dry announces itself as hungry and waits on a shared
//! injector (crossbeam-deque). Busy workers notice a hungry peer between two expansions and
//! donate the bottom half of their stack — the shallowest states, with the largest subtrees —
//! each together with a copy of its ancestor path, so the thief knows how it was reached.
//!
//! Large states: a state whose size passes [`LAZY_STATE_BYTES`] keeps its new children on the
//! stack as the parent (shared) and the action, not as states; a child is computed again when
//! it is popped. A model step is deterministic, so this is the same state; the stack then holds
//! one copy of each large state on the current path instead of one per pending child, which is
//! what lets a 5,000-node cluster, with thousands of children per state, run in memory. The
//! child pushed last is kept as its state: it is popped next, so it would be computed again
//! at once (on a 1,000-node cluster, where most states have one new child, that was a
//! twelfth of the search).
//!
//! Memory: each worker tallies what its stack and path hold (the stack's slots, each pending
//! state's heap, each parent kept for its children once) and charges it to the memory budget
//! as the stack grows ([`crate::engine::memory::Tally`]); a worker the budget refuses stops the
//! search as incomplete. A donated task's bytes are given back by the worker that pops it.
//!
//! Termination is exact: one counter holds the number of busy workers plus the number of
//! donations waiting in the injector. A worker counts itself busy before it tries to take a
//! donation, so work is always counted somewhere, and the counter reaches zero only when no
//! state is left anywhere.

use super::{
    path_from, Expansion, LargeBatch, Poll, Search, Spare, Successor, SuccessorBatch, Via,
};
use crate::engine::memory::Tally;
use crate::engine::model::Model;
use crate::engine::options::Strategy;
use crate::engine::rng::SplitMix64;
use crate::engine::stats::WorkerStats;
use crate::engine::visited::{Insertion, VisitedPin, VisitedSet};
use crossbeam_deque::{Injector, Steal};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The most states handed over in one donation.
const MAX_DONATION: usize = 256;

/// States larger than this (bytes, inline and on the heap) keep their children as the
/// parent and the action until they are popped (see the module documentation). A few
/// kilobytes: below it copying a state is cheaper than computing it again.
pub const LAZY_STATE_BYTES: usize = 16 * 1024;

/// How many large states the search is done with (known children, children put back as
/// their parent, parents whose last child was taken) a worker keeps for reuse
/// ([`StepBuffers`]), and up to what size (heap bytes each): enough for the few successors of
/// the next state, and few enough to stay within the overhead a memory budget allows beside
/// what it charges.
///
/// [`StepBuffers`]: crate::engine::model::StepBuffers
const LARGE_SPARES: usize = 4;
const LARGE_SPARE_BYTES: usize = 256 * 1024;

/// Whether the search keeps the children of a state of `bytes` bytes (inline and on the heap)
/// as the state and their actions, computing each again when it is popped (see the module
/// documentation): a model that caches what a step computed can tell which states need it.
pub fn computes_children_again(bytes: usize) -> bool {
    bytes > LAZY_STATE_BYTES
}

/// A state waiting on a worker's stack: the state itself, or its parent, to be stepped by the
/// task's action when it is popped.
enum Pending<S> {
    State(S),
    Child(Arc<S>),
}

/// The state being expanded: owned, or shared with the children that keep it (a large state,
/// whose children are computed again when popped).
enum Parent<S> {
    Owned(S),
    Shared(Arc<S>),
}

impl<S> Parent<S> {
    fn state(&self) -> &S {
        match self {
            Parent::Owned(state) => state,
            Parent::Shared(state) => state,
        }
    }
}

/// What inserting one batch of successors did.
#[derive(Default)]
struct Pass {
    /// Bytes the pushed states hold on the heap.
    held: u64,
    /// Whether a successor was in the visited set already.
    known: bool,
    /// Whether the visited set was full (the search stops).
    stopped: bool,
}

/// A state waiting on a worker's stack.
struct Task<M: Model> {
    pending: Pending<M::State>,
    depth: u32,
    via: Via<M::Action>,
}

/// The path from an initial state to a donated task's parent, shared by its siblings.
type Ancestors<A> = Arc<[Via<A>]>;

/// A task handed from one worker to another, with the path to its parent.
struct Donation<M: Model> {
    task: Task<M>,
    ancestors: Ancestors<M::Action>,
}

/// Work-sharing state of one depth-first check.
struct Pool<M: Model> {
    injector: Injector<Donation<M>>,
    /// Busy workers plus donations waiting in the injector.
    outstanding: AtomicUsize,
    /// Workers waiting for a donation.
    hungry: AtomicUsize,
    done: AtomicBool,
}

/// Explores from `initial` (initial-state index, state) until the search is exhausted or
/// stopped, on `search.options.threads` workers; returns each worker's figures.
pub fn explore<M: Model, V: VisitedSet>(
    search: &Search<'_, M, V>,
    initial: Vec<(usize, M::State)>,
) -> Vec<WorkerStats> {
    let pool = Pool {
        injector: Injector::new(),
        outstanding: AtomicUsize::new(initial.len()),
        hungry: AtomicUsize::new(0),
        done: AtomicBool::new(false),
    };
    let no_ancestors: Ancestors<M::Action> = Arc::from(Vec::new());
    for (index, state) in initial {
        pool.injector.push(Donation {
            task: Task {
                pending: Pending::State(state),
                depth: 0,
                via: Via::Init(index),
            },
            ancestors: no_ancestors.clone(),
        });
    }
    let threads = search.options.threads.max(1);
    let mut stats = vec![WorkerStats::default(); threads];
    let (first, rest) = stats.split_first_mut().expect("at least one worker");
    let run = |id: usize| {
        search
            .guard(|| Worker::new(search, &pool, id).run())
            .unwrap_or_default()
    };
    if rest.is_empty() {
        *first = run(0);
    } else {
        let run = &run;
        rayon::scope(|scope| {
            for (offset, slot) in rest.iter_mut().enumerate() {
                scope.spawn(move |_| *slot = run(offset + 1));
            }
            *first = run(0);
        });
    }
    stats
}

/// One depth-first worker.
struct Worker<'s, 'm, M: Model, V: VisitedSet> {
    search: &'s Search<'m, M, V>,
    pool: &'s Pool<M>,
    stack: VecDeque<Task<M>>,
    path: Vec<Via<M::Action>>,
    /// What the stack and the path hold, charged to the memory budget.
    tally: Tally<'s>,
    /// The stack's and the path's slots counted in the tally so far.
    counted_slots: usize,
    /// The model's context for this worker.
    model_worker: M::Worker,
    successors: SuccessorBatch<M>,
    spare: Spare<M>,
    shuffle: Option<SplitMix64>,
    stats: WorkerStats,
}

impl<'s, 'm, M: Model, V: VisitedSet> Worker<'s, 'm, M, V> {
    fn new(search: &'s Search<'m, M, V>, pool: &'s Pool<M>, id: usize) -> Self {
        let options = search.options;
        let shuffle = (options.strategy == Strategy::Swarm).then(|| {
            SplitMix64::new(options.seed ^ (id as u64).wrapping_mul(0xA24B_AED4_963E_E407))
        });
        Self {
            search,
            pool,
            stack: VecDeque::new(),
            path: Vec::new(),
            tally: Tally::new(&search.held),
            counted_slots: 0,
            model_worker: search.model_worker(),
            successors: SuccessorBatch::new(),
            spare: Spare::<M>::new(),
            shuffle,
            stats: WorkerStats::default(),
        }
    }

    fn run(mut self) -> WorkerStats {
        while self.acquire() {
            self.drain_stack();
            self.stack.clear();
            self.pool.outstanding.fetch_sub(1, Ordering::SeqCst);
        }
        self.stats
    }

    /// Waits for a donation and installs it; `false` when the search is over. On `true` the
    /// worker is counted as busy.
    fn acquire(&mut self) -> bool {
        let pool = self.pool;
        pool.hungry.fetch_add(1, Ordering::SeqCst);
        let mut waits = 0u32;
        let acquired = loop {
            if self.search.stopped() || pool.done.load(Ordering::SeqCst) {
                break false;
            }
            pool.outstanding.fetch_add(1, Ordering::SeqCst);
            match pool.injector.steal() {
                Steal::Success(donation) => {
                    // The donation's count becomes this worker's.
                    pool.outstanding.fetch_sub(1, Ordering::SeqCst);
                    self.path.clear();
                    self.path.extend(donation.ancestors.iter().cloned());
                    self.stack.push_back(donation.task);
                    break true;
                }
                Steal::Retry => {
                    pool.outstanding.fetch_sub(1, Ordering::SeqCst);
                }
                Steal::Empty => {
                    if pool.outstanding.fetch_sub(1, Ordering::SeqCst) == 1 {
                        pool.done.store(true, Ordering::SeqCst);
                        break false;
                    }
                    wait(waits);
                    waits += 1;
                }
            }
        };
        pool.hungry.fetch_sub(1, Ordering::SeqCst);
        acquired
    }

    /// Explores depth-first until the stack is empty or the search stops.
    fn drain_stack(&mut self) {
        let search = self.search;
        let mut pin = search.visited.pin();
        let mut poll = Poll::new();
        while let Some(task) = self.stack.pop_back() {
            self.path.truncate(task.depth as usize);
            let model = search.model;
            let (state, heap) = match task.pending {
                Pending::State(state) => {
                    let heap = model.state_heap_bytes(&state);
                    self.tally.sub(heap as u64);
                    (state, heap)
                }
                Pending::Child(parent) => {
                    let (worker, spare) = (&mut self.model_worker, &mut self.spare);
                    let state = child(model, worker, spare, &parent, &task.via);
                    if let Some(parent) = Arc::into_inner(parent) {
                        self.tally.sub(parent_bytes(model, &parent));
                        keep_large(model, &mut self.spare, parent);
                    }
                    let heap = model.state_heap_bytes(&state);
                    (state, heap)
                }
            };
            self.path.push(task.via);
            let held = self.expand(&mut pin, state, heap, task.depth);
            if !self.charge(held) || search.stopped() {
                return;
            }
            if self.pool.hungry.load(Ordering::Relaxed) > 0 && self.stack.len() > 1 {
                self.donate();
            }
            search.between_states(&mut pin, &mut poll);
        }
    }

    /// Tallies `held` bytes more on the stack, and the stack's and the path's slots if they
    /// grew; `false` (and the search stopped as incomplete) when the budget refuses them.
    fn charge(&mut self, held: u64) -> bool {
        let slots = self.stack.capacity() + self.path.capacity();
        let task = std::mem::size_of::<Task<M>>().max(std::mem::size_of::<Via<M::Action>>());
        let grown = slots.saturating_sub(self.counted_slots) * task;
        self.counted_slots = self.counted_slots.max(slots);
        let bytes = held + grown as u64;
        if self.tally.add(bytes) {
            return true;
        }
        self.search.record_out_of_memory(bytes);
        false
    }

    /// Generates the successors of `state` (the last node of the current path), which holds
    /// `heap` bytes on the heap, and pushes the new ones; returns the bytes they hold on the
    /// heap. Under partial-order reduction the
    /// model's ample set comes first, and the state is expanded again in full when one of its
    /// successors was known ([`Expansion`]).
    fn expand(&mut self, pin: &mut V::Pin<'_>, state: M::State, heap: usize, depth: u32) -> u64 {
        let search = self.search;
        let model = search.model;
        if search
            .options
            .depth_limit
            .is_some_and(|limit| depth >= limit)
        {
            self.stop_at_depth_limit(&state, depth);
            return 0;
        }
        self.stats.expanded += 1;
        let large = computes_children_again(std::mem::size_of::<M::State>() + heap);
        let parent = match large {
            true => Parent::Shared(Arc::new(state)),
            false => Parent::Owned(state),
        };
        let mut expansion = search.first_expansion();
        let mut held = 0;
        loop {
            let shuffle = &mut self.shuffle;
            // Inserted in reverse so that the first successor ends on top of the stack.
            let mut order = |entries: &mut [Successor<M>]| {
                if let Some(rng) = shuffle {
                    rng.shuffle(entries);
                }
                entries.reverse();
            };
            let (worker, spare) = (&mut self.model_worker, &mut self.spare);
            expansion = self.successors.fill(
                model,
                worker,
                parent.state(),
                pin,
                spare,
                &mut order,
                expansion,
            );
            let computed = self.successors.entries.len() as u64;
            if computed == 0 {
                let path = &self.path;
                search.check_end_state(parent.state(), || path_from(path.iter().cloned()));
                break;
            }
            let Some(batch) = LargeBatch::charge(search, &search.held, &self.successors) else {
                return held;
            };
            let pass = self.insert_successors(pin, &parent, depth);
            drop(batch);
            model.successors_taken(&mut self.model_worker);
            held += pass.held;
            if pass.stopped {
                return held;
            }
            if expansion == Expansion::Ample && pass.known {
                expansion = Expansion::Full;
                continue;
            }
            self.stats.transitions += computed;
            self.stats.ample += u64::from(expansion == Expansion::Ample);
            break;
        }
        match parent {
            Parent::Owned(state) => self.spare.keep(state),
            // A child that keeps the state makes it held until the last such child is popped.
            Parent::Shared(parent) => {
                let bytes = parent_bytes(model, &parent);
                if Arc::into_inner(parent).is_none() {
                    held += bytes;
                }
            }
        }
        held
    }

    /// Notes whether `state`, at the depth limit `depth`, has successors the search leaves
    /// out. Out of line, as are [`child`] and [`Worker::donate`]: the depth-first loop runs
    /// for every state, and these rare paths (each with a model call that inlines a whole
    /// step) would make it larger than the instruction cache.
    #[cold]
    #[inline(never)]
    fn stop_at_depth_limit(&mut self, state: &M::State, depth: u32) {
        let mut actions = self.spare.take_actions();
        self.search
            .model
            .actions(&mut self.model_worker, state, &mut actions);
        self.search.may_expand(depth, !actions.is_empty());
        self.spare.give_back_actions(actions);
    }

    /// Inserts the batch's successors of `parent` (at depth `depth`) and pushes the new ones:
    /// as states, or, for a large parent, as the parent and their action, to be computed again
    /// when popped.
    fn insert_successors(
        &mut self,
        pin: &mut V::Pin<'_>,
        parent: &Parent<M::State>,
        depth: u32,
    ) -> Pass {
        let search = self.search;
        let model = search.model;
        let mut pass = Pass::default();
        // Under a large parent, the new child pushed last (popped next) is kept as its state,
        // the earlier ones as the parent: the child on top is expanded right away, so keeping
        // it holds no more than computing it again would, and saves that.
        let mut on_top: Option<usize> = None;
        for (successor, key) in self.successors.drain() {
            match pin.insert_if_new(key) {
                Insertion::Seen => {
                    pass.known = true;
                    match parent {
                        Parent::Owned(_) => self.spare.keep(successor.state),
                        Parent::Shared(_) => keep_large(model, &mut self.spare, successor.state),
                    }
                }
                Insertion::Full => {
                    search.record_full();
                    pass.stopped = true;
                    return pass;
                }
                Insertion::New => {
                    let action = &successor.action;
                    let state = &successor.state;
                    let worker = &mut self.model_worker;
                    if admit(
                        search,
                        worker,
                        &mut self.stats,
                        &self.path,
                        state,
                        action,
                        depth,
                    ) {
                        if let (Parent::Shared(parent), Some(below)) = (parent, on_top) {
                            let task = &mut self.stack[below];
                            let kept = std::mem::replace(
                                &mut task.pending,
                                Pending::Child(parent.clone()),
                            );
                            if let Pending::State(state) = kept {
                                pass.held -= model.state_heap_bytes(&state) as u64;
                                keep_large(model, &mut self.spare, state);
                            }
                        }
                        if let Parent::Shared(_) = parent {
                            on_top = Some(self.stack.len());
                        }
                        pass.held += model.state_heap_bytes(&successor.state) as u64;
                        let pending = Pending::State(successor.state);
                        self.stack.push_back(Task {
                            pending,
                            depth: depth + 1,
                            via: Via::Action(successor.action),
                        });
                    }
                }
            }
        }
        pass
    }

    /// Hands the bottom half of the stack to hungry workers.
    #[inline(never)]
    fn donate(&mut self) {
        let pool = self.pool;
        if !pool.injector.is_empty() {
            return;
        }
        let count = (self.stack.len() / 2).min(MAX_DONATION);
        pool.outstanding.fetch_add(count, Ordering::SeqCst);
        let mut ancestors: Option<(u32, Ancestors<M::Action>)> = None;
        for _ in 0..count {
            let task = self
                .stack
                .pop_front()
                .expect("count is below the stack length");
            let shared = match &ancestors {
                Some((depth, shared)) if *depth == task.depth => shared.clone(),
                _ => {
                    let shared: Ancestors<M::Action> = Arc::from(&self.path[..task.depth as usize]);
                    ancestors = Some((task.depth, shared.clone()));
                    shared
                }
            };
            pool.injector.push(Donation {
                task,
                ancestors: shared,
            });
        }
    }
}

/// Counts `state`, just stored, reached by `action` from the current path's state at depth
/// `depth`, and checks its properties; whether it is to be explored (it violates none).
fn admit<M: Model, V: VisitedSet>(
    search: &Search<'_, M, V>,
    worker: &mut M::Worker,
    stats: &mut WorkerStats,
    path: &[Via<M::Action>],
    state: &M::State,
    action: &M::Action,
    depth: u32,
) -> bool {
    stats.stored += 1;
    stats.max_depth = stats.max_depth.max(depth + 1);
    !search.check_new_state(worker, state, || {
        path_from(
            path.iter()
                .cloned()
                .chain(std::iter::once(Via::Action(action.clone()))),
        )
    })
}

/// The bytes a parent kept for its children holds: the state, inline and on the heap, and
/// its reference counts.
fn parent_bytes<M: Model>(model: &M, parent: &M::State) -> u64 {
    (2 * std::mem::size_of::<usize>() + std::mem::size_of::<M::State>()) as u64
        + model.state_heap_bytes(parent) as u64
}

/// Computes again the child of `parent` that `via` (an action) leads to, over a spare state
/// if one is kept.
#[cold]
#[inline(never)]
fn child<M: Model>(
    model: &M,
    worker: &mut M::Worker,
    spare: &mut Spare<M>,
    parent: &M::State,
    via: &Via<M::Action>,
) -> M::State {
    let Via::Action(action) = via else {
        unreachable!("only children of expanded states are kept as their parent")
    };
    spare
        .next_state(model, worker, parent, action)
        .expect("a kept child was generated by this action from this parent")
}

/// Keeps a large state the search is done with for reuse ([`LARGE_SPARES`]): a model may copy
/// a state over a sibling of it, or over its parent, for less than the whole state.
fn keep_large<M: Model>(model: &M, spare: &mut Spare<M>, state: M::State) {
    if model.state_heap_bytes(&state) <= LARGE_SPARE_BYTES {
        spare.keep_up_to(state, LARGE_SPARES);
    }
}

/// Backs off while waiting for work: spin briefly, then yield, then sleep.
fn wait(waits: u32) {
    if waits < 6 {
        for _ in 0..(1 << waits) {
            std::hint::spin_loop();
        }
    } else if waits < 20 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(50));
    }
}
