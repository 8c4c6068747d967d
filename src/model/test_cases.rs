//! Loading Kivi's reference cases for unit tests.

use super::ClusterModel;
use crate::cluster::ClusterState;

/// The model of `cases/<case>/<file>.json`.
pub fn load(case: &str, file: &str) -> ClusterModel {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cases/{case}/{file}.json"));
    crate::input::load_uniform_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The model of `cases/<case>/<file>.json` once `edit` has changed the document.
pub fn load_edited(
    case: &str,
    file: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> ClusterModel {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cases/{case}/{file}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut document = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    edit(&mut document);
    crate::input::load_uniform(&document).unwrap_or_else(|e| panic!("{e}"))
}

/// The model of the YAML stream `tests/data/audit/<file>`, read as `kivi check FILE
/// --original` reads it.
pub fn load_audit(file: &str) -> ClusterModel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/audit")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
    let options = crate::input::InputOptions {
        original: true,
        verify: true,
        ..Default::default()
    };
    let translation = crate::input::translate_stream(file, &text, None, options)
        .unwrap_or_else(|e| panic!("{e}"));
    crate::input::load_uniform(&translation.document).unwrap_or_else(|e| panic!("{e}"))
}

/// The initial state of `model` with pod 6 freshly created by deployment 1 (template 1,
/// 8 CPU and 8 memory), not yet queued anywhere.
pub fn with_new_pod(model: &ClusterModel) -> ClusterState {
    crate::cluster::fixture::cases::with_new_pod(model.initial_state())
}

/// The model of the example `models/<dir>`, read as `kivi check models/<dir> --original`
/// reads it, once `edit` has changed its uniform document.
pub fn load_example_edited(dir: &str, edit: impl FnOnce(&mut serde_json::Value)) -> ClusterModel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(dir);
    load_input_edited(&path, edit)
}

/// The model of the input at `path` (a directory or file `kivi check` reads), read as
/// `kivi check PATH --original` reads it, once `edit` has changed its uniform document.
pub fn load_input_edited(
    path: &std::path::Path,
    edit: impl FnOnce(&mut serde_json::Value),
) -> ClusterModel {
    let options = crate::input::InputOptions {
        original: true,
        verify: true,
        ..Default::default()
    };
    let mut translation = crate::input::translate(path, options).unwrap_or_else(|e| panic!("{e}"));
    edit(&mut translation.document);
    crate::input::load_uniform(&translation.document).unwrap_or_else(|e| panic!("{e}"))
}
