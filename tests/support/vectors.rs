//! Recorded conformance vectors (kube-scheduler's and the descheduler's decisions), read from
//! the gzipped JSON Lines bundle in `tests/data/` or from a directory laid out as a recording
//! is (`scenarios/NAME`, `expected/NAME`), which the `KIVI_KUBE_*_VECTORS` variables name.

use flate2::read::GzDecoder;
use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// One recorded decision: its name, the scenario's text and the decision.
pub struct Vector {
    pub name: String,
    pub scenario: String,
    pub expected: Value,
}

/// The vectors of the bundle `bundle` (relative to the repository root); each line is
/// `{"name", "scenario", "expected"}`.
pub fn bundled(bundle: &str) -> Vec<Vector> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(bundle);
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(&path).expect("the bundled vectors are readable"))
        .read_to_string(&mut text)
        .expect("the bundle is gzipped UTF-8");
    text.lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).expect("each line is JSON");
            Vector {
                name: record["name"].as_str().expect("a name").to_string(),
                scenario: record["scenario"].as_str().expect("a scenario").to_string(),
                expected: record["expected"].take(),
            }
        })
        .collect()
}

/// The vectors of a directory laid out as the recording is, by file name.
pub fn in_directory(dir: &Path) -> Vec<Vector> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("scenarios"))
        .unwrap_or_else(|error| panic!("{}/scenarios: {error}", dir.display()))
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into()
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let read = |sub: &str| {
                let path = dir.join(sub).join(&name);
                std::fs::read_to_string(&path)
                    .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
            };
            Vector {
                expected: serde_json::from_str(&read("expected")).expect("a JSON decision"),
                scenario: read("scenarios"),
                name,
            }
        })
        .collect()
}

/// The vectors of the directory the environment variable `variable` names, if it is set (at
/// least one: a directory without any is a mistake in the variable).
pub fn more_from(variable: &str) -> Option<Vec<Vector>> {
    let dir = std::env::var_os(variable)?;
    let more = in_directory(Path::new(&dir));
    assert!(!more.is_empty(), "{variable} names no vectors");
    Some(more)
}
