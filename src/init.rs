//! `casebook init DIR`: a new site that builds at once: `content/casebook.yaml` with the
//! default conventions written out, one small example system, and a copy of the default
//! theme to edit.

use std::fs;
use std::path::{Path, PathBuf};

use crate::render::Theme;

/// Why a site could not be created.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The folder already holds a site.
    #[error("{0} already has a content/ folder; casebook init only creates new sites")]
    Exists(PathBuf),
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

const CONFIG: &str = include_str!("../content/casebook.yaml");
const SYSTEM: &str = include_str!("init/example-system.yaml");
const RUN: &str = include_str!("init/example-run.yaml");
const REPORT: &str = include_str!("init/example-report.md");

/// Creates a new site in `dir` and returns the files written, relative to it.
pub fn init(dir: &Path) -> Result<Vec<PathBuf>, InitError> {
    if dir.join("content").exists() {
        return Err(InitError::Exists(dir.to_path_buf()));
    }
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        (
            "content/casebook.yaml".into(),
            CONFIG.replace("title: Agentic system analyses", "title: My analyses").into_bytes(),
        ),
        ("content/example/system.yaml".into(), SYSTEM.as_bytes().to_vec()),
        ("content/example/first-run/run.yaml".into(), RUN.as_bytes().to_vec()),
        ("content/example/first-run/memory.md".into(), REPORT.as_bytes().to_vec()),
        ("static/.gitkeep".into(), Vec::new()),
    ];
    let theme = Theme::built_in();
    for (name, source) in theme.templates() {
        files.push((PathBuf::from("themes/default/templates").join(name), source.as_bytes().to_vec()));
    }
    for (name, bytes) in theme.assets() {
        files.push((PathBuf::from("themes/default/assets").join(name), bytes.clone()));
    }
    let mut written = Vec::new();
    for (relative, bytes) in files {
        let path = dir.join(&relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|source| InitError::Io { path: parent.to_path_buf(), source })?;
        }
        fs::write(&path, bytes).map_err(|source| InitError::Io { path: path.clone(), source })?;
        written.push(relative);
    }
    Ok(written)
}
