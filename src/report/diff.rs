//! `kivi diff OLD NEW`: what a configuration change does to the verdict, intent by intent.
//!
//! Each side is checked the same way (every intent of a single topology, or a sweep that
//! decides every topology and keeps every violation), and reduced to its violated intents,
//! each with the smallest topology (in Kivi's order) that violates it. An intent violated by
//! NEW and not by OLD is a regression; one violated by OLD and not by NEW is fixed when NEW
//! still checks it, and *no longer checked* when NEW dropped the intent (a change that deletes
//! an intent fixes nothing); one violated by both is kept, with both minimal topologies. The exit code says whether the
//! change adds a violation: 1 if it does, 3 if it may (a side is incomplete and NEW adds
//! nothing known), else 0. This is the question Ctest and Acto ask of configuration changes,
//! asked of a cluster's configuration as a whole.

use crate::engine::{Outcome, Verdict};
use crate::model::liveness::{LoopKind, LoopSearch, LoopVerdict};
use crate::model::ClusterModel;
use crate::scaler::sweep::{Finding, SweepResult};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// What one side's check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdicts {
    /// How the side is named (its path, or `<stdin>`).
    pub input: String,
    /// Each violated intent, with the smallest topology violating it in a sweep (`None` for a
    /// single topology).
    pub violated: BTreeMap<String, Option<String>>,
    /// The intents the side checks (its input's intents, or the liveness property searched).
    pub checked: BTreeSet<String>,
    /// Why the check did not decide everything, if it did not.
    pub incomplete: Option<String>,
}

impl Verdicts {
    /// The verdicts of a single-topology check of `model` that reported every violated intent.
    pub fn of_single(input: &str, model: &ClusterModel, outcome: &Outcome<ClusterModel>) -> Self {
        Self {
            input: input.to_string(),
            violated: outcome
                .violated()
                .into_iter()
                .map(|intent| (intent, None))
                .collect(),
            checked: model.intent_names().into_iter().collect(),
            incomplete: (outcome.verdict() == Verdict::Incomplete).then(|| outcome.summary()),
        }
    }

    /// The verdicts of a single topology's search for a lasso of `kind`.
    pub fn of_loop(input: &str, kind: LoopKind, search: &LoopSearch) -> Self {
        let rule = kind.rule().to_string();
        let (violated, incomplete) = match &search.verdict {
            LoopVerdict::Found(_) => (BTreeMap::from([(rule.clone(), None)]), None),
            LoopVerdict::None => (BTreeMap::new(), None),
            LoopVerdict::Incomplete(reason) => (BTreeMap::new(), Some(reason.clone())),
        };
        Self {
            input: input.to_string(),
            violated,
            checked: BTreeSet::from([rule]),
            incomplete,
        }
    }

    /// The verdicts of a sweep that kept every violation (smallest topology first), checking
    /// the intents `checked`.
    pub fn of_sweep(input: &str, result: &SweepResult, checked: BTreeSet<String>) -> Self {
        let mut violated = BTreeMap::new();
        for violation in &result.violations {
            let intents = match &violation.finding {
                Finding::Intents(outcome) => outcome.violated(),
                Finding::Loop(found) => vec![found.kind.rule().to_string()],
            };
            for intent in intents {
                violated
                    .entry(intent)
                    .or_insert_with(|| Some(violation.row.topology.to_string()));
            }
        }
        Self {
            input: input.to_string(),
            violated,
            checked,
            incomplete: result.incomplete.clone(),
        }
    }
}

/// How a change affects one intent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// NEW violates it, OLD does not: a regression.
    Added,
    /// OLD violates it, NEW checks it and does not.
    Fixed,
    /// OLD violates it, NEW does not check it at all.
    NoLongerChecked,
    /// Both violate it.
    Kept,
}

impl Change {
    fn name(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Fixed => "fixed",
            Self::NoLongerChecked => "no_longer_checked",
            Self::Kept => "kept",
        }
    }
}

/// One intent's change, with the minimal violating topology on each side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntentChange {
    /// The intent.
    pub intent: String,
    /// What the change does to it.
    pub change: Change,
    /// OLD's minimal violating topology, when OLD violates it in a sweep.
    pub old: Option<String>,
    /// NEW's minimal violating topology, when NEW violates it in a sweep.
    pub new: Option<String>,
}

/// The intents whose verdict the change touches, regressions first.
pub fn compare(old: &Verdicts, new: &Verdicts) -> Vec<IntentChange> {
    let mut changes: Vec<IntentChange> = Vec::new();
    for (intent, at) in &new.violated {
        let change = match old.violated.get(intent) {
            Some(_) => Change::Kept,
            None => Change::Added,
        };
        changes.push(IntentChange {
            intent: intent.clone(),
            change,
            old: old.violated.get(intent).cloned().flatten(),
            new: at.clone(),
        });
    }
    for (intent, at) in &old.violated {
        if !new.violated.contains_key(intent) {
            changes.push(IntentChange {
                intent: intent.clone(),
                change: if new.checked.contains(intent) {
                    Change::Fixed
                } else {
                    Change::NoLongerChecked
                },
                old: at.clone(),
                new: None,
            });
        }
    }
    changes.sort_by_key(|c| (c.change as u8, c.intent.clone()));
    changes
}

/// The exit code: 1 if NEW adds a violation, 3 if a side is incomplete (NEW may add one),
/// else 0.
pub fn exit_code(old: &Verdicts, new: &Verdicts) -> i32 {
    if compare(old, new).iter().any(|c| c.change == Change::Added) {
        1
    } else if old.incomplete.is_some() || new.incomplete.is_some() {
        3
    } else {
        0
    }
}

/// ` at TOPOLOGY`, or nothing for a single topology.
fn at(topology: &Option<String>) -> String {
    topology
        .as_ref()
        .map_or(String::new(), |t| format!(" at {t}"))
}

/// The comparison as text: one line per touched intent, then a summary.
pub fn to_text(old: &Verdicts, new: &Verdicts) -> String {
    let mut text = format!("Comparing {} (old) with {} (new)\n", old.input, new.input);
    let changes = compare(old, new);
    for c in &changes {
        let _ = match c.change {
            Change::Added => writeln!(
                text,
                "  regression: {} is violated{} (not in old)",
                c.intent,
                at(&c.new)
            ),
            Change::Fixed => writeln!(
                text,
                "  fixed: {} is no longer violated (old: violated{})",
                c.intent,
                at(&c.old)
            ),
            Change::NoLongerChecked => writeln!(
                text,
                "  no longer checked: {} (old: violated{}); new does not list the intent, so \
                 nothing says it is fixed",
                c.intent,
                at(&c.old)
            ),
            Change::Kept => writeln!(
                text,
                "  unchanged: {} is violated in both (old{}, new{})",
                c.intent,
                at(&c.old),
                at(&c.new)
            ),
        };
    }
    for side in [old, new] {
        if let Some(reason) = &side.incomplete {
            let _ = writeln!(text, "  incomplete: {}: {reason}", side.input);
        }
    }
    let count = |change| changes.iter().filter(|c| c.change == change).count();
    let _ = writeln!(
        text,
        "Summary: {} regression(s), {} fixed, {} no longer checked, {} unchanged violation(s)",
        count(Change::Added),
        count(Change::Fixed),
        count(Change::NoLongerChecked),
        count(Change::Kept)
    );
    text
}

/// The comparison as JSON.
pub fn to_json(old: &Verdicts, new: &Verdicts) -> Value {
    let side = |v: &Verdicts| json!({"input": v.input, "checked": v.checked, "violated": v.violated, "incomplete": v.incomplete});
    let changes: Vec<Value> = compare(old, new)
        .iter()
        .map(|c| json!({"intent": c.intent, "change": c.change.name(), "old": c.old, "new": c.new}))
        .collect();
    json!({
        "mode": "diff",
        "old": side(old),
        "new": side(new),
        "changes": changes,
        "regression": exit_code(old, new) == 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(input: &str, violated: &[(&str, Option<&str>)]) -> Verdicts {
        Verdicts {
            input: input.into(),
            violated: violated
                .iter()
                .map(|(i, t)| (i.to_string(), t.map(str::to_string)))
                .collect(),
            checked: ["a", "b", "c"].map(String::from).into(),
            incomplete: None,
        }
    }

    #[test]
    fn an_intent_the_new_side_drops_is_no_longer_checked_not_fixed() {
        let old = verdicts("old", &[("a", None), ("b", None)]);
        let mut new = verdicts("new", &[]);
        new.checked.remove("a");
        let changes: Vec<(String, Change)> = compare(&old, &new)
            .into_iter()
            .map(|c| (c.intent, c.change))
            .collect();
        assert_eq!(
            changes,
            [
                ("b".to_string(), Change::Fixed),
                ("a".to_string(), Change::NoLongerChecked)
            ]
        );
        assert_eq!(exit_code(&old, &new), 0);
        assert!(to_text(&old, &new).contains("no longer checked: a"));
    }

    #[test]
    fn regressions_fixes_and_kept_violations_are_told_apart() {
        let old = verdicts("old", &[("a", Some("<1,2>")), ("b", Some("<1,1>"))]);
        let new = verdicts("new", &[("b", Some("<1,3>")), ("c", None)]);
        let changes = compare(&old, &new);
        let summary: Vec<_> = changes
            .iter()
            .map(|c| {
                (
                    c.intent.as_str(),
                    c.change,
                    c.old.as_deref(),
                    c.new.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("c", Change::Added, None, None),
                ("a", Change::Fixed, Some("<1,2>"), None),
                ("b", Change::Kept, Some("<1,1>"), Some("<1,3>")),
            ]
        );
        assert_eq!(exit_code(&old, &new), 1);
        assert_eq!(exit_code(&new, &new), 0);
        let mut unsure = verdicts("new", &[]);
        unsure.incomplete = Some("timeout".into());
        assert_eq!(
            exit_code(&old, &unsure),
            3,
            "nothing added, but new is not decided"
        );
    }
}
