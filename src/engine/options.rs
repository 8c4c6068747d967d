//! How a check is run: strategy, threads, bounds.

use super::memory::MemoryBudget;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The order in which the state space is explored.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Depth-first on every worker, idle workers take work from busy ones.
    Dfs,
    /// Level-synchronous breadth-first: the counterexample is a shortest one.
    Bfs,
    /// Depth-first, each worker visiting successors in its own seeded random order.
    Swarm,
}

/// Which counterexample a check reports.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum TraceMode {
    /// A shortest one: after a strategy other than `bfs` (or `bfs` over a graph that
    /// partial-order reduction cut) finds a violation, a breadth-first search of the whole
    /// graph bounded by its depth looks for a shortest path to the same failure
    /// ([`crate::engine::shortest`]), and the step after which every run fails is marked
    /// ([`crate::engine::no_return`]).
    Shortest,
    /// The one the strategy found first, as it found it, nothing added.
    First,
}

/// Which visited set a check uses.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum VisitedKind {
    /// 64-bit fingerprints in the lock-free table (the default).
    Fingerprint,
    /// Full state encodings: no chance of omission.
    Exact,
    /// 64-bit fingerprints in a DashMap (benchmark peer only).
    Dashmap,
}

/// A flag that asks a running check to stop; cheap to clone and share.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that has not been cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every check holding this token to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelToken::cancel`] has been called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Everything that configures one check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Worker count; at least 1.
    pub threads: usize,
    /// Exploration order.
    pub strategy: Strategy,
    /// Visited-set implementation.
    pub visited: VisitedKind,
    /// States at this depth are not expanded (bounded model checking).
    pub depth_limit: Option<u32>,
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// The memory budget the check charges (`--memory`); clones of these options share it,
    /// as the checks of a sweep do.
    pub memory: MemoryBudget,
    /// Seed of the swarm strategy's successor orders.
    pub seed: u64,
    /// Go on after a violation and report every violating state found.
    pub all_violations: bool,
    /// Stops the check early when cancelled (the result is then incomplete).
    pub cancel: Option<CancelToken>,
    /// A guess of the states the check will store: the visited set starts that big (within
    /// the memory budget) instead of growing from one page. 0 when unknown.
    pub expected_states: u64,
    /// Whether counterexamples are shortened after the search ([`TraceMode`]).
    pub trace: TraceMode,
    /// Whether states are expanded by the model's ample sets where it offers them
    /// (partial-order reduction, [`crate::engine::model::Model::ample_successors`]); `--no-por`
    /// turns it off.
    pub partial_order: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            threads: num_cpus::get(),
            strategy: Strategy::Dfs,
            visited: VisitedKind::Fingerprint,
            depth_limit: None,
            timeout: None,
            memory: MemoryBudget::default(),
            seed: 0,
            all_violations: false,
            cancel: None,
            expected_states: 0,
            trace: TraceMode::Shortest,
            partial_order: true,
        }
    }
}

impl CheckOptions {
    /// The defaults with `threads` workers.
    pub fn with_threads(threads: usize) -> Self {
        Self {
            threads,
            ..Self::default()
        }
    }
}

/// The smallest memory budget a check can keep to: the smallest table a search starts with
/// (the lasso search's colour table of 1,024 slots of 16 bytes; a fingerprint table's first
/// array is 4 KiB). Below it a check would use more than its budget from the start.
pub const MIN_MEMORY_BUDGET: u64 = 16 << 10;

/// Parses a memory budget ([`parse_memory`]) that a check can keep to: at least
/// [`MIN_MEMORY_BUDGET`].
pub fn parse_memory_budget(text: &str) -> Result<u64, String> {
    let bytes = parse_memory(text)?;
    if bytes < MIN_MEMORY_BUDGET {
        return Err(format!(
            "'{text}' is below the {} KiB the smallest search needs, so no check could keep to \
             it; give 16K or more",
            MIN_MEMORY_BUDGET >> 10
        ));
    }
    Ok(bytes)
}

/// Parses a byte size with an optional binary unit: `1048576`, `64K`, `512M`, `4G`, `1T`
/// (`KiB`, `MB`, … are accepted and also mean powers of 1024).
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a size; write e.g. 512M or 4G"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("'{text}': unknown unit '{unit}'; use K, M, G or T")),
    };
    let bytes = value * (1u64 << shift) as f64;
    if bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(format!("'{text}': the size must be at least one byte"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_memory;

    #[test]
    fn parses_sizes_with_units() {
        assert_eq!(parse_memory("1024"), Ok(1024));
        assert_eq!(parse_memory("64K"), Ok(64 << 10));
        assert_eq!(parse_memory("512MiB"), Ok(512 << 20));
        assert_eq!(parse_memory("1.5G"), Ok(3 << 29));
        assert!(parse_memory("12X").is_err());
        assert!(parse_memory("").is_err());
        assert!(parse_memory("0").is_err());
    }

    #[test]
    fn budgets_below_the_smallest_search_are_refused() {
        use super::parse_memory_budget;
        assert_eq!(parse_memory_budget("16K"), Ok(16 << 10));
        let error = parse_memory_budget("1").unwrap_err();
        assert!(
            error.contains("below the 16 KiB") && error.contains("16K or more"),
            "{error}"
        );
        assert!(parse_memory_budget("16383").is_err());
    }
}
