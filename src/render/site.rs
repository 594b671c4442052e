//! The site's own pages: the home page (systems side by side, kinds of record by
//! system) and the pages of the statuses across every system.

use super::*;

/// The home page: every system, its runs and statuses side by side, and the kinds of
/// record each publishes.
pub(super) fn home(renderer: &Renderer<'_>) -> minijinja::Value {
    let records = renderer.all_runs().flat_map(|r| r.published_records()).count();
    let findings: usize =
        renderer.all_runs().map(|r| r.reports.iter().map(|rep| rep.findings.len()).sum::<usize>()).sum();
    let statuses = renderer.status_counts(renderer.all_runs(), None, &|name| urls::status(name));
    let shown: Vec<&str> = statuses.iter().filter(|s| s.count + s.findings > 0).map(|s| s.name.as_str()).collect();
    let kinds = kinds_by_system(renderer);
    // Past a dozen systems, a section per system and a column per system make a wall:
    // a row per system instead, its runs on its own page.
    let (system_rows, kind_columns, kinds) = if renderer.site.systems.len() > SYSTEMS_IN_FULL {
        let (rows, columns) = system_rows(renderer, kinds);
        (rows, columns, Vec::new())
    } else {
        (Vec::new(), Vec::new(), kinds)
    };
    context! {
        title => renderer.site.title.clone(),
        systems => renderer.site.systems.iter().map(|s| renderer.system_summary(s)).collect::<Vec<_>>(),
        system_rows => system_rows,
        kind_columns => kind_columns,
        side_by_side => side_by_side(renderer, &shown),
        side_by_side_statuses => statuses.iter().filter(|s| shown.contains(&s.name.as_str())).collect::<Vec<_>>(),
        kinds => kinds,
        statuses => statuses,
        records => records,
        findings => findings,
    }
}

/// Each system's runs, lens by lens, with the records and findings of each status in
/// `shown`: where the systems differ, at a glance. Each cell links to the system's
/// list of that status.
fn side_by_side(renderer: &Renderer<'_>, shown: &[&str]) -> Vec<SideBySideRow> {
    let mut rows = Vec::new();
    for system in &renderer.site.systems {
        let mut lenses: BTreeMap<Option<&String>, Vec<&Run>> = BTreeMap::new();
        for run in &system.runs {
            lenses.entry(run.lens.as_ref()).or_default().push(run);
        }
        for (lens, runs) in lenses {
            let url = |name: &str| renderer.system_status_url(system, name);
            let mut cells = renderer.status_counts(runs.into_iter(), None, &url);
            cells.retain(|c| shown.contains(&c.name.as_str()));
            rows.push(SideBySideRow {
                system: Link { name: system.name.clone(), url: urls::system(&system.slug) },
                lens: lens.cloned(),
                cells,
            });
        }
    }
    rows
}

/// A row per system, with its counts of `kinds` (a row per kind, a count per system)
/// as columns.
fn system_rows(renderer: &Renderer<'_>, kinds: Vec<KindRow>) -> (Vec<SystemRow>, Vec<KindColumn>) {
    let columns = kinds.iter().map(|k| KindColumn { kind: k.kind.clone(), kind_name: k.kind_name.clone() }).collect();
    let mut counts: Vec<std::vec::IntoIter<KindCell>> = kinds.into_iter().map(|k| k.counts.into_iter()).collect();
    let rows = renderer
        .site
        .systems
        .iter()
        .map(|system| {
            let shown = system.runs.len().saturating_sub(SystemRow::RUNS_SHOWN);
            SystemRow {
                system: Link { name: system.name.clone(), url: urls::system(&system.slug) },
                runs: system.runs[shown..]
                    .iter()
                    .map(|run| Link { name: run.name.clone(), url: urls::run(&system.slug, &run.slug) })
                    .collect(),
                more_runs: shown,
                records: system.runs.iter().map(|run| run.published_records().count()).sum(),
                findings: system.runs.iter().flat_map(|run| &run.reports).map(|report| report.findings.len()).sum(),
                kinds: counts.iter_mut().map(|column| column.next().expect("a count per system")).collect(),
            }
        })
        .collect();
    (rows, columns)
}

/// Per kind of record, how many each system publishes.
fn kinds_by_system(renderer: &Renderer<'_>) -> Vec<KindRow> {
    let mut kinds: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, system) in renderer.site.systems.iter().enumerate() {
        for record in system.runs.iter().flat_map(|r| r.published_records()) {
            kinds.entry(&*record.kind).or_insert_with(|| vec![0; renderer.site.systems.len()])[i] += 1;
        }
    }
    kinds
        .into_iter()
        .map(|(kind, counts)| KindRow {
            kind: kind.to_string(),
            kind_name: renderer.site.kinds.get(kind).cloned(),
            counts: counts
                .into_iter()
                .zip(&renderer.site.systems)
                .map(|(count, system)| KindCell { count, url: urls::search_filtered(&system.name, kind) })
                .collect(),
        })
        .collect()
}

/// Every status of the site, counted over every system.
pub(super) fn statuses_page(renderer: &Renderer<'_>) -> minijinja::Value {
    context! {
        title => "Findings by status",
        breadcrumbs => vec![Link { name: renderer.site.title.clone(), url: urls::home() }],
        statuses => renderer.status_counts(renderer.all_runs(), None, &|name| urls::status(name)),
    }
}

/// A status across the site: how many records and findings of each system carry it,
/// each count leading to that system's list (so the page stays small however large
/// the site).
pub(super) fn status_page(renderer: &Renderer<'_>, index: usize) -> minijinja::Value {
    let status = &renderer.site.statuses[index];
    let subjects_shown = if renderer.site.systems.len() > SYSTEMS_IN_FULL { 0 } else { SUBJECTS_SHOWN };
    let systems: Vec<SystemStatusCount> = renderer
        .site
        .systems
        .iter()
        .map(|system| {
            let tally = Tally::of(system.runs.iter().map(|r| &**r));
            let findings = tally.findings.get(status.name.as_str()).copied().unwrap_or(0);
            // A few subjects are named here; the system's page lists them all.
            let subjects: Vec<Link> = system
                .runs
                .iter()
                .flat_map(|run| {
                    run.subjects.iter().filter_map(move |subject| {
                        let at = *subject.findings.iter().find(|at| *run.finding(**at).status == *status.name)?;
                        Some((run, subject, at))
                    })
                })
                .take(subjects_shown)
                .map(|(run, subject, at)| Link {
                    name: subject.name.clone(),
                    url: renderer.finding_url(system, run, at, run.finding(at)),
                })
                .collect();
            SystemStatusCount {
                system: system.name.clone(),
                system_url: urls::system(&system.slug),
                count: tally.records.get(status.name.as_str()).copied().unwrap_or(0),
                findings,
                more_subjects: findings - subjects.len(),
                subjects,
                url: renderer.system_status_url(system, &status.name),
            }
        })
        .filter(|s| s.count + s.findings > 0)
        .collect();
    let tally = Tally::of(renderer.all_runs());
    context! {
        title => format!("Status: {}", status.name),
        breadcrumbs => vec![
            Link { name: renderer.site.title.clone(), url: urls::home() },
            Link { name: "Statuses".into(), url: urls::statuses() },
        ],
        status => renderer.status_count(status, &tally, urls::status(&status.name)),
        systems => systems,
    }
}
