//! The `kivi` binary: see [`kivi::cli`].

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (`mimalloc.h`; the Rust bindings do not name it):
/// how long freed pages stay committed before they go back to the system.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Milliseconds freed pages stay committed: the budget test with a million successors
/// (`tests/memory_budget.rs`, 512 MiB) peaks 20 MiB higher than with 0, well within its
/// overhead.
const PURGE_DELAY_MS: std::ffi::c_long = 10;

fn main() {
    // `--memory` counts the bytes kivi holds, and the process must stay within it and a fixed
    // overhead. mimalloc keeps the pages of freed blocks for a while (a second in the version
    // first used) in case they are reused; a state with millions of successors frees hundreds
    // of MiB at once, and with them kept a 512 MiB budget's process peaked 150 MiB above its
    // overhead. Returning them at once, though, made every large state's allocation fault its
    // pages in again: on 1,000 nodes (`c3-four-node-failures` at 500,500:3000, `any`) a sixth
    // of the time was the kernel's. [`PURGE_DELAY_MS`] keeps them just long enough for the
    // next state of a search to reuse them.
    // SAFETY: set before any other thread exists (mimalloc's options are not thread-safe).
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS);
    }
    // Budgets charge blocks as mimalloc rounds them.
    kivi::engine::memory::set_allocation_size(|requested| {
        // SAFETY: a pure function of the size, callable from any thread.
        unsafe { libmimalloc_sys::mi_good_size(requested) }
    });
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
