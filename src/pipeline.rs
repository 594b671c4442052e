//! The pipeline, and the only module that knows the order of the stages:
//! discover → parse → resolve → render → post-process → publish → index → write.
//!
//! `check` runs every stage but the last; `build` writes only when no stage reported an
//! error, so the previous output survives any failed build.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::model::{sort_diagnostics, Diagnostic, Publication, Site};
use crate::render::{self, OutputFile, Theme};
use crate::{discover, index, parse, postprocess, publish, resolve, write};

/// What to build and where.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The site's root: the folder holding `content/`, `themes/` and `static/`.
    pub root: PathBuf,
    /// The output folder.
    pub output: PathBuf,
    /// Overrides `base_url` of casebook.yaml.
    pub base_url: Option<String>,
    /// The manifest of the previously published site: a record page it lists may not
    /// disappear without a redirect.
    pub previous_manifest: Option<PathBuf>,
}

impl BuildOptions {
    /// Options for the site at `root`, written to `root/public`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let output = if root == std::path::Path::new(".") { PathBuf::from("public") } else { root.join("public") };
        BuildOptions { output, root, base_url: None, previous_manifest: None }
    }
}

/// Counts for the end-of-build summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Systems.
    pub systems: usize,
    /// Runs.
    pub runs: usize,
    /// Reports.
    pub reports: usize,
    /// Published records.
    pub records: usize,
    /// Referenced but unpublished records.
    pub unpublished: usize,
    /// References to published records.
    pub references_resolved: usize,
    /// References to unpublished records.
    pub references_dangling: usize,
    /// Quotes.
    pub quotes: usize,
    /// Citations.
    pub citations: usize,
    /// HTML pages.
    pub pages: usize,
    /// Files written (pages, assets, static files).
    pub files: usize,
}

/// The result of `check` or `build`.
#[derive(Debug)]
pub struct Outcome {
    /// Every diagnostic, sorted by file and line.
    pub diagnostics: Vec<Diagnostic>,
    /// Counts, when the content could be resolved.
    pub summary: Option<Summary>,
    /// Wall time.
    pub elapsed: Duration,
    /// True when files were written.
    pub written: bool,
    /// Wall time per stage, in order (`--timings`).
    pub timings: Vec<(&'static str, Duration)>,
    /// The base URL the pages were made for (`--base-url`, else casebook.yaml's), when
    /// the configuration could be read: the dev server serves the site under its path.
    pub base_url: Option<String>,
}

/// Wall time per stage.
struct Stopwatch {
    last: Instant,
    laps: Vec<(&'static str, Duration)>,
}

impl Stopwatch {
    fn start() -> Self {
        Stopwatch { last: Instant::now(), laps: Vec::new() }
    }

    /// Ends the stage `name`.
    fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.laps.push((name, now - self.last));
        self.last = now;
    }
}

/// Runs `f` and returns its result with how long it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let value = f();
    (value, started.elapsed())
}

impl Outcome {
    /// True when any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// A failure that is not about the content: the theme or the output folder.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A template failed.
    #[error(transparent)]
    Render(#[from] render::RenderError),
    /// HTML rewriting failed.
    #[error("rewriting HTML failed: {0}")]
    Postprocess(#[from] lol_html::errors::RewritingError),
    /// Writing the output failed.
    #[error(transparent)]
    Write(#[from] write::WriteError),
    /// A search indexer failed.
    #[error(transparent)]
    Index(#[from] crate::index::IndexError),
    /// The previous manifest could not be read.
    #[error("cannot use the previous manifest {path}: {message}")]
    PreviousManifest {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// Runs every stage but writing (and the search indexes, which only the output needs).
pub fn check(options: &BuildOptions) -> Result<Outcome, PipelineError> {
    run(options, false)
}

/// Runs every stage; writes the output when there is no error.
pub fn build(options: &BuildOptions) -> Result<Outcome, PipelineError> {
    run(options, true)
}

fn run(options: &BuildOptions, write_output: bool) -> Result<Outcome, PipelineError> {
    let started = Instant::now();
    let mut clock = Stopwatch::start();
    // `./content/x.md` reads worse than `content/x.md` in diagnostics.
    let content = if options.root == std::path::Path::new(".") { PathBuf::from("content") } else { options.root.join("content") };
    let (tree, mut diagnostics) = discover::discover(&content);
    clock.lap("discover");
    let (parsed, found) = parse::parse(&tree);
    diagnostics.extend(found);
    clock.lap("parse");
    let Some(parsed) = parsed else {
        sort_diagnostics(&mut diagnostics);
        return Ok(Outcome {
            diagnostics,
            summary: None,
            elapsed: started.elapsed(),
            written: false,
            timings: clock.laps,
            base_url: None,
        });
    };
    let previous = match &options.previous_manifest {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| PipelineError::PreviousManifest { path: path.clone(), message: e.to_string() })?;
            let manifest = crate::manifest::Manifest::from_json(&text)
                .map_err(|message| PipelineError::PreviousManifest { path: path.clone(), message })?;
            Some(manifest)
        }
        None => None,
    };
    let parse::ParsedSite { config, scheme, systems, redirects } = parsed;
    let base_url = options.base_url.clone().unwrap_or_else(|| config.base_url.clone());
    let (site, found) = resolve::resolve(systems, &config, &scheme);
    diagnostics.extend(found);
    diagnostics.extend(render::language_warnings(&site));
    clock.lap("resolve");
    let theme = match Theme::load(&options.root, &config.theme) {
        Ok(theme) => Some(theme),
        Err(d) => {
            diagnostics.push(d);
            None
        }
    };
    let mut summary = summarise(&site);
    let mut written = false;
    if let (false, Some(theme)) = (diagnostics.iter().any(Diagnostic::is_error), theme) {
        // Pages go to the staging folder as they are rendered: a large site is never held
        // in memory. `check` renders the same pages and drops them.
        let staging = if write_output { Some(write::Staging::create(&options.output, &options.root)?) } else { None };
        let base = postprocess::base_path(&base_url);
        let emit = |mut file: OutputFile| -> Result<(), PipelineError> {
            postprocess::postprocess(&mut file, &base)?;
            if let Some(staging) = &staging {
                staging.put(&file)?;
            }
            Ok(())
        };
        let paths = render::render(&site, &scheme, &theme, &emit)?;
        clock.lap("render, post-process, write pages");
        summary.pages = paths.iter().filter(|p| p.extension().is_some_and(|e| e == "html")).count();
        diagnostics.extend(publish::check_anchors(previous.as_ref(), &paths, &redirects.entries, &redirects.file, &redirects.text));
        let (manifest, mut files) = publish::publish(&site, &paths, &base_url, &redirects.entries);
        clock.lap("publish");
        // The search indexes are output only: they can say nothing about the content, so
        // `check` does not spend time on them.
        if write_output {
            let docs = index::documents(&site);
            let published_base = manifest.base_url.clone();
            let ((tantivy, tantivy_time), (browser, browser_time)) = rayon::join(
                || timed(|| index::tantivy_files(&docs, &published_base)),
                || timed(|| index::browser_files(&docs)),
            );
            files.extend(tantivy?);
            files.extend(browser?);
            clock.lap("index");
            clock.laps.push(("  of which tantivy", tantivy_time));
            clock.laps.push(("  of which pagefind", browser_time));
        }
        summary.files = paths.len() + files.len();
        if let Some(staging) = staging {
            if !diagnostics.iter().any(Diagnostic::is_error) {
                files.par_iter().try_for_each(|file| staging.put(file))?;
                staging.commit(Some(&options.root.join("static")))?;
                written = true;
                clock.lap("write");
            }
        }
    }
    sort_diagnostics(&mut diagnostics);
    Ok(Outcome {
        diagnostics,
        summary: Some(summary),
        elapsed: started.elapsed(),
        written,
        timings: clock.laps,
        base_url: Some(base_url),
    })
}

/// The record manifest of the site at `root`, without rendering: for `casebook diff`
/// on a content tree. Diagnostics come along; a manifest is made even when some are
/// errors, since a diff of a broken tree is still worth reading.
pub fn manifest_of(root: &std::path::Path, base_url: Option<&str>) -> (Option<crate::manifest::Manifest>, Vec<Diagnostic>) {
    let (tree, mut diagnostics) = discover::discover(&root.join("content"));
    let (parsed, found) = parse::parse(&tree);
    diagnostics.extend(found);
    let Some(parsed) = parsed else { return (None, diagnostics) };
    let base = base_url.map(str::to_string).unwrap_or_else(|| parsed.config.base_url.clone());
    let (site, found) = resolve::resolve(parsed.systems, &parsed.config, &parsed.scheme);
    diagnostics.extend(found);
    sort_diagnostics(&mut diagnostics);
    (Some(crate::manifest::manifest(&site, &base)), diagnostics)
}

fn summarise(site: &Site) -> Summary {
    let mut s = Summary { systems: site.systems.len(), ..Summary::default() };
    for run in site.systems.iter().flat_map(|system| &system.runs) {
        s.runs += 1;
        s.reports += run.reports.len();
        for record in run.records.values() {
            match record.publication {
                Publication::Published => {
                    s.records += 1;
                    s.references_resolved += record.backlinks.len();
                }
                Publication::Unpublished(_) => {
                    s.unpublished += 1;
                    s.references_dangling += record.backlinks.len();
                }
            }
        }
        for report in &run.reports {
            s.quotes += report.quotes.len();
            s.citations += report.citations.iter().filter(|c| c.path.is_some()).count();
        }
    }
    s
}
