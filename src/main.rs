//! The `kivi` binary: see [`kivi::cli`].

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(kivi::cli::run());
}
