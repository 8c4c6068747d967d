//! The problems found in a document, collected rather than thrown, and the small checks every
//! part of the document shares (integers in range, label values, names that are numbers, the
//! census of label keys and values the model's limits apply to).

use super::MAX_PROBLEMS;
use crate::input::uniform::schema::Labels;
use crate::input::uniform::LoadError;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The problems found so far.
#[derive(Debug, Default)]
pub struct Problems {
    found: Vec<LoadError>,
    more: usize,
}

impl Problems {
    /// Records a problem with the value at `path`.
    pub fn add(
        &mut self,
        path: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        if self.found.len() < MAX_PROBLEMS {
            self.found.push(LoadError::new(path, message, fix));
        } else {
            self.more += 1;
        }
    }

    /// `Ok` when nothing was found, otherwise every problem as one error.
    pub fn into_result(self) -> Result<(), LoadError> {
        let mut found = self.found.into_iter();
        match found.next() {
            None => Ok(()),
            Some(mut first) => {
                first.others = found.collect();
                if self.more > 0 {
                    first.others.push(LoadError::new(
                        "…",
                        format!("{} more problems not listed", self.more),
                        "fix the ones above and run again",
                    ));
                }
                Err(first)
            }
        }
    }

    /// A required integer at `path.key` within `lo..=hi`.
    pub(crate) fn required(
        &mut self,
        path: &str,
        key: &str,
        value: Option<i64>,
        lo: i64,
        hi: i64,
        what: &str,
    ) {
        match value {
            None => self.add(
                format!("{path}.{key}"),
                "missing",
                format!("add `{key}`: {what}, from {lo} to {hi}; it has no default"),
            ),
            Some(v) => self.within(path, key, Some(v), lo, hi, what),
        }
    }

    /// An optional integer at `path.key` within `lo..=hi` when given.
    pub(crate) fn within(
        &mut self,
        path: &str,
        key: &str,
        value: Option<i64>,
        lo: i64,
        hi: i64,
        what: &str,
    ) {
        if let Some(v) = value {
            if v < lo || v > hi {
                let problem = if v < 0 && lo >= 0 {
                    format!("{v} is negative")
                } else {
                    format!("{v} is out of range")
                };
                self.add(
                    format!("{path}.{key}"),
                    problem,
                    format!("give {what}, from {lo} to {hi}"),
                );
            }
        }
    }
}

/// Whether a label value has a type Kivi's labels take.
fn label_value_ok(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Number(_))
}

/// Checks that every label at `path.labels` has a value of a type labels take.
pub(super) fn labels(problems: &mut Problems, path: &str, labels: &Option<Labels>) {
    for (key, value) in labels.iter().flatten() {
        if !label_value_ok(value) {
            problems.add(
                format!("{path}.labels.{key}"),
                format!("{value} is not a label value"),
                "give a string or a number",
            );
        }
    }
}

/// The integer in `value` (a node's or deployment's name), if it is a whole number, 0 or more.
pub fn integer_name(value: &Option<Value>) -> Option<i64> {
    value.as_ref().and_then(Value::as_i64).filter(|&n| n >= 0)
}

/// Every distinct label value per key, to check the model's limits on labels.
#[derive(Default)]
pub(super) struct LabelCensus(pub(super) BTreeMap<String, BTreeSet<String>>);

impl LabelCensus {
    /// Counts the keys and values of `labels`.
    pub(super) fn add(&mut self, labels: &Option<Labels>) {
        for (key, value) in labels.iter().flatten() {
            self.0
                .entry(key.clone())
                .or_default()
                .insert(value.to_string());
        }
    }

    /// Counts `key`, a label key without a value here (a default label, a topology key).
    pub(super) fn key(&mut self, key: &str) {
        self.0.entry(key.to_string()).or_default();
    }
}
