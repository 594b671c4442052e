//! What every stage that makes files hands on: an [`OutputFile`], and the folders of the
//! output that more than one stage names.

/// A finished output file: its path below the output folder and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// Relative path (`fractal/index.html`).
    pub path: std::path::PathBuf,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// The folder of the search page's static index (`index::browser` writes it, the search
/// page's template reads it).
pub const BROWSER_DIR: &str = "search/browser";

/// The folder of the tantivy index (`index::tantivy_index` writes it, `casebook search`
/// opens it).
pub const TANTIVY_DIR: &str = "search/tantivy";

/// The paths of the files a build makes or keeps: the pages, a list per
/// [`Scope`](crate::render::Scope) in the order of `render::scopes` (shared with the dev
/// server's memory, which keeps a scope's list while its pages do not change), then the
/// others (assets, the files of the search indexes and the manifest), each once, in no
/// order.
#[derive(Debug, Default, Clone)]
pub struct Paths {
    scopes: Vec<std::sync::Arc<[std::path::PathBuf]>>,
    others: Vec<std::path::PathBuf>,
}

impl Paths {
    /// The pages, a list per scope, in the order of `render::scopes`.
    pub fn of_scopes(scopes: Vec<std::sync::Arc<[std::path::PathBuf]>>) -> Self {
        Paths { scopes, others: Vec::new() }
    }

    /// The pages' lists, a list per scope.
    pub fn scopes(&self) -> &[std::sync::Arc<[std::path::PathBuf]>] {
        &self.scopes
    }

    /// Adds paths that are not a scope's pages.
    pub fn extend(&mut self, paths: impl IntoIterator<Item = std::path::PathBuf>) {
        self.others.extend(paths);
    }

    /// How many paths.
    pub fn len(&self) -> usize {
        self.scopes.iter().map(|s| s.len()).sum::<usize>() + self.others.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every path.
    pub fn iter(&self) -> impl Iterator<Item = &std::path::PathBuf> {
        self.scopes.iter().flat_map(|s| s.iter()).chain(&self.others)
    }

    /// Every path, in parallel.
    pub fn par_iter(&self) -> impl rayon::iter::ParallelIterator<Item = &std::path::PathBuf> {
        use rayon::prelude::*;
        self.scopes.par_iter().flat_map_iter(|s| s.iter()).chain(self.others.par_iter())
    }
}

impl From<Vec<std::path::PathBuf>> for Paths {
    fn from(others: Vec<std::path::PathBuf>) -> Self {
        Paths { scopes: Vec::new(), others }
    }
}
