//! Models that offer ample sets ([`Model::ample_successors`]): the engine's test subjects for
//! partial-order reduction.
//!
//! - [`IndependentSteps`]: N processes that each take K steps of their own, which commute with
//!   every other process's and change no property: (K+1)^N states in full, N·K+1 (one
//!   interleaving) reduced.
//! - [`SpinOrExit`]: a process that spins round a cycle of three states and another that may
//!   exit once, which breaks the model's one property. Spinning is independent of exiting and
//!   invisible, so `{spin}` is an ample set in every state by conditions C0–C2; a search that
//!   keeps to it never exits (the "ignoring problem"). Only the cycle condition, which the
//!   engine adds, makes the violation found.

use crate::engine::model::{Model, Property, StepBuffers, WorkerBounds};

/// The most processes of an [`IndependentSteps`] model.
pub const MAX_PROCESSES: usize = 8;

/// N processes, each counting its own steps from 0 to K.
#[derive(Clone, Debug)]
pub struct IndependentSteps {
    processes: usize,
    steps: u8,
    /// Heap bytes each state claims (see [`IndependentSteps::with_large_states`]).
    claimed_heap: usize,
}

impl IndependentSteps {
    /// `processes` processes (1..=8) of `steps` steps each.
    pub fn new(processes: usize, steps: u8) -> Self {
        assert!((1..=MAX_PROCESSES).contains(&processes));
        Self {
            processes,
            steps,
            claimed_heap: 0,
        }
    }

    /// The same model whose states count as `bytes` large on the heap, so that a depth-first
    /// search keeps their children as the state and an action (its path for large states).
    pub fn with_large_states(mut self, bytes: usize) -> Self {
        self.claimed_heap = bytes;
        self
    }

    /// States in full: (K+1)^N.
    pub fn full_state_count(&self) -> u64 {
        (u64::from(self.steps) + 1).pow(self.processes as u32)
    }

    /// States reduced: one interleaving, N·K+1.
    pub fn reduced_state_count(&self) -> u64 {
        self.processes as u64 * u64::from(self.steps) + 1
    }
}

impl Model for IndependentSteps {
    type State = [u8; MAX_PROCESSES];
    type Action = u8;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}

    fn init_states(&self) -> Vec<Self::State> {
        vec![[0; MAX_PROCESSES]]
    }

    fn actions(&self, _: &mut (), state: &Self::State, actions: &mut Vec<u8>) {
        let open = (0..self.processes).filter(|&p| state[p] < self.steps);
        actions.extend(open.map(|p| p as u8));
    }

    fn next_state(&self, _: &mut (), state: &Self::State, process: &u8) -> Option<Self::State> {
        let mut next = *state;
        next[*process as usize] += 1;
        Some(next)
    }

    /// The first process with steps left: its step commutes with every other and neither
    /// enables nor disables one (C1), and changes no property (C2).
    fn ample_successors(
        &self,
        worker: &mut (),
        state: &Self::State,
        _: &mut StepBuffers<u8, Self::State>,
        mut visit: impl FnMut(u8, Self::State),
    ) -> bool {
        let Some(first) = (0..self.processes).find(|&p| state[p] < self.steps) else {
            return false;
        };
        let action = first as u8;
        let next = self
            .next_state(worker, state, &action)
            .expect("always taken");
        visit(action, next);
        true
    }

    fn encode(&self, _: &mut (), state: &Self::State, out: &mut Vec<u8>) {
        out.extend_from_slice(&state[..self.processes]);
    }

    fn properties(&self) -> Vec<Property> {
        vec![Property::always("no process past its last step")]
    }

    fn holds(&self, _: &mut (), _: usize, state: &Self::State) -> bool {
        state[..self.processes].iter().all(|&s| s <= self.steps)
    }

    fn state_heap_bytes(&self, _: &Self::State) -> usize {
        self.claimed_heap
    }
}

/// A spinning process and one that may exit.
#[derive(Clone, Copy, Debug, Default)]
pub struct SpinOrExit;

/// A [`SpinOrExit`] state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpinState {
    /// Where the spinning process is on its cycle: 0, 1 or 2.
    pub spin: u8,
    /// Whether the other process has exited.
    pub exited: bool,
}

/// A [`SpinOrExit`] action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpinAction {
    /// One step round the cycle.
    Spin,
    /// The other process exits.
    Exit,
}

impl Model for SpinOrExit {
    type State = SpinState;
    type Action = SpinAction;
    type Worker = ();

    fn worker(&self, _: WorkerBounds) {}

    fn init_states(&self) -> Vec<SpinState> {
        vec![SpinState {
            spin: 0,
            exited: false,
        }]
    }

    fn actions(&self, _: &mut (), state: &SpinState, actions: &mut Vec<SpinAction>) {
        actions.push(SpinAction::Spin);
        if !state.exited {
            actions.push(SpinAction::Exit);
        }
    }

    fn next_state(&self, _: &mut (), state: &SpinState, action: &SpinAction) -> Option<SpinState> {
        Some(match action {
            SpinAction::Spin => SpinState {
                spin: (state.spin + 1) % 3,
                ..*state
            },
            SpinAction::Exit => SpinState {
                exited: true,
                ..*state
            },
        })
    }

    /// `{spin}`: independent of exiting (C1), invisible (C2), always enabled (C0).
    fn ample_successors(
        &self,
        worker: &mut (),
        state: &SpinState,
        _: &mut StepBuffers<SpinAction, SpinState>,
        mut visit: impl FnMut(SpinAction, SpinState),
    ) -> bool {
        let next = self.next_state(worker, state, &SpinAction::Spin);
        visit(SpinAction::Spin, next.expect("always taken"));
        true
    }

    fn encode(&self, _: &mut (), state: &SpinState, out: &mut Vec<u8>) {
        out.extend_from_slice(&[state.spin, u8::from(state.exited)]);
    }

    fn properties(&self) -> Vec<Property> {
        vec![Property::always("never exits")]
    }

    fn holds(&self, _: &mut (), _: usize, state: &SpinState) -> bool {
        !state.exited
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{
        check, CheckOptions, Strategy, TraceLength, TraceMode, Verdict, VisitedKind,
    };
    use std::collections::HashSet;

    fn options(strategy: Strategy, threads: usize, partial_order: bool) -> CheckOptions {
        CheckOptions {
            strategy,
            seed: 3,
            partial_order,
            ..CheckOptions::with_threads(threads)
        }
    }

    const STRATEGIES: [Strategy; 3] = [Strategy::Dfs, Strategy::Swarm, Strategy::Bfs];

    #[test]
    fn independent_steps_are_explored_in_one_interleaving() {
        for model in [
            IndependentSteps::new(4, 5),
            IndependentSteps::new(3, 4).with_large_states(64 << 10),
        ] {
            for strategy in STRATEGIES {
                for threads in [1, 2, 4, 8] {
                    let reduced = check(&model, &options(strategy, threads, true)).unwrap();
                    assert_eq!(reduced.verdict(), Verdict::NoViolation);
                    assert_eq!(reduced.stats.states_stored, model.reduced_state_count());
                    assert_eq!(
                        reduced.stats.ample_expansions,
                        model.reduced_state_count() - 1,
                        "every state but the last is expanded by its ample set"
                    );
                    let full = check(&model, &options(strategy, threads, false)).unwrap();
                    assert_eq!(full.verdict(), Verdict::NoViolation);
                    assert_eq!(full.stats.states_stored, model.full_state_count());
                    assert_eq!(full.stats.ample_expansions, 0);
                }
            }
        }
    }

    #[test]
    fn exact_sets_reduce_as_fingerprints_do() {
        let model = IndependentSteps::new(3, 3);
        for strategy in STRATEGIES {
            let options = CheckOptions {
                visited: VisitedKind::Exact,
                ..options(strategy, 2, true)
            };
            let outcome = check(&model, &options).unwrap();
            assert_eq!(outcome.stats.states_stored, model.reduced_state_count());
        }
    }

    /// Every state a search that keeps to the model's ample sets, without the cycle
    /// condition, reaches: what a naive reduction explores.
    fn reached_without_the_cycle_condition(model: &SpinOrExit) -> HashSet<SpinState> {
        let mut seen: HashSet<SpinState> = model.init_states().into_iter().collect();
        let mut stack: Vec<SpinState> = seen.iter().copied().collect();
        let mut buffers = StepBuffers::new();
        while let Some(state) = stack.pop() {
            let mut next = Vec::new();
            let reduced =
                model.ample_successors(&mut (), &state, &mut buffers, |_, s| next.push(s));
            assert!(reduced);
            for successor in next {
                if seen.insert(successor) {
                    stack.push(successor);
                }
            }
        }
        seen
    }

    #[test]
    fn the_cycle_condition_finds_the_violation_a_naive_reduction_ignores() {
        let model = SpinOrExit;
        let naive = reached_without_the_cycle_condition(&model);
        assert_eq!(naive.len(), 3, "the spin cycle alone");
        assert!(
            naive.iter().all(|s| !s.exited),
            "the violation is never reached"
        );
        for strategy in STRATEGIES {
            for threads in [1, 2, 4] {
                for trace in [TraceMode::First, TraceMode::Shortest] {
                    let options = CheckOptions {
                        trace,
                        ..options(strategy, threads, true)
                    };
                    let outcome = check(&model, &options).unwrap();
                    assert_eq!(outcome.verdict(), Verdict::Violation);
                    let steps = &outcome.violations[0].trace.steps;
                    assert_eq!(steps.last().unwrap().action, SpinAction::Exit);
                    // Breadth-first over the reduced graph is not shortest in the full one: its
                    // trace is shortened like a depth-first one's, or said to be as found.
                    let length = &outcome.violations[0].length;
                    match trace {
                        TraceMode::Shortest => {
                            assert_eq!(steps.len(), 1, "the shortest trace exits at once");
                            assert_eq!(*length, TraceLength::Shortest);
                        }
                        TraceMode::First => assert_eq!(*length, TraceLength::AsFound),
                    }
                }
            }
        }
    }
}
