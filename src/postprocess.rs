//! Post-process: the base path in front of every root-relative URL of a finished page (in
//! `href`, `src`, form `action`, and the search page's `data-bundle` and `data-base`),
//! with lol_html, for a site served below the root of its host. Pages are rendered with
//! root-relative URLs; a site at the root is written as rendered, never parsed again.

use lol_html::{element, HtmlRewriter, Settings};

use crate::output::OutputFile;

/// Rewrites a file in place if it is HTML and the site is not at the root; other files
/// pass through. `base` is a [`BaseUrl::path`](crate::model::BaseUrl::path).
pub fn postprocess(file: &mut OutputFile, base: &str) -> Result<(), lol_html::errors::RewritingError> {
    if base != "/" && file.path.extension().is_some_and(|e| e == "html") {
        file.bytes = rewrite_page(&file.bytes, base)?;
    }
    Ok(())
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
    fn at_the_root_pages_are_written_as_rendered() {
        let html = r#"<h2 id="x">T</h2><a href="/a/">in</a><a href="https://x.org/">out</a>"#;
        let mut file = OutputFile { path: "a/index.html".into(), bytes: html.as_bytes().to_vec() };
        postprocess(&mut file, "/").unwrap();
        assert_eq!(file.bytes, html.as_bytes());
        let mut feed = OutputFile { path: "feed.xml".into(), bytes: b"<a href=\"/x\">".to_vec() };
        postprocess(&mut feed, "/pr-1/").unwrap();
        assert_eq!(feed.bytes, b"<a href=\"/x\">");
    }
}
