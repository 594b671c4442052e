//! A record's page: its view (findings, entries, annotations, evidence, limits,
//! references, backlinks, graph), its previous and next in the run's reading order, and
//! the free functions that build each part from the run.

use std::collections::HashMap;

use minijinja::context;

use super::markdown::{render_fragment, render_inline, render_record_body, Linker};
use super::views::*;
use super::*;
use crate::model::{At, DeclarationForm, Owner, Publication, Record, RecordId, RecordPages, Run, SourceUrl, System};
use crate::urls;

/// A record as its page shows it.
pub(super) fn record_view<'a>(
    renderer: &Renderer<'a>,
    system: &System,
    run: &'a Run,
    record: &Record,
) -> minijinja::Value {
    let linker = renderer.linker(system, run);
    let references: Vec<RecordSummary> = record
        .references
        .iter()
        .filter_map(|id| run.records.get(id))
        .map(|r| renderer.record_summary(system, run, r))
        .collect();
    let backlinks: Vec<BacklinkView> =
        record.backlinks.iter().map(|at| backlink(renderer, system, run, record, *at)).collect();
    let unpublished = match &record.publication {
        Publication::Unpublished(set) => run.unpublished.get(*set).map(|s| {
            context! { name => s.name.clone(), note_html => s.note.as_deref().map(|n| render_inline(n, &linker)) }
        }),
        Publication::Published => None,
    };
    context! {
            anchor => (renderer.site.record_pages == RecordPages::PerRun).then(|| urls::record_file(&record.id)),
            id => record.id.to_string(),
            label => record.label.clone(),
            derived_label => record.derived_label.clone(),
            kind => record.kind.to_string(),
            kind_name => renderer.site.kinds.get(&*record.kind).cloned(),
            family => record.family.as_deref().map(str::to_string),
            family_name => record.family.as_deref().and_then(|f| renderer.site.families.get(f).cloned()),
            unpublished => unpublished,
            findings => record.findings.iter().map(|at| renderer.record_finding_view(system, run, *at, run.finding(*at))).collect::<Vec<_>>(),
            meanings => record.statuses.iter().map(|s| renderer.badge(s, "", None, None)).collect::<Vec<_>>(),
            parts => record.parts.clone(),
            entries => declaration_entries(system, run, record, &linker, renderer.site.source_url.as_ref()),
            annotations => annotation_entries(system, run, record, &linker, renderer.site.source_url.as_ref()),
            evidence => evidence_views(run, record, &linker, renderer.verdicts(system, run)),
            references => references,
            backlinks => backlinks,
            limits => limits_of(system, run, record, &linker),
            // On a run's page of records they follow one another already.
            neighbours => (renderer.site.record_pages == RecordPages::Separate).then(|| neighbours(renderer, system, run, record)),
            graph => record_graph(renderer, system, run, record),
    }
}

/// The picture of `record`'s neighbourhood (the record alone when it links with none).
fn record_graph<'a>(renderer: &Renderer<'a>, system: &System, run: &'a Run, record: &Record) -> Option<GraphView> {
    let graph = renderer.shared.get(&run_key(system, run))?.graph(run);
    let selection = graph.neighbourhood(&record.id, graph::NEIGHBOURHOOD_NODES)?;
    let title = format!("{} and the records it links with", record.id);
    let description = if selection.edges.is_empty() {
        format!("{} links with no other record.", record.id)
    } else {
        graph_description(&selection)
    };
    // Pictures on one page need ids of their own (their titles are referred to by id).
    let id = match renderer.site.record_pages {
        RecordPages::Separate => "record".to_string(),
        RecordPages::PerRun => format!("record-{}", record.id.slug()),
    };
    let drawing = graph::Drawing { id: &id, title: &title, description: &description };
    Some(graph::view(&graph, &selection, &drawing, &|r| urls::sibling_record(renderer.site.record_pages, &r.id)))
}

/// The records published before and after `record` in the run's reading order (the
/// order their first declarations come in the reports), for the record page's
/// previous and next links; none for an unpublished record.
fn neighbours<'a>(renderer: &Renderer<'a>, system: &System, run: &'a Run, record: &Record) -> minijinja::Value {
    let order = match renderer.shared.get(&run_key(system, run)) {
        Some(shared) => shared.reading(run),
        None => std::sync::Arc::new(ReadingOrder::of(run)),
    };
    let (previous, next) = order.around(&record.id);
    // The ID and title only: a neighbour's statuses are on its own page.
    let summary = |found: Option<&Record>| {
        found.map(|r| {
            context! {
                id => r.id.to_string(),
                label => r.title_label().map(str::to_string),
                url => urls::record_shown(renderer.site.record_pages, &system.slug, &run.slug, &r.id),
            }
        })
    };
    context! { previous => summary(previous), next => summary(next) }
}

fn backlink(renderer: &Renderer<'_>, system: &System, run: &Run, record: &Record, at: At) -> BacklinkView {
    let report = &run.reports[at.report as usize];
    let mention = &report.mentions[at.index as usize];
    let from = match mention.owner {
        Some(Owner::Declaration(d)) => Some(report.declarations[d as usize].id.clone()),
        Some(Owner::Annotation(a)) => Some(report.annotations[a as usize].target.clone()),
        None => None,
    };
    let from = from.filter(|id| id != &record.id).map(|id: RecordId| Link {
        name: match mention.owner {
            Some(Owner::Annotation(_)) => format!("annotation on {id}"),
            _ => id.to_string(),
        },
        url: urls::record_shown(renderer.site.record_pages, &system.slug, &run.slug, &id),
    });
    BacklinkView {
        context_html: mark(report.text(&mention.context), record.id.as_str()),
        at: renderer.section_link(system, run, at.report as usize, mention.section),
        from,
        source: report.source_at(mention.location.line),
        source_url: renderer.site.source_url.as_ref().map(|f| f.link(&report.source_path, mention.location.line)),
    }
}

/// A run's published records in the order their first declarations come in its reports,
/// each with its place: a record page's previous and next without a pass over the run.
pub(super) struct ReadingOrder<'a> {
    pub(super) records: Vec<&'a Record>,
    place: HashMap<&'a RecordId, usize>,
}

impl<'a> ReadingOrder<'a> {
    pub(super) fn of(run: &'a Run) -> Self {
        let mut placed: Vec<((usize, usize), &'a Record)> = run
            .records
            .values()
            .filter(|r| r.is_published())
            .filter_map(|r| reading_position(r).map(|key| (key, r)))
            .collect();
        placed.sort_by_key(|(key, _)| *key);
        let records: Vec<&'a Record> = placed.into_iter().map(|(_, r)| r).collect();
        let place = records.iter().enumerate().map(|(i, r)| (&r.id, i)).collect();
        ReadingOrder { records, place }
    }

    /// The records just before and after `id`, when it is placed.
    pub(super) fn around(&self, id: &RecordId) -> (Option<&'a Record>, Option<&'a Record>) {
        match self.place.get(id) {
            Some(&i) => (i.checked_sub(1).map(|p| self.records[p]), self.records.get(i + 1).copied()),
            None => (None, None),
        }
    }
}

/// Where a record comes in its run's reading order: its first declaration, by report and
/// place in it (`None` for a record no report declares).
pub(super) fn reading_position(record: &Record) -> Option<(usize, usize)> {
    record.declarations.iter().map(|at| (at.report as usize, at.index as usize)).min()
}

/// A record page's declarations: a heading's body, or a row's fields.
fn declaration_entries(
    system: &System,
    run: &Run,
    record: &Record,
    linker: &Linker<'_>,
    files: Option<&SourceUrl>,
) -> Vec<Entry> {
    record
        .declarations
        .iter()
        .map(|at| {
            let report = &run.reports[at.report as usize];
            let d = &report.declarations[at.index as usize];
            // A cell the findings block shows as a finding of this row is not shown again.
            let shown_as_finding = |value: &str| {
                report.findings.iter().any(|f| {
                    f.owner == Some(crate::model::Owner::declaration(at.index as usize))
                        && report.text(&f.statement).trim() == value.trim()
                })
            };
            let (form, fields, body_html, part) = match &d.form {
                DeclarationForm::Heading { .. } => (
                    "heading",
                    Vec::new(),
                    d.body.clone().map(|b| render_record_body(&report.markdown[b], linker)),
                    None,
                ),
                DeclarationForm::TableRow { part, .. } => (
                    "row",
                    d.fields
                        .iter()
                        .filter(|f| !shown_as_finding(report.text(&f.value)))
                        .map(|f| FieldView {
                            name: f.name.to_string(),
                            value_html: render_inline(report.text(&f.value), linker),
                        })
                        .collect(),
                    None,
                    part.clone(),
                ),
            };
            let section = enclosing_section(report, d).map(|s| Link {
                name: format!("§ {}", s.title),
                url: format!("{}#{}", urls::report(&system.slug, &run.slug, &report.slug), d.anchor),
            });
            Entry {
                form,
                at: report_anchor(system, run, at.report as usize, &d.anchor),
                source: report.source_at(d.location.line),
                source_url: files.map(|f| f.link(&report.source_path, d.location.line)),
                section,
                part,
                label: d.label.clone().filter(|label| Some(label.as_str()) != record.label.as_deref()),
                fields,
                body_html,
            }
        })
        .collect()
}

/// The limits that apply to `record`: in full those that name it, and by handle those
/// that cite a path its quotes or citations cite (a file cited by many records would
/// otherwise repeat its limits in full on each of their pages).
fn limits_of(system: &System, run: &Run, record: &Record, linker: &Linker<'_>) -> RecordLimits {
    let mut cited: Vec<&str> = Vec::new();
    for at in &record.citations {
        if let Some(path) = run.reports[at.report as usize].citations[at.index as usize].path.as_deref() {
            cited.push(path);
        }
    }
    cited
        .extend(record.quotes.iter().map(|at| run.reports[at.report as usize].quotes[at.index as usize].path.as_str()));
    let mut out = RecordLimits::default();
    let mut by_path: BTreeMap<&str, Vec<ReportLimits>> = BTreeMap::new();
    for (i, report) in run.reports.iter().enumerate() {
        for limit in &report.limits {
            if limit.mentions.contains(&record.id) {
                let because = Some(format!("it names {}", record.id));
                out.naming.push(LimitView { because, ..limit_view(system, run, i, limit, linker) });
            } else if let Some(path) = limit.paths.iter().find(|p| cited.contains(&p.as_str())) {
                let mention = LimitMention {
                    handle: limit.handle.clone(),
                    derived: !limit.handle_given,
                    url: format!("{}#{}", urls::report(&system.slug, &run.slug, &report.slug), limit.anchor),
                };
                let reports = by_path.entry(path).or_default();
                match reports.last_mut() {
                    Some(last) if last.report == report.slug.as_str() => last.limits.push(mention),
                    _ => reports.push(ReportLimits { report: report.slug.to_string(), limits: vec![mention] }),
                }
            }
        }
    }
    out.by_path = by_path.into_iter().map(|(path, reports)| PathLimits { path: path.to_string(), reports }).collect();
    out
}

/// The section a declaration is written in: a row's section, or the section around a
/// heading that declares (whose own section is the record itself).
fn enclosing_section<'r>(report: &'r Report, d: &crate::model::Declaration) -> Option<&'r crate::model::Section> {
    let index = d.section? as usize;
    let own = report.sections.get(index)?;
    if own.anchor != d.anchor {
        return Some(own);
    }
    report.sections[..index].iter().rev().find(|s| s.level < own.level)
}

/// A record page's annotations, each rendered with a link to where it is written.
fn annotation_entries(
    system: &System,
    run: &Run,
    record: &Record,
    linker: &Linker<'_>,
    files: Option<&SourceUrl>,
) -> Vec<Entry> {
    record
        .annotations
        .iter()
        .map(|at| {
            let report = &run.reports[at.report as usize];
            let a = &report.annotations[at.index as usize];
            // The record's own text kept in a section of its own (`Step 4: …`, an annex) is
            // shown by that section's title; a note on it (`On OBJ-03`) as a note.
            let section =
                a.section.filter(|_| a.own_text).and_then(|s| report.sections.get(s as usize)).map(|s| Link {
                    name: format!("§ {}", s.title),
                    url: format!("{}#{}", urls::report(&system.slug, &run.slug, &report.slug), a.anchor),
                });
            Entry {
                form: "annotation",
                at: report_anchor(system, run, at.report as usize, &a.anchor),
                source: report.source_at(a.location.line),
                source_url: files.map(|f| f.link(&report.source_path, a.location.line)),
                section,
                part: None,
                label: None,
                fields: Vec::new(),
                body_html: Some(render_fragment(&report.markdown[a.body.clone()], linker)),
            }
        })
        .collect()
}

/// What a quote or citation names, as a record page's evidence list shows it.
struct Cited<'a> {
    kind: &'static str,
    source: Option<&'a str>,
    path: Option<&'a str>,
    section: Option<&'a str>,
    lines: &'a [LineRange],
}

/// A record page's evidence: its quotes, then its citations, each linked to the file
/// (and each line range) at the frozen revision.
pub(super) fn evidence_views(
    run: &Run,
    record: &Record,
    linker: &Linker<'_>,
    verdicts: Option<&crate::model::RunVerification>,
) -> Vec<EvidenceView> {
    let view = |cited: Cited<'_>, at: String, verdict: Option<VerdictView>| {
        let Cited { kind, source, path, section, lines } = cited;
        let source = source.or(run.default_source.as_deref());
        EvidenceView {
            kind,
            source: source.map(|s| Link { name: s.to_string(), url: linker.source_url(s) }),
            path: path.map(str::to_string),
            url: linker.cited_url(source, path, section, lines),
            section: section.map(str::to_string),
            ranges: lines
                .iter()
                .map(|l| OptionalLink {
                    name: l.to_string(),
                    url: linker.cited_url(source, path, section, std::slice::from_ref(l)),
                })
                .collect(),
            at,
            verdict,
        }
    };
    let read_at = |source: Option<&str>| {
        let source = source.or(run.default_source.as_deref())?;
        verdicts?.revisions.get(source).map(|commit| commit.get(..7).unwrap_or(commit).to_string())
    };
    let quotes = record.quotes.iter().map(|at| {
        let report = &run.reports[at.report as usize];
        let q = &report.quotes[at.index as usize];
        let verdict = verdicts.and_then(|v| v.quotes.get(at.report as usize)?.get(at.index as usize)).map(|verdict| {
            let link = |lines: LineRange| linker.file_url(q.source.as_deref(), &q.path, &[lines]);
            verdicts::quote_verdict(verdict, read_at(q.source.as_deref()).as_deref(), link)
        });
        let cited =
            Cited { kind: "quote", source: q.source.as_deref(), path: Some(&q.path), section: None, lines: &q.lines };
        view(cited, report.source_at(q.location.line), verdict)
    });
    let citations = record.citations.iter().map(|at| {
        let report = &run.reports[at.report as usize];
        let c = &report.citations[at.index as usize];
        let source = c.source.as_deref();
        let verdict = verdicts
            .and_then(|v| v.citations.get(at.report as usize)?.get(at.index as usize))
            .and_then(|verdict| verdicts::citation_verdict(verdict, read_at(source).as_deref()));
        let cited =
            Cited { kind: "citation", source, path: c.path.as_deref(), section: c.section.as_deref(), lines: &c.lines };
        view(cited, report.source_at(c.location.line), verdict)
    });
    quotes.chain(citations).collect()
}

/// A record's own page (`record_pages: per-record`).
pub(super) fn page<'a>(renderer: &Renderer<'a>, system: &System, run: &'a Run, record: &Record) -> minijinja::Value {
    context! {
        title => match record.title_label() { Some(l) => format!("{} — {l}", record.id), None => record.id.to_string() },
        code => true,
        breadcrumbs => renderer.breadcrumbs(system, Some(run)),
        record => record_view(renderer, system, run, record),
        run => context! { name => run.name.clone(), revision => run.revision.clone(), url => urls::run(&system.slug, &run.slug) },
    }
}

/// Escapes a citing sentence and marks each occurrence of `id`.
fn mark(sentence: &str, id: &str) -> String {
    escape(sentence).replace(&escape(id), &format!("<mark>{}</mark>", escape(id)))
}
