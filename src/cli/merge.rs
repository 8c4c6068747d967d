//! `kivi merge`: the answer of a sweep run as shards (`kivi check --shard I/N --journal FILE`),
//! from the shards' journals, printed as a single run prints it.

use super::check::{print_report, sweep_json, write_html};
use super::error::CommandError;
use crate::report::counterexample::Verbosity;
use crate::report::{html, sweep, CheckFormat};
use crate::scaler::merge::{journal_files, merge};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `kivi merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' journals: files, or directories holding them (every file that is not
    /// hidden).
    #[arg(required = true, value_name = "JOURNAL")]
    journals: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: CheckFormat,
    /// Also write the report as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Counterexample detail, Kivi's levels: 1 reasons only, 2 steps, 3 all steps, 4 values.
    #[arg(short = 'v', long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    verbose: u8,
    /// Worker threads for checking the violating topologies again, for their counterexamples
    /// (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    threads: Option<u32>,
}

impl MergeArgs {
    /// Merges the journals and prints the sweep's report; returns the exit code: the single
    /// run's (a violation found in the shards given stands; without one, missing or partial shards make it 3), 2 when the journals are not one sweep's.
    pub fn run(self) -> Result<i32, CommandError> {
        let mut files = Vec::new();
        for path in &self.journals {
            files.extend(journal_files(path)?);
        }
        let threads = self.threads.map_or_else(num_cpus::get, |t| t as usize);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|error| format!("cannot start {threads} threads: {error}"))?;
        let merged =
            merge(&files, threads, &pool).map_err(|e| CommandError::from_sweep("kivi merge", e))?;
        let header = &merged.header;
        eprintln!(
            "Merged {} journal(s) of {}, split into {} shard(s)",
            files.len(),
            header.input,
            merged.shards
        );
        for warning in &merged.result.warnings {
            eprintln!("warning: {warning}");
        }
        let verbosity = Verbosity::from_level(self.verbose).expect("clap keeps the level in 1..=4");
        print_report(
            self.format,
            (&header.input, &header.uri),
            || sweep::to_text(&merged.result, verbosity),
            || sweep_json(&merged.result, header.names.as_ref()),
        );
        write_html(self.html.as_deref(), || {
            html::sweep_page(&header.input, &merged.result)
        })?;
        Ok(merged.exit_code())
    }
}
