//! Fault injection: a model that panics, to test that the engine stops every worker at once.

use super::counters::{CounterValues, Counters};
use crate::engine::model::{Model, Property, WorkerBounds};

/// [`Counters`] whose successor function panics on reaching the state where every counter
/// equals `max / 2`, half-way through the search. Exactly the worker that first computes
/// that successor panics; the others must stop too, and the check must return promptly.
#[derive(Clone, Debug)]
pub struct PanickingCounters {
    counters: Counters,
    vars: usize,
    trigger: u8,
}

impl PanickingCounters {
    /// `vars` counters (1..=16) from 0 to `max`, panicking at all counters `max / 2`.
    pub fn new(vars: usize, max: u8) -> Self {
        Self {
            counters: Counters::new(vars, max),
            vars,
            trigger: max / 2,
        }
    }
}

impl Model for PanickingCounters {
    type State = CounterValues;
    type Action = u8;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}

    fn init_states(&self) -> Vec<CounterValues> {
        self.counters.init_states()
    }

    fn actions(&self, _: &mut (), state: &CounterValues, actions: &mut Vec<u8>) {
        self.counters.actions(&mut (), state, actions);
    }

    fn next_state(&self, _: &mut (), state: &CounterValues, action: &u8) -> Option<CounterValues> {
        let next = self.counters.next_state(&mut (), state, action)?;
        if next[..self.vars].iter().all(|&value| value == self.trigger) {
            panic!("injected fault: every counter reached {}", self.trigger);
        }
        Some(next)
    }

    fn encode(&self, _: &mut (), state: &CounterValues, out: &mut Vec<u8>) {
        self.counters.encode(&mut (), state, out);
    }

    fn properties(&self) -> Vec<Property> {
        self.counters.properties()
    }

    fn holds(&self, _: &mut (), property: usize, state: &CounterValues) -> bool {
        self.counters.holds(&mut (), property, state)
    }
}
