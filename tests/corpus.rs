//! The corpus of analyses written blind (`tests/corpus/<case>/`): each by an author who
//! never saw casebook's docs or code, told only the domain (tests/corpus/BRIEF.md), in a
//! house style of their own, about a real public repository read at a pinned revision;
//! each with the author's answer key (`key.yaml`) and the files it cites (`files/`).
//!
//! Each case is published as a user would: the reports as written, in a run whose
//! `run.yaml` gives the revision, the source register and the unpublished companion IDs of
//! the key, verified against a git repository this test makes of `files/`. What the site
//! publishes is measured against the key: records, labels, statuses, citations, quotes,
//! quote verdicts, limits and references, and the misses that `check --explain` does not
//! list. The table is a reviewed snapshot (docs/fidelity.md keeps it with its reading).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use casebook::model::{Diagnostic, Owner, Publication, QuoteVerdict, RecordId, Report, Run, Severity, Subject};
use casebook::pipeline::{self, BuildOptions};
use casebook::verify::repository::SourceRepositories;
use casebook::verify::VerifyOptions;
use common::repo;
use serde::Deserialize;

#[derive(Deserialize)]
struct Key {
    system: String,
    repository: String,
    revision: String,
    sources: Vec<KeySource>,
    records: Vec<KeyRecord>,
    #[serde(default)]
    citations: Vec<KeyCitation>,
    #[serde(default)]
    quotes: Vec<KeyQuote>,
    #[serde(default)]
    limits: Vec<KeyLimit>,
    #[serde(default)]
    references: Vec<KeyReference>,
    #[serde(default)]
    unpublished: Vec<String>,
}

#[derive(Deserialize)]
struct KeySource {
    id: String,
    title: String,
    repository: Option<String>,
    url: Option<String>,
    path: Option<String>,
}

#[derive(Deserialize)]
struct KeyRecord {
    id: String,
    label: Option<String>,
    #[serde(default)]
    statuses: Vec<KeyStatus>,
}

#[derive(Deserialize)]
struct KeyStatus {
    #[serde(default)]
    dimension: String,
    status: String,
}

#[derive(Deserialize)]
struct KeyCitation {
    #[serde(default, rename = "in")]
    within: String,
    #[serde(default)]
    source: String,
    path: Option<String>,
    section: Option<String>,
    lines: Option<Vec<u32>>,
    #[serde(default)]
    written: String,
}

#[derive(Deserialize)]
struct KeyQuote {
    #[serde(default, rename = "in")]
    within: String,
    path: String,
    lines: Option<Vec<u32>>,
    verdict: String,
}

#[derive(Deserialize)]
struct KeyLimit {
    #[serde(default)]
    handle: String,
    text: String,
}

#[derive(Deserialize)]
struct KeyReference {
    from: String,
    to: String,
}

/// Found of all, for one measure.
#[derive(Default, Clone, Copy)]
struct Score {
    found: usize,
    all: usize,
}

impl Score {
    fn count(&mut self, found: bool) {
        self.all += 1;
        self.found += usize::from(found);
    }

    fn add(&mut self, other: Score) {
        self.found += other.found;
        self.all += other.all;
    }

    fn cell(self) -> String {
        format!("{}/{}", self.found, self.all)
    }
}

#[derive(Default)]
struct Measures {
    errors: usize,
    records: Score,
    labels: Score,
    statuses: Score,
    citations: Score,
    quotes: Score,
    verdicts: Score,
    limits: Score,
    references: Score,
    /// Items not published whose place `check --explain` does not list.
    unlisted: usize,
    /// What was missed, for reading (not in the snapshot).
    missed: Vec<String>,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_AUTHOR_NAME", "corpus")
        .env("GIT_AUTHOR_EMAIL", "corpus@example.org")
        .env("GIT_COMMITTER_NAME", "corpus")
        .env("GIT_COMMITTER_EMAIL", "corpus@example.org")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// The repository of the cited files, committed: its commit stands for the key's revision.
fn source_repository(case: &Path, dir: &Path) -> String {
    common::copy_tree(&case.join("files"), dir);
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "the cited files at the analysed revision"]);
    git(dir, &["rev-parse", "HEAD"])
}

fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// The site a user would make of the case: its reports as written, and a `run.yaml` of
/// the key's revision (the test repository's commit), register and unpublished IDs.
fn make_site(case: &Path, key: &Key, root: &Path, commit: &str) {
    let run_dir = root.join("content").join("subject").join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::write(root.join("content/subject/system.yaml"), format!("name: {}\n", yaml_string(&key.system))).unwrap();
    if case.join("casebook.yaml").is_file() {
        std::fs::copy(case.join("casebook.yaml"), root.join("content/casebook.yaml")).unwrap();
    }
    let mut run = format!("revision: {commit}\nsources:\n");
    for s in &key.sources {
        writeln!(run, "  - id: {}\n    title: {}", s.id, yaml_string(&s.title)).unwrap();
        if let Some(url) = s.repository.as_ref().or(s.url.as_ref()) {
            writeln!(run, "    repository: {}", yaml_string(url)).unwrap();
        }
        if let Some(path) = &s.path {
            writeln!(run, "    path: {}", yaml_string(path.trim_end_matches('/'))).unwrap();
        }
    }
    let prefixes: BTreeSet<&str> = key.unpublished.iter().filter_map(|id| id.split_once('-').map(|p| p.0)).collect();
    if !prefixes.is_empty() {
        let ids: Vec<String> = prefixes.iter().map(|p| yaml_string(&format!("{p}-*"))).collect();
        writeln!(run, "unpublished:\n  - name: companion evidence packet\n    ids: [{}]", ids.join(", ")).unwrap();
    }
    std::fs::write(run_dir.join("run.yaml"), run).unwrap();
    for entry in std::fs::read_dir(case.join("analysis")).unwrap() {
        let path = entry.unwrap().path();
        // Permalinks pinned to the analysed revision point at the test repository's commit.
        let text = std::fs::read_to_string(&path).unwrap().replace(&key.revision, commit);
        std::fs::write(run_dir.join(path.file_name().unwrap()), text).unwrap();
    }
}

/// Lower case, without the Markdown and punctuation around it.
fn plain(text: &str) -> String {
    let text: String = text.chars().filter(|c| !matches!(c, '*' | '`' | '_')).collect();
    text.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// True when two repository paths name the same file, one perhaps relative to a source's
/// folder.
fn same_path(cited: &str, key: &str) -> bool {
    let (cited, key) = (cited.trim_start_matches("./"), key.trim_start_matches("./"));
    cited == key || key.ends_with(&format!("/{cited}")) || cited.ends_with(&format!("/{key}"))
}

fn same_lines(written: &[casebook::model::LineRange], key: &Option<Vec<u32>>) -> bool {
    match key.as_deref() {
        None | Some([]) => written.is_empty(),
        Some([start]) => written.first().is_some_and(|r| r.start == *start && r.end == *start),
        Some([start, end, ..]) => written.first().is_some_and(|r| r.start == *start && r.end == *end),
    }
}

/// The ID of the record an item belongs to.
fn owner_id(report: &Report, owner: Option<Owner>) -> String {
    match owner {
        Some(Owner::Declaration(i)) => report.declarations[i as usize].id.as_str().to_string(),
        Some(Owner::Annotation(i)) => report.annotations[i as usize].target.as_str().to_string(),
        None => String::new(),
    }
}

/// Where the not-understood notes are: report file name → lines.
fn noted_lines(diagnostics: &[Diagnostic]) -> BTreeMap<String, BTreeSet<u32>> {
    let mut noted: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for d in diagnostics.iter().filter(|d| d.is_not_understood() || d.severity != Severity::Note) {
        let name = d.location.file.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        noted.entry(name).or_default().insert(d.location.line);
    }
    noted
}

/// True when some line of the run's reports that holds every one of `needles` (case
/// aside) has a note within `reach` lines of it. With no such line, it is not listed.
fn listed(run: &Run, noted: &BTreeMap<String, BTreeSet<u32>>, needles: &[&str], reach: u32) -> bool {
    let needles: Vec<String> = needles.iter().filter(|n| !n.is_empty()).map(|n| n.to_lowercase()).collect();
    if needles.is_empty() {
        return false;
    }
    for report in &run.reports {
        let name = report.file.file_name().unwrap().to_string_lossy().to_string();
        let Some(lines) = noted.get(&name) else { continue };
        for (i, line) in report.markdown.lines().enumerate() {
            let lower = line.to_lowercase();
            if needles.iter().all(|n| lower.contains(n.as_str())) {
                let at = report.body_line + i as u32;
                if lines.range(at.saturating_sub(reach)..=at + reach).next().is_some() {
                    return true;
                }
            }
        }
    }
    false
}

fn measure(case: &Path) -> Measures {
    let key: Key = serde_yaml::from_str(&std::fs::read_to_string(case.join("key.yaml")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sources = dir.path().join("source");
    let commit = source_repository(case, &sources);
    let root = dir.path().join("site");
    make_site(case, &key, &root, &commit);

    let mut options = BuildOptions::new(&root);
    options.output = dir.path().join("public");
    options.search_index = false;
    options.cache = None;
    options.verify = Some(VerifyOptions {
        repositories: SourceRepositories { given: vec![(key.repository.clone(), sources)], dir: None, cache: None },
        matching: Default::default(),
        strict: false,
        fetch: false,
        tell_fetches: false,
    });
    let outcome = pipeline::build(&options).expect("the corpus site builds");
    let (resolved, diagnostics) = pipeline::resolved_site(&root);
    let (site, _) = resolved.expect("the configuration reads");
    let run = &site.systems[0].runs[0];
    let verification = outcome.verification.as_ref().and_then(|v| v.runs.values().next());
    let noted = noted_lines(&diagnostics);

    let mut m = Measures { errors: outcome.diagnostics.iter().filter(|d| d.is_error()).count(), ..Measures::default() };
    m.missed.extend(outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| format!("error: {d}")));
    let miss = |m: &mut Measures, what: String, needles: &[&str], reach: u32| {
        let is_listed = listed(run, &noted, needles, reach);
        m.unlisted += usize::from(!is_listed);
        m.missed.push(format!("{}{what}", if is_listed { "(listed) " } else { "" }));
    };

    for record in &key.records {
        let published =
            run.records.get(&RecordId::new(&record.id)).filter(|r| matches!(r.publication, Publication::Published));
        m.records.count(published.is_some());
        if published.is_none() {
            miss(&mut m, format!("record {}", record.id), &[&record.id], 1);
        }
        if let Some(label) = &record.label {
            let got = published.and_then(|r| r.label.as_deref()).map(plain);
            m.labels.count(got.as_deref() == Some(plain(label).as_str()));
            if got.as_deref() != Some(plain(label).as_str()) {
                m.missed.push(format!("label of {}: {:?}, not {label:?}", record.id, got));
            }
        }
        for status in &record.statuses {
            let found = run.reports.iter().flat_map(|r| &r.findings).any(|f| {
                matches!(&f.subject, Subject::Record(id) if id.as_str() == record.id)
                    && *f.status == *status.status
                    && plain(&f.dimension) == plain(&status.dimension)
            });
            m.statuses.count(found);
            if !found {
                let what = format!("status {} {:?}: {}", record.id, status.dimension, status.status);
                miss(&mut m, what, &[&status.dimension, &status.status], 0);
            }
        }
    }

    for citation in &key.citations {
        let found = run.reports.iter().any(|report| {
            report.citations.iter().any(|c| {
                (citation.within.is_empty() || owner_id(report, c.owner) == citation.within)
                    && match (&citation.path, &citation.section) {
                        (Some(path), _) => {
                            // `SRC-3, ll. 3–9` cites the source's own document.
                            let source = c.source.as_deref().and_then(|s| run.source(s));
                            let document = source.filter(|s| s.is_document()).and_then(|s| s.path.as_deref());
                            c.path.as_deref().or(document).is_some_and(|p| same_path(p, path))
                                && same_lines(&c.lines, &citation.lines)
                        }
                        (None, Some(section)) => c.section.as_deref().is_some_and(|s| plain(s) == plain(section)),
                        // A source cited whole: `[SRC-1]`.
                        (None, None) => {
                            c.source.as_deref() == Some(citation.source.as_str())
                                && c.path.is_none()
                                && c.section.is_none()
                        }
                    }
            })
        });
        m.citations.count(found);
        if !found {
            miss(&mut m, format!("citation in {}: {}", citation.within, citation.written), &[&citation.written], 0);
        }
    }

    for quote in &key.quotes {
        let found = run.reports.iter().enumerate().find_map(|(r, report)| {
            report.quotes.iter().enumerate().find_map(|(q, written)| {
                (owner_id(report, written.owner) == quote.within
                    && same_path(&written.path, &quote.path)
                    && same_lines(&written.lines, &quote.lines))
                .then_some((r, q))
            })
        });
        m.quotes.count(found.is_some());
        let verdict = found.and_then(|(r, q)| verification.map(|v| &v.quotes[r][q]));
        let right = matches!(
            (verdict, quote.verdict.as_str()),
            (Some(QuoteVerdict::Verified { .. }), "at-lines")
                | (Some(QuoteVerdict::Elsewhere { .. }), "elsewhere")
                | (Some(QuoteVerdict::NotFound { .. } | QuoteVerdict::MissingFile), "not-found")
        );
        m.verdicts.count(right);
        let file = quote.path.rsplit('/').next().unwrap_or(&quote.path);
        if found.is_none() {
            miss(&mut m, format!("quote in {}: {} {:?}", quote.within, quote.path, quote.lines), &[file], 3);
        } else if !right {
            m.missed.push(format!("verdict of the quote in {}: {verdict:?}, not {}", quote.within, quote.verdict));
        }
    }

    let limits: Vec<_> = run.reports.iter().flat_map(|r| &r.limits).collect();
    for limit in &key.limits {
        let start: String = plain(&limit.text).chars().take(40).collect();
        let found = limits.iter().any(|l| {
            (l.handle_given && !limit.handle.is_empty() && l.handle == limit.handle)
                || plain(&l.text).contains(start.as_str())
        });
        m.limits.count(found);
        if !found {
            let words: String = limit.text.chars().take(24).collect();
            miss(&mut m, format!("limit {} {words}…", limit.handle), &[&words], 1);
        }
    }

    let pairs: BTreeSet<(&str, &str)> = key.references.iter().map(|r| (r.from.as_str(), r.to.as_str())).collect();
    for (from, to) in pairs {
        let found =
            run.records.get(&RecordId::new(from)).is_some_and(|r| r.references.iter().any(|id| id.as_str() == to));
        m.references.count(found);
        if !found {
            m.missed.push(format!("reference {from} → {to}"));
        }
    }
    // `CORPUS_KEEP=1` keeps each case's site to read with `casebook check --explain`.
    if std::env::var_os("CORPUS_KEEP").is_some() {
        eprintln!("{}: kept in {}", case.display(), dir.keep().display());
    }
    m
}

fn percent(score: Score) -> String {
    if score.all == 0 {
        return "—".into();
    }
    format!("{:.0}%", 100.0 * score.found as f64 / score.all as f64)
}

#[test]
#[ignore = "slow tier: `bash .ci/test` runs it (cargo test -- --include-ignored)"]
fn the_blind_corpus_is_measured_against_its_keys() {
    let corpus = repo().join("tests/corpus");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("key.yaml").is_file())
        .collect();
    cases.sort();
    assert!(cases.len() >= 8, "the corpus holds at least 8 analyses");
    // `CORPUS_ONLY=a,b` measures those cases alone, to print their table while working on
    // them; the snapshot is of the whole corpus, so it is not compared then.
    let only = std::env::var("CORPUS_ONLY").ok();
    if let Some(only) = &only {
        let names: Vec<&str> = only.split(',').map(str::trim).collect();
        cases.retain(|c| names.contains(&c.file_name().unwrap().to_string_lossy().as_ref()));
    }

    let mut table = String::from(
        "| analysis | errors | records | labels | statuses | citations | quotes | quote verdicts | limits | references | unlisted misses |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut total = Measures::default();
    for case in &cases {
        let m = measure(case);
        let name = case.file_name().unwrap().to_string_lossy();
        let cells = [m.records, m.labels, m.statuses, m.citations, m.quotes, m.verdicts, m.limits, m.references];
        writeln!(table, "| {name} | {} | {} | {} |", m.errors, cells.map(Score::cell).join(" | "), m.unlisted).unwrap();
        eprintln!("{name}: what was missed\n  {}", m.missed.join("\n  "));
        total.errors += m.errors;
        total.unlisted += m.unlisted;
        for (sum, part) in [
            (&mut total.records, m.records),
            (&mut total.labels, m.labels),
            (&mut total.statuses, m.statuses),
            (&mut total.citations, m.citations),
            (&mut total.quotes, m.quotes),
            (&mut total.verdicts, m.verdicts),
            (&mut total.limits, m.limits),
            (&mut total.references, m.references),
        ] {
            sum.add(part);
        }
    }
    let cells = [
        total.records,
        total.labels,
        total.statuses,
        total.citations,
        total.quotes,
        total.verdicts,
        total.limits,
        total.references,
    ];
    writeln!(table, "| **all** | {} | {} | {} |", total.errors, cells.map(percent).join(" | "), total.unlisted)
        .unwrap();
    eprintln!("{table}");
    if only.is_none() {
        insta::assert_snapshot!("fidelity", table);
    }
}
