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
    std::process::exit(kivi::cli::run());
}
