//! `casebook init DIR`: a new site that builds at once: `content/casebook.yaml` with the
//! default conventions written out, one small example system, a `.gitignore` for what
//! builds leave, and the JSON Schemas of its YAML files (`schema/`), which each YAML file
//! names in its first line so that an editor checks it as it is typed. The theme stays
//! built in, so a new casebook's theme reaches the site; `casebook theme eject` copies it
//! into the site to edit.

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
    /// The folder holds files, and `--force` was not given.
    #[error("{dir} is not empty (it holds {first}); to create the site in it anyway, keeping every file there, run casebook init --force")]
    NotEmpty {
        /// The folder.
        dir: PathBuf,
        /// One of its entries, to show.
        first: String,
    },
    /// The site's theme folder holds files, and `--force` was not given.
    #[error(
        "{0} already holds the theme's {1}; to overwrite the theme's files there, run casebook theme eject --force"
    )]
    ThemeExists(PathBuf, String),
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

/// What a build leaves in a site, which git should not track.
const GITIGNORE: &str = "# What casebook builds: the site and the build cache.\n/public/\n/.casebook-cache/\n";

/// Where `theme eject` puts the theme, relative to the site's root.
pub const THEME_DIR: &str = "themes/default";

/// What `init` wrote, and the files it found already there and kept (with `--force`),
/// relative to the site's folder.
pub struct Created {
    /// Files written.
    pub written: Vec<PathBuf>,
    /// Files that were there, kept as they were.
    pub kept: Vec<PathBuf>,
}

/// Creates a new site in `dir`: a new or empty folder, or with `force` one holding files
/// (none of which is overwritten).
pub fn init(dir: &Path, force: bool) -> Result<Created, InitError> {
    if dir.join("content").exists() {
        return Err(InitError::Exists(dir.to_path_buf()));
    }
    let first = fs::read_dir(dir).ok().and_then(|mut entries| entries.next()).and_then(Result::ok);
    if let (Some(first), false) = (first, force) {
        return Err(InitError::NotEmpty {
            dir: dir.to_path_buf(),
            first: first.file_name().to_string_lossy().into_owned(),
        });
    }
    let config = CONFIG.replace("title: Agentic system analyses", "title: My analyses");
    let mut files: Vec<(PathBuf, Vec<u8>)> = vec![
        yaml_file("content/casebook.yaml", &config, SchemaFile::Casebook),
        yaml_file("content/example/system.yaml", SYSTEM, SchemaFile::System),
        yaml_file("content/example/first-run/run.yaml", RUN, SchemaFile::Run),
        ("content/example/first-run/memory.md".into(), REPORT.as_bytes().to_vec()),
        ("static/.gitkeep".into(), Vec::new()),
        (".gitignore".into(), GITIGNORE.as_bytes().to_vec()),
    ];
    for file in SchemaFile::ALL {
        files.push((Path::new(SCHEMA_DIR).join(file.file_name()), file.text().into_bytes()));
    }
    let (existing, new): (Vec<_>, Vec<_>) = files.into_iter().partition(|(relative, _)| dir.join(relative).exists());
    let written = write_files(dir, new)?;
    Ok(Created { written, kept: existing.into_iter().map(|(relative, _)| relative).collect() })
}

/// Copies the built-in theme into `root`'s `themes/default/`; refuses to overwrite a
/// file there unless `force`. Returns the files written, relative to `root`.
pub fn eject_theme(root: &Path, force: bool) -> Result<Vec<PathBuf>, InitError> {
    let theme = Theme::built_in();
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for (name, source) in theme.templates() {
        files.push((Path::new(THEME_DIR).join("templates").join(name), source.as_bytes().to_vec()));
    }
    for (name, bytes) in theme.assets() {
        files.push((Path::new(THEME_DIR).join("assets").join(name), bytes.clone()));
    }
    if let (Some((there, _)), false) = (files.iter().find(|(relative, _)| root.join(relative).exists()), force) {
        let name = there.strip_prefix(THEME_DIR).unwrap_or(there).display().to_string();
        return Err(InitError::ThemeExists(root.join(THEME_DIR), name));
    }
    write_files(root, files)
}

/// Writes each file below `dir`, making its folders; returns their paths relative to it.
fn write_files(dir: &Path, files: Vec<(PathBuf, Vec<u8>)>) -> Result<Vec<PathBuf>, InitError> {
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
