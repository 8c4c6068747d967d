//! `kivi job`: prints the Kubernetes manifest that runs a sweep as an Indexed Job of shards
//! (`kivi check … --shard I/N`), for `kubectl apply -f -`; `kivi merge` reads the journals the
//! shards leave on the results volume.

use super::check::CheckArgs;
use super::error::CommandError;
use crate::engine::parse_memory;
use crate::input::open;
use crate::scaler::indexed_job::{InputFile, JobRequest, Manifest};
use clap::{Args, CommandFactory, FromArgMatches, Parser};
use std::path::Path;

/// The memory budget a shard gets when the check arguments name none.
const DEFAULT_MEMORY: &str = "1G";

/// Arguments of `kivi job`.
#[derive(Debug, Args)]
pub struct JobArgs {
    /// How many shards: the Job's completions, one pod per shard.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    shards: u32,
    /// The container image with kivi in it (built from the repository's Dockerfile).
    #[arg(long)]
    image: String,
    /// The Job's name; the ConfigMap and the claim it creates are named after it.
    #[arg(long, default_value = "kivi-sweep")]
    name: String,
    /// How many shards run at once (default: all).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    parallelism: Option<u32>,
    /// How many times a failed shard is retried; a retry resumes from its journal.
    #[arg(long, default_value_t = 3)]
    backoff_limit_per_index: u32,
    /// An existing PersistentVolumeClaim for the journals (ReadWriteMany); by default the
    /// manifest creates NAME-results.
    #[arg(long, value_name = "NAME")]
    volume_claim: Option<String>,
    /// The size of the claim the manifest creates.
    #[arg(long, default_value = "1Gi", conflicts_with = "volume_claim")]
    claim_size: String,
    /// The arguments of `kivi check` for the sweep (an input path or --case, and its options;
    /// --threads and --memory size each shard's pod).
    #[arg(last = true, required = true, value_name = "CHECK-ARGS")]
    check: Vec<String>,
}

/// `kivi check`'s arguments, parsed on their own.
#[derive(Debug, Parser)]
#[command(name = "kivi check", no_binary_name = true)]
struct CheckCommand {
    #[command(flatten)]
    args: CheckArgs,
}

impl JobArgs {
    /// Prints the manifest; returns the exit code.
    pub fn run(self) -> Result<i32, CommandError> {
        let command = CheckCommand::command();
        let matches = command.try_get_matches_from(&self.check).map_err(|error| {
            let message = error.render().to_string();
            let message = message.trim_start_matches("error: ").trim_end();
            format!("the check arguments after --: {message}")
        })?;
        let check = CheckCommand::from_arg_matches(&matches)
            .map_err(|error| format!("the check arguments after --: {error}"))?
            .args;
        let refuse = |flag: &str, why: &str| -> Result<(), CommandError> {
            Err(format!("the check arguments after --: {flag} {why}").into())
        };
        if check.shard.is_some() || check.journal.is_some() {
            refuse(
                "--shard and --journal",
                "are set by the Job for each pod; leave them out",
            )?;
        }
        if check.original || check.topology.is_some() {
            refuse(
                "--original and --topology",
                "check one topology, which has nothing to shard; run kivi check directly",
            )?;
        }
        if check.html.is_some() {
            refuse("--html", "is written by kivi merge, not by the shards")?;
        }
        if check.input.as_deref() == Some(Path::new("-")) {
            refuse(
                "-",
                "(standard input) cannot reach the Job's pods; give a file or directory",
            )?;
        }
        // What every shard would refuse is refused here, before a Job is made of it.
        let opened = open(&check.source()?)?;
        let options = check
            .semantics
            .options("check", opened.default_semantics())
            .map_err(|error| format!("the check arguments after --: {error}"))?;
        if let Some(refusal) = opened.refused_under(options.semantics) {
            return Err(refusal.into());
        }
        let mut args = self.check.clone();
        let mut input = Vec::new();
        if let Some(path) = &check.input {
            let (files, inside) = InputFile::read_input(path)?;
            // clap counts arguments from 1 even without a binary name.
            let index = matches
                .index_of("input")
                .and_then(|index| index.checked_sub(1))
                .filter(|&index| Path::new(&args[index]) == path.as_path())
                .ok_or_else(|| {
                    CommandError::Internal(format!(
                        "cannot find the input {} among the check arguments",
                        path.display()
                    ))
                })?;
            args[index] = inside;
            // Reports and journals name the input as the user does, not as the pod reads it.
            args.extend(["--report-as".to_string(), path.display().to_string()]);
            input = files;
        }
        let threads = match check.engine.threads {
            Some(threads) => threads,
            None => {
                args.extend(["--threads".to_string(), "1".to_string()]);
                1
            }
        };
        let memory = match check.engine.memory {
            Some(memory) => memory,
            None => {
                args.extend(["--memory".to_string(), DEFAULT_MEMORY.to_string()]);
                parse_memory(DEFAULT_MEMORY).expect("the default parses")
            }
        };
        let request = JobRequest {
            name: self.name,
            image: self.image,
            shards: self.shards,
            parallelism: self.parallelism.unwrap_or(self.shards),
            backoff_limit_per_index: self.backoff_limit_per_index,
            volume_claim: self.volume_claim,
            claim_size: self.claim_size,
            check_args: args,
            input,
            threads,
            memory,
        };
        print!("{}", Manifest::new(&request)?.to_yaml());
        Ok(0)
    }
}
