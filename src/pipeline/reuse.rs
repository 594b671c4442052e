//! What a build takes from the one before it and leaves for the next: the one interface
//! the stages ask. `check` and `build` take and leave nothing ([`Fresh`]); the dev
//! server's rebuilds keep a [`Memory`] (in `rebuild.rs`), which answers for itself.

use std::path::{Path, PathBuf};

use crate::cache::Warm;
use crate::discover::SourceTree;
use crate::index::IndexParts;
use crate::model::{Diagnostic, Run, Site, System};
use crate::rebuild::{FileHash, Memory, PathMap, RememberedRun, Stamp, Written};
use crate::render::Scope;

use super::output::Finished;

/// The stamps of a run's files, and its slugs: what [`Reuse::reusable_run`] is asked of.
pub(super) struct RunFiles<'a> {
    pub(super) system: &'a str,
    pub(super) run: &'a str,
    /// `run.yaml` and the report files, in order.
    pub(super) files: Vec<&'a PathBuf>,
}

impl RunFiles<'_> {
    /// Each file with its size and modification time now.
    pub(super) fn stamps(&self) -> Vec<(PathBuf, Option<Stamp>)> {
        self.files.iter().map(|p| ((*p).clone(), Stamp::of(p))).collect()
    }
}

/// What a build reuses from the previous one and tells the next.
pub(super) trait Reuse: Sync {
    /// The source tree to build from instead of discovering it: the last build's, after
    /// edits of files it lists (the watcher named them).
    fn kept_tree(&self, changed: &[PathBuf]) -> Option<(SourceTree, Vec<Diagnostic>)>;
    /// The source tree this build discovered.
    fn found_tree(&mut self, tree: &SourceTree, diagnostics: &[Diagnostic]);
    /// The inputs every page is made from.
    fn inputs(&mut self, config_text: &str, theme: [u8; 32], base_url: &str);
    /// The run as the last build left it, when none of its files changed (`trusted`:
    /// only the watcher's `changed` paths count, the others are not looked at).
    fn reusable_run(&self, run: &RunFiles<'_>, changed: &[PathBuf], trusted: bool) -> Option<RememberedRun>;
    /// Whether a run parsed now keeps its files' stamps (for the next build to compare).
    fn stamps_runs(&self) -> bool;
    /// This build's systems (with their `system.yaml` texts) and runs (each with whether
    /// it was parsed now), for the next build.
    fn keep(&mut self, systems: Vec<(String, String)>, runs: Vec<((String, String), RememberedRun, bool)>);
    /// True when the output holds the pages of `scope` as this build would make them.
    fn up_to_date(&self, scope: Scope<'_>) -> bool;
    /// What the output holds of the last build, by file: unchanged bytes are not written.
    fn memory(&self) -> Option<&Memory>;
    /// A rebuild stopped early (a newer change waits, or the anchor contract failed once
    /// the changed pages were written): the files it wrote so far.
    fn stopped(&mut self, written: PathMap<FileHash>, scopes: Vec<Scope<'_>>);
    /// What verification found (nothing when it did not run): pages show it.
    fn verified(&mut self, _verification: Option<&crate::model::Verification>) {}
    /// The previous output, file by file, when a warm cache knows it: a build links its
    /// unchanged files instead of writing them.
    fn warm(&self) -> Option<&Warm> {
        None
    }
    /// The search indexes' and the manifest's files, when the output holds them as this
    /// build would make them: it links them instead.
    fn unchanged_site_files(&self, _site: &Site) -> Option<Vec<PathBuf>> {
        None
    }
    /// The search indexes' parts the last build made (its tantivy segments, by group of
    /// runs), when they are known.
    fn index_parts(&self) -> Option<&IndexParts> {
        None
    }
    /// A token of what a run's search documents are made from: the same only while they
    /// are (`None`: not known, they are made).
    fn run_token(&self, _system: &System, _run: &Run) -> Option<u128> {
        None
    }
    /// Whether the output holds `path` as the last build wrote it.
    fn holds(&self, _path: &Path) -> bool {
        false
    }
    /// The browser index as the last build left it, kept between builds (the dev
    /// server's), which this build updates.
    fn browser(&self) -> Option<&std::sync::Mutex<crate::index::BrowserIndex>> {
        None
    }
    /// The browser index `browser` gave is whole: a build that keeps it on disk for the
    /// next may write it now and let it go.
    fn browser_made(&self) {}
    /// What each run's manifest file of the last build was made from (the dev server and
    /// the build cache keep it), which this build updates.
    fn manifest_parts(&self) -> Option<&std::sync::Mutex<crate::publish::ManifestParts>> {
        None
    }
    /// The paths of the pages of `scope` when the output holds them as this build would
    /// make them (the dev server keeps each scope's list from the last build).
    fn scope_pages(&self, _scope: Scope<'_>) -> Option<std::sync::Arc<[PathBuf]>> {
        None
    }
    /// What the last build made its sitemaps from (the dev server keeps it), which this
    /// build updates.
    fn sitemap_parts(&self) -> Option<&std::sync::Mutex<crate::publish::SitemapParts>> {
        None
    }
    /// A build was written whole; a warning when what it leaves for the next could not be kept.
    fn finished(&mut self, finished: Finished, site: &Site) -> Option<Diagnostic>;
}

/// A build that reuses nothing and leaves nothing (`check`, `build`).
pub(super) struct Fresh;

impl Reuse for Fresh {
    fn kept_tree(&self, _: &[PathBuf]) -> Option<(SourceTree, Vec<Diagnostic>)> {
        None
    }
    fn found_tree(&mut self, _: &SourceTree, _: &[Diagnostic]) {}
    fn inputs(&mut self, _: &str, _: [u8; 32], _: &str) {}
    fn reusable_run(&self, _: &RunFiles<'_>, _: &[PathBuf], _: bool) -> Option<RememberedRun> {
        None
    }
    fn stamps_runs(&self) -> bool {
        false
    }
    fn keep(&mut self, _: Vec<(String, String)>, _: Vec<((String, String), RememberedRun, bool)>) {}
    fn up_to_date(&self, _: Scope<'_>) -> bool {
        false
    }
    fn memory(&self) -> Option<&Memory> {
        None
    }
    fn stopped(&mut self, _: PathMap<FileHash>, _: Vec<Scope<'_>>) {}
    fn finished(&mut self, _: Finished, _: &Site) -> Option<Diagnostic> {
        None
    }
}

impl Reuse for Memory {
    fn kept_tree(&self, changed: &[PathBuf]) -> Option<(SourceTree, Vec<Diagnostic>)> {
        self.tree_after(changed)
    }

    fn found_tree(&mut self, tree: &SourceTree, diagnostics: &[Diagnostic]) {
        self.set_tree(tree.clone(), diagnostics.to_vec());
    }

    fn inputs(&mut self, config_text: &str, theme: [u8; 32], base_url: &str) {
        self.set_global(config_text, theme, base_url);
    }

    fn reusable_run(&self, run: &RunFiles<'_>, changed: &[PathBuf], trusted: bool) -> Option<RememberedRun> {
        // After edits the watcher named, the other runs are trusted unread.
        let checked = if trusted { None } else { Some(run.stamps()) };
        Memory::reusable_run(self, run.system, run.run, &run.files, checked.as_deref(), changed).cloned()
    }

    fn stamps_runs(&self) -> bool {
        true
    }

    fn keep(&mut self, systems: Vec<(String, String)>, runs: Vec<((String, String), RememberedRun, bool)>) {
        self.keep_systems(systems);
        self.keep_runs(runs);
    }

    fn up_to_date(&self, scope: Scope<'_>) -> bool {
        Memory::up_to_date(self, scope)
    }

    fn memory(&self) -> Option<&Memory> {
        Some(self)
    }

    fn stopped(&mut self, written: PathMap<FileHash>, scopes: Vec<Scope<'_>>) {
        self.wrote(written);
        self.rendered_all(scopes, None);
    }

    fn index_parts(&self) -> Option<&IndexParts> {
        Some(Memory::index_parts(self))
    }

    fn run_token(&self, system: &System, run: &Run) -> Option<u128> {
        Memory::run_token(self, system.slug.as_str(), run.slug.as_str())
    }

    fn holds(&self, path: &Path) -> bool {
        self.hash_of(path).is_some()
    }

    fn browser(&self) -> Option<&std::sync::Mutex<crate::index::BrowserIndex>> {
        Some(self.browser_index())
    }

    fn manifest_parts(&self) -> Option<&std::sync::Mutex<crate::publish::ManifestParts>> {
        Some(Memory::manifest_parts(self))
    }

    fn sitemap_parts(&self) -> Option<&std::sync::Mutex<crate::publish::SitemapParts>> {
        Some(Memory::sitemap_parts(self))
    }

    fn scope_pages(&self, scope: Scope<'_>) -> Option<std::sync::Arc<[PathBuf]>> {
        Memory::scope_pages(self, scope)
    }

    fn finished(&mut self, finished: Finished, site: &Site) -> Option<Diagnostic> {
        if let Some(parts) = finished.index_parts {
            self.set_index_parts(parts);
        }
        self.set_output(finished.written, finished.statics);
        self.rendered_all(crate::render::scopes(site), Some(finished.scope_pages));
        None
    }
}

/// A build in another process than the last (`casebook build` with its cache): it parses
/// every run, renders the scopes whose inputs changed, and links the rest from the output
/// it replaces.
impl Reuse for Warm {
    fn kept_tree(&self, _: &[PathBuf]) -> Option<(SourceTree, Vec<Diagnostic>)> {
        None
    }
    fn found_tree(&mut self, _: &SourceTree, _: &[Diagnostic]) {}
    fn inputs(&mut self, config_text: &str, theme: [u8; 32], base_url: &str) {
        self.set_global(config_text, theme, base_url);
    }
    fn reusable_run(&self, run: &RunFiles<'_>, _: &[PathBuf], _: bool) -> Option<RememberedRun> {
        self.note_run(run.system, run.run, &run.files);
        self.cached_run(run.system, run.run)
    }
    fn stamps_runs(&self) -> bool {
        false
    }
    fn keep(&mut self, systems: Vec<(String, String)>, runs: Vec<((String, String), RememberedRun, bool)>) {
        self.note_systems(&systems);
        self.note_parsed(parsed_now(&runs));
    }
    fn up_to_date(&self, scope: Scope<'_>) -> bool {
        Warm::up_to_date(self, scope)
    }
    fn memory(&self) -> Option<&Memory> {
        None
    }
    fn stopped(&mut self, _: PathMap<FileHash>, _: Vec<Scope<'_>>) {}
    fn verified(&mut self, verification: Option<&crate::model::Verification>) {
        self.note_verification(verification);
    }
    fn warm(&self) -> Option<&Warm> {
        Some(self)
    }
    fn unchanged_site_files(&self, site: &Site) -> Option<Vec<PathBuf>> {
        Warm::unchanged_site_files(self, site)
    }
    fn scope_pages(&self, scope: Scope<'_>) -> Option<std::sync::Arc<[PathBuf]>> {
        Warm::scope_pages(self, scope)
    }
    fn index_parts(&self) -> Option<&IndexParts> {
        Some(self.previous_index_parts())
    }
    fn run_token(&self, system: &System, run: &Run) -> Option<u128> {
        self.inputs_of_run(system, run)
    }
    fn holds(&self, path: &Path) -> bool {
        self.reusable(path, None).is_some()
    }
    fn browser(&self) -> Option<&std::sync::Mutex<crate::index::BrowserIndex>> {
        Some(self.browser_index())
    }
    fn browser_made(&self) {
        self.set_browser_index_aside();
    }
    fn manifest_parts(&self) -> Option<&std::sync::Mutex<crate::publish::ManifestParts>> {
        Some(Warm::manifest_parts(self))
    }
    fn finished(&mut self, finished: Finished, site: &Site) -> Option<Diagnostic> {
        if let Some(parts) = finished.index_parts {
            self.set_index_parts(parts);
        }
        // A build with a cache replaces the output folder: it knows every file.
        let Written::Whole(written) = &finished.written else { return None };
        self.save(site, written, &finished.scope_pages)
    }
}

/// The dev server's first build when there is a build cache: the cache answers for the
/// output the server starts from (what to render, what to link), and the memory is filled
/// for the rebuilds that follow, as by any first build.
pub(super) struct Primed<'a> {
    pub(super) memory: &'a mut Memory,
    pub(super) warm: Warm,
}

impl Reuse for Primed<'_> {
    fn kept_tree(&self, changed: &[PathBuf]) -> Option<(SourceTree, Vec<Diagnostic>)> {
        Reuse::kept_tree(&*self.memory, changed)
    }
    fn found_tree(&mut self, tree: &SourceTree, diagnostics: &[Diagnostic]) {
        Reuse::found_tree(self.memory, tree, diagnostics);
    }
    fn inputs(&mut self, config_text: &str, theme: [u8; 32], base_url: &str) {
        Reuse::inputs(self.memory, config_text, theme, base_url);
        Reuse::inputs(&mut self.warm, config_text, theme, base_url);
    }
    fn reusable_run(&self, run: &RunFiles<'_>, changed: &[PathBuf], trusted: bool) -> Option<RememberedRun> {
        let cached = Reuse::reusable_run(&self.warm, run, changed, trusted);
        // A run from the cache gets its files' stamps, for the rebuilds that follow.
        Reuse::reusable_run(&*self.memory, run, changed, trusted)
            .or_else(|| cached.map(|cached| RememberedRun { stamps: run.stamps(), ..cached }))
    }
    fn stamps_runs(&self) -> bool {
        true
    }
    fn keep(&mut self, systems: Vec<(String, String)>, runs: Vec<((String, String), RememberedRun, bool)>) {
        self.warm.note_systems(&systems);
        self.warm.note_parsed(parsed_now(&runs));
        Reuse::keep(self.memory, systems, runs);
    }
    fn up_to_date(&self, scope: Scope<'_>) -> bool {
        self.warm.up_to_date(scope)
    }
    fn memory(&self) -> Option<&Memory> {
        None
    }
    fn stopped(&mut self, written: PathMap<FileHash>, scopes: Vec<Scope<'_>>) {
        Reuse::stopped(self.memory, written, scopes);
    }
    fn verified(&mut self, verification: Option<&crate::model::Verification>) {
        self.warm.note_verification(verification);
    }
    fn warm(&self) -> Option<&Warm> {
        Some(&self.warm)
    }
    fn unchanged_site_files(&self, site: &Site) -> Option<Vec<PathBuf>> {
        self.warm.unchanged_site_files(site)
    }
    fn scope_pages(&self, scope: Scope<'_>) -> Option<std::sync::Arc<[PathBuf]>> {
        self.warm.scope_pages(scope)
    }
    fn index_parts(&self) -> Option<&IndexParts> {
        Reuse::index_parts(&self.warm)
    }
    fn run_token(&self, system: &System, run: &Run) -> Option<u128> {
        Reuse::run_token(&self.warm, system, run)
    }
    fn holds(&self, path: &Path) -> bool {
        Reuse::holds(&self.warm, path)
    }
    fn browser(&self) -> Option<&std::sync::Mutex<crate::index::BrowserIndex>> {
        Some(self.warm.browser_index())
    }
    fn manifest_parts(&self) -> Option<&std::sync::Mutex<crate::publish::ManifestParts>> {
        Some(self.warm.manifest_parts())
    }
    fn finished(&mut self, mut finished: Finished, site: &Site) -> Option<Diagnostic> {
        let made_indexes = finished.index_parts.is_some();
        if let Some(parts) = finished.index_parts.take() {
            // The memory's rebuilds tell runs by their versions, not by the cache's digests.
            let memory = &*self.memory;
            finished.index_parts = Some(parts.rekeyed(&|system, run| memory.run_token(system, run)));
            self.warm.set_index_parts(parts);
        }
        let warning = match &finished.written {
            Written::Whole(written) => self.warm.save(site, written, &finished.scope_pages),
            Written::Changes { .. } => None,
        };
        // Where the manifest holds each run's lines, told by the memory's tokens.
        let mut manifest = self.warm.manifest_parts().lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        manifest.retoken(&|system, run| self.memory.run_token(system, run));
        self.memory.set_manifest_parts(manifest);
        if made_indexes {
            // The browser index the cache kept, updated: the memory's, told by versions.
            let mut browser = self.warm.take_browser_index();
            browser.retoken(&|system, run| self.memory.run_token(system, run));
            self.memory.set_browser_index(browser);
        }
        Reuse::finished(self.memory, finished, site);
        warning
    }
}

/// The runs a build parsed now (not reused), for the build cache to keep.
fn parsed_now(runs: &[((String, String), RememberedRun, bool)]) -> Vec<crate::cache::ParsedRun> {
    runs.iter()
        .filter(|(_, _, fresh)| *fresh)
        .map(|(key, remembered, _)| {
            (key.clone(), std::sync::Arc::clone(&remembered.run), remembered.diagnostics.clone())
        })
        .collect()
}
