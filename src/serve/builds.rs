//! The dev server's builds: one call per batch of the watcher's changes, through
//! `pipeline::Rebuilder` on the server's own threads, which redoes only what the changes
//! touched and leaves the output as a clean build would.

use std::path::{Path, PathBuf};

use crate::pipeline::{self, BuildOptions, Outcome, PipelineError};

/// Builds the site for the dev server, on its own worker threads.
pub struct Builds {
    rebuilder: pipeline::Rebuilder,
    /// The options' root as the watcher spells it (absolute and canonical).
    watched_root: PathBuf,
    root: PathBuf,
    pool: rayon::ThreadPool,
}

impl Builds {
    /// The builds of `options`' site, with `pool` for the pipeline's parallel stages;
    /// `watched_root` is the root as the watcher reports paths under it.
    pub fn new(options: BuildOptions, watched_root: PathBuf, pool: rayon::ThreadPool) -> Self {
        let root = options.root.clone();
        Builds { rebuilder: pipeline::Rebuilder::new(options), watched_root, root, pool }
    }

    /// Brings the output up to date after `changed` (the watcher's paths; empty for the
    /// first build). Like `casebook build`, it writes nothing when there is an error, and
    /// leaves the same bytes.
    /// `pages_ready` gets the output files written, once the edited reports' pages are and
    /// again once the rest of the changed runs' pages are (before the site-wide pages and
    /// the search indexes). When `superseded` says a newer change waits, the rebuild stops
    /// at its next check (`Outcome::superseded`), for the next one to carry on.
    pub fn rebuild(
        &mut self,
        changed: &[PathBuf],
        pages_ready: &mut (dyn FnMut(&[PathBuf]) + Send),
        superseded: &(dyn Fn() -> bool + Sync),
    ) -> Result<Outcome, PipelineError> {
        let changed: Vec<PathBuf> = changed.iter().map(|path| self.as_given(path)).collect();
        let rebuilder = &mut self.rebuilder;
        self.pool.install(|| rebuilder.rebuild_unless_superseded(&changed, pages_ready, superseded))
    }

    /// A watcher's path, spelled as the pipeline spells it (below the root as given).
    fn as_given(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.watched_root) {
            // The pipeline names files `content/…` for the root `.`, `ROOT/content/…` otherwise.
            Ok(relative) if self.root == Path::new(".") => relative.to_path_buf(),
            Ok(relative) => self.root.join(relative),
            Err(_) => path.to_path_buf(),
        }
    }
}
