//! Post-process: page-level rewrites of finished HTML with lol_html, one handler per
//! concern: a self-link in every heading that has an anchor, `rel` and a class on
//! external links, and the base path in front of every root-relative URL (in `href`,
//! `src`, form `action`, and the search page's `data-bundle` and `data-base`).

use lol_html::html_content::ContentType;
use lol_html::{element, HtmlRewriter, Settings};

use crate::markup::escape;
use crate::output::OutputFile;

/// Rewrites a file in place if it is HTML; other files pass through. `base` is a
/// [`BaseUrl::path`](crate::model::BaseUrl::path).
pub fn postprocess(file: &mut OutputFile, base: &str) -> Result<(), lol_html::errors::RewritingError> {
    if file.path.extension().is_some_and(|e| e == "html") {
        file.bytes = rewrite_page(&file.bytes, base)?;
    }
    Ok(())
}

fn with_base(base: &str, url: &str) -> Option<String> {
    (url.starts_with('/') && !url.starts_with("//") && base != "/").then(|| format!("{base}{}", &url[1..]))
}

/// Rewrites one page (UTF-8, as rendered; read and written as bytes, never checked or
/// copied into a string again).
pub fn rewrite_page(html: &[u8], base: &str) -> Result<Vec<u8>, lol_html::errors::RewritingError> {
    let mut handlers = vec![
        element!("h1[id], h2[id], h3[id], h4[id], h5[id], h6[id]", |el| {
            if let Some(id) = el.get_attribute("id") {
                let link =
                    format!("<a class=\"anchor\" href=\"#{}\" aria-label=\"Link to this section\">#</a>", escape(&id));
                el.append(&link, ContentType::Html);
            }
            Ok(())
        }),
        element!("a[href^='http://'], a[href^='https://']", |el| {
            el.set_attribute("rel", "noopener noreferrer")?;
            let class = el.get_attribute("class").map(|c| format!("{c} external")).unwrap_or_else(|| "external".into());
            el.set_attribute("class", &class)?;
            Ok(())
        }),
    ];
    // With the site at the root, root-relative URLs are already right: no handler (lol_html
    // then lexes far fewer tags in full).
    if base != "/" {
        handlers.extend([
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
        ]);
    }
    // Headings gain a link each: a little more room than the page.
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
    fn rewrites_links_headings_and_assets() {
        let html = r#"<h2 id="x">T</h2><a href="/a/">in</a><a href="https://github.com/x">out</a><link href="/assets/s.css"><a href="//cdn.example/x">proto</a>"#;
        let out = String::from_utf8(rewrite_page(html.as_bytes(), "/pr-12/").unwrap()).unwrap();
        assert!(out.contains(r##"<h2 id="x">T<a class="anchor" href="#x""##), "{out}");
        assert!(out.contains(r#"<a href="/pr-12/a/">in</a>"#), "{out}");
        assert!(out.contains(r#"href="https://github.com/x" rel="noopener noreferrer" class="external""#), "{out}");
        assert!(out.contains(r#"<link href="/pr-12/assets/s.css">"#), "{out}");
        assert!(out.contains(r#"href="//cdn.example/x""#), "{out}");
    }

    #[test]
    fn at_the_root_urls_are_left_as_they_are() {
        let html = r#"<h2 id="x">T</h2><a href="/a/">in</a><form action="/search/"></form><img src="/i.png"><div data-base="/s/"></div><a href="https://x.org/">out</a>"#;
        let out = String::from_utf8(rewrite_page(html.as_bytes(), "/").unwrap()).unwrap();
        assert!(
            out.contains(
                r#"<a href="/a/">in</a><form action="/search/"></form><img src="/i.png"><div data-base="/s/"></div>"#
            ),
            "{out}"
        );
        assert!(out.contains(r##"<a class="anchor" href="#x""##) && out.contains(r#"class="external""#), "{out}");
    }
}
