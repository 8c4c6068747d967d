//! The model-agnostic parallel model checker.
//!
//! A [`Model`] describes a transition system; [`check`] explores it with the strategy, thread
//! count and bounds of [`CheckOptions`] and returns an [`Outcome`]: the [`Verdict`], replayed
//! counterexamples and [`Statistics`]. Nothing here knows about Kubernetes.
//!
//! - [`visited`]: the lock-free fingerprint table and the exact set.
//! - `search`: depth-first (with work donation and exact termination), swarm and
//!   level-synchronous breadth-first workers.
//! - [`trace`]: paths and their replay.
//! - [`cndfs`]: the parallel on-the-fly lasso search (a cycle that takes a marked transition),
//!   and [`lasso`], its sequential whole-graph reference.
//! - [`shortest`]: shortest counterexamples and lassos, by bounded breadth-first searches.
//! - [`no_return`]: the step of a counterexample after which every run fails.
//! - [`interrupt`]: the search's bounds as a model sees them inside a long step.
//! - [`memory`]: the process's memory budget, which every check charges.
//! - [`synthetic`]: models with known state counts, for tests and benchmarks.

mod check;
pub mod cndfs;
pub mod error;
pub mod interrupt;
pub mod lasso;
pub mod memory;
pub mod model;
pub mod no_return;
pub mod options;
pub mod outcome;
pub mod rng;
mod scc;
mod search;
pub mod shortest;
pub mod stats;
pub mod synthetic;
pub mod trace;
pub mod visited;

pub use check::check;
pub use error::{panic_message, CheckError};
pub use lasso::{find_lasso, Lasso, TooManyStates};
pub use memory::{default_memory_budget, process_overhead, MemoryBudget};
pub use model::{Expectation, Model, Property, StepBuffers, WorkerBounds};
pub use options::{
    parse_memory, parse_memory_budget, CancelToken, CheckOptions, Strategy, TraceMode, VisitedKind,
};
pub use outcome::{Example, Incompleteness, Outcome, Shortening, TraceLength, Verdict, Violation};
pub use search::dfs::{computes_children_again, LAZY_STATE_BYTES};
pub use stats::{Statistics, WorkerStats};
pub use trace::{replay, Failure, Path, ReplayBound, ReplayError, Step, Trace, Unchecked};

#[cfg(test)]
mod test_graph;
