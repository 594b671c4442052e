//! The warm cache (`casebook build --cache DIR`, on by default): what a build leaves on
//! disk so that the next build, in another process (a CI job restoring the folder, an
//! author building again), renders only what changed and takes the rest from the output
//! it replaces.
//!
//! - A scope's pages (a run's, a system's) are made from its inputs alone (see
//!   `rebuild.rs`): the casebook binary, the configuration, theme and base URL, its
//!   system's `system.yaml`, its runs' files and what verification found in them. The
//!   cache keeps a digest of those per scope; a scope whose digest is unchanged is not
//!   rendered, and its files are hard links to the previous output's.
//! - Every other file the build makes (the site's own pages, the search indexes, the
//!   assets) is compared by a hash of its bytes with the previous output's file at the
//!   same path: unchanged bytes are linked, not written, so the file system allocates no
//!   inode for them.
//! - A previous file is taken only while it is what the last build wrote: its size,
//!   modification time and inode are as the cache recorded them. A file edited by hand in
//!   the output, or an output another build replaced, is made again.
//! - A run whose files (and the binary and configuration) are unchanged is not parsed:
//!   it is read back as the build that parsed it left it (`<output>.runs/`, a file per
//!   run). The site-wide files are made from runs' parts (see `rebuild.rs`): the cache
//!   keeps the tantivy segments by group of runs, the browser index (`<output>.browser`)
//!   and what each run's manifest file was made from.
//!
//! The state is one file per output folder (bincode: a large site's state is tens of
//! megabytes, read and written by every build). A missing, unreadable or foreign state
//! (or a run's file, or the browser index) makes a cold build of what it held, never an
//! error; a state that cannot be written is a warning.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

use crate::model::{Code, Diagnostic, Location, Site, Verification};
use crate::rebuild::{path_id, FileHash, PathId, PathMap};
use crate::render::Scope;

/// The state file's format: a state of another format is not read.
const FORMAT: u32 = 22;

/// The folder a build's cache goes in when the command line names none: beside the
/// output, hidden, and ignored by git (it holds a `.gitignore` of `*`).
pub fn default_dir(output: &Path) -> PathBuf {
    let parent = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    parent.join(".casebook-cache")
}

/// A file as the file system describes it: what tells that it is still the one written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    len: u64,
    /// Seconds and nanoseconds since the epoch.
    modified: (u64, u32),
    inode: u64,
}

impl Stat {
    fn of(path: &Path) -> Option<Stat> {
        let meta = std::fs::symlink_metadata(path).ok().filter(std::fs::Metadata::is_file)?;
        let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Stat { len: meta.len(), modified: (modified.as_secs(), modified.subsec_nanos()), inode })
    }
}

/// A generated file of the output, as the last build left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct FileEntry {
    hash: FileHash,
    stat: Stat,
}

/// A scope as the last build made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ScopeEntry {
    /// The digest of everything its pages are made from.
    inputs: FileHash,
    /// Its pages' output paths (shared with the build that lists them).
    pages: Arc<[PathBuf]>,
}

/// What the cache keeps of one output folder.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    format: u32,
    /// The output folder this state describes (absolute).
    output: PathBuf,
    /// By scope key (`system` or `system/run`).
    scopes: BTreeMap<String, ScopeEntry>,
    /// Every generated file, by its path in the output (looked up for each file a build
    /// makes: a hash map, the state file's order does not matter), known by the path's
    /// hash as the dev server's memory knows it: a large site has hundreds of thousands.
    files: HashMap<PathId, FileEntry, rustc_hash::FxBuildHasher>,
    /// The paths of the files of the search indexes and the manifest among them.
    site_files: Vec<PathBuf>,
    /// The digest of every scope's inputs and whether the search indexes were made: the
    /// search indexes and the manifest are made from those alone.
    site: FileHash,
    /// The search indexes' parts (tantivy segments by group of runs), keyed by the
    /// digests of their runs' scopes.
    index_parts: crate::index::IndexParts,
    /// A hash of the browser index kept beside the state (`<output>.browser`), which the
    /// file must have to be taken; 0 for none.
    browser: FileHash,
    /// What each run's manifest file in the output was made from.
    manifest: crate::publish::ManifestParts,
}

/// The warm cache of one build: the previous build's state, and this build's inputs as
/// they are learnt.
#[derive(Debug)]
pub struct Warm {
    state_file: PathBuf,
    dir: PathBuf,
    /// The output folder (absolute): where the previous build's files are.
    output: PathBuf,
    previous: State,
    /// The configuration, theme, base URL and binary.
    global: FileHash,
    /// The binary and the configuration: what a run is parsed and resolved with, besides
    /// its files.
    parse_inputs: FileHash,
    /// The runs this build parsed (not taken from the cache), with their diagnostics, for
    /// the next build to take.
    parsed: Mutex<Vec<ParsedRun>>,
    /// System slug → digest of its `system.yaml`.
    systems: HashMap<String, FileHash>,
    /// (system, run) → digest of its files' paths and bytes; filled in parallel by `load`.
    runs: Mutex<HashMap<(String, String), FileHash>>,
    /// (system, run) → digest of what verification found in it.
    verified: HashMap<(String, String), FileHash>,
    /// Scope key → whether it is up to date, once asked.
    answers: Mutex<HashMap<String, bool>>,
    /// Whether this build makes the search indexes.
    search_index: bool,
    /// The search indexes' parts this build made (the previous build's when it made none).
    index_parts: Option<crate::index::IndexParts>,
    /// The browser index the previous build left, read when a build first asks for it.
    browser: OnceLock<Mutex<crate::index::BrowserIndex>>,
    /// The browser index this build made, already written to a temporary file beside the
    /// state (with its hash), once the indexes are done: the state names it when saved.
    browser_aside: Mutex<Option<(tempfile::NamedTempFile, FileHash)>>,
    /// What each run's manifest file in the output was made from (the previous build's,
    /// then this build's).
    manifest: Mutex<crate::publish::ManifestParts>,
}

impl Warm {
    /// The cache in `dir` for the output folder `output` (of a build that makes the search
    /// indexes when `search_index`): what the last build into it left.
    pub fn open(dir: &Path, output: &Path, search_index: bool) -> Warm {
        let output = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
        let name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "public".into());
        let state_file = dir.join(format!("{name}.state"));
        let previous = read_state(&state_file)
            .filter(|state| state.format == FORMAT && state.output == output)
            .unwrap_or_default();
        Warm {
            state_file,
            dir: dir.to_path_buf(),
            output,
            global: 0,
            parse_inputs: 0,
            parsed: Mutex::default(),
            systems: HashMap::new(),
            runs: Mutex::default(),
            verified: HashMap::new(),
            answers: Mutex::default(),
            search_index,
            index_parts: None,
            browser: OnceLock::new(),
            browser_aside: Mutex::default(),
            manifest: Mutex::new(previous.manifest.clone()),
            previous,
        }
    }

    /// What each run's manifest file in the output was made from.
    pub(crate) fn manifest_parts(&self) -> &Mutex<crate::publish::ManifestParts> {
        &self.manifest
    }

    /// Where the browser index is kept: beside the state file.
    fn browser_file(&self) -> PathBuf {
        self.state_file.with_extension("browser")
    }

    /// The browser index the previous build left (empty when there is none, or when it
    /// is not the one the state names, or a file it wrote is no longer in the output).
    pub(crate) fn browser_index(&self) -> &Mutex<crate::index::BrowserIndex> {
        self.browser.get_or_init(|| {
            let kept = (self.previous.browser != 0)
                .then(|| self.read_browser())
                .flatten()
                .filter(|index| index.files().par_iter().all(|path| self.reusable(path, None).is_some()));
            Mutex::new(kept.unwrap_or_default())
        })
    }

    /// Writes the browser index this build made to a temporary file in the cache and lets
    /// it go: held to the end of the build, beside the pages' hashes and the state, it made
    /// a build that fills the cache peak above a build without one. (When it cannot be
    /// written, it is kept, and `save` tries again.)
    pub(crate) fn set_browser_index_aside(&self) {
        let Some(index) = self.browser.get() else { return };
        let mut index = index.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Ok(written) = self.write_browser_temporary(&mut index) {
            *index = crate::index::BrowserIndex::default();
            *self.browser_aside.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(written);
        }
    }

    /// Takes the browser index out (the dev server keeps it after its first build).
    pub(crate) fn take_browser_index(&mut self) -> crate::index::BrowserIndex {
        self.browser
            .take()
            .map(|m| m.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner))
            .unwrap_or_default()
    }

    /// The search indexes' parts the previous build made.
    pub(crate) fn previous_index_parts(&self) -> &crate::index::IndexParts {
        &self.previous.index_parts
    }

    /// The search indexes' parts this build made.
    pub(crate) fn set_index_parts(&mut self, parts: crate::index::IndexParts) {
        self.index_parts = Some(parts);
    }

    /// The digest of what a run's pages (and search documents) are made from.
    pub(crate) fn inputs_of_run(&self, system: &crate::model::System, run: &crate::model::Run) -> Option<FileHash> {
        self.inputs_of(Scope::Run(system, run)).map(|(_, digest)| digest)
    }

    /// The inputs every page is made from.
    pub(crate) fn set_global(&mut self, config_text: &str, theme: [u8; 32], base_url: &str) {
        let mut hasher = Xxh3::new();
        hasher.update(&binary_digest().to_le_bytes());
        for part in [config_text.as_bytes(), &theme, base_url.as_bytes()] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        self.global = hasher.digest128();
        let mut hasher = Xxh3::new();
        hasher.update(&binary_digest().to_le_bytes());
        hasher.update(config_text.as_bytes());
        self.parse_inputs = hasher.digest128();
    }

    /// Where the parsed run `system/run` is kept: a file per run, beside the state.
    fn run_file(&self, system: &str, run: &str) -> PathBuf {
        let key = xxhash_rust::xxh3::xxh3_128(format!("{system}/{run}").as_bytes());
        self.state_file.with_extension("runs").join(format!("{key:032x}"))
    }

    /// The run `system/run` as a build parsed and resolved it from the same files (their
    /// digest, [`Warm::note_run`]) and configuration, with binary: not parsed again.
    pub(crate) fn cached_run(&self, system: &str, run: &str) -> Option<crate::rebuild::RememberedRun> {
        let files = *self
            .runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&(system.to_string(), run.to_string()))?;
        let bytes = std::fs::read(self.run_file(system, run)).ok()?;
        // The two digests come first: a stale run is not read further.
        let (kept_files, kept_inputs): (FileHash, FileHash) = bincode::deserialize(&bytes).ok()?;
        if (kept_files, kept_inputs) != (files, self.parse_inputs) {
            return None;
        }
        let cached: CachedRun = crate::model::reading_shared(|| bincode::deserialize(&bytes).ok())?;
        Some(crate::rebuild::RememberedRun {
            stamps: Vec::new(),
            run: cached.run,
            diagnostics: cached.diagnostics,
            version: 0,
        })
    }

    /// The runs this build parsed, kept for the next build (see [`Warm::cached_run`]).
    pub(crate) fn note_parsed(&self, runs: Vec<ParsedRun>) {
        *self.parsed.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = runs;
    }

    /// Writes the runs this build parsed, and removes the files of runs no longer in
    /// `site`.
    fn write_runs(&self, site: &Site) -> std::io::Result<()> {
        let folder = self.state_file.with_extension("runs");
        std::fs::create_dir_all(&folder)?;
        let digests = self.runs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let parsed = std::mem::take(&mut *self.parsed.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        parsed.par_iter().try_for_each(|((system, run), parsed, diagnostics)| {
            let Some(&files) = digests.get(&(system.clone(), run.clone())) else { return Ok(()) };
            let cached = CachedRun {
                files,
                inputs: self.parse_inputs,
                run: Arc::clone(parsed),
                diagnostics: diagnostics.clone(),
            };
            let bytes = bincode::serialize(&cached).map_err(std::io::Error::other)?;
            let mut temporary = tempfile::NamedTempFile::new_in(&folder)?;
            std::io::Write::write_all(temporary.as_file_mut(), &bytes)?;
            temporary.persist(self.run_file(system, run)).map_err(|e| e.error)?;
            Ok::<(), std::io::Error>(())
        })?;
        let current: std::collections::HashSet<PathBuf> =
            site.systems.iter().flat_map(|s| s.runs.iter().map(move |r| self.run_file(&s.slug, &r.slug))).collect();
        for entry in std::fs::read_dir(&folder)?.flatten() {
            if !current.contains(&entry.path()) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(())
    }

    /// Reads a run's files (`run.yaml`, then its reports) for the digest of their paths
    /// and bytes. A file that cannot be read leaves the run without one: it is rendered.
    pub(crate) fn note_run(&self, system: &str, run: &str, files: &[&PathBuf]) {
        let mut hasher = Xxh3::new();
        for path in files {
            let Ok(bytes) = std::fs::read(path) else { return };
            let name = path.to_string_lossy();
            hasher.update(&(name.len() as u64).to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
        let mut runs = self.runs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        runs.insert((system.to_string(), run.to_string()), hasher.digest128());
    }

    /// The `system.yaml` text of each system.
    pub(crate) fn note_systems(&mut self, systems: &[(String, String)]) {
        self.systems =
            systems.iter().map(|(slug, text)| (slug.clone(), xxhash_rust::xxh3::xxh3_128(text.as_bytes()))).collect();
    }

    /// What verification found, run by run (nothing when it did not run).
    pub(crate) fn note_verification(&mut self, verification: Option<&Verification>) {
        self.verified = verification
            .map(|v| {
                v.runs
                    .iter()
                    .map(|((system, run), found)| {
                        // Its `Debug` text is all it holds; the binary's digest is in
                        // every scope's, so the text's form cannot change under a cache.
                        let text = format!("{found:?}");
                        ((system.to_string(), run.to_string()), xxhash_rust::xxh3::xxh3_128(text.as_bytes()))
                    })
                    .collect()
            })
            .unwrap_or_default();
    }

    /// The key and input digest of a run's or system's scope (`None` for the site's own
    /// pages, which are made on every build, or a run whose files could not be read).
    fn inputs_of(&self, scope: Scope<'_>) -> Option<(String, FileHash)> {
        let runs = self.runs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut hasher = Xxh3::new();
        hasher.update(&self.global.to_le_bytes());
        let mut add_run = |system: &str, run: &str| -> Option<()> {
            let key = (system.to_string(), run.to_string());
            hasher.update(&(run.len() as u64).to_le_bytes());
            hasher.update(run.as_bytes());
            hasher.update(&runs.get(&key)?.to_le_bytes());
            hasher.update(&self.verified.get(&key).copied().unwrap_or_default().to_le_bytes());
            Some(())
        };
        let key = match scope {
            Scope::Site => return None,
            Scope::System(system) => {
                for run in &system.runs {
                    add_run(&system.slug, &run.slug)?;
                }
                system.slug.to_string()
            }
            Scope::Run(system, run) => {
                add_run(&system.slug, &run.slug)?;
                format!("{}/{}", system.slug, run.slug)
            }
        };
        let system = match scope {
            Scope::System(system) | Scope::Run(system, _) => system,
            Scope::Site => unreachable!("returned above"),
        };
        hasher.update(&(system.slug.len() as u64).to_le_bytes());
        hasher.update(system.slug.as_bytes());
        hasher.update(&self.systems.get(system.slug.as_str())?.to_le_bytes());
        Some((key, hasher.digest128()))
    }

    /// True when the previous output holds the pages of `scope` as this build would make
    /// them: its inputs are the same, and each of its files is still the one written.
    /// Asked once per scope: the answer is kept, so the pages counted, rendered and linked
    /// are of the same scopes.
    pub(crate) fn up_to_date(&self, scope: Scope<'_>) -> bool {
        let Some((key, inputs)) = self.inputs_of(scope) else { return false };
        let mut answers = self.answers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&answer) = answers.get(&key) {
            return answer;
        }
        let answer = self.previous.scopes.get(&key).is_some_and(|entry| {
            entry.inputs == inputs && entry.pages.iter().all(|page| self.reusable(page, None).is_some())
        });
        answers.insert(key, answer);
        answer
    }

    /// The paths of the pages of `scope`, when the previous output holds them as this
    /// build would make them ([`Warm::up_to_date`]).
    pub(crate) fn scope_pages(&self, scope: Scope<'_>) -> Option<Arc<[PathBuf]>> {
        if !self.up_to_date(scope) {
            return None;
        }
        let (key, _) = self.inputs_of(scope)?;
        self.previous.scopes.get(&key).map(|entry| Arc::clone(&entry.pages))
    }

    /// The previous output's file at `path`, when it still holds what the last build wrote
    /// there and (when `hash` is given) those are the bytes `hash` is of. Its size,
    /// modification time and inode tell at once; when they changed (an output restored
    /// from a CI cache has new inodes and may have new times) its bytes are hashed again.
    pub(crate) fn reusable(&self, path: &Path, hash: Option<FileHash>) -> Option<PathBuf> {
        let entry = self.previous.files.get(&path_id(path))?;
        if hash.is_some_and(|hash| hash != entry.hash) {
            return None;
        }
        let file = self.output.join(path);
        let stat = Stat::of(&file)?;
        let same = stat == entry.stat
            || (stat.len == entry.stat.len
                && std::fs::read(&file).is_ok_and(|bytes| crate::rebuild::hash(&bytes) == entry.hash));
        same.then_some(file)
    }

    /// The digest the search indexes and the manifest are made from: every run's and
    /// system's inputs (the configuration, binary, base URL and what verification found
    /// among them), and whether the indexes are made. `None` when a run's files could not
    /// be read.
    fn site_digest(&self, site: &Site) -> Option<FileHash> {
        let mut hasher = Xxh3::new();
        hasher.update(&[u8::from(self.search_index)]);
        for scope in crate::render::scopes(site).into_iter().filter(|s| !matches!(s, Scope::Site)) {
            let (key, inputs) = self.inputs_of(scope)?;
            hasher.update(&(key.len() as u64).to_le_bytes());
            hasher.update(key.as_bytes());
            hasher.update(&inputs.to_le_bytes());
        }
        Some(hasher.digest128())
    }

    /// The search indexes' and the manifest's files of the previous output, when nothing
    /// they are made from changed and each is still as written: a build links them instead
    /// of making them (a site rebuilt unchanged, such as a pull request's base).
    pub(crate) fn unchanged_site_files(&self, site: &Site) -> Option<Vec<PathBuf>> {
        if self.previous.files.is_empty() || self.site_digest(site) != Some(self.previous.site) {
            return None;
        }
        let files = self.previous.site_files.clone();
        files.par_iter().all(|path| self.reusable(path, None).is_some()).then_some(files)
    }

    /// The output folder.
    pub(crate) fn output(&self) -> &Path {
        &self.output
    }

    /// The hash of the bytes the last build wrote at `path`.
    pub(crate) fn hash_of(&self, path: &Path) -> Option<FileHash> {
        self.previous.files.get(&path_id(path)).map(|entry| entry.hash)
    }

    /// After the output was swapped in: remembers each of its generated files (`written`,
    /// by hash) and each scope's inputs and pages (`scope_pages`: the build's lists, a
    /// list per scope in the order of `render::scopes`), for the next build. A warning
    /// when the cache cannot be written: the site is whole, the next build is cold.
    pub(crate) fn save(
        &self,
        site: &Site,
        written: &PathMap<FileHash>,
        scope_pages: &[Arc<[PathBuf]>],
    ) -> Option<Diagnostic> {
        let site_model = site;
        // A file with the bytes of the previous build's is, almost always, its hard link:
        // the same inode, size and time, not asked again. (When it is not, the next build
        // finds the stat changed and compares the bytes.)
        let files: HashMap<PathId, FileEntry, _> = written
            .par_iter()
            .filter_map(|(path, hash)| {
                let id = path_id(path);
                let stat = match self.previous.files.get(&id) {
                    Some(previous) if previous.hash == *hash => previous.stat,
                    _ => Stat::of(&self.output.join(path))?,
                };
                Some((id, FileEntry { hash: *hash, stat }))
            })
            .collect();
        let mut site_files: Vec<PathBuf> = written.keys().filter(|path| made_from_site(path)).cloned().collect();
        site_files.sort_unstable();
        let scopes = crate::render::scopes(site)
            .into_iter()
            .enumerate()
            .filter_map(|(i, scope)| {
                let (key, inputs) = self.inputs_of(scope)?;
                let listed = scope_pages.get(i).map(Arc::clone);
                let pages = listed.unwrap_or_else(|| crate::render::scope_pages(site, scope).into());
                Some((key, ScopeEntry { inputs, pages }))
            })
            .collect();
        let site = self.site_digest(site).unwrap_or_default();
        // A build that linked its indexes whole made no parts: the previous ones hold.
        let index_parts = self.index_parts.clone().unwrap_or_else(|| self.previous.index_parts.clone());
        let aside = self.browser_aside.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let browser = match (&self.index_parts, aside, self.browser.get()) {
            (Some(_), Some((temporary, hash)), _) => self.keep_browser(temporary, hash).unwrap_or(0),
            (Some(_), None, Some(index)) => self.write_browser(index).unwrap_or(0),
            (Some(_), None, None) => 0,
            (None, ..) => self.previous.browser,
        };
        let manifest = self.manifest.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let runs_written = self.write_runs(site_model);
        let state = State {
            format: FORMAT,
            output: self.output.clone(),
            scopes,
            files,
            site_files,
            site,
            index_parts,
            browser,
            manifest,
        };
        runs_written.and(self.write(&state)).err().map(|e| {
            Diagnostic::warning(
                Code::CacheNotWritten,
                Location::file(&self.state_file),
                format!("the build cache could not be written: {e}"),
            )
            .with_help("the site was built whole; the next build starts cold. Check that the cache folder (--cache) can be written, or pass --no-cache")
        })
    }

    /// Keeps the browser index beside the state; gives the hash the state names it by.
    fn write_browser(&self, index: &Mutex<crate::index::BrowserIndex>) -> std::io::Result<FileHash> {
        let mut index = index.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (temporary, hash) = self.write_browser_temporary(&mut index)?;
        self.keep_browser(temporary, hash)
    }

    /// The browser index in a temporary file of the cache folder, and its hash. Streamed,
    /// hashed on the way: at 10,000 reports the index's file is some 300 MB.
    fn write_browser_temporary(
        &self,
        index: &mut crate::index::BrowserIndex,
    ) -> std::io::Result<(tempfile::NamedTempFile, FileHash)> {
        std::fs::create_dir_all(&self.dir)?;
        let mut temporary = tempfile::NamedTempFile::new_in(&self.dir)?;
        let mut out = std::io::BufWriter::new(Hashing::new(temporary.as_file_mut()));
        index.save(&mut out)?;
        let hash = out.into_inner().map_err(std::io::IntoInnerError::into_error)?.digest();
        Ok((temporary, hash))
    }

    /// Puts the browser index's temporary file where the next build reads it.
    fn keep_browser(&self, temporary: tempfile::NamedTempFile, hash: FileHash) -> std::io::Result<FileHash> {
        temporary.persist(self.browser_file()).map_err(|e| e.error)?;
        Ok(hash)
    }

    /// The browser index the previous build kept, when its file is the one the state
    /// names (by its hash, taken while it is read).
    fn read_browser(&self) -> Option<crate::index::BrowserIndex> {
        let file = std::fs::File::open(self.browser_file()).ok()?;
        let len = file.metadata().ok()?.len();
        let mut input = std::io::BufReader::new(Hashing::new(file));
        let index = crate::index::BrowserIndex::load(&mut input, len)?;
        // Whatever follows the index counts too: the file must be the one written.
        std::io::copy(&mut input, &mut std::io::sink()).ok()?;
        (input.into_inner().digest() == self.previous.browser).then_some(index)
    }

    fn write(&self, state: &State) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        // The state of casebook before December 2026, as JSON: not read any more.
        let _ = std::fs::remove_file(self.state_file.with_extension("json"));
        let ignore = self.dir.join(".gitignore");
        if !ignore.is_file() {
            std::fs::write(&ignore, "# casebook's build cache: made again by any build.\n*\n")?;
        }
        let mut temporary = tempfile::NamedTempFile::new_in(&self.dir)?;
        bincode::serialize_into(std::io::BufWriter::new(temporary.as_file_mut()), state)
            .map_err(std::io::Error::other)?;
        temporary.persist(&self.state_file).map_err(|e| e.error)?;
        Ok(())
    }
}

/// The state in `file`, streamed (a large site's is tens of megabytes). Every length read
/// from it is bounded by the file's, so a state of another format or a damaged one fails
/// to read instead of asking for a huge allocation.
fn read_state(file: &Path) -> Option<State> {
    use bincode::Options;
    let file = std::fs::File::open(file).ok()?;
    let len = file.metadata().ok()?.len();
    // The options of `bincode::serialize_into`, which wrote it.
    let options = bincode::DefaultOptions::new().with_fixint_encoding().allow_trailing_bytes().with_limit(len);
    options.deserialize_from(std::io::BufReader::new(file)).ok()
}

/// A reader or writer that hashes (XXH3-128, as `rebuild::hash`) the bytes it passes on.
struct Hashing<T> {
    inner: T,
    hasher: Xxh3,
}

impl<T> Hashing<T> {
    fn new(inner: T) -> Self {
        Hashing { inner, hasher: Xxh3::new() }
    }

    fn digest(&self) -> FileHash {
        self.hasher.digest128()
    }
}

impl<W: std::io::Write> std::io::Write for Hashing<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(bytes)?;
        self.hasher.update(&bytes[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, bytes: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(bytes)?;
        self.hasher.update(&bytes[..n]);
        Ok(n)
    }
}

/// A run a build parsed: its key (system, run), the run, and what was found in it.
pub(crate) type ParsedRun = ((String, String), Arc<crate::model::Run>, Vec<Diagnostic>);

/// A run as the build cache keeps it: the digests it was made from first (read alone to
/// tell a stale one), then the run and what was found in it.
#[derive(Serialize, Deserialize)]
struct CachedRun {
    files: FileHash,
    inputs: FileHash,
    run: Arc<crate::model::Run>,
    diagnostics: Vec<Diagnostic>,
}

/// True for a file of the search indexes or the manifest.
fn made_from_site(path: &Path) -> bool {
    path.starts_with(crate::output::BROWSER_DIR)
        || path.starts_with(crate::output::TANTIVY_DIR)
        || crate::publish::is_manifest_file(path)
}

/// A digest of the running casebook binary: another build of casebook may render the same
/// inputs otherwise. Read once per process.
fn binary_digest() -> FileHash {
    static DIGEST: OnceLock<FileHash> = OnceLock::new();
    *DIGEST.get_or_init(|| {
        let mut hashing = Hashing::new(std::io::sink());
        hashing.hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        // Streamed: the binary (with its line tables) is larger than many a site's model,
        // and a build needs none of it held.
        if let Ok(mut file) = std::env::current_exe().and_then(std::fs::File::open) {
            let _ = std::io::copy(&mut file, &mut hashing);
        }
        hashing.digest()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashing_on_the_way_gives_the_hash_of_the_bytes() {
        let bytes: Vec<u8> = (0..100_000u32).flat_map(|n| n.to_le_bytes()).collect();
        let mut written = Hashing::new(Vec::new());
        for piece in bytes.chunks(777) {
            std::io::Write::write_all(&mut written, piece).unwrap();
        }
        assert_eq!(written.inner, bytes);
        assert_eq!(written.digest(), crate::rebuild::hash(&bytes));
        let mut read = Hashing::new(bytes.as_slice());
        std::io::copy(&mut read, &mut std::io::sink()).unwrap();
        assert_eq!(read.digest(), crate::rebuild::hash(&bytes));
    }

    #[test]
    fn a_run_read_back_from_the_cache_holds_each_record_id_once() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let (site, _) = crate::pipeline::resolved_site(root);
        let (site, _) = site.unwrap();
        let (system, run) = (&site.systems[0], &site.systems[0].runs[0]);
        let dir = tempfile::tempdir().unwrap();
        let warm = Warm::open(&dir.path().join("cache"), &dir.path().join("public"), true);
        let run_yaml = root.join(&*run.file);
        warm.note_run(&system.slug, &run.slug, &[&run_yaml]);
        warm.note_parsed(vec![((system.slug.to_string(), run.slug.to_string()), Arc::clone(run), Vec::new())]);
        warm.write_runs(&site).unwrap();

        let back = warm.cached_run(&system.slug, &run.slug).expect("the run just written").run;
        assert_eq!(back.records.len(), run.records.len());
        let mut shared = 0;
        for record in back.records.values() {
            for reference in &record.references {
                let (key, target) = back.records.get_key_value(reference).unwrap();
                assert_eq!(key.as_str().as_ptr(), reference.as_str().as_ptr(), "{reference} read twice");
                assert_eq!(target.id.as_str().as_ptr(), reference.as_str().as_ptr(), "{reference} read twice");
                shared += 1;
            }
        }
        assert!(shared > 10, "the bundled run's records refer to each other ({shared})");
    }

    #[test]
    fn the_browser_index_set_aside_is_let_go_and_is_the_one_the_saved_state_names() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let (cache, output) = (dir.path().join("cache"), dir.path().join("public"));
        let mut options = crate::pipeline::BuildOptions::new(root);
        options.output = output.clone();
        options.cache = Some(cache.clone());
        assert!(crate::pipeline::build(&options).unwrap().written);
        let kept = std::fs::read(cache.join("public.browser")).unwrap();

        let mut warm = Warm::open(&cache, &output, true);
        let files = warm.browser_index().lock().unwrap().files();
        assert!(!files.is_empty(), "the bundled site's browser index, read back");
        warm.set_browser_index_aside();
        assert!(warm.browser_index().lock().unwrap().files().is_empty(), "let go once written");
        let temporary = |cache: &Path| {
            std::fs::read_dir(cache)
                .unwrap()
                .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with(".tmp"))
                .count()
        };
        assert_eq!(temporary(&cache), 1, "written aside, not yet where the next build reads it");

        let (site, _) = crate::pipeline::resolved_site(root);
        warm.set_index_parts(crate::index::IndexParts::default());
        assert!(warm.save(&site.unwrap().0, &PathMap::default(), &[]).is_none());
        assert_eq!(temporary(&cache), 0);
        let saved = std::fs::read(cache.join("public.browser")).unwrap();
        assert!(
            saved == kept,
            "the index written as it was read: {} against {} bytes, first difference at {:?}",
            saved.len(),
            kept.len(),
            saved.iter().zip(&kept).position(|(a, b)| a != b)
        );
        assert_eq!(read_state(&warm.state_file).unwrap().browser, crate::rebuild::hash(&saved));
        let back = crate::index::BrowserIndex::load(&mut saved.as_slice(), saved.len() as u64).unwrap();
        assert_eq!(back.files(), files);
    }

    #[test]
    fn the_default_cache_is_beside_the_output() {
        assert_eq!(default_dir(Path::new("public")), Path::new("./.casebook-cache"));
        assert_eq!(default_dir(Path::new("/srv/site/public")), Path::new("/srv/site/.casebook-cache"));
    }

    #[test]
    fn a_state_reads_back_as_written_and_a_foreign_one_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("public");
        std::fs::create_dir_all(&output).unwrap();
        std::fs::write(output.join("a.html"), "a").unwrap();
        let warm = Warm::open(&dir.path().join("cache"), &output, true);
        let stat = Stat::of(&output.join("a.html")).unwrap();
        let mut files = HashMap::default();
        files.insert(path_id(Path::new("a.html")), FileEntry { hash: u128::MAX - 7, stat });
        let state = State { format: FORMAT, output: warm.output.clone(), files, ..State::default() };
        warm.write(&state).unwrap();
        assert!(dir.path().join("cache/.gitignore").is_file());

        let again = Warm::open(&dir.path().join("cache"), &output, true);
        assert_eq!(again.hash_of(Path::new("a.html")), Some(u128::MAX - 7));
        assert_eq!(again.reusable(Path::new("a.html"), Some(u128::MAX - 7)), Some(warm.output.join("a.html")));
        assert_eq!(again.reusable(Path::new("a.html"), Some(1)), None, "other bytes");
        // The file changed since: not reused, whatever its hash.
        std::fs::write(output.join("a.html"), "ab").unwrap();
        assert_eq!(again.reusable(Path::new("a.html"), None), None);
        // Same bytes in a new file (a restored cache): its hash tells.
        let entry = FileEntry { hash: crate::rebuild::hash(b"ab"), stat: Stat { len: 2, modified: (1, 0), ..stat } };
        let mut files = HashMap::default();
        files.insert(path_id(Path::new("a.html")), entry);
        let state = State { format: FORMAT, output: warm.output.clone(), files, ..State::default() };
        warm.write(&state).unwrap();
        let restored = Warm::open(&dir.path().join("cache"), &output, true);
        assert_eq!(restored.reusable(Path::new("a.html"), None), Some(warm.output.join("a.html")));

        // The same cache folder seen from another output of the same name: ignored.
        let elsewhere = dir.path().join("other/public");
        assert_eq!(Warm::open(&dir.path().join("cache"), &elsewhere, true).hash_of(Path::new("a.html")), None);
        // A state that does not parse: a cold build.
        std::fs::write(dir.path().join("cache/public.state"), "{").unwrap();
        assert_eq!(Warm::open(&dir.path().join("cache"), &output, true).hash_of(Path::new("a.html")), None);
        // Nor does one of another format, whose bytes read as a length far beyond its own.
        let mut foreign = (FORMAT - 1).to_le_bytes().to_vec();
        foreign.extend(u64::MAX.to_le_bytes());
        foreign.extend(b"public");
        std::fs::write(dir.path().join("cache/public.state"), foreign).unwrap();
        assert_eq!(Warm::open(&dir.path().join("cache"), &output, true).hash_of(Path::new("a.html")), None);
    }
}
