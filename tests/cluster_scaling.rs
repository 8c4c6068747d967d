//! The cluster model on every topology Kivi's scaling mode checked for C1–C4 (instantiated by
//! the scaler), compared topology by topology with SPIN's verdicts in `cases/cN/expected.json`.

use std::path::Path;

use kivi::engine::{check, CheckOptions, Strategy, VisitedKind};
use kivi::input::load_uniform;
use kivi::scaler::{enumerate, instantiate, EnumerationOptions, Template};
use serde_json::Value;

fn json(path: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_topology_kivi_tried_gets_spins_verdict() {
    let options = CheckOptions {
        threads: 1,
        strategy: Strategy::Bfs,
        visited: VisitedKind::Exact,
        all_violations: true,
        ..CheckOptions::default()
    };
    for case in ["c1", "c2", "c3", "c4"] {
        let template = Template::from_json(&json(&format!("cases/{case}/template.json")))
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let topologies = enumerate(&template, &EnumerationOptions::default());
        let expected = json(&format!("cases/{case}/expected.json"));
        let tried = expected["scaling"]["perTopology"].as_array().unwrap();
        for (topology, spin) in topologies.iter().zip(tried) {
            assert_eq!(topology.to_string(), spin["setup"].as_str().unwrap());
            let model = load_uniform(&instantiate(&template, topology))
                .unwrap_or_else(|e| panic!("{case} {topology}: {e}"));
            let outcome = check(&model, &options).expect("counterexamples replay");
            let ours = outcome.violated();
            let spin_violates = spin["errors"].as_u64().unwrap() > 0;
            assert_eq!(
                !ours.is_empty(),
                spin_violates,
                "{case} {topology}: ours {ours:?}, SPIN {}",
                spin["panError"]
            );
        }
    }
}

#[test]
fn the_largest_topology_of_a_scale_6_sweep_checks() {
    let template = Template::from_json(&json("cases/c3/template-non-violation.json"))
        .unwrap()
        .with_scale(6)
        .expect("scale 6 fits");
    let topologies = enumerate(&template, &EnumerationOptions::default());
    let largest = topologies
        .iter()
        .max_by_key(|t| (t.total_nodes(), t.total_replicas()))
        .unwrap();
    let doc = instantiate(&template, largest);
    let pods = doc["setup"]["pods"].as_array().unwrap().len();
    assert!(pods > 64, "{largest}: {pods} pod slots");
    let model = load_uniform(&doc).unwrap_or_else(|e| panic!("{largest}: {e}"));
    let options = CheckOptions {
        threads: 1,
        strategy: Strategy::Bfs,
        visited: VisitedKind::Exact,
        ..CheckOptions::default()
    };
    let outcome = check(&model, &options).expect("counterexamples replay");
    assert!(outcome.violations.is_empty(), "{largest}");
    assert!(outcome.incomplete.is_none());
}
