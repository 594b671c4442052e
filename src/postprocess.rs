//! Post-process: a finished page's links to its neighbours made relative, where that is
//! shorter (a record page links its run's records and reports dozens of times:
//! `OBJ-04.html`, `../memory/#OBJ-04`); then the base path in front of every root-relative
//! URL left (in `href`, `src`, form `action`, and the search page's `data-bundle` and
//! `data-base`), with lol_html, for a site served below the root of its host. Pages are
//! rendered with root-relative URLs; a site at the root is not parsed again by lol_html.

use lol_html::{element, HtmlRewriter, Settings};

use crate::output::OutputFile;

/// Rewrites a file in place if it is HTML: links made relative where shorter (but on the
/// 404 page, which a host serves at any address), and the base path added when the site
/// is not at the root; other files pass through. `base` is a
/// [`BaseUrl::path`](crate::model::BaseUrl::path).
pub fn postprocess(file: &mut OutputFile, base: &str) -> Result<(), lol_html::errors::RewritingError> {
    if file.path.extension().is_none_or(|e| e != "html") {
        return Ok(());
    }
    if file.path != std::path::Path::new("404.html") {
        if let Some(relative) = relative_links(&file.bytes, &file.path) {
            file.bytes = relative;
        }
    }
    if base != "/" {
        file.bytes = rewrite_page(&file.bytes, base)?;
    }
    Ok(())
}

/// `html` (the page at `page`, a path in the output) with each root-relative `href` made
/// relative to the page's folder where that is shorter; `None` when none is. Only links in
/// tags are taken: text never holds a raw `<` (every writer of a page escapes it), and an
/// attribute value never a raw `>`, so a ` href="/` is in a tag when the last `<` before
/// it comes after the last `>`.
fn relative_links(html: &[u8], page: &std::path::Path) -> Option<Vec<u8>> {
    static HREF: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b" href=\"/"));
    let folder: Vec<&str> = page.parent()?.iter().filter_map(|part| part.to_str()).collect();
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    for found in HREF.find_iter(html) {
        let start = found + 7;
        let in_tag = match (memchr::memrchr(b'<', &html[..found]), memchr::memrchr(b'>', &html[..found])) {
            (Some(open), close) => close.is_none_or(|close| close < open),
            (None, _) => false,
        };
        let Some(end) = memchr::memchr2(b'"', b'>', &html[start..]).map(|i| start + i) else { continue };
        if !in_tag || html[end] != b'"' || start < copied {
            continue;
        }
        let Some(url) = std::str::from_utf8(&html[start..end]).ok() else { continue };
        if let Some(relative) = relative_url(&folder, url) {
            let out = out.get_or_insert_with(|| Vec::with_capacity(html.len()));
            out.extend_from_slice(&html[copied..start]);
            out.extend_from_slice(relative.as_bytes());
            copied = end;
        }
    }
    let mut out = out?;
    out.extend_from_slice(&html[copied..]);
    Some(out)
}

/// `url` (root-relative: `/a/b/c.html#x`, `/a/b/`) as seen from the page folder `folder`
/// (`["a", "b"]`), when that is shorter.
fn relative_url(folder: &[&str], url: &str) -> Option<String> {
    if url.starts_with("//") {
        return None;
    }
    let split = url.find(['#', '?']).unwrap_or(url.len());
    let (path, rest) = url.split_at(split);
    let mut parts: Vec<&str> = path[1..].split('/').collect();
    let last = parts.pop().unwrap_or_default();
    let shared = folder.iter().zip(&parts).take_while(|(a, b)| a == b).count();
    let mut relative = "../".repeat(folder.len() - shared);
    for part in &parts[shared..] {
        relative.push_str(part);
        relative.push('/');
    }
    relative.push_str(last);
    if relative.is_empty() {
        relative.push_str("./");
    }
    relative.push_str(rest);
    (relative.len() < url.len()).then_some(relative)
}

fn with_base(base: &str, url: &str) -> Option<String> {
    (url.starts_with('/') && !url.starts_with("//")).then(|| format!("{base}{}", &url[1..]))
}

/// Rewrites one page (UTF-8, as rendered; read and written as bytes, never checked or
/// copied into a string again) for the base path `base` (not `/`).
pub fn rewrite_page(html: &[u8], base: &str) -> Result<Vec<u8>, lol_html::errors::RewritingError> {
    let handlers = vec![
        element!("[href^='/'], form[action^='/']", |el| {
            for name in ["href", "action"] {
                if let Some(url) = el.get_attribute(name).and_then(|u| with_base(base, &u)) {
                    el.set_attribute(name, &url)?;
                }
            }
            Ok(())
        }),
        element!("[data-bundle^='/'], [data-base^='/']", |el| {
            for name in ["data-bundle", "data-base"] {
                if let Some(url) = el.get_attribute(name).and_then(|u| with_base(base, &u)) {
                    el.set_attribute(name, &url)?;
                }
            }
            Ok(())
        }),
        element!("[src^='/']", |el| {
            if let Some(url) = el.get_attribute("src").and_then(|u| with_base(base, &u)) {
                el.set_attribute("src", &url)?;
            }
            Ok(())
        }),
    ];
    // URLs grow by the base path: a little more room than the page.
    let mut out = Vec::with_capacity(html.len() + html.len() / 16);
    let mut rewriter =
        HtmlRewriter::new(Settings { element_content_handlers: handlers, ..Settings::new() }, |chunk: &[u8]| {
            out.extend_from_slice(chunk)
        });
    rewriter.write(html)?;
    rewriter.end()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn root_relative_urls_take_the_base_path() {
        let html = r##"<h2 id="x">T</h2><a href="/a/">in</a><a href="https://github.com/x">out</a><link href="/assets/s.css"><a href="//cdn.example/x">proto</a><form action="/search/"></form><img src="/i.png"><div data-base="/s/" data-bundle="/b.js"></div><a href="#x">here</a>"##;
        let out = String::from_utf8(rewrite_page(html.as_bytes(), "/pr-12/").unwrap()).unwrap();
        assert_eq!(
            out,
            r##"<h2 id="x">T</h2><a href="/pr-12/a/">in</a><a href="https://github.com/x">out</a><link href="/pr-12/assets/s.css"><a href="//cdn.example/x">proto</a><form action="/pr-12/search/"></form><img src="/pr-12/i.png"><div data-base="/pr-12/s/" data-bundle="/pr-12/b.js"></div><a href="#x">here</a>"##
        );
    }

    #[test]
    fn links_to_neighbours_are_made_relative_where_shorter() {
        let folder = ["lab", "r1", "records"];
        let rel = |url: &str| relative_url(&folder, url);
        assert_eq!(rel("/lab/r1/records/OBJ-04.html").as_deref(), Some("OBJ-04.html"));
        assert_eq!(rel("/lab/r1/memory/#OBJ-04").as_deref(), Some("../memory/#OBJ-04"));
        assert_eq!(rel("/lab/r1/records/").as_deref(), Some("./"));
        // The folder's page, not this one: `./`, never a bare `#`.
        assert_eq!(rel("/lab/r1/records/#OBJ-04.html").as_deref(), Some("./#OBJ-04.html"));
        assert_eq!(rel("/lab/r1/").as_deref(), Some("../"));
        assert_eq!(rel("/lab/"), None, "`../../` is longer");
        // Longer than they are: kept.
        assert_eq!(rel("/statuses/absent/"), None);
        assert_eq!(rel("/"), None);
        assert_eq!(rel("//cdn.example/x"), None);
        let html = r#"<a class="rec" href="/lab/r1/records/OBJ-02.html" title="a > b">OBJ-02</a> text with href="/lab/r1/x" in it <a href="/lab/r1/memory/?q=1">m</a><a href="https://x.org/lab/r1/">out</a>"#;
        let out = String::from_utf8(relative_links(html.as_bytes(), Path::new("lab/r1/records/OBJ-01.html")).unwrap())
            .unwrap();
        assert_eq!(
            out,
            r#"<a class="rec" href="OBJ-02.html" title="a > b">OBJ-02</a> text with href="/lab/r1/x" in it <a href="../memory/?q=1">m</a><a href="https://x.org/lab/r1/">out</a>"#
        );
        assert_eq!(relative_links(b"<p>no links</p>", Path::new("lab/index.html")), None);
    }

    #[test]
    fn the_404_page_keeps_its_links_root_relative() {
        let html = r#"<a href="/lab/">lab</a>"#;
        let mut file = OutputFile { path: "404.html".into(), bytes: html.as_bytes().to_vec() };
        postprocess(&mut file, "/").unwrap();
        assert_eq!(file.bytes, html.as_bytes());
        let mut page = OutputFile { path: "lab/index.html".into(), bytes: html.as_bytes().to_vec() };
        postprocess(&mut page, "/").unwrap();
        assert_eq!(page.bytes, br#"<a href="./">lab</a>"#);
    }

    #[test]
    fn at_the_root_pages_are_written_as_rendered() {
        let html = r#"<h2 id="x">T</h2><a href="/">in</a><a href="https://x.org/">out</a>"#;
        let mut file = OutputFile { path: "a/index.html".into(), bytes: html.as_bytes().to_vec() };
        postprocess(&mut file, "/").unwrap();
        assert_eq!(file.bytes, html.as_bytes());
        let mut feed = OutputFile { path: "feed.xml".into(), bytes: b"<a href=\"/x\">".to_vec() };
        postprocess(&mut feed, "/pr-1/").unwrap();
        assert_eq!(feed.bytes, b"<a href=\"/x\">");
    }
}
