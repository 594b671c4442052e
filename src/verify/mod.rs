//! The verify stage: each quote and citation read against its source at the run's frozen
//! revision (or the source's own). A quote is found at its cited lines, found elsewhere,
//! or not found (with the passage most like it); a citation's path exists, is of the kind
//! cited, and holds the cited lines. A source whose repository is not on this machine is
//! "not verified", never an error by itself.
//!
//! Runs are verified in parallel; within a run each file is read once per source,
//! however many quotes and citations name it.

pub mod matching;
pub mod repository;

use std::collections::HashMap;

use rayon::prelude::*;

use crate::progress::Watch;

use crate::model::{
    CitationVerdict, Code, Diagnostic, LineRange, Location, QuoteVerdict, Report, Run, RunVerification, Severity, Site,
    System, Verification,
};
use matching::{Found, Matching, Searchable};
use repository::{AtRevision, Entry, RepositoryError, SourceRepositories};

/// What verification reads, and how strictly.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// Where the sources' repositories are.
    pub repositories: SourceRepositories,
    /// How quotes are compared.
    pub matching: Matching,
    /// A quote not found is an error, not a warning.
    pub strict: bool,
    /// Fetch the repositories not on this machine into `repositories.cache` (`--fetch`).
    pub fetch: bool,
    /// Say on stderr which repository is being fetched.
    pub tell_fetches: bool,
}

/// Every run of `site`, verified.
pub fn verify(site: &Site, options: &VerifyOptions, watch: &dyn Watch) -> (Verification, Vec<Diagnostic>) {
    let runs: Vec<_> = site.systems.iter().flat_map(|s| s.runs.iter().map(move |r| (s, r))).collect();
    let mut diagnostics = Vec::new();
    if options.fetch {
        watch.stage("fetching", 0);
        fetch_missing(&runs, options, &mut diagnostics);
    }
    watch.stage("verifying", runs.len());
    let verified: Vec<_> = runs
        .par_iter()
        .map(|(_, run)| {
            let verified = verify_run(run, options);
            watch.advance(1);
            verified
        })
        .collect();
    let first_run = runs.first().map(|(_, run)| run.file.clone());
    let mut verification = Verification::default();
    for ((system, run), (run_verification, found)) in runs.into_iter().zip(verified) {
        verification.runs.insert((system.slug.clone(), run.slug.clone()), run_verification);
        diagnostics.extend(found);
    }
    diagnostics.extend(unknown_source_keys(site, options, first_run.as_deref()));
    diagnostics.extend(nothing_verified(&verification.counts(), options, first_run.as_deref()));
    (verification, diagnostics)
}

/// A `--source KEY=PATH` whose key is no source of any run (`SRC1` for `SRC-1`): an
/// error, since every quote of the source it meant would go unverified without a word.
fn unknown_source_keys(site: &Site, options: &VerifyOptions, file: Option<&std::path::Path>) -> Vec<Diagnostic> {
    let sources: std::collections::BTreeSet<&str> = site
        .systems
        .iter()
        .flat_map(|s| &s.runs)
        .flat_map(|r| &r.sources)
        .flat_map(|s| std::iter::once(s.id.as_str()).chain(s.repository.as_ref().map(|u| u.as_str())))
        .collect();
    let known = |key: &str| {
        let key = key.trim_end_matches('/').trim_end_matches(".git");
        sources.iter().any(|s| s.trim_end_matches('/').trim_end_matches(".git") == key)
    };
    let Some(file) = file else { return Vec::new() };
    options
        .repositories
        .given
        .iter()
        .filter(|(key, _)| !known(key))
        .map(|(key, _)| {
            let nearest = sources.iter().min_by_key(|s| strsim::levenshtein(s, key)).copied();
            let help = match nearest {
                Some(near) => format!("did you mean `--source {near}=…`? The sources are those of the runs' run.yaml"),
                None => "no run registers a source: add `sources` to run.yaml".to_string(),
            };
            Diagnostic::error(
                Code::UnknownSource,
                Location::file(file),
                format!("`--source {key}=…` names no source of any run, so it verifies nothing"),
            )
            .with_help(help)
        })
        .collect()
}

/// A verification that read no source at all: said, since "0 of 12 verified" reads like
/// a result. A warning, and an error with `--strict`.
fn nothing_verified(
    counts: &crate::model::VerificationCounts,
    options: &VerifyOptions,
    file: Option<&std::path::Path>,
) -> Option<Diagnostic> {
    let unread = counts.quotes_not_verified + counts.citations_not_verified;
    let read = counts.quotes() - counts.quotes_not_verified
        + counts.citations_verified
        + counts.citations_missing_path
        + counts.citations_past_end
        + counts.citations_wrong_kind;
    if unread == 0 || read > 0 {
        return None;
    }
    let message = format!("nothing was verified: no source of the {unread} quotes and citations could be read");
    let location = Location::file(file?);
    let diagnostic = if options.strict {
        Diagnostic::error(Code::NothingVerified, location, message)
    } else {
        Diagnostic::warning(Code::NothingVerified, location, message)
    };
    Some(diagnostic.with_help(
        "give each source its `repository:` in run.yaml and a clone of it (`--source SRC-1=PATH`, `sources_dir`), or `--fetch` it",
    ))
}

/// `--fetch`: each repository that sources name but this machine lacks is cloned into the
/// cache, once, before the runs are verified in parallel (two runs of one system share
/// it). A repository that cannot be fetched is a warning at the first run naming it.
fn fetch_missing(runs: &[(&System, &std::sync::Arc<Run>)], options: &VerifyOptions, diagnostics: &mut Vec<Diagnostic>) {
    let mut wanted: std::collections::BTreeMap<(String, String), &Run> = std::collections::BTreeMap::new();
    for (_, run) in runs {
        for source in &run.sources {
            let Some(url) = &source.repository else { continue };
            // A clone in the cache is fetched again if it lacks the revision; one given
            // or in the folder of clones is used as it is.
            let found = options.repositories.path_for(source);
            if found.is_some() && found != options.repositories.cache_path(url.as_str()) {
                continue;
            }
            let revision = source.revision.as_ref().unwrap_or(&run.revision).to_string();
            wanted.entry((url.as_str().to_string(), revision)).or_insert(run);
        }
    }
    for ((url, revision), run) in wanted {
        let Some(into) = options.repositories.cache_path(&url) else { continue };
        if options.tell_fetches && !into.is_dir() {
            eprintln!("casebook: fetching {url} into {}", into.display());
        }
        if let Err(e) = repository::fetch(&url, &revision, &into) {
            diagnostics.push(
                Diagnostic::warning(Code::FetchFailed, Location::file(&run.file), e)
                    .with_help("its quotes and citations are not verified; check the URL and the network"),
            );
        }
    }
}

/// A source of a run, as verification can read it: at its revision, or why not.
type Opened = Result<AtRevision, String>;

/// One run's verdicts.
fn verify_run(run: &Run, options: &VerifyOptions) -> (RunVerification, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut verification = RunVerification::default();
    let sources: HashMap<&str, Opened> =
        run.sources.iter().map(|s| (s.id.as_str(), open_source(run, s, options, &mut diagnostics))).collect();
    for (id, opened) in &sources {
        if let Ok(at) = opened {
            verification.revisions.insert(id.to_string(), at.commit.clone());
        }
    }
    let mut files = Files { run, sources: &sources, read: HashMap::new() };
    for report in &run.reports {
        let quotes = report.quotes.iter().map(|q| verify_quote(q, report, &mut files, options, &mut diagnostics));
        verification.quotes.push(quotes.collect());
        let citations = report.citations.iter().map(|c| verify_citation(c, report, &mut files, &mut diagnostics));
        verification.citations.push(citations.collect());
    }
    (verification, diagnostics)
}

/// A run's source at its revision, or why it is not verified. A repository that is given
/// but cannot be read, or lacks the revision, is an error at the run's `run.yaml`.
fn open_source(
    run: &Run,
    source: &crate::model::Source,
    options: &VerifyOptions,
    diagnostics: &mut Vec<Diagnostic>,
) -> Opened {
    let Some(path) = options.repositories.path_for(source) else {
        return Err(match &source.repository {
            Some(_) => format!("no clone of {}'s repository on this machine", source.id),
            None => format!("{} has no repository", source.id),
        });
    };
    let revision = source.revision.as_ref().unwrap_or(&run.revision);
    AtRevision::open(&path, revision.as_str()).map_err(|e| {
        let (code, help) = match &e {
            RepositoryError::Open { .. } => (Code::BadRepository, "give the folder of a clone (`--source SRC-n=PATH`)"),
            RepositoryError::Revision { .. } => {
                (Code::UnknownRevision, "fetch the revision into the clone, or correct the run's `revision`")
            }
        };
        diagnostics
            .push(Diagnostic::error(code, Location::file(&run.file), format!("{}: {e}", source.id)).with_help(help));
        e.to_string()
    })
}

/// The files of a run's sources, each read once.
struct Files<'a> {
    run: &'a Run,
    sources: &'a HashMap<&'a str, Opened>,
    read: HashMap<(String, String), Entry>,
}

impl Files<'_> {
    /// The short commit `source` (else the run's default source) was read at: its own
    /// revision, or the run's.
    fn commit_of(&self, source: Option<&str>) -> String {
        match source.or(self.run.default_source.as_deref()).and_then(|s| self.sources.get(s)) {
            Some(Ok(at)) => at.commit.get(..7).unwrap_or(&at.commit).to_string(),
            _ => self.run.revision.short().to_string(),
        }
    }

    /// The source a quote or citation reads (named, else the run's default), its ID, and
    /// what is at `path` of it; or why it is not verified.
    fn entry(&mut self, source: Option<&str>, path: &str) -> Result<(String, &Entry), String> {
        let Some(id) = source.or(self.run.default_source.as_deref()) else {
            return Err("the run has no source register".to_string());
        };
        let opened = self.sources.get(id).ok_or_else(|| format!("{id} is not in the register"))?;
        let at = opened.as_ref().map_err(Clone::clone)?;
        let full = self.run.source(id).map_or_else(|| path.to_string(), |s| s.repository_path(path));
        let in_folder = (id.to_string(), full.clone());
        let missing = matches!(self.read.entry(in_folder.clone()).or_insert_with(|| at.entry(&full)), Entry::Missing);
        // A source that is a folder of its repository (`src/pkg`) is often cited with
        // paths from the repository's root (`src/pkg/a.py`): read so when only that is there.
        if missing && full != path {
            let from_root = (id.to_string(), path.to_string());
            let found = self.read.entry(from_root.clone()).or_insert_with(|| at.entry(path));
            if !matches!(found, Entry::Missing) {
                return Ok((id.to_string(), &self.read[&from_root]));
            }
        }
        // A path that names no source (a quote's, a citation's), of a file that is not in
        // the default source, is often in the folder another source is (`SRC-2`,
        // `libs/langgraph`: "paths below are relative to it"). Read so when exactly one
        // such source has the file.
        if missing && source.is_none() {
            if let Some(found) = self.in_one_folder_source(id, path) {
                return Ok((found.0.clone(), &self.read[&found]));
            }
        }
        Ok((id.to_string(), &self.read[&in_folder]))
    }

    /// The one source other than `default` that is a folder of a repository holding
    /// `path`, and the key of what is there; none when no source or several do.
    fn in_one_folder_source(&mut self, default: &str, path: &str) -> Option<(String, String)> {
        let mut holding = Vec::new();
        for other in self.run.sources.iter().filter(|s| s.id != default && s.path.is_some()) {
            let Some(Ok(at)) = self.sources.get(other.id.as_str()) else { continue };
            let full = other.repository_path(path);
            let key = (other.id.clone(), full.clone());
            if matches!(self.read.entry(key.clone()).or_insert_with(|| at.entry(&full)), Entry::File(_)) {
                holding.push(key);
            }
        }
        (holding.len() == 1).then(|| holding.remove(0))
    }
}

fn verify_quote(
    quote: &crate::model::Quote,
    report: &Report,
    files: &mut Files<'_>,
    options: &VerifyOptions,
    diagnostics: &mut Vec<Diagnostic>,
) -> QuoteVerdict {
    let revision = files.commit_of(quote.source.as_deref());
    let (source, entry) = match files.entry(quote.source.as_deref(), &quote.path) {
        Ok(found) => found,
        Err(why) => return QuoteVerdict::NotVerified { why },
    };
    let named = format!("{source} {}", quote.path);
    let bytes = match entry {
        Entry::File(bytes) => bytes,
        Entry::Folder | Entry::Missing => {
            diagnostics.push(
                Diagnostic::warning(
                    Code::MissingPath,
                    report.location(quote.location),
                    format!("{named} is not a file at {revision}, so this quote cannot be in it"),
                )
                .with_help("correct the path on the quote's `---` line"),
            );
            return QuoteVerdict::MissingFile;
        }
    };
    let text = String::from_utf8_lossy(bytes);
    let file = Searchable::new(&text);
    match file.find(&quote.code, options.matching) {
        Found::At(places) => {
            if quote.lines.is_empty() {
                return QuoteVerdict::Verified { lines: places[0] };
            }
            if let Some(at) = places.iter().find(|p| matching::at_cited(**p, &quote.lines)) {
                return QuoteVerdict::Verified { lines: *at };
            }
            let cited: Vec<String> = quote.lines.iter().map(ToString::to_string).collect();
            diagnostics.push(
                Diagnostic::warning(
                    Code::QuoteElsewhere,
                    report.location(quote.location),
                    format!("this quote is at {} of {named}, not at the cited {}", places[0].words(), cited.join(", ")),
                )
                .with_help(format!("cite {}:{}", quote.path, places[0])),
            );
            QuoteVerdict::Elsewhere { lines: places[0] }
        }
        Found::Nowhere(closest) => {
            let severity = if options.strict { Severity::Error } else { Severity::Warning };
            let help = match closest {
                Some((lines, alike)) => format!(
                    "the passage most like it is at {} ({}% alike); quote (-) against file (+):\n{}",
                    lines.words(),
                    alike / 10,
                    short_diff(&quote.code, &file.text_of(lines))
                ),
                None => "no passage of the file shares a word with it".to_string(),
            };
            let line = report.line_text(quote.location.line);
            diagnostics.push(
                Diagnostic::new(
                    severity,
                    Code::QuoteNotFound,
                    report.location(quote.location),
                    format!("this quote is not in {named} at {revision}"),
                )
                .with_source(line, line.chars().count())
                .with_help(help),
            );
            QuoteVerdict::NotFound { closest: closest.map(|(l, _)| l), alike: closest.map_or(0, |(_, a)| a) }
        }
    }
}

/// The quote's lines against the passage's, line by line (spacing ignored): the lines
/// alike once, the others as `-` (the quote's) and `+` (the file's); at most 12 lines.
fn short_diff(quote: &str, passage: &str) -> String {
    let (quote, passage): (Vec<&str>, Vec<&str>) =
        (quote.lines().filter(|l| !l.trim().is_empty()).collect(), passage.lines().collect());
    let same = |a: &str, b: &str| a.split_whitespace().eq(b.split_whitespace());
    let mut out = Vec::new();
    for i in 0..quote.len().max(passage.len()) {
        match (quote.get(i), passage.get(i)) {
            (Some(q), Some(p)) if same(q, p) => out.push(format!("        {}", p.trim())),
            (q, p) => {
                out.extend(q.map(|q| format!("      - {}", q.trim())));
                out.extend(p.map(|p| format!("      + {}", p.trim())));
            }
        }
    }
    if out.len() > 12 {
        out.truncate(12);
        out.push("      …".to_string());
    }
    out.join("\n")
}

fn verify_citation(
    citation: &crate::model::Citation,
    report: &Report,
    files: &mut Files<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> CitationVerdict {
    let Some(path) = &citation.path else {
        return match (&citation.section, files.entry(citation.source.as_deref(), "")) {
            (Some(_), _) => CitationVerdict::NotVerified { why: "a section of a document is not checked".into() },
            (None, _) => CitationVerdict::WholeSource,
        };
    };
    let folder = path.ends_with('/') || path.contains('*');
    let looked_up = if path.contains('*') { path[..path.find('*').unwrap_or(0)].to_string() } else { path.to_string() };
    let revision = files.commit_of(citation.source.as_deref());
    let (source, entry) = match files.entry(citation.source.as_deref(), &looked_up) {
        Ok(found) => found,
        Err(why) => return CitationVerdict::NotVerified { why },
    };
    let line = report.line_text(citation.location.line);
    let at = |code, message: String| {
        Diagnostic::warning(code, report.location(citation.location), message).with_source(line, path.chars().count())
    };
    let last_line = citation.lines.iter().map(|l: &LineRange| l.end).max();
    match entry {
        Entry::Missing => {
            diagnostics.push(
                at(Code::MissingPath, format!("{source} has no {path} at {revision}"))
                    .with_help("correct the path, or the source it is cited from"),
            );
            CitationVerdict::MissingPath
        }
        Entry::Folder if !folder || last_line.is_some() => {
            diagnostics.push(at(Code::WrongPathKind, format!("{path} is a folder of {source}, cited as a file")));
            CitationVerdict::WrongKind
        }
        Entry::File(_) if folder => {
            diagnostics.push(at(Code::WrongPathKind, format!("{path} is a file of {source}, cited as a folder")));
            CitationVerdict::WrongKind
        }
        Entry::File(bytes) => {
            let file_lines = String::from_utf8_lossy(bytes).lines().count() as u32;
            match last_line {
                Some(end) if end > file_lines => {
                    diagnostics.push(
                        at(
                            Code::LinesPastEnd,
                            format!("line {end} of {path} is cited, but the file has {file_lines} lines at {revision}"),
                        )
                        .with_help("correct the line numbers, or the revision the run is frozen at"),
                    );
                    CitationVerdict::PastEnd { file_lines }
                }
                _ => CitationVerdict::Verified,
            }
        }
        Entry::Folder => CitationVerdict::Verified,
    }
}
