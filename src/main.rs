//! The `kivi` binary: see [`kivi::cli`].

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`kivi … | head`) would panic;
    // end quietly instead, as other command-line tools do.
    #[cfg(unix)]
    // SAFETY: called before any other thread exists; only restores the default disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A panic is a bug in kivi: one line saying where, then the command reports it as an
    // internal error (exit 4) instead of Rust's exit 101 or a hang.
    std::panic::set_hook(Box::new(|info| {
        let message = kivi::engine::panic_message(info.payload());
        match info.location() {
            Some(at) => eprintln!("kivi: panic at {}:{}: {message}", at.file(), at.line()),
            None => eprintln!("kivi: panic: {message}"),
        }
    }));
    let code = std::panic::catch_unwind(kivi::cli::run).unwrap_or_else(|payload| {
        eprintln!(
            "{}",
            kivi::cli::CommandError::Internal(kivi::engine::panic_message(&*payload))
        );
        kivi::cli::EXIT_INTERNAL_ERROR
    });
    std::process::exit(code);
}
