//! The descheduler, taint manager, maintenance and node failure against Kivi + SPIN on the
//! small configurations d11–d19 (`verdicts.json`) and d21–d23 (`verdicts-descheduler.json`)
//! of `tests/data/differential/`.

use std::collections::BTreeSet;
use std::path::Path;

use kivi::engine::{check, failure_names, CheckOptions, Strategy, VisitedKind};
use kivi::input::load_uniform_file;
use serde_json::Value;

/// Configurations that exercise this components, with the file of their verdicts.
const CONFIGS: [(&str, &str); 12] = [
    ("d11-removeduplicates-2nodes", "verdicts.json"),
    ("d12-removeduplicates-3nodes-roomy", "verdicts.json"),
    ("d13-maintenance-4nodes", "verdicts.json"),
    ("d14-maintenance-p2-2nodes", "verdicts.json"),
    ("d15-nodefailure-3nodes", "verdicts.json"),
    ("d16-taint-noexecute-2nodes", "verdicts.json"),
    ("d17-spread-affinity-descheduler-2nodes", "verdicts.json"),
    ("d18-spread-affinity-nodescheduler-2nodes", "verdicts.json"),
    ("d19-required-affinity-spot", "verdicts.json"),
    (
        "d21-removeduplicates-node-limit-1",
        "verdicts-descheduler.json",
    ),
    (
        "d22-maintenance-balance-maxskew0",
        "verdicts-descheduler.json",
    ),
    (
        "d23-removeduplicates-node-limit-3",
        "verdicts-descheduler.json",
    ),
];

#[test]
fn verdicts_agree_with_kivi() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential");
    let mut disagreements = Vec::new();
    for (name, verdicts) in CONFIGS {
        let text = std::fs::read_to_string(dir.join(verdicts)).unwrap();
        let verdicts: Value = serde_json::from_str(&text).unwrap();
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
