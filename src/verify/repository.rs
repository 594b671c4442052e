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
        let (dir, url) = (self.dir.as_ref()?, url?);
        let below = url.split_once("://").map_or(url, |(_, rest)| rest);
        [dir.join(below), dir.join(format!("{below}.git"))].into_iter().find(|p| p.is_dir())
    }

    /// True when no repository can be found at all.
    pub fn is_empty(&self) -> bool {
        self.given.is_empty() && self.dir.is_none()
    }
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
