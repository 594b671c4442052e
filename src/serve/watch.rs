//! Watching the site's sources: `content/` (which holds casebook.yaml), `themes/` and
//! `static/`. Events are debounced (an editor's save is several of them) and filtered
//! (the output folder, hidden files, editor temp files); what is left is sent on as one
//! batch of changed paths per quiet spell.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::EventKind;
use notify::RecursiveMode;
use notify_debouncer_full::{new_debouncer, DebounceEventResult};

/// The folders of the site root whose changes trigger a rebuild.
pub const WATCHED: [&str; 3] = ["content", "themes", "static"];

/// How long the sources must be quiet before a rebuild starts.
const QUIET: Duration = Duration::from_millis(150);

/// True when a change to `path` can change the site. `root` and `output` are absolute.
/// Hidden files and folders (`.git`, the output's staging folder and lock), editor temp
/// files and anything inside the output folder are ignored.
pub fn relevant(path: &Path, root: &Path, output: &Path) -> bool {
    if path.starts_with(output) {
        return false;
    }
    let Ok(relative) = path.strip_prefix(root) else { return false };
    let mut parts = relative.components().map(|c| c.as_os_str().to_string_lossy());
    let Some(top) = parts.next() else { return false };
    if !WATCHED.contains(&top.as_ref()) {
        return false;
    }
    !relative.components().any(|c| is_scratch(&c.as_os_str().to_string_lossy()))
}

/// Names editors and tools write beside the files they save.
fn is_scratch(name: &str) -> bool {
    name.starts_with('.')                      // hidden; also emacs' .#lock and vim's .x.swp
        || name.starts_with('#')               // emacs autosave #x#
        || name.ends_with('~')                 // backups
        || name == "4913"                      // vim checks it may write the folder
        || [".swp", ".swo", ".swx", ".tmp", ".part", ".crdownload"].iter().any(|s| name.ends_with(s))
}

/// Starts watching the sources of the site at `root` (absolute); each batch of relevant
/// changed paths goes to `changes`. The watcher runs on a thread of its own until
/// `changes` is closed.
pub fn spawn(root: PathBuf, output: PathBuf, changes: mpsc::Sender<Vec<PathBuf>>) -> Result<(), notify::Error> {
    let (events_tx, events) = mpsc::channel::<DebounceEventResult>();
    let mut debouncer = new_debouncer(QUIET, None, events_tx)?;
    // The root itself, not recursively: to notice themes/ or static/ being created (or
    // content/ being replaced) and start watching them. Recursively it could be huge
    // (target/, node_modules/).
    debouncer.watch(&root, RecursiveMode::NonRecursive)?;
    for name in WATCHED {
        let dir = root.join(name);
        if dir.is_dir() {
            debouncer.watch(&dir, RecursiveMode::Recursive)?;
        }
    }
    std::thread::Builder::new()
        .name("casebook-watch".into())
        .spawn(move || {
            for result in events {
                let batch = match result {
                    Ok(batch) => batch,
                    Err(errors) => {
                        for e in errors {
                            super::say!(err, "casebook: watching the sources: {e}");
                        }
                        continue;
                    }
                };
                // Reading a file is an event too (the build reads every source): only
                // changes count, and closing a file written to.
                let mut changed: Vec<PathBuf> = batch
                    .into_iter()
                    .filter(|e| match e.event.kind {
                        EventKind::Access(kind) => kind == AccessKind::Close(AccessMode::Write),
                        _ => true,
                    })
                    .flat_map(|e| e.event.paths)
                    .filter(|p| relevant(p, &root, &output))
                    .collect();
                if changed.is_empty() {
                    continue;
                }
                changed.sort();
                changed.dedup();
                // A watched folder that was just created (or replaced) needs a watch of
                // its own; watching it again is harmless.
                for name in WATCHED {
                    let dir = root.join(name);
                    if changed.contains(&dir) && dir.is_dir() {
                        let _ = debouncer.watch(&dir, RecursiveMode::Recursive);
                    }
                }
                if changes.send(changed).is_err() {
                    break;
                }
            }
        })
        .map_err(notify::Error::io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sources_count() {
        let root = Path::new("/site");
        let output = Path::new("/site/public");
        let yes = [
            "/site/content/a/run/report.md",
            "/site/content/casebook.yaml",
            "/site/themes/x/templates/base.html",
            "/site/static/a.png",
            "/site/themes",
        ];
        for path in yes {
            assert!(relevant(Path::new(path), root, output), "{path}");
        }
        let no = [
            "/site/public/index.html",
            "/site/.public.staging-12/index.html",
            "/site/.public.lock",
            "/site/README.md",
            "/site/content/a/.report.md.swp",
            "/site/content/a/report.md~",
            "/site/content/a/4913",
            "/site/content/a/#report.md#",
            "/site/content/.git/index",
            "/elsewhere/content/x.md",
        ];
        for path in no {
            assert!(!relevant(Path::new(path), root, output), "{path}");
        }
        // An output folder inside content/ is still ignored.
        assert!(!relevant(Path::new("/site/content/out/x.html"), root, Path::new("/site/content/out")));
    }
}
