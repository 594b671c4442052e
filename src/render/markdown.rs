//! Markdown → HTML for reports and fragments of them, with the analysis conventions
//! turned into links: every record ID links to its page, every citation to the file at
//! the frozen revision, every quote is highlighted with its path linked.
//!
//! Content is untrusted: every event goes through the one policy of [`crate::markup`],
//! and all text is escaped by pulldown-cmark or by [`escape`].

use std::collections::HashMap;
use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Tag, TagEnd};

use crate::markup::{escape, link_open, options as markdown_options, Sanitiser};
use crate::model::{LineRange, Publication, RecordId, Report, Run};
use crate::recognise::{self, Conventions};
use crate::urls;

use super::highlight;

/// What links are resolved against: the run being rendered.
pub struct Linker<'a> {
    /// The system's slug.
    pub system: &'a crate::model::Slug,
    /// The run.
    pub run: &'a Run,
    /// The site's conventions (ID grammars, citation forms).
    pub conventions: &'a Conventions,
    /// Where records are shown: links to them lead there.
    pub record_pages: crate::model::RecordPages,
    /// Highlighted code already made for the run's other pages, if shared.
    pub(super) highlights: Option<&'a highlight::RunMemo>,
    /// What verification found of the run's quotes, when it ran: each quote's caption
    /// says it.
    pub(super) verdicts: Option<&'a crate::model::RunVerification>,
    /// The run's quotes by their code, made once for the run's pages, if shared.
    pub(super) quotes_by_code: Option<&'a QuotesByCode<'a>>,
    /// Where the run's links to reports and headings lead, if shared.
    pub(super) local_links: Option<&'a LocalLinks<'a>>,
}

/// Where each link of a run's reports to a report or heading leads, by the link as
/// written; a link that leads nowhere is not here (it is shown as written, and `links`
/// warns of it).
pub(super) type LocalLinks<'a> = HashMap<&'a str, String>;

/// [`LocalLinks`] of `run`, in one pass over its links.
pub(super) fn local_links<'a>(run: &'a Run, site_links: &crate::links::SiteLinks<'_>) -> LocalLinks<'a> {
    let mut leads = LocalLinks::new();
    for report in &run.reports {
        for link in &report.links {
            if let Ok(url) = site_links.url(report, link) {
                leads.entry(link.written.as_str()).or_insert(url);
            }
        }
    }
    leads
}

/// A run's quotes by their code: the first of the run's reports to quote a code is the
/// one a code block of that code is shown as.
pub(super) type QuotesByCode<'a> = HashMap<&'a str, &'a crate::model::Quote>;

/// [`QuotesByCode`] of `run`, in one pass over its quotes.
pub(super) fn quotes_by_code(run: &Run) -> QuotesByCode<'_> {
    let mut by_code = QuotesByCode::new();
    for quote in run.reports.iter().flat_map(|r| &r.quotes) {
        by_code.entry(quote.code.as_str()).or_insert(quote);
    }
    by_code
}

/// A link to a record's page.
struct RecordLink {
    url: String,
    /// The tooltip: the record's title, or why it is not published.
    title: String,
    published: bool,
}

impl Linker<'_> {
    /// The page of a record of this run, with a tooltip saying what it is.
    fn record_link(&self, id: &RecordId) -> Option<RecordLink> {
        let record = self.run.records.get(id)?;
        let url = urls::record_shown(self.record_pages, self.system, &self.run.slug, id);
        Some(match &record.publication {
            Publication::Published => {
                RecordLink { url, title: record.title_label().unwrap_or_default().to_string(), published: true }
            }
            Publication::Unpublished(set) => {
                let name = self.run.unpublished.get(*set).map(|s| s.name.as_str()).unwrap_or("unpublished");
                RecordLink { url, title: format!("not published here ({name})"), published: false }
            }
        })
    }

    /// The URL of a cited or quoted file at the source's frozen revision.
    pub fn file_url(&self, source: Option<&str>, path: &str, lines: &[LineRange]) -> Option<String> {
        let source = self.run.source(source.or(self.run.default_source.as_deref())?)?;
        let repository = source.repository.as_ref()?;
        let revision = source.revision.as_ref().unwrap_or(&self.run.revision);
        let full = source.repository_path(path);
        urls::repository_file(repository.as_str(), revision.as_str(), &full, lines.first().map(|l| (l.start, l.end)))
    }

    /// Where a citation leads: the file (or the source's own document, `SRC-3, ll. 3–9`)
    /// at its lines, or at the heading of the section it names (`SRC-3 § Usage`); else
    /// nowhere (the caller links the source).
    pub fn cited_url(
        &self,
        source: Option<&str>,
        path: Option<&str>,
        section: Option<&str>,
        lines: &[LineRange],
    ) -> Option<String> {
        let own_document = || {
            // A source named alone leads to its entry in the register, which says what it is.
            (section.is_some() || !lines.is_empty()).then_some(())?;
            let source = self.run.source(source.or(self.run.default_source.as_deref())?)?;
            source.is_document().then_some("")
        };
        let url = self.file_url(source, path.or_else(own_document)?, lines)?;
        match section.filter(|_| lines.is_empty()) {
            Some(section) => Some(format!("{url}#{}", urls::heading_anchor(section))),
            None => Some(url),
        }
    }

    /// The anchor of a source on the run page.
    pub fn source_url(&self, source: &str) -> String {
        format!("{}#{}", urls::run(self.system, &self.run.slug), source_anchor(source))
    }
}

/// The anchor of `SRC-n` in a run page's source register.
pub fn source_anchor(source: &str) -> String {
    recognise::slugify(source)
}

/// What is being rendered, which decides anchors and where `Key: value` paragraphs are
/// shown as fields.
#[derive(Clone, Copy)]
enum Scope<'a> {
    /// A whole report: headings and rows get their anchors; fields inside record bodies.
    Report(&'a Report),
    /// The body of a heading record: every `Key: value` paragraph is a field.
    RecordBody,
    /// Anything else.
    Plain,
}

/// Renders a whole report: headings take the anchors `parse` gave them and ID-first
/// rows get their record anchors.
pub fn render_report(report: &Report, linker: &Linker<'_>) -> String {
    render(&report.markdown, linker, Scope::Report(report))
}

/// Renders the body of a heading record, its fields marked.
pub fn render_record_body(markdown: &str, linker: &Linker<'_>) -> String {
    render(markdown, linker, Scope::RecordBody)
}

/// Renders a fragment (an annotation, a note, a field value) without anchors.
pub fn render_fragment(markdown: &str, linker: &Linker<'_>) -> String {
    render(markdown, linker, Scope::Plain)
}

/// Renders a one-paragraph fragment without its `<p>` wrapper, for table cells.
pub fn render_inline(markdown: &str, linker: &Linker<'_>) -> String {
    let html = render_fragment(markdown, linker);
    let trimmed = html.trim();
    match trimmed.strip_prefix("<p>").and_then(|s| s.strip_suffix("</p>")) {
        Some(inner) if !inner.contains("<p>") => inner.to_string(),
        _ => html,
    }
}

fn render(markdown: &str, linker: &Linker<'_>, scope: Scope<'_>) -> String {
    let mut events: Vec<(Event<'_>, Range<usize>)> =
        pulldown_cmark::Parser::new_ext(markdown, markdown_options()).into_offset_iter().collect();
    // `swarm/__init__.py` is shown as written, and linked, as `parse` reads it.
    for (event, range) in &mut events {
        if matches!(event, Event::Start(Tag::Emphasis | Tag::Strong) | Event::End(TagEnd::Emphasis | TagEnd::Strong)) {
            if let Some(n) = crate::recognise::path_underscores(markdown, range.clone()) {
                *event = Event::Text(CowStr::Borrowed(&"__"[..n]));
            }
        }
    }
    let mut pass = Rewrite::new(linker, scope, events.len());
    let mut i = 0;
    // The heading that is the report's title is the page's own title: shown once.
    if let Scope::Report(report) = scope {
        if report.title_section().is_some() && matches!(events.first(), Some((Event::Start(Tag::Heading { .. }), _))) {
            i = events.iter().position(|(e, _)| matches!(e, Event::End(TagEnd::Heading(_)))).map_or(0, |end| end + 1);
            pass.state.headings = usize::from(i > 0);
        }
    }
    while i < events.len() {
        i = pass.step(&mut events, i);
    }
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, pass.out.into_iter());
    html
}

type Events<'m> = [(Event<'m>, Range<usize>)];

/// One pass over a document's events, writing what is shown: anchors, fields, links,
/// highlighted code, the sanitiser's filtering.
struct Rewrite<'l, 'm> {
    linker: &'l Linker<'l>,
    scope: Scope<'l>,
    /// The report's record bodies, in order (they never overlap), so one binary search
    /// finds the body holding an offset.
    bodies: Vec<&'l Range<usize>>,
    state: State,
    out: Vec<Event<'m>>,
}

impl<'l, 'm> Rewrite<'l, 'm> {
    fn new(linker: &'l Linker<'l>, scope: Scope<'l>, events: usize) -> Self {
        let bodies = match scope {
            Scope::Report(r) => r.declarations.iter().filter_map(|d| d.body.as_ref()).collect(),
            _ => Vec::new(),
        };
        Rewrite { linker, scope, bodies, state: State::default(), out: Vec::with_capacity(events) }
    }

    fn report(&self) -> Option<&'l Report> {
        match self.scope {
            Scope::Report(report) => Some(report),
            _ => None,
        }
    }

    fn in_record_body(&self, offset: usize) -> bool {
        match self.scope {
            Scope::Report(_) => {
                let i = self.bodies.partition_point(|b| b.start <= offset);
                i > 0 && self.bodies[i - 1].contains(&offset)
            }
            Scope::RecordBody => true,
            Scope::Plain => false,
        }
    }

    /// A paragraph or list item that holds a finding has the anchor `parse` gave it.
    fn block_anchor(&self, offset: usize) -> Option<Event<'m>> {
        self.report().and_then(|r| r.block_anchors.get(&offset)).map(|anchor| {
            Event::Html(format!("<span class=\"finding-anchor\" id=\"{}\"></span>", escape(anchor)).into())
        })
    }

    /// Writes what the event at `i` shows; returns the index of the next event to read.
    fn step(&mut self, events: &mut Events<'m>, i: usize) -> usize {
        if matches!(events[i].0, Event::Start(Tag::Paragraph)) && self.field_paragraph(events, i) {
            return i + 1;
        }
        let (event, range) = &events[i];
        match event {
            Event::Start(Tag::Paragraph) => {
                self.state.text_before.clear();
                self.out.push(Event::Start(Tag::Paragraph));
                self.out.extend(self.block_anchor(range.start));
            }
            Event::Code(code) if !self.state.sanitiser.in_link_or_image() => self.code_span(code.clone()),
            Event::Start(Tag::Item) => {
                self.state.text_before.clear();
                self.state.list_items += 1;
                self.out.push(event.clone());
                self.out.extend(self.block_anchor(range.start));
            }
            Event::End(TagEnd::Item) => {
                self.state.list_items -= 1;
                self.out.push(event.clone());
            }
            // A definition that states a finding has the anchor `parse` gave it.
            Event::Start(Tag::DefinitionListDefinition) => {
                self.state.text_before.clear();
                self.out.push(event.clone());
                self.out.extend(self.block_anchor(range.start));
            }
            // A line of a paragraph that states a finding of its own (`**Status:** wired`
            // under `**Component:** X`) has the anchor `parse` gave it.
            Event::SoftBreak => {
                self.out.push(event.clone());
                self.out.extend(self.block_anchor(range.end));
            }
            Event::Start(Tag::Heading { .. }) => self.heading(event.clone()),
            Event::Start(Tag::CodeBlock(_)) => return self.code_block(events, i),
            Event::Text(_) => return self.text_run(events, i),
            Event::End(TagEnd::Heading(_)) => {
                if let Some(anchor) = self.state.heading_anchor.take() {
                    self.out.push(Event::Html(crate::markup::heading_anchor(&anchor).into()));
                }
                self.out.push(event.clone());
            }
            Event::Start(Tag::Link { link_type: pulldown_cmark::LinkType::WikiLink { .. }, dest_url, .. }) => {
                let html = self.wikilink_open(dest_url);
                self.out.push(html);
            }
            Event::Start(Tag::Link { .. }) => match self.state.sanitiser.filter(event.clone()) {
                // A link off the site is marked as such where it is written.
                Some(Event::Start(Tag::Link { link_type, dest_url, title, .. }))
                    if link_type != pulldown_cmark::LinkType::Email && crate::markup::is_external(&dest_url) =>
                {
                    self.out.push(Event::Html(crate::markup::markdown_link_open(&dest_url, &title).into()));
                }
                // A link to a report or a heading of one leads to its page.
                Some(Event::Start(Tag::Link { dest_url, title, .. }))
                    if self.linker.local_links.is_some_and(|leads| leads.contains_key(&*dest_url)) =>
                {
                    let url = &self.linker.local_links.expect("checked above")[&*dest_url];
                    self.out.push(Event::Html(crate::markup::markdown_link_open(url, &title).into()));
                }
                other => self.out.extend(other),
            },
            Event::Html(_)
            | Event::InlineHtml(_)
            | Event::Start(Tag::HtmlBlock | Tag::Image { .. })
            | Event::End(TagEnd::HtmlBlock | TagEnd::Link | TagEnd::Image) => {
                self.out.extend(self.state.sanitiser.filter(event.clone()));
            }
            Event::Start(Tag::Table(_) | Tag::TableHead | Tag::TableRow | Tag::TableCell)
            | Event::End(TagEnd::TableHead | TagEnd::TableRow) => self.table_event(event.clone()),
            _ => self.out.push(event.clone()),
        }
        i + 1
    }

    /// A `Key: value` paragraph of a record body, outside lists, gets its key marked as
    /// a field's. Returns whether the paragraph at `i` was one.
    fn field_paragraph(&mut self, events: &mut Events<'m>, i: usize) -> bool {
        let start = events[i].1.start;
        if self.state.list_items > 0 || !self.in_record_body(start) {
            return false;
        }
        let Some((Event::Text(text), _)) = events.get(i + 1) else { return false };
        let Some((key, value_at)) = self.linker.conventions.field(text) else { return false };
        let key_html = format!("<span class=\"field-key\">{}:</span> ", escape(key));
        let rest = CowStr::from(text[value_at..].to_string());
        events[i + 1].0 = Event::Text(rest);
        self.out.push(Event::Start(Tag::Paragraph));
        self.out.extend(self.block_anchor(start));
        self.out.push(Event::Html(key_html.into()));
        true
    }

    /// An Obsidian link opens: to a record's page (`[[MEM-EDGE-x|the edge]]`), to a report
    /// or heading (`[[synthesis#Open questions]]`), else, to a note the site does not
    /// publish, as its words in a span.
    fn wikilink_open(&mut self, target: &str) -> Event<'m> {
        let linker = self.linker;
        let id = target.trim();
        if linker.conventions.ids.classify(id).is_some() {
            if let Some(RecordLink { url, title, published }) = linker.record_link(&RecordId::new(id)) {
                self.state.sanitiser.opened_link();
                let class = if published { "rec" } else { "rec unpublished" };
                return Event::Html(link_open(&url, class, &title).into());
            }
        }
        if let Some(url) = linker.local_links.and_then(|leads| leads.get(target)) {
            self.state.sanitiser.opened_link();
            return Event::Html(crate::markup::markdown_link_open(url, "").into());
        }
        self.state.sanitiser.link_as_span("wikilink", &format!("{target}: not published here"))
    }

    /// Takes the role (`{ref}`, `role_len` bytes) off the end of the text just written.
    fn drop_role(&mut self, role_len: usize) {
        let before = &self.state.text_before;
        let role = &before[before.len() - role_len..];
        if let Some(Event::Html(html) | Event::Text(html)) = self.out.last_mut() {
            if let Some(kept) = html.strip_suffix(role) {
                *html = kept.to_string().into();
            }
        }
    }

    /// A code span that is one whole citation links to its file, as `parse` reads it.
    fn code_span(&mut self, code: CowStr<'m>) {
        let linker = self.linker;
        // A code span that is one whole record ID (`SW-C-loop`) names the record, as `parse`
        // reads it.
        let role = recognise::role_title(&code, &self.state.text_before);
        let named = role.map_or(code.trim(), |(title, _)| title);
        if linker.conventions.ids.classify(named).is_some() {
            if let Some(RecordLink { url, title, published }) = linker.record_link(&RecordId::new(named)) {
                let class = if published { "rec" } else { "rec unpublished" };
                // A role (`{ref}`) is markup, not text: the reader sees the record's ID.
                let shown = match role {
                    Some((_, role_len)) => {
                        self.drop_role(role_len);
                        named
                    }
                    None => &code,
                };
                let html = format!("{}<code>{}</code></a>", link_open(&url, class, &title), escape(shown));
                self.out.push(Event::Html(html.into()));
                return;
            }
        }
        let cited = linker.conventions.citations.in_code(&code, &self.state.text_before);
        match cited.and_then(|c| linker.file_url(c.source.as_deref(), c.path.as_deref()?, &c.lines)) {
            Some(url) => self
                .out
                .push(Event::Html(format!("{}<code>{}</code></a>", link_open(&url, "cite", ""), escape(&code)).into())),
            None => self.out.push(Event::Code(code.clone())),
        }
        self.state.text_before.push_str(&code);
    }

    /// A heading takes the anchor `parse` gave its section.
    fn heading(&mut self, event: Event<'m>) {
        let Event::Start(Tag::Heading { level, classes, attrs, .. }) = event else { return };
        self.state.text_before.clear();
        let anchor =
            self.report().and_then(|r| r.sections.get(self.state.headings)).map(|s| CowStr::from(s.anchor.to_string()));
        self.state.headings += 1;
        self.state.heading_anchor = anchor.as_deref().map(str::to_string);
        self.out.push(Event::Start(Tag::Heading { level, id: anchor, classes, attrs }));
    }

    /// A code block, highlighted; with the `--- path` paragraph after it, a quote.
    /// Returns the index after both.
    fn code_block(&mut self, events: &Events<'m>, mut i: usize) -> usize {
        // The language as `parse` reads it: a directive's word, a Pandoc block's class.
        let (language, directive) = match &events[i].0 {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => match recognise::directive_language(info) {
                Some(language) => (language.map(str::to_string), true),
                None => {
                    let info = recognise::pandoc_info(info).unwrap_or_else(|| info.to_string());
                    (info.split_whitespace().next().map(str::to_string), false)
                }
            },
            _ => (None, false),
        };
        let language = language.as_deref();
        let mut code = String::new();
        i += 1;
        while i < events.len() && !matches!(events[i].0, Event::End(TagEnd::CodeBlock)) {
            if let Event::Text(t) = &events[i].0 {
                code.push_str(t);
            }
            i += 1;
        }
        // A MyST directive's options (`:caption:`, `:lineno-start:`) are not its code, as
        // `parse` reads it: the caption is shown as the quote's path.
        if directive {
            let (_, at) = recognise::directive_options(&code);
            code.drain(..at);
        }
        let (quote, next) = quote_path_after(events, i + 1, &self.linker.conventions.citations);
        if quote.is_none() {
            // A quote `parse` attributed otherwise (a caption, its info string, its own first
            // line over a gutter) is shown as one too: its path, linked, and its verdict.
            if let Some((path, quoted, from_diff)) = parsed_quote(&code, self.linker) {
                // A diff's code is shown in its file's language, not as a diff.
                let language = if from_diff { None } else { language };
                self.out.push(Event::Html(code_block_html(&quoted, language, Some(&path), self.linker).into()));
                return next;
            }
        }
        self.out.push(Event::Html(code_block_html(&code, language, quote.as_ref(), self.linker).into()));
        next
    }

    /// Text runs and the soft breaks between them are linked as one text, as `parse`
    /// reads them (a citation may wrap onto the next line). Returns the index after them.
    fn text_run(&mut self, events: &Events<'m>, mut i: usize) -> usize {
        let mut text = String::new();
        let mut line_anchor = None;
        loop {
            match events.get(i) {
                Some((Event::Text(t), _)) => text.push_str(t),
                Some((Event::SoftBreak, range)) => {
                    text.push(' ');
                    line_anchor = self.block_anchor(range.end);
                    if line_anchor.is_some() {
                        i += 1;
                        break;
                    }
                }
                _ => break,
            }
            i += 1;
        }
        self.state.text_before.push_str(&text);
        if !self.state.sanitiser.in_link_or_image() {
            self.out.push(Event::Html(linkify(&text, self.linker).into()));
        } else {
            self.out.push(Event::Text(text.into()));
        }
        self.out.extend(line_anchor);
        i
    }

    /// Tables are counted, and a body row's first cell takes the row's anchor.
    fn table_event(&mut self, event: Event<'m>) {
        let state = &mut self.state;
        match &event {
            Event::Start(Tag::Table(_)) => {
                state.table = Some(state.tables);
                state.tables += 1;
                state.body_row = 0;
            }
            Event::Start(Tag::TableHead) => state.in_head = true,
            Event::End(TagEnd::TableHead) => state.in_head = false,
            Event::Start(Tag::TableRow) => state.cell = 0,
            Event::End(TagEnd::TableRow) => state.body_row += 1,
            Event::Start(Tag::TableCell) => {
                state.text_before.clear();
                let first_body_cell = !state.in_head && state.cell == 0;
                state.cell += 1;
                let (table, row) = (state.table, state.body_row);
                self.out.push(event);
                if first_body_cell {
                    let anchor = self.report().zip(table).and_then(|(r, t)| r.row_anchors.get(&(t, row)));
                    if let Some(anchor) = anchor {
                        self.out.push(Event::Html(
                            format!("<span class=\"row-anchor\" id=\"{}\"></span>", escape(anchor)).into(),
                        ));
                    }
                }
                return;
            }
            _ => {}
        }
        self.out.push(event);
    }
}

#[derive(Default)]
struct State {
    headings: usize,
    /// The anchor of the heading being written: its self-link goes at its end.
    heading_anchor: Option<String>,
    list_items: usize,
    /// The safety policy, which also knows whether text is inside a link or an image.
    sanitiser: Sanitiser,
    /// The text of the paragraph (or cell, or item) so far: the source a code span's
    /// citation takes when it names none (`SRC-2 `docs/x.md``).
    text_before: String,
    tables: usize,
    table: Option<usize>,
    in_head: bool,
    body_row: usize,
    cell: usize,
}

/// If the events at `at` are a paragraph holding only a `--- path` line, returns it and
/// the index after the paragraph; otherwise `None` and `at`.
fn quote_path_after(
    events: &[(Event<'_>, Range<usize>)],
    at: usize,
    citations: &recognise::Citations,
) -> (Option<recognise::QuotePath>, usize) {
    if !matches!(events.get(at), Some((Event::Start(Tag::Paragraph), _))) {
        return (None, at);
    }
    let mut text = String::new();
    let mut j = at + 1;
    while let Some((event, _)) = events.get(j) {
        match event {
            Event::End(TagEnd::Paragraph) => break,
            Event::Text(t) | Event::Code(t) | Event::InlineHtml(t) => text.push_str(t),
            Event::SoftBreak | Event::HardBreak => text.push(' '),
            _ => {}
        }
        j += 1;
    }
    match citations.quote_path(&text) {
        Some(path) => (Some(path), j + 1),
        None => (None, at),
    }
}

/// The quote of `run` that a code block is, by its code as written (or without the
/// first line naming its place, and a gutter of line numbers, or as a diff of context, as
/// `parse` reads it): its place, the code it quotes, and whether it was written as a diff.
fn parsed_quote(code: &str, linker: &Linker<'_>) -> Option<(recognise::QuotePath, String, bool)> {
    let after_place = recognise::first_line_path(code).map_or(code, |(_, at)| &code[at..]);
    let diff = recognise::diff_context(code).map(|(_, body)| body);
    let from_diff = diff.is_some();
    let quoted = diff.unwrap_or_else(|| {
        recognise::without_gutter(after_place).map_or_else(|| after_place.to_string(), |(body, _)| body)
    });
    let quote = match linker.quotes_by_code {
        Some(by_code) => *by_code.get(quoted.as_str())?,
        // Only a page rendered on its own (tests) has no run to share the map with.
        None => linker.run.reports.iter().flat_map(|r| &r.quotes).find(|q| q.code == quoted)?,
    };
    let path =
        recognise::QuotePath { source: quote.source.clone(), path: quote.path.clone(), lines: quote.lines.clone() };
    Some((path, quoted, from_diff))
}

/// A highlighted code block; a quote also gets its path, linked to the file at the
/// frozen revision.
pub fn code_block_html(
    code: &str,
    language: Option<&str>,
    quote: Option<&recognise::QuotePath>,
    linker: &Linker<'_>,
) -> String {
    let language = language
        .map(str::to_string)
        .or_else(|| quote.and_then(|q| recognise::language_for_path(&q.path)).map(str::to_string));
    let highlighted = match linker.highlights {
        Some(memo) => memo.highlight(code, language.as_deref()),
        None => highlight::highlight(code, language.as_deref()).into(),
    };
    let lang_attr = language.as_deref().map(|l| format!(" data-lang=\"{}\"", escape(l))).unwrap_or_default();
    // Focusable: a long line scrolls sideways, and a reader without a mouse must be able
    // to scroll it (WCAG 2.1.1; axe's scrollable-region-focusable). The page needs no
    // script to tell which blocks scroll, so every block is a stop.
    let pre = format!("<pre class=\"code\" tabindex=\"0\"{lang_attr}><code>{highlighted}</code></pre>");
    let Some(quote) = quote else {
        return format!("{pre}\n");
    };
    let source = quote.source.as_deref().or(linker.run.default_source.as_deref());
    let lines = if quote.lines.is_empty() {
        String::new()
    } else {
        format!(":{}", quote.lines.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
    };
    let shown = format!("{}{lines}", quote.path);
    let path_html = match linker.file_url(source, &quote.path, &quote.lines) {
        Some(url) => format!("{}{}</a>", link_open(&url, "quote-path", ""), escape(&shown)),
        None => format!("<span class=\"quote-path\">{}</span>", escape(&shown)),
    };
    let source_html = match source {
        Some(source) => format!(
            " <a class=\"src\" href=\"{}\">{}</a> <span class=\"rev\">@ {}</span>",
            escape(&linker.source_url(source)),
            escape(source),
            escape(source_revision(linker.run, source).short())
        ),
        None => String::new(),
    };
    let verdict_html = quote_verdict_html(code, quote, source, linker);
    format!("<figure class=\"quote\">{pre}<figcaption>— {path_html}{source_html}{verdict_html}</figcaption></figure>\n")
}

/// The verdict of the quote of `code` from `path` in the run, as a caption shows it (the
/// quote is found among the run's by its source, path and code, which `parse` read from
/// the same text); empty when verification did not run.
fn quote_verdict_html(code: &str, quote: &recognise::QuotePath, source: Option<&str>, linker: &Linker<'_>) -> String {
    let Some(verdicts) = linker.verdicts else { return String::new() };
    let run = linker.run;
    let found = run.reports.iter().enumerate().find_map(|(r, report)| {
        let q = report.quotes.iter().position(|q| {
            q.path == quote.path && q.code == code && q.source.as_deref().or(run.default_source.as_deref()) == source
        })?;
        verdicts.quotes.get(r)?.get(q)
    });
    let Some(verdict) = found else { return String::new() };
    let commit = source.and_then(|s| verdicts.revisions.get(s)).map(|c| c.get(..7).unwrap_or(c).to_string());
    let link = |lines: LineRange| linker.file_url(source, &quote.path, &[lines]);
    let view = super::verdicts::quote_verdict(verdict, commit.as_deref(), link);
    let text = escape(&view.text);
    match view.url {
        Some(url) => {
            format!(" <span class=\"verdict verdict-{}\">{}{text}</a></span>", view.class, link_open(&url, "", ""))
        }
        None => format!(" <span class=\"verdict verdict-{}\">{text}</span>", view.class),
    }
}

/// A citation's links: one to the file at its first range, and one to each further
/// range (`session.py:188, 200, 278-279` is three links), or one to the source's entry in
/// the register when no file is named.
fn citation_html(text: &str, c: &recognise::CitationMatch, linker: &Linker<'_>) -> String {
    let link = |url: Option<String>, shown: &str| match url {
        Some(url) => format!("{}{}</a>", link_open(&url, "cite", ""), escape(shown)),
        None => format!("<span class=\"cite\">{}</span>", escape(shown)),
    };
    let url_of =
        |lines: &[LineRange]| linker.cited_url(c.source.as_deref(), c.path.as_deref(), c.section.as_deref(), lines);
    if c.path.is_none() {
        let url = url_of(&c.lines).or_else(|| c.source.as_deref().map(|s| linker.source_url(s)));
        return link(url, &text[c.range.clone()]);
    }
    if c.line_spans.len() < 2 {
        return link(url_of(&c.lines), &text[c.range.clone()]);
    }
    let mut html = link(url_of(&c.lines[..1]), &text[c.range.start..c.line_spans[0].end]);
    for (i, span) in c.line_spans.iter().enumerate().skip(1) {
        html.push_str(&escape(&text[c.line_spans[i - 1].end..span.start]));
        html.push_str(&link(url_of(&c.lines[i..=i]), &text[span.clone()]));
    }
    html
}

fn source_revision<'a>(run: &'a Run, source: &str) -> &'a crate::model::Revision {
    run.source(source).and_then(|s| s.revision.as_ref()).unwrap_or(&run.revision)
}

/// Escapes `text`, turning record IDs and citations into links.
pub fn linkify(text: &str, linker: &Linker<'_>) -> String {
    enum Span {
        Id,
        Citation(recognise::CitationMatch),
    }
    let mut spans: Vec<(Range<usize>, Span)> =
        linker.conventions.ids.find_ids(text).into_iter().map(|m| (m.range, Span::Id)).collect();
    spans.extend(linker.conventions.citations.find(text).into_iter().map(|c| (c.range.clone(), Span::Citation(c))));
    spans.sort_by_key(|(r, _)| (r.start, std::cmp::Reverse(r.end)));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (range, span) in spans {
        if range.start < at {
            continue;
        }
        out.push_str(&escape(&text[at..range.start]));
        let shown = escape(&text[range.clone()]);
        match span {
            Span::Id => {
                let id = RecordId::new(&text[range.clone()]);
                match linker.record_link(&id) {
                    Some(RecordLink { url, title, published }) => {
                        let class = if published { "rec" } else { "rec unpublished" };
                        out.push_str(&link_open(&url, class, &title));
                        out.push_str(&shown);
                        out.push_str("</a>");
                    }
                    None => out.push_str(&format!("<span class=\"rec unknown\">{shown}</span>")),
                }
            }
            Span::Citation(c) => out.push_str(&citation_html(text, &c, linker)),
        }
        at = range.end;
    }
    out.push_str(&escape(&text[at..]));
    out
}
