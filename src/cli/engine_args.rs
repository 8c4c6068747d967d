//! Flags that configure the engine, shared by every command that runs a check.

use crate::engine::{
    parse_memory_budget, CheckOptions, MemoryBudget, Strategy, TraceMode, VisitedKind,
};
use clap::Args;
use std::time::Duration;

/// How to explore: threads, strategy, bounds, visited set.
#[derive(Clone, Debug, Args)]
pub struct EngineArgs {
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub threads: Option<u32>,
    /// Exploration order: dfs, bfs (shortest counterexample) or swarm (randomised dfs).
    #[arg(long, value_enum, default_value = "dfs")]
    pub strategy: Strategy,
    /// Seed of the swarm strategy's successor orders.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Do not expand states deeper than this (bounded model checking).
    #[arg(long, value_name = "D")]
    pub depth: Option<u32>,
    /// Stop after this many seconds (more than 0); the result is then incomplete. A check
    /// that finishes first gives its full answer. A sweep has one limit for all its
    /// topologies (each check gets what is left of it), not one per topology.
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
    /// Cap on the memory the process holds for its checks, all together (visited sets,
    /// stacks, levels, caches), e.g. 512M, 4G (default: a quarter of RAM or of the container's
    /// limit; at least 16K, the smallest search's table).
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_budget)]
    pub memory: Option<u64>,
    /// Store full states instead of 64-bit fingerprints: no chance of missing a state.
    #[arg(long)]
    pub exact: bool,
    /// Report every violated property, not only the first.
    #[arg(short = 'a', long = "all-violations")]
    pub all_violations: bool,
    /// About how many states the check will store: the visited set starts that big instead
    /// of growing from one page (a sweep guesses from the topologies it has decided).
    #[arg(long, value_name = "N")]
    pub expect_states: Option<u64>,
    /// Which counterexample to print: `shortest` (a breadth-first search bounded by the
    /// violation's depth looks for a shortest trace to the same failure, a lasso's stem and
    /// cycle are shortened, and the step after which every run fails is marked `<- from here
    /// on, every run fails` where that can be decided cheaply) or `first` (as the search found
    /// it, nothing added).
    #[arg(long, value_enum, default_value = "shortest")]
    pub trace: TraceMode,
}

impl EngineArgs {
    /// The engine options these flags describe.
    pub fn check_options(&self) -> CheckOptions {
        let defaults = CheckOptions::default();
        CheckOptions {
            threads: self.threads.map_or(defaults.threads, |t| t as usize),
            strategy: self.strategy,
            visited: if self.exact {
                VisitedKind::Exact
            } else {
                VisitedKind::Fingerprint
            },
            depth_limit: self.depth,
            timeout: self.timeout,
            memory: self.memory.map_or(defaults.memory, MemoryBudget::new),
            seed: self.seed,
            all_violations: self.all_violations,
            cancel: None,
            expected_states: self.expect_states.unwrap_or(0),
            trace: self.trace,
            partial_order: defaults.partial_order,
        }
    }
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(format!(
            "'{text}': give a positive number of seconds (a check given no time cannot \
             answer), or leave --timeout out for no limit"
        ));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| {
        format!(
            "'{text}': longer than kivi can count ({} s); leave --timeout out for no limit",
            u64::MAX
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn timeouts_beyond_what_a_duration_holds_are_refused() {
        assert_eq!(
            super::parse_seconds("1.5"),
            Ok(std::time::Duration::from_millis(1500))
        );
        assert!(super::parse_seconds("1e20")
            .unwrap_err()
            .contains("no limit"));
        assert!(super::parse_seconds("-1").is_err());
        assert!(super::parse_seconds("0").unwrap_err().contains("positive"));
        assert!(super::parse_seconds("inf").is_err());
    }
}
