//! Atomic output: a build killed with SIGKILL at any moment leaves the previous output
//! intact and complete; a failed build leaves it untouched; the next build cleans up
//! after the killed ones.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{copy_tree, files_below, repo};

/// Every file of `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<std::path::PathBuf, Vec<u8>> {
    files_below(dir).into_iter().map(|f| (f.clone(), std::fs::read(dir.join(&f)).unwrap())).collect()
}

/// A build, with the build cache beside the output unless `cold`.
fn build_with(site: &Path, out: &Path, cold: bool) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_casebook"))
        .args(["build", "--quiet", "--root", site.to_str().unwrap(), "--output", out.to_str().unwrap()])
        .args(cold.then_some("--no-cache"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn build(site: &Path, out: &Path) -> std::process::Child {
    build_with(site, out, false)
}

#[test]
#[ignore = "slow tier: `bash .ci/test` runs it (cargo test -- --include-ignored)"]
fn a_build_killed_at_any_moment_leaves_the_previous_output_whole() {
    let dir = tempfile::tempdir().unwrap();
    // A site large enough that a build takes a while: the bundled content, ten times.
    let site = dir.path().join("site");
    std::fs::create_dir_all(site.join("content")).unwrap();
    std::fs::copy(repo().join("content/casebook.yaml"), site.join("content/casebook.yaml")).unwrap();
    for copy in 0..10 {
        for system in ["fractal", "exia-seed"] {
            copy_tree(&repo().join("content").join(system), &site.join("content").join(format!("{system}-{copy}")));
        }
    }
    let out = dir.path().join("public");
    assert!(build(&site, &out).wait().unwrap().success());
    let before = tree(&out);
    assert!(before.len() > 1000);

    // Kill builds at moments spread over a whole build, writing included: builds from
    // nothing, then warm builds (which link the previous output's files and keep a cache).
    let timing = dir.path().join("timing");
    let time = |cold: bool| {
        let started = std::time::Instant::now();
        assert!(build_with(&site, &timing, cold).wait().unwrap().success());
        started.elapsed()
    };
    let whole = time(true);
    let warm = time(false).min(time(false));
    for (cold, took) in [(true, whole), (false, warm)] {
        for step in 1..=8u32 {
            let mut child = build_with(&site, &out, cold);
            std::thread::sleep(took * step / 8);
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();
            let kind = if cold { "cold" } else { "warm" };
            assert_eq!(tree(&out), before, "after a kill at {step}/8 of a {kind} build, the output changed");
        }
    }

    // The next build succeeds and leaves no staging folder, backup or lock behind.
    assert!(build(&site, &out).wait().unwrap().success());
    assert_eq!(tree(&out), before);
    let mut left: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, [".casebook-cache", "public", "site", "timing"]);
}
