//! The inputs of the "Trust, again" audit (#46) that kivi crashed on, answered vacuously or
//! accepted silently: each must now give its right answer, with the exit code that says so.
//! The inputs are in tests/data/audit/ under the audit's names.

#[path = "support/cli.rs"]
mod cli;

use cli::{json_of, kivi};
use std::process::Output;

const AUDIT: &str = "tests/data/audit";

fn input(name: &str) -> String {
    format!("{AUDIT}/{name}")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A path for a file of this test run, in the system's temporary folder.
fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("kivi-audit-{}-{name}", std::process::id()))
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Row 3: two `pod_balance_across_node` intents, the second violated. The violation is found,
/// replays, and names the deployment whose intent failed, under either strategy and whichever
/// order the intents are listed in.
#[test]
fn the_second_of_two_alike_intents_is_reported_with_its_deployment() {
    let listed = input("f01-replay-failure.yaml");
    let text =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&listed))
            .unwrap();
    let first =
        r#"{"name": "pod_balance_across_node", "para": {"deployment": "app0", "maxSkew": 2}}"#;
    let second =
        r#"{"name": "pod_balance_across_node", "para": {"deployment": "app1", "maxSkew": 1}}"#;
    assert!(text.contains(first) && text.contains(second));
    let swapped_text = text
        .replace(first, "FIRST")
        .replace(second, first)
        .replace("FIRST", second);
    let swapped = scratch("f01-swapped.yaml");
    std::fs::write(&swapped, swapped_text).unwrap();
    let swapped = swapped.display().to_string();
    for path in [&listed, &swapped] {
        for strategy in ["dfs", "bfs"] {
            for threads in ["1", "2"] {
                let output = kivi(&[
                    "check",
                    path,
                    "--original",
                    "--format",
                    "json",
                    "--strategy",
                    strategy,
                    "--threads",
                    threads,
                ]);
                let what = format!("{path} {strategy} {threads}: {}", stderr(&output));
                assert_eq!(output.status.code(), Some(1), "{what}");
                let report = json_of(&output);
                assert_eq!(
                    report["violatedIntents"],
                    serde_json::json!(["pod_balance_across_node (deployment 2)"]),
                    "{what}"
                );
                let app1 = report["names"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|entry| entry["kind"] == "deployment" && entry["id"] == 2)
                    .cloned();
                assert_eq!(
                    app1.map(|e| e["name"].clone()),
                    Some("app1".into()),
                    "{what}"
                );
            }
        }
    }
    std::fs::remove_file(&swapped).unwrap();
    let output = kivi(&["check", &listed, "--original"]);
    let text = stdout(&output);
    assert!(
        text.contains("Violated intent: pod_balance_across_node (deployment 2)\n"),
        "{text}"
    );
    assert!(text.contains("deployment 2 = app1"), "{text}");
}

/// Runs `kivi ARGS`: exit 2, and standard error holds each of `says`; returns standard error.
fn refused(args: &[&str], says: &[&str]) -> String {
    let output = kivi(args);
    let text = stderr(&output);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{args:?}: {text}{}",
        stdout(&output)
    );
    for part in says {
        assert!(text.contains(part), "{args:?}: {text} does not say {part}");
    }
    assert!(!text.contains("panicked"), "{text}");
    text
}

/// Row 10: a request YAML reads as a float (`cpu: 1e30`) is placed at its line and column,
/// not at the document's first line.
#[test]
fn an_unreadable_quantity_is_placed_where_it_is_written() {
    refused(
        &["check", &input("b13-huge-cpu-request.yaml")],
        &["b13-huge-cpu-request.yaml:18:27: resources.requests.cpu: `1e+30`"],
    );
}
