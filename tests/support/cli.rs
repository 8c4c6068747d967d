//! Running the `kivi` binary from a test, in the repository root, with or without standard
//! input, and reading what it wrote. A module of `tests/support/` in the integration binary;
//! the binaries of their own include it by path (`#[path = "support/cli.rs"] mod cli;`) and
//! use the part they need.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// `kivi ARGS` with an empty standard input.
pub fn kivi(args: &[&str]) -> Output {
    kivi_with_stdin(args, None)
}

/// `kivi ARGS` reading `stdin` (nothing when `None`) on standard input.
pub fn kivi_with_stdin(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kivi"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kivi starts");
    let mut input = child.stdin.take().expect("a pipe");
    // kivi may exit before reading (a usage error): a closed pipe is its answer, not ours.
    match input.write_all(stdin.unwrap_or("").as_bytes()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            panic!("cannot write kivi's input: {error}")
        }
        _ => {}
    }
    drop(input);
    child.wait_with_output().expect("kivi runs")
}

/// `kivi ARGS` with an empty standard input: its exit code, standard output and standard error.
pub fn kivi_texts(args: &[&str]) -> (Option<i32>, String, String) {
    let output = kivi(args);
    (output.status.code(), stdout(&output), stderr(&output))
}

/// What kivi wrote on standard output, as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What kivi wrote on standard error, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// kivi's JSON report on standard output; a test failure showing both streams otherwise.
pub fn json_of(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}
