//! kivi's kube-scheduler against the real one: 1,000 scenarios (random clusters of 2–12 nodes
//! with one pending pod) and 3 hand-written ones, each with the decision kube-scheduler v1.33.0
//! took for it (`tests/data/kube-scheduler/README.md` says how they were recorded). Every
//! field of the decision must be equal: the feasible nodes, each rejected node's first
//! failing plugin with its reasons and code, every plugin's rejections on its own, the scores
//! before and after normalising, the totals, the top-scored nodes, the skipped plugins and
//! the FitError with and without the PostFilter's message. All mismatches are reported at
//! once, vector by vector, with the fields that differ. The decision a model's scheduling
//! cycle takes (`Detail::Top`: top-scored nodes, or the FitError) must equal the full one's.
//!
//! The vectors are kept as one gzipped JSON Lines file, `vectors.jsonl.gz` (1 MB instead of
//! 24 MB of files): each line is `{"name", "scenario", "expected"}`, the scenario being the
//! text of `scenarios/NAME` and the expected decision the object of `expected/NAME` (names
//! under `sanity/` are the hand-written ones). Set `KIVI_KUBE_SCHEDULER_VECTORS` to a
//! directory laid out as the recording is (`scenarios/NNNN.json`, `expected/NNNN.json`) to
//! check more vectors as well.

use crate::support::vectors::{bundled, more_from, Vector};
use kivi::controllers::kube_scheduler::{Decision, Detail, Scheduler};
use kivi::input::kube_list::read_snapshot;
use serde_json::Value;
use std::collections::BTreeMap;

/// The fields compared, as the vectors name them.
const FIELDS: &[&str] = &[
    "feasible",
    "first_rejection",
    "total",
    "top",
    "fit_error",
    "fit_error_with_postfilter",
    "rejected",
    "prefilter_rejection",
    "scores",
    "raw_scores",
    "scoring_run_by_scheduler",
    "skipped_filter_plugins",
    "skipped_score_plugins",
    "num_nodes",
    "pending_pod",
];

/// The recorded vectors, relative to the repository root.
const BUNDLE: &str = "tests/data/kube-scheduler/vectors.jsonl.gz";
/// Environment variable naming a directory of further vectors.
const MORE_VECTORS: &str = "KIVI_KUBE_SCHEDULER_VECTORS";

/// The fields of the vector's expected decision that kivi's decision gets wrong, each as
/// `field: kivi … / kube-scheduler …`.
fn differences(vector: &Vector) -> Vec<String> {
    let (snapshot, _) =
        read_snapshot(&vector.name, &vector.scenario).unwrap_or_else(|error| panic!("{error}"));
    let pending: Vec<_> = snapshot.pending_pods().collect();
    assert_eq!(pending.len(), 1, "{}: one pending pod", vector.name);
    let scheduler = Scheduler::new(&snapshot);
    let decision = scheduler.decide(pending[0]);
    let actual = serde_json::to_value(&decision).expect("a decision is JSON");
    let mut wrong: Vec<String> = FIELDS
        .iter()
        .filter(|field| actual[**field] != vector.expected[**field])
        .map(|field| {
            format!(
                "{field}: kivi {} / kube-scheduler {}",
                actual[*field], vector.expected[*field]
            )
        })
        .collect();
    let top = scheduler.decide_with(pending[0], Detail::Top);
    if acted_on(&top) != acted_on(&decision) {
        wrong.push(format!(
            "Detail::Top: {:?} / Detail::Full {:?}",
            acted_on(&top),
            acted_on(&decision)
        ));
    }
    wrong
}

/// What a scheduling cycle acts on: the top-scored nodes, or the FitError with each node's
/// first rejection when no node fits.
fn acted_on(decision: &Decision) -> impl PartialEq + std::fmt::Debug + '_ {
    let unschedulable = decision.top.is_empty();
    (
        &decision.top,
        unschedulable.then_some((
            &decision.first_rejection,
            &decision.fit_error,
            &decision.fit_error_with_postfilter,
            &decision.preemption_candidates,
        )),
    )
}

/// Checks every vector, reporting all mismatches at once.
fn check_all(vectors: &[Vector]) {
    let mut mismatches = Vec::new();
    let mut by_field: BTreeMap<&str, usize> = BTreeMap::new();
    for vector in vectors {
        let wrong = differences(vector);
        if wrong.is_empty() {
            continue;
        }
        for field in FIELDS {
            if wrong.iter().any(|w| w.starts_with(&format!("{field}:"))) {
                *by_field.entry(field).or_default() += 1;
            }
        }
        mismatches.push(format!("{}:\n  {}", vector.name, wrong.join("\n  ")));
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} vectors differ from kube-scheduler (vectors per field: {by_field:?}):\n{}",
        mismatches.len(),
        vectors.len(),
        mismatches.join("\n")
    );
}

#[test]
fn every_recorded_decision_of_kube_scheduler_is_reproduced() {
    let (sanity, recorded): (Vec<Vector>, Vec<Vector>) = bundled(BUNDLE)
        .into_iter()
        .partition(|v| v.name.starts_with("sanity/"));
    assert_eq!(recorded.len(), 1000, "the 1,000 recorded decisions");
    assert_eq!(sanity.len(), 3, "the 3 hand-written decisions");
    check_all(&recorded);
    check_all(&sanity);
    if let Some(more) = more_from(MORE_VECTORS) {
        check_all(&more);
    }
}

#[test]
fn the_comparison_catches_a_wrong_decision() {
    let mut vector = bundled(BUNDLE)
        .into_iter()
        .find(|v| v.name == "sanity/s2-too-much-cpu.json")
        .expect("the sanity vector");
    assert_eq!(differences(&vector), Vec::<String>::new());
    let fit_error = vector.expected["fit_error"]
        .as_str()
        .expect("no node fits")
        .replace("Insufficient cpu", "Insufficient memory");
    vector.expected["fit_error"] = Value::String(fit_error);
    vector.expected["top"] = serde_json::json!(["node-01"]);
    let wrong = differences(&vector);
    assert_eq!(wrong.len(), 2, "{wrong:?}");
    assert!(wrong[0].starts_with("top: kivi [] / kube-scheduler [\"node-01\"]"));
    assert!(wrong[1].starts_with("fit_error: kivi \"0/"));
}
