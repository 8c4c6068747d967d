//! The descheduler, taint manager, maintenance and node failure against Kivi + SPIN on the
//! small configurations d11–d19 of `tests/data/differential/`.

use std::collections::BTreeSet;
use std::path::Path;

use kivi::engine::{check, failure_names, CheckOptions, Strategy, VisitedKind};
use kivi::input::load_uniform_file;
use serde_json::Value;

/// Configurations that exercise this components.
const CONFIGS: [&str; 9] = [
    "d11-removeduplicates-2nodes",
    "d12-removeduplicates-3nodes-roomy",
    "d13-maintenance-4nodes",
    "d14-maintenance-p2-2nodes",
    "d15-nodefailure-3nodes",
    "d16-taint-noexecute-2nodes",
    "d17-spread-affinity-descheduler-2nodes",
    "d18-spread-affinity-nodescheduler-2nodes",
    "d19-required-affinity-spot",
];

#[test]
fn verdicts_agree_with_kivi() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential");
    let text = std::fs::read_to_string(dir.join("verdicts.json")).unwrap();
    let verdicts: Value = serde_json::from_str(&text).unwrap();
    let mut disagreements = Vec::new();
    for name in CONFIGS {
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
        for (threads, strategy) in [(1, Strategy::Bfs), (1, Strategy::Dfs), (4, Strategy::Dfs)] {
            let options = CheckOptions {
                threads,
                strategy,
                visited: VisitedKind::Exact,
                all_violations: true,
                ..CheckOptions::default()
            };
            let outcome = check(&model, &options).expect("counterexamples replay");
            let ours: BTreeSet<String> = failure_names(&outcome).into_iter().collect();
            eprintln!(
                "{name} ({threads}, {strategy:?}): kivi {kivi:?}, ours {ours:?}, states {} (SPIN {})",
                outcome.stats.states_stored, expected["statesStored"]
            );
            let agrees = if complete {
                ours == kivi
            } else {
                kivi.is_subset(&ours)
            };
            if !agrees {
                disagreements.push(format!(
                    "{name} ({threads}, {strategy:?}): kivi {kivi:?}, ours {ours:?}"
                ));
            }
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
