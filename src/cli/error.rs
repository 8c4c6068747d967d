//! How a command fails: the user's input is wrong (exit 2), or kivi itself is (exit 4).

use crate::scaler::sweep::SweepError;

/// Exit code for usage and input errors.
pub const EXIT_INPUT_ERROR: i32 = 2;

/// Exit code for an internal error: kivi, not the input, is at fault (a panic in a model or
/// a counterexample that does not replay). No verdict is given.
pub const EXIT_INTERNAL_ERROR: i32 = 4;

/// A command that could not give an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandError {
    /// The input or the command line is wrong; the message says where and how to fix it.
    Input(String),
    /// kivi failed on a valid input; the message names the input.
    Internal(String),
}

impl CommandError {
    /// The process exit code.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Input(_) => EXIT_INPUT_ERROR,
            Self::Internal(_) => EXIT_INTERNAL_ERROR,
        }
    }
}

impl CommandError {
    /// A sweep's failure, with the input's name in front.
    pub fn from_sweep(input: &str, error: SweepError) -> Self {
        match error {
            SweepError::Input(message) => Self::Input(format!("{input}: {message}")),
            SweepError::Internal(message) => Self::Internal(format!("{input}: {message}")),
        }
    }
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Input(message) => write!(f, "error: {message}"),
            Self::Internal(message) => write!(
                f,
                "internal error (a bug in kivi, not in the input; please report it with the \
                 input): {message}"
            ),
        }
    }
}

impl From<String> for CommandError {
    fn from(message: String) -> Self {
        Self::Input(message)
    }
}

impl From<&str> for CommandError {
    fn from(message: &str) -> Self {
        Self::Input(message.to_string())
    }
}
