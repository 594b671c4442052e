//! A system's pages: its runs, and its records and findings by status.

use super::*;

/// The records of `system` that carry status `index`, with what the status is on.
fn status_listings(renderer: &Renderer<'_>, system: &System, index: usize) -> Vec<StatusListing> {
    let status = &renderer.site.statuses[index];
    let mut listings = Vec::new();
    for run in &system.runs {
        for record in run.published_records() {
            let claims: Vec<_> = run.findings_of(record).filter(|f| *f.status == *status.name).collect();
            if claims.is_empty() {
                continue;
            }
            let detail = claims
                .iter()
                .map(|c| claim_detail(&c.dimension, c.qualifier.as_deref(), c.part.as_deref()))
                .filter(|d| !d.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
            listings.push(StatusListing {
                run: run.name.clone(),
                run_url: urls::run(&system.slug, &run.slug),
                record: renderer.record_summary(system, run, record),
                detail,
            });
        }
    }
    listings
}

/// The findings of `system` without a published record that state status `index`.
fn finding_listings<'a>(renderer: &Renderer<'a>, system: &'a System, index: usize) -> Vec<FindingView> {
    let status = &renderer.site.statuses[index];
    system
        .runs
        .iter()
        .flat_map(|run| {
            run.findings_without_record()
                .filter(|(_, f)| *f.status == *status.name)
                .map(|(at, f)| renderer.finding_view(system, run, at, f))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// One system's records and findings with one status.
pub(super) fn status_page<'a>(renderer: &Renderer<'a>, system: &'a System, index: usize) -> minijinja::Value {
    let status = &renderer.site.statuses[index];
    let records = status_listings(renderer, system, index);
    let findings = finding_listings(renderer, system, index);
    let tally = Tally::of(system.runs.iter().map(|r| &**r));
    context! {
        title => format!("{}: {}", system.name, status.name),
        breadcrumbs => vec![
            Link { name: renderer.site.title.clone(), url: urls::home() },
            Link { name: system.name.clone(), url: urls::system(&system.slug) },
            Link { name: format!("Status: {}", status.name), url: urls::status(&status.name) },
        ],
        system => Link { name: system.name.clone(), url: urls::system(&system.slug) },
        status => renderer.status_count(status, &tally, urls::status(&status.name)),
        records => records,
        findings => findings,
    }
}

/// One system's records and findings by every status it has, on one page
/// (`status_pages: per-system`): each status at the anchor its own page's folder names.
pub(super) fn statuses_page<'a>(renderer: &Renderer<'a>, system: &'a System) -> minijinja::Value {
    let tally = Tally::of(system.runs.iter().map(|r| &**r));
    let statuses: Vec<SystemStatusSection> = statuses_tallied(renderer.site, &tally)
        .into_iter()
        .map(|index| {
            let status = &renderer.site.statuses[index];
            SystemStatusSection {
                anchor: format!("{}/", slugify(&status.name)),
                status: renderer.status_count(status, &tally, urls::status(&status.name)),
                records: status_listings(renderer, system, index),
                findings: finding_listings(renderer, system, index),
            }
        })
        .collect();
    context! {
        title => format!("{}: by status", system.name),
        breadcrumbs => vec![
            Link { name: renderer.site.title.clone(), url: urls::home() },
            Link { name: system.name.clone(), url: urls::system(&system.slug) },
        ],
        system => Link { name: system.name.clone(), url: urls::system(&system.slug) },
        statuses => statuses,
    }
}

/// The system's page: its runs, its statuses counted, and the changes between its runs.
pub(super) fn page(renderer: &Renderer<'_>, system: &System) -> minijinja::Value {
    let mut statuses = renderer
        .status_counts(system.runs.iter().map(|r| &**r), None, &|name| renderer.system_status_url(system, name));
    statuses.retain(|s| s.count + s.findings > 0);
    let changes: Vec<Link> = changes::pairs(system)
        .into_iter()
        .map(|(from, to)| Link {
            name: format!("{} → {}", from.name, to.name),
            url: urls::changes(&system.slug, &from.slug, &to.slug),
        })
        .collect();
    context! {
        title => system.name.clone(),
        breadcrumbs => vec![Link { name: renderer.site.title.clone(), url: urls::home() }],
        system => renderer.system_summary(system),
        statuses => statuses,
        changes => changes,
    }
}

/// `dimension: qualifier (part)` for a status claim, empty when there is nothing to add.
fn claim_detail(dimension: &str, qualifier: Option<&str>, part: Option<&str>) -> String {
    let mut out = dimension.to_string();
    if let Some(q) = qualifier {
        out = if out.is_empty() { q.to_string() } else { format!("{out}, {q}") };
    }
    if let Some(p) = part {
        out = if out.is_empty() { format!("part: {p}") } else { format!("{out} (part: {p})") };
    }
    out
}
