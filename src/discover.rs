//! Discover: which files make up the site. Walks `content/` (walkdir) and names every
//! system, run and report by its folder or file; reads nothing yet.
//!
//! Layout: `content/casebook.yaml`, `content/<system>/system.yaml`,
//! `content/<system>/<run>/run.yaml` and `content/<system>/<run>/*.md`. Anything else in
//! `content/` is reported, never silently skipped (hidden files excepted).

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::model::{Code, Diagnostic, Location, Slug};

/// The files of a site, grouped as systems, runs and reports, in name order.
#[derive(Debug, Default, Clone)]
pub struct SourceTree {
    /// The site root (the folder holding `content/`); pages show source paths relative to it.
    pub root: PathBuf,
    /// `content/casebook.yaml`, if present.
    pub config: Option<PathBuf>,
    /// `content/redirects.yaml`, if present.
    pub redirects: Option<PathBuf>,
    /// Systems in folder-name order.
    pub systems: Vec<SystemDir>,
}

/// A system folder.
#[derive(Debug, Clone)]
pub struct SystemDir {
    /// Folder name.
    pub slug: crate::model::Slug,
    /// Its `system.yaml`.
    pub meta: PathBuf,
    /// Run folders in name order.
    pub runs: Vec<RunDir>,
}

/// A run folder.
#[derive(Debug, Clone)]
pub struct RunDir {
    /// Folder name.
    pub slug: crate::model::Slug,
    /// Its `run.yaml`.
    pub meta: PathBuf,
    /// `*.md` files in name order.
    pub reports: Vec<PathBuf>,
}

impl SourceTree {
    /// How many files the runs have: each `run.yaml` and its reports.
    pub fn run_files(&self) -> usize {
        self.systems.iter().flat_map(|s| &s.runs).map(|run| 1 + run.reports.len()).sum()
    }

    /// True when `path` is one of the files the tree lists: a report, a `run.yaml` or a
    /// `system.yaml` (an edit of one of these leaves the tree as it is).
    pub fn lists(&self, path: &Path) -> bool {
        self.systems.iter().any(|system| {
            system.meta == path
                || system.runs.iter().any(|run| run.meta == path || run.reports.iter().any(|r| r == path))
        })
    }
}

/// Names a system folder must not take: they are the site's own top-level pages.
pub const RESERVED_SYSTEM_SLUGS: [&str; 3] = ["assets", "statuses", "search"];
/// A report must not be named like the folder holding a run's record pages.
pub const RESERVED_REPORT_SLUGS: [&str; 1] = ["records"];

/// Names a run folder must not take: a system's own pages.
pub const RESERVED_RUN_SLUGS: [&str; 2] = ["statuses", "changes"];

/// Lists the site under `content`. Problems are diagnostics; the tree holds what is usable.
pub fn discover(content: &Path) -> (SourceTree, Vec<Diagnostic>) {
    let root = content.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut tree = SourceTree { root, ..SourceTree::default() };
    let mut diagnostics = Vec::new();
    if !content.is_dir() {
        diagnostics.push(
            Diagnostic::error(Code::NoContent, Location::file(content), "the content folder does not exist")
                .with_help("run casebook from the site's root (the folder holding content/), or pass --root"),
        );
        return (tree, diagnostics);
    }
    for entry in children(content, &mut diagnostics) {
        let name = file_name(&entry);
        if entry.is_dir() {
            if let Some(system) = system_dir(&entry, &name, &mut diagnostics) {
                tree.systems.push(system);
            }
        } else if name == "casebook.yaml" {
            tree.config = Some(entry);
        } else if name == "redirects.yaml" {
            tree.redirects = Some(entry);
        } else {
            diagnostics.push(ignored(
                &entry,
                "only casebook.yaml, redirects.yaml and system folders belong at the top of content/",
            ));
        }
    }
    (tree, diagnostics)
}

fn system_dir(dir: &Path, name: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<SystemDir> {
    let slug = checked_slug(dir, name, &RESERVED_SYSTEM_SLUGS, diagnostics)?;
    let meta = dir.join("system.yaml");
    if !meta.is_file() {
        diagnostics.push(
            Diagnostic::error(
                Code::NoSystemYaml,
                Location::file(dir),
                format!("system folder `{slug}` has no system.yaml"),
            )
            .with_help("add system.yaml with at least `name:` (see docs/format.md)"),
        );
        return None;
    }
    let mut runs = Vec::new();
    for entry in children(dir, diagnostics) {
        let name = file_name(&entry);
        if entry.is_dir() {
            if let Some(run) = run_dir(&entry, &name, diagnostics) {
                runs.push(run);
            }
        } else if name != "system.yaml" {
            diagnostics.push(ignored(&entry, "a system folder holds system.yaml and run folders"));
        }
    }
    Some(SystemDir { slug, meta, runs })
}

fn run_dir(dir: &Path, name: &str, diagnostics: &mut Vec<Diagnostic>) -> Option<RunDir> {
    let slug = checked_slug(dir, name, &RESERVED_RUN_SLUGS, diagnostics)?;
    let meta = dir.join("run.yaml");
    if !meta.is_file() {
        diagnostics.push(
            Diagnostic::error(Code::NoRunYaml, Location::file(dir), format!("run folder `{slug}` has no run.yaml"))
                .with_help("add run.yaml with at least `revision:` (see docs/format.md)"),
        );
        return None;
    }
    let mut reports = Vec::new();
    let mut slugs: std::collections::HashMap<Slug, PathBuf> = std::collections::HashMap::new();
    for entry in children(dir, diagnostics) {
        let name = file_name(&entry);
        if entry.is_file() && name.ends_with(".md") {
            let stem = name.trim_end_matches(".md");
            let Some(slug) = checked_slug(&entry, stem, &RESERVED_REPORT_SLUGS, diagnostics) else { continue };
            // Two names made one slug (`技术.md`, `ji-shu.md`): two reports at one address.
            if let Some(first) = slugs.get(&slug) {
                diagnostics.push(
                    Diagnostic::error(
                        Code::BadSlug,
                        Location::file(&entry),
                        format!("`{name}` would be published at `{slug}`, as `{}` is", file_name(first)),
                    )
                    .with_help("rename one of them"),
                );
                continue;
            }
            slugs.insert(slug, entry.clone());
            reports.push(entry);
        } else if name != "run.yaml" {
            diagnostics.push(ignored(&entry, "a run folder holds run.yaml and *.md reports"));
        }
    }
    Some(RunDir { slug, meta, reports })
}

/// The entries of `dir` in name order, hidden ones left out. Symbolic links are not
/// followed: content must live inside the site.
fn children(dir: &Path, diagnostics: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in WalkDir::new(dir).min_depth(1).max_depth(1).sort_by_file_name() {
        match entry {
            Ok(entry) => {
                let name = entry.file_name().to_string_lossy();
                if name.starts_with('.') {
                    // `.draft.md` looks like a report: say it is left out, as any other
                    // file that is not part of the site is.
                    if name.len() > ".md".len() && name.ends_with(".md") {
                        diagnostics.push(ignored(
                            entry.path(),
                            "a hidden file (its name starts with a dot) is left out; rename it without the dot to publish it",
                        ));
                    }
                    continue;
                }
                if entry.path_is_symlink() {
                    diagnostics.push(
                        Diagnostic::error(
                            Code::Symlink,
                            Location::file(entry.path()),
                            "symbolic links are not read in content/",
                        )
                        .with_help("replace the link with the file or folder itself"),
                    );
                    continue;
                }
                out.push(entry.into_path());
            }
            Err(e) => {
                let path = e.path().unwrap_or(dir).to_path_buf();
                diagnostics.push(Diagnostic::error(
                    Code::Unreadable,
                    Location::file(&path),
                    format!("cannot read: {e}"),
                ));
            }
        }
    }
    out
}

/// `name` as a slug, or `None` with an error when it is none or a reserved one.
fn checked_slug(path: &Path, name: &str, reserved: &[&str], diagnostics: &mut Vec<Diagnostic>) -> Option<Slug> {
    let Some(slug) = Slug::of_name(name) else {
        diagnostics.push(
            Diagnostic::error(Code::BadSlug, Location::file(path), format!("`{name}` cannot be used as a URL segment"))
                .with_help("rename it using only ASCII letters, digits, `.`, `_` and `-` (a name in another script is transliterated)"),
        );
        return None;
    };
    if reserved.contains(&slug.as_str()) {
        diagnostics.push(
            Diagnostic::error(
                Code::ReservedSlug,
                Location::file(path),
                format!("the name `{name}` is reserved for casebook's own pages"),
            )
            .with_help("rename it"),
        );
        return None;
    }
    Some(slug)
}

fn ignored(path: &Path, why: &str) -> Diagnostic {
    Diagnostic::warning(Code::IgnoredFile, Location::file(path), "this file is not part of the site and is ignored")
        .with_help(why.to_string())
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
