//! `kivi bench`: run a sweep definition (see [`crate::bench`]), explore a synthetic model
//! (`kivi bench engine`) or draw a chart (`kivi bench plot`).

use super::engine_args::EngineArgs;
use super::error::CommandError;
use super::plot::PlotArgs;
use crate::bench::{run_sweep, SweepOptions};
use crate::engine::synthetic::{
    Counters, OrderedCounters, PanickingCounters, TwoPhaseCommit, MAX_COUNTERS,
};
use crate::engine::{check, CheckOptions, Model, Outcome, VisitedKind};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `kivi bench`: a sweep definition to run, or one of the benchmark subcommands.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: Option<BenchCommand>,
    #[command(flatten)]
    sweep: SweepArgs,
}

/// Arguments of `kivi bench CONFIG`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// A sweep definition (bench-configs/NAME.json): runs it and writes NAME.csv, NAME.md
    /// and its charts into --out-dir.
    #[arg(value_name = "CONFIG", required = true)]
    config: Option<PathBuf>,
    /// Where the result files go.
    #[arg(long, value_name = "DIR", default_value = "results")]
    out_dir: PathBuf,
    /// Runs per measurement, overriding the definition's `repetitions`.
    #[arg(long, value_name = "N")]
    repetitions: Option<usize>,
    /// Print the check commands the sweep would run, and run none.
    #[arg(long)]
    dry_run: bool,
}

/// The benchmark subcommands.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Explore a synthetic model with known state count.
    Engine(EngineBench),
    /// Draw two columns of a CSV file as an SVG line chart, one line per series.
    Plot(PlotArgs),
}

impl BenchArgs {
    /// Runs the sweep or the subcommand; returns the exit code.
    pub fn run(self) -> Result<i32, CommandError> {
        match self.command {
            Some(BenchCommand::Engine(bench)) => bench.run(),
            Some(BenchCommand::Plot(plot)) => plot.run(),
            None => {
                let config = self
                    .sweep
                    .config
                    .expect("clap requires CONFIG without a subcommand");
                let kivi = std::env::current_exe()
                    .map_err(|error| format!("cannot find the kivi executable: {error}"))?;
                Ok(run_sweep(&SweepOptions {
                    config,
                    out_dir: self.sweep.out_dir,
                    repetitions: self.sweep.repetitions,
                    dry_run: self.sweep.dry_run,
                    kivi,
                })?)
            }
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
    /// Fault injection: counters whose successor function panics when every counter reaches
    /// K/2; the check must stop every worker and exit with the internal-error code (4).
    PanickingCounters,
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
    fn run(self) -> Result<i32, CommandError> {
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
            )
            .into());
        }
        if self.engine.expect_states.is_none() {
            // The benchmark knows its size; `--expect-states 0` makes it grow from a page.
            options.expected_states = match self.model {
                SyntheticModel::Counters | SyntheticModel::PanickingCounters => {
                    Counters::new(self.vars, self.max).state_count()
                }
                SyntheticModel::OrderedCounters => {
                    OrderedCounters::new(self.vars, self.max).state_count()
                }
                SyntheticModel::TwoPhaseCommit => 0,
            };
        }
        match self.model {
            SyntheticModel::Counters => self.report(&Counters::new(self.vars, self.max), &options),
            SyntheticModel::OrderedCounters => {
                self.report(&OrderedCounters::new(self.vars, self.max), &options)
            }
            SyntheticModel::TwoPhaseCommit => {
                self.report(&TwoPhaseCommit::new(self.vars), &options)
            }
            SyntheticModel::PanickingCounters => {
                self.report(&PanickingCounters::new(self.vars, self.max), &options)
            }
        }
    }

    fn report<M: Model>(&self, model: &M, options: &CheckOptions) -> Result<i32, CommandError> {
        // A pool of its own with exactly the workers asked for: rayon's global pool has one
        // thread per core, which would cap `--threads 16` on a 2-core machine at 2.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build()
            .map_err(|error| format!("cannot start {} threads: {error}", options.threads))?;
        let outcome: Outcome<M> = pool.install(|| check(model, options)).map_err(|error| {
            CommandError::Internal(format!("synthetic model {:?}: {error}", self.model))
        })?;
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
