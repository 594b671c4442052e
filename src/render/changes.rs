//! The page of what changed between two consecutive runs of a system: the records that
//! persist, appear and vanish, their status changes, the findings without a record that
//! changed, and the references that newly dangle, each linked to both runs. The same
//! computation as `casebook diff` ([`crate::diff::between_runs`]), not a second one.

use std::sync::Arc;

use minijinja::context;
use serde::Serialize;

use super::views::{Link, StatusBadge};
use super::Renderer;
use crate::model::{RecordId, Run, System};
use crate::{diff, manifest, urls};

/// A system's runs in the order they were made: by date, those without one last, then by
/// folder name. Consecutive runs are compared.
fn runs_in_order(system: &System) -> Vec<&Arc<Run>> {
    let mut runs: Vec<&Arc<Run>> = system.runs.iter().collect();
    runs.sort_by(|a, b| (a.date.is_none(), &a.date, &a.slug).cmp(&(b.date.is_none(), &b.date, &b.slug)));
    runs
}

/// Each pair of consecutive runs of `system`, with its page's link.
pub(super) fn pairs(system: &System) -> Vec<(&Run, &Run)> {
    runs_in_order(system).windows(2).map(|w| (&**w[0], &**w[1])).collect()
}

/// A record on the page, with its pages in either run.
#[derive(Debug, Serialize)]
struct RecordChange {
    id: String,
    label: Option<String>,
    /// Its page in the older run, when it is there.
    old_url: Option<String>,
    /// Its page in the newer run, when it is there.
    new_url: Option<String>,
    /// What changed (`body`, `statuses`, `field:Evidence` …), for a changed record.
    fields: Vec<String>,
}

/// A status (or finding) that changed on one dimension.
#[derive(Debug, Serialize)]
struct StatusChange {
    subject: String,
    label: Option<String>,
    dimension: String,
    part: Option<String>,
    from: Vec<StatusBadge>,
    to: Vec<StatusBadge>,
    old_url: Option<String>,
    new_url: Option<String>,
}

/// A status as the diff writes it (`implemented (listing)`), as its badge.
fn diff_badges(renderer: &Renderer<'_>, statuses: &[String]) -> Vec<StatusBadge> {
    statuses
        .iter()
        .map(|s| match s.split_once(" (") {
            Some((name, qualifier)) => renderer.badge(name, "", Some(qualifier.trim_end_matches(')')), None),
            None => renderer.badge(s, "", None, None),
        })
        .collect()
}

/// The status changes of records published in both runs, linked to both pages.
fn transitions(
    renderer: &Renderer<'_>,
    changes: &diff::Diff,
    from: &Run,
    to: &Run,
    page: &dyn Fn(&Run, &str) -> Option<String>,
) -> Vec<StatusChange> {
    changes
        .status_transitions
        .iter()
        .map(|t| StatusChange {
            subject: t.record.id.clone(),
            label: t.record.label.clone(),
            dimension: t.dimension.clone(),
            part: t.part.clone(),
            from: diff_badges(renderer, &t.from),
            to: diff_badges(renderer, &t.to),
            old_url: page(from, &t.record.id),
            new_url: page(to, &t.record.id),
        })
        .collect()
}

/// The findings without a record that changed, appeared or went, linked to where
/// they are written (in the newer run, else the older).
fn finding_changes(renderer: &Renderer<'_>, changes: &diff::Diff) -> Vec<StatusChange> {
    changes
        .finding_changes
        .iter()
        .map(|f| StatusChange {
            subject: f.subject.clone(),
            label: None,
            dimension: f.dimension.clone(),
            part: f.part.clone(),
            from: diff_badges(renderer, &f.from),
            to: diff_badges(renderer, &f.to),
            old_url: (!f.from.is_empty()).then(|| f.url.clone()).filter(|_| f.to.is_empty()),
            new_url: (!f.to.is_empty()).then(|| f.url.clone()),
        })
        .collect()
}

/// The page of what changed between two runs of `system`.
pub(super) fn page(renderer: &Renderer<'_>, system: &System, from: &Run, to: &Run) -> minijinja::Value {
    // Made for its page, not before rendering: a large site's differences together are
    // tens of megabytes, held while every page renders.
    let changes =
        &diff::between_runs(&manifest::run_manifest(system, from, ""), &manifest::run_manifest(system, to, ""));
    let page = |run: &Run, id: &str| {
        let id = RecordId::new(id);
        run.publishes(&id).then(|| urls::record_shown(renderer.site.record_pages, &system.slug, &run.slug, &id))
    };
    let in_both = from.published_records().filter(|r| to.publishes(&r.id)).count();
    let record = |r: &diff::RecordRef, fields: Vec<String>| RecordChange {
        id: r.id.clone(),
        label: r.label.clone(),
        old_url: page(from, &r.id),
        new_url: page(to, &r.id),
        fields,
    };
    let transitions = transitions(renderer, changes, from, to, &page);
    let findings = finding_changes(renderer, changes);
    let dangling: Vec<(RecordChange, String)> = changes
        .newly_dangling
        .iter()
        .map(|d| {
            let from_record = RecordChange {
                id: d.from.clone(),
                label: None,
                old_url: None,
                new_url: page(to, &d.from),
                fields: Vec::new(),
            };
            (from_record, d.to.clone())
        })
        .collect();
    let run_view = |run: &Run| {
        context! {
            name => run.name.clone(),
            url => urls::run(&system.slug, &run.slug),
            revision => run.revision.short().to_string(),
            date => run.date.as_ref().map(|d| d.to_string()),
            lens => run.lens.clone(),
            records => run.published_records().count(),
        }
    };
    context! {
        title => format!("{}: {} → {}", system.name, from.name, to.name),
        breadcrumbs => vec![
            Link { name: renderer.site.title.clone(), url: urls::home() },
            Link { name: system.name.clone(), url: urls::system(&system.slug) },
        ],
        from => run_view(from),
        to => run_view(to),
        lens_changed => from.lens != to.lens,
        persisted => in_both,
        unchanged => in_both.saturating_sub(changes.changed.len()),
        added => changes.added.iter().map(|r| record(r, Vec::new())).collect::<Vec<_>>(),
        removed => changes.removed.iter().map(|r| record(r, Vec::new())).collect::<Vec<_>>(),
        changed => changes.changed.iter().map(|c| record(&c.record, c.fields.clone())).collect::<Vec<_>>(),
        transitions => transitions,
        findings => findings,
        dangling => dangling,
    }
}
