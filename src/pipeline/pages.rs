//! The pages stage: every page and asset, and, in a full build, the search indexes and the
//! manifest alongside (they need only the model, and the pages spend much of their time in
//! the file system); in a rebuild, the pages in the order an author waits for them.

use std::path::PathBuf;

use crate::index::{self, Indexed};
use crate::output::Paths;
use crate::progress::Watch;
use crate::publish;
use crate::render::{self, Pages, Scope};

use super::reuse::Reuse;
use super::{Kind, PageContext, PipelineError, Progress, Stopwatch};

/// What the pages stage made: the paths of every page of the site (rendered or not) and
/// of the assets, each once, and the search indexes when they were made alongside.
pub(super) struct Made {
    pub(super) paths: Paths,
    pub(super) indexed: Option<Indexed>,
}

/// A full build (or `check`): every page, with the search indexes and the manifest
/// alongside, each page told to `watch`.
pub(super) fn all_pages(cx: &PageContext<'_>, reuse: &dyn Reuse, watch: &dyn Watch) -> Result<Made, PipelineError> {
    // A warm build renders only the scopes whose inputs changed (`Reuse::up_to_date`).
    let up_to_date = |scope: Scope<'_>| reuse.up_to_date(scope);
    watch.stage("rendering", render::page_count(cx.site, &up_to_date));
    let emit = |file| {
        watch.advance(1);
        cx.files.page(file)
    };
    if let Some(files) = reuse.unchanged_site_files(cx.site).filter(|_| cx.kind == Kind::Build) {
        // Nothing the indexes and the manifest are made from changed: linked, not made.
        let assets = render::render(&cx.page_inputs(), &up_to_date, Pages::All, &emit)?;
        let mut paths = page_paths(cx, reuse);
        paths.extend(assets);
        cx.files.previous(&files)?;
        return Ok(Made { paths, indexed: None });
    }
    let (paths, (indexes, manifest)) = rayon::join(
        || render::render(&cx.page_inputs(), &up_to_date, Pages::All, &emit),
        || rayon::join(|| indexes(cx), || manifest(cx)),
    );
    let indexed = indexes?;
    let (assets, manifest) = (paths?, manifest?);
    // Listed once the indexes' working memory is given back: a large site's list of pages
    // is tens of megabytes.
    let mut paths = page_paths(cx, reuse);
    paths.extend(assets);
    paths.extend(manifest);
    Ok(Made { paths, indexed })
}

/// A rebuild: first the pages made from the edited reports (the page the author has open),
/// then the rest of their runs' and systems' pages, each time telling `progress` which are
/// written, then those made from the whole site (the listings of every record). `None`
/// when a newer change waits after one of these.
pub(super) fn changed_pages(
    cx: &PageContext<'_>,
    reuse: &dyn Reuse,
    edited: &[PathBuf],
    progress: Progress<'_>,
    clock: &mut Stopwatch,
) -> Result<Option<Made>, PipelineError> {
    let emit = |file| cx.files.page(file);
    let not_site = |scope: Scope<'_>| matches!(scope, Scope::Site) || reuse.up_to_date(scope);
    // Each call makes the assets; the last one's are kept.
    render::render(&cx.page_inputs(), &not_site, Pages::Of(edited), &emit)?;
    clock.lap("pages of the edited reports");
    let announced = cx.files.output.changed();
    (progress.pages_ready)(&announced);
    render::render(&cx.page_inputs(), &not_site, Pages::NotOf(edited), &emit)?;
    clock.lap("other pages of runs and systems");
    let more: Vec<PathBuf> =
        cx.files.output.changed().into_iter().filter(|p| announced.binary_search(p).is_err()).collect();
    (progress.pages_ready)(&more);
    if (progress.superseded)() {
        return Ok(None);
    }
    let not_site_wide = |scope: Scope<'_>| !matches!(scope, Scope::Site);
    let (assets, mut paths) =
        rayon::join(|| render::render(&cx.page_inputs(), &not_site_wide, Pages::All, &emit), || page_paths(cx, reuse));
    paths.extend(assets?);
    clock.lap("pages made from the whole site, and the list of every page");
    if (progress.superseded)() {
        return Ok(None);
    }
    Ok(Some(Made { paths, indexed: None }))
}

/// Every page's path: the lists of the scopes whose pages the previous build left as they
/// are come from its memory (`Reuse::scope_pages`), the others are made.
fn page_paths(cx: &PageContext<'_>, reuse: &dyn Reuse) -> Paths {
    render::page_paths(cx.site, &|scope| reuse.scope_pages(scope))
}

/// The two search indexes, when the build writes them: they are output only and can say
/// nothing about the content, so `check` does not make them. The groups of runs whose
/// tantivy segments the previous build made from the same inputs keep them.
pub(super) fn indexes(cx: &PageContext<'_>) -> Result<Option<Indexed>, PipelineError> {
    if cx.kind == Kind::Check || !cx.options.search_index {
        return Ok(None);
    }
    let published_base = publish::published_base(cx.site_base_url());
    let none = index::IndexParts::default();
    let tokens = ReuseTokens(cx.reuse);
    // The dev server keeps its browser index from one rebuild to the next; any other
    // build makes one from nothing.
    let mut fresh = index::BrowserIndex::default();
    let mut kept = cx.reuse.browser().map(|kept| kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    let browser = kept.as_deref_mut().unwrap_or(&mut fresh);
    let previous = index::Previous { parts: cx.reuse.index_parts().unwrap_or(&none), tokens: &tokens, browser };
    let indexed = index::search_indexes(cx.site, &published_base, previous, &|file| cx.files.put_site_wide(file))?;
    drop(kept);
    cx.reuse.browser_made();
    Ok(Some(indexed))
}

/// The record manifest: the files of the runs that did not change are kept (the dev
/// server and the build cache know what each was made from); gives their paths.
pub(super) fn manifest(cx: &PageContext<'_>) -> Result<Vec<PathBuf>, PipelineError> {
    let token = |system: &crate::model::System, run: &crate::model::Run| cx.reuse.run_token(system, run);
    let holds = |path: &std::path::Path| cx.reuse.holds(path);
    let kept = cx.reuse.manifest_parts().map(|parts| publish::KeptManifest { parts, token: &token, holds: &holds });
    publish::publish_manifest(cx.site, cx.site_base_url(), cx.verification, kept, &|file| cx.files.put_site_wide(file))
}

/// The files made from the page list (sitemaps, robots.txt, feeds, redirects): the
/// sitemaps the dev server's memory finds unchanged are kept; gives their paths.
pub(super) fn publish(
    cx: &PageContext<'_>,
    paths: &Paths,
    redirects: &crate::parse::Redirects,
) -> Result<Vec<PathBuf>, PipelineError> {
    let holds = |path: &std::path::Path| cx.reuse.holds(path);
    let kept = cx.reuse.sitemap_parts().map(|parts| publish::KeptSitemaps { parts, holds: &holds });
    publish::publish(cx.site, paths, cx.base_url, &redirects.entries, kept, &|f| cx.files.put(f))
}

/// The previous build as the indexes ask it.
struct ReuseTokens<'a>(&'a dyn Reuse);

impl index::Tokens for ReuseTokens<'_> {
    fn run_token(&self, system: &crate::model::System, run: &crate::model::Run) -> Option<u128> {
        self.0.run_token(system, run)
    }
    fn holds(&self, path: &std::path::Path) -> bool {
        self.0.holds(path)
    }
}
