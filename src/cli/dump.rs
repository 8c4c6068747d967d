//! `kivi dump`: prints the uniform JSON that kivi builds from an input (Kivi's `-jf`), so
//! that what was modelled can be read, kept, edited and checked again with `kivi check`.

use super::error::CommandError;
use crate::input::{needs_translation, translate, InputOptions};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `kivi dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// A directory of manifests with a cluster description, a YAML file, a live-cluster dump,
    /// or a uniform-JSON file (printed as it is).
    input: PathBuf,
    /// Build the single topology instead of the scaling template.
    #[arg(short = 'o', long)]
    original: bool,
    /// Read INPUT as a live-cluster dump.
    #[arg(long)]
    from_cluster_dump: bool,
}

impl DumpArgs {
    /// Prints the document on stdout, and the warnings and units on stderr.
    pub fn run(self) -> Result<i32, CommandError> {
        let document = load(&self.input, self.original, self.from_cluster_dump, false)?;
        let text = serde_json::to_string_pretty(&document)
            .map_err(|error| format!("cannot print the document: {error}"))?;
        match writeln!(std::io::stdout(), "{text}") {
            Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(format!("cannot print the document: {error}").into())
            }
            _ => Ok(0),
        }
    }
}

/// The uniform JSON for `input`: translated (warnings and units on stderr) when it is not
/// uniform JSON already.
pub fn load(
    input: &Path,
    original: bool,
    from_cluster_dump: bool,
    verify: bool,
) -> Result<serde_json::Value, String> {
    if needs_translation(input) || from_cluster_dump {
        let options = InputOptions {
            original,
            from_cluster_dump,
            verify,
        };
        let translation = translate(input, options).map_err(|error| error.to_string())?;
        eprint!("{}", translation.diagnostics.to_text());
        if let Some(units) = translation.units {
            eprintln!(
                "units: one CPU unit is {}, one memory unit is {}",
                units.cpu.unit, units.memory.unit
            );
        }
        return Ok(translation.document);
    }
    let name = input.display();
    let text =
        std::fs::read_to_string(input).map_err(|error| format!("{name}: cannot read: {error}"))?;
    serde_json::from_str(&text).map_err(|error| {
        format!(
            "{name}:{}:{}: not valid JSON: {error}",
            error.line(),
            error.column()
        )
    })
}
