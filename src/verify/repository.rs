//! Sources' git repositories on this machine, read at a revision with gix: never a
//! checkout, whose working tree may be at another revision, and no `git` binary.

use std::path::{Path, PathBuf};

use crate::model::Source;

/// Where the repositories of a site's sources are: given one by one (`--source
/// SRC-1=PATH`, or `--source https://github.com/o/r=PATH`), or as a folder of clones by
/// host, owner and name (`sources_dir`: `DIR/github.com/o/r`, or `DIR/github.com/o/r.git`).
#[derive(Debug, Clone, Default)]
pub struct SourceRepositories {
    /// `KEY=PATH`: a source ID (of every run) or a repository URL, and the repository.
    pub given: Vec<(String, PathBuf)>,
    /// A folder of clones.
    pub dir: Option<PathBuf>,
    /// With `--fetch`: the folder bare clones are fetched into and kept
    /// (`DIR/github.com/o/r.git`), looked in after the others.
    pub cache: Option<PathBuf>,
}

impl SourceRepositories {
    /// The repository of `source` on this machine, if one is given or found.
    pub fn path_for(&self, source: &Source) -> Option<PathBuf> {
        let url = source.repository.as_ref().map(|u| u.as_str().trim_end_matches('/').trim_end_matches(".git"));
        let given = self.given.iter().find(|(key, _)| {
            *key == source.id || url.is_some_and(|u| u == key.trim_end_matches('/').trim_end_matches(".git"))
        });
        if let Some((_, path)) = given {
            return Some(path.clone());
        }
        let below = below_host(url?);
        let in_dir = self.dir.iter().flat_map(|dir| [dir.join(&below), dir.join(format!("{below}.git"))]);
        in_dir.chain(self.cache.iter().map(|cache| cache.join(format!("{below}.git")))).find(|p| p.is_dir())
    }

    /// Where `--fetch` keeps the clone of `url`: `CACHE/<host>/<owner>/<name>.git`.
    pub fn cache_path(&self, url: &str) -> Option<PathBuf> {
        let below = below_host(url.trim_end_matches('/').trim_end_matches(".git"));
        Some(self.cache.as_ref()?.join(format!("{below}.git")))
    }
}

/// Without the `fetch` feature nothing can be fetched.
#[cfg(not(feature = "fetch"))]
pub fn fetch(url: &str, _revision: &str, _into: &Path) -> Result<bool, String> {
    Err(format!("cannot fetch {url}: this casebook was built without the `fetch` feature"))
}

/// `github.com/o/r` of `https://github.com/o/r`.
fn below_host(url: &str) -> String {
    url.split_once("://").map_or(url, |(_, rest)| rest).trim_matches('/').to_string()
}

/// The default folder of fetched clones: `$XDG_CACHE_HOME/casebook/repositories`, else
/// `~/.cache/casebook/repositories`.
pub fn default_cache() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("casebook").join("repositories"))
}

/// Makes `into` a bare clone of `url` holding `revision`: cloned when it is not there,
/// cloned again when it lacks the revision (a clone is replaced only once the new one is
/// whole). Returns whether anything was fetched.
#[cfg(feature = "fetch")]
pub fn fetch(url: &str, revision: &str, into: &Path) -> Result<bool, String> {
    if into.is_dir() && AtRevision::open(into, revision).is_ok() {
        return Ok(false);
    }
    let parent = into.parent().ok_or_else(|| format!("{} has no parent folder", into.display()))?;
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let fresh = tempfile::Builder::new()
        .prefix(".fetching-")
        .tempdir_in(parent)
        .map_err(|e| format!("cannot create a folder in {}: {e}", parent.display()))?;
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    let mut clone = gix::prepare_clone_bare(url, fresh.path()).map_err(|e| format!("cannot clone {url}: {e}"))?;
    clone.fetch_only(gix::progress::Discard, &interrupt).map_err(|e| format!("cannot fetch {url}: {e}"))?;
    let fetched = fresh.keep();
    if into.exists() {
        std::fs::remove_dir_all(into).map_err(|e| format!("cannot replace {}: {e}", into.display()))?;
    }
    std::fs::rename(&fetched, into).map_err(|e| format!("cannot move the clone into {}: {e}", into.display()))?;
    Ok(true)
}

/// What is at a path of a revision's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A file, with its bytes.
    File(Vec<u8>),
    /// A folder.
    Folder,
    /// Nothing.
    Missing,
}

/// A repository opened at one revision.
pub struct AtRevision {
    repo: gix::Repository,
    tree: gix::ObjectId,
    /// The commit the revision names.
    pub commit: String,
}

/// Why a repository could not be read at a revision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepositoryError {
    /// The folder is no git repository (or an unreadable one).
    #[error("{path} is not a git repository that can be read: {message}")]
    Open {
        /// The folder.
        path: String,
        /// gix's reason.
        message: String,
    },
    /// The revision is not in it.
    #[error("revision {revision} is not in the repository at {path}")]
    Revision {
        /// The revision.
        revision: String,
        /// The folder.
        path: String,
    },
}

impl AtRevision {
    /// The repository at `path`, at `revision` (a commit, abbreviated or not, or any
    /// name git would take).
    pub fn open(path: &Path, revision: &str) -> Result<Self, RepositoryError> {
        let shown = path.display().to_string();
        let repo =
            gix::open(path).map_err(|e| RepositoryError::Open { path: shown.clone(), message: e.to_string() })?;
        let missing = || RepositoryError::Revision { revision: revision.to_string(), path: shown.clone() };
        let (tree, commit) = {
            let id = repo.rev_parse_single(revision.trim()).map_err(|_| missing())?;
            let commit = id.object().map_err(|_| missing())?.peel_to_commit().map_err(|_| missing())?;
            (commit.tree_id().map_err(|_| missing())?.detach(), commit.id.to_string())
        };
        Ok(AtRevision { repo, tree, commit })
    }

    /// What is at `path` (relative to the repository's root, `/`-separated).
    pub fn entry(&self, path: &str) -> Entry {
        let path = path.trim_start_matches("./").trim_matches('/');
        let Ok(tree) = self.repo.find_tree(self.tree) else { return Entry::Missing };
        if path.is_empty() {
            return Entry::Folder;
        }
        let Ok(Some(entry)) = tree.lookup_entry_by_path(path) else { return Entry::Missing };
        if entry.mode().is_tree() {
            return Entry::Folder;
        }
        match entry.object() {
            Ok(object) => Entry::File(object.detach().data),
            Err(_) => Entry::Missing,
        }
    }
}
