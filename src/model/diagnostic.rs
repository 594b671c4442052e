//! Diagnostics: what went wrong (or looks wrong), where, and what to do about it.
//!
//! Every stage returns its diagnostics as data; nothing is printed until the pipeline
//! is done, so `check` and `build` report the same things in the same order.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// How bad a diagnostic is. Errors fail the build; warnings are listed; notes (what
/// casebook did not understand) are counted, and listed by `check --explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The build fails.
    Error,
    /// Reported; the build goes on.
    Warning,
    /// Text that looks like a convention but produced nothing.
    Note,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        })
    }
}

/// Declares [`Code`] with its kebab-case names, so a name is written once.
macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// What kind of problem a diagnostic reports: a stable name a tool, a test or a
        /// reader's search can rely on (`error[unknown-record]`). Every code is listed,
        /// with an example, in docs/format.md; new ones may be added.
        #[non_exhaustive]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in the order docs/format.md lists them.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code's stable kebab-case name.
            pub fn name(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }
        }
    };
}

codes! {
    /// `content/` does not exist.
    NoContent = "no-content",
    /// A system folder without system.yaml.
    NoSystemYaml = "no-system-yaml",
    /// A run folder without run.yaml.
    NoRunYaml = "no-run-yaml",
    /// A symbolic link inside content/.
    Symlink = "symlink",
    /// A file or folder that cannot be read.
    Unreadable = "unreadable",
    /// A file or folder name that cannot be a URL segment.
    BadSlug = "bad-slug",
    /// A name casebook's own pages use.
    ReservedSlug = "reserved-slug",
    /// A file that is not part of the site.
    IgnoredFile = "ignored-file",
    /// YAML that does not parse, or has a key or value the file does not accept.
    InvalidYaml = "invalid-yaml",
    /// YAML nested too deep to be read safely.
    YamlTooDeep = "yaml-too-deep",
    /// A pattern of casebook.yaml's conventions that is not a valid grammar.
    BadConvention = "bad-convention",
    /// A status colour of casebook.yaml that is no colour, or whose text is hard to read.
    BadStatusColor = "bad-status-color",
    /// A `source_url` of casebook.yaml that cannot link to a file.
    BadSourceUrl = "bad-source-url",
    /// A content file over `max_file_mib`.
    TooLarge = "too-large",
    /// A content file or template that is not UTF-8.
    NotUtf8 = "not-utf8",
    /// Front matter opened and never closed.
    UnclosedFrontMatter = "unclosed-front-matter",
    /// A code fence opened and never closed.
    UnclosedFence = "unclosed-fence",
    /// A report listed in run.yaml that does not exist.
    MissingReport = "missing-report",
    /// A report file run.yaml does not list.
    UnlistedReport = "unlisted-report",
    /// A date not written YYYY-MM-DD.
    BadDate = "bad-date",
    /// A revision that does not look like a git commit.
    BadRevision = "bad-revision",
    /// A run vocabulary status the site vocabulary does not have.
    NotInSiteVocabulary = "not-in-site-vocabulary",
    /// A source ID registered twice.
    DuplicateSource = "duplicate-source",
    /// A `default_source` that is not registered.
    UnknownDefaultSource = "unknown-default-source",
    /// An `unpublished` ID pattern that is not a valid glob.
    BadIdPattern = "bad-id-pattern",
    /// A repository URL that is not http(s).
    BadUrl = "bad-url",
    /// A quote or citation naming a source the run does not register.
    UnknownSource = "unknown-source",
    /// A citation without a source in a run without a source register.
    NoSourceRegister = "no-source-register",
    /// A forge permalink pinned to a revision the run does not analyse.
    PermalinkRevision = "permalink-revision",
    /// A record ID declared twice.
    DuplicateRecord = "duplicate-record",
    /// A reference to a record that is declared nowhere.
    UnknownRecord = "unknown-record",
    /// A Markdown link of a report to a report or heading the site does not have.
    BrokenLink = "broken-link",
    /// A reference to a record of an `unpublished` set.
    UnpublishedReference = "unpublished-reference",
    /// A status word that is not in the vocabulary and resembles one that is.
    UnknownStatus = "unknown-status",
    /// A status of the site vocabulary that the run's `vocabulary` leaves out.
    StatusOutsideVocabulary = "status-outside-vocabulary",
    /// A place that looks like a convention but produced nothing.
    NotUnderstood = "not-understood",
    /// A record without a label whose title casebook derived.
    DerivedTitle = "derived-title",
    /// A quote's fence language without a highlighting grammar.
    NoGrammar = "no-grammar",
    /// A theme that does not exist.
    NoTheme = "no-theme",
    /// A redirect to a page the site does not have.
    BadRedirect = "bad-redirect",
    /// A record published before that is gone without a redirect.
    VanishedRecord = "vanished-record",
    /// The build cache (`--cache`) that could not be written.
    CacheNotWritten = "cache-not-written",
    /// A source's repository that cannot be read.
    BadRepository = "bad-repository",
    /// A verification that could read no source, so verified nothing.
    NothingVerified = "nothing-verified",
    /// A build of no report that would replace a published site.
    EmptySite = "empty-site",
    /// A run's revision that is not in its source's repository.
    UnknownRevision = "unknown-revision",
    /// A source's repository that `--fetch` could not fetch.
    FetchFailed = "fetch-failed",
    /// A quote that is not in the file it names, at the revision.
    QuoteNotFound = "quote-not-found",
    /// A quote that is in its file, but not at the cited lines.
    QuoteElsewhere = "quote-elsewhere",
    /// A quoted or cited path that is not in the source at the revision.
    MissingPath = "missing-path",
    /// Cited lines past the end of the file.
    LinesPastEnd = "lines-past-end",
    /// A folder cited as a file, or a file as a folder.
    WrongPathKind = "wrong-path-kind",
    /// `diff`: a record published in the new version only.
    RecordAdded = "record-added",
    /// `diff`: a record published in the old version only.
    RecordRemoved = "record-removed",
    /// `diff`: a record whose content changed.
    RecordChanged = "record-changed",
    /// `diff`: a record's status on a dimension changed.
    StatusChanged = "status-changed",
    /// `diff`: a finding without a record changed status, appeared or went.
    FindingChanged = "finding-changed",
    /// `diff`: a reference that resolved before and dangles now.
    NewlyDangling = "newly-dangling",
    /// `diff`: what verification found of a quote or citation changed.
    EvidenceChanged = "evidence-changed",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A place in a source file: 1-based line and column (in characters).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct Location {
    /// The file, as given on the command line joined with its path in the site.
    pub file: Arc<Path>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub col: u32,
}

/// A place in a report whose file is known from the report: what the model's items keep
/// (a large site has millions of them), made a [`Location`] by [`LineCol::of`] when a
/// diagnostic names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct LineCol {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub col: u32,
}

impl LineCol {
    /// This place in `file`.
    pub fn of(self, file: &Arc<Path>) -> Location {
        Location::new(Arc::clone(file), self.line, self.col)
    }
}

impl From<&Location> for LineCol {
    fn from(location: &Location) -> Self {
        LineCol { line: location.line, col: location.col }
    }
}

impl Location {
    /// A location at `line:col` of `file`.
    pub fn new(file: Arc<Path>, line: u32, col: u32) -> Self {
        Location { file, line, col }
    }

    /// The start of a file, for problems with the file as a whole.
    pub fn file(file: &Path) -> Self {
        Location { file: Arc::from(file), line: 1, col: 1 }
    }
}

impl Location {
    /// The file as diagnostics name it: as given, without a leading `./`.
    pub fn shown_file(&self) -> std::path::Display<'_> {
        self.file.strip_prefix(".").unwrap_or(&self.file).display()
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.shown_file(), self.line, self.col)
    }
}

/// True for a character a diagnostic must not print as it is: a control character other
/// than tab and line feed (a terminal would act on it), or a bidirectional-text control
/// (which can make a line read as what it is not). Such characters are shown as escapes
/// (`\u{202e}`).
pub fn is_unshown(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` as one line a terminal shows as it is: its [unshown](is_unshown) characters,
/// and its line feeds, escaped (`\u{1b}`, `\n`), so content can neither drive the
/// terminal nor forge a line of its own (`::error file=…`). Every line casebook prints
/// from content goes through this, or through a diagnostic's display, which does the same
/// for all but the line feeds of its own help.
pub fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| is_unshown(c) || c == '\n') {
        return text.into();
    }
    text.chars()
        .map(|c| match c {
            '\n' => "\\n".to_string(),
            c if is_unshown(c) => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// `text` with its [unshown](is_unshown) characters escaped.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_unshown) {
        return text.into();
    }
    text.chars().map(|c| if is_unshown(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect()
}

/// One finding about the content: a located message, the offending source line with a
/// caret under the span, and an optional hint saying what to do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Where it is.
    pub location: Location,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The source line at `location`, when there is one to show; of a long line, only
    /// the part around the span (boxed: diagnostics travel in `Result`s).
    pub source: Option<Box<SourcePart>>,
    /// How many characters the caret underlines (at least 1).
    pub span_chars: u32,
    /// What to do about it.
    pub help: Option<String>,
    /// What kind of problem it is.
    pub code: Code,
}

impl Diagnostic {
    /// An error of kind `code` at `location`.
    pub fn error(code: Code, location: Location, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, location, message)
    }

    /// A warning of kind `code` at `location`.
    pub fn warning(code: Code, location: Location, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, location, message)
    }

    /// A note of kind `code` at `location`: what casebook did not understand, or did
    /// on its own.
    pub fn note(code: Code, location: Location, message: impl Into<String>) -> Self {
        Self::new(Severity::Note, code, location, message)
    }

    /// A diagnostic of `severity` (an error of `warning`'s code under `--strict`).
    pub fn new(severity: Severity, code: Code, location: Location, message: impl Into<String>) -> Self {
        Diagnostic { severity, location, message: message.into(), source: None, span_chars: 1, help: None, code }
    }

    /// Attaches the source line and the length of the span to underline. Of a line
    /// longer than can be shown, only the characters around the span are kept (see
    /// [`SourcePart`]).
    pub fn with_source(self, line: impl AsRef<str>, span_chars: usize) -> Self {
        let part = SourcePart::of(line.as_ref(), self.location.col, span_chars);
        self.with_source_part(part, span_chars)
    }

    /// Attaches the part of the source line around the span.
    pub fn with_source_part(mut self, part: SourcePart, span_chars: usize) -> Self {
        self.source = Some(Box::new(part));
        self.span_chars = span_chars.max(1) as u32;
        self
    }

    /// Attaches a hint.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// True for the notes of places casebook did not understand.
    pub fn is_not_understood(&self) -> bool {
        self.severity == Severity::Note && self.code == Code::NotUnderstood
    }
}

/// The part of a source line a diagnostic shows: 100 characters either side of
/// the span, at most. A megabyte line with thousands of diagnostics must not be copied
/// into each.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourcePart {
    /// The characters kept.
    pub text: String,
    /// How many characters of the line come before them. (Whether the line goes on
    /// after them need not be kept: a part that was cut holds more than can be shown
    /// after the span.)
    pub from: u32,
}

impl SourcePart {
    /// The part of `line` around the 1-based column `col`.
    pub fn of(line: &str, col: u32, span_chars: usize) -> Self {
        let from = Self::first_shown(col);
        let start = line.char_indices().nth(from).map(|(i, _)| i);
        Self::from_byte(line, start, from, col, span_chars)
    }

    /// The character of the line (0-based) that the part around `col` starts at.
    pub fn first_shown(col: u32) -> usize {
        (col as usize).saturating_sub(1).saturating_sub(MAX_SHOWN)
    }

    /// The part of `line` around `col`, given where its first character
    /// ([`SourcePart::first_shown`]) is: at byte `start`, or past the end (`None`).
    pub fn from_byte(line: &str, start: Option<usize>, from: usize, col: u32, span_chars: usize) -> Self {
        let Some(start) = start else {
            return SourcePart { text: String::new(), from: from.min(line.chars().count()) as u32 };
        };
        let col = (col as usize).saturating_sub(1);
        let end = line[start..].char_indices().nth(col - from + span_chars + MAX_SHOWN + 1).map(|(i, _)| start + i);
        SourcePart { text: line[start..end.unwrap_or(line.len())].to_string(), from: from as u32 }
    }
}

/// Source lines longer than this many characters are shown as a window around the span.
const MAX_SHOWN: usize = 100;

/// Renders as `file:line:col: severity[code]: message`, then the source line with a caret
/// under the span, then `help: …`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}[{}]: {}",
            for_terminal(&self.location.to_string()),
            self.severity,
            self.code,
            for_terminal(&self.message)
        )?;
        if let Some(part) = &self.source {
            let number = self.location.line.to_string();
            let pad = " ".repeat(number.len());
            // Tabs would misplace the caret; show them as single spaces.
            let chars: Vec<char> = part.text.chars().map(|c| if c == '\t' { ' ' } else { c }).collect();
            // Positions in the whole line; `chars` holds those from `from` to `known_end`.
            let from = part.from as usize;
            let known_end = from + chars.len();
            let col = (self.location.col as usize).saturating_sub(1).clamp(from, known_end);
            let span = (self.span_chars as usize).max(1);
            // Long lines (table rows) are cut to a window around the span.
            let (start, end) = if from == 0 && chars.len() <= MAX_SHOWN {
                (0, chars.len())
            } else {
                let start = col.saturating_sub(MAX_SHOWN / 3).max(from);
                (start, (start + MAX_SHOWN).min(known_end))
            };
            // Escaped characters are wider than one: the caret moves and grows with them.
            let (mut line, mut caret_at, mut caret_len) = (String::new(), 0, span);
            for (pos, c) in (start..end).zip(&chars[start - from..end - from]) {
                let text = shown(c.encode_utf8(&mut [0; 4])).into_owned();
                let width = text.chars().count();
                if pos < col {
                    caret_at += width;
                } else if pos < col + span {
                    caret_len += width - 1;
                }
                line.push_str(&text);
            }
            if start > 0 {
                line.insert(0, '…');
                caret_at += 1;
            }
            if end < known_end {
                line.push('…');
            }
            write!(f, "\n{pad} |\n{number} | {line}\n{pad} | {}{}", " ".repeat(caret_at), "^".repeat(caret_len))?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {}", shown(help))?;
        }
        Ok(())
    }
}

/// Which diagnostics a terminal report lists: one policy for `build`, `check` and
/// `serve`. Errors are always listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Listing {
    /// Warnings (but for references to unpublished records).
    pub warnings: bool,
    /// Warnings about references to unpublished records: expected in a partly published
    /// analysis.
    pub unpublished_references: bool,
    /// Notes: places not understood, derived titles (`check --explain`).
    pub notes: bool,
}

impl Listing {
    /// True when `d` is listed.
    pub fn shows(&self, d: &Diagnostic) -> bool {
        match d.severity {
            Severity::Error => true,
            Severity::Warning if d.code == Code::UnpublishedReference => self.warnings && self.unpublished_references,
            Severity::Warning => self.warnings,
            Severity::Note => self.notes,
        }
    }
}

/// Sorts diagnostics by file, line and column, errors before warnings at one place, and
/// drops exact duplicates, so output is the same whatever order stages ran in.
pub fn sort_diagnostics(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(|a, b| {
        // Most diagnostics of a file share its `Arc`: comparing two paths component by
        // component was most of the sort at 10,000 reports.
        let (x, y) = (&a.location, &b.location);
        let file = if Arc::ptr_eq(&x.file, &y.file) { std::cmp::Ordering::Equal } else { x.file.cmp(&y.file) };
        file.then_with(|| (x.line, x.col, a.severity, &a.message).cmp(&(y.line, y.col, b.severity, &b.message)))
    });
    diagnostics.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_as_their_locations_order_them_whether_or_not_files_share_an_arc() {
        let shared: Arc<Path> = Path::new("c/a-b.md").into();
        let files: Vec<Arc<Path>> = vec![
            Arc::clone(&shared),
            Path::new("c/a-b.md").into(),
            Path::new("c/a/b.md").into(),
            Arc::clone(&shared),
            Path::new("c/a.md").into(),
            Path::new("c/a/b.md").into(),
        ];
        let mut diagnostics: Vec<Diagnostic> = files
            .iter()
            .enumerate()
            .flat_map(|(i, file)| {
                let line = 3 - (i as u32 % 3);
                [
                    Diagnostic::warning(Code::UnknownRecord, Location::new(Arc::clone(file), line, 1), "b"),
                    Diagnostic::error(Code::UnknownRecord, Location::new(Arc::clone(file), line, 1), "b"),
                    Diagnostic::warning(Code::UnknownRecord, Location::new(Arc::clone(file), 1, 2), "a"),
                ]
            })
            .collect();
        let mut expected = diagnostics.clone();
        expected.sort_by(|a, b| (&a.location, a.severity, &a.message).cmp(&(&b.location, b.severity, &b.message)));
        expected.dedup();
        sort_diagnostics(&mut diagnostics);
        assert_eq!(diagnostics, expected);
        // Path order, component by component (not byte by byte, where `-` comes before `/`).
        let mut files: Vec<&Path> = diagnostics.iter().map(|d| &*d.location.file).collect();
        files.dedup();
        assert_eq!(files, [Path::new("c/a/b.md"), Path::new("c/a-b.md"), Path::new("c/a.md")]);
    }

    #[test]
    fn renders_location_source_caret_and_help() {
        let d = Diagnostic::error(
            Code::UnknownRecord,
            Location::new(Path::new("./c/r.md").into(), 12, 5),
            "unknown record MEM-OBJ-rw",
        )
        .with_source("See MEM-OBJ-rw here.", 10)
        .with_help("fix it");
        assert_eq!(
            d.to_string(),
            "c/r.md:12:5: error[unknown-record]: unknown record MEM-OBJ-rw\n   |\n12 | See MEM-OBJ-rw here.\n   |     ^^^^^^^^^^\n  = help: fix it"
        );
    }

    #[test]
    fn control_and_bidi_characters_are_shown_escaped_with_the_caret_under_the_span() {
        let d = Diagnostic::error(
            Code::UnknownRecord,
            Location::new(Path::new("r.md").into(), 1, 5),
            "unknown record X\u{1b}[2J",
        )
        .with_source("a\u{202e}b OBJ-9\u{0} c", 6)
        .with_help("no \u{7}bell");
        let text = d.to_string();
        assert!(!text.chars().any(is_unshown), "{text:?}");
        assert!(text.contains("unknown record X\\u{1b}[2J") && text.contains("no \\u{7}bell"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[2], "1 | a\\u{202e}b OBJ-9\\u{0} c");
        // The span is `OBJ-9` and the NUL after it (6 characters from column 5).
        let caret = lines[3].find('^').unwrap();
        assert_eq!(&lines[2][caret..caret + lines[3].len() - caret], "OBJ-9\\u{0}");
    }

    #[test]
    fn long_lines_are_cut_around_the_span() {
        let line = format!("{}TARGET{}", "a".repeat(300), "b".repeat(300));
        let d = Diagnostic::warning(Code::UnknownRecord, Location::new(Path::new("r.md").into(), 1, 301), "m")
            .with_source(line, 6);
        let text = d.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].len() < 120, "{}", lines[2]);
        let source_col = lines[2].find("TARGET").unwrap();
        let caret_col = lines[3].find('^').unwrap();
        assert_eq!(lines[2][..source_col].chars().count(), lines[3][..caret_col].chars().count());
    }

    #[test]
    fn a_long_line_is_not_copied_into_every_diagnostic() {
        // Found by tests/limits.rs: thousands of unknown IDs on one long line made
        // gigabytes of diagnostics, each holding the whole line.
        let line = format!("{}TARGET{}", "é".repeat(100_000), "b".repeat(100_000));
        let whole = Diagnostic::warning(Code::UnknownRecord, Location::new(Path::new("r.md").into(), 1, 100_001), "m");
        let d = whole.clone().with_source(&line, 6);
        assert!(d.source.as_ref().unwrap().text.chars().count() <= 2 * MAX_SHOWN + 8);
        // Shown exactly as the whole line would be.
        let shown = d.to_string();
        assert!(
            shown.contains("…éééé")
                && shown.contains("TARGETbbbb")
                && shown.contains("b…\n")
                && shown.ends_with("^^^^^^"),
            "{shown}"
        );
        for (col, len) in [(1, 10), (5, 250), (40, 99), (95, 120), (150, 260)] {
            let text: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            let at = Diagnostic::error(Code::UnknownRecord, Location::new(Path::new("r.md").into(), 3, col), "m");
            let part = at.clone().with_source(&text, 3).to_string();
            let mut full = at.with_source("", 3);
            full.source = Some(Box::new(SourcePart { text: text.clone(), from: 0 }));
            assert_eq!(part, full.to_string(), "col {col}, {len} characters");
        }
    }
}
