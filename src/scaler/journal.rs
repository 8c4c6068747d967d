//! The sweep journal (`--journal FILE`): one JSON line per decided topology, appended as each
//! finishes, so an interrupted sweep can resume where it stopped, and shards of one sweep run
//! apart can be merged (`kivi merge`).
//!
//! Each run first writes a header line, `{"header": {…}}` ([`JournalHeader`]), unless the
//! journal's last header is already its own: the input and its hash, the template with its
//! sizes, the options that change answers and the shard, so that `kivi merge` can rebuild the
//! sweep from its journals alone.
//!
//! Lines are appended whole and flushed one at a time, so a run killed mid-write can leave at
//! most its last line cut off; opening the journal drops such a line (and re-checks its
//! topology) with a warning. A damaged line anywhere else is an error.
//!
//! Each entry carries a fingerprint of the input and the options that change verdicts (not the
//! shard: a topology's verdict is the same whichever run decides it); lines of another input
//! are ignored on resume. A run holds an exclusive lock on the file while it
//! reads and appends, so a second run given the same journal stops at once ("in use") instead
//! of interleaving its lines with the first one's. Topologies recorded without a violation are not checked
//! again; violating ones are re-checked to rebuild their counterexample (a single check is
//! cheap; the sweep is what a journal saves).

use super::jobs::JobVerdict;
use super::shard::Shard;
use super::topology::Topology;
use crate::engine::{Strategy, VisitedKind};
use crate::input::Names;
use crate::model::liveness::LoopKind;
use crate::model::ModelOptions;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The version of the header format this kivi writes and reads.
pub const JOURNAL_VERSION: u32 = 1;

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
    /// Threads the check ran on (1 in journals written before kivi recorded it).
    #[serde(default = "one_thread")]
    pub threads: usize,
    /// Why the check was cut short, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

fn one_thread() -> usize {
    1
}

impl JournalEntry {
    /// The topology the entry decides.
    pub fn topology(&self) -> Topology {
        Topology::new(self.nodes.clone(), self.replicas.clone())
    }
}

/// What a run says about itself at the head of its lines: enough for `kivi merge` to rebuild
/// the sweep, check that journals belong together, and print the report a single run prints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalHeader {
    /// The header format ([`JOURNAL_VERSION`]).
    pub version: u32,
    /// The sweep's fingerprint (the entries' `input`): the template with its sizes and the
    /// options that change verdicts.
    pub sweep: String,
    /// The input as the user named it (a path, or `case c3`).
    pub input: String,
    /// The input as a URI reference, for SARIF locations.
    pub uri: String,
    /// A hash of the input document alone.
    pub input_hash: String,
    /// The shard this run decided; none for a whole sweep.
    pub shard: Option<Shard>,
    /// Worker threads of the run.
    pub threads: usize,
    /// The options of the run.
    pub options: RunOptions,
    /// The template document (uniform JSON, with `userDefined`).
    pub template: serde_json::Value,
    /// The size bounds `(min, max)` of each node type, then each deployment type, after
    /// `--scale`.
    pub sizes: Vec<(u64, u64)>,
    /// What the user calls the template's deployments, when a front-end named them.
    pub names: Option<Names>,
}

/// The options of a sweep run, as its journal header records them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOptions {
    /// Confident size: nodes per node type.
    pub confident_nodes: u64,
    /// Confident size: pods per node.
    pub confident_ratio: u64,
    /// Fast-find level, 0 to 3.
    pub fast_find: u8,
    /// Whether every topology was checked and every violation kept.
    pub all_violations: bool,
    /// The lasso each topology was searched for instead of intent violations, if any.
    pub liveness: Option<LoopKind>,
    /// Tie-break semantics and symmetry reduction.
    pub model: ModelOptions,
    /// Depth bound.
    pub depth: Option<u32>,
    /// Visited set.
    pub visited: VisitedKind,
    /// Exploration order.
    pub strategy: Strategy,
    /// Seed of the swarm strategy.
    pub seed: u64,
    /// Memory bound of each check, in bytes.
    pub memory: u64,
    /// Time bound of each check, in seconds.
    pub timeout_s: Option<f64>,
}

/// Everything a journal file holds, read without taking it over (`kivi merge`).
#[derive(Clone, Debug, Default)]
pub struct JournalContents {
    /// The header lines, in order (the last is the latest run's).
    pub headers: Vec<JournalHeader>,
    /// The entries, in order.
    pub entries: Vec<JournalEntry>,
    /// A last line cut off by a kill, if any (left as it is; its topology is undecided).
    pub cut_off: Option<String>,
}

/// One parsed line.
enum Line {
    Header(Box<JournalHeader>),
    Entry(JournalEntry),
}

/// A last line cut off mid-write: where it starts, and what to tell the user.
struct CutOff {
    at: usize,
    message: String,
}

/// The lines of `text`, read from `path`; a last line cut off mid-write is reported as a
/// [`CutOff`] instead of failing.
fn parse(path: &Path, text: &str) -> Result<(Vec<Line>, Option<CutOff>), String> {
    let mut lines = Vec::new();
    let pieces: Vec<&str> = text.split_inclusive('\n').collect();
    let mut offset = 0;
    for (number, piece) in pieces.iter().enumerate() {
        let at = offset;
        offset += piece.len();
        if piece.trim().is_empty() {
            continue;
        }
        match parse_line(piece) {
            Ok(line) => lines.push(line),
            // A kill during a write leaves the last line without its newline.
            Err(_) if number + 1 == pieces.len() && !piece.ends_with('\n') => {
                let message = format!(
                    "{}:{}: the last line was cut off (the run that wrote it was stopped \
                     mid-write)",
                    path.display(),
                    number + 1
                );
                return Ok((lines, Some(CutOff { at, message })));
            }
            Err(e) => {
                return Err(format!(
                    "{}:{}: not a journal line ({e})",
                    path.display(),
                    number + 1
                ))
            }
        }
    }
    Ok((lines, None))
}

fn parse_line(text: &str) -> Result<Line, serde_json::Error> {
    #[derive(Deserialize)]
    struct HeaderLine {
        header: Box<JournalHeader>,
    }
    if text.trim_start().starts_with("{\"header\"") {
        serde_json::from_str::<HeaderLine>(text).map(|line| Line::Header(line.header))
    } else {
        serde_json::from_str(text).map(Line::Entry)
    }
}

/// Reads the journal at `path` as it is, for `kivi merge`.
pub fn read(path: &Path) -> Result<JournalContents, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read the journal: {e}", path.display()))?;
    let (lines, cut) = parse(path, &text)
        .map_err(|error| format!("{error}; give only the journals of kivi check --journal"))?;
    let mut contents = JournalContents {
        cut_off: cut.map(|cut| cut.message),
        ..JournalContents::default()
    };
    for line in lines {
        match line {
            Line::Header(header) => contents.headers.push(*header),
            Line::Entry(entry) => contents.entries.push(entry),
        }
    }
    Ok(contents)
}

/// How one topology's check ended, as the journal records it.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The verdict.
    pub verdict: JobVerdict,
    /// States stored.
    pub states: u64,
    /// Transitions computed.
    pub transitions: u64,
    /// Check time in seconds.
    pub elapsed_s: f64,
    /// Threads the check ran on.
    pub threads: usize,
    /// Why the check was cut short, when it was.
    pub incomplete: Option<String>,
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
    /// Opens (or creates) the journal at `path` for the run `header` describes, reading the
    /// entries earlier runs wrote for the same sweep, and writes the header unless the
    /// journal's last header is already this one.
    pub fn open(path: &Path, header: &JournalHeader) -> Result<Self, String> {
        let mut file = OpenOptions::new()
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
        let (lines, cut) = parse(path, &text)
            .map_err(|error| format!("{error}; remove the line or use another --journal file"))?;
        let repair = match cut {
            Some(cut) => {
                file.set_len(cut.at as u64).map_err(|e| {
                    format!("{}: cannot drop a cut-off last line: {e}", path.display())
                })?;
                Some(format!(
                    "{}; dropped, and its topology is checked again",
                    cut.message
                ))
            }
            // A whole last line without its newline: end it, so the next line starts afresh.
            None if !text.is_empty() && !text.ends_with('\n') => {
                file.write_all(b"\n")
                    .map_err(|e| format!("{}: cannot write the journal: {e}", path.display()))?;
                None
            }
            None => None,
        };
        let mut decided = HashMap::new();
        let mut last_header = None;
        for line in lines {
            match line {
                Line::Header(earlier) => last_header = Some(earlier),
                Line::Entry(entry) if entry.input == header.sweep => {
                    decided.insert(entry.topology(), entry);
                }
                Line::Entry(_) => {}
            }
        }
        let mut journal = Self {
            path: path.to_path_buf(),
            file,
            input: header.sweep.clone(),
            decided,
            repair,
        };
        if last_header.as_deref() != Some(header) {
            let line = serde_json::json!({ "header": header });
            journal.append(&line.to_string())?;
        }
        Ok(journal)
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
    pub fn record(&mut self, topology: &Topology, decision: Decision) -> Result<(), String> {
        let entry = JournalEntry {
            input: self.input.clone(),
            nodes: topology.nodes().to_vec(),
            replicas: topology.replicas().to_vec(),
            verdict: decision.verdict,
            states: decision.states,
            transitions: decision.transitions,
            elapsed_s: decision.elapsed_s,
            threads: decision.threads,
            incomplete: decision.incomplete,
        };
        self.append(&serde_json::to_string(&entry).expect("journal entries serialise"))?;
        self.decided.insert(topology.clone(), entry);
        Ok(())
    }

    /// Appends `line` and its newline in one write, flushed: a kill can cut a line short,
    /// never interleave two.
    fn append(&mut self, line: &str) -> Result<(), String> {
        let line = format!("{line}\n");
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| format!("{}: cannot write the journal: {e}", self.path.display()))
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

    fn header(shard: Option<Shard>) -> JournalHeader {
        JournalHeader {
            version: JOURNAL_VERSION,
            sweep: "input".into(),
            input: "template.json".into(),
            uri: "template.json".into(),
            input_hash: "0".into(),
            shard,
            threads: 1,
            options: RunOptions {
                confident_nodes: 6,
                confident_ratio: 6,
                fast_find: 0,
                all_violations: false,
                liveness: None,
                model: ModelOptions::default(),
                depth: None,
                visited: VisitedKind::Fingerprint,
                strategy: Strategy::Dfs,
                seed: 0,
                memory: 1 << 30,
                timeout_s: None,
            },
            template: serde_json::json!({}),
            sizes: vec![(0, 3)],
            names: None,
        }
    }

    fn decision(verdict: JobVerdict) -> Decision {
        Decision {
            verdict,
            states: 10,
            transitions: 9,
            elapsed_s: 0.1,
            threads: 1,
            incomplete: None,
        }
    }

    /// A journal with a header and two entries; returns its text.
    fn write_two(path: &Path) -> String {
        let mut journal = Journal::open(path, &header(None)).expect("a new journal");
        for replicas in [1, 2] {
            journal
                .record(
                    &Topology::new(vec![1], vec![replicas]),
                    decision(JobVerdict::NoViolation),
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
        assert!(read(&path)
            .expect("read as it is")
            .cut_off
            .expect("cut off")
            .contains(":3: the last line was cut off"));
        let journal = Journal::open(&path, &header(None)).expect("repaired");
        assert_eq!(journal.len(), 1);
        assert!(journal
            .repair()
            .expect("a repair")
            .contains(":3: the last line was cut off"));
        drop(journal);
        let kept: Vec<&str> = text.lines().take(2).collect();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{}\n", kept.join("\n"))
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_whole_last_line_without_its_newline_is_ended() {
        let path = temp("unended");
        let text = write_two(&path);
        std::fs::write(&path, text.trim_end()).expect("unended");
        let mut journal = Journal::open(&path, &header(None)).expect("read");
        assert_eq!((journal.len(), journal.repair()), (2, None));
        journal
            .record(
                &Topology::new(vec![1], vec![3]),
                decision(JobVerdict::Violation),
            )
            .expect("written");
        drop(journal);
        assert_eq!(Journal::open(&path, &header(None)).expect("read").len(), 3);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn each_run_heads_its_lines_unless_the_last_header_is_its_own() {
        let path = temp("headers");
        write_two(&path);
        drop(Journal::open(&path, &header(None)).expect("the same run again"));
        let shard = Shard { index: 1, count: 4 };
        drop(Journal::open(&path, &header(Some(shard))).expect("a shard"));
        let contents = read(&path).expect("read");
        assert_eq!(contents.entries.len(), 2);
        assert_eq!(contents.headers, vec![header(None), header(Some(shard))]);
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains(r#""shard":"1/4""#));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn damage_before_the_last_line_is_an_error() {
        let path = temp("damaged");
        let text = write_two(&path);
        std::fs::write(&path, format!("{{oops\n{text}")).expect("damaged");
        let error = Journal::open(&path, &header(None)).err().expect("refused");
        assert!(error.contains(":1: not a journal line"), "{error}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_journal_in_use_is_refused_until_it_is_closed() {
        let path = temp("locked");
        let first = Journal::open(&path, &header(None)).expect("opened");
        let error = Journal::open(&path, &header(None)).err().expect("locked");
        assert!(error.contains("journal in use"), "{error}");
        drop(first);
        assert!(Journal::open(&path, &header(None)).is_ok());
        std::fs::remove_file(&path).unwrap();
    }
}
