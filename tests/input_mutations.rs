//! Bad input never yields a verdict. From every case and every `models/` example (as the
//! uniform JSON kivi builds from it), every value is mutated in each way a hand-edited file
//! goes wrong — a wrong type, a negative number, zero, a huge number, 2^64, a deleted key, an
//! unknown key beside it — and the document is loaded:
//!
//! - a wrong type, 2^64, a negative value where none is possible, or a deleted required key is
//!   an error naming the mutated path (exit 2 from the command line, checked on a sample);
//! - an unknown key is reported by name, and the model is the same as without it;
//! - whatever loads is checked (bounded in time) without a panic.
//!
//! Truncated and byte-flipped files are covered too. The mutations are deterministic: the same
//! few thousand inputs in every run.

use crate::support::{cli::kivi, scratch};
use kivi::engine::{check, CheckOptions};
use kivi::input::uniform::{load_uniform, unknown_keys};
use kivi::input::{open, InputOptions, Source};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// The documents mutated: each case's two single topologies, and each example's.
fn documents() -> Vec<(String, Value)> {
    let mut documents = Vec::new();
    for case in ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"] {
        for non_violation in [false, true] {
            let source = Source::Case {
                name: case,
                original: true,
                non_violation,
            };
            let opened = open(&source).expect("a case");
            documents.push((opened.name, opened.document));
        }
    }
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut dirs: Vec<_> = std::fs::read_dir(&models)
        .expect("models/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let options = InputOptions {
            original: true,
            verify: true,
            ..InputOptions::default()
        };
        let opened = open(&Source::Path {
            path: &dir,
            options,
        })
        .expect("an example");
        // Examples at Kubernetes' scale (thousands of nodes) are left out: each of their
        // values would be mutated and checked, hours of work, through the same paths as the
        // small examples' values.
        let nodes = opened.document["setup"]["nodes"]
            .as_array()
            .map_or(0, Vec::len);
        if nodes <= 64 {
            documents.push((opened.name, opened.document));
        }
    }
    documents
}

/// One step of a JSON path.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path as the loader writes it: `setup.nodes[0].cpu`.
fn render(path: &[Step]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Key(key) if text.is_empty() => text.push_str(key),
            Step::Key(key) => {
                text.push('.');
                text.push_str(key);
            }
            Step::Index(index) => text.push_str(&format!("[{index}]")),
        }
    }
    text
}

/// Every value's path, depth first.
fn paths(value: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                path.push(Step::Key(key.clone()));
                out.push(path.clone());
                paths(child, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                path.push(Step::Index(index));
                out.push(path.clone());
                paths(child, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(value: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(value, |value, step| match step {
        Step::Key(key) => &mut value[key.as_str()],
        Step::Index(index) => &mut value[*index],
    })
}

/// Values kivi does not read, whose type is free (Kivi's bookkeeping and kivi's own notes).
fn unread(path: &str) -> bool {
    path.starts_with("kiviUnits")
        || path.starts_with("controllers.scheduler")
        || path.starts_with("controllers.deployment")
        || path.starts_with("controllers.hpa")
        || path.ends_with(".first")
}

/// Label values and topology keys may be strings or numbers.
fn label_like(path: &str) -> bool {
    path.contains(".labels.") || path.ends_with(".topologyKey")
}

/// Fields that may be negative: a node's free resources (an overcommitted node), a pod
/// template's priority (a PriorityClass's value may be).
fn may_be_negative(path: &str) -> bool {
    path.ends_with(".cpuLeft")
        || path.ends_with(".memLeft")
        || path.ends_with(".priority")
        || label_like(path)
}

/// Keys without a default.
fn required(path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    let parent = &path[..path.len() - last.len()];
    (parent.starts_with("setup.nodes[")
        && parent.matches('.').count() == 1
        && ["name", "cpu", "memory", "cpuLeft", "memLeft", "status"].contains(&last))
        || (parent.starts_with("setup.d[")
            && parent.matches('.').count() == 1
            && ["name", "replicas", "podTemplateId", "replicaSets"].contains(&last))
        || path == "setup"
        || (parent.starts_with("intents[") && last == "name")
}

/// Whether the error names `path`: the problem itself, or something it contains.
fn names(error: &kivi::input::uniform::LoadError, path: &str) -> bool {
    error.all().any(|problem| {
        problem.path == path
            || problem.path.starts_with(&format!("{path}."))
            || problem.path.starts_with(&format!("{path}["))
    })
}

/// Loads `document`, and when it loads checks it briefly: no panic either way.
fn load_and_check(document: &Value) -> Result<(), kivi::input::uniform::LoadError> {
    let model = load_uniform(document)?;
    let options = CheckOptions {
        threads: 1,
        timeout: Some(Duration::from_millis(500)),
        memory: kivi::engine::MemoryBudget::new(64 << 20),
        ..CheckOptions::default()
    };
    check(&model, &options).expect("a check of a loaded model gives an answer");
    Ok(())
}

#[test]
fn every_value_mutated_every_way() {
    let mut inputs = 0;
    let mut refused = 0;
    let mut sampled = Vec::new();
    for (name, base) in documents() {
        assert!(load_uniform(&base).is_ok(), "{name} loads unmutated");
        let mut all = Vec::new();
        paths(&base, &mut Vec::new(), &mut all);
        for path in &all {
            let text = render(path);
            let original = {
                let mut copy = base.clone();
                at(&mut copy, path).clone()
            };
            let mutations: Vec<(&str, Option<Value>)> = vec![
                (
                    "wrong type",
                    Some(match &original {
                        Value::String(_) => json!([1]),
                        Value::Number(_) => json!("7"),
                        Value::Bool(_) => json!("yes"),
                        Value::Array(_) => json!(1.5),
                        Value::Object(_) => json!(1.5),
                        Value::Null => json!([]),
                    }),
                ),
                ("negative", Some(json!(-5))),
                ("zero", Some(json!(0))),
                ("huge", Some(json!(1_000_000_000_000i64))),
                ("2^64", Some(json!(18_446_744_073_709_551_616f64))),
                ("deleted", None),
            ];
            for (kind, replacement) in mutations {
                let mut document = base.clone();
                match (&replacement, path.split_last()) {
                    (Some(value), _) => *at(&mut document, path) = value.clone(),
                    (None, Some((Step::Key(key), parent))) => {
                        at(&mut document, parent)
                            .as_object_mut()
                            .expect("a key's parent is an object")
                            .remove(key);
                    }
                    (None, _) => continue,
                }
                inputs += 1;
                let result = load_and_check(&document);
                let must_fail = match kind {
                    "wrong type" => {
                        // A label that was a number may become a string: both are labels.
                        let still_a_label = label_like(&text) && original.is_number();
                        !unread(&text) && !still_a_label
                    }
                    "2^64" => !unread(&text) && !label_like(&text) && !text.contains("proportion"),
                    "negative" => original.is_number() && !may_be_negative(&text) && !unread(&text),
                    "deleted" => required(&text),
                    _ => false,
                };
                if must_fail {
                    let error = result
                        .as_ref()
                        .err()
                        .unwrap_or_else(|| panic!("{name}: {text} {kind} was accepted"));
                    assert!(names(error, &text), "{name}: {text} {kind}: {error}");
                }
                if let Err(error) = result {
                    refused += 1;
                    assert!(!error.message.is_empty() && !error.fix.is_empty());
                    if refused % 97 == 0 {
                        sampled.push((document, error.path.clone()));
                    }
                }
            }
            // An unknown key beside the value: named, and otherwise changes nothing.
            if let Some((_, parent)) = path.split_last() {
                let mut document = base.clone();
                if let Some(object) = at(&mut document, parent).as_object_mut() {
                    object.insert("zzTypo".into(), json!(1));
                    inputs += 1;
                    let parent_text = render(parent);
                    let expected = if parent_text.is_empty() {
                        "zzTypo".to_string()
                    } else {
                        format!("{parent_text}.zzTypo")
                    };
                    let unknown = unknown_keys(&document).expect("the shape is right");
                    if !unread(&parent_text)
                        && !parent_text.ends_with(".labels")
                        && !parent_text.contains(".profiles[")
                    {
                        assert!(
                            unknown.contains(&expected),
                            "{name}: {expected}: {unknown:?}"
                        );
                    }
                    if unknown.contains(&expected) {
                        let model = load_uniform(&document).expect("loads");
                        let plain = load_uniform(&base).expect("loads");
                        assert_eq!(model.spec(), plain.spec(), "{name}: {expected}");
                    }
                }
            }
        }
    }
    println!("{inputs} mutated inputs, {refused} refused");
    assert!(inputs > 5_000, "{inputs} inputs");
    assert!(refused > 1_000, "{refused} refused");
    // The command line says the same: exit 2, the path named.
    let directory = scratch("mutations");
    for (i, (document, path)) in sampled.iter().enumerate().take(40) {
        let file = directory.join(format!("m{i}.json"));
        std::fs::write(&file, serde_json::to_string(document).unwrap()).unwrap();
        let output = kivi(&["check", file.to_str().unwrap(), "-q"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{path}: {stderr}");
        assert!(stderr.contains(path.as_str()), "{path}: {stderr}");
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

#[test]
fn truncated_and_byte_flipped_files_never_panic() {
    for (name, base) in documents() {
        let text = serde_json::to_string_pretty(&base).unwrap();
        let bytes = text.as_bytes();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for cut in (0..bytes.len()).step_by(bytes.len() / 60 + 1) {
            if let Ok(value) = serde_json::from_slice::<Value>(&bytes[..cut]) {
                let _ = load_and_check(&value);
            }
        }
        for _ in 0..60 {
            let mut flipped = bytes.to_vec();
            for _ in 0..3 {
                let at = (next() % flipped.len() as u64) as usize;
                flipped[at] ^= 1 << (next() % 8);
            }
            if let Ok(value) = serde_json::from_slice::<Value>(&flipped) {
                let _ = load_and_check(&value);
                let _ = unknown_keys(&value);
            }
        }
        assert!(load_uniform(&base).is_ok(), "{name}");
    }
}
