//! Write: put the rendered files on disk so that the output folder is replaced only when
//! the whole build succeeded. Files go into a staging folder beside the output as they
//! are made, which is then swapped in with two renames; a failure before the swap
//! deletes the staging folder and leaves the old output untouched.
//!
//! casebook only ever replaces a folder it wrote itself (it leaves a `.casebook` marker),
//! so `--output` pointed at the wrong folder cannot delete someone's work.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::render::OutputFile;

/// The file that marks a folder as casebook output.
pub const MARKER: &str = ".casebook";

/// Why the output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The output folder holds something casebook did not write.
    #[error("{0} exists and was not written by casebook (it has no {MARKER} file); remove it or choose another --output")]
    NotOurs(PathBuf),
    /// The output folder would contain the sources.
    #[error("the output folder {0} contains the site's sources; choose another --output")]
    ContainsSources(PathBuf),
    /// A file operation failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> WriteError + '_ {
    move |source| WriteError::Io { path: path.to_path_buf(), source }
}

/// A folder beside the output that a build writes into, file by file, while it renders.
/// [`Staging::commit`] swaps it in; dropping it uncommitted deletes it, so a failed build
/// leaves the previous output as it was.
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    output: PathBuf,
    committed: bool,
}

impl Staging {
    /// Checks that `output` may be replaced (it is casebook's, or empty, or absent, and it
    /// does not contain the site at `root`) and creates the staging folder beside it.
    pub fn create(output: &Path, root: &Path) -> Result<Self, WriteError> {
        let output_abs = absolute(output);
        if absolute(root).starts_with(&output_abs) {
            return Err(WriteError::ContainsSources(output.to_path_buf()));
        }
        if output.exists() {
            let empty = fs::read_dir(output).map_err(io_error(output))?.next().is_none();
            if !empty && !output.join(MARKER).is_file() {
                return Err(WriteError::NotOurs(output.to_path_buf()));
            }
        }
        let parent = output_abs.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
        fs::create_dir_all(&parent).map_err(io_error(&parent))?;
        let name = output_abs.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "public".into());
        let dir = parent.join(format!(".{name}.staging-{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(io_error(&dir))?;
        }
        fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        Ok(Staging { dir, output: output_abs, committed: false })
    }

    /// Writes one file. Safe to call from many threads at once.
    pub fn put(&self, file: &OutputFile) -> Result<(), WriteError> {
        let target = self.dir.join(&file.path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        fs::write(&target, &file.bytes).map_err(io_error(&target))
    }

    /// Copies `static_dir` in (last, so a site can replace any generated file), marks the
    /// folder as casebook's, and swaps it in for the output.
    pub fn commit(mut self, static_dir: Option<&Path>) -> Result<(), WriteError> {
        if let Some(dir) = static_dir.filter(|d| d.is_dir()) {
            for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
                let entry = entry.map_err(|e| WriteError::Io { path: dir.to_path_buf(), source: e.into() })?;
                if !entry.file_type().is_file() {
                    continue; // folders are created on demand; links are not followed
                }
                let relative = entry.path().strip_prefix(dir).expect("walkdir yields paths below its root");
                let target = self.dir.join(relative);
                if let Some(p) = target.parent() {
                    fs::create_dir_all(p).map_err(io_error(p))?;
                }
                fs::copy(entry.path(), &target).map_err(io_error(entry.path()))?;
            }
        }
        let marker = self.dir.join(MARKER);
        fs::write(&marker, "This folder is casebook's output; the next build replaces it.\n").map_err(io_error(&marker))?;
        let backup = self.dir.with_file_name(
            self.dir.file_name().map(|n| n.to_string_lossy().replace(".staging-", ".previous-")).unwrap_or_default(),
        );
        swap(&self.dir, &self.output, &backup)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// Writes `files` (and a copy of `static_dir`, if given) as the new contents of `output`.
pub fn write_site(output: &Path, files: &[OutputFile], static_dir: Option<&Path>, root: &Path) -> Result<(), WriteError> {
    use rayon::prelude::*;
    let staging = Staging::create(output, root)?;
    files.par_iter().try_for_each(|file| staging.put(file))?;
    staging.commit(static_dir)
}

fn swap(staging: &Path, output: &Path, backup: &Path) -> Result<(), WriteError> {
    if output.exists() {
        fs::rename(output, backup).map_err(io_error(output))?;
        if let Err(e) = fs::rename(staging, output) {
            // Put the previous site back before reporting.
            let _ = fs::rename(backup, output);
            return Err(WriteError::Io { path: output.to_path_buf(), source: e });
        }
        fs::remove_dir_all(backup).map_err(io_error(backup))?;
    } else {
        fs::rename(staging, output).map_err(io_error(output))?;
    }
    Ok(())
}

fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(path) };
    // Lexical normalisation: the output folder may not exist yet.
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> OutputFile {
        OutputFile { path: path.into(), bytes: text.as_bytes().to_vec() }
    }

    #[test]
    fn replaces_previous_output_and_leaves_no_staging() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        let root = dir.path().join("site");
        write_site(&out, &[file("a/index.html", "one"), file("old.html", "x")], None, &root).unwrap();
        write_site(&out, &[file("a/index.html", "two")], None, &root).unwrap();
        assert_eq!(fs::read_to_string(out.join("a/index.html")).unwrap(), "two");
        assert!(!out.join("old.html").exists());
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("public")]);
    }

    #[test]
    fn refuses_a_folder_it_did_not_write() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("src");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("main.rs"), "fn main() {}").unwrap();
        let err = write_site(&out, &[file("index.html", "x")], None, &dir.path().join("site")).unwrap_err();
        assert!(matches!(err, WriteError::NotOurs(_)));
        assert!(out.join("main.rs").exists());
    }

    #[test]
    fn refuses_to_write_over_the_sources() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_site(dir.path(), &[file("index.html", "x")], None, &dir.path().join("site")).unwrap_err();
        assert!(matches!(err, WriteError::ContainsSources(_)));
    }
}
