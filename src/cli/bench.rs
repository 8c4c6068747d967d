//! `kivi bench engine`: explore a synthetic model and report throughput.

use super::engine_args::EngineArgs;
use super::plot::PlotArgs;
use crate::engine::synthetic::{Counters, OrderedCounters, TwoPhaseCommit, MAX_COUNTERS};
use crate::engine::{check, CheckOptions, Model, Outcome, VisitedKind};
use clap::{Args, Subcommand, ValueEnum};

/// The benchmark subcommands.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Explore a synthetic model with known state count.
    Engine(EngineBench),
    /// Draw two columns of a CSV file as an SVG line chart, one line per series.
    Plot(PlotArgs),
}

impl BenchCommand {
    /// Runs the benchmark; returns the exit code.
    pub fn run(self) -> Result<i32, String> {
        match self {
            Self::Engine(bench) => bench.run(),
            Self::Plot(plot) => plot.run(),
        }
    }
}

/// The synthetic models.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SyntheticModel {
    /// N independent counters 0..=K: (K+1)^N states.
    Counters,
    /// N counters 0..=K kept non-increasing: C(N+K, N) states.
    OrderedCounters,
    /// Two-phase commit with N resource managers.
    TwoPhaseCommit,
}

/// Output format.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    /// Human-readable lines.
    Text,
    /// One JSON object.
    Json,
}

/// Arguments of `kivi bench engine`.
#[derive(Debug, Args)]
pub struct EngineBench {
    /// Which model to explore.
    #[arg(long, value_enum, default_value = "counters")]
    model: SyntheticModel,
    /// Number of counters (or resource managers for two-phase-commit).
    #[arg(long, default_value_t = 6)]
    vars: usize,
    /// Largest counter value.
    #[arg(long, default_value_t = 9)]
    max: u8,
    /// Use the DashMap fingerprint set instead of the lock-free table (for comparison).
    #[arg(long, conflicts_with = "exact")]
    dashmap: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    #[command(flatten)]
    engine: EngineArgs,
}

impl EngineBench {
    fn run(self) -> Result<i32, String> {
        let mut options = self.engine.check_options();
        if self.dashmap {
            options.visited = VisitedKind::Dashmap;
        }
        let limit = match self.model {
            SyntheticModel::TwoPhaseCommit => 8,
            _ => MAX_COUNTERS,
        };
        if !(1..=limit).contains(&self.vars) {
            return Err(format!(
                "--vars {} is out of range for this model: use 1 to {limit}",
                self.vars
            ));
        }
        match self.model {
            SyntheticModel::Counters => self.report(&Counters::new(self.vars, self.max), &options),
            SyntheticModel::OrderedCounters => {
                self.report(&OrderedCounters::new(self.vars, self.max), &options)
            }
            SyntheticModel::TwoPhaseCommit => {
                self.report(&TwoPhaseCommit::new(self.vars), &options)
            }
        }
    }

    fn report<M: Model>(&self, model: &M, options: &CheckOptions) -> Result<i32, String> {
        let outcome: Outcome<M> = check(model, options).map_err(|error| error.to_string())?;
        let stats = &outcome.stats;
        match self.format {
            Format::Json => {
                let json = serde_json::json!({
                    "model": format!("{:?}", self.model),
                    "vars": self.vars,
                    "max": self.max,
                    "strategy": options.strategy,
                    "visited": options.visited,
                    "threads": options.threads,
                    "states_stored": stats.states_stored,
                    "transitions": stats.transitions,
                    "revisits": stats.revisits,
                    "max_depth": stats.max_depth,
                    "elapsed_s": stats.elapsed_s,
                    "states_per_s": stats.states_per_s,
                    "bytes_per_state": stats.bytes_per_state,
                    "visited_set": stats.visited,
                    "workers": stats.workers,
                    "verdict": outcome.verdict(),
                    "summary": outcome.summary(),
                });
                println!("{json}");
            }
            Format::Text => {
                println!("{}", outcome.summary());
                print!("{}", stats.to_text());
            }
        }
        Ok(match outcome.verdict() {
            crate::engine::Verdict::Incomplete => 3,
            _ => 0,
        })
    }
}
