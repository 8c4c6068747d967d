//! The `kivi` command line: clap definitions and dispatch to the subcommands.
//!
//! Exit codes: 0 no violation, 1 violation found, 2 usage or input error, 3 incomplete (a
//! memory, time or depth bound was hit), 4 internal error (see [`CommandError`]).

mod bench;
mod check;
mod deschedule;
mod diff;
mod dump;
mod engine_args;
mod error;
mod interrupt;
mod job;
mod liveness_args;
mod merge;
mod model_args;
mod one_file;
mod plot;
mod schedule;
mod simulate;

pub use engine_args::EngineArgs;
pub use error::{CommandError, EXIT_INPUT_ERROR, EXIT_INTERNAL_ERROR};
pub use model_args::ModelArgs;

use clap::{Parser, Subcommand};

/// kivi: verify Kubernetes cluster configurations by exploring every interleaving of
/// controllers and events.
#[derive(Debug, Parser)]
#[command(name = "kivi", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Verify a built-in case or a cluster configuration.
    Check(check::CheckArgs),
    /// Check two configurations the same way and report the violations the change adds,
    /// fixes and keeps; exit 1 only if it adds one.
    Diff(diff::DiffArgs),
    /// Print the Kubernetes manifest that runs a sweep as an Indexed Job of shards.
    Job(job::JobArgs),
    /// Merge the journals of a sweep's shards into the report a single run prints.
    Merge(merge::MergeArgs),
    /// Print the uniform JSON kivi builds from an input (Kivi's -jf).
    Dump(dump::DumpArgs),
    /// One random run of a single topology, printed as a trace (Kivi's -si).
    Simulate(simulate::SimulateArgs),
    /// Where kube-scheduler v1.33 would put each pending pod of a `kubectl get
    /// nodes,pods,replicasets -A -o json` List, and why: feasible nodes, each rejected node's
    /// first failing filter, each plugin's score, the top-scored nodes or the FitError.
    Schedule(schedule::ScheduleArgs),
    /// One cycle of kubernetes-sigs/descheduler v0.33 on a List holding the cluster and a
    /// DeschedulerPolicy, like a real (not dry-run) cycle: the pods each plugin evicts, in order,
    /// and each eviction refused, with the reason (limits, PodDisruptionBudgets, nodeFit).
    Deschedule(deschedule::DescheduleArgs),
    /// Benchmarks: run a sweep definition (bench-configs/NAME.json) into result files, or
    /// explore a synthetic model (`bench engine`), or draw a chart (`bench plot`).
    Bench(bench::BenchArgs),
}

/// Parses the command line, runs the command and returns the process exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() {
                EXIT_INPUT_ERROR
            } else {
                0
            };
            let _ = error.print();
            return code;
        }
    };
    let result = match cli.command {
        Command::Check(args) => args.run(),
        Command::Diff(args) => args.run(),
        Command::Dump(args) => args.run(),
        Command::Job(args) => args.run(),
        Command::Merge(args) => args.run(),
        Command::Simulate(args) => args.run(),
        Command::Schedule(args) => args.run(),
        Command::Deschedule(args) => args.run(),
        Command::Bench(args) => args.run(),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("{error}");
            error.exit_code()
        }
    }
}
