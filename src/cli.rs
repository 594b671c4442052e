//! The command line: `build`, `check`, `diff`, `search`, `serve` and `init`. A thin shell over the library:
//! parse flags, run, print diagnostics and the summary, pick the exit code (0 success,
//! 1 errors in the content, 2 usage, theme, input or output problems).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::messages::MessageFormat;
use crate::model::{Code, Listing, Severity};
use crate::pipeline::{self, BuildOptions, Outcome, Summary};

/// Publish evidence-based analyses of software systems as a website.
#[derive(Debug, Parser)]
#[command(name = "casebook", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the site into the output folder (replaced only if the build succeeds).
    Build {
        /// Shared options.
        #[command(flatten)]
        common: Common,
        /// Where the site goes.
        #[command(flatten)]
        output: OutputArgs,
        /// records.json of the published site: fail if one of its record pages would
        /// disappear without an entry in content/redirects.yaml.
        #[arg(long, value_name = "FILE")]
        previous_manifest: Option<PathBuf>,
        /// Write neither search index (`search/tantivy/`, `search/browser/`): a quicker
        /// build when search is not needed; the search page then says so.
        #[arg(long)]
        no_search_index: bool,
        /// Let a site without a report replace the site in the output folder.
        #[arg(long)]
        allow_empty: bool,
        /// Also verify each quote and citation against its source (as `casebook verify`).
        #[arg(long)]
        verify: bool,
        /// Where the sources' repositories are, with --verify.
        #[command(flatten)]
        sources: SourceArgs,
        /// The build cache.
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Check each quote and citation against its source at the run's frozen revision, read
    /// from a git repository on this machine: a quote at its lines, elsewhere, or not
    /// found; a cited path that exists, of the kind cited, holding the cited lines.
    Verify {
        /// Shared options (`--strict` makes a quote not found an error).
        #[command(flatten)]
        common: Common,
        /// Where the sources' repositories are.
        #[command(flatten)]
        sources: SourceArgs,
    },
    /// Report what changed between two versions of an analysis: records added, removed
    /// and changed, status transitions, newly dangling references.
    Diff {
        /// The old version: a records.json, a built site folder, or a site root.
        old: PathBuf,
        /// The new version: a records.json, a built site folder, or a site root.
        new: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = DiffFormat::Markdown)]
        format: DiffFormat,
        /// Write the report to this file instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Also print each change as a diagnostic at its place, for programs (`json`:
        /// one object per line, then a summary) or GitHub Actions (`github`: workflow
        /// commands, so each appears on the pull request's diff); on stdout, so the report
        /// then goes only to --output.
        #[arg(long, value_enum, default_value_t, value_name = "FORMAT")]
        message_format: MessageFormat,
    },
    /// Search a built site offline, from its tantivy index.
    Search(SearchArgs),
    /// Create a new site in DIR (config, an example system, the schemas of its YAML files,
    /// a .gitignore); the default theme stays built in (`casebook theme eject` copies it).
    Init {
        /// The folder to create the site in: new or empty, unless --force.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Create the site in a folder that already holds files (none is overwritten).
        #[arg(long)]
        force: bool,
    },
    /// The site's theme.
    #[command(subcommand)]
    Theme(ThemeCommand),
    /// Print the completion script of a shell, for it to complete casebook's commands
    /// and options (bash: `casebook completions bash > ~/.local/share/bash-completion/completions/casebook`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print casebook's manual page, in roff (`casebook man > casebook.1; man ./casebook.1`).
    Man,
    /// Build the site, serve it on this machine, and rebuild and reload open pages
    /// whenever a source changes.
    Serve {
        /// Shared options.
        #[command(flatten)]
        common: Common,
        /// Where the site goes.
        #[command(flatten)]
        output: OutputArgs,
        /// The port to listen on (0: any free port).
        #[arg(long, default_value_t = 1111)]
        port: u16,
        /// The address to listen on. Other machines can reach anything but loopback.
        #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
        bind: std::net::IpAddr,
        /// Also answer requests for this host name (besides localhost and IP addresses,
        /// the only ones answered: a guard against DNS rebinding); may be repeated.
        #[arg(long = "allowed-host", visible_alias = "allow-host", value_name = "NAME")]
        allowed_hosts: Vec<String>,
        /// Also verify each quote and citation against its source on every build.
        #[arg(long)]
        verify: bool,
        /// Where the sources' repositories are, with --verify.
        #[command(flatten)]
        sources: SourceArgs,
        /// The build cache (the first build starts from it).
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Print the JSON Schema of a YAML file casebook reads, for an editor to check and
    /// complete it as it is typed; with no name, list them.
    Schema {
        /// Which file's schema.
        #[arg(value_enum)]
        name: Option<crate::schema::SchemaFile>,
        /// Write every schema into this folder (`<name>.schema.json`) instead.
        #[arg(long, value_name = "DIR", conflicts_with = "name")]
        write: Option<PathBuf>,
    },
    /// Check the content (every stage but writing) and report diagnostics.
    Check {
        /// Shared options.
        #[command(flatten)]
        common: Common,
    },
}

/// What `casebook theme` does.
#[derive(Debug, Subcommand)]
pub enum ThemeCommand {
    /// Copy the built-in theme into the site (`themes/default/`), to edit its templates
    /// and assets; each file there then overrides the built-in one.
    Eject {
        /// The site's root folder (holding `content/`).
        #[arg(long, default_value = ".", value_name = "DIR")]
        root: PathBuf,
        /// Overwrite files already in `themes/default/`.
        #[arg(long)]
        force: bool,
    },
}

/// Where the repositories of the sources are, and how quotes are compared.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// A source's repository: `SRC-1=PATH` (that source of every run) or
    /// `https://github.com/o/r=PATH`; may be given more than once.
    #[arg(long = "source", value_name = "KEY=PATH", value_parser = parse_source)]
    pub sources: Vec<(String, PathBuf)>,
    /// A folder of clones by host, owner and name (`DIR/github.com/o/r`); overrides
    /// `sources_dir` of casebook.yaml.
    #[arg(long, value_name = "DIR")]
    pub sources_dir: Option<PathBuf>,
    /// Compare quotes exactly (but for trailing whitespace), without forgiving the
    /// indentation, spacing, line breaks and escapes that exports change.
    #[arg(long)]
    pub exact_quotes: bool,
    /// Fetch the repository of each source that has none on this machine: a bare clone
    /// into the cache folder, kept and reused (fetched again only for a missing revision).
    #[arg(long)]
    pub fetch: bool,
    /// The cache folder for --fetch [default: $XDG_CACHE_HOME/casebook/repositories].
    #[arg(long, value_name = "DIR", requires = "fetch")]
    pub cache_dir: Option<PathBuf>,
}

impl SourceArgs {
    fn options(&self, strict: bool, quiet: bool) -> crate::verify::VerifyOptions {
        let cache = self.fetch.then(|| self.cache_dir.clone().or_else(crate::verify::repository::default_cache));
        crate::verify::VerifyOptions {
            repositories: crate::verify::repository::SourceRepositories {
                given: self.sources.clone(),
                dir: self.sources_dir.clone(),
                cache: cache.flatten(),
            },
            fetch: self.fetch,
            tell_fetches: !quiet,
            matching: if self.exact_quotes {
                crate::verify::matching::Matching::Strict
            } else {
                crate::verify::matching::Matching::Tolerant
            },
            strict,
        }
    }
}

fn parse_source(text: &str) -> Result<(String, PathBuf), String> {
    match text.rsplit_once('=') {
        Some((key, path)) if !key.is_empty() && !path.is_empty() => Ok((key.to_string(), PathBuf::from(path))),
        _ => Err(format!("`{text}` is not KEY=PATH (SRC-1=../fractal, or https://github.com/o/r=../r)")),
    }
}

/// Where `build` and `serve` write the site, and where it is published.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output folder [default: ROOT/public].
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Base URL or path the site is served under (overrides casebook.yaml).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
}

/// Where the build cache is.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// The build cache: what a build leaves so that the next one into the same output
    /// (a `build`, or `serve`'s first) renders only the runs and systems that changed and
    /// links every unchanged file from the output it replaces [default: .casebook-cache
    /// beside the output, ignored by git].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache: Option<PathBuf>,
    /// Neither read nor write a build cache: every page is made anew.
    #[arg(long)]
    no_cache: bool,
}

impl CacheArgs {
    /// The cache folder for a build into `output`, if any.
    fn dir(&self, output: &std::path::Path) -> Option<PathBuf> {
        match (&self.cache, self.no_cache) {
            (_, true) => None,
            (Some(dir), false) => Some(dir.clone()),
            (None, false) => Some(crate::cache::default_dir(output)),
        }
    }
}

impl OutputArgs {
    /// Build options for the site at `root`, writing where these say.
    fn options(&self, root: &std::path::Path) -> BuildOptions {
        let mut options = BuildOptions::new(root);
        if let Some(output) = &self.output {
            options.output = output.clone();
        }
        options.base_url = self.base_url.clone();
        options
    }
}

/// Arguments of `casebook search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query: words, "phrases", field:value, AND / OR / NOT (docs/search.md).
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,
    /// Only this system (its folder name).
    #[arg(long)]
    pub system: Option<String>,
    /// Only this run (its folder name).
    #[arg(long)]
    pub run: Option<String>,
    /// Only records of this kind (OBJ, RTE, CLM…).
    #[arg(long)]
    pub kind: Option<String>,
    /// Only records of this family (MEM, RT…).
    #[arg(long)]
    pub family: Option<String>,
    /// Only records with this status.
    #[arg(long)]
    pub status: Option<String>,
    /// Only records, findings without a record, limits, sections or reports.
    #[arg(long = "type", value_name = "TYPE", value_parser = ["record", "finding", "limit", "section", "report"])]
    pub doc_type: Option<String>,
    /// How many results.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Print JSON (schema casebook.search/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// A built site, or its search/tantivy folder.
    #[arg(long, default_value = "public", value_name = "DIR")]
    pub index: PathBuf,
}

/// How `diff` writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    /// Markdown, for a pull request comment or a job summary.
    Markdown,
    /// JSON, schema `casebook.diff/1`.
    Json,
}

/// Options of `build`, `check` and `serve`.
#[derive(Debug, Args)]
pub struct Common {
    /// The site's root: the folder holding content/, themes/ and static/.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub root: PathBuf,
    /// Worker threads [default: one per core].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Print errors only, not warnings.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also list each reference to an unpublished record (`check` always does).
    #[arg(short, long)]
    pub verbose: bool,
    /// Print the wall time of each stage.
    #[arg(long)]
    pub timings: bool,
    /// Also list, as notes, each place that looks like a convention but produced nothing
    /// (an `SRC-n` whose paths are no citation, a status word where no finding came of
    /// it…) and each record whose title is derived.
    #[arg(long)]
    pub explain: bool,
    /// Places casebook did not understand are errors, not notes.
    #[arg(long)]
    pub strict: bool,
    /// How diagnostics are printed: text for a terminal (on stderr), one JSON object per
    /// line (on stdout, then a summary object), or GitHub Actions workflow commands (on
    /// stdout, so each appears on the pull request at its line).
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT")]
    pub message_format: MessageFormat,
}

/// Runs the command line and returns the process exit code; `version` is what
/// `--version` prints after the name.
pub fn main(version: &'static str) -> ExitCode {
    let matches = Cli::command().version(version).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if let Some(code) = about_casebook(&cli.command, version) {
        return code;
    }
    let (common, build) = match &cli.command {
        Command::Build { common, .. } => (common, true),
        Command::Check { common } | Command::Verify { common, .. } => (common, false),
        Command::Init { .. } | Command::Theme(_) | Command::Completions { .. } | Command::Man => {
            unreachable!("answered by about_casebook")
        }
        Command::Diff { old, new, format, output, message_format } => {
            return diff(old, new, *format, output.as_deref(), *message_format)
        }
        Command::Schema { name, write } => return schema(*name, write.as_deref()),
        Command::Search(args) => return search(args),
        Command::Serve { common, output, port, bind, allowed_hosts, verify, sources, cache } => {
            let mut options = output.options(&common.root);
            options.cache = cache.dir(&options.output);
            options.verify = verify.then(|| sources.options(common.strict, common.quiet));
            return serve(common, options, *port, *bind, allowed_hosts);
        }
    };
    let options = build_options(&cli.command, common);
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(common.jobs.unwrap_or(0)).build() {
        Ok(pool) => pool,
        Err(e) => {
            eprintln!("casebook: cannot start worker threads: {e}");
            return ExitCode::from(2);
        }
    };
    // Progress goes to a terminal's stderr, beside human diagnostics only.
    let bar = match common.message_format {
        MessageFormat::Human => crate::progress::Bar::for_terminal(common.quiet),
        _ => None,
    };
    let watch: &dyn crate::progress::Watch = match &bar {
        Some(bar) => bar,
        None => &crate::progress::Unwatched,
    };
    let result = pool.install(|| {
        if build {
            pipeline::build_watched(&options, watch)
        } else {
            pipeline::check_watched(&options, watch)
        }
    });
    if let Some(bar) = &bar {
        bar.clear();
    }
    match result {
        Ok(outcome) => {
            let verb = match cli.command {
                Command::Build { .. } => "build",
                Command::Verify { .. } => "verify",
                _ => "check",
            };
            report(&outcome, &options, verb, common)
        }
        Err(e) => {
            eprintln!("casebook: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn serve(common: &Common, build: BuildOptions, port: u16, bind: std::net::IpAddr, hosts: &[String]) -> ExitCode {
    let options = crate::serve::ServeOptions {
        build,
        bind,
        port,
        jobs: common.jobs.unwrap_or(0),
        quiet: common.quiet,
        verbose: common.verbose,
        timings: common.timings,
        allowed_hosts: hosts.to_vec(),
    };
    match crate::serve::serve(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("casebook: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn search(args: &SearchArgs) -> ExitCode {
    use std::io::IsTerminal;
    let request = crate::search::Request {
        query: args.query.join(" "),
        system: args.system.clone(),
        run: args.run.clone(),
        kind: args.kind.clone(),
        family: args.family.clone(),
        status: args.status.clone(),
        doc_type: args.doc_type.clone(),
        limit: args.limit,
    };
    let results = match crate::search::Searcher::open(&args.index).and_then(|s| s.search(&request)) {
        Ok(results) => results,
        Err(e) => {
            eprintln!("casebook: error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&results).expect("results serialise"));
        return ExitCode::SUCCESS;
    }
    let (on, off) = if std::io::stdout().is_terminal() { ("\x1b[1m", "\x1b[0m") } else { ("[", "]") };
    for hit in &results.results {
        let name = hit.id.clone().or_else(|| hit.section.clone()).unwrap_or_else(|| hit.title.clone());
        // A limit's title begins with its handle, its label.
        let label = hit.label.as_deref().filter(|l| !name.starts_with(l)).map(|l| format!("  {l}")).unwrap_or_default();
        use crate::model::for_terminal as t;
        // A snippet is one line: its line breaks are spaces, then what is left escaped.
        let flat = |text: &str| t(&text.replace(['\n', '\r', '\t'], " ")).into_owned();
        let _ = writeln!(out, "{:>2}. {}{}", hit.rank, t(&name), t(&label));
        let _ = writeln!(out, "    {} / {} · {} · {}", t(&hit.system_name), t(&hit.run), hit.doc_type, t(&hit.url));
        let mut snippet = String::new();
        let mut at = 0;
        for &(start, end) in &hit.highlights {
            snippet.push_str(&flat(&hit.snippet[at..start]));
            snippet.push_str(on);
            snippet.push_str(&flat(&hit.snippet[start..end]));
            snippet.push_str(off);
            at = end;
        }
        snippet.push_str(&flat(&hit.snippet[at..]));
        let snippet = snippet.split_whitespace().collect::<Vec<_>>().join(" ");
        if !snippet.is_empty() {
            let _ = writeln!(out, "    {snippet}");
        }
    }
    let shown = results.results.len();
    let _ = writeln!(out, "{} of {} result{}", shown, results.total, if results.total == 1 { "" } else { "s" });
    ExitCode::SUCCESS
}

fn schema(name: Option<crate::schema::SchemaFile>, write: Option<&std::path::Path>) -> ExitCode {
    use crate::schema::SchemaFile;
    if let Some(dir) = write {
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            SchemaFile::ALL.iter().try_for_each(|file| std::fs::write(dir.join(file.file_name()), file.text()))
        });
        return match written {
            Ok(()) => {
                println!("casebook: wrote {} schemas into {}", SchemaFile::ALL.len(), dir.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("casebook: error: cannot write the schemas into {}: {e}", dir.display());
                ExitCode::from(2)
            }
        };
    }
    match name {
        Some(file) => print!("{}", file.text()),
        None => {
            for file in SchemaFile::ALL {
                println!("{:<13} {}", file.name(), file.describes());
            }
            println!("print one: casebook schema NAME; write all: casebook schema --write DIR");
        }
    }
    ExitCode::SUCCESS
}

fn init(dir: &std::path::Path, force: bool) -> ExitCode {
    match crate::init::init(dir, force) {
        Ok(created) => {
            println!("casebook: created a site in {} ({} files)", dir.display(), created.written.len());
            if !created.kept.is_empty() {
                println!(
                    "  kept as they were: {}",
                    created.kept.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
                );
            }
            println!(
                "  read it as you write: casebook serve --root {}  (then open http://127.0.0.1:1111/)",
                dir.display()
            );
            println!("  build it:             casebook build --root {}  (into public/, for a web host)", dir.display());
            println!("  edit the theme:       casebook theme eject --root {}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("casebook: error: {e}");
            ExitCode::from(2)
        }
    }
}

/// What `build`, `check` or `verify` (`command`) is asked to do.
fn build_options(command: &Command, common: &Common) -> BuildOptions {
    let mut options = BuildOptions::new(&common.root);
    match command {
        Command::Build { output, previous_manifest, no_search_index, allow_empty, verify, sources, cache, .. } => {
            options = output.options(&common.root);
            options.cache = cache.dir(&options.output);
            options.previous_manifest = previous_manifest.clone();
            options.search_index = !no_search_index;
            options.allow_empty = *allow_empty;
            options.verify = verify.then(|| sources.options(common.strict, common.quiet));
        }
        Command::Verify { sources, .. } => options.verify = Some(sources.options(common.strict, common.quiet)),
        _ => {}
    }
    options.strict = common.strict;
    options
}

/// The commands about casebook and a site's files rather than its content (`init`,
/// `theme`, `completions`, `man`): their exit code, or none for another command.
fn about_casebook(command: &Command, version: &'static str) -> Option<ExitCode> {
    Some(match command {
        Command::Init { dir, force } => init(dir, *force),
        Command::Theme(ThemeCommand::Eject { root, force }) => eject_theme(root, *force),
        Command::Completions { shell } => {
            clap_complete::generate(*shell, &mut Cli::command(), "casebook", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        Command::Man => manual(version),
        _ => return None,
    })
}

fn eject_theme(root: &std::path::Path, force: bool) -> ExitCode {
    match crate::init::eject_theme(root, force) {
        Ok(files) => {
            let dir = root.join(crate::init::THEME_DIR);
            println!("casebook: copied the built-in theme into {} ({} files)", dir.display(), files.len());
            println!("  each file there overrides the built-in one; delete a file to use the built-in one again");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("casebook: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn manual(version: &'static str) -> ExitCode {
    let page = clap_mangen::Man::new(Cli::command().version(version));
    let mut out = std::io::stdout().lock();
    match page.render(&mut out) {
        // A pager or `head` that stops reading is no failure.
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("casebook: error: cannot write the manual page: {e}");
            ExitCode::from(2)
        }
    }
}

/// Reads one side of a diff: a manifest file, a built site folder or a site root.
fn load_manifest(path: &std::path::Path) -> Result<crate::manifest::Manifest, String> {
    let file = if path.is_dir() && path.join("records.json").is_file() {
        path.join("records.json")
    } else {
        path.to_path_buf()
    };
    if file.is_file() {
        return crate::manifest::Manifest::read(&file).map_err(|e| format!("{}: {e}", file.display()));
    }
    if path.join("content").is_dir() {
        let (manifest, diagnostics) = pipeline::manifest_of(path, None);
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        if errors > 0 {
            eprintln!("casebook: note: {} has {errors} errors in its content (`casebook check --root {}` lists them); comparing what resolves", path.display(), path.display());
        }
        return manifest.ok_or_else(|| {
            format!(
                "{}: the site configuration is unusable; run `casebook check --root {}`",
                path.display(),
                path.display()
            )
        });
    }
    Err(format!("{} is neither a records.json, a built site, nor a site root with content/", path.display()))
}

fn diff(
    old: &std::path::Path,
    new: &std::path::Path,
    format: DiffFormat,
    output: Option<&std::path::Path>,
    messages: MessageFormat,
) -> ExitCode {
    let (old, new) = match (load_manifest(old), load_manifest(new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("casebook: error: {e}");
            return ExitCode::from(2);
        }
    };
    let changes = crate::diff::diff(&old, &new);
    let text = match format {
        DiffFormat::Markdown => changes.to_markdown(),
        DiffFormat::Json => changes.to_json(),
    };
    match output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("casebook: error: cannot write {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
        // Each line as a terminal may show it: content in the report cannot drive it.
        None if messages == MessageFormat::Human => {
            for line in text.lines() {
                println!("{}", crate::model::for_terminal(line));
            }
        }
        None => {}
    }
    if messages != MessageFormat::Human {
        print_changes(&changes.messages(&old, &new), messages, output.is_some());
    }
    ExitCode::SUCCESS
}

/// `diff --message-format json|github`: each change as a diagnostic line, then (json) a
/// summary line of command `diff`.
fn print_changes(changes: &[crate::model::Diagnostic], format: MessageFormat, written: bool) {
    let mut out = std::io::stdout().lock();
    for d in changes {
        let _ = match format {
            MessageFormat::Json => writeln!(out, "{}", crate::messages::json_line(d)),
            _ => writeln!(out, "{}", crate::messages::github_command(d)),
        };
    }
    if format == MessageFormat::Json {
        let count = |severity| changes.iter().filter(|d| d.severity == severity).count();
        let line = crate::messages::SummaryLine {
            schema: crate::messages::SUMMARY_SCHEMA,
            command: "diff",
            ok: true,
            written,
            errors: 0,
            warnings: count(Severity::Warning),
            notes: count(Severity::Note),
            unlisted_unpublished_references: 0,
            counts: None,
            verification: None,
        };
        let _ = writeln!(out, "{}", serde_json::to_string(&line).expect("a summary serialises"));
    }
}

fn report(outcome: &Outcome, options: &BuildOptions, verb: &str, common: &Common) -> ExitCode {
    // `verify`, like `build`, counts references to unpublished records: `check` lists them.
    let unlisted = list_diagnostics(outcome, verb != "check", common);
    let errors = outcome.diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = outcome.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
    if common.message_format == MessageFormat::Json {
        print_summary_line(outcome, verb, errors, warnings, unlisted);
    }
    if errors > 0 {
        let kept =
            if verb == "build" { format!("; {} was left untouched", options.output.display()) } else { String::new() };
        let _ = writeln!(
            std::io::stderr(),
            "casebook: {verb} failed: {}, {}{kept}",
            plural(errors, "error"),
            plural(warnings, "warning")
        );
        return ExitCode::from(1);
    }
    let Some(summary) = &outcome.summary else {
        return ExitCode::from(1);
    };
    if common.message_format == MessageFormat::Json {
        return ExitCode::SUCCESS;
    }
    let mut out = std::io::stdout().lock();
    let headline = if outcome.written {
        format!("built {} in {:.2} s", options.output.display(), outcome.elapsed.as_secs_f64())
    } else {
        let did = if verb == "verify" { "checked and verified" } else { "checked" };
        format!("{did} {} in {:.2} s", options.root.join("content").display(), outcome.elapsed.as_secs_f64())
    };
    let _ = writeln!(out, "casebook: {headline}");
    let counts = DiagnosticCounts { errors, warnings, unlisted };
    for (name, value) in summary_rows(summary, counts, common.explain) {
        let _ = writeln!(out, "  {name:<12} {value}");
    }
    if let Some(verification) = &outcome.verification {
        for (name, value) in verification_rows(&verification.counts()) {
            let _ = writeln!(out, "  {name:<12} {value}");
        }
    }
    if common.timings {
        let _ = writeln!(out, "  stages:");
        for (stage, time) in &outcome.timings {
            let _ = writeln!(out, "    {stage:<20} {:>8.3} s", time.as_secs_f64());
        }
    }
    ExitCode::SUCCESS
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// Prints the diagnostics the options ask for; returns how many references to
/// unpublished records went unlisted.
fn list_diagnostics(outcome: &Outcome, build: bool, common: &Common) -> usize {
    let mut err = std::io::stderr().lock();
    // A build lists references to unpublished records only on request: they are
    // expected, and `check` is where one reads them.
    let listing = Listing {
        warnings: !common.quiet,
        unpublished_references: !build || common.verbose,
        notes: common.explain && !common.quiet,
    };
    let mut out = std::io::stdout().lock();
    let mut unlisted = 0;
    for d in &outcome.diagnostics {
        if listing.shows(d) {
            let _ = match common.message_format {
                MessageFormat::Human => writeln!(err, "{d}\n"),
                MessageFormat::Json => writeln!(out, "{}", crate::messages::json_line(d)),
                MessageFormat::Github => writeln!(out, "{}", crate::messages::github_command(d)),
            };
        } else if d.severity == Severity::Warning && d.code == Code::UnpublishedReference && !common.quiet {
            unlisted += 1;
        }
    }
    unlisted
}

/// What verification found, as summary rows: each verdict that occurred, counted.
fn verification_rows(counts: &crate::model::VerificationCounts) -> Vec<(&'static str, String)> {
    vec![("quotes", counts.quotes_phrase()), ("citations", counts.citations_phrase())]
}

/// The line that ends `--message-format json` output (schema `casebook.summary/1`).
fn print_summary_line(outcome: &Outcome, verb: &str, errors: usize, warnings: usize, unlisted: usize) {
    let notes = outcome.diagnostics.iter().filter(|d| d.severity == Severity::Note).count();
    let line = crate::messages::SummaryLine {
        schema: crate::messages::SUMMARY_SCHEMA,
        command: verb,
        ok: errors == 0 && outcome.summary.is_some(),
        written: outcome.written,
        errors,
        warnings,
        notes,
        unlisted_unpublished_references: unlisted,
        counts: outcome.summary.as_ref(),
        verification: outcome.verification.as_ref().map(|v| v.counts()),
    };
    let _ = writeln!(std::io::stdout().lock(), "{}", serde_json::to_string(&line).expect("a summary serialises"));
}

struct DiagnosticCounts {
    errors: usize,
    warnings: usize,
    /// Warnings not listed: references to unpublished records.
    unlisted: usize,
}

/// The most files some static hosts take for one site (Cloudflare Pages' free plan).
const HOST_FILE_CAP: usize = 20_000;

/// The summary a successful build or check prints, row by row, empty rows left out.
fn summary_rows(s: &Summary, counts: DiagnosticCounts, explain: bool) -> Vec<(&'static str, String)> {
    let explain_hint = match (s.not_understood + s.derived_titles, explain) {
        (0, _) | (_, true) => String::new(),
        _ => format!(
            "(`casebook check --explain` lists them{})",
            if s.derived_titles > 0 {
                format!(", and the {} records whose title is derived", s.derived_titles)
            } else {
                String::new()
            }
        ),
    };
    let unlisted_hint = if counts.unlisted > 0 {
        format!("({} of them: references to unpublished records; `casebook check` lists them)", counts.unlisted)
    } else {
        String::new()
    };
    let files_hint = if s.files <= HOST_FILE_CAP {
        String::new()
    } else if s.record_pages == crate::model::RecordPages::Separate {
        format!(
            "(over {HOST_FILE_CAP}, where some hosts cap a site: `record_pages: per-run` in casebook.yaml puts each run's records on one page, {} fewer files)",
            s.records + s.unpublished - s.runs
        )
    } else {
        let mut next = Vec::new();
        if s.status_pages == crate::model::StatusPages::Separate {
            next.push("`status_pages: per-system`");
        }
        if s.search_files == crate::model::SearchFiles::default() {
            next.push("`search: {documents_per_file: 256, term_file_kib: 96}`");
        }
        if next.is_empty() {
            String::new()
        } else {
            format!(
                "(over {HOST_FILE_CAP}, where some hosts cap a site: {} in casebook.yaml make fewer files; docs/format.md says how)",
                next.join(" and ")
            )
        }
    };
    let rows = [
        ("systems", s.systems.to_string()),
        ("runs", s.runs.to_string()),
        ("reports", s.reports.to_string()),
        ("records", format!("{} published, {} referenced but unpublished", s.records, s.unpublished)),
        ("references", format!("{} resolved, {} to unpublished records", s.references_resolved, s.references_dangling)),
        (
            "recognised",
            format!(
                "{}, {}, {}, {}, {}; not understood: {}",
                plural(s.records, "record"),
                plural(s.findings, "finding"),
                plural(s.limits, "limit"),
                plural(s.citations, "citation"),
                plural(s.quotes, "quote"),
                plural(s.not_understood, "place")
            ),
        ),
        ("", explain_hint),
        ("pages", format!("{} ({})", s.pages, plural(s.files, "file"))),
        ("", files_hint),
        ("diagnostics", format!("{}, {}", plural(counts.errors, "error"), plural(counts.warnings, "warning"))),
        ("", unlisted_hint),
    ];
    rows.into_iter().filter(|(_, value)| !value.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(summary: &Summary) -> Vec<(&'static str, String)> {
        summary_rows(summary, DiagnosticCounts { errors: 0, warnings: 0, unlisted: 0 }, false)
    }

    #[test]
    fn a_site_past_a_hosts_file_cap_is_told_how_to_stay_under_it() {
        let mut summary = Summary { runs: 10, records: 19_500, unpublished: 600, files: 20_500, ..Summary::default() };
        let hint = rows_of(&summary).into_iter().find(|(_, v)| v.contains("record_pages: per-run")).map(|(_, v)| v);
        assert_eq!(
            hint.as_deref(),
            Some(
                "(over 20000, where some hosts cap a site: `record_pages: per-run` in casebook.yaml puts each \
                 run's records on one page, 20090 fewer files)"
            )
        );
        summary.record_pages = crate::model::RecordPages::PerRun;
        assert!(!rows_of(&summary).iter().any(|(_, v)| v.contains("record_pages")), "already on pages per run");
        let hint = |summary: &Summary| rows_of(summary).into_iter().map(|(_, v)| v).find(|v| v.contains("over 20000"));
        assert_eq!(
            hint(&summary).as_deref(),
            Some(
                "(over 20000, where some hosts cap a site: `status_pages: per-system` and `search: \
                 {documents_per_file: 256, term_file_kib: 96}` in casebook.yaml make fewer files; docs/format.md says how)"
            ),
            "on pages per run, the status pages and the search index's files are next"
        );
        summary.status_pages = crate::model::StatusPages::PerSystem;
        assert!(!hint(&summary).unwrap().contains("status_pages"), "the status pages already on one page per system");
        summary.search_files.documents_per_file = 256;
        assert_eq!(hint(&summary), None, "every way to fewer files taken");
        summary.search_files = Default::default();
        summary.files = 20_000;
        assert_eq!(hint(&summary), None, "at the cap, not over it");
        summary.record_pages = crate::model::RecordPages::Separate;
        summary.files = 20_000;
        assert!(!rows_of(&summary).iter().any(|(_, v)| v.contains("record_pages")), "at the cap, not over it");
    }
}
