//! The command line: `casebook build` and `casebook check`. A thin shell over
//! [`crate::pipeline`]: parse flags, run, print diagnostics and the summary, pick the
//! exit code (0 success, 1 errors in the content, 2 usage, theme or output problems).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::model::Severity;
use crate::pipeline::{self, BuildOptions, Outcome};
use crate::resolve::UNPUBLISHED_REFERENCE;

/// Publish evidence-based analyses of software systems as a website.
#[derive(Debug, Parser)]
#[command(name = "casebook", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the site into the output folder (replaced only if the build succeeds).
    Build {
        /// Shared options.
        #[command(flatten)]
        common: Common,
        /// Output folder [default: ROOT/public].
        #[arg(short, long, value_name = "DIR")]
        output: Option<PathBuf>,
        /// Base URL or path the site is served under (overrides casebook.yaml).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
    },
    /// Check the content (every stage but writing) and report diagnostics.
    Check {
        /// Shared options.
        #[command(flatten)]
        common: Common,
    },
}

/// Options of every subcommand.
#[derive(Debug, Args)]
pub struct Common {
    /// The site's root: the folder holding content/, themes/ and static/.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub root: PathBuf,
    /// Worker threads [default: one per core].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Print errors only, not warnings.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also list each reference to an unpublished record (`check` always does).
    #[arg(short, long)]
    pub verbose: bool,
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let (common, build) = match &cli.command {
        Command::Build { common, .. } => (common, true),
        Command::Check { common } => (common, false),
    };
    let mut options = BuildOptions::new(&common.root);
    if let Command::Build { output, base_url, .. } = &cli.command {
        if let Some(output) = output {
            options.output = output.clone();
        }
        options.base_url = base_url.clone();
    }
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(common.jobs.unwrap_or(0)).build() {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("casebook: cannot start worker threads: {e}");
            return ExitCode::from(2);
        }
    };
    let result = pool.install(|| if build { pipeline::build(&options) } else { pipeline::check(&options) });
    match result {
        Ok(outcome) => report(&outcome, &options, build, common),
        Err(e) => {
            eprintln!("casebook: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn report(outcome: &Outcome, options: &BuildOptions, build: bool, common: &Common) -> ExitCode {
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    // A build lists references to unpublished records only on request: they are
    // expected, and `check` is where one reads them.
    let list_unpublished = !build || common.verbose;
    let mut unlisted = 0;
    for d in &outcome.diagnostics {
        if d.severity == Severity::Warning {
            if common.quiet {
                continue;
            }
            if d.code == Some(UNPUBLISHED_REFERENCE) && !list_unpublished {
                unlisted += 1;
                continue;
            }
        }
        let _ = writeln!(err, "{d}\n");
    }

    let errors = outcome.diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = outcome.diagnostics.len() - errors;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let verb = if build { "build" } else { "check" };
    if errors > 0 {
        let kept = if build { format!("; {} was left untouched", options.output.display()) } else { String::new() };
        let _ = writeln!(err, "casebook: {verb} failed: {}, {}{kept}", plural(errors, "error"), plural(warnings, "warning"));
        return ExitCode::from(1);
    }
    let Some(s) = &outcome.summary else {
        return ExitCode::from(1);
    };
    let mut out = std::io::stdout().lock();
    let headline = if outcome.written {
        format!("built {} in {:.2} s", options.output.display(), outcome.elapsed.as_secs_f64())
    } else {
        format!("checked {} in {:.2} s", options.root.join("content").display(), outcome.elapsed.as_secs_f64())
    };
    let _ = writeln!(out, "casebook: {headline}");
    let rows = [
        ("systems", s.systems.to_string()),
        ("runs", s.runs.to_string()),
        ("reports", s.reports.to_string()),
        ("records", format!("{} published, {} referenced but unpublished", s.records, s.unpublished)),
        ("references", format!("{} resolved, {} to unpublished records", s.references_resolved, s.references_dangling)),
        ("quotes", s.quotes.to_string()),
        ("citations", s.citations.to_string()),
        ("pages", format!("{} ({})", s.pages, plural(s.files, "file"))),
        ("diagnostics", format!("{}, {}", plural(errors, "error"), plural(warnings, "warning"))),
        ("", if unlisted > 0 { format!("({unlisted} of them: references to unpublished records; `casebook check` lists them)") } else { String::new() }),
    ];
    for (name, value) in rows.iter().filter(|(_, value)| !value.is_empty()) {
        let _ = writeln!(out, "  {name:<12} {value}");
    }
    ExitCode::SUCCESS
}
