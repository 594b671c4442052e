//! The `casebook` command; everything it does lives in the library.

// Rendering and indexing make and drop millions of small strings; mimalloc spends about
// a tenth less CPU on them than glibc's allocator (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    casebook::cli::main()
}
