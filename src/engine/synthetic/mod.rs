//! Small models with known state counts: the engine's test subjects and benchmark workloads.
//!
//! - [`Counters`]: independent counters, (K+1)^N states.
//! - [`OrderedCounters`]: counters that must stay non-increasing, C(N+K, N) states.
//! - [`TwoPhaseCommit`]: Gray and Lamport's two-phase commit, 288 states with 3 resource
//!   managers and 8,832 with 5 (the figures the Stateright checker publishes).
//! - [`PanickingCounters`]: counters whose successor function panics half-way (fault
//!   injection for the engine's panic handling).
//! - [`IndependentSteps`] and [`SpinOrExit`]: models that offer ample sets, for partial-order
//!   reduction (one with a violation that only the cycle condition keeps in reach).
//! - [`StoppableChain`]: a chain whose states stop listing successors once the search is told
//!   to stop (cut searches and replays).

mod ample_sets;
mod counters;
mod faulty;
mod stoppable_chain;
mod two_phase_commit;

pub use ample_sets::{IndependentSteps, SpinAction, SpinOrExit, SpinState};
pub use counters::{CounterValues, Counters, OrderedCounters, MAX_COUNTERS};
pub use faulty::PanickingCounters;
pub use stoppable_chain::StoppableChain;
pub use two_phase_commit::{TwoPhaseAction, TwoPhaseCommit, TwoPhaseState};
