//! The cluster model against Kivi + SPIN on the small configurations of
//! `tests/data/differential/` that use only this model's controllers and events.

use std::collections::BTreeSet;
use std::path::Path;

use kivi::engine::{check, failure_names, CheckOptions, Strategy, VisitedKind};
use kivi::input::load_uniform_file;
use serde_json::Value;

/// Configurations whose controllers, events and intents this model covers.
const SUPPORTED: [&str; 11] = [
    "d01-hpa-1node-max4",
    "d02-hpa-2nodes-target80-max3",
    "d03-hpa-min2-max4-mildcpu",
    "d04-applydeployment-2nodes",
    "d05-spread-4nodes-2zones-dns",
    "d06-spread-scheduleanyway",
    "d07-spread-maxskew2",
    "d08-spread-2nodes-skewed-start",
    "d09-kernelpanic-2nodes-big-requests",
    "d10-kernelpanic-2nodes-small-requests",
    "d20-heterogeneous-resources-unschedulable",
];

#[test]
fn verdicts_agree_with_kivi() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential");
    let text = std::fs::read_to_string(dir.join("verdicts.json")).unwrap();
    let verdicts: Value = serde_json::from_str(&text).unwrap();
    let mut disagreements = Vec::new();
    for name in SUPPORTED {
        let file = format!("{name}.json");
        let expected = &verdicts["results"][&file];
        let kivi: BTreeSet<String> = expected["violatedIntents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let complete = expected["searchComplete"].as_bool().unwrap();
        let model = load_uniform_file(&dir.join(&file)).unwrap_or_else(|e| panic!("{e}"));
        let options = CheckOptions {
            threads: 1,
            strategy: Strategy::Bfs,
            visited: VisitedKind::Exact,
            all_violations: true,
            ..CheckOptions::default()
        };
        let outcome = check(&model, &options).expect("counterexamples replay");
        let ours: BTreeSet<String> = failure_names(&outcome).into_iter().collect();
        eprintln!(
            "{name}: kivi {kivi:?}, ours {ours:?}, states {} (SPIN {})",
            outcome.stats.states_stored, expected["statesStored"]
        );
        let agrees = if complete {
            ours == kivi
        } else {
            kivi.is_subset(&ours)
        };
        if !agrees {
            disagreements.push(format!("{name}: kivi {kivi:?}, ours {ours:?}"));
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
