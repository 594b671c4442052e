//! Build script: the commit and its date, for `casebook --version`, when the source is a
//! git checkout (a crate from crates.io has no history, and says only its version).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let git = vergen_gitcl::GitclBuilder::default().sha(true).commit_date(true).build()?;
    // Outside a checkout the variables are not set, and `--version` leaves them out.
    let _ = vergen_gitcl::Emitter::default().add_instructions(&git)?.fail_on_error().emit();
    Ok(())
}
