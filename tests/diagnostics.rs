//! Every diagnostic casebook gives, one case per folder. `tests/diagnostics/<case>/`
//! holds a site (`content/`, unless the case is about its absence), `args` (the command
//! line after `casebook`, run in the case's folder) and `expected.snap`: the exit code and
//! what was printed on stderr. A case that changes shows alone in the test's failures.
//!
//! Also here: every diagnostic code is given by some case or named test, and documented
//! in docs/format.md.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use casebook::model::Code;
use common::repo;

#[test]
fn each_case_prints_its_expected_diagnostics() {
    insta::glob!("diagnostics/*/args", |args_file| {
        let case = args_file.parent().unwrap();
        let args = std::fs::read_to_string(args_file).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_casebook"))
            .args(args.split_whitespace())
            .current_dir(case)
            .env_remove("RUST_BACKTRACE")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let shown = format!("exit {:?}\n{stderr}", output.status.code());
        insta::with_settings!({
            snapshot_path => case,
            snapshot_suffix => "",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!("expected", shown);
        });
    });
}

/// Codes that no case here can give, each with the test that asserts it (which must
/// name it, as `[code]` or `Code::Variant`): they need a file or a git repository made at
/// test time.
const GIVEN_ELSEWHERE: [(Code, &str); 21] = [
    (Code::NotUtf8, "tests/limits.rs"),
    (Code::TooLarge, "tests/limits.rs"),
    (Code::Symlink, "tests/hostile.rs"),
    (Code::VanishedRecord, "tests/publishing.rs"),
    (Code::CacheNotWritten, "tests/warm.rs"),
    (Code::UnpublishedReference, "tests/cli.rs"),
    (Code::BadRepository, "tests/verify.rs"),
    (Code::UnknownRevision, "tests/verify.rs"),
    (Code::FetchFailed, "tests/verify.rs"),
    (Code::QuoteNotFound, "tests/verify.rs"),
    (Code::QuoteElsewhere, "tests/verify.rs"),
    (Code::MissingPath, "tests/verify.rs"),
    (Code::LinesPastEnd, "tests/verify.rs"),
    (Code::WrongPathKind, "tests/verify.rs"),
    (Code::RecordAdded, "tests/publishing.rs"),
    (Code::RecordRemoved, "tests/publishing.rs"),
    (Code::RecordChanged, "tests/publishing.rs"),
    (Code::StatusChanged, "tests/publishing.rs"),
    (Code::FindingChanged, "tests/publishing.rs"),
    (Code::NewlyDangling, "tests/publishing.rs"),
    (Code::EvidenceChanged, "tests/verify.rs"),
];

/// Codes no test gives, and why.
const UNTESTED: [(Code, &str); 1] =
    [(Code::Unreadable, "a permission error cannot be made where tests run as root, as they do in CI")];

fn codes_in(text: &str) -> BTreeSet<String> {
    let shown = regex::Regex::new(r"(?m)(?:error|warning|note)\[([a-z0-9-]+)\]: ").unwrap();
    shown.captures_iter(text).map(|c| c[1].to_string()).collect()
}

#[test]
fn every_code_is_given_by_a_case_or_a_named_test() {
    let mut given = BTreeSet::new();
    for entry in std::fs::read_dir(repo().join("tests/diagnostics")).unwrap() {
        let snapshot = entry.unwrap().path().join("expected.snap");
        given.extend(codes_in(&std::fs::read_to_string(&snapshot).unwrap_or_default()));
    }
    for (code, test) in GIVEN_ELSEWHERE {
        let text = std::fs::read_to_string(repo().join(test)).unwrap();
        let named = text.contains(&format!("[{code}]")) || text.contains(&format!("Code::{code:?}"));
        assert!(named, "{test} does not assert `[{code}]`");
        given.insert(code.name().to_string());
    }
    let missing: Vec<&str> = Code::ALL
        .iter()
        .filter(|c| !given.contains(c.name()) && !UNTESTED.iter().any(|(u, _)| u == *c))
        .map(|c| c.name())
        .collect();
    assert!(missing.is_empty(), "no case in tests/diagnostics/ gives {missing:?}");
    let unknown: Vec<&String> = given.iter().filter(|g| !Code::ALL.iter().any(|c| c.name() == *g)).collect();
    assert!(unknown.is_empty(), "codes that do not exist: {unknown:?}");
}

/// The rows of docs/format.md's table of codes (`| `code` | severity | … |`), in its
/// Diagnostics section.
fn documented_codes(format_md: &str) -> Vec<String> {
    let section = format_md.split("\n## Diagnostics\n").nth(1).expect("docs/format.md has a Diagnostics section");
    let section = section.split("\n## ").next().unwrap();
    let table = section.split("\n| Code | Severity |").nth(1).expect("the section has a table of codes");
    let section = table.split("\n\n").next().unwrap();
    let row = regex::Regex::new(r"(?m)^\| `([a-z0-9-]+)` \|").unwrap();
    row.captures_iter(section).map(|c| c[1].to_string()).collect()
}

#[test]
fn every_code_is_documented_once_in_order() {
    let documented = documented_codes(&std::fs::read_to_string(repo().join("docs/format.md")).unwrap());
    let codes: Vec<String> = Code::ALL.iter().map(|c| c.name().to_string()).collect();
    assert_eq!(documented, codes, "docs/format.md's table of diagnostic codes differs from model::Code");
}

#[test]
fn the_documentation_check_fails_on_a_missing_code() {
    let keys = "| key | value |\n|---|---|\n| `schema` | … |\n";
    let table = "| Code | Severity |\n|---|---|\n| `no-content` | error |\n| `symlink` | error |\n";
    let doc = format!("# F\n## Diagnostics\n\n{keys}\n{table}\nAfter.\n| `y` |\n## Next\n| `x` |");
    assert_eq!(documented_codes(&doc), ["no-content", "symlink"]);
}

/// Every case is a folder with `args`; a folder without one would be skipped silently.
#[test]
fn every_case_folder_has_its_command_line() {
    for entry in std::fs::read_dir(repo().join("tests/diagnostics")).unwrap() {
        let case = entry.unwrap().path();
        assert!(Path::new(&case).join("args").is_file(), "{} has no args file", case.display());
    }
}
