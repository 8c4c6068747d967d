//! The report of a single-topology check, in Kivi's words or as JSON.

use super::counterexample::{Counterexample, Verbosity};
use crate::cluster::TieBreak;
use crate::engine::{Outcome, ReplayBound, TraceLength, Unchecked, Verdict};
use crate::model::ClusterModel;
use serde_json::{json, Value};
use std::fmt::Write;

/// How big the checked cluster is, and under which semantics it was checked.
pub fn setup_json(model: &ClusterModel) -> Value {
    let spec = model.spec();
    json!({
        "nodes": spec.nodes.len(),
        "pods": spec.pods.len(),
        "deployments": spec.deployments.len(),
        "semantics": spec.semantics,
        "tieBreak": spec.tie_break,
        "symmetry": model.symmetry().describe(),
    })
}

/// The cluster's size and the semantics, and under `--tie-break any` the tie rule and
/// reduction.
pub fn setup_text(model: &ClusterModel) -> String {
    let spec = model.spec();
    let mut text = format!(
        "{} node(s), {} pod slot(s), {} deployment(s); semantics {}",
        spec.nodes.len(),
        spec.pods.len(),
        spec.deployments.len(),
        spec.semantics.name()
    );
    if spec.tie_break == TieBreak::Any {
        let symmetry = model.symmetry().describe();
        let _ = write!(text, "; ties: any top-scored node; symmetry {symmetry}");
    }
    text
}

/// The counterexamples of `outcome`, one block per failure, as Kivi prints them.
pub fn failures_text(
    model: &ClusterModel,
    outcome: &Outcome<ClusterModel>,
    verbosity: Verbosity,
) -> String {
    let mut text = String::new();
    if outcome.violations.is_empty() {
        return text;
    }
    let _ = writeln!(text, "========================");
    let _ = writeln!(text, "{} failure(s) are found!", outcome.violations.len());
    for (number, violation) in outcome.violations.iter().enumerate() {
        let _ = writeln!(text, "-----Failure #{}-----", number + 1);
        let _ = writeln!(text, "Violated intent: {}", violation.failure);
        let _ = writeln!(text, "Counterexample:");
        let counterexample = Counterexample::of(model, violation);
        for line in counterexample.lines(verbosity) {
            let _ = writeln!(text, "{line}");
        }
        for line in counterexample.unschedulable_lines(verbosity) {
            let _ = writeln!(text, "{line}");
        }
        if let TraceLength::MaybeLonger(why) = &violation.length {
            let _ = writeln!(text, "(This trace may not be the shortest: {why}.)");
        }
        if let Some(unchecked) = violation.unchecked {
            let _ = writeln!(text, "{}", unchecked_note(unchecked, violation.trace.len()));
        }
        let _ = writeln!(text);
    }
    text
}

/// What a trace of `steps` steps whose replay stopped checking at `unchecked` says: the
/// violation stands, its trace is printed as the search found it.
pub fn unchecked_note(unchecked: Unchecked, steps: usize) -> String {
    let bound = match unchecked.bound {
        ReplayBound::Time => "The time limit (--timeout) ran out",
        ReplayBound::Memory => "The memory budget (--memory) could not hold the actions of a step",
    };
    format!(
        "({bound} while this trace was replayed: its last {} of {steps} steps were not checked \
         against the actions the model enables where they are taken; the violation was found, \
         and the trace is printed as found.)",
        steps - unchecked.from
    )
}

/// The name of the bound that stopped a replay's checks, as JSON reports say it
/// (`uncheckedBy`).
pub fn replay_bound_name(bound: ReplayBound) -> &'static str {
    match bound {
        ReplayBound::Time => "timeout",
        ReplayBound::Memory => "memory",
    }
}

/// The bound a JSON report's `uncheckedBy` names ([`replay_bound_name`]).
pub fn replay_bound_named(name: &str) -> ReplayBound {
    if name == "memory" {
        ReplayBound::Memory
    } else {
        ReplayBound::Time
    }
}

/// The whole text report of a single-topology check.
pub fn to_text(
    model: &ClusterModel,
    outcome: &Outcome<ClusterModel>,
    verbosity: Verbosity,
) -> String {
    let mut text = format!(
        "Working on the intents: {}\n",
        model.intent_names().join(", ")
    );
    text.push_str(&failures_text(model, outcome, verbosity));
    let stats = &outcome.stats;
    let _ = writeln!(text, "Summary:");
    match outcome.verdict() {
        Verdict::Violation => {
            let violated = outcome.violated();
            let _ = writeln!(text, "    {} failure(s) found!", outcome.violations.len());
            let _ = writeln!(text, "    Violating intent(s): {}", violated.join(", "));
            if let Some(reason) = &outcome.incomplete {
                let unproven: Vec<String> = model
                    .intent_names()
                    .into_iter()
                    .filter(|name| !violated.contains(name))
                    .collect();
                let _ = if unproven.is_empty() {
                    writeln!(text, "    Not every run was explored: {reason}")
                } else {
                    writeln!(
                        text,
                        "    Not every run was explored, so {} may fail too: {reason}",
                        unproven.join(", ")
                    )
                };
            }
        }
        Verdict::NoViolation => {
            let _ = writeln!(text, "    No failure is found!");
        }
        Verdict::Incomplete => {
            let _ = writeln!(text, "    Incomplete: {}", outcome.summary());
        }
    }
    let _ = writeln!(text, "    Setup: {}", setup_text(model));
    let _ = writeln!(
        text,
        "    States: {} stored, {} transitions, max depth {}, {} thread(s)",
        stats.states_stored, stats.transitions, stats.max_depth, stats.threads
    );
    let _ = writeln!(text, "    Elapsed time: {:.3} seconds", stats.elapsed_s);
    text
}

/// The JSON report of a single-topology check.
pub fn to_json(model: &ClusterModel, outcome: &Outcome<ClusterModel>) -> Value {
    let counterexamples: Vec<Value> = outcome
        .violations
        .iter()
        .map(|violation| {
            let mut json = Counterexample::of(model, violation).to_json();
            json["shortest"] = json!(violation.length == TraceLength::Shortest);
            if let TraceLength::MaybeLonger(why) = &violation.length {
                json["maybeLongerBecause"] = json!(why);
            }
            json["replayChecked"] = json!(violation.unchecked.is_none());
            if let Some(unchecked) = violation.unchecked {
                json["uncheckedFromStep"] = json!(unchecked.from);
                json["uncheckedBy"] = json!(replay_bound_name(unchecked.bound));
            }
            json
        })
        .collect();
    json!({
        "mode": "single",
        "verdict": outcome.verdict(),
        "summary": outcome.summary(),
        "intents": model.intent_names(),
        "violatedIntents": outcome.violated(),
        "incomplete": outcome.incomplete,
        "setup": setup_json(model),
        "counterexamples": counterexamples,
        "stats": outcome.stats,
        "shortening": outcome.shortening,
    })
}
