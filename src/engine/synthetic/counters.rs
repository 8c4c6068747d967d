//! Counter models: N counters, each from 0 to K, one incremented per step.

use crate::engine::model::{Model, Property, WorkerBounds};

/// The most counters a model may have.
pub const MAX_COUNTERS: usize = 16;

/// The counters' values; only the first N are used.
pub type CounterValues = [u8; MAX_COUNTERS];

/// Where both counter models start.
const ALL_ZERO: CounterValues = [0; MAX_COUNTERS];

/// `state` with counter `index` one higher: the one step of both counter models.
fn incremented(state: &CounterValues, index: u8) -> CounterValues {
    let mut next = *state;
    next[index as usize] += 1;
    next
}

/// N independent counters from 0 to K: (K+1)^N states, the all-at-K state at depth N·K.
///
/// Properties: `all at max` is `sometimes` (reachable); when built with
/// [`Counters::forbidding_all_at_max`] the same condition is also an `always` violation
/// (`never all at max`), whose shortest counterexample has exactly N·K steps.
#[derive(Clone, Debug)]
pub struct Counters {
    vars: usize,
    max: u8,
    forbid_all_at_max: bool,
}

impl Counters {
    /// `vars` counters (1..=16) each from 0 to `max`.
    pub fn new(vars: usize, max: u8) -> Self {
        assert!(
            (1..=MAX_COUNTERS).contains(&vars),
            "1 to {MAX_COUNTERS} counters"
        );
        Self {
            vars,
            max,
            forbid_all_at_max: false,
        }
    }

    /// The same model where reaching all counters at max is a violation.
    pub fn forbidding_all_at_max(mut self) -> Self {
        self.forbid_all_at_max = true;
        self
    }

    /// The number of reachable states, (K+1)^N.
    pub fn state_count(&self) -> u64 {
        (u64::from(self.max) + 1).pow(self.vars as u32)
    }

    fn all_at_max(&self, state: &CounterValues) -> bool {
        state[..self.vars].iter().all(|&value| value == self.max)
    }
}

impl Model for Counters {
    type State = CounterValues;
    type Action = u8;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}

    fn init_states(&self) -> Vec<CounterValues> {
        vec![ALL_ZERO]
    }

    fn actions(&self, _: &mut (), state: &CounterValues, actions: &mut Vec<u8>) {
        for (index, &value) in state[..self.vars].iter().enumerate() {
            if value < self.max {
                actions.push(index as u8);
            }
        }
    }

    fn next_state(&self, _: &mut (), state: &CounterValues, action: &u8) -> Option<CounterValues> {
        Some(incremented(state, *action))
    }

    fn encode(&self, _: &mut (), state: &CounterValues, out: &mut Vec<u8>) {
        out.extend_from_slice(&state[..self.vars]);
    }

    fn properties(&self) -> Vec<Property> {
        let mut properties = vec![Property::sometimes("all at max")];
        if self.forbid_all_at_max {
            properties.push(Property::always("never all at max"));
        }
        properties
    }

    fn holds(&self, _: &mut (), property: usize, state: &CounterValues) -> bool {
        match property {
            0 => self.all_at_max(state),
            _ => !self.all_at_max(state),
        }
    }

    fn describe_action(&self, state: &CounterValues, action: &u8) -> String {
        let index = *action as usize;
        format!("counter {index}: {} -> {}", state[index], state[index] + 1)
    }
}

/// N counters from 0 to K where counter i may only be incremented while it is below counter
/// i-1: the reachable states are the non-increasing sequences, C(N+K, N) of them. A model
/// whose variables depend on each other.
#[derive(Clone, Debug)]
pub struct OrderedCounters {
    vars: usize,
    max: u8,
}

impl OrderedCounters {
    /// `vars` counters (1..=16) each from 0 to `max`.
    pub fn new(vars: usize, max: u8) -> Self {
        assert!(
            (1..=MAX_COUNTERS).contains(&vars),
            "1 to {MAX_COUNTERS} counters"
        );
        Self { vars, max }
    }

    /// The number of reachable states, C(N+K, N).
    pub fn state_count(&self) -> u64 {
        let (n, k) = (self.vars as u64, u64::from(self.max));
        (1..=n).fold(1, |count, i| count * (k + i) / i)
    }
}

impl Model for OrderedCounters {
    type State = CounterValues;
    type Action = u8;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}

    fn init_states(&self) -> Vec<CounterValues> {
        vec![ALL_ZERO]
    }

    fn actions(&self, _: &mut (), state: &CounterValues, actions: &mut Vec<u8>) {
        for index in 0..self.vars {
            let bound = if index == 0 {
                self.max
            } else {
                state[index - 1]
            };
            if state[index] < bound {
                actions.push(index as u8);
            }
        }
    }

    fn next_state(&self, _: &mut (), state: &CounterValues, action: &u8) -> Option<CounterValues> {
        Some(incremented(state, *action))
    }

    fn encode(&self, _: &mut (), state: &CounterValues, out: &mut Vec<u8>) {
        out.extend_from_slice(&state[..self.vars]);
    }

    fn properties(&self) -> Vec<Property> {
        vec![Property::always("non-increasing")]
    }

    fn holds(&self, _: &mut (), _property: usize, state: &CounterValues) -> bool {
        state[..self.vars].windows(2).all(|pair| pair[0] >= pair[1])
    }
}
