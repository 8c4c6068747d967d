//! Ctrl-C. The first one asks the running check or sweep to stop and report what it has (as
//! incomplete, exit 3; a sweep says what its journal holds and how to resume); a second one
//! ends the process at once with the shell's code for an interrupt, 130.

use crate::engine::CancelToken;

/// Exit code after a second Ctrl-C: 128 + SIGINT, as shells report an interrupted command.
const EXIT_INTERRUPTED: i32 = 130;

/// Installs the handler and returns the token it cancels. Call once per process; later calls
/// (tests running several commands in one process) get a token that is never cancelled.
pub fn install() -> CancelToken {
    let token = CancelToken::new();
    let handled = token.clone();
    let installed = ctrlc::set_handler(move || {
        if handled.is_cancelled() {
            std::process::exit(EXIT_INTERRUPTED);
        }
        handled.cancel();
        eprintln!("\ninterrupted: finishing what is running; Ctrl-C again to quit at once");
    });
    if installed.is_err() {
        return CancelToken::new();
    }
    token
}
