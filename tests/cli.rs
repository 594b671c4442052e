//! The `casebook` binary end to end: exit codes, diagnostics on stderr, the summary, and
//! the promise that a failed build leaves the previous output untouched.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{copy_tree, repo};

fn casebook(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_casebook"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A site whose check fails (a diagnostics case), copied.
fn broken_site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("tests/diagnostics/references"), dir.path());
    dir
}

#[test]
fn check_on_the_shipped_content_passes_and_lists_unpublished_references() {
    let output = casebook(&repo(), &["check"]);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    assert!(
        err.contains(
            "warning[unpublished-reference]: reference to unpublished record RT-RTE-memory-delivery (runtime report)"
        ),
        "{err}"
    );
    assert!(
        err.contains("warning[unpublished-reference]: reference to unpublished record CMP-12 (evidence packet)"),
        "{err}"
    );
    assert!(!err.contains("error["), "{err}");
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(out.contains("records      38 published"), "{out}");
}

#[test]
fn a_misspelt_reference_to_a_published_record_fails_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("content"), &dir.path().join("content"));
    let report = dir.path().join("content/exia-seed/c7497ac/memory.md");
    let text = std::fs::read_to_string(&report).unwrap();
    let line = "Memory-specific lineage: MEM-OBJ-raw is the raw source";
    assert!(text.contains(line));
    std::fs::write(&report, text.replace(line, "Memory-specific lineage: MEM-OBJ-rw is the raw source")).unwrap();
    let line_number = text.lines().position(|l| l.starts_with("Memory-specific lineage:")).unwrap() + 1;

    let output = casebook(dir.path(), &["check", "--root", "."]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    let expected = format!("content/exia-seed/c7497ac/memory.md:{line_number}:26: error[unknown-record]: unknown record MEM-OBJ-rw; did you mean MEM-OBJ-raw?");
    assert!(err.contains(&expected), "expected `{expected}` in:\n{err}");
}

#[test]
fn a_failed_build_leaves_the_previous_output_untouched() {
    let dir = broken_site();
    let public = dir.path().join("public");
    std::fs::create_dir(&public).unwrap();
    std::fs::write(public.join(".casebook"), "").unwrap();
    std::fs::write(public.join("index.html"), "the previous site").unwrap();

    let output = casebook(dir.path(), &["build", "--root", "."]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("public was left untouched"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(public.join("index.html")).unwrap(), "the previous site");
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains("staging")), "{names:?}");
}

#[test]
fn build_writes_the_site_and_prints_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    let output = casebook(&repo(), &["build", "--quiet", "--jobs", "2", "--output", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = String::from_utf8_lossy(&output.stdout);
    for row in [
        "systems      2",
        "runs         3",
        "reports      3",
        "recognised   38 records, 70 findings, 27 limits, 197 citations, 17 quotes; not understood: 4 places",
        "pages",
    ] {
        assert!(summary.contains(row), "summary lacks `{row}`:\n{summary}");
    }
    assert!(out.join("index.html").is_file() && out.join("records.json").is_file());
    let assets: Vec<String> = std::fs::read_dir(out.join("assets"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(assets.iter().any(|a| a.starts_with("style.") && a.ends_with(".css")), "{assets:?}");
    assert!(!stderr(&output).contains("warning"), "--quiet prints no warnings");
}

#[test]
fn refuses_to_replace_a_folder_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious");
    std::fs::create_dir(&precious).unwrap();
    std::fs::write(precious.join("notes.txt"), "keep me").unwrap();
    let output = casebook(&repo(), &["build", "-q", "-o", precious.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("was not written by casebook"));
    assert_eq!(std::fs::read_to_string(precious.join("notes.txt")).unwrap(), "keep me");
}

#[test]
fn the_readme_example_builds_and_fails_exactly_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("tests/sites/readme"), dir.path());
    let output = casebook(dir.path(), &["build", "--root", "."]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = dir.path().join("public/fractal/aas-2026-08-20-fractal-01");
    for page in ["records/OBJ-03.html", "records/OBJ-04.html", "records/CMP-12.html", "memory/index.html"] {
        assert!(run.join(page).is_file(), "no page {page}");
    }
    let obj04 = std::fs::read_to_string(run.join("records/OBJ-04.html")).unwrap();
    assert!(obj04.contains("https://github.com/Trampoline-AI/fractal/blob/5954a07d464feeaf6c311a9fa5ca2e54200a6794/src/fractal/session.py#L278-L279"));

    let report = dir.path().join("content/fractal/aas-2026-08-20-fractal-01/memory.md");
    let text = std::fs::read_to_string(&report).unwrap();
    std::fs::write(&report, text.replace("see OBJ-03.", "see OBJ-3.")).unwrap();
    let output = casebook(dir.path(), &["check", "--root", "."]);
    assert_eq!(output.status.code(), Some(1));
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let block =
        readme.split("```\ncontent/fractal/").nth(1).expect("README shows the error").split("```").next().unwrap();
    let documented = format!("content/fractal/{block}");
    assert!(
        stderr(&output).contains(documented.trim_end()),
        "README's error is not what casebook prints:\n{}",
        stderr(&output)
    );
}

#[test]
fn a_revision_that_is_not_a_commit_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("content/lab/first");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(dir.path().join("content/lab/system.yaml"), "name: Lab\n").unwrap();
    std::fs::write(run.join("run.yaml"), "revision: main\n").unwrap();
    std::fs::write(run.join("report.md"), "# OBJ-01 A record\n").unwrap();
    let output = casebook(dir.path(), &["check", "--root", "."]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "content/lab/first/run.yaml:1:11: warning[bad-revision]: revision `main` does not look like a git commit"
        ),
        "{}",
        stderr(&output)
    );
}

/// Every fixture site and diagnostics case, through `casebook check`: a broken one fails with a
/// located diagnostic (`file:line:col: error[code]:`), none panics, and no backtrace reaches the
/// user even when RUST_BACKTRACE is set.
#[test]
fn every_fixture_site_ends_in_a_located_diagnostic_never_a_panic() {
    let mut sites: Vec<std::path::PathBuf> = ["tests/sites", "tests/diagnostics"]
        .iter()
        .flat_map(|folder| std::fs::read_dir(repo().join(folder)).unwrap().map(|e| e.unwrap().path()))
        .collect();
    sites.sort();
    assert!(sites.len() >= 20, "{sites:?}");
    let located = regex::Regex::new(r"(?m)^[^\s:]+:\d+:\d+: error\[[a-z0-9-]+\]: ").unwrap();
    for site in sites {
        let name = site.display();
        let output = Command::new(env!("CARGO_BIN_EXE_casebook"))
            .args(["check", "--root", "."])
            .current_dir(&site)
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap();
        let err = stderr(&output);
        assert!(!err.contains("panicked") && !err.contains("stack backtrace"), "{name}: {err}");
        match output.status.code() {
            Some(0) => assert!(!err.contains("error["), "{name}: {err}"),
            Some(1) => assert!(located.is_match(&err), "{name}: no file:line:col in\n{err}"),
            other => panic!("{name}: exit {other:?}\n{err}"),
        }
    }
}

#[test]
fn a_build_without_search_index_writes_neither_index_but_every_page() {
    let out = tempfile::tempdir().unwrap();
    let output = out.path().join("site");
    let built =
        casebook(&common::repo(), &["build", "--quiet", "--no-search-index", "--output", output.to_str().unwrap()]);
    assert!(built.status.success(), "{}", stderr(&built));
    assert!(!output.join("search/tantivy").exists() && !output.join("search/browser").exists());
    assert!(output.join("search/index.html").is_file() && output.join("records.json").is_file());
    assert_eq!(
        common::files_below(&output).iter().filter(|p| p.extension().is_some_and(|e| e == "html")).count(),
        common::bundled().outcome.summary.as_ref().unwrap().pages
    );
}

/// `--message-format json`: one object per line on stdout, each diagnostic (with the code
/// and place the human text shows) and then the summary; stderr keeps only the verdict.
#[test]
fn json_messages_are_one_object_per_line_ending_in_the_summary() {
    let case = repo().join("tests/diagnostics/run-metadata");
    let human = casebook(&case, &["check", "--root", "."]);
    let json = casebook(&case, &["check", "--root", ".", "--message-format", "json"]);
    assert_eq!(json.status.code(), human.status.code());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let (summary, diagnostics) = lines.split_last().unwrap();
    assert_eq!(summary["schema"], "casebook.summary/1");
    assert_eq!((summary["ok"].as_bool(), summary["errors"].as_u64()), (Some(false), Some(7)), "{summary}");
    assert_eq!(summary["counts"]["reports"], 1);
    let shown: Vec<String> = diagnostics
        .iter()
        .map(|d| {
            assert_eq!(d["schema"], "casebook.diagnostic/1");
            format!(
                "{}:{}:{}: {}[{}]",
                d["file"].as_str().unwrap(),
                d["line"],
                d["column"],
                d["severity"].as_str().unwrap(),
                d["code"].as_str().unwrap()
            )
        })
        .collect();
    let located = regex::Regex::new(r"(?m)^(\S+:\d+:\d+: \w+\[[a-z0-9-]+\]):").unwrap();
    let expected: Vec<String> = located.captures_iter(&stderr(&human)).map(|c| c[1].to_string()).collect();
    assert_eq!(shown, expected);
    assert_eq!(stderr(&json).trim(), "casebook: check failed: 7 errors, 1 warning");
}

/// `--message-format github`: a workflow command per diagnostic, at its file, line and
/// columns, for the pull request's diff.
#[test]
fn github_messages_are_workflow_commands_at_each_place() {
    let case = repo().join("tests/diagnostics/report-list");
    let output = casebook(&case, &["check", "--root", ".", "--message-format", "github"]);
    assert_eq!(output.status.code(), Some(1));
    let out = String::from_utf8_lossy(&output.stdout);
    let commands: Vec<&str> = out.lines().collect();
    assert_eq!(
        commands,
        [
            "::warning file=content/lab/r1/extra.md,line=1,col=1,endColumn=2,title=casebook unlisted-report::this report is not listed in `reports` of run.yaml%0Ahelp: it is published after the listed reports; add it to `reports` to place it",
            "::error file=content/lab/r1/run.yaml,line=5,col=22,endColumn=32,title=casebook missing-report::report file `missing.md` does not exist%0Ahelp: create content/lab/r1/missing.md or remove it from `reports`",
        ]
    );
}

/// Runs casebook with its standard error (and output) on a pseudo-terminal, as in a
/// terminal window, and returns everything it wrote there.
fn on_a_terminal(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two new descriptors, each owned once below.
    let opened =
        unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and belong to nothing else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut command = Command::new(env!("CARGO_BIN_EXE_casebook"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .env("TERM", "xterm-256color")
        .stdin(std::process::Stdio::null())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    // The child holds the terminal now: reading ends when it closes it (EIO on Linux).
    drop(command);
    let mut terminal = std::fs::File::from(master);
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match terminal.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
        }
    }
    assert!(child.wait().unwrap().success(), "{}", String::from_utf8_lossy(&seen));
    String::from_utf8_lossy(&seen).into_owned()
}

#[test]
fn a_progress_bar_is_drawn_on_a_terminal_and_never_on_a_pipe_under_ci_or_quiet() {
    let out = tempfile::tempdir().unwrap();
    let output = out.path().join("public");
    let build = ["build", "-o", output.to_str().unwrap()];
    let quick = [("CASEBOOK_PROGRESS_AFTER_MS", "0")];
    let drawn = on_a_terminal(&repo(), &build, &quick);
    // A stage's name and its counts, redrawn in place, then the summary as always.
    assert!(drawn.contains("rendering"), "{drawn}");
    assert!(drawn.contains("\x1b[2K"), "the bar is not redrawn in place: {drawn:?}");
    let counts = regex::Regex::new(r"\] [0-9]+/[0-9]+").unwrap();
    assert!(counts.is_match(&drawn), "{drawn:?}");
    assert!(drawn.contains("casebook: built"), "{drawn}");
    // The bar is gone before the summary: nothing of it follows.
    let summary = drawn.rfind("casebook: built").unwrap();
    assert!(!drawn[summary..].contains("rendering"), "{drawn:?}");

    let piped = casebook(&repo(), &build);
    assert!(piped.status.success());
    assert!(!stderr(&piped).contains("rendering") && !stderr(&piped).contains('\x1b'), "{}", stderr(&piped));

    let under_ci = on_a_terminal(&repo(), &build, &[quick[0], ("CI", "true")]);
    assert!(!under_ci.contains("rendering") && under_ci.contains("casebook: built"), "{under_ci:?}");
    let quiet = on_a_terminal(&repo(), &["build", "--quiet", "-o", output.to_str().unwrap()], &quick);
    assert!(!quiet.contains("rendering"), "{quiet:?}");
    // Work quicker than the delay (a second unless told) shows no bar.
    let quick_build = on_a_terminal(&repo(), &["check"], &[("CASEBOOK_PROGRESS_AFTER_MS", "600000")]);
    assert!(!quick_build.contains("\x1b[2K") && quick_build.contains("casebook: checked"), "{quick_build:?}");
}

/// `--version` names the commit and its date when built from a checkout (as the tests are).
#[test]
fn version_names_the_commit_and_its_date() {
    let output = casebook(&repo(), &["--version"]);
    let shown = String::from_utf8_lossy(&output.stdout).into_owned();
    let pattern =
        regex::Regex::new(r"^casebook [0-9]+\.[0-9]+\.[0-9]+ \([0-9a-f]{7,} [0-9]{4}-[0-9]{2}-[0-9]{2}\)\n$").unwrap();
    assert!(pattern.is_match(&shown), "{shown:?}");
    let head = Command::new("git").args(["rev-parse", "--short=7", "HEAD"]).current_dir(repo()).output().unwrap();
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    assert!(shown.contains(&head), "{shown:?} names HEAD {head}");
}

/// Shell completions and the manual page come from the command line's own definition, so
/// they list every subcommand.
#[test]
fn completions_and_the_manual_page_list_every_subcommand() {
    let bash = casebook(&repo(), &["completions", "bash"]);
    assert!(bash.status.success());
    let script = String::from_utf8_lossy(&bash.stdout).into_owned();
    let zsh = String::from_utf8_lossy(&casebook(&repo(), &["completions", "zsh"]).stdout).into_owned();
    let man = casebook(&repo(), &["man"]);
    assert!(man.status.success());
    let page = String::from_utf8_lossy(&man.stdout).into_owned();
    assert!(page.starts_with(".ie") && page.contains(".TH casebook 1"), "{}", &page[..200.min(page.len())]);
    for command in
        ["build", "verify", "diff", "search", "init", "serve", "schema", "check", "theme", "completions", "man"]
    {
        assert!(script.contains(&format!("casebook__subcmd__{command}")), "bash completes `{command}`");
        assert!(zsh.contains(&format!("'{command}:")), "zsh completes `{command}`");
        assert!(
            page.contains(&format!("casebook\\-{command}")) || page.contains(&format!("casebook-{command}")),
            "the manual names `{command}`"
        );
    }
    assert_eq!(casebook(&repo(), &["completions", "tcsh"]).status.code(), Some(2), "an unknown shell is a usage error");
}
