//! The pipeline, and the only module that knows the order of the stages:
//! discover → parse → resolve → render → post-process → publish → index → write.
//!
//! `check` runs every stage but writing (and the search indexes); `build` swaps the
//! output in only when no stage reported an error, so the previous output survives any
//! failed build. A full build makes the search indexes alongside the pages. A
//! [`Rebuilder`] (the dev server) goes through the same function with the memory of its
//! previous build, and redoes only what changed (see `rebuild.rs`).

mod load;
mod output;
mod pages;
mod reuse;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::discover::SourceTree;
use crate::model::{sort_diagnostics, BaseUrl, Diagnostic, Publication, Site};
use crate::output::OutputFile;
use crate::progress::{Unwatched, Watch};
use crate::rebuild::{FileHash, Memory};
use crate::render::{self, Theme};
use crate::{discover, parse, postprocess, publish, resolve, write};
use output::{Kind, Output};
use pages::Made;
use reuse::{Fresh, Reuse};

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
    /// Read each quote and citation against its source (`casebook verify`, `--verify`).
    pub verify: Option<crate::verify::VerifyOptions>,
    /// The warm cache's folder (`--cache`; `None`: `--no-cache`): a build renders only
    /// the runs and systems whose inputs changed since the last build into this output,
    /// and links every unchanged file from it.
    pub cache: Option<PathBuf>,
    /// A site without a report may replace a published one (`--allow-empty`).
    pub allow_empty: bool,
}

impl BuildOptions {
    /// Options for the site at `root`, written to `root/public`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let output = if root == std::path::Path::new(".") { PathBuf::from("public") } else { root.join("public") };
        BuildOptions {
            output,
            root,
            base_url: None,
            previous_manifest: None,
            search_index: true,
            strict: false,
            verify: None,
            cache: None,
            allow_empty: false,
        }
    }
}

/// Counts for the end-of-build summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
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
    /// Limits: what the reports say they did not inspect or establish.
    pub limits: usize,
    /// Places that look like a convention but produced nothing (notes; errors with
    /// `--strict`).
    pub not_understood: usize,
    /// Records whose title is derived (they have no label).
    pub derived_titles: usize,
    /// HTML pages.
    pub pages: usize,
    /// Files written (pages, assets, static files).
    pub files: usize,
    /// Whether each record has a page of its own (`record_pages`).
    pub record_pages: crate::model::RecordPages,
    /// Whether each system has a page per status (`status_pages`).
    pub status_pages: crate::model::StatusPages,
    /// How the search page's index is split into files (`search`).
    pub search_files: crate::model::SearchFiles,
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
    pub base_url: Option<BaseUrl>,
    /// The output files a rebuild wrote or removed (paths below the output folder), in
    /// order; `None` when the whole output folder was replaced.
    pub changed: Option<Vec<PathBuf>>,
    /// True when a rebuild stopped early for a newer change
    /// ([`Rebuilder::rebuild_unless_superseded`]): the output is not yet a whole build.
    pub superseded: bool,
    /// What verification found, when it ran (`casebook verify`, `--verify`).
    pub verification: Option<crate::model::Verification>,
}

/// Wall time per stage.
struct Stopwatch {
    started: Instant,
    last: Instant,
    laps: Vec<(&'static str, Duration)>,
}

impl Stopwatch {
    fn start() -> Self {
        let now = Instant::now();
        Stopwatch { started: now, last: now, laps: Vec::new() }
    }

    /// Ends the stage `name`.
    fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.laps.push((name, now - self.last));
        self.last = now;
    }

    /// The outcome of a build that wrote nothing (the caller says otherwise), its
    /// diagnostics sorted.
    fn outcome(self, mut diagnostics: Vec<Diagnostic>, summary: Option<Summary>, base_url: Option<BaseUrl>) -> Outcome {
        sort_diagnostics(&mut diagnostics);
        Outcome {
            diagnostics,
            summary,
            elapsed: self.started.elapsed(),
            written: false,
            timings: self.laps,
            base_url,
            changed: None,
            superseded: false,
            verification: None,
        }
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
    check_watched(options, &Unwatched)
}

/// Runs every stage; writes the output when there is no error.
pub fn build(options: &BuildOptions) -> Result<Outcome, PipelineError> {
    build_watched(options, &Unwatched)
}

/// [`check`], telling `watch` each stage and how far it is.
pub fn check_watched(options: &BuildOptions, watch: &dyn Watch) -> Result<Outcome, PipelineError> {
    run(options, Kind::Check, &mut Fresh, &[], Progress { pages_ready: &mut |_| {}, superseded: &|| false, watch })
}

/// [`build`], telling `watch` each stage and how far it is.
pub fn build_watched(options: &BuildOptions, watch: &dyn Watch) -> Result<Outcome, PipelineError> {
    let progress = Progress { pages_ready: &mut |_| {}, superseded: &|| false, watch };
    match &options.cache {
        Some(dir) => {
            crate::write::check_cache_folder(dir, &options.root)?;
            let mut warm = crate::cache::Warm::open(dir, &options.output, options.search_index);
            run(options, Kind::Build, &mut warm, &[], progress)
        }
        None => run(options, Kind::Build, &mut Fresh, &[], progress),
    }
}

/// Builds again and again, redoing only what changed (the dev server): the first call is
/// a full build, swapped in like any other; later calls reuse the runs whose files did not
/// change, render only the pages whose inputs changed, and write into the output folder
/// only the files whose bytes changed, so that it ends byte for byte as a clean build
/// would leave it. A call that finds errors in the content writes nothing, but for the
/// anchor contract's (a redirect to no page, a published record gone), which are found
/// once the changed pages are written: those pages stay, and the next call makes the
/// output whole.
#[derive(Debug)]
pub struct Rebuilder {
    options: BuildOptions,
    memory: Memory,
}

impl Rebuilder {
    /// A rebuilder for the site of `options`.
    pub fn new(options: BuildOptions) -> Self {
        Rebuilder { options, memory: Memory::default() }
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
        let progress = Progress { pages_ready, superseded, watch: &Unwatched };
        let result = match (&self.options.cache, self.memory.complete) {
            (_, true) => run(&self.options, Kind::InPlace, &mut self.memory, changed, progress),
            // The first build starts from the output and build cache the last left.
            (Some(dir), false) => {
                crate::write::check_cache_folder(dir, &self.options.root)?;
                let warm = crate::cache::Warm::open(dir, &self.options.output, self.options.search_index);
                run(
                    &self.options,
                    Kind::Build,
                    &mut reuse::Primed { memory: &mut self.memory, warm },
                    changed,
                    progress,
                )
            }
            (None, false) => run(&self.options, Kind::Build, &mut self.memory, changed, progress),
        };
        if result.is_err() {
            // The output may hold part of this build: start again from a full one.
            self.memory = Memory::default();
        }
        result
    }
}

/// What a rebuild tells and asks the dev server as it goes: which pages are written, and
/// whether a newer change waits; and what a build tells whoever watches its stages. A full
/// build tells no one which pages are written and is never superseded.
struct Progress<'a> {
    pages_ready: &'a mut dyn FnMut(&[PathBuf]),
    superseded: &'a (dyn Fn() -> bool + Sync),
    watch: &'a dyn Watch,
}

/// The inputs every page is made from, read once.
struct Inputs {
    config: crate::config::SiteConfig,
    conventions: crate::recognise::Conventions,
    theme: Option<Theme>,
    base_url: BaseUrl,
}

/// A build as its stages, in order: discover, read the configuration and theme, parse
/// and resolve (reusing what `reuse` holds), check, then render and index, publish and
/// write. A rebuild (`Kind::InPlace`) writes the pages of the edited reports first and may
/// stop when `progress` says a newer change waits.
fn run(
    options: &BuildOptions,
    kind: Kind,
    reuse: &mut dyn Reuse,
    changed: &[PathBuf],
    progress: Progress<'_>,
) -> Result<Outcome, PipelineError> {
    let mut clock = Stopwatch::start();
    let watch = progress.watch;
    watch.stage("reading", 0);
    let (tree, mut diagnostics, trusted) = sources(options, reuse, changed);
    clock.lap("discover");
    let Some(inputs) = inputs(options, &tree, reuse, &mut diagnostics) else {
        return Ok(clock.outcome(diagnostics, None, None));
    };
    watch.stage("parsing", tree.run_files());
    let loaded = load::load(&tree, &inputs.config, &inputs.conventions, reuse, changed, trusted, watch);
    diagnostics.extend(loaded.diagnostics);
    let redirects = parse::parse_redirects(&tree, inputs.config.max_file_mib, &mut diagnostics);
    clock.lap("parse, resolve");
    let site = assemble(&inputs.config, loaded.systems, loaded.runs, reuse);
    let previous = previous_manifest(options)?;
    let mut summary = checks(options, &site, &mut diagnostics);
    diagnostics.extend(empty_site(options, &summary).filter(|_| kind == Kind::Build));
    let verification = verification(options, &inputs.config, &site, &mut diagnostics, watch);
    if verification.is_some() {
        clock.lap("verify");
    }
    reuse.verified(verification.as_ref());
    let Some(theme) = inputs.theme.as_ref().filter(|_| !diagnostics.iter().any(Diagnostic::is_error)) else {
        let mut outcome = clock.outcome(diagnostics, Some(summary), Some(inputs.base_url));
        outcome.verification = verification;
        return Ok(outcome);
    };
    let files = Files::open(kind, options, (reuse.memory(), reuse.warm()), &inputs.base_url, progress.superseded)?;
    let cx = PageContext {
        site: &site,
        conventions: &inputs.conventions,
        theme,
        options,
        base_url: &inputs.base_url,
        files: &files,
        verification: verification.as_ref(),
        kind,
        reuse: &*reuse,
    };
    let made = match kind {
        Kind::InPlace => pages::changed_pages(&cx, &*reuse, changed, progress, &mut clock)?,
        Kind::Check | Kind::Build => Some(pages::all_pages(&cx, &*reuse, watch)?),
    };
    let Some(made) = made else {
        let written = files.output.into_written_in_place();
        return Ok(stopped(written, reuse, &site, clock, diagnostics, summary, inputs.base_url));
    };
    watch.stage("publishing", 0);
    let published =
        publish_stage(&cx, made, previous.as_ref(), &redirects, &mut diagnostics, &mut summary, &mut clock)?;
    let Some(Made { mut paths, indexed }) = published else {
        let written = files.output.into_written_in_place();
        return Ok(stopped(written, reuse, &site, clock, diagnostics, summary, inputs.base_url));
    };
    let index_parts = indexed.map(|indexed| indexed.account(&mut clock, &mut paths));
    summary.files = paths.len() + files.more();
    // A rebuild writes into the output itself: nothing once an error is known.
    let written = kind != Kind::Check && !diagnostics.iter().any(Diagnostic::is_error);
    if written {
        watch.stage("writing", 0);
    }
    let ending = if written { Ok(files.output.finish(paths)?) } else { Err(files.output.into_written_in_place()) };
    let changed_files = write_stage(ending, index_parts, kind, reuse, &site, &mut diagnostics);
    if written {
        clock.lap("write");
    }
    let mut outcome = clock.outcome(diagnostics, Some(summary), Some(inputs.base_url));
    outcome.written = written;
    outcome.changed = changed_files;
    outcome.verification = verification;
    Ok(outcome)
}

/// The write stage's end: what the output holds told to `reuse` (`ending`: the build
/// finished, or what a rebuild that found an error wrote in place); gives the files a
/// rebuild changed. A rebuild that the anchor contract failed (the only error found once
/// the changed pages are written) tells `reuse` what it wrote, so the next is exact.
fn write_stage(
    ending: Result<output::Finished, crate::rebuild::PathMap<FileHash>>,
    index_parts: Option<crate::index::IndexParts>,
    kind: Kind,
    reuse: &mut dyn Reuse,
    site: &Site,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<PathBuf>> {
    match ending {
        Ok(mut finished) => {
            finished.index_parts = index_parts;
            let changed = finished.changed.clone();
            diagnostics.extend(reuse.finished(finished, site));
            changed
        }
        Err(written) => {
            if kind == Kind::InPlace {
                reuse.stopped(written, render::scopes(site));
            }
            None
        }
    }
}

impl crate::index::Indexed {
    /// The indexes' times as laps, and the files they kept among the build's (a rebuild
    /// leaves them as they are, a warm build links them); gives the parts for the next build.
    fn account(self, clock: &mut Stopwatch, paths: &mut crate::output::Paths) -> crate::index::IndexParts {
        clock.laps.push(("  tantivy index", self.times.tantivy));
        clock.laps.push(("  browser index", self.times.browser));
        paths.extend(self.kept);
        self.parts
    }
}

/// The verify stage, when the options ask for it: `sources_dir` of casebook.yaml (below
/// the root) unless the command line named a folder of clones.
fn verification(
    options: &BuildOptions,
    config: &crate::config::SiteConfig,
    site: &Site,
    diagnostics: &mut Vec<Diagnostic>,
    watch: &dyn Watch,
) -> Option<crate::model::Verification> {
    let mut verify = options.verify.clone()?;
    if verify.repositories.dir.is_none() {
        verify.repositories.dir = config.sources_dir.as_ref().map(|dir| options.root.join(dir));
    }
    let (verification, found) = crate::verify::verify(site, &verify, watch);
    diagnostics.extend(found);
    Some(verification)
}

/// The publish stage: every page's path (the ones a rebuild kept included) checked
/// against the anchor contract, then the files made from the page list (sitemap, feeds,
/// redirects) and, in a rebuild, side by side with them, the manifest and the search
/// indexes (a full build made those alongside the pages). `None` when a newer change
/// superseded the rebuild.
fn publish_stage(
    cx: &PageContext<'_>,
    made: Made,
    previous: Option<&crate::manifest::Manifest>,
    redirects: &parse::Redirects,
    diagnostics: &mut Vec<Diagnostic>,
    summary: &mut Summary,
    clock: &mut Stopwatch,
) -> Result<Option<Made>, PipelineError> {
    let Made { mut paths, mut indexed } = made;
    summary.pages = paths.iter().filter(|p| p.extension().is_some_and(|e| e == "html")).count();
    summary.record_pages = cx.site.record_pages;
    summary.status_pages = cx.site.status_pages;
    summary.search_files = cx.site.search_files;
    let in_place = cx.kind == Kind::InPlace;
    clock.lap(if in_place { "the list of pages" } else { "pages, and the search indexes alongside" });
    diagnostics.extend(publish::check_anchors(
        previous,
        cx.site,
        paths.iter(),
        &redirects.entries,
        &redirects.file,
        &redirects.text,
    ));
    // A rebuild writes into the output itself: nothing more once an error is known.
    let clean = !diagnostics.iter().any(Diagnostic::is_error);
    if !clean && cx.kind != Kind::Check {
        return Ok(Some(Made { paths, indexed }));
    }
    if in_place {
        // What the whole site makes, side by side: the files made from the page list, the
        // manifest and the search indexes (a full build made the last two with the pages).
        let (published, (manifest, indexes)) = rayon::join(
            || pages::publish(cx, &paths, redirects),
            || rayon::join(|| pages::manifest(cx), || pages::indexes(cx)),
        );
        let kept_sitemaps = published?;
        if matches!(manifest, Err(PipelineError::Superseded)) || matches!(indexes, Err(PipelineError::Superseded)) {
            return Ok(None);
        }
        paths.extend(manifest?);
        paths.extend(kept_sitemaps);
        indexed = indexes?;
        clock.lap("publish, the manifest and the search indexes");
        return Ok(Some(Made { paths, indexed }));
    }
    let kept_sitemaps = pages::publish(cx, &paths, redirects)?;
    paths.extend(kept_sitemaps);
    clock.lap("publish");
    Ok(Some(Made { paths, indexed }))
}

/// The discover stage: the source tree, found now or kept from the last build (after
/// edits of files it lists: then the watcher is `trusted` for the others).
fn sources(options: &BuildOptions, reuse: &mut dyn Reuse, changed: &[PathBuf]) -> (SourceTree, Vec<Diagnostic>, bool) {
    if let Some((tree, diagnostics)) = reuse.kept_tree(changed) {
        return (tree, diagnostics, true);
    }
    let (tree, found) = discover::discover(&content_dir(&options.root));
    reuse.found_tree(&tree, &found);
    (tree, found, false)
}

/// The configuration (and the conventions it sets), the theme and the base URL; `None`
/// when the configuration is unusable (its diagnostic is added).
fn inputs(
    options: &BuildOptions,
    tree: &SourceTree,
    reuse: &mut dyn Reuse,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Inputs> {
    let (config, config_text, conventions) = match parse::parse_config(tree) {
        Ok(parsed) => parsed,
        Err(d) => {
            diagnostics.push(d);
            return None;
        }
    };
    let base_url = BaseUrl::new(options.base_url.as_deref().unwrap_or(&config.base_url));
    let theme = match Theme::load(&options.root, &config.theme) {
        Ok(theme) => Some(theme),
        Err(d) => {
            diagnostics.push(d);
            None
        }
    };
    let look = pages_look(theme.as_ref().map(Theme::fingerprint).unwrap_or_default(), &options.root.join("static"));
    reuse.inputs(&config_text, look, base_url.as_str());
    Some(Inputs { config, conventions, theme, base_url })
}

/// What every page is made with besides the configuration: the theme, and which pages a
/// static file stands in for (the static HTML files' paths). A static page put over a
/// page, or taken away, is then a change of every page: the page under it is made again
/// even in a scope nothing else changed.
fn pages_look(theme: [u8; 32], static_dir: &std::path::Path) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    // A static folder that cannot be read is the output's error to report (`Output::open`).
    let statics = crate::write::static_stamps(static_dir).unwrap_or_default();
    let mut pages: Vec<&PathBuf> =
        statics.keys().filter(|path| path.extension().is_some_and(|e| e == "html")).collect();
    if pages.is_empty() {
        return theme;
    }
    pages.sort();
    let mut hasher = Sha256::new();
    hasher.update(theme);
    for page in pages {
        hasher.update(page.as_os_str().as_encoded_bytes());
        hasher.update([0]);
    }
    hasher.finalize().into()
}

/// The resolved site from its systems and runs; `reuse` keeps them for the next build.
fn assemble(
    config: &crate::config::SiteConfig,
    systems: Vec<(crate::model::System, String)>,
    runs: Vec<load::LoadedRun>,
    reuse: &mut dyn Reuse,
) -> Site {
    reuse.keep(
        systems.iter().map(|(system, text)| (system.slug.to_string(), text.clone())).collect(),
        runs.into_iter().map(|r| ((r.system, r.remembered.run.slug.to_string()), r.remembered, r.fresh)).collect(),
    );
    resolve::site(config, systems.into_iter().map(|(system, _)| system).collect())
}

/// The manifest of the previously published site, when the options name one.
fn previous_manifest(options: &BuildOptions) -> Result<Option<crate::manifest::Manifest>, PipelineError> {
    let Some(path) = &options.previous_manifest else { return Ok(None) };
    let manifest = crate::manifest::Manifest::read(path)
        .map_err(|message| PipelineError::PreviousManifest { path: path.clone(), message })?;
    Ok(Some(manifest))
}

/// The checks of the whole site that need no page: quotes without a grammar, links that
/// lead nowhere and what was not understood (the last two errors with `--strict`). Returns the summary's counts.
fn checks(options: &BuildOptions, site: &Site, diagnostics: &mut Vec<Diagnostic>) -> Summary {
    diagnostics.extend(render::language_warnings(site));
    diagnostics.extend(crate::links::check(site, &crate::links::SiteLinks::of(site)));
    let mut summary = summarise(site);
    summary.not_understood = diagnostics.iter().filter(|d| d.is_not_understood()).count();
    if options.strict {
        let strict = |d: &Diagnostic| d.is_not_understood() || d.code == crate::model::Code::BrokenLink;
        for d in diagnostics.iter_mut().filter(|d| strict(d)) {
            d.severity = crate::model::Severity::Error;
        }
    }
    summary
}

/// A site without a single report would replace a published one, the likely work of a
/// wrong `--root` or an emptied `content/`: an error, unless `--allow-empty` says so.
fn empty_site(options: &BuildOptions, summary: &Summary) -> Option<Diagnostic> {
    let published = std::fs::read_dir(&options.output).is_ok_and(|mut entries| entries.next().is_some());
    if summary.reports > 0 || !published || options.allow_empty {
        return None;
    }
    let content = content_dir(&options.root);
    Some(
        Diagnostic::error(
            crate::model::Code::EmptySite,
            crate::model::Location::file(&content),
            format!(
                "{} holds no report, and building it would replace the site in {}",
                content.display(),
                options.output.display()
            ),
        )
        .with_help(
            "check --root (the folder holding content/); to publish an empty site on purpose, build with --allow-empty",
        ),
    )
}

/// A rebuild that a newer change superseded stops: what it wrote is remembered (see
/// `Memory::wrote`), and the rest is the next rebuild's.
fn stopped(
    written: crate::rebuild::PathMap<FileHash>,
    reuse: &mut dyn Reuse,
    site: &Site,
    clock: Stopwatch,
    diagnostics: Vec<Diagnostic>,
    summary: Summary,
    base_url: BaseUrl,
) -> Outcome {
    reuse.stopped(written, render::scopes(site));
    let mut outcome = clock.outcome(diagnostics, Some(summary), Some(base_url));
    outcome.written = true;
    outcome.superseded = true;
    outcome
}

/// The build's files on their way to the output: pages through post-processing, others
/// as they are, large ones streamed, each counted. A rebuild's streamed files and search
/// indexes stop when a newer change waits; a full build's go to the end (its output is
/// swapped in whole).
struct Files<'a> {
    output: Output<'a>,
    /// The base path pages are post-processed for.
    base: String,
    /// Files made besides the pages and assets (`render` counts those).
    more: AtomicUsize,
    /// For a rebuild in place: whether a newer change waits.
    superseded: Option<&'a (dyn Fn() -> bool + Sync)>,
}

impl<'a> Files<'a> {
    fn open(
        kind: Kind,
        options: &BuildOptions,
        (memory, warm): (Option<&'a Memory>, Option<&'a crate::cache::Warm>),
        base_url: &BaseUrl,
        superseded: &'a (dyn Fn() -> bool + Sync),
    ) -> Result<Self, PipelineError> {
        Ok(Files {
            output: Output::open(kind, options, memory, warm)?,
            base: base_url.path().to_string(),
            more: AtomicUsize::new(0),
            superseded: (kind == Kind::InPlace).then_some(superseded),
        })
    }

    /// A page: post-processed, then to the output. Pages go as they are rendered: a large
    /// site is never held in memory. `check` renders the same pages and drops them.
    fn page(&self, mut file: OutputFile) -> Result<(), PipelineError> {
        postprocess::postprocess(&mut file, &self.base)?;
        self.output.put(file)
    }

    /// Another file (a feed, a search index's file): to the output as it is made.
    fn put(&self, file: OutputFile) -> Result<(), PipelineError> {
        self.more.fetch_add(1, Ordering::Relaxed);
        self.output.put(file)
    }

    /// Files the previous output holds as this build would make them (the warm cache
    /// says so): linked from it.
    fn previous(&self, paths: &[PathBuf]) -> Result<(), PipelineError> {
        self.more.fetch_add(paths.len(), Ordering::Relaxed);
        self.output.link_previous(paths)
    }

    /// A file made from the whole site (a search index's, the manifest's); a rebuild's
    /// stops between files when a newer change waits.
    fn put_site_wide(&self, file: OutputFile) -> Result<(), PipelineError> {
        if self.superseded.is_some_and(|superseded| superseded()) {
            return Err(PipelineError::Superseded);
        }
        self.put(file)
    }

    fn more(&self) -> usize {
        self.more.load(Ordering::Relaxed)
    }
}

/// What the pages stage works with.
struct PageContext<'a> {
    site: &'a Site,
    conventions: &'a crate::recognise::Conventions,
    theme: &'a Theme,
    options: &'a BuildOptions,
    base_url: &'a BaseUrl,
    files: &'a Files<'a>,
    verification: Option<&'a crate::model::Verification>,
    kind: Kind,
    /// What the previous build left (the search indexes keep what did not change).
    reuse: &'a dyn Reuse,
}

impl PageContext<'_> {
    /// What render makes the pages from.
    fn page_inputs(&self) -> render::PageInputs<'_> {
        render::PageInputs {
            site: self.site,
            conventions: self.conventions,
            theme: self.theme,
            verification: self.verification,
        }
    }

    /// The base URL pages and the manifest are made for.
    fn site_base_url(&self) -> &BaseUrl {
        self.base_url
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
    let loaded = load::load(&tree, &config, &conventions, &Fresh, &[], false, &Unwatched);
    diagnostics.extend(loaded.diagnostics);
    let systems = loaded.systems;
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
    let manifest = resolved.map(|(site, config)| {
        let base_url = BaseUrl::new(base_url.unwrap_or(&config.base_url));
        crate::manifest::manifest(&site, &publish::published_base(&base_url))
    });
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
            s.limits += report.limits.len();
        }
    }
    s
}
