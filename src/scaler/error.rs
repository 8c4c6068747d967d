//! The error reported for a template that cannot be scaled.

use std::fmt;

/// A malformed scaling template: where the problem is, what it is, and how to fix it.
///
/// Returned instead of panicking so that a user who hand-writes a template sees
/// exactly which JSON field to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// JSON path of the offending value, e.g. `userDefined.dTypes[0].maxSize`.
    pub path: String,
    /// What is wrong with the value.
    pub problem: String,
    /// What to write instead.
    pub fix: String,
}

impl TemplateError {
    /// Builds an error for the value at `path`.
    pub fn new(
        path: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        TemplateError {
            path: path.into(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}; fix: {}", self.path, self.problem, self.fix)
    }
}

impl std::error::Error for TemplateError {}
