//! Nothing a user gave is lost: a sweep stopped by Ctrl-C or killed outright, whose journal's
//! last line a kill cut off, resumes from its journal to exactly the answer, rows and state
//! counts of a sweep that was never interrupted.

use crate::support::cli::kivi;
use crate::support::scratch;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// C3's non-violation variant at scale 6: 1,644 topologies, a few seconds on one thread.
const SWEEP: [&str; 10] = [
    "check",
    "--case",
    "c3",
    "--non-violation",
    "--scale",
    "6",
    "--threads",
    "1",
    "--format",
    "json",
];

/// Each decided topology with its verdict and states, in Kivi's order.
fn rows(report: &Value) -> Vec<(String, String, u64)> {
    report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| {
            (
                row["kivi"].as_str().unwrap().to_string(),
                row["verdict"].as_str().unwrap().to_string(),
                row["states"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Starts the sweep with `journal`, waits until it has recorded `lines` topologies, then sends
/// it `signal`; returns its exit code.
fn stop_midway(journal: &Path, lines: usize, signal: libc::c_int) -> Option<i32> {
    let child = Command::new(env!("CARGO_BIN_EXE_kivi"))
        .args(SWEEP)
        .args(["--journal", journal.to_str().unwrap()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kivi starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(journal).map_or(0, |t| t.lines().count()) < lines {
        assert!(Instant::now() < deadline, "the sweep never got going");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: signals the child this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
    let mut child = child;
    child.wait().expect("kivi ends").code()
}

/// Cuts the journal's last line short, as a kill during a write would.
fn tear_last_line(journal: &Path) {
    let text = std::fs::read_to_string(journal).expect("a journal");
    std::fs::write(journal, &text[..text.len() - 10]).expect("torn");
}

#[test]
fn stopped_sweeps_resume_to_the_uninterrupted_answer() {
    let clean = kivi(&SWEEP);
    assert_eq!(clean.status.code(), Some(0));
    let clean: Value = serde_json::from_slice(&clean.stdout).expect("JSON");
    assert_eq!(clean["rows"].as_array().unwrap().len(), 1644);
    for (signal, expected) in [(libc::SIGINT, Some(3)), (libc::SIGKILL, None)] {
        let dir = scratch(&format!("resume-{signal}"));
        let journal = dir.join("sweep.jsonl");
        // The journal's header line, then at least 400 decisions.
        assert_eq!(
            stop_midway(&journal, 401, signal),
            expected,
            "signal {signal}"
        );
        tear_last_line(&journal);
        let resumed = kivi(&[&SWEEP[..], &["--journal", journal.to_str().unwrap()]].concat());
        let stderr = String::from_utf8_lossy(&resumed.stderr);
        assert_eq!(resumed.status.code(), Some(0), "{stderr}");
        assert!(
            stderr.contains("the last line was cut off"),
            "signal {signal}: {stderr}"
        );
        let resumed: Value = serde_json::from_slice(&resumed.stdout).expect("JSON");
        assert_eq!(rows(&resumed), rows(&clean), "signal {signal}");
        assert_eq!(resumed["verdict"], clean["verdict"]);
        let from_journal = resumed["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| row["fromJournal"] == true)
            .count();
        assert!(from_journal >= 399, "signal {signal}: {from_journal}");
        std::fs::remove_file(&journal).expect("the journal exists");
    }
}
