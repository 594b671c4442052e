//! The model: site, system, run, report, record, quote, citation, diagnostic.
//!
//! **Invariant:** plain data. No I/O here, and nothing from minijinja, syntect or lol_html.
//! `parse` fills in [`Report`]s; `resolve` turns a run's reports into its record graph
//! ([`Run::records`]); every later stage only reads.

pub mod color;
mod diagnostic;
mod id;
mod meta;
mod shared;
mod text;
mod verification;

pub use diagnostic::{
    for_terminal, is_unshown, sort_diagnostics, Code, Diagnostic, LineCol, Listing, Location, Severity, SourcePart,
};
pub use id::RecordId;
pub use meta::{BaseUrl, HttpUrl, IsoDate, Revision, Slug, SourceUrl};
pub use shared::reading_shared;
pub use text::Text;
pub use verification::{CitationVerdict, QuoteVerdict, RunVerification, Verification, VerificationCounts};

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// A resolved site: everything every page is made from.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Site {
    /// The site's name.
    pub title: String,
    /// The status vocabulary in display order.
    pub statuses: Vec<Status>,
    /// Kind code → name.
    pub kinds: BTreeMap<String, String>,
    /// Family code → name.
    pub families: BTreeMap<String, String>,
    /// Systems in slug order.
    pub systems: Vec<System>,
    /// Where the site's own files can be read, for links from pages to them.
    pub source_url: Option<SourceUrl>,
    /// Whether each record has a page of its own or its run's one page of records holds it.
    pub record_pages: RecordPages,
    /// Whether each system has a page per status or one page listing every status.
    pub status_pages: StatusPages,
    /// How many entries the site's feed holds (the newest).
    pub feed_entries: usize,
    /// How the search page's index is split into files.
    pub search_files: SearchFiles,
}

/// How the search page's index (`search/browser/`) is split into files (`search:` of
/// casebook.yaml): small files make a query fetch few bytes; large ones make a large
/// site fewer files, for hosts that cap them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SearchFiles {
    /// Documents (records and sections) in each document file (`search/browser/d/…`),
    /// from 1 to 1024. A result shown fetches the file holding it.
    #[schemars(range(min = 1, max = 1024))]
    pub documents_per_file: u32,
    /// The average size of a term file (`search/browser/t/…`) before compression, in KiB,
    /// from 4 to 1024. A query fetches the file holding each of its words.
    #[schemars(range(min = 4, max = 1024))]
    pub term_file_kib: u32,
}

impl Default for SearchFiles {
    fn default() -> Self {
        SearchFiles { documents_per_file: 16, term_file_kib: 24 }
    }
}

impl SearchFiles {
    /// The bounds of `documents_per_file`.
    pub const DOCUMENTS_PER_FILE: std::ops::RangeInclusive<u32> = 1..=1024;
    /// The bounds of `term_file_kib`.
    pub const TERM_FILE_KIB: std::ops::RangeInclusive<u32> = 4..=1024;

    /// The average size of a term file, in bytes.
    pub fn term_file_bytes(self) -> usize {
        self.term_file_kib as usize * 1024
    }
}

/// How records are laid out in pages (`record_pages:` of casebook.yaml). A record's
/// address `/<system>/<run>/records/<ID>.html` is kept either way: as its own page, or
/// as a redirect to its place on its run's page of records, `records.html#<ID>.html`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecordPages {
    /// A page per record (`records/<ID>.html`).
    #[default]
    Separate,
    /// One page per run holding all its records (`records.html`), each at the anchor named
    /// by the file its own page would have: a site of a few files per report instead of
    /// one per record, for hosts that cap a site's files.
    PerRun,
}

/// How a system's records and findings are listed by status (`status_pages:` of
/// casebook.yaml). The site-wide status pages are a page per status either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StatusPages {
    /// A page per status of each system (`/<system>/statuses/<status>/`).
    #[default]
    Separate,
    /// One page per system listing every status (`/<system>/statuses.html`), each at the
    /// anchor named by the folder its own page would have (`#<status>/`), each page's
    /// address kept by a redirect: a few files a system instead of one per status.
    PerSystem,
}

/// A status of the site's vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Status {
    /// The status as written in reports (`implemented`).
    pub name: String,
    /// One line saying what it means.
    pub meaning: String,
    /// Its badge's colours.
    pub colors: color::BadgeColors,
}

/// An entry of a run's source register.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Source {
    /// `SRC-1`.
    pub id: String,
    /// What the source is.
    pub title: String,
    /// Repository URL; quotes and citations link into it.
    pub repository: Option<HttpUrl>,
    /// The source's revision; the run's revision when absent.
    pub revision: Option<Revision>,
    /// Folder within the repository that citation paths are relative to.
    pub path: Option<String>,
    /// Free Markdown.
    pub note: Option<String>,
}

/// A set of records a run refers to without publishing them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct UnpublishedSet {
    /// What they are (`runtime report`).
    pub name: String,
    /// Glob patterns over record IDs (`RT-*`).
    pub ids: Vec<String>,
    /// Free Markdown.
    pub note: Option<String>,
}

/// A system under analysis (Fractal, EXIA SEED).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct System {
    /// Folder name; URL segment.
    pub slug: Slug,
    /// Display name.
    pub name: String,
    /// The system's repository URL.
    pub repository: Option<HttpUrl>,
    /// Markdown summary.
    pub summary: Option<String>,
    /// Runs in slug order. Shared, so that a rebuild keeps the runs it did not touch.
    pub runs: Vec<std::sync::Arc<Run>>,
}

/// One analysis of a system frozen at a revision.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Run {
    /// Folder name; URL segment.
    pub slug: Slug,
    /// Its `run.yaml`, where diagnostics about the run as a whole point.
    #[serde(deserialize_with = "shared::arc_path")]
    pub file: std::sync::Arc<std::path::Path>,
    /// Display name.
    pub name: String,
    /// The frozen git revision.
    pub revision: Revision,
    /// When the run was made.
    pub date: Option<IsoDate>,
    /// The lens of the analysis.
    pub lens: Option<String>,
    /// Last date the conclusions apply to.
    pub applicability_ends: Option<IsoDate>,
    /// Statuses in force (names), in the site's order.
    pub vocabulary: Vec<String>,
    /// The source register.
    pub sources: Vec<Source>,
    /// The source of bare citations.
    pub default_source: Option<String>,
    /// Sets of records referred to but not published.
    pub unpublished: Vec<UnpublishedSet>,
    /// The kinds of ID its reports declare in a shape of their own (`ED` of `ED-SEL`),
    /// read as records of this run besides the site's kinds, sorted.
    pub learned_kinds: Vec<String>,
    /// Reports in display order.
    pub reports: Vec<Report>,
    /// The record graph of this run, by ID.
    pub records: BTreeMap<RecordId, Record>,
    /// The subjects of the findings without a published record, in the order each is
    /// first written: a subject is to these findings what a record is to its own
    /// (counted once per status, searched as one document).
    pub subjects: Vec<SubjectFindings>,
    /// Per status: how many published records carry it, and how many `subjects` have a
    /// finding of it (what every count of the site sums).
    pub status_counts: BTreeMap<Arc<str>, StatusCounts>,
}

/// How many of a run's published records carry a status, and how many of its subjects
/// without a record have a finding of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatusCounts {
    /// Published records.
    pub records: usize,
    /// Subjects without a published record.
    pub subjects: usize,
}

/// A subject of findings without a published record (`Consolidation`, or a record the run
/// only refers to), with its findings.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SubjectFindings {
    /// What the findings are about.
    pub name: String,
    /// Its findings (into `Report::findings`), in report order.
    pub findings: Vec<At>,
    /// The statuses of its findings, each once, sorted.
    #[serde(deserialize_with = "shared::arc_strs")]
    pub statuses: Vec<Arc<str>>,
}

impl Report {
    /// The section of the heading that opens the report and is its title (a level-one
    /// heading whose text is the title, with nothing before it): its page shows it once,
    /// as the page's title.
    pub fn title_section(&self) -> Option<&Section> {
        let first = self.sections.first().filter(|s| s.level == 1 && s.title.trim() == self.title.trim())?;
        opens_body(&self.markdown, self.body_line, first.line).then_some(first)
    }

    /// Gives back the room its lists grew into while it was parsed: a large site holds
    /// every report at once.
    pub fn shrink_to_fit(&mut self) {
        self.sections.shrink_to_fit();
        self.declarations.shrink_to_fit();
        for declaration in &mut self.declarations {
            declaration.fields.shrink_to_fit();
        }
        self.annotations.shrink_to_fit();
        self.mentions.shrink_to_fit();
        self.quotes.shrink_to_fit();
        self.citations.shrink_to_fit();
        self.findings.shrink_to_fit();
        self.limits.shrink_to_fit();
        // Made again from their sorted entries, as full nodes (grown by inserts in order,
        // each node is left about two thirds full).
        self.row_anchors = std::mem::take(&mut self.row_anchors).into_iter().collect();
        self.block_anchors = std::mem::take(&mut self.block_anchors).into_iter().collect();
    }

    /// The text of line `line` of the report's file (front matter counted), or `""`.
    pub fn line_text(&self, line: u32) -> &str {
        let index = line.saturating_sub(self.body_line) as usize;
        self.markdown.lines().nth(index).unwrap_or("")
    }

    /// The section at `index` (an item's `section`), if any.
    pub fn section(&self, index: Option<u32>) -> Option<&Section> {
        self.sections.get(index? as usize)
    }

    /// A piece of the report's text (a field's value, a citing sentence).
    pub fn text<'a>(&'a self, text: &'a Text) -> &'a str {
        text.get(&self.markdown)
    }

    /// A place in the report, with the report's file, as a diagnostic names it.
    pub fn location(&self, at: LineCol) -> Location {
        at.of(&self.file)
    }

    /// `file:line` of a line of the report, as pages cite it.
    pub fn source_at(&self, line: u32) -> String {
        format!("{}:{line}", self.source_path)
    }
}

impl Source {
    /// `path` as a path of the source's repository: below the source's `path`, if it has
    /// one.
    pub fn repository_path(&self, path: &str) -> String {
        match &self.path {
            // `""`: the source's own path, a document (`README.md`) cited by its lines.
            Some(prefix) if path.is_empty() => prefix.clone(),
            Some(prefix) => format!("{}/{}", prefix.trim_end_matches('/'), path.trim_start_matches('/')),
            None => path.to_string(),
        }
    }
}

impl Source {
    /// True when the source is one document of its repository (`path: README.md`): what
    /// cites it by lines or section cites that file.
    pub fn is_document(&self) -> bool {
        self.path.as_deref().is_some_and(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            !p.ends_with('/') && !p.contains('*') && name.rsplit_once('.').is_some_and(|(stem, _)| !stem.is_empty())
        })
    }
}

impl Run {
    /// The records declared in this run, in ID order (not those only referred to).
    pub fn published_records(&self) -> impl Iterator<Item = &Record> + '_ {
        self.records.values().filter(|r| r.is_published())
    }

    /// True when `id` is a record declared in this run.
    pub fn publishes(&self, id: &RecordId) -> bool {
        self.records.get(id).is_some_and(Record::is_published)
    }

    /// The declaration at `at`.
    pub fn declaration(&self, at: At) -> &Declaration {
        &self.reports[at.report as usize].declarations[at.index as usize]
    }

    /// The annotation at `at`.
    pub fn annotation(&self, at: At) -> &Annotation {
        &self.reports[at.report as usize].annotations[at.index as usize]
    }

    /// The register entry of `id` (`SRC-1`).
    pub fn source(&self, id: &str) -> Option<&Source> {
        self.sources.iter().find(|s| s.id == id)
    }

    /// The finding at `at`.
    pub fn finding(&self, at: At) -> &Finding {
        &self.reports[at.report as usize].findings[at.index as usize]
    }

    /// The findings about `record`, in report order.
    pub fn findings_of<'a>(&'a self, record: &'a Record) -> impl Iterator<Item = &'a Finding> + 'a {
        record.findings.iter().map(|at| self.finding(*at))
    }

    /// The statuses of `record`'s findings, each once, sorted.
    pub fn statuses_of<'a>(&'a self, record: &'a Record) -> impl Iterator<Item = &'a str> + 'a {
        record.statuses.iter().map(|s| &**s)
    }

    /// Every finding of the run whose subject is not a published record of it (a named
    /// subject, or a record the run only refers to), with where it is, in report order.
    pub fn findings_without_record(&self) -> impl Iterator<Item = (At, &Finding)> + '_ {
        let mut places: Vec<At> = self.subjects.iter().flat_map(|s| s.findings.iter().copied()).collect();
        places.sort_unstable();
        places.into_iter().map(move |at| (at, self.finding(at)))
    }
}

/// A report of a run: its text and what `parse` recognised in it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Report {
    /// File stem; URL segment.
    pub slug: Slug,
    /// Title from front matter or file name.
    pub title: String,
    /// Report type (`memory`, `synthesis`).
    pub report_type: Option<String>,
    /// The document type it follows.
    pub schema: Option<String>,
    /// Position among the run's reports.
    pub order: Option<i64>,
    /// Where the original document can be read.
    pub original: Option<String>,
    /// The report file, as read.
    #[serde(deserialize_with = "shared::arc_path")]
    pub file: Arc<Path>,
    /// The report file relative to the site root, `/`-separated: what pages show.
    pub source_path: String,
    /// The Markdown body (front matter removed).
    pub markdown: Arc<str>,
    /// File line of the first body line.
    pub body_line: u32,
    /// Headings in order, with their anchors.
    pub sections: Vec<Section>,
    /// Records declared here (headings and ID-first rows), in order.
    pub declarations: Vec<Declaration>,
    /// `On <ID>` annotations, in order.
    pub annotations: Vec<Annotation>,
    /// References to records, in order.
    pub mentions: Vec<Mention>,
    /// Quoted evidence, in order.
    pub quotes: Vec<Quote>,
    /// Citations of the source register, in order.
    pub citations: Vec<Citation>,
    /// Findings, in order.
    pub findings: Vec<Finding>,
    /// Anchors of table rows that declare records or hold findings, by (table index,
    /// body row index).
    #[serde(deserialize_with = "shared::arc_str_values")]
    pub row_anchors: BTreeMap<(usize, usize), Arc<str>>,
    /// Anchors of paragraphs and list items that hold findings, by the byte offset where
    /// the block starts in [`Report::markdown`].
    #[serde(deserialize_with = "shared::arc_str_values")]
    pub block_anchors: BTreeMap<usize, Arc<str>>,
    /// What the report says it did not establish: the rows of its limitation and
    /// coverage tables and the items of its lists about limits, in order.
    pub limits: Vec<Limit>,
    /// Its Markdown links to places of the site's content (another report, a heading),
    /// in order: what `links` checks and the pages lead to.
    pub links: Vec<LocalLink>,
}

/// A Markdown link of a report to another report or to a heading (`memory.md#writes`,
/// `#writes`): it names a file of the content, which the site publishes as a page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LocalLink {
    /// The destination as written.
    pub written: String,
    /// The file it names, relative to the site root and `/`-separated as
    /// [`Report::source_path`] is; none for the report itself (`#writes`).
    pub file: Option<String>,
    /// The anchor it names, if any.
    pub fragment: Option<String>,
    /// Where it is written.
    pub at: LineCol,
}

/// One thing an analysis says it did not inspect or establish, and what that prevents.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Limit {
    /// Its handle: the analysis's own (`L3`) where it numbers them, else derived.
    pub handle: String,
    /// True when the analysis wrote the handle.
    pub handle_given: bool,
    /// A limitation, or a row of a coverage table (what was covered, and how far).
    pub kind: LimitKind,
    /// What a coverage row covers (its first cell); for a limitation, none.
    pub scope: Option<String>,
    /// The limitation, or the coverage and its limits, as Markdown.
    pub text: String,
    /// The conclusion it prevents, as Markdown, where the analysis says.
    pub prevents: Option<String>,
    /// The evidence that would resolve it, as Markdown, where the analysis says.
    pub resolves: Option<String>,
    /// Its anchor on the report page.
    #[serde(deserialize_with = "shared::arc_str")]
    pub anchor: Arc<str>,
    /// Where it is written.
    pub location: LineCol,
    /// The section it is in.
    pub section: Option<u32>,
    /// The records it names.
    pub mentions: Vec<RecordId>,
    /// The paths it cites.
    pub paths: Vec<String>,
}

/// What kind of limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LimitKind {
    /// Something not inspected or not established.
    Limitation,
    /// A row of a coverage table: what was read, and the limits of the conclusions.
    Coverage,
}

/// A heading of a report.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Section {
    /// Its anchor on the report page.
    #[serde(deserialize_with = "shared::arc_str")]
    pub anchor: Arc<str>,
    /// Heading level (1–6).
    pub level: u8,
    /// The heading text.
    pub title: String,
    /// File line.
    pub line: u32,
}

/// True when file line `line` is the first line of a body (starting at file line
/// `body_line`) that is not blank.
pub fn opens_body(markdown: &str, body_line: u32, line: u32) -> bool {
    let Some(before) = line.checked_sub(body_line) else { return false };
    markdown.lines().take(before as usize).all(|l| l.trim().is_empty())
}

/// Who a piece of text belongs to: a record's heading body or row, or an annotation.
/// (`u32`, as a report's lists are shorter than that: every finding, mention, quote and
/// citation holds one, millions on a large site.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Owner {
    /// Index into [`Report::declarations`].
    Declaration(u32),
    /// Index into [`Report::annotations`].
    Annotation(u32),
}

impl Owner {
    /// The declaration at `index` of its report.
    pub fn declaration(index: usize) -> Owner {
        Owner::Declaration(u32::try_from(index).expect("a report declares fewer than 4 billion records"))
    }

    /// The annotation at `index` of its report.
    pub fn annotation(index: usize) -> Owner {
        Owner::Annotation(u32::try_from(index).expect("a report has fewer than 4 billion annotations"))
    }

    /// The record the text belongs to: the declared one, or the annotation's target.
    /// Takes the two lists rather than a [`Report`], so that a report being parsed asks
    /// it of its lists so far.
    pub fn record<'a>(self, declarations: &'a [Declaration], annotations: &'a [Annotation]) -> &'a RecordId {
        match self {
            Owner::Declaration(i) => &declarations[i as usize].id,
            Owner::Annotation(i) => &annotations[i as usize].target,
        }
    }
}

/// How a record is declared.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DeclarationForm {
    /// An ID heading of this level; the body follows it.
    Heading {
        /// Heading level.
        level: u8,
    },
    /// A row of a table whose first cell starts with the ID.
    TableRow {
        /// Index of the table in the report.
        table: usize,
        /// The part named by `(part: …)`.
        part: Option<String>,
    },
}

/// One place that declares a record (a record may have several rows).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Declaration {
    /// The record.
    pub id: RecordId,
    /// Heading or table row.
    pub form: DeclarationForm,
    /// Anchor on the report page.
    #[serde(deserialize_with = "shared::arc_str")]
    pub anchor: Arc<str>,
    /// The label, if given here.
    pub label: Option<String>,
    /// Fields (`Key: value` paragraphs, or column → cell), in order.
    pub fields: Vec<Field>,
    /// Byte range of a heading record's body in [`Report::markdown`].
    pub body: Option<Range<usize>>,
    /// Where the ID is written.
    pub location: LineCol,
    /// Index of the enclosing section.
    pub section: Option<u32>,
}

/// A named value of a record.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Field {
    /// Column header or key (shared by the rows of a table).
    #[serde(deserialize_with = "shared::arc_str")]
    pub name: Arc<str>,
    /// The value as Markdown source.
    pub value: Text,
}

/// A conclusion the analysis states: a status of the vocabulary on a dimension of a
/// subject, where it is written and what it says. Its words are shared, not copied: a
/// large site has millions of findings drawn from a few words.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    /// What the status is about.
    pub subject: Subject,
    /// The dimension (`(c) Activation`, `operation conclusion`); empty for a plain status.
    #[serde(deserialize_with = "shared::arc_str")]
    pub dimension: Arc<str>,
    /// The status, as the vocabulary names it.
    #[serde(deserialize_with = "shared::arc_str")]
    pub status: Arc<str>,
    /// A qualifier (`listing` in `implemented (listing)`, or the lead of
    /// `wiring implemented`).
    #[serde(deserialize_with = "shared::option_arc_str")]
    pub qualifier: Option<Arc<str>>,
    /// The part of its record it applies to.
    #[serde(deserialize_with = "shared::option_arc_str")]
    pub part: Option<Arc<str>>,
    /// The statement as written (the cell or the sentence), Markdown.
    pub statement: Text,
    /// How it is written.
    pub form: FindingForm,
    /// Where the status word is.
    pub location: LineCol,
    /// Index of the enclosing section.
    pub section: Option<u32>,
    /// Its anchor on the report page (its row's, or its paragraph's).
    #[serde(deserialize_with = "shared::arc_str")]
    pub anchor: Arc<str>,
    /// The record or annotation whose text holds it.
    pub owner: Option<Owner>,
    /// The citations written with it (its row, cell or paragraph), into
    /// [`Report::citations`].
    pub evidence: Range<u32>,
}

/// What a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Subject {
    /// A record: the row's ID, or the record whose text holds the finding.
    Record(RecordId),
    /// What the analysis names without an ID: the row's first cell (`Consolidation`), the
    /// key (`Promotion path finding: …`, `Status of "compression": …`), or else the
    /// section the sentence is in.
    Named(String),
}

impl Finding {
    /// [`Finding::evidence`], to index [`Report::citations`] with.
    pub fn evidence_range(&self) -> Range<usize> {
        self.evidence.start as usize..self.evidence.end as usize
    }
}

impl Subject {
    /// The record's ID, or the name.
    pub fn name(&self) -> &str {
        match self {
            Subject::Record(id) => id.as_str(),
            Subject::Named(name) => name,
        }
    }
}

/// The forms a finding is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum FindingForm {
    /// A cell of a column whose header ends in `Status`.
    StatusColumn,
    /// A cell of a column whose cells start with statuses (`(c) Activation`).
    DimensionColumn,
    /// `Status: …`, `<dimension> status: …`, `Status of <X>: …`, `<X> finding: …`.
    StatusKey,
    /// `Key: <status> …` in a list item or a record's field.
    KeyValue,
    /// A sentence of a record's prose: `User scoping is *absent*`, the status emphasised.
    Sentence,
}

impl FindingForm {
    /// The form's name in the manifest (`status-column`).
    pub fn name(self) -> &'static str {
        match self {
            FindingForm::StatusColumn => "status-column",
            FindingForm::DimensionColumn => "dimension-column",
            FindingForm::StatusKey => "status-key",
            FindingForm::KeyValue => "key-value",
            FindingForm::Sentence => "sentence",
        }
    }

    /// True for forms whose words say a status follows: a value that is no status is then
    /// worth a diagnostic.
    pub fn is_explicit(self) -> bool {
        matches!(self, FindingForm::StatusColumn | FindingForm::StatusKey)
    }
}

/// An `On <ID>` section annotating a record.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Annotation {
    /// The annotated record.
    pub target: RecordId,
    /// Anchor on the report page.
    #[serde(deserialize_with = "shared::arc_str")]
    pub anchor: Arc<str>,
    /// Byte range of the body in [`Report::markdown`].
    pub body: Range<usize>,
    /// Where the heading is.
    pub location: LineCol,
    /// Index of the section (its own heading).
    pub section: Option<u32>,
    /// The record's own text kept elsewhere (`Annex CTL-02 — …`, a step the record names),
    /// not a note about it (`On OBJ-03`): the IDs it names are the record's references.
    pub own_text: bool,
}

/// A reference to a record in prose, a cell or a heading.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Mention {
    /// The referenced ID.
    pub target: RecordId,
    /// Where it is written.
    pub location: LineCol,
    /// The citing sentence, as plain text (cut short past 320 characters).
    pub context: Text,
    /// Index of the enclosing section.
    pub section: Option<u32>,
    /// The record or annotation whose text contains it.
    pub owner: Option<Owner>,
    /// True when it is a whole code span (`` `SW-C-loop` ``): a reference only to a
    /// record the run has, since code may show an ID's pattern (`` `GR-n` ``).
    #[serde(default)]
    pub in_code: bool,
}

/// A line range, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct LineRange {
    /// First line.
    pub start: u32,
    /// Last line.
    pub end: u32,
}

impl LineRange {
    /// `line 9`, `lines 9-12`: the range in a sentence.
    pub fn words(&self) -> String {
        if self.start == self.end {
            format!("line {self}")
        } else {
            format!("lines {self}")
        }
    }
}

impl std::fmt::Display for LineRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.start == self.end {
            write!(f, "{}", self.start)
        } else {
            write!(f, "{}-{}", self.start, self.end)
        }
    }
}

/// Quoted evidence: a code block followed by `--- path`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Quote {
    /// The fence's language, or one inferred from the path.
    pub language: Option<String>,
    /// The quoted code.
    pub code: String,
    /// The quoted file.
    pub path: String,
    /// `SRC-n` if named; else the run's default source.
    pub source: Option<String>,
    /// Quoted lines, when given.
    pub lines: Vec<LineRange>,
    /// Where the code block starts.
    pub location: LineCol,
    /// The record or annotation it belongs to.
    pub owner: Option<Owner>,
}

/// A citation of the source register.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Citation {
    /// `SRC-n` named or inherited in the same text; else the run's default source.
    #[serde(deserialize_with = "shared::option_arc_str")]
    pub source: Option<Arc<str>>,
    /// True when the text names the source itself (`SRC-1 …`).
    pub names_source: bool,
    /// The cited file.
    pub path: Option<Box<str>>,
    /// A cited document section.
    pub section: Option<Box<str>>,
    /// Cited lines.
    pub lines: Box<[LineRange]>,
    /// Where it is written.
    pub location: LineCol,
    /// The record or annotation it belongs to.
    pub owner: Option<Owner>,
}

/// A place in a run: report index and the index of an item in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct At {
    /// Index into [`Run::reports`].
    pub report: u32,
    /// Index into the report's list named by the field holding this.
    pub index: u32,
}

impl At {
    /// Item `index` of report `report`. A report's items are counted in `u32`, as the
    /// model's places are (a report is at most `max_file_mib` of text, 4 GiB at most).
    pub fn new(report: usize, index: usize) -> Self {
        let narrow = |n: usize| u32::try_from(n).expect("fewer than 4 billion reports and items in a report");
        At { report: narrow(report), index: narrow(index) }
    }
}

/// Whether a record has a page of its own content.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Publication {
    /// Declared in a report of the run.
    Published,
    /// Referenced or annotated only; belongs to this unpublished set (index into
    /// [`Run::unpublished`]).
    Unpublished(usize),
}

impl Record {
    /// True when it is declared in its run, not only referred to.
    pub fn is_published(&self) -> bool {
        self.publication == Publication::Published
    }

    /// Its label, or else its derived label.
    pub fn title_label(&self) -> Option<&str> {
        self.label.as_deref().or(self.derived_label.as_deref())
    }
}

/// A record of a run, resolved: where it is declared, annotated and referenced. Its lists
/// are boxed slices, made once `resolve` has gathered them: a large site holds hundreds of
/// thousands of records.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Record {
    /// Its ID.
    pub id: RecordId,
    /// Kind code.
    #[serde(deserialize_with = "shared::arc_str")]
    pub kind: Arc<str>,
    /// Family code, for grammars with one.
    #[serde(deserialize_with = "shared::option_arc_str")]
    pub family: Option<Arc<str>>,
    /// The first label given.
    pub label: Option<Box<str>>,
    /// For a published record its reports give no label: a title made from its parts,
    /// the cell of its row that describes it, or the first sentence of its body (pages
    /// show it as derived).
    pub derived_label: Option<Box<str>>,
    /// Published or not.
    pub publication: Publication,
    /// Declarations (into `Report::declarations`), first is where it is declared.
    pub declarations: Box<[At]>,
    /// Annotations (into `Report::annotations`).
    pub annotations: Box<[At]>,
    /// References to it (into `Report::mentions`).
    pub backlinks: Box<[At]>,
    /// Records its own text references, sorted, without repeats.
    pub references: Box<[RecordId]>,
    /// Quotes in its text (into `Report::quotes`).
    pub quotes: Box<[At]>,
    /// Citations in its text (into `Report::citations`).
    pub citations: Box<[At]>,
    /// The findings about it (into `Report::findings`), in report order.
    pub findings: Box<[At]>,
    /// The statuses of its findings, each once, sorted.
    #[serde(deserialize_with = "shared::arc_strs")]
    pub statuses: Box<[Arc<str>]>,
    /// Names of its parts, in order.
    pub parts: Box<[String]>,
}
