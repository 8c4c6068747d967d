//! Running the `kivi` binary from a test, in the repository root, with or without standard
//! input, and reading what it wrote. A module of `tests/support/` in the integration binary;
//! the binaries of their own include it by path (`#[path = "support/cli.rs"] mod cli;`) and
//! use the part they need.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The longest one kivi run of a test may take: a run past it is killed and fails its test,
/// so that a search which never stops fails CI instead of hanging it.
const RUN_LIMIT: Duration = Duration::from_secs(300);

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
    wait_within_limit(child, args)
}

/// What `child` wrote and how it ended, read while it runs; killed, and the test failed, if it
/// runs past [`RUN_LIMIT`].
fn wait_within_limit(mut child: Child, args: &[&str]) -> Output {
    let stdout = reader(child.stdout.take().expect("a pipe"));
    let stderr = reader(child.stderr.take().expect("a pipe"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("kivi runs") {
            break status;
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "kivi {} ran past {RUN_LIMIT:?} and was killed",
                args.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout is read"),
        stderr: stderr.join().expect("stderr is read"),
    }
}

/// A thread reading `pipe` to its end.
fn reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        pipe.read_to_end(&mut bytes)
            .expect("kivi's output is readable");
        bytes
    })
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

/// `kivi check DIR --original -q --threads 1 ARGS…` (one topology, one thread, so that state
/// counts are exact): the exit code, stdout and stderr.
pub fn check_original(dir: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["check", dir, "--original", "-q", "--threads", "1"];
    all.extend_from_slice(args);
    kivi_texts(&all)
}

/// The number after `States:` in a text report (thousands separators allowed).
pub fn stored_states(report: &str) -> u64 {
    let line = report
        .lines()
        .find(|l| l.contains("States:"))
        .unwrap_or_else(|| panic!("no States line in {report}"));
    let after = line.split("States:").nth(1).unwrap().trim_start();
    after
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}
