//! The Markdown dialect of reports and the one safety policy for untrusted Markdown and
//! text, shared by every stage that reads or writes them: `parse` and `index` read the
//! dialect, every renderer of Markdown applies [`Sanitiser`], and every page, feed and
//! report escapes with [`escape`].
//!
//! The policy: raw HTML is shown as text (comments are dropped), a link whose URL has a
//! scheme other than http, https or mailto loses its URL (its text stays, marked), and
//! such an image is dropped (its alt text stays).

use pulldown_cmark::{CowStr, Event, Tag, TagEnd};

/// The Markdown dialect of reports (GitHub's tables, footnotes, strikethrough, task
/// lists, and `{#id}` heading attributes).
pub fn options() -> pulldown_cmark::Options {
    use pulldown_cmark::Options;
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_DEFINITION_LIST
        | Options::ENABLE_WIKILINKS
}

/// HTML-escapes text for element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    pulldown_cmark_escape::escape_html(&mut out, text).expect("writing to a String cannot fail");
    out
}

/// Whether `url` leaves the site: such links are marked for the reader (the class
/// `external`) and open no window the site can reach (`rel="noopener noreferrer"`).
pub fn is_external(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://")
}

/// The attributes an external link adds after its `href`; nothing for a link within the
/// site. For templates (the `external` filter), which write their own `class`es nowhere
/// on such links.
pub fn external_attributes(url: &str) -> &'static str {
    if is_external(url) {
        " class=\"external\" rel=\"noopener noreferrer\""
    } else {
        ""
    }
}

/// The opening tag of a link to `url` with the classes `class` (none when empty) and a
/// tooltip (none when empty); an external link also gets the class `external` and
/// `rel="noopener noreferrer"`. The URL is escaped here.
pub fn link_open(url: &str, class: &str, title: &str) -> String {
    tag_open(&escape(url), is_external(url), class, title)
}

/// [`link_open`] for a Markdown link: its URL escaped as pulldown-cmark escapes one
/// (unsafe characters percent-encoded), so a link reads the same whichever writes it.
pub fn markdown_link_open(url: &str, title: &str) -> String {
    let mut href = String::with_capacity(url.len() + 8);
    pulldown_cmark_escape::escape_href(&mut href, url).expect("writing to a String cannot fail");
    tag_open(&href, is_external(url), "", title)
}

fn tag_open(href: &str, external: bool, class: &str, title: &str) -> String {
    let mut tag = String::with_capacity(href.len() + class.len() + title.len() + 64);
    tag.push_str("<a");
    if !class.is_empty() || external {
        tag.push_str(" class=\"");
        tag.push_str(class);
        if external {
            tag.push_str(if class.is_empty() { "external" } else { " external" });
        }
        tag.push('"');
    }
    tag.push_str(" href=\"");
    tag.push_str(href);
    tag.push('"');
    if !title.is_empty() {
        tag.push_str(" title=\"");
        tag.push_str(&escape(title));
        tag.push('"');
    }
    if external {
        tag.push_str(" rel=\"noopener noreferrer\"");
    }
    tag.push('>');
    tag
}

/// The self-link a heading with the anchor `id` ends with (the stylesheet shows it on
/// hover), so a reader can copy the section's address.
pub fn heading_anchor(id: &str) -> String {
    format!("<a class=\"anchor\" href=\"#{}\" aria-label=\"Link to this section\">#</a>", escape(id))
}

/// Links may point within the site or to http, https and mailto URLs; anything with
/// another scheme (`javascript:`, `data:`, `vbscript:`) is refused.
pub fn is_safe_url(url: &str) -> bool {
    // Browsers ignore ASCII whitespace and control characters inside a scheme.
    let cleaned: String = url.chars().filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control()).collect();
    let lower = cleaned.to_ascii_lowercase();
    match lower.find(':') {
        None => true,
        Some(colon) => {
            let before = &lower[..colon];
            if before.contains(['/', '?', '#']) {
                return true; // a relative path with a colon later on
            }
            matches!(before, "http" | "https" | "mailto")
        }
    }
}

fn is_comment(html: &str) -> bool {
    let t = html.trim();
    t.starts_with("<!--") && t.ends_with("-->")
}

/// Applies the safety policy to a stream of pulldown-cmark events, one event at a time.
/// It keeps track of the links and images it is inside of, which renderers also need
/// (text inside a link is not linked again).
#[derive(Debug, Default)]
pub struct Sanitiser {
    /// One entry per open link: whether its URL was kept.
    links: Vec<bool>,
    /// Open images, kept or dropped.
    images: usize,
    /// Open images that were dropped.
    dropped_images: usize,
}

impl Sanitiser {
    /// A link the caller opened itself (`<a …>`): its end closes it.
    pub fn opened_link(&mut self) {
        self.links.push(true);
    }

    /// A link shown as text in a span of `class` (an Obsidian link to a note the site does
    /// not publish): its end closes the span.
    pub fn link_as_span(&mut self, class: &str, title: &str) -> Event<'static> {
        self.links.push(false);
        Event::Html(CowStr::from(format!("<span class=\"{}\" title=\"{}\">", escape(class), escape(title))))
    }

    /// The event to emit in place of `event`, or `None` to drop it. Events the policy is
    /// not about are returned as they are.
    pub fn filter<'a>(&mut self, event: Event<'a>) -> Option<Event<'a>> {
        match event {
            Event::Html(html) | Event::InlineHtml(html) => (!is_comment(&html)).then_some(Event::Text(html)),
            Event::Start(Tag::HtmlBlock) | Event::End(TagEnd::HtmlBlock) => None,
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                let safe = is_safe_url(&dest_url);
                self.links.push(safe);
                Some(if safe {
                    Event::Start(Tag::Link { link_type, dest_url, title, id })
                } else {
                    let span = format!("<span class=\"unsafe-link\" title=\"link removed: {}\">", escape(&dest_url));
                    Event::Html(CowStr::from(span))
                })
            }
            Event::End(TagEnd::Link) => Some(if self.links.pop().unwrap_or(true) {
                Event::End(TagEnd::Link)
            } else {
                Event::Html("</span>".into())
            }),
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                self.images += 1;
                if is_safe_url(&dest_url) {
                    Some(Event::Start(Tag::Image { link_type, dest_url, title, id }))
                } else {
                    self.dropped_images += 1;
                    None
                }
            }
            Event::End(TagEnd::Image) => {
                self.images = self.images.saturating_sub(1);
                if self.dropped_images > 0 {
                    self.dropped_images -= 1;
                    None
                } else {
                    Some(Event::End(TagEnd::Image))
                }
            }
            other => Some(other),
        }
    }

    /// True inside a link or an image: its text is shown as written, never linked.
    pub fn in_link_or_image(&self) -> bool {
        !self.links.is_empty() || self.images > 0
    }
}

/// Renders untrusted Markdown outside any run (a system's summary) under the policy.
pub fn render_untrusted(markdown: &str) -> String {
    let mut sanitiser = Sanitiser::default();
    let events = pulldown_cmark::Parser::new_ext(markdown, options()).filter_map(|e| sanitiser.filter(e));
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_links_are_marked_and_others_left_as_they_are() {
        assert_eq!(
            link_open("https://x.org/a?b&c", "cite", ""),
            r#"<a class="cite external" href="https://x.org/a?b&amp;c" rel="noopener noreferrer">"#
        );
        assert_eq!(
            link_open("http://x.org/", "", "T\"1"),
            r#"<a class="external" href="http://x.org/" title="T&quot;1" rel="noopener noreferrer">"#
        );
        assert_eq!(link_open("/fractal/", "rec", ""), r#"<a class="rec" href="/fractal/">"#);
        assert_eq!(link_open("#src-1", "", ""), r##"<a href="#src-1">"##);
        // Only http(s) as written leaves the site: a protocol-relative URL or another
        // scheme is not marked (as the CSS selector `a[href^="http"]` would not).
        assert_eq!(link_open("//cdn.example/x", "", ""), r#"<a href="//cdn.example/x">"#);
        assert_eq!(link_open("mailto:a@b.org", "", ""), r#"<a href="mailto:a@b.org">"#);
        assert_eq!(external_attributes("https://x.org"), r#" class="external" rel="noopener noreferrer""#);
        assert_eq!(external_attributes("/search/"), "");
        // Markdown URLs are percent-encoded as pulldown-cmark does.
        assert_eq!(
            markdown_link_open("https://x.org/a b<\"", ""),
            r#"<a class="external" href="https://x.org/a%20b%3C%22" rel="noopener noreferrer">"#
        );
        assert_eq!(
            heading_anchor("a\"b"),
            r##"<a class="anchor" href="#a&quot;b" aria-label="Link to this section">#</a>"##
        );
    }

    #[test]
    fn unsafe_schemes_are_refused() {
        assert!(is_safe_url("https://github.com/x"));
        assert!(is_safe_url("/a/b/#c"));
        assert!(is_safe_url("../x.html"));
        assert!(is_safe_url("mailto:a@b.org"));
        assert!(!is_safe_url("javascript:alert(1)"));
        assert!(!is_safe_url(" JaVa\tScRiPt:alert(1)"));
        assert!(!is_safe_url("data:text/html,<script>"));
    }

    #[test]
    fn comments_are_recognised() {
        assert!(is_comment("<!-- note -->\n"));
        assert!(!is_comment("<script>x</script>"));
    }

    #[test]
    fn the_policy_shows_html_as_text_and_removes_unsafe_urls() {
        let html = render_untrusted(
            "<script>alert(1)</script>\n\nA [link](javascript:alert(1)), ![alt](data:x) and <!-- gone --> [ok](https://x.org).",
        );
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(
            html.contains("<span class=\"unsafe-link\" title=\"link removed: javascript:alert(1)\">link</span>"),
            "{html}"
        );
        assert!(!html.contains("<img") && html.contains("alt"), "{html}");
        assert!(!html.contains("gone"), "{html}");
        assert!(html.contains("<a href=\"https://x.org\">ok</a>"), "{html}");
    }
}
