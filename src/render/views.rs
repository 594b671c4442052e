//! What templates see: plain serialisable views built from the model. Templates never
//! reach into the model, so a theme can be rewritten without touching the pipeline.

use serde::Serialize;

use crate::model::{HttpUrl, IsoDate, Revision};

/// A link with a label.
#[derive(Debug, Serialize, Clone)]
pub struct Link {
    /// Shown text.
    pub name: String,
    /// Site-absolute URL.
    pub url: String,
}

/// Site-wide values every page has.
#[derive(Debug, Serialize)]
pub struct SiteView {
    /// Site title.
    pub title: String,
    /// Home URL.
    pub home: String,
    /// Status page URL.
    pub statuses_url: String,
    /// Search page URL.
    pub search_url: String,
    /// Stylesheets.
    pub stylesheets: Vec<String>,
    /// The highlighting stylesheet, linked only by pages that show code.
    pub highlight_stylesheet: String,
    /// The icon.
    pub favicon: String,
}

/// A status with its meaning and count.
#[derive(Debug, Serialize, Clone)]
pub struct StatusCount {
    /// Status name.
    pub name: String,
    /// CSS-safe form of the name.
    pub class: String,
    /// One-line meaning.
    pub meaning: String,
    /// Its page.
    pub url: String,
    /// How many published records carry it.
    pub count: usize,
    /// How many subjects without a published record (`Consolidation`) have a finding of it.
    pub findings: usize,
}

/// One row of the home page's systems side by side: a system's runs of one lens, and
/// how many records and findings carry each status.
#[derive(Debug, Serialize)]
pub struct SideBySideRow {
    /// The system.
    pub system: Link,
    /// The lens of its runs in this row.
    pub lens: Option<String>,
    /// Per status of the table's columns, in order.
    pub cells: Vec<StatusCount>,
}

/// How many published records of one kind each system has.
#[derive(Debug, Serialize)]
pub struct KindRow {
    /// Kind code.
    pub kind: String,
    /// Kind name.
    pub kind_name: Option<String>,
    /// Per system, in the home page's order.
    pub counts: Vec<KindCell>,
}

/// A system as a row of the home page of a site of many systems (its runs are on its
/// own page).
#[derive(Debug, Serialize)]
pub struct SystemRow {
    /// The system.
    pub system: Link,
    /// Its last runs, in its order (at most [`SystemRow::RUNS_SHOWN`]).
    pub runs: Vec<Link>,
    /// How many runs it has besides those.
    pub more_runs: usize,
    /// Its published records, over every run.
    pub records: usize,
    /// Its findings, over every run.
    pub findings: usize,
    /// Per kind of the table's columns, in order.
    pub kinds: Vec<KindCell>,
}

impl SystemRow {
    /// How many of a system's runs its row names.
    pub const RUNS_SHOWN: usize = 3;
}

/// A kind of record, as a column of the home page's table of systems.
#[derive(Debug, Serialize)]
pub struct KindColumn {
    /// Kind code.
    pub kind: String,
    /// Kind name.
    pub kind_name: Option<String>,
}

/// How many published records of a kind a system has, and the search page listing them.
#[derive(Debug, Serialize)]
pub struct KindCell {
    /// The number of records.
    pub count: usize,
    /// The search page filtered to the system and the kind.
    pub url: String,
}

/// A run in a listing.
#[derive(Debug, Serialize)]
pub struct RunSummary {
    /// Run name.
    pub name: String,
    /// Its page.
    pub url: String,
    /// Short revision.
    pub revision: String,
    /// Date, if known.
    pub date: Option<IsoDate>,
    /// Lens, if given.
    pub lens: Option<String>,
    /// Number of reports.
    pub reports: usize,
    /// Number of published records.
    pub records: usize,
    /// Number of referenced but unpublished records.
    pub unpublished: usize,
    /// Records and subjects without a record by status (vocabulary order, zero counts left out).
    pub statuses: Vec<StatusCount>,
}

/// A system in a listing or on its page.
#[derive(Debug, Serialize)]
pub struct SystemSummary {
    /// Display name.
    pub name: String,
    /// Its page.
    pub url: String,
    /// Repository URL.
    pub repository: Option<HttpUrl>,
    /// Summary as HTML.
    pub summary_html: Option<String>,
    /// Its runs.
    pub runs: Vec<RunSummary>,
}

/// A status carried by a record.
#[derive(Debug, Serialize, Clone)]
pub struct StatusBadge {
    /// Status name.
    pub name: String,
    /// CSS-safe form of the name.
    pub class: String,
    /// Dimension (`operation conclusion`), possibly empty.
    pub dimension: String,
    /// Qualifier (`listing`).
    pub qualifier: Option<String>,
    /// Part it applies to.
    pub part: Option<String>,
    /// Meaning of the status.
    pub meaning: String,
    /// The status's page.
    pub url: String,
}

/// A record in a listing.
#[derive(Debug, Serialize, Clone)]
pub struct RecordSummary {
    /// ID.
    pub id: String,
    /// Its page.
    pub url: String,
    /// Label, or else the derived label.
    pub label: Option<String>,
    /// True when `label` is derived (the reports give none).
    pub derived: bool,
    /// Kind code.
    pub kind: String,
    /// Statuses.
    pub statuses: Vec<StatusBadge>,
}

/// One cell of the kind × status matrix.
#[derive(Debug, Serialize)]
pub struct MatrixRow {
    /// Kind code.
    pub kind: String,
    /// Kind name.
    pub kind_name: String,
    /// Counts per status, in the order of the run's vocabulary.
    pub counts: Vec<usize>,
    /// Records with no status.
    pub none: usize,
    /// All records of the kind.
    pub total: usize,
}

/// A source register entry.
#[derive(Debug, Serialize)]
pub struct SourceView {
    /// `SRC-1`.
    pub id: String,
    /// Anchor on the run page.
    pub anchor: String,
    /// Title.
    pub title: String,
    /// Repository URL.
    pub repository: Option<HttpUrl>,
    /// Link to the repository at the revision.
    pub tree_url: Option<String>,
    /// Revision.
    pub revision: Revision,
    /// Path within the repository.
    pub path: Option<String>,
    /// Note as HTML.
    pub note_html: Option<String>,
}

/// A referenced but unpublished record on its run's page.
#[derive(Debug, Serialize)]
pub struct UnpublishedRef {
    /// ID.
    pub id: String,
    /// Its (stub) page.
    pub url: String,
    /// Number of references.
    pub references: usize,
    /// Where it is first referenced.
    pub first: Link,
    /// File and line of the first reference.
    pub first_at: String,
}

/// One set of unpublished records.
#[derive(Debug, Serialize)]
pub struct UnpublishedGroup {
    /// Name of the set.
    pub name: String,
    /// Patterns.
    pub patterns: Vec<String>,
    /// Note as HTML.
    pub note_html: Option<String>,
    /// Its records.
    pub records: Vec<UnpublishedRef>,
}

/// A report in a listing.
#[derive(Debug, Serialize)]
pub struct ReportSummary {
    /// Title.
    pub title: String,
    /// Its page.
    pub url: String,
    /// Type.
    pub report_type: Option<String>,
    /// Records declared in it.
    pub records: usize,
    /// Quotes in it.
    pub quotes: usize,
}

/// A heading in a report's table of contents.
#[derive(Debug, Serialize)]
pub struct TocEntry {
    /// Anchor.
    pub anchor: String,
    /// Heading text.
    pub title: String,
    /// Level (1–6).
    pub level: u8,
}

/// A place in a report where a record is declared or annotated.
#[derive(Debug, Serialize)]
pub struct Entry {
    /// `heading`, `row` or `annotation`.
    pub form: &'static str,
    /// Report title and link to the anchor.
    pub at: Link,
    /// File and line in the sources.
    pub source: String,
    /// The same place in the site's published files (`source_url`), if configured.
    pub source_url: Option<String>,
    /// The section of the report it is written in, linked to the declaration itself.
    pub section: Option<Link>,
    /// The part, for rows of parts.
    pub part: Option<String>,
    /// Label given here, when it is not the record's title.
    pub label: Option<String>,
    /// Fields (rows only; a heading's fields are in its body), but those the record's
    /// findings already show (a status cell).
    pub fields: Vec<FieldView>,
    /// Body as HTML (headings and annotations).
    pub body_html: Option<String>,
}

/// A field.
#[derive(Debug, Serialize)]
pub struct FieldView {
    /// Name.
    pub name: String,
    /// Value as HTML.
    pub value_html: String,
}

/// A quote or citation on a record page: its source, its file (or section) linked at the
/// frozen revision, and each cited line range linked on its own.
#[derive(Debug, Serialize)]
pub struct EvidenceView {
    /// `quote` or `citation`.
    pub kind: &'static str,
    /// The source (`SRC-1`) and its entry in the run's register.
    pub source: Option<Link>,
    /// The file or folder, as written.
    pub path: Option<String>,
    /// The file (at its first range) or folder at the frozen revision, when the source
    /// has a repository.
    pub url: Option<String>,
    /// A cited section of a document (`Known Limits`).
    pub section: Option<String>,
    /// Each cited range (`368-390`), linked to those lines.
    pub ranges: Vec<OptionalLink>,
    /// Where the report writes it (file and line).
    pub at: String,
    /// What verification found of it, when verification ran.
    pub verdict: Option<VerdictView>,
}

/// What verification found of a quote or citation, as a page says it.
#[derive(Debug, Serialize)]
pub struct VerdictView {
    /// `verified`, `elsewhere`, `not-found`, `missing` or `not-verified`: a CSS class.
    pub class: &'static str,
    /// In words: `verified at 5954a07, lines 368-390`.
    pub text: String,
    /// The lines found (or most like the quote), at the revision read.
    pub url: Option<String>,
}

/// A text that is a link when its target is known.
#[derive(Debug, Serialize)]
pub struct OptionalLink {
    /// Shown text.
    pub name: String,
    /// Where it leads, if anywhere.
    pub url: Option<String>,
}

/// A record that cites this one, with the citing sentence.
#[derive(Debug, Serialize)]
pub struct BacklinkView {
    /// The citing sentence, escaped, the ID marked.
    pub context_html: String,
    /// The report section that holds it.
    pub at: Link,
    /// The record whose text holds it.
    pub from: Option<Link>,
    /// File and line.
    pub source: String,
    /// The same place in the site's published files (`source_url`), if configured.
    pub source_url: Option<String>,
}

/// A finding: what it is about, its status on its dimension, and where it is written.
#[derive(Debug, Serialize, Clone)]
pub struct FindingView {
    /// What it is about: a record's ID and label, or what the analysis names.
    pub subject: String,
    /// The subject's page, when it is a record.
    pub subject_url: Option<String>,
    /// True when the subject is a record.
    pub subject_is_record: bool,
    /// The dimension, possibly empty.
    pub dimension: String,
    /// The status, with its meaning.
    pub status: StatusBadge,
    /// The statement as written, as HTML.
    pub statement_html: String,
    /// The report (and section) where it is written, linked to its place.
    pub at: Link,
    /// The section alone (`§ 4. Four separate findings`), for the record's own page.
    pub at_section: String,
    /// File and line.
    pub source: String,
    /// The run.
    pub run: Link,
}

/// Findings of one status, for a run page's list of findings without a record.
#[derive(Debug, Serialize, Clone)]
pub struct FindingGroup {
    /// The status.
    pub status: StatusBadge,
    /// How many subjects the findings are about.
    pub subjects: usize,
    /// Its findings, grouped by subject.
    pub findings: Vec<FindingView>,
}

/// A status's part of a system's one page of statuses (`status_pages: per-system`).
#[derive(Debug, Serialize)]
pub struct SystemStatusSection {
    /// The anchor its own page's folder names (`implemented/`).
    pub anchor: String,
    /// The status, its counts in the system and its site-wide page.
    pub status: StatusCount,
    /// The published records carrying it.
    pub records: Vec<StatusListing>,
    /// The findings without a published record stating it.
    pub findings: Vec<FindingView>,
}

/// A record on a status page.
#[derive(Debug, Serialize)]
pub struct StatusListing {
    /// Run name.
    pub run: String,
    /// Run page.
    pub run_url: String,
    /// The record.
    pub record: RecordSummary,
    /// The dimensions and parts this status is on.
    pub detail: String,
}

/// A system's records with one status, as a row of a status page.
#[derive(Debug, Clone, Serialize)]
pub struct SystemStatusCount {
    /// System name.
    pub system: String,
    /// The system's page.
    pub system_url: String,
    /// How many of its published records carry the status.
    pub count: usize,
    /// How many of its subjects without a published record have a finding of it.
    pub findings: usize,
    /// The first of those subjects, linked to where the finding is written.
    pub subjects: Vec<Link>,
    /// How many more there are.
    pub more_subjects: usize,
    /// The page listing them.
    pub url: String,
}

/// One limit: what the analysis did not inspect or establish, and what that prevents.
#[derive(Debug, Serialize)]
pub struct LimitView {
    /// Its handle (`L3`).
    pub handle: String,
    /// True when casebook numbered it (the analysis did not).
    pub derived: bool,
    /// `limitation` or `coverage`.
    pub kind: &'static str,
    /// What a coverage row covers, as HTML.
    pub scope_html: Option<String>,
    /// The limitation, or the coverage and its limits, as HTML.
    pub text_html: String,
    /// The conclusion it prevents, as HTML.
    pub prevents_html: Option<String>,
    /// The evidence that would resolve it, as HTML.
    pub resolves_html: Option<String>,
    /// Where it is written: the report (and section), linked to its anchor.
    pub at: Link,
    /// File and line.
    pub source: String,
    /// On a record page: why it applies to the record (it names it, or a path it cites).
    pub because: Option<String>,
}

/// The limits a record page shows.
#[derive(Debug, Serialize, Default)]
pub struct RecordLimits {
    /// Those that name the record, in full.
    pub naming: Vec<LimitView>,
    /// Those that concern a file the record cites, by handle: per file (in path order),
    /// per report (in reading order).
    pub by_path: Vec<PathLimits>,
}

/// The limits that concern one file the record cites.
#[derive(Debug, Serialize)]
pub struct PathLimits {
    /// The file.
    pub path: String,
    /// Its limits, by report: a handle is a report's own (`L2` may be in several).
    pub reports: Vec<ReportLimits>,
}

/// Some limits of one report, by handle.
#[derive(Debug, Serialize)]
pub struct ReportLimits {
    /// The report's short name (its slug).
    pub report: String,
    /// Its limits.
    pub limits: Vec<LimitMention>,
}

/// A limit named by its handle.
#[derive(Debug, Serialize)]
pub struct LimitMention {
    /// Its handle.
    pub handle: String,
    /// True when casebook numbered it.
    pub derived: bool,
    /// Its anchor on its report page.
    pub url: String,
}

/// A report's limits, on the run page.
#[derive(Debug, Serialize)]
pub struct LimitGroup {
    /// The report.
    pub report: Link,
    /// Its limitations.
    pub limitations: Vec<LimitView>,
    /// Its coverage rows.
    pub coverage: Vec<LimitView>,
    /// True when some limitation says which conclusion it prevents.
    pub has_prevents: bool,
    /// True when some limitation says what would resolve it.
    pub has_resolves: bool,
}

/// A picture of some records and their links, with the same links as rows.
#[derive(Debug, Serialize)]
pub struct GraphView {
    /// The SVG, written by `render::graph` (every text in it escaped).
    pub svg: String,
    /// Records drawn.
    pub drawn: usize,
    /// Records the picture leaves out for its size (listed on the page elsewhere).
    pub left_out: usize,
    /// Each link drawn.
    pub edges: Vec<GraphEdgeView>,
}

/// One link of a graph: which record's text names which, and where.
#[derive(Debug, Serialize)]
pub struct GraphEdgeView {
    /// The record whose text links.
    pub from: Link,
    /// The record named.
    pub to: Link,
    /// Where: "its text", "a note on it", or both.
    pub how: &'static str,
}
