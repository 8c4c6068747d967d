//! The searches, and the bookkeeping they share: property checks, findings, bounds, stopping.

pub mod bfs;
pub mod dfs;

use super::interrupt::Interrupt;
use super::memory::{Charge, Use};
use super::model::{Expectation, Model, StepBuffers, WorkerBounds};
use super::options::{CheckOptions, Strategy};
use super::outcome::Incompleteness;
use super::trace::{Failure, Path};
use super::visited::{StateKey, VisitedPin, VisitedSet};
use parking_lot::Mutex;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most expansions a worker performs between looks at the clock and the cancel token.
pub const POLL_INTERVAL: u32 = 256;

/// About how long a worker goes between looks at its bounds when states are slow to expand.
const POLL_PERIOD: Duration = Duration::from_millis(20);

/// When a worker next looks at the search's bounds: every [`POLL_INTERVAL`] states while
/// states are quick, and after fewer when they are slow (a kube-scheduler cycle over
/// thousands of nodes takes a good part of a second), so that a search stops within about
/// [`POLL_PERIOD`] (or two states' expansions) of its time limit. The interval adapts at each
/// look to what the states since the last one took; the first state only sets it (the bounds
/// are not looked at then), so quick states go [`POLL_INTERVAL`] at a time from the start, as
/// they always did.
pub struct Poll {
    countdown: u32,
    interval: u32,
    last: Instant,
    calibrated: bool,
}

impl Default for Poll {
    fn default() -> Self {
        Self::new()
    }
}

impl Poll {
    /// A worker's first poll, after its first state.
    pub fn new() -> Self {
        Self {
            countdown: 1,
            interval: 1,
            last: Instant::now(),
            calibrated: false,
        }
    }

    /// Counts one state; whether it is time to look at the bounds.
    #[inline]
    fn tick(&mut self) -> bool {
        self.countdown -= 1;
        if self.countdown > 0 {
            return false;
        }
        let now = Instant::now();
        let took = now.duration_since(self.last).as_nanos().max(1);
        let fitting = u128::from(self.interval) * POLL_PERIOD.as_nanos() / took;
        self.interval = fitting.clamp(1, u128::from(POLL_INTERVAL)) as u32;
        self.countdown = self.interval;
        self.last = now;
        std::mem::replace(&mut self.calibrated, true)
    }
}

/// One element of a recorded path: how a state was reached from its parent.
#[derive(Clone, Debug)]
pub enum Via<A> {
    /// The state is initial state number `usize`.
    Init(usize),
    /// The state was reached by this action.
    Action(A),
}

/// Turns a chain of [`Via`]s, starting with an initial state, into a [`Path`].
pub fn path_from<A: Clone>(vias: impl IntoIterator<Item = Via<A>>) -> Path<A> {
    let mut init = 0;
    let mut actions = Vec::new();
    for via in vias {
        match via {
            Via::Init(index) => init = index,
            Via::Action(action) => actions.push(action),
        }
    }
    Path { init, actions }
}

/// How a state is expanded: by an ample set of its actions (partial-order reduction,
/// [`Model::ample_successors`]) or by all of them.
///
/// The cycle condition is the searches' part: an ample expansion is kept only when every
/// successor it gives is new, inserted into the visited set by this expansion; where one was
/// there already the state is expanded again in full (the ample successors, inserted, are not
/// explored twice). Along a cycle of states each kept to its ample set, every edge would then
/// lead to a state first inserted while its source was expanded, after the source itself was
/// inserted: insertion times would rise all round the cycle, which cannot be. So every cycle
/// of the explored graph holds a fully expanded state, and no action is put off for ever
/// (the "ignoring problem"). The argument needs only that an insert is atomic and that a
/// state is expanded after its insert, so it holds for every search order and thread count
/// (Evangelista and Pajault, "Solving the ignoring problem for partial order reduction",
/// STTT 2010, compare this closed-set proviso with the stack and queue provisos).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expansion {
    /// The model's ample set, where it offers one.
    Ample,
    /// Every enabled action.
    Full,
}

impl Expansion {
    /// [`Expansion::Ample`] when `ample`, else [`Expansion::Full`].
    fn ample_if(ample: bool) -> Self {
        match ample {
            true => Expansion::Ample,
            false => Expansion::Full,
        }
    }
}

/// One successor of the state being expanded, fingerprinted but not yet inserted.
pub struct Successor<M: Model> {
    /// The successor state.
    pub state: M::State,
    /// The action that leads to it from the expanded state.
    pub action: M::Action,
    fingerprint: u64,
    encoding: Range<usize>,
}

/// Successors whose room a batch keeps from one expansion to the next: a state with many
/// more (a step with millions of outcomes) has its room given back at the next expansion,
/// not kept for the rest of the search beside what the memory budget charges.
const KEPT_SUCCESSORS: usize = 1 << 12;

/// The spare states a worker writes successors over ([`Model::successors`]): a known
/// successor, or a state just expanded, goes back here.
pub type Spare<M> = StepBuffers<<M as Model>::Action, <M as Model>::State>;

/// The successors of one state. They are all computed, encoded and fingerprinted before any
/// is inserted, and their visited-set lines are prefetched as they are fingerprinted: the
/// inserts' cache misses then overlap instead of following one another.
pub struct SuccessorBatch<M: Model> {
    /// The successors, in the order they should be inserted.
    pub entries: Vec<Successor<M>>,
    /// The successors' encodings, end to end; empty when the visited set needs fingerprints
    /// alone.
    encodings: Vec<u8>,
    /// The model's buffer for [`Model::fingerprint`].
    scratch: Vec<u8>,
}

impl<M: Model> SuccessorBatch<M> {
    /// An empty batch; its buffers are reused from one expansion to the next.
    pub fn new() -> Self {
        Self {
            entries: Vec::new(),
            encodings: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Computes the successors of `state` on `worker`, writing them over `spare` states while
    /// there are any, and puts them in the order they are to be inserted (`order` rearranges
    /// the model's order) before fingerprinting them: each visited-set line is prefetched in
    /// insertion order, so that the first insert waits least for its line. Asked for an
    /// [`Expansion::Ample`] one, it takes the model's ample set
    /// ([`Model::ample_successors`]) where the model offers a non-empty one, else every
    /// successor ([`Model::successors`]); returns which it took.
    #[allow(clippy::too_many_arguments)]
    pub fn fill<P: VisitedPin>(
        &mut self,
        model: &M,
        worker: &mut M::Worker,
        state: &M::State,
        pin: &P,
        spare: &mut Spare<M>,
        order: &mut impl FnMut(&mut [Successor<M>]),
        expansion: Expansion,
    ) -> Expansion {
        self.entries.clear();
        self.entries.shrink_to(KEPT_SUCCESSORS);
        self.encodings.clear();
        self.encodings.shrink_to(KEPT_SUCCESSORS * 64);
        let entries = &mut self.entries;
        let push = |entries: &mut Vec<Successor<M>>, action, next| {
            entries.push(Successor {
                state: next,
                action,
                fingerprint: 0,
                encoding: 0..0,
            });
        };
        let ample = expansion == Expansion::Ample
            && model.ample_successors(worker, state, spare, |action, next| {
                push(entries, action, next)
            })
            && !entries.is_empty();
        if !ample {
            model.successors(worker, state, spare, |action, next| {
                push(entries, action, next)
            });
        }
        order(entries);
        let encodings = &mut self.encodings;
        let scratch = &mut self.scratch;
        for successor in entries.iter_mut() {
            let next = &successor.state;
            if P::NEEDS_BYTES {
                let start = encodings.len();
                model.encode(worker, next, encodings);
                successor.encoding = start..encodings.len();
                successor.fingerprint =
                    StateKey::new(&encodings[successor.encoding.clone()]).fingerprint;
            } else {
                successor.fingerprint = model.fingerprint(worker, next, scratch);
            }
            pin.prefetch(successor.fingerprint);
        }
        Expansion::ample_if(ample)
    }

    /// The visited-set key of `state` alone, for a set like `_pin`'s (bytes only when it
    /// needs them); it borrows the batch's buffers, so the batch must be empty.
    pub fn key<P: VisitedPin>(
        &mut self,
        model: &M,
        worker: &mut M::Worker,
        state: &M::State,
        _pin: &P,
    ) -> StateKey<'_> {
        debug_assert!(self.entries.is_empty());
        self.encodings.clear();
        if P::NEEDS_BYTES {
            model.encode(worker, state, &mut self.encodings);
            StateKey::new(&self.encodings)
        } else {
            StateKey {
                fingerprint: model.fingerprint(worker, state, &mut self.scratch),
                bytes: &[],
            }
        }
    }

    /// The bytes the batch's buffers hold when they hold more than a worker keeps
    /// uncharged ([`Tally::BATCH`](crate::engine::memory::Tally)), else 0: a state with very
    /// many successors, which the search charges to its budget while it inserts them (the
    /// model charged them while it computed them), since they are moved out of the batch one
    /// by one and its room stays until the next expansion.
    pub fn large_bytes(&self) -> u64 {
        let bytes = self.entries.capacity() * std::mem::size_of::<Successor<M>>()
            + self.encodings.capacity();
        let bytes = bytes as u64;
        match bytes > crate::engine::memory::Tally::BATCH as u64 {
            true => bytes,
            false => 0,
        }
    }

    /// Takes the successors out one by one, each with its visited-set key.
    pub fn drain(&mut self) -> impl Iterator<Item = (Successor<M>, StateKey<'_>)> {
        let encodings = &self.encodings;
        self.entries.drain(..).map(move |successor| {
            let key = StateKey {
                fingerprint: successor.fingerprint,
                bytes: &encodings[successor.encoding.clone()],
            };
            (successor, key)
        })
    }
}

/// The bytes of a large batch of successors ([`SuccessorBatch::large_bytes`]) charged to a
/// search's stacks or levels while they are inserted, given back when it is dropped.
pub struct LargeBatch<'c>(&'c Charge, u64);

impl<'c> LargeBatch<'c> {
    /// Charges `batch`'s large bytes to `held`; `None` (and the search stopped as incomplete)
    /// when the budget refuses them.
    pub fn charge<M: Model, V: VisitedSet>(
        search: &Search<'_, M, V>,
        held: &'c Charge,
        batch: &SuccessorBatch<M>,
    ) -> Option<Self> {
        let bytes = batch.large_bytes();
        if bytes > 0 && !held.try_add(bytes) {
            search.record_out_of_memory(bytes);
            return None;
        }
        Some(Self(held, bytes))
    }
}

impl Drop for LargeBatch<'_> {
    fn drop(&mut self) {
        if self.1 > 0 {
            self.0.sub(self.1);
        }
    }
}

/// What the workers found, as paths still to be replayed.
pub struct Findings<A> {
    /// Failures with the paths that reach them, at most one per failure.
    pub violations: Vec<(Failure, Path<A>)>,
    /// `sometimes` properties with the paths that reach a witness.
    pub examples: Vec<(String, Path<A>)>,
}

/// State shared by the workers of one check.
pub struct Search<'a, M: Model, V: VisitedSet> {
    /// The model under check.
    pub model: &'a M,
    /// The shared visited set.
    pub visited: &'a V,
    /// The check's configuration.
    pub options: &'a CheckOptions,
    names: Vec<String>,
    always: Vec<usize>,
    sometimes: Vec<usize>,
    sometimes_found: Vec<AtomicBool>,
    /// Failures that can still be reported (all `always` properties, plus deadlock if checked).
    failure_kinds: usize,
    stop: AtomicBool,
    findings: Mutex<Findings<M::Action>>,
    incomplete: Mutex<Option<Incompleteness>>,
    panic: Mutex<Option<String>>,
    /// The bounds as the model sees them inside a step ([`crate::engine::interrupt`]).
    interrupt: Arc<Interrupt>,
    /// What the workers hold besides the visited set, charged to the memory budget: the
    /// depth-first stacks, or the breadth-first levels.
    pub held: Charge,
}

impl<'a, M: Model, V: VisitedSet> Search<'a, M, V> {
    /// Bookkeeping for a check of `model` starting now.
    pub fn new(model: &'a M, visited: &'a V, options: &'a CheckOptions) -> Self {
        let properties = model.properties();
        assert!(
            properties
                .iter()
                .enumerate()
                .all(|(i, p)| properties[..i].iter().all(|q| q.name != p.name)),
            "the model's properties share a name, so their violations cannot be told apart"
        );
        let indices_of = |expectation| {
            properties
                .iter()
                .enumerate()
                .filter(|(_, property)| property.expectation == expectation)
                .map(|(index, _)| index)
                .collect::<Vec<_>>()
        };
        let always = indices_of(Expectation::Always);
        let sometimes = indices_of(Expectation::Sometimes);
        let started = Instant::now();
        Self {
            model,
            visited,
            options,
            failure_kinds: always.len() + usize::from(model.checks_deadlock()),
            sometimes_found: sometimes.iter().map(|_| AtomicBool::new(false)).collect(),
            names: properties
                .into_iter()
                .map(|property| property.name)
                .collect(),
            always,
            sometimes,
            stop: AtomicBool::new(false),
            findings: Mutex::new(Findings {
                violations: Vec::new(),
                examples: Vec::new(),
            }),
            incomplete: Mutex::new(None),
            panic: Mutex::new(None),
            interrupt: Interrupt::with_memory(
                options.timeout.map(|timeout| started + timeout),
                options.cancel.clone(),
                options.memory.clone(),
            ),
            held: options.memory.charge(match options.strategy {
                Strategy::Bfs => Use::Levels,
                Strategy::Dfs | Strategy::Swarm => Use::Stacks,
            }),
        }
    }

    /// A new worker's context from the model, with the search's bounds; under `dfs` and
    /// `swarm`, large states' children are computed again ([`dfs::computes_children_again`]).
    pub fn model_worker(&self) -> M::Worker {
        let bounds = WorkerBounds::new(Arc::clone(&self.interrupt));
        self.model.worker(match self.options.strategy {
            Strategy::Bfs => bounds,
            Strategy::Dfs | Strategy::Swarm => bounds.recomputing_above(dfs::LAZY_STATE_BYTES),
        })
    }

    /// How a state is expanded first: by the model's ample set under partial-order reduction,
    /// else in full.
    pub fn first_expansion(&self) -> Expansion {
        Expansion::ample_if(self.options.partial_order)
    }

    /// Whether workers should stop now.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Checks the properties in a newly stored state. Returns `true` when the state violates an
    /// `always` property (the caller then does not expand it). `path` is called only when
    /// something is found.
    #[inline]
    pub fn check_new_state(
        &self,
        worker: &mut M::Worker,
        state: &M::State,
        path: impl Fn() -> Path<M::Action>,
    ) -> bool {
        for (slot, &index) in self.sometimes.iter().enumerate() {
            if !self.sometimes_found[slot].load(Ordering::Relaxed)
                && self.model.holds(worker, index, state)
                && !self.sometimes_found[slot].swap(true, Ordering::Relaxed)
            {
                self.findings
                    .lock()
                    .examples
                    .push((self.names[index].clone(), path()));
            }
        }
        for &index in &self.always {
            if !self.model.holds(worker, index, state) {
                self.record_violation(Failure::Invariant(self.names[index].clone()), path());
                return true;
            }
        }
        false
    }

    /// Checks a state without successors for a deadlock.
    pub fn check_end_state(&self, state: &M::State, path: impl Fn() -> Path<M::Action>) {
        if self.model.checks_deadlock() && !self.model.is_valid_end_state(state) {
            self.record_violation(Failure::Deadlock, path());
        }
    }

    fn record_violation(&self, failure: Failure, path: Path<M::Action>) {
        let mut findings = self.findings.lock();
        if !self.options.all_violations && !findings.violations.is_empty() {
            return;
        }
        if findings
            .violations
            .iter()
            .any(|(known, _)| *known == failure)
        {
            return;
        }
        findings.violations.push((failure, path));
        if !self.options.all_violations || findings.violations.len() == self.failure_kinds {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Records that the search could not finish, and stops it unless the reason is only the
    /// depth limit (which cuts single branches, not the search).
    pub fn record_incomplete(&self, reason: Incompleteness) {
        let stops = !matches!(reason, Incompleteness::DepthLimit { .. });
        let mut incomplete = self.incomplete.lock();
        if incomplete.is_none() || stops {
            *incomplete = Some(reason);
        }
        if stops {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Records that the visited set is full and stops the search.
    pub fn record_full(&self) {
        let memory = &self.options.memory;
        let others = memory.charged().saturating_sub(self.visited.memory_bytes());
        self.record_incomplete(memory.exhausted(others + self.visited.bytes_needed_to_continue()));
    }

    /// Records that the memory budget refused `more` bytes for the stacks or levels, and
    /// stops the search.
    pub fn record_out_of_memory(&self, more: u64) {
        let memory = &self.options.memory;
        self.record_incomplete(memory.exhausted(memory.charged() + more));
    }

    /// What a worker does between two states: takes part in a growth of the visited set if one
    /// is pending, and looks at the bounds when `poll` says it is time.
    #[inline]
    pub fn between_states(&self, pin: &mut V::Pin<'a>, poll: &mut Poll) {
        pin.sync();
        if poll.tick() {
            self.poll_bounds();
        }
    }

    /// Looks at the clock and the cancel token; stops the search if either says so.
    pub fn poll_bounds(&self) {
        if let Some(timeout) = self.options.timeout.filter(|_| self.interrupt.time_is_up()) {
            self.record_incomplete(Incompleteness::Timeout {
                seconds: timeout.as_secs_f64(),
            });
        }
        if self.interrupt.cancelled() {
            self.record_incomplete(Incompleteness::Cancelled);
        }
    }

    /// Whether a state at `depth` may be expanded; records the depth limit when it may not.
    /// `has_actions` tells whether the state has successors (a leaf does not make the search
    /// incomplete).
    pub fn may_expand(&self, depth: u32, has_actions: bool) -> bool {
        match self.options.depth_limit {
            Some(limit) if depth >= limit => {
                if has_actions {
                    self.record_incomplete(Incompleteness::DepthLimit { depth: limit });
                }
                false
            }
            _ => true,
        }
    }

    /// The `sometimes` properties with no witness yet.
    pub fn unreached(&self) -> Vec<String> {
        self.sometimes
            .iter()
            .zip(&self.sometimes_found)
            .filter(|(_, found)| !found.load(Ordering::Relaxed))
            .map(|(&index, _)| self.names[index].clone())
            .collect()
    }

    /// Runs one worker's `body`; if the model panics in it, records the panic and stops every
    /// worker, so that none waits for work the panicked one will never share. Returns `None`
    /// after a panic.
    pub fn guard<T>(&self, body: impl FnOnce() -> T) -> Option<T> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
            Ok(value) => Some(value),
            Err(payload) => {
                self.panic
                    .lock()
                    .get_or_insert_with(|| crate::engine::error::panic_message(&*payload));
                self.stop.store(true, Ordering::Relaxed);
                None
            }
        }
    }

    /// Hands over what was found, why the search was cut short if it was, and the message of
    /// a panic in the model if one stopped it. A model told to cut a step short
    /// ([`Interrupt::fired`]) left successors out, so the bound that told it is recorded even
    /// when the workers ran out of work before they looked at the bounds again.
    pub fn into_results(self) -> (Findings<M::Action>, Option<Incompleteness>, Option<String>) {
        if self.interrupt.fired() {
            self.poll_bounds();
        }
        (
            self.findings.into_inner(),
            self.incomplete.into_inner(),
            self.panic.into_inner(),
        )
    }
}
