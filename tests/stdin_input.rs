//! `kivi check -` and `kivi dump -`: standard input (one YAML stream, as `helm template` or
//! `kustomize build` print it, or a uniform-JSON document) gives what the same text gives from
//! a file, and bad input on stdin exits 2 with an error that names `<stdin>` and the place.

use crate::support::cli;

use cli::kivi_with_stdin as kivi;

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

const INPUTS: [&str; 6] = [
    "tests/data/input/single-file.yaml",
    "tests/data/input/pod-spreading.yaml",
    "tests/data/input/hostname-spread.yaml",
    "tests/data/input/assorted.yaml",
    "cases/c3/template.json",
    "cases/c5/original.json",
];

#[test]
fn stdin_gives_what_the_file_gives() {
    for path in INPUTS {
        let text = read(path);
        for command in [
            &["dump"][..],
            &["check", "-q"],
            &["check", "-q", "--original"],
        ] {
            let from_file = kivi(&[command, &[path]].concat(), None);
            let from_stdin = kivi(&[command, &["-"]].concat(), Some(&text));
            assert_eq!(
                from_file.status.code(),
                from_stdin.status.code(),
                "{path} {command:?}"
            );
            let (file_out, stdin_out) = (
                String::from_utf8_lossy(&from_file.stdout),
                String::from_utf8_lossy(&from_stdin.stdout),
            );
            let timing = |s: &str| {
                s.lines()
                    .filter(|l| {
                        // Timings, and how many checks a parallel sweep finished beyond the
                        // answer, vary from run to run.
                        !l.contains("time")
                            && !l.contains("Elapsed")
                            && !l.contains("thread")
                            && !l.contains("checks finished")
                    })
                    .map(|l| l.replace(path, "<stdin>"))
                    .collect::<Vec<_>>()
            };
            assert_eq!(timing(&file_out), timing(&stdin_out), "{path} {command:?}");
        }
    }
}

#[test]
fn bad_stdin_exits_2_naming_stdin_and_the_place() {
    let output = kivi(
        &["check", "-"],
        Some(&read("tests/data/input/bad-yaml.yaml")),
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: <stdin>:7:1 (document 1): not valid YAML"),
        "{stderr}"
    );

    // A stream names no files: the error says which of its documents is wrong.
    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n";
    let stream = format!(
        "---\n# Source: chart/templates/a.yaml\n---\n{config_map}---\n{config_map}---\n{}",
        read("tests/data/input/bad-yaml.yaml")
    );
    let output = kivi(&["check", "-"], Some(&stream));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: <stdin>:20:1 (document 3): not valid YAML"),
        "{stderr}"
    );

    let output = kivi(&["check", "-"], Some(""));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("<stdin>: nothing to verify"));

    let output = kivi(&["check", "-", "--from-cluster-dump"], Some("{}"));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("a live-cluster dump is a directory"));
}

/// The manifests of a models/ example as one stream, as `helm template` would print them.
fn stream_of(model: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("models/{model}/yaml"));
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[test]
fn a_stream_with_cluster_config_gives_what_the_model_directory_gives() {
    for model in [
        "c1-hpa-oscillation",
        "c3-spread-hpa",
        "c5-descheduler-duplicates",
        "c8-spot-spread-descheduler",
        "shop-5000-nodes",
    ] {
        let directory = format!("models/{model}");
        let config = format!("models/{model}/user_input");
        let from_dir = kivi(&["dump", &directory], None);
        let from_stdin = kivi(
            &["dump", "-", "--cluster-config", &config],
            Some(&stream_of(model)),
        );
        assert_eq!(from_dir.status.code(), Some(0), "{model}");
        assert_eq!(from_dir.stdout, from_stdin.stdout, "{model}");
    }
    let output = kivi(
        &[
            "check",
            "-",
            "--cluster-config",
            "models/c3-spread-hpa/user_input",
            "-q",
        ],
        Some(&stream_of("c3-spread-hpa")),
    );
    assert_eq!(output.status.code(), Some(1), "C3's violation");
    let output = kivi(
        &[
            "check",
            "models/c3-spread-hpa",
            "--cluster-config",
            "models/c3-spread-hpa/user_input",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(2), "--cluster-config needs -");
}
