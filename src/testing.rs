//! Helpers for unit tests: a run made from Markdown as `parse` and `resolve` make it.

#[cfg(test)]
mod any_conventions;

use std::sync::Arc;

use crate::config::SiteConfig;
use crate::model::{Diagnostic, Run, Slug};
use crate::parse::ParsedRun;
use crate::recognise::Conventions;

/// The conventions of the default configuration.
pub(crate) fn conventions() -> Conventions {
    Conventions::new(&SiteConfig::default()).unwrap()
}

/// The run `r1` of system `lab`, of `reports` (file stem, Markdown) with `run_yaml`,
/// resolved under the default configuration; the diagnostics of parsing and resolving it,
/// sorted as a build sorts them.
pub(crate) fn run_of(run_yaml: &str, reports: &[(&str, &str)]) -> (Run, Vec<Diagnostic>) {
    let config = SiteConfig::default();
    let conventions = conventions();
    let file = std::path::Path::new("content/lab/r1/run.yaml");
    let meta = crate::config::parse_yaml(run_yaml, file, 1).unwrap();
    let texts: Vec<&str> = reports.iter().map(|(_, markdown)| *markdown).collect();
    let learned_kinds = crate::parse::learned_kinds(&texts, &meta, &conventions);
    let status_words = crate::parse::learned_status_words(&texts, &conventions);
    let conventions = conventions.with_learned_kinds(&learned_kinds);
    let conventions = conventions.with_status_words(&status_words);
    let mut parsed_diagnostics = Vec::new();
    let reports = reports
        .iter()
        .map(|(name, markdown)| {
            let source_path = format!("content/lab/r1/{name}.md");
            let slug = Slug::parse(name).unwrap();
            let (report, diagnostics) = crate::parse::parse_report(
                std::path::Path::new(&source_path),
                &source_path,
                &slug,
                markdown,
                &conventions,
            );
            parsed_diagnostics.extend(diagnostics);
            report.unwrap()
        })
        .collect();
    let parsed = ParsedRun {
        slug: Slug::parse("r1").unwrap(),
        meta,
        file: Arc::from(file),
        text: run_yaml.to_string(),
        reports,
        learned_kinds,
    };
    let (run, mut diagnostics) = crate::resolve::resolve_run(parsed, &conventions.ids, &config.statuses);
    diagnostics.extend(parsed_diagnostics);
    crate::model::sort_diagnostics(&mut diagnostics);
    (run, diagnostics)
}

/// A site of one system per name in `systems`, each with the runs `runs`, each run one
/// report declaring a record.
pub(crate) fn site_of(systems: &[&str], runs: &[&str]) -> crate::model::Site {
    let systems = systems
        .iter()
        .map(|system| crate::model::System {
            slug: Slug::parse(system).unwrap(),
            name: system.to_uppercase(),
            repository: None,
            summary: None,
            runs: runs
                .iter()
                .map(|slug| {
                    let report = format!("# Report\n\n## OBJ-01 Object of {system} {slug}\n\nIt keeps turns.\n");
                    let (mut run, _) = run_of("revision: abc\n", &[("memory", report.as_str())]);
                    run.slug = Slug::parse(slug).unwrap();
                    Arc::new(run)
                })
                .collect(),
        })
        .collect();
    site_of_systems(systems)
}

/// A site of the system `lab` with the run `r1` of `reports` (file stem, Markdown).
pub(crate) fn site_of_reports(reports: &[(&str, &str)]) -> crate::model::Site {
    let (run, _) = run_of("revision: abc\n", reports);
    site_of_systems(vec![crate::model::System {
        slug: Slug::parse("lab").unwrap(),
        name: "Lab".into(),
        repository: None,
        summary: None,
        runs: vec![Arc::new(run)],
    }])
}

fn site_of_systems(systems: Vec<crate::model::System>) -> crate::model::Site {
    crate::model::Site {
        title: "Lab".into(),
        statuses: Vec::new(),
        kinds: Default::default(),
        families: Default::default(),
        systems,
        source_url: None,
        record_pages: Default::default(),
        status_pages: Default::default(),
        feed_entries: crate::config::DEFAULT_FEED_ENTRIES,
        search_files: Default::default(),
    }
}
