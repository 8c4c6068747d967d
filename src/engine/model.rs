//! The interface between a system under verification and the checker.
//!
//! A [`Model`] is a transition system: initial states, the actions enabled in a state, the
//! state an action leads to, and named [`Property`]s to check. The engine never looks inside a
//! state; it only asks the model for the state's canonical byte encoding, which it fingerprints
//! (or stores whole in exact mode).
//!
//! Each worker of a search asks the model for a context of its own ([`Model::worker`], given
//! the search's [`WorkerBounds`]) and passes it to every call on the hot path: what a model
//! keeps from step to step (scratch buffers, caches) lives there, not in thread-locals, and
//! what the model needs to know of the search (whether to stop, the memory budget, which
//! children the search computes again) comes with it.

use super::interrupt::Interrupt;
use super::memory::MemoryBudget;
use std::fmt::Debug;
use std::sync::Arc;

/// When a [`Property`]'s condition must hold for the model to be correct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expectation {
    /// A safety invariant: the condition holds in every reachable state. A reachable state where
    /// it fails is a violation, reported with the path that reaches it.
    Always,
    /// A reachability goal: the condition holds in at least one reachable state. The first such
    /// state found is reported as an example; an exhaustive search that finds none is a failure.
    Sometimes,
}

/// A named condition over states, checked by the engine in every state it stores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// The user-facing name, used in reports and traces.
    pub name: String,
    /// Whether the condition must hold always or sometimes.
    pub expectation: Expectation,
}

impl Property {
    /// A safety invariant named `name`.
    pub fn always(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            expectation: Expectation::Always,
        }
    }

    /// A reachability goal named `name`.
    pub fn sometimes(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            expectation: Expectation::Sometimes,
        }
    }
}

/// What the engine tells a model about the search one worker serves: when to stop a long
/// step, the memory budget what the model keeps is charged to, and which states' children the
/// search computes again (so that a model keeps what makes that cheap only where it pays).
/// [`WorkerBounds::none`] outside a search (a replay, a test): never stop, charge nothing.
#[derive(Clone, Debug, Default)]
pub struct WorkerBounds {
    interrupt: Option<Arc<Interrupt>>,
    /// States larger than this (bytes, inline and on the heap) have their children computed
    /// again by the search ([`crate::engine::computes_children_again`]); `None`: none do.
    recomputed_above: Option<usize>,
}

impl WorkerBounds {
    /// Bounds outside any search.
    pub fn none() -> Self {
        Self::default()
    }

    /// The bounds of a search whose time limit, cancel token and memory budget `interrupt`
    /// holds.
    pub fn new(interrupt: Arc<Interrupt>) -> Self {
        Self {
            interrupt: Some(interrupt),
            recomputed_above: None,
        }
    }

    /// These bounds, for a search that computes the children of states larger than `bytes`
    /// again.
    pub fn recomputing_above(self, bytes: usize) -> Self {
        Self {
            recomputed_above: Some(bytes),
            ..self
        }
    }

    /// Whether the search has reached its time limit or been cancelled: a model asks inside
    /// a step that may take long and, when told yes, ends the step with the successors it has
    /// (the search then reports itself incomplete). Always `false` outside a search.
    pub fn stop_requested(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.reached())
    }

    /// Notes that the model cut a step short because the memory budget ([`Self::memory`])
    /// refused what it needed. A search learns of it from [`Model::left_out`]; a replay, which
    /// lists a step's actions within the check's budget, from the note
    /// ([`crate::engine::trace::replay_by`]).
    pub fn note_memory_refused(&self) {
        if let Some(interrupt) = &self.interrupt {
            interrupt.note_memory_refused();
        }
    }

    /// The memory budget what the model keeps between steps is charged to (`None` outside a
    /// search, or for bounds without one).
    pub fn memory(&self) -> Option<&MemoryBudget> {
        self.interrupt.as_ref().and_then(|i| i.memory())
    }

    /// Whether the search computes the children of a state of `bytes` bytes (inline and on
    /// the heap) again when it takes them, after other work: only then is what a step
    /// computed worth keeping for them.
    pub fn computes_children_again(&self, bytes: usize) -> bool {
        self.recomputed_above.is_some_and(|above| bytes > above)
    }
}

/// Buffers the engine lends [`Model::successors`]: states it no longer needs, for successors
/// to be written over ([`Model::next_state_into`]) instead of allocated, and a list for the
/// actions. Bounded, so it never holds more than a few states.
pub struct StepBuffers<A, S> {
    states: Vec<S>,
    actions: Vec<A>,
}

impl<A, S> StepBuffers<A, S> {
    /// The most states kept.
    const MAX: usize = 64;

    /// No spare states yet.
    pub fn new() -> Self {
        Self {
            states: Vec::new(),
            actions: Vec::new(),
        }
    }

    /// Keeps `state` for reuse (drops it when enough are kept).
    #[inline]
    pub fn keep(&mut self, state: S) {
        if self.states.len() < Self::MAX {
            self.states.push(state);
        }
    }

    /// Keeps `state` for reuse if fewer than `most` states are kept (drops it otherwise).
    #[inline]
    pub fn keep_up_to(&mut self, state: S, most: usize) {
        if self.states.len() < most.min(Self::MAX) {
            self.states.push(state);
        }
    }

    /// The actions list, cleared, for the caller to fill and give back
    /// ([`StepBuffers::give_back_actions`]).
    pub fn take_actions(&mut self) -> Vec<A> {
        let mut actions = std::mem::take(&mut self.actions);
        actions.clear();
        actions
    }

    /// Gives the list [`StepBuffers::take_actions`] lent back.
    pub fn give_back_actions(&mut self, actions: Vec<A>) {
        self.actions = actions;
    }

    /// The state `action` leads to from `state` in `model`, written over a spare state if one
    /// is kept; `None` when the action is not taken.
    pub fn next_state<M>(
        &mut self,
        model: &M,
        worker: &mut M::Worker,
        state: &S,
        action: &A,
    ) -> Option<S>
    where
        M: Model<State = S, Action = A> + ?Sized,
    {
        match self.states.pop() {
            Some(mut reused) => {
                if model.next_state_into(worker, state, action, &mut reused) {
                    Some(reused)
                } else {
                    self.keep(reused);
                    None
                }
            }
            None => model.next_state(worker, state, action),
        }
    }
}

impl<A, S> Default for StepBuffers<A, S> {
    fn default() -> Self {
        Self::new()
    }
}

/// A transition system the engine can explore.
///
/// Implementations must be deterministic: the same state and action always give the same next
/// state, and `actions` lists the enabled actions in the same order every time, whatever the
/// worker's context holds. Counterexamples are replayed through these functions (with a fresh
/// context), so nondeterminism would make them unreplayable.
///
/// The hot path is `successors` (or `actions` and `next_state`), `encode` or `fingerprint`, and
/// `holds`: they should not allocate beyond the returned state, take locks or format text.
/// Each gets the calling worker's context ([`Model::Worker`]).
pub trait Model: Sync {
    /// A state of the system. Cloned when a path is replayed or work moves between threads.
    type State: Clone + Send + Sync + Debug;
    /// One transition: one atomic step of the system.
    type Action: Clone + Send + Sync + Debug + PartialEq;
    /// What one worker keeps from step to step (scratch buffers, caches) and what it knows of
    /// the search ([`WorkerBounds`]); `()` for a model that needs nothing.
    type Worker: Send;

    /// A new worker's context, for a search bounded by `bounds` (each worker of a search asks
    /// once; a replay or a test asks with [`WorkerBounds::none`]).
    fn worker(&self, bounds: WorkerBounds) -> Self::Worker;

    /// The states the system may start in.
    fn init_states(&self) -> Vec<Self::State>;

    /// Appends the actions enabled in `state` to `actions` (which the caller has cleared).
    fn actions(
        &self,
        worker: &mut Self::Worker,
        state: &Self::State,
        actions: &mut Vec<Self::Action>,
    );

    /// The state reached by taking `action` in `state`, or `None` when the action turns out to
    /// change nothing worth exploring (the engine then treats it as not taken).
    fn next_state(
        &self,
        worker: &mut Self::Worker,
        state: &Self::State,
        action: &Self::Action,
    ) -> Option<Self::State>;

    /// [`Model::next_state`] written over `out`, a state the engine no longer needs; whether
    /// the action was taken (`out` is unspecified when not). A model whose states own heap
    /// memory overrides it to reuse `out`'s allocations, so that a successor that turns out to
    /// be known already costs no allocation. The default calls [`Model::next_state`].
    fn next_state_into(
        &self,
        worker: &mut Self::Worker,
        state: &Self::State,
        action: &Self::Action,
        out: &mut Self::State,
    ) -> bool {
        match self.next_state(worker, state, action) {
            Some(next) => {
                *out = next;
                true
            }
            None => false,
        }
    }

    /// Calls `visit` with each enabled action of `state` and the state it leads to, in the
    /// order of [`Model::actions`] (actions not taken left out), the way Stateright's
    /// `next_steps` does; `buffers` lends spare states and an actions list. The searches
    /// expand states through it. The default is [`Model::actions`] then
    /// [`Model::next_state_into`]; a model whose listing of actions already computes the
    /// states they lead to (all the ways one step may go) overrides it to hand them over
    /// instead of keeping them for `next_state` to find.
    fn successors(
        &self,
        worker: &mut Self::Worker,
        state: &Self::State,
        buffers: &mut StepBuffers<Self::Action, Self::State>,
        mut visit: impl FnMut(Self::Action, Self::State),
    ) {
        let mut actions = buffers.take_actions();
        self.actions(worker, state, &mut actions);
        for action in actions.drain(..) {
            if let Some(next) = buffers.next_state(self, worker, state, &action) {
                visit(action, next);
            }
        }
        buffers.give_back_actions(actions);
    }

    /// Tells the model that the engine has taken in the successors [`Model::successors`] last
    /// handed over (inserted each one or dropped it), so that what the model charged to the
    /// memory budget for them while the engine held them can be given back. The default does
    /// nothing; a model that keeps such a charge gives it back here, or at the latest when it
    /// hands over the next state's successors.
    #[inline]
    fn successors_taken(&self, _worker: &mut Self::Worker) {}

    /// Partial-order reduction's hook: where the model knows an *ample set* of `state`, calls
    /// `visit` with each of its actions and the state it leads to, as [`Model::successors`]
    /// does, and returns true; otherwise returns false having called nothing, and the state is
    /// expanded in full. The default offers none.
    ///
    /// An ample set is a subset of the enabled actions that is (C0) not empty, (C1) such that
    /// on every path from `state` no action dependent on one of the set's (not commuting with
    /// it, or enabling or disabling it) is taken before one of the set's, and (C2) invisible,
    /// when it is not every enabled action: no action of it changes whether a property holds.
    /// The engine adds the cycle condition (C3) itself: it keeps an ample expansion only when
    /// every state it leads to is new to the visited set, and otherwise expands the state in
    /// full ([`crate::engine::search`]'s `Expansion`). Together they preserve every
    /// reachable violation of a property and every state without successors (Peled, "All
    /// from one, one for all", CAV 1993; Clarke, Grumberg and Peled, *Model Checking*, ch. 10).
    /// Searches whose claims are about the whole graph (the shortest trace, the point of no
    /// return, the loop search) never ask.
    fn ample_successors(
        &self,
        _worker: &mut Self::Worker,
        _state: &Self::State,
        _buffers: &mut StepBuffers<Self::Action, Self::State>,
        _visit: impl FnMut(Self::Action, Self::State),
    ) -> bool {
        false
    }

    /// Appends the canonical byte encoding of `state` to `out` (which may already hold other
    /// states' encodings: append, never clear or overwrite).
    /// Two states that behave the same must encode to the same bytes and different states to
    /// different bytes: the engine identifies states by these bytes alone.
    fn encode(&self, worker: &mut Self::Worker, state: &Self::State, out: &mut Vec<u8>);

    /// A 64-bit hash of `state`'s encoding ([`Model::encode`]); `scratch` is a buffer the
    /// model may use. Visited sets that keep fingerprints alone need only this, so a model with
    /// large states overrides it to hash its state where it lies instead of copying it out
    /// first. It must depend on the encoding alone (equal encodings, equal fingerprints) and
    /// spread states as evenly as xxh3 does; the default is `xxh3_64` of the encoding.
    fn fingerprint(
        &self,
        worker: &mut Self::Worker,
        state: &Self::State,
        scratch: &mut Vec<u8>,
    ) -> u64 {
        scratch.clear();
        self.encode(worker, state, scratch);
        xxhash_rust::xxh3::xxh3_64(scratch)
    }

    /// The properties to check, in a fixed order; [`Model::holds`] takes an index into it.
    /// Their names are distinct: a violation is recorded, replayed and reported under its
    /// property's name.
    fn properties(&self) -> Vec<Property>;

    /// Whether property number `property` (an index into [`Model::properties`]) holds in `state`.
    fn holds(&self, worker: &mut Self::Worker, property: usize, state: &Self::State) -> bool;

    /// Whether a state without enabled actions is an error (a deadlock, or SPIN's "invalid end
    /// state") unless [`Model::is_valid_end_state`] accepts it. Off by default.
    fn checks_deadlock(&self) -> bool {
        false
    }

    /// Whether `state`, which has no enabled actions, is an acceptable place for the system to
    /// stop. Only consulted when [`Model::checks_deadlock`] is on.
    fn is_valid_end_state(&self, _state: &Self::State) -> bool {
        true
    }

    /// Why the search cannot be complete however many states it explores: the model could not
    /// list every successor of some state it was asked about, and says which. The engine asks
    /// when a search ends; one that found no violation is then incomplete, not a proof. `None`
    /// by default (every model that lists all successors).
    fn left_out(&self) -> Option<String> {
        None
    }

    /// Bytes `state` owns on the heap beyond `size_of::<State>()`: what a state kept in a
    /// breadth-first frontier costs, counted against the memory budget. 0 by default (states
    /// stored inline).
    fn state_heap_bytes(&self, _state: &Self::State) -> usize {
        0
    }

    /// A one-line, human-readable description of `action` taken in `state`, for traces. Only
    /// called when a trace is printed, never during the search.
    fn describe_action(&self, _state: &Self::State, action: &Self::Action) -> String {
        format!("{action:?}")
    }
}
