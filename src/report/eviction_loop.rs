//! The report of an eviction-loop search (`--loop`): the path to the loop and one round of
//! it, in Kivi's trace style, or why there is none.

use super::counterexample::{step_lines, Verbosity};
use crate::engine::outcome::TraceLength;
use crate::model::liveness::drain::refusals;
use crate::model::liveness::stable_reconciliation::unconverged;
use crate::model::liveness::{searched_cluster, FoundLoop, LoopKind, LoopSearch, LoopVerdict};
use crate::model::ClusterModel;
use crate::report::single::{setup_json, setup_text};
use serde_json::{json, Value};
use std::fmt::Write;

/// The one-line answer of a search for `kind` that found a lasso.
pub fn found_headline(kind: LoopKind) -> &'static str {
    match kind {
        LoopKind::Eviction => "Eviction loop found: pods are evicted and re-created forever.",
        LoopKind::UnstableReconciliation => {
            "Eventually stable reconciliation is violated: after the last event and command, \
             the cluster does not stay converged."
        }
        LoopKind::DrainNeverCompletes => {
            "drain_completes is violated: a drain never completes; kubectl drain retries the \
             refused evictions forever."
        }
    }
}

/// The one-line answer of a search for `kind` that found none.
pub fn none_headline(kind: LoopKind) -> &'static str {
    match kind {
        LoopKind::Eviction => "No eviction loop: every run settles or loops without evicting.",
        LoopKind::UnstableReconciliation => {
            "Eventually stable reconciliation holds: after the last event and command, every \
             run converges (each deployment's desired replicas running on ready nodes) and \
             stays converged."
        }
        LoopKind::DrainNeverCompletes => {
            "drain_completes holds: every drain completes (no run leaves a drain blocked \
             whenever the cluster is quiet)."
        }
    }
}

/// The process exit code of a loop search: 1 a loop, 0 none, 3 incomplete.
pub fn exit_code(search: &LoopSearch) -> i32 {
    match search.verdict {
        LoopVerdict::Found(_) => 1,
        LoopVerdict::None => 0,
        LoopVerdict::Incomplete(_) => 3,
    }
}

/// The result of a search for `kind` in `model` as text: the path to the loop (runs of
/// repeated lines folded) and one round at `verbosity`, or why there is none, then the setup
/// and the search's counts.
pub fn to_text(
    kind: LoopKind,
    model: &ClusterModel,
    search: &LoopSearch,
    verbosity: Verbosity,
) -> String {
    let mut text = String::new();
    match &search.verdict {
        LoopVerdict::Incomplete(reason) => {
            let what = match kind {
                LoopKind::Eviction => "no eviction loop found",
                LoopKind::UnstableReconciliation => "no run that fails to stay converged found",
                LoopKind::DrainNeverCompletes => "no drain that never completes found",
            };
            let _ = writeln!(
                text,
                "Incomplete: {what} before the search stopped: {reason}"
            );
        }
        LoopVerdict::None => {
            let _ = writeln!(text, "{}", none_headline(kind));
        }
        LoopVerdict::Found(found) => text.push_str(&found_text(found, verbosity)),
    }
    let _ = writeln!(text, "    Setup: {}", setup_text(&searched_cluster(model)));
    let stats = &search.stats;
    let _ = writeln!(
        text,
        "    States: {} stored (with the marked bit), {} transitions, {} thread(s), {} KiB table \
         ({} round(s))",
        stats.states,
        stats.transitions,
        stats.threads,
        stats.table_bytes >> 10,
        stats.rounds
    );
    let _ = writeln!(
        text,
        "    Elapsed time: {:.3} seconds",
        search.elapsed.as_secs_f64()
    );
    text
}

/// The result of a search for `kind` as JSON, with the size of `model`, the cluster searched.
pub fn to_json(kind: LoopKind, model: &ClusterModel, search: &LoopSearch) -> Value {
    let stats = &search.stats;
    let mut report = match &search.verdict {
        LoopVerdict::Incomplete(reason) => {
            json!({"mode": "loop", "verdict": "incomplete", "reason": reason})
        }
        LoopVerdict::None => json!({"mode": "loop", "verdict": "no_violation"}),
        LoopVerdict::Found(found) => found_json(found),
    };
    report["property"] = kind.rule().into();
    report["setup"] = setup_json(&searched_cluster(model));
    report["stats"] = json!({
        "states_stored": stats.states,
        "transitions": stats.transitions,
        "threads": stats.threads,
        "table_bytes": stats.table_bytes,
        "rounds": stats.rounds,
        "elapsed_s": search.elapsed.as_secs_f64(),
    });
    report
}

/// A lasso as Kivi-style trace lines, numbered on from the prefix into the cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopLines {
    /// Lines of the path to the loop.
    pub prefix: Vec<String>,
    /// Lines of one round of the loop, which then repeats.
    pub cycle: Vec<String>,
}

/// The lines of the lasso `found` at `verbosity`, as a counterexample's at that level
/// ([`step_lines`]): at [`Verbosity::Values`] each step is followed by the cluster state.
pub fn loop_lines(found: &FoundLoop, verbosity: Verbosity) -> LoopLines {
    let lasso = &found.lasso;
    let mut number = 0;
    let mut before = &lasso.init;
    let mut lines = Vec::new();
    let mut prefix_len = 0;
    for (index, step) in lasso.prefix.iter().chain(&lasso.cycle).enumerate() {
        if index == lasso.prefix.len() {
            prefix_len = lines.len();
        }
        let taken = (before, &step.action, &step.state);
        lines.extend(step_lines(&found.model, taken, verbosity, &mut number));
        before = &step.state;
    }
    if lasso.cycle.is_empty() {
        prefix_len = lines.len();
    }
    let cycle = lines.split_off(prefix_len);
    LoopLines {
        prefix: lines,
        cycle,
    }
}

/// A loop found, as text at `verbosity`: the path to it (runs of repeated lines folded) and
/// one round; for a run that does not stay converged, what is not converged.
pub fn found_text(found: &FoundLoop, verbosity: Verbosity) -> String {
    let lines = loop_lines(found, verbosity);
    let mut text = format!("{}\n", found_headline(found.kind));
    let _ = writeln!(text, "Path to the loop:");
    for line in fold_repeats(&lines.prefix) {
        let _ = writeln!(text, "{line}");
    }
    if lines.cycle.is_empty() {
        let _ = writeln!(
            text,
            "The run stops here: no controller has anything left to do."
        );
    } else {
        let _ = writeln!(text, "Loop (repeats forever):");
        for line in &lines.cycle {
            let _ = writeln!(text, "{line}");
        }
    }
    for reason in not_converged(found) {
        let _ = writeln!(text, "    not converged: {reason}");
    }
    for refusal in drain_refusals(found) {
        let _ = writeln!(text, "    drain blocked: {refusal}");
    }
    if let TraceLength::MaybeLonger(why) = &found.length {
        let _ = writeln!(text, "(This loop may not be the shortest: {why}.)");
    }
    text
}

/// For a run that does not stay converged, why the first state of its loop that is not
/// converged is not (nothing for an eviction loop).
fn not_converged(found: &FoundLoop) -> Vec<String> {
    if found.kind != LoopKind::UnstableReconciliation {
        return Vec::new();
    }
    let entry = found.lasso.entry();
    std::iter::once(entry)
        .chain(found.lasso.cycle.iter().map(|step| &step.state))
        .map(unconverged)
        .find(|reasons| !reasons.is_empty())
        .unwrap_or_default()
}

/// For a drain that never completes, why each pod left on its node stays, in the first
/// state of the loop where the drain is blocked (nothing for the other kinds).
fn drain_refusals(found: &FoundLoop) -> Vec<String> {
    if found.kind != LoopKind::DrainNeverCompletes {
        return Vec::new();
    }
    let spec = found.model.spec();
    std::iter::once(found.lasso.entry())
        .chain(found.lasso.cycle.iter().map(|step| &step.state))
        .map(|state| refusals(spec, state))
        .find(|reasons| !reasons.is_empty())
        .unwrap_or_default()
}

/// A loop found, as JSON: the path to it and one round, as trace lines (and, for a run that
/// does not stay converged, what is not converged).
pub fn found_json(found: &FoundLoop) -> Value {
    let lines = loop_lines(found, Verbosity::Reasons);
    let mut report = json!({
        "mode": "loop",
        "property": found.kind.rule(),
        "verdict": "violation",
        "prefix": lines.prefix,
        "cycle": lines.cycle,
        "shortest": found.length == TraceLength::Shortest,
    });
    if found.kind == LoopKind::UnstableReconciliation {
        report["notConverged"] = json!(not_converged(found));
    }
    if found.kind == LoopKind::DrainNeverCompletes {
        report["drainBlocked"] = json!(drain_refusals(found));
    }
    report
}

/// Longest block of lines [`fold_repeats`] looks for.
const MAX_FOLDED_BLOCK: usize = 64;

/// A trace line without its leading `[step]` number.
fn message(line: &str) -> &str {
    line.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .map_or(line, |(_, message)| message)
}

/// A stretch of a sequence after folding ([`fold_runs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Folded {
    /// The item at this index, shown as it is.
    One(usize),
    /// The `len` items from `at` on, repeated back to back `copies` times in all (three or
    /// more): shown once, with a note of how often they repeat.
    Repeated {
        /// The index of the block's first item.
        at: usize,
        /// The items in the block.
        len: usize,
        /// How many times the block occurs in a row.
        copies: usize,
    },
}

/// `items` as a sequence of single items and blocks repeated back to back three times or more
/// (blocks of up to [`MAX_FOLDED_BLOCK`] items; at each place the shortest block that
/// repeats). The text report folds trace lines with it, the HTML page the timeline's columns.
pub fn fold_runs<T: PartialEq>(items: &[T]) -> Vec<Folded> {
    let same = |a: usize, b: usize, len: usize| (0..len).all(|k| items[a + k] == items[b + k]);
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let run = (1..=MAX_FOLDED_BLOCK.min((items.len() - i) / 2))
            .map(|len| {
                let mut copies = 1;
                while i + (copies + 1) * len <= items.len() && same(i, i + copies * len, len) {
                    copies += 1;
                }
                (len, copies)
            })
            .find(|&(_, copies)| copies >= 3);
        match run {
            Some((len, copies)) => {
                out.push(Folded::Repeated { at: i, len, copies });
                i += len * copies;
            }
            None => {
                out.push(Folded::One(i));
                i += 1;
            }
        }
    }
    out
}

/// `lines` with every run of a block repeated back to back (step numbers aside) shown once and
/// followed by a note of how often it repeats. A loop's prefix often repeats the loop itself
/// many times while the descheduler's clock runs up to its period; folded, it reads as the
/// rounds a person would describe.
pub fn fold_repeats(lines: &[String]) -> Vec<String> {
    let messages: Vec<&str> = lines.iter().map(|line| message(line)).collect();
    let mut out = Vec::new();
    for stretch in fold_runs(&messages) {
        match stretch {
            Folded::One(at) => out.push(lines[at].clone()),
            Folded::Repeated { at, len, copies } => {
                out.extend_from_slice(&lines[at..at + len]);
                out.push(format!(
                    "... the {len} line(s) above repeat {} more times ...",
                    copies - 1
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(messages: &[&str]) -> Vec<String> {
        messages
            .iter()
            .enumerate()
            .map(|(i, m)| format!("[{i}][X] {m}"))
            .collect()
    }

    #[test]
    fn folds_blocks_repeated_three_times_or_more() {
        let lines = numbered(&["start", "a", "b", "a", "b", "a", "b", "end"]);
        assert_eq!(
            fold_repeats(&lines),
            [
                "[0][X] start",
                "[1][X] a",
                "[2][X] b",
                "... the 2 line(s) above repeat 2 more times ...",
                "[7][X] end"
            ]
        );
        let twice = numbered(&["a", "b", "a", "b"]);
        assert_eq!(fold_repeats(&twice), twice);
    }
}
