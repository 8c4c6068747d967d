//! `kivi bench CONFIG`: a sweep definition runs into CSV, Markdown and SVG result files with
//! the machine facts; bad definitions are input errors; the committed definitions are valid.

use crate::support::{cli, scratch};

use cli::kivi;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Runs the sweep defined in `config` into a `results` folder beside it.
fn run_sweep(config: &Path) -> (PathBuf, Output) {
    let out = config.with_file_name("results");
    let output = kivi(&[
        "bench",
        config.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    (out, output)
}

#[test]
fn a_sweep_writes_its_results_with_medians_speedups_and_machine_facts() {
    let dir = scratch("sweep");
    let config = dir.join("tiny.json");
    std::fs::write(
        &config,
        r#"{
          "title": "Tiny sweep",
          "repetitions": 2,
          "runs": [
            {"name": "scaling", "mode": "scaling", "cases": ["c2", "c3"], "threads": [1, 2],
             "total_reference": {"label": "Kivi + SPIN", "seconds": 297}},
            {"name": "one topology", "mode": "single", "cases": ["c3"], "variant": "non-violation",
             "topology": "16,16:127", "threads": [1], "repetitions": 1},
            {"name": "growing", "mode": "scale-up", "cases": ["c1"], "variant": "non-violation",
             "grow": {"nodes_per_type": [1, 4, 5001], "pods_per_node": 6}, "threads": [1]}
          ],
          "plots": [{"suffix": "speedup", "title": "S", "x": "threads", "y": "speedup",
                     "series": ["input"], "runs": ["scaling"]}]
        }"#,
    )
    .unwrap();
    let (out, output) = run_sweep(&config);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let csv = std::fs::read_to_string(out.join("tiny.csv")).expect("tiny.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<String>> = lines
        .map(|line| {
            // The minimal topology is the only quoted field: emptied, its commas gone.
            let unquoted: String = line.split('"').step_by(2).collect();
            unquoted.split(',').map(str::to_string).collect()
        })
        .collect();
    let field = |row: &Vec<String>, name: &str| {
        row[header.iter().position(|column| *column == name).unwrap()].clone()
    };
    // 2 cases × 2 thread counts + 1 single + 2 scale-up sizes (5,001 nodes is over the 5,000-node limit).
    assert_eq!(rows.len(), 7, "{csv}");
    let c3: Vec<&Vec<String>> = rows
        .iter()
        .filter(|row| field(row, "run") == "scaling" && field(row, "input") == "c3")
        .collect();
    assert_eq!(c3.len(), 2);
    for row in &c3 {
        assert_eq!(field(row, "verdict"), "violation");
        assert_eq!(field(row, "decided"), "58");
        assert_eq!(field(row, "minimal_nodes"), "3");
        assert_eq!(field(row, "repetitions"), "2");
    }
    assert_eq!(field(c3[0], "speedup"), "1.000");
    let single = rows
        .iter()
        .find(|row| field(row, "run") == "one topology")
        .unwrap();
    assert_eq!(field(single, "states"), "1531");
    assert_eq!(field(single, "nodes"), "32");
    assert_eq!(
        field(single, "repetitions"),
        "1",
        "the run's own repetitions"
    );
    let growing: Vec<String> = rows
        .iter()
        .filter(|row| field(row, "run") == "growing")
        .map(|row| field(row, "topology"))
        .collect();
    assert_eq!(growing, ["1:6", "4:24"]);

    let markdown = std::fs::read_to_string(out.join("tiny.md")).expect("tiny.md");
    assert!(markdown.starts_with("# Tiny sweep\n"), "{markdown}");
    for expected in [
        "- machine: ",
        "- commit: ",
        "## scaling",
        "Kivi + SPIN: 297 s",
        "5001 nodes per type would exceed",
    ] {
        assert!(
            markdown.contains(expected),
            "no '{expected}' in:\n{markdown}"
        );
    }
    let svg = std::fs::read_to_string(out.join("tiny-speedup.svg")).expect("tiny-speedup.svg");
    assert!(svg.starts_with("<svg"));
}

#[test]
fn a_bad_definition_names_the_file_and_place_and_exits_2() {
    let dir = scratch("bad");
    let config = dir.join("bad.json");
    std::fs::write(
        &config,
        r#"{"title": "t", "runs": [{"name": "r", "mode": "single", "cases": ["c3"], "scale": 6}]}"#,
    )
    .unwrap();
    let output = kivi(&["bench", config.to_str().unwrap(), "--dry-run"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.json: runs[0].scale: single mode does not sweep"),
        "{stderr}"
    );
    std::fs::write(&config, "{\"title\": \"t\",\n \"runs\": [}").unwrap();
    let output = kivi(&["bench", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("bad.json:2:"));
}

#[test]
fn the_committed_definitions_are_valid() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench-configs");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).expect("bench-configs/") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "json") {
            let output = kivi(&["bench", path.to_str().unwrap(), "--dry-run"]);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(String::from_utf8_lossy(&output.stdout).contains("kivi check"));
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} definitions");
}

#[test]
fn a_failing_measurement_is_listed_and_the_rest_still_written() {
    let dir = scratch("failing");
    let config = dir.join("mixed.json");
    std::fs::write(
        &config,
        r#"{"title": "Mixed", "runs": [
             {"name": "fine", "mode": "scaling", "cases": ["c2"], "threads": [1]},
             {"name": "broken", "mode": "single", "inputs": ["no/such/file.json"], "threads": [1]}
           ]}"#,
    )
    .unwrap();
    let (out, output) = run_sweep(&config);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("1 measurement(s) failed"));
    let markdown = std::fs::read_to_string(out.join("mixed.md")).expect("mixed.md");
    assert!(
        markdown.contains("FAILED, left out of the tables"),
        "{markdown}"
    );
    assert!(markdown.contains("no/such/file.json"), "{markdown}");
    assert!(
        markdown.contains("| c2 | violation | 0 | 1 | violation |"),
        "{markdown}"
    );
}
