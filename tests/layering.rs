//! The layers import only downwards: each top-level module of `src/` may use the modules listed
//! for it below and nothing else (ARCHITECTURE.md draws the same picture). Test modules
//! (`#[cfg(test)]`, in their parent's file or in their own, `#[cfg(test)] mod name;` of any
//! visibility) and comments are left out: tests may reach anything, except in the layers
//! below the model, whose tests build their clusters in the cluster layer
//! (`cluster::fixture`) rather than through the loader and the model.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What each layer may import, from the top of the picture down.
const ALLOWED: &[(&str, &[&str])] = &[
    (
        "cli",
        &[
            "bench", "report", "scaler", "input", "model", "cluster", "engine", "cases",
        ],
    ),
    (
        "bench",
        &[
            "report", "scaler", "input", "model", "cluster", "engine", "cases",
        ],
    ),
    ("report", &["scaler", "model", "cluster", "engine"]),
    ("scaler", &["input", "model", "cluster", "engine"]),
    ("input", &["model", "cluster", "engine", "cases"]),
    (
        "model",
        &["controllers", "events", "intents", "cluster", "engine"],
    ),
    ("controllers", &["cluster"]),
    ("events", &["cluster"]),
    ("intents", &["cluster"]),
    ("cluster", &[]),
    ("engine", &[]),
    ("cases", &[]),
];

/// The code of a source file without its test module and without comments.
fn production_code(text: &str) -> String {
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    without_comments(code)
}

/// `code` without its comment lines.
fn without_comments(code: &str) -> String {
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules that `code` names through `crate::`.
fn imported_layers(code: &str) -> BTreeSet<String> {
    let mut layers = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name = item.trim().split("::").next().unwrap_or("").trim();
                if !name.is_empty() {
                    layers.insert(name.to_string());
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            layers.insert(name);
        }
    }
    layers
}

/// The files of the test modules that `file`, whose code is `text`, declares in files of their
/// own (`#[cfg(test)] mod name;`): `name.rs` or `name/mod.rs` beside a `mod.rs`, under a
/// folder named as the file otherwise.
fn test_module_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let folder = match file.file_name().and_then(|name| name.to_str()) {
        Some("mod.rs" | "lib.rs" | "main.rs") => file.parent().expect("a folder").to_path_buf(),
        _ => file.with_extension(""),
    };
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        rest = &rest[at + "#[cfg(test)]".len()..];
        let item = rest.trim_start();
        let item = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|visibility| item.strip_prefix(visibility))
            .unwrap_or(item);
        let Some(declared) = item.strip_prefix("mod ") else {
            continue;
        };
        let name: String = declared
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if declared[name.len()..].trim_start().starts_with(';') {
            found.push(folder.join(format!("{name}.rs")));
            found.push(folder.join(&name).join("mod.rs"));
        }
    }
    found
}

fn visit(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            visit(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn no_layer_imports_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut files = Vec::new();
    visit(&src, &mut files);
    let test_files: BTreeSet<PathBuf> = files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).expect("a source file");
            test_module_files(file, &text)
        })
        .collect();
    let mut violations = Vec::new();
    for file in files.iter().filter(|file| !test_files.contains(*file)) {
        let relative = file.strip_prefix(&src).expect("under src");
        let layer = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a name")
            .trim_end_matches(".rs")
            .to_string();
        if layer == "lib" || layer == "main" {
            continue;
        }
        let Some(permitted) = allowed.get(layer.as_str()) else {
            violations.push(format!(
                "{}: layer `{layer}` is not in the layering table",
                relative.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file");
        for imported in imported_layers(&production_code(&text)) {
            if imported != layer && !permitted.contains(&imported.as_str()) {
                violations.push(format!(
                    "{}: `{layer}` imports `{imported}`, which is not below it",
                    relative.display()
                ));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// The layers whose tests, too, import only what their code may: those the model composes, so
/// that a controller's test does not depend on the loader or the model above it.
const TESTED_IN_THEIR_LAYER: &[&str] = &["controllers", "events", "intents"];

/// The layers that the code of the files under `src/<layer>`, their tests included, imports
/// beyond what `layer` may: one line per file and layer.
fn imports_from_above_in_tests(src: &Path, layer: &str) -> Vec<String> {
    let permitted = ALLOWED
        .iter()
        .find(|(name, _)| *name == layer)
        .map(|(_, permitted)| *permitted)
        .expect("a layer in the table");
    let mut files = Vec::new();
    visit(&src.join(layer), &mut files);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a source file");
        for imported in imported_layers(&without_comments(&text)) {
            if imported != layer && !permitted.contains(&imported.as_str()) {
                found.push(format!(
                    "{}: `{layer}` imports `{imported}`",
                    file.strip_prefix(src).expect("under src").display()
                ));
            }
        }
    }
    found
}

#[test]
fn the_tests_of_the_controllers_events_and_intents_import_only_from_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let violations: Vec<String> = TESTED_IN_THEIR_LAYER
        .iter()
        .flat_map(|layer| imports_from_above_in_tests(&src, layer))
        .collect();
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_scanner_sees_grouped_and_plain_imports() {
    let code = "use crate::{controllers, events::run};\nlet x = crate::engine::check(m);\n\
                // use crate::cli;\n#[cfg(test)]\nmod tests { use crate::bench; }";
    let layers = imported_layers(&production_code(code));
    assert_eq!(
        layers.into_iter().collect::<Vec<_>>(),
        vec!["controllers", "engine", "events"]
    );
}

#[test]
fn test_modules_in_their_own_files_are_test_code() {
    let code = "mod canonical;\n#[cfg(test)]\nmod listing_tests;\n#[cfg(test)]\nmod tests {}";
    let symmetry = Path::new("src/model/symmetry/mod.rs");
    assert_eq!(
        test_module_files(symmetry, code),
        vec![
            PathBuf::from("src/model/symmetry/listing_tests.rs"),
            PathBuf::from("src/model/symmetry/listing_tests/mod.rs"),
        ]
    );
    let sweep = Path::new("src/scaler/sweep.rs");
    assert_eq!(
        test_module_files(sweep, "#[cfg(test)] mod checks;"),
        vec![
            PathBuf::from("src/scaler/sweep/checks.rs"),
            PathBuf::from("src/scaler/sweep/checks/mod.rs"),
        ]
    );
}
