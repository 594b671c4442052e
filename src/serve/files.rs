//! Mapping a request path to a file of the output folder, refusing every path that could
//! leave it, and what the dev server adds to the pages it serves.

use std::path::{Component, Path, PathBuf};

use percent_encoding::percent_decode_str;

/// Why a request path names no file at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadPath {
    /// Not an absolute path (`*`, or an empty path).
    #[error("the request path does not start with /")]
    NotAbsolute,
    /// A segment is not UTF-8 once decoded.
    #[error("the request path is not UTF-8")]
    NotUtf8,
    /// `.` or `..`, a separator hidden in a segment (`%2f`, `\`), or a NUL byte.
    #[error("the request path names a parent folder, a separator or a NUL byte")]
    Forbidden,
}

/// The path below the output folder that a request path names, checked segment by segment
/// after percent-decoding, so that `%2e%2e`, `%2f` and `\` cannot smuggle in a parent or
/// an absolute path. Empty segments (`//`) are skipped.
pub fn relative_path(request_path: &str) -> Result<PathBuf, BadPath> {
    let Some(rest) = request_path.strip_prefix('/') else {
        return Err(BadPath::NotAbsolute);
    };
    let mut path = PathBuf::new();
    for raw in rest.split('/').filter(|s| !s.is_empty()) {
        let segment = percent_decode_str(raw).decode_utf8().map_err(|_| BadPath::NotUtf8)?;
        if segment == "." || segment == ".." || segment.contains(['/', '\\', '\0']) {
            return Err(BadPath::Forbidden);
        }
        path.push(segment.as_ref());
    }
    // Belt and braces: whatever the platform makes of a segment, only plain names pass.
    if !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(BadPath::Forbidden);
    }
    Ok(path)
}

/// What a request path finds in the output folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A file, canonical, inside the output folder.
    File(PathBuf),
    /// A folder asked for without its trailing slash: redirect, so that relative links
    /// in its index.html resolve.
    Folder,
    /// Nothing (or something outside the output folder, through a symbolic link).
    Nothing,
}

/// Finds the file for `relative` (from [`relative_path`]) below `output`: folders give
/// their `index.html`. The result is canonicalised and must still be below the canonical
/// output folder, so a symbolic link inside the output that points elsewhere finds
/// nothing.
pub fn find(output: &Path, relative: &Path, trailing_slash: bool) -> Found {
    let Ok(root) = output.canonicalize() else { return Found::Nothing };
    let mut candidate = root.join(relative);
    if candidate.is_dir() {
        if !trailing_slash && !relative.as_os_str().is_empty() {
            return Found::Folder;
        }
        candidate.push("index.html");
    }
    match candidate.canonicalize() {
        Ok(real) if real.starts_with(&root) && real.is_file() => Found::File(real),
        _ => Found::Nothing,
    }
}

/// The Content-Type for a file, by its extension.
pub fn content_type(path: &Path) -> &'static str {
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("json" | "map") => "application/json",
        Some("jsonl") => "application/jsonl",
        Some("gz") => "application/gzip",
        Some("wasm") => "application/wasm",
        Some("svg") => "image/svg+xml",
        Some("xml") => "application/xml",
        Some("atom") => "application/atom+xml",
        Some("txt" | "md") => "text/plain; charset=utf-8",
        Some("woff2") => "font/woff2",
        Some("woff") => "font/woff",
        Some("ttf") => "font/ttf",
        Some("otf") => "font/otf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("avif") => "image/avif",
        Some("ico") => "image/x-icon",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// True for files served as HTML (and so given the reload script).
pub fn is_html(path: &Path) -> bool {
    content_type(path).starts_with("text/html")
}

/// The URL of the reload script. It is a file of its own, not inline, because the site's
/// Content-Security-Policy allows scripts from the site only (`script-src 'self'`).
pub const RELOAD_SCRIPT: &str = "/__casebook/reload.js";

/// `html` with the reload script added at the end of its `<head>` (or, for a page with
/// no head, at its start). `generation` is the build the page comes from: the script
/// reloads the page when a newer build is ready. Only served responses get it; the files
/// on disk stay as `casebook build` wrote them.
pub fn with_reload_script(html: &str, generation: u64) -> String {
    let tag = format!(r#"<script src="{RELOAD_SCRIPT}" data-generation="{generation}" defer></script>"#);
    let mut added = false;
    let rewritten = lol_html::rewrite_str(
        html,
        lol_html::RewriteStrSettings {
            element_content_handlers: vec![lol_html::element!("head", |head| {
                if !added {
                    head.append(&tag, lol_html::html_content::ContentType::Html);
                    added = true;
                }
                Ok(())
            })],
            ..lol_html::RewriteStrSettings::new()
        },
    );
    match rewritten {
        Ok(page) if added => page,
        // Not parseable as HTML, or no <head>: the script still runs from the top.
        _ => format!("{tag}{html}"),
    }
}

/// The page shown when the output has no 404.html (say, before the first good build):
/// it carries the reload script, so the diagnostics overlay still appears.
pub fn fallback_not_found(generation: u64) -> String {
    with_reload_script(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not found</title></head>\
         <body><h1>Not found</h1><p>casebook serve has no page here.</p></body></html>\n",
        generation,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_map_to_relative_paths() {
        assert_eq!(relative_path("/"), Ok(PathBuf::new()));
        assert_eq!(relative_path("/fractal/run/records/OBJ-03/"), Ok(PathBuf::from("fractal/run/records/OBJ-03")));
        assert_eq!(relative_path("//a///b"), Ok(PathBuf::from("a/b")));
        assert_eq!(relative_path("/a%20b.html"), Ok(PathBuf::from("a b.html")));
    }

    #[test]
    fn every_way_out_is_refused() {
        for path in [
            "/..",
            "/../etc/passwd",
            "/a/../../etc/passwd",
            "/%2e%2e/etc/passwd",
            "/%2E%2E/etc/passwd",
            "/.%2e/x",
            "/a%2f..%2f..%2fetc",
            "/%2fetc%2fpasswd",
            "/..%5c..%5cetc",
            "/a\\..\\b",
            "/a%00.html",
            "/./index.html",
        ] {
            assert_eq!(relative_path(path), Err(BadPath::Forbidden), "{path}");
        }
        assert_eq!(relative_path("etc/passwd"), Err(BadPath::NotAbsolute));
        assert_eq!(relative_path("*"), Err(BadPath::NotAbsolute));
        assert_eq!(relative_path("/%ff"), Err(BadPath::NotUtf8));
    }

    #[test]
    fn the_script_goes_into_the_head_once() {
        let page = with_reload_script("<html><head><title>x</title></head><body><head></head></body></html>", 7);
        assert_eq!(page.matches(RELOAD_SCRIPT).count(), 1);
        assert!(
            page.contains(
                r#"<title>x</title><script src="/__casebook/reload.js" data-generation="7" defer></script></head>"#
            ),
            "{page}"
        );
        assert!(with_reload_script("no head", 1).starts_with("<script src="));
    }

    #[test]
    fn content_types_follow_extensions() {
        assert_eq!(content_type(Path::new("a/index.html")), "text/html; charset=utf-8");
        assert_eq!(content_type(Path::new("x.WASM")), "application/wasm");
        assert_eq!(content_type(Path::new("_redirects")), "application/octet-stream");
    }
}
