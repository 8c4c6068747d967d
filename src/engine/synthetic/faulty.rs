//! Fault injection: a model that panics, to test that the engine stops every worker at once.

use super::counters::{CounterValues, Counters};
use crate::engine::model::{Model, Property, WorkerBounds};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// [`Counters`] whose successor function panics on reaching the state where every counter
/// equals `max / 2`, half-way through the search. Exactly the worker that first computes
/// that successor panics; the others must stop too, and the check must return promptly: the
/// model counts the successors computed after the fault ([`Self::steps_after_fault`]), each
/// taking a millisecond, so that a worker left running through the rest of the search counts
/// hundreds of thousands, one stopped while the panic unwinds a handful.
#[derive(Clone, Debug)]
pub struct PanickingCounters {
    counters: Counters,
    vars: usize,
    trigger: u8,
    fault: Arc<Fault>,
}

/// Whether the fault was injected, and the successors computed since.
#[derive(Debug, Default)]
struct Fault {
    injected: AtomicBool,
    steps_after: AtomicU64,
}

impl PanickingCounters {
    /// `vars` counters (1..=16) from 0 to `max`, panicking at all counters `max / 2`.
    pub fn new(vars: usize, max: u8) -> Self {
        Self {
            counters: Counters::new(vars, max),
            vars,
            trigger: max / 2,
            fault: Arc::default(),
        }
    }

    /// The successors computed (by any worker) after the fault was injected.
    pub fn steps_after_fault(&self) -> u64 {
        self.fault.steps_after.load(Ordering::Relaxed)
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
        if self.fault.injected.load(Ordering::Relaxed) {
            self.fault.steps_after.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let next = self.counters.next_state(&mut (), state, action)?;
        if next[..self.vars].iter().all(|&value| value == self.trigger) {
            self.fault.injected.store(true, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{check, CheckError, CheckOptions, Strategy};

    /// Once one worker panics, every other one stops soon after: a worker computes a few
    /// successors while the panic is reported and unwound (each takes a millisecond after the
    /// fault), then at most the rest of the state it is expanding, where the search would
    /// otherwise go on through half of its million states, three million successors.
    #[test]
    fn a_panic_stops_every_worker_after_its_current_state() {
        for strategy in [Strategy::Dfs, Strategy::Bfs, Strategy::Swarm] {
            for threads in [1, 2, 4, 16] {
                let model = PanickingCounters::new(6, 9);
                let options = CheckOptions {
                    strategy,
                    ..CheckOptions::with_threads(threads)
                };
                match check(&model, &options) {
                    Err(CheckError::Panicked(message)) => {
                        assert!(message.contains("injected fault"), "{message}")
                    }
                    other => panic!("{strategy:?}, {threads} threads: {:?}", other.err()),
                }
                let after = model.steps_after_fault();
                assert!(
                    after <= threads as u64 * 2_000,
                    "{strategy:?}, {threads} threads: {after} successors after the fault"
                );
            }
        }
    }
}
