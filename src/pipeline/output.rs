//! Where a build's files go: nowhere (`check`), a staging folder swapped in at the end
//! (`build`), or the output folder itself, only the files whose bytes changed (a
//! rebuild). Every stage that makes files hands them here.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::output::{OutputFile, Paths};
use rayon::prelude::*;

use crate::cache::Warm;
use crate::rebuild::{FileHash, Memory, PathMap, Stamp, Written};
use crate::write;

use super::{BuildOptions, PipelineError};

/// Where the files go.
enum Destination {
    /// `check`: made and dropped.
    Nowhere,
    /// A staging folder beside the output, swapped in by [`Output::finish`].
    Staged(write::Staging),
    /// The output folder itself: a rebuild writes the files whose bytes changed.
    InPlace(write::InPlace),
}

/// What a build writes to, and what it knows of what the output already holds.
pub(super) struct Output<'a> {
    destination: Destination,
    /// The previous build's files (rebuilds): unchanged bytes are not written again.
    memory: Option<&'a Memory>,
    /// The previous output as the warm cache knows it (builds): unchanged files are
    /// linked from it, not written.
    warm: Option<&'a Warm>,
    /// Path → hash of every generated file, when a memory is kept.
    hashes: Option<Mutex<PathMap<FileHash>>>,
    /// The static files now (when a memory or a cache is kept): they take the place of
    /// generated files of the same path.
    statics: PathMap<Stamp>,
    static_dir: PathBuf,
    /// The files a rebuild wrote, in the order written.
    changed: Mutex<Vec<PathBuf>>,
}

/// What a build wrote, for the memory a rebuild keeps.
pub(crate) struct Finished {
    pub(crate) written: Written,
    pub(crate) statics: PathMap<Stamp>,
    /// What a rebuild wrote or removed; `None` for a build that replaced the folder.
    pub(crate) changed: Option<Vec<PathBuf>>,
    /// The search indexes' parts, when the build made the indexes.
    pub(crate) index_parts: Option<crate::index::IndexParts>,
    /// The pages' paths, a list per scope in the order of `render::scopes`.
    pub(crate) scope_pages: Vec<std::sync::Arc<[PathBuf]>>,
}

/// Where a build writes, as `run` is told.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `check`: everything but writing.
    Check,
    /// A full build into a staging folder, swapped in.
    Build,
    /// Changed files only, into the output folder itself.
    InPlace,
}

impl<'a> Output<'a> {
    pub(super) fn open(
        kind: Kind,
        options: &BuildOptions,
        memory: Option<&'a Memory>,
        warm: Option<&'a Warm>,
    ) -> Result<Self, PipelineError> {
        let static_dir = options.root.join("static");
        let hashes = (memory.is_some() || warm.is_some()).then(|| Mutex::new(PathMap::default()));
        let destination = match kind {
            Kind::Check => Destination::Nowhere,
            Kind::Build => Destination::Staged(write::Staging::create(&options.output, &options.root)?),
            Kind::InPlace => Destination::InPlace(write::InPlace::open(&options.output)?),
        };
        // Kept with a memory or a cache: a generated file under a static one is not in the
        // output, so neither remembers it.
        let statics = match (&destination, memory.is_some() || warm.is_some()) {
            (Destination::Nowhere, _) | (_, false) => PathMap::default(),
            _ => write::static_stamps(&static_dir)?,
        };
        Ok(Output { destination, memory, warm, hashes, statics, static_dir, changed: Mutex::default() })
    }

    /// The files a rebuild wrote so far, sorted.
    pub(super) fn changed(&self) -> Vec<PathBuf> {
        let mut changed = self.changed.lock().expect("no writer panics holding the lock").clone();
        changed.sort();
        changed
    }

    pub(super) fn put(&self, file: OutputFile) -> Result<(), PipelineError> {
        let hash = self.hashes.as_ref().map(|_| crate::rebuild::hash(&file.bytes));
        let mut written = false;
        match (&self.destination, &hash) {
            (Destination::Staged(staging), _) => match self.warm.and_then(|warm| warm.reusable(&file.path, hash)) {
                Some(previous) => staging.link(&file.path, &previous)?,
                None => staging.put(&file)?,
            },
            (Destination::InPlace(in_place), Some(hash)) if !self.unchanged(&file.path, hash) => {
                in_place.put(&file)?;
                written = true;
            }
            _ => {}
        }
        self.record(&file.path, hash, written);
        Ok(())
    }

    /// Files of the previous output a warm build takes as they are (`Warm` found them
    /// unchanged): hard links into the staging folder.
    pub(super) fn link_previous(&self, paths: &[PathBuf]) -> Result<(), PipelineError> {
        let (Destination::Staged(staging), Some(warm)) = (&self.destination, self.warm) else { return Ok(()) };
        paths.par_iter().try_for_each(|path| {
            let Some(hash) = warm.hash_of(path) else {
                return Err(PipelineError::from(write::WriteError::ChangedDuringBuild(warm.output().join(path))));
            };
            staging.link(path, &warm.output().join(path))?;
            self.record(path, Some(hash), false);
            Ok(())
        })
    }

    /// Whether a rebuild need not write `path`: a static file takes its place, or the
    /// previous build wrote these bytes (by their hash).
    fn unchanged(&self, path: &Path, hash: &FileHash) -> bool {
        self.statics.contains_key(path) || self.memory.is_some_and(|m| m.holds(path, hash))
    }

    /// Remembers a file made: its hash (when a memory is kept), and that a rebuild wrote it.
    fn record(&self, path: &Path, hash: Option<FileHash>, written_in_place: bool) {
        if written_in_place {
            self.changed.lock().expect("no writer panics holding the lock").push(path.to_path_buf());
        }
        if let (Some(hashes), Some(hash)) = (&self.hashes, hash) {
            hashes.lock().expect("no writer panics holding the lock").insert(path.to_path_buf(), hash);
        }
    }

    /// The files a rebuild wrote so far, with their hashes, for a rebuild that stops early.
    pub(super) fn into_written_in_place(self) -> PathMap<FileHash> {
        let changed: HashSet<PathBuf> =
            self.changed.into_inner().expect("no writer panics holding the lock").into_iter().collect();
        let mut hashes =
            self.hashes.map(|h| h.into_inner().expect("no writer panics holding the lock")).unwrap_or_default();
        hashes.retain(|path, _| changed.contains(path));
        hashes
    }

    /// Copies the static files in and swaps the staging folder in (builds), or copies the
    /// changed static files and removes the files the build no longer makes (rebuilds).
    /// `kept` are every page, the ones not rendered included: a rebuild leaves those as
    /// they are, a warm build links them from the previous output.
    pub(super) fn finish(self, kept: Paths) -> Result<Finished, PipelineError> {
        let mut made =
            self.hashes.map(|h| h.into_inner().expect("no writer panics holding the lock")).unwrap_or_default();
        let statics = self.statics;
        let (written, changed) = match (self.destination, self.memory) {
            (Destination::InPlace(in_place), Some(memory)) => {
                let removed = stale(memory, &made, &kept, &statics);
                let generated = |path: &Path| made.contains_key(path) || kept.iter().any(|k| k == path);
                let mut changed = self.changed.into_inner().expect("no writer panics holding the lock");
                changed.extend(in_place.sync_static(&self.static_dir, memory.statics(), &statics, &generated)?);
                in_place.remove(&removed.iter().collect::<Vec<_>>())?;
                changed.extend(removed.iter().cloned());
                changed.sort();
                changed.dedup();
                // A generated file under a static one is not in the output.
                made.retain(|path, _| !statics.contains_key(path));
                (Written::Changes { made, removed }, Some(changed))
            }
            (destination, _) => {
                if let Destination::Staged(staging) = destination {
                    if let Some(warm) = self.warm {
                        made.extend(link_unrendered(&staging, warm, &made, &kept)?);
                    }
                    staging.commit(Some(&self.static_dir))?;
                }
                made.retain(|path, _| !statics.contains_key(path));
                (Written::Whole(made), None)
            }
        };
        Ok(Finished { written, statics, changed, index_parts: None, scope_pages: kept.scopes().to_vec() })
    }
}

/// The pages of the scopes `Warm::up_to_date` found whole in the previous output (those
/// among `kept` this build did not make): linked into the staging folder.
fn link_unrendered(
    staging: &write::Staging,
    warm: &Warm,
    made: &PathMap<FileHash>,
    kept: &Paths,
) -> Result<Vec<(PathBuf, FileHash)>, write::WriteError> {
    let unrendered: Vec<&PathBuf> = kept.iter().filter(|path| !made.contains_key(*path)).collect();
    unrendered
        .into_par_iter()
        .map(|path| {
            let Some(hash) = warm.hash_of(path) else {
                return Err(write::WriteError::ChangedDuringBuild(warm.output().join(path)));
            };
            staging.link(path, &warm.output().join(path))?;
            Ok((path.clone(), hash))
        })
        .collect()
}

/// The files the previous build left that this rebuild no longer makes: neither `made`
/// now nor `kept` as they are, nor under a static file.
fn stale(memory: &Memory, made: &PathMap<FileHash>, kept: &Paths, statics: &PathMap<Stamp>) -> Vec<PathBuf> {
    let mark = memory.new_mark();
    kept.par_iter().for_each(|path| memory.mark_kept(path, mark));
    memory.unmarked(mark).filter(|path| !made.contains_key(*path) && !statics.contains_key(*path)).cloned().collect()
}
