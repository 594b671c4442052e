//! Index: the search indexes every build writes, made from the resolved model (never by
//! re-reading HTML). One document per published record, per report section and per
//! report, in two forms:
//!
//! - a tantivy index in `search/tantivy/` for `casebook search` (offline, any downloaded
//!   copy of the site) and the dev server ([`tantivy_index`]);
//! - a static index in `search/browser/` for the search page ([`browser`]): term
//!   chunks, document chunks and facet data as plain files, so a first query fetches a
//!   small part of it from any static host.
//!
//! Both are written the same way on every build: the same content gives the same bytes.

mod analysis;
mod browser;
mod tantivy_index;

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pulldown_cmark::{Event, Tag, TagEnd};
use rayon::prelude::*;

use crate::markup::options as markdown_options;
use crate::model::{
    DeclarationForm, FindingForm, Limit, Record, RecordId, RecordPages, Report, Run, Site, Subject, SubjectFindings,
    System,
};
use crate::output::OutputFile;
use crate::urls;

pub use analysis::{analyse, BrowserTerms, TantivyText, Vocabulary};
pub use browser::BrowserIndex;
pub use tantivy_index::{Fields, Segment, TantivyIndex};

/// A failure of an indexer (never of the content).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// tantivy failed.
    #[error("building the search index failed: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// A temporary file failed.
    #[error("building the search index failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The kind of a search document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocType {
    /// A published record.
    Record,
    /// A section of a report (a heading and its text up to the next heading).
    Section,
    /// A whole report.
    Report,
    /// A finding without a published record (`Consolidation: absent`).
    Finding,
    /// A limit: what a report did not inspect or establish, at its own anchor.
    Limit,
}

impl DocType {
    /// The name used in the index, in queries (`type:record`) and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            DocType::Record => "record",
            DocType::Section => "section",
            DocType::Report => "report",
            DocType::Finding => "finding",
            DocType::Limit => "limit",
        }
    }
}

/// One searchable document, as both indexers see it.
#[derive(Debug, Clone)]
pub struct SearchDoc {
    /// Record, section or report.
    pub doc_type: DocType,
    /// The system's slug.
    pub system: String,
    /// The system's name.
    pub system_name: String,
    /// Run slug.
    pub run: String,
    /// The run's revision.
    pub revision: String,
    /// The report's slug and type.
    pub report: Option<(String, Option<String>)>,
    /// Record ID, kind and family (records).
    pub id: Option<String>,
    /// Kind code (records).
    pub kind: Option<String>,
    /// Family code (records).
    pub family: Option<String>,
    /// Statuses (records).
    pub statuses: Vec<String>,
    /// Record label, or section heading.
    pub label: Option<String>,
    /// A title to show.
    pub title: String,
    /// Plain text.
    pub body: String,
    /// The parts of `body` that are another document's text too: in a section, the table
    /// rows that declare records (each record is a document of its own). Both indexes
    /// leave them out of the section's terms, its length and its snippet text, so that a
    /// search does not show a record and the section that declares it for the same words.
    pub twins: Vec<Range<usize>>,
    /// Quoted and cited paths.
    pub paths: Vec<String>,
    /// Root-relative URL of the page (with the anchor for sections).
    pub path: String,
}

/// The search documents of one run, in site order: each report and its sections, then
/// each published record (linked where `record_pages` shows it), then each finding without
/// a published record.
pub fn run_documents(system: &System, run: &Run, record_pages: RecordPages) -> Vec<SearchDoc> {
    let mut docs = Vec::new();
    for report in &run.reports {
        docs.extend(report_documents(system, run, report));
    }
    for record in run.published_records() {
        docs.push(record_document(system, run, record, record_pages));
    }
    for subject in &run.subjects {
        docs.push(subject_document(system, run, subject));
    }
    docs
}

/// A subject of findings without a published record (`Consolidation`), as one document,
/// as a record is: its statuses, and the statements of its findings.
fn subject_document(system: &System, run: &Run, subject: &SubjectFindings) -> SearchDoc {
    let first_at = subject.findings[0];
    let report = &run.reports[first_at.report as usize];
    let url = format!("{}#{}", urls::report(&system.slug, &run.slug, &report.slug), run.finding(first_at).anchor);
    let statuses: Vec<String> = subject.statuses.iter().map(|s| s.to_string()).collect();
    let mut doc = base(system, run, DocType::Finding, format!("{}: {}", subject.name, statuses.join(", ")), url);
    doc.report = Some((report.slug.to_string(), report.report_type.clone()));
    doc.label = Some(subject.name.clone());
    doc.statuses = statuses;
    let mut statements: Vec<&str> =
        subject.findings.iter().map(|at| run.reports[at.report as usize].text(&run.finding(*at).statement)).collect();
    statements.dedup();
    doc.body = statements.iter().map(|s| plain_text(s)).collect::<Vec<_>>().join("\n");
    let mut paths: Vec<String> = subject
        .findings
        .iter()
        .flat_map(|at| {
            run.reports[at.report as usize].citations[run.finding(*at).evidence_range()]
                .iter()
                .filter_map(|c| c.path.as_deref().map(str::to_string))
        })
        .collect();
    paths.sort();
    paths.dedup();
    doc.paths = paths;
    doc
}

/// Runs whose documents are made (in parallel) and added to both indexes at once: memory
/// holds the documents of these runs only, never the site's.
const RUNS_PER_BATCH: usize = 8;

/// About how many runs make one group: the runs of a group make their own tantivy
/// segments, which a later build keeps while none of the group's runs changed.
const RUNS_PER_GROUP: u64 = 8;

/// The time each index took, summed over its batches.
#[derive(Debug, Default, Clone, Copy)]
pub struct IndexTimes {
    /// Adding documents to the tantivy index and writing it.
    pub tantivy: Duration,
    /// Adding documents to the browser index and writing it.
    pub browser: Duration,
}

/// What a build's indexes leave for the next build: the tantivy segments of each group of
/// runs, by a key of the group's runs and what their documents are made from
/// ([`Tokens`]). The segments' files are in the output.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IndexParts {
    /// Group key (32 hex digits) → the group.
    pub groups: std::collections::BTreeMap<String, GroupPart>,
}

/// A group of runs as the indexes left it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GroupPart {
    /// Its runs, `system/run`, in order.
    pub runs: Vec<String>,
    /// Its tantivy segments.
    pub segments: Vec<Segment>,
}

impl IndexParts {
    /// The same parts under the keys another kind of token gives their runs (the dev
    /// server's first build, made with the build cache's tokens, keeps them for its
    /// rebuilds, which tell runs by versions); a group with a run `token` does not know
    /// is left out.
    pub fn rekeyed(&self, token: &dyn Fn(&str, &str) -> Option<u128>) -> IndexParts {
        let groups = self
            .groups
            .values()
            .filter_map(|group| {
                let runs = group.runs.iter().map(|key| {
                    let (system, run) = key.split_once('/')?;
                    Some((system, run, token(system, run)?))
                });
                Some((group_key(runs)?, group.clone()))
            })
            .collect();
        IndexParts { groups }
    }
}

/// What the indexes ask the previous build: for a run, a token that is the same only
/// while its documents are (its files, its system's name, the configuration, the base URL
/// and the binary are the same); and whether a file it wrote is still in the output.
pub trait Tokens: Sync {
    /// The run's token, or `None` when it cannot be told (its documents are made).
    fn run_token(&self, system: &System, run: &Run) -> Option<u128>;
    /// Whether the output still holds `path` as the previous build wrote it.
    fn holds(&self, path: &std::path::Path) -> bool;
}

/// What the indexes take from the previous build: its tantivy segments by group, the
/// tokens to tell unchanged runs by, and the browser index as it left it (the dev server
/// keeps it; any other build starts from an empty one).
pub struct Previous<'a> {
    /// The tantivy segments, by group.
    pub parts: &'a IndexParts,
    /// Runs' tokens, and the files the output holds.
    pub tokens: &'a dyn Tokens,
    /// The browser index, made again where runs changed.
    pub browser: &'a mut BrowserIndex,
}

/// The indexes made: their times, the parts a next build may keep, and the files kept
/// from the previous output (not made again: they stay, or are linked).
#[derive(Debug, Default)]
pub struct Indexed {
    /// The time each index took.
    pub times: IndexTimes,
    /// For the next build.
    pub parts: IndexParts,
    /// Files of the previous output this build's indexes are made of.
    pub kept: Vec<std::path::PathBuf>,
}

/// The runs of `site` in site order, in groups: a group begins at each run whose key
/// hashes to a multiple of [`RUNS_PER_GROUP`] (and at the first). Where a group begins
/// depends on its first run alone, so an edited, added or removed run changes its own
/// group and no other.
fn groups(site: &Site) -> Vec<Vec<(&System, &Run)>> {
    let mut groups: Vec<Vec<(&System, &Run)>> = Vec::new();
    for system in &site.systems {
        for run in &system.runs {
            match groups.last_mut() {
                Some(group) if !begins_group(&system.slug, &run.slug) => group.push((system, run)),
                _ => groups.push(vec![(system, &**run)]),
            }
        }
    }
    groups
}

/// Whether the run `system/run` begins a group of runs of the search indexes (the first
/// run of a site always does).
pub fn begins_group(system: &str, run: &str) -> bool {
    xxhash_rust::xxh3::xxh3_64(format!("{system}/{run}").as_bytes()) % RUNS_PER_GROUP == 0
}

/// The key of a group: its runs (system and run slugs) and their tokens; `None` when a
/// token is unknown.
fn group_key<'a>(runs: impl Iterator<Item = Option<(&'a str, &'a str, u128)>>) -> Option<String> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for run in runs {
        let (system, run, token) = run?;
        for part in [system, run] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.update(&token.to_le_bytes());
    }
    Some(format!("{:032x}", hasher.digest128()))
}

/// Makes both search indexes of `site` and hands their files to `emit`: the documents of
/// a few runs at a time, added to the tantivy index and the browser index side by side.
/// A group of runs whose segments `previous` holds (and the output still has) keeps them;
/// a run whose part the browser index holds, made from the same inputs, keeps it. A run
/// both keep is not read at all.
pub fn search_indexes<E: From<IndexError> + Send>(
    site: &Site,
    base_url: &str,
    previous: Previous<'_>,
    emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
) -> Result<Indexed, E> {
    let Previous { parts, tokens, browser } = previous;
    if browser.layout() != site.search_files {
        // Files of another size: every file is made anew.
        *browser = BrowserIndex::new(site.search_files);
    }
    let mut indexes = Indexes {
        tantivy: TantivyIndex::new(base_url)?,
        browser,
        indexed: Indexed::default(),
        added: rustc_hash::FxHashSet::default(),
    };
    let mut keys = Vec::new();
    for group in groups(site) {
        let runs: Vec<GroupRun<'_>> = group
            .iter()
            .map(|&(system, run)| GroupRun {
                system,
                run,
                record_pages: site.record_pages,
                key: format!("{}/{}", system.slug, run.slug),
                token: tokens.run_token(system, run),
            })
            .collect();
        keys.extend(runs.iter().map(|r| r.key.clone()));
        let key = group_key(runs.iter().map(|r| Some((r.system.slug.as_str(), r.run.slug.as_str(), r.token?))));
        let kept = key
            .as_ref()
            .and_then(|key| parts.groups.get(key))
            .map(|group| &group.segments)
            .filter(|segments| segments.iter().flat_map(|s| &s.files).all(|path| tokens.holds(path)));
        let segments = indexes.group(&runs, kept, emit)?;
        if let Some(key) = key {
            let runs = runs.into_iter().map(|r| r.key).collect();
            indexes.indexed.parts.groups.insert(key, GroupPart { runs, segments });
        }
    }
    let Indexes { tantivy, browser, mut indexed, added } = indexes;
    browser.arrange(&keys);
    indexed.kept.extend(browser.kept_document_files(&added));
    let ((written, tantivy_time), (chunks, browser_time)) =
        rayon::join(|| timed(|| tantivy.finish(emit)), || timed(|| browser.finish(emit)));
    written?;
    indexed.kept.extend(chunks?);
    indexed.times.tantivy += tantivy_time;
    indexed.times.browser += browser_time;
    Ok(indexed)
}

/// A run of a group, with its key and token.
struct GroupRun<'a> {
    system: &'a System,
    run: &'a Run,
    record_pages: RecordPages,
    key: String,
    token: Option<u128>,
}

/// Both indexes while documents are added.
struct Indexes<'b> {
    tantivy: TantivyIndex,
    browser: &'b mut BrowserIndex,
    indexed: Indexed,
    /// The runs whose browser parts this build made.
    added: rustc_hash::FxHashSet<String>,
}

impl Indexes<'_> {
    /// Adds a group of runs' documents, a few runs at a time, to the tantivy index unless
    /// it keeps the group's segments (`kept`), and to the browser index where it does not
    /// hold the run's part. Gives the group's segments.
    fn group<E: From<IndexError> + Send>(
        &mut self,
        runs: &[GroupRun<'_>],
        kept: Option<&Vec<Segment>>,
        emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
    ) -> Result<Vec<Segment>, E> {
        if let Some(segments) = kept {
            self.tantivy.keep(segments);
            self.indexed.kept.extend(segments.iter().flat_map(|s| s.files.iter().cloned()));
        }
        let to_read: Vec<&GroupRun<'_>> =
            runs.iter().filter(|r| kept.is_none() || !self.browser.has_run(&r.key, r.token)).collect();
        for batch in to_read.chunks(RUNS_PER_BATCH) {
            // Shared (`Arc`): the tantivy index reads each in place while the browser index
            // reads it too.
            let per_run: Vec<Vec<Arc<SearchDoc>>> = batch
                .par_iter()
                .map(|r| run_documents(r.system, r.run, r.record_pages).into_iter().map(Arc::new).collect())
                .collect();
            let docs: Vec<Arc<SearchDoc>> = per_run.iter().flatten().cloned().collect();
            let vocabulary = self.browser.vocabulary();
            let (texts, terms): (Vec<_>, Vec<_>) = docs.par_iter().map(|d| analysis::analyse(d, vocabulary)).unzip();
            let (tantivy, browser, added) = (&mut self.tantivy, &mut *self.browser, &mut self.added);
            let add_tantivy = || if kept.is_some() { Ok(()) } else { tantivy.add(&docs, texts, emit) };
            let add_browser = || -> Result<(), E> {
                let mut terms = terms.into_iter();
                for (r, docs) in batch.iter().zip(&per_run) {
                    let run_terms: Vec<_> = terms.by_ref().take(docs.len()).collect();
                    if !browser.has_run(&r.key, r.token) {
                        browser.add_run(&r.key, r.token, docs, run_terms, emit)?;
                        added.insert(r.key.clone());
                    }
                }
                Ok(())
            };
            let ((added, tantivy_time), (shown, browser_time)) =
                rayon::join(|| timed(add_tantivy), || timed(add_browser));
            added?;
            shown?;
            self.indexed.times.tantivy += tantivy_time;
            self.indexed.times.browser += browser_time;
        }
        match kept {
            Some(segments) => Ok(segments.clone()),
            None => self.tantivy.end_group(emit),
        }
    }
}

/// Runs `f`, and says how long it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    (f(), started.elapsed())
}

fn base(system: &System, run: &Run, doc_type: DocType, title: String, path: String) -> SearchDoc {
    SearchDoc {
        doc_type,
        system: system.slug.to_string(),
        system_name: system.name.clone(),
        run: run.slug.to_string(),
        revision: run.revision.to_string(),
        report: None,
        id: None,
        kind: None,
        family: None,
        statuses: Vec::new(),
        label: None,
        title,
        body: String::new(),
        twins: Vec::new(),
        paths: Vec::new(),
        path,
    }
}

/// The report as one document, and one document per section.
fn report_documents(system: &System, run: &Run, report: &Report) -> Vec<SearchDoc> {
    let url = urls::report(&system.slug, &run.slug, &report.slug);
    let sections = section_texts(&report.markdown, &rows_of_their_own(run, report));
    let report_ref = Some((report.slug.to_string(), report.report_type.clone()));
    let mut whole = base(system, run, DocType::Report, report.title.clone(), url.clone());
    whole.report = report_ref.clone();
    // The report's own document holds its opening text and its headings; the text of
    // each section is in the section's document (indexing it twice would double the
    // index for no better answer).
    let mut body: Vec<&str> = sections.iter().filter(|s| s.heading.is_none()).map(|s| s.text.as_str()).collect();
    body.extend(report.sections.iter().map(|s| s.title.as_str()));
    whole.body = body.join("\n");
    whole.paths = paths_in(report, None);
    let mut docs = vec![whole];
    let records_text = sections_of_records(run, report);
    for section in &sections {
        let Some(s) = section.heading.and_then(|h| report.sections.get(h)) else { continue };
        if records_text.contains(&*s.anchor) {
            continue;
        }
        let mut doc = base(
            system,
            run,
            DocType::Section,
            format!("{} § {}", report.title, s.title),
            format!("{url}#{}", s.anchor),
        );
        doc.report = report_ref.clone();
        doc.label = Some(s.title.clone());
        doc.body = section.text.clone();
        doc.twins = section.twins.clone();
        doc.paths = paths_in(report, Some(&section.lines));
        docs.push(doc);
    }
    docs.extend(report.limits.iter().map(|limit| limit_document(system, run, report, limit)));
    docs
}

/// A limit as a document of its own, found at its anchor: its handle, what it covers,
/// the limitation, what it prevents and what would resolve it.
fn limit_document(system: &System, run: &Run, report: &Report, limit: &Limit) -> SearchDoc {
    let url = format!("{}#{}", urls::report(&system.slug, &run.slug, &report.slug), limit.anchor);
    let text = plain_text(&limit.text);
    let mut doc = base(system, run, DocType::Limit, format!("{} — {}", limit.handle, report.title), url);
    doc.report = Some((report.slug.to_string(), report.report_type.clone()));
    doc.label = Some(limit.handle.clone());
    let mut body = Vec::new();
    if let Some(scope) = &limit.scope {
        body.push(plain_text(scope));
    }
    body.push(text);
    body.extend(limit.prevents.iter().chain(&limit.resolves).map(|p| plain_text(p)));
    doc.body = body.iter().map(|b| b.trim()).collect::<Vec<_>>().join("\n");
    doc.paths = limit.paths.clone();
    doc
}

/// 0-based body lines of the table rows and list items that are documents of their own:
/// rows that declare records, rows that state findings without a published record, and
/// limits.
fn rows_of_their_own(run: &Run, report: &Report) -> Vec<usize> {
    let published = |id: &RecordId| run.publishes(id);
    let mut rows: Vec<usize> = report
        .declarations
        .iter()
        .filter(|d| matches!(d.form, DeclarationForm::TableRow { .. }))
        .map(|d| d.location.line)
        .chain(
            report
                .findings
                .iter()
                .filter(|f| {
                    matches!(f.form, FindingForm::StatusColumn | FindingForm::DimensionColumn)
                        && !matches!(&f.subject, Subject::Record(id) if published(id))
                })
                .map(|f| f.location.line),
        )
        .chain(report.limits.iter().map(|l| l.location.line))
        .map(|line| line.saturating_sub(report.body_line) as usize)
        .collect();
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// The distinct paths quoted or cited in the report, or in the body lines `range` of it.
fn paths_in(report: &Report, range: Option<&Range<usize>>) -> Vec<String> {
    let mut paths: Vec<&str> = report
        .quotes
        .iter()
        .map(|q| (q.location.line, q.path.as_str()))
        .chain(report.citations.iter().filter_map(|c| c.path.as_deref().map(|p| (c.location.line, p))))
        .filter(|(line, _)| {
            range.is_none_or(|r| {
                let line = line.saturating_sub(report.body_line) as usize;
                r.contains(&line)
            })
        })
        .map(|(_, p)| p)
        .collect();
    paths.sort_unstable();
    paths.dedup();
    paths.into_iter().map(str::to_string).collect()
}

/// The anchors of sections searchable as a record (its page shows them): a record's own
/// heading, and an annotation of a published record. A section document of either would
/// be a twin.
fn sections_of_records<'r>(run: &Run, report: &'r Report) -> std::collections::HashSet<&'r str> {
    report
        .declarations
        .iter()
        .filter(|d| matches!(d.form, DeclarationForm::Heading { .. }))
        .map(|d| &*d.anchor)
        .chain(report.annotations.iter().filter(|a| run.publishes(&a.target)).map(|a| &*a.anchor))
        .collect()
}

/// One published record: its label, fields, body and annotations as text.
fn record_document(system: &System, run: &Run, record: &Record, record_pages: RecordPages) -> SearchDoc {
    let title = match record.title_label() {
        Some(label) => format!("{} — {label}", record.id),
        None => record.id.to_string(),
    };
    let url = urls::record_shown(record_pages, &system.slug, &run.slug, &record.id);
    let mut doc = base(system, run, DocType::Record, title, url);
    doc.id = Some(record.id.to_string());
    doc.kind = Some(record.kind.to_string());
    doc.family = record.family.as_deref().map(str::to_string);
    doc.label = record.label.as_deref().map(str::to_string);
    doc.statuses = run.statuses_of(record).map(str::to_string).collect();
    let mut body = String::new();
    if !record.parts.is_empty() {
        body.push_str(&format!("Parts: {}\n", record.parts.join("; ")));
    }
    for at in &record.declarations {
        let report = &run.reports[at.report as usize];
        if doc.report.is_none() {
            doc.report = Some((report.slug.to_string(), report.report_type.clone()));
        }
        let d = &report.declarations[at.index as usize];
        match (&d.form, &d.body) {
            (DeclarationForm::Heading { .. }, Some(range)) => {
                body.push_str(&plain_text(&report.markdown[range.clone()]))
            }
            _ => {
                if let Some(label) = &d.label {
                    body.push_str(label);
                    body.push('\n');
                }
                for field in &d.fields {
                    body.push_str(&field.name);
                    body.push_str(": ");
                    let value = report.text(&field.value);
                    if is_plain(value) {
                        body.push_str(value.trim());
                    } else {
                        body.push_str(plain_text(value).trim());
                    }
                    body.push('\n');
                }
            }
        }
        body.push('\n');
    }
    for at in &record.annotations {
        let report = &run.reports[at.report as usize];
        body.push_str(&plain_text(&report.markdown[report.annotations[at.index as usize].body.clone()]));
        body.push('\n');
    }
    doc.body = body;
    let mut paths: Vec<String> = record
        .quotes
        .iter()
        .map(|at| run.reports[at.report as usize].quotes[at.index as usize].path.clone())
        .chain(record.citations.iter().filter_map(|at| {
            run.reports[at.report as usize].citations[at.index as usize].path.as_deref().map(str::to_string)
        }))
        .collect();
    paths.sort();
    paths.dedup();
    doc.paths = paths;
    doc
}

/// The parts of `text` between the ranges `left_out` (in order, apart), in order: a
/// document's own text, without its twins ([`SearchDoc::twins`]).
fn own_parts<'a>(text: &'a str, left_out: &'a [Range<usize>]) -> impl Iterator<Item = &'a str> {
    let mut from = 0;
    left_out.iter().map(|range| (range.start, range.end)).chain(std::iter::once((text.len(), text.len()))).map(
        move |(start, end)| {
            let part = &text[from..start];
            from = end;
            part
        },
    )
}

/// A joiner of compound words (`files_modified`, `session.py`, `a/b`, `MEM-OBJ-raw`).
fn is_joiner(c: char) -> bool {
    matches!(c, '_' | '.' | '/' | '-')
}

/// A run of letters, digits and joiners, without joiners at its end.
struct TextRun {
    /// Where it is in the text.
    range: Range<usize>,
    /// Where to look for the next run.
    next: usize,
    /// Whether it holds a joiner: a compound, whose words are between the joiners.
    compound: bool,
}

/// What a byte is to [`next_run`].
#[derive(Clone, Copy, PartialEq)]
enum ByteClass {
    /// An ASCII letter or digit.
    Alphanumeric,
    /// `_ . / -`.
    Joiner,
    /// Any other ASCII character.
    Other,
    /// A byte of a character beyond ASCII: the character decides.
    Wide,
}

/// The class of every byte, so that ASCII text (most of it) is scanned a byte at a time.
static BYTE_CLASSES: [ByteClass; 256] = {
    let mut classes = [ByteClass::Other; 256];
    let mut b = 0;
    while b < 256 {
        classes[b] = if b >= 128 {
            ByteClass::Wide
        } else if (b as u8).is_ascii_alphanumeric() {
            ByteClass::Alphanumeric
        } else if matches!(b as u8, b'_' | b'.' | b'/' | b'-') {
            ByteClass::Joiner
        } else {
            ByteClass::Other
        };
        b += 1;
    }
    classes
};

/// The next run of letters, digits and joiners in `text` at or after byte `from`. Both
/// indexes find their words and compounds in these runs.
fn next_run(text: &str, from: usize) -> Option<TextRun> {
    let bytes = text.as_bytes();
    let wide = |at: usize| text[at..].chars().next().expect("a character starts here");
    let mut at = from;
    loop {
        match BYTE_CLASSES[usize::from(*bytes.get(at)?)] {
            ByteClass::Alphanumeric => break,
            ByteClass::Wide => {
                let c = wide(at);
                if c.is_alphanumeric() {
                    break;
                }
                at += c.len_utf8();
            }
            ByteClass::Joiner | ByteClass::Other => at += 1,
        }
    }
    let start = at;
    let (mut end, mut joiner_pending, mut compound) = (at, false, false);
    while let Some(&b) = bytes.get(at) {
        match BYTE_CLASSES[usize::from(b)] {
            ByteClass::Alphanumeric => at += 1,
            ByteClass::Joiner => {
                at += 1;
                joiner_pending = true;
                continue;
            }
            ByteClass::Wide => {
                let c = wide(at);
                if !c.is_alphanumeric() {
                    break;
                }
                at += c.len_utf8();
            }
            ByteClass::Other => break,
        }
        // A letter or digit: the run reaches here, and a joiner before it is inside.
        end = at;
        compound |= joiner_pending;
        joiner_pending = false;
    }
    Some(TextRun { range: start..end, next: at, compound })
}

struct SectionText {
    /// Index into `Report::sections`; `None` for text before the first heading.
    heading: Option<usize>,
    text: String,
    /// Byte ranges of `text` that are documents of their own (rows declaring records,
    /// limits).
    twins: Vec<Range<usize>>,
    /// Body line range (0-based) the section covers.
    lines: Range<usize>,
}

/// The text of each section of a report, split at every heading, with where the table
/// rows and list items that start on one of `own_rows` (0-based body lines) are in it.
fn section_texts(markdown: &str, own_rows: &[usize]) -> Vec<SectionText> {
    let mut lines = LineCounter::new(markdown);
    let mut sections = vec![SectionText { heading: None, text: String::new(), twins: Vec::new(), lines: 0..0 }];
    let mut headings = 0;
    // Where the twin being read starts in its section's text, and how deep in lists it is.
    let mut twin_start: Option<(usize, usize)> = None;
    let mut items = 0usize;
    for (event, range) in pulldown_cmark::Parser::new_ext(markdown, markdown_options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { .. }) => {
                let line = lines.line_of(range.start);
                if let Some(last) = sections.last_mut() {
                    last.lines.end = line;
                }
                sections.push(SectionText {
                    heading: Some(headings),
                    text: String::new(),
                    twins: Vec::new(),
                    lines: line..line,
                });
                headings += 1;
            }
            Event::Start(Tag::TableRow) | Event::Start(Tag::Item)
                if twin_start.is_none() && own_rows.binary_search(&lines.line_of(range.start)).is_ok() =>
            {
                twin_start = Some((sections.last().expect("never empty").text.len(), items));
            }
            _ => {}
        }
        match event {
            Event::Start(Tag::Item) => items += 1,
            Event::End(TagEnd::Item) => items -= 1,
            _ => {}
        }
        let section = sections.last_mut().expect("never empty");
        push_text(&mut section.text, &event);
        // A twin ends with its row, or with its item (not with an item nested in it).
        let ends = match (&event, twin_start) {
            (Event::End(TagEnd::TableRow), Some(_)) => true,
            (Event::End(TagEnd::Item), Some((_, depth))) => items == depth,
            _ => false,
        };
        if let (true, Some((start, _))) = (ends, twin_start) {
            section.twins.push(start..section.text.len());
            twin_start = None;
        }
    }
    let total = markdown.lines().count() + 1;
    if let Some(last) = sections.last_mut() {
        last.lines.end = total;
    }
    sections
}

/// 0-based line numbers of byte offsets, counted on from the previous offset asked for.
struct LineCounter<'a> {
    text: &'a str,
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        LineCounter { text, offset: 0, line: 0 }
    }

    fn line_of(&mut self, offset: usize) -> usize {
        if offset < self.offset {
            (self.offset, self.line) = (0, 0);
        }
        self.line += self.text.as_bytes()[self.offset..offset].iter().filter(|&&b| b == b'\n').count();
        self.offset = offset;
        self.line
    }
}

fn push_text(out: &mut String, event: &Event<'_>) {
    match event {
        Event::Text(t) | Event::Code(t) => out.push_str(t),
        Event::SoftBreak | Event::HardBreak => out.push(' '),
        Event::End(
            TagEnd::Paragraph
            | TagEnd::Heading(_)
            | TagEnd::Item
            | TagEnd::TableRow
            | TagEnd::TableHead
            | TagEnd::CodeBlock,
        ) => out.push('\n'),
        Event::End(TagEnd::TableCell) => out.push_str(" | "),
        // A list nested in a tight item: its first words must not join the item's last.
        Event::Start(Tag::List(_)) if !out.is_empty() && !out.ends_with('\n') => out.push('\n'),
        _ => {}
    }
}

/// Whether `markdown` is one line that Markdown leaves as it is: no character that starts
/// inline markup (an `_` only between letters or digits, where it cannot), and no block
/// marker at its start. Most cells and field values are; parsing each was most of the
/// time spent making the search documents.
fn is_plain(markdown: &str) -> bool {
    let text = markdown.trim();
    let bytes = text.as_bytes();
    let inline_ok = bytes.iter().enumerate().all(|(i, &b)| match b {
        b'\\' | b'`' | b'*' | b'[' | b']' | b'<' | b'>' | b'&' | b'!' | b'|' | b'~' | b'{' | b'}' | b'\n' | b'\r'
        | b'\t' => false,
        b'_' => {
            i > 0 && i + 1 < bytes.len() && bytes[i - 1].is_ascii_alphanumeric() && bytes[i + 1].is_ascii_alphanumeric()
        }
        _ => true,
    });
    // A list item (`- `, `+ `, `1. `, `2) `), a heading, a rule or a block quote.
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let block_start = matches!(bytes.first(), Some(b'-' | b'+' | b'#' | b'=' | b'>'))
        || (digits > 0 && matches!(bytes.get(digits), Some(b'.' | b')')));
    inline_ok && !block_start
}

/// Markdown to plain text.
pub fn plain_text(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    for event in pulldown_cmark::Parser::new_ext(markdown, markdown_options()) {
        push_text(&mut out, &event);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Slug;
    use std::collections::{BTreeMap, HashMap, HashSet};
    use std::path::PathBuf;

    use crate::testing::site_of;

    /// The previous build as a test tells it: a token per run, and the files it holds.
    struct Previous {
        tokens: HashMap<String, u128>,
        files: HashSet<PathBuf>,
    }

    impl Tokens for Previous {
        fn run_token(&self, system: &System, run: &Run) -> Option<u128> {
            self.tokens.get(&format!("{}/{}", system.slug, run.slug)).copied()
        }
        fn holds(&self, path: &std::path::Path) -> bool {
            self.files.contains(path)
        }
    }

    /// The files the indexes of `site` emit, and what they made, given `previous` (and a
    /// browser index made from nothing).
    fn index(site: &Site, parts: &IndexParts, previous: &Previous) -> (BTreeMap<PathBuf, Vec<u8>>, Indexed) {
        index_with(site, parts, previous, &mut BrowserIndex::default())
    }

    fn index_with(
        site: &Site,
        parts: &IndexParts,
        tokens: &Previous,
        browser: &mut BrowserIndex,
    ) -> (BTreeMap<PathBuf, Vec<u8>>, Indexed) {
        let files = std::sync::Mutex::new(BTreeMap::new());
        let emit = |file: OutputFile| -> Result<(), IndexError> {
            files.lock().unwrap().insert(file.path, file.bytes);
            Ok(())
        };
        let previous = super::Previous { parts, tokens, browser };
        let indexed = search_indexes(site, "/", previous, &emit).unwrap();
        (files.into_inner().unwrap(), indexed)
    }

    #[test]
    fn a_group_of_runs_that_did_not_change_keeps_its_segments_and_the_others_are_made() {
        // alpha/r5 and beta/r5 begin groups: [alpha/r1], [alpha/r5, beta/r1], [beta/r5].
        let site = site_of(&["alpha", "beta"], &["r1", "r5"]);
        assert_eq!(groups(&site).iter().map(Vec::len).collect::<Vec<_>>(), [1, 2, 1]);
        let keys = ["alpha/r1", "alpha/r5", "beta/r1", "beta/r5"];
        let mut previous =
            Previous { tokens: keys.iter().map(|k| (k.to_string(), 1)).collect(), files: HashSet::new() };
        let (cold, first) = index(&site, &IndexParts::default(), &previous);
        assert!(first.kept.is_empty());
        assert_eq!(first.parts.groups.len(), 3);
        let tantivy = |files: &BTreeMap<PathBuf, Vec<u8>>| -> Vec<PathBuf> {
            files.keys().filter(|p| p.starts_with(crate::output::TANTIVY_DIR)).cloned().collect()
        };
        assert_eq!(tantivy(&cold).len(), 3 * 6 + 1, "a segment per group, and meta.json: {:?}", tantivy(&cold));
        previous.files = cold.keys().cloned().collect();

        // beta/r5 changed: its group is made, the two others are kept, and the index is the
        // one a build from nothing makes.
        previous.tokens.insert("beta/r5".into(), 2);
        let (warm, second) = index(&site, &first.parts, &previous);
        let made: Vec<PathBuf> = tantivy(&warm);
        assert_eq!(made.len(), 6 + 1, "{made:?}");
        assert_eq!(second.kept.len(), 2 * 6);
        let mut all: Vec<PathBuf> = made.iter().chain(&second.kept).cloned().collect();
        all.sort();
        assert_eq!(all, tantivy(&cold), "the same files, kept or made");
        for path in &made {
            assert_eq!(warm[path], cold[path], "{path:?}");
        }
        assert_eq!(second.parts.groups.len(), 3);
        let kept_groups = second.parts.groups.keys().filter(|k| first.parts.groups.contains_key(*k)).count();
        assert_eq!(kept_groups, 2);

        // A file of a kept group no longer in the output: that group is made again.
        let gone = second.kept[0].clone();
        previous.files.remove(&gone);
        let (_, third) = index(&site, &second.parts, &previous);
        assert_eq!(third.kept.len(), 2 * 6, "only the groups with all their files are kept");
        assert!(!third.kept.contains(&gone));
        // Unknown tokens: nothing is kept, nothing is left for the next build.
        let (_, fresh) = index(&site, &second.parts, &Previous { tokens: HashMap::new(), files: previous.files });
        assert!(fresh.kept.is_empty() && fresh.parts.groups.is_empty());
    }

    /// `site` with the report of `system/run` replaced by `report`.
    fn with_report(site: &mut Site, system: &str, run: &str, report: &str) {
        let system = site.systems.iter_mut().find(|s| s.slug.as_str() == system).unwrap();
        let at = system.runs.iter().position(|r| r.slug.as_str() == run).unwrap();
        let (mut new, _) = crate::testing::run_of("revision: abc\n", &[("memory", report)]);
        new.slug = Slug::parse(run).unwrap();
        system.runs[at] = Arc::new(new);
    }

    #[test]
    fn a_browser_index_kept_between_builds_writes_what_one_made_from_nothing_writes() {
        let mut site = site_of(&["alpha", "beta", "gamma"], &["r1", "r5"]);
        let keys: Vec<String> =
            ["alpha", "beta", "gamma"].iter().flat_map(|s| ["r1", "r5"].map(|r| format!("{s}/{r}"))).collect();
        let mut previous = Previous { tokens: keys.iter().map(|k| (k.clone(), 1)).collect(), files: HashSet::new() };
        let mut kept = BrowserIndex::default();
        let (first, _) = index_with(&site, &IndexParts::default(), &previous, &mut kept);
        previous.files = first.keys().cloned().collect();
        let browser = |files: &BTreeMap<PathBuf, Vec<u8>>| -> BTreeMap<PathBuf, Vec<u8>> {
            files
                .iter()
                .filter(|(p, _)| p.starts_with(crate::output::BROWSER_DIR))
                .map(|(p, b)| (p.clone(), b.clone()))
                .collect()
        };
        let edits: [(&str, &str, String); 3] = [
            // A sentence more: the run's document files and the chunks of its new words.
            ("beta", "r1", "# Report\n\n## OBJ-01 Object of beta r1\n\nIt keeps turns and a zeppelin.\n".into()),
            // Records added (the run's numbers grow past a multiple of 16, moving later runs).
            (
                "alpha",
                "r5",
                (1..=20).map(|n| format!("## OBJ-{n:02} Object {n}\n\nItem {n} keeps turns.\n\n")).collect(),
            ),
            // Back to one record.
            ("alpha", "r5", "# Report\n\n## OBJ-01 Object of alpha r5\n\nIt keeps turns.\n".into()),
        ];
        for (round, (system, run, report)) in edits.iter().enumerate() {
            with_report(&mut site, system, run, report);
            previous.tokens.insert(format!("{system}/{run}"), round as u128 + 2);
            let (made, indexed) = index_with(&site, &IndexParts::default(), &previous, &mut kept);
            let (cold, _) = index(&site, &IndexParts::default(), &previous);
            let cold = browser(&cold);
            let made = browser(&made);
            // What it made and what it kept are the files made from nothing, with their bytes.
            let kept_files: Vec<&PathBuf> =
                indexed.kept.iter().filter(|p| p.starts_with(crate::output::BROWSER_DIR)).collect();
            let mut all: Vec<&PathBuf> = made.keys().chain(kept_files.iter().copied()).collect();
            all.sort();
            assert_eq!(all, cold.keys().collect::<Vec<_>>(), "round {round}");
            for (path, bytes) in &made {
                assert!(cold[path] == *bytes, "round {round}: {path:?} differs");
            }
            for path in &kept_files {
                assert!(previous.files.contains(*path), "round {round}: {path:?} kept but never written");
            }
            // Only the edited run's document files are written again.
            let documents: Vec<&PathBuf> = made.keys().filter(|p| p.to_string_lossy().contains("/d/")).collect();
            assert!(
                documents.iter().all(|p| p.to_string_lossy().contains(&format!("/d/{system}/{run}/"))),
                "{documents:?}"
            );
            previous.files.extend(made.keys().cloned());
        }
    }

    #[test]
    fn larger_search_files_make_fewer_and_an_index_kept_under_another_split_starts_anew() {
        let mut site = site_of(&["alpha", "beta"], &["r1"]);
        // 40 records with words of their own: several document files of 16, and term
        // lines enough for several chunks of 4 KiB.
        let report: String = (1..=40)
            .map(|n| {
                let words: Vec<String> = (0..60).map(|w| format!("w{n}x{w}")).collect();
                format!("## OBJ-{n:02} Object {n}\n\nItem {n} keeps {}.\n\n", words.join(" "))
            })
            .collect();
        with_report(&mut site, "alpha", "r1", &report);
        let previous = Previous { tokens: HashMap::new(), files: HashSet::new() };
        let files_under = |files: &BTreeMap<PathBuf, Vec<u8>>, folder: &str| {
            files.keys().filter(|p| p.starts_with(format!("{}/{folder}", crate::output::BROWSER_DIR))).count()
        };
        let meta = |files: &BTreeMap<PathBuf, Vec<u8>>| -> serde_json::Value {
            serde_json::from_slice(&files[&PathBuf::from(crate::output::BROWSER_DIR).join("meta.json")]).unwrap()
        };
        let mut kept = BrowserIndex::default();
        let (small, _) = index_with(&site, &IndexParts::default(), &previous, &mut kept);
        assert_eq!(meta(&small)["docs_per_chunk"], 16);

        site.search_files = crate::model::SearchFiles { documents_per_file: 64, term_file_kib: 4 };
        let (large, indexed) = index_with(&site, &IndexParts::default(), &previous, &mut kept);
        assert_eq!(kept.layout(), site.search_files);
        let large_meta = meta(&large);
        assert_eq!(large_meta["docs_per_chunk"], 64);
        for run in large_meta["runs"].as_array().unwrap() {
            assert_eq!(run[1].as_u64().unwrap() % 64, 0, "a run's numbers begin at a multiple of 64: {run}");
        }
        // alpha/r1's documents (its records and sections) fit one file of 64, not one of 16.
        let alpha_docs = large_meta["runs"][0][2].as_u64().unwrap();
        assert!((33..=64).contains(&alpha_docs), "{alpha_docs}");
        assert_eq!(files_under(&small, "d/alpha/r1"), 3);
        assert_eq!(files_under(&large, "d/alpha/r1"), 1);
        // Term files of 4 KiB instead of 24: more of them.
        assert!(
            files_under(&large, "t") > files_under(&small, "t"),
            "{} {}",
            files_under(&large, "t"),
            files_under(&small, "t")
        );
        // Nothing kept from the index of the other split: every file made, as from nothing.
        assert!(indexed.kept.iter().all(|p| !p.starts_with(crate::output::BROWSER_DIR)), "{:?}", indexed.kept);
        let (fresh, _) = index_with(&site, &IndexParts::default(), &previous, &mut BrowserIndex::default());
        let browser_files = |files: &BTreeMap<PathBuf, Vec<u8>>| -> Vec<(PathBuf, Vec<u8>)> {
            files
                .iter()
                .filter(|(p, _)| p.starts_with(crate::output::BROWSER_DIR))
                .map(|(p, b)| (p.clone(), b.clone()))
                .collect()
        };
        assert!(browser_files(&large) == browser_files(&fresh), "the kept index wrote what a fresh one writes");
    }

    #[test]
    fn parts_rekeyed_for_other_tokens_are_found_by_them() {
        let site = site_of(&["alpha", "beta"], &["r1", "r5"]);
        let keys = ["alpha/r1", "alpha/r5", "beta/r1", "beta/r5"];
        let previous = Previous { tokens: keys.iter().map(|k| (k.to_string(), 1)).collect(), files: HashSet::new() };
        let (cold, first) = index(&site, &IndexParts::default(), &previous);
        let rekeyed = first.parts.rekeyed(&|system, run| Some(u128::try_from(system.len() + run.len()).unwrap() + 7));
        let other = Previous {
            tokens: keys.iter().map(|k| (k.to_string(), u128::try_from(k.len()).unwrap() + 6)).collect(),
            files: cold.keys().cloned().collect(),
        };
        let (_, second) = index(&site, &rekeyed, &other);
        assert_eq!(second.kept.len(), 3 * 6, "every group found under its new key");
    }

    #[test]
    fn sections_split_at_headings_with_their_lines() {
        let markdown = "Opening words.\n\n## Objects\n\nThe table:\n\n| ID | Label |\n|---|---|\n| OBJ-01 | declared here |\n\n## Next\n\nMore.\n";
        // Line 8 (0-based) is the row of OBJ-01.
        let sections = section_texts(markdown, &[8]);
        let texts: Vec<&str> = sections.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts[0], "Opening words.\n");
        assert!(
            texts[1].starts_with("Objects\nThe table:\n") && texts[1].contains("OBJ-01 | declared here"),
            "{:?}",
            texts[1]
        );
        assert_eq!(texts[2], "Next\nMore.\n");
        assert_eq!(sections.iter().map(|s| s.lines.clone()).collect::<Vec<_>>(), [0..2, 2..10, 10..14]);
        let twins: Vec<&str> = sections[1].twins.iter().map(|r| &texts[1][r.clone()]).collect();
        assert_eq!(twins, ["OBJ-01 | declared here | \n"]);
        assert!(sections[0].twins.is_empty() && sections[2].twins.is_empty());
    }

    #[test]
    fn list_items_that_are_documents_of_their_own_are_twins_with_their_nested_items() {
        let markdown = "## Limitations\n\n- First limit, not inspected.\n  - with a nested detail\n- Second stays.\n";
        // Line 2 (0-based) is the first item.
        let sections = section_texts(markdown, &[2]);
        let text = &sections[1].text;
        let twins: Vec<&str> = sections[1].twins.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(twins, ["First limit, not inspected.\nwith a nested detail\n\n"], "{text:?}");
        assert!(text.contains("Second stays."));
    }

    #[test]
    fn each_limit_is_a_document_at_its_anchor_and_its_section_leaves_it_out() {
        let run_yaml =
            "revision: 5954a07d464feeaf6c311a9fa5ca2e54200a6794\nsources:\n  - id: SRC-1\n    title: The repository\n";
        let report = "# Memory\n\n## Limitations\n\nWhat this run leaves open.\n\n\
            | Limitation | Conclusion prevented |\n|---|---|\n\
            | Retention was not inspected in `store.py` | Whether turns expire |\n";
        let (run, _) = crate::testing::run_of(run_yaml, &[("memory", report)]);
        let system = System {
            slug: Slug::parse("lab").unwrap(),
            name: "Lab".into(),
            repository: None,
            summary: None,
            runs: vec![],
        };
        let docs = run_documents(&system, &run, RecordPages::Separate);
        let limits: Vec<&SearchDoc> = docs.iter().filter(|d| d.doc_type == DocType::Limit).collect();
        assert_eq!(limits.len(), 1, "{docs:#?}");
        let limit = limits[0];
        let anchor = &run.reports[0].limits[0].anchor;
        assert_eq!(limit.path, format!("/lab/r1/memory/#{anchor}"));
        assert!(
            limit.body.contains("Retention was not inspected") && limit.body.contains("Whether turns expire"),
            "{}",
            limit.body
        );
        assert_eq!(limit.label.as_deref(), Some(run.reports[0].limits[0].handle.as_str()));
        let section =
            docs.iter().find(|d| d.doc_type == DocType::Section && d.label.as_deref() == Some("Limitations")).unwrap();
        let twins: String = section.twins.iter().map(|r| &section.body[r.clone()]).collect();
        assert!(
            twins.contains("Retention was not inspected"),
            "the row is the limit's, not the section's: {section:#?}"
        );
        assert!(section.body.contains("What this run leaves open."));
    }

    #[test]
    fn plain_values_are_their_own_text() {
        let values = [
            "session JSON on disk (OBJ-13)",
            "files_modified, kept",
            "capped at last 20 turns (MAX_HISTORY_TURNS = 20)",
            "2026 is a year",
            "  padded  ",
            "",
            "x",
            "a_b",
        ];
        for value in values {
            assert!(is_plain(value), "{value}");
            assert_eq!(plain_text(value).trim(), value.trim(), "{value}");
        }
        // Markup the shortcut must leave to the parser: each changes the text.
        let marked = [
            "*em*",
            "_em_",
            "a _b_ c",
            "`code`",
            "[link](x)",
            "a &amp; b",
            "a\\*b",
            "<b>x</b>",
            "- item",
            "+ item",
            "1. item",
            "2) item",
            "# heading",
            "> quote",
            "~~gone~~",
            "a\nb",
            "x_",
            "_x",
            "a |b",
            "heading {#id}",
            "![img](x)",
        ];
        for value in marked {
            assert!(!is_plain(value), "{value}");
        }
    }

    /// The runs of `text`, and whether each is a compound.
    fn runs(text: &str) -> Vec<(&str, bool)> {
        let mut from = 0;
        std::iter::from_fn(|| {
            let run = next_run(text, from)?;
            from = run.next;
            Some((&text[run.range], run.compound))
        })
        .collect()
    }

    #[test]
    fn runs_are_words_and_compounds_without_trailing_joiners() {
        let text = "See _x_ in plugin/exia_seed/rappel.py. Ünïcode—mots; a--b x/ é";
        let found = runs(text);
        let expected = [
            ("See", false),
            ("x", false),
            ("in", false),
            ("plugin/exia_seed/rappel.py", true),
            ("Ünïcode", false),
            ("mots", false),
            ("a--b", true),
            ("x", false),
            ("é", false),
        ];
        assert_eq!(found, expected);
        assert!(runs(" .-_ ").is_empty());
    }

    #[test]
    fn line_numbers_are_counted_forwards_and_back() {
        let mut lines = LineCounter::new("a\nb\nc\n");
        assert_eq!(
            [lines.line_of(0), lines.line_of(2), lines.line_of(5), lines.line_of(1), lines.line_of(6)],
            [0, 1, 2, 0, 3]
        );
    }
}
