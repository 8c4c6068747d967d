//! What a front-end reports besides the model: errors that stop the translation, warnings about
//! things it could not model faithfully, and objects it ignored.

use crate::cluster::Semantics;
use std::fmt;

/// A place in an input file: 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// An input that cannot be translated: which file, where in it, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file (as given on the command line or found in a directory).
    pub file: String,
    /// Where in the file, when known.
    pub place: Option<Place>,
    /// What is wrong and what was expected.
    pub message: String,
    /// In a multi-document stream read from standard input, the 1-based number of the document
    /// the place is in: a stream has no file names to tell its manifests apart.
    pub document: Option<usize>,
}

impl InputError {
    /// An error in `file` at `place`.
    pub fn new(file: impl Into<String>, place: Option<Place>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            place,
            message: message.into(),
            document: None,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.place, self.document) {
            (Some(place), Some(document)) => write!(
                f,
                "{}:{}:{} (document {document}): {}",
                self.file, place.line, place.column, self.message
            ),
            (Some(place), None) => write!(
                f,
                "{}:{}:{}: {}",
                self.file, place.line, place.column, self.message
            ),
            (None, _) => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for InputError {}

/// Warnings and ignored objects collected while translating, in the order they were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Things that were modelled approximately or not at all, each naming the object and field.
    pub warnings: Vec<String>,
    /// Objects of kinds that do not affect scheduling or scaling, as `file: Kind/name`.
    pub ignored: Vec<String>,
    /// Fields the input's format does not have (a misspelt key), each with its place: warnings,
    /// or errors with `--strict`.
    pub unknown_fields: Vec<String>,
    /// Values the model cannot hold exactly, each naming the object, the field, the given and
    /// the modelled value and which way the verdict may move: warnings, or errors with
    /// `--strict`.
    pub inexact: Vec<String>,
    /// Warnings that hold under `--semantics kivi` only: what Kivi's descheduler drops of a
    /// `DeschedulerPolicy` that `--semantics kubernetes` runs whole.
    pub under_kivi: Vec<String>,
}

impl Diagnostics {
    /// Records a warning.
    pub fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }

    /// Records a field the format does not have.
    pub fn unknown_field(&mut self, message: impl Into<String>) {
        self.unknown_fields.push(message.into());
    }

    /// Records a value the model cannot hold exactly.
    pub fn inexact(&mut self, message: impl Into<String>) {
        self.inexact.push(message.into());
    }

    /// With `strict`, the unknown fields and the inexact values as one error (one line each);
    /// otherwise nothing.
    pub fn strict_error(&self, strict: bool) -> Result<(), String> {
        if !strict || (self.unknown_fields.is_empty() && self.inexact.is_empty()) {
            return Ok(());
        }
        let unknown = self
            .unknown_fields
            .iter()
            .map(|field| format!("{field}; correct its spelling or remove it (--strict)"));
        let inexact = self.inexact.iter().map(|value| {
            format!("{value} (--strict; give quantities closer in size, or leave out --strict)")
        });
        Err(unknown.chain(inexact).collect::<Vec<_>>().join("\nerror: "))
    }

    /// Records a warning that holds under `--semantics kivi` only.
    pub fn warn_under_kivi(&mut self, message: impl Into<String>) {
        self.under_kivi.push(message.into());
    }

    /// Records an ignored object.
    pub fn ignore(&mut self, message: impl Into<String>) {
        self.ignored.push(message.into());
    }

    /// The report printed on stderr: one line per warning and ignored object, with the
    /// warnings of [`Self::under_kivi`] (for a command that runs no semantics).
    pub fn to_text(&self) -> String {
        self.to_text_under(Semantics::Kivi)
    }

    /// The report for a check under `semantics`: [`Self::to_text`], without the warnings that
    /// hold under Kivi's semantics only when `semantics` is another.
    pub fn to_text_under(&self, semantics: Semantics) -> String {
        let mut text = String::new();
        for field in &self.unknown_fields {
            text.push_str(&format!(
                "warning: {field}; ignored (check its spelling; --strict makes this an error)\n"
            ));
        }
        for warning in &self.warnings {
            text.push_str(&format!("warning: {warning}\n"));
        }
        if semantics == Semantics::Kivi {
            for warning in &self.under_kivi {
                text.push_str(&format!("warning: {warning}\n"));
            }
        }
        for value in &self.inexact {
            text.push_str(&format!(
                "warning: {value} (--strict makes this an error)\n"
            ));
        }
        for ignored in &self.ignored {
            text.push_str(&format!("ignored: {ignored} (kind not modelled)\n"));
        }
        text
    }
}
