//! Bad input never panics: every numeric field of the cases, set to odd values, either loads
//! and checks, or is refused with an error naming the field.

use std::path::Path;
use std::time::Duration;

use kivi::engine::{check, CheckOptions, Strategy, VisitedKind};
use kivi::input::load_uniform;
use serde_json::Value;

/// JSON paths (as pointer tokens) of every number in `v`.
fn numeric_leaves(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Number(_) => out.push(prefix.to_string()),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                numeric_leaves(x, &format!("{prefix}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                numeric_leaves(x, &format!("{prefix}/{k}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn odd_numbers_anywhere_load_or_are_refused_without_panicking() {
    let options = CheckOptions {
        threads: 1,
        strategy: Strategy::Bfs,
        visited: VisitedKind::Exact,
        depth_limit: Some(40),
        timeout: Some(Duration::from_secs(2)),
        ..CheckOptions::default()
    };
    let (mut loaded, mut refused) = (0, 0);
    for case in ["c1", "c2", "c3", "c4"] {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cases/{case}/original.json"));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut leaves = Vec::new();
        numeric_leaves(&doc, "", &mut leaves);
        for leaf in &leaves {
            for odd in [-1i64, 0, 2, 255, 40_000] {
                let mut bad = doc.clone();
                *bad.pointer_mut(leaf).unwrap() = odd.into();
                match load_uniform(&bad) {
                    Ok(model) => {
                        loaded += 1;
                        check(&model, &options)
                            .unwrap_or_else(|e| panic!("{case} {leaf}={odd}: {e:?}"));
                    }
                    Err(e) => {
                        refused += 1;
                        assert!(!e.path.is_empty() && !e.fix.is_empty(), "{e}");
                    }
                }
            }
        }
    }
    assert!(
        loaded > 0 && refused > 0,
        "loaded {loaded}, refused {refused}"
    );
}
