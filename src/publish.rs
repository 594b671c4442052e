//! Publish: the files a site needs beyond its pages, made from the resolved site and the
//! rendered page list: the record manifest (`records.json`, `records.jsonl`),
//! `sitemap.xml`, `robots.txt`, Atom feeds (site-wide and per system), Netlify
//! `_redirects`, and the anchor contract that keeps published record URLs from breaking.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use atom_syndication::{Entry, Feed, FixedDateTime, Link};

use crate::config::Redirect;
use crate::manifest::Manifest;
use crate::markup::escape;
use crate::model::{BaseUrl, Code, Diagnostic, Location, Site};
use crate::output::OutputFile;
use crate::urls;

/// The base URL records are published under (in the manifest and the search results):
/// the absolute base when there is one, else the base path, ending in `/`.
pub fn published_base(base_url: &BaseUrl) -> String {
    format!("{}/", base_url.prefix())
}

/// The record manifest's files, by path in the output.
pub const MANIFEST_FILES: [&str; 2] = ["records.json", "records.jsonl"];

/// The record manifest (`records.json`, `records.jsonl`). It needs the site alone, so a
/// full build writes it while the pages render.
/// Both files are written side by side as each record is made (`emit` gives a writer
/// each): on a large site each is hundreds of megabytes.
pub fn publish_manifest<E>(
    site: &Site,
    base_url: &BaseUrl,
    verification: Option<&crate::model::Verification>,
    emit: &StreamedEmit<'_, E>,
) -> Result<(), E> {
    let base = published_base(base_url);
    emit(&MANIFEST_FILES.map(PathBuf::from), &|out| match out {
        [json, lines] => crate::manifest::write_manifest(site, &base, verification, &mut **json, &mut **lines),
        _ => unreachable!("two files asked for"),
    })
}

/// Writes files side by side, one writer each.
pub type StreamedWrite<'a> = dyn Fn(&mut [&mut dyn std::io::Write]) -> std::io::Result<()> + 'a;

/// Hands files to the output as a function that writes them.
pub type StreamedEmit<'a, E> = dyn Fn(&[PathBuf], &StreamedWrite<'_>) -> Result<(), E> + Sync + 'a;

/// The rest of what this module adds to the output, which needs the list of pages (`pages`:
/// the rendered files): sitemap, robots.txt, feeds and redirects.
pub fn publish<E>(
    site: &Site,
    pages: &[PathBuf],
    base_url: &BaseUrl,
    redirects: &[Redirect],
    emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
) -> Result<(), E> {
    emit(sitemap(pages, base_url))?;
    emit(robots(base_url))?;
    for feed in feeds(site, base_url) {
        emit(feed)?;
    }
    if !redirects.is_empty() {
        emit(netlify_redirects(redirects, base_url.path()))?;
    }
    Ok(())
}

/// `sitemap.xml`: every HTML page but the 404 page, in path order.
fn sitemap(pages: &[PathBuf], base_url: &BaseUrl) -> OutputFile {
    let prefix = base_url.prefix();
    let mut urls: Vec<String> = pages
        .iter()
        .filter_map(|p| p.to_str())
        .filter(|p| p.ends_with(".html") && *p != "404.html")
        .map(|p| format!("/{}", p.strip_suffix("index.html").unwrap_or(p)))
        .collect();
    urls.sort();
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for url in urls {
        xml.push_str(&format!("  <url><loc>{}</loc></url>\n", escape(&format!("{prefix}{url}"))));
    }
    xml.push_str("</urlset>\n");
    OutputFile { path: "sitemap.xml".into(), bytes: xml.into_bytes() }
}

/// `robots.txt`: everything may be crawled; the sitemap is named when the base URL is
/// absolute (the format requires an absolute URL there).
fn robots(base_url: &BaseUrl) -> OutputFile {
    let mut text = String::from("User-agent: *\nAllow: /\n");
    if let Some(base) = base_url.absolute() {
        text.push_str(&format!("Sitemap: {base}/sitemap.xml\n"));
    }
    OutputFile { path: "robots.txt".into(), bytes: text.into_bytes() }
}

/// The midnight (UTC) of a `YYYY-MM-DD` date.
fn date_time(date: &str) -> Option<FixedDateTime> {
    FixedDateTime::parse_from_rfc3339(&format!("{date}T00:00:00+00:00")).ok()
}

/// Atom feeds of new runs and reports: `/feed.xml` for the site and `/<system>/feed.xml`
/// per system. Entries are dated by their run's `date`; a run without a date has no
/// entries (a feed needs dates, and casebook never invents one).
fn feeds(site: &Site, base_url: &BaseUrl) -> Vec<OutputFile> {
    let origin = base_url.prefix();
    let absolute = |path: &str| format!("{origin}{path}");
    let mut all: Vec<Entry> = Vec::new();
    let mut files = Vec::new();
    for system in &site.systems {
        let mut entries = Vec::new();
        for run in &system.runs {
            let Some(updated) = run.date.as_ref().and_then(|d| date_time(d.as_str())) else { continue };
            let run_url = urls::run(&system.slug, &run.slug);
            entries.push(entry(
                format!("urn:casebook:{}:{}", system.slug, run.slug),
                format!("{}: run {}", system.name, run.name),
                absolute(&run_url),
                updated,
                format!(
                    "{} at {}{}",
                    run.name,
                    run.revision,
                    run.lens.as_deref().map(|l| format!(", lens {l}")).unwrap_or_default()
                ),
            ));
            for report in &run.reports {
                entries.push(entry(
                    format!("urn:casebook:{}:{}:{}", system.slug, run.slug, report.slug),
                    format!("{}: {}", system.name, report.title),
                    absolute(&urls::report(&system.slug, &run.slug, &report.slug)),
                    updated,
                    format!("A report of run {} ({} records declared)", run.name, report.declarations.len()),
                ));
            }
        }
        all.extend(entries.iter().cloned());
        let url = format!("/{}/feed.xml", system.slug);
        files.push(feed(
            format!("urn:casebook:{}", system.slug),
            system.name.clone(),
            absolute(&urls::system(&system.slug)),
            absolute(&url),
            entries,
            &url,
        ));
    }
    files.push(feed(
        "urn:casebook:site".into(),
        site.title.clone(),
        absolute("/"),
        absolute("/feed.xml"),
        all,
        "/feed.xml",
    ));
    files
}

fn entry(id: String, title: String, url: String, updated: FixedDateTime, summary: String) -> Entry {
    let mut entry = Entry::default();
    entry.set_id(id);
    entry.set_title(title);
    entry.set_updated(updated);
    entry.set_summary(Some(summary.into()));
    let mut link = Link::default();
    link.set_href(url);
    entry.set_links(vec![link]);
    entry
}

fn feed(id: String, title: String, page: String, self_url: String, mut entries: Vec<Entry>, path: &str) -> OutputFile {
    // Newest first; ties in ID order, so the feed is the same on every build.
    entries.sort_by(|a, b| b.updated().cmp(a.updated()).then_with(|| a.id().cmp(b.id())));
    let mut feed = Feed::default();
    feed.set_id(id);
    feed.set_title(title);
    let updated = entries.iter().map(|e| *e.updated()).max().or_else(|| date_time("1970-01-01")).expect("a valid date");
    feed.set_updated(updated);
    let mut alternate = Link::default();
    alternate.set_href(page);
    let mut this = Link::default();
    this.set_href(self_url);
    this.set_rel("self");
    feed.set_links(vec![alternate, this]);
    feed.set_entries(entries);
    let mut xml = feed.to_string();
    xml.push('\n');
    OutputFile { path: path.trim_start_matches('/').into(), bytes: xml.into_bytes() }
}

/// Netlify's `_redirects`: one permanent redirect per entry, under the base path.
fn netlify_redirects(redirects: &[Redirect], base: &str) -> OutputFile {
    let mut text = String::from("# Written by casebook from content/redirects.yaml\n");
    for r in redirects {
        let target =
            if r.to.starts_with("http") { r.to.clone() } else { format!("{base}{}", r.to.trim_start_matches('/')) };
        text.push_str(&format!("{base}{} {target} 301\n", r.from.trim_start_matches('/')));
    }
    OutputFile { path: "_redirects".into(), bytes: text.into_bytes() }
}

/// The anchor contract: every record page the previous build published still exists, or
/// a redirect says where it went. Also checks that every redirect leads to a page.
pub fn check_anchors(
    previous: Option<&Manifest>,
    pages: &[PathBuf],
    redirects: &[Redirect],
    redirects_file: &std::path::Path,
    redirects_text: &str,
) -> Vec<Diagnostic> {
    let paths: BTreeSet<String> = pages
        .iter()
        .filter_map(|p| p.to_str())
        .map(|p| format!("/{}", p.strip_suffix("index.html").unwrap_or(p)))
        .collect();
    let normal = |p: &str| format!("/{}", p.trim_start_matches('/'));
    let mut diagnostics = Vec::new();
    for r in redirects {
        if !r.to.starts_with("http") && !paths.contains(&normal(&r.to)) {
            let (line, col, source) = crate::parse::locate(redirects_text, &r.to);
            diagnostics.push(
                Diagnostic::error(
                    Code::BadRedirect,
                    Location::new(Arc::from(redirects_file), line, col),
                    format!("redirect target {} is not a page of this site", r.to),
                )
                .with_source(source, r.to.chars().count())
                .with_help("point it at an existing page, e.g. /<system>/<run>/records/<ID>.html"),
            );
        }
    }
    let Some(previous) = previous else { return diagnostics };
    let redirected: BTreeSet<String> = redirects.iter().map(|r| normal(&r.from)).collect();
    for record in previous.records.iter().filter(|r| r.published) {
        let path = normal(&record.path);
        if paths.contains(&path) || redirected.contains(&path) {
            continue;
        }
        let location = record
            .declared
            .first()
            .map(|p| Location::new(Arc::from(std::path::Path::new(&p.file)), p.line, 1))
            .unwrap_or_else(|| Location::file(redirects_file));
        diagnostics.push(
            Diagnostic::error(
                Code::VanishedRecord,
                location,
                format!(
                    "published record {} ({} / {}) is gone, and its page {path} would break",
                    record.id, record.system, record.run
                ),
            )
            .with_help(format!(
                "restore it, or add to {}:\n      - from: {path}\n        to: <the page that replaces it>",
                redirects_file.display()
            )),
        );
    }
    diagnostics
}
