//! `.ci/install-casebook`, which netlify.toml and the preview workflow run: the pinned
//! release is downloaded (here from a server on loopback), checked against its SHA-256
//! and installed; a tampered file is refused; an unreachable release or a checkout whose
//! casebook source is not the release's falls back to compiling (which the tests stop
//! short of, with `CASEBOOK_INSTALL_NO_COMPILE`, exit code 3).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::repo;
use sha2::Digest;

/// Serves the files below `root` over HTTP on loopback until the test ends.
fn serve(root: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = String::new();
            if BufReader::new(&stream).read_line(&mut request).is_err() {
                continue;
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_string();
            let file = root.join(&path);
            let (status, body) = match std::fs::read(&file) {
                Ok(body) if !path.contains("..") => ("200 OK", body),
                _ => ("404 Not Found", b"not here".to_vec()),
            };
            let head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    format!("http://{address}")
}

/// The release target of this machine, as the installer names it.
fn target() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-musl",
        ("linux", "aarch64") => "aarch64-unknown-linux-musl",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        other => panic!("no release target for {other:?}"),
    }
}

/// What the test's releases hold for a binary: a script that answers `--version` as
/// casebook does (the real binary would make each archive take seconds to pack).
fn binary(version: &str) -> String {
    format!("#!/bin/sh\necho 'casebook {version}'\n")
}

/// A release folder as the release workflow publishes it (`v<version>/<archive>`),
/// holding a casebook of `version`, and the archive's SHA-256.
fn release(dir: &Path, version: &str) -> String {
    let staging = dir.join("staging");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::write(staging.join("casebook"), binary(version)).unwrap();
    std::fs::set_permissions(staging.join("casebook"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let folder = dir.join("releases").join(format!("v{version}"));
    std::fs::create_dir_all(&folder).unwrap();
    let archive = folder.join(format!("casebook-{version}-{}.tar.gz", target()));
    let made = Command::new("tar").arg("-czf").arg(&archive).arg("-C").arg(&staging).arg("casebook").status().unwrap();
    assert!(made.success());
    hex::encode(sha2::Sha256::digest(std::fs::read(&archive).unwrap()))
}

fn pin(dir: &Path, lines: &[String]) -> PathBuf {
    let file = dir.join("casebook-release.pin");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    file
}

fn install(pin: &Path, source: &Path, into: &Path) -> Output {
    Command::new("bash")
        .arg(repo().join(".ci/install-casebook"))
        .arg("--source")
        .arg(source)
        .arg("--into")
        .arg(into)
        .env("CASEBOOK_PIN", pin)
        .env("CASEBOOK_INSTALL_NO_COMPILE", "1")
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A content repository: an analysis, no casebook source.
fn content_repository(dir: &Path) -> PathBuf {
    let site = dir.join("analysis");
    std::fs::create_dir_all(site.join("content")).unwrap();
    site
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn pin_lines(base: &str, checksum: &str, version: &str) -> Vec<String> {
    vec![
        "# a pin as the release workflow writes it".into(),
        format!("version={version}"),
        "repository=https://example.invalid/casebook".into(),
        format!("download={base}"),
        "source=0000".into(),
        format!("sha256-{}={checksum}", target()),
    ]
}

#[test]
fn the_pinned_release_is_downloaded_checked_and_installed() {
    let dir = tempfile::tempdir().unwrap();
    let checksum = release(dir.path(), VERSION);
    let base = serve(dir.path().join("releases"));
    let pin = pin(dir.path(), &pin_lines(&base, &checksum, VERSION));
    let into = dir.path().join("bin");
    let output = install(&pin, &content_repository(dir.path()), &into);
    assert!(output.status.success(), "{}", stderr(&output));
    let printed = String::from_utf8_lossy(&output.stdout);
    assert_eq!(printed.lines().last(), Some(into.join("casebook").to_str().unwrap()));
    assert!(stderr(&output).contains("checksum verified"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(into.join("casebook")).unwrap(), binary(VERSION));
    let version = Command::new(into.join("casebook")).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("casebook {VERSION}"));
}

#[test]
fn a_file_that_does_not_match_its_pinned_checksum_is_refused_not_compiled_around() {
    let dir = tempfile::tempdir().unwrap();
    release(dir.path(), VERSION);
    let base = serve(dir.path().join("releases"));
    let pin = pin(dir.path(), &pin_lines(&base, &"ab".repeat(32), VERSION));
    let into = dir.path().join("bin");
    let output = install(&pin, &content_repository(dir.path()), &into);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("but") && stderr(&output).contains("pins"), "{}", stderr(&output));
    assert!(!into.join("casebook").exists());
}

#[test]
fn a_binary_of_another_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let checksum = release(dir.path(), "0.0.2");
    std::fs::rename(dir.path().join("releases/v0.0.2"), dir.path().join("releases/v0.0.1")).unwrap();
    let archive = dir.path().join("releases/v0.0.1/casebook-0.0.2-".to_string() + target() + ".tar.gz");
    std::fs::rename(archive, dir.path().join("releases/v0.0.1/casebook-0.0.1-".to_string() + target() + ".tar.gz"))
        .unwrap();
    let base = serve(dir.path().join("releases"));
    let pin = pin(dir.path(), &pin_lines(&base, &checksum, "0.0.1"));
    let into = dir.path().join("bin");
    let output = install(&pin, &content_repository(dir.path()), &into);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("not 'casebook 0.0.1'"), "{}", stderr(&output));
    assert!(!into.join("casebook").exists());
}

#[test]
fn no_release_pinned_or_none_to_download_falls_back_to_compiling() {
    let dir = tempfile::tempdir().unwrap();
    let base = serve(dir.path().join("releases"));
    let site = content_repository(dir.path());
    let missing = pin(dir.path(), &pin_lines(&base, &"ab".repeat(32), "9.9.9"));
    let output = install(&missing, &site, &dir.path().join("bin"));
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains("could not be downloaded"), "{}", stderr(&output));
    // The pin as committed before a first release: nothing to download.
    let output = install(&repo().join(".ci/casebook-release.pin"), &site, &dir.path().join("bin"));
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains("pins no release"), "{}", stderr(&output));
}

/// A pull request that changes casebook is previewed with its own casebook: the release
/// serves only a checkout whose casebook source is the release's.
#[test]
fn a_checkout_of_casebook_uses_the_release_only_when_its_source_is_the_release_s() {
    let dir = tempfile::tempdir().unwrap();
    let checksum = release(dir.path(), VERSION);
    let base = serve(dir.path().join("releases"));
    let checkout = dir.path().join("casebook");
    std::fs::create_dir_all(checkout.join("src")).unwrap();
    std::fs::write(checkout.join("Cargo.toml"), "[package]\nname = \"casebook\"\n").unwrap();
    std::fs::write(checkout.join("src/main.rs"), "fn main() {}\n").unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&checkout)
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "release"]);
    let fingerprint = Command::new("bash")
        .arg(repo().join(".ci/install-casebook"))
        .arg("--fingerprint")
        .arg(&checkout)
        .output()
        .unwrap();
    let fingerprint = String::from_utf8(fingerprint.stdout).unwrap().trim().to_string();
    assert_eq!(fingerprint.len(), 64, "{fingerprint:?}");
    let mut lines = pin_lines(&base, &checksum, VERSION);
    lines[4] = format!("source={fingerprint}");
    let pin = pin(dir.path(), &lines);
    let into = dir.path().join("bin");
    let output = install(&pin, &checkout, &into);
    assert!(output.status.success(), "{}", stderr(&output));

    // A change to the source (not to an analysis beside it) is compiled.
    std::fs::write(checkout.join("README.md"), "docs change nothing\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "docs"]);
    assert!(install(&pin, &checkout, &into).status.success(), "a change outside the binary's inputs");
    std::fs::write(checkout.join("src/main.rs"), "fn main() { println!(); }\n").unwrap();
    git(&["commit", "-qam", "code"]);
    let output = install(&pin, &checkout, &into);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(stderr(&output).contains("is not release"), "{}", stderr(&output));
}

/// The fingerprint covers the files the binary is made from: every file the source
/// includes is below one of the installer's `binary_inputs`.
#[test]
fn every_file_the_binary_includes_is_in_the_installer_s_fingerprint() {
    let script = std::fs::read_to_string(repo().join(".ci/install-casebook")).unwrap();
    let listed = script.lines().find_map(|l| l.strip_prefix("binary_inputs=(")).expect("binary_inputs=(…)");
    let inputs: Vec<&str> = listed.trim_end_matches(')').split_whitespace().collect();
    let include = regex::Regex::new(r#"include_(?:str|bytes)!\("([^"]+)"\)"#).unwrap();
    let mut seen = 0;
    for entry in walkdir::WalkDir::new(repo().join("src")) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        for found in include.captures_iter(&text) {
            let path = entry.path().parent().unwrap().join(&found[1]);
            let path = path.canonicalize().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let relative = path.strip_prefix(repo().canonicalize().unwrap()).unwrap();
            assert!(
                inputs.iter().any(|input| relative.starts_with(input)),
                "{} includes {}, which the installer's fingerprint leaves out",
                entry.path().display(),
                relative.display()
            );
            seen += 1;
        }
    }
    assert!(seen >= 10, "only {seen} includes found");
}
