//! `casebook serve`: builds the site, serves the output folder over HTTP, rebuilds when a
//! source changes, and makes open pages reload (or show the build's errors over them).
//!
//! The pieces: [`rebuild`] (the one call that brings the output up to date), [`watch`]
//! (which files changed), [`http`] (what a request gets), [`files`] (request paths to
//! files, never outside the output), [`status`] (what the browser is told). The files on
//! disk are exactly what `casebook build` writes; the reload script is added to pages as
//! they are served.

pub mod builds;
pub mod files;
pub mod http;
pub mod status;
pub mod watch;

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, PoisonError, RwLock};

use tokio::sync::watch as latest;

use crate::model::Listing;
use crate::pipeline::{BuildOptions, Outcome, PipelineError};
use crate::search::Searcher;
use builds::Builds;
use status::BuildStatus;

/// Prints a line to standard output (`out`) or error (`err`). A long-running server
/// must not die because the terminal or pipe it started with has gone (`println!` panics
/// then), so write errors are ignored.
macro_rules! say {
    (out, $($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
    (err, $($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}
pub(crate) use say;

/// What to serve, and where.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The build's options (root, output folder, base URL).
    pub build: BuildOptions,
    /// The address to listen on (loopback unless asked otherwise).
    pub bind: IpAddr,
    /// The port; 0 picks a free one.
    pub port: u16,
    /// Worker threads for builds (0: one per core).
    pub jobs: usize,
    /// Print errors only, not warnings.
    pub quiet: bool,
    /// Also print references to unpublished records.
    pub verbose: bool,
    /// Print the wall time of each stage after each build.
    pub timings: bool,
    /// Host names the server answers to besides `localhost` and IP addresses
    /// (`--allowed-host`).
    pub allowed_hosts: Vec<String>,
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The build's worker threads could not be started.
    #[error("cannot start worker threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    /// The async runtime could not be started.
    #[error("cannot start the HTTP runtime: {0}")]
    Runtime(std::io::Error),
    /// The address is taken or not ours.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The sources cannot be watched.
    #[error("cannot watch the sources for changes: {0}")]
    Watch(#[from] notify::Error),
    /// The output folder cannot be written at all (not casebook's, or holding the sources).
    #[error(transparent)]
    Output(PipelineError),
    /// The server failed while running.
    #[error("the HTTP server failed: {0}")]
    Server(std::io::Error),
}

/// Statuses an open page may fall behind by before it is told to reload whole.
const EVENTS_KEPT: usize = 256;

/// What the request handlers share with the builder thread.
pub struct Served {
    /// The output folder, absolute.
    output: PathBuf,
    /// The path the site is served under (`/`, or the base URL's path).
    base_path: RwLock<String>,
    /// The index of the current output; replaced after each good build.
    searcher: RwLock<Option<Arc<Searcher>>>,
    /// The last build's status (`/__casebook/status`, and the first event of a stream).
    status: latest::Sender<Arc<BuildStatus>>,
    /// Every status, in order, for the event streams: a page must see each one, since each
    /// names the pages it changed (a channel that keeps only the latest let a page miss
    /// the status naming it when two came close together, and stay stale).
    events: tokio::sync::broadcast::Sender<Arc<BuildStatus>>,
    /// Host names answered besides `localhost` and IP addresses (lowercase).
    allowed_hosts: Vec<String>,
}

impl Served {
    /// What the HTTP side needs to answer from an output folder already built, with no
    /// build thread behind it: for driving [`http::router`] without a server (the fuzz
    /// target of requests). `searcher` answers `/api/search`.
    pub fn over_output(output: PathBuf, searcher: Option<Searcher>) -> Self {
        Served {
            output,
            base_path: RwLock::new("/".into()),
            searcher: RwLock::new(searcher.map(Arc::new)),
            status: latest::channel(Arc::new(BuildStatus::initial())).0,
            events: tokio::sync::broadcast::channel(EVENTS_KEPT).0,
            allowed_hosts: Vec::new(),
        }
    }

    /// Makes `status` the current one and sends it to every open page.
    fn announce(&self, status: BuildStatus) {
        let status = Arc::new(status);
        self.status.send_replace(Arc::clone(&status));
        // No open page: nobody to tell.
        let _ = self.events.send(status);
    }

    fn base_path(&self) -> String {
        self.base_path.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn searcher(&self) -> Option<Arc<Searcher>> {
        self.searcher.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn generation(&self) -> u64 {
        self.status.borrow().generation
    }
}

/// Builds, serves and watches until the process is stopped.
pub fn serve(options: ServeOptions) -> Result<(), ServeError> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(options.jobs).build()?;
    let root = std::path::absolute(&options.build.root).unwrap_or_else(|_| options.build.root.clone());
    let root = root.canonicalize().unwrap_or(root);
    let output = std::path::absolute(&options.build.output).unwrap_or_else(|_| options.build.output.clone());
    let mut builds = Builds::new(options.build.clone(), root.clone(), pool);
    let served = Arc::new(Served {
        allowed_hosts: options.allowed_hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
        ..Served::over_output(output.clone(), None)
    });
    // Diagnostics name files relative to the root as it was given (`content/…` for `.`).
    let log = Log {
        quiet: options.quiet,
        verbose: options.verbose,
        timings: options.timings,
        root: options.build.root.clone(),
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("casebook-http")
        .build()
        .map_err(ServeError::Runtime)?;
    let address = SocketAddr::new(options.bind, options.port);
    // Listening before the first build: a port in use is reported at once. Connections
    // wait in the backlog until the build is done.
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(address))
        .map_err(|source| ServeError::Bind { address, source })?;
    let bound = listener.local_addr().map_err(|source| ServeError::Bind { address, source })?;

    // Watching starts before the first build, so that no save is missed. The output
    // folder may not exist yet: its parent is made canonical, as the root is.
    let output_real = match (output.parent().map(Path::canonicalize), output.file_name()) {
        (Some(Ok(parent)), Some(name)) => parent.join(name),
        _ => output,
    };
    let (changes_tx, changes) = mpsc::channel();
    watch::spawn(root, output_real, changes_tx)?;

    // The first build, before answering requests: its failure to write at all ends the
    // server; errors in the content do not (the browser shows them).
    let first = builds.rebuild(&[], &mut |_| {}, &|| false);
    if let Err(PipelineError::Write(e)) = first {
        return Err(ServeError::Output(PipelineError::Write(e)));
    }
    apply(&served, &log, first, true);

    let served_by_builds = Arc::clone(&served);
    std::thread::Builder::new()
        .name("casebook-build".into())
        .spawn(move || rebuild_on_changes(builds, &served_by_builds, &log, changes))
        .map_err(ServeError::Runtime)?;

    if !options.bind.is_loopback() {
        say!(
            err,
            "casebook: warning: listening on {bound}, which other machines may reach; this server is for local use"
        );
    }
    // Tests and scripts read the address from this line (`--port 0` picks a free port).
    say!(out, "casebook: serving http://{bound}{} (Ctrl-C to stop)", served.base_path());
    let _ = std::io::stdout().flush();
    runtime.block_on(http::serve_connections(listener, http::router(served))).map_err(ServeError::Server)
}

/// Paths the watcher reported: those a rebuild has not taken yet.
type Changes = mpsc::Receiver<Vec<PathBuf>>;

/// The build thread: one rebuild per batch of changes until the watcher stops.
fn rebuild_on_changes(mut builds: Builds, served: &Served, log: &Log, changes: Changes) {
    // Changes that come in while a rebuild runs wait here; the rebuild stops early for
    // them (after the changed runs' pages, after the site's pages, within the manifest,
    // or between files of the search indexes), so that a save is never queued behind the
    // site-wide tail of the previous one.
    let waiting = std::sync::Mutex::new((changes, Vec::<PathBuf>::new()));
    let newer_change = || {
        let mut waiting = waiting.lock().unwrap_or_else(PoisonError::into_inner);
        let (changes, early) = &mut *waiting;
        while let Ok(more) = changes.try_recv() {
            early.extend(more);
        }
        !early.is_empty()
    };
    while let Some(changed) = next_changes(&waiting) {
        // Open pages that changed reload as soon as they are written: the edited
        // reports' pages first, then the rest of their runs' pages; the site-wide pages
        // and the search index follow.
        let mut announced: Vec<PathBuf> = Vec::new();
        let result = builds.rebuild(
            &changed,
            &mut |pages| {
                if pages.is_empty() {
                    return;
                }
                announced.extend_from_slice(pages);
                let generation = served.generation() + 1;
                let urls = status::page_urls(&served.base_path(), pages);
                served.announce(BuildStatus::succeeded(generation, &[], Some(urls)));
            },
            &newer_change,
        );
        // Stopped for a newer change: the next rebuild reports.
        if matches!(&result, Ok(outcome) if outcome.superseded) {
            continue;
        }
        let result = result.map(|mut outcome| {
            if let Some(changed) = &mut outcome.changed {
                changed.retain(|p| !announced.contains(p));
            }
            outcome
        });
        apply(served, log, result, false);
    }
}

/// The next batch to build, sorted and without repeats: the changes a stopped rebuild
/// left, or else the next the watcher sends, with all that came in meanwhile. `None`
/// once the watcher has stopped.
fn next_changes(waiting: &std::sync::Mutex<(Changes, Vec<PathBuf>)>) -> Option<Vec<PathBuf>> {
    let mut waiting = waiting.lock().unwrap_or_else(PoisonError::into_inner);
    let (changes, early) = &mut *waiting;
    let mut changed = std::mem::take(early);
    if changed.is_empty() {
        changed = changes.recv().ok()?;
    }
    while let Ok(more) = changes.try_recv() {
        changed.extend(more);
    }
    changed.sort();
    changed.dedup();
    Some(changed)
}

/// How builds are reported on the terminal.
struct Log {
    quiet: bool,
    verbose: bool,
    timings: bool,
    root: PathBuf,
}

impl Log {
    fn diagnostics(&self, outcome: &Outcome, first: bool) {
        let mut err = std::io::stderr().lock();
        for d in &outcome.diagnostics {
            // Warnings are printed once, with the first build; after that only errors,
            // so the terminal shows what each save broke.
            let listing =
                Listing { warnings: !self.quiet && first, unpublished_references: self.verbose, notes: false };
            if listing.shows(d) {
                let _ = writeln!(err, "{d}\n");
            }
        }
    }
}

/// Records the result of a build: a new generation, searcher and base path after a good
/// one; the diagnostics after a bad one. The event stream tells open pages.
fn apply(served: &Served, log: &Log, result: Result<Outcome, PipelineError>, first: bool) {
    let generation = served.generation();
    let next = match result {
        Ok(outcome) if outcome.written => {
            log.diagnostics(&outcome, first);
            let generation = generation + 1;
            if let Some(base_url) = &outcome.base_url {
                *served.base_path.write().unwrap_or_else(PoisonError::into_inner) = base_url.path().to_string();
            }
            let searcher = match Searcher::load(&served.output) {
                Ok(searcher) => Some(Arc::new(searcher)),
                Err(e) => {
                    say!(err, "casebook: warning: /api/search is unavailable: {e}");
                    None
                }
            };
            *served.searcher.write().unwrap_or_else(PoisonError::into_inner) = searcher;
            say!(out, "casebook: built in {:.2} s (build {generation})", outcome.elapsed.as_secs_f64());
            if log.timings {
                for (stage, time) in &outcome.timings {
                    say!(out, "    {stage:<20} {:>8.3} s", time.as_secs_f64());
                }
            }
            let base_path = served.base_path();
            let changed = outcome.changed.as_ref().map(|files| status::page_urls(&base_path, files));
            BuildStatus::succeeded(generation, &outcome.diagnostics, changed)
        }
        Ok(outcome) => {
            log.diagnostics(&outcome, first);
            let status = BuildStatus::failed(generation, &outcome.diagnostics, &log.root);
            let plural = if status.errors == 1 { "" } else { "s" };
            say!(err, "casebook: build failed: {} error{plural}; still serving the last good build", status.errors);
            status
        }
        Err(e) => {
            say!(err, "casebook: error: {e}");
            BuildStatus::broken(generation, e.to_string())
        }
    };
    served.announce(next);
}
