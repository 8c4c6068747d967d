//! `kivi diff OLD NEW`: C3 against its non-violation variant reports the fix (exit 0), the
//! reverse reports the regression with its minimal topology (exit 1), either side may come
//! from standard input, and single topologies compare their violated intents; an intent the
//! new side drops is "no longer checked", not fixed; eviction loops and eventually stable
//! reconciliation compare too.

use crate::support::cli;

use cli::kivi_with_stdin as kivi;

const C3: &str = "cases/c3/template.json";
const C3_FIXED: &str = "cases/c3/template-non-violation.json";
const MINIMAL: &str = "{node type 0: 1, node type 1: 2, deployment type 0: 3}";

#[test]
fn the_fix_and_the_regression_of_c3() {
    let fixed = kivi(&["diff", C3, C3_FIXED], None);
    assert_eq!(fixed.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&fixed.stdout),
        format!(
            "Comparing {C3} (old) with {C3_FIXED} (new)\n  fixed: pod_always_schedulable is no \
             longer violated (old: violated at {MINIMAL})\nSummary: 0 regression(s), 1 fixed, \
             0 no longer checked, 0 unchanged violation(s)\n"
        )
    );
    let broken = kivi(&["diff", C3_FIXED, C3, "--format", "json"], None);
    assert_eq!(broken.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&broken.stdout).unwrap();
    assert_eq!(
        report["changes"],
        serde_json::json!([{
            "intent": "pod_always_schedulable", "change": "added", "old": null, "new": MINIMAL
        }])
    );
    assert_eq!(report["regression"], true);
}

#[test]
fn either_side_may_come_from_stdin_but_not_both() {
    let text = std::fs::read_to_string(format!("{}/{C3}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let output = kivi(&["diff", "-", C3_FIXED], Some(&text));
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("Comparing <stdin> (old)"));
    let output = kivi(&["diff", C3_FIXED, "-"], Some(&text));
    assert_eq!(output.status.code(), Some(1));
    let output = kivi(&["diff", "-", "-"], Some(&text));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("can be only one side"));
}

#[test]
fn single_topologies_compare_their_violated_intents() {
    let output = kivi(
        &[
            "diff",
            "cases/c3/original.json",
            "cases/c3/original.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "the same violation on both sides adds nothing"
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["changes"],
        serde_json::json!([{
            "intent": "pod_always_schedulable", "change": "kept", "old": null, "new": null
        }])
    );
    let output = kivi(
        &[
            "diff",
            "cases/c3/original-non-violation.json",
            "cases/c3/original.json",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    let output = kivi(
        &["diff", "cases/c3/original.json", "no-such-file.json"],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn an_intent_the_change_deletes_is_no_longer_checked_rather_than_fixed() {
    let path = format!("{}/cases/c1/original.json", env!("CARGO_MANIFEST_DIR"));
    let mut document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    document["intents"] = serde_json::json!([]);
    let output = kivi(
        &[
            "diff",
            "cases/c1/original.json",
            "-",
            "-o",
            "--format",
            "json",
        ],
        Some(&document.to_string()),
    );
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["changes"],
        serde_json::json!([{
            "intent": "no_oscillation_replica_num", "change": "no_longer_checked",
            "old": null, "new": null
        }])
    );
}

#[test]
fn eviction_loops_and_stable_reconciliation_are_compared_too() {
    let fixed = kivi(
        &[
            "diff",
            "cases/c5/template.json",
            "cases/c5/template-non-violation.json",
            "--intent",
            "esr",
        ],
        None,
    );
    assert_eq!(fixed.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&fixed.stdout).contains(
        "fixed: eventually_stable_reconciliation is no longer violated (old: violated at \
         {node type 0: 1, node type 1: 1, deployment type 0: 2})"
    ));
    let broken = kivi(
        &[
            "diff",
            "cases/c5/original-non-violation.json",
            "cases/c5/original.json",
            "-o",
            "--loop",
        ],
        None,
    );
    assert_eq!(broken.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&broken.stdout)
        .contains("regression: eviction_loop is violated (not in old)"));
}
