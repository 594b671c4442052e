//! Index: the search indexes every build writes, made from the resolved model (never by
//! re-reading HTML). One document per published record, per report section and per
//! report, in two forms:
//!
//! - a tantivy index in `search/tantivy/` for `casebook search` (offline, any downloaded
//!   copy of the site) and the dev server;
//! - a Pagefind bundle in `pagefind/` for the search page in the browser (chunked, so a
//!   first query fetches a small part of it).
//!
//! The tantivy files are renamed after a hash of their content and the writer runs on one
//! thread, so the same content gives the same bytes on every build.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Tag, TagEnd};
use sha2::{Digest, Sha256};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED, STRING};
use tantivy::tokenizer::{LowerCaser, RawTokenizer, RemoveLongFilter, TextAnalyzer, Token, TokenStream, Tokenizer};
use tantivy::{doc, Index, TantivyDocument};

use crate::model::{DeclarationForm, Publication, Record, Report, Run, Site, System};
use crate::parse::markdown_options;
use crate::render::OutputFile;
use crate::urls;

/// Where the tantivy index lives in the output.
pub const TANTIVY_DIR: &str = "search/tantivy";
/// Where the browser bundle lives in the output.
pub const BROWSER_DIR: &str = "pagefind";

/// A failure of an indexer (never of the content).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// tantivy failed.
    #[error("building the search index failed: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// Pagefind failed.
    #[error("building the browser search bundle failed: {0}")]
    Browser(String),
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
}

impl DocType {
    /// The name used in the index, in queries (`type:record`) and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            DocType::Record => "record",
            DocType::Section => "section",
            DocType::Report => "report",
        }
    }
}

/// One searchable document, as both indexers see it.
#[derive(Debug, Clone)]
pub struct SearchDoc {
    /// Record, section or report.
    pub doc_type: DocType,
    /// System slug and name.
    pub system: (String, String),
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
    /// Quoted and cited paths.
    pub paths: Vec<String>,
    /// Root-relative URL of the page (with the anchor for sections).
    pub path: String,
}

/// Every search document of the site, in site order.
pub fn documents(site: &Site) -> Vec<SearchDoc> {
    let mut docs = Vec::new();
    for system in &site.systems {
        for run in &system.runs {
            for report in &run.reports {
                docs.extend(report_documents(system, run, report));
            }
            for record in run.records.values().filter(|r| r.publication == Publication::Published) {
                docs.push(record_document(system, run, record));
            }
        }
    }
    docs
}

fn base(system: &System, run: &Run, doc_type: DocType, title: String, path: String) -> SearchDoc {
    SearchDoc {
        doc_type,
        system: (system.slug.clone(), system.name.clone()),
        run: run.slug.clone(),
        revision: run.revision.clone(),
        report: None,
        id: None,
        kind: None,
        family: None,
        statuses: Vec::new(),
        label: None,
        title,
        body: String::new(),
        paths: Vec::new(),
        path,
    }
}

/// The report as one document, and one document per section.
fn report_documents(system: &System, run: &Run, report: &Report) -> Vec<SearchDoc> {
    let url = urls::report(&system.slug, &run.slug, &report.slug);
    let sections = section_texts(&report.markdown);
    let report_ref = Some((report.slug.clone(), report.report_type.clone()));
    let paths_in = |range: Option<&Range<usize>>| -> Vec<String> {
        let mut paths: Vec<String> = report
            .quotes
            .iter()
            .map(|q| (q.location.line, q.path.clone()))
            .chain(report.citations.iter().filter_map(|c| c.path.clone().map(|p| (c.location.line, p))))
            .filter(|(line, _)| range.is_none_or(|r| {
                let line = line.saturating_sub(report.body_line) as usize;
                r.contains(&line)
            }))
            .map(|(_, p)| p)
            .collect();
        paths.sort();
        paths.dedup();
        paths
    };
    let mut whole = base(system, run, DocType::Report, report.title.clone(), url.clone());
    whole.report = report_ref.clone();
    // The report's own document holds its opening text and its headings; the text of
    // each section is in the section's document (indexing it twice would double the
    // index for no better answer).
    let mut body: Vec<&str> = sections.iter().filter(|s| s.heading.is_none()).map(|s| s.text.as_str()).collect();
    body.extend(report.sections.iter().map(|s| s.title.as_str()));
    whole.body = body.join("\n");
    whole.paths = paths_in(None);
    let mut docs = vec![whole];
    // A record's own heading is searchable as the record; a section of it would be a twin.
    let record_headings: std::collections::HashSet<&str> = report
        .declarations
        .iter()
        .filter(|d| matches!(d.form, DeclarationForm::Heading { .. }))
        .map(|d| d.anchor.as_str())
        .collect();
    for section in sections.iter().filter(|s| s.heading.is_some()) {
        let heading = section.heading.expect("filtered");
        let Some(s) = report.sections.get(heading) else { continue };
        if record_headings.contains(s.anchor.as_str()) {
            continue;
        }
        let mut doc = base(system, run, DocType::Section, format!("{} § {}", report.title, s.title), format!("{url}#{}", s.anchor));
        doc.report = report_ref.clone();
        doc.label = Some(s.title.clone());
        doc.body = section.text.clone();
        doc.paths = paths_in(Some(&section.lines));
        docs.push(doc);
    }
    docs
}

/// One published record: its label, fields, body and annotations as text.
fn record_document(system: &System, run: &Run, record: &Record) -> SearchDoc {
    let title = match &record.label {
        Some(label) => format!("{} — {label}", record.id),
        None => record.id.to_string(),
    };
    let mut doc = base(system, run, DocType::Record, title, urls::record(&system.slug, &run.slug, &record.id));
    doc.id = Some(record.id.to_string());
    doc.kind = Some(record.kind.clone());
    doc.family = record.family.clone();
    doc.label = record.label.clone();
    let mut statuses: Vec<String> = record.statuses.iter().map(|s| s.value.clone()).collect();
    statuses.sort();
    statuses.dedup();
    doc.statuses = statuses;
    let mut body = String::new();
    if !record.parts.is_empty() {
        body.push_str(&format!("Parts: {}\n", record.parts.join("; ")));
    }
    for at in &record.declarations {
        let report = &run.reports[at.report];
        if doc.report.is_none() {
            doc.report = Some((report.slug.clone(), report.report_type.clone()));
        }
        let d = &report.declarations[at.index];
        match (&d.form, &d.body) {
            (DeclarationForm::Heading { .. }, Some(range)) => body.push_str(&plain_text(&report.markdown[range.clone()])),
            _ => {
                if let Some(label) = &d.label {
                    body.push_str(label);
                    body.push('\n');
                }
                for field in &d.fields {
                    body.push_str(&format!("{}: {}\n", field.name, plain_text(&field.value).trim()));
                }
            }
        }
        body.push('\n');
    }
    for at in &record.annotations {
        let report = &run.reports[at.report];
        body.push_str(&plain_text(&report.markdown[report.annotations[at.index].body.clone()]));
        body.push('\n');
    }
    doc.body = body;
    let mut paths: Vec<String> = record
        .quotes
        .iter()
        .map(|at| run.reports[at.report].quotes[at.index].path.clone())
        .chain(record.citations.iter().filter_map(|at| run.reports[at.report].citations[at.index].path.clone()))
        .collect();
    paths.sort();
    paths.dedup();
    doc.paths = paths;
    doc
}

struct SectionText {
    /// Index into `Report::sections`; `None` for text before the first heading.
    heading: Option<usize>,
    text: String,
    /// Body line range (0-based) the section covers.
    lines: Range<usize>,
}

/// The text of each section of a report, split at every heading.
fn section_texts(markdown: &str) -> Vec<SectionText> {
    let line_of = |offset: usize| markdown[..offset].matches('\n').count();
    let mut sections = vec![SectionText { heading: None, text: String::new(), lines: 0..0 }];
    let mut headings = 0;
    for (event, range) in pulldown_cmark::Parser::new_ext(markdown, markdown_options()).into_offset_iter() {
        if let Event::Start(Tag::Heading { .. }) = event {
            let line = line_of(range.start);
            if let Some(last) = sections.last_mut() {
                last.lines.end = line;
            }
            sections.push(SectionText { heading: Some(headings), text: String::new(), lines: line..line });
            headings += 1;
        }
        push_text(&mut sections.last_mut().expect("never empty").text, &event);
    }
    let total = markdown.lines().count() + 1;
    if let Some(last) = sections.last_mut() {
        last.lines.end = total;
    }
    sections
}

fn push_text(out: &mut String, event: &Event<'_>) {
    match event {
        Event::Text(t) | Event::Code(t) => out.push_str(t),
        Event::SoftBreak | Event::HardBreak => out.push(' '),
        Event::End(TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item | TagEnd::TableRow | TagEnd::TableHead | TagEnd::CodeBlock) => {
            out.push('\n')
        }
        Event::End(TagEnd::TableCell) => out.push_str(" | "),
        _ => {}
    }
}

/// Markdown to plain text.
pub fn plain_text(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    for event in pulldown_cmark::Parser::new_ext(markdown, markdown_options()) {
        push_text(&mut out, &event);
    }
    out
}

/// The tantivy schema and its fields. `casebook search` opens the index with the same.
#[derive(Debug, Clone)]
pub struct Fields {
    /// The schema.
    pub schema: Schema,
    /// `record`, `section` or `report`.
    pub doc_type: Field,
    /// System slug (lower-cased, whole).
    pub system: Field,
    /// System name (stored).
    pub system_name: Field,
    /// Run slug.
    pub run: Field,
    /// Revision (stored).
    pub revision: Field,
    /// Report slug.
    pub report: Field,
    /// Report type.
    pub report_type: Field,
    /// Record ID, whole.
    pub id: Field,
    /// Record ID, by its parts.
    pub id_parts: Field,
    /// Kind code.
    pub kind: Field,
    /// Family code.
    pub family: Field,
    /// Statuses.
    pub status: Field,
    /// Label or heading.
    pub label: Field,
    /// Title to show (stored, searchable).
    pub title: Field,
    /// Plain text, English, stemmed.
    pub body: Field,
    /// Plain text, words as written (not stemmed): an exact form outranks a variant.
    pub exact: Field,
    /// Plain text as identifiers and paths, whole.
    pub ident: Field,
    /// Quoted and cited paths.
    pub path: Field,
    /// Root-relative URL (stored).
    pub url: Field,
}

/// Lower-cased whole values (IDs, kinds, statuses, slugs).
const KEYWORD: &str = "casebook_keyword";
/// Compound identifiers and paths, whole (`render_session_summary`, `plugin/exia_seed/rappel.py`).
const IDENT: &str = "casebook_ident";

impl Fields {
    /// The schema every casebook index has.
    pub fn new() -> Self {
        let mut b = Schema::builder();
        let text = |tokenizer: &str, stored: bool| {
            let options = TextOptions::default().set_indexing_options(
                TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(IndexRecordOption::WithFreqsAndPositions),
            );
            if stored {
                options.set_stored()
            } else {
                options
            }
        };
        let doc_type = b.add_text_field("type", STRING | STORED);
        let system = b.add_text_field("system", text(KEYWORD, true));
        let system_name = b.add_text_field("system_name", STORED);
        let run = b.add_text_field("run", text(KEYWORD, true));
        let revision = b.add_text_field("revision", STORED);
        let report = b.add_text_field("report", text(KEYWORD, true));
        let report_type = b.add_text_field("report_type", text(KEYWORD, true));
        let id = b.add_text_field("id", text(KEYWORD, true));
        let id_parts = b.add_text_field("id_parts", text("default", false));
        let kind = b.add_text_field("kind", text(KEYWORD, true));
        let family = b.add_text_field("family", text(KEYWORD, true));
        let status = b.add_text_field("status", text(KEYWORD, true));
        let label = b.add_text_field("label", text("en_stem", true));
        let title = b.add_text_field("title", text("en_stem", true));
        let body = b.add_text_field("body", text("en_stem", true));
        let exact = b.add_text_field("exact", text("default", false));
        let ident = b.add_text_field("ident", text(IDENT, false));
        let path = b.add_text_field("path", text(IDENT, true));
        let url = b.add_text_field("url", STORED);
        Fields {
            schema: b.build(),
            doc_type,
            system,
            system_name,
            run,
            revision,
            report,
            report_type,
            id,
            id_parts,
            kind,
            family,
            status,
            label,
            title,
            body,
            exact,
            ident,
            path,
            url,
        }
    }

    /// Registers casebook's tokenizers on an index (needed to write and to query).
    pub fn register_tokenizers(index: &Index) {
        let manager = index.tokenizers();
        manager.register(KEYWORD, TextAnalyzer::builder(RawTokenizer::default()).filter(LowerCaser).build());
        manager.register(IDENT, TextAnalyzer::builder(CompoundTokenizer::default()).filter(RemoveLongFilter::limit(100)).filter(LowerCaser).build());
    }
}

impl Default for Fields {
    fn default() -> Self {
        Self::new()
    }
}

/// Emits only compound words: runs of letters and digits joined by `_ . / -`
/// (`files_modified`, `session.py`, `plugin/exia_seed/rappel.py`, `MEM-OBJ-raw`), without
/// separators at either end. Plain words are in `body` already. (A hand-written scan:
/// a Unicode regex here spent most of its time building DFA states.)
#[derive(Clone, Default)]
struct CompoundTokenizer {
    token: Token,
}

struct CompoundTokenStream<'a> {
    text: &'a str,
    at: usize,
    token: &'a mut Token,
}

impl Tokenizer for CompoundTokenizer {
    type TokenStream<'a> = CompoundTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CompoundTokenStream<'a> {
        self.token.reset();
        CompoundTokenStream { text, at: 0, token: &mut self.token }
    }
}

fn is_joiner(c: char) -> bool {
    matches!(c, '_' | '.' | '/' | '-')
}

impl TokenStream for CompoundTokenStream<'_> {
    fn advance(&mut self) -> bool {
        while self.at < self.text.len() {
            let rest = &self.text[self.at..];
            // Skip to the next letter or digit.
            let Some(skip) = rest.find(char::is_alphanumeric) else {
                self.at = self.text.len();
                return false;
            };
            let start = self.at + skip;
            let run = &self.text[start..];
            let len = run.find(|c: char| !(c.is_alphanumeric() || is_joiner(c))).unwrap_or(run.len());
            // Trailing joiners (`session.py.`, `path/`) are not part of the word.
            let word = run[..len].trim_end_matches(is_joiner);
            self.at = start + len.max(1);
            if word.contains(is_joiner) {
                self.token.text.clear();
                self.token.text.push_str(word);
                self.token.offset_from = start;
                self.token.offset_to = start + word.len();
                self.token.position = self.token.position.wrapping_add(1);
                return true;
            }
        }
        false
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// Builds the tantivy index of `docs` and returns its files, named deterministically.
/// Stored URLs start with `base_url`, so results point into the site as published.
pub fn tantivy_files(docs: &[SearchDoc], base_url: &str) -> Result<Vec<OutputFile>, IndexError> {
    let base = base_url.trim_end_matches('/');
    let fields = Fields::new();
    let scratch = tempfile::tempdir()?;
    let index = Index::create_in_dir(scratch.path(), fields.schema.clone())?;
    Fields::register_tokenizers(&index);
    {
        // One thread, one segment, documents in site order: the same bytes every time.
        let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, 64 * 1024 * 1024)?;
        for d in docs {
            let mut document = doc!(
                fields.doc_type => d.doc_type.as_str(),
                fields.system => d.system.0.as_str(),
                fields.system_name => d.system.1.as_str(),
                fields.run => d.run.as_str(),
                fields.revision => d.revision.as_str(),
                fields.title => d.title.as_str(),
                fields.body => d.body.as_str(),
                fields.exact => d.body.as_str(),
                fields.ident => d.body.as_str(),
                fields.url => format!("{base}{}", d.path),
            );
            if let Some((report, report_type)) = &d.report {
                document.add_text(fields.report, report);
                if let Some(t) = report_type {
                    document.add_text(fields.report_type, t);
                }
            }
            if let Some(id) = &d.id {
                document.add_text(fields.id, id);
                document.add_text(fields.id_parts, id);
                document.add_text(fields.ident, id);
            }
            for (field, value) in [(fields.kind, &d.kind), (fields.family, &d.family), (fields.label, &d.label)] {
                if let Some(value) = value {
                    document.add_text(field, value);
                }
            }
            for status in &d.statuses {
                document.add_text(fields.status, status);
            }
            for path in &d.paths {
                document.add_text(fields.path, path);
            }
            writer.add_document(document)?;
        }
        writer.commit()?;
        writer.wait_merging_threads()?;
    }
    collect_deterministically(scratch.path())
}

/// Reads the index files, renaming the segment after a hash of its files' content so
/// that file names and `meta.json` are the same on every build.
fn collect_deterministically(dir: &Path) -> Result<Vec<OutputFile>, IndexError> {
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        // Lock files, and the list of managed files (a set, in hash order), are only
        // needed while writing; readers do without them.
        if (name.starts_with(".tantivy-") && name.ends_with(".lock")) || name == ".managed.json" {
            continue;
        }
        files.insert(name, std::fs::read(entry.path())?);
    }
    // Segment files are `<32 hex uuid>.<extension>`.
    let mut segments: Vec<String> = files
        .keys()
        .filter_map(|n| n.split_once('.').map(|(stem, _)| stem.to_string()))
        .filter(|stem| stem.len() == 32 && stem.chars().all(|c| c.is_ascii_hexdigit()))
        .collect();
    segments.sort();
    segments.dedup();
    let mut renames: Vec<(String, String)> = Vec::new();
    for segment in &segments {
        let mut hasher = Sha256::new();
        for (name, bytes) in files.iter().filter(|(n, _)| n.starts_with(segment.as_str())) {
            hasher.update(&name.as_bytes()[segment.len()..]);
            hasher.update(bytes);
        }
        let digest = hasher.finalize();
        let stable: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        // meta.json writes the same UUID hyphenated.
        renames.push((hyphenated(segment), hyphenated(&stable)));
        renames.push((segment.clone(), stable));
    }
    let rename = |text: &str| renames.iter().fold(text.to_string(), |t, (from, to)| t.replace(from.as_str(), to));
    let mut out = Vec::new();
    for (name, bytes) in files {
        let bytes = if name.ends_with(".json") { rename(&String::from_utf8_lossy(&bytes)).into_bytes() } else { bytes };
        out.push(OutputFile { path: PathBuf::from(TANTIVY_DIR).join(rename(&name)), bytes });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// `casebook-facets.json`: how many browser-search documents carry each facet value, so
/// the search page shows its facets with totals before Pagefind's filter data is loaded.
fn facet_totals(docs: &[SearchDoc]) -> OutputFile {
    let mut totals: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    for d in docs.iter().filter(|d| d.doc_type != DocType::Report) {
        *totals.entry("system").or_default().entry(d.system.1.clone()).or_default() += 1;
        *totals.entry("type").or_default().entry(d.doc_type.as_str().to_string()).or_default() += 1;
        if let Some(kind) = &d.kind {
            *totals.entry("kind").or_default().entry(kind.clone()).or_default() += 1;
        }
        for status in &d.statuses {
            *totals.entry("status").or_default().entry(status.clone()).or_default() += 1;
        }
    }
    let json = serde_json::to_string(&totals).expect("counts serialise");
    OutputFile { path: PathBuf::from(BROWSER_DIR).join("casebook-facets.json"), bytes: json.into_bytes() }
}

/// `0123…` (32 hex digits) → `01234567-89ab-cdef-0123-456789abcdef`.
fn hyphenated(simple: &str) -> String {
    format!("{}-{}-{}-{}-{}", &simple[..8], &simple[8..12], &simple[12..16], &simple[16..20], &simple[20..])
}

/// Builds the Pagefind bundle of `docs` for the browser. URLs are root-relative; the
/// search page tells Pagefind the base path.
pub fn browser_files(docs: &[SearchDoc]) -> Result<Vec<OutputFile>, IndexError> {
    use pagefind::api::PagefindIndex;
    use pagefind::options::PagefindServiceConfig;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| IndexError::Browser(e.to_string()))?;
    runtime.block_on(async {
        // Fragments (one per document) are bundled into about 2,000 files at most, so a
        // large site stays within hosts' file limits and writes quickly; a result then
        // fetches its group, about a twentieth of a site of 40,000 documents.
        let options = PagefindServiceConfig::builder()
            .force_language("en".to_string())
            .include_characters("-_".to_string())
            .max_fragments(2000)
            .build();
        let mut index = PagefindIndex::new(Some(options)).map_err(|e| IndexError::Browser(e.to_string()))?;
        for d in docs.iter().filter(|d| d.doc_type != DocType::Report) {
            let mut meta = BTreeMap::from([
                ("title".to_string(), d.title.clone()),
                ("system".to_string(), d.system.1.clone()),
                ("run".to_string(), d.run.clone()),
                ("type".to_string(), d.doc_type.as_str().to_string()),
            ]);
            if let Some(id) = &d.id {
                meta.insert("id".to_string(), id.clone());
            }
            let mut filters = BTreeMap::from([
                ("system".to_string(), vec![d.system.1.clone()]),
                ("type".to_string(), vec![d.doc_type.as_str().to_string()]),
            ]);
            if let Some(kind) = &d.kind {
                filters.insert("kind".to_string(), vec![kind.clone()]);
            }
            if !d.statuses.is_empty() {
                filters.insert("status".to_string(), d.statuses.clone());
            }
            let content = match &d.id {
                Some(id) => format!("{id} {}\n{}", d.label.as_deref().unwrap_or(""), d.body),
                None => d.body.clone(),
            };
            index
                .add_custom_record(d.path.clone(), content, "en".to_string(), Some(meta), Some(filters), None)
                .await
                .map_err(|e| IndexError::Browser(e.to_string()))?;
        }
        let files = index.get_files().await.map_err(|e| IndexError::Browser(e.to_string()))?;
        let mut out: Vec<OutputFile> = files
            .into_iter()
            .map(|f| OutputFile { path: PathBuf::from(BROWSER_DIR).join(f.filename), bytes: f.contents })
            .collect();
        out.push(facet_totals(docs));
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compounds(text: &str) -> Vec<String> {
        let mut tokenizer = CompoundTokenizer::default();
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    #[test]
    fn compound_words_only() {
        assert_eq!(
            compounds("See _append_unique in plugin/exia_seed/rappel.py, session.py. Also MEM-OBJ-raw and plain words."),
            ["append_unique", "plugin/exia_seed/rappel.py", "session.py", "MEM-OBJ-raw"]
        );
        assert!(compounds("no compound here — at all").is_empty());
        assert_eq!(compounds("x/"), Vec::<String>::new());
    }
}
