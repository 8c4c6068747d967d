//! `kivi dump`: prints the uniform JSON that kivi builds from an input (Kivi's `-jf`), so
//! that what was modelled can be read, kept, edited and checked again with `kivi check`.

use super::error::CommandError;
use crate::cluster::Semantics;
use crate::input::{open, InputOptions, Opened, Source};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `kivi dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// A directory of manifests with a cluster description, a YAML file, a live-cluster dump,
    /// or a uniform-JSON file (printed as it is); `-` reads one YAML stream or uniform-JSON
    /// document from standard input.
    input: PathBuf,
    /// With input from standard input (`-`): the cluster description, as a user_input/ folder,
    /// its cluster_configs.json, or a YAML file with a `kivi:` document.
    #[arg(long, value_name = "PATH")]
    cluster_config: Option<PathBuf>,
    /// Build the single topology instead of the scaling template.
    #[arg(short = 'o', long)]
    original: bool,
    /// Read INPUT as a live-cluster dump.
    #[arg(long)]
    from_cluster_dump: bool,
    /// Keys of a uniform-JSON input that Kivi's format does not have are errors (exit 2).
    #[arg(long)]
    strict: bool,
}

impl DumpArgs {
    /// Prints the document on stdout, and the warnings and units on stderr; a
    /// DeschedulerPolicy that `check` and `simulate` refuse under `--semantics kubernetes` is
    /// printed as carried, with that refusal as a warning.
    pub fn run(self) -> Result<i32, CommandError> {
        let input = open(&Source::argument(
            &self.input,
            self.cluster_config.as_deref(),
            InputOptions {
                original: self.original,
                from_cluster_dump: self.from_cluster_dump,
                verify: false,
                strict: self.strict,
            },
        )?)?;
        eprint!("{}", input.diagnostics.to_text());
        print_units(&input);
        if let Some(refusal) = input.refused_under(Semantics::Kubernetes) {
            eprintln!("warning: {refusal}");
        }
        let text = serde_json::to_string_pretty(&input.document)
            .map_err(|error| format!("cannot print the document: {error}"))?;
        match writeln!(std::io::stdout(), "{text}") {
            Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(format!("cannot print the document: {error}").into())
            }
            _ => Ok(0),
        }
    }
}

/// Prints on stderr the units the front-ends chose for `input`, when they translated it.
pub fn print_units(input: &Opened) {
    if let Some(units) = &input.units {
        eprintln!(
            "units: one CPU unit is {}, one memory unit is {}",
            units.cpu.unit, units.memory.unit
        );
    }
}
