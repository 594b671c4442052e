//! One report: front matter, then one pass over the Markdown events that recognises
//! sections, record declarations (ID-first rows here; headings, run-ins and items in
//! `declarations.rs`), `On <ID>` annotations, references, quotes, citations, findings
//! (`findings.rs`) and limits (`limits.rs`), each with its file, line and column. Long
//! for one reason: the scanner's event handlers share its state, and each kind of block
//! is read where its events arrive.

mod declarations;
mod fields_block;
mod findings;
mod limits;
mod links;
mod pointers;
mod references_list;

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use pulldown_cmark::{CodeBlockKind, Event, Tag, TagEnd};

use crate::config::{parse_yaml, FrontMatter};
use crate::model::{
    Annotation, Citation, Code, Declaration, DeclarationForm, Diagnostic, Field, Finding, LineCol, Location, Mention,
    Owner, Quote, Report, Section,
};
use crate::model::{RecordId, Slug, Text};
use crate::recognise::{self, Conventions, IdScheme, LimitWords, StatusWords};

/// Splits `---\n…\n---\n` front matter from the body. Returns the YAML, the body and the
/// file line the body starts on; or an error when the front matter is not closed.
pub fn split_front_matter<'a>(text: &'a str, file: &Path) -> Result<(Option<&'a str>, &'a str, u32), Diagnostic> {
    let Some(rest) = text.strip_prefix("---\n") else {
        return Ok((None, text, 1));
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            let body_line = 2 + yaml.lines().count() as u32 + 1;
            return Ok((Some(yaml), body, body_line));
        }
        offset += line.len();
    }
    Err(Diagnostic::error(
        Code::UnclosedFrontMatter,
        Location::file(file),
        "the front matter opened on line 1 is never closed",
    )
    .with_source("---", 3)
    .with_help("end the front matter with a line holding only `---`"))
}

/// Parses one report. `slug` is its file stem. A report whose front matter is broken is
/// not returned; its diagnostics say why.
/// `source_path` is the file's path relative to the site root, shown on pages.
pub fn parse_report(
    file: &Path,
    source_path: &str,
    slug: &Slug,
    text: &str,
    conventions: &Conventions,
) -> (Option<Report>, Vec<Diagnostic>) {
    let (yaml, body, body_line) = match split_front_matter(text, file) {
        Ok(parts) => parts,
        Err(d) => return (None, vec![d]),
    };
    let front: FrontMatter = match yaml {
        Some(yaml) => match parse_yaml(yaml, file, 2) {
            Ok(front) => front,
            Err(d) => return (None, vec![d]),
        },
        None => FrontMatter::default(),
    };
    // Markup of other dialects (MyST, Obsidian, trailers) is made plain, every offset kept.
    let plain = recognise::plain_markdown(body);
    let body = plain.as_deref().unwrap_or(body);
    let file: Arc<Path> = Arc::from(file);
    let mut scanner = Scanner::new(conventions, file.clone(), body, body_line);
    scanner.run();
    let Scanner { parts, diagnostics, .. } = scanner;
    // Without a title in front matter, the heading that opens the report gives it, unless
    // it declares a record (`# OBJ-01 Cache`); else its file name.
    let opening = parts.sections.first().filter(|s| {
        s.level == 1
            && crate::model::opens_body(body, body_line, s.line)
            && !parts.declarations.iter().any(|d| d.location.line == s.line)
    });
    let title = front.title.clone().or_else(|| opening.map(|s| s.title.clone())).unwrap_or_else(|| slug.to_string());
    let report = Report {
        slug: slug.clone(),
        title,
        report_type: front.report_type,
        schema: front.schema,
        order: front.order,
        original: front.original.filter(|url| crate::markup::is_safe_url(url)),
        file,
        source_path: source_path.to_string(),
        markdown: Arc::from(body),
        body_line,
        sections: parts.sections,
        declarations: parts.declarations,
        annotations: parts.annotations,
        mentions: parts.mentions,
        quotes: parts.quotes,
        citations: parts.citations,
        findings: parts.findings,
        row_anchors: parts.row_anchors,
        block_anchors: parts.block_anchors,
        limits: parts.limits,
        links: parts
            .links
            .iter()
            .filter_map(|(written, at, wiki)| links::local_link(written, source_path, *at, *wiki))
            .collect(),
    };
    (Some(report), diagnostics)
}

#[derive(Default)]
struct Parts {
    sections: Vec<Section>,
    declarations: Vec<Declaration>,
    annotations: Vec<Annotation>,
    mentions: Vec<Mention>,
    quotes: Vec<Quote>,
    citations: Vec<Citation>,
    findings: Vec<Finding>,
    row_anchors: std::collections::BTreeMap<(usize, usize), Arc<str>>,
    block_anchors: std::collections::BTreeMap<usize, Arc<str>>,
    limits: Vec<crate::model::Limit>,
    /// Every link's destination as written, where, and whether an Obsidian link wrote
    /// it (`[[note]]`): the local ones become [`crate::model::LocalLink`]s once the
    /// report's path is known.
    links: Vec<(String, LineCol, bool)>,
}

/// Text of one inline container (a paragraph, heading, cell or tight list item), with
/// the runs of plain text that may hold IDs and where each run is in the source.
#[derive(Default, Clone)]
struct Inline {
    text: String,
    runs: Vec<TextRun>,
    source: Option<Range<usize>>,
    /// Code spans outside links: one that is a whole citation is one (`` `src/a.rs:3` ``).
    code_spans: Vec<TextRun>,
    /// Links to forges' pages of files (permalinks).
    links: Vec<Permalink>,
    /// The labels of the footnotes it refers to (`[^3]`).
    footnotes: Vec<String>,
    /// Its soft line breaks: where each is in `text`, and where the next line starts in
    /// the Markdown source.
    breaks: Vec<(usize, usize)>,
    /// For a definition read as `Term: definition`, the length of the term: the key,
    /// whatever its words.
    term_len: Option<usize>,
}

/// A link to a forge's page of a file, in an [`Inline`].
#[derive(Clone)]
struct Permalink {
    url: String,
    /// Where the link starts in the Markdown source.
    offset: usize,
    /// Byte range of its text in `Inline::text` (`SRC-3 § Edit formats`).
    text: Range<usize>,
}

#[derive(Clone)]
struct TextRun {
    /// Byte range in `Inline::text`.
    text: Range<usize>,
    /// Byte range in the Markdown source.
    source: Range<usize>,
}

struct Cell {
    inline: Inline,
    source: Range<usize>,
}

/// The level a run-in declaration (`**G-01 · …**` opening a paragraph) counts as: below
/// every heading's.
const RUN_IN_LEVEL: u8 = 7;
/// The level a list item declaring a record (`- Context truncation (MEM-4)` over its
/// nested list) counts as: below a run-in's.
const ITEM_LEVEL: u8 = 8;

struct PendingCode {
    language: Option<String>,
    code: String,
    offset: usize,
    /// Where the block ends, its closing fence included (once it is closed).
    end: usize,
    owner: Option<Owner>,
    /// What a caption just before the block, or its info string, says it quotes.
    attributed: Option<recognise::QuotePath>,
    /// True when that is its info string or a caption set apart as one (`**Listing 1.**
    /// …`), not prose that ends with a colon: then no paragraph below captions it.
    captioned: bool,
    /// The one record its caption names (`**DLG-01** `crew.py`, lines 26–36`): the quote
    /// is that record's when no record's text holds it.
    about: Option<String>,
    /// A MyST directive's body (```` ```{code-block} python ````): its options
    /// (`:caption:`, `:lineno-start:`) open the code.
    directive: bool,
    /// The line its first line is at, where the info string numbers it (`linenums="120"`).
    start_line: Option<u32>,
}

/// A caption read before a code block.
struct Caption {
    path: recognise::QuotePath,
    /// Set apart as a caption, not prose that ends with a colon.
    set_apart: bool,
    /// The one record ID it names, if it names one.
    about: Option<String>,
}

struct Scanner<'a> {
    conventions: &'a Conventions,
    scheme: &'a IdScheme,
    words: &'a StatusWords,
    /// Words shared by the findings of this report ([`Scanner::shared`]): a few dozen.
    shared_words: Vec<Arc<str>>,
    file: Arc<Path>,
    md: &'a str,
    line_starts: Vec<usize>,
    body_line: u32,
    parts: Parts,
    diagnostics: Vec<Diagnostic>,
    anchors: HashSet<Arc<str>>,
    /// The IDs named so far, each once ([`Scanner::record_id`]).
    ids: std::collections::HashMap<Box<str>, RecordId>,
    /// The IDs declared so far by ID-first rows.
    row_declared: HashSet<Box<str>>,
    /// The heading-scoped owner and its heading level.
    owner: Option<(Owner, u8)>,
    section: Option<u32>,
    inline: Inline,
    link_depth: usize,
    /// Open Obsidian links to records, whose text is read as text.
    wikilink_depth: usize,
    /// Inside a piped Obsidian link to a record: its alias is no text.
    wikilink_alias: bool,
    image_depth: usize,
    list_depth: usize,
    table: Option<usize>,
    /// True while in a legend of the author's words for the statuses ([`recognise::is_legend`]).
    table_is_legend: bool,
    tables_seen: usize,
    in_table_head: bool,
    header: Vec<Arc<str>>,
    /// Per column of the table being read: whether its header names a status column.
    header_is_status: Vec<bool>,
    row: Vec<Cell>,
    body_row: usize,
    /// What the findings of the table being read wait for: its end.
    table_findings: findings::TableFindings,
    /// How the table being read states limits, if it does.
    table_limits: Option<limits::LimitColumns>,
    /// Its rows' limits, anchored at its end.
    pending_limits: Vec<limits::PendingLimit>,
    /// The last section about limits whose prose was noted.
    limits_prose_noted: Option<u32>,
    /// The last section whose items led by handles, outside any section about limits,
    /// were noted.
    handles_noted: Option<Option<u32>>,
    /// The open headings, by level, and whether each is (or is within) a section about
    /// limits: kept as headings come, so no block walks back through the sections.
    heading_stack: Vec<(u8, bool)>,
    /// Where each section's heading is in the Markdown, by section index.
    heading_spans: Vec<Range<usize>>,
    code: Option<PendingCode>,
    /// The term of the definition list item being read (`Written by`), whose definitions
    /// (`: wired (after each response)`) are read as `Term: definition`.
    term: Option<Inline>,
    /// True inside a definition of a definition list.
    in_definition: bool,
    /// True right after a paragraph that leads a list of limits (`Limitations:`).
    limits_lead: bool,
    /// The list depth of the item that declares the record being read, if one does.
    item_record: Option<usize>,
    /// The list depth of the list of limits being read, if one is.
    limits_list: Option<usize>,
    /// The owner of the text that first refers to each footnote, by label.
    footnote_refs: std::collections::HashMap<String, Option<Owner>>,
    /// Inside a footnote's definition: the owner its citations belong to.
    footnote_owner: Option<Option<Owner>>,
    /// In a section of numbered references (its heading's level), the number of the
    /// next item of its list ([`references_list`]).
    references_section: Option<u8>,
    next_reference: Option<u64>,
    /// True once the term's text was read with one of its definitions (its references
    /// count once, however many definitions it has).
    term_used: bool,
    /// A finished code block waiting to see whether a `--- path` paragraph follows.
    quote_candidate: Option<PendingCode>,
    /// What the paragraph just read attributes to a code block, if one follows it.
    caption_before: Option<Caption>,
    paragraph_follows_code: bool,
    /// The last location computed: line index, byte offset, column.
    last_column: std::cell::Cell<(usize, usize, usize)>,
}

impl<'a> Scanner<'a> {
    fn new(conventions: &'a Conventions, file: Arc<Path>, md: &'a str, body_line: u32) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(md.match_indices('\n').map(|(i, _)| i + 1));
        Scanner {
            shared_words: Vec::new(),
            conventions,
            scheme: &conventions.ids,
            words: &conventions.statuses,
            file,
            md,
            line_starts,
            body_line,
            parts: Parts::default(),
            diagnostics: Vec::new(),
            anchors: HashSet::new(),
            ids: std::collections::HashMap::new(),
            row_declared: HashSet::new(),
            owner: None,
            section: None,
            inline: Inline::default(),
            link_depth: 0,
            wikilink_depth: 0,
            wikilink_alias: false,
            image_depth: 0,
            list_depth: 0,
            table: None,
            tables_seen: 0,
            in_table_head: false,
            header: Vec::new(),
            header_is_status: Vec::new(),
            row: Vec::new(),
            body_row: 0,
            table_findings: findings::TableFindings::default(),
            table_limits: None,
            pending_limits: Vec::new(),
            limits_prose_noted: None,
            handles_noted: None,
            heading_stack: Vec::new(),
            heading_spans: Vec::new(),
            code: None,
            term: None,
            in_definition: false,
            limits_lead: false,
            item_record: None,
            limits_list: None,
            footnote_refs: std::collections::HashMap::new(),
            footnote_owner: None,
            references_section: None,
            next_reference: None,
            term_used: false,
            quote_candidate: None,
            table_is_legend: false,
            caption_before: None,
            paragraph_follows_code: false,
            last_column: std::cell::Cell::new((0, 0, 1)),
        }
    }

    fn location(&self, offset: usize) -> Location {
        self.line_col(offset).of(&self.file)
    }

    /// The line and column of `offset`, for the model's items (their report knows its file).
    fn line_col(&self, offset: usize) -> LineCol {
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        // Columns count characters. Counting from the last location asked for, when it
        // is on the same line, keeps a long line with many mentions linear: locations
        // come in source order within each text run.
        let (cached_line, cached_offset, cached_col) = self.last_column.get();
        let col = if cached_line == line && cached_offset <= offset {
            cached_col + self.md[cached_offset..offset].chars().count()
        } else if cached_line == line {
            cached_col - self.md[offset..cached_offset].chars().count()
        } else {
            self.md[self.line_starts[line]..offset].chars().count() + 1
        };
        self.last_column.set((line, offset, col));
        LineCol { line: self.body_line + line as u32, col: col as u32 }
    }

    /// Where file line `line` of the body starts in the Markdown.
    fn offset_of_line(&self, line: u32) -> usize {
        let index = line.saturating_sub(self.body_line) as usize;
        self.line_starts.get(index).copied().unwrap_or(self.md.len())
    }

    fn line_text(&self, offset: usize) -> &str {
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let end = self.line_starts.get(line + 1).map(|e| e - 1).unwrap_or(self.md.len());
        &self.md[self.line_starts[line]..end]
    }

    /// Where text of `len` bytes holding the Markdown's byte `offset` can be, as written:
    /// within its block (`block`), no farther from `offset` than it is long. A line of
    /// megabytes with a reference every few words is not searched whole for each.
    fn near(&self, block: Option<Range<usize>>, offset: usize, len: usize) -> Option<Range<usize>> {
        let block = block?;
        let mut start = offset.saturating_sub(len).max(block.start);
        let mut end = offset.saturating_add(len).min(block.end).min(self.md.len());
        while !self.md.is_char_boundary(start) {
            start -= 1;
        }
        while !self.md.is_char_boundary(end) {
            end += 1;
        }
        (start <= end).then_some(start..end)
    }

    /// `id` as one string however often the report names it: a large site has millions
    /// of references to a few hundred thousand records.
    fn record_id(&mut self, id: &str) -> RecordId {
        if let Some(known) = self.ids.get(id) {
            return known.clone();
        }
        let record_id = RecordId::new(id);
        self.ids.insert(Box::from(id), record_id.clone());
        record_id
    }

    fn unique_anchor(&mut self, wanted: String) -> Arc<str> {
        let mut anchor = wanted.clone();
        let mut n = 2;
        while self.anchors.contains(&*anchor) {
            anchor = format!("{wanted}--{n}");
            n += 1;
        }
        let anchor: Arc<str> = Arc::from(anchor);
        self.anchors.insert(Arc::clone(&anchor));
        anchor
    }

    fn run(&mut self) {
        let md = self.md;
        let parser = pulldown_cmark::Parser::new_ext(md, crate::markup::options()).into_offset_iter();
        for (event, range) in parser {
            // A quote's `--- path` must be the very next block after the code block, or
            // that block's first paragraph when it is a block quote (`> `a.py`, lines 3–9`).
            if self.quote_candidate.is_some() && !self.paragraph_follows_code {
                match &event {
                    Event::Start(Tag::Paragraph) => self.paragraph_follows_code = true,
                    Event::Start(Tag::BlockQuote(_)) => {}
                    _ => {
                        if let Some(code) = self.quote_candidate.take() {
                            self.code_block_done(code);
                        }
                    }
                }
            }
            self.event(event, range);
        }
        if let Some(code) = self.quote_candidate.take() {
            self.code_block_done(code);
        }
        self.close_owner(md.len());
        self.adopt_named_sections();
        // Findings of a table's findings columns are known at its end: in order of place.
        self.parts.findings.sort_by_key(|f| (f.location.line, f.location.col));
    }

    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(tag) => self.end(tag, range),
            Event::Text(_) if self.wikilink_alias => {}
            Event::Text(text) => {
                if let Some(code) = &mut self.code {
                    code.code.push_str(&text);
                } else if self.link_depth > 0 || self.image_depth > 0 {
                    self.inline.text.push_str(&text);
                } else {
                    let start = self.inline.text.len();
                    self.inline.text.push_str(&text);
                    self.inline.runs.push(TextRun { text: start..self.inline.text.len(), source: range });
                }
            }
            // Inline code and raw inline HTML (shown as text) are part of the text, but
            // never hold references.
            Event::Code(text) if self.link_depth == 0 && self.image_depth == 0 => {
                let start = self.inline.text.len();
                self.inline.text.push_str(&text);
                self.inline.code_spans.push(TextRun { text: start..self.inline.text.len(), source: range });
            }
            Event::Code(text) | Event::InlineHtml(text) => self.inline.text.push_str(&text),
            // A soft break joins the runs around it (a citation may wrap onto the next
            // line); a hard break ends the run, as `render` sees it.
            Event::SoftBreak if self.code.is_none() && self.link_depth == 0 && self.image_depth == 0 => {
                let start = self.inline.text.len();
                self.inline.text.push(' ');
                self.inline.breaks.push((start, range.end));
                self.inline.runs.push(TextRun { text: start..start + 1, source: range });
            }
            // A hard break ends a line too: `:Status: wired\` over `:Source: …` are two
            // fields, as soft-broken lines are.
            Event::HardBreak if self.code.is_none() && self.link_depth == 0 && self.image_depth == 0 => {
                self.inline.breaks.push((self.inline.text.len(), range.end));
                self.inline.text.push(' ');
            }
            Event::SoftBreak | Event::HardBreak => self.inline.text.push(' '),
            // Its owner is known once the block is read: a run-in declaration
            // (`**G-01 · …** … [^1]`) declares the record the whole paragraph belongs to.
            Event::FootnoteReference(label) => self.inline.footnotes.push(label.to_string()),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        // A caption is the block just before its code block: any other block between
        // them makes it none.
        let inline_tag = matches!(
            tag,
            Tag::Link { .. }
                | Tag::Image { .. }
                | Tag::Emphasis
                | Tag::Strong
                | Tag::Strikethrough
                | Tag::Superscript
                | Tag::Subscript
        );
        let caption = if inline_tag { None } else { self.caption_before.take() };
        // `Limitations:` leads the list right after it, and nothing else.
        if !inline_tag && !matches!(tag, Tag::List(_)) {
            self.limits_lead = false;
        }
        match tag {
            Tag::Link { dest_url, link_type: pulldown_cmark::LinkType::WikiLink { has_pothole }, .. }
                if self.scheme.classify(dest_url.trim()).is_some() =>
            {
                self.record_wikilink(dest_url.trim(), has_pothole, range)
            }
            Tag::Link { dest_url, link_type, .. } => self.link_start(&dest_url, link_type, range.start),
            Tag::FootnoteDefinition(label) => {
                self.flush_inline();
                // What a footnote cites belongs to the record whose text refers to it.
                self.footnote_owner = Some(self.footnote_refs.get(label.as_ref()).copied().flatten());
            }
            Tag::Image { .. } => self.image_depth += 1,
            Tag::Emphasis | Tag::Strong => self.path_underscores(range.clone(), true),
            Tag::Strikethrough | Tag::Superscript | Tag::Subscript => {}
            Tag::CodeBlock(kind) => self.code_block_start(&kind, range.start, caption),
            Tag::Heading { .. } | Tag::Paragraph | Tag::TableCell | Tag::Item => {
                self.flush_inline();
                self.inline.source = Some(range);
                if matches!(tag, Tag::Item) {
                    if self.list_depth == 0 {
                        self.reference_item();
                    }
                    self.list_depth += 1;
                }
            }
            Tag::List(Some(start)) if self.references_section.is_some() && self.list_depth == 0 => {
                self.flush_inline();
                self.next_reference = Some(start);
            }
            Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.flush_inline();
                self.inline.source = Some(range);
                self.in_definition = matches!(tag, Tag::DefinitionListDefinition);
            }
            Tag::List(_) if self.limits_lead => {
                self.flush_inline();
                self.limits_lead = false;
                self.limits_list = Some(self.list_depth);
            }
            Tag::Table(_) => self.table_start(range.clone()),
            Tag::TableHead => self.in_table_head = true,
            Tag::TableRow => self.row.clear(),
            // An item's own text, before a list nested in it, is read as the item's; it
            // may declare the record the nested list describes.
            Tag::List(_) if self.list_depth > 0 && !self.inline.text.trim().is_empty() => {
                let inline = std::mem::take(&mut self.inline);
                // `- WAIT Limits :limits:` over a nested list: an outline's section of limits.
                let title = recognise::outline_title(inline.text.trim());
                let of_limits = title.len() < 60
                    && LimitWords::holds(&self.conventions.limits.headings, title)
                    && self.scheme.find_ids(title).is_empty();
                self.item_declaration(&inline, range.start);
                self.block_text(inline, self.owner.map(|(o, _)| o), true);
                if of_limits && self.limits_list.is_none() {
                    self.limits_list = Some(self.list_depth);
                }
            }
            _ => self.flush_inline(),
        }
    }

    /// An Obsidian link to a record (`[[MEM-EDGE-x]]`, `[[MEM-EDGE-x|the edge]]`) refers to
    /// it as its ID written in the text would: the ID is read in the link's place, and a
    /// piped alias is no text of its own.
    fn record_wikilink(&mut self, id: &str, piped: bool, range: Range<usize>) {
        self.wikilink_depth += 1;
        if piped {
            let start = self.inline.text.len();
            self.inline.text.push_str(id);
            self.inline.runs.push(TextRun { text: start..self.inline.text.len(), source: range });
            self.wikilink_alias = true;
        }
    }

    /// A link opens: every destination is kept (the local ones are checked), and a
    /// permalink to a forge's file is a citation.
    fn link_start(&mut self, dest_url: &str, link_type: pulldown_cmark::LinkType, offset: usize) {
        self.link_depth += 1;
        if !matches!(link_type, pulldown_cmark::LinkType::Email | pulldown_cmark::LinkType::Autolink) {
            let at = self.line_col(offset);
            let wiki = matches!(link_type, pulldown_cmark::LinkType::WikiLink { .. });
            self.parts.links.push((dest_url.to_string(), at, wiki));
        }
        if recognise::permalink(dest_url).is_some() {
            let at = self.inline.text.len();
            self.inline.links.push(Permalink { url: dest_url.to_string(), offset, text: at..at });
        }
    }

    /// A code block opens: its language, and what its info string or the caption just
    /// before it (and whether that is set apart as one) says it quotes.
    fn code_block_start(&mut self, kind: &CodeBlockKind<'_>, offset: usize, caption: Option<Caption>) {
        self.flush_inline();
        let (language, from_info, directive, start_line) = match kind {
            CodeBlockKind::Fenced(info) => match recognise::directive_language(info) {
                Some(language) => (language.map(str::to_string), None, true, None),
                None => {
                    let info = recognise::pandoc_info(info).unwrap_or_else(|| info.to_string());
                    let language = info.split_whitespace().next().filter(|l| !l.contains(['=', '/']));
                    (
                        language.map(str::to_string),
                        recognise::info_path(&info),
                        false,
                        recognise::info_start_line(&info),
                    )
                }
            },
            CodeBlockKind::Indented => (None, None, false, None),
        };
        let owner = self.owner.map(|(o, _)| o);
        let captioned = from_info.is_some() || caption.as_ref().is_some_and(|c| c.set_apart);
        let about = caption.as_ref().and_then(|c| c.about.clone());
        let attributed = from_info.or(caption.map(|c| c.path));
        self.code = Some(PendingCode {
            language,
            code: String::new(),
            offset,
            end: offset,
            owner,
            attributed,
            captioned,
            about,
            directive,
            start_line,
        });
    }

    fn end(&mut self, tag: TagEnd, range: Range<usize>) {
        match tag {
            TagEnd::Link if self.wikilink_depth > 0 && self.link_depth == 0 => {
                self.wikilink_depth -= 1;
                self.wikilink_alias = false;
            }
            TagEnd::Link => {
                self.link_depth -= 1;
                let end = self.inline.text.len();
                if let Some(link) = self.inline.links.last_mut().filter(|l| l.offset == range.start) {
                    link.text.end = end;
                }
            }
            TagEnd::FootnoteDefinition => {
                self.flush_inline();
                self.footnote_owner = None;
            }
            TagEnd::Image => self.image_depth -= 1,
            TagEnd::Emphasis | TagEnd::Strong => self.path_underscores(range, false),
            TagEnd::Strikethrough | TagEnd::Superscript | TagEnd::Subscript => {}
            TagEnd::Heading(level) => {
                let inline = std::mem::take(&mut self.inline);
                self.heading(level as u8, inline, range);
            }
            TagEnd::Paragraph => {
                let inline = std::mem::take(&mut self.inline);
                self.paragraph(inline);
            }
            TagEnd::Item => self.item_end(range.end),
            TagEnd::DefinitionListTitle => {
                self.term = Some(std::mem::take(&mut self.inline));
                self.term_used = false;
            }
            TagEnd::DefinitionListDefinition => {
                let definition = std::mem::take(&mut self.inline);
                if !definition.text.trim().is_empty() {
                    let inline = self.with_term(definition);
                    self.block_text(inline, self.owner.map(|(o, _)| o), false);
                }
                self.in_definition = false;
            }
            TagEnd::List(_) if self.list_depth == 0 && self.next_reference.is_some() => self.references_end(),
            TagEnd::List(_) if self.limits_list == Some(self.list_depth) => {
                self.flush_inline();
                self.limits_list = None;
            }
            TagEnd::DefinitionList => {
                self.term = None;
                self.flush_inline();
            }
            TagEnd::TableCell | TagEnd::TableHead | TagEnd::TableRow | TagEnd::Table => self.table_part_end(tag, range),
            TagEnd::CodeBlock => {
                if let Some(mut code) = self.code.take() {
                    code.end = range.end;
                    self.check_fence_closed(&code, range);
                    self.quote_candidate = Some(code);
                    self.paragraph_follows_code = false;
                }
            }
            _ => self.flush_inline(),
        }
    }

    /// A cell, the header, a row or a whole table ends.
    fn table_part_end(&mut self, tag: TagEnd, range: Range<usize>) {
        match tag {
            TagEnd::TableCell => {
                let inline = std::mem::take(&mut self.inline);
                if self.in_table_head {
                    self.header.push(Arc::from(inline.text.trim()));
                    self.scan(&inline, self.owner.map(|(o, _)| o), None);
                } else {
                    self.row.push(Cell { inline, source: range });
                }
            }
            TagEnd::TableHead => {
                self.in_table_head = false;
                self.header_is_status = findings::status_columns(&self.header);
                self.table_limits = self.limit_columns();
            }
            TagEnd::TableRow => {
                let cells = std::mem::take(&mut self.row);
                if self.body_row == 0 && self.second_header_row(&cells) {
                    // `| Finding | | Status | |` over `| ID | Label | Dimension | Word |`:
                    // a header of groups, as a word processor exports merged cells; the
                    // row under it names the columns.
                    self.header = cells.iter().map(|c| Arc::from(c.inline.text.trim())).collect();
                    self.header_is_status = findings::status_columns(&self.header);
                    self.table_limits = self.limit_columns();
                    return;
                }
                self.table_row(cells);
                self.body_row += 1;
            }
            TagEnd::Table => {
                self.finish_table_findings();
                self.finish_table_limits();
                self.table = None;
            }
            _ => {}
        }
    }

    /// True when a table's first row is its real header: the header above has empty
    /// cells (a header of groups), and every cell of the row is a short label, with no
    /// ID, number or status in it.
    fn second_header_row(&self, cells: &[Cell]) -> bool {
        let grouped = self.header.iter().any(|h| h.is_empty()) && self.header.len() == cells.len();
        grouped
            && cells.iter().all(|cell| {
                let text = cell.inline.text.trim();
                let words = text.split_whitespace().count();
                (1..=3).contains(&words)
                    && !text.chars().any(|c| c.is_ascii_digit())
                    && self.words.at_start(text).is_none()
                    && self.scheme.find_ids(text).is_empty()
            })
    }

    /// The opening (or closing) underscores of an emphasis that are part of a path
    /// (`swarm/__init__.py`) are text.
    fn path_underscores(&mut self, range: Range<usize>, opening: bool) {
        if self.code.is_some() {
            return;
        }
        if let Some(n) = recognise::path_underscores(self.md, range.clone()) {
            let at = if opening { range.start..range.start + n } else { range.end - n..range.end };
            self.event(Event::Text(pulldown_cmark::CowStr::Borrowed(&"__"[..n])), at);
        }
    }

    /// Text outside a paragraph, heading, cell or item (rare: text directly in a block
    /// quote after a nested block) still has its references recognised.
    fn flush_inline(&mut self) {
        if !self.inline.text.is_empty() {
            let inline = std::mem::take(&mut self.inline);
            self.scan(&inline, self.owner.map(|(o, _)| o), None);
        }
        self.inline = Inline::default();
    }

    fn check_fence_closed(&mut self, code: &PendingCode, range: Range<usize>) {
        let raw = &self.md[range.clone()];
        let first = raw.trim_start();
        let fence: String = first.chars().take_while(|&c| c == '`' || c == '~').collect();
        if fence.len() < 3 {
            return;
        }
        let last_line = raw.trim_end().lines().last().unwrap_or("").trim();
        let closed = raw.trim_end().lines().count() > 1
            && last_line.starts_with(&fence[..3])
            && last_line.chars().all(|c| c == fence.chars().next().unwrap());
        if !closed {
            let location = self.location(code.offset);
            let line = self.line_text(code.offset).to_string();
            self.diagnostics.push(
                Diagnostic::error(
                    Code::UnclosedFence,
                    location,
                    "this code fence is never closed, so the rest of the report is code",
                )
                .with_source(line, fence.chars().count())
                .with_help(format!("close the block with a line holding only {fence}")),
            );
        }
    }

    fn close_owner(&mut self, end: usize) {
        if let Some((owner, _)) = self.owner.take() {
            match owner {
                Owner::Declaration(i) => {
                    if let Some(body) = &mut self.parts.declarations[i as usize].body {
                        body.end = end.max(body.start);
                    }
                }
                Owner::Annotation(i) => {
                    let body = &mut self.parts.annotations[i as usize].body;
                    body.end = end.max(body.start);
                }
            }
        }
    }

    /// A definition's text read as `Term: definition`: a key and its value, as a
    /// `Key: value` line is. The term's runs come with its first definition only.
    fn with_term(&mut self, definition: Inline) -> Inline {
        let Some(term) = &self.term else { return definition };
        let mut inline = Inline { source: definition.source.clone(), ..Inline::default() };
        inline.text.push_str(term.text.trim_end());
        if !self.term_used {
            inline.runs.extend(term.runs.iter().filter(|r| r.text.end <= inline.text.len()).cloned());
            inline.code_spans.extend(term.code_spans.iter().filter(|r| r.text.end <= inline.text.len()).cloned());
            inline.links.extend(term.links.iter().filter(|l| l.text.end <= inline.text.len()).cloned());
            inline.footnotes.extend(term.footnotes.iter().cloned());
            self.term_used = true;
        }
        inline.term_len = Some(inline.text.len());
        inline.text.push_str(": ");
        let offset = inline.text.len();
        let shift = |run: &TextRun| TextRun {
            text: run.text.start + offset..run.text.end + offset,
            source: run.source.clone(),
        };
        inline.runs.extend(definition.runs.iter().map(shift));
        inline.code_spans.extend(definition.code_spans.iter().map(shift));
        inline.links.extend(
            definition
                .links
                .iter()
                .map(|l| Permalink { text: l.text.start + offset..l.text.end + offset, ..l.clone() }),
        );
        inline.footnotes.extend(definition.footnotes);
        inline.text.push_str(&definition.text);
        inline
    }

    fn paragraph(&mut self, inline: Inline) {
        let inline = if self.in_definition { self.with_term(inline) } else { inline };
        let markdown = inline.source.clone().map_or("", |s| &self.md[s]);
        // `**Component:** X` and `**Status:** wired` on lines of their own are two fields,
        // though Markdown joins them into one paragraph.
        if !inline.breaks.is_empty() && markdown.lines().all(recognise::starts_with_key) {
            for line in field_lines(inline) {
                self.paragraph_block(line);
            }
            return;
        }
        self.paragraph_block(inline);
    }

    /// The code block just before a paragraph, done: with the paragraph as its caption
    /// when it reads as one (then true: the paragraph is no more than that).
    fn caption_under(&mut self, mut code: PendingCode, inline: &Inline, markdown: &str) -> bool {
        // A block captioned above takes no caption from below: that is the next
        // block's (`**Listing 2.** …` between two listings); so is a caption on the line
        // right above the next block's fence, and an AsciiDoc block title.
        let captions_next_block = inline.source.as_ref().is_some_and(|s| {
            // The paragraph's range may or may not hold its own line's end.
            let mut rest = &self.md[s.end..];
            if !self.md[..s.end].ends_with('\n') {
                rest = rest.trim_start_matches([' ', '\t', '\r']);
                rest = rest.strip_prefix('\n').unwrap_or(rest);
            }
            let rest = rest.trim_start_matches(' ');
            rest.starts_with("```") || rest.starts_with("~~~")
        }) || recognise::is_block_title(markdown);
        // A place alone on the line right under the block (no blank line between)
        // is its caption: `` `a.py`, líneas 116-124 (SRC-2) ``.
        let right_under = inline.source.as_ref().is_some_and(|s| {
            // (An indented block's range holds the blank lines after it.)
            let code_end = self.md.get(..code.end).map_or(code.end, |before| before.trim_end().len());
            let between = self.md.get(code_end..s.start).unwrap_or("\n\n");
            between.matches('\n').count() <= 1 && between.chars().all(|c| c.is_whitespace() || c == '>')
        });
        // Further down, with a blank line between, it is the caption of a block that
        // nothing else attributes, unless a code block follows it (which it introduces).
        let next_is_code = inline.source.as_ref().is_some_and(|s| {
            let rest = self.md.get(s.end..).unwrap_or("");
            let next = rest.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let unindented = next.trim_start_matches(' ');
            let fence = unindented.starts_with("```") || unindented.starts_with("~~~");
            next.len() - unindented.len() >= 4 || next.starts_with('\t') || fence
        });
        let place_alone = right_under || (code.attributed.is_none() && !next_is_code);
        let place_under = place_alone && recognise::is_place_line(&inline.text);
        let under = self.conventions.citations.quote_path(&inline.text).or_else(|| {
            let caption = recognise::reads_as_caption_after(markdown, &inline.text) || place_under;
            (!code.captioned && !captions_next_block && caption).then(|| caption_of(markdown, &inline.text)).flatten()
        });
        let captioned = under.is_some();
        if under.is_some() {
            code.attributed = under;
        }
        self.code_block_done(code);
        captioned
    }

    /// A table opens (`range`: the whole table as written).
    fn table_start(&mut self, range: Range<usize>) {
        self.flush_inline();
        self.table_is_legend = recognise::is_legend(self.words, &self.md[range]);
        self.table_findings = findings::TableFindings::default();
        self.table = Some(self.tables_seen);
        self.tables_seen += 1;
        self.header.clear();
        self.body_row = 0;
    }

    fn paragraph_block(&mut self, inline: Inline) {
        // A loose item's first paragraph, over a list nested in the item, may declare the
        // record that list describes.
        if let Some(nested) = self.list_depth.eq(&1).then(|| self.nested_list_after(&inline)).flatten() {
            self.item_declaration(&inline, nested);
        }
        let markdown = inline.source.clone().map_or("", |s| &self.md[s]);
        if let Some(code) = self.quote_candidate.take() {
            if self.caption_under(code, &inline, markdown) {
                return;
            }
        }
        let lead = inline.text.trim();
        // `Gaps:` over a list, or a paragraph that is only a bold title (`**22/** 🙈 **What
        // I didn't check.**`, a thread's post): the list below is the limits.
        let title_only =
            recognise::run_in(markdown).is_some_and(|bold| markdown.trim_end().ends_with(&format!("{bold}**")));
        if (lead.ends_with(':') || title_only)
            && lead.len() < 80
            && LimitWords::holds(&self.conventions.limits.headings, lead)
        {
            self.limits_lead = true;
        }
        if let Some(path) = recognise::permalink_caption(&inline.text) {
            self.caption_before = Some(Caption { path, set_apart: true, about: None });
        } else if recognise::reads_as_caption_before(markdown, &inline.text) {
            let set_apart = recognise::set_apart(markdown, &inline.text);
            let ids: std::collections::BTreeSet<String> =
                self.scheme.find_ids(&inline.text).into_iter().map(|m| inline.text[m.range].to_string()).collect();
            let about = (ids.len() == 1).then(|| ids.into_iter().next()).flatten();
            // `… In `respond.py`, lines 361–366, the hand-off is marked:` introduces the block
            // in its last sentence, however much the paragraph cites before it.
            let text = inline.text.trim();
            let last = text.rfind(". ").map_or(text, |at| &text[at + 2..]);
            let in_last = (last.len() < text.len() && last.ends_with(':'))
                .then(|| recognise::caption_path(last, recognise::default_source))
                .flatten();
            let path = in_last.or_else(|| caption_of(markdown, &inline.text));
            self.caption_before = path.map(|path| Caption { path, set_apart, about });
        }
        if let Some(id) = self.run_in_declaration(&inline, markdown) {
            let mentioned_from = self.parts.mentions.len();
            self.block_text(inline, self.owner.map(|(o, _)| o), self.list_depth > 0);
            // The declaring ID is no reference to the record.
            if let Some(at) = self.parts.mentions[mentioned_from..].iter().position(|m| m.target == id) {
                self.parts.mentions.remove(mentioned_from + at);
            }
            return;
        }
        let text = inline.text.trim_start();
        if text.starts_with("--- ") || text.starts_with("---\t") {
            let offset = inline.source.as_ref().map_or(0, |s| s.start);
            let help = match self.conventions.citations.quote_path(&inline.text) {
                Some(_) => "a quote's path line follows its code block directly; move it under the block",
                None => "a quote's path line is `--- path` or `--- SRC-n path:lines`, without spaces in the path",
            };
            self.note(offset, 3, "this `---` line is not a quote's path".into(), help);
        }
        self.block_text(inline, self.owner.map(|(o, _)| o), self.list_depth > 0);
    }

    /// A link to a forge's page of a file at a revision (a permalink) cites that file
    /// and its lines, of the run's default source unless its text names another
    /// (`[SRC-3 § Edit formats](…/edit-formats.md#edit-formats)`), with the section its
    /// text names. A permalink that repeats a citation written beside it in the same text
    /// (`` SRC-2, `a.py` L3–L9 — <…/a.py#L3-L9> ``) is that citation.
    fn permalink_citation(&mut self, inline: &Inline, link: &Permalink, owner: Option<Owner>, cited_from: usize) {
        let Some((path, lines, revision)) = recognise::permalink(&link.url) else { return };
        if !self.conventions.analyses_revision(&revision) {
            let location = self.location(link.offset);
            let line = self.line_text(link.offset).to_string();
            let shown: String = revision.chars().take(12).collect();
            let diagnostic = Diagnostic::warning(
                Code::PermalinkRevision,
                location,
                format!("this link cites `{path}` at revision `{shown}`, which this run does not analyse"),
            )
            .with_help(
                "link to the file at the run's revision, or register that revision as a source of its own in run.yaml",
            )
            .with_source(line, 1);
            self.diagnostics.push(diagnostic);
        }
        let repeated = self.parts.citations[cited_from..]
            .iter()
            .any(|c| c.path.as_deref() == Some(path.as_str()) && (lines.is_empty() || *c.lines == *lines));
        if repeated {
            return;
        }
        let written = self.conventions.citations.find(&inline.text[link.text.clone()]);
        let named = written.into_iter().find(|c| c.source_range.is_some());
        let owner = self.footnote_owner.unwrap_or(owner);
        let location = self.line_col(link.offset);
        let source = named.as_ref().and_then(|c| c.source.as_deref()).map(|s| self.shared(s));
        self.parts.citations.push(Citation {
            names_source: source.is_some(),
            source,
            path: Some(path.into_boxed_str()),
            section: named.and_then(|c| c.section).map(String::into_boxed_str),
            lines: lines.into_boxed_slice(),
            location,
            owner,
        });
    }

    /// A code block, once what follows it is known: a quote when a caption, its info
    /// string or a `--- path` line names the file it quotes; else a place listed as not
    /// understood, since it may be evidence that lost its source.
    fn code_block_done(&mut self, mut code: PendingCode) {
        if code.directive {
            directive_attribution(&mut code);
        }
        // `# SRC-2 a.py L3–9` as the block's own first line names what it quotes, whatever a
        // paragraph before it cites (`… the token count [SRC-2 a.py L412]:`).
        if let Some((path, at)) = recognise::first_line_path(&code.code) {
            code.code.drain(..at);
            code.attributed = Some(path);
        }
        // A diff of context only (`@@ -658,4 +658,4 @@`) quotes its file as it is: its code
        // is the lines without the diff's first column, in the file's own language. Its own
        // header names the file and lines, whatever a paragraph before it cites; a source
        // named beside it is kept when it names the same file.
        if let Some((mut diff_path, body)) = recognise::diff_context(&code.code) {
            code.code = body;
            code.language = None;
            let named = code.attributed.take().filter(|named| named.path == diff_path.path);
            diff_path.source = named.and_then(|named| named.source);
            code.attributed = Some(diff_path);
        }
        let Some(mut path) = code.attributed else {
            if self.analyst_block(&code) {
                return;
            }
            let first_line = self.line_text(code.offset).trim_end().to_string();
            self.note_line(
                code.offset,
                first_line,
                "this code block is not read as a quote: nothing beside it names the file and lines it quotes".into(),
                "if it quotes a source, put `--- path:lines` under it, or a caption naming the file and lines just before or after it",
            );
            return;
        };
        // Copied with a viewer's gutter of line numbers: the code is what follows the gutter,
        // and the gutter gives the lines where nothing else does.
        if let Some((body, lines)) = recognise::without_gutter(&code.code) {
            code.code = body;
            if path.lines.is_empty() {
                path.lines = vec![lines];
            }
        }
        // Numbered from a first line (`linenums="120"`), the block's length gives its last.
        if let (true, Some(start)) = (path.lines.is_empty(), code.start_line) {
            let count = u32::try_from(code.code.lines().count()).unwrap_or(u32::MAX).max(1);
            path.lines = vec![crate::model::LineRange { start, end: start.saturating_add(count - 1) }];
        }
        let language = code.language.or_else(|| recognise::language_for_path(&path.path).map(str::to_string));
        let location = self.line_col(code.offset);
        let owner = code.owner.or_else(|| {
            let about = code.about.as_deref()?;
            self.parts.declarations.iter().position(|d| d.id.as_str() == about).map(Owner::declaration)
        });
        self.parts.quotes.push(Quote {
            language,
            code: code.code,
            path: path.path,
            source: path.source,
            lines: path.lines,
            location,
            owner,
        });
    }

    /// A note on the line at `offset`, underlining it whole.
    fn note_line(&mut self, offset: usize, line: String, message: String, help: &str) {
        let location = self.location(offset);
        let width = line.chars().count().max(1);
        self.diagnostics
            .push(Diagnostic::note(Code::NotUnderstood, location, message).with_source(line, width).with_help(help));
    }

    /// A note: a place that looks like a convention but produced nothing.
    fn note(&mut self, offset: usize, span_chars: usize, message: String, help: &str) {
        let location = self.location(offset);
        let line = self.line_text(offset).to_string();
        self.diagnostics.push(
            Diagnostic::note(Code::NotUnderstood, location, message).with_source(line, span_chars).with_help(help),
        );
    }

    /// A paragraph or list item: its references and citations, its findings, and the
    /// fields of the record whose body it is in.
    fn block_text(&mut self, inline: Inline, owner: Option<Owner>, in_list: bool) {
        let cited_from = self.parts.citations.len();
        let mentioned_from = self.parts.mentions.len();
        self.scan(&inline, owner, None);
        let evidence = cited_from..self.parts.citations.len();
        let in_limits_list = in_list && self.limits_list.is_some();
        if self.table.is_none() && (self.in_limits_section() || in_limits_list) {
            // The items of the list of limits: the top level's, or those nested under an
            // outline's item `- Limits` (`limits_list` is the depth the list opened at).
            let item_depth = self.limits_list.map_or(1, |depth| depth + 1);
            match in_list {
                true if self.list_depth == item_depth => {
                    self.limit_item(&inline, mentioned_from..self.parts.mentions.len(), evidence.clone())
                }
                false if !inline.text.trim().is_empty() => {
                    self.limits_paragraph(&inline, mentioned_from..self.parts.mentions.len(), evidence.clone())
                }
                _ => {}
            }
        } else if in_list && self.list_depth == 1 && self.table.is_none() && owner.is_none() {
            self.handle_item_outside_limits(&inline);
        }
        let conventions = self.conventions;
        let text = inline.text.trim();
        let lead = inline.text.len() - inline.text.trim_start().len();
        // A definition's term is its key, whatever its words (`` `...` elision ``).
        let term = inline.term_len.filter(|len| *len > lead).and_then(|len| conventions.key_of(text, len - lead));
        let field =
            term.or_else(|| conventions.field(text)).or_else(|| in_list.then(|| conventions.item_key(text)).flatten());
        let states_findings = self.block_findings(&inline, owner, evidence, field);
        if let (Some((Owner::Declaration(i), ITEM_LEVEL)), Some((key, value_at)), true) = (self.owner, field, in_list) {
            self.item_names_its_record(i as usize, key, inline.text.trim()[value_at..].trim());
        }
        if let (Some((Owner::Declaration(i), _)), Some(source), false) = (self.owner, inline.source.clone(), in_list) {
            let text = inline.text.trim();
            if let Some((key, value_at)) = field.filter(|_| !states_findings.starts_with_status_key) {
                let raw = &self.md[source.clone()];
                let value_source = raw.find(&text[value_at..]).map(|at| Text::of(self.md, raw[at..].trim()));
                let value = value_source.unwrap_or_else(|| Text::Own(text[value_at..].into()));
                let declaration = &mut self.parts.declarations[i as usize];
                if key == "Label" && declaration.label.is_none() {
                    declaration.label = Some(text[value_at..].trim().to_string());
                }
                let name = self.shared(key);
                self.parts.declarations[i as usize].fields.push(Field { name, value });
            }
        }
    }

    /// `text` as a string shared by every use of it in this report (statuses, dimensions).
    fn shared(&mut self, text: &str) -> Arc<str> {
        if let Some(shared) = self.shared_words.iter().find(|w| &***w == text) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(text);
        self.shared_words.push(shared.clone());
        shared
    }

    fn table_row(&mut self, cells: Vec<Cell>) {
        let table = self.table.unwrap_or(0);
        let cited_from = self.parts.citations.len();
        let mentioned_from = self.parts.mentions.len();
        let declared = cells.first().and_then(|first| self.scheme.leading_id(&first.inline.text).map(|m| (m, first)));
        let Some((m, first)) = declared else {
            let owner = self.owner.map(|(o, _)| o);
            // `| **Status (drives steps)** | wired |` under `| Field | Value |` in a record's
            // text: each row is a `Key: value` line of the record.
            let key_value = matches!(owner, Some(Owner::Declaration(_)))
                && cells.len() == 2
                && self.header.len() == 2
                && recognise::is_key_value_header(&self.header[0], &self.header[1]);
            if key_value {
                let line = key_value_line(&cells[0].inline, &cells[1].inline);
                self.block_text(line, owner, false);
                return;
            }
            for cell in &cells {
                self.scan(&cell.inline, owner, None);
            }
            let cited = cited_from..self.parts.citations.len();
            // A legend's rows are a key to the author's words for the statuses.
            if !self.table_is_legend {
                let row = findings::Row::undeclared(self, &cells, cited.clone());
                self.row_findings(&cells, row);
            }
            self.limit_row(&cells, mentioned_from..self.parts.mentions.len(), cited);
            return;
        };
        let id = self.record_id(&first.inline.text[m.range.clone()]);
        self.row_declared.insert(Box::from(id.as_str()));
        let (label, part) = recognise::label_and_part(&first.inline.text[m.range.end..]);
        // `| CTL-01 | Parser selection | … |` under `| ID | Control | … |`: a cell alone
        // with the ID takes its label from the column that names what each row is.
        let label = label.or_else(|| {
            let column = (1..cells.len()).find(|&c| self.header.get(c).is_some_and(|h| recognise::names_rows(h)))?;
            let text = cells[column].inline.text.trim();
            (!text.is_empty()).then(|| text.to_string())
        });
        let id_offset = self.source_offset(&first.inline, m.range.clone()).unwrap_or(first.source.start);
        let location = self.line_col(id_offset);
        let anchor = self.unique_anchor(id.slug());
        self.parts.row_anchors.insert((table, self.body_row), anchor.clone());
        let index = self.parts.declarations.len();
        let mut fields = Vec::new();
        for (column, cell) in cells.iter().enumerate().skip(1) {
            let name = self
                .header
                .get(column)
                .cloned()
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| Arc::from(format!("Column {}", column + 1)));
            let value = Text::of(self.md, self.md[cell.source.clone()].trim().trim_matches('|').trim());
            fields.push(Field { name, value });
        }
        self.parts.declarations.push(Declaration {
            id: id.clone(),
            form: DeclarationForm::TableRow { table, part: part.clone() },
            anchor: anchor.clone(),
            label,
            fields,
            body: None,
            location,
            section: self.section,
        });
        let owner = Some(Owner::declaration(index));
        for (column, cell) in cells.iter().enumerate() {
            let skip = (column == 0).then(|| m.range.clone());
            self.scan(&cell.inline, owner, skip);
        }
        let mut row = findings::Row::declaring(self, id, part, anchor, index, cited_from..self.parts.citations.len());
        row.label_dimension = self.dimension_cell(&cells);
        self.row_findings(&cells, row);
    }

    /// `| GATE-01 | … | dangerous tools in a TTY | wired |` under `| Record | … |
    /// Dimension | Status |`: an ID-first row's status is on the dimension its cell names.
    fn dimension_cell(&self, cells: &[Cell]) -> Option<String> {
        let column = self.header.iter().skip(1).position(|h| findings::names_dimension(h))? + 1;
        let text = cells.get(column)?.inline.text.trim();
        (!text.is_empty() && !recognise::names_whole_subject(text)).then(|| text.to_string())
    }

    /// Where a byte range of an inline container's text is in the Markdown source.
    fn source_offset(&self, inline: &Inline, range: Range<usize>) -> Option<usize> {
        let run = inline
            .runs
            .iter()
            .chain(&inline.code_spans)
            .find(|r| r.text.start <= range.start && range.start < r.text.end)?;
        // A range may end inside a character (`start + 1` before a letter of Cyrillic or
        // Japanese): it ends after that character.
        let mut end = range.end.min(run.text.end);
        while !inline.text.is_char_boundary(end) {
            end += 1;
        }
        let wanted = inline.text.get(range.start..end)?;
        let source = &self.md[run.source.clone()];
        let relative = range.start - run.text.start;
        if source.get(relative..relative + wanted.len()) == Some(wanted) {
            return Some(run.source.start + relative);
        }
        source.find(wanted).map(|i| run.source.start + i).or(Some(run.source.start))
    }

    /// Records the references and citations in an inline container. `skip` is the range
    /// of a declaring ID, which is not a reference. Text runs that touch (an escape such
    /// as `\_` ends a run) are read as one, so `\_\_init\_\_.py` is one path; code spans
    /// join them for citations (`SRC-2, `a/b.py` L3–L9`), not for references.
    fn scan(&mut self, inline: &Inline, owner: Option<Owner>, skip: Option<Range<usize>>) {
        for label in &inline.footnotes {
            self.footnote_refs.entry(label.clone()).or_insert(owner);
        }
        if inline.text.contains('[') {
            self.reference_markers(&inline.text, owner);
        }
        let cited_from = self.parts.citations.len();
        let mentioned_from = self.parts.mentions.len();
        self.scan_ids(inline, owner, skip.clone());
        let cited_in_text = self.scan_citations(inline, owner);
        for link in &inline.links {
            self.permalink_citation(inline, link, owner, cited_from);
        }
        for span in &inline.code_spans {
            let code = &inline.text[span.text.clone()];
            // A code span that is one whole record ID (`SW-C-loop`) is a reference: some
            // analysts set every ID in code; so is a MyST role's (`` {ref}`OBJ-1 <obj-1>` ``).
            let named = recognise::role_title(code, &inline.text[..span.text.start]).map_or(code.trim(), |(t, _)| t);
            if self.scheme.classify(named).is_some() && skip.as_ref().is_none_or(|s| s.start != span.text.start) {
                let backticks = self.md[span.source.clone()].find(named).unwrap_or(0);
                let location = self.line_col(span.source.start + backticks);
                let sentence = recognise::sentence_around(&inline.text, span.text.clone(), 320);
                let context = Text::found(
                    self.md,
                    self.near(inline.source.clone(), span.source.start, sentence.len()),
                    &sentence,
                );
                let target = self.record_id(named);
                let section = self.section;
                self.parts.mentions.push(Mention { target, location, context, section, owner, in_code: true });
                continue;
            }
            if cited_in_text.iter().any(|c| c.start <= span.text.start && span.text.end <= c.end) {
                continue;
            }
            let Some(c) = self.conventions.citations.in_code(code, &inline.text[..span.text.start]) else { continue };
            // The span's source starts at its backtick: the code is after it.
            let backticks = self.md[span.source.clone()].find(code).unwrap_or(0);
            let location = self.line_col(span.source.start + backticks);
            let source = c.source.as_deref().map(|s| self.shared(s));
            self.parts.citations.push(Citation {
                names_source: c.source_range.is_some() || c.source.is_some(),
                source,
                path: c.path.map(String::into_boxed_str),
                section: c.section.map(String::into_boxed_str),
                lines: c.lines.into_boxed_slice(),
                location,
                owner,
            });
        }
        if !inline.code_spans.is_empty() || !inline.links.is_empty() {
            self.parts.citations[cited_from..].sort_by_key(|c| (c.location.line, c.location.col));
            self.parts.mentions[mentioned_from..].sort_by_key(|m| (m.location.line, m.location.col));
        }
    }

    /// The references of an inline container's text runs, and the ID-shaped words of
    /// undeclared kinds among them, which are noted.
    fn scan_ids(&mut self, inline: &Inline, owner: Option<Owner>, skip: Option<Range<usize>>) {
        for group in text_groups(&inline.runs) {
            let text = &inline.text[group.clone()];
            let group_source = inline.runs.iter().find(|r| r.text.start == group.start).map_or(0, |r| r.source.start);
            let (ids, undeclared) = self.conventions.find_ids_and_undeclared(text);
            for m in ids {
                let in_container = group.start + m.range.start..group.start + m.range.end;
                if skip.as_ref().is_some_and(|s| s.start == in_container.start) {
                    continue;
                }
                let offset = self.source_offset(inline, in_container.clone()).unwrap_or(group_source);
                let location = self.line_col(offset);
                let sentence = recognise::sentence_around(&inline.text, in_container, 320);
                let context = Text::found(self.md, self.near(inline.source.clone(), offset, sentence.len()), &sentence);
                let target = self.record_id(&text[m.range]);
                self.parts.mentions.push(Mention {
                    target,
                    location,
                    context,
                    section: self.section,
                    owner,
                    in_code: false,
                });
            }
            for m in undeclared {
                let in_container = group.start + m.range.start..group.start + m.range.end;
                let offset = self.source_offset(inline, in_container).unwrap_or(group_source);
                let word = &text[m.range.clone()];
                if m.too_long {
                    let shown: String = word.chars().take(40).collect();
                    self.note(
                        offset,
                        word.chars().count(),
                        format!("`{shown}…` is written like a record ID of kind `{}`, but is {} bytes long, over the {} an ID may have", m.kind, word.len(), recognise::MAX_ID_LEN),
                        "shorten the ID: it names the record's page, a file name",
                    );
                    continue;
                }
                self.note(
                    offset,
                    word.chars().count(),
                    format!("`{word}` is written like a record ID, but its kind `{}` is not declared", m.kind),
                    "declare the kind under `ids.kinds` in casebook.yaml to make it a record, or list it under `ids.not_ids` if it is no ID",
                );
            }
        }
    }

    /// The citations of an inline container's text, read across its code spans; returns
    /// where each is in `inline.text`.
    fn scan_citations(&mut self, inline: &Inline, owner: Option<Owner>) -> Vec<Range<usize>> {
        let mut pieces: Vec<TextRun> = inline.runs.iter().chain(&inline.code_spans).cloned().collect();
        pieces.sort_by_key(|r| r.text.start);
        let mut cited = Vec::new();
        for group in text_groups(&pieces) {
            let text = &inline.text[group.clone()];
            let group_source = pieces.iter().find(|r| r.text.start == group.start).map_or(0, |r| r.source.start);
            let (citations, unread) = self.conventions.citations.find_with_unread(text);
            for (source, follower) in unread {
                let offset = self
                    .source_offset(inline, group.start + follower.start..group.start + follower.end)
                    .unwrap_or(group_source);
                let (source, follower) = (&text[source], &text[follower]);
                self.note(
                    offset,
                    follower.chars().count(),
                    format!("`{follower}` follows {source} but is not read as one of its paths"),
                    "a cited path has an extension (`src/jobs.rs`), or is a folder written with `/` at its end (`src/sandbox/`)",
                );
            }
            let owner = self.footnote_owner.unwrap_or(owner);
            for c in citations {
                let in_container = group.start + c.range.start..group.start + c.range.end;
                let offset = self.source_offset(inline, in_container.clone()).unwrap_or(group_source);
                let location = self.line_col(offset);
                let source = c.source.as_deref().map(|s| self.shared(s));
                self.parts.citations.push(Citation {
                    names_source: c.source_range.is_some(),
                    source,
                    path: c.path.map(String::into_boxed_str),
                    section: c.section.map(String::into_boxed_str),
                    lines: c.lines.into_boxed_slice(),
                    location,
                    owner,
                });
                cited.push(in_container);
            }
        }
        cited
    }
}

/// What a caption attributes to its code block, read from its Markdown as written when
/// that holds no escapes (`llm/__init__.py` unescaped renders `__init__` as bold, and its
/// text as `llm/init.py`), else from its text.
/// A key cell and a value cell read as one `Key: value` line, each run where it is.
fn key_value_line(key: &Inline, value: &Inline) -> Inline {
    let mut line = key.clone();
    line.text = key.text.trim_end().to_string();
    line.runs.retain(|r| r.text.end <= line.text.len());
    line.code_spans.retain(|r| r.text.end <= line.text.len());
    line.links.retain(|l| l.text.end <= line.text.len());
    line.text.push_str(": ");
    let shift = line.text.len();
    line.text.push_str(&value.text);
    let moved = |r: &TextRun| TextRun { text: r.text.start + shift..r.text.end + shift, source: r.source.clone() };
    line.runs.extend(value.runs.iter().map(moved));
    line.code_spans.extend(value.code_spans.iter().map(moved));
    line.links
        .extend(value.links.iter().map(|l| Permalink { text: l.text.start + shift..l.text.end + shift, ..l.clone() }));
    line.footnotes.extend(value.footnotes.iter().cloned());
    line.breaks.clear();
    line.term_len = None;
    line.source = match (&key.source, &value.source) {
        (Some(k), Some(v)) => Some(k.start..v.end),
        (k, v) => k.clone().or(v.clone()),
    };
    line
}

/// A MyST directive's options say what its code quotes (`:caption: Listing 1 — a.py,
/// lines 3–9`, `:lineno-start: 3`), and are not the code.
fn directive_attribution(code: &mut PendingCode) {
    let (options, at) = recognise::directive_options(&code.code);
    let option = |name: &str| options.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    let caption = option("caption").and_then(|caption| caption_of(caption, caption));
    let start_line = option("lineno-start").and_then(|n| n.parse().ok());
    if caption.is_some() {
        code.captioned = true;
        code.attributed = caption;
    }
    code.start_line = code.start_line.or(start_line);
    code.code.drain(..at);
}

fn caption_of(markdown: &str, text: &str) -> Option<recognise::QuotePath> {
    let written = (!markdown.contains('\\')).then(|| recognise::caption_path(markdown, recognise::default_source));
    written.flatten().or_else(|| recognise::caption_path(text, recognise::default_source))
}

/// A paragraph's text cut at its soft line breaks, each line an inline container of its
/// own, its source from the start of its line.
fn field_lines(inline: Inline) -> Vec<Inline> {
    let whole = inline.source.clone().unwrap_or(0..0);
    let mut cuts: Vec<(Range<usize>, usize)> = Vec::new();
    let (mut from, mut source_from) = (0, whole.start);
    for &(at, next_line) in &inline.breaks {
        cuts.push((from..at, source_from));
        (from, source_from) = (at + 1, next_line);
    }
    cuts.push((from..inline.text.len(), source_from));
    let mut lines = Vec::new();
    for (i, (range, source_start)) in cuts.iter().enumerate() {
        let source_end = cuts.get(i + 1).map_or(whole.end, |next| next.1);
        let within = |r: &TextRun| range.start <= r.text.start && r.text.end <= range.end;
        let shift = |r: &TextRun| TextRun { text: r.text.start - range.start..r.text.end - range.start, ..r.clone() };
        lines.push(Inline {
            text: inline.text[range.clone()].to_string(),
            runs: inline.runs.iter().filter(|r| within(r)).map(shift).collect(),
            source: Some(*source_start..source_end),
            code_spans: inline.code_spans.iter().filter(|r| within(r)).map(shift).collect(),
            links: inline
                .links
                .iter()
                .filter(|l| range.start <= l.text.start && l.text.end <= range.end)
                .map(|l| Permalink { text: l.text.start - range.start..l.text.end - range.start, ..l.clone() })
                .collect(),
            footnotes: if i == 0 { inline.footnotes.clone() } else { Vec::new() },
            breaks: Vec::new(),
            term_len: None,
        });
    }
    lines
}

/// The byte ranges of an inline container's text made of `runs` (in order) that follow
/// each other without a gap (a link or an image between two makes one).
fn text_groups(runs: &[TextRun]) -> Vec<Range<usize>> {
    let mut groups: Vec<Range<usize>> = Vec::new();
    for run in runs {
        match groups.last_mut() {
            Some(last) if last.end == run.text.start => last.end = run.text.end,
            _ => groups.push(run.text.clone()),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SiteConfig;
    use crate::model::Subject;

    /// `md` parsed as report `r.md` with the default conventions.
    pub(super) fn parse(md: &str) -> (Report, Vec<Diagnostic>) {
        let conventions = Conventions::new(&SiteConfig::default()).unwrap();
        let (report, diagnostics) =
            parse_report(Path::new("r.md"), "r.md", &Slug::parse("r").unwrap(), md, &conventions);
        (report.expect("report parses"), diagnostics)
    }

    #[test]
    fn a_front_matter_error_is_on_a_line_of_the_file() {
        // Found by `fuzz/fuzz_targets/report.rs`: libyaml counts a lone `\r` as a line
        // break, and its line 60 was reported on a file of five lines.
        let md = format!(
            "---\ntitle: Fractal syn{}thesioducer: syports/fractal-0a226e7-synthesi:.txt\n---\n\n",
            "\r".repeat(101)
        );
        let conventions = Conventions::new(&SiteConfig::default()).unwrap();
        let (_, diagnostics) = parse_report(Path::new("r.md"), "r.md", &Slug::parse("r").unwrap(), &md, &conventions);
        assert!(!diagnostics.is_empty());
        for d in &diagnostics {
            assert!(d.location.line <= md.split('\n').count() as u32, "{d}");
        }
    }

    #[test]
    fn front_matter_and_body_line() {
        let (report, _) = parse("---\ntitle: Memory\ntype: memory\n---\n\n# MEM-OBJ-raw\n");
        assert_eq!(report.title, "Memory");
        assert_eq!(report.report_type.as_deref(), Some("memory"));
        assert_eq!(report.declarations[0].location.line, 6);
    }

    #[test]
    fn unclosed_front_matter_is_an_error() {
        let conventions = Conventions::new(&SiteConfig::default()).unwrap();
        let (report, diagnostics) = parse_report(
            Path::new("r.md"),
            "r.md",
            &Slug::parse("r").unwrap(),
            "---\ntitle: x\n# body\n",
            &conventions,
        );
        assert!(report.is_none());
        assert_eq!(diagnostics[0].code, Code::UnclosedFrontMatter);
    }

    #[test]
    fn id_heading_declares_a_record_with_fields_statuses_and_body() {
        let md = "## Shared\n\n### MEM-OBJ-raw: Raw batches\n\nLabel: Raw conversation batches\n\nSource-native identity: raw/x.md, see MEM-OBJ-registre.\n\n- operation conclusion status: uninspected\n- Status: implemented (listing) / absent (content index)\n\n## Next\n\nMEM-OBJ-raw again.\n";
        let (report, _) = parse(md);
        let d = &report.declarations[0];
        assert_eq!(d.id.as_str(), "MEM-OBJ-raw");
        assert_eq!(d.label.as_deref(), Some("Raw batches"));
        assert_eq!(d.form, DeclarationForm::Heading { level: 3 });
        let fields: Vec<_> = d.fields.iter().map(|f| &*f.name).collect();
        assert_eq!(fields, ["Label", "Source-native identity"]);
        let statuses: Vec<_> =
            report.findings.iter().map(|s| (&*s.dimension, &*s.status, s.qualifier.as_deref())).collect();
        assert_eq!(
            statuses,
            [
                ("operation conclusion", "uninspected", None),
                ("", "implemented", Some("listing")),
                ("", "absent", Some("content index"))
            ]
        );
        let body = &report.markdown[d.body.clone().unwrap()];
        assert!(body.contains("Source-native identity") && !body.contains("## Next"), "{body}");
        // The reference inside the body belongs to the record; the one after does not.
        let owners: Vec<_> = report.mentions.iter().map(|m| (m.target.as_str(), m.owner)).collect();
        assert_eq!(owners, [("MEM-OBJ-registre", Some(Owner::Declaration(0))), ("MEM-OBJ-raw", None)]);
        assert_eq!(report.mentions[1].location.line, 14);
    }

    #[test]
    fn id_first_rows_declare_records_with_parts_fields_and_status_column() {
        let md = "| ID (part) | Producer | Status |\n|---|---|---|\n| OBJ-03 SessionSummary | host, not OBJ-02 | implemented |\n| OBJ-06 TurnUsage (part: context_tokens) | host | implemented (listing) / absent (index) |\n| Not a record | OBJ-03 | - |\n";
        let (report, _) = parse(md);
        assert_eq!(report.declarations.len(), 2);
        let obj06 = &report.declarations[1];
        assert_eq!(obj06.form, DeclarationForm::TableRow { table: 0, part: Some("context_tokens".into()) });
        assert_eq!(obj06.label.as_deref(), Some("TurnUsage"));
        assert_eq!(&*obj06.fields[0].name, "Producer");
        let findings: Vec<_> =
            report.findings.iter().filter(|f| f.subject == Subject::Record(obj06.id.clone())).collect();
        assert_eq!(findings.len(), 2);
        assert_eq!(findings[1].part.as_deref(), Some("context_tokens"));
        assert_eq!(report.row_anchors.get(&(0, 1)).map(|a| &**a), Some("OBJ-06"));
        let mentions: Vec<_> = report.mentions.iter().map(|m| (m.target.as_str(), m.owner)).collect();
        assert_eq!(mentions, [("OBJ-02", Some(Owner::Declaration(0))), ("OBJ-03", None)]);
        assert_eq!(report.mentions[0].location.line, 3);
        assert_eq!(report.mentions[0].location.col, 37);
    }

    #[test]
    fn text_the_markdown_holds_as_it_is_is_kept_as_its_place_there() {
        let md = "| ID | Producer | Status |\n|---|---|---|\n| OBJ-03 Summary | `host` \\| worker | absent. Not written. |\n\n\
                  ## OBJ-04 Store\n\nPurpose: keeps OBJ-03 on disk\n\nKept by **OBJ-03** for a while.\n";
        let (report, _) = parse(md);
        let in_markdown = |text: &crate::model::Text| matches!(text, crate::model::Text::InMarkdown { .. });
        let producer = &report.declarations[0].fields[0];
        assert_eq!(report.text(&producer.value), "`host` \\| worker");
        assert!(in_markdown(&producer.value));
        let purpose = &report.declarations[1].fields[0];
        assert_eq!((&*purpose.name, report.text(&purpose.value)), ("Purpose", "keeps OBJ-03 on disk"));
        assert!(in_markdown(&purpose.value));
        assert_eq!(report.text(&report.findings[0].statement), "absent. Not written.");
        assert!(in_markdown(&report.findings[0].statement));
        // A citing sentence is plain text: as it is in the source, its place; with its
        // markup left out, a string of its own.
        let contexts: Vec<_> =
            report.mentions.iter().map(|m| (report.text(&m.context), in_markdown(&m.context))).collect();
        assert_eq!(contexts, [("Purpose: keeps OBJ-03 on disk", true), ("Kept by OBJ-03 for a while.", false)]);
    }

    #[test]
    fn a_nested_record_heading_ends_the_outer_body() {
        let (report, _) = parse("### MEM-OBJ-a\n\nOuter text.\n\n#### MEM-OBJ-b\n\nInner text.\n");
        let outer = &report.markdown[report.declarations[0].body.clone().unwrap()];
        let inner = &report.markdown[report.declarations[1].body.clone().unwrap()];
        assert!(outer.contains("Outer text.") && !outer.contains("Inner"), "{outer}");
        assert!(inner.contains("Inner text."), "{inner}");
    }

    #[test]
    fn annotation_heading_owns_its_body() {
        let md = "## Annotations\n\n### On RT-RTE-memory-delivery\n\nRead-back uses MEM-OBJ-raw (SRC-1 plugin/a.py).\n";
        let (report, _) = parse(md);
        assert_eq!(report.annotations[0].target.as_str(), "RT-RTE-memory-delivery");
        assert_eq!(&*report.annotations[0].anchor, "on-RT-RTE-memory-delivery");
        assert_eq!(report.mentions[0].owner, Some(Owner::Annotation(0)));
        assert_eq!(report.citations[0].path.as_deref(), Some("plugin/a.py"));
    }

    #[test]
    fn code_block_followed_by_path_line_is_a_quote() {
        let md = "### MEM-OBJ-raw\n\n```python\nlignes.append(x)  # MEM-OBJ-fake\n```\n--- plugin/exia_seed/ingestion.py\n\n```\nplain\n```\n\nNot a path.\n";
        let (report, _) = parse(md);
        assert_eq!(report.quotes.len(), 1);
        let q = &report.quotes[0];
        assert_eq!((q.language.as_deref(), q.path.as_str()), (Some("python"), "plugin/exia_seed/ingestion.py"));
        assert_eq!(q.owner, Some(Owner::Declaration(0)));
        assert!(report.mentions.is_empty(), "IDs in code are not references");
    }

    #[test]
    fn language_is_inferred_from_the_path() {
        let (report, _) = parse("```\nfn main() {}\n```\n--- src/main.rs:1-3\n");
        assert_eq!(report.quotes[0].language.as_deref(), Some("rust"));
        assert_eq!(report.quotes[0].lines[0].end, 3);
    }

    #[test]
    fn unclosed_fence_is_an_error() {
        let (_, diagnostics) = parse("Intro.\n\n```python\nx = 1\n\nMore text\n");
        let diagnostics: Vec<_> = diagnostics.into_iter().filter(|d| d.is_error()).collect();
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].location.line, 3);
        assert_eq!(diagnostics[0].code, Code::UnclosedFence);
    }

    #[test]
    fn an_obsidian_link_to_a_record_refers_to_it_where_its_id_is_written() {
        let (report, _) = parse("See [[OBJ-03]], [[OBJ-04|the store]] and [[notes]].\n");
        let targets: Vec<_> = report.mentions.iter().map(|m| (m.target.as_str(), m.location.col)).collect();
        assert_eq!(targets, [("OBJ-03", 7), ("OBJ-04", 19)]);
        let links: Vec<_> = report.links.iter().map(|l| l.file.as_deref()).collect();
        assert_eq!(links, [Some("notes.md")], "a note, named without its .md");
    }

    #[test]
    fn ids_in_links_and_code_are_not_references_but_a_code_span_of_one_id_is() {
        let (report, _) = parse("See [OBJ-03](https://x.org), `OBJ-06 = 1` and `OBJ-04`, but OBJ-05.\n");
        let targets: Vec<_> = report.mentions.iter().map(|m| (m.target.as_str(), m.location.col)).collect();
        assert_eq!(targets, [("OBJ-04", 48), ("OBJ-05", 61)]);
    }

    #[test]
    fn escaped_and_wrapped_paths_are_one_citation_of_their_record() {
        let md = "### OBJ-01 X\n\nRead SRC-1 plugin/exia_seed/\\_\\_init\\_\\_.py and SRC-1\nsrc/jobs.rs:3-4.\n\n\
                  Unescaped: [SRC-2, swarm/__init__.py, ll. 1–4] and (__main__.py:7), not __stressed__.\n";
        let (report, _) = parse(md);
        let paths: Vec<_> =
            report.citations.iter().map(|c| (c.path.as_deref().unwrap(), c.location.line, c.location.col)).collect();
        assert_eq!(
            paths,
            [
                ("plugin/exia_seed/__init__.py", 3, 6),
                ("src/jobs.rs", 3, 49),
                ("swarm/__init__.py", 6, 13),
                ("__main__.py", 6, 53)
            ],
            "underscores glued into a path are no emphasis"
        );
        assert!(report.citations.iter().all(|c| c.owner == Some(Owner::Declaration(0))));
    }

    #[test]
    fn a_source_followed_by_paths_is_a_citation_not_a_field() {
        let md = "### OBJ-01 X\n\nSRC-1: src/jobs.rs, src/sandbox/jail.rs\n\nDistinct from OBJ-02: a sentence.\n\nLabel: Jobs\n";
        let (report, _) = parse(md);
        let d = &report.declarations[0];
        assert_eq!(d.fields.iter().map(|f| &*f.name).collect::<Vec<_>>(), ["Label"]);
        assert_eq!(report.citations.len(), 2);
        assert_eq!(report.mentions.iter().map(|m| m.target.as_str()).collect::<Vec<_>>(), ["OBJ-02"]);
    }

    #[test]
    fn a_definition_list_states_findings_as_term_and_value() {
        let md = "### OBJ-01 Logs\n\nWritten by\n: wired (after each response)\n\nRead back\n: absent\n\n\
                  `...` elision\n: **wired**\n\nUndo of commits that add new files\n: absent\n";
        let (report, _) = parse(md);
        let findings: Vec<_> =
            report.findings.iter().map(|f| (&*f.dimension, &*f.status, f.qualifier.as_deref())).collect();
        assert_eq!(
            findings,
            [
                ("Written by", "wired", Some("after each response")),
                ("Read back", "absent", None),
                ("... elision", "wired", None),
                ("Undo of commits that add new files", "absent", None),
            ],
            "a term is the key, whatever its words"
        );
        assert!(report.findings.iter().all(|f| f.owner == Some(Owner::Declaration(0))));
    }

    #[test]
    fn a_list_item_s_key_in_lower_case_names_the_dimension_of_its_status() {
        let md = "### OBJ-01 Agent\n\n- *carries active agent across user turns*: **wired**\n- note: see OBJ-02\n\
                  - *max_turns counts messages*: **observed** (P7)\n\nnote: wired\n";
        let (report, _) = parse(md);
        let findings: Vec<_> = report.findings.iter().map(|f| (&*f.dimension, &*f.status)).collect();
        assert_eq!(
            findings,
            [("carries active agent across user turns", "wired"), ("max_turns counts messages", "observed")],
            "a paragraph keeps its capital"
        );
        assert!(report.declarations[0].fields.is_empty(), "an item's key is no field");
    }

    #[test]
    fn a_test_report_s_checks_and_result_state_findings() {
        let md = "### OBJ-01 Search\n\n| # | Check | Result | Evidence |\n|---|---|---|---|\n\
                  | 1 | scope filter required | wired (or ValueError) | a.py:3 |\n\n**Result:** wired. Scoped.\n";
        let (report, _) = parse(md);
        let findings: Vec<_> = report.findings.iter().map(|f| (f.subject.name(), &*f.dimension, &*f.status)).collect();
        assert_eq!(findings, [("OBJ-01", "scope filter required", "wired"), ("OBJ-01", "", "wired")]);
    }

    #[test]
    fn a_bold_run_in_led_by_an_id_declares_the_record_until_the_next_one() {
        let md = "## Loop\n\n**OBJ-01 · Graph assembly.** Built per run, see OBJ-02.\n\nMore on it.\n\n\
                  **OBJ-02 · Retries.** Counted.\n\n## Next\n\nAfter OBJ-01.\n\n**OBJ-03** is only stressed.\n";
        let (report, _) = parse(md);
        let declared: Vec<_> = report.declarations.iter().map(|d| (d.id.as_str(), d.label.as_deref())).collect();
        assert_eq!(declared, [("OBJ-01", Some("Graph assembly")), ("OBJ-02", Some("Retries"))]);
        let first = &report.markdown[report.declarations[0].body.clone().unwrap()];
        assert!(first.contains("More on it.") && !first.contains("Retries"), "{first}");
        let mentions: Vec<_> = report.mentions.iter().map(|m| (m.target.as_str(), m.owner)).collect();
        assert_eq!(mentions, [("OBJ-02", Some(Owner::Declaration(0))), ("OBJ-01", None), ("OBJ-03", None)]);
    }

    #[test]
    fn captions_before_and_after_a_block_and_its_info_string_make_quotes() {
        let md = "### OBJ-01 X\n\nFrom `src/a.py`, lines 3–4 (SRC-2):\n\n```python\nx = 1\ny = 2\n```\n\n\
                  ```python\nz = 3\n```\n\n*Listing 2. `src/b.py`, line 9.*\n\n\
                  ```rust path=src/c.rs lines=1-2\nfn c() {}\n```\n\n```\nplain\n```\n\nText.\n";
        let (report, diagnostics) = parse(md);
        let quotes: Vec<_> = report
            .quotes
            .iter()
            .map(|q| (q.path.as_str(), q.source.as_deref(), q.lines[0].start, q.lines[0].end, q.owner))
            .collect();
        let owner = Some(Owner::Declaration(0));
        assert_eq!(
            quotes,
            [
                ("src/a.py", Some("SRC-2"), 3, 4, owner),
                ("src/b.py", None, 9, 9, owner),
                ("src/c.rs", None, 1, 2, owner)
            ]
        );
        let unread: Vec<_> = diagnostics.iter().filter(|d| d.is_not_understood()).map(|d| d.location.line).collect();
        assert_eq!(unread, [20], "the block nothing attributes is listed");
    }

    #[test]
    fn a_place_right_under_a_block_captions_it_also_in_a_block_quote() {
        let md = "### OBJ-01 X\n\n```python\nx = 1\n```\n`src/a.py`, líneas 3-4 (SRC-2)\n\nText.\n\n\
                  ```python\ny = 2\n```\n> `src/b.py`, lines 7-8 (SRC-2)\n\nMore text.\n";
        let (report, diagnostics) = parse(md);
        let quotes: Vec<_> =
            report.quotes.iter().map(|q| (q.code.as_str(), q.path.as_str(), q.lines[0].start)).collect();
        assert_eq!(quotes, [("x = 1\n", "src/a.py", 3), ("y = 2\n", "src/b.py", 7)]);
        assert!(diagnostics.iter().all(|d| !d.is_not_understood()), "{diagnostics:?}");
    }

    #[test]
    fn a_record_s_fields_in_a_yaml_block_state_its_findings_citations_and_references() {
        let md =
            "### OBJ-01 — Approval\n\n```yaml\nid: OBJ-01\nstatus:\n  in a TTY: wired  # to the console prompt\n  \
                  without a TTY: absent\ncitations:\n  - SRC-2 a/agent.py:25-58\nrelated: [OBJ-02]\n```\n\n\
                  ### OBJ-02 — Policy\n\n```yaml\nstatus: implemented\n```\n\n```yaml\nkey: value\n```\n";
        let (report, diagnostics) = parse(md);
        let shown: Vec<_> = report
            .findings
            .iter()
            .map(|f| (f.dimension.to_string(), f.status.to_string(), f.qualifier.as_deref().map(str::to_string)))
            .collect();
        assert_eq!(
            shown,
            [
                ("in a TTY".to_string(), "wired".to_string(), Some("to the console prompt".to_string())),
                ("without a TTY".into(), "absent".into(), None),
                (String::new(), "implemented".into(), None),
            ]
        );
        let cited: Vec<_> = report.citations.iter().map(|c| (c.path.as_deref(), c.lines[0].start)).collect();
        assert_eq!(cited, [(Some("a/agent.py"), 25)]);
        let mentioned: Vec<_> = report.mentions.iter().map(|m| m.target.as_str()).collect();
        assert_eq!(mentioned, ["OBJ-02"], "the block's own `id:` is no reference");
        let unread: Vec<_> = diagnostics.iter().filter(|d| d.is_not_understood()).map(|d| d.location.line).collect();
        assert_eq!(unread, [19], "a YAML block of no record's fields is a code block like any");
    }

    #[test]
    fn a_gherkin_specification_is_read_for_the_records_it_names() {
        let md =
            "### OBJ-01 — Dispatcher\n\n```gherkin\nScenario: the list is walked\n  Given operations from OBJ-04\n  \
                  Then each is dispatched (SRC-1 a/op.py:3-9)\n```\n\n### OBJ-04 — Parser\n\nText.\n";
        let (report, diagnostics) = parse(md);
        let mentioned: Vec<_> = report.mentions.iter().map(|m| (m.target.as_str(), m.location.line)).collect();
        assert_eq!(mentioned, [("OBJ-04", 5)]);
        assert_eq!(report.citations.iter().filter_map(|c| c.path.as_deref()).collect::<Vec<_>>(), ["a/op.py"]);
        assert!(report.quotes.is_empty());
        assert!(diagnostics.iter().all(|d| !d.is_not_understood()), "{diagnostics:?}");
    }

    #[test]
    fn numbered_references_cite_for_the_record_that_marks_them() {
        let md = "### OBJ-01 Loop\n\nThe loop lives in the browser.<sup>[2]</sup>\n\n### OBJ-02 Tools\n\nSee [1] and x[2].\n\n\
                  ## References\n\n1. SRC-1, `a/tools.py`, lines 3-9.\n2. SRC-1, `a/loop.ts`, line 39.\n";
        let (report, _) = parse(md);
        let cited: Vec<_> =
            report.citations.iter().map(|c| (c.path.as_deref().unwrap_or(""), c.lines[0].start, c.owner)).collect();
        let record = |i: u32| Some(Owner::Declaration(i));
        assert_eq!(cited, [("a/tools.py", 3, record(1)), ("a/loop.ts", 39, record(0))]);
        // Under a record, a numbered list of notes that nothing marks is the record's.
        let md = "### OBJ-01 Loop\n\n#### Notes\n\n1. SRC-1, `a/loop.ts`, line 39.\n";
        let owners: Vec<_> = parse(md).0.citations.iter().map(|c| c.owner).collect();
        assert_eq!(owners, [record(0)]);
    }

    #[test]
    fn a_report_is_titled_by_its_front_matter_else_by_the_heading_that_opens_it() {
        let title = |md: &str| parse(md).0.title;
        assert_eq!(title("---\ntitle: Memory\n---\n\n# Other\n"), "Memory");
        assert_eq!(title("\n# AgentScope 技术评审报告\n\nText.\n"), "AgentScope 技术评审报告");
        let titled = parse("# Notes\n\n## One\n").0;
        assert_eq!(titled.title_section().map(|s| s.title.as_str()), Some("Notes"), "shown once, as the page's title");
        assert_eq!(title("Lens: memory.\n\n# Later\n"), "r", "a heading after text is no title: the file name");
        assert_eq!(title("# OBJ-01 Cache\n"), "r", "a heading that declares a record is the record's");
        assert_eq!(title("## Overview\n"), "r");
    }

    #[test]
    fn a_legend_of_the_author_s_words_for_the_statuses_is_read_first() {
        let legend = "| Dictamen | Término original |\n|---|---|\n| ausente | *absent* |\n| declarado | *claimed* |\n\
                      | implementado | *implemented* |\n| conectado | *wired* |\n\n";
        let md = format!("{legend}### OBJ-01 X\n\n- Dictamen global: **conectado** — por defecto.\n- Dictamen «persistido»: **ausente**.\n");
        let conventions = Conventions::new(&SiteConfig::default()).unwrap();
        let learned = crate::parse::learned_status_words(&[md.as_str()], &conventions);
        let conventions = conventions.with_status_words(&learned);
        let (report, _) = parse_report(Path::new("r.md"), "r.md", &Slug::parse("r").unwrap(), &md, &conventions);
        let shown: Vec<_> =
            report.unwrap().findings.iter().map(|f| (f.dimension.to_string(), f.status.to_string())).collect();
        assert_eq!(shown, [(String::new(), "wired".to_string()), ("persistido".into(), "absent".into())]);
    }

    #[test]
    fn a_caption_ending_with_a_colon_introduces_the_next_block_not_the_one_above() {
        let md = "### OBJ-01 X\n\nEvidence E2 — src/a.py, L3-4:\n```python\nx = 1\n```\n\n\
                  Evidence E3 — src/b.py, L9-10:\n```python\ny = 2\n```\n";
        let (report, diagnostics) = parse(md);
        let quotes: Vec<_> = report.quotes.iter().map(|q| (q.path.as_str(), q.lines[0].start)).collect();
        assert_eq!(quotes, [("src/a.py", 3), ("src/b.py", 9)]);
        assert!(diagnostics.iter().all(|d| !d.is_not_understood()), "{diagnostics:?}");
    }

    #[test]
    fn a_listing_captioned_above_takes_no_caption_from_below() {
        let md =
            "### OBJ-01 X\n\n**Listing 1.** `src/a.py`, lines 3–4 (SRC-1). The first.\n\n```python\nx = 1\n```\n\n\
                  **Listing 2.** `src/b.py`, lines 9–10 (SRC-1). The second.\n\n```python\ny = 2\n```\n";
        let (report, _) = parse(md);
        let quotes: Vec<_> = report.quotes.iter().map(|q| (q.path.as_str(), q.lines[0].start)).collect();
        assert_eq!(quotes, [("src/a.py", 3), ("src/b.py", 9)]);
    }

    #[test]
    fn the_last_sentence_of_a_paragraph_may_introduce_the_block() {
        let md = "### OBJ-01 X\n\nIt reads src/c.py:1-2. In `src/c.py`, lines 7–9, the hand-off is marked:\n\n\
                  ```python\nz = 3\n```\n";
        let (report, _) = parse(md);
        let quotes: Vec<_> = report.quotes.iter().map(|q| (q.path.as_str(), q.lines[0].start)).collect();
        assert_eq!(quotes, [("src/c.py", 7)]);
    }

    #[test]
    fn an_appendix_quote_headed_by_a_record_s_id_is_that_record_s() {
        let md = "| ID | Mechanism | Status |\n|---|---|---|\n| OBJ-01 | Cache | wired |\n\n## Appendix\n\n\
                  **OBJ-01** `src/a.py`, lines 3–4\n\n```python\nx = 1\n```\n\n\
                  The loop stops there (src/b.py:9-10).\n\n```\nunrelated output\n```\n";
        let (report, diagnostics) = parse(md);
        let quotes: Vec<_> = report.quotes.iter().map(|q| (q.path.as_str(), q.owner)).collect();
        assert_eq!(quotes, [("src/a.py", Some(Owner::Declaration(0)))], "a prose sentence captions nothing");
        assert_eq!(diagnostics.iter().filter(|d| d.is_not_understood()).count(), 1, "{diagnostics:?}");
    }

    #[test]
    fn an_id_after_numbering_declares_unless_a_row_above_declares_it() {
        let md = "| ID | What |\n|---|---|\n| OBJ-01 | cache |\n\n### 3.2 OBJ-01 and what it means\n\n### 4.1 OBJ-02: Store\n";
        let (report, _) = parse(md);
        let declared: Vec<_> = report.declarations.iter().map(|d| (d.id.as_str(), d.label.as_deref())).collect();
        assert_eq!(declared, [("OBJ-01", None), ("OBJ-02", Some("Store"))]);
    }

    #[test]
    fn a_footnote_cites_for_the_record_whose_run_in_refers_to_it() {
        let md = "Intro.\n\n**OBJ-01 · Graph.** Built by `build`[^1] and shown[^2].\n\n\
                  [^1]: SRC-2, `pkg/graph.py` L25–L29 — <https://github.com/o/r/blob/abc/pkg/graph.py#L25-L29>\n\
                  [^2]: [SRC-3 § Graphs](https://github.com/o/r/blob/abc/docs/graph.md#graphs)\n";
        let (report, _) = parse(md);
        let cited: Vec<_> = report
            .citations
            .iter()
            .map(|c| {
                let owner = match c.owner {
                    Some(Owner::Declaration(i)) => Some(report.declarations[i as usize].id.as_str().to_string()),
                    _ => None,
                };
                let lines: Vec<_> = c.lines.iter().map(|r| (r.start, r.end)).collect();
                let section = c.section.as_deref().map(str::to_string);
                (owner, c.source.as_deref().map(str::to_string), c.path.as_deref().map(str::to_string), section, lines)
            })
            .collect();
        let g01 = Some("OBJ-01".to_string());
        assert_eq!(
            cited,
            [
                (g01.clone(), Some("SRC-2".into()), Some("pkg/graph.py".into()), None, vec![(25, 29)]),
                (g01, Some("SRC-3".into()), Some("docs/graph.md".into()), Some("Graphs".into()), vec![]),
            ],
            "the code span and its lines are one citation, the permalink repeating it none more"
        );
    }

    #[test]
    fn a_matrix_row_declares_its_record_and_an_annex_heading_holds_its_evidence() {
        let md = "| ID | Control | Status |\n|---|---|---|\n\
                  | OBJ-01 | Parser selection | wired (by default); strict mode: absent (no caller) |\n\n\
                  ### Annex OBJ-01 — Parser selection\n\nRead at src/a.py:3-4.\n\n\
                  ### 3.2 OBJ-01 and what it means\n\nAnother src/b.py:5.\n";
        let (report, _) = parse(md);
        assert_eq!(report.declarations.len(), 1);
        assert_eq!(report.declarations[0].label.as_deref(), Some("Parser selection"), "the Control column names it");
        let findings: Vec<_> = report.findings.iter().map(|f| (&*f.dimension, &*f.status)).collect();
        assert_eq!(findings, [("", "wired"), ("strict mode", "absent")]);
        let owners: Vec<_> = report.citations.iter().map(|c| c.owner).collect();
        assert_eq!(owners, [Some(Owner::Annotation(0)), None], "an annex is the record's; a discussion is not");
        assert_eq!(report.annotations[0].target.as_str(), "OBJ-01");
    }

    #[test]
    fn a_section_a_record_names_by_its_label_holds_that_record_s_evidence() {
        let md = "## Part A\n\n### Step 1: The signature\n\nBuilt at `a.py:3-4` [OBJ-01].\n\n\
                  ```python\nx = 1\n```\n\n### Step 2: The loop\n\nAt a.py:9, see [OBJ-02].\n\n\
                  ### Step 3: Shared\n\nAt a.py:12.\n\n## Records\n\n\
                  ### OBJ-01 · signature\n\nKind: object. Step 1. Also Step 3.\n\n\
                  ### OBJ-02 · loop\n\nKind: loop. Step 2; see Step 1 and Step 3.\n";
        let (report, _) = parse(md);
        let targets: Vec<_> = report.annotations.iter().map(|a| a.target.as_str()).collect();
        assert_eq!(targets, ["OBJ-01", "OBJ-02"], "Step 3 is named by two records, the home of neither");
        let owners: Vec<_> = report.citations.iter().map(|c| c.owner).collect();
        assert_eq!(owners, [Some(Owner::Annotation(0)), Some(Owner::Annotation(1)), None]);
        assert_eq!(report.annotations[0].anchor, report.sections[1].anchor, "the step keeps its anchor");
        let part_a = report.sections.iter().position(|s| s.title == "Part A").unwrap();
        assert!(report.annotations.iter().all(|a| a.section != Some(part_a as u32)));
    }

    #[test]
    fn a_bold_id_alone_opens_the_text_of_a_record_a_row_declares() {
        let md = "| ID | Name | Status |\n|---|---|---|\n| OBJ-01 | Factory | wired |\n| OBJ-02 | Tool | absent |\n\n\
                  ## Notes\n\n**OBJ-01.** Built by OBJ-02 at a.py:3.\n\n**OBJ-03.** Not a row: a reference.\n";
        let (report, _) = parse(md);
        let declared: Vec<_> = report.declarations.iter().map(|d| (d.id.as_str(), d.label.as_deref())).collect();
        assert_eq!(declared, [("OBJ-01", Some("Factory")), ("OBJ-02", Some("Tool")), ("OBJ-01", None)]);
        assert_eq!(report.citations[0].owner, Some(Owner::Declaration(2)));
        let from_note: Vec<_> = report.mentions.iter().map(|m| (m.target.as_str(), m.owner)).collect();
        // OBJ-03 is no row's: its bold ID declares nothing, and the note on OBJ-01 runs on.
        assert_eq!(from_note, [("OBJ-02", Some(Owner::Declaration(2))), ("OBJ-03", Some(Owner::Declaration(2)))]);
    }

    #[test]
    fn a_record_named_by_a_question_is_labelled_by_its_name_and_keeps_the_question() {
        let (report, _) = parse("### OBJ-04 · Retrieval — which backends run, and how many hits?\n\nText.\n");
        let record = &report.declarations[0];
        assert_eq!(record.label.as_deref(), Some("Retrieval"));
        assert_eq!(&*record.fields[0].name, "Question");
        assert!(matches!(&record.fields[0].value, Text::Own(q) if &**q == "which backends run, and how many hits?"));
        let (report, _) = parse("### OBJ-05 · Why does it stop?\n\nText.\n");
        assert_eq!(report.declarations[0].label.as_deref(), Some("Why does it stop?"), "a question alone is the label");
    }

    #[test]
    fn items_led_by_handles_under_a_heading_that_does_not_say_limits_are_noted_once() {
        let md = "## Residual matters\n\n- **L1.** Nothing was run.\n- **L2.** Tests unread.\n\n\
                  ## Assets\n\n- OBJ-01 is the store.\n\n## Residual risk\n\n- **L3.** Proxies unread.\n";
        let (report, diagnostics) = parse(md);
        let notes: Vec<_> = diagnostics.iter().filter(|d| d.is_not_understood()).map(|d| d.location.line).collect();
        assert_eq!(notes, [3], "{diagnostics:?}");
        let handles: Vec<_> = report.limits.iter().map(|l| l.handle.as_str()).collect();
        assert_eq!(handles, ["L3"], "a heading of residual risk says limits");
    }

    #[test]
    fn a_field_value_table_in_a_record_s_text_is_its_key_value_lines() {
        let md = "### OBJ-01 · Event loop\n\n| Field | Value |\n|---|---|\n| **Kind** | component |\n\
                  | **Status** | wired (root controller) |\n| **Status (drives steps)** | wired |\n| **Related** | OBJ-02 |\n";
        let (report, _) = parse(md);
        let fields: Vec<_> = report.declarations[0].fields.iter().map(|f| &*f.name).collect();
        assert_eq!(fields, ["Kind", "Related"]);
        let findings: Vec<_> = report.findings.iter().map(|f| (&*f.dimension, &*f.status)).collect();
        assert_eq!(findings, [("", "wired"), ("drives steps", "wired")]);
        assert_eq!(report.mentions[0].owner, Some(Owner::Declaration(0)));
    }

    #[test]
    fn a_numbered_finding_with_its_id_in_brackets_over_a_nested_list_declares_its_record() {
        let md = "## Findings\n\n1. **The checkpoint is rebuilt each superstep** [OBJ-01]\n   - Subject: Checkpoint snapshot\n\
                  \x20  - Status: contents written — **wired**\n2. **Writes are cleared after a tick** [OBJ-02]\n   - Status: **wired**\n";
        let (report, _) = parse(md);
        let declared: Vec<_> = report.declarations.iter().map(|d| (d.id.as_str(), d.label.as_deref())).collect();
        assert_eq!(
            declared,
            [("OBJ-01", Some("Checkpoint snapshot")), ("OBJ-02", Some("Writes are cleared after a tick"))],
            "a Subject item names the record"
        );
        assert_eq!(&*report.declarations[0].fields[0].name, "Summary");
        let findings: Vec<_> = report.findings.iter().map(|f| (&*f.dimension, &*f.status)).collect();
        assert_eq!(findings, [("contents written", "wired"), ("", "wired")]);
    }

    #[test]
    fn an_id_longer_than_an_id_may_be_is_noted_not_dropped() {
        let long = format!("MEM-OBJ-{}", "a".repeat(130));
        let (report, diagnostics) = parse(&format!("### {long} Too long\n\nText.\n"));
        assert!(report.declarations.is_empty());
        let notes: Vec<_> = diagnostics.iter().filter(|d| d.is_not_understood()).map(|d| d.message.clone()).collect();
        assert_eq!(notes.len(), 1, "{diagnostics:?}");
        assert!(notes[0].contains("138 bytes long, over the 128"), "{}", notes[0]);
    }

    #[test]
    fn a_top_level_item_over_a_nested_list_declares_its_record() {
        let md = "# Memory: context limits and tools\n\n## Memory wiring\n\n\
                  - Default memory (OBJ-01)\n  - status: wired\n  - where: src/a.py:3-4\n\
                  - OBJ-02: Window\n  - status:\n    - something that raises into it from the memory layer: absent\n\n\
                  - See OBJ-01 for more\n  - a nested note\n- Plain item (OBJ-01)\n";
        let (report, _) = parse(md);
        let declared: Vec<_> =
            report.declarations.iter().map(|d| (d.id.as_str(), d.label.as_deref().unwrap_or(""))).collect();
        assert_eq!(declared, [("OBJ-01", "Default memory"), ("OBJ-02", "Window")], "a mention is no declaration");
        assert_eq!(report.citations[0].owner, Some(Owner::Declaration(0)));
        let findings: Vec<_> = report.findings.iter().map(|f| (&*f.dimension, &*f.status, f.owner)).collect();
        assert_eq!(
            findings,
            [
                ("", "wired", Some(Owner::Declaration(0))),
                ("something that raises into it from the memory layer", "absent", Some(Owner::Declaration(1)))
            ],
            "a long key, when a status follows it"
        );
        let body = report.declarations[0].body.clone().unwrap();
        assert!(report.markdown[body].starts_with("  - status: wired"), "its body is the nested list");
        assert!(report.limits.is_empty(), "a title about limits makes no limits section");
    }

    #[test]
    fn duplicate_anchors_are_made_unique() {
        let (report, _) = parse(
            "## Notes\n\n## Notes\n\n| ID | x |\n|---|---|\n| OBJ-06 (part: a) | 1 |\n| OBJ-06 (part: b) | 2 |\n",
        );
        let anchors: Vec<_> = report.sections.iter().map(|s| &*s.anchor).collect();
        assert_eq!(anchors, ["notes", "notes--2"]);
        assert_eq!(report.row_anchors.values().map(|a| &**a).collect::<Vec<_>>(), ["OBJ-06", "OBJ-06--2"]);
    }
}
