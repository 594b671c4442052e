//! Publish: the files a site needs beyond its pages, made from the resolved site and the
//! rendered page list: the record manifest (`records.json`, the site's and each run's),
//! `sitemap.xml`, `robots.txt`, Atom feeds (site-wide and per system), Netlify
//! `_redirects`, and the anchor contract that keeps published record URLs from breaking.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use atom_syndication::{Entry, Feed, FixedDateTime, Link};

use crate::config::Redirect;
use crate::manifest::{self, Manifest};
use crate::markup::escape;
use crate::model::{BaseUrl, Code, Diagnostic, Location, RecordPages, Run, Site, StatusPages, System};
use crate::output::{OutputFile, Paths};
use crate::urls;

/// The base URL records are published under (in the manifest and the search results):
/// the absolute base when there is one, else the base path, ending in `/`.
pub fn published_base(base_url: &BaseUrl) -> String {
    format!("{}/", base_url.prefix())
}

/// Whether `path` (in the output) is a file of the record manifest: the site's
/// `records.json` or a run's (`<system>/<run>/records.json`).
pub fn is_manifest_file(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == manifest::FILE) && matches!(path.components().count(), 1 | 3)
}

/// What a build knows of the manifest the previous build wrote: what each run's file was
/// made from, and whether the output still holds a file as written.
pub struct KeptManifest<'a> {
    /// What each run's file was made from.
    pub parts: &'a std::sync::Mutex<ManifestParts>,
    /// Each run's token now.
    pub token: &'a RunToken<'a>,
    /// Whether the output holds the file at a path as the previous build wrote it.
    pub holds: &'a (dyn Fn(&Path) -> bool + Sync),
}

/// The record manifest: the site's `records.json` and each run's. It needs the site alone,
/// so a full build writes it while the pages render; each run's file is made apart (in
/// parallel, handed to `emit` and dropped). With `kept` (what the dev server or the build
/// cache knows of the previous build), a run whose file was made from what it is made of
/// now keeps it: its path is given back, for the output to keep (a rebuild) or link (a
/// warm build).
pub fn publish_manifest<E: Send>(
    site: &Site,
    base_url: &BaseUrl,
    verification: Option<&crate::model::Verification>,
    kept: Option<KeptManifest<'_>>,
    emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
) -> Result<Vec<PathBuf>, E> {
    let base = published_base(base_url);
    let runs: Vec<(&System, &Run)> = site.systems.iter().flat_map(|s| s.runs.iter().map(move |r| (s, &**r))).collect();
    let mut parts = kept.as_ref().map(|k| k.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    let made_from: Vec<Option<(u128, u128)>> = match &kept {
        Some(kept) => runs.par_iter().map(|&(system, run)| made_from(system, run, kept.token, verification)).collect(),
        None => vec![None; runs.len()],
    };
    let keys: Vec<String> = runs.iter().map(|(system, run)| format!("{}/{}", system.slug, run.slug)).collect();
    let previous = parts.as_deref();
    let kept_paths: Vec<Option<PathBuf>> = runs
        .par_iter()
        .zip(&made_from)
        .zip(&keys)
        .map(|((&(system, run), from), key)| {
            let path = PathBuf::from(manifest::run_path(system, run));
            let unchanged = from.is_some() && previous.and_then(|p| p.runs.get(key)) == from.as_ref();
            if unchanged && kept.as_ref().is_some_and(|k| (k.holds)(&path)) {
                return Ok(Some(path));
            }
            emit(OutputFile { path, bytes: manifest::run_file(system, run, &base, verification) })?;
            Ok(None)
        })
        .collect::<Result<_, E>>()?;
    emit(OutputFile { path: manifest::FILE.into(), bytes: manifest::site_file(site, &base, verification.is_some()) })?;
    if let Some(parts) = parts.as_mut() {
        parts.runs = keys.into_iter().zip(&made_from).filter_map(|(key, from)| Some((key, (*from)?))).collect();
    }
    Ok(kept_paths.into_iter().flatten().collect())
}

/// What a run's file is made from: its token and a digest of what verification found in
/// it; `None` when its token is not known.
fn made_from(
    system: &System,
    run: &Run,
    token: &RunToken<'_>,
    verification: Option<&crate::model::Verification>,
) -> Option<(u128, u128)> {
    let key = (system.slug.clone(), run.slug.clone());
    let found = verification.and_then(|v| v.runs.get(&key)).map(|r| format!("{r:?}")).unwrap_or_default();
    Some((token(system, run)?, xxhash_rust::xxh3::xxh3_128(found.as_bytes())))
}

/// A run's token: the same only while what its file is made from is (see
/// `index::Tokens::run_token`).
pub type RunToken<'a> = dyn Fn(&System, &Run) -> Option<u128> + Sync + 'a;

/// What the previous build made each run's manifest file from (by `system/run`): its token
/// and the digest of what verification found in it.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct ManifestParts {
    runs: HashMap<String, (u128, u128)>,
}

impl ManifestParts {
    /// The same parts, each run's token given anew by `token` (`system`, `run`): see
    /// `index::BrowserIndex::retoken`.
    pub fn retoken(&mut self, token: &dyn Fn(&str, &str) -> Option<u128>) {
        self.runs.retain(|key, (t, _)| {
            let new = key.split_once('/').and_then(|(system, run)| token(system, run));
            *t = new.unwrap_or_default();
            new.is_some()
        });
    }
}

/// The rest of what this module adds to the output, which needs the list of pages (`pages`:
/// the rendered files): sitemap, robots.txt, feeds and redirects. With `kept` (the dev
/// server's memory), sitemaps made from the same URLs as the previous build's, which the
/// output still holds, are not made again: their paths are given back, for the output to
/// keep.
pub fn publish<E>(
    site: &Site,
    pages: &Paths,
    base_url: &BaseUrl,
    redirects: &[Redirect],
    kept: Option<KeptSitemaps<'_>>,
    emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
) -> Result<Vec<PathBuf>, E> {
    let kept_sitemaps = sitemaps_kept(pages, base_url, kept, emit)?;
    emit(robots(base_url))?;
    for feed in feeds(site, base_url) {
        emit(feed)?;
    }
    if !redirects.is_empty() || site.record_pages == RecordPages::PerRun || site.status_pages == StatusPages::PerSystem
    {
        emit(netlify_redirects(redirects, base_url.path(), site.record_pages, site.status_pages))?;
    }
    Ok(kept_sitemaps)
}

/// What the previous build made its sitemaps from (a digest of its pages' URLs and the
/// base URL), and their files.
#[derive(Debug, Default, Clone)]
pub struct SitemapParts {
    made_from: u128,
    files: Vec<PathBuf>,
}

/// What a build knows of the sitemaps the previous build wrote.
pub struct KeptSitemaps<'a> {
    /// What they were made from, and their files; this build's replace them.
    pub parts: &'a std::sync::Mutex<SitemapParts>,
    /// Whether the output holds the file at a path as the previous build wrote it.
    pub holds: &'a (dyn Fn(&Path) -> bool + Sync),
}

/// The sitemaps, made and handed to `emit` unless `kept` says the output holds them as
/// they would be made: then their paths are given back.
fn sitemaps_kept<E>(
    pages: &Paths,
    base_url: &BaseUrl,
    kept: Option<KeptSitemaps<'_>>,
    emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
) -> Result<Vec<PathBuf>, E> {
    let urls = page_urls(pages);
    let Some(kept) = kept else {
        return sitemaps(urls, base_url).into_iter().try_for_each(emit).map(|()| Vec::new());
    };
    let made_from = urls_digest(&urls, base_url);
    let mut parts = kept.parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if parts.made_from == made_from && !parts.files.is_empty() && parts.files.iter().all(|f| (kept.holds)(f)) {
        return Ok(parts.files.clone());
    }
    // Forgotten until every file is written: a build stopped between them leaves some new.
    *parts = SitemapParts::default();
    let files = sitemaps(urls, base_url);
    let paths = files.iter().map(|file| file.path.clone()).collect();
    files.into_iter().try_for_each(emit)?;
    *parts = SitemapParts { made_from, files: paths };
    Ok(Vec::new())
}

/// Every HTML page's URL below the base but the 404 page's: its path without `index.html`,
/// in the pages' order.
fn page_urls(pages: &Paths) -> Vec<&str> {
    pages
        .par_iter()
        .filter_map(|p| p.to_str())
        .filter(|p| p.ends_with(".html") && *p != "404.html")
        .map(|p| p.strip_suffix("index.html").unwrap_or(p))
        .collect()
}

/// A digest of a set of URLs (whatever their order: the page list has none) and the base
/// URL: the sum of the URLs' own hashes, their count and the base.
fn urls_digest(urls: &[&str], base_url: &BaseUrl) -> u128 {
    let sum = urls.par_iter().map(|url| xxhash_rust::xxh3::xxh3_128(url.as_bytes())).reduce(|| 0, u128::wrapping_add);
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&sum.to_le_bytes());
    hasher.update(&(urls.len() as u64).to_le_bytes());
    hasher.update(base_url.prefix().as_bytes());
    hasher.digest128()
}

/// The sitemap protocol's cap on the URLs of one file (sitemaps.org: 50,000 URLs and
/// 50 MB; a file of 50,000 of casebook's URLs is some 6 MB).
const SITEMAP_URLS: usize = 50_000;

/// `sitemap.xml`: every HTML page but the 404 page, in path order. Past the protocol's
/// 50,000 URLs a file, `sitemap.xml` is an index of `sitemap-1.xml`, `sitemap-2.xml`… of
/// 50,000 each (crawlers reject a larger file whole).
fn sitemaps(mut urls: Vec<&str>, base_url: &BaseUrl) -> Vec<OutputFile> {
    // All begin with the same `/`, so these sort as the URLs do.
    urls.par_sort_unstable();
    let prefix = base_url.prefix();
    let base = escape(&format!("{prefix}/"));
    const HEAD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    const NAMESPACE: &str = "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"";
    let urlset = |path: String, urls: &[&str]| {
        let mut xml = String::with_capacity(urls.len() * (base.len() + 64));
        xml.push_str(&format!("{HEAD}<urlset {NAMESPACE}>\n"));
        for url in urls {
            xml.push_str("  <url><loc>");
            xml.push_str(&base);
            pulldown_cmark_escape::escape_html(&mut xml, url).expect("writing to a String cannot fail");
            xml.push_str("</loc></url>\n");
        }
        xml.push_str("</urlset>\n");
        OutputFile { path: path.into(), bytes: xml.into_bytes() }
    };
    if urls.len() <= SITEMAP_URLS {
        return vec![urlset("sitemap.xml".into(), &urls)];
    }
    let mut files: Vec<OutputFile> = urls
        .par_chunks(SITEMAP_URLS)
        .enumerate()
        .map(|(i, part)| urlset(format!("sitemap-{}.xml", i + 1), part))
        .collect();
    let mut index = format!("{HEAD}<sitemapindex {NAMESPACE}>\n");
    for file in &files {
        let loc = format!("{prefix}/{}", file.path.display());
        index.push_str(&format!("  <sitemap><loc>{}</loc></sitemap>\n", escape(&loc)));
    }
    index.push_str("</sitemapindex>\n");
    files.push(OutputFile { path: "sitemap.xml".into(), bytes: index.into_bytes() });
    files
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
            usize::MAX,
        ));
    }
    files.push(feed(
        "urn:casebook:site".into(),
        site.title.clone(),
        absolute("/"),
        absolute("/feed.xml"),
        all,
        "/feed.xml",
        site.feed_entries,
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

/// A feed of the newest `limit` of `entries`.
fn feed(
    id: String,
    title: String,
    page: String,
    self_url: String,
    mut entries: Vec<Entry>,
    path: &str,
    limit: usize,
) -> OutputFile {
    // Newest first; ties in ID order, so the feed is the same on every build.
    entries.sort_by(|a, b| b.updated().cmp(a.updated()).then_with(|| a.id().cmp(b.id())));
    entries.truncate(limit);
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

/// Netlify's `_redirects` (Cloudflare and GitLab Pages read it too): one permanent
/// redirect per entry, under the base path; with `record_pages: per-run`, then the one
/// rule that leads every record's own address to its place on its run's page of records;
/// with `status_pages: per-system`, the one that leads every system's status's address to
/// its place on the system's page of statuses.
pub fn netlify_redirects(
    redirects: &[Redirect],
    base: &str,
    record_pages: RecordPages,
    status_pages: StatusPages,
) -> OutputFile {
    let mut text = String::from("# Written by casebook from content/redirects.yaml\n");
    for r in redirects {
        let target =
            if r.to.starts_with("http") { r.to.clone() } else { format!("{base}{}", r.to.trim_start_matches('/')) };
        text.push_str(&format!("{base}{} {target} 301\n", r.from.trim_start_matches('/')));
    }
    // Last: hosts apply the first rule that matches, and a record named above has moved.
    if record_pages == RecordPages::PerRun {
        text.push_str("# record_pages: per-run: a record's own page is its place on its run's page of records\n");
        text.push_str(&format!("{base}:system/:run/records/* {base}:system/:run/records.html#:splat 301\n"));
    }
    if status_pages == StatusPages::PerSystem {
        text.push_str(
            "# status_pages: per-system: a system's status page is its place on the system's page of statuses\n",
        );
        text.push_str(&format!("{base}:system/statuses/:status/ {base}:system/statuses.html#:status/ 301\n"));
    }
    OutputFile { path: "_redirects".into(), bytes: text.into_bytes() }
}

/// The anchor contract: every record page the previous build published still exists (as
/// a page, or, with `record_pages: per-run`, as a record on its run's page of records), or
/// a redirect says where it went. Also checks that every redirect leads to a page.
pub fn check_anchors<'a>(
    previous: Option<&Manifest>,
    site: &Site,
    pages: impl Iterator<Item = &'a PathBuf>,
    redirects: &[Redirect],
    redirects_file: &std::path::Path,
    redirects_text: &str,
) -> Vec<Diagnostic> {
    if redirects.is_empty() && previous.is_none() {
        return Vec::new();
    }
    let mut paths: BTreeSet<String> =
        pages.filter_map(|p| p.to_str()).map(|p| format!("/{}", p.strip_suffix("index.html").unwrap_or(p))).collect();
    if site.record_pages == RecordPages::PerRun {
        for system in &site.systems {
            for run in &system.runs {
                paths.extend(run.records.keys().map(|id| crate::urls::record(&system.slug, &run.slug, id)));
            }
        }
    }
    if site.status_pages == StatusPages::PerSystem {
        for system in &site.systems {
            paths.extend(site.statuses.iter().map(|status| crate::urls::system_status(&system.slug, &status.name)));
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The manifest's files of `site` as a build makes them (by path), with `kept` parts and
    /// their tokens, and the paths of the run files it kept.
    fn made(site: &Site, kept: Option<KeptManifest<'_>>) -> (BTreeMap<PathBuf, Vec<u8>>, Vec<PathBuf>) {
        let out = std::sync::Mutex::new(BTreeMap::new());
        let emit = |file: OutputFile| -> Result<(), ()> {
            out.lock().unwrap().insert(file.path, file.bytes);
            Ok(())
        };
        let kept = publish_manifest(site, &BaseUrl::new("/"), None, kept, &emit).unwrap();
        (out.into_inner().unwrap(), kept)
    }

    #[test]
    fn a_manifest_keeps_the_files_of_unchanged_runs_and_makes_the_others() {
        let mut site = crate::testing::site_of(&["alpha", "beta"], &["r1", "r2"]);
        let (cold, none_kept) = made(&site, None);
        assert!(none_kept.is_empty());
        let paths: Vec<&str> = cold.keys().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(
            paths,
            [
                "alpha/r1/records.json",
                "alpha/r2/records.json",
                "beta/r1/records.json",
                "beta/r2/records.json",
                "records.json"
            ]
        );
        assert!(paths.iter().all(|p| is_manifest_file(Path::new(p))));
        let parts = std::sync::Mutex::new(ManifestParts::default());
        let tokens = std::sync::Mutex::new(HashMap::<String, u128>::new());
        let token = |system: &System, run: &Run| {
            tokens.lock().unwrap().get(&format!("{}/{}", system.slug, run.slug)).copied().or(Some(1))
        };
        let lost = std::sync::Mutex::new(BTreeSet::<PathBuf>::new());
        let holds = |path: &Path| !lost.lock().unwrap().contains(path);
        let kept = || KeptManifest { parts: &parts, token: &token, holds: &holds };
        // Nothing known yet: every file made, as a build from nothing makes it.
        assert_eq!(made(&site, Some(kept())), (cold.clone(), Vec::new()));

        // beta/r2 changes: its file and the site's are made, the others kept.
        let (mut edited, _) = crate::testing::run_of(
            "revision: abc\n",
            &[("memory", "# Report\n\n## OBJ-01 Object, renamed\n\nIt keeps turns.\n\n## OBJ-02 New\n\nMore.\n")],
        );
        edited.slug = crate::model::Slug::parse("r2").unwrap();
        site.systems[1].runs[1] = Arc::new(edited);
        tokens.lock().unwrap().insert("beta/r2".into(), 2);
        let (now, kept_paths) = made(&site, Some(kept()));
        let (from_nothing, _) = made(&site, None);
        assert_eq!(
            now.keys().collect::<Vec<_>>(),
            [&PathBuf::from("beta/r2/records.json"), &PathBuf::from("records.json")]
        );
        assert_eq!(now[Path::new("beta/r2/records.json")], from_nothing[Path::new("beta/r2/records.json")]);
        assert_ne!(now[Path::new("beta/r2/records.json")], cold[Path::new("beta/r2/records.json")]);
        assert_eq!(now[Path::new("records.json")], from_nothing[Path::new("records.json")]);
        assert_eq!(kept_paths.len(), 3);
        assert!(!kept_paths.contains(&PathBuf::from("beta/r2/records.json")));

        // A file the output no longer holds as written is made again, though its run did
        // not change.
        lost.lock().unwrap().insert("alpha/r1/records.json".into());
        let (now, kept_paths) = made(&site, Some(kept()));
        assert!(now.contains_key(Path::new("alpha/r1/records.json")));
        assert_eq!(now[Path::new("alpha/r1/records.json")], from_nothing[Path::new("alpha/r1/records.json")]);
        assert_eq!(kept_paths.len(), 3, "alpha/r2, beta/r1 and beta/r2");
    }

    #[test]
    fn sitemaps_are_kept_while_made_from_the_same_urls_and_held_and_made_again_otherwise() {
        let site = crate::testing::site_of(&["alpha"], &["r1"]);
        let parts = std::sync::Mutex::new(SitemapParts::default());
        let lost = std::sync::Mutex::new(BTreeSet::<PathBuf>::new());
        let holds = |path: &Path| !lost.lock().unwrap().contains(path);
        // The sitemaps made (by path, with their bytes) and the paths kept.
        let publish_with = |pages: &[&str], base: &str, memory: bool| {
            let made = std::sync::Mutex::new(BTreeMap::new());
            let emit = |file: OutputFile| -> Result<(), ()> {
                if file.path.to_string_lossy().starts_with("sitemap") {
                    made.lock().unwrap().insert(file.path, file.bytes);
                }
                Ok(())
            };
            let pages: Paths = pages.iter().map(PathBuf::from).collect::<Vec<_>>().into();
            let kept = memory.then_some(KeptSitemaps { parts: &parts, holds: &holds });
            let kept = publish(&site, &pages, &BaseUrl::new(base), &[], kept, &emit).unwrap();
            (made.into_inner().unwrap(), kept)
        };
        let pages = ["index.html", "alpha/index.html", "alpha/r1/index.html", "404.html"];
        let sitemap = vec![PathBuf::from("sitemap.xml")];

        let (first, kept) = publish_with(&pages, "/", true);
        assert_eq!((first.keys().cloned().collect::<Vec<_>>(), kept), (sitemap.clone(), vec![]));
        assert_eq!(first, publish_with(&pages, "/", false).0, "made as without a memory");
        // The same pages in another order (the page list has none): kept.
        let reordered = ["alpha/r1/index.html", "404.html", "index.html", "alpha/index.html"];
        assert_eq!(publish_with(&reordered, "/", true), (BTreeMap::new(), sitemap.clone()));
        // A page more, another base URL, a file the output lost: made again, as without a
        // memory, then kept.
        let more = ["index.html", "alpha/index.html", "alpha/r1/index.html", "alpha/r1/records/A.html"];
        for (pages, base) in [(&more, "/"), (&more, "/docs/")] {
            let (made, kept) = publish_with(pages, base, true);
            assert_eq!((made, kept), (publish_with(pages, base, false).0, vec![]), "{pages:?} {base}");
            assert_eq!(publish_with(pages, base, true), (BTreeMap::new(), sitemap.clone()));
        }
        lost.lock().unwrap().insert("sitemap.xml".into());
        let (made, kept) = publish_with(&more, "/docs/", true);
        assert_eq!((made, kept), (publish_with(&more, "/docs/", false).0, vec![]));
    }

    #[test]
    fn a_sitemap_past_fifty_thousand_urls_is_an_index_of_files_of_fifty_thousand() {
        let base = BaseUrl::new("https://example.org/docs/");
        let pages = |n: usize| -> Vec<PathBuf> {
            (0..n).map(|i| PathBuf::from(format!("s/r/records/R-{i:06}.html"))).chain(["404.html".into()]).collect()
        };
        let one = sitemaps(page_urls(&pages(SITEMAP_URLS).into()), &base);
        assert_eq!(one.len(), 1);
        let text = String::from_utf8(one[0].bytes.clone()).unwrap();
        assert_eq!(text.matches("<url>").count(), SITEMAP_URLS);
        assert!(text.contains("<loc>https://example.org/docs/s/r/records/R-000000.html</loc>"));

        let files = sitemaps(page_urls(&pages(SITEMAP_URLS * 2 + 1).into()), &base);
        let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        assert_eq!(names, ["sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml", "sitemap.xml"]);
        let text = |i: usize| String::from_utf8(files[i].bytes.clone()).unwrap();
        assert_eq!(
            (0..3).map(|i| text(i).matches("<url>").count()).collect::<Vec<_>>(),
            [SITEMAP_URLS, SITEMAP_URLS, 1]
        );
        assert!(text(2).contains("R-100000.html") && !text(2).contains("404"));
        assert!(text(3).starts_with("<?xml") && text(3).contains("<sitemapindex"));
        assert!(text(3).contains("<sitemap><loc>https://example.org/docs/sitemap-2.xml</loc></sitemap>"));
        assert_eq!(text(3).matches("<sitemap>").count(), 3);
    }
}
