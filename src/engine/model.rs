//! The interface between a system under verification and the checker.
//!
//! A [`Model`] is a transition system: initial states, the actions enabled in a state, the
//! state an action leads to, and named [`Property`]s to check. The engine never looks inside a
//! state; it only asks the model for the state's canonical byte encoding, which it fingerprints
//! (or stores whole in exact mode).

use std::fmt::Debug;

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

/// A transition system the engine can explore.
///
/// Implementations must be deterministic: the same state and action always give the same next
/// state, and `actions` lists the enabled actions in the same order every time. Counterexamples
/// are replayed through these functions, so nondeterminism would make them unreplayable.
///
/// The hot path is `actions`, `next_state`, `encode` and `holds`: they should not allocate beyond
/// the returned state, take locks or format text.
pub trait Model: Sync {
    /// A state of the system. Cloned when a path is replayed or work moves between threads.
    type State: Clone + Send + Sync + Debug;
    /// One transition: one atomic step of the system.
    type Action: Clone + Send + Sync + Debug + PartialEq;

    /// The states the system may start in.
    fn init_states(&self) -> Vec<Self::State>;

    /// Appends the actions enabled in `state` to `actions` (which the caller has cleared).
    fn actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>);

    /// The state reached by taking `action` in `state`, or `None` when the action turns out to
    /// change nothing worth exploring (the engine then treats it as not taken).
    fn next_state(&self, state: &Self::State, action: &Self::Action) -> Option<Self::State>;

    /// [`Model::next_state`] written over `out`, a state the engine no longer needs; whether
    /// the action was taken (`out` is unspecified when not). A model whose states own heap
    /// memory overrides it to reuse `out`'s allocations, so that a successor that turns out to
    /// be known already costs no allocation. The default calls [`Model::next_state`].
    fn next_state_into(
        &self,
        state: &Self::State,
        action: &Self::Action,
        out: &mut Self::State,
    ) -> bool {
        match self.next_state(state, action) {
            Some(next) => {
                *out = next;
                true
            }
            None => false,
        }
    }

    /// Appends the canonical byte encoding of `state` to `out` (which may already hold other
    /// states' encodings: append, never clear or overwrite).
    /// Two states that behave the same must encode to the same bytes and different states to
    /// different bytes: the engine identifies states by these bytes alone.
    fn encode(&self, state: &Self::State, out: &mut Vec<u8>);

    /// A 64-bit hash of `state`'s encoding ([`Model::encode`]); `scratch` is a buffer the
    /// model may use. Visited sets that keep fingerprints alone need only this, so a model with
    /// large states overrides it to hash its state where it lies instead of copying it out
    /// first. It must depend on the encoding alone (equal encodings, equal fingerprints) and
    /// spread states as evenly as xxh3 does; the default is `xxh3_64` of the encoding.
    fn fingerprint(&self, state: &Self::State, scratch: &mut Vec<u8>) -> u64 {
        scratch.clear();
        self.encode(state, scratch);
        xxhash_rust::xxh3::xxh3_64(scratch)
    }

    /// The properties to check, in a fixed order; [`Model::holds`] takes an index into it.
    /// Their names are distinct: a violation is recorded, replayed and reported under its
    /// property's name.
    fn properties(&self) -> Vec<Property>;

    /// Whether property number `property` (an index into [`Model::properties`]) holds in `state`.
    fn holds(&self, property: usize, state: &Self::State) -> bool;

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
