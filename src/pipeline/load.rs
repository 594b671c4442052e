//! The parse and resolve stages, run by run: what every build, `check`, `serve` and
//! `casebook diff` read the content through.

use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use crate::config::SiteConfig;
use crate::discover::SourceTree;
use crate::model::{Diagnostic, System};
use crate::rebuild::RememberedRun;
use crate::recognise::Conventions;
use crate::{parse, resolve};

use super::reuse::{Reuse, RunFiles};
use crate::progress::Watch;

/// Tells the watch that `.1` units are done when it goes out of scope, on every return.
struct Done<'a>(&'a dyn Watch, usize);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.advance(self.1);
    }
}

/// One run, loaded: reused from the last build or parsed and resolved now.
pub(super) struct LoadedRun {
    pub(super) system: String,
    pub(super) remembered: RememberedRun,
    pub(super) fresh: bool,
}

/// The systems (with their `system.yaml` texts), their runs, and what was found wrong.
pub(super) struct Loaded {
    pub(super) systems: Vec<(System, String)>,
    pub(super) runs: Vec<LoadedRun>,
    pub(super) diagnostics: Vec<Diagnostic>,
}

/// Parses and resolves every run, in parallel, reusing what `reuse` holds of the runs
/// whose files did not change (`trusted`: the watcher's `changed` paths are the only
/// files that changed).
pub(super) fn load(
    tree: &SourceTree,
    config: &SiteConfig,
    conventions: &Conventions,
    reuse: &dyn Reuse,
    changed: &[PathBuf],
    trusted: bool,
    watch: &dyn Watch,
) -> Loaded {
    type LoadedSystem = (Option<(System, String)>, Vec<LoadedRun>, Vec<Diagnostic>);
    let loaded: Vec<LoadedSystem> = tree
        .systems
        .par_iter()
        .map(|dir| {
            let parsed = match parse::parse_system_meta(dir, config.max_file_mib) {
                Ok(parsed) => parsed,
                Err(d) => return (None, Vec::new(), vec![d]),
            };
            // A run that cannot be parsed at all leaves only its diagnostics.
            let runs: Vec<Result<LoadedRun, Vec<Diagnostic>>> = dir
                .runs
                .par_iter()
                .map(|run_dir| {
                    let files = RunFiles {
                        system: &dir.slug,
                        run: &run_dir.slug,
                        files: std::iter::once(&run_dir.meta).chain(&run_dir.reports).collect(),
                    };
                    // Each run's files are done together: the run, then its reports.
                    let _done = Done(watch, files.files.len());
                    if let Some(remembered) = reuse.reusable_run(&files, changed, trusted) {
                        return Ok(LoadedRun { system: dir.slug.to_string(), remembered, fresh: false });
                    }
                    let stamps = if reuse.stamps_runs() { files.stamps() } else { Vec::new() };
                    let (parsed, mut diagnostics) =
                        parse::parse_run(run_dir, &tree.root, conventions, config.max_file_mib);
                    let Some(parsed) = parsed else { return Err(diagnostics) };
                    let run_conventions = conventions.with_learned_kinds(&parsed.learned_kinds);
                    let (run, found) = resolve::resolve_run(parsed, &run_conventions.ids, &config.statuses);
                    diagnostics.extend(found);
                    let remembered = RememberedRun { stamps, run: Arc::new(run), diagnostics, version: 0 };
                    Ok(LoadedRun { system: dir.slug.to_string(), remembered, fresh: true })
                })
                .collect();
            let mut diagnostics = Vec::new();
            let mut loaded = Vec::new();
            for run in runs {
                match run {
                    Ok(run) => loaded.push(run),
                    Err(found) => diagnostics.extend(found),
                }
            }
            let text = parsed.text.clone();
            let (system, found) = resolve::system(parsed, loaded.iter().map(|r| r.remembered.run.clone()).collect());
            diagnostics.extend(found);
            (Some((system, text)), loaded, diagnostics)
        })
        .collect();
    let mut out = Loaded { systems: Vec::new(), runs: Vec::new(), diagnostics: Vec::new() };
    for (system, loaded_runs, found) in loaded {
        out.systems.extend(system);
        out.diagnostics.extend(found);
        for run in &loaded_runs {
            out.diagnostics.extend(run.remembered.diagnostics.iter().cloned());
        }
        out.runs.extend(loaded_runs);
    }
    out
}
