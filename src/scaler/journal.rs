//! The sweep journal (`--journal FILE`): one JSON line per decided topology, appended as each
//! finishes, so an interrupted sweep can resume where it stopped.
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
use std::io::{BufRead, BufReader, Write};
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
        let mut decided = HashMap::new();
        {
            let reader = BufReader::new(&file);
            for (number, line) in reader.lines().enumerate() {
                let line =
                    line.map_err(|e| format!("{}: cannot read the journal: {e}", path.display()))?;
                if line.trim().is_empty() {
                    continue;
                }
                let entry: JournalEntry = serde_json::from_str(&line).map_err(|e| {
                    format!(
                        "{}:{}: not a journal line ({e}); remove the line or use another --journal file",
                        path.display(),
                        number + 1
                    )
                })?;
                if entry.input == input {
                    decided.insert(
                        Topology::new(entry.nodes.clone(), entry.replicas.clone()),
                        entry,
                    );
                }
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
            input: input.to_string(),
            decided,
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
        let line = serde_json::to_string(&entry).expect("journal entries serialise");
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .map_err(|e| format!("{}: cannot write the journal: {e}", self.path.display()))?;
        self.decided.insert(topology.clone(), entry);
        Ok(())
    }
}
