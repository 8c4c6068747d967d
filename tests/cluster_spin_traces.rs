//! SPIN's counterexamples, as Kivi printed them, are traces of the cluster model: a search guided
//! by the expected lines finds a path that prints exactly those lines and ends in a violation.

use std::collections::HashSet;
use std::path::Path;

use kivi::cluster::ClusterState;
use kivi::engine::Model;
use kivi::input::load_uniform;
use kivi::model::ClusterModel;
use kivi::scaler::{enumerate, instantiate, EnumerationOptions, Template};
use serde_json::Value;

fn json(path: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn lines(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

/// A printed line without its step number, e.g. `[HPA] Need to rescale, …`.
fn unnumbered(line: &str) -> &str {
    let end = line.find(']').expect("lines start with [step]");
    line[end + 1..].trim_start()
}

/// Whether the line is an intent monitor's. Kivi's monitors are processes that report a
/// violation whenever SPIN schedules them; ours report it in the step that causes it, so
/// monitor lines are compared only by the violation at the end.
fn is_monitor(line: &str) -> bool {
    unnumbered(line).starts_with("[check")
}

/// Whether some path of `model` prints `expected` (monitor lines aside) and ends where `intent`
/// fails.
fn follows(model: &ClusterModel, expected: &[String], intent: &str) -> bool {
    let expected: Vec<&str> = expected
        .iter()
        .filter(|l| !is_monitor(l))
        .map(|l| unnumbered(l))
        .collect();
    let property = model
        .properties()
        .iter()
        .position(|p| p.name == intent)
        .unwrap_or_else(|| panic!("{intent} is checked"));
    let mut seen: HashSet<(Vec<u8>, usize)> = HashSet::new();
    let mut stack: Vec<(ClusterState, usize)> = vec![(model.initial_state().clone(), 0)];
    let mut actions = Vec::new();
    while let Some((state, done)) = stack.pop() {
        if done == expected.len() && !model.holds(property, &state) {
            return true;
        }
        actions.clear();
        model.actions(&state, &mut actions);
        for action in &actions {
            let printed: Vec<String> = model
                .describe_step(&state, action)
                .iter()
                .map(|l| l.render(0))
                .filter(|l| !is_monitor(l))
                .collect();
            let matches = printed.len() <= expected.len() - done
                && printed
                    .iter()
                    .zip(&expected[done..])
                    .all(|(line, want)| unnumbered(line) == *want);
            if !matches {
                continue;
            }
            let next = model.next_state(&state, action).unwrap();
            let mut key = Vec::new();
            model.encode(&next, &mut key);
            if seen.insert((key, done + printed.len())) {
                stack.push((next, done + printed.len()));
            }
        }
    }
    false
}

fn intent(v: &Value) -> String {
    v[0].as_str().unwrap().to_string()
}

#[test]
fn single_topology_counterexamples_replay() {
    for case in ["c1", "c2", "c3", "c4"] {
        let expected = json(&format!("cases/{case}/expected.json"));
        let model = load_uniform(&json(&format!("cases/{case}/original.json"))).unwrap();
        let original = &expected["original"];
        assert!(
            follows(
                &model,
                &lines(&original["counterexample"]),
                &intent(&original["violatedIntents"])
            ),
            "{case}: SPIN's counterexample is not a trace of the model"
        );
    }
}

#[test]
fn scaling_counterexamples_replay_on_the_minimal_topology() {
    for case in ["c1", "c2", "c3", "c4"] {
        let expected = json(&format!("cases/{case}/expected.json"));
        let scaling = &expected["scaling"];
        let template = Template::from_json(&json(&format!("cases/{case}/template.json"))).unwrap();
        let tried = scaling["topologiesTried"].as_u64().unwrap() as usize;
        let topology = &enumerate(&template, &EnumerationOptions::default())[tried - 1];
        let model = load_uniform(&instantiate(&template, topology)).unwrap();
        assert!(
            follows(
                &model,
                &lines(&scaling["counterexample"]),
                &intent(&scaling["intentReported"])
            ),
            "{case} {topology}: SPIN's counterexample is not a trace of the model"
        );
    }
}

#[test]
fn differential_counterexamples_replay() {
    let verdicts = json("tests/data/differential/verdicts.json");
    for name in [
        "d02-hpa-2nodes-target80-max3",
        "d04-applydeployment-2nodes",
        "d20-heterogeneous-resources-unschedulable",
    ] {
        let file = format!("{name}.json");
        let result = &verdicts["results"][&file];
        let model = load_uniform(&json(&format!("tests/data/differential/{file}"))).unwrap();
        assert!(
            follows(
                &model,
                &lines(&result["counterexample"]),
                &intent(&result["violatedIntents"])
            ),
            "{name}: SPIN's counterexample is not a trace of the model"
        );
    }
}
