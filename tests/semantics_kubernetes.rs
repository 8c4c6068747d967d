//! `--semantics kubernetes` on `kivi check`: the model's scheduling step is kube-scheduler
//! v1.33's cycle (fit on requests, not on usage), and every built-in case gets a definite
//! verdict under it.

#[path = "support/cli.rs"]
mod cli;

use cli::{json_of, kivi};

/// A deployment of two pods requesting 2 CPU each on a 10-CPU node, each using 9 from the
/// start: Kivi fits pods on what usage leaves free, kube-scheduler on the sum of requests.
const REQUESTS_VS_USAGE: &str = "tests/data/semantics/requests-vs-usage.json";

fn check(input: &[&str], semantics: &str) -> serde_json::Value {
    let output = kivi(
        &[
            input,
            &[
                "--semantics",
                semantics,
                "--format",
                "json",
                "-q",
                "--threads",
                "1",
            ],
        ]
        .concat(),
    );
    let report = json_of(&output);
    let expected = if report["verdict"] == "violation" {
        1
    } else {
        0
    };
    assert_eq!(output.status.code(), Some(expected), "{report}");
    report
}

#[test]
fn kubernetes_fits_pods_on_requests_where_kivi_fits_them_on_usage() {
    let kivi_report = check(&["check", REQUESTS_VS_USAGE], "kivi");
    assert_eq!(kivi_report["verdict"], "violation");
    assert_eq!(
        kivi_report["violatedIntents"],
        serde_json::json!(["pod_always_schedulable"])
    );
    let kubernetes = check(&["check", REQUESTS_VS_USAGE], "kubernetes");
    assert_eq!(kubernetes["setup"]["semantics"], "kubernetes");
    assert_eq!(kubernetes["verdict"], "no_violation", "{kubernetes}");
}

#[test]
fn every_built_in_case_gets_a_definite_verdict_under_kubernetes() {
    for case in ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"] {
        for variant in [&[][..], &["--non-violation"][..]] {
            let args = [&["check", "--case", case, "--original"][..], variant].concat();
            let report = check(&args, "kubernetes");
            assert!(
                report["verdict"] == "violation" || report["verdict"] == "no_violation",
                "{case} {variant:?}: {report}"
            );
            assert_eq!(report["setup"]["semantics"], "kubernetes");
        }
    }
}
