//! kivi's descheduler against the real one: 550 scenarios (random clusters of 3–10 nodes with a
//! DeschedulerPolicy) and 6 hand-written ones, each with what kubernetes-sigs/descheduler
//! v0.33.0 decided in one cycle, run many times because its choices follow Go's randomised map
//! order (`tests/data/kube-descheduler/README.md` says how they were recorded).
//!
//! For every vector: the plugins run, the ready nodes and the abort are equal; every recorded
//! outcome (the pods evicted per plugin and the refusals with their reasons) is one the model
//! can reach ([`is_possible`] searches the model's choices for it); and outcomes sampled from
//! the model keep to the stable parts of the record: the number evicted, the number per node,
//! and the pods evicted in every outcome. Model outcomes missing from the recorded sample are
//! counted (the sample may be incomplete) but allowed. Where the record fixes them, the
//! canonical cycle and every sampled cycle must also give the recorded eviction sequence and
//! refusal sequence (`order: fixed`) and the recorded set of the evictor's rejections of the
//! pods the plugins listed (`not_evictable` where `not_evictable_fixed`: pod, plugin, stage,
//! reasons, message). All mismatches are reported at once.
//!
//! The vectors are one gzipped JSON Lines file, `vectors.jsonl.gz`: each line is
//! `{"name", "scenario", "expected"}`. Set `KIVI_KUBE_DESCHEDULER_VECTORS` to a directory laid
//! out as the recording is (`scenarios/NNNN.json`, `expected/NNNN.json`) to check those too.

use crate::support::vectors::{bundled, more_from, Vector};
use kivi::controllers::kube_descheduler::possible::{is_possible, sample, Outcome, Possibility};
use kivi::controllers::kube_descheduler::{Descheduler, RandomOptions, Report};
use kivi::input::descheduler_policy::read_cluster_and_policy;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The recorded vectors, relative to the repository root.
const BUNDLE: &str = "tests/data/kube-descheduler/vectors.jsonl.gz";
/// Environment variable naming a directory of further vectors.
const MORE_VECTORS: &str = "KIVI_KUBE_DESCHEDULER_VECTORS";
/// Cycles the search may run for one recorded outcome.
const SEARCH_BUDGET: usize = 2_000;
/// Random cycles sampled per vector.
const SAMPLES: usize = 200;

/// What checking one vector found.
#[derive(Default)]
struct Findings {
    /// What differs from the record.
    wrong: Vec<String>,
    /// Distinct sampled model outcomes the record does not list.
    unrecorded: usize,
    /// Recorded outcomes checked.
    outcomes: usize,
    /// A model cycle's eviction or refusal sequence differs from the fixed recorded one.
    order_differs: bool,
    /// A model cycle's rejections of listed pods differ from the fixed recorded ones.
    not_evictable_differs: bool,
}

fn strings(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

/// A recorded outcome (`outcomes[]`).
fn recorded(value: &Value) -> Outcome {
    Outcome {
        evicted: strings(&value["evicted"]),
        by_plugin: value["by_plugin"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(plugin, pods)| (plugin.clone(), strings(pods)))
            .collect(),
        refused: strings(&value["refused"]),
    }
}

/// `(min, max)` of a count that is a number or `{min, max}`.
fn range(value: &Value) -> (u64, u64) {
    match value.as_u64() {
        Some(n) => (n, n),
        None => (
            value["min"].as_u64().expect("a min"),
            value["max"].as_u64().expect("a max"),
        ),
    }
}

/// Checks one vector.
fn check(vector: &Vector) -> Findings {
    let mut findings = Findings::default();
    let (snapshot, policy, _) = match read_cluster_and_policy(&vector.name, &vector.scenario) {
        Ok(read) => read,
        Err(error) => {
            findings.wrong.push(format!("input: {error}"));
            return findings;
        }
    };
    let descheduler = match Descheduler::new(&snapshot, &policy) {
        Ok(descheduler) => descheduler,
        Err(error) => {
            findings.wrong.push(format!("policy: {error}"));
            return findings;
        }
    };
    let expected = &vector.expected;
    let canonical = descheduler
        .run(&mut kivi::controllers::kube_descheduler::FirstOption)
        .expect("the canonical cycle runs");
    let plugins: Vec<Value> = canonical
        .plugins_run
        .iter()
        .map(|p| Value::from(*p))
        .collect();
    if Value::from(plugins.clone()) != expected["plugins_run"] {
        findings.wrong.push(format!(
            "plugins_run: kivi {plugins:?} / descheduler {}",
            expected["plugins_run"]
        ));
    }
    if Value::from(canonical.ready_nodes.clone()) != expected["ready_nodes"] {
        findings.wrong.push(format!(
            "ready_nodes: kivi {:?} / descheduler {}",
            canonical.ready_nodes, expected["ready_nodes"]
        ));
    }
    if canonical.aborted.as_deref() != expected["aborted"].as_str() {
        findings.wrong.push(format!(
            "aborted: kivi {:?} / descheduler {}",
            canonical.aborted, expected["aborted"]
        ));
    }
    let outcomes: Vec<Outcome> = expected["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(recorded)
        .collect();
    findings.outcomes = outcomes.len();
    for outcome in &outcomes {
        match is_possible(&descheduler, outcome, SEARCH_BUDGET) {
            Possibility::Reached(_) => {}
            other => findings
                .wrong
                .push(format!("outcome {other:?}: {outcome:?}")),
        }
    }
    let (low, high) = range(&expected["evicted_count"]);
    let per_node: BTreeMap<String, (u64, u64)> = expected["evicted_per_node"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(node, count)| (node.clone(), range(count)))
        .collect();
    let always = strings(&expected["always_evicted"]);
    let recorded_set: BTreeSet<&Outcome> = outcomes.iter().collect();
    let node_of: BTreeMap<&str, &str> = snapshot
        .pods
        .iter()
        .map(|p| (p.name.as_str(), p.node_name.as_deref().unwrap_or("")))
        .collect();
    let order_fixed = expected["order"] == "fixed";
    let not_evictable_fixed = expected["not_evictable_fixed"] == true;
    let name = |pod: usize| descheduler.pod_name(pod);
    let mut random = RandomOptions::new(1);
    let mut sampled: BTreeMap<Outcome, usize> = BTreeMap::new();
    check_sequences(
        expected,
        &canonical.report(name),
        &mut findings,
        "canonical",
    );
    for _ in 0..SAMPLES {
        let Ok(cycle) = descheduler.run(&mut random) else {
            continue;
        };
        *sampled
            .entry(Outcome::of(&cycle, &descheduler))
            .or_default() += 1;
        if order_fixed || not_evictable_fixed {
            check_sequences(expected, &cycle.report(name), &mut findings, "sampled");
        }
    }
    for outcome in sampled.into_keys() {
        if !recorded_set.contains(&outcome) {
            findings.unrecorded += 1;
        }
        let count = outcome.evicted.len() as u64;
        if count < low || count > high {
            findings.wrong.push(format!(
                "sampled outcome evicts {count}, recorded {low}..={high}: {outcome:?}"
            ));
        }
        let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
        for pod in &outcome.evicted {
            *counts.entry(node_of[pod.as_str()]).or_default() += 1;
        }
        for (node, count) in &counts {
            let (low, high) = per_node.get(*node).copied().unwrap_or((0, 0));
            if *count < low || *count > high {
                findings.wrong.push(format!(
                    "sampled outcome evicts {count} from {node}, recorded {low}..={high}"
                ));
            }
        }
        for (node, (low, _)) in &per_node {
            if *low > 0 && !counts.contains_key(node.as_str()) {
                findings.wrong.push(format!(
                    "sampled outcome evicts nothing from {node}, recorded at least {low}"
                ));
            }
        }
        if !always.is_subset(&outcome.evicted) {
            findings.wrong.push(format!(
                "sampled outcome misses always-evicted {:?}",
                always.difference(&outcome.evicted).collect::<Vec<_>>()
            ));
        }
    }
    findings
}

/// A refusal as `(pod, plugin, stage, reason)`.
type RefusalKey = (String, String, String, String);
/// A rejection as `(pod, plugin, stage, reasons sorted, message)`.
type RejectionKey = (String, String, String, Vec<String>, String);

fn text(value: &Value, key: &str) -> String {
    value[key].as_str().expect("a string").to_string()
}

/// The recorded refusals, in their order.
fn recorded_refusals(expected: &Value) -> Vec<RefusalKey> {
    let refused = expected["refused"].as_array().expect("refused");
    refused
        .iter()
        .map(|r| {
            let field = |key| text(r, key);
            (
                field("pod"),
                field("plugin"),
                field("stage"),
                field("reason"),
            )
        })
        .collect()
}

/// The recorded rejections of listed pods, as a set.
fn recorded_rejections(expected: &Value) -> BTreeSet<RejectionKey> {
    let listed = expected["not_evictable"].as_array().expect("not_evictable");
    listed
        .iter()
        .map(|r| {
            let mut reasons: Vec<String> = strings(&r["reason"]).into_iter().collect();
            reasons.sort();
            let field = |key| text(r, key);
            (
                field("pod"),
                field("plugin"),
                field("stage"),
                reasons,
                field("message"),
            )
        })
        .collect()
}

/// Checks `report`, one cycle of the model (`which`), against what the record fixes: with
/// `order: fixed` the evictions and refusals in their order, with `not_evictable_fixed` the
/// evictor's rejections of listed pods. Notes one difference of each kind at most.
fn check_sequences(expected: &Value, report: &Report, findings: &mut Findings, which: &str) {
    if expected["order"] == "fixed" && !findings.order_differs {
        let evicted: Vec<String> = expected["evicted"]
            .as_array()
            .expect("evicted")
            .iter()
            .map(|p| p.as_str().expect("a pod").to_string())
            .collect();
        let refused: Vec<RefusalKey> = report
            .refused
            .iter()
            .map(|r| {
                (
                    r.pod.clone(),
                    r.plugin.clone(),
                    r.stage.clone(),
                    r.reason.clone(),
                )
            })
            .collect();
        let recorded = recorded_refusals(expected);
        if report.evicted != evicted || refused != recorded {
            findings.order_differs = true;
            findings.wrong.push(format!(
                "order of a {which} cycle: kivi evicts {:?} refuses {refused:?} / descheduler \
                 evicts {evicted:?} refuses {recorded:?}",
                report.evicted
            ));
        }
    }
    if expected["not_evictable_fixed"] == true && !findings.not_evictable_differs {
        let model: BTreeSet<RejectionKey> = report
            .not_evictable
            .iter()
            .map(|r| {
                let mut reasons = r.reason.clone();
                reasons.sort();
                let (pod, plugin, stage) = (r.pod.clone(), r.plugin.clone(), r.stage.clone());
                (pod, plugin, stage, reasons, r.message.clone())
            })
            .collect();
        let recorded = recorded_rejections(expected);
        if model != recorded {
            findings.not_evictable_differs = true;
            findings.wrong.push(format!(
                "not_evictable of a {which} cycle: kivi only {:?} / descheduler only {:?}",
                model.difference(&recorded).collect::<Vec<_>>(),
                recorded.difference(&model).collect::<Vec<_>>()
            ));
        }
    }
}

/// Checks every vector, asserting that each matches and reporting all mismatches at once.
fn check_all(vectors: &[Vector]) {
    let mut failures = Vec::new();
    let (mut outcomes, mut unrecorded) = (0, 0);
    for vector in vectors {
        let started = std::time::Instant::now();
        let findings = check(vector);
        if started.elapsed().as_secs() >= 5 {
            eprintln!(
                "{}: checked in {:.0} s",
                vector.name,
                started.elapsed().as_secs_f64()
            );
        }
        outcomes += findings.outcomes;
        unrecorded += findings.unrecorded;
        if !findings.wrong.is_empty() {
            let shown: Vec<&String> = findings.wrong.iter().take(4).collect();
            failures.push(format!(
                "{}:\n  {}",
                vector.name,
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n  ")
            ));
        }
    }
    let passed = vectors.len() - failures.len();
    eprintln!(
        "{passed} of {} vectors match; {outcomes} recorded outcomes checked; {unrecorded} \
         sampled model outcomes are not in the recorded samples",
        vectors.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} vectors differ:\n{}",
        failures.len(),
        vectors.len(),
        failures.join("\n")
    );
}

#[test]
fn every_recorded_decision_of_the_descheduler_is_reproduced() {
    let (sanity, recorded): (Vec<Vector>, Vec<Vector>) = bundled(BUNDLE)
        .into_iter()
        .partition(|v| v.name.starts_with("sanity/"));
    assert_eq!(recorded.len(), 550, "the 550 recorded decisions");
    assert_eq!(sanity.len(), 6, "the 6 hand-written decisions");
    check_all(&recorded);
    check_all(&sanity);
    if let Some(more) = more_from(MORE_VECTORS) {
        check_all(&more);
    }
}

#[test]
fn the_search_tells_reachable_outcomes_from_impossible_ones() {
    let vector = bundled(BUNDLE)
        .into_iter()
        .find(|v| v.name == "sanity/s1-duplicates.json")
        .expect("the sanity vector");
    let (snapshot, policy, _) = read_cluster_and_policy(&vector.name, &vector.scenario).unwrap();
    let descheduler = Descheduler::new(&snapshot, &policy).unwrap();
    let outcome = |pods: &[&str]| Outcome {
        evicted: pods.iter().map(|p| p.to_string()).collect(),
        ..Outcome::default()
    };
    for pair in [["a1", "b2"], ["a1", "c3"], ["b2", "c3"]] {
        let pods = pair.map(|p| format!("web-5d9c7b6f4q-{p}"));
        let target = outcome(&[&pods[0], &pods[1]]);
        assert!(matches!(
            is_possible(&descheduler, &target, 100),
            Possibility::Reached(_)
        ));
    }
    let all = outcome(&[
        "web-5d9c7b6f4q-a1",
        "web-5d9c7b6f4q-b2",
        "web-5d9c7b6f4q-c3",
    ]);
    assert_eq!(
        is_possible(&descheduler, &all, 100),
        Possibility::Impossible
    );
    assert_eq!(
        is_possible(&descheduler, &outcome(&[]), 100),
        Possibility::Impossible
    );
    let sampled = sample(&descheduler, 100, 3);
    assert_eq!(sampled.len(), 3, "any two of the three: {sampled:?}");
}
