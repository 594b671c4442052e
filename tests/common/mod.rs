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

    /// The text of a page by URL path (`/fractal/` → `fractal/index.html`), with its links
    /// written root-relative: pages link their neighbours relatively (`../memory/#x`), and
    /// tests say where a link leads, not how it is spelt.
    pub fn page(&self, url: &str) -> String {
        absolute_links(&self.page_as_written(url), url)
    }

    /// The text of a page by URL path, as written.
    pub fn page_as_written(&self, url: &str) -> String {
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

/// `html`, the page at `url`, with each relative `href` written root-relative.
pub fn absolute_links(html: &str, url: &str) -> String {
    let folder = &url[..url.rfind('/').map_or(0, |i| i + 1)];
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find("href=\"") {
        let start = at + 6;
        out.push_str(&rest[..start]);
        let end = start + rest[start..].find('"').unwrap();
        let link = &rest[start..end];
        let relative = !(link.starts_with('/') || link.starts_with('#') || link.contains(':'));
        if relative {
            out.push_str(&resolve(folder, link));
        } else {
            out.push_str(link);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// `link`, relative to the folder `folder` (`/a/b/`), as a root-relative URL.
pub fn resolve(folder: &str, link: &str) -> String {
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    let mut rest = link;
    loop {
        if let Some(after) = rest.strip_prefix("../") {
            parts.pop();
            rest = after;
        } else if let Some(after) = rest.strip_prefix("./") {
            rest = after;
        } else {
            break;
        }
    }
    let mut url = String::from("/");
    for part in parts {
        url.push_str(part);
        url.push('/');
    }
    url.push_str(rest);
    url
}

/// Every HTML page below `out` but the 404 page (whose links hold wherever it is served),
/// as its URL path and its text with its links written root-relative.
pub fn pages_below(out: &Path) -> Vec<(String, String)> {
    files_below(out)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "html") && f != Path::new("404.html"))
        .map(|file| {
            let text = file.to_str().unwrap();
            let url = format!("/{}", text.strip_suffix("index.html").unwrap_or(text));
            let html = absolute_links(&std::fs::read_to_string(out.join(&file)).unwrap(), &url);
            (url, html)
        })
        .collect()
}

/// The `href` values of `html`, in order.
pub fn hrefs(html: &str) -> impl Iterator<Item = &str> {
    html.split("href=\"").skip(1).map(|rest| &rest[..rest.find('"').unwrap()])
}
