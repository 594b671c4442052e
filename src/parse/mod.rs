//! Parse: read every discovered file (in parallel, rayon) and turn it into typed data:
//! the site config and ID grammars, each system's and run's YAML, and each report's
//! sections, declarations, annotations, references, quotes and citations.
//!
//! Parsing never stops at the first problem: a broken file is left out and its
//! diagnostics say why, so one `check` lists everything.

mod report;

pub use report::{parse_report, split_front_matter};

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use crate::config::{parse_yaml, Redirect, RunMeta, SiteConfig, SystemMeta};
use crate::discover::{RunDir, SourceTree, SystemDir};
use crate::model::{Code, Diagnostic, Location, Report, Slug};
use crate::recognise::Conventions;

/// The redirects file, parsed, with its text to point diagnostics at.
#[derive(Debug, Default)]
pub struct Redirects {
    /// Where it is (or would be).
    pub file: std::path::PathBuf,
    /// Its text.
    pub text: String,
    /// Its entries.
    pub entries: Vec<Redirect>,
}

/// A parsed system.
#[derive(Debug)]
pub struct ParsedSystem {
    /// Folder name.
    pub slug: crate::model::Slug,
    /// `system.yaml`.
    pub meta: SystemMeta,
    /// Path of `system.yaml`.
    pub file: Arc<Path>,
    /// Text of `system.yaml`, to point diagnostics at its lines.
    pub text: String,
    /// Runs in slug order.
    pub runs: Vec<ParsedRun>,
}

/// A parsed run.
#[derive(Debug)]
pub struct ParsedRun {
    /// Folder name.
    pub slug: crate::model::Slug,
    /// `run.yaml`.
    pub meta: RunMeta,
    /// Path of `run.yaml`.
    pub file: Arc<Path>,
    /// Text of `run.yaml`, to point diagnostics at its lines.
    pub text: String,
    /// Reports in display order.
    pub reports: Vec<Report>,
    /// The kinds of ID its reports declare in a shape of their own, and those its
    /// `unpublished` patterns name, that the site's kinds lack (sorted).
    pub learned_kinds: Vec<String>,
}

/// `casebook.yaml` (or the defaults), its text, and the conventions it sets (ID grammars
/// and status words).
pub fn parse_config(tree: &SourceTree) -> Result<(SiteConfig, String, Conventions), Diagnostic> {
    let (mut config, config_text) = match &tree.config {
        Some(path) => read_text(path, crate::config::DEFAULT_MAX_FILE_MIB)
            .and_then(|text| parse_yaml::<SiteConfig>(&text, path, 1).map(|config| (config, text)))?,
        None => (SiteConfig::default(), String::new()),
    };
    config.ids = std::mem::take(&mut config.ids).with_defaults();
    if let Some(bad) = unquoted_color(&config_text)
        .or_else(|| config.statuses.iter().find_map(|status| bad_status_color(status, &config_text)))
    {
        let file = tree.config.clone().unwrap_or_else(|| "casebook.yaml".into());
        let BadColor { line, column, source, width, message, help } = bad;
        return Err(Diagnostic::error(
            Code::BadStatusColor,
            Location::new(Arc::from(file.as_path()), line, column),
            message,
        )
        .with_source(source, width)
        .with_help(help));
    }
    if let Some(Err(problem)) = config.source_url.as_deref().map(crate::model::SourceUrl::parse) {
        let file = tree.config.clone().unwrap_or_else(|| "casebook.yaml".into());
        let value = config.source_url.as_deref().unwrap_or_default();
        let (line, col, source) = locate(&config_text, value);
        return Err(Diagnostic::error(
            Code::BadSourceUrl,
            Location::new(Arc::from(file.as_path()), line, col),
            format!("`source_url` cannot link to the site's files: {problem}"),
        )
        .with_source(source, value.chars().count())
        .with_help(
            "give the URL of a file with `{path}` where its path goes and, if the host shows lines, `{line}`: \
             `https://github.com/o/analyses/blob/main/{path}#L{line}`",
        ));
    }
    let file = tree.config.clone().unwrap_or_else(|| "casebook.yaml".into());
    if let Some(bad) = search_files_out_of_bounds(config.search, &config_text, &file) {
        return Err(bad);
    }
    match Conventions::new(&config) {
        Ok(conventions) => Ok((config, config_text, conventions)),
        Err(e) => {
            let file = tree.config.clone().unwrap_or_else(|| "casebook.yaml".into());
            use crate::recognise::GrammarError;
            let (pattern, key) = match &e {
                GrammarError::Invalid { pattern, .. } | GrammarError::NoKind(pattern) => (pattern, "ids.grammars"),
                GrammarError::SourceIds { pattern, .. } => (pattern, "conventions.source_ids"),
            };
            let (line, col, source) = locate(&config_text, pattern);
            Err(Diagnostic::error(
                Code::BadConvention,
                Location::new(Arc::from(file.as_path()), line, col),
                e.to_string(),
            )
            .with_source(source, pattern.chars().count())
            .with_help(format!("fix `{key}` in casebook.yaml (see docs/format.md)")))
        }
    }
}

/// A value of `search:` in casebook.yaml (`file`) outside its bounds, as an error at its
/// line.
fn search_files_out_of_bounds(search: crate::model::SearchFiles, config_text: &str, file: &Path) -> Option<Diagnostic> {
    use crate::model::SearchFiles;
    let default = SearchFiles::default();
    let checks = [
        ("documents_per_file", search.documents_per_file, SearchFiles::DOCUMENTS_PER_FILE, default.documents_per_file),
        ("term_file_kib", search.term_file_kib, SearchFiles::TERM_FILE_KIB, default.term_file_kib),
    ];
    let (key, value, bounds, default) = checks.into_iter().find(|(_, value, bounds, _)| !bounds.contains(value))?;
    let (line, col, source) = locate(config_text, key);
    let (low, high) = (bounds.start(), bounds.end());
    Some(
        Diagnostic::error(
            Code::InvalidYaml,
            Location::new(Arc::from(file), line, col),
            format!("`search.{key}` is {value}, outside {low} to {high}"),
        )
        .with_source(source, key.len())
        .with_help(format!("give a number from {low} to {high} (the default is {default}; see docs/format.md)")),
    )
}

/// A status colour of casebook.yaml that cannot be used, and where it is.
struct BadColor {
    line: u32,
    column: u32,
    /// The line's text.
    source: String,
    /// The value's width, in characters.
    width: usize,
    message: String,
    help: &'static str,
}

/// A `color: #107569` without quotes, which YAML reads as a key with no value and a
/// comment: the colour would be silently ignored.
fn unquoted_color(text: &str) -> Option<BadColor> {
    text.lines().enumerate().find_map(|(i, line)| {
        let trimmed = line.trim_start().trim_start_matches("- ");
        let key = ["color:", "text_color:"].into_iter().find(|key| trimmed.starts_with(key))?;
        let value = trimmed[key.len()..].trim_start();
        if !value.starts_with('#') || trimmed[key.len()..].len() == value.len() {
            return None;
        }
        let column = line.find(value).map_or(1, |at| line[..at].chars().count() as u32 + 1);
        let message = format!(
            "`{key} {value}` is a key with no value: YAML reads `#` after a space as the start of a comment; write `{key} \"{}\"`",
            value.split_whitespace().next().unwrap_or(value)
        );
        let (line_number, source, width) = (i as u32 + 1, line.to_string(), value.chars().count());
        Some(BadColor { line: line_number, column, source, width, message, help: "put the colour in quotes" })
    })
}

/// What is wrong with a status's colours, if anything: where (line, column, the line's
/// text, the value's width) and what. A badge's text must be readable on its background.
fn bad_status_color(status: &crate::config::StatusDef, text: &str) -> Option<BadColor> {
    use crate::model::color::{BadgeColors, Rgb, MIN_CONTRAST};
    // The value is looked for after the status's name, where the file sets it.
    let place = |value: &str| {
        let from = text.find(&status.name).unwrap_or(0);
        let at = text[from..].find(value).map_or(from, |i| from + i);
        let line = text[..at].matches('\n').count() as u32 + 1;
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let column = text[line_start..at].chars().count() as u32 + 1;
        let source = text[line_start..].lines().next().unwrap_or("").to_string();
        (line, column, source, value.chars().count())
    };
    for (key, value) in [("color", &status.color), ("text_color", &status.text_color)] {
        if let Some(value) = value.as_deref().filter(|v| Rgb::parse(v).is_none()) {
            let (line, column, source, width) = place(value);
            let message =
                format!("`{key}: {value}` of status `{}` is not a colour written `#rrggbb` or `#rgb`", status.name);
            return Some(BadColor { line, column, source, width, message, help: "write the colour as `\"#rrggbb\"`" });
        }
    }
    if status.color.is_none() && status.text_color.is_none() {
        return None;
    }
    let colors = BadgeColors::of(&status.name, 0, status.color.as_deref(), status.text_color.as_deref());
    let contrast = colors.contrast();
    if contrast >= MIN_CONTRAST {
        return None;
    }
    let value = status.color.as_deref().or(status.text_color.as_deref()).unwrap_or_default();
    let (line, column, source, width) = place(value);
    let message = format!(
        "the badge of status `{}` has text {} on {}: a contrast of {contrast:.2}:1, below the {MIN_CONTRAST}:1 that text needs to be readable (WCAG AA)",
        status.name, colors.text, colors.background
    );
    let help =
        "take colours further apart: a darker `color` under white text, or a `text_color` that stands out from it";
    Some(BadColor { line, column, source, width, message, help })
}

/// `content/redirects.yaml`, or none.
pub fn parse_redirects(tree: &SourceTree, limit: u64, diagnostics: &mut Vec<Diagnostic>) -> Redirects {
    let mut redirects = Redirects { file: tree.root.join("content").join("redirects.yaml"), ..Redirects::default() };
    if let Some(path) = &tree.redirects {
        match read_text(path, limit)
            .and_then(|text| parse_yaml::<Vec<Redirect>>(&text, path, 1).map(|entries| (text, entries)))
        {
            Ok((text, entries)) => {
                let entries = entries.into_iter().filter(|r| redirect_is_safe(r, path, &text, diagnostics)).collect();
                redirects = Redirects { file: path.clone(), text, entries };
            }
            Err(d) => diagnostics.push(d),
        }
    }
    redirects
}

/// Whether a redirect may be written into a host's rules (`_redirects`): its `from` a path
/// of the site, its `to` a path of the site or an http(s) URL, neither with whitespace or
/// control characters, which would let the entry add rules of its own (a forced proxy to
/// another origin, say). An entry that is not is an error at its line, and never written.
fn redirect_is_safe(redirect: &Redirect, file: &Path, text: &str, diagnostics: &mut Vec<Diagnostic>) -> bool {
    let problem = redirect_problem("from", &redirect.from).or_else(|| redirect_problem("to", &redirect.to));
    let Some((problem_field, message, help)) = problem else { return true };
    let value = if problem_field == "from" { &redirect.from } else { &redirect.to };
    // The value's first line, as the YAML text holds it when it is plain or quoted.
    let shown: String = value.chars().take_while(|c| !c.is_control()).collect();
    let (line, col, source) = locate_value(text, format!("{problem_field}:"), &shown);
    diagnostics.push(
        Diagnostic::error(Code::BadRedirect, Location::new(Arc::from(file), line, col), message)
            .with_source(source, shown.chars().count().max(1))
            .with_help(help),
    );
    false
}

/// Where `value` is written as the value of `key` (`to:`) in a YAML text: the first line
/// where the value follows the key (quoted or not); else the value's first place.
fn locate_value(text: &str, key: String, value: &str) -> (u32, u32, String) {
    for (i, line) in text.lines().enumerate() {
        let Some(key_at) = line.find(&key) else { continue };
        let after = &line[key_at + key.len()..];
        let written = after.trim_start().trim_start_matches(['"', '\'']);
        if written.starts_with(value) {
            let at = line.len() - written.len();
            return (i as u32 + 1, line[..at].chars().count() as u32 + 1, line.to_string());
        }
    }
    locate(text, value)
}

/// What makes one field of a redirect unsafe to write, if anything: the field's name, the
/// message and the help.
fn redirect_problem(field: &'static str, value: &str) -> Option<(&'static str, String, &'static str)> {
    let shown = format!("\"{}\"", value.escape_debug());
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some((
            field,
            format!("redirect `{field}` {shown} holds whitespace or a control character"),
            "write the path or URL on one line without spaces (percent-encode a space as %20)",
        ));
    }
    let is_url = value.contains("://") || value.to_ascii_lowercase().starts_with("http");
    if field == "to" && is_url {
        // Written as it is, so it must also read as a URL to a host: `https:/x` parses
        // (leniently, as https://x/) but a host would not take it as one.
        let parsed = url::Url::parse(value)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .filter(|_| value.starts_with("http://") || value.starts_with("https://"));
        return parsed.is_none().then(|| {
            (
                field,
                format!("redirect target {shown} is not an http(s) URL"),
                "write a full URL such as https://example.org/page, or a path of this site such as /<system>/<run>/",
            )
        });
    }
    if !value.starts_with('/') || value.starts_with("//") {
        return Some((
            field,
            format!("redirect `{field}` {shown} is not a path of this site"),
            "begin it with one `/`, e.g. /<system>/<run>/records/<ID>.html",
        ));
    }
    None
}

/// A system's `system.yaml`, parsed, with its text; its runs are parsed apart.
pub fn parse_system_meta(dir: &SystemDir, limit: u64) -> Result<ParsedSystem, Diagnostic> {
    let text = read_text(&dir.meta, limit)?;
    let meta = parse_yaml::<SystemMeta>(&text, &dir.meta, 1)?;
    Ok(ParsedSystem { slug: dir.slug.clone(), meta, file: Arc::from(dir.meta.as_path()), text, runs: Vec::new() })
}

/// A run: `run.yaml` and its reports, read and parsed (reports in parallel).
pub fn parse_run(
    dir: &RunDir,
    root: &Path,
    conventions: &Conventions,
    limit: u64,
) -> (Option<ParsedRun>, Vec<Diagnostic>) {
    let text = match read_text(&dir.meta, limit) {
        Ok(text) => text,
        Err(d) => return (None, vec![d]),
    };
    let meta: RunMeta = match parse_yaml(&text, &dir.meta, 1) {
        Ok(meta) => meta,
        Err(d) => return (None, vec![d]),
    };
    let mut diagnostics = Vec::new();
    let files = order_report_files(dir, &meta, &text, &mut diagnostics);
    let texts: Vec<(&std::path::PathBuf, Result<String, Diagnostic>)> =
        files.par_iter().map(|path| (path, read_text(path, limit))).collect();
    // The kinds of record the reports declare in their own shape, read before any report
    // is parsed: a report may refer to a record another declares.
    let readable: Vec<&str> = texts.iter().filter_map(|(_, text)| text.as_deref().ok()).collect();
    let learned_kinds = learned_kinds(&readable, &meta, conventions);
    let revisions =
        std::iter::once(meta.revision.clone()).chain(meta.sources.iter().filter_map(|s| s.revision.clone())).collect();
    let status_words = learned_status_words(&readable, conventions);
    let conventions = conventions.with_learned_kinds(&learned_kinds).with_revisions(revisions);
    let conventions = conventions.with_status_words(&status_words);
    let results: Vec<(Option<Report>, Vec<Diagnostic>)> = texts
        .into_par_iter()
        .map(|(path, text)| {
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            // discover admits only reports whose file stem is a slug.
            let Some(slug) = Slug::of_name(&stem) else { return (None, Vec::new()) };
            match text {
                Ok(text) => parse_report(path, &relative_to(root, path), &slug, &text, &conventions),
                Err(d) => (None, vec![d]),
            }
        })
        .collect();
    let mut reports = Vec::new();
    for (report, found) in results {
        diagnostics.extend(found);
        reports.extend(report);
    }
    if meta.reports.is_none() {
        // Without an explicit list, `order:` then the file name decide.
        reports.sort_by(|a, b| (a.order.is_none(), a.order, &a.slug).cmp(&(b.order.is_none(), b.order, &b.slug)));
    }
    let run =
        ParsedRun { slug: dir.slug.clone(), meta, file: Arc::from(dir.meta.as_path()), text, reports, learned_kinds };
    (Some(run), diagnostics)
}

/// The kinds of ID that a run's reports (`texts`) declare in a shape of their own, and
/// that its `unpublished` patterns name, which the site's kinds lack: sorted.
pub fn learned_kinds(texts: &[&str], meta: &RunMeta, conventions: &Conventions) -> Vec<String> {
    let declared = texts
        .par_iter()
        .map(|text| crate::recognise::declared_kinds(&conventions.ids, text, |w| conventions.is_source(w)))
        .reduce(std::collections::BTreeSet::new, |mut a, b| {
            a.extend(b);
            a
        });
    let named = meta.unpublished.iter().flat_map(|set| &set.ids).filter_map(|p| crate::recognise::pattern_kind(p));
    let kinds: std::collections::BTreeSet<String> =
        declared.into_iter().chain(named).filter(|k| !conventions.ids.is_kind(k)).collect();
    kinds.into_iter().collect()
}

/// The words a run's reports (`texts`) define for the statuses in their legends, in the
/// order written.
pub fn learned_status_words(texts: &[&str], conventions: &Conventions) -> Vec<(String, String)> {
    texts.iter().flat_map(|text| crate::recognise::legend_synonyms(&conventions.statuses, text)).collect()
}

/// The report files of a run in the order `run.yaml` lists them, then any unlisted ones
/// (with a warning). A listed file that does not exist is an error.
fn order_report_files(
    dir: &RunDir,
    meta: &RunMeta,
    text: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<std::path::PathBuf> {
    let Some(listed) = &meta.reports else {
        return dir.reports.clone();
    };
    let mut files = Vec::new();
    for name in listed {
        match dir.reports.iter().find(|p| p.file_name().is_some_and(|n| n == name.as_str())) {
            Some(path) => files.push(path.clone()),
            None => {
                let (line, col, source) = locate(text, name);
                diagnostics.push(
                    Diagnostic::error(
                        Code::MissingReport,
                        Location::new(Arc::from(dir.meta.as_path()), line, col),
                        format!("report file `{name}` does not exist"),
                    )
                    .with_source(source, name.chars().count())
                    .with_help(format!(
                        "create {} or remove it from `reports`",
                        dir.meta.with_file_name(name).display()
                    )),
                );
            }
        }
    }
    for path in &dir.reports {
        if !files.contains(path) {
            diagnostics.push(
                Diagnostic::warning(
                    Code::UnlistedReport,
                    Location::file(path),
                    "this report is not listed in `reports` of run.yaml",
                )
                .with_help("it is published after the listed reports; add it to `reports` to place it"),
            );
            files.push(path.clone());
        }
    }
    files
}

/// `path` relative to `root` with `/` separators, whatever the platform or the way the
/// root was given, so pages built from any checkout are identical.
fn relative_to(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// The 1-based line and column of the first occurrence of `needle` in `text`, with that
/// line's text; line 1 when it is not found.
pub fn locate(text: &str, needle: &str) -> (u32, u32, String) {
    for (i, line) in text.lines().enumerate() {
        if let Some(at) = line.find(needle) {
            return (i as u32 + 1, line[..at].chars().count() as u32 + 1, line.to_string());
        }
    }
    (1, 1, text.lines().next().unwrap_or("").to_string())
}

/// Reads a content file as UTF-8 text: a leading byte-order mark is dropped and CRLF
/// line endings become LF. Invalid UTF-8 is an error at its line and column; so is a file
/// larger than `limit_mib` MiB (checked before reading it).
pub fn read_text(path: &Path, limit_mib: u64) -> Result<String, Diagnostic> {
    if let Ok(size) = std::fs::metadata(path).map(|m| m.len()) {
        if size > limit_mib * 1024 * 1024 {
            return Err(Diagnostic::error(
                Code::TooLarge,
                Location::file(path),
                format!(
                    "this file is {:.1} MiB; content files may be at most {limit_mib} MiB",
                    size as f64 / (1024.0 * 1024.0)
                ),
            )
            .with_help("split it, or raise `max_file_mib` in casebook.yaml"));
        }
    }
    let bytes = std::fs::read(path).map_err(|e| {
        Diagnostic::error(Code::Unreadable, Location::file(path), format!("cannot read this file: {e}"))
            .with_help("check that it exists and is readable")
    })?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let bytes = e.as_bytes();
            let valid = e.utf8_error().valid_up_to();
            let before = String::from_utf8_lossy(&bytes[..valid]);
            let line = before.matches('\n').count() as u32 + 1;
            let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
            let col = before[line_start..].chars().count() as u32 + 1;
            let shown = String::from_utf8_lossy(&bytes[line_start..]).lines().next().unwrap_or("").to_string();
            return Err(Diagnostic::error(
                Code::NotUtf8,
                Location::new(Arc::from(path), line, col),
                format!("this file is not valid UTF-8 (byte 0x{:02x})", bytes[valid]),
            )
            .with_source(shown, 1)
            .with_help("save the file as UTF-8"));
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let text = if text.contains('\r') { text.replace("\r\n", "\n").replace('\r', "\n") } else { text.to_string() };
    // CommonMark reads U+0000 as U+FFFD: no NUL reaches a page, an index or a terminal.
    Ok(if text.contains('\0') { text.replace('\0', "\u{FFFD}") } else { text })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_target_is_a_site_path_or_a_url_written_in_full() {
        for fine in ["/lab/", "https://example.org/moved/", "http://example.org"] {
            assert!(redirect_problem("to", fine).is_none(), "{fine}");
        }
        // `https:/x` and `HTTPS://x` parse, leniently, but are written into `_redirects` as
        // they are, where a host would not read them as URLs.
        for bad in ["https:/example.org", "HTTPS://example.org/", "https://", "ftp://example.org/", "lab/"] {
            assert!(redirect_problem("to", bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn a_nul_is_read_as_the_replacement_character() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.md");
        std::fs::write(&path, b"# A\0B\r\nline\0two\n").unwrap();
        assert_eq!(read_text(&path, 1).unwrap(), "# A\u{FFFD}B\nline\u{FFFD}two\n");
    }

    #[test]
    fn invalid_utf8_names_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.md");
        std::fs::write(&path, b"line one\nab\xffcd\n").unwrap();
        let d = read_text(&path, 16).unwrap_err();
        assert_eq!((d.location.line, d.location.col), (2, 3));
        assert_eq!(d.code, Code::NotUtf8);
    }

    #[test]
    fn bom_and_crlf_are_normalised() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.md");
        std::fs::write(&path, "\u{feff}a\r\nb\rc").unwrap();
        assert_eq!(read_text(&path, 16).unwrap(), "a\nb\nc");
    }

    #[test]
    fn files_over_the_limit_are_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.md");
        std::fs::write(&path, vec![b'a'; 2 * 1024 * 1024 + 1]).unwrap();
        let d = read_text(&path, 2).unwrap_err();
        assert_eq!(d.code, Code::TooLarge);
        assert!(d.message.contains("2.0 MiB; content files may be at most 2 MiB"), "{}", d.message);
        assert!(read_text(&path, 3).is_ok());
    }
}
