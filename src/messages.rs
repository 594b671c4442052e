//! Diagnostics as a tool reads them (`--message-format`): for people, a terminal's text
//! (the [`Diagnostic`]'s `Display`); for programs, one JSON object per line (schema
//! `casebook.diagnostic/1`, as `cargo --message-format json` does); for GitHub Actions,
//! workflow commands, so that each appears on the pull request's diff at its line.

use serde::Serialize;

use crate::model::{Diagnostic, Severity};

/// How diagnostics are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum MessageFormat {
    /// Text for a terminal, with the source line and a caret (on stderr).
    #[default]
    Human,
    /// One JSON object per line on stdout: every diagnostic, then a summary.
    Json,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`) on stdout.
    Github,
}

/// The schema of a diagnostic's JSON line.
pub const DIAGNOSTIC_SCHEMA: &str = "casebook.diagnostic/1";

/// The schema of the summary line that ends `--message-format json` output.
pub const SUMMARY_SCHEMA: &str = "casebook.summary/1";

/// A diagnostic as its JSON line holds it.
#[derive(Debug, Serialize)]
pub struct DiagnosticLine<'a> {
    /// [`DIAGNOSTIC_SCHEMA`].
    pub schema: &'static str,
    /// `error`, `warning` or `note`.
    pub severity: Severity,
    /// Its kind (docs/format.md lists them).
    pub code: &'static str,
    /// The file, as the command line named the root.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// The column after the span (exclusive), in characters.
    pub end_column: u32,
    /// What is wrong.
    pub message: &'a str,
    /// What to do about it.
    pub help: Option<&'a str>,
    /// The text a terminal shows for it.
    pub rendered: String,
}

impl<'a> DiagnosticLine<'a> {
    /// The line of `d`.
    pub fn of(d: &'a Diagnostic) -> Self {
        DiagnosticLine {
            schema: DIAGNOSTIC_SCHEMA,
            severity: d.severity,
            code: d.code.name(),
            file: d.location.shown_file().to_string(),
            line: d.location.line,
            column: d.location.col,
            end_column: d.location.col + d.span_chars,
            message: &d.message,
            help: d.help.as_deref(),
            rendered: d.to_string(),
        }
    }
}

/// The line that ends `--message-format json` output.
#[derive(Debug, Serialize)]
pub struct SummaryLine<'a> {
    /// [`SUMMARY_SCHEMA`].
    pub schema: &'static str,
    /// `check` or `build`.
    pub command: &'a str,
    /// True when there was no error and the content could be resolved.
    pub ok: bool,
    /// True when the output was written.
    pub written: bool,
    /// Errors.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Notes (listed with `--explain`).
    pub notes: usize,
    /// References to unpublished records counted but not listed (`build` without
    /// `--verbose`).
    pub unlisted_unpublished_references: usize,
    /// What was recognised, read and written; absent when the content could not be
    /// resolved.
    pub counts: Option<&'a crate::pipeline::Summary>,
    /// What verification found (`verify`, `build --verify`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<crate::model::VerificationCounts>,
}

/// `d` as one line of JSON.
pub fn json_line(d: &Diagnostic) -> String {
    serde_json::to_string(&DiagnosticLine::of(d)).expect("a diagnostic serialises")
}

/// `d` as a GitHub Actions workflow command: `::error file=…,line=…,col=…,endColumn=…,
/// title=…::message`, the help on a line of its own within the message.
pub fn github_command(d: &Diagnostic) -> String {
    let command = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "notice",
    };
    let line = DiagnosticLine::of(d);
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    format!(
        "::{command} file={},line={},col={},endColumn={},title={}::{}",
        property(&line.file),
        line.line,
        line.column,
        line.end_column,
        property(&format!("casebook {}", d.code)),
        data(&message)
    )
}

/// A workflow command's message: `%`, CR and LF escaped (GitHub's rules), and other
/// control characters shown as escapes rather than sent to the log.
fn data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c if crate::model::is_unshown(c) => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// A workflow command's property value: as [`data`], and `:` and `,` escaped too.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::{Code, Location};

    fn unknown_record() -> Diagnostic {
        Diagnostic::error(
            Code::UnknownRecord,
            Location::new(Path::new("./content/a, b/r.md").into(), 12, 5),
            "unknown record MEM-OBJ-rw; did you mean MEM-OBJ-raw? (100% sure)",
        )
        .with_source("See MEM-OBJ-rw here.", 10)
        .with_help("fix: the spelling")
    }

    #[test]
    fn a_json_line_holds_every_part_and_the_rendered_text() {
        let d = unknown_record();
        let value: serde_json::Value = serde_json::from_str(&json_line(&d)).unwrap();
        assert_eq!(value["schema"], DIAGNOSTIC_SCHEMA);
        assert_eq!(value["severity"], "error");
        assert_eq!(value["code"], "unknown-record");
        assert_eq!(value["file"], "content/a, b/r.md");
        assert_eq!(
            (value["line"].as_u64(), value["column"].as_u64(), value["end_column"].as_u64()),
            (Some(12), Some(5), Some(15))
        );
        assert_eq!(value["help"], "fix: the spelling");
        assert_eq!(value["rendered"], d.to_string());
        assert!(!json_line(&d).contains('\n'));
    }

    #[test]
    fn a_workflow_command_escapes_what_github_would_misread() {
        let command = github_command(&unknown_record());
        assert_eq!(
            command,
            "::error file=content/a%2C b/r.md,line=12,col=5,endColumn=15,title=casebook unknown-record::\
             unknown record MEM-OBJ-rw; did you mean MEM-OBJ-raw? (100%25 sure)%0Ahelp: fix: the spelling"
        );
        let hostile =
            Diagnostic::warning(Code::NoGrammar, Location::file(Path::new("r.md")), "a\u{202e}b\u{0}c\r\n::x");
        let command = github_command(&hostile);
        assert!(command.ends_with("::a\\u{202e}b\\u{0}c%0D%0A::x"), "{command}");
        assert!(!command.contains('\n') && !command.contains('\u{202e}'));
    }
}
