//! Shared helpers: build a site through the library into a temporary folder, once per
//! test binary, and read its pages.
#![allow(dead_code, unreachable_pub, reason = "each test binary includes this module and uses a different part of it")]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use casebook::pipeline::{self, BuildOptions, Outcome};

/// The repository root (the bundled site's root).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A built site: its output folder (kept for the whole test run) and the outcome.
pub struct Built {
    pub dir: tempfile::TempDir,
    pub outcome: Outcome,
}

impl Built {
    pub fn out(&self) -> PathBuf {
        self.dir.path().join("public")
    }

    /// The text of a page by URL path (`/fractal/` → `fractal/index.html`).
    pub fn page(&self, url: &str) -> String {
        let path = self.out().join(casebook::urls::output_path(url));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("no page for {url} ({}): {e}", path.display()))
    }

    pub fn exists(&self, url: &str) -> bool {
        self.out().join(casebook::urls::output_path(url)).is_file()
    }
}

/// Builds the site at `root` with `options` adjusted by `adjust`.
pub fn build_site(root: &Path, adjust: impl FnOnce(&mut BuildOptions)) -> Built {
    let dir = tempfile::tempdir().unwrap();
    let mut options = BuildOptions::new(root);
    options.output = dir.path().join("public");
    adjust(&mut options);
    let outcome = pipeline::build(&options).expect("the theme renders and the output is writable");
    Built { dir, outcome }
}

/// The bundled content, built once per test binary.
pub fn bundled() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let built = build_site(&repo(), |_| {});
        let errors: Vec<String> =
            built.outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert!(errors.is_empty(), "the bundled content has errors:\n{}", errors.join("\n\n"));
        assert!(built.outcome.written);
        built
    })
}

/// Copies a folder tree (for tests that edit a site).
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Every file below `dir`, as relative paths, sorted.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    out.sort();
    out
}
