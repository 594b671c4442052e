//! Render: the resolved site → HTML pages (minijinja templates of the theme) and the
//! theme's assets. Pages are independent, so they render in parallel (rayon); the
//! template environment and the syntax set are built once and shared.
//!
//! Pages: home, system, run, report, record (published or not), the status index and
//! one page per status (a count per system) and, per system, one page per status it
//! carries (the records). A status page never lists every record of a large site.
//!
//! Each scope's pages are built in its own module (`site`, `system`, `run`, `report`,
//! `record`, `changes`) by functions over the [`Renderer`], which holds what every page
//! shares (the site, templates, assets, per-run memos) and the views several scopes show
//! (badges, findings, record summaries, breadcrumbs).

mod changes;
mod graph;
mod highlight;
pub mod markdown;
mod record;
mod report;
mod run;
mod site;
mod system;
mod theme;
mod verdicts;
pub mod views;

pub use theme::Theme;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use minijinja::{context, Environment};
use rayon::prelude::*;

use crate::markup::escape;
use crate::model::{
    At, Limit, LimitKind, LineRange, Publication, Record, RecordPages, Report, Run, Site, StatusPages, System,
};
use crate::output::OutputFile;
use crate::recognise::{slugify, Conventions};
use crate::urls;
use markdown::{render_inline, render_report, Linker};
use record::{reading_position, ReadingOrder};
use views::*;

/// A failure of the theme: a template that does not compile or render.
#[derive(Debug, thiserror::Error)]
#[error("template error: {0:#}")]
pub struct RenderError(#[from] minijinja::Error);

/// What a page is made from, beyond the site's configuration and theme: a rebuild may
/// skip the pages of a scope whose inputs did not change.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// The run, report and record pages of a run: made from the run and its system's
    /// name only (references never cross runs).
    Run(&'a System, &'a Run),
    /// A system's page: the system and a summary of each of its runs.
    System(&'a System),
    /// Pages made from the whole site (home, statuses, search, 404).
    Site,
}

/// One page to render.
enum Job<'a> {
    NotFound,
    Search,
    Home,
    Statuses,
    Status(usize),
    System(&'a System),
    /// A system's records with one status (`site.statuses[i]`).
    SystemStatus(&'a System, usize),
    /// A system's records by every status on one page (`status_pages: per-system`).
    SystemStatuses(&'a System),
    Run(&'a System, &'a Run),
    Report(&'a System, &'a Run, usize),
    Record(&'a System, &'a Run, &'a Record),
    /// All the records of a run on one page (`record_pages: per-run`).
    RunRecords(&'a System, &'a Run),
    /// What changed from one run of a system to the next.
    Changes(&'a System, &'a Run, &'a Run),
}

/// Warnings for quotes whose language has no highlighting grammar: they are shown plain.
pub fn language_warnings(site: &Site) -> Vec<crate::model::Diagnostic> {
    let mut out = Vec::new();
    // A grammar is looked up by a scan of the syntax set: once per language, not per quote
    // (a rebuild asks this of every quote of the site before it writes a page).
    let mut known: HashMap<&str, bool> = HashMap::new();
    for report in site.systems.iter().flat_map(|s| &s.runs).flat_map(|r| &r.reports) {
        for quote in &report.quotes {
            if let Some(language) = &quote.language {
                if !*known.entry(language.as_str()).or_insert_with(|| highlight::knows_language(language)) {
                    out.push(
                        crate::model::Diagnostic::warning(
                            crate::model::Code::NoGrammar,
                            report.location(quote.location),
                            format!("no highlighting grammar for `{language}`; the quote is shown without colours"),
                        )
                        .with_help("use a known fence language (python, rust, bash, javascript, …)"),
                    );
                }
            }
        }
    }
    out
}

/// What the pages are made from.
#[derive(Clone, Copy)]
pub struct PageInputs<'a> {
    /// The resolved site.
    pub site: &'a Site,
    /// The conventions its text is read with (links are made as it was parsed).
    pub conventions: &'a Conventions,
    /// Templates and assets.
    pub theme: &'a Theme,
    /// What verification found (`--verify`), shown beside each quote and citation.
    pub verification: Option<&'a crate::model::Verification>,
}

/// Renders every page and asset of the site, handing each file to `emit` as soon as it
/// is made (pages are never all held in memory), and returns the paths of the assets
/// ([`page_paths`] names every page). The pages of a scope for which `up_to_date` says
/// true are not rendered (a rebuild keeps them as they are).
pub fn render<E>(
    inputs: &PageInputs<'_>,
    up_to_date: &(dyn Fn(Scope<'_>) -> bool + Sync),
    pages: Pages<'_>,
    emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
) -> Result<Vec<std::path::PathBuf>, E>
where
    E: From<RenderError> + Send,
{
    let PageInputs { site, conventions, theme, verification } = *inputs;
    let env = theme.environment().map_err(RenderError::from)?;
    // Assets are named by their content (`style.1a2b3c4d.css`), so hosts can cache them
    // for ever and a new build never serves a stale stylesheet.
    let mut assets: Vec<(String, Vec<u8>)> = vec![
        ("highlight.css".to_string(), highlight::stylesheet().into_bytes()),
        ("statuses.css".to_string(), statuses_stylesheet(site).into_bytes()),
    ];
    assets.extend(theme.assets().iter().map(|(name, bytes)| (name.clone(), bytes.clone())));
    let asset_urls: BTreeMap<String, String> =
        assets.iter().map(|(name, bytes)| (name.clone(), fingerprinted(name, bytes))).collect();
    // Each scope is asked once; the pages of an up-to-date scope are not even listed.
    let mut jobs = Vec::new();
    for scope in scopes(site) {
        if !up_to_date(scope) {
            jobs.extend(jobs_of(site, scope).into_iter().filter(|job| pages.wants(job)));
        }
    }
    let mut shared: HashMap<RunKey<'_>, RunShared<'_>> = HashMap::new();
    for job in &jobs {
        if let Some(run) = job.run() {
            *shared.entry(run).or_default().pages_left.get_mut() += 1;
        }
    }
    let looks: HashMap<&str, StatusLook> = site
        .statuses
        .iter()
        .map(|s| {
            let look = StatusLook { class: slugify(&s.name), meaning: s.meaning.clone(), url: urls::status(&s.name) };
            (s.name.as_str(), look)
        })
        .collect();
    let site_links = crate::links::SiteLinks::of(site);
    let renderer = Renderer {
        site,
        conventions,
        env: &env,
        assets: &asset_urls,
        shared: &shared,
        looks: &looks,
        verification,
        site_links,
    };
    jobs.par_iter().try_for_each(|job| {
        let page = renderer.page(job);
        if let Some(shared) = job.run().and_then(|run| shared.get(&run)) {
            shared.page_done();
        }
        emit(page?)
    })?;
    let mut paths = Vec::with_capacity(assets.len());
    for (name, bytes) in assets {
        let path = urls::output_path(&asset_urls[&name]);
        paths.push(path.clone());
        emit(OutputFile { path, bytes })?;
    }
    Ok(paths)
}

/// Which pages of the scopes to render, by the files they are made from (a rebuild
/// renders the pages of the edited reports first, so the browser shows them sooner).
#[derive(Clone, Copy)]
pub enum Pages<'a> {
    /// Every page.
    All,
    /// The pages of these report files: each report's page and its records' pages.
    Of(&'a [std::path::PathBuf]),
    /// Every page but those.
    NotOf(&'a [std::path::PathBuf]),
}

impl Pages<'_> {
    fn wants(self, job: &Job<'_>) -> bool {
        let of = |files: &[std::path::PathBuf]| match *job {
            Job::Report(_, run, r) => files.iter().any(|f| *f == *run.reports[r].file),
            Job::Record(_, run, record) => {
                record.declarations.iter().any(|at| files.iter().any(|f| *f == *run.reports[at.report as usize].file))
            }
            Job::RunRecords(_, run) => run.reports.iter().any(|r| files.iter().any(|f| *f == *r.file)),
            _ => false,
        };
        match self {
            Pages::All => true,
            Pages::Of(files) => of(files),
            Pages::NotOf(files) => !of(files),
        }
    }
}

/// Every scope of the site: the site's own pages, then each system's and each run's.
pub fn scopes(site: &Site) -> Vec<Scope<'_>> {
    let mut scopes = vec![Scope::Site];
    for system in &site.systems {
        scopes.push(Scope::System(system));
        scopes.extend(system.runs.iter().map(|run| Scope::Run(system, run)));
    }
    scopes
}

/// The pages of a scope.
fn jobs_of<'a>(site: &'a Site, scope: Scope<'a>) -> Vec<Job<'a>> {
    match scope {
        Scope::Site => {
            let mut jobs = vec![Job::NotFound, Job::Search, Job::Home, Job::Statuses];
            jobs.extend((0..site.statuses.len()).map(Job::Status));
            jobs
        }
        Scope::System(system) => {
            let mut jobs = vec![Job::System(system)];
            let statuses = statuses_in(site, system);
            match site.status_pages {
                StatusPages::Separate => jobs.extend(statuses.into_iter().map(|i| Job::SystemStatus(system, i))),
                StatusPages::PerSystem if !statuses.is_empty() => jobs.push(Job::SystemStatuses(system)),
                StatusPages::PerSystem => {}
            }
            jobs.extend(changes::pairs(system).into_iter().map(|(from, to)| Job::Changes(system, from, to)));
            jobs
        }
        Scope::Run(system, run) => {
            let mut jobs = vec![Job::Run(system, run)];
            jobs.extend((0..run.reports.len()).map(|r| Job::Report(system, run, r)));
            match site.record_pages {
                RecordPages::Separate => {
                    jobs.extend(run.records.values().map(|record| Job::Record(system, run, record)))
                }
                RecordPages::PerRun => jobs.push(Job::RunRecords(system, run)),
            }
            jobs
        }
    }
}

/// Each status's badge colours (`.status-<slug>`), from the vocabulary: a stylesheet of
/// its own, since pages carry no inline style (the site's Content-Security-Policy).
fn statuses_stylesheet(site: &Site) -> String {
    let mut css = String::from("/* Status badges: casebook.yaml's colours, else the defaults. */\n");
    for status in &site.statuses {
        let colors = status.colors;
        css.push_str(&format!(
            ".status-{} {{ background: {}; color: {}; }}\n",
            slugify(&status.name),
            colors.background,
            colors.text
        ));
    }
    css
}

/// How many pages a full build renders (its progress bar's length).
pub fn page_count(site: &Site, up_to_date: &(dyn Fn(Scope<'_>) -> bool + Sync)) -> usize {
    scopes(site).into_par_iter().filter(|&scope| !up_to_date(scope)).map(|scope| jobs_of(site, scope).len()).sum()
}

/// The output paths of a scope's pages, each once (records whose IDs differ only in
/// characters a file name cannot hold share a page).
pub fn scope_pages(site: &Site, scope: Scope<'_>) -> Vec<std::path::PathBuf> {
    let mut paths: Vec<std::path::PathBuf> = jobs_of(site, scope)
        .into_iter()
        .map(|job| match job {
            Job::Record(system, run, record) => urls::record_output_path(&system.slug, &run.slug, &record.id),
            _ => urls::output_path(&job.url(site)),
        })
        .collect();
    let shared = match scope {
        Scope::Run(_, run) => run.records.keys().any(|id| !id.is_own_slug()),
        Scope::Site | Scope::System(_) => false,
    };
    if shared {
        paths.sort_unstable();
        paths.dedup();
    }
    paths
}

/// The output path of every page of the site (not the assets), a list per scope in the
/// order of [`scopes`], each once (no two scopes share a path: the slugs that would are
/// reserved). `known` gives the list of a scope whose pages did not change since it was
/// made (the dev server's memory: a large site has hundreds of thousands of pages).
pub fn page_paths(
    site: &Site,
    known: &(dyn Fn(Scope<'_>) -> Option<Arc<[std::path::PathBuf]>> + Sync),
) -> crate::output::Paths {
    let lists =
        scopes(site).into_par_iter().map(|scope| known(scope).unwrap_or_else(|| scope_pages(site, scope).into()));
    crate::output::Paths::of_scopes(lists.collect())
}

/// The statuses (indexes into `site.statuses`) that some published record or some
/// finding without one of `system` carries: each has a page listing them.
fn statuses_in(site: &Site, system: &System) -> Vec<usize> {
    statuses_tallied(site, &Tally::of(system.runs.iter().map(|r| &**r)))
}

/// The statuses (indexes into `site.statuses`) that `tally` counts.
fn statuses_tallied(site: &Site, tally: &Tally<'_>) -> Vec<usize> {
    (0..site.statuses.len())
        .filter(|&i| {
            let name = site.statuses[i].name.as_str();
            tally.records.contains_key(name) || tally.findings.contains_key(name)
        })
        .collect()
}

/// How many findings without a record a site-wide status page names per system.
const SUBJECTS_SHOWN: usize = 24;

/// Up to how many systems the home page shows each with its runs and a site-wide status
/// page names subjects of each; a site of more has a row per system on both, the rest on
/// each system's pages (a section per system of hundreds is a wall, not an overview).
const SYSTEMS_IN_FULL: usize = 12;

/// How many published records carry each status, and how many subjects without a
/// published record have a finding of it (`Consolidation`, counted once however many
/// dimensions state it), over some runs: every count of the site (home, system, run and
/// status pages, and the search page's facets) is one of these, so they agree.
struct Tally<'a> {
    records: BTreeMap<&'a str, usize>,
    findings: BTreeMap<&'a str, usize>,
}

impl<'a> Tally<'a> {
    fn of(runs: impl Iterator<Item = &'a Run>) -> Self {
        let mut tally = Tally { records: BTreeMap::new(), findings: BTreeMap::new() };
        for run in runs {
            for (status, counts) in &run.status_counts {
                *tally.records.entry(status).or_default() += counts.records;
                *tally.findings.entry(status).or_default() += counts.subjects;
            }
        }
        tally.records.retain(|_, n| *n > 0);
        tally.findings.retain(|_, n| *n > 0);
        tally
    }
}

impl<'a> Job<'a> {
    /// The run whose page this is, if any, by its system's and its own slug (the key of
    /// the run's memo).
    fn run(&self) -> Option<RunKey<'a>> {
        match *self {
            Job::Run(system, run)
            | Job::Report(system, run, _)
            | Job::Record(system, run, _)
            | Job::RunRecords(system, run) => Some(run_key(system, run)),
            _ => None,
        }
    }

    /// The page's URL.
    fn url(&self, site: &Site) -> String {
        match *self {
            Job::NotFound => "/404.html".to_string(),
            Job::Search => urls::search(),
            Job::Home => urls::home(),
            Job::Statuses => urls::statuses(),
            Job::Status(i) => urls::status(&site.statuses[i].name),
            Job::System(system) => urls::system(&system.slug),
            Job::SystemStatus(system, i) => urls::system_status(&system.slug, &site.statuses[i].name),
            Job::SystemStatuses(system) => urls::system_statuses(&system.slug),
            Job::Run(system, run) => urls::run(&system.slug, &run.slug),
            Job::Report(system, run, r) => urls::report(&system.slug, &run.slug, &run.reports[r].slug),
            Job::Record(system, run, record) => urls::record(&system.slug, &run.slug, &record.id),
            Job::RunRecords(system, run) => urls::run_records(&system.slug, &run.slug),
            Job::Changes(system, from, to) => urls::changes(&system.slug, &from.slug, &to.slug),
        }
    }
}

/// What the pages of one run share while they render: the code they highlighted and the
/// run's record graph, each made when a page first needs it and given back after the
/// run's last page (a large site's runs together would hold hundreds of megabytes).
#[derive(Default)]
struct RunShared<'a> {
    /// The run's pages not yet rendered.
    pages_left: std::sync::atomic::AtomicUsize,
    highlights: highlight::RunMemo,
    graph: std::sync::Mutex<Option<std::sync::Arc<graph::RunGraph<'a>>>>,
    /// The run's published records in reading order, made by the first page that asks.
    reading: std::sync::Mutex<Option<std::sync::Arc<ReadingOrder<'a>>>>,
    /// The site's conventions with the kinds of ID the run's reports declare, when they
    /// add any (`Run::learned_kinds`), made by the first page that asks.
    conventions: std::sync::OnceLock<Option<Conventions>>,
    /// The run's quotes by their code, made by the first page that asks.
    quotes_by_code: std::sync::OnceLock<markdown::QuotesByCode<'a>>,
    /// Where the run's links to reports and headings lead, made by the first page that asks.
    local_links: std::sync::OnceLock<markdown::LocalLinks<'a>>,
}

impl<'a> RunShared<'a> {
    /// The record graph of `run`, made by the first page that asks.
    fn graph(&self, run: &'a Run) -> std::sync::Arc<graph::RunGraph<'a>> {
        // A panic while holding the lock leaves it `None` or whole.
        let mut graph = self.graph.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        graph.get_or_insert_with(|| std::sync::Arc::new(graph::RunGraph::of(run))).clone()
    }

    /// The reading order of `run`'s published records, made by the first page that asks.
    fn reading(&self, run: &'a Run) -> std::sync::Arc<ReadingOrder<'a>> {
        let mut order = self.reading.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        order.get_or_insert_with(|| std::sync::Arc::new(ReadingOrder::of(run))).clone()
    }

    /// Called once per rendered page of the run; the last one gives everything back.
    fn page_done(&self) {
        if self.pages_left.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
            self.highlights.release();
            *self.graph.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
            *self.reading.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        }
    }
}

/// A run, by its system's slug and its own.
type RunKey<'a> = (&'a str, &'a str);

fn run_key<'a>(system: &'a System, run: &'a Run) -> RunKey<'a> {
    (system.slug.as_str(), run.slug.as_str())
}

/// `/assets/style.1a2b3c4d.css` for `style.css`: the name carries a hash of the content.
fn fingerprinted(name: &str, bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    match name.rsplit_once('.') {
        Some((stem, extension)) => urls::asset(&format!("{stem}.{hash}.{extension}")),
        None => urls::asset(&format!("{name}.{hash}")),
    }
}

struct Renderer<'a> {
    site: &'a Site,
    conventions: &'a Conventions,
    env: &'a Environment<'a>,
    /// Asset name → fingerprinted URL.
    assets: &'a BTreeMap<String, String>,
    /// Per run being rendered, what its pages share.
    shared: &'a HashMap<RunKey<'a>, RunShared<'a>>,
    /// How each status of the vocabulary is shown.
    looks: &'a HashMap<&'a str, StatusLook>,
    /// What verification found, when it ran.
    verification: Option<&'a crate::model::Verification>,
    /// Where links between reports lead.
    site_links: crate::links::SiteLinks<'a>,
}

/// How a status is shown, made once: its CSS class, meaning and page.
struct StatusLook {
    class: String,
    meaning: String,
    url: String,
}

impl<'a> Renderer<'a> {
    fn page(&self, job: &Job<'a>) -> Result<OutputFile, RenderError> {
        let (template, ctx) = match job {
            Job::NotFound => ("404.html", {
                // A record's or a status's own address, where the host applies no
                // redirects, leads to its place on a shared page.
                let moved_records = self.site.record_pages == RecordPages::PerRun;
                let moved_statuses = self.site.status_pages == StatusPages::PerSystem;
                context! {
                    title => "Page not found",
                    moved_script => self.assets.get("moved.js").filter(|_| moved_records || moved_statuses).cloned(),
                    moved_records => moved_records,
                    moved_statuses => moved_statuses,
                }
            }),
            Job::Search => (
                "search.html",
                context! {
                    title => "Search",
                    bundle => format!("/{}/", crate::output::BROWSER_DIR),
                    search_url => urls::search(),
                    search_script => self.assets.get("search.js").cloned().unwrap_or_default(),
                    // The facet of kinds shows each kind's name beside its code.
                    kind_names => &self.site.kinds,
                },
            ),
            Job::Home => ("home.html", site::home(self)),
            Job::Statuses => ("statuses.html", site::statuses_page(self)),
            Job::Status(i) => ("status.html", site::status_page(self, *i)),
            Job::System(system) => ("system.html", system::page(self, system)),
            Job::SystemStatus(system, i) => ("system-status.html", system::status_page(self, system, *i)),
            Job::SystemStatuses(system) => ("system-statuses.html", system::statuses_page(self, system)),
            Job::Run(system, run) => ("run.html", run::page(self, system, run)),
            Job::Report(system, run, r) => ("report.html", report::page(self, system, run, &run.reports[*r])),
            Job::Record(system, run, record) => ("record.html", record::page(self, system, run, record)),
            Job::RunRecords(system, run) => ("records.html", run::records_page(self, system, run)),
            Job::Changes(system, from, to) => ("changes.html", changes::page(self, system, from, to)),
        };
        let url = job.url(self.site);
        let html = self.env.get_template(template)?.render(context! { site => self.site_view(), ..ctx })?;
        Ok(OutputFile { path: urls::output_path(&url), bytes: html.into_bytes() })
    }

    fn site_view(&self) -> SiteView {
        SiteView {
            title: self.site.title.clone(),
            home: urls::home(),
            statuses_url: urls::statuses(),
            search_url: urls::search(),
            stylesheets: ["style.css", "statuses.css"]
                .iter()
                .filter_map(|name| self.assets.get(*name).cloned())
                .collect(),
            highlight_stylesheet: self.assets.get("highlight.css").cloned().unwrap_or_default(),
            favicon: self.assets.get("favicon.svg").cloned().unwrap_or_default(),
        }
    }

    /// What verification found of `run`, when it ran.
    fn verdicts(&self, system: &System, run: &Run) -> Option<&crate::model::RunVerification> {
        self.verification?.runs.get(&(system.slug.clone(), run.slug.clone()))
    }

    fn linker<'b>(&'b self, system: &'b System, run: &'a Run) -> Linker<'b> {
        let learned = self.shared.get(&run_key(system, run)).and_then(|shared| {
            let made =
                shared.conventions.get_or_init(|| match self.conventions.with_learned_kinds(&run.learned_kinds) {
                    std::borrow::Cow::Owned(conventions) => Some(conventions),
                    std::borrow::Cow::Borrowed(_) => None,
                });
            made.as_ref()
        });
        Linker {
            system: &system.slug,
            run,
            conventions: learned.unwrap_or(self.conventions),
            record_pages: self.site.record_pages,
            highlights: self.shared.get(&run_key(system, run)).map(|shared| &shared.highlights),
            verdicts: self.verdicts(system, run),
            quotes_by_code: self
                .shared
                .get(&run_key(system, run))
                .map(|shared| shared.quotes_by_code.get_or_init(|| markdown::quotes_by_code(run))),
            local_links: self
                .shared
                .get(&run_key(system, run))
                .map(|shared| shared.local_links.get_or_init(|| markdown::local_links(run, &self.site_links))),
        }
    }

    /// One status's row of a count: how many published records carry it and how many
    /// findings without a published record state it.
    fn status_count(&self, status: &crate::model::Status, tally: &Tally<'_>, url: String) -> StatusCount {
        StatusCount {
            name: status.name.clone(),
            class: slugify(&status.name),
            meaning: status.meaning.clone(),
            url,
            count: tally.records.get(status.name.as_str()).copied().unwrap_or(0),
            findings: tally.findings.get(status.name.as_str()).copied().unwrap_or(0),
        }
    }

    /// The statuses of the site (of `vocabulary` only, when given) counted over `runs`.
    fn status_counts<'r>(
        &self,
        runs: impl Iterator<Item = &'r Run>,
        vocabulary: Option<&[String]>,
        url: &dyn Fn(&str) -> String,
    ) -> Vec<StatusCount> {
        let tally = Tally::of(runs);
        self.site
            .statuses
            .iter()
            .filter(|s| vocabulary.is_none_or(|v| v.contains(&s.name)))
            .map(|s| self.status_count(s, &tally, url(&s.name)))
            .collect()
    }

    fn run_summary(&self, system: &System, run: &Run) -> RunSummary {
        let published = run.published_records().count();
        RunSummary {
            name: run.name.clone(),
            url: urls::run(&system.slug, &run.slug),
            revision: run.revision.short().to_string(),
            date: run.date.clone(),
            lens: run.lens.clone(),
            reports: run.reports.len(),
            records: published,
            unpublished: run.records.len() - published,
            statuses: self
                .status_counts(std::iter::once(run), Some(&run.vocabulary), &|name| urls::status(name))
                .into_iter()
                .filter(|s| s.count + s.findings > 0)
                .collect(),
        }
    }

    fn system_summary(&self, system: &System) -> SystemSummary {
        SystemSummary {
            name: system.name.clone(),
            url: urls::system(&system.slug),
            repository: system.repository.clone(),
            summary_html: system.summary.as_deref().map(render_plain_markdown),
            runs: system.runs.iter().map(|run| self.run_summary(system, run)).collect(),
        }
    }

    fn all_runs(&self) -> impl Iterator<Item = &Run> + '_ {
        self.site.systems.iter().flat_map(|s| s.runs.iter().map(|r| &**r))
    }

    /// Where a system's records with status `name` are listed (`status_pages`).
    fn system_status_url(&self, system: &System, name: &str) -> String {
        urls::system_status_shown(self.site.status_pages, &system.slug, name)
    }

    /// The badge of a status on a dimension.
    fn badge(&self, status: &str, dimension: &str, qualifier: Option<&str>, part: Option<&str>) -> StatusBadge {
        let look = self.looks.get(status);
        StatusBadge {
            name: status.to_string(),
            class: look.map_or_else(|| slugify(status), |l| l.class.clone()),
            dimension: dimension.to_string(),
            qualifier: qualifier.map(str::to_string),
            part: part.map(str::to_string),
            meaning: look.map(|l| l.meaning.clone()).unwrap_or_default(),
            url: look.map_or_else(|| urls::status(status), |l| l.url.clone()),
        }
    }

    fn badges(&self, run: &Run, record: &Record) -> Vec<StatusBadge> {
        run.findings_of(record)
            .map(|f| self.badge(&f.status, &f.dimension, f.qualifier.as_deref(), f.part.as_deref()))
            .collect()
    }

    /// Where a finding is written: its anchor on its report's page.
    fn finding_url(&self, system: &System, run: &Run, at: At, finding: &crate::model::Finding) -> String {
        format!("{}#{}", urls::report(&system.slug, &run.slug, &run.reports[at.report as usize].slug), finding.anchor)
    }

    /// A finding, with where it is written, for a listing of findings (run and status
    /// pages): what it is about, and in which report.
    fn finding_view(&self, system: &System, run: &'a Run, at: At, finding: &crate::model::Finding) -> FindingView {
        let mut view = self.record_finding_view(system, run, at, finding);
        if let crate::model::Subject::Record(id) = &finding.subject {
            let label = run.records.get(id).and_then(|r| r.title_label());
            view.subject = match label {
                Some(label) => format!("{id} {label}"),
                None => id.to_string(),
            };
            view.subject_url = Some(urls::record_shown(self.site.record_pages, &system.slug, &run.slug, id));
            view.subject_is_record = true;
        }
        let report = &run.reports[at.report as usize];
        view.at.name = match report.section(finding.section) {
            Some(section) => format!("{} § {}", report.title, section.title),
            None => report.title.clone(),
        };
        view.source = report.source_at(finding.location.line);
        view.run = Link { name: run.name.clone(), url: urls::run(&system.slug, &run.slug) };
        view
    }

    /// A finding as its record's page shows it: its status on its dimension, what the
    /// analysis says there, and the section where it is written (the subject is the page's).
    fn record_finding_view(
        &self,
        system: &System,
        run: &'a Run,
        at: At,
        finding: &crate::model::Finding,
    ) -> FindingView {
        let report = &run.reports[at.report as usize];
        let subject = match &finding.subject {
            crate::model::Subject::Named(name) => name.clone(),
            crate::model::Subject::Record(_) => String::new(),
        };
        FindingView {
            subject,
            subject_url: None,
            subject_is_record: false,
            dimension: finding.dimension.to_string(),
            status: self.badge(
                &finding.status,
                &finding.dimension,
                finding.qualifier.as_deref(),
                finding.part.as_deref(),
            ),
            // A cell that holds only its statuses says nothing more than the badges.
            statement_html: if says_more(
                report.text(&finding.statement),
                &self.site.statuses,
                &[&finding.dimension, finding.qualifier.as_deref().unwrap_or("")],
            ) {
                render_inline(report.text(&finding.statement), &self.linker(system, run))
            } else {
                String::new()
            },
            at_section: match report.section(finding.section) {
                Some(section) => format!("§ {}", section.title),
                None => report.title.clone(),
            },
            at: Link { name: String::new(), url: self.finding_url(system, run, at, finding) },
            source: String::new(),
            run: Link { name: String::new(), url: String::new() },
        }
    }

    /// A record in a listing: each status once, whatever its dimensions and parts.
    fn record_summary(&self, system: &System, run: &Run, record: &Record) -> RecordSummary {
        let mut statuses = self.badges(run, record);
        let mut seen = std::collections::BTreeSet::new();
        statuses.retain(|s| seen.insert(s.name.clone()));
        RecordSummary {
            id: record.id.to_string(),
            url: urls::record_shown(self.site.record_pages, &system.slug, &run.slug, &record.id),
            label: record.title_label().map(str::to_string),
            derived: record.label.is_none() && record.derived_label.is_some(),
            kind: record.kind.to_string(),
            statuses,
        }
    }

    fn breadcrumbs(&self, system: &System, run: Option<&Run>) -> Vec<Link> {
        let mut crumbs = vec![
            Link { name: self.site.title.clone(), url: urls::home() },
            Link { name: system.name.clone(), url: urls::system(&system.slug) },
        ];
        if let Some(run) = run {
            crumbs.push(Link { name: run.name.clone(), url: urls::run(&system.slug, &run.slug) });
        }
        crumbs
    }

    fn section_link(&self, system: &System, run: &Run, report: usize, section: Option<u32>) -> Link {
        let r = &run.reports[report];
        let base = urls::report(&system.slug, &run.slug, &r.slug);
        match r.section(section) {
            Some(s) => Link { name: format!("{} § {}", r.title, s.title), url: format!("{base}#{}", s.anchor) },
            None => Link { name: r.title.clone(), url: base },
        }
    }
}
/// What a graph's picture shows, in words (its SVG description).
fn graph_description(selection: &graph::Selection) -> String {
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut text = format!(
        "{} and {}",
        plural(selection.nodes.len(), "record", "records"),
        plural(selection.edges.len(), "link", "links")
    );
    if selection.left_out > 0 {
        text.push_str(&format!(
            ", {} not drawn",
            plural(selection.left_out, "more linked record", "more linked records")
        ));
    }
    text.push_str("; the table after it lists each link.");
    text
}

/// A link to an anchor in one of the run's reports.
fn report_anchor(system: &System, run: &Run, report: usize, anchor: &str) -> Link {
    let r = &run.reports[report];
    Link { name: r.title.clone(), url: format!("{}#{anchor}", urls::report(&system.slug, &run.slug, &r.slug)) }
}

/// One limit as a page shows it.
fn limit_view(system: &System, run: &Run, report: usize, limit: &Limit, linker: &Linker<'_>) -> LimitView {
    let r = &run.reports[report];
    let section = r.section(limit.section);
    LimitView {
        handle: limit.handle.clone(),
        derived: !limit.handle_given,
        kind: match limit.kind {
            LimitKind::Limitation => "limitation",
            LimitKind::Coverage => "coverage",
        },
        scope_html: limit.scope.as_deref().map(|t| render_inline(t, linker)),
        text_html: render_inline(&limit.text, linker),
        prevents_html: limit.prevents.as_deref().map(|t| render_inline(t, linker)),
        resolves_html: limit.resolves.as_deref().map(|t| render_inline(t, linker)),
        at: Link {
            name: match section {
                Some(s) => format!("{} § {}", r.title, s.title),
                None => r.title.clone(),
            },
            url: format!("{}#{}", urls::report(&system.slug, &run.slug, &r.slug), limit.anchor),
        },
        source: r.source_at(limit.location.line),
        because: None,
    }
}

/// True when a finding's statement says more than its key, statuses and qualifiers, and
/// its own words (`shown`: its dimension and qualifier), which a findings table shows
/// anyway: `implemented`, `implemented (listing) / absent (content index)`, `Operation
/// conclusion status: wired` and `in a TTY: wired  # to the prompt` say no more.
fn says_more(statement: &str, statuses: &[crate::model::Status], shown: &[&str]) -> bool {
    let mut lower = statement.to_lowercase();
    for words in shown.iter().map(|w| w.trim().to_lowercase()).filter(|w| !w.is_empty()) {
        lower = lower.replace(&words, " ");
    }
    let mut text = match lower.split_once(':') {
        Some((key, value))
            if key.contains("status") || key.contains("finding") || !key.chars().any(char::is_alphanumeric) =>
        {
            value.to_string()
        }
        _ => lower,
    };
    while let (Some(open), Some(close)) = (text.find('('), text.find(')')) {
        if close < open {
            break;
        }
        text.replace_range(open..=close, " ");
    }
    for status in statuses {
        text = text.replace(&status.name.to_lowercase(), " ");
    }
    text.chars().any(char::is_alphanumeric)
}

/// Markdown outside any run (a system summary): no record links, under the one policy
/// for untrusted content; a single paragraph without its `<p>`.
fn render_plain_markdown(text: &str) -> String {
    let html = crate::markup::render_untrusted(text);
    let trimmed = html.trim();
    trimmed
        .strip_prefix("<p>")
        .and_then(|s| s.strip_suffix("</p>"))
        .filter(|s| !s.contains("<p>"))
        .unwrap_or(trimmed)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::record::evidence_views;
    use super::run::{report_summaries, source_views};
    use super::*;
    use crate::model::{RecordId, Slug};
    use crate::testing::{conventions, run_of};

    const RUN: &str = "revision: 5954a07d464feeaf6c311a9fa5ca2e54200a6794
sources:
  - id: SRC-1
    title: The repository
    repository: github.com/o/r
  - id: SRC-2
    title: A design note, without a repository
";

    const REPORT: &str = "# Memory

### OBJ-01 Cache

The cache keeps turns (SRC-1 `src/cache.py:10-12, 20`) and is described in SRC-2 `notes/design.md`.

```python
turns = turns[-20:]
```

--- src/cache.py:10-12
";

    #[test]
    fn records_are_read_in_the_order_their_reports_first_declare_them() {
        let (run, _) = run_of(
            RUN,
            &[
                ("a", "# A\n\n### OBJ-10 Ten\n\nSee OBJ-99.\n\n### OBJ-02 Two\n\nText.\n"),
                ("b", "# B\n\n### OBJ-01 One\n\nText.\n"),
            ],
        );
        let order = ReadingOrder::of(&run);
        let ids: Vec<&str> = order.records.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["OBJ-10", "OBJ-02", "OBJ-01"], "the reports' order, not the IDs'");
        let around = |id: &str| {
            let (p, n) = order.around(&RecordId::new(id));
            (p.map(|r| r.id.as_str()), n.map(|r| r.id.as_str()))
        };
        assert_eq!(around("OBJ-02"), (Some("OBJ-10"), Some("OBJ-01")));
        assert_eq!(around("OBJ-10"), (None, Some("OBJ-02")));
        assert_eq!(around("OBJ-99"), (None, None), "an unpublished record has no neighbours");
    }

    #[test]
    fn evidence_links_each_quote_and_range_at_the_frozen_revision() {
        let (run, diagnostics) = run_of(RUN, &[("memory", REPORT)]);
        assert!(diagnostics.iter().all(|d| !d.is_error()), "{diagnostics:?}");
        let (conventions, system) = (conventions(), Slug::parse("lab").unwrap());
        let linker = Linker {
            system: &system,
            run: &run,
            conventions: &conventions,
            record_pages: Default::default(),
            highlights: None,
            verdicts: None,
            quotes_by_code: None,
            local_links: None,
        };
        let record = &run.records[&RecordId::new("OBJ-01")];
        let evidence = evidence_views(&run, record, &linker, None);
        type Shown<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>);
        let shown: Vec<Shown<'_>> = evidence
            .iter()
            .map(|e| (e.kind, e.source.as_ref().map(|s| s.name.as_str()), e.path.as_deref(), e.url.as_deref()))
            .collect();
        let blob = "https://github.com/o/r/blob/5954a07d464feeaf6c311a9fa5ca2e54200a6794/src/cache.py";
        let first = format!("{blob}#L10-L12");
        assert_eq!(
            shown,
            [
                ("quote", Some("SRC-1"), Some("src/cache.py"), Some(first.as_str())),
                ("citation", Some("SRC-1"), Some("src/cache.py"), Some(first.as_str())),
                ("citation", Some("SRC-2"), Some("notes/design.md"), None),
            ],
            "a source without a repository gives no link"
        );
        let ranges: Vec<(&str, Option<&str>)> =
            evidence[1].ranges.iter().map(|r| (r.name.as_str(), r.url.as_deref())).collect();
        let second = format!("{blob}#L20");
        assert_eq!(ranges, [("10-12", Some(first.as_str())), ("20", Some(second.as_str()))]);
        assert_eq!(evidence[0].source.as_ref().unwrap().url, "/lab/r1/#src-1");
        assert_eq!(evidence[0].at, "content/lab/r1/memory.md:7", "the quote is where its fence opens");
    }

    #[test]
    fn a_path_s_underscores_are_shown_as_written_and_linked() {
        let (run, _) = run_of(RUN, &[("memory", REPORT)]);
        let (conventions, system) = (conventions(), Slug::parse("lab").unwrap());
        let linker = Linker {
            system: &system,
            run: &run,
            conventions: &conventions,
            record_pages: Default::default(),
            highlights: None,
            verdicts: None,
            quotes_by_code: None,
            local_links: None,
        };
        let html = markdown::render_fragment("See SRC-1 src/__init__.py:3 and __stressed__ words.", &linker);
        assert!(html.contains("src/__init__.py:3</a>"), "{html}");
        assert!(html.contains("/src/__init__.py#L3"), "{html}");
        assert!(html.contains("<strong>stressed</strong>"), "{html}");
    }

    #[test]
    fn an_obsidian_link_leads_to_its_record_or_is_shown_as_words() {
        let (run, _) = run_of(RUN, &[("memory", REPORT)]);
        let (conventions, system) = (conventions(), Slug::parse("lab").unwrap());
        let linker = Linker {
            system: &system,
            run: &run,
            conventions: &conventions,
            record_pages: Default::default(),
            highlights: None,
            verdicts: None,
            quotes_by_code: None,
            local_links: None,
        };
        let html = markdown::render_fragment("See [[OBJ-01]], [[OBJ-01|the store]] and [[claims-register]].", &linker);
        assert_eq!(html.matches("class=\"rec\"").count(), 2, "{html}");
        assert!(html.contains(">the store</a>"), "{html}");
        assert!(
            html.contains(
                "<span class=\"wikilink\" title=\"claims-register: not published here\">claims-register</span>"
            ),
            "{html}"
        );
        assert!(!html.contains("[["), "{html}");
    }

    #[test]
    fn a_document_s_section_and_lines_link_into_it_at_the_revision() {
        let run_yaml =
            format!("{RUN}  - id: SRC-3\n    title: The README\n    repository: github.com/o/r\n    path: README.md\n");
        let (run, _) = run_of(&run_yaml, &[("memory", REPORT)]);
        let (conventions, system) = (conventions(), Slug::parse("lab").unwrap());
        let linker = Linker {
            system: &system,
            run: &run,
            conventions: &conventions,
            record_pages: Default::default(),
            highlights: None,
            verdicts: None,
            quotes_by_code: None,
            local_links: None,
        };
        let blob = "https://github.com/o/r/blob/5954a07d464feeaf6c311a9fa5ca2e54200a6794";
        let html = markdown::render_fragment(
            "As [SRC-3 § Run (client) Arguments], SRC-3, ll. 278–279, and SRC-1 docs/agent.md, § \"How it ends\"; SRC-2 § Notes; SRC-3.",
            &linker,
        );
        assert!(html.contains(&format!("\"{blob}/README.md#run-client-arguments\"")), "{html}");
        assert!(html.contains(&format!("\"{blob}/README.md?plain=1#L278-L279\"")), "{html}");
        assert!(html.contains(&format!("\"{blob}/docs/agent.md#how-it-ends\"")), "{html}");
        assert!(html.contains("href=\"/lab/r1/#src-2\""), "a source of no repository's document: its entry; {html}");
        assert!(html.contains("href=\"/lab/r1/#src-3\">SRC-3</a>."), "a source named alone: its entry; {html}");
    }

    #[test]
    fn a_statement_of_only_the_finding_s_own_words_says_no_more() {
        let statuses: Vec<crate::model::Status> = ["wired", "absent"]
            .iter()
            .map(|name| crate::model::Status {
                name: name.to_string(),
                meaning: String::new(),
                colors: crate::model::color::BadgeColors::of(name, 0, None, None),
            })
            .collect();
        let shown = ["in a TTY", "to the console prompt"];
        assert!(!says_more("in a TTY: wired  # to the console prompt", &statuses, &shown));
        assert!(!says_more("Status: wired (default)", &statuses, &[]));
        assert!(says_more("in a TTY: wired, but only after the first call", &statuses, &shown));
    }

    #[test]
    fn the_run_page_lists_its_sources_and_reports() {
        let (run, _) = run_of(
            RUN,
            &[("memory", REPORT), ("synthesis", "---\ntitle: The synthesis\n---\n\n# Synthesis\n\nOBJ-01 holds.\n")],
        );
        let (conventions, slug) = (conventions(), Slug::parse("lab").unwrap());
        let linker = Linker {
            system: &slug,
            run: &run,
            conventions: &conventions,
            record_pages: Default::default(),
            highlights: None,
            verdicts: None,
            quotes_by_code: None,
            local_links: None,
        };
        let sources = source_views(&run, &linker);
        let trees: Vec<(&str, &str, Option<&str>)> =
            sources.iter().map(|s| (s.id.as_str(), s.revision.as_str(), s.tree_url.as_deref())).collect();
        assert_eq!(
            trees,
            [
                (
                    "SRC-1",
                    "5954a07d464feeaf6c311a9fa5ca2e54200a6794",
                    Some("https://github.com/o/r/tree/5954a07d464feeaf6c311a9fa5ca2e54200a6794/")
                ),
                ("SRC-2", "5954a07d464feeaf6c311a9fa5ca2e54200a6794", None),
            ]
        );
        let system = System { slug: slug.clone(), name: "Lab".into(), repository: None, summary: None, runs: vec![] };
        let summaries = report_summaries(&system, &run);
        let reports: Vec<(&str, &str, usize, usize)> =
            summaries.iter().map(|r| (r.title.as_str(), r.url.as_str(), r.records, r.quotes)).collect();
        // A report is titled by its front matter, else by the heading that opens it.
        assert_eq!(reports, [("Memory", "/lab/r1/memory/", 1, 1), ("The synthesis", "/lab/r1/synthesis/", 0, 0)]);
    }
}
