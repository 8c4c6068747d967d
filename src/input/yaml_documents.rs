//! Multi-document YAML (and JSON, a subset of it) read into JSON values, keeping each
//! document's first line so that errors point into the file.
//!
//! Manifests concatenated without a `---` separator (as Kivi's `h2.yaml`) are split where a
//! top-level key such as `apiVersion` repeats, with a warning, instead of letting the second
//! object silently overwrite the first.

use super::diagnostics::{Diagnostics, InputError, Place};
use serde_json::Value;

/// One YAML document of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The file it came from.
    pub file: String,
    /// 1-based line of the document's first line in the file.
    pub first_line: usize,
    /// The document's text (shared by the objects of a `List`, which are documents of their
    /// own).
    pub text: std::sync::Arc<str>,
    /// The document as JSON (`Null` for an empty document).
    pub value: Value,
    /// Where `value` lies in the document as the user wrote it: empty for the whole document,
    /// `kivi` for the cluster description under a `kivi:` key. Errors about entries of the
    /// value name their place with it.
    pub within: String,
}

impl Document {
    /// A part of this document holding `value` (an object of a `List`): the same file, text
    /// and place, without copying the document's own value.
    pub fn part(&self, value: Value) -> Document {
        Document {
            file: self.file.clone(),
            first_line: self.first_line,
            text: self.text.clone(),
            value,
            within: self.within.clone(),
        }
    }

    /// The path of `path` (inside the value) in the document as the user wrote it.
    pub fn user_path(&self, path: &str) -> String {
        match (self.within.is_empty(), path.starts_with('[')) {
            (true, _) => path.to_string(),
            (false, true) => format!("{}{path}", self.within),
            (false, false) => format!("{}.{path}", self.within),
        }
    }
}

impl Document {
    /// The place of the first line holding `needle` inside this document, or its first line.
    pub fn place_of(&self, needle: &str) -> Place {
        self.place_of_nth(needle, 0)
    }

    /// The place of the `n`-th (0-based) line holding `needle`, or the document's first line.
    pub fn place_of_nth(&self, needle: &str, n: usize) -> Place {
        self.text
            .lines()
            .enumerate()
            .filter_map(|(index, line)| {
                line.find(needle).map(|column| Place {
                    line: self.first_line + index,
                    column: column + 1,
                })
            })
            .nth(n)
            .unwrap_or(Place {
                line: self.first_line,
                column: 1,
            })
    }

    /// The place of the value at `path` (`spec.containers[0].resources`, or any tail of the
    /// full path), found by its keys ([`super::yaml_places`]), or the document's first line.
    pub fn place_of_path(&self, path: &str) -> Place {
        let Some(offset) = super::yaml_places::offset_of_path(&self.text, path) else {
            return Place {
                line: self.first_line,
                column: 1,
            };
        };
        let before = &self.text[..offset];
        let line_start = before.rfind('\n').map_or(0, |at| at + 1);
        Place {
            line: self.first_line + before.matches('\n').count(),
            column: before[line_start..].chars().count() + 1,
        }
    }

    /// An error about the value at `path`, placed where [`Document::place_of_path`] finds it.
    pub fn error_at_path(&self, path: &str, message: impl Into<String>) -> InputError {
        InputError::new(&self.file, Some(self.place_of_path(path)), message)
    }

    /// An error about this document, placed at the first line holding `needle`.
    pub fn error_at(&self, needle: &str, message: impl Into<String>) -> InputError {
        InputError::new(&self.file, Some(self.place_of(needle)), message)
    }
}

/// Splits `text` (the contents of `file`) into documents and parses each one.
pub fn read_documents(
    file: &str,
    text: &str,
    diagnostics: &mut Diagnostics,
) -> Result<Vec<Document>, InputError> {
    let mut documents = Vec::new();
    for (first_line, chunk) in split(file, text, diagnostics) {
        if chunk.trim().is_empty() || chunk.lines().all(is_comment_or_blank) {
            continue;
        }
        let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(&chunk).map_err(|error| {
            let place = error.location().map(|location| Place {
                line: first_line + location.line().saturating_sub(1),
                column: location.column(),
            });
            InputError::new(
                file,
                place.or(Some(Place {
                    line: first_line,
                    column: 1,
                })),
                format!("not valid YAML: {error}"),
            )
        })?;
        let mut document = Document {
            file: file.to_string(),
            first_line,
            text: chunk.into(),
            value: Value::Null,
            within: String::new(),
        };
        if let Some((path, number)) = non_finite(&yaml, String::new()) {
            let key = path.rsplit('.').next().unwrap_or(&path).to_string();
            return Err(document.error_at(
                &format!("{key}:"),
                format!(
                    "{path}: {number} is not a finite number; write the number meant (YAML's \
                     .nan and .inf are not values Kubernetes or kivi accept)"
                ),
            ));
        }
        document.value = serde_json::to_value(&yaml)
            .map_err(|error| document.error_at("", format!("cannot be read as JSON: {error}")))?;
        if document.value.is_null() {
            continue;
        }
        documents.push(document);
    }
    Ok(documents)
}

/// The path and text of the first `.nan`, `.inf` or `-.inf` in `value`: converted to JSON they
/// would silently become `null`, and a field then takes its default.
fn non_finite(value: &serde_yaml_ng::Value, path: String) -> Option<(String, String)> {
    use serde_yaml_ng::Value as Yaml;
    match value {
        Yaml::Number(number) => number
            .as_f64()
            .filter(|float| !float.is_finite())
            .map(|float| {
                let text = if float.is_nan() {
                    ".nan"
                } else if float > 0.0 {
                    ".inf"
                } else {
                    "-.inf"
                };
                (path, text.to_string())
            }),
        Yaml::Sequence(items) => items
            .iter()
            .enumerate()
            .find_map(|(index, item)| non_finite(item, format!("{path}[{index}]"))),
        Yaml::Mapping(entries) => entries.iter().find_map(|(key, item)| {
            let key = match key {
                Yaml::String(key) => key.clone(),
                other => serde_yaml_ng::to_string(other)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            };
            let child = if path.is_empty() {
                key
            } else {
                format!("{path}.{key}")
            };
            non_finite(item, child)
        }),
        Yaml::Tagged(tagged) => non_finite(&tagged.value, path),
        _ => None,
    }
}

fn is_comment_or_blank(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}

/// The 1-based number of the document of the multi-document `text` that holds line `line`,
/// counting documents as [`read_documents`] reads them (empty and comment-only ones are not
/// documents): how an error on a stream without file names says which manifest it is in.
pub fn document_number(text: &str, line: usize) -> usize {
    split("", text, &mut Diagnostics::default())
        .iter()
        .filter(|(start, chunk)| {
            *start <= line && !(chunk.trim().is_empty() || chunk.lines().all(is_comment_or_blank))
        })
        .count()
        .max(1)
}

/// Splits at `---` lines and before a repeated top-level key; yields (first line, text).
fn split(file: &str, text: &str, diagnostics: &mut Diagnostics) -> Vec<(usize, String)> {
    let mut chunks = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    let mut keys: Vec<String> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.starts_with("---") || line.starts_with("...") {
            chunks.push((start, std::mem::take(&mut current)));
            keys.clear();
            start = number + 1;
            continue;
        }
        if let Some(key) = top_level_key(line) {
            if keys.contains(&key) {
                diagnostics.warn(format!(
                    "{file}:{number}: top-level key `{key}` repeats without a `---` separator; \
                     reading a new document from this line"
                ));
                chunks.push((start, std::mem::take(&mut current)));
                keys.clear();
                start = number;
            }
            keys.push(key);
        }
        current.push_str(line);
        current.push('\n');
    }
    chunks.push((start, current));
    chunks
}

/// The key of a `key:` line at column 0 of a block mapping.
fn top_level_key(line: &str) -> Option<String> {
    let first = line.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    let (key, _) = line.split_once(':')?;
    key.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        .then(|| key.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_documents_and_keeps_their_first_lines() {
        let mut diagnostics = Diagnostics::default();
        let text = "a: 1\n---\n# comment\nb: 2\n";
        let documents = read_documents("f.yaml", text, &mut diagnostics).unwrap();
        assert_eq!(documents.len(), 2);
        assert_eq!(documents[1].first_line, 3);
        assert_eq!(documents[1].value["b"], 2);
        assert!(diagnostics.warnings.is_empty());
    }

    #[test]
    fn numbers_documents_as_they_are_read() {
        let text = "---\n# a comment only\n---\na: 1\n---\n\nb: 2\nc: 3\n";
        assert_eq!(
            document_number(text, 4),
            1,
            "the comment-only document is not one"
        );
        assert_eq!(document_number(text, 8), 2);
        assert_eq!(document_number(text, 1), 1);
    }

    #[test]
    fn splits_concatenated_manifests_with_a_warning() {
        let mut diagnostics = Diagnostics::default();
        let text = "apiVersion: v1\nkind: Pod\napiVersion: v1\nkind: Node\n";
        let documents = read_documents("f.yaml", text, &mut diagnostics).unwrap();
        assert_eq!(documents.len(), 2);
        assert_eq!(documents[1].value["kind"], "Node");
        assert_eq!(
            diagnostics.warnings,
            vec![
                "f.yaml:3: top-level key `apiVersion` repeats without a `---` separator; \
                 reading a new document from this line"
            ]
        );
    }

    #[test]
    fn non_finite_numbers_are_errors_naming_the_field_and_line() {
        let mut diagnostics = Diagnostics::default();
        for (text, path, line) in [
            ("spec:\n  replicas: .nan\n", "spec.replicas: .nan", 2),
            (
                "a: 1\n---\nspec:\n  minReplicas: -.inf\n",
                "spec.minReplicas: -.inf",
                4,
            ),
            (
                "nodesTypes:\n- maxSize: .inf\n",
                "nodesTypes[0].maxSize: .inf",
                2,
            ),
        ] {
            let error = read_documents("f.yaml", text, &mut diagnostics).unwrap_err();
            assert!(error.to_string().contains(path), "{error}");
            assert_eq!(error.place.unwrap().line, line, "{error}");
        }
        let documents = read_documents("f.yaml", "x: 1.5\n", &mut diagnostics).unwrap();
        assert_eq!(documents[0].value["x"], 1.5);
    }

    #[test]
    fn syntax_errors_name_the_line_in_the_file() {
        let mut diagnostics = Diagnostics::default();
        let text = "a: 1\n---\nb: [1, 2\n";
        let error = read_documents("f.yaml", text, &mut diagnostics).unwrap_err();
        assert_eq!(error.file, "f.yaml");
        assert!(error.place.unwrap().line >= 3, "{error}");
    }
}
