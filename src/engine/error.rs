//! Why a check gave no answer: a defect in the model or in the engine, never a property of the
//! system under check.

use super::trace::ReplayError;

/// A check that could not give an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckError {
    /// A path the search found did not replay through the model: the model is not
    /// deterministic, or the engine recorded a wrong path.
    Replay(ReplayError),
    /// The model panicked in a worker; every worker was stopped at once. Holds the panic's
    /// message.
    Panicked(String),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Replay(error) => write!(f, "{error}"),
            Self::Panicked(message) => write!(f, "the model panicked: {message}"),
        }
    }
}

impl std::error::Error for CheckError {}

impl From<ReplayError> for CheckError {
    fn from(error: ReplayError) -> Self {
        Self::Replay(error)
    }
}

/// The text of a panic's payload (what `panic!` was given), for messages.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}
