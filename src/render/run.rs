//! A run's pages: its sources, reports, status matrix, findings, limits and record
//! graph; and all its records on one page.

use super::*;

/// The run's page: its revision, sources, reports, status matrix, findings without a
/// record, limits, record graph and unpublished records.
pub(super) fn page<'a>(renderer: &Renderer<'a>, system: &System, run: &'a Run) -> minijinja::Value {
    let linker = renderer.linker(system, run);
    let published: Vec<&Record> = run.published_records().collect();
    context! {
        title => format!("{} — {}", system.name, run.name),
        breadcrumbs => renderer.breadcrumbs(system, None),
        system => Link { name: system.name.clone(), url: urls::system(&system.slug) },
        run => context! {
            name => run.name.clone(),
            revision => run.revision.clone(),
            revision_url => system.repository.as_ref().and_then(|r| urls::repository_file(r.as_str(), run.revision.as_str(), "", None)),
            date => run.date.clone(),
            lens => run.lens.clone(),
            applicability_ends => run.applicability_ends.clone(),
            verification => renderer.verdicts(system, run).map(|v| {
                let mut counts = crate::model::VerificationCounts::default();
                counts.add(v);
                context! { quotes => counts.quotes_phrase(), citations => counts.citations_phrase() }
            }),
            vocabulary => renderer.status_counts(std::iter::once(run), Some(&run.vocabulary), &|name| urls::status(name)),
            summary => renderer.run_summary(system, run),
        },
        reports => report_summaries(system, run),
        sources => source_views(run, &linker),
        matrix => status_matrix(renderer, run, &published),
        records => published.iter().map(|r| renderer.record_summary(system, run, r)).collect::<Vec<_>>(),
        finding_groups => finding_groups(renderer, system, run),
        limit_groups => limit_groups(system, run, &linker),
        graph => run_graph(renderer, system, run),
        unpublished => unpublished_groups(renderer, system, run, &linker),
    }
}

/// Per kind of published record: how many records hold each status of the run's
/// vocabulary, and how many hold none.
fn status_matrix(renderer: &Renderer<'_>, run: &Run, published: &[&Record]) -> Vec<MatrixRow> {
    let mut matrix: BTreeMap<&str, MatrixRow> = BTreeMap::new();
    for record in published {
        let row = matrix.entry(&*record.kind).or_insert_with(|| MatrixRow {
            kind: record.kind.to_string(),
            kind_name: renderer.site.kinds.get(&*record.kind).cloned().unwrap_or_default(),
            counts: vec![0; run.vocabulary.len()],
            none: 0,
            total: 0,
        });
        row.total += 1;
        for (i, status) in run.vocabulary.iter().enumerate() {
            if record.statuses.iter().any(|s| **s == **status) {
                row.counts[i] += 1;
            }
        }
        if record.statuses.is_empty() {
            row.none += 1;
        }
    }
    matrix.into_values().collect()
}

/// Findings without a published record, by status in the site's order.
fn finding_groups<'a>(renderer: &Renderer<'a>, system: &System, run: &'a Run) -> Vec<FindingGroup> {
    let mut groups: Vec<FindingGroup> = Vec::new();
    for status in &renderer.site.statuses {
        let findings: Vec<FindingView> = run
            .subjects
            .iter()
            .flat_map(|subject| subject.findings.iter().filter(|at| *run.finding(**at).status == *status.name))
            .map(|at| renderer.finding_view(system, run, *at, run.finding(*at)))
            .collect();
        if !findings.is_empty() {
            let count = run.subjects.iter().filter(|s| s.statuses.iter().any(|n| **n == *status.name)).count();
            groups.push(FindingGroup {
                status: renderer.badge(&status.name, "", None, None),
                subjects: count,
                findings,
            });
        }
    }
    groups
}

/// Each unpublished set with the records referenced from it, each with where it is
/// first referenced.
fn unpublished_groups(
    renderer: &Renderer<'_>,
    system: &System,
    run: &Run,
    linker: &Linker<'_>,
) -> Vec<UnpublishedGroup> {
    let unpublished_ref = |r: &Record| {
        let first = r.backlinks.first().or(r.annotations.first());
        let (first, first_at) = match first {
            Some(at) if !r.backlinks.is_empty() => {
                let m = &run.reports[at.report as usize].mentions[at.index as usize];
                (
                    renderer.section_link(system, run, at.report as usize, m.section),
                    run.reports[at.report as usize].source_at(m.location.line),
                )
            }
            Some(at) => {
                let a = run.annotation(*at);
                (
                    renderer.section_link(system, run, at.report as usize, a.section),
                    run.reports[at.report as usize].source_at(a.location.line),
                )
            }
            None => (Link { name: String::new(), url: String::new() }, String::new()),
        };
        UnpublishedRef {
            id: r.id.to_string(),
            url: urls::record_shown(renderer.site.record_pages, &system.slug, &run.slug, &r.id),
            references: r.backlinks.len(),
            first,
            first_at,
        }
    };
    run.unpublished
        .iter()
        .enumerate()
        .map(|(i, set)| UnpublishedGroup {
            name: set.name.clone(),
            patterns: set.ids.clone(),
            note_html: set.note.as_deref().map(|n| render_inline(n, linker)),
            records: run
                .records
                .values()
                .filter(|r| r.publication == Publication::Unpublished(i))
                .map(unpublished_ref)
                .collect(),
        })
        .collect()
}

/// All the records of a run on one page: the published ones in reading order (by
/// where each is first declared), then the unpublished ones the reports refer to.
pub(super) fn records_page<'a>(renderer: &Renderer<'a>, system: &System, run: &'a Run) -> minijinja::Value {
    let mut records: Vec<&Record> = run.records.values().collect();
    // Stable: unpublished records keep the map's ID order.
    records.sort_by_key(|r| (!r.is_published(), if r.is_published() { reading_position(r) } else { None }));
    let unpublished = records.iter().filter(|r| !r.is_published()).count();
    context! {
        title => format!("Records of {}", run.name),
        code => true,
        breadcrumbs => renderer.breadcrumbs(system, Some(run)),
        records => records.iter().map(|r| record::record_view(renderer, system, run, r)).collect::<Vec<_>>(),
        unpublished => unpublished,
        run => context! { name => run.name.clone(), revision => run.revision.clone(), url => urls::run(&system.slug, &run.slug) },
    }
}

/// The picture of the run's most linked records, when any links.
fn run_graph<'a>(renderer: &Renderer<'a>, system: &System, run: &'a Run) -> Option<GraphView> {
    let graph = renderer.shared.get(&run_key(system, run))?.graph(run);
    let selection = graph.overview(graph::RUN_NODES)?;
    let title = format!("The records of {} and their links", run.name);
    let description = graph_description(&selection);
    let drawing = graph::Drawing { id: "run", title: &title, description: &description };
    Some(graph::view(&graph, &selection, &drawing, &|r| urls::record_below_run(renderer.site.record_pages, &r.id)))
}

/// The run page's list of reports.
pub(super) fn report_summaries(system: &System, run: &Run) -> Vec<ReportSummary> {
    run.reports
        .iter()
        .map(|report| ReportSummary {
            title: report.title.clone(),
            url: urls::report(&system.slug, &run.slug, &report.slug),
            report_type: report.report_type.clone(),
            records: report.declarations.iter().map(|d| &d.id).collect::<std::collections::BTreeSet<_>>().len(),
            quotes: report.quotes.len(),
        })
        .collect()
}

/// The run page's source register, each entry linked to its tree at its revision.
pub(super) fn source_views(run: &Run, linker: &Linker<'_>) -> Vec<SourceView> {
    run.sources
        .iter()
        .map(|s| {
            let revision = s.revision.clone().unwrap_or_else(|| run.revision.clone());
            SourceView {
                id: s.id.clone(),
                anchor: markdown::source_anchor(&s.id),
                title: s.title.clone(),
                repository: s.repository.clone(),
                tree_url: s.repository.as_ref().and_then(|r| {
                    urls::repository_file(r.as_str(), revision.as_str(), s.path.as_deref().unwrap_or(""), None)
                }),
                revision,
                path: s.path.clone(),
                note_html: s.note.as_deref().map(|n| render_inline(n, linker)),
            }
        })
        .collect()
}

/// The run page's "What this run did not establish": each report's limits.
fn limit_groups(system: &System, run: &Run, linker: &Linker<'_>) -> Vec<LimitGroup> {
    run.reports
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.limits.is_empty())
        .map(|(i, r)| {
            let (coverage, limitations): (Vec<&Limit>, Vec<&Limit>) =
                r.limits.iter().partition(|l| l.kind == LimitKind::Coverage);
            let views =
                |limits: Vec<&Limit>| limits.into_iter().map(|l| limit_view(system, run, i, l, linker)).collect();
            let limitations: Vec<LimitView> = views(limitations);
            LimitGroup {
                report: Link { name: r.title.clone(), url: urls::report(&system.slug, &run.slug, &r.slug) },
                has_prevents: limitations.iter().any(|l| l.prevents_html.is_some()),
                has_resolves: limitations.iter().any(|l| l.resolves_html.is_some()),
                limitations,
                coverage: views(coverage),
            }
        })
        .collect()
}
