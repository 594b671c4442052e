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

use crate::output::OutputFile;
use crate::rebuild::{PathMap, Stamp};

/// The file that marks a folder as casebook output.
pub const MARKER: &str = ".casebook";

/// Why the output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The output folder holds something casebook did not write.
    #[error(
        "{0} exists and was not written by casebook (it has no {MARKER} file); remove it or choose another --output"
    )]
    NotOurs(PathBuf),
    /// Another build is writing the same output folder.
    #[error("another casebook build (process {pid}) is writing {output}; wait for it, or delete {lock} if no build is running")]
    Busy {
        /// The output folder.
        output: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// The process holding it.
        pid: u32,
    },
    /// The output folder would contain the sources.
    #[error("the output folder {0} contains the site's sources; choose another --output")]
    ContainsSources(PathBuf),
    /// The output folder would be inside the sources (`content/`, `themes/`, `static/`):
    /// every later build would read the site it wrote as content.
    #[error("the output folder {0} is inside the site's sources ({1}); choose an --output outside content/, themes/ and static/")]
    InsideSources(PathBuf, PathBuf),
    /// The build cache would be inside the sources: its files would be read as content.
    #[error("the cache folder {0} is inside the site's sources ({1}); choose a --cache outside content/, themes/ and static/")]
    CacheInsideSources(PathBuf, PathBuf),
    /// A file of the previous output that a warm build was taking changed under it.
    #[error("{0} went from the previous output while the build was taking it; build again (nothing was replaced)")]
    ChangedDuringBuild(PathBuf),
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
    lock: PathBuf,
    committed: bool,
    /// The folders made so far, by the 128-bit hash of their path: most files go into a
    /// folder made for an earlier one, and asking the file system again for each costs a
    /// failed `mkdir` and a `stat`. Hashes, not paths: a large site has hundreds of
    /// thousands of folders, and their paths would be tens of megabytes.
    folders: std::sync::Mutex<rustc_hash::FxHashSet<u128>>,
}

/// True when process `pid` is running (on Linux; elsewhere every lock is assumed held).
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// `path` with every symbolic link of the part of it that exists resolved, and the rest
/// (not yet made) kept as written.
fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = fs::canonicalize(&existing) {
            return rest.iter().rev().fold(real, |path: PathBuf, part| path.join(part));
        }
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The folder of the sources (`content/`, `themes/`, `static/` of `real_root`) that
/// holds `real_path`, if one does.
fn source_folder_holding(real_path: &Path, real_root: &Path) -> Option<PathBuf> {
    ["content", "themes", "static"].map(|folder| real_root.join(folder)).into_iter().find(|f| real_path.starts_with(f))
}

/// Refuses a build cache inside the sources, compared by real paths as the output is.
pub fn check_cache_folder(cache: &Path, root: &Path) -> Result<(), WriteError> {
    let (real_cache, real_root) = (real_path(&absolute(cache)), real_path(&absolute(root)));
    match source_folder_holding(&real_cache, &real_root) {
        Some(sources) => Err(WriteError::CacheInsideSources(cache.to_path_buf(), sources)),
        None => Ok(()),
    }
}

/// The process id written in a lock file or folder name, if any.
fn pid_in(text: &str) -> Option<u32> {
    text.trim().rsplit(['-', '\n']).next()?.trim().parse().ok()
}

impl Staging {
    /// Checks that `output` may be replaced (it is casebook's, or empty, or absent, and it
    /// does not contain the site at `root`) and creates the staging folder beside it.
    pub fn create(output: &Path, root: &Path) -> Result<Self, WriteError> {
        // An output that is a symbolic link (`public -> /srv/www/site`) is updated through
        // it: the link's target is what is swapped, and the link keeps pointing at it.
        let through_link;
        let output = if fs::symlink_metadata(output).is_ok_and(|m| m.file_type().is_symlink()) {
            through_link = real_path(&absolute(output));
            through_link.as_path()
        } else {
            output
        };
        let output_abs = absolute(output);
        // Compared by their real paths: a root reached through a symbolic link into an
        // earlier output is inside that output all the same.
        let (real_output, real_root) = (real_path(&output_abs), real_path(&absolute(root)));
        if real_root.starts_with(&real_output) {
            return Err(WriteError::ContainsSources(output.to_path_buf()));
        }
        if let Some(sources) = source_folder_holding(&real_output, &real_root) {
            return Err(WriteError::InsideSources(output.to_path_buf(), sources));
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
        // One build at a time per output folder: two would race to swap their trees in.
        let lock = parent.join(format!(".{name}.lock"));
        loop {
            match fs::OpenOptions::new().write(true).create_new(true).open(&lock) {
                Ok(mut file) => {
                    use std::io::Write;
                    file.write_all(std::process::id().to_string().as_bytes()).map_err(io_error(&lock))?;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let holder = fs::read_to_string(&lock).ok().as_deref().and_then(pid_in);
                    match holder {
                        Some(pid) if pid != std::process::id() && alive(pid) => {
                            return Err(WriteError::Busy { output: output.to_path_buf(), lock, pid });
                        }
                        // Left by a build that was killed: take it over.
                        _ => fs::remove_file(&lock).map_err(io_error(&lock))?,
                    }
                }
                Err(e) => return Err(WriteError::Io { path: lock, source: e }),
            }
        }
        // Staging and backup folders of killed builds are removed.
        for entry in fs::read_dir(&parent).map_err(io_error(&parent))?.flatten() {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let ours = [format!(".{name}.staging-"), format!(".{name}.previous-")]
                .iter()
                .any(|p| file_name.starts_with(p.as_str()));
            if ours && pid_in(&file_name).is_some_and(|pid| pid == std::process::id() || !alive(pid)) {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
        let dir = parent.join(format!(".{name}.staging-{}", std::process::id()));
        if let Err(e) = fs::create_dir_all(&dir) {
            let _ = fs::remove_file(&lock);
            return Err(WriteError::Io { path: dir, source: e });
        }
        Ok(Staging { dir, output: output_abs, lock, committed: false, folders: Default::default() })
    }

    /// Writes one file. Safe to call from many threads at once.
    pub fn put(&self, file: &OutputFile) -> Result<(), WriteError> {
        let target = self.dir.join(&file.path);
        self.folder_of(&target)?;
        fs::write(&target, &file.bytes).map_err(io_error(&target))
    }

    /// Puts the file at `from` (the previous output's, which holds the bytes this build
    /// makes at `path`) in as `path`: a hard link, so no inode is allocated, or a copy
    /// where the file system links no files.
    pub fn link(&self, path: &Path, from: &Path) -> Result<(), WriteError> {
        let target = self.dir.join(path);
        self.folder_of(&target)?;
        match fs::hard_link(from, &target) {
            Ok(()) => return Ok(()),
            // A streamed file, written before its hash was known.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                fs::remove_file(&target).map_err(io_error(&target))?;
                if fs::hard_link(from, &target).is_ok() {
                    return Ok(());
                }
            }
            Err(_) => {}
        }
        fs::copy(from, &target).map(|_| ()).map_err(io_error(&target))
    }

    /// Makes the folder `target` goes in, unless this staging folder made it already.
    fn folder_of(&self, target: &Path) -> Result<(), WriteError> {
        let Some(parent) = target.parent() else { return Ok(()) };
        // A panic while holding the lock leaves the set whole (an insertion is one step).
        let folders = || self.folders.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = xxhash_rust::xxh3::xxh3_128(parent.as_os_str().as_encoded_bytes());
        if folders().contains(&key) {
            return Ok(());
        }
        fs::create_dir_all(parent).map_err(io_error(parent))?;
        folders().insert(key);
        Ok(())
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
                // A generated file there may be a link to the previous output's: copying
                // onto it would change the previous output, still live until the swap.
                let _ = fs::remove_file(&target);
                fs::copy(entry.path(), &target).map_err(io_error(entry.path()))?;
            }
        }
        let marker = self.dir.join(MARKER);
        fs::write(&marker, "This folder is casebook's output; the next build replaces it.\n")
            .map_err(io_error(&marker))?;
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
        let _ = fs::remove_file(&self.lock);
    }
}

/// Puts `staging` in the place of `output`. On Linux the two trade places in one atomic
/// step, so a reader (or a build killed at any moment) sees the old tree or the new one,
/// never none; elsewhere, or on a file system without that, two renames.
fn swap(staging: &Path, output: &Path, backup: &Path) -> Result<(), WriteError> {
    if !output.exists() {
        return fs::rename(staging, output).map_err(io_error(output));
    }
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        if renameat_with(CWD, staging, CWD, output, RenameFlags::EXCHANGE).is_ok() {
            // The previous tree is now where the staging folder was.
            return fs::remove_dir_all(staging).map_err(io_error(staging));
        }
    }
    fs::rename(output, backup).map_err(io_error(output))?;
    if let Err(e) = fs::rename(staging, output) {
        // Put the previous site back before reporting.
        let _ = fs::rename(backup, output);
        return Err(WriteError::Io { path: output.to_path_buf(), source: e });
    }
    fs::remove_dir_all(backup).map_err(io_error(backup))
}

fn absolute(path: &Path) -> PathBuf {
    let joined =
        if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(path) };
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

    /// Writes `files` as the new contents of `output`, as a build does.
    fn write_site(
        output: &Path,
        files: &[OutputFile],
        static_dir: Option<&Path>,
        root: &Path,
    ) -> Result<(), WriteError> {
        let staging = Staging::create(output, root)?;
        for file in files {
            staging.put(file)?;
        }
        staging.commit(static_dir)
    }

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
    fn a_second_build_into_the_same_folder_is_refused_while_the_first_runs() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        let root = dir.path().join("site");
        let first = Staging::create(&out, &root).unwrap();
        // A lock held by a live process (this test's parent: always running).
        let parent_pid = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|s| s.split_whitespace().nth(3)?.parse::<u32>().ok());
        if let Some(pid) = parent_pid {
            fs::write(dir.path().join(".public.lock"), pid.to_string()).unwrap();
            let err = Staging::create(&out, &root).unwrap_err();
            assert!(matches!(err, WriteError::Busy { .. }), "{err}");
            assert!(err.to_string().contains(&format!("process {pid}")));
        }
        drop(first);
        // A lock and a staging folder left by a killed build are taken over and cleaned.
        fs::write(dir.path().join(".public.lock"), "999999999").unwrap();
        fs::create_dir(dir.path().join(".public.staging-999999999")).unwrap();
        let staging = Staging::create(&out, &root).unwrap();
        staging.put(&file("index.html", "x")).unwrap();
        staging.commit(None).unwrap();
        let left: Vec<_> =
            fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(left, ["public"]);
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
    fn refuses_an_output_inside_the_sources_or_holding_them_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("site");
        fs::create_dir_all(root.join("content")).unwrap();
        let err = Staging::create(&root.join("content/out"), &root).unwrap_err();
        assert!(matches!(err, WriteError::InsideSources(..)), "{err}");
        assert!(err.to_string().contains("outside content/"), "{err}");
        // A root reached through a link into the output folder.
        let output = dir.path().join("public");
        fs::create_dir_all(output.join("inner")).unwrap();
        std::os::unix::fs::symlink(output.join("inner"), dir.path().join("linked")).unwrap();
        let err = Staging::create(&output, &dir.path().join("linked")).unwrap_err();
        assert!(matches!(err, WriteError::ContainsSources(_)), "{err}");
        assert!(output.join("inner").is_dir(), "nothing was removed");
    }

    #[test]
    fn a_cache_inside_the_sources_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("site");
        fs::create_dir_all(root.join("content")).unwrap();
        let err = check_cache_folder(&root.join("content/.cache"), &root).unwrap_err();
        assert!(err.to_string().contains("choose a --cache outside content/"), "{err}");
        assert!(check_cache_folder(&root.join(".casebook-cache"), &root).is_ok());
    }

    #[test]
    fn an_output_that_is_a_link_is_updated_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("site");
        fs::create_dir_all(root.join("content")).unwrap();
        let target = dir.path().join("www");
        let link = dir.path().join("public");
        write_site(&target, &[file("index.html", "one")], None, &root).unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_site(&link, &[file("index.html", "two")], None, &root).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is still a link");
        assert_eq!(fs::read_to_string(target.join("index.html")).unwrap(), "two", "its target was updated");
    }

    #[test]
    fn refuses_to_write_over_the_sources() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_site(dir.path(), &[file("index.html", "x")], None, &dir.path().join("site")).unwrap_err();
        assert!(matches!(err, WriteError::ContainsSources(_)));
    }
}

/// The output folder of a previous build, written file by file (the dev server's
/// rebuilds): only the files whose bytes changed are written, and the files the build no
/// longer makes are removed. A reader may see the site between two files; the dev server
/// reloads pages only once a rebuild is done.
#[derive(Debug)]
pub struct InPlace {
    output: PathBuf,
}

impl InPlace {
    /// The output folder, which must be casebook's.
    pub fn open(output: &Path) -> Result<Self, WriteError> {
        if !output.join(MARKER).is_file() {
            return Err(WriteError::NotOurs(output.to_path_buf()));
        }
        Ok(InPlace { output: output.to_path_buf() })
    }

    /// Writes one file (through a temporary file and a rename, so a reader never sees
    /// half of it). Safe to call from many threads at once.
    pub fn put(&self, file: &OutputFile) -> Result<(), WriteError> {
        let target = self.output.join(&file.path);
        let parent = target.parent().unwrap_or(&self.output);
        fs::create_dir_all(parent).map_err(io_error(parent))?;
        let mut temporary = tempfile::NamedTempFile::new_in(parent).map_err(io_error(parent))?;
        io::Write::write_all(&mut temporary, &file.bytes).map_err(io_error(&target))?;
        temporary.persist(&target).map_err(|e| WriteError::Io { path: target.clone(), source: e.error })?;
        Ok(())
    }

    /// Removes files (paths relative to the output), and the folders they leave empty.
    pub fn remove(&self, paths: &[&PathBuf]) -> Result<(), WriteError> {
        for path in paths {
            let target = self.output.join(path);
            match fs::remove_file(&target) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(WriteError::Io { path: target, source: e }),
            }
            let mut folder = target.parent();
            while let Some(dir) = folder.filter(|d| *d != self.output) {
                // Fails (and stops) at the first folder that is not empty.
                if fs::remove_dir(dir).is_err() {
                    break;
                }
                folder = dir.parent();
            }
        }
        Ok(())
    }

    /// Brings the static files up to date: copies those whose stamp changed since
    /// `before`, and removes those gone, unless the build generated a file there.
    /// Returns the paths copied or removed.
    pub fn sync_static(
        &self,
        static_dir: &Path,
        before: &PathMap<Stamp>,
        now: &PathMap<Stamp>,
        generated: &dyn Fn(&Path) -> bool,
    ) -> Result<Vec<PathBuf>, WriteError> {
        let mut changed = Vec::new();
        for (path, stamp) in now {
            if before.get(path) != Some(stamp) {
                let target = self.output.join(path);
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent).map_err(io_error(parent))?;
                }
                fs::copy(static_dir.join(path), &target).map_err(io_error(&target))?;
                changed.push(path.clone());
            }
        }
        let gone: Vec<&PathBuf> = before.keys().filter(|p| !now.contains_key(*p) && !generated(p)).collect();
        self.remove(&gone)?;
        changed.extend(gone.into_iter().cloned());
        Ok(changed)
    }
}

/// The files of the static folder (relative paths) with their stamps.
pub fn static_stamps(static_dir: &Path) -> Result<PathMap<Stamp>, WriteError> {
    let mut stamps = PathMap::default();
    if !static_dir.is_dir() {
        return Ok(stamps);
    }
    for entry in walkdir::WalkDir::new(static_dir).min_depth(1) {
        let entry = entry.map_err(|e| WriteError::Io { path: static_dir.to_path_buf(), source: e.into() })?;
        if entry.file_type().is_file() {
            let relative =
                entry.path().strip_prefix(static_dir).expect("walkdir yields paths below its root").to_path_buf();
            if let Some(stamp) = Stamp::of(entry.path()) {
                stamps.insert(relative, stamp);
            }
        }
    }
    Ok(stamps)
}
