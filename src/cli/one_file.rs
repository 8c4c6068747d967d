//! What `kivi schedule` and `kivi deschedule` share: both read one cluster file (or standard
//! input) and print one decision, as text or as JSON, on standard output.

use super::error::CommandError;
use crate::input::source::STDIN;
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// The input's name (as messages give it) and text: standard input for `-`, the file
/// otherwise. A directory is an input error that says `directory_fix` (which file to give).
pub fn read(input: &Path, directory_fix: &str) -> Result<(String, String), CommandError> {
    if input.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|error| format!("{STDIN}: cannot read: {error}"))?;
        return Ok((STDIN.to_string(), text));
    }
    let name = input.display().to_string();
    if input.is_dir() {
        return Err(format!("{name}: a directory; {directory_fix}").into());
    }
    let text =
        std::fs::read_to_string(input).map_err(|error| format!("{name}: cannot read: {error}"))?;
    Ok((name, text))
}

/// `value` as indented JSON with a final newline; a value serde cannot write is kivi's fault,
/// named after the input `name`.
pub fn pretty_json<T: Serialize + ?Sized>(name: &str, value: &T) -> Result<String, CommandError> {
    let value = serde_json::to_value(value)
        .map_err(|error| CommandError::Internal(format!("{name}: {error}")))?;
    Ok(format!("{value:#}\n"))
}

/// Prints `output` on standard output. A reader that closed the pipe early (`| head`) is not
/// an error; any other failure is, naming `what` was printed.
pub fn print(output: &str, what: &str) -> Result<(), CommandError> {
    match std::io::stdout().write_all(output.as_bytes()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(
            CommandError::Internal(format!("cannot print the {what}: {error}")),
        ),
        _ => Ok(()),
    }
}
