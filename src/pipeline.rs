//! The pipeline, and the only module that knows the order of the stages:
//! discover → parse → resolve → render → post-process → publish → index → write.
//!
//! `check` runs every stage but writing (and the search indexes); `build` swaps the
//! output in only when no stage reported an error, so the previous output survives any
//! failed build. A full build makes the search indexes alongside the pages. A
//! [`Rebuilder`] (the dev server) goes through the same function with the memory of its
//! previous build, and redoes only what changed (see `rebuild.rs`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::model::{sort_diagnostics, Diagnostic, Publication, Site};
use crate::output::OutputFile;
use crate::render::{self, Theme};
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
    /// Writes the two search indexes (`--no-search-index` turns them off: a quicker
    /// build when search is not needed, and the way to time what they cost).
    pub search_index: bool,
    /// Places casebook did not understand are errors, not notes (`--strict`).
    pub strict: bool,
}

impl BuildOptions {
    /// Options for the site at `root`, written to `root/public`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let output = if root == std::path::Path::new(".") { PathBuf::from("public") } else { root.join("public") };
        BuildOptions { output, root, base_url: None, previous_manifest: None, search_index: true, strict: false }
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
    /// Citations of files and sections of the source register.
    pub citations: usize,
    /// Findings (records' and the others).
    pub findings: usize,
    /// Places that look like a convention but produced nothing (notes; errors with
    /// `--strict`).
    pub not_understood: usize,
    /// Records whose title is derived (they have no label).
    pub derived_titles: usize,
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
    /// The output files a rebuild wrote or removed (paths below the output folder), in
    /// order; `None` when the whole output folder was replaced.
    pub changed: Option<Vec<PathBuf>>,
    /// True when a rebuild stopped early for a newer change
    /// ([`Rebuilder::rebuild_unless_superseded`]): the output is not yet a whole build.
    pub superseded: bool,
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
    /// A newer change superseded a rebuild (the dev server): never an error the user sees,
    /// the rebuild stops with what it wrote so far remembered.
    #[error("a newer change superseded this rebuild")]
    Superseded,
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
    run(options, Mode::Check, None, &[], &mut |_| {}, &|| false)
}

/// Runs every stage; writes the output when there is no error.
pub fn build(options: &BuildOptions) -> Result<Outcome, PipelineError> {
    run(options, Mode::Build, None, &[], &mut |_| {}, &|| false)
}

/// Builds again and again, redoing only what changed (the dev server): the first call is
/// a full build, swapped in like any other; later calls reuse the runs whose files did not
/// change, render only the pages whose inputs changed, and write into the output folder
/// only the files whose bytes changed, so that it ends byte for byte as a clean build
/// would leave it. A call that finds errors in the content writes nothing.
#[derive(Debug)]
pub struct Rebuilder {
    options: BuildOptions,
    memory: crate::rebuild::Memory,
}

impl Rebuilder {
    /// A rebuilder for the site of `options`.
    pub fn new(options: BuildOptions) -> Self {
        Rebuilder { options, memory: crate::rebuild::Memory::default() }
    }

    /// Builds. `changed` names the files known to have changed since the last call (the
    /// watcher's paths, as the options' root spells them); any other file counts as
    /// changed when its size or modification time did. A rebuild calls `pages_ready`
    /// with the pages it wrote, twice: once the pages made from the edited reports are
    /// written (each report's page and its records' pages), then once the other pages of
    /// the changed runs and systems are; both before the pages made from the whole site,
    /// the search indexes and the manifest.
    pub fn rebuild(
        &mut self,
        changed: &[PathBuf],
        pages_ready: &mut dyn FnMut(&[PathBuf]),
    ) -> Result<Outcome, PipelineError> {
        self.rebuild_unless_superseded(changed, pages_ready, &|| false)
    }

    /// [`Rebuilder::rebuild`], which stops early when `superseded` says a newer change
    /// waits (the dev server asks): once the changed runs' and systems' pages are written,
    /// once the site's pages are, and between files of the search indexes. What it wrote
    /// is remembered, so the next rebuild, which makes the site's pages, the manifest and
    /// the indexes anyway, leaves the output as a clean build would (`Outcome::superseded`).
    pub fn rebuild_unless_superseded(
        &mut self,
        changed: &[PathBuf],
        pages_ready: &mut dyn FnMut(&[PathBuf]),
        superseded: &(dyn Fn() -> bool + Sync),
    ) -> Result<Outcome, PipelineError> {
        let mode = if self.memory.complete { Mode::InPlace } else { Mode::Build };
        let result = run(&self.options, mode, Some(&mut self.memory), changed, pages_ready, superseded);
        if result.is_err() {
            // The output may hold part of this build: start again from a full one.
            self.memory = crate::rebuild::Memory::default();
        }
        result
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Everything but writing.
    Check,
    /// A full build into a staging folder, swapped in.
    Build,
    /// Changed files only, into the output folder itself.
    InPlace,
}

/// One run, loaded: reused from memory or parsed and resolved now.
struct LoadedRun {
    system: String,
    remembered: crate::rebuild::RememberedRun,
    fresh: bool,
}

/// Parses and resolves every run, in parallel, reusing what `memory` holds of the runs
/// whose files did not change. Returns the systems (with their `system.yaml` texts), the
/// runs and the diagnostics.
fn load(
    tree: &discover::SourceTree,
    config: &crate::config::SiteConfig,
    conventions: &crate::recognise::Conventions,
    memory: Option<&crate::rebuild::Memory>,
    changed: &[PathBuf],
    trusted: bool,
) -> (Vec<(crate::model::System, String)>, Vec<LoadedRun>, Vec<Diagnostic>) {
    use crate::rebuild::{RememberedRun, Stamp};
    type LoadedSystem = (Option<(crate::model::System, String)>, Vec<LoadedRun>, Vec<Diagnostic>);
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
                    let files: Vec<&PathBuf> = std::iter::once(&run_dir.meta).chain(&run_dir.reports).collect();
                    let stamps = || -> Vec<(PathBuf, Option<Stamp>)> {
                        files.iter().map(|p| ((*p).clone(), Stamp::of(p))).collect()
                    };
                    if let Some(memory) = memory {
                        // After edits the watcher named, the other runs are trusted unread.
                        let checked = if trusted { None } else { Some(stamps()) };
                        if let Some(remembered) =
                            memory.reusable_run(&dir.slug, &run_dir.slug, &files, checked.as_deref(), changed)
                        {
                            return Ok(LoadedRun {
                                system: dir.slug.clone(),
                                remembered: remembered.clone(),
                                fresh: false,
                            });
                        }
                    }
                    let stamps = if memory.is_some() { stamps() } else { Vec::new() };
                    let (parsed, mut diagnostics) =
                        parse::parse_run(run_dir, &tree.root, conventions, config.max_file_mib);
                    let Some(parsed) = parsed else { return Err(diagnostics) };
                    let (run, found) = resolve::resolve_run(parsed, &conventions.ids, &config.statuses);
                    diagnostics.extend(found);
                    let remembered = RememberedRun { stamps, run: Arc::new(run), diagnostics, version: 0 };
                    Ok(LoadedRun { system: dir.slug.clone(), remembered, fresh: true })
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
            let runs = loaded;
            let text = parsed.text.clone();
            let (system, found) = resolve::system(parsed, runs.iter().map(|r| r.remembered.run.clone()).collect());
            diagnostics.extend(found);
            (Some((system, text)), runs, diagnostics)
        })
        .collect();
    let (mut systems, mut runs, mut diagnostics) = (Vec::new(), Vec::new(), Vec::new());
    for (system, loaded_runs, found) in loaded {
        systems.extend(system);
        diagnostics.extend(found);
        for run in &loaded_runs {
            diagnostics.extend(run.remembered.diagnostics.iter().cloned());
        }
        runs.extend(loaded_runs);
    }
    (systems, runs, diagnostics)
}

fn run(
    options: &BuildOptions,
    mode: Mode,
    mut memory: Option<&mut crate::rebuild::Memory>,
    changed: &[PathBuf],
    pages_ready: &mut dyn FnMut(&[PathBuf]),
    superseded: &(dyn Fn() -> bool + Sync),
) -> Result<Outcome, PipelineError> {
    let started = Instant::now();
    let mut clock = Stopwatch::start();
    let failed = |diagnostics: Vec<Diagnostic>, clock: Stopwatch| {
        let mut diagnostics = diagnostics;
        sort_diagnostics(&mut diagnostics);
        Ok(Outcome {
            diagnostics,
            summary: None,
            elapsed: started.elapsed(),
            written: false,
            timings: clock.laps,
            base_url: None,
            changed: None,
            superseded: false,
        })
    };
    let content = content_dir(&options.root);
    // A rebuild after edits of known files keeps the tree it found last time.
    let kept_tree = memory.as_deref().and_then(|m| m.tree_after(changed));
    let trusted = kept_tree.is_some();
    let (tree, mut diagnostics) = match kept_tree {
        Some(kept) => kept,
        None => {
            let (tree, found) = discover::discover(&content);
            if let Some(memory) = memory.as_deref_mut() {
                memory.set_tree(tree.clone(), found.clone());
            }
            (tree, found)
        }
    };
    clock.lap("discover");
    let (config, config_text, conventions) = match parse::parse_config(&tree) {
        Ok(parsed) => parsed,
        Err(d) => {
            diagnostics.push(d);
            return failed(diagnostics, clock);
        }
    };
    let base_url = options.base_url.clone().unwrap_or_else(|| config.base_url.clone());
    let theme = match Theme::load(&options.root, &config.theme) {
        Ok(theme) => Some(theme),
        Err(d) => {
            diagnostics.push(d);
            None
        }
    };
    if let Some(memory) = memory.as_deref_mut() {
        memory.set_global(&config_text, theme.as_ref().map(Theme::fingerprint).unwrap_or_default(), &base_url);
    }
    let (systems, runs, found) = load(&tree, &config, &conventions, memory.as_deref(), changed, trusted);
    diagnostics.extend(found);
    let redirects = parse::parse_redirects(&tree, config.max_file_mib, &mut diagnostics);
    clock.lap("parse, resolve");
    if let Some(memory) = memory.as_deref_mut() {
        memory.keep_systems(systems.iter().map(|(system, text)| (system.slug.clone(), text.clone())).collect());
        memory.keep_runs(
            runs.into_iter().map(|r| ((r.system, r.remembered.run.slug.clone()), r.remembered, r.fresh)).collect(),
        );
    }
    let site = resolve::site(&config, systems.into_iter().map(|(system, _)| system).collect());
    diagnostics.extend(render::language_warnings(&site));
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
    let mut summary = summarise(&site);
    summary.not_understood = diagnostics.iter().filter(|d| d.is_not_understood()).count();
    if options.strict {
        for d in diagnostics.iter_mut().filter(|d| d.is_not_understood()) {
            d.severity = crate::model::Severity::Error;
        }
    }
    let mut written = false;
    let edited = changed;
    let mut changed = None;
    if let (false, Some(theme)) = (diagnostics.iter().any(Diagnostic::is_error), theme) {
        let base = postprocess::base_path(&base_url);
        let output = Output::open(mode, options, memory.as_deref())?;
        // Pages go to the output as they are rendered: a large site is never held in
        // memory. `check` renders the same pages and drops them.
        let emit = |mut file: OutputFile| -> Result<(), PipelineError> {
            postprocess::postprocess(&mut file, &base)?;
            output.put(file)
        };
        let remembered = memory.as_deref();
        let up_to_date =
            |scope: render::Scope<'_>| mode == Mode::InPlace && remembered.is_some_and(|m| m.up_to_date(scope));
        let more_files = std::sync::atomic::AtomicUsize::new(0);
        // Files go to the output one by one as they are made: on a large site the
        // manifest and each index are hundreds of megabytes.
        let put = |file: OutputFile| -> Result<(), PipelineError> {
            more_files.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            output.put(file)
        };
        let put_streamed = |paths: &[PathBuf], write: &publish::StreamedWrite<'_>| -> Result<(), PipelineError> {
            more_files.fetch_add(paths.len(), std::sync::atomic::Ordering::Relaxed);
            if mode != Mode::InPlace {
                return output.put_streamed(paths, write);
            }
            // A rebuild's manifest (a gigabyte at 10,000 reports) stops when a newer change waits.
            let interruptible = |writers: &mut [&mut dyn std::io::Write]| -> std::io::Result<()> {
                let mut wrapped: Vec<Interruptible<'_, '_>> = writers
                    .iter_mut()
                    .map(|inner| Interruptible { inner: &mut **inner, superseded, since_asked: 0 })
                    .collect();
                let mut writers: Vec<&mut dyn std::io::Write> =
                    wrapped.iter_mut().map(|w| w as &mut dyn std::io::Write).collect();
                write(&mut writers)
            };
            output.put_streamed(paths, &interruptible).map_err(|e| match e {
                PipelineError::Write(write::WriteError::Io { source, .. })
                    if source.get_ref().is_some_and(|e| e.is::<SupersededWrite>()) =>
                {
                    PipelineError::Superseded
                }
                e => e,
            })
        };
        // The search indexes are output only: they can say nothing about the content, so
        // `check` does not make them.
        let published_base = publish::published_base(&base_url);
        let make_indexes = || -> Result<Option<index::IndexTimes>, PipelineError> {
            if mode == Mode::Check || !options.search_index {
                return Ok(None);
            }
            // A rebuild's indexes stop between files when a newer change waits (a full
            // build, even the dev server's, goes to the end: its output is swapped in whole).
            let put_index = |file: OutputFile| {
                if mode == Mode::InPlace && superseded() {
                    Err(PipelineError::Superseded)
                } else {
                    put(file)
                }
            };
            Ok(Some(index::search_indexes(&site, &published_base, &put_index)?))
        };
        // A rebuild a newer change supersedes stops here: what it wrote is remembered (see
        // `Memory::wrote`), and the rest is the next rebuild's.
        macro_rules! stop_superseded {
            () => {{
                let written = output.into_written_in_place();
                if let Some(memory) = memory {
                    memory.wrote(written);
                    memory.rendered_all(render::scopes(&site));
                }
                sort_diagnostics(&mut diagnostics);
                return Ok(Outcome {
                    diagnostics,
                    summary: Some(summary),
                    elapsed: started.elapsed(),
                    written: true,
                    timings: clock.laps,
                    base_url: Some(base_url),
                    changed: None,
                    superseded: true,
                });
            }};
        }
        let mut index_times = None;
        let mut paths = if mode == Mode::InPlace {
            // First the pages made from the edited reports (the page the author has open),
            // then the rest of their runs' and systems' pages, then those made from the
            // whole site (the listings of every record).
            let not_site = |scope: render::Scope<'_>| matches!(scope, render::Scope::Site) || up_to_date(scope);
            let mut paths = render::render(&site, &conventions, &theme, &not_site, render::Pages::Of(edited), &emit)?;
            clock.lap("pages of the edited reports");
            let announced = output.changed();
            pages_ready(&announced);
            paths.extend(render::render(&site, &conventions, &theme, &not_site, render::Pages::NotOf(edited), &emit)?);
            clock.lap("other pages of runs and systems");
            let more: Vec<PathBuf> =
                output.changed().into_iter().filter(|p| announced.binary_search(p).is_err()).collect();
            pages_ready(&more);
            if superseded() {
                stop_superseded!();
            }
            paths.extend(render::render(
                &site,
                &conventions,
                &theme,
                &|scope| !matches!(scope, render::Scope::Site),
                render::Pages::All,
                &emit,
            )?);
            if superseded() {
                stop_superseded!();
            }
            paths
        } else {
            // A full build makes the search indexes alongside the pages: they need only the
            // model, and the pages spend much of their time in the file system.
            let (paths, (indexes, manifest)) = rayon::join(
                || render::render(&site, &conventions, &theme, &|_| false, render::Pages::All, &emit),
                || rayon::join(make_indexes, || publish::publish_manifest(&site, &base_url, &put_streamed)),
            );
            index_times = indexes?;
            manifest?;
            paths?
        };
        // Every page, the ones a rebuild kept included, and the assets.
        paths.extend(render::page_paths(&site));
        paths.sort();
        paths.dedup();
        clock.lap(if mode == Mode::InPlace {
            "pages of the whole site"
        } else {
            "pages, and the search indexes alongside"
        });
        summary.pages = paths.iter().filter(|p| p.extension().is_some_and(|e| e == "html")).count();
        diagnostics.extend(publish::check_anchors(
            previous.as_ref(),
            &paths,
            &redirects.entries,
            &redirects.file,
            &redirects.text,
        ));
        // A rebuild writes into the output itself: nothing more once an error is known.
        let clean = !diagnostics.iter().any(Diagnostic::is_error);
        if clean || mode == Mode::Check {
            if mode == Mode::InPlace {
                match publish::publish_manifest(&site, &base_url, &put_streamed) {
                    Err(PipelineError::Superseded) => stop_superseded!(),
                    done => done?,
                }
            }
            publish::publish(&site, &paths, &base_url, &redirects.entries, &put)?;
            clock.lap("publish");
            if mode == Mode::InPlace && clean {
                match make_indexes() {
                    Err(PipelineError::Superseded) => stop_superseded!(),
                    made => index_times = made?,
                }
                clock.lap("search indexes");
            }
        }
        if let Some(times) = index_times {
            clock.laps.push(("  tantivy index", times.tantivy));
            clock.laps.push(("  browser index", times.browser));
        }
        summary.files = paths.len() + more_files.load(std::sync::atomic::Ordering::Relaxed);
        if mode != Mode::Check && clean {
            let finished = output.finish(paths)?;
            written = true;
            changed = finished.changed;
            if let Some(memory) = memory {
                memory.set_written(finished.written);
                memory.set_statics(finished.statics);
                memory.rendered_all(render::scopes(&site));
            }
            clock.lap("write");
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
        changed,
        superseded: false,
    })
}

/// What a rebuild's streamed write stops with when a newer change supersedes it.
#[derive(Debug)]
struct SupersededWrite;

impl std::fmt::Display for SupersededWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a newer change superseded this rebuild")
    }
}

impl std::error::Error for SupersededWrite {}

/// A writer that stops with [`SupersededWrite`] once `superseded` says so, asked every
/// 16 KB (a lock and a look at a channel: nothing next to writing them).
struct Interruptible<'a, 'w> {
    inner: &'a mut (dyn std::io::Write + 'w),
    superseded: &'a (dyn Fn() -> bool + Sync),
    since_asked: usize,
}

impl std::io::Write for Interruptible<'_, '_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.since_asked >= 16 * 1024 {
            self.since_asked = 0;
            if (self.superseded)() {
                return Err(std::io::Error::other(SupersededWrite));
            }
        }
        let written = self.inner.write(bytes)?;
        self.since_asked += written;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Where a build writes: nowhere (`check`), a staging folder swapped in at the end
/// (`build`), or the output folder itself, file by file (a rebuild).
struct Output<'a> {
    staging: Option<write::Staging>,
    in_place: Option<write::InPlace>,
    /// The previous build's files (rebuilds): unchanged bytes are not written again.
    memory: Option<&'a crate::rebuild::Memory>,
    /// Path → hash of every generated file, when a memory is kept.
    hashes: Option<std::sync::Mutex<HashMap<PathBuf, [u8; 32]>>>,
    /// The static files now (when a memory is kept): they take the place of generated
    /// files of the same path.
    statics: HashMap<PathBuf, crate::rebuild::Stamp>,
    static_dir: PathBuf,
    /// The files a rebuild wrote, in the order written.
    changed: std::sync::Mutex<Vec<PathBuf>>,
}

/// What `Output::finish` leaves for the memory.
struct Finished {
    written: HashMap<PathBuf, [u8; 32]>,
    statics: HashMap<PathBuf, crate::rebuild::Stamp>,
    /// What a rebuild wrote or removed; `None` for a build that replaced the folder.
    changed: Option<Vec<PathBuf>>,
}

impl<'a> Output<'a> {
    fn open(
        mode: Mode,
        options: &BuildOptions,
        memory: Option<&'a crate::rebuild::Memory>,
    ) -> Result<Self, PipelineError> {
        let static_dir = options.root.join("static");
        let hashes = memory.map(|_| std::sync::Mutex::new(HashMap::new()));
        let statics =
            if memory.is_some() && mode != Mode::Check { write::static_stamps(&static_dir)? } else { HashMap::new() };
        let (staging, in_place) = match mode {
            Mode::Check => (None, None),
            Mode::Build => (Some(write::Staging::create(&options.output, &options.root)?), None),
            Mode::InPlace => (None, Some(write::InPlace::open(&options.output)?)),
        };
        Ok(Output { staging, in_place, memory, hashes, statics, static_dir, changed: std::sync::Mutex::default() })
    }

    /// The files a rebuild wrote so far, sorted.
    fn changed(&self) -> Vec<PathBuf> {
        let mut changed = self.changed.lock().expect("no writer panics holding the lock").clone();
        changed.sort();
        changed
    }

    fn put(&self, file: OutputFile) -> Result<(), PipelineError> {
        let hash = self.hashes.as_ref().map(|_| crate::rebuild::hash(&file.bytes));
        if let Some(staging) = &self.staging {
            staging.put(&file)?;
        }
        let mut written = false;
        if let (Some(in_place), Some(hash)) = (&self.in_place, &hash) {
            if !self.unchanged(&file.path, hash) {
                in_place.put(&file)?;
                written = true;
            }
        }
        self.record(&file.path, hash, written);
        Ok(())
    }

    /// Whether a rebuild need not write `path`: a static file takes its place, or the
    /// previous build wrote these bytes (by their hash).
    fn unchanged(&self, path: &std::path::Path, hash: &[u8; 32]) -> bool {
        self.statics.contains_key(path) || self.memory.is_some_and(|m| m.holds(path, hash))
    }

    /// Remembers a file made: its hash (when a memory is kept), and that a rebuild wrote it.
    fn record(&self, path: &std::path::Path, hash: Option<[u8; 32]>, written_in_place: bool) {
        if written_in_place {
            self.changed.lock().expect("no writer panics holding the lock").push(path.to_path_buf());
        }
        if let (Some(hashes), Some(hash)) = (&self.hashes, hash) {
            hashes.lock().expect("no writer panics holding the lock").insert(path.to_path_buf(), hash);
        }
    }

    /// [`Output::put`] for files written by streaming, side by side: `write` writes the
    /// bytes of each of `paths`, one writer each.
    fn put_streamed(&self, paths: &[PathBuf], write: &publish::StreamedWrite<'_>) -> Result<(), PipelineError> {
        let hash = self.hashes.is_some();
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            files.push(if let Some(staging) = &self.staging {
                staging.open_streamed(path, hash)?
            } else if let Some(in_place) = &self.in_place {
                in_place.open_streamed(path)?
            } else {
                write::StreamedFile::nowhere(path, hash)
            });
        }
        let mut writers: Vec<&mut dyn std::io::Write> =
            files.iter_mut().map(|f| f as &mut dyn std::io::Write).collect();
        write(&mut writers)
            .map_err(|source| write::WriteError::Io { path: paths.first().cloned().unwrap_or_default(), source })?;
        for (file, path) in files.into_iter().zip(paths) {
            let (hash, written) = file.finish(&|hash| self.unchanged(path, hash))?;
            self.record(path, hash, written && self.in_place.is_some());
        }
        Ok(())
    }

    /// The files a rebuild wrote so far, with their hashes, for a rebuild that stops early.
    fn into_written_in_place(self) -> HashMap<PathBuf, [u8; 32]> {
        let changed: std::collections::HashSet<PathBuf> =
            self.changed.into_inner().expect("no writer panics holding the lock").into_iter().collect();
        let mut hashes =
            self.hashes.map(|h| h.into_inner().expect("no writer panics holding the lock")).unwrap_or_default();
        hashes.retain(|path, _| changed.contains(path));
        hashes
    }

    /// Copies the static files in and swaps the staging folder in (builds), or copies the
    /// changed static files and removes the files the build no longer makes (rebuilds).
    /// `kept` are the pages a rebuild did not render: they stay as they are.
    fn finish(self, kept: Vec<PathBuf>) -> Result<Finished, PipelineError> {
        let mut written =
            self.hashes.map(|h| h.into_inner().expect("no writer panics holding the lock")).unwrap_or_default();
        let mut changed_files = None;
        if let Some(memory) = self.memory {
            for path in kept {
                if let (false, Some(hash)) = (written.contains_key(&path), memory.hash_of(&path)) {
                    written.insert(path, hash);
                }
            }
        }
        if let Some(staging) = self.staging {
            staging.commit(Some(&self.static_dir))?;
        }
        if let (Some(in_place), Some(memory)) = (self.in_place, self.memory) {
            let mut changed = self.changed.into_inner().expect("no writer panics holding the lock");
            changed.extend(in_place.sync_static(&self.static_dir, memory.statics(), &self.statics, &written)?);
            let stale: Vec<&PathBuf> = memory
                .written_paths()
                .filter(|p| !written.contains_key(*p) && !self.statics.contains_key(*p))
                .collect();
            in_place.remove(&stale)?;
            changed.extend(stale.into_iter().cloned());
            changed.sort();
            changed.dedup();
            changed_files = Some(changed);
        }
        // A generated file under a static one is not in the output.
        written.retain(|path, _| !self.statics.contains_key(path));
        Ok(Finished { written, statics: self.statics, changed: changed_files })
    }
}

/// The resolved site at `root`, without rendering, and its configuration: what
/// `casebook diff` compares and the index benchmark indexes. It goes through the build's
/// own parse and resolve ([`load`]), so it is the site a build would publish.
pub fn resolved_site(root: &std::path::Path) -> (Option<(Site, crate::config::SiteConfig)>, Vec<Diagnostic>) {
    let (tree, mut diagnostics) = discover::discover(&content_dir(root));
    let (config, _, conventions) = match parse::parse_config(&tree) {
        Ok(parsed) => parsed,
        Err(d) => {
            diagnostics.push(d);
            sort_diagnostics(&mut diagnostics);
            return (None, diagnostics);
        }
    };
    let (systems, _, found) = load(&tree, &config, &conventions, None, &[], false);
    diagnostics.extend(found);
    parse::parse_redirects(&tree, config.max_file_mib, &mut diagnostics);
    let site = resolve::site(&config, systems.into_iter().map(|(system, _)| system).collect());
    sort_diagnostics(&mut diagnostics);
    (Some((site, config)), diagnostics)
}

/// The record manifest of the site at `root`, without rendering: for `casebook diff`
/// on a content tree. Diagnostics come along; a manifest is made even when some are
/// errors, since a diff of a broken tree is still worth reading.
pub fn manifest_of(
    root: &std::path::Path,
    base_url: Option<&str>,
) -> (Option<crate::manifest::Manifest>, Vec<Diagnostic>) {
    let (resolved, diagnostics) = resolved_site(root);
    let manifest =
        resolved.map(|(site, config)| crate::manifest::manifest(&site, base_url.unwrap_or(&config.base_url)));
    (manifest, diagnostics)
}

/// `root/content`; `content` when the root is the working directory (`./content/x.md`
/// reads worse than `content/x.md` in diagnostics).
fn content_dir(root: &std::path::Path) -> PathBuf {
    if root == std::path::Path::new(".") {
        PathBuf::from("content")
    } else {
        root.join("content")
    }
}

fn summarise(site: &Site) -> Summary {
    let mut s = Summary { systems: site.systems.len(), ..Summary::default() };
    for run in site.systems.iter().flat_map(|system| &system.runs) {
        s.runs += 1;
        s.reports += run.reports.len();
        for record in run.records.values() {
            s.derived_titles += usize::from(record.derived_label.is_some());
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
            s.citations += report.citations.iter().filter(|c| c.path.is_some() || c.section.is_some()).count();
            s.findings += report.findings.len();
        }
    }
    s
}
