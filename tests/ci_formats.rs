//! `--format sarif` and `--format junit`: the SARIF log validates against the SARIF 2.1.0 JSON
//! schema (shipped in tests/data) and names the violated intent with its counterexample as a
//! code flow; the JUnit XML parses and has a failing test case for C3, passing ones where
//! nothing is violated, and one case per decided topology in a sweep.

use serde_json::Value;
use std::path::Path;
use std::process::Output;

use crate::support::cli;

use cli::kivi;

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

/// The SARIF 2.1.0 schema's verdict on `log`: every error, as text. The schema is OASIS's
/// `sarif-schema-2.1.0.json` with one fix: the pattern of `run.language`, which has a stray `]`
/// that a strict regex engine rejects, reads `^[a-zA-Z]{2}(-[a-zA-Z]{2})?$` (a language tag
/// like `en` or `en-US`, as the specification says).
fn schema_errors(log: &Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator
        .iter_errors(log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn sarif_names_each_violated_intent_with_its_trace_and_validates() {
    // One thread: on more, whichever worker meets a violation first gives the trace, and the
    // steps below are one particular trace.
    let output = kivi(&[
        "check",
        "--case",
        "c3",
        "--original",
        "--threads",
        "1",
        "--format",
        "sarif",
        "-q",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let log: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(schema_errors(&log), Vec::<String>::new());
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!schema_errors(&broken).is_empty(), "the schema is enforced");
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "kivi");
    assert_eq!(
        run["tool"]["driver"]["rules"][0]["id"],
        "pod_always_schedulable"
    );
    let result = &run["results"][0];
    assert_eq!(result["ruleId"], "pod_always_schedulable");
    assert_eq!(result["level"], "error");
    let message = result["message"]["text"].as_str().unwrap();
    assert!(
        message.contains(
            "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints."
        ),
        "{message}"
    );
    let steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .unwrap();
    assert_eq!(steps.len(), 5);
    let hpa = steps[1]["location"]["message"]["text"].as_str().unwrap();
    assert!(
        hpa.starts_with(
            "[1][HPA] Need to rescale, pod number change from 5 to 6 — because: New size: 6; \
             reason: cpu resource utilization (percentage of request) above target (cpu"
        ),
        "{hpa}"
    );
    assert!(
        message.contains("\n  node 2: PodTopologySpread: topologyKey zone: domain zone=1"),
        "{message}"
    );
    assert!(steps[4]["location"]["message"]["text"]
        .as_str()
        .unwrap()
        .contains("No feasible node"));
    assert_eq!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "cases/c3/original.json"
    );

    // Manifests: the result points at the Deployment the violation concerns, in a single
    // check and in a sweep.
    for args in [
        &["check", "models/c3-spread-hpa", "--original"][..],
        &["check", "models/c3-spread-hpa"],
    ] {
        let output = kivi(&[args, &["--format", "sarif", "-q"]].concat());
        let log: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(schema_errors(&log), Vec::<String>::new(), "{args:?}");
        let result = &log["runs"][0]["results"][0];
        assert_eq!(
            result["locations"][0],
            serde_json::json!({
                "physicalLocation": {
                    "artifactLocation": {"uri": "models/c3-spread-hpa/yaml/deploy.yaml"},
                    "region": {"startLine": 4},
                },
                "logicalLocations": [{"name": "php-apache", "kind": "object"}],
            }),
            "{args:?}"
        );
    }

    for args in [
        &["check", "--case", "c3", "--original", "--non-violation"][..],
        &["check", "--case", "c5"],
        &["check", "--case", "c5", "--original", "--loop"],
    ] {
        let output = kivi(&[args, &["--format", "sarif", "-q"]].concat());
        let log: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(schema_errors(&log), Vec::<String>::new(), "{args:?}");
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(
            results.is_empty(),
            output.status.code() == Some(0),
            "{args:?}"
        );
    }
}

/// The test cases of a JUnit document: (name, failure message if failing).
fn junit_cases(xml: &str) -> Vec<(String, Option<String>)> {
    let document = roxmltree::Document::parse(xml).expect("well-formed XML");
    let root = document.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    root.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|case| {
            let failure = case
                .children()
                .find(|n| n.has_tag_name("failure"))
                .map(|f| f.attribute("message").unwrap().to_string());
            (case.attribute("name").unwrap().to_string(), failure)
        })
        .collect()
}

#[test]
fn junit_has_a_failing_case_for_c3_and_one_case_per_topology_in_a_sweep() {
    let output = kivi(&[
        "check",
        "--case",
        "c3",
        "--original",
        "--format",
        "junit",
        "-q",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let xml = stdout(&output);
    let cases = junit_cases(&xml);
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].0, "pod_always_schedulable");
    assert!(cases[0]
        .1
        .as_deref()
        .unwrap()
        .contains("didn't match pod topology spread"));
    assert!(xml.contains("[4][Scheduler - no_feasible_node] No feasible node!"));

    let output = kivi(&[
        "check",
        "--case",
        "c3",
        "--original",
        "--non-violation",
        "--format",
        "junit",
        "-q",
    ]);
    let cases = junit_cases(&stdout(&output));
    assert!(!cases.is_empty() && cases.iter().all(|(_, failure)| failure.is_none()));

    // One thread: on more, the topologies a sweep decides beside the minimal one before it
    // stops depend on timing (58 or 59 for C3), and the two runs are compared.
    let sweep = |format| {
        kivi(&[
            "check",
            "--case",
            "c3",
            "--threads",
            "1",
            "--format",
            format,
            "-q",
        ])
    };
    let decided = serde_json::from_str::<Value>(&stdout(&sweep("json"))).unwrap()["rows"]
        .as_array()
        .unwrap()
        .len();
    let output = sweep("junit");
    let cases = junit_cases(&stdout(&output));
    let failing: Vec<_> = cases.iter().filter(|(_, f)| f.is_some()).collect();
    assert_eq!(
        failing.len(),
        1,
        "C3's minimal topology violates one intent"
    );
    assert!(
        failing[0].0.ends_with(": pod_always_schedulable"),
        "{}",
        failing[0].0
    );
    assert_eq!(cases.len(), decided, "one case per decided topology");
}
