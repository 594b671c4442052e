//! `casebook verify` on real git repositories made here with the git CLI: a source with two
//! commits, where a file changed between them, and a site whose quotes and citations hit
//! every verdict. The repository is read with gix at the run's revision; its working tree
//! is left at the other commit, so that reading the checkout would give wrong answers.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use casebook::model::{CitationVerdict, Code, LineRange, QuoteVerdict, Slug};
use casebook::pipeline::{self, BuildOptions};
use casebook::verify::repository::SourceRepositories;
use casebook::verify::VerifyOptions;

const FIRST: &str = "\
import json

def trim(turns):
    # keep the last twenty
    turns = turns[-20:]
    return turns


def save(path, turns):
    with open(path, \"w\") as f:
        json.dump(trim(turns), f)
";

/// The second commit adds a function and changes the cap.
const SECOND: &str = "\
import json

def trim(turns):
    # keep the last thirty
    turns = turns[-30:]
    return turns


def save(path, turns):
    with open(path, \"w\") as f:
        json.dump(trim(turns), f)


def load(path):
    return json.load(open(path))
";

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=casebook", "-c", "user.email=casebook@example.org", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_DATE", "2026-08-20T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-08-20T00:00:00Z")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A repository with the two commits; returns it and the first commit's hash.
fn repository(dir: &Path) -> (PathBuf, String) {
    let repo = dir.join("lab");
    std::fs::create_dir_all(repo.join("src/sandbox")).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("src/session.py"), FIRST).unwrap();
    std::fs::write(repo.join("src/sandbox/jail.rs"), "fn jail() {}\n").unwrap();
    std::fs::create_dir_all(repo.join("src/conf.d")).unwrap();
    std::fs::write(repo.join("src/conf.d/a.toml"), "a = 1\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    let first = git(&repo, &["rev-parse", "HEAD"]);
    std::fs::write(repo.join("src/session.py"), SECOND).unwrap();
    git(&repo, &["commit", "-q", "-am", "second"]);
    (repo, first)
}

const REPORT: &str = "# Memory

### OBJ-01 Session trimming

At the cited lines:

```python
turns = turns[-20:]
return turns
```

--- SRC-1 src/session.py:5-6

At other lines than cited:

```python
def save(path, turns):
```

--- SRC-1 src/session.py:2-3

Only in the other commit:

```python
def load(path):
    return json.load(open(path))
```

--- SRC-1 src/session.py

Nowhere at all:

```python
turns = turns[-25:]
```

--- SRC-1 src/session.py:5

Reflowed onto one line by an export:

```python
with open(path, \"w\") as f: json.dump(trim(turns), f)
```

--- SRC-1 src/session.py:10-11

Of a file that is not there:

```python
x = 1
```

--- SRC-1 src/gone.py

### OBJ-02 Citations

The cap is set in SRC-1 src/session.py:5, the jail in SRC-1 src/sandbox/, a range past
the end in SRC-1 src/session.py:40-44, a missing file in SRC-1 src/missing.py:1-2, and a
folder cited as a file in SRC-1 src/conf.d:3.
";

/// A site of one run frozen at `revision`, whose SRC-1 is the repository.
fn site(dir: &Path, revision: &str) -> PathBuf {
    let root = dir.join("site");
    let run = root.join("content/lab/r1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(root.join("content/lab/system.yaml"), "name: Lab\n").unwrap();
    std::fs::write(
        run.join("run.yaml"),
        format!("revision: {revision}\nsources:\n  - id: SRC-1\n    title: The lab\n    repository: https://github.com/o/lab\n"),
    )
    .unwrap();
    std::fs::write(run.join("memory.md"), REPORT).unwrap();
    root
}

fn verified(root: &Path, repositories: SourceRepositories) -> pipeline::Outcome {
    let mut options = BuildOptions::new(root);
    options.verify = Some(VerifyOptions { repositories, ..VerifyOptions::default() });
    pipeline::check(&options).unwrap()
}

fn given(repo: &Path) -> SourceRepositories {
    SourceRepositories { given: vec![("SRC-1".into(), repo.to_path_buf())], ..SourceRepositories::default() }
}

fn lines(start: u32, end: u32) -> LineRange {
    LineRange { start, end }
}

#[test]
fn every_quote_and_citation_gets_its_verdict_at_the_frozen_revision() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first) = repository(dir.path());
    let root = site(dir.path(), &first);
    let outcome = verified(&root, given(&repo));
    let verification = outcome.verification.as_ref().expect("verification ran");
    let run = &verification.runs[&(Slug::parse("lab").unwrap(), Slug::parse("r1").unwrap())];
    assert_eq!(run.revisions["SRC-1"], first);
    let quotes = &run.quotes[0];
    assert_eq!(quotes[0], QuoteVerdict::Verified { lines: lines(5, 6) });
    assert_eq!(quotes[1], QuoteVerdict::Elsewhere { lines: lines(9, 9) });
    assert!(matches!(quotes[2], QuoteVerdict::NotFound { .. }), "only in the second commit: {:?}", quotes[2]);
    match &quotes[3] {
        QuoteVerdict::NotFound { closest, alike } => {
            assert_eq!(*closest, Some(lines(5, 5)));
            assert!(*alike > 800, "{alike}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(quotes[4], QuoteVerdict::Verified { lines: lines(10, 11) }, "a reflowed quote is found");
    assert_eq!(quotes[5], QuoteVerdict::MissingFile);

    let citations: Vec<&CitationVerdict> = run.citations[0].iter().collect();
    assert_eq!(
        citations,
        [
            &CitationVerdict::Verified,
            &CitationVerdict::Verified,
            &CitationVerdict::PastEnd { file_lines: 11 },
            &CitationVerdict::MissingPath,
            &CitationVerdict::WrongKind,
        ]
    );

    // Each problem is a diagnostic at its place, with its code.
    let shown: Vec<(u32, Code)> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.location.file.ends_with("memory.md"))
        .map(|d| (d.location.line, d.code))
        .collect();
    assert_eq!(
        shown,
        [
            (16, Code::QuoteElsewhere),
            (24, Code::QuoteNotFound),
            (33, Code::QuoteNotFound),
            (49, Code::MissingPath),
            (58, Code::LinesPastEnd),
            (58, Code::MissingPath),
            (59, Code::WrongPathKind),
        ]
    );
    let not_found = outcome.diagnostics.iter().find(|d| d.location.line == 33).unwrap().to_string();
    assert!(not_found.contains("at line 5 (") && not_found.contains("turns = turns[-20:]"), "{not_found}");
    assert!(!outcome.has_errors(), "a quote not found is a warning");
}

#[test]
fn the_other_revision_finds_what_the_first_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = repository(dir.path());
    let second = git(&repo, &["rev-parse", "HEAD"]);
    let root = site(dir.path(), &second[..7]);
    let outcome = verified(&root, given(&repo));
    let run = outcome.verification.as_ref().unwrap().runs.values().next().unwrap();
    assert_eq!(run.quotes[0][2], QuoteVerdict::Verified { lines: lines(14, 15) });
    assert!(matches!(run.quotes[0][0], QuoteVerdict::NotFound { .. }), "the cap changed: {:?}", run.quotes[0][0]);
    assert_eq!(run.revisions["SRC-1"], second, "an abbreviated revision is resolved to its commit");
}

#[test]
fn a_revision_not_in_the_repository_is_an_error_naming_the_run_and_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = repository(dir.path());
    let root = site(dir.path(), "0123456789abcdef0123456789abcdef01234567");
    let outcome = verified(&root, given(&repo));
    let error = outcome.diagnostics.iter().find(|d| d.is_error()).expect("an error");
    assert_eq!(error.code, Code::UnknownRevision);
    assert!(error.location.file.ends_with("content/lab/r1/run.yaml"), "{error}");
    assert!(error.message.starts_with("SRC-1: revision 0123456789abcdef"), "{error}");
    let run = outcome.verification.as_ref().unwrap().runs.values().next().unwrap();
    assert!(run.quotes[0].iter().all(|q| matches!(q, QuoteVerdict::NotVerified { .. })));
}

#[test]
fn without_a_repository_everything_is_not_verified_and_nothing_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (_, first) = repository(dir.path());
    let root = site(dir.path(), &first);
    let outcome = verified(&root, SourceRepositories::default());
    assert!(!outcome.has_errors());
    let counts = outcome.verification.as_ref().unwrap().counts();
    assert_eq!((counts.quotes(), counts.quotes_not_verified), (6, 6));
    assert_eq!(counts.citations_not_verified, counts.citations());
}

#[test]
fn a_bare_clone_in_a_folder_of_clones_is_found_by_the_repository_url() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first) = repository(dir.path());
    let clones = dir.path().join("clones/github.com/o");
    std::fs::create_dir_all(&clones).unwrap();
    let url = format!("file://{}", repo.display());
    git(&clones, &["clone", "-q", "--bare", &url, "lab.git"]);
    let root = site(dir.path(), &first);
    std::fs::write(root.join("content/casebook.yaml"), "sources_dir: ../clones\n").unwrap();
    let outcome = verified(&root, SourceRepositories::default());
    let run = outcome.verification.as_ref().unwrap().runs.values().next().unwrap();
    assert_eq!(run.quotes[0][0], QuoteVerdict::Verified { lines: lines(5, 6) });
}

#[test]
fn the_command_prints_each_verdict_with_file_line_and_code_and_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first) = repository(dir.path());
    let root = site(dir.path(), &first);
    let source = format!("SRC-1={}", repo.display());
    let output = Command::new(env!("CARGO_BIN_EXE_casebook"))
        .args(["verify", "--root", ".", "--source", &source])
        .current_dir(&root)
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "content/lab/r1/memory.md:24:1: warning[quote-not-found]: this quote is not in SRC-1 src/session.py at "
        ),
        "{err}"
    );
    assert!(out.contains("quotes       2 of 6 verified (1 at other lines, 2 not found, 1 of a missing file)"), "{out}");
    assert!(out.contains("citations    2 of 5 verified (1 to a missing path, 1 past the file's end, 1 of a folder as a file or a file as a folder)"), "{out}");

    // --strict: a quote not found fails the verification.
    let strict = Command::new(env!("CARGO_BIN_EXE_casebook"))
        .args(["verify", "--root", ".", "--strict", "--source", &source])
        .current_dir(&root)
        .output()
        .unwrap();
    assert_eq!(strict.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("error[quote-not-found]"));
}

#[test]
fn exact_quotes_do_not_forgive_a_reflowed_quote() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first) = repository(dir.path());
    let root = site(dir.path(), &first);
    let mut options = BuildOptions::new(&root);
    options.verify = Some(VerifyOptions {
        repositories: given(&repo),
        matching: casebook::verify::matching::Matching::Strict,
        ..VerifyOptions::default()
    });
    let outcome = pipeline::check(&options).unwrap();
    let run = outcome.verification.as_ref().unwrap().runs.values().next().unwrap();
    assert!(matches!(run.quotes[0][4], QuoteVerdict::NotFound { .. }), "{:?}", run.quotes[0][4]);
    // Indentation counts too: the first quote is written without the file's.
    assert!(matches!(run.quotes[0][0], QuoteVerdict::NotFound { .. }), "{:?}", run.quotes[0][0]);
}

#[test]
fn a_folder_that_is_no_repository_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_, first) = repository(dir.path());
    let root = site(dir.path(), &first);
    let outcome = verified(&root, given(&dir.path().join("site/content")));
    let codes: Vec<Code> = outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code).collect();
    assert_eq!(codes, [Code::BadRepository]);
}

#[test]
fn a_verified_build_shows_each_verdict_on_the_record_page_and_counts_on_the_run_page() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first) = repository(dir.path());
    let root = site(dir.path(), &first);
    let short = &first[..7];
    let mut options = BuildOptions::new(&root);
    options.output = dir.path().join("out");
    options.verify = Some(VerifyOptions { repositories: given(&repo), ..VerifyOptions::default() });
    let outcome = pipeline::build(&options).unwrap();
    assert!(outcome.written, "{:?}", outcome.diagnostics);
    let record = std::fs::read_to_string(options.output.join("lab/r1/records/OBJ-01.html")).unwrap();
    let blob = format!("https://github.com/o/lab/blob/{first}/src/session.py");
    for shown in [
        format!("<a href=\"{blob}#L5-L6\" class=\"external\" rel=\"noopener noreferrer\">verified at {short}, lines 5-6</a>"),
        format!("<a href=\"{blob}#L9\" class=\"external\" rel=\"noopener noreferrer\">found at {short} at line 9, not where cited</a>"),
        format!("not found at {short}; most like line 5 ("),
        format!("the file is not in the source at {short}"),
    ] {
        assert!(record.contains(&shown), "OBJ-01's page lacks `{shown}`");
    }
    let citations = std::fs::read_to_string(options.output.join("lab/r1/records/OBJ-02.html")).unwrap();
    assert!(citations.contains(&format!("past the file&#39;s end at {short} (it has 11 lines)")), "{citations}");
    // The quote's own caption, in the report's text, says it too.
    let report = std::fs::read_to_string(options.output.join("lab/r1/memory/index.html")).unwrap();
    let caption = report.split("<figcaption>").nth(1).unwrap().split("</figcaption>").next().unwrap();
    assert!(caption.contains(&format!("verified at {short}, lines 5-6</a></span>")), "{caption}");
    let run = std::fs::read_to_string(options.output.join("lab/r1/index.html")).unwrap();
    assert!(run.contains("quotes: 2 of 6 verified (1 at other lines, 2 not found, 1 of a missing file)"), "{run}");

    // Without --verify the pages say nothing of it.
    options.verify = None;
    options.output = dir.path().join("plain");
    pipeline::build(&options).unwrap();
    let plain = std::fs::read_to_string(options.output.join("lab/r1/records/OBJ-01.html")).unwrap();
    assert!(!plain.contains("class=\"verdict"), "{plain}");
}

/// A verified build's records.json lists each quote and citation with its verdict; `diff`
/// of two verified builds names those whose verdict changed (here: the run moved to the
/// second commit, where the cap changed and `load` appeared).
#[test]
fn records_json_holds_each_verdict_and_diff_reports_those_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first) = repository(dir.path());
    let second = git(&repo, &["rev-parse", "HEAD"]);
    let manifest_at = |revision: &str, name: &str| {
        let root = site(&dir.path().join(name), revision);
        let mut options = BuildOptions::new(&root);
        options.output = dir.path().join(name).join("out");
        options.verify = Some(VerifyOptions { repositories: given(&repo), ..VerifyOptions::default() });
        assert!(pipeline::build(&options).unwrap().written);
        casebook::manifest::Manifest::read(&options.output.join("records.json")).unwrap()
    };
    let (old, new) = (manifest_at(&first, "a"), manifest_at(&second, "b"));
    assert_eq!(old.evidence_schema.as_deref(), Some("casebook.evidence/1"));
    let quote = &old.evidence[0];
    assert_eq!(
        (quote.kind.as_str(), quote.record.as_deref(), quote.verdict.as_str(), quote.found.as_deref()),
        ("quote", Some("OBJ-01"), "verified", Some("5-6"))
    );
    assert_eq!(quote.commit.as_deref(), Some(first.as_str()));
    assert_eq!(quote.at, "content/lab/r1/memory.md:7");
    let changes = casebook::diff::diff(&old, &new).evidence_changes;
    let shown: Vec<(String, Vec<String>, Vec<String>)> =
        changes.iter().map(|c| (c.cited.clone(), c.from.clone(), c.to.clone())).collect();
    assert!(
        shown.contains(&("SRC-1 src/session.py:5-6".into(), vec!["verified".into()], vec!["not-found".into()])),
        "{shown:?}"
    );
    assert!(
        shown.contains(&("SRC-1 src/session.py".into(), vec!["not-found".into()], vec!["verified".into()])),
        "{shown:?}"
    );
    assert!(casebook::diff::diff(&old, &new).to_markdown().contains("### Evidence whose verification changed"));
    // `diff --message-format`: each change at the quote's line in the report.
    let messages = casebook::diff::diff(&old, &new).messages(&old, &new);
    let quote = messages
        .iter()
        .find(|d| d.code == casebook::model::Code::EvidenceChanged && d.message.contains("src/session.py:5-6"))
        .unwrap_or_else(|| panic!("{messages:?}"));
    assert_eq!(quote.to_string().lines().next().unwrap(), "content/lab/r1/memory.md:7:1: note[evidence-changed]: quote SRC-1 src/session.py:5-6 of OBJ-01: verified → not-found");

    // An unverified build's manifest has no evidence section at all.
    let root = site(&dir.path().join("c"), &first);
    let mut options = BuildOptions::new(&root);
    options.output = dir.path().join("c/out");
    pipeline::build(&options).unwrap();
    for file in ["records.json", "lab/r1/records.json"] {
        let plain = std::fs::read_to_string(options.output.join(file)).unwrap();
        assert!(!plain.contains("evidence"), "{file}: {plain}");
    }
}

/// `--fetch`: a bare clone of the source into the cache (here over file://; CI's previews
/// fetch over https), kept and reused, then verification reads it.
#[test]
fn a_fetched_bare_clone_is_kept_in_the_cache_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first) = repository(dir.path());
    let cache = dir.path().join("cache");
    let repositories = SourceRepositories { cache: Some(cache.clone()), ..SourceRepositories::default() };
    let into = repositories.cache_path("https://github.com/o/lab").unwrap();
    assert_eq!(into, cache.join("github.com/o/lab.git"));
    let url = format!("file://{}", repo.display());
    assert_eq!(casebook::verify::repository::fetch(&url, &first, &into), Ok(true));
    assert!(into.join("HEAD").is_file(), "a bare clone");
    assert_eq!(casebook::verify::repository::fetch(&url, &first, &into), Ok(false), "kept, not fetched again");
    assert!(casebook::verify::repository::fetch("file:///no/such/repository", &first, &dir.path().join("x")).is_err());

    let root = site(dir.path(), &first);
    let mut options = BuildOptions::new(&root);
    options.verify = Some(VerifyOptions { repositories, fetch: true, ..VerifyOptions::default() });
    let outcome = pipeline::check(&options).unwrap();
    let run = outcome.verification.as_ref().unwrap().runs.values().next().unwrap();
    assert_eq!(run.quotes[0][0], QuoteVerdict::Verified { lines: lines(5, 6) });
}

#[test]
fn a_repository_that_cannot_be_fetched_is_a_warning_and_its_evidence_not_verified() {
    let dir = tempfile::tempdir().unwrap();
    let (_, first) = repository(dir.path());
    let root = site(dir.path(), &first);
    let run_yaml = root.join("content/lab/r1/run.yaml");
    let text = std::fs::read_to_string(&run_yaml).unwrap();
    // Nothing listens on port 1: the connection is refused at once, with no network.
    std::fs::write(&run_yaml, text.replace("https://github.com/o/lab", "https://127.0.0.1:1/o/lab")).unwrap();
    let mut options = BuildOptions::new(&root);
    let repositories = SourceRepositories { cache: Some(dir.path().join("cache")), ..SourceRepositories::default() };
    options.verify = Some(VerifyOptions { repositories, fetch: true, ..VerifyOptions::default() });
    let outcome = pipeline::check(&options).unwrap();
    let fetch: Vec<Code> = outcome.diagnostics.iter().filter(|d| d.code == Code::FetchFailed).map(|d| d.code).collect();
    assert_eq!(fetch.len(), 1, "{:?}", outcome.diagnostics);
    assert!(!outcome.has_errors());
    let counts = outcome.verification.as_ref().unwrap().counts();
    assert_eq!(counts.quotes_not_verified, 6);
}

/// The same site verified against the repository given with --source and against its
/// clone fetched into a cache (twice) is built byte for byte alike.
#[test]
fn a_build_verified_from_a_fetched_clone_is_the_build_verified_from_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first) = repository(dir.path());
    let root = site(dir.path(), &first);
    let build = |name: &str, repositories: SourceRepositories, fetch: bool| {
        let mut options = BuildOptions::new(&root);
        options.output = dir.path().join(name);
        options.verify = Some(VerifyOptions { repositories, fetch, ..VerifyOptions::default() });
        assert!(pipeline::build(&options).unwrap().written);
        common::files_below(&options.output)
            .into_iter()
            .map(|path| {
                let bytes = std::fs::read(options.output.join(&path)).unwrap();
                (path, bytes)
            })
            .collect::<Vec<_>>()
    };
    let direct = build("direct", given(&repo), false);
    let cache = dir.path().join("cache");
    let into = cache.join("github.com/o/lab.git");
    casebook::verify::repository::fetch(&format!("file://{}", repo.display()), &first, &into).unwrap();
    let cached = SourceRepositories { cache: Some(cache), ..SourceRepositories::default() };
    let warm = build("warm", cached.clone(), true);
    assert_eq!(direct.len(), warm.len());
    for ((path, a), (_, b)) in direct.iter().zip(&warm) {
        assert!(a == b, "{} differs", path.display());
    }
    assert_eq!(build("again", cached, true), warm, "a second build from the warm cache");
}
