//! `casebook init DIR`: a new site that builds at once: `content/casebook.yaml` with the
//! default conventions written out, one small example system, a copy of the default
//! theme to edit, and the JSON Schemas of its YAML files (`schema/`), which each YAML file
//! names in its first line so that an editor checks it as it is typed.

use std::fs;
use std::path::{Path, PathBuf};

use crate::render::Theme;
use crate::schema::SchemaFile;

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

/// Where a new site keeps its schemas, relative to its root.
pub const SCHEMA_DIR: &str = "schema";

/// A YAML file at `relative` whose first line names its schema in the site's schema/
/// folder, in place of the modeline the bundled file has (which names docs/schema/).
fn yaml_file(relative: &str, text: &str, schema: SchemaFile) -> (PathBuf, Vec<u8>) {
    let depth = Path::new(relative).components().count() - 1;
    let schema_path: PathBuf =
        std::iter::repeat_n(Path::new(".."), depth).collect::<PathBuf>().join(SCHEMA_DIR).join(schema.file_name());
    let body: String = text
        .lines()
        .filter(|line| !line.starts_with("# yaml-language-server:"))
        .map(|line| format!("{line}\n"))
        .collect();
    (relative.into(), format!("{}{body}", SchemaFile::modeline(&schema_path)).into_bytes())
}

/// Creates a new site in `dir` and returns the files written, relative to it.
pub fn init(dir: &Path) -> Result<Vec<PathBuf>, InitError> {
    if dir.join("content").exists() {
        return Err(InitError::Exists(dir.to_path_buf()));
    }
    let config = CONFIG.replace("title: Agentic system analyses", "title: My analyses");
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        yaml_file("content/casebook.yaml", &config, SchemaFile::Casebook),
        yaml_file("content/example/system.yaml", SYSTEM, SchemaFile::System),
        yaml_file("content/example/first-run/run.yaml", RUN, SchemaFile::Run),
        ("content/example/first-run/memory.md".into(), REPORT.as_bytes().to_vec()),
        ("static/.gitkeep".into(), Vec::new()),
    ];
    for file in SchemaFile::ALL {
        files.push((Path::new(SCHEMA_DIR).join(file.file_name()), file.text().into_bytes()));
    }
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
