//! A model as a shortening search sees it: the states it looks for are its only properties.
//!
//! A breadth-first search ([`crate::engine::check`] with [`Strategy::Bfs`]) stops at the
//! first state where an `always` property fails, with a shortest path to it. [`Goals`] wraps a
//! model so that "fails" means "is a state we look for": a failure the first search found
//! (its property, or a deadlock), or any set of states a caller names (the states of a
//! lasso's cycle).
//!
//! [`Strategy::Bfs`]: crate::engine::Strategy::Bfs

use crate::engine::model::{Expectation, Model, Property};
use crate::engine::trace::Failure;

/// What a goal state is.
pub enum Goal<'g, S> {
    /// A state where the model's property with this index fails.
    Fails(usize),
    /// A state for which the function says yes.
    Reached(Box<dyn Fn(&S) -> bool + Sync + 'g>),
}

/// `model` with `goals` for properties.
pub struct Goals<'g, M: Model> {
    model: &'g M,
    goals: Vec<(String, Goal<'g, M::State>)>,
    /// The model's `always` properties: a state where one fails is not expanded, as the
    /// search that found the failures did not expand it. Empty for a lasso's stem, which the
    /// lasso search looked for through every state.
    always: Vec<usize>,
    /// Whether a deadlock is a goal.
    deadlock: bool,
}

impl<'g, M: Model> Goals<'g, M> {
    /// Looks for `failures` of `model` as a safety search meets them.
    pub fn failures(model: &'g M, failures: &[Failure]) -> Self {
        let properties = model.properties();
        let index = |name: &str| properties.iter().position(|p| p.name == name);
        let goals = failures
            .iter()
            .filter_map(|failure| match failure {
                Failure::Invariant(name) => index(name).map(|at| (name.clone(), Goal::Fails(at))),
                Failure::Deadlock => None,
            })
            .collect();
        Self {
            model,
            goals,
            always: (0..properties.len())
                .filter(|&at| properties[at].expectation == Expectation::Always)
                .collect(),
            deadlock: failures.contains(&Failure::Deadlock),
        }
    }

    /// Looks for a state where `reached` says yes, through every state of `model`.
    pub fn reaching(model: &'g M, reached: impl Fn(&M::State) -> bool + Sync + 'g) -> Self {
        Self {
            model,
            goals: vec![("reached".to_string(), Goal::Reached(Box::new(reached)))],
            always: Vec::new(),
            deadlock: false,
        }
    }

    /// Whether `state` fails one of the model's `always` properties (and is not expanded).
    fn fails_any(&self, state: &M::State) -> bool {
        self.always.iter().any(|&at| !self.model.holds(at, state))
    }
}

impl<M: Model> Model for Goals<'_, M> {
    type State = M::State;
    type Action = M::Action;

    fn init_states(&self) -> Vec<M::State> {
        self.model.init_states()
    }

    fn actions(&self, state: &M::State, actions: &mut Vec<M::Action>) {
        if !self.fails_any(state) {
            self.model.actions(state, actions);
        }
    }

    fn next_state(&self, state: &M::State, action: &M::Action) -> Option<M::State> {
        self.model.next_state(state, action)
    }

    fn next_state_into(&self, state: &M::State, action: &M::Action, out: &mut M::State) -> bool {
        self.model.next_state_into(state, action, out)
    }

    fn encode(&self, state: &M::State, out: &mut Vec<u8>) {
        self.model.encode(state, out);
    }

    fn fingerprint(&self, state: &M::State, scratch: &mut Vec<u8>) -> u64 {
        self.model.fingerprint(state, scratch)
    }

    fn properties(&self) -> Vec<Property> {
        self.goals
            .iter()
            .map(|(name, _)| Property::always(name.clone()))
            .collect()
    }

    fn holds(&self, property: usize, state: &M::State) -> bool {
        match &self.goals[property].1 {
            Goal::Fails(at) => self.model.holds(*at, state),
            Goal::Reached(reached) => !reached(state),
        }
    }

    fn checks_deadlock(&self) -> bool {
        self.deadlock
    }

    fn is_valid_end_state(&self, state: &M::State) -> bool {
        self.fails_any(state) || self.model.is_valid_end_state(state)
    }

    fn left_out(&self) -> Option<String> {
        self.model.left_out()
    }

    fn state_heap_bytes(&self, state: &M::State) -> usize {
        self.model.state_heap_bytes(state)
    }

    fn describe_action(&self, state: &M::State, action: &M::Action) -> String {
        self.model.describe_action(state, action)
    }
}
