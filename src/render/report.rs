//! A report's page: the report as written, with its records, citations and quotes
//! linked.

use super::*;

/// The page of `report`: its text rendered, its contents, and the records it declares.
pub(super) fn page<'a>(renderer: &Renderer<'a>, system: &System, run: &'a Run, report: &Report) -> minijinja::Value {
    let linker = renderer.linker(system, run);
    let title_section = report.title_section();
    let mut declared: Vec<Link> = Vec::new();
    for d in &report.declarations {
        if !declared.iter().any(|l| l.name == d.id.as_str()) {
            declared.push(Link { name: d.id.to_string(), url: format!("#{}", d.anchor) });
        }
    }
    context! {
        title => report.title.clone(),
        code => true,
        breadcrumbs => renderer.breadcrumbs(system, Some(run)),
        report => context! {
            title => report.title.clone(),
            report_type => report.report_type.clone(),
            schema => report.schema.clone(),
            original => report.original.clone(),
            file => report.source_path.clone(),
            file_url => renderer.site.source_url.as_ref().map(|f| f.link(&report.source_path, 1)),
            html => render_report(report, &linker),
            title_anchor => title_section.map(|s| s.anchor.to_string()),
            toc => report.sections.iter().skip(usize::from(title_section.is_some())).filter(|s| s.level <= 3).map(|s| TocEntry { anchor: s.anchor.to_string(), title: s.title.clone(), level: s.level }).collect::<Vec<_>>(),
            declared => declared,
        },
        run => context! { name => run.name.clone(), revision => run.revision.clone(), url => urls::run(&system.slug, &run.slug) },
    }
}
