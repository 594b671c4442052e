//! Resource limits: hostile content of every size and shape goes through the real binary
//! (`casebook build` into a temporary folder) and the build finishes, with success or a
//! located `file:line:col` error, never a panic or a signal. Each build runs in a child
//! process that is killed after a generous wall-clock bound ([`WALL_CLOCK_BOUND`]), and
//! its peak memory is read from the kernel (`wait4`'s resource usage) and held under
//! [`MEMORY_BOUND_MIB`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Far above what any of these builds needs (the slowest, the 100,000-row table, takes
/// about 70 s in a debug build on a machine of two cores, 5 s in a release build), and
/// room for a machine busy with something else; it only turns a hang or a quadratic
/// blow-up (hours at these sizes) into a failure instead of a stuck test run.
const WALL_CLOCK_BOUND: Duration = Duration::from_secs(300);

/// Peak resident memory a build may reach. The largest input here, the 6 MiB table,
/// peaks at about 600 MiB: its report page and the page of the record every row cites are
/// 18 MiB of HTML each, and both search indexes take them in (`check`, without the
/// indexes, peaks at about 320 MiB). Memory linear in the input stays under 1 GiB; an
/// expanded alias bomb or a copy per nesting level would not. The figure is an upper
/// bound: Linux counts in a child's peak the test process's own memory when it forked.
const MEMORY_BOUND_MIB: u64 = 1024;

/// What a bounded build did.
struct Finished {
    /// The exit code; `None` when a signal ended it (or the bound killed it).
    code: Option<i32>,
    /// The signal that ended it, if any.
    signal: Option<i32>,
    stderr: String,
    peak_rss_mib: u64,
    elapsed: Duration,
}

/// A site in a temporary folder: one system (`lab`), one run (`r1`).
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let site = Site { dir };
        site.write("content/lab/system.yaml", "name: Lab\n");
        site.write("content/lab/r1/run.yaml", "revision: 0123456789abcdef\nsources:\n  - id: SRC-1\n    title: Code\n");
        site
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, path: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    fn report(&self, contents: impl AsRef<[u8]>) {
        self.write("content/lab/r1/r.md", contents);
    }

    /// `casebook build` of this site, bounded in time, with its peak memory.
    #[allow(
        clippy::zombie_processes,
        reason = "the child is reaped by `wait4`, which std's `Child` does not know about"
    )]
    fn build(&self) -> Finished {
        // One build at a time: the bounds are for one build, not for several sharing the
        // machine's cores.
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let stderr_path = self.root().join("stderr.txt");
        let child = Command::new(env!("CARGO_BIN_EXE_casebook"))
            .args(["build", "--quiet", "--root", ".", "--output", "out"])
            .current_dir(self.root())
            .env("RUST_BACKTRACE", "1")
            .stdout(Stdio::null())
            // A file, not a pipe: a pipe nobody reads while we wait could fill and stall
            // the build.
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("the binary runs");
        let pid = child.id() as libc::pid_t;
        let started = Instant::now();
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: `pid` is our own child, not yet reaped; the pointers are to locals.
            let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
            assert!(reaped >= 0, "wait4 failed: {}", std::io::Error::last_os_error());
            if reaped == pid {
                break;
            }
            if started.elapsed() > WALL_CLOCK_BOUND {
                // SAFETY: as above; the child is killed, then reaped.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::wait4(pid, &mut status, 0, &mut usage);
                }
                panic!("the build ran for more than {WALL_CLOCK_BOUND:?} and was killed");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let elapsed = started.elapsed();
        let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        let signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
        let stderr = std::fs::read_to_string(&stderr_path).unwrap();
        // Linux reports ru_maxrss in KiB.
        let peak_rss_mib = usage.ru_maxrss as u64 / 1024;
        Finished { code, signal, stderr, peak_rss_mib, elapsed }
    }
}

impl Finished {
    /// The build ended by itself, in bounds, without a panic: success, or content errors
    /// each at a `file:line:col`.
    fn assert_bounded(&self) -> &Self {
        let err = &self.stderr;
        assert_eq!(self.signal, None, "the build was ended by signal {:?}\n{err}", self.signal);
        assert!(!err.contains("panicked") && !err.contains("stack backtrace") && !err.contains("overflow"), "{err}");
        assert!(self.peak_rss_mib < MEMORY_BOUND_MIB, "peak memory {} MiB\n{err}", self.peak_rss_mib);
        match self.code {
            Some(0) => assert!(!err.contains("error["), "{err}"),
            Some(1) => {
                let located = regex::Regex::new(r"(?m)^[^\s:]+:\d+:\d+: error\[[a-z0-9-]+\]: ").unwrap();
                assert!(located.is_match(err), "an error without file:line:col\n{err}");
            }
            other => panic!("exit {other:?}\n{err}"),
        }
        eprintln!("built in {:?}, peak {} MiB", self.elapsed, self.peak_rss_mib);
        self
    }

    fn assert_success(&self) -> &Self {
        self.assert_bounded();
        assert_eq!(self.code, Some(0), "{}", self.stderr);
        self
    }

    fn assert_error(&self, expected: &str) -> &Self {
        self.assert_bounded();
        assert_eq!(self.code, Some(1), "{}", self.stderr);
        assert!(self.stderr.contains(expected), "expected {expected:?} in\n{}", self.stderr);
        self
    }
}

#[test]
#[ignore = "slow tier: `bash .ci/test` runs it (cargo test -- --include-ignored)"]
fn a_table_of_100_000_rows_builds() {
    let site = Site::new();
    let mut report = String::from(
        "# Inventory\n\n| ID | Producer | Status |\n|---|---|---|\n| OBJ-01 Summary | host | implemented |\n",
    );
    for row in 0..100_000 {
        writeln!(report, "| row {row} | see OBJ-01 (SRC-1 session.py:{row}) | plain text |").unwrap();
    }
    site.report(report);
    site.build().assert_success();
}

#[test]
#[ignore = "slow tier: `bash .ci/test` runs it (cargo test -- --include-ignored)"]
fn a_list_nested_5_000_levels_deep_builds() {
    let site = Site::new();
    // `- - - x` opens one list per marker.
    site.report(format!("# Deep\n\n{}OBJ-01 at the bottom\n\n## OBJ-01 Bottom\n", "- ".repeat(5_000)));
    site.build().assert_success();
}

#[test]
#[ignore = "slow tier: `bash .ci/test` runs it (cargo test -- --include-ignored)"]
fn a_list_nested_3_000_levels_deep_by_indentation_builds() {
    let site = Site::new();
    let mut report = String::from("# Deep\n\n");
    for level in 0..3_000 {
        writeln!(report, "{}- level {level}, see OBJ-01", "  ".repeat(level)).unwrap();
    }
    report.push_str("\n## OBJ-01 Bottom\n");
    site.report(report);
    site.build().assert_success();
}

#[test]
#[ignore = "slow tier: `bash .ci/test` runs it (cargo test -- --include-ignored)"]
fn blockquotes_nested_10_000_levels_deep_build() {
    let site = Site::new();
    site.report(format!(
        "# Deep\n\n{}OBJ-01 at the bottom\n\n{}\n\n## OBJ-01 Bottom\n",
        "> ".repeat(10_000),
        "> - ".repeat(5_000)
    ));
    site.build().assert_success();
}

#[test]
#[ignore = "slow tier: `bash .ci/test` runs it (cargo test -- --include-ignored)"]
fn a_single_line_of_2_mib_builds() {
    let site = Site::new();
    // One sentence with no end, full of references and citations: every citing sentence
    // is the whole line.
    let mut line = String::new();
    while line.len() < 2 * 1024 * 1024 {
        line.push_str("see OBJ-01 and SRC-1 session.py:10-12, then ");
    }
    site.report(format!("# Long\n\n{line}\n\n## OBJ-01 Target\n"));
    site.build().assert_success();
}

#[test]
fn a_file_over_max_file_mib_is_refused_by_name() {
    let site = Site::new();
    site.write("content/casebook.yaml", "max_file_mib: 1\n");
    site.report("# Big\n\n".to_string() + &"words ".repeat(400_000));
    site.build().assert_error(
        "content/lab/r1/r.md:1:1: error[too-large]: this file is 2.3 MiB; content files may be at most 1 MiB",
    );
    let finished = site.build();
    assert!(finished.stderr.contains("raise `max_file_mib` in casebook.yaml"), "{}", finished.stderr);
}

/// Nine levels of nine aliases (about 387 million strings when expanded), as the value of
/// `key`, which takes a list.
fn billion_laughs(key: &str, indent: &str) -> String {
    let mut yaml = format!("{indent}{key}:\n{indent}  - &a [\"lol\"]\n");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for pair in names.windows(2) {
        let (previous, name) = (pair[0], pair[1]);
        let refs = vec![format!("*{previous}"); 9].join(", ");
        writeln!(yaml, "{indent}  - &{name} [{refs}]").unwrap();
    }
    yaml
}

// An alias bomb is never expanded: serde_yaml keeps aliases as references to the events
// it read, and every key of casebook's YAML is typed, so the first nested list is a type
// error at its line before any alias is followed.

#[test]
fn a_yaml_alias_bomb_in_casebook_yaml_is_a_located_error() {
    let site = Site::new();
    site.write("content/casebook.yaml", billion_laughs("statuses", ""));
    site.build().assert_error(
        "content/casebook.yaml:2:5: error[invalid-yaml]: invalid YAML: statuses[0]: invalid type: sequence",
    );
}

#[test]
fn a_yaml_alias_bomb_in_run_yaml_or_front_matter_is_a_located_error() {
    let site = Site::new();
    site.write("content/lab/r1/run.yaml", format!("revision: abc1234\n{}", billion_laughs("vocabulary", "")));
    site.build().assert_error(
        "content/lab/r1/run.yaml:3:5: error[invalid-yaml]: invalid YAML: vocabulary[0]: invalid type: sequence",
    );

    let site = Site::new();
    site.report(format!("---\ntitle: x\n{}---\n# Body\n", billion_laughs("original", "")));
    site.build()
        .assert_error("content/lab/r1/r.md:4:3: error[invalid-yaml]: invalid YAML: original: invalid type: sequence");
}

#[test]
fn deeply_nested_yaml_is_a_located_error_not_a_stack_overflow() {
    // libyaml's scanner slows quadratically with `[`/`{` nesting: 100,000 levels took
    // minutes before casebook bounded it.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let site = Site::new();
    site.write("content/casebook.yaml", format!("statuses: {deep}\n"));
    site.build().assert_error("content/casebook.yaml:1:75: error[yaml-too-deep]: YAML nested more than 64 levels deep");

    let site = Site::new();
    site.write("content/lab/r1/run.yaml", format!("revision: abc1234\nunpublished: {deep}\n"));
    site.build()
        .assert_error("content/lab/r1/run.yaml:2:78: error[yaml-too-deep]: YAML nested more than 64 levels deep");

    let site = Site::new();
    site.report(format!("---\ntitle: x\norder: {}\n---\n# Body\n", "{a: ".repeat(50_000)));
    site.build().assert_error("content/lab/r1/r.md:3:");

    // Indentation nests too, without flow collections (2,500 levels: a 6 MiB file).
    let site = Site::new();
    let mut nested = String::from("statuses:\n");
    for level in 0..2_500 {
        writeln!(nested, "{}- k:", "  ".repeat(level)).unwrap();
    }
    site.write("content/casebook.yaml", nested);
    site.build().assert_error("content/casebook.yaml:");
}

#[test]
fn invalid_utf8_is_an_error_at_its_line_and_column() {
    let site = Site::new();
    site.report(b"# Title\n\nfine\nab\xc3\x28cd\n".as_slice());
    site.build().assert_error("content/lab/r1/r.md:4:3: error[not-utf8]: this file is not valid UTF-8 (byte 0xc3)");
}

#[test]
fn a_byte_order_mark_and_crlf_or_mixed_line_endings_keep_their_line_numbers() {
    // The same report with each line ending; the unknown reference is on line 6 of each.
    let lines = ["---", "title: Endings", "---", "# Endings", "", "See OBJ-02 here.", "", "## OBJ-01 Known", ""];
    for (name, text) in [
        ("BOM and LF", format!("\u{feff}{}", lines.join("\n"))),
        ("CRLF", lines.join("\r\n")),
        ("CR", lines.join("\r")),
        ("mixed", lines.iter().enumerate().map(|(i, l)| format!("{l}{}", ["\n", "\r\n", "\r"][i % 3])).collect()),
    ] {
        let site = Site::new();
        site.write("content/casebook.yaml", "\u{feff}title: Endings\r\nmax_file_mib: 2\r\n");
        site.report(&text);
        let finished = site.build();
        finished.assert_error("content/lab/r1/r.md:6:5: error[unknown-record]: unknown record OBJ-02");
        assert!(finished.stderr.contains("6 | See OBJ-02 here."), "{name}: {}", finished.stderr);

        site.report(text.replace("OBJ-02", "OBJ-01"));
        site.build().assert_success();
        let page = std::fs::read_to_string(site.root().join("out/lab/r1/r/index.html")).unwrap();
        assert!(page.contains("<title>Endings"), "{name}: the front matter is read");
        assert!(!page.contains('\r') && !page.contains('\u{feff}'), "{name}");
    }
}

#[test]
#[ignore = "slow tier: `bash .ci/test` runs it (cargo test -- --include-ignored)"]
fn twenty_thousand_unknown_ids_on_one_line_are_reported_in_bounded_memory() {
    // Each diagnostic once held the whole 189 KB line: 3.7 GB for this one file, and a
    // scan of the line per ID to find its column.
    let site = Site::new();
    let line: Vec<String> = (0..20_000).map(|n| format!("OBJ-{n}")).collect();
    site.report(format!("# Unknown\n\n{}\n\n## OBJ-01 Known\n", line.join(" ")));
    let finished = site.build();
    finished.assert_error("content/lab/r1/r.md:3:1: error[unknown-record]: unknown record OBJ-0");
    assert!(
        finished.stderr.contains("build failed: 20000 errors"),
        "{}",
        &finished.stderr[finished.stderr.len() - 300..]
    );
    assert!(finished.stderr.contains("3 | …95 OBJ-19996 OBJ-19997 OBJ-19998 OBJ-19999\n"));
}
