//! The `casebook` command; everything it does lives in the library.

fn main() -> std::process::ExitCode {
    casebook::cli::main()
}
