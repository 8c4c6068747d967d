//! The cluster model against Kivi + SPIN on the small configurations of
//! `tests/data/differential/`: d01–d20 (`verdicts.json`) and d21–d23
//! (`verdicts-descheduler.json`), each checked on one and four threads, depth- and breadth-first.

use std::collections::BTreeSet;
use std::path::Path;

use kivi::engine::{check, CheckOptions, Strategy, VisitedKind};
use kivi::input::load_uniform_file;
use serde_json::Value;

/// The files holding Kivi + SPIN's verdicts, by configuration file name.
const VERDICT_FILES: [&str; 2] = ["verdicts.json", "verdicts-descheduler.json"];

#[test]
fn verdicts_agree_with_kivi() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/differential");
    let mut disagreements = Vec::new();
    let mut checked = 0;
    for verdict_file in VERDICT_FILES {
        let text = std::fs::read_to_string(dir.join(verdict_file)).unwrap();
        let verdicts: Value = serde_json::from_str(&text).unwrap();
        for (file, expected) in verdicts["results"].as_object().unwrap() {
            let kivi: BTreeSet<String> = expected["violatedIntents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let complete = expected["searchComplete"].as_bool().unwrap();
            let model = load_uniform_file(&dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
            for (threads, strategy) in [(1, Strategy::Bfs), (1, Strategy::Dfs), (4, Strategy::Dfs)]
            {
                let options = CheckOptions {
                    threads,
                    strategy,
                    visited: VisitedKind::Exact,
                    all_violations: true,
                    ..CheckOptions::default()
                };
                let outcome = check(&model, &options).expect("counterexamples replay");
                let ours: BTreeSet<String> = outcome.violated().into_iter().collect();
                let agrees = if complete {
                    ours == kivi
                } else {
                    kivi.is_subset(&ours)
                };
                if !agrees {
                    disagreements.push(format!(
                        "{file} ({threads}, {strategy:?}): kivi {kivi:?}, ours {ours:?}, \
                         states {} (SPIN {})",
                        outcome.stats.states_stored, expected["statesStored"]
                    ));
                }
            }
            checked += 1;
        }
    }
    assert_eq!(
        checked, 23,
        "every differential configuration has a verdict"
    );
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
