//! The result of a check: verdict, counterexamples, statistics.

use super::model::Model;
use super::stats::Statistics;
use super::trace::{Failure, Trace, Unchecked};

/// Why a search stopped before covering the whole state space.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Incompleteness {
    /// States at the depth limit were not expanded.
    DepthLimit {
        /// The limit.
        depth: u32,
    },
    /// The time limit ran out.
    Timeout {
        /// The limit, in seconds.
        seconds: f64,
    },
    /// The memory budget ([`super::memory`]) refused what the search needed to go on.
    MemoryBudget {
        /// The budget, in bytes.
        budget: u64,
        /// A lower bound on the bytes the search would have needed to go on.
        needed: u64,
        /// What held the budget when it ran out (`visited set 40 MiB, search stacks 23 MiB`).
        held: String,
    },
    /// The caller cancelled the check.
    Cancelled,
    /// The model left out successors of some state ([`Model::left_out`](super::model::Model::left_out)).
    LeftOut {
        /// What it left out, in the model's words.
        what: String,
    },
}

impl std::fmt::Display for Incompleteness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::DepthLimit { depth } => write!(f, "depth limit {depth} reached"),
            Self::Timeout { seconds } => write!(f, "time limit of {seconds} s reached"),
            Self::MemoryBudget {
                budget,
                needed,
                held,
            } => {
                let budget = match *budget {
                    small if small < 1 << 20 => format!("{} KiB", small >> 10),
                    large => format!("{} MiB", large >> 20),
                };
                write!(f, "memory budget of {budget} reached")?;
                if !held.is_empty() {
                    write!(f, " ({held})")?;
                }
                write!(
                    f,
                    "; at least {} MiB are needed to go on (--memory)",
                    needed.div_ceil(1 << 20)
                )
            }
            Self::Cancelled => write!(f, "cancelled"),
            Self::LeftOut { what } => write!(f, "{what}"),
        }
    }
}

/// Whether a counterexample is as short as any that reaches its failure.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "length", content = "why")]
pub enum TraceLength {
    /// No path to the failure is shorter: a breadth-first search found it.
    Shortest,
    /// As the search found it (`--trace first`); a shorter one may exist.
    AsFound,
    /// As the search found it: a bound stopped the search for a shorter one, for the reason
    /// given, so a shorter one may exist.
    MaybeLonger(String),
}

/// A counterexample: a replayed path to a failing state.
#[derive(Clone, Debug)]
pub struct Violation<M: Model> {
    /// What fails.
    pub failure: Failure,
    /// How to get there.
    pub trace: Trace<M>,
    /// Whether a shorter trace could reach the same failure.
    pub length: TraceLength,
    /// Where the replay stopped checking the steps' actions against the actions enabled where
    /// they are taken, since the check's time limit or memory budget was reached
    /// ([`Replayed`](super::trace::Replayed)): the trace is printed as found from there on.
    /// `None` when every step was checked.
    pub unchecked: Option<Unchecked>,
    /// The number of steps of the trace after which every run fails the same way (0: from
    /// the initial state on), when that could be decided ([`crate::engine::no_return`]).
    pub unavoidable_from: Option<usize>,
}

/// What shortening the counterexamples cost ([`crate::engine::shortest`]).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Shortening {
    /// States the bounded breadth-first search stored.
    pub states: u64,
    /// Its wall-clock time, in seconds.
    pub elapsed_s: f64,
}

/// A witness for a `sometimes` property.
#[derive(Clone, Debug)]
pub struct Example<M: Model> {
    /// The property's name.
    pub property: String,
    /// A replayed path to a state where it holds.
    pub trace: Trace<M>,
}

/// The overall answer of a check, which decides the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole state space was explored and every property holds (exit 0).
    NoViolation,
    /// A property fails (exit 1).
    Violation,
    /// No violation was found, but a bound cut the search short: not a proof (exit 3).
    Incomplete,
}

impl Verdict {
    /// The process exit code for this verdict.
    pub fn exit_code(self) -> i32 {
        match self {
            Self::NoViolation => 0,
            Self::Violation => 1,
            Self::Incomplete => 3,
        }
    }
}

/// Everything a check found out.
#[derive(Clone, Debug)]
pub struct Outcome<M: Model> {
    /// Counterexamples, each replayed and re-checked.
    pub violations: Vec<Violation<M>>,
    /// Witnesses of `sometimes` properties.
    pub examples: Vec<Example<M>>,
    /// `sometimes` properties for which no witness was found.
    pub unreached: Vec<String>,
    /// Set when the search did not cover the whole state space.
    pub incomplete: Option<Incompleteness>,
    /// Figures of the search.
    pub stats: Statistics,
    /// What the search for shorter counterexamples cost, when one ran.
    pub shortening: Option<Shortening>,
}

impl<M: Model> Outcome<M> {
    /// The overall answer. An unreached `sometimes` property is a failure only once the
    /// search was complete.
    pub fn verdict(&self) -> Verdict {
        if !self.violations.is_empty() {
            Verdict::Violation
        } else if self.incomplete.is_some() {
            Verdict::Incomplete
        } else if !self.unreached.is_empty() {
            Verdict::Violation
        } else {
            Verdict::NoViolation
        }
    }

    /// The violated properties' names (and `deadlock (invalid end state)`), in the order found.
    pub fn violated(&self) -> Vec<String> {
        self.violations
            .iter()
            .map(|violation| violation.failure.to_string())
            .collect()
    }

    /// A one-line summary of the verdict, qualified by any bound that was hit.
    pub fn summary(&self) -> String {
        match (self.verdict(), &self.incomplete) {
            (Verdict::Violation, _) if !self.violations.is_empty() => {
                format!("violation: {}", self.violated().join(", "))
            }
            (Verdict::Violation, _) => {
                format!("never reached: {}", self.unreached.join(", "))
            }
            (_, Some(Incompleteness::DepthLimit { depth })) => {
                format!("no violation up to depth {depth} (incomplete: deeper states not explored)")
            }
            (_, Some(Incompleteness::LeftOut { what })) => {
                format!("no violation found, but not every successor was explored: {what}")
            }
            (_, Some(reason)) => format!("no violation found before the search stopped: {reason}"),
            (_, None) => "no violation".to_string(),
        }
    }
}
