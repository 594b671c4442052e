//! Snapshots of rendered HTML fragments of the bundled site. Each was read and checked by
//! hand when accepted; a change in any of them must be reviewed the same way
//! (`cargo insta review`), never accepted blindly.

mod common;

use common::bundled;

/// The first `<tag …>…</tag>` element of `html` that contains `needle`, or the part of
/// `html` from `start` to the matching `end` marker.
fn between<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let at = html.find(start).unwrap_or_else(|| panic!("no `{start}`"));
    let stop = html[at..].find(end).unwrap_or_else(|| panic!("no `{end}` after `{start}`")) + at + end.len();
    &html[at..stop]
}

#[test]
fn quote_figure() {
    let page = bundled().page_as_written("/exia-seed/c7497ac/memory/");
    insta::assert_snapshot!(between(&page, "<figure class=\"quote\">", "</figure>"));
}

#[test]
fn table_row_declaring_a_record() {
    let page = bundled().page_as_written("/fractal/aas-2026-08-20-fractal-01/memory/");
    let row_start = page.find("<span class=\"row-anchor\" id=\"OBJ-06--2\">").unwrap();
    let row = &page[page[..row_start].rfind("<tr>").unwrap()..];
    insta::assert_snapshot!(&row[..row.find("</tr>").unwrap() + 5]);
}

#[test]
fn heading_record_page() {
    let page = bundled().page_as_written("/exia-seed/c7497ac/records/MEM-OBJ-keywords.html");
    insta::assert_snapshot!(between(&page, "<main id=\"main\" tabindex=\"-1\">", "</main>"));
}

#[test]
fn unpublished_record_page() {
    let page = bundled().page_as_written("/fractal/6a226e7/records/RT-CMP-sub-lm.html");
    insta::assert_snapshot!(between(&page, "<main id=\"main\" tabindex=\"-1\">", "</main>"));
}

#[test]
fn kind_by_status_matrix() {
    let page = bundled().page_as_written("/fractal/aas-2026-08-20-fractal-01/");
    insta::assert_snapshot!(between(&page, "<table class=\"matrix\">", "</table>"));
}
