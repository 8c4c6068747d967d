//! The sweep journal (`--journal FILE`): one JSON line per decided topology, appended as each
//! finishes, so an interrupted sweep can resume where it stopped.
//!
//! Lines are appended whole and flushed one at a time, so a run killed mid-write can leave at
//! most its last line cut off; opening the journal drops such a line (and re-checks its
//! topology) with a warning. A damaged line anywhere else is an error.
//!
//! Each line carries a fingerprint of the input and the options that change verdicts; lines of
//! another input are ignored on resume. A run holds an exclusive lock on the file while it
//! reads and appends, so a second run given the same journal stops at once ("in use") instead
//! of interleaving its lines with the first one's. Topologies recorded without a violation are not checked
//! again; violating ones are re-checked to rebuild their counterexample (a single check is
//! cheap; the sweep is what a journal saves).

use super::jobs::JobVerdict;
use super::topology::Topology;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// One journal line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// Fingerprint of the input document and the verdict-changing options.
    pub input: String,
    /// Node count per node type.
    pub nodes: Vec<u64>,
    /// Replica count per deployment type.
    pub replicas: Vec<u64>,
    /// How the check ended.
    pub verdict: JobVerdict,
    /// States stored.
    pub states: u64,
    /// Transitions computed.
    pub transitions: u64,
    /// Check time in seconds.
    pub elapsed_s: f64,
}

/// An open journal: what earlier runs decided, and the file new lines go to.
pub struct Journal {
    path: PathBuf,
    file: File,
    input: String,
    decided: HashMap<Topology, JournalEntry>,
    repair: Option<String>,
}

impl Journal {
    /// Opens (or creates) the journal at `path` for the input fingerprinted as `input`, reading
    /// the entries earlier runs wrote for the same input.
    pub fn open(path: &Path, input: &str) -> Result<Self, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .map_err(|e| format!("{}: cannot write the journal: {e}", path.display()))?;
        file.try_lock().map_err(|error| match error {
            std::fs::TryLockError::WouldBlock => format!(
                "{}: journal in use by another kivi run; wait for it to finish, or give this \
                 run its own --journal file",
                path.display()
            ),
            std::fs::TryLockError::Error(e) => {
                format!("{}: cannot lock the journal: {e}", path.display())
            }
        })?;
        let mut text = String::new();
        (&file)
            .read_to_string(&mut text)
            .map_err(|e| format!("{}: cannot read the journal: {e}", path.display()))?;
        let mut decided = HashMap::new();
        let mut repair = None;
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for (number, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let entry: JournalEntry = match serde_json::from_str(line) {
                Ok(entry) => entry,
                // A kill during a write leaves the last line without its newline: the
                // topology it was recording is simply checked again.
                Err(_) if number + 1 == lines.len() && !line.ends_with('\n') => {
                    let kept = text.len() - line.len();
                    file.set_len(kept as u64).map_err(|e| {
                        format!("{}: cannot drop a cut-off last line: {e}", path.display())
                    })?;
                    repair = Some(format!(
                        "{}:{}: the last line was cut off (the run that wrote it was stopped \
                         mid-write); dropped, and its topology is checked again",
                        path.display(),
                        number + 1
                    ));
                    break;
                }
                Err(e) => {
                    return Err(format!(
                        "{}:{}: not a journal line ({e}); remove the line or use another \
                         --journal file",
                        path.display(),
                        number + 1
                    ))
                }
            };
            if !line.ends_with('\n') {
                // Whole but without its newline: end it, so the next line starts afresh.
                (&file)
                    .write_all(b"\n")
                    .map_err(|e| format!("{}: cannot write the journal: {e}", path.display()))?;
            }
            if entry.input == input {
                decided.insert(
                    Topology::new(entry.nodes.clone(), entry.replicas.clone()),
                    entry,
                );
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
            input: input.to_string(),
            decided,
            repair,
        })
    }

    /// The topologies earlier runs found without a violation, with what they recorded.
    pub fn passed(&self) -> HashMap<Topology, JournalEntry> {
        self.decided
            .iter()
            .filter(|(_, entry)| entry.verdict == JobVerdict::NoViolation)
            .map(|(topology, entry)| (topology.clone(), entry.clone()))
            .collect()
    }

    /// What opening the journal had to repair, if anything (a last line cut off by a kill).
    pub fn repair(&self) -> Option<&str> {
        self.repair.as_deref()
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many topologies this input has decided in the journal, by earlier runs and this one.
    pub fn len(&self) -> usize {
        self.decided.len()
    }

    /// Whether the journal decides nothing for this input.
    pub fn is_empty(&self) -> bool {
        self.decided.is_empty()
    }

    /// Appends the verdict on `topology` (flushed at once, so an interruption loses nothing).
    pub fn record(
        &mut self,
        topology: &Topology,
        verdict: JobVerdict,
        states: u64,
        transitions: u64,
        elapsed_s: f64,
    ) -> Result<(), String> {
        let entry = JournalEntry {
            input: self.input.clone(),
            nodes: topology.nodes().to_vec(),
            replicas: topology.replicas().to_vec(),
            verdict,
            states,
            transitions,
            elapsed_s,
        };
        let mut line = serde_json::to_string(&entry).expect("journal entries serialise");
        line.push('\n');
        // One write per line: a kill can cut a line short, never interleave two.
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| format!("{}: cannot write the journal: {e}", self.path.display()))?;
        self.decided.insert(topology.clone(), entry);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("kivi-journal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path
    }

    fn write_two(path: &Path) -> String {
        let mut journal = Journal::open(path, "input").expect("a new journal");
        for replicas in [1, 2] {
            journal
                .record(
                    &Topology::new(vec![1], vec![replicas]),
                    JobVerdict::NoViolation,
                    10,
                    9,
                    0.1,
                )
                .expect("written");
        }
        drop(journal);
        std::fs::read_to_string(path).expect("the journal")
    }

    #[test]
    fn a_cut_off_last_line_is_dropped_and_its_topology_checked_again() {
        let path = temp("torn");
        let text = write_two(&path);
        std::fs::write(&path, &text[..text.len() - 7]).expect("torn");
        let journal = Journal::open(&path, "input").expect("repaired");
        assert_eq!(journal.len(), 1);
        assert!(journal
            .repair()
            .expect("a repair")
            .contains(":2: the last line was cut off"));
        drop(journal);
        let first_line = text.lines().next().expect("a line");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{first_line}\n")
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_whole_last_line_without_its_newline_is_ended() {
        let path = temp("unended");
        let text = write_two(&path);
        std::fs::write(&path, text.trim_end()).expect("unended");
        let mut journal = Journal::open(&path, "input").expect("read");
        assert_eq!((journal.len(), journal.repair()), (2, None));
        journal
            .record(
                &Topology::new(vec![1], vec![3]),
                JobVerdict::Violation,
                1,
                1,
                0.1,
            )
            .expect("written");
        drop(journal);
        assert_eq!(Journal::open(&path, "input").expect("read").len(), 3);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn damage_before_the_last_line_is_an_error() {
        let path = temp("damaged");
        let text = write_two(&path);
        std::fs::write(&path, format!("{{oops\n{text}")).expect("damaged");
        let error = Journal::open(&path, "input").err().expect("refused");
        assert!(error.contains(":1: not a journal line"), "{error}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_journal_in_use_is_refused_until_it_is_closed() {
        let path = temp("locked");
        let first = Journal::open(&path, "input").expect("opened");
        let error = Journal::open(&path, "input").err().expect("locked");
        assert!(error.contains("journal in use"), "{error}");
        drop(first);
        assert!(Journal::open(&path, "input").is_ok());
        std::fs::remove_file(&path).unwrap();
    }
}
