//! The rebuild step: one call per batch of changes. It is a full build for now; an
//! incremental one would start from the changed paths it is given.

use std::path::PathBuf;

use crate::pipeline::{self, BuildOptions, Outcome, PipelineError};

/// Builds the site for the dev server, on its own worker threads.
pub struct Rebuilder {
    options: BuildOptions,
    pool: rayon::ThreadPool,
}

impl Rebuilder {
    /// A rebuilder for `options`, with `pool` for the pipeline's parallel stages.
    pub fn new(options: BuildOptions, pool: rayon::ThreadPool) -> Self {
        Rebuilder { options, pool }
    }

    /// Brings the output up to date after `changed` (empty for the first build). Like
    /// `casebook build`, it replaces the output only when there is no error, and writes
    /// the same bytes.
    pub fn rebuild(&self, changed: &[PathBuf]) -> Result<Outcome, PipelineError> {
        // Every build is a full one for now: `changed` is where incremental builds will
        // start from.
        let _ = changed;
        self.pool.install(|| pipeline::build(&self.options))
    }
}
