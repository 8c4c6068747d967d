//! `kivi check` scaling sweeps of C5–C8 against Kivi + SPIN's: the minimal violating topology
//! and how many topologies were decided to find it, and no violation on the fixed variants.

use crate::support::cli;
use serde_json::Value;

/// What `kivi ARGS` prints on standard output.
fn kivi(args: &[&str]) -> String {
    cli::stdout(&cli::kivi(args))
}

fn expected(case: &str) -> Value {
    let path = format!("{}/cases/{case}/expected.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("expected.json")).expect("JSON")
}

#[test]
fn minimal_topologies_match_kivi() {
    for case in ["c5", "c6", "c7", "c8"] {
        let scaling = &expected(case)["scaling"];
        let minimal = scaling["minimalTopology"].as_str().unwrap();
        let tried = scaling["topologiesTried"].as_u64().unwrap();
        for threads in ["1", "4"] {
            let text = kivi(&["check", "--case", case, "--threads", threads]);
            assert!(
                text.contains(&format!("Minimal violating topology: {minimal}")),
                "{case} on {threads} thread(s): {text}"
            );
            assert!(
                text.contains(&format!("Topologies decided: {tried} up to the answer")),
                "{case} on {threads} thread(s): {text}"
            );
        }
    }
}

#[test]
fn non_violation_sweeps_pass() {
    for case in ["c5", "c6", "c7", "c8"] {
        let text = kivi(&["check", "--case", case, "--non-violation"]);
        assert!(text.contains("No failure is found!"), "{case}: {text}");
    }
}
