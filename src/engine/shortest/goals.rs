//! A model as a shortening search sees it: the states it looks for are its only properties.
//!
//! A breadth-first search ([`crate::engine::check`] with [`Strategy::Bfs`]) stops at the
//! first state where an `always` property fails, with a shortest path to it. [`Goals`] wraps a
//! model so that "fails" means "is a state we look for": a failure the first search found
//! (its property, or a deadlock), or any set of states a caller names (the states of a
//! lasso's cycle).
//!
//! [`Strategy::Bfs`]: crate::engine::Strategy::Bfs

use crate::engine::model::{Expectation, Model, Property, StepBuffers, WorkerBounds};
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
    fn fails_any(&self, worker: &mut M::Worker, state: &M::State) -> bool {
        self.always
            .iter()
            .any(|&at| !self.model.holds(worker, at, state))
    }
}

impl<M: Model> Model for Goals<'_, M> {
    type State = M::State;
    type Action = M::Action;

    type Worker = M::Worker;

    fn worker(&self, bounds: WorkerBounds) -> M::Worker {
        self.model.worker(bounds)
    }

    fn init_states(&self) -> Vec<M::State> {
        self.model.init_states()
    }

    fn actions(&self, worker: &mut M::Worker, state: &M::State, actions: &mut Vec<M::Action>) {
        if !self.fails_any(worker, state) {
            self.model.actions(worker, state, actions);
        }
    }

    fn next_state(
        &self,
        worker: &mut M::Worker,
        state: &M::State,
        action: &M::Action,
    ) -> Option<M::State> {
        self.model.next_state(worker, state, action)
    }

    fn next_state_into(
        &self,
        worker: &mut M::Worker,
        state: &M::State,
        action: &M::Action,
        out: &mut M::State,
    ) -> bool {
        self.model.next_state_into(worker, state, action, out)
    }

    fn successors(
        &self,
        worker: &mut M::Worker,
        state: &M::State,
        buffers: &mut StepBuffers<M::Action, M::State>,
        visit: impl FnMut(M::Action, M::State),
    ) {
        if !self.fails_any(worker, state) {
            self.model.successors(worker, state, buffers, visit);
        }
    }

    fn encode(&self, worker: &mut M::Worker, state: &M::State, out: &mut Vec<u8>) {
        self.model.encode(worker, state, out);
    }

    fn fingerprint(&self, worker: &mut M::Worker, state: &M::State, scratch: &mut Vec<u8>) -> u64 {
        self.model.fingerprint(worker, state, scratch)
    }

    fn properties(&self) -> Vec<Property> {
        self.goals
            .iter()
            .map(|(name, _)| Property::always(name.clone()))
            .collect()
    }

    fn holds(&self, worker: &mut M::Worker, property: usize, state: &M::State) -> bool {
        match &self.goals[property].1 {
            Goal::Fails(at) => self.model.holds(worker, *at, state),
            Goal::Reached(reached) => !reached(state),
        }
    }

    fn checks_deadlock(&self) -> bool {
        self.deadlock
    }

    fn is_valid_end_state(&self, state: &M::State) -> bool {
        let mut worker = self.model.worker(WorkerBounds::none());
        self.fails_any(&mut worker, state) || self.model.is_valid_end_state(state)
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
