//! What one build keeps for the next, so that the dev server's rebuilds redo only what a
//! change touched and still write exactly what a clean build would.
//!
//! - Runs are the unit of reuse: a run's pages and records depend only on its own files
//!   (references never cross runs), the site's configuration and its system's name. A
//!   run whose files have the same size and modification time, and that the watcher did
//!   not name, keeps its parsed and resolved `Run`. After edits of files the last build
//!   knew (no file added or removed), the source tree is kept and only the runs the
//!   watcher named are read again: the watcher is trusted for the others.
//! - Every run, system and the site's global inputs (configuration, theme and the static
//!   pages that stand in for generated ones, base URL) carry a version, bumped when they
//!   change. The pages of a scope are rendered again only when the versions they were
//!   last rendered from differ (`up_to_date`).
//! - Every file written is remembered by a hash of its bytes: a rebuild writes only files
//!   whose bytes changed and deletes the files no longer made.
//!
//! Pages made from the whole site (home, statuses) and feeds are made again on every
//! rebuild; only their unchanged files are not rewritten. The tantivy index keeps the
//! segments of each group of runs that did not change (`index::IndexParts`, keyed by
//! `run_token`), the manifest and the browser index each run's part, and the sitemaps
//! are kept while the site's pages have the same URLs (`publish::SitemapParts`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::model::{Diagnostic, Run};
use crate::render::Scope;

/// A file's size and modification time: when both are unchanged, so is the file (the
/// watcher names the files it saw change, which covers edits within one clock tick).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    /// The stamp of the file at `path`, if it exists.
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp { len: meta.len(), modified: meta.modified().ok() })
    }
}

/// A system's scope (`None`) or a run's, by slugs.
type ScopeKey = (String, Option<String>);

/// A run as the previous build left it.
#[derive(Debug, Clone)]
pub(crate) struct RememberedRun {
    /// `run.yaml` and the report files, in order, with their stamps.
    pub(crate) stamps: Vec<(PathBuf, Option<Stamp>)>,
    pub(crate) run: Arc<Run>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) version: u64,
}

/// What a build keeps for the next one (`pipeline::Rebuilder`).
#[derive(Debug, Default)]
pub struct Memory {
    /// A hash of `casebook.yaml`: runs are parsed with it.
    config: Option<[u8; 32]>,
    /// A hash of the configuration, theme and base URL: every page is made with them.
    global: Option<[u8; 32]>,
    global_version: u64,
    next_version: u64,
    /// System slug → the text of its `system.yaml` and its version.
    systems: HashMap<String, (String, u64)>,
    /// (system, run) → the run.
    runs: HashMap<(String, String), RememberedRun>,
    /// Scope → the versions its pages were last written from, and their paths.
    rendered: HashMap<ScopeKey, Rendered>,
    /// The generated files in the output, by [`path_id`]: a rebuild looks up every page
    /// of a large site, and a key held in the table itself needs no visit to the path's
    /// memory, nor a walk over its components to hash it.
    written: HashMap<PathId, Held, rustc_hash::FxBuildHasher>,
    /// The last mark [`Memory::mark_kept`] set (a rebuild's).
    mark: AtomicU64,
    /// Output path → stamp of the static file copied there.
    statics: PathMap<Stamp>,
    /// True once the output folder holds a complete build this memory describes.
    pub(crate) complete: bool,
    /// The source tree the last build found, with its diagnostics.
    tree: Option<(crate::discover::SourceTree, Vec<Diagnostic>)>,
    /// The search indexes' parts the last build made, keyed by [`Memory::run_token`]s.
    index_parts: crate::index::IndexParts,
    /// The browser index as the last build left it (its runs' tokens are `run_token`s).
    browser: std::sync::Mutex<crate::index::BrowserIndex>,
    /// What each run's manifest file in the output was made from (by `run_token`s).
    manifest_parts: std::sync::Mutex<crate::publish::ManifestParts>,
    /// What the sitemaps in the output were made from.
    sitemap_parts: std::sync::Mutex<crate::publish::SitemapParts>,
}

impl Memory {
    fn version(&mut self) -> u64 {
        self.next_version += 1;
        self.next_version
    }

    /// Records the configuration, theme and base URL. A new configuration drops every
    /// remembered run (their parsing depends on it).
    pub(crate) fn set_global(&mut self, config_text: &str, theme: [u8; 32], base_url: &str) {
        let config: [u8; 32] = Sha256::digest(config_text.as_bytes()).into();
        if self.config != Some(config) {
            self.config = Some(config);
            self.runs.clear();
        }
        let mut hasher = Sha256::new();
        hasher.update(config);
        hasher.update(theme);
        hasher.update(base_url.as_bytes());
        let global: [u8; 32] = hasher.finalize().into();
        if self.global != Some(global) {
            self.global = Some(global);
            self.global_version = self.version();
        }
    }

    /// The source tree of the last build, when `changed` are all edits of files it lists
    /// (a file added or removed anywhere, or any other file, needs the tree found anew).
    /// The watcher names every file it sees change, so the other files are trusted as
    /// they were.
    pub(crate) fn tree_after(&self, changed: &[PathBuf]) -> Option<(crate::discover::SourceTree, Vec<Diagnostic>)> {
        let (tree, diagnostics) = self.tree.as_ref()?;
        let edits_only = !changed.is_empty() && changed.iter().all(|path| path.is_file() && tree.lists(path));
        edits_only.then(|| (tree.clone(), diagnostics.clone()))
    }

    pub(crate) fn set_tree(&mut self, tree: crate::discover::SourceTree, diagnostics: Vec<Diagnostic>) {
        self.tree = Some((tree, diagnostics));
    }

    /// The run as remembered, if none of its files changed: by the watcher's word alone
    /// (`stamps` is `None`), or also by size and modification time.
    pub(crate) fn reusable_run(
        &self,
        system: &str,
        run: &str,
        files: &[&PathBuf],
        stamps: Option<&[(PathBuf, Option<Stamp>)]>,
        changed: &[PathBuf],
    ) -> Option<&RememberedRun> {
        let remembered = self.runs.get(&(system.to_string(), run.to_string()))?;
        let named = files.iter().any(|path| changed.iter().any(|c| c == *path));
        let same = !named && stamps.is_none_or(|stamps| remembered.stamps == stamps);
        same.then_some(remembered)
    }

    /// Keeps the runs of this build (and forgets the others), giving a new version to
    /// each run that was parsed again.
    pub(crate) fn keep_runs(&mut self, runs: Vec<((String, String), RememberedRun, bool)>) {
        let mut kept = HashMap::with_capacity(runs.len());
        for (key, mut run, fresh) in runs {
            if fresh {
                run.version = self.version();
            }
            kept.insert(key, run);
        }
        self.runs = kept;
    }

    /// What a run's search documents are made from, as versions: the configuration,
    /// theme and base URL, its system's `system.yaml`, and its files (`None` for a run
    /// this memory does not hold).
    pub(crate) fn run_token(&self, system: &str, run: &str) -> Option<u128> {
        let run = self.runs.get(&(system.to_string(), run.to_string()))?.version;
        let system = self.systems.get(system)?.1;
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for version in [self.global_version, system, run] {
            hasher.update(&version.to_le_bytes());
        }
        Some(hasher.digest128())
    }

    /// The search indexes' parts the last build made.
    pub(crate) fn index_parts(&self) -> &crate::index::IndexParts {
        &self.index_parts
    }

    pub(crate) fn set_index_parts(&mut self, parts: crate::index::IndexParts) {
        self.index_parts = parts;
    }

    /// The browser index the last build left, for the next to update.
    pub(crate) fn browser_index(&self) -> &std::sync::Mutex<crate::index::BrowserIndex> {
        &self.browser
    }

    pub(crate) fn set_browser_index(&mut self, browser: crate::index::BrowserIndex) {
        self.browser = std::sync::Mutex::new(browser);
    }

    /// What each run's manifest file in the output was made from, for the next build.
    pub(crate) fn manifest_parts(&self) -> &std::sync::Mutex<crate::publish::ManifestParts> {
        &self.manifest_parts
    }

    pub(crate) fn set_manifest_parts(&mut self, parts: crate::publish::ManifestParts) {
        self.manifest_parts = std::sync::Mutex::new(parts);
    }

    /// What the sitemaps in the output were made from, for the next build.
    pub(crate) fn sitemap_parts(&self) -> &std::sync::Mutex<crate::publish::SitemapParts> {
        &self.sitemap_parts
    }

    /// The version of a run (0 for a run this memory does not hold).
    pub(crate) fn run_version(&self, system: &str, run: &str) -> u64 {
        self.runs.get(&(system.to_string(), run.to_string())).map_or(0, |r| r.version)
    }

    /// Keeps the `system.yaml` texts of this build, giving a new version to each changed one.
    pub(crate) fn keep_systems(&mut self, systems: Vec<(String, String)>) {
        let mut kept = HashMap::with_capacity(systems.len());
        for (slug, text) in systems {
            let version = match self.systems.get(&slug) {
                Some((old, version)) if *old == text => *version,
                _ => self.version(),
            };
            kept.insert(slug, (text, version));
        }
        self.systems = kept;
    }

    /// The versions the pages of `scope` are made from.
    fn versions(&self, scope: Scope<'_>) -> Option<(ScopeKey, Vec<u64>)> {
        match scope {
            Scope::Site => None,
            Scope::System(system) => {
                let mut versions = vec![self.global_version, self.systems.get(system.slug.as_str()).map_or(0, |s| s.1)];
                versions.extend(system.runs.iter().map(|run| self.run_version(&system.slug, &run.slug)));
                Some(((system.slug.to_string(), None), versions))
            }
            Scope::Run(system, run) => {
                let versions = vec![
                    self.global_version,
                    self.systems.get(system.slug.as_str()).map_or(0, |s| s.1),
                    self.run_version(&system.slug, &run.slug),
                ];
                Some(((system.slug.to_string(), Some(run.slug.to_string())), versions))
            }
        }
    }

    /// True when the pages of `scope` in the output were made from what this build has.
    pub(crate) fn up_to_date(&self, scope: Scope<'_>) -> bool {
        self.rendered_now(scope).is_some()
    }

    /// What the output holds of `scope`'s pages, when they were made from what this build has.
    fn rendered_now(&self, scope: Scope<'_>) -> Option<&Rendered> {
        let (key, versions) = self.versions(scope).filter(|_| self.complete)?;
        self.rendered.get(&key).filter(|rendered| rendered.versions == versions)
    }

    /// The paths of the pages of `scope`, when the output holds them as this build would
    /// make them.
    pub(crate) fn scope_pages(&self, scope: Scope<'_>) -> Option<Arc<[PathBuf]>> {
        self.rendered_now(scope)?.pages.clone()
    }

    /// After a build is written: every scope's pages are now those of this build, with
    /// their paths (a list per scope, in the order of `scopes`) when they are known; a
    /// scope whose versions did not change keeps its list.
    pub(crate) fn rendered_all(&mut self, scopes: Vec<Scope<'_>>, pages: Option<Vec<Arc<[PathBuf]>>>) {
        let mut pages = pages.map(Vec::into_iter);
        let rendered = scopes
            .into_iter()
            .filter_map(|scope| {
                let listed = pages.as_mut().and_then(Iterator::next);
                let (key, versions) = self.versions(scope)?;
                let kept = || self.rendered.get(&key).filter(|r| r.versions == versions).and_then(|r| r.pages.clone());
                let pages = listed.or_else(kept);
                Some((key, Rendered { versions, pages }))
            })
            .collect();
        self.rendered = rendered;
        self.complete = true;
    }

    /// True when the output already holds these bytes at `path`.
    pub(crate) fn holds(&self, path: &Path, hash: &FileHash) -> bool {
        self.hash_of(path).as_ref() == Some(hash)
    }

    /// The hash of the generated file the previous build left at `path`.
    pub(crate) fn hash_of(&self, path: &Path) -> Option<FileHash> {
        self.written.get(&path_id(path)).map(|held| held.hash)
    }

    /// A new mark for [`Memory::mark_kept`]: a rebuild's, so that none of an earlier
    /// rebuild's marks count.
    pub(crate) fn new_mark(&self) -> u64 {
        self.mark.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Marks the file at `path`, if the previous build left one, as kept by this rebuild.
    pub(crate) fn mark_kept(&self, path: &Path, mark: u64) {
        if let Some(held) = self.written.get(&path_id(path)) {
            held.kept.store(mark, Ordering::Relaxed);
        }
    }

    /// The generated files of the previous build that this rebuild did not mark kept.
    /// Marks, not a set of the kept paths: a large site keeps hundreds of thousands of
    /// pages on every rebuild, and looking each up is cheaper than gathering them.
    pub(crate) fn unmarked(&self, mark: u64) -> impl Iterator<Item = &PathBuf> {
        self.written.values().filter(move |held| held.kept.load(Ordering::Relaxed) != mark).map(|held| &held.path)
    }

    /// After a build is written: the generated files and the static files the output
    /// holds now (a generated file under a static one is not in it).
    pub(crate) fn set_output(&mut self, written: Written, statics: PathMap<Stamp>) {
        match written {
            Written::Whole(all) => self.written = all.into_iter().map(Held::new).collect(),
            Written::Changes { made, removed } => {
                for path in removed.iter().chain(statics.keys()) {
                    self.written.remove(&path_id(path));
                }
                self.written.extend(made.into_iter().map(Held::new));
            }
        }
        self.statics = statics;
    }

    /// After a rebuild that stopped early (a newer change superseded it): the files it
    /// wrote hold these bytes now. Keeping the old hashes would let the next rebuild skip a
    /// file whose old bytes come back; forgetting the paths would leave a new file behind
    /// if the next build no longer makes it. Files it would have removed are still
    /// remembered, so the next rebuild removes them.
    pub(crate) fn wrote(&mut self, written: PathMap<FileHash>) {
        self.written.extend(written.into_iter().map(Held::new));
    }

    pub(crate) fn statics(&self) -> &PathMap<Stamp> {
        &self.statics
    }
}

/// A scope's pages as the output holds them: the versions they were made from, and their
/// paths when known.
#[derive(Debug)]
struct Rendered {
    versions: Vec<u64>,
    pages: Option<Arc<[PathBuf]>>,
}

/// The generated files a build leaves in the output, by path and hash of their bytes.
pub(crate) enum Written {
    /// Every one (a build that replaced the folder).
    Whole(PathMap<FileHash>),
    /// What a rebuild in place changed: the files it made (written, or found unchanged)
    /// and those it removed; every other file is as the previous build left it.
    Changes { made: PathMap<FileHash>, removed: Vec<PathBuf> },
}

/// A generated file the output holds: its path, the hash of its bytes, and the mark of
/// the last rebuild that kept it.
#[derive(Debug)]
struct Held {
    path: PathBuf,
    hash: FileHash,
    kept: AtomicU64,
}

impl Held {
    fn new((path, hash): (PathBuf, FileHash)) -> (PathId, Held) {
        (path_id(&path), Held { path, hash, kept: AtomicU64::new(0) })
    }
}

/// What [`Memory`] knows an output path by: a hash of its bytes (XXH3, 128 bits), as the
/// staging folder knows its folders. casebook spells each of its output paths one way
/// (relative, no `.` parts, single separators), so equal paths have equal bytes.
pub(crate) type PathId = u128;

pub(crate) fn path_id(path: &Path) -> PathId {
    xxhash_rust::xxh3::xxh3_128(path.as_os_str().as_encoded_bytes())
}

/// What a generated file is remembered by: a hash of its bytes (XXH3, 128 bits). It only
/// has to tell a build's own files apart, not resist a forger, and it is taken of every
/// byte a build writes.
pub(crate) type FileHash = u128;

/// A map keyed by output paths: hundreds of thousands of them in a large site, looked up
/// on every rebuild, so hashed with Fx (the keys are the site's own paths).
pub(crate) type PathMap<V> = HashMap<PathBuf, V, rustc_hash::FxBuildHasher>;

/// The hash a file is remembered by.
pub(crate) fn hash(bytes: &[u8]) -> FileHash {
    xxhash_rust::xxh3::xxh3_128(bytes)
}
