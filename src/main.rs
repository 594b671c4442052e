//! The `casebook` command; everything it does lives in the library.

// Rendering and indexing make and drop millions of small strings; mimalloc spends about
// a tenth less CPU on them than glibc's allocator (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The version and, built from a git checkout, the commit and its date:
/// `0.1.0 (158ec02 2026-12-05)`.
fn version() -> &'static str {
    let version = env!("CARGO_PKG_VERSION");
    match (option_env!("VERGEN_GIT_SHA"), option_env!("VERGEN_GIT_COMMIT_DATE")) {
        (Some(sha), Some(date)) => Box::leak(format!("{version} ({sha} {date})").into_boxed_str()),
        _ => version,
    }
}

fn main() -> std::process::ExitCode {
    casebook::cli::main(version())
}
