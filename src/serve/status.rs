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
    /// The URL paths of the pages this build changed (an open page reloads only when it
    /// is one of them); `null` when the whole site was replaced (every page reloads).
    pub changed: Option<Vec<String>>,
}

/// One diagnostic, as data. The browser inserts it as text, never as markup: content is
/// untrusted and a message quotes it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DiagnosticView {
    /// `error` or `warning`.
    pub severity: String,
    /// Its kind (`unknown-record`, see docs/format.md); none for a failure that is not
    /// about the content (an unwritable output folder).
    pub code: Option<&'static str>,
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
        BuildStatus {
            schema: SCHEMA,
            generation: 0,
            ok: true,
            errors: 0,
            warnings: 0,
            diagnostics: Vec::new(),
            changed: None,
        }
    }

    /// A finished build that changed the output (its warnings are counted): the pages
    /// of `changed`, or every page.
    pub fn succeeded(generation: u64, diagnostics: &[Diagnostic], changed: Option<Vec<String>>) -> Self {
        BuildStatus { generation, warnings: warnings(diagnostics), changed, ..Self::initial() }
    }

    /// A build that left the output as it was, because of errors in the content.
    ///
    /// (Notes, what casebook did not understand, are neither errors nor warnings.)
    pub fn failed(generation: u64, diagnostics: &[Diagnostic], root: &Path) -> Self {
        let errors: Vec<DiagnosticView> =
            diagnostics.iter().filter(|d| d.is_error()).map(|d| DiagnosticView::of(d, root)).collect();
        BuildStatus {
            schema: SCHEMA,
            generation,
            ok: false,
            errors: errors.len(),
            warnings: warnings(diagnostics),
            diagnostics: errors,
            changed: None,
        }
    }

    /// A build that could not run or write (the theme, the output folder).
    pub fn broken(generation: u64, message: String) -> Self {
        let view = DiagnosticView {
            severity: "error".into(),
            code: None,
            file: None,
            line: None,
            col: None,
            text: format!("error: {message}"),
            message,
            help: None,
        };
        BuildStatus {
            schema: SCHEMA,
            generation,
            ok: false,
            errors: 1,
            warnings: 0,
            diagnostics: vec![view],
            changed: None,
        }
    }
}

/// The URL path of an output file under `base_path` (`/`, or `/preview/` for a base
/// URL with a path): `fractal/index.html` → `/fractal/`.
pub fn url_of(base_path: &str, file: &Path) -> String {
    let path: Vec<String> = file.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let path = path.join("/");
    let path = path.strip_suffix("index.html").unwrap_or(&path);
    format!("{}/{path}", base_path.trim_end_matches('/'))
}

/// The URL paths of the pages among `files` (only a page can be open in a browser; a
/// rebuild also rewrites thousands of index files).
pub fn page_urls(base_path: &str, files: &[std::path::PathBuf]) -> Vec<String> {
    files.iter().filter(|f| f.extension().is_some_and(|e| e == "html")).map(|f| url_of(base_path, f)).collect()
}

impl DiagnosticView {
    /// The view of `d`, its path made relative to `root`.
    pub fn of(d: &Diagnostic, root: &Path) -> Self {
        let mut shown = d.clone();
        let relative = d.location.file.strip_prefix(root).unwrap_or(&d.location.file).to_path_buf();
        shown.location = Location::new(relative.clone().into(), d.location.line, d.location.col);
        DiagnosticView {
            severity: d.severity.to_string(),
            code: Some(d.code.name()),
            file: Some(relative.display().to_string()),
            line: Some(d.location.line),
            col: Some(d.location.col),
            message: d.message.clone(),
            help: d.help.clone(),
            text: shown.to_string(),
        }
    }
}

/// How many of `diagnostics` are warnings.
fn warnings(diagnostics: &[Diagnostic]) -> usize {
    diagnostics.iter().filter(|d| d.severity == crate::model::Severity::Warning).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_files_are_named_by_their_urls() {
        assert_eq!(url_of("/", Path::new("fractal/index.html")), "/fractal/");
        assert_eq!(url_of("/", Path::new("index.html")), "/");
        assert_eq!(url_of("/preview/", Path::new("records.json")), "/preview/records.json");
        let files = ["fractal/index.html".into(), "search/browser/t/3.txt.gz".into()];
        assert_eq!(page_urls("/", &files), ["/fractal/"]);
    }

    #[test]
    fn a_failed_build_lists_its_errors_relative_to_the_root() {
        let file = Path::new("/site/content/a/b/report.md");
        let diagnostics = vec![
            Diagnostic::error(
                crate::model::Code::UnknownRecord,
                Location::new(file.into(), 3, 5),
                "unknown record <X>",
            )
            .with_source("see <X>", 3),
            Diagnostic::warning(crate::model::Code::IgnoredFile, Location::file(file), "a warning"),
        ];
        let status = BuildStatus::failed(2, &diagnostics, Path::new("/site"));
        assert!(!status.ok);
        assert_eq!((status.errors, status.warnings), (1, 1));
        let d = &status.diagnostics[0];
        assert_eq!(d.file.as_deref(), Some("content/a/b/report.md"));
        assert_eq!((d.line, d.col), (Some(3), Some(5)));
        assert_eq!(d.code, Some("unknown-record"));
        assert!(
            d.text.starts_with("content/a/b/report.md:3:5: error[unknown-record]: unknown record <X>"),
            "{}",
            d.text
        );
    }
}
