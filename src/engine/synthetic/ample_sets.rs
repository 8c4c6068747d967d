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

    /// Processes with random local transition graphs: the first `visible` ones are read by
    /// the property (never all at their targets at once) and the others by nothing, so an
    /// invisible process's enabled steps, which touch its own state alone, form an ample set.
    /// Some models also take a state without steps as a deadlock.
    struct LocalProcesses {
        /// Per process, per local state, the local states a step leads to.
        steps: Vec<Vec<Vec<u8>>>,
        visible: usize,
        targets: Vec<u8>,
        deadlocks: bool,
    }

    impl LocalProcesses {
        fn random(seed: u64) -> Self {
            let mut rng = crate::engine::rng::SplitMix64::new(seed);
            let processes = 2 + rng.below(3);
            let visible = 1 + rng.below(processes - 1);
            let steps = (0..processes)
                .map(|_| {
                    let states = 2 + rng.below(3);
                    (0..states)
                        .map(|_| {
                            let out = rng.below(3);
                            (0..out).map(|_| rng.below(states) as u8).collect()
                        })
                        .collect()
                })
                .collect::<Vec<Vec<Vec<u8>>>>();
            let targets = steps[..visible]
                .iter()
                .map(|local| rng.below(local.len()) as u8)
                .collect();
            Self {
                steps,
                visible,
                targets,
                deadlocks: rng.below(2) == 0,
            }
        }
    }

    impl Model for LocalProcesses {
        type State = [u8; MAX_PROCESSES];
        type Action = (u8, u8);
        type Worker = ();

        fn worker(&self, _: WorkerBounds) {}

        fn init_states(&self) -> Vec<Self::State> {
            vec![[0; MAX_PROCESSES]]
        }

        fn actions(&self, _: &mut (), state: &Self::State, actions: &mut Vec<(u8, u8)>) {
            for (p, local) in self.steps.iter().enumerate() {
                let next = &local[state[p] as usize];
                actions.extend(next.iter().map(|&to| (p as u8, to)));
            }
        }

        fn next_state(
            &self,
            _: &mut (),
            state: &Self::State,
            &(p, to): &(u8, u8),
        ) -> Option<Self::State> {
            let mut next = *state;
            next[p as usize] = to;
            Some(next)
        }

        fn ample_successors(
            &self,
            worker: &mut (),
            state: &Self::State,
            _: &mut StepBuffers<(u8, u8), Self::State>,
            mut visit: impl FnMut((u8, u8), Self::State),
        ) -> bool {
            let invisible = (self.visible..self.steps.len())
                .find(|&p| !self.steps[p][state[p] as usize].is_empty());
            let Some(p) = invisible else {
                return false;
            };
            for &to in &self.steps[p][state[p] as usize] {
                let action = (p as u8, to);
                visit(action, self.next_state(worker, state, &action).unwrap());
            }
            true
        }

        fn encode(&self, _: &mut (), state: &Self::State, out: &mut Vec<u8>) {
            out.extend_from_slice(&state[..self.steps.len()]);
        }

        fn properties(&self) -> Vec<Property> {
            vec![Property::always("never all visible at their targets")]
        }

        fn holds(&self, _: &mut (), _: usize, state: &Self::State) -> bool {
            !self.targets.iter().enumerate().all(|(p, &t)| state[p] == t)
        }

        fn checks_deadlock(&self) -> bool {
            self.deadlocks
        }

        fn is_valid_end_state(&self, _: &Self::State) -> bool {
            false
        }
    }

    /// On 300 random models, every search with the reduction gives the verdict and the
    /// failures the full search gives, storing no more states where nothing fails.
    #[test]
    fn random_models_keep_their_verdicts_under_the_reduction() {
        let mut reduced_somewhere = 0;
        for seed in 0..300 {
            let model = LocalProcesses::random(seed);
            let full = check(&model, &options(Strategy::Bfs, 1, false)).unwrap();
            let failures = |o: &crate::engine::Outcome<LocalProcesses>| {
                let mut failures: Vec<String> = o
                    .violations
                    .iter()
                    .map(|v| format!("{:?}", v.failure))
                    .collect();
                failures.sort();
                failures
            };
            for strategy in STRATEGIES {
                for threads in [1, 2, 4] {
                    let options = CheckOptions {
                        all_violations: true,
                        ..options(strategy, threads, true)
                    };
                    let reduced = check(&model, &options).unwrap();
                    assert_eq!(
                        reduced.verdict(),
                        full.verdict(),
                        "seed {seed} {strategy:?}"
                    );
                    let all = CheckOptions {
                        all_violations: true,
                        ..self::options(Strategy::Bfs, 1, false)
                    };
                    let every = check(&model, &all).unwrap();
                    assert_eq!(
                        failures(&reduced),
                        failures(&every),
                        "seed {seed} {strategy:?}"
                    );
                    // A search stops once it has met every kind of failure, so the counts
                    // compare where there is none.
                    if every.verdict() == Verdict::NoViolation {
                        assert!(
                            reduced.stats.states_stored <= every.stats.states_stored,
                            "seed {seed} {strategy:?} {threads}"
                        );
                    }
                    reduced_somewhere += u64::from(reduced.stats.ample_expansions > 0);
                }
            }
        }
        // About a quarter of the 2,700 searches (684 here) keep some state to its ample set.
        assert!(reduced_somewhere > 500, "{reduced_somewhere}");
    }
}
