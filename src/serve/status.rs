//! The state of the last build, as the browser sees it: `/__casebook/status` and each
//! event of `/__casebook/events` carry it as JSON (schema `casebook.serve-status/1`).

use std::path::Path;

use serde::Serialize;

use crate::model::{Diagnostic, Location};

/// The schema name and version of [`BuildStatus`] as JSON.
pub const SCHEMA: &str = "casebook.serve-status/1";

/// The outcome of the last build.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BuildStatus {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// How many builds have replaced the output since the server started: a page built
    /// by an older one reloads.
    pub generation: u64,
    /// True when the last build succeeded (and so the output is current).
    pub ok: bool,
    /// Errors of the last build.
    pub errors: usize,
    /// Warnings of the last build.
    pub warnings: usize,
    /// The errors of the last build, for the overlay (warnings are printed only).
    pub diagnostics: Vec<DiagnosticView>,
}

/// One diagnostic, as data. The browser inserts it as text, never as markup: content is
/// untrusted and a message quotes it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DiagnosticView {
    /// `error` or `warning`.
    pub severity: String,
    /// The file, relative to the site root when it is below it; none for a failure that
    /// is not about one file (an unwritable output folder).
    pub file: Option<String>,
    /// 1-based line.
    pub line: Option<u32>,
    /// 1-based column.
    pub col: Option<u32>,
    /// The message.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
    /// The whole diagnostic as `casebook build` prints it (`file:line:col: error: …`,
    /// the source line and a caret).
    pub text: String,
}

impl BuildStatus {
    /// The status before any build.
    pub fn initial() -> Self {
        BuildStatus { schema: SCHEMA, generation: 0, ok: true, errors: 0, warnings: 0, diagnostics: Vec::new() }
    }

    /// A finished build that replaced the output (its warnings are counted).
    pub fn succeeded(generation: u64, diagnostics: &[Diagnostic]) -> Self {
        BuildStatus { generation, warnings: diagnostics.len(), ..Self::initial() }
    }

    /// A build that left the output as it was, because of errors in the content.
    pub fn failed(generation: u64, diagnostics: &[Diagnostic], root: &Path) -> Self {
        let errors: Vec<DiagnosticView> =
            diagnostics.iter().filter(|d| d.is_error()).map(|d| DiagnosticView::of(d, root)).collect();
        BuildStatus {
            schema: SCHEMA,
            generation,
            ok: false,
            errors: errors.len(),
            warnings: diagnostics.len() - errors.len(),
            diagnostics: errors,
        }
    }

    /// A build that could not run or write (the theme, the output folder).
    pub fn broken(generation: u64, message: String) -> Self {
        let view = DiagnosticView {
            severity: "error".into(),
            file: None,
            line: None,
            col: None,
            text: format!("error: {message}"),
            message,
            help: None,
        };
        BuildStatus { schema: SCHEMA, generation, ok: false, errors: 1, warnings: 0, diagnostics: vec![view] }
    }
}

impl DiagnosticView {
    /// The view of `d`, its path made relative to `root`.
    pub fn of(d: &Diagnostic, root: &Path) -> Self {
        let mut shown = d.clone();
        let relative = d.location.file.strip_prefix(root).unwrap_or(&d.location.file).to_path_buf();
        shown.location = Location::new(relative.clone().into(), d.location.line, d.location.col);
        DiagnosticView {
            severity: d.severity.to_string(),
            file: Some(relative.display().to_string()),
            line: Some(d.location.line),
            col: Some(d.location.col),
            message: d.message.clone(),
            help: d.help.clone(),
            text: shown.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_build_lists_its_errors_relative_to_the_root() {
        let file = Path::new("/site/content/a/b/report.md");
        let diagnostics = vec![
            Diagnostic::error(Location::new(file.into(), 3, 5), "unknown record <X>").with_source("see <X>", 3),
            Diagnostic::warning(Location::file(file), "a warning"),
        ];
        let status = BuildStatus::failed(2, &diagnostics, Path::new("/site"));
        assert!(!status.ok);
        assert_eq!((status.errors, status.warnings), (1, 1));
        let d = &status.diagnostics[0];
        assert_eq!(d.file.as_deref(), Some("content/a/b/report.md"));
        assert_eq!((d.line, d.col), (Some(3), Some(5)));
        assert!(d.text.starts_with("content/a/b/report.md:3:5: error: unknown record <X>"), "{}", d.text);
    }
}
