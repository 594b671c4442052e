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
